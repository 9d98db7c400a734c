/* bench progress_fanout: 100 subscribers on the gateway's event stream watch
 * a 50-step plan; every event must reach every subscriber.
 *
 * Timed: from the event's stamp in the executor (ts_us, set by progress_stamp.c
 * when the executor publishes it: wall clock, CLOCK_REALTIME, since it is made
 * in another process) to its arrival at each subscriber socket here (read with
 * the same clock, bench_wall_us; the one wall-clock figure of the benches). So
 * the executor → gateway hop, the gateway's republish and 100 deliveries.
 *
 *   p99_ms        over every (event, subscriber) pair; p50_ms in the line.
 *                 The executor sends a burst (the steps Blender reports
 *                 together) as one progress.batch: each event of it still
 *                 counts from its own stamp, so the wait for the burst's end
 *                 is in the figure; `messages` in the line counts what
 *                 arrived (a burst of one event is a plain progress)
 *                 Each distinct message is decoded once: the 100 copies of
 *                 one publish are byte-identical, so a copy is compared with
 *                 the messages already decoded (every byte) and counts that
 *                 message's events at its own arrival time. One process
 *                 stands in for 100 watchers here; decoding every copy in
 *                 this one thread (about 8 us each) made later copies wait
 *                 behind the bench's own work, in rounds of 10-15 ms once a
 *                 backlog formed; a real watcher decodes only its own copy.
 *                 BENCH_FANOUT_DECODE=each restores that (the figure it gave
 *                 before), for comparison
 *   lost_events   expected minus received (plan started, 50 steps, plan end,
 *                 per subscriber); any loss fails the bench, and so does a step
 *                 event that reaches a subscriber after a later step's (order)
 *
 *   bench_progress_fanout [subscribers]    (default and aim 100, 1..500) */
#include "bench_util.h"
#include "progress_batch.h"
#include <stdio.h>

#define SUBS_DEFAULT 100
#define SUBS_MAX 500
#define STEPS 50

#define HELD_MAX 8192              /* messages taken off the sockets in one round, decoded after */

typedef struct {
    zmq_msg_t msg;
    double    now;
    int       sub;
} s_arrival_t;

#define SEEN_MAX 64                /* distinct messages remembered (a plan publishes at most 52) */

/* One event of a decoded message: its stamp and, for a step event, its number (else -1). */
typedef struct {
    int64_t ts_us, step;
} s_event_t;

/* A distinct message as it was decoded: its bytes, and the events of our plan it carries. */
typedef struct {
    void      *bytes;
    size_t     size, count, refused;
    bool       ours;
    s_event_t  events[BMQ_PROGRESS_BATCH_MAX];
} s_seen_t;

static int s_collect (const bmq_envelope_t *env, void *arg)
{
    s_seen_t *m = arg;
    if (m->count >= BMQ_PROGRESS_BATCH_MAX) return 1;
    bool step = !strcmp (bmq_body_str (env, "event") ?: "", "step");
    m->events[m->count++] = (s_event_t) { bmq_body_int (env, "ts_us", 0), step ? bmq_body_int (env, "step", 0) : -1 };
    return 0;
}

/* The decoded form of these bytes: found among those seen (every byte
 * compared), or decoded now and remembered (the oldest forgotten when full). */
static const s_seen_t *s_decoded (s_seen_t *seen, size_t *n_seen, size_t *next, const char *cid, const void *data, size_t size,
                                  bool reuse)
{
    for (size_t i = 0; reuse && i < *n_seen; i++)
        if (seen[i].size == size && !memcmp (seen[i].bytes, data, size)) return &seen[i];
    s_seen_t *m = &seen[*next];
    *next = (*next + 1) % SEEN_MAX;
    if (*n_seen < SEEN_MAX) (*n_seen)++;
    free (m->bytes);
    m->bytes = malloc (size ? size : 1);
    memcpy (m->bytes, data, size);
    m->size = size;
    m->count = m->refused = 0;
    bmq_envelope_t *env = bmq_envelope_decode (data, size, NULL, 0);
    m->ours = env && !strcmp (env->cid, cid);
    if (m->ours) bmq_progress_each (env, s_collect, m, &m->refused);
    bmq_envelope_destroy (&env);
    return m;
}

