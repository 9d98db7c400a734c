/* Watchers across a gateway restart (issue 17), on a real stack (`blendmq up
 * --ipc`, a headless Blender) whose gateway is killed with SIGKILL and brought
 * back by `up`'s supervisor (on the same HTTP port, as a deployment's is):
 *
 *   - SSE: a client resuming with the old gateway's Last-Event-ID gets a `gap`
 *     event (reason "gateway restarted"), then a later plan's events;
 *   - `blendmq watch --json`: while the supervisor is held (SIGSTOP) and the
 *     executor publishes with no gateway, watch says the gateway is
 *     unreachable, then that it restarted, then how many executor events it
 *     missed, then prints a later plan's events: it never exits;
 *   - the `blendmq mcp` bridge: a tools/call in flight is answered at once
 *     with a tool error (isError), and the next tools/call works (a new MCP
 *     session with the new gateway, transparently);
 *   - the Blender panel's client (panel_sse_check.py in a background Blender):
 *     while a plan waits for a held (SIGSTOP) Blender, its stream reconnects,
 *     shows the gap, and follows the plan to its end.
 *
 * A long plan (many small spheres) keeps the executor busy while the gateway
 * is away. */
#include "bus.h"
#include "progress_batch.h"
#include "config.h"
#include "e2e_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define LONG_STEPS 200

static char  s_dir[256];
static char  s_base[64];                /* http://127.0.0.1:PORT, fixed across restarts */
static int   s_port;
static pid_t s_watch_pid;               /* a `blendmq watch` of ours, stopped by the teardown if a test failed */

/* ---- helpers ----------------------------------------------------------------- */

static int64_t s_now_ms (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (int64_t) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int s_free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    inet_pton (AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t len = sizeof a;
    int port = bind (fd, (struct sockaddr *) &a, sizeof a) == 0 && getsockname (fd, (struct sockaddr *) &a, &len) == 0
             ? ntohs (a.sin_port) : -1;
    close (fd);
    return port;
}

static void s_path (char *buf, size_t len, const char *name) { snprintf (buf, len, "%s/%s", s_dir, name); }

/* A plan file: `steps` small UV spheres in a row at height z (each a step of tens of ms). */
static void s_plan_file (const char *name, int steps, int z)
{
    char path[512];
    s_path (path, sizeof path, name);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputc ('[', f);
    for (int i = 0; i < steps; i++)
        fprintf (f, "%s{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"params\": "
                 "{\"segments\": 64, \"ring_count\": 32, \"radius\": 0.2, \"location\": [%d, %d, %d]}}", i ? ",\n" : "", i, z, z);
    fputs ("]\n", f);
    fclose (f);
}

/* `plan run NAME` until it is not refused for want of a validator (they
 * reconnect to a new gateway within seconds); its plan id in plan_id. */
static int s_run_plan (const char *name, char *plan_id, size_t len)
{
    char args[600], path[512];
    s_path (path, sizeof path, name);
    snprintf (args, sizeof args, "plan run '%s' 2>/dev/null", path);
    int code = -1;
    for (int64_t until = s_now_ms () + 60000; s_now_ms () < until; usleep (500000)) {
        json_t *lines = e2e_blendmq_json (s_dir, args, &code);
        size_t i;
        json_t *l;
        bool validated = false;
        json_array_foreach (lines, i, l) {
            const char *id = json_string_value (json_object_get (json_object_get (l, "body"), "plan_id"));
            if (id && plan_id) snprintf (plan_id, len, "%s", id);
            if (json_is_true (json_object_get (json_object_get (l, "body"), "accepted"))) validated = true;
        }
        json_decref (lines);
        if (code == 0 || validated) break;          /* ran, or got that far (then its code stands) */
    }
    return code;
}

static void s_sh (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static void s_sh (const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (cmd, sizeof cmd, fmt, ap);
    va_end (ap);
    if (system (cmd)) { }
}

/* SIGKILL the gateway; `hold` stops the supervisor first (SIGSTOP): nothing
 * restarts it until s_release. Returns the killed pid. */
static int s_kill_gateway (bool hold)
{
    int pid = e2e_pid (s_dir, "gateway"), sup = e2e_pid (s_dir, "supervisor");
    assert_true (pid > 0 && sup > 0);
    if (hold) assert_int_equal (kill (sup, SIGSTOP), 0);
    assert_int_equal (kill (pid, SIGKILL), 0);
    return pid;
}

static void s_release (void) { assert_int_equal (kill (e2e_pid (s_dir, "supervisor"), SIGCONT), 0); }

/* A new gateway process runs and the stack is healthy again. */
static void s_wait_new_gateway (int old_pid)
{
    int64_t until = s_now_ms () + 60000;
    while (s_now_ms () < until && (e2e_pid (s_dir, "gateway") == old_pid || e2e_pid (s_dir, "gateway") <= 0)) usleep (100000);
    assert_int_not_equal (e2e_pid (s_dir, "gateway"), old_pid);
    assert_true (e2e_wait_healthy (s_dir, true, 60000));
}

/* ---- an SSE client ------------------------------------------------------------ */

typedef struct { int fd; char *buf; size_t len; } s_sse_t;

static s_sse_t s_sse_open (const char *last_id)
{
    s_sse_t s = { socket (AF_INET, SOCK_STREAM, 0), calloc (1, 1), 0 };
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) s_port) };
    inet_pton (AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal (connect (s.fd, (struct sockaddr *) &a, sizeof a), 0);
    char req[1024];
    int n = snprintf (req, sizeof req, "GET /api/events HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                      "Last-Event-ID: %s\r\n\r\n", e2e_token (s_dir, "web"), last_id);
    assert_int_equal (write (s.fd, req, (size_t) n), n);
    return s;
}

static int s_count (const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr (p, needle)); p += strlen (needle)) n++;
    return n;
}

