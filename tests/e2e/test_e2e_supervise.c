/* `blendmq up` supervises and heals (issue 17): a real stack, each of its
 * processes killed with SIGKILL in turn. After each the stack answers real
 * requests again within 20 s, with a new process (Blender on the same port),
 * `status --json` shows the restart and its reason, and the audit trail holds
 * a service.restart record. A process that keeps dying is restarted after a
 * growing back-off; a stopped one is left alone. `down` leaves nothing
 * behind, also when the supervisor itself was killed. */
#include "e2e_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HEAL_MS 20000

static char s_dir[256];

static long long s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A process is gone once it is reaped or a zombie (this test is the
 * subreaper: what the supervisor leaves behind becomes ours to reap). */
static bool s_alive (int pid)
{
    if (pid <= 1) return false;
    waitpid (pid, NULL, WNOHANG);
    char path[64], state = 0;
    snprintf (path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen (path, "r");
    if (!f) return false;
    if (fscanf (f, "%*d %*s %c", &state) != 1) state = 0;
    fclose (f);
    return state && state != 'Z';
}

static int s_up (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-supervise-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc >&2", e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static int s_setup (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    return s_up ();
}

static int s_teardown (void **state)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2; rm -rf '%s'", e2e_bin ("blendmq"), s_dir, s_dir);
    int rc = system (cmd);
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    return rc == 0 ? 0 : -1;
}

/* The supervisor's view of `name`, from `status --json` (a new reference). */
static json_t *s_supervised (const char *name)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "status", &code);
    json_t *found = NULL;
    size_t i;
    json_t *c;
    json_array_foreach (json_object_get (json_object_get (json_array_get (lines, 0), "supervisor"), "children"), i, c)
        if (json_string_value (json_object_get (c, "name")) && !strcmp (json_string_value (json_object_get (c, "name")), name))
            found = json_incref (c);
    json_decref (lines);
    return found;
}

static int s_by_restarts (const void *a, const void *b)
{
    json_int_t x = json_integer_value (json_object_get (*(json_t *const *) a, "restarts"));
    json_int_t y = json_integer_value (json_object_get (*(json_t *const *) b, "restarts"));
    return (x > y) - (x < y);
}

/* The data of every service.restart record for `service`, in restart order. */
static json_t *s_restart_records (const char *service)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "audit list --kind service.restart --limit 1000", &code);
    json_t *found[256];
    size_t n = 0, i;
    json_t *r;
    json_array_foreach (lines, i, r) {
        json_t *data = json_object_get (r, "data");
        const char *who = json_string_value (json_object_get (data, "service"));
        assert_string_equal (json_string_value (json_object_get (r, "origin")), "supervisor");   /* its own key */
        if (who && !strcmp (who, service) && n < 256) found[n++] = data;
    }
    qsort (found, n, sizeof found[0], s_by_restarts);
    json_t *out = json_array ();
    for (i = 0; i < n; i++) json_array_append (out, found[i]);
    json_decref (lines);
    return out;
}

/* The service.restart record of `service` that replaced old_pid (waits: a
 * record sent while the audit service restarts arrives once it is back). */
static json_t *s_wait_record (const char *service, int old_pid, int timeout_ms)
{
    for (long long until = s_now_ms () + timeout_ms; s_now_ms () < until; usleep (250000)) {
        json_t *all = s_restart_records (service), *found = NULL;
        size_t i;
        json_t *d;
        json_array_foreach (all, i, d)
            if (json_integer_value (json_object_get (d, "old_pid")) == old_pid) found = json_incref (d);
        json_decref (all);
        if (found) return found;
    }
    return NULL;
}

/* Healthy: `status` says every service is alive and Blender connected, and a
 * real request (the live scene, gateway → executor → Blender) succeeds. */
static bool s_healthy_before (long long deadline)
{
    while (s_now_ms () < deadline) {
        int left = (int) (deadline - s_now_ms ()), code = -1;
        if (!e2e_wait_healthy (s_dir, true, left > 1000 ? 1000 : left)) continue;
        json_decref (e2e_blendmq_json (s_dir, "scene 2>/dev/null", &code));
        if (code == 0) return true;
        usleep (200000);
    }
    return false;
}

