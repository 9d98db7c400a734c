/* bench soak (issue 17): a private stack under mixed load for MINUTES; does
 * anything grow or drift?
 *
 *   bench_soak [MINUTES [WARMUP_S]]  (default $SOAK_MINUTES, else 10; a fraction is fine;
 *                                     warm-up default 20 s, 1..600: ctest's smoke run uses 2)
 *   deploy/bench.sh soak [MINUTES]
 *
 * Load, from one process, each lane one client with one request in flight and
 * a pause between requests (so the rate stays the same for the whole run):
 *   plan    run.request: cube plans of 1, 5, 20 and 50 steps in turn; every
 *           20th request a reset_scene instead, so the scene does not grow
 *   chat    chat.request to the offline planner, a different recipe each time
 *   script  script.request: validated, then run in the sandbox (a Blender)
 *   scene   scene.request scene_info
 *   audit   audit.query: the last minute, newest first, 50 records
 *   watch   WATCHERS subscribers on the gateway's events, drained as they come
 * After a warm-up (WARMUP_S of the same load) each process of the stack (its
 * pid files: gateway, planner, validators, executor, audit, blender) is
 * sampled: VmRSS (/proc/PID/status) and open fds (/proc/PID/fd); again at the
 * end (and every TREND_S between, for the trend: rss_mb_every_30s).
 * Latency is send → final answer (CLOCK_MONOTONIC, here), over every lane; p99 over the requests
 * started in the first and in the last minute of the measured run (half of it
 * each when the run is shorter than two minutes).
 *
 * JSON lines: per process rss_growth_mb and fd_growth (with start and end
 * values); p99_ms_first, p99_ms_last, p99_drift_ms (last − first); requests
 * (per lane: count, errors, p99). Exit 1 when a request failed or timed out,
 * a process of the stack was replaced (a restart) or gone at the end. */
#include "bench_util.h"
#include "progress_batch.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int WARMUP_S = 20;
#define WINDOW_S        60
#define TREND_S         30          /* RSS is also sampled this often: a plateau or a slope */
#define DRAIN_S         3           /* after the run: answers and events still in flight */
#define WATCHERS        5
#define TIMEOUT_MS      60000
#define RESET_EVERY     20
#define MAX_PROCS       16
#define MAX_ERRORS_SHOWN 10

typedef enum { L_PLAN, L_CHAT, L_SCRIPT, L_SCENE, L_AUDIT, L_COUNT } lane_kind_t;
static const char *s_lane_name[L_COUNT] = { "plan", "chat", "script", "scene", "audit" };
static const int   s_pause_ms[L_COUNT]  = { 200, 1000, 10000, 500, 2000 };

typedef struct {
    lane_kind_t kind;
    zsock_t    *sock;
    char        cid[BMQ_MAX_ID + 1];
    bool        busy;
    double      sent_us, next_us;
    int         seq;
    size_t      count, errors;
} lane_t;

typedef struct { double start_s, ms; lane_kind_t kind; } sample_t;

typedef struct {
    sample_t *v;
    size_t    n, cap;
} samples_t;

typedef struct {
    char name[64];
    int  pid;
    long rss_kb, fds;
} proc_t;

static const char *s_prompts[] = {
    "build a snowman", "a big red chair at 3 0 0", "a table", "a lamp", "a tree", "a mug",
    "a small blue boat", "a house", "a rocket", "a mushroom", "a donut", "a windmill",
};
#define NPROMPTS (sizeof s_prompts / sizeof s_prompts[0])

static const char *s_script =
    "import bpy\n"
    "\n"
    "for i in range(5):\n"
    "    bpy.ops.mesh.primitive_cube_add(size=0.5 + 0.25 * i, location=(i * 2.0, 3.0, 0))\n"
    "    bpy.context.active_object.name = f\"soak_{i}\"\n";

