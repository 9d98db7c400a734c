/* script.live — run_script against a real headless Blender running the add-on
 * (services/executor/addon/blendmq_addon.py), through the C client
 * (services/executor/blender_link.h): the script must carry the sha256 of
 * exactly its text, a wrong one is refused before anything runs, and a script
 * that loops forever is stopped by its timeout_ms, rolled back, and leaves
 * the add-on answering. */
#include "blender_link.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char s_dir[128];
static int s_port;
static pid_t s_pid;
static const char *TOKEN = "test-token-live-0123456789";

static int s_setup (void **state)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-live-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char token_file[256], port_file[256], addon[512], log[256];
    snprintf (token_file, sizeof token_file, "%s/token", s_dir);
    snprintf (port_file, sizeof port_file, "%s/port", s_dir);
    snprintf (log, sizeof log, "%s/blender.log", s_dir);
    snprintf (addon, sizeof addon, "%s/services/executor/addon/blendmq_addon.py", BMQ_SOURCE_DIR);
    FILE *f = fopen (token_file, "w");
    if (!f) return -1;
    fputs (TOKEN, f);
    fclose (f);
    s_pid = fork ();
    if (s_pid == 0) {
        if (!freopen (log, "w", stdout) || !freopen (log, "a", stderr)) _exit (126);
        const char *blender = getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender";
        execlp (blender, blender, "-b", "--factory-startup", "--python", addon, "--", "--port", "0",
                "--port-file", port_file, "--token-file", token_file, "--reset-scene", (char *) NULL);
        _exit (127);
    }
    for (int i = 0; i < 1200 && !s_port; i++) {
        f = fopen (port_file, "r");
        if (f) { if (fscanf (f, "%d", &s_port) != 1) s_port = 0; fclose (f); }
        if (!s_port) usleep (50000);
    }
    return s_port ? 0 : -1;
}

static int s_teardown (void **state)
{
    if (s_pid > 0) { kill (s_pid, SIGKILL); waitpid (s_pid, NULL, 0); }
    char cmd[256];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static bmq_blender_link_t *s_connect (void)
{
    bmq_blender_link_t *link = bmq_blender_link_new ("127.0.0.1", s_port, TOKEN);
    char err[256];
    if (bmq_blender_link_connect (link, 5000, err, sizeof err)) fail_msg ("connect: %s", err);
    return link;
}

static json_t *s_call (bmq_blender_link_t *link, const char *cmd, json_t *args, int timeout_ms)
{
    json_t *reply = NULL;
    char err[256];
    int rc = bmq_blender_link_call (link, cmd, args, timeout_ms, &reply, NULL, NULL, err, sizeof err);
    if (rc != BMQ_LINK_OK) fail_msg ("%s: status %d: %s", cmd, rc, err);
    return reply;
}

static void s_sha256_hex (const char *text, char hex[65])
{
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256 (digest, (const unsigned char *) text, strlen (text));
    for (size_t i = 0; i < sizeof digest; i++) snprintf (hex + 2 * i, 3, "%02x", digest[i]);
}

/* run_script {script, plan_id, sha256 (when given), timeout_ms (when > 0)} */
static json_t *s_run_script (bmq_blender_link_t *link, const char *script, const char *plan_id, const char *sha,
                             int timeout_ms)
{
    json_t *args = json_pack ("{s:s, s:s}", "script", script, "plan_id", plan_id);
    if (sha) json_object_set_new (args, "sha256", json_string (sha));
    if (timeout_ms > 0) json_object_set_new (args, "timeout_ms", json_integer (timeout_ms));
    json_t *reply = s_call (link, "run_script", args, 60000);
    json_decref (args);
    return reply;
}

static int s_object_count (bmq_blender_link_t *link)
{
    json_t *r = s_call (link, "scene_info", NULL, 30000);
    int n = (int) json_array_size (json_object_get (json_object_get (r, "result"), "objects"));
    json_decref (r);
    return n;
}

static bool s_has_object (bmq_blender_link_t *link, const char *name)
{
    json_t *r = s_call (link, "scene_info", NULL, 30000);
    bool found = false;
    size_t i;
    json_t *o;
    json_array_foreach (json_object_get (json_object_get (r, "result"), "objects"), i, o)
        if (!strcmp (json_string_value (json_object_get (o, "name")) ?: "", name)) found = true;
    json_decref (r);
    return found;
}

static double s_now (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}


/* Live, the guard's operator filter is on: an operator outside the allowed
 * categories (or a denied one) is not even visible to the script, whatever
 * reached the add-on; the run fails, is rolled back, and writes nothing. */
static void test_live_operator_filter (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call (link, "reset_scene", NULL, 30000));
    char path[256], script[768], sha[65];
    snprintf (path, sizeof path, "%s/live-export.obj", s_dir);
    const char *cases[] = {
        "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\nbpy.ops.wm.obj_export(filepath=%s)\n",
        "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\nbpy.ops.object.load_reference_image(filepath=%s)\n",
        "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\nbpy.ops.uv.export_layout(filepath=%s)\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char quoted[300];
        snprintf (quoted, sizeof quoted, "'%s'", path);
        snprintf (script, sizeof script, cases[i], quoted);
        s_sha256_hex (script, sha);
        int before = s_object_count (link);
        json_t *r = s_run_script (link, script, "live-opfilter", sha, 0);
        assert_false (json_is_true (json_object_get (r, "ok")));
        assert_non_null (strstr (json_string_value (json_object_get (r, "error")) ?: "", "is not allowed"));
        json_decref (r);
        assert_int_equal (s_object_count (link), before);      /* the cube was rolled back */
        assert_int_not_equal (access (path, F_OK), 0);         /* nothing written */
    }
    bmq_blender_link_destroy (&link);
}

