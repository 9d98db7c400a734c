/* Fail fast (issue 17): a request waiting on a service its heartbeats declare
 * dead is answered within two heartbeat intervals of that, with an error that
 * names the service, on every entry point (CLI, HTTP, MCP).
 *
 * Services are stopped with SIGSTOP rather than killed: a stopped process is
 * not restarted by `up`'s supervisor, so what the client sees is the gateway's
 * fail-fast path alone; SIGCONT then heals the stack. A plan cut this way must
 * end rolled back once the executor resumes (the gateway cancels it). */
#include "e2e_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* heartbeat defaults: 1000 ms × liveness 3 to be declared dead, then at most
 * two intervals to answer; 1.5 s for process start-up and scheduling noise */
#define DEAD_MS   3000
#define BOUND_MS  (DEAD_MS + 2 * 1000 + 1500)

static char s_dir[256];
static char s_http[256];

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
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-failfast-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc --validators 1 >&2", e2e_bin ("blendmq"), s_dir);
    if (system (cmd) != 0) return -1;
    int code;
    json_t *st = e2e_blendmq_json (s_dir, "status", &code);
    const char *http = json_string_value (json_object_get (json_object_get (json_array_get (st, 0), "endpoints"), "http"));
    snprintf (s_http, sizeof s_http, "%s", http ? http : "");
    json_decref (st);
    curl_global_init (CURL_GLOBAL_DEFAULT);
    return *s_http ? 0 : -1;
}

static int s_teardown (void **state)
{
    (void) state;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2 && rm -rf '%s'", e2e_bin ("blendmq"), s_dir, s_dir);
    int rc = system (cmd);
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    curl_global_cleanup ();
    return rc == 0 ? 0 : -1;
}

static void s_signal (const char *name, int sig)
{
    int pid = e2e_pid (s_dir, name);
    assert_true (pid > 1);
    assert_int_equal (kill (pid, sig), 0);
}

static void s_resume (const char *name)
{
    s_signal (name, SIGCONT);
    assert_true (e2e_wait_healthy (s_dir, true, 20000));
}

/* `blendmq ARGS 2>&1`: output, exit code, and how long it took. */
static char *s_cli (const char *args, int *code, long long *ms)
{
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' %s 2>&1", e2e_bin ("blendmq"), s_dir, args);
    long long t0 = s_now_ms ();
    char *out = e2e_run (cmd, code);
    *ms = s_now_ms () - t0;
    return out;
}

/* ---- HTTP with the cli token --------------------------------------------- */

typedef struct { char *data; size_t len; char session[128]; } s_buf_t;

static size_t s_collect (char *p, size_t size, size_t n, void *arg)
{
    s_buf_t *b = arg;
    b->data = realloc (b->data, b->len + size * n + 1);
    memcpy (b->data + b->len, p, size * n);
    b->len += size * n;
    b->data[b->len] = 0;
    return size * n;
}

static size_t s_header (char *p, size_t size, size_t n, void *arg)
{
    s_buf_t *b = arg;
    if (!strncasecmp (p, "Mcp-Session-Id:", 15)) {
        const char *v = p + 15;
        while (*v == ' ') v++;
        snprintf (b->session, sizeof b->session, "%.*s", (int) strcspn (v, "\r\n"), v);
    }
    return size * n;
}