static bmq_envelope_t *s_next_request (lane_t *l)
{
    int seq = l->seq++;
    switch (l->kind) {
    case L_PLAN: {
        if (seq % RESET_EVERY == RESET_EVERY - 1)
            return bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL, json_pack ("{s:s}", "command", "reset_scene"));
        static const int sizes[] = { 1, 5, 20, 50 };
        return bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:o}", "plan", bench_cube_plan (sizes[seq % 4])));
    }
    case L_CHAT:
        return bmq_envelope_new (BMQ_MSG_CHAT_REQUEST, NULL, json_pack ("{s:s}", "prompt", s_prompts[seq % NPROMPTS]));
    case L_SCRIPT:
        return bmq_envelope_new (BMQ_MSG_SCRIPT_REQUEST, NULL, json_pack ("{s:s}", "script", s_script));
    case L_SCENE:
        return bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL, json_pack ("{s:s, s:{s:i}}", "command", "scene_info", "args", "limit", 200));
    default:
        return bmq_envelope_new (BMQ_MSG_AUDIT_QUERY, NULL, json_pack ("{s:{s:I}, s:s, s:i}", "filter", "since",
                                 (json_int_t) (bmq_now_ms () - 60000), "order", "desc", "limit", 50));
    }
}

/* Is `env` the end of its story? *ok says whether it went well. */
static bool s_final (const bmq_envelope_t *env, bool *ok)
{
    const char *status = bmq_body_str (env, "status");
    switch (env->type) {
    case BMQ_MSG_EXECUTE_RESULT: *ok = status && !strcmp (status, "done"); return true;
    case BMQ_MSG_SCRIPT_REPLY:   *ok = status && !strcmp (status, "sandboxed"); return true;
    case BMQ_MSG_SCENE_REPLY: case BMQ_MSG_AUDIT_RESULT: *ok = true; return true;
    case BMQ_MSG_ERROR:          *ok = false; return true;
    case BMQ_MSG_VALIDATE_REPLY:
        *ok = false;
        return !json_is_true (json_object_get (env->body, "accepted"));
    default: return false;
    }
}

static void s_record (samples_t *s, double start_s, double ms, lane_kind_t kind)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4096;
        s->v = realloc (s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = (sample_t) { start_s, ms, kind };
}

/* p99 of the samples started in [from_s, to_s) of `kind` (L_COUNT: all); *n gets how many. */
static double s_p99 (const samples_t *s, double from_s, double to_s, lane_kind_t kind, size_t *n)
{
    double *v = malloc ((s->n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].start_s >= from_s && s->v[i].start_s < to_s && (kind == L_COUNT || s->v[i].kind == kind))
            v[k++] = s->v[i].ms;
    double p = bench_percentile (v, k, 99);
    free (v);
    if (n) *n = k;
    return p;
}

static void s_error (const lane_t *l, const char *what)
{
    static int shown;
    if (shown++ < MAX_ERRORS_SHOWN) fprintf (stderr, "bench soak: %s request %s: %s\n", s_lane_name[l->kind], l->cid, what);
}

static void s_on_answer (lane_t *l, bmq_envelope_t *env, samples_t *samples, double t0_us, double now)
{
    bool ok = false;
    if (strcmp (env->cid, l->cid) || !l->busy || !s_final (env, &ok)) return;
    l->busy = false;
    l->count++;
    l->next_us = now + s_pause_ms[l->kind] * 1000.0;
    if (!ok) {
        l->errors++;
        char what[300];
        snprintf (what, sizeof what, "%s %s %s", bmq_msg_type_name (env->type),
                  bmq_body_str (env, "code") ? bmq_body_str (env, "code") : bmq_body_str (env, "status") ? bmq_body_str (env, "status") : "",
                  bmq_body_str (env, "message") ? bmq_body_str (env, "message") : "");
        s_error (l, what);
    }
    s_record (samples, (l->sent_us - t0_us) / 1e6, (now - l->sent_us) / 1000.0, l->kind);
}

/* Drive every lane and watcher until `until_us`; with `send` false, only take
 * the answers and events still coming (the end of the run). */
static int s_count_event (const bmq_envelope_t *env, void *arg)
{
    (void) env;
    (*(size_t *) arg)++;
    return 0;
}