static void test_valid_script_runs (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call (link, "reset_scene", NULL, 30000));
    const char *script =
        "import bpy\n"
        "from mathutils import Vector\n"
        "bpy.ops.mesh.primitive_cube_add(size=2, location=Vector((1, 2, 3)))\n"
        "bpy.context.active_object.name = 'live_cube'\n"
        "print('made', bpy.context.active_object.name)\n";
    char sha[65];
    s_sha256_hex (script, sha);
    json_t *r = s_run_script (link, script, "live-ok", sha, 0);
    if (!json_is_true (json_object_get (r, "ok")))
        fail_msg ("run_script failed: %s", json_string_value (json_object_get (r, "error")));
    json_t *result = json_object_get (r, "result");
    json_t *created = json_object_get (result, "objects_created");
    assert_int_equal (json_array_size (created), 1);
    assert_string_equal (json_string_value (json_array_get (created, 0)), "live_cube");
    assert_true (json_is_false (json_object_get (result, "timed_out")));
    assert_non_null (strstr (json_string_value (json_object_get (result, "output")) ?: "", "made live_cube"));
    json_decref (r);
    assert_true (s_has_object (link, "live_cube"));
    bmq_blender_link_destroy (&link);
}

static void test_wrong_or_missing_sha_refused (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call (link, "reset_scene", NULL, 30000));
    const char *script = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\nbpy.context.active_object.name = 'never'\n";
    const char *checked = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\n";
    char sha[65];
    s_sha256_hex (checked, sha);            /* the sha256 of another (the checked) script */
    json_t *r = s_run_script (link, script, "live-sha", sha, 0);
    assert_false (json_is_true (json_object_get (r, "ok")));
    const char *error = json_string_value (json_object_get (r, "error"));
    assert_non_null (error);
    assert_non_null (strstr (error, "sha256"));
    json_decref (r);
    assert_int_equal (s_object_count (link), 0);
    /* no sha256 at all: refused too */
    r = s_run_script (link, script, "live-sha", NULL, 0);
    assert_false (json_is_true (json_object_get (r, "ok")));
    assert_non_null (strstr (json_string_value (json_object_get (r, "error")) ?: "", "sha256"));
    json_decref (r);
    assert_int_equal (s_object_count (link), 0);
    /* no transaction was opened by the refusals */
    json_t *rb = json_pack ("{s:s}", "plan_id", "live-sha");
    r = s_call (link, "plan_rollback", rb, 30000);
    json_decref (rb);
    assert_false (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    /* a widened allowlist is refused (issue 12): the request lists os, nothing runs */
    const char *os_script = "import os\n";
    s_sha256_hex (os_script, sha);
    json_t *args = json_pack ("{s:s, s:s, s:s, s:[s, s], s:[s, s]}", "script", os_script, "plan_id", "live-os", "sha256", sha,
                              "modules", "os", "bpy", "builtins", "open", "print");
    r = s_call (link, "run_script", args, 60000);
    json_decref (args);
    assert_false (json_is_true (json_object_get (r, "ok")));
    assert_non_null (strstr (json_string_value (json_object_get (r, "error")) ?: "", "wider than the add-on's"));
    assert_non_null (strstr (json_string_value (json_object_get (r, "error")) ?: "", "os not allowed"));
    json_decref (r);
    /* builtins too; a narrower list is still fine (the script then fails on the missing name) */
    args = json_pack ("{s:s, s:s, s:s, s:[s], s:[s, s]}", "script", os_script, "plan_id", "live-os", "sha256", sha,
                      "modules", "bpy", "builtins", "print", "exec");
    r = s_call (link, "run_script", args, 60000);
    json_decref (args);
    assert_false (json_is_true (json_object_get (r, "ok")));
    assert_non_null (strstr (json_string_value (json_object_get (r, "error")) ?: "", "builtins allowlist is wider"));
    json_decref (r);
    assert_int_equal (s_object_count (link), 0);
    bmq_blender_link_destroy (&link);
}

