/* discover_capabilities and inspect_tool over the whole stack: real services
 * started by `blendmq up --ipc --validators 3` in a temp run dir (ipc
 * sockets only), a real headless Blender. Each validator checks its palette
 * against Blender's RNA through the executor; `blendmq capabilities` and
 * `blendmq inspect` answer through the gateway; unknown names get a clear
 * error; killing a validator leaves the others serving. */
#include "e2e_util.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_dir[256];

static int s_setup (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-pool-stack-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc --validators 3 >&2", e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static int s_teardown (void **state)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2", e2e_bin ("blendmq"), s_dir);
    int rc = system (cmd);
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    snprintf (cmd, sizeof cmd, "grep -H -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '%s'/logs/*.log >&2", s_dir);
    if (system (cmd) == 0) { fprintf (stderr, "sanitizer reports in the services' logs (kept in %s)\n", s_dir); return -1; }
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return rc == 0 && system (cmd) == 0 ? 0 : -1;
}

/* Lines of `blendmq --json ARGS` (first line parsed), exit code in *code. */
static json_t *s_json (const char *args, int *code)
{
    json_t *lines = e2e_blendmq_json (s_dir, args, code);
    json_t *first = json_incref (json_array_get (lines, 0));
    json_decref (lines);
    return first;
}

static json_t *s_validator_entry (void)
{
    int code;
    json_t *st = s_json ("status", &code);
    size_t i;
    json_t *s, *out = NULL;
    json_array_foreach (json_object_get (st, "services"), i, s)
        if (!strcmp (json_string_value (json_object_get (s, "name")), "validator")) out = json_incref (s);
    json_decref (st);
    return out;
}

/* Every validator logged that it checked the palette against Blender. */
static int s_merged_validators (void)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "grep -l 'palette checked against Blender 3' '%s'/logs/validator-*.log | wc -l", s_dir);
    int code;
    char *out = e2e_run (cmd, &code);
    int n = atoi (out);
    free (out);
    return n;
}

static void test_three_validators_checked_against_blender (void **state)
{
    /* `up` returns once the pool serves; on a loaded machine the last workers may join a moment later */
    json_t *v = s_validator_entry ();
    for (int i = 0; i < 100 && v && json_integer_value (json_object_get (v, "workers")) < 3; i++) {
        usleep (100000);
        json_decref (v);
        v = s_validator_entry ();
    }
    assert_non_null (v);
    assert_int_equal (json_integer_value (json_object_get (v, "workers")), 3);
    assert_int_equal (json_array_size (json_object_get (v, "pool")), 3);
    json_decref (v);
    for (int i = 0; i < 100 && s_merged_validators () < 3; i++) usleep (100000);
    assert_int_equal (s_merged_validators (), 3);
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "grep -h 'palette vs Blender' '%s'/logs/validator-*.log >&2", s_dir);
    assert_int_not_equal (system (cmd), 0);            /* no warnings against the Blender we ship with */
}

static void test_capabilities (void **state)
{
    int code;
    json_t *full = s_json ("capabilities", &code);
    assert_int_equal (code, 0);
    assert_true (json_object_size (full) >= 25);
    json_t *uv = json_object_get (full, "bpy.ops.mesh.primitive_uv_sphere_add");
    assert_string_equal (json_string_value (json_object_get (uv, "creates")), "object");
    json_t *seg = json_object_get (json_object_get (uv, "params"), "segments");
    assert_string_equal (json_string_value (json_object_get (seg, "type")), "int");
    assert_int_equal (json_integer_value (json_object_get (seg, "min")), 3);
    assert_int_equal (json_integer_value (json_object_get (seg, "max")), 256);
    assert_int_equal (json_integer_value (json_object_get (seg, "default")), 32);
    assert_non_null (json_object_get (full, "object.material"));          /* builtins stay */
    json_t *compact = s_json ("capabilities --compact", &code);
    assert_int_equal (code, 0);
    assert_int_equal (json_object_size (compact), json_object_size (full));
    assert_non_null (strstr (json_string_value (json_object_get (compact, "bpy.ops.object.delete")), "target!, deletes"));
    size_t fb = json_dumpb (full, NULL, 0, JSON_COMPACT), cb = json_dumpb (compact, NULL, 0, JSON_COMPACT);
    printf ("capabilities: %zu operations; full %zu bytes (~%zu tokens), compact %zu bytes (~%zu tokens)\n",
            json_object_size (full), fb, fb / 4, cb, cb / 4);
    json_decref (full);
    json_decref (compact);
}