static void s_drive (lane_t *lanes, zsock_t **watchers, size_t *events, samples_t *samples, double t0_us, double until_us,
                     bool send)
{
    zmq_pollitem_t items[L_COUNT + WATCHERS];
    for (int i = 0; i < L_COUNT; i++) items[i] = (zmq_pollitem_t) { .socket = zsock_resolve (lanes[i].sock), .events = ZMQ_POLLIN };
    for (int i = 0; i < WATCHERS; i++) items[L_COUNT + i] = (zmq_pollitem_t) { .socket = zsock_resolve (watchers[i]), .events = ZMQ_POLLIN };
    for (double now = bench_now_us (); now < until_us; now = bench_now_us ()) {
        for (int i = 0; i < L_COUNT; i++) {
            lane_t *l = &lanes[i];
            if (l->busy && now - l->sent_us > TIMEOUT_MS * 1000.0) {
                s_error (l, "no answer in time");
                l->busy = false;
                l->count++;
                l->errors++;
                s_record (samples, (l->sent_us - t0_us) / 1e6, TIMEOUT_MS, l->kind);
                l->next_us = now;
            }
            if (send && !l->busy && now >= l->next_us) {
                bmq_envelope_t *req = s_next_request (l);
                snprintf (l->cid, sizeof l->cid, "%s", req->cid);
                l->sent_us = bench_now_us ();
                l->busy = true;
                bmq_bus_send_and_destroy (l->sock, NULL, &req);
            }
        }
        if (zmq_poll (items, L_COUNT + WATCHERS, 50) <= 0) continue;
        for (int i = 0; i < L_COUNT; i++)
            while (items[i].revents & ZMQ_POLLIN && (zsock_events (lanes[i].sock) & ZMQ_POLLIN)) {
                bmq_envelope_t *env = bmq_bus_recv (lanes[i].sock, NULL);
                if (env) s_on_answer (&lanes[i], env, samples, t0_us, bench_now_us ());
                bmq_envelope_destroy (&env);
            }
        for (int i = 0; i < WATCHERS; i++) {
            if (!(items[L_COUNT + i].revents & ZMQ_POLLIN)) continue;
            zmq_msg_t msg;
            zmq_msg_init (&msg);
            while (zmq_msg_recv (&msg, items[L_COUNT + i].socket, ZMQ_DONTWAIT) >= 0) {     /* events, not messages: */
                bmq_envelope_t *env = bmq_envelope_decode (zmq_msg_data (&msg), zmq_msg_size (&msg), NULL, 0);
                bmq_progress_each (env, s_count_event, &events[i], NULL);                   /* a batch holds several */
                bmq_envelope_destroy (&env);
            }
            zmq_msg_close (&msg);
        }
    }
}

