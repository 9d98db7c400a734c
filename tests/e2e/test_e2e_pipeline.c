/* Pipelined plans and the scene's names off the validation path (issue 14),
 * on a real stack with a real headless Blender:
 *
 *   - a plan runs as run_plan chunks: every step's progress event comes, in
 *     order, and the plan ends done; a plan of more steps than one chunk holds
 *     (CHUNK_STEPS) still runs whole;
 *   - a failing step mid-plan ends it failed and rolled back (in the add-on);
 *   - a plan that targets objects it does not make is validated against the
 *     names the executor published (scene.names), without waiting on the
 *     executor: with Blender stopped (SIGSTOP), `plan validate` of a plan
 *     that moves an existing object is still answered at once;
 *   - names that are a moment old never refuse a right plan: an object made
 *     by one plan is targeted by the very next one.
 */
#include "e2e_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char s_dir[256];

static long long s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int s_setup (void **state)
{
    (void) state;
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-pipeline-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc --validators 1 >&2", e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static int s_teardown (void **state)
{
    (void) state;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2 && rm -rf '%s'", e2e_bin ("blendmq"), s_dir, s_dir);
    int rc = system (cmd);
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    return rc == 0 ? 0 : -1;
}

/* Write `steps` (a JSON array) to FILE in the run dir; returns its path (static). */
static const char *s_plan_file (const char *file, json_t *steps)
{
    static char path[512];
    snprintf (path, sizeof path, "%s/%s", s_dir, file);
    assert_int_equal (json_dump_file (steps, path, JSON_COMPACT), 0);
    json_decref (steps);
    return path;
}

/* `blendmq plan ACTION FILE --json`: its JSON lines; the exit code in *code. */
static json_t *s_plan (const char *action, const char *path, int *code)
{
    char args[700];
    snprintf (args, sizeof args, "plan %s '%s'", action, path);
    return e2e_blendmq_json (s_dir, args, code);
}

static json_t *s_cubes (const char *prefix, int n)
{
    json_t *steps = json_array ();
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf (name, sizeof name, "%s%d", prefix, i);
        json_array_append_new (steps, json_pack ("{s:s, s:s, s:{s:f}}", "operation", "bpy.ops.mesh.primitive_cube_add",
                                                 "name", name, "params", "size", 0.2));
    }
    return steps;
}

/* The events of a `plan run --json`: steps in order 1..n, then done. */
static void s_expect_run (json_t *lines, int n, const char *status)
{
    size_t i;
    json_t *l;
    int next = 1;
    const char *end = NULL;
    json_array_foreach (lines, i, l) {
        l = json_object_get (l, "body");
        const char *event = json_string_value (json_object_get (l, "event"));
        if (event && !strcmp (event, "step") && !strcmp (json_string_value (json_object_get (l, "status")) ?: "", "ok")) {
            assert_int_equal (json_integer_value (json_object_get (l, "step")), next);
            next++;
        }
        if (event && !strcmp (event, "plan") && json_object_get (l, "duration_ms"))
            end = json_string_value (json_object_get (l, "status"));
    }
    if (!end || strcmp (end, status) || next - 1 != n) {
        char *text = json_dumps (json_array_get (lines, json_array_size (lines) - 1), 0);
        fail_msg ("expected %d ok steps and '%s', got %d and '%s' (last: %s)", n, status, next - 1, end ? end : "?", text);
    }
}

static size_t s_count_prefix (const char *prefix)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene info", &code);
    size_t i, n = 0;
    json_t *o;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "objects"), i, o)
        n += !strncmp (json_string_value (json_object_get (o, "name")) ?: "", prefix, strlen (prefix));
    json_decref (lines);
    return n;
}

static void test_plan_streams_steps (void **state)
{
    (void) state;
    int code;
    json_t *lines = s_plan ("run", s_plan_file ("p40.json", s_cubes ("pc", 40)), &code);
    assert_int_equal (code, 0);
    s_expect_run (lines, 40, "done");
    json_decref (lines);
    assert_int_equal (s_count_prefix ("pc"), 40);
}