static void test_inspect (void **state)
{
    int code;
    json_t *tool = s_json ("inspect bpy.ops.mesh.primitive_cube_add", &code);
    assert_int_equal (code, 0);
    assert_string_equal (json_string_value (json_object_get (tool, "name")), "bpy.ops.mesh.primitive_cube_add");
    assert_true (json_string_length (json_object_get (tool, "description")) > 0);
    size_t i;
    json_t *p;
    bool size = false;
    json_array_foreach (json_object_get (tool, "params"), i, p)
        if (!strcmp (json_string_value (json_object_get (p, "identifier")), "size")) {
            size = true;
            assert_string_equal (json_string_value (json_object_get (p, "type")), "FLOAT");
            assert_true (json_real_value (json_object_get (p, "default")) == 2.0);
            assert_non_null (json_object_get (p, "min"));
            assert_non_null (json_object_get (p, "soft_max"));
        }
    assert_true (size);
    json_decref (tool);
    /* an operator outside the palette can be inspected too: read-only, nothing runs */
    tool = s_json ("inspect bpy.ops.wm.quit_blender", &code);
    assert_int_equal (code, 0);
    json_decref (tool);
    tool = s_json ("inspect object.modifier_add", &code);                 /* bpy.ops. may be left out */
    assert_int_equal (code, 0);
    assert_true (json_array_size (json_object_get (json_array_get (json_object_get (tool, "params"), 0), "enum_items")) > 20);
    json_decref (tool);
    /* unknown names: a clear error, exit 1 */
    json_t *err = s_json ("inspect bpy.ops.mesh.primitive_teapot_add", &code);
    assert_int_equal (code, 1);
    assert_string_equal (json_string_value (json_object_get (err, "code")), "unknown_tool");
    assert_non_null (strstr (json_string_value (json_object_get (err, "message")), "has no such operator"));
    json_decref (err);
    err = s_json ("inspect object.material", &code);
    assert_int_equal (code, 1);
    assert_non_null (strstr (json_string_value (json_object_get (err, "message")), "builtin"));
    json_decref (err);
    err = s_json ("inspect 'rm -rf /'", &code);
    assert_int_equal (code, 1);
    json_decref (err);
    char args[400] = "inspect bpy.ops.mesh.";
    memset (args + strlen (args), 'x', 300);                             /* refused by the executor itself */
    err = s_json (args, &code);
    assert_int_equal (code, 1);
    assert_string_equal (json_string_value (json_object_get (err, "code")), "unknown_tool");
    json_decref (err);
    /* Blender is still there */
    json_t *v = s_json ("scene", &code);
    assert_int_equal (code, 0);
    json_decref (v);
}

static void test_kill_a_validator (void **state)
{
    int victim = e2e_pid (s_dir, "validator-2");
    assert_true (victim > 0);
    kill (victim, SIGKILL);
    /* the broker forgets the dead worker (heartbeat liveness, 3 s); `up`'s
     * supervisor starts validator-2 again meanwhile, so the pool is back to
     * three (two without a supervisor) */
    json_t *v = NULL;
    bool restarted = false;
    json_int_t workers = 0;
    for (int i = 0; i < 100; i++) {
        json_decref (v);
        v = s_validator_entry ();
        workers = json_integer_value (json_object_get (v, "workers"));
        restarted = e2e_pid (s_dir, "validator-2") != victim;
        if (restarted ? workers == 3 && i >= 40 : workers == 2) break;
        usleep (100000);
    }
    assert_int_equal (workers, restarted ? 3 : 2);
    json_decref (v);
    int code;
    json_t *full = s_json ("capabilities --compact", &code);
    assert_int_equal (code, 0);
    json_decref (full);
    char plan[512];
    snprintf (plan, sizeof plan, "%s/plan.json", s_dir);
    FILE *f = fopen (plan, "w");
    fputs ("[{\"operation\": \"bpy.ops.mesh.primitive_grid_add\", \"name\": \"g\"},"
           " {\"operation\": \"bpy.ops.object.subdivision_set\", \"target\": \"g\", \"params\": {\"level\": 1}}]", f);
    fclose (f);
    char args[700];
    snprintf (args, sizeof args, "plan validate '%s'", plan);
    json_t *verdict = s_json (args, &code);
    assert_int_equal (code, 0);
    json_decref (verdict);
}

/* ---- a palette allowing an operator this Blender lacks ------------------------- */

static int s_setup_teapot (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-pool-teapot-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "cp '%s/proto/palette.yaml' '%s/palette.yaml' && printf '%%s\\n' '  bpy.ops.mesh.primitive_teapot_add:'"
              " '    description: A teapot (no such operator in Blender 3.4)' '    creates: object' >> '%s/palette.yaml'"
              " && printf 'validator:\\n  palette: %s/palette.yaml\\n' > '%s/custom.yaml'"
              " && '%s' --run-dir '%s' --config '%s/custom.yaml' up --ipc --validators 1 >&2",
              BMQ_SOURCE_DIR, s_dir, s_dir, s_dir, s_dir, e2e_bin ("blendmq"), s_dir, s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static void test_operator_blender_lacks_is_dropped (void **state)
{
    for (int i = 0; i < 100 && s_merged_validators () < 1; i++) usleep (100000);
    assert_int_equal (s_merged_validators (), 1);
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "grep -q 'primitive_teapot_add: dropped: the running Blender has no such operator' '%s'/logs/validator-1.log",
              s_dir);
    assert_int_equal (system (cmd), 0);
    int code;
    json_t *full = s_json ("capabilities", &code);
    assert_int_equal (code, 0);
    assert_null (json_object_get (full, "bpy.ops.mesh.primitive_teapot_add"));
    assert_non_null (json_object_get (full, "bpy.ops.mesh.primitive_cube_add"));
    json_decref (full);
    char plan[512], args[700];
    snprintf (plan, sizeof plan, "%s/teapot.json", s_dir);
    FILE *f = fopen (plan, "w");
    fputs ("[{\"operation\": \"bpy.ops.mesh.primitive_teapot_add\"}]", f);
    fclose (f);
    snprintf (args, sizeof args, "plan validate '%s'", plan);
    json_decref (s_json (args, &code));
    assert_int_equal (code, 1);                                       /* rejected, and the validator lives on */
    json_t *v = s_validator_entry ();
    assert_int_equal (json_integer_value (json_object_get (v, "workers")), 1);
    json_decref (v);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_three_validators_checked_against_blender),
        cmocka_unit_test (test_capabilities),
        cmocka_unit_test (test_inspect),
        cmocka_unit_test (test_kill_a_validator),
    };
    const struct CMUnitTest teapot[] = {
        cmocka_unit_test (test_operator_blender_lacks_is_dropped),
    };
    int failed = cmocka_run_group_tests_name ("stack", tests, s_setup, s_teardown);
    return failed + cmocka_run_group_tests_name ("teapot", teapot, s_setup_teapot, s_teardown);
}