static int s_sse_wait (s_sse_t *s, const char *needle, int count, int timeout_ms)
{
    int64_t until = s_now_ms () + timeout_ms;
    while (s_count (s->buf, needle) < count && s_now_ms () < until) {
        struct pollfd p = { s->fd, POLLIN, 0 };
        if (poll (&p, 1, 100) <= 0) continue;
        char chunk[8192];
        ssize_t n = read (s->fd, chunk, sizeof chunk);
        if (n <= 0) break;
        s->buf = realloc (s->buf, s->len + (size_t) n + 1);
        memcpy (s->buf + s->len, chunk, (size_t) n);
        s->len += (size_t) n;
        s->buf[s->len] = 0;
    }
    return s_count (s->buf, needle);
}

static void s_sse_close (s_sse_t *s) { close (s->fd); free (s->buf); }

/* The id on the last "id: " line of a text. */
static void s_last_id (const char *text, char *id, size_t len)
{
    const char *last = NULL;
    for (const char *p = text; (p = strstr (p, "\nid: ")); p++) last = p + 5;
    snprintf (id, len, "%.*s", last ? (int) strcspn (last, "\r\n") : 0, last ? last : "");
}

/* ---- setup ----------------------------------------------------------------------- */

static int s_setup (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-watch-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    s_port = s_free_port ();
    if (s_port <= 0) return -1;
    snprintf (s_base, sizeof s_base, "http://127.0.0.1:%d", s_port);
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "BLENDMQ_GATEWAY_HTTP_PORT=%d '%s' --run-dir '%s' up --ipc --validators 1 >&2", s_port,
              e2e_bin ("blendmq"), s_dir);
    if (system (cmd) != 0 || !e2e_wait_healthy (s_dir, true, 120000)) return -1;
    s_plan_file ("long.json", LONG_STEPS, 1);
    s_plan_file ("small.json", 2, 0);
    return 0;
}

static int s_teardown (void **state)
{
    kill (e2e_pid (s_dir, "supervisor"), SIGCONT);          /* in case a test failed while holding them */
    kill (e2e_pid (s_dir, "blender"), SIGCONT);
    if (s_watch_pid > 0) { kill (s_watch_pid, SIGTERM); waitpid (s_watch_pid, NULL, 0); }
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2 && rm -rf '%s'", e2e_bin ("blendmq"), s_dir, s_dir);
    int rc = system (cmd);
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    return rc == 0 ? 0 : -1;
}