static int s_wait_new_pid (const char *name, int old, long long deadline)
{
    int pid;
    while ((pid = e2e_pid (s_dir, name)) == old && s_now_ms () < deadline) usleep (50000);
    return pid;
}

/* Kill `name` with SIGKILL; the stack heals within HEAL_MS and says so. */
static void s_kill_and_heal (const char *name)
{
    int old = e2e_pid (s_dir, name);
    assert_true (s_alive (old));
    json_t *before = s_supervised (name);
    assert_non_null (before);
    long long t0 = s_now_ms (), deadline = t0 + HEAL_MS;
    assert_int_equal (kill (old, SIGKILL), 0);
    int pid = s_wait_new_pid (name, old, deadline);
    assert_int_not_equal (pid, old);
    assert_true (s_alive (pid));
    if (!s_healthy_before (deadline)) fail_msg ("%s: the stack is not healthy %d ms after kill -9", name, HEAL_MS);
    fprintf (stderr, "%s: pid %d killed, pid %d serving, stack healthy after %lld ms\n", name, old, pid, s_now_ms () - t0);

    json_t *c = s_supervised (name);
    assert_non_null (c);
    assert_int_equal (json_integer_value (json_object_get (c, "pid")), pid);
    assert_string_equal (json_string_value (json_object_get (c, "state")), "running");
    assert_int_equal (json_integer_value (json_object_get (c, "restarts")), 1);
    assert_non_null (strstr (json_string_value (json_object_get (c, "last_exit")), "SIGKILL"));
    if (json_object_get (before, "port")) {          /* Blender came back on its port */
        assert_int_equal (json_integer_value (json_object_get (c, "port")), json_integer_value (json_object_get (before, "port")));
        char path[64], cmd[4096] = "", want[32];
        snprintf (path, sizeof path, "/proc/%d/cmdline", pid);
        FILE *f = fopen (path, "r");
        assert_non_null (f);
        size_t n = fread (cmd, 1, sizeof cmd - 1, f);
        fclose (f);
        for (size_t i = 0; i < n; i++) if (!cmd[i]) cmd[i] = ' ';
        snprintf (want, sizeof want, " --port %lld ", (long long) json_integer_value (json_object_get (before, "port")));
        assert_non_null (strstr (cmd, want));
    }
    json_decref (c);
    json_decref (before);

    json_t *rec = s_wait_record (name, old, 15000);
    if (!rec) fail_msg ("no service.restart record for %s (old pid %d)", name, old);
    assert_int_equal (json_integer_value (json_object_get (rec, "pid")), pid);
    assert_int_equal (json_integer_value (json_object_get (rec, "restarts")), 1);
    assert_int_equal (json_integer_value (json_object_get (rec, "backoff_ms")), 200);
    assert_true (json_integer_value (json_object_get (rec, "uptime_ms")) > 0);
    assert_non_null (strstr (json_string_value (json_object_get (rec, "exit")), "killed by signal 9 (SIGKILL)"));
    json_decref (rec);
}

static void test_heals_every_process (void **state)
{
    static const char *const victims[] = { "planner", "executor", "validator-1", "gateway", "audit", "blender" };
    for (size_t i = 0; i < sizeof victims / sizeof victims[0]; i++) s_kill_and_heal (victims[i]);
    /* healed, it still does the whole job: plan, validate, run in Blender */
    int code;
    json_decref (e2e_blendmq_json (s_dir, "chat 'build a snowman' >/dev/null 2>&1", &code));
    assert_int_equal (code, 0);
}

static void test_stopped_is_left_alone (void **state)
{
    int pid = e2e_pid (s_dir, "validator-2");
    assert_int_equal (kill (pid, SIGSTOP), 0);
    usleep (1500000);
    json_t *c = s_supervised ("validator-2");
    assert_int_equal (e2e_pid (s_dir, "validator-2"), pid);
    assert_int_equal (json_integer_value (json_object_get (c, "pid")), pid);
    assert_int_equal (json_integer_value (json_object_get (c, "restarts")), 0);
    json_decref (c);
    assert_int_equal (kill (pid, SIGCONT), 0);
}