int main (int argc, char **argv)
{
    int SUBS = bench_arg_int (argc, argv, 1, SUBS_DEFAULT, 1, SUBS_MAX, "bench_progress_fanout [subscribers]");
    bmq_envelope_set_sender ("bench");
    bench_stack_t st;
    if (bench_stack_up (&st, 1)) { fprintf (stderr, "cannot start the stack\n"); return 1; }
    static zsock_t *subs[SUBS_MAX];
    static zmq_pollitem_t items[SUBS_MAX];
    static int64_t last_step[SUBS_MAX];
    size_t out_of_order = 0, skipped = 0, messages = 0;
    for (int i = 0; i < SUBS; i++) {
        subs[i] = bmq_bus_connect (ZMQ_SUB, bmq_config_str (st.cfg, "gateway.events"), "gateway");
        items[i] = (zmq_pollitem_t) { .socket = zsock_resolve (subs[i]), .events = ZMQ_POLLIN };
    }
    zclock_sleep (500);                       /* let every subscription reach the publisher */
    zsock_t *gw = bmq_bus_connect (ZMQ_DEALER, bmq_config_str (st.cfg, "gateway.endpoint"), "gateway");
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:o}", "plan", bench_cube_plan (STEPS)));
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", req->cid);
    bmq_bus_send_and_destroy (gw, NULL, &req);     /* the answer is read after the events */
    /* expected per subscriber: plan started, 50 steps, plan end */
    size_t expected = (size_t) SUBS * (STEPS + 2), got = 0, cap = expected + 64;
    double *lat = malloc (cap * sizeof *lat);
    int64_t quiet_until = zclock_mono () + 3000;
    /* one poll, then drain every ready subscriber, each message stamped as it
     * is taken off its socket; the decoding comes after the drain: the
     * measuring side must not be the bottleneck it measures (decoding 100
     * copies of a batch one socket after another delayed the later sockets) */
    static s_arrival_t held[HELD_MAX];
    static s_seen_t seen[SEEN_MAX];
    size_t n_seen = 0, next_seen = 0;
    const char *mode = getenv ("BENCH_FANOUT_DECODE");
    bool reuse = !(mode && !strcmp (mode, "each"));
    while (got < expected && zclock_mono () < quiet_until) {
        if (zmq_poll (items, SUBS, 100) <= 0) continue;
        size_t n = 0;
        for (int i = 0; i < SUBS && n < HELD_MAX; i++) {
            if (!(items[i].revents & ZMQ_POLLIN)) continue;
            while (n < HELD_MAX) {
                zmq_msg_init (&held[n].msg);
                if (zmq_msg_recv (&held[n].msg, items[i].socket, ZMQ_DONTWAIT) < 0) { zmq_msg_close (&held[n].msg); break; }
                held[n].now = bench_wall_us ();
                held[n].sub = i;
                n++;
            }
        }
        for (size_t k = 0; k < n; k++) {
            const s_seen_t *m = s_decoded (seen, &n_seen, &next_seen, cid, zmq_msg_data (&held[k].msg),
                                           zmq_msg_size (&held[k].msg), reuse);
            zmq_msg_close (&held[k].msg);
            if (!m->ours) continue;
            messages++;
            skipped += m->refused;
            for (size_t e = 0; e < m->count && got < cap; e++) {
                lat[got++] = (held[k].now - (double) m->events[e].ts_us) / 1000.0;
                if (m->events[e].step < 0) continue;
                out_of_order += m->events[e].step <= last_step[held[k].sub];
                last_step[held[k].sub] = m->events[e].step;
            }
        }
    }
    double p99 = bench_percentile (lat, got, 99), p50 = bench_percentile (lat, got, 50);
    bench_emit ("progress_fanout", "p99_ms", p99, "ms", json_pack ("{s:f, s:i, s:i, s:i, s:s, s:s}", "p50_ms", p50, "subscribers", SUBS, "events", (int) got,
                                                                    "messages", (int) messages,
                                                                    "timed", "executor's ts_us stamp -> arrival at each subscriber (CLOCK_REALTIME both)",
                                                                    "decoded", reuse ? "each distinct message once" : "every copy"));
    bench_emit ("progress_fanout", "lost_events", (double) (expected - got), "events",
                json_pack ("{s:i, s:i}", "expected", (int) expected, "out_of_order", (int) out_of_order));
    if (got != expected || out_of_order || skipped)
        fprintf (stderr, "bench progress_fanout: %zu of %zu events arrived, %zu out of order, %zu not progress bodies\n", got,
                 expected, out_of_order, skipped);
    free (lat);
    for (size_t i = 0; i < n_seen; i++) free (seen[i].bytes);
    zsock_destroy (&gw);
    for (int i = 0; i < SUBS; i++) zsock_destroy (&subs[i]);
    bench_stack_down (&st);
    return got == expected && !out_of_order && !skipped ? 0 : 1;
}