/* method GET unless body; returns the HTTP status, body in out (caller frees). */
static long s_request (const char *path, const char *body, const char *session, s_buf_t *out)
{
    char url[512], auth[300], sid[200];
    snprintf (url, sizeof url, "%s%s", s_http, path);
    snprintf (auth, sizeof auth, "Authorization: Bearer %s", e2e_token (s_dir, "cli"));
    struct curl_slist *h = curl_slist_append (NULL, auth);
    h = curl_slist_append (h, "Content-Type: application/json");
    h = curl_slist_append (h, "Accept: application/json, text/event-stream");
    h = curl_slist_append (h, "MCP-Protocol-Version: 2025-06-18");
    if (session && *session) {
        snprintf (sid, sizeof sid, "Mcp-Session-Id: %s", session);
        h = curl_slist_append (h, sid);
    }
    CURL *c = curl_easy_init ();
    curl_easy_setopt (c, CURLOPT_URL, url);
    curl_easy_setopt (c, CURLOPT_HTTPHEADER, h);
    if (body) curl_easy_setopt (c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, s_collect);
    curl_easy_setopt (c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt (c, CURLOPT_HEADERFUNCTION, s_header);
    curl_easy_setopt (c, CURLOPT_HEADERDATA, out);
    curl_easy_setopt (c, CURLOPT_TIMEOUT, 60L);
    long status = 0;
    if (curl_easy_perform (c) == CURLE_OK) curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup (c);
    curl_slist_free_all (h);
    return status;
}

/* ---- the cases ------------------------------------------------------------ */

static void test_planner_stopped (void **state)
{
    (void) state;
    s_signal ("planner", SIGSTOP);
    long long t0 = s_now_ms ();
    int code;
    long long ms;
    char *out = s_cli ("chat 'a red cube'", &code, &ms);
    long long since_stop = s_now_ms () - t0;
    fprintf (stderr, "chat with the planner stopped: exit %d after %lld ms: %s", code, since_stop, out);
    assert_int_equal (code, 1);
    assert_non_null (strstr (out, "planner_unavailable"));
    assert_non_null (strstr (out, "nothing was run"));
    assert_true (since_stop < BOUND_MS);
    free (out);

    /* MCP: the tool call's result is an error the model can read, as fast */
    s_buf_t init = { 0 };
    long st = s_request ("/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                         "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"failfast\",\"version\":\"1\"}}}", NULL, &init);
    assert_int_equal (st, 200);
    assert_true (init.session[0]);
    s_buf_t note = { 0 };
    s_request ("/mcp", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", init.session, &note);
    s_buf_t call = { 0 };
    long long t1 = s_now_ms ();
    st = s_request ("/mcp", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"chat\","
                    "\"arguments\":{\"prompt\":\"a red cube\"}}}", init.session, &call);
    long long mcp_ms = s_now_ms () - t1;
    fprintf (stderr, "MCP chat with the planner stopped: HTTP %ld after %lld ms: %.400s\n", st, mcp_ms, call.data ? call.data : "");
    assert_int_equal (st, 200);
    assert_non_null (call.data);
    assert_non_null (strstr (call.data, "\"isError\":true"));
    assert_non_null (strstr (call.data, "planner unavailable"));
    assert_true (mcp_ms < BOUND_MS);
    free (init.data);
    free (note.data);
    free (call.data);
    s_resume ("planner");
}

/* A 200-step plan whose objects are called PREFIX0…PREFIX199. */
static void s_write_plan (const char *path, const char *prefix)
{
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputc ('[', f);
    for (int i = 0; i < 200; i++)
        fprintf (f, "%s{\"operation\":\"bpy.ops.mesh.primitive_cube_add\",\"name\":\"%s%d\",\"params\":{\"size\":0.1,"
                 "\"location\":[%d,0,0]}}", i ? "," : "", prefix, i, i);
    fputs ("]\n", f);
    fclose (f);
}

/* Wait until the scene holds no object whose name starts with prefix; false when it still does after 10 s. */
static bool s_scene_without (const char *prefix)
{
    for (int tries = 0; tries < 40; tries++) {
        int code;
        json_t *lines = e2e_blendmq_json (s_dir, "scene info", &code);
        size_t i, left = 0;
        json_t *o;
        json_array_foreach (json_object_get (json_array_get (lines, 0), "objects"), i, o)
            left += !strncmp (json_string_value (json_object_get (o, "name")), prefix, strlen (prefix));
        json_decref (lines);
        if (code == 0 && !left) return true;
        usleep (250 * 1000);
    }
    return false;
}

/* A plan of 200 objects PREFIX0.. that was cut from a service: whole or rolled
 * back, and the audit says which. A plan that outran the silence ends done with
 * its 200 steps; one that did not ends interrupted or cancelled, and none of its
 * objects stay. */
static void s_expect_whole_or_none (const char *prefix)
{
    char first[32];
    snprintf (first, sizeof first, "\"%s0\"", prefix);
    const char *status = NULL;
    for (int tries = 0; tries < 40 && !status; tries++) {
        int code;
        json_t *lines = e2e_blendmq_json (s_dir, "audit list --kind plan.end", &code);
        size_t i;
        json_t *r;
        json_array_foreach (lines, i, r) {
            char *text = json_dumps (r, JSON_COMPACT);
            if (!strstr (text, first) && !strstr (text, "before it started") && !strstr (text, "before the plan started")) { }
            else if (strstr (text, "\"status\":\"done\"") && strstr (text, "\"steps_done\":200")) status = "done";
            else status = "cut";
            free (text);
        }
        json_decref (lines);
        if (!status) usleep (250 * 1000);
    }
    fprintf (stderr, "the plan %s… ended %s\n", prefix, status ? status : "?");
    assert_non_null (status);
    if (strcmp (status, "done")) { assert_true (s_scene_without (prefix)); return; }
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene info", &code);
    size_t i, left = 0;
    json_t *r;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "objects"), i, r)
        left += !strncmp (json_string_value (json_object_get (r, "name")), prefix, strlen (prefix));
    json_decref (lines);
    fprintf (stderr, "%zu of its 200 objects are in the scene\n", left);
    assert_int_equal (left, 200);
}

/* `plan run` of a 200-step plan (objects PREFIX…), stopping `service` with
 * SIGSTOP at its 20th step. Returns the exit code; the last line printed in
 * last, and how long after the stop the client had its answer in *answered. */