static long s_rss_kb (int pid)
{
    char path[64], line[256];
    snprintf (path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen (path, "r");
    long kb = -1;
    while (f && fgets (line, sizeof line, f))
        if (!strncmp (line, "VmRSS:", 6)) kb = atol (line + 6);
    if (f) fclose (f);
    return kb;
}

static long s_fds (int pid)
{
    char path[64];
    snprintf (path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir (path);
    if (!d) return -1;
    long n = 0;
    for (struct dirent *e; (e = readdir (d));) if (e->d_name[0] != '.') n++;
    closedir (d);
    return n;
}

static int s_by_name (const void *a, const void *b) { return strcmp (((const proc_t *) a)->name, ((const proc_t *) b)->name); }

/* Every process of the stack, from RUN_DIR/pids/NAME.pid, by name. Returns how many. */
static int s_sample (const char *run_dir, proc_t *procs)
{
    char path[600];
    snprintf (path, sizeof path, "%s/pids", run_dir);
    DIR *d = opendir (path);
    int n = 0;
    for (struct dirent *e; d && n < MAX_PROCS && (e = readdir (d));) {
        char *dot = strstr (e->d_name, ".pid");
        if (!dot || dot[4]) continue;
        snprintf (path, sizeof path, "%s/pids/%s", run_dir, e->d_name);
        FILE *f = fopen (path, "r");
        int pid = 0;
        if (f && fscanf (f, "%d", &pid) != 1) pid = 0;
        if (f) fclose (f);
        proc_t *p = &procs[n++];
        snprintf (p->name, sizeof p->name, "%.*s", (int) (dot - e->d_name), e->d_name);
        p->pid = pid;
        p->rss_kb = pid > 0 ? s_rss_kb (pid) : -1;
        p->fds = pid > 0 ? s_fds (pid) : -1;
    }
    if (d) closedir (d);
    qsort (procs, (size_t) n, sizeof *procs, s_by_name);
    return n;
}

/* Append each process's RSS (MB) to its array in `trend` (name → [MB, ...]). */
static void s_trend (json_t *trend, const proc_t *procs, int n)
{
    for (int i = 0; i < n; i++) {
        json_t *a = json_object_get (trend, procs[i].name);
        if (!a) json_object_set_new (trend, procs[i].name, a = json_array ());
        json_array_append_new (a, json_real (procs[i].rss_kb >= 0 ? procs[i].rss_kb / 1024.0 : -1));
    }
}

/* One rss_growth_mb and one fd_growth line per process; 0, or -1 when one was replaced or gone. */
static int s_emit_growth (const proc_t *start, int ns, const proc_t *end, int ne, json_t *trend)
{
    int rc = 0;
    for (int i = 0; i < ns; i++) {
        const proc_t *e = NULL;
        for (int j = 0; j < ne && !e; j++) if (!strcmp (end[j].name, start[i].name)) e = &end[j];
        bool same = e && e->pid == start[i].pid && e->rss_kb >= 0 && start[i].rss_kb >= 0;
        if (!same) {
            fprintf (stderr, "bench soak: %s (pid %d at the start) is %s at the end\n", start[i].name, start[i].pid,
                     !e || e->rss_kb < 0 ? "gone" : "another process (it restarted)");
            rc = -1;
        }
        double rs = start[i].rss_kb / 1024.0, re = e && e->rss_kb >= 0 ? e->rss_kb / 1024.0 : 0;
        bench_emit ("soak", "rss_growth_mb", re - rs, "MB",
                    json_pack ("{s:s, s:f, s:f, s:i, s:i, s:b, s:O*}", "service", start[i].name, "start_mb", rs, "end_mb", re,
                               "pid", start[i].pid, "pid_end", e ? e->pid : 0, "same_process", same,
                               "rss_mb_every_30s", json_object_get (trend, start[i].name)));
        long fe = e ? e->fds : -1;
        bench_emit ("soak", "fd_growth", (double) (fe - start[i].fds), "fds",
                    json_pack ("{s:s, s:I, s:I, s:b}", "service", start[i].name, "start", (json_int_t) start[i].fds,
                               "end", (json_int_t) fe, "same_process", same));
    }
    return rc;
}

int main (int argc, char **argv)
{
    const char *arg = argc > 1 ? argv[1] : getenv ("SOAK_MINUTES");
    double minutes = arg && *arg ? strtod (arg, NULL) : 10;
    if (argc > 2) WARMUP_S = atoi (argv[2]);
    if (!(minutes > 0 && minutes <= 24 * 60) || WARMUP_S < 1 || WARMUP_S > 600) {
        fprintf (stderr, "usage: bench_soak [MINUTES [WARMUP_S]]   (0 < MINUTES <= 1440, 1 <= WARMUP_S <= 600)\n");
        return 2;
    }
    double run_s = minutes * 60, window_s = run_s >= 2 * WINDOW_S ? WINDOW_S : run_s / 2;
    bmq_envelope_set_sender ("bench");
    bench_stack_t st;
    if (bench_stack_up (&st, 2)) { fprintf (stderr, "cannot start the stack\n"); return 1; }
    const char *front = bmq_config_str (st.cfg, "gateway.endpoint");
    lane_t lanes[L_COUNT];
    for (int i = 0; i < L_COUNT; i++)
        lanes[i] = (lane_t) { .kind = (lane_kind_t) i, .sock = bmq_bus_connect (ZMQ_DEALER, front, "gateway") };
    zsock_t *watchers[WATCHERS];
    size_t events[WATCHERS] = { 0 };
    for (int i = 0; i < WATCHERS; i++) watchers[i] = bmq_bus_connect (ZMQ_SUB, bmq_config_str (st.cfg, "gateway.events"), "gateway");
    samples_t warm = { 0 }, samples = { 0 };

    fprintf (stderr, "bench soak: warm-up %d s, then %.1f min of mixed load (run dir %s)\n", WARMUP_S, minutes, st.dir);
    double t = bench_now_us ();
    s_drive (lanes, watchers, events, &warm, t, t + WARMUP_S * 1e6, true);
    size_t warm_errors = 0;
    for (int i = 0; i < L_COUNT; i++) { warm_errors += lanes[i].errors; lanes[i].count = lanes[i].errors = 0; }
    proc_t start[MAX_PROCS], end[MAX_PROCS];
    int ns = s_sample (st.dir, start);
    double t0 = bench_now_us ();
    json_t *trend = json_object ();
    s_trend (trend, start, ns);
    for (double at = TREND_S; at < run_s; at += TREND_S) {
        s_drive (lanes, watchers, events, &samples, t0, t0 + at * 1e6, true);
        proc_t mid[MAX_PROCS];
        int nm = s_sample (st.dir, mid);
        s_trend (trend, mid, nm);
    }
    s_drive (lanes, watchers, events, &samples, t0, t0 + run_s * 1e6, true);
    int ne = s_sample (st.dir, end);
    s_trend (trend, end, ne);
    /* the requests in flight end, their events reach every watcher (up to DRAIN_S) */
    for (double stop = bench_now_us () + DRAIN_S * 1e6; bench_now_us () < stop;) {
        bool busy = false;
        for (int i = 0; i < L_COUNT; i++) busy = busy || lanes[i].busy;
        s_drive (lanes, watchers, events, &samples, t0, busy ? bench_now_us () + 100e3 : stop, false);
    }

    int rc = s_emit_growth (start, ns, end, ne, trend) ? 1 : 0;
    json_decref (trend);
    size_t n_first, n_last;
    double first = s_p99 (&samples, 0, window_s, L_COUNT, &n_first);
    double last = s_p99 (&samples, run_s - window_s, run_s, L_COUNT, &n_last);
    bench_emit ("soak", "p99_ms_first", first, "ms", json_pack ("{s:f, s:i}", "window_s", window_s, "requests", (int) n_first));
    bench_emit ("soak", "p99_ms_last", last, "ms", json_pack ("{s:f, s:i}", "window_s", window_s, "requests", (int) n_last));
    json_t *per_lane = json_object ();
    size_t total = 0, errors = 0;
    for (int i = 0; i < L_COUNT; i++) {
        size_t nf, nl;
        double pf = s_p99 (&samples, 0, window_s, (lane_kind_t) i, &nf), pl = s_p99 (&samples, run_s - window_s, run_s, (lane_kind_t) i, &nl);
        json_object_set_new (per_lane, s_lane_name[i], json_pack ("{s:I, s:I, s:f, s:f}", "requests", (json_int_t) lanes[i].count,
                             "errors", (json_int_t) lanes[i].errors, "p99_ms_first", pf, "p99_ms_last", pl));
        total += lanes[i].count;
        errors += lanes[i].errors;
    }
    bench_emit ("soak", "p99_drift_ms", last - first, "ms", json_pack ("{s:O}", "lanes", per_lane));
    json_t *seen = json_array ();
    for (int i = 0; i < WATCHERS; i++) json_array_append_new (seen, json_integer ((json_int_t) events[i]));
    bench_emit ("soak", "requests", (double) total, "requests",
                json_pack ("{s:I, s:I, s:f, s:f, s:o, s:o}", "errors", (json_int_t) errors, "warmup_errors", (json_int_t) warm_errors,
                           "minutes", minutes, "warmup_s", (double) WARMUP_S, "watcher_events", seen, "lanes", per_lane));
    if (errors || warm_errors || !total) rc = 1;

    for (int i = 0; i < L_COUNT; i++) zsock_destroy (&lanes[i].sock);
    for (int i = 0; i < WATCHERS; i++) zsock_destroy (&watchers[i]);
    free (warm.v);
    free (samples.v);
    bench_stack_down (&st);
    return rc;
}