static void test_failed_step_rolls_back (void **state)
{
    (void) state;
    /* the validator cannot know an empty holds no mesh: the step fails in Blender */
    json_t *steps = s_cubes ("pf", 10);
    json_array_append_new (steps, json_pack ("{s:s, s:s}", "operation", "bpy.ops.object.empty_add", "name", "pfe"));
    json_array_append_new (steps, json_pack ("{s:s, s:s, s:{s:s}}", "operation", "object.modifier", "target", "pfe",
                                             "params", "type", "BEVEL"));
    json_t *after = s_cubes ("pz", 3);
    json_array_extend (steps, after);
    json_decref (after);
    int code;
    json_incref (steps);
    json_t *lines = s_plan ("run", s_plan_file ("pf.json", steps), &code);
    json_decref (steps);
    assert_int_not_equal (code, 0);
    size_t i;
    json_t *l;
    bool failed_12 = false, rolled_back = false;
    char end[32] = "";
    json_array_foreach (lines, i, l) {
        l = json_object_get (l, "body");
        const char *event = json_string_value (json_object_get (l, "event")) ?: "";
        const char *status = json_string_value (json_object_get (l, "status")) ?: "";
        if (!strcmp (event, "step") && !strcmp (status, "failed")) failed_12 = json_integer_value (json_object_get (l, "step")) == 12;
        if (!strcmp (event, "rollback") && !strcmp (status, "rolled back"))
            rolled_back = json_array_size (json_object_get (json_object_get (l, "rollback"), "removed")) == 11;
        if (!strcmp (event, "plan") && json_object_get (l, "duration_ms")) snprintf (end, sizeof end, "%s", status);
        if (!strcmp (event, "step") && !strncmp (json_string_value (json_object_get (l, "object")) ?: "", "pz", 2))
            fail_msg ("a step after the failed one ran");
    }
    json_decref (lines);
    assert_true (failed_12);
    assert_true (rolled_back);
    assert_string_equal (end, "failed");
    assert_int_equal (s_count_prefix ("pf"), 0);
    assert_int_equal (s_count_prefix ("pz"), 0);
}

static void test_chunks (void **state)
{
    (void) state;
    int code;
    /* more steps than the palette allows in one plan would be refused; 200 is the cap */
    json_t *lines = s_plan ("run", s_plan_file ("p200.json", s_cubes ("pk", 200)), &code);
    assert_int_equal (code, 0);
    s_expect_run (lines, 200, "done");
    json_decref (lines);
    assert_int_equal (s_count_prefix ("pk"), 200);
}

static void test_validate_without_executor (void **state)
{
    (void) state;
    int code;
    json_t *lines = s_plan ("run", s_plan_file ("box.json", s_cubes ("nbox", 1)), &code);
    assert_int_equal (code, 0);
    json_decref (lines);
    /* the very next plan targets it: names a moment old must not refuse it */
    json_t *move = json_pack ("[{s:s, s:s, s:{s:[f,f,f]}}]", "operation", "object.location", "target", "nbox0",
                              "params", "value", 0.0, 2.0, 0.0);
    const char *path = s_plan_file ("move.json", move);
    lines = s_plan ("run", path, &code);
    assert_int_equal (code, 0);
    json_decref (lines);
    sleep (1);                      /* the names after that plan are published */
    int pid = e2e_pid (s_dir, "blender");
    assert_true (pid > 1);
    assert_int_equal (kill (pid, SIGSTOP), 0);
    long long t0 = s_now_ms ();
    lines = s_plan ("validate", path, &code);
    long long ms = s_now_ms () - t0;
    kill (pid, SIGCONT);
    char *text = json_dumps (lines, 0);
    fprintf (stderr, "plan validate with Blender stopped: exit %d after %lld ms: %.300s\n", code, ms, text);
    free (text);
    json_decref (lines);
    assert_int_equal (code, 0);
    assert_true (ms < 2500);        /* a lookup would wait for a Blender that does not answer */
    assert_true (e2e_wait_healthy (s_dir, true, 30000));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_plan_streams_steps),
        cmocka_unit_test (test_failed_step_rolls_back),
        cmocka_unit_test (test_chunks),
        cmocka_unit_test (test_validate_without_executor),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