/* ---- SSE ----------------------------------------------------------------------------- */

static void test_sse_gap_after_gateway_restart (void **state)
{
    char plan1[80] = "", plan2[80] = "", last[128];
    assert_int_equal (s_run_plan ("small.json", plan1, sizeof plan1), 0);
    s_sse_t before = s_sse_open ("0");                       /* all the gateway holds: plan 1 at least */
    assert_true (s_sse_wait (&before, plan1, 4, 10000) >= 4);
    s_last_id (before.buf, last, sizeof last);
    s_sse_close (&before);
    assert_int_equal (strlen (last) > 17 && last[16] == '-', true);
    int old = s_kill_gateway (false);
    s_wait_new_gateway (old);
    assert_int_equal (s_run_plan ("small.json", plan2, sizeof plan2), 0);
    s_sse_t after = s_sse_open (last);
    assert_true (s_sse_wait (&after, plan2, 4, 10000) >= 4);
    fprintf (stderr, "resumed with %s:\n%.600s\n", last, after.buf);
    const char *gap = strstr (after.buf, "event: gap\ndata: ");
    assert_non_null (gap);
    assert_true (gap < strstr (after.buf, "event: progress"));
    json_t *data = json_loadb (gap + 17, strcspn (gap + 17, "\n"), 0, NULL);
    assert_non_null (data);
    assert_string_equal (json_string_value (json_object_get (data, "reason")), "gateway restarted");
    assert_string_equal (json_string_value (json_object_get (data, "last_event_id")), last);
    assert_true (json_is_null (json_object_get (data, "missed")));
    json_decref (data);
    char now[128];
    s_last_id (after.buf, now, sizeof now);
    assert_int_not_equal (strncmp (now, last, 16), 0);       /* ids name the new gateway */
    assert_null (strstr (after.buf, plan1));                 /* the new one never held plan 1's events */
    s_sse_close (&after);
}

/* ---- blendmq watch ---------------------------------------------------------------------- */

static pid_t s_spawn_watch (const char *out, const char *err)
{
    pid_t pid = fork ();
    if (pid == 0) {
        int o = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0600), e = open (err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2 (o, 1);
        dup2 (e, 2);
        execl (e2e_bin ("blendmq"), "blendmq", "--run-dir", s_dir, "--json", "watch", (char *) NULL);
        _exit (127);
    }
    return pid;
}

static char *s_slurp (const char *path)
{
    FILE *f = fopen (path, "r");
    if (!f) return strdup ("");
    fseek (f, 0, SEEK_END);
    long n = ftell (f);
    rewind (f);
    char *buf = calloc (1, (size_t) n + 1);
    if (fread (buf, 1, (size_t) n, f) != (size_t) n) buf[0] = 0;
    fclose (f);
    return buf;
}

/* Wait until the file has `needle` (true) or timeout. */
static bool s_file_has (const char *path, const char *needle, int timeout_ms)
{
    for (int64_t until = s_now_ms () + timeout_ms; ; usleep (100000)) {
        char *text = s_slurp (path);
        bool found = strstr (text, needle) != NULL;
        free (text);
        if (found || s_now_ms () >= until) return found;
    }
}

/* Index of the first line (JSON) of `lines` with key = value, from `from`; -1 when none. */
static int s_find (json_t *lines, int from, const char *key, const char *value)
{
    for (size_t i = (size_t) from; i < json_array_size (lines); i++) {
        const char *v = json_string_value (json_object_get (json_array_get (lines, i), key));
        if (v && !strcmp (v, value)) return (int) i;
    }
    return -1;
}

static int s_first_event (const bmq_envelope_t *env, void *arg)
{
    *(json_t **) arg = json_incref (env->body);
    return 1;
}