/* Killed again as soon as it is back, three times: each delay doubles. */
static void test_crash_loop_backs_off (void **state)
{
    json_t *first = s_restart_records ("planner");
    size_t before = json_array_size (first);
    json_decref (first);
    for (int k = 0; k < 3; k++) {
        int old = e2e_pid (s_dir, "planner");
        assert_int_equal (kill (old, SIGKILL), 0);
        assert_int_not_equal (s_wait_new_pid ("planner", old, s_now_ms () + 10000), old);
    }
    json_t *all = NULL;
    for (long long until = s_now_ms () + 15000; s_now_ms () < until; usleep (250000)) {
        json_decref (all);
        all = s_restart_records ("planner");
        if (json_array_size (all) >= before + 3) break;
    }
    assert_int_equal (json_array_size (all), before + 3);
    long long b[3];
    for (int k = 0; k < 3; k++) {
        b[k] = json_integer_value (json_object_get (json_array_get (all, before + (size_t) k), "backoff_ms"));
        fprintf (stderr, "planner crash loop: restart %d after %lld ms\n", k + 1, b[k]);
    }
    json_decref (all);
    assert_true (b[0] >= 200);
    assert_int_equal (b[1], 2 * b[0]);
    assert_int_equal (b[2], 2 * b[1]);
    json_t *c = s_supervised ("planner");
    assert_int_equal (json_integer_value (json_object_get (c, "restarts")), (json_int_t) before + 3);
    json_decref (c);
    if (!s_healthy_before (s_now_ms () + HEAL_MS)) fail_msg ("the stack is not healthy after the crash loop");
}

/* Every pid the stack has: the supervisor's and its children's. */
static size_t s_all_pids (int *pids, size_t max)
{
    size_t n = 0;
    pids[n++] = e2e_pid (s_dir, "supervisor");
    char path[512];
    snprintf (path, sizeof path, "%s/supervisor.json", s_dir);
    json_t *doc = json_load_file (path, 0, NULL);
    size_t i;
    json_t *c;
    json_array_foreach (json_object_get (doc, "children"), i, c)
        if (n < max) pids[n++] = (int) json_integer_value (json_object_get (c, "pid"));
    json_decref (doc);
    return n;
}

static void s_down_leaves_nothing (const int *pids, size_t n)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2", e2e_bin ("blendmq"), s_dir);
    assert_int_equal (system (cmd), 0);
    for (size_t i = 0; i < n; i++) {
        for (int t = 0; t < 20 && s_alive (pids[i]); t++) usleep (100000);
        if (s_alive (pids[i])) fail_msg ("pid %d is still running after down", pids[i]);
    }
    char path[512];
    snprintf (path, sizeof path, "%s/pids", s_dir);
    DIR *d = opendir (path);
    struct dirent *e;
    while (d && (e = readdir (d)))
        if (strstr (e->d_name, ".pid")) fail_msg ("%s/%s is left after down", path, e->d_name);
    if (d) closedir (d);
}

static void test_down_stops_everything (void **state)
{
    int pids[64];
    size_t n = s_all_pids (pids, 64);
    assert_true (n >= 8);           /* supervisor, Blender, audit, planner, executor, gateway, 2 validators */
    for (size_t i = 0; i < n; i++) assert_true (s_alive (pids[i]));
    s_down_leaves_nothing (pids, n);
    assert_int_equal (e2e_pid (s_dir, "supervisor"), -1);
}

/* A supervisor killed with SIGKILL leaves its processes running unsupervised;
 * `down` still finds and stops them all by their pid files. */
static void test_down_without_supervisor (void **state)
{
    char old[512];
    snprintf (old, sizeof old, "rm -rf '%s'", s_dir);
    assert_int_equal (system (old), 0);
    assert_int_equal (s_up (), 0);
    int pids[64];
    size_t n = s_all_pids (pids, 64);
    assert_int_equal (kill (pids[0], SIGKILL), 0);
    for (int t = 0; t < 20 && s_alive (pids[0]); t++) usleep (100000);
    assert_false (s_alive (pids[0]));
    for (size_t i = 1; i < n; i++) assert_true (s_alive (pids[i]));     /* nobody killed them */
    s_down_leaves_nothing (pids + 1, n - 1);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_heals_every_process),
        cmocka_unit_test (test_stopped_is_left_alone),
        cmocka_unit_test (test_crash_loop_backs_off),
        cmocka_unit_test (test_down_stops_everything),
        cmocka_unit_test (test_down_without_supervisor),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
