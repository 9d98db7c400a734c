/* validator_broker — LRU queue of validator workers (zguide Paranoid Pirate). */
#include "validator_broker.h"
#include "bus.h"
#include "log.h"

#define QUEUE_MAX 10000

typedef struct {
    zframe_t       *rid;
    char           *key;            /* hex of rid, for lookup */
    int64_t         last_heard;
    bool            busy;
    bmq_envelope_t *job;            /* in flight, kept to re-dispatch if the worker dies */
    int64_t         idle_since;
} s_worker_t;

struct bmq_broker_t {
    zsock_t *sock;
    zhashx_t *workers;              /* key → s_worker_t* */
    zlistx_t *queue;                /* bmq_envelope_t* waiting for a worker */
    int       interval, liveness;
    int64_t   last_beat;
    int64_t   dispatched, verdicts;
};

static void s_worker_free (void **item)
{
    s_worker_t *w = *item;
    if (!w) return;
    zframe_destroy (&w->rid);
    bmq_envelope_destroy (&w->job);
    free (w->key);
    free (w);
    *item = NULL;
}

static void s_env_free (void **item) { bmq_envelope_destroy ((bmq_envelope_t **) item); }

bmq_broker_t *bmq_broker_new (const char *endpoint, int interval_ms, int liveness)
{
    zsock_t *sock = bmq_bus_bind (ZMQ_ROUTER, endpoint);
    if (!sock) return NULL;
    bmq_broker_t *self = calloc (1, sizeof *self);
    self->sock = sock;
    self->workers = zhashx_new ();
    zhashx_set_destructor (self->workers, s_worker_free);
    self->queue = zlistx_new ();
    zlistx_set_destructor (self->queue, s_env_free);
    self->interval = interval_ms;
    self->liveness = liveness;
    return self;
}

void bmq_broker_destroy (bmq_broker_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_broker_t *self = *self_p;
    zhashx_destroy (&self->workers);
    zlistx_destroy (&self->queue);
    zsock_destroy (&self->sock);
    free (self);
    *self_p = NULL;
}

zsock_t *bmq_broker_sock (bmq_broker_t *self) { return self->sock; }

int bmq_broker_submit (bmq_broker_t *self, bmq_envelope_t **req_p)
{
    if (zlistx_size (self->queue) >= QUEUE_MAX) { bmq_envelope_destroy (req_p); return -1; }
    zlistx_add_end (self->queue, *req_p);
    *req_p = NULL;
    bmq_broker_tick (self);
    return 0;
}

/* The idle worker that has waited longest, or NULL. */
static s_worker_t *s_lru_idle (bmq_broker_t *self)
{
    s_worker_t *best = NULL;
    for (s_worker_t *w = zhashx_first (self->workers); w; w = zhashx_next (self->workers))
        if (!w->busy && (!best || w->idle_since < best->idle_since)) best = w;
    return best;
}

static void s_dispatch (bmq_broker_t *self)
{
    s_worker_t *w;
    while (zlistx_size (self->queue) && (w = s_lru_idle (self))) {
        bmq_envelope_t *job = zlistx_detach (self->queue, NULL);
        bmq_bus_send (self->sock, w->rid, job);
        w->busy = true;
        w->job = job;
        self->dispatched++;
    }
}

bmq_envelope_t *bmq_broker_on_message (bmq_broker_t *self)
{
    zframe_t *rid = NULL;
    bmq_envelope_t *env = bmq_bus_recv (self->sock, &rid);
    if (!env) { zframe_destroy (&rid); return NULL; }
    char *key = zframe_strhex (rid);
    s_worker_t *w = zhashx_lookup (self->workers, key);
    if (!w && env->type == BMQ_MSG_WORKER_READY) {
        w = calloc (1, sizeof *w);
        w->rid = zframe_dup (rid);
        w->key = strdup (key);
        w->idle_since = bmq_mono_ms ();
        zhashx_insert (self->workers, key, w);
        bmq_info ("validator worker joined (%zu in the pool)", zhashx_size (self->workers));
    }
    bmq_envelope_t *verdict = NULL;
    if (w) {
        w->last_heard = bmq_mono_ms ();
        if (env->type == BMQ_MSG_VALIDATE_REPLY || env->type == BMQ_MSG_ERROR) {
            w->busy = false;
            w->idle_since = bmq_mono_ms ();
            bmq_envelope_destroy (&w->job);
            verdict = env;
            env = NULL;
            self->verdicts++;
        }
    }
    /* else: a peer that never said READY (or was dropped as dead). Ignore it and
     * allocate nothing; unanswered, a real worker reconnects and says READY. */
    free (key);
    zframe_destroy (&rid);
    bmq_envelope_destroy (&env);
    s_dispatch (self);
    return verdict;
}

void bmq_broker_tick (bmq_broker_t *self)
{
    int64_t now = bmq_mono_ms ();
    zlistx_t *dead = zlistx_new ();
    for (s_worker_t *w = zhashx_first (self->workers); w; w = zhashx_next (self->workers))
        if (now - w->last_heard > (int64_t) self->interval * self->liveness) zlistx_add_end (dead, w->key);
    for (char *key = zlistx_first (dead); key; key = zlistx_next (dead)) {
        s_worker_t *w = zhashx_lookup (self->workers, key);
        if (w->job) {                  /* give its request to someone else */
            zlistx_add_start (self->queue, w->job);
            w->job = NULL;
        }
        bmq_warn ("validator worker silent for %lld ms: removed from the pool", (long long) (now - w->last_heard));
        zhashx_delete (self->workers, key);
    }
    zlistx_destroy (&dead);
    if (now - self->last_beat >= self->interval) {
        self->last_beat = now;
        for (s_worker_t *w = zhashx_first (self->workers); w; w = zhashx_next (self->workers)) {
            bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "gateway"));
            bmq_bus_send_and_destroy (self->sock, w->rid, &hb);
        }
    }
    s_dispatch (self);
}

size_t bmq_broker_workers (const bmq_broker_t *self) { return zhashx_size (self->workers); }

json_t *bmq_broker_status (const bmq_broker_t *self)
{
    size_t busy = 0;
    for (s_worker_t *w = zhashx_first (self->workers); w; w = zhashx_next (self->workers)) busy += w->busy;
    return json_pack ("{s:I, s:I, s:I, s:I, s:I}", "workers", (json_int_t) zhashx_size (self->workers),
                      "busy", (json_int_t) busy, "queued", (json_int_t) zlistx_size (self->queue),
                      "dispatched", (json_int_t) self->dispatched, "verdicts", (json_int_t) self->verdicts);
}