/* The next progress event the executor publishes itself (not through the gateway). */
static json_t *s_executor_event (zsock_t *sub, int timeout_ms)
{
    zpoller_t *poller = zpoller_new (sub, NULL);
    json_t *body = NULL;
    for (int64_t until = s_now_ms () + timeout_ms; !body && s_now_ms () < until; ) {
        if (!zpoller_wait (poller, 200)) continue;
        bmq_envelope_t *env = bmq_bus_recv (sub, NULL);
        bmq_progress_each (env, s_first_event, &body, NULL);     /* a progress, or a batch's first */
        bmq_envelope_destroy (&env);
    }
    zpoller_destroy (&poller);
    return body;
}

static void test_watch_across_gateway_restart (void **state)
{
    char out[512], err[512], cfgpath[512], plan0[80] = "", plan2[80] = "", e[256];
    s_path (out, sizeof out, "watch.out");
    s_path (err, sizeof err, "watch.err");
    s_path (cfgpath, sizeof cfgpath, "blendmq.yaml");
    pid_t watch = s_watch_pid = s_spawn_watch (out, err);
    usleep (500000);
    assert_int_equal (s_run_plan ("small.json", plan0, sizeof plan0), 0);
    assert_true (s_file_has (out, plan0, 10000));                /* watch is subscribed */
    /* the executor's own events, to know one went by while no gateway ran */
    bmq_config_t *cfg = bmq_config_load (cfgpath, e, sizeof e);
    assert_non_null (cfg);
    assert_int_equal (bmq_bus_security_init (cfg, "cli", e, sizeof e), 0);
    zsock_t *ex = bmq_bus_connect (ZMQ_SUB, bmq_config_str (cfg, "executor.events"), "executor");
    assert_non_null (ex);
    usleep (300000);
    s_sh ("'%s' --run-dir '%s' plan run '%s/long.json' >/dev/null 2>&1 &", e2e_bin ("blendmq"), s_dir, s_dir);
    json_t *ev = s_executor_event (ex, 60000);                   /* the long plan runs */
    assert_non_null (ev);
    json_decref (ev);
    int old = s_kill_gateway (true);
    ev = s_executor_event (ex, 30000);                           /* published with no gateway: lost for watchers */
    assert_non_null (ev);
    json_int_t lost_seq = json_integer_value (json_object_get (ev, "seq"));
    json_decref (ev);
    assert_true (s_file_has (out, "\"reason\":\"gateway unreachable\"", 15000));
    s_release ();
    s_wait_new_gateway (old);
    assert_int_equal (s_run_plan ("small.json", plan2, sizeof plan2), 0);    /* queued behind the long plan */
    if (!s_file_has (out, plan2, 60000)) {                      /* say what watch saw, then fail */
        char *said = s_slurp (out), *errs = s_slurp (err);
        size_t n = said ? strlen (said) : 0;
        fprintf (stderr, "watch never showed %s; its last output:\n%s\nits stderr:\n%s\n", plan2,
                 said ? said + (n > 3000 ? n - 3000 : 0) : "(none)", errs ? errs : "(none)");
        free (said);
        free (errs);
        fail ();
    }
    usleep (500000);
    char *text = s_slurp (out);
    json_t *lines = e2e_json_lines (text);
    fprintf (stderr, "watch said (%zu lines), markers:\n", json_array_size (lines));
    size_t i;
    json_t *l;
    json_array_foreach (lines, i, l)
        if (json_object_get (l, "type")) fprintf (stderr, "  %zu %s\n", i, json_string_value (json_object_get (l, "message")));
    int unreachable = s_find (lines, 0, "reason", "gateway unreachable");
    int restarted = s_find (lines, unreachable, "reason", "gateway restarted");
    int lost = s_find (lines, restarted, "reason", "executor events lost");
    int later = s_find (lines, restarted, "plan_id", plan2);
    assert_true (unreachable >= 0 && restarted > unreachable && lost > restarted && later > lost);
    json_t *gap = json_array_get (lines, (size_t) lost);
    assert_string_equal (json_string_value (json_object_get (gap, "type")), "gap");
    assert_true (json_integer_value (json_object_get (gap, "missed")) >= 1);
    assert_true (json_integer_value (json_object_get (gap, "last_seq")) < lost_seq);
    assert_true (json_integer_value (json_object_get (gap, "seq")) > lost_seq);
    assert_non_null (strstr (json_string_value (json_object_get (gap, "message")), "gap: missed "));
    assert_int_equal (s_count (text, "\"reason\":\"gateway restarted\""), 1);
    json_decref (lines);
    free (text);
    assert_int_equal (waitpid (watch, NULL, WNOHANG), 0);        /* still watching */
    kill (watch, SIGTERM);
    waitpid (watch, NULL, 0);
    s_watch_pid = 0;
    zsock_destroy (&ex);
    bmq_config_destroy (&cfg);
}

