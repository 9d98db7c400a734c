/* The palette against a real headless Blender, through the add-on's rna_info
 * (what every validator fetches at start-up through the executor): every
 * allowlisted operator exists, the merge finds nothing to drop or refuse, the
 * recorded fixture still describes this Blender, and unknown names get a
 * clear error. */
#include "blender_link.h"
#include "palette_rna.h"
#include "plan_validator.h"
#include "yaml_json.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PALETTE_PATH BMQ_SOURCE_DIR "/proto/palette.yaml"
#define FIXTURE_PATH BMQ_SOURCE_DIR "/tests/validator/fixtures/rna_blender_3.4.1.json"

static char s_dir[128];
static int s_port;
static pid_t s_pid;
static bmq_blender_link_t *s_link;
static const char *TOKEN = "rna-test-token-0123456789";

static int s_setup (void **state)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-rna-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char token_file[256], port_file[256], addon[512], log[256];
    snprintf (token_file, sizeof token_file, "%s/token", s_dir);
    snprintf (port_file, sizeof port_file, "%s/port", s_dir);
    snprintf (log, sizeof log, "%s/blender.log", s_dir);
    snprintf (addon, sizeof addon, "%s/services/executor/addon/blendmq_addon.py", BMQ_SOURCE_DIR);
    FILE *f = fopen (token_file, "w");
    fputs (TOKEN, f);
    fclose (f);
    s_pid = fork ();
    if (s_pid == 0) {
        if (!freopen (log, "w", stdout) || !freopen (log, "a", stderr)) _exit (126);
        const char *blender = getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender";
        execlp (blender, blender, "-b", "--factory-startup", "--python", addon, "--", "--port", "0",
                "--port-file", port_file, "--token-file", token_file, (char *) NULL);
        _exit (127);
    }
    for (int i = 0; i < 1200 && !s_port; i++) {
        f = fopen (port_file, "r");
        if (f) { if (fscanf (f, "%d", &s_port) != 1) s_port = 0; fclose (f); }
        if (!s_port) usleep (50000);
    }
    if (!s_port) return -1;
    char err[256];
    s_link = bmq_blender_link_new ("127.0.0.1", s_port, TOKEN);
    if (bmq_blender_link_connect (s_link, 5000, err, sizeof err)) { fprintf (stderr, "connect: %s\n", err); return -1; }
    return 0;
}

static int s_teardown (void **state)
{
    bmq_blender_link_destroy (&s_link);
    if (s_pid > 0) { kill (s_pid, SIGKILL); waitpid (s_pid, NULL, 0); }
    char cmd[256];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

/* rna_info for one name: the result object, or NULL with the add-on's error in err. */
static json_t *s_rna_info (const char *operation, char *err, size_t errlen)
{
    json_t *args = json_pack ("{s:s}", "operation", operation), *reply = NULL;
    int status = bmq_blender_link_call (s_link, "rna_info", args, 10000, &reply, NULL, NULL, err, errlen);
    json_decref (args);
    assert_int_equal (status, BMQ_LINK_OK);
    json_t *result = NULL;
    if (json_is_true (json_object_get (reply, "ok"))) result = json_incref (json_object_get (reply, "result"));
    else snprintf (err, errlen, "%s", json_string_value (json_object_get (reply, "error")));
    json_decref (reply);
    return result;
}

static const json_t *s_param (const json_t *op, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach (json_object_get (op, "params"), i, p)
        if (!strcmp (json_string_value (json_object_get (p, "identifier")), name)) return p;
    return NULL;
}

static void test_palette_matches_running_blender (void **state)
{
    char err[512];
    json_t *curated = bmq_yaml_load_file (PALETTE_PATH, err, sizeof err);
    assert_non_null (curated);
    json_error_t jerr;
    json_t *fixture = json_load_file (FIXTURE_PATH, 0, &jerr);
    assert_non_null (fixture);
    json_t *rna = json_object ();
    const char *op;
    json_t *spec;
    size_t asked = 0;
    json_object_foreach (json_object_get (curated, "operations"), op, spec) {
        char ask[200];      /* operators by name, property paths by their property (issue 27) */
        if (!bmq_palette_rna_ask (op, spec, ask, sizeof ask)) continue;
        json_t *info = s_rna_info (ask, err, sizeof err);
        if (!info) fail_msg ("%s: %s", ask, err);
        assert_string_equal (json_string_value (json_object_get (info, "name")), ask);
        json_object_set_new (rna, ask, info);
        asked++;
        /* the recorded fixture still says what this Blender says about every curated parameter */
        const json_t *recorded = json_object_get (fixture, ask);
        if (!recorded) fail_msg ("%s is not in the fixture: run tests/validator/fixtures/record_rna.py", op);
        const char *pname;
        json_t *pspec;
        json_object_foreach (json_object_get (spec, "params"), pname, pspec) {
            const json_t *live = s_param (info, pname), *rec = s_param (recorded, pname);
            if (!live || !rec) fail_msg ("%s.%s: live %p, recorded %p", op, pname, (void *) live, (void *) rec);
            static const char *keys[] = { "type", "array_length", "min", "max", "default", "enum_flag" };
            for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
                json_t *a = json_object_get (live, keys[k]), *b = json_object_get (rec, keys[k]);
                if ((a || b) && !json_equal (a, b))
                    fail_msg ("%s.%s.%s differs from the fixture: re-record it", op, pname, keys[k]);
            }
        }
    }
    assert_true (asked >= 50);
    json_t *notes = json_array ();
    json_t *merged = bmq_palette_rna_merge (curated, rna, notes);
    bmq_palette_t *p = bmq_palette_from_json (merged, err, sizeof err);
    if (!p) fail_msg ("merged palette does not load: %s", err);
    size_t i, warnings = 0;
    json_t *n;
    json_array_foreach (notes, i, n)
        if (!strcmp (json_string_value (json_object_get (n, "level")), "warn")) {
            char *text = json_dumps (n, JSON_COMPACT);
            fprintf (stderr, "warning: %s\n", text);
            free (text);
            warnings++;
        }
    assert_int_equal (warnings, 0);
    assert_int_equal (bmq_palette_count (p), json_object_size (json_object_get (curated, "operations")));
    printf ("%zu operators checked against the running Blender: none dropped, %zu notes\n", asked, json_array_size (notes));
    bmq_palette_destroy (&p);
    json_decref (merged);
    json_decref (notes);
    json_decref (rna);
    json_decref (fixture);
    json_decref (curated);
}