static void test_endless_loop_times_out (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call (link, "reset_scene", NULL, 30000));
    const char *script =
        "import bpy\n"
        "bpy.ops.mesh.primitive_cube_add(size=1)\n"
        "bpy.context.active_object.name = 'before_loop'\n"
        "while True:\n"
        "    pass\n";
    char sha[65];
    s_sha256_hex (script, sha);
    double t0 = s_now ();
    json_t *r = s_run_script (link, script, "live-loop", sha, 1500);
    double took = s_now () - t0;
    assert_false (json_is_true (json_object_get (r, "ok")));
    const char *error = json_string_value (json_object_get (r, "error"));
    assert_non_null (error);
    if (strncmp (error, "timeout", 7)) fail_msg ("error does not start with 'timeout': %s", error);
    json_decref (r);
    assert_true (took >= 1.4);
    if (took >= 5.0) fail_msg ("the timeout took %.2f s", took);
    /* the add-on answers, and the cube made before the loop was rolled back */
    t0 = s_now ();
    r = s_call (link, "ping", NULL, 5000);
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    assert_true (s_now () - t0 < 1.0);
    assert_false (s_has_object (link, "before_loop"));
    assert_int_equal (s_object_count (link), 0);
    /* and the next script runs normally (nothing left pending from the watchdog) */
    const char *next = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\nbpy.context.active_object.name = 'after'\n"
                       "n = 0\nfor i in range(200000):\n    n += i\n";
    s_sha256_hex (next, sha);
    r = s_run_script (link, next, "live-after", sha, 0);
    if (!json_is_true (json_object_get (r, "ok")))
        fail_msg ("run_script after a timeout failed: %s", json_string_value (json_object_get (r, "error")));
    json_decref (r);
    assert_true (s_has_object (link, "after"));
    bmq_blender_link_destroy (&link);
}

int main (void)
{
    if (sodium_init () < 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_valid_script_runs),
        cmocka_unit_test (test_wrong_or_missing_sha_refused),
        cmocka_unit_test (test_endless_loop_times_out),
        cmocka_unit_test (test_live_operator_filter),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