static int s_run_and_stop (const char *prefix, const char *service, char *last, size_t len, long long *answered)
{
    char plan[512], cmd[1024], line[2048];
    snprintf (plan, sizeof plan, "%s/%s200.json", s_dir, prefix);
    s_write_plan (plan, prefix);
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' plan run '%s' 2>&1", e2e_bin ("blendmq"), s_dir, plan);
    FILE *p = popen (cmd, "r");
    assert_non_null (p);
    int steps = 0;
    long long t0 = 0;
    last[0] = 0;
    while (fgets (line, sizeof line, p)) {
        snprintf (last, len, "%s", line);
        if (!strncmp (line, "step ", 5) && ++steps == 20) {
            s_signal (service, SIGSTOP);
            t0 = s_now_ms ();
        }
    }
    *answered = s_now_ms () - t0;
    int st = pclose (p);
    fprintf (stderr, "plan run with the %s stopped at step %d: exit %d after %lld ms: %s", service, steps,
             WEXITSTATUS (st), *answered, last);
    assert_true (t0 > 0);
    return WEXITSTATUS (st);
}

static void test_executor_stopped_mid_plan (void **state)
{
    (void) state;
    char last[2048];
    long long answered;
    assert_int_equal (s_run_and_stop ("ff", "executor", last, sizeof last, &answered), 1);
    assert_non_null (strstr (last, "executor_unavailable"));
    assert_non_null (strstr (last, "was at step"));
    assert_true (answered < BOUND_MS);

    /* the scene, meanwhile: answered as fast, over HTTP too */
    int code;
    long long ms;
    char *out = s_cli ("scene info", &code, &ms);
    assert_int_equal (code, 1);
    assert_non_null (strstr (out, "executor_unavailable"));
    assert_true (ms < BOUND_MS);
    free (out);
    s_buf_t scene = { 0 };
    long http = s_request ("/api/scene", NULL, NULL, &scene);
    assert_int_equal (http, 503);
    assert_non_null (strstr (scene.data, "executor_unavailable"));
    free (scene.data);

    /* resumed, the executor either finds the gateway's cancel and rolls the plan
     * back, or finds that Blender finished it meanwhile (a pipelined plan runs in
     * Blender while the executor is stopped): whole or nothing, never half */
    s_resume ("executor");
    s_expect_whole_or_none ("ff");
}

/* The gateway stops mid-plan: the CLI gives up after liveness + 1 intervals,
 * and the executor, no longer hearing the gateway, rolls the plan back (the
 * client was told it may have been cut; the scene must not hold half of it). */
static void test_gateway_stopped_mid_plan (void **state)
{
    (void) state;
    char last[2048];
    long long answered;
    assert_int_equal (s_run_and_stop ("gs", "gateway", last, sizeof last, &answered), 2);
    assert_non_null (strstr (last, "gateway unavailable"));
    assert_true (answered < BOUND_MS + 1000);       /* the CLI waits one interval more than the gateway would */
    sleep (1);
    s_resume ("gateway");
    s_expect_whole_or_none ("gs");
}

static void test_validator_pool_empty (void **state)
{
    (void) state;
    s_signal ("validator-1", SIGSTOP);
    long long t0 = s_now_ms ();
    char plan[512];
    snprintf (plan, sizeof plan, "%s/one.json", s_dir);
    FILE *f = fopen (plan, "w");
    fputs ("[{\"operation\":\"bpy.ops.mesh.primitive_cube_add\",\"name\":\"solo\"}]\n", f);
    fclose (f);
    char args[600];
    snprintf (args, sizeof args, "plan run '%s'", plan);
    int code;
    long long ms;
    char *out = s_cli (args, &code, &ms);
    long long since_stop = s_now_ms () - t0;
    fprintf (stderr, "plan run with no validator: exit %d after %lld ms: %s", code, since_stop, out);
    assert_int_equal (code, 1);
    assert_non_null (strstr (out, "validator_unavailable"));
    /* the worker is dropped after liveness × interval, the empty pool answers after one more */
    assert_true (since_stop < BOUND_MS);
    free (out);
    s_resume ("validator-1");
}

static void test_audit_stopped (void **state)
{
    (void) state;
    s_signal ("audit", SIGSTOP);
    long long t0 = s_now_ms ();
    s_buf_t b = { 0 };
    long st = s_request ("/api/audit?limit=5", NULL, NULL, &b);
    long long since_stop = s_now_ms () - t0;
    fprintf (stderr, "GET /api/audit with the audit stopped: HTTP %ld after %lld ms: %.300s\n", st, since_stop, b.data ? b.data : "");
    assert_int_equal (st, 503);
    assert_non_null (strstr (b.data, "audit_unavailable"));
    assert_true (since_stop < BOUND_MS);
    free (b.data);
    s_resume ("audit");
    /* nothing the services wrote meanwhile is lost: the cut plan's story is complete */
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "audit list --kind plan.cut", &code);
    assert_int_equal (code, 0);
    assert_true (json_array_size (lines) >= 1);
    json_decref (lines);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_planner_stopped),
        cmocka_unit_test (test_executor_stopped_mid_plan),
        cmocka_unit_test (test_gateway_stopped_mid_plan),
        cmocka_unit_test (test_validator_pool_empty),
        cmocka_unit_test (test_audit_stopped),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