static void test_inspect_details (void **state)
{
    char err[512];
    json_t *info = s_rna_info ("mesh.primitive_uv_sphere_add", err, sizeof err);     /* bpy.ops. is optional */
    assert_non_null (info);
    assert_string_equal (json_string_value (json_object_get (info, "name")), "bpy.ops.mesh.primitive_uv_sphere_add");
    assert_string_equal (json_string_value (json_object_get (info, "identifier")), "MESH_OT_primitive_uv_sphere_add");
    assert_true (json_string_length (json_object_get (info, "description")) > 0);
    const json_t *seg = s_param (info, "segments"), *loc = s_param (info, "location"), *align = s_param (info, "align");
    assert_string_equal (json_string_value (json_object_get (seg, "type")), "INT");
    assert_int_equal (json_integer_value (json_object_get (seg, "default")), 32);
    assert_int_equal (json_integer_value (json_object_get (seg, "min")), 3);
    assert_int_equal (json_integer_value (json_object_get (loc, "array_length")), 3);
    assert_true (json_real_value (json_object_get (loc, "soft_min")) == -1000.0);       /* float32 shown short */
    assert_true (json_array_size (json_object_get (align, "enum_items")) == 3);
    json_decref (info);

    assert_null (s_rna_info ("bpy.ops.mesh.primitive_teapot_add", err, sizeof err));
    assert_non_null (strstr (err, "has no such operator"));
    assert_null (s_rna_info ("object.material", err, sizeof err));
    assert_non_null (strstr (err, "builtin"));
    /* a property path's property (issue 27), and the deny rules on that road too */
    info = s_rna_info ("bpy.types.Curve.bevel_resolution", err, sizeof err);
    assert_non_null (info);
    assert_false (json_is_true (json_object_get (info, "readonly")));
    assert_string_equal (json_string_value (json_object_get (json_array_get (json_object_get (info, "params"), 0), "identifier")), "value");
    assert_int_equal (json_integer_value (json_object_get (json_array_get (json_object_get (info, "params"), 0), "max")), 32);
    json_decref (info);
    info = s_rna_info ("bpy.types.Object.type", err, sizeof err);
    assert_non_null (info);
    assert_true (json_is_true (json_object_get (info, "readonly")));
    json_decref (info);
    assert_null (s_rna_info ("bpy.types.Image.filepath", err, sizeof err));
    assert_non_null (strstr (err, "refused"));
    assert_null (s_rna_info ("bpy.types.Object.__class__", err, sizeof err));
    assert_non_null (strstr (err, "refused"));
    assert_null (s_rna_info ("bpy.types.Object.no_such_thing", err, sizeof err));
    assert_non_null (strstr (err, "no such property"));
    assert_null (s_rna_info ("bpy.ops.Mesh.x; import os", err, sizeof err));
    assert_non_null (strstr (err, "expected bpy.ops.CATEGORY.NAME"));
    json_t *args = json_pack ("{s:i}", "operation", 3), *reply = NULL;
    assert_int_equal (bmq_blender_link_call (s_link, "rna_info", args, 5000, &reply, NULL, NULL, err, sizeof err), BMQ_LINK_OK);
    assert_false (json_is_true (json_object_get (reply, "ok")));
    json_decref (reply);
    json_decref (args);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_palette_matches_running_blender),
        cmocka_unit_test (test_inspect_details),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
