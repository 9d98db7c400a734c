/* bmq_blender_rna (issue 30): an executor checks a script against the RNA recorded for the
 * very Blender it is connected to. Versions are only ever digits and dots before they reach a
 * path; a Blender with no record refuses scripts naming the version and the command that
 * records it; an operator the version lacks (one that 3.4 has and 4.3 and 5.2 removed) is
 * refused by name on those, allowed on 3.4; a damaged record is refused, not trusted. */
#include "blender_rna.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static void test_versions (void **state)
{
    const char *good[] = { "3.4.1", "4.3.2", "5.2.2", "4.2", "10.0.0.1", NULL };
    const char *bad[] = { "", "4", "4.", ".4.3", "4..3", "4.3.2 LTS", "../4.3", "4.3/..", "4.3.2x", "1.2.3.4.5",
                          "12345.1", "4.3.-1", "٤.٣", NULL };
    for (const char **v = good; *v; v++) assert_true (bmq_blender_version_valid (*v));
    for (const char **v = bad; *v; v++) {
        char path[256];
        assert_false (bmq_blender_version_valid (*v));
        assert_int_equal (bmq_blender_rna_path (*v, path, sizeof path), -1);
    }
    assert_false (bmq_blender_version_valid (NULL));
    char path[1024];
    assert_int_equal (bmq_blender_rna_path ("4.3.2", path, sizeof path), 0);
    assert_non_null (strstr (path, "/proto/script_rna_blender_4.3.2.json"));
}

static json_t *s_ops (const char *a, const char *b)
{
    json_t *ops = json_array ();
    json_array_append_new (ops, json_string (a));
    if (b) json_array_append_new (ops, json_string (b));
    return ops;
}

static void test_recorded_tables (void **state)
{
    unsetenv ("BLENDMQ_SCRIPT_RNA_DIR");
    setenv ("BLENDMQ_DATA_DIR", BMQ_SOURCE_DIR, 1);
    char why[700];
    json_t *common = s_ops ("bpy.ops.mesh.primitive_cube_add", "bpy.ops.object.shade_smooth");
    const char *versions[] = { "3.4.1", "4.3.2", "5.2.2" };
    for (int i = 0; i < 3; i++) {
        why[0] = 0;
        assert_int_equal (bmq_blender_rna_check (versions[i], common, why, sizeof why), 0);
        assert_int_equal (bmq_blender_rna_check (versions[i], NULL, why, sizeof why), 0);    /* no operators */
    }
    /* face maps: 3.4 has them, 4.x and 5.x do not */
    json_t *face_map = s_ops ("bpy.ops.mesh.primitive_cube_add", "bpy.ops.object.face_map_add");
    assert_int_equal (bmq_blender_rna_check ("3.4.1", face_map, why, sizeof why), 0);
    for (int i = 1; i < 3; i++) {
        assert_int_equal (bmq_blender_rna_check (versions[i], face_map, why, sizeof why), -1);
        assert_non_null (strstr (why, "bpy.ops.object.face_map_add"));
        assert_non_null (strstr (why, versions[i]));
        assert_null (strstr (why, "primitive_cube_add"));
    }
    /* back to a version loaded before: the cache holds one table, the answer is that version's */
    assert_int_equal (bmq_blender_rna_check ("3.4.1", face_map, why, sizeof why), 0);
    /* no record: the version, the file and the command that records it */
    assert_int_equal (bmq_blender_rna_check ("9.9.9", common, why, sizeof why), -1);
    assert_non_null (strstr (why, "no recorded RNA for Blender 9.9.9"));
    assert_non_null (strstr (why, "script_rna_blender_9.9.9.json"));
    assert_non_null (strstr (why, "record_script_rna.py"));
    /* not connected (no version) or a version that is not one */
    assert_int_equal (bmq_blender_rna_check ("", common, why, sizeof why), -1);
    assert_non_null (strstr (why, "not known"));
    assert_int_equal (bmq_blender_rna_check ("../../etc/passwd", common, why, sizeof why), -1);
    json_decref (common);
    json_decref (face_map);
}

static void test_damaged_record (void **state)
{
    char dir[] = "/tmp/bmq-rna-XXXXXX", path[256];
    assert_non_null (mkdtemp (dir));
    setenv ("BLENDMQ_SCRIPT_RNA_DIR", dir, 1);
    const char *bodies[] = { "{\"bpy.ops.mesh.primitive_cube_add\": {}", "[1, 2]", "{}",
                             "{\"a\": 1, \"a\": 2}" };
    const char *versions[] = { "7.0.1", "7.0.2", "7.0.3", "7.0.4" };
    json_t *ops = s_ops ("bpy.ops.mesh.primitive_cube_add", NULL);
    char why[700];
    for (int i = 0; i < 4; i++) {
        snprintf (path, sizeof path, "%s/script_rna_blender_%s.json", dir, versions[i]);
        FILE *f = fopen (path, "w");
        assert_non_null (f);
        fputs (bodies[i], f);
        fclose (f);
        assert_int_equal (bmq_blender_rna_check (versions[i], ops, why, sizeof why), -1);
        assert_non_null (strstr (why, "cannot be read"));
        unlink (path);
    }
    /* a good one in the same folder */
    snprintf (path, sizeof path, "%s/script_rna_blender_7.1.0.json", dir);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs ("{\"bpy.ops.mesh.primitive_cube_add\": {\"params\": []}}", f);
    fclose (f);
    assert_int_equal (bmq_blender_rna_check ("7.1.0", ops, why, sizeof why), 0);
    unlink (path);
    rmdir (dir);
    unsetenv ("BLENDMQ_SCRIPT_RNA_DIR");
    json_decref (ops);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_versions),
        cmocka_unit_test (test_recorded_tables),
        cmocka_unit_test (test_damaged_record),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
