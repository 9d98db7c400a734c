/* The script validator against RNA recorded live from the installed Blender
 * (the fixture's recorder, run now): the recorded table still matches the
 * fixture for the operators the corpora use, and seed acceptance A/C and the
 * benign corpus give the same verdicts with the live table. */
#include "script_testutil.h"
#include "script_validator.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static json_t *s_live;

static int s_setup (void **state)
{
    char path[128], cmd[1024], err[256];
    snprintf (path, sizeof path, "/tmp/blendmq-rna-%d.json", (int) getpid ());
    snprintf (cmd, sizeof cmd, "blender -b --factory-startup --python %s/tests/script/fixtures/record_script_rna.py"
              " -- %s mesh object transform curve material collection uv texture world > /dev/null 2>&1", BMQ_SOURCE_DIR, path);
    if (system (cmd) != 0)
        return -1;
    s_live = bmq_script_rna_load (path, err, sizeof err);
    unlink (path);
    return s_live ? 0 : -1;
}

static int s_teardown (void **state)
{
    json_decref (s_live);
    return 0;
}

/* The recorded table of the Blender that runs: proto/script_rna_blender_<its version>.json
 * (issue 30: one per version; the live table's entries name the version). */
static void test_fixture_matches_live_blender (void **state)
{
    char err[256], path[512];
    const char *version = json_string_value (json_object_get (json_object_get (s_live, "bpy.ops.mesh.primitive_cube_add"),
                                                              "blender"));
    assert_non_null (version);
    snprintf (path, sizeof path, "%s/proto/script_rna_blender_%s.json", BMQ_SOURCE_DIR, version);
    if (access (path, R_OK) != 0)
        fail_msg ("no recorded RNA for Blender %s: record %s (tests/script/fixtures/record_script_rna.py)", version, path);
    json_t *fixture = bmq_script_rna_load (path, err, sizeof err);
    assert_non_null (fixture);
    const char *ops[] = { "bpy.ops.mesh.primitive_cube_add", "bpy.ops.mesh.primitive_uv_sphere_add",
                          "bpy.ops.object.light_add", "bpy.ops.object.shade_smooth", "bpy.ops.transform.resize",
                          "bpy.ops.object.subdivision_set", "bpy.ops.mesh.primitive_circle_add" };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        json_t *a = json_object_get (fixture, ops[i]), *b = json_object_get (s_live, ops[i]);
        assert_non_null (b);
        if (!json_equal (json_object_get (a, "params"), json_object_get (b, "params")))
            fail_msg ("%s differs between the fixture and this Blender: re-record the fixture", ops[i]);
    }
    json_decref (fixture);
}

static void test_verdicts_with_live_rna (void **state)
{
    char err[256];
    bmq_script_validator_t *v = bmq_script_validator_new (NULL, s_live, err, sizeof err);
    assert_non_null (v);
    const char *a = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=2)\n";
    json_t *r = bmq_script_validate (v, a, strlen (a));
    assert_true (json_is_true (json_object_get (r, "is_valid")));
    json_decref (r);
    const char *c = "import bpy\nbpy.ops.mesh.nonexistent()\n";
    r = bmq_script_validate (v, c, strlen (c));
    assert_false (json_is_true (json_object_get (r, "is_valid")));
    json_decref (r);
    size_t n;
    char **files = stu_corpus ("good", &n);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *src = stu_read (files[i], &len);
        r = bmq_script_validate (v, src, len);
        if (!json_is_true (json_object_get (r, "is_valid")))
            fail_msg ("%s rejected with the live RNA", files[i]);
        json_decref (r);
        free (src);
    }
    stu_free_list (files, n);
    bmq_script_validator_destroy (&v);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_fixture_matches_live_blender),
        cmocka_unit_test (test_verdicts_with_live_rna),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