/* ---- the blendmq mcp bridge ---------------------------------------------------------------- */

typedef struct { pid_t pid; int in, out; char *buf; size_t len; } s_bridge_t;

static s_bridge_t s_bridge_start (void)
{
    int to[2], from[2];
    assert_int_equal (pipe (to), 0);
    assert_int_equal (pipe (from), 0);
    char err[512];
    s_path (err, sizeof err, "mcp.err");
    s_bridge_t b = { fork (), to[1], from[0], calloc (1, 1), 0 };
    if (b.pid == 0) {
        int e = open (err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2 (to[0], 0);
        dup2 (from[1], 1);
        dup2 (e, 2);
        close (to[1]);
        close (from[0]);
        execl (e2e_bin ("blendmq"), "blendmq", "--run-dir", s_dir, "mcp", (char *) NULL);
        _exit (127);
    }
    close (to[0]);
    close (from[1]);
    return b;
}

static void s_bridge_send (s_bridge_t *b, json_t *msg)
{
    char *text = json_dumps (msg, JSON_COMPACT);
    json_decref (msg);
    size_t n = strlen (text);
    assert_int_equal (write (b->in, text, n), (ssize_t) n);
    assert_int_equal (write (b->in, "\n", 1), 1);
    free (text);
}

/* The next line from the bridge as JSON, NULL after timeout_ms. */
static json_t *s_bridge_next (s_bridge_t *b, int timeout_ms)
{
    for (int64_t until = s_now_ms () + timeout_ms; ; ) {
        char *nl = memchr (b->buf, '\n', b->len);
        if (nl) {
            json_t *msg = json_loadb (b->buf, (size_t) (nl - b->buf), 0, NULL);
            b->len -= (size_t) (nl + 1 - b->buf);
            memmove (b->buf, nl + 1, b->len + 1);
            assert_non_null (msg);                              /* stdout carries JSON only */
            return msg;
        }
        int left = (int) (until - s_now_ms ());
        struct pollfd p = { b->out, POLLIN, 0 };
        if (left <= 0 || poll (&p, 1, left) <= 0) return NULL;
        char chunk[65536];
        ssize_t n = read (b->out, chunk, sizeof chunk);
        if (n <= 0) return NULL;
        b->buf = realloc (b->buf, b->len + (size_t) n + 1);
        memcpy (b->buf + b->len, chunk, (size_t) n);
        b->len += (size_t) n;
        b->buf[b->len] = 0;
    }
}

/* The answer to request `id` (what comes before it is dropped). */
static json_t *s_bridge_answer (s_bridge_t *b, int id, int timeout_ms)
{
    for (int64_t until = s_now_ms () + timeout_ms; s_now_ms () < until; ) {
        json_t *msg = s_bridge_next (b, (int) (until - s_now_ms ()));
        if (!msg) return NULL;
        if (json_integer_value (json_object_get (msg, "id")) == id && !json_object_get (msg, "method")) return msg;
        json_decref (msg);
    }
    return NULL;
}

static void test_mcp_bridge_across_gateway_restart (void **state)
{
    s_bridge_t b = s_bridge_start ();
    s_bridge_send (&b, json_pack ("{s:s, s:i, s:s, s:{s:s, s:{}, s:{s:s, s:s}}}", "jsonrpc", "2.0", "id", 0, "method", "initialize",
                                  "params", "protocolVersion", "2025-06-18", "capabilities", "clientInfo", "name", "test_watch",
                                  "version", "1"));
    json_t *init = s_bridge_answer (&b, 0, 30000);
    assert_non_null (json_object_get (init, "result"));
    json_decref (init);
    s_bridge_send (&b, json_pack ("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/initialized"));
    char path[512];
    s_path (path, sizeof path, "long.json");
    json_t *plan = json_load_file (path, 0, NULL);
    assert_non_null (plan);
    s_bridge_send (&b, json_pack ("{s:s, s:i, s:s, s:{s:s, s:{s:o}, s:{s:s}}}", "jsonrpc", "2.0", "id", 1, "method", "tools/call",
                                  "params", "name", "execute_plan", "arguments", "plan", plan, "_meta", "progressToken", "t1"));
    bool progressed = false;
    for (int64_t until = s_now_ms () + 120000; !progressed && s_now_ms () < until; ) {
        json_t *msg = s_bridge_next (&b, 1000);
        const char *method = json_string_value (json_object_get (msg, "method"));
        assert_true (!msg || !json_object_get (msg, "id") || method);         /* no answer before the restart */
        progressed = method && !strcmp (method, "notifications/progress");
        json_decref (msg);
    }
    assert_true (progressed);                                    /* the plan runs */
    int old = s_kill_gateway (false);
    int64_t t0 = s_now_ms ();
    json_t *cut = s_bridge_answer (&b, 1, 10000);
    int64_t took = s_now_ms () - t0;
    assert_non_null (cut);
    char *text = json_dumps (cut, JSON_COMPACT);
    fprintf (stderr, "in-flight call answered after %lld ms: %.500s\n", (long long) took, text);
    free (text);
    assert_true (took < 5000);
    json_t *result = json_object_get (cut, "result");
    assert_true (json_is_true (json_object_get (result, "isError")));
    const char *said = json_string_value (json_object_get (json_array_get (json_object_get (result, "content"), 0), "text"));
    assert_non_null (said);
    assert_non_null (strstr (said, "restarted"));
    assert_non_null (strstr (said, "outcome is"));
    assert_non_null (strstr (said, "blendmq audit list --plan p-"));
    json_decref (cut);
    s_wait_new_gateway (old);
    bool worked = false;
    for (int id = 2; id < 40 && !worked; id++) {                  /* validators rejoin the new gateway within seconds */
        s_bridge_send (&b, json_pack ("{s:s, s:i, s:s, s:{s:s, s:{}}}", "jsonrpc", "2.0", "id", id, "method", "tools/call",
                                      "params", "name", "discover_capabilities", "arguments"));
        json_t *answer = s_bridge_answer (&b, id, 30000);
        assert_non_null (answer);
        assert_non_null (json_object_get (answer, "result"));      /* a tool's answer, never "session not found" */
        worked = !json_is_true (json_object_get (json_object_get (answer, "result"), "isError"));
        json_decref (answer);
        if (!worked) usleep (1000000);
    }
    assert_true (worked);
    close (b.in);                                               /* the client leaves: the bridge exits */
    int status = -1;
    assert_int_equal (waitpid (b.pid, &status, 0), b.pid);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    close (b.out);
    free (b.buf);
}

/* ---- the Blender panel's client ------------------------------------------------------------ */

static void test_panel_client_across_gateway_restart (void **state)
{
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "blender -b --factory-startup --python-exit-code 2 --python '%s/tests/watch/panel_sse_check.py' -- "
              "'%s' '%s/services/executor/addon' '%s' >&2", BMQ_SOURCE_DIR, s_dir, BMQ_SOURCE_DIR, s_base);
    int rc = system (cmd);
    assert_true (WIFEXITED (rc));
    assert_int_equal (WEXITSTATUS (rc), 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_sse_gap_after_gateway_restart),
        cmocka_unit_test (test_watch_across_gateway_restart),
        cmocka_unit_test (test_mcp_bridge_across_gateway_restart),
        cmocka_unit_test (test_panel_client_across_gateway_restart),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
