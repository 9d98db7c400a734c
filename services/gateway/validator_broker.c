/* validator_broker — LRU queue of validator workers (zguide Paranoid Pirate);
 * the guarantees are listed in validator_broker.h. */
#include "validator_broker.h"
#include "bus.h"
#include "log.h"
#include "audit_client.h"
#include "auth.h"
#include "roles.h"

typedef struct {
    bmq_envelope_t *req;
    int             attempts;       /* dispatches so far */
    int64_t         deadline;       /* while a worker holds it */
} s_job_t;

typedef struct {
    zframe_t *rid;
    char     *key;                  /* hex of rid, for lookup */
    int64_t   pid;                  /* as the worker announced it (0: unknown) */
    int64_t   last_heard;
    int64_t   idle_since;
    s_job_t  *job;                  /* held, kept to re-dispatch if the worker dies */
} s_worker_t;

struct bmq_broker_t {
    zsock_t  *sock;
    zhashx_t *workers;              /* key → s_worker_t* */
    zlistx_t *queue;                /* s_job_t* waiting for a worker */
    zlistx_t *failed;               /* bmq_envelope_t* replies made here */
    zhashx_t *dropped;              /* keys of workers this broker dropped (dead or hung): only READY lets them back */
    int       interval, liveness, deadline;
    int64_t   last_beat;
    int64_t   empty_since;          /* monotonic ms since the pool has had no worker; 0 while it has one */
    int64_t   dispatched, verdicts, requeued, expired, failures, refused;
    bool      curve;
    bmq_audit_t *audit;
};

void bmq_broker_set_auth (bmq_broker_t *self, bool curve, struct bmq_audit_t *audit)
{
    self->curve = curve;
    self->audit = audit;
}

static void s_job_destroy (s_job_t **job_p)
{
    if (!*job_p) return;
    bmq_envelope_destroy (&(*job_p)->req);
    free (*job_p);
    *job_p = NULL;
}

static void s_job_free (void **item) { s_job_destroy ((s_job_t **) item); }
static void s_env_free (void **item) { bmq_envelope_destroy ((bmq_envelope_t **) item); }

static void s_worker_free (void **item)
{
    s_worker_t *w = *item;
    if (!w) return;
    zframe_destroy (&w->rid);
    s_job_destroy (&w->job);
    free (w->key);
    free (w);
    *item = NULL;
}

bmq_broker_t *bmq_broker_new (const char *endpoint, int interval_ms, int liveness)
{
    zsock_t *sock = bmq_bus_bind (ZMQ_ROUTER, endpoint);
    if (!sock) return NULL;
    bmq_broker_t *self = calloc (1, sizeof *self);
    self->sock = sock;
    self->workers = zhashx_new ();
    zhashx_set_destructor (self->workers, s_worker_free);
    self->queue = zlistx_new ();
    zlistx_set_destructor (self->queue, s_job_free);
    self->dropped = zhashx_new ();
    self->failed = zlistx_new ();
    zlistx_set_destructor (self->failed, s_env_free);
    self->interval = interval_ms > 0 ? interval_ms : 1000;
    self->liveness = liveness > 0 ? liveness : 3;
    self->deadline = 2 * self->interval;
    self->empty_since = bmq_mono_ms ();      /* workers get one interval after start to join */
    return self;
}

void bmq_broker_destroy (bmq_broker_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_broker_t *self = *self_p;
    zhashx_destroy (&self->workers);
    zlistx_destroy (&self->queue);
    zlistx_destroy (&self->failed);
    zhashx_destroy (&self->dropped);
    zsock_destroy (&self->sock);
    free (self);
    *self_p = NULL;
}

void bmq_broker_set_deadline (bmq_broker_t *self, int deadline_ms) { if (deadline_ms > 0) self->deadline = deadline_ms; }
zsock_t *bmq_broker_sock (bmq_broker_t *self) { return self->sock; }

static void s_dispatch (bmq_broker_t *self);
static void s_fail_when_empty (bmq_broker_t *self, int64_t now);

int bmq_broker_submit (bmq_broker_t *self, bmq_envelope_t **req_p)
{
    if (zlistx_size (self->queue) >= BMQ_BROKER_QUEUE_MAX) { bmq_envelope_destroy (req_p); return -1; }
    s_job_t *job = calloc (1, sizeof *job);
    job->req = *req_p;
    *req_p = NULL;
    zlistx_add_end (self->queue, job);
    s_dispatch (self);
    return 0;
}

/* The idle worker that has waited longest, or NULL. */
static s_worker_t *s_lru_idle (bmq_broker_t *self)
{
    s_worker_t *best = NULL;
    for (s_worker_t *w = zhashx_first (self->workers); w; w = zhashx_next (self->workers))
        if (!w->job && (!best || w->idle_since < best->idle_since)) best = w;
    return best;
}

static void s_dispatch (bmq_broker_t *self)
{
    s_worker_t *w;
    while (zlistx_size (self->queue) && (w = s_lru_idle (self))) {
        s_job_t *job = zlistx_detach (self->queue, NULL);
        bmq_bus_send (self->sock, w->rid, job->req);
        job->attempts++;
        job->deadline = bmq_mono_ms () + self->deadline;
        w->job = job;
        self->dispatched++;
    }
}

/* A worker is gone (dead or hung): its request goes back to the head of the
 * queue, or is answered with an error once it has worn out its attempts. */
static void s_drop (bmq_broker_t *self, s_worker_t *w)
{
    s_job_t *job = w->job;
    w->job = NULL;
    if (job && job->attempts >= BMQ_BROKER_MAX_ATTEMPTS) {
        bmq_error ("request %s: %d validator workers in turn died or hung on it; answering with an error",
                   job->req->cid, job->attempts);
        zlistx_add_end (self->failed, bmq_envelope_error (job->req, "validator_failed",
            "no validator could check this request: %d workers in turn died or hung on it", job->attempts));
        self->failures++;
        s_job_destroy (&job);
    }
    else if (job) {
        zlistx_add_start (self->queue, job);
        self->requeued++;
    }
    if (zhashx_size (self->dropped) >= BMQ_BROKER_QUEUE_MAX) zhashx_purge (self->dropped);
    zhashx_insert (self->dropped, w->key, (void *) 1);
    zhashx_delete (self->workers, w->key);
    if (!zhashx_size (self->workers)) self->empty_since = bmq_mono_ms ();
}

bmq_envelope_t *bmq_broker_on_message (bmq_broker_t *self)
{
    zframe_t *rid = NULL;
    bmq_envelope_t *env = bmq_bus_recv (self->sock, &rid);
    if (!env) { zframe_destroy (&rid); return NULL; }
    bmq_principal_t who;
    char why[512];
    if (bmq_roles_check (env, "broker", self->curve, 0, &who, why, sizeof why)) {
        /* not a validator key: it joins nothing, and its answers are not verdicts */
        self->refused++;
        char key[200];          /* one record and one log line per key and type per second */
        snprintf (key, sizeof key, "%s|broker|%s", env->auth_name, bmq_msg_type_name (env->type));
        if (bmq_audit_count (self->audit, env->cid, "auth.refused", key, bmq_roles_refusal_record (env, "broker", &who, why)))
            bmq_warn ("validator broker refused %s from '%s' (%s): %s", bmq_msg_type_name (env->type), env->auth_name,
                      env->auth_role, why);
        bmq_envelope_t *r = bmq_roles_refusal (env, why);
        if (r) bmq_bus_send_and_destroy (self->sock, rid, &r);
        zframe_destroy (&rid);
        bmq_envelope_destroy (&env);
        return NULL;
    }
    char *key = zframe_strhex (rid);
    s_worker_t *w = zhashx_lookup (self->workers, key);
    /* a heartbeat from a worker we do not know is as good as READY: it is how a
     * worker of a gateway that restarted joins this one without waiting to
     * notice the silence of the old one (its heartbeats reach us at once) */
    bool joins = env->type == BMQ_MSG_WORKER_READY
              || (env->type == BMQ_MSG_HEARTBEAT && !zhashx_lookup (self->dropped, key));   /* a dropped one says READY */
    /* roles.def lets only the validator key say either; this says it again
     * where it matters: a worker receives other people's plans and scripts */
    if (joins && self->curve && !bmq_auth_is_service (env, "validator")) joins = false;
    if (!w && joins && zhashx_size (self->workers) < BMQ_BROKER_QUEUE_MAX) {
        w = calloc (1, sizeof *w);
        w->rid = zframe_dup (rid);
        w->key = strdup (key);
        w->pid = bmq_body_int (env, "pid", 0);
        w->idle_since = bmq_mono_ms ();
        zhashx_insert (self->workers, key, w);
        zhashx_delete (self->dropped, key);
        self->empty_since = 0;
        const char *name = env->auth_name[0] ? env->auth_name : "(no key: CURVE off)";
        bmq_info ("validator worker %lld joined with key '%s' (%zu in the pool)", (long long) w->pid, name,
                  zhashx_size (self->workers));
        bmq_audit_record (self->audit, NULL, "validator.join",
                          json_pack ("{s:I, s:s, s:s, s:s, s:I}", "pid", (json_int_t) w->pid, "key", name,
                                     "role", env->auth_role, "by", bmq_msg_type_name (env->type),
                                     "workers", (json_int_t) zhashx_size (self->workers)));
    }
    bmq_envelope_t *reply = NULL;
    if (w) {
        w->last_heard = bmq_mono_ms ();
        bool answer = env->type == BMQ_MSG_VALIDATE_REPLY || env->type == BMQ_MSG_CAPABILITIES_REPLY || env->type == BMQ_MSG_SCRIPT_REPLY
                   || env->type == BMQ_MSG_ERROR;
        if (answer && w->job && !strcmp (env->cid, w->job->req->cid)) {
            s_job_destroy (&w->job);
            w->idle_since = bmq_mono_ms ();
            reply = env;
            env = NULL;
            self->verdicts++;
        }
        else if (answer)
            bmq_warn ("validator worker %lld answered %s, which it does not hold: ignored", (long long) w->pid, env->cid);
    }
    /* else: a peer that never said READY (or was dropped). Ignore it and
     * allocate nothing; unanswered, a live worker reconnects and says READY. */
    free (key);
    zframe_destroy (&rid);
    bmq_envelope_destroy (&env);
    s_dispatch (self);
    return reply;
}

void bmq_broker_tick (bmq_broker_t *self)
{
    int64_t now = bmq_mono_ms ();
    zlistx_t *gone = zlistx_new ();
    /* Judge nobody while messages wait unread: a heartbeat or an answer may be
     * among them, and the silence would be ours, not the worker's. */
    bool unread = zsock_events (self->sock) & ZMQ_POLLIN;
    for (s_worker_t *w = unread ? NULL : zhashx_first (self->workers); w; w = zhashx_next (self->workers)) {
        if (now - w->last_heard > (int64_t) self->interval * self->liveness) {
            bmq_warn ("validator worker %lld silent for %lld ms: removed from the pool%s", (long long) w->pid,
                      (long long) (now - w->last_heard), w->job ? ", its request goes to another" : "");
            zlistx_add_end (gone, w);
        }
        else if (w->job && now > w->job->deadline) {
            bmq_warn ("validator worker %lld held request %s past its %d ms deadline: removed from the pool,"
                      " the request goes to another", (long long) w->pid, w->job->req->cid, self->deadline);
            self->expired++;
            zlistx_add_end (gone, w);
        }
    }
    for (s_worker_t *w = zlistx_first (gone); w; w = zlistx_next (gone)) s_drop (self, w);
    zlistx_destroy (&gone);
    s_fail_when_empty (self, now);
    if (now - self->last_beat >= self->interval) {
        self->last_beat = now;
        for (s_worker_t *w = zhashx_first (self->workers); w; w = zhashx_next (self->workers)) {
            bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "gateway"));
            bmq_bus_send_and_destroy (self->sock, w->rid, &hb);
        }
    }
    s_dispatch (self);
}

/* No worker for a whole interval: nobody will take the queued requests soon,
 * so each is answered now rather than when the client gives up. */
static void s_fail_when_empty (bmq_broker_t *self, int64_t now)
{
    if (zhashx_size (self->workers) || !zlistx_size (self->queue) || now - self->empty_since < self->interval) return;
    for (s_job_t *job; (job = zlistx_first (self->queue) ? zlistx_detach (self->queue, NULL) : NULL); s_job_destroy (&job)) {
        zlistx_add_end (self->failed, bmq_envelope_error (job->req, "validator_unavailable",
            "validator unavailable (no validator worker connected for %lld ms); nothing was run: try again when"
            " `blendmq status` shows validator workers", (long long) (now - self->empty_since)));
        self->failures++;
    }
}

int64_t bmq_broker_empty_ms (const bmq_broker_t *self)
{
    return zhashx_size (self->workers) ? 0 : bmq_mono_ms () - self->empty_since;
}

bmq_envelope_t *bmq_broker_take_failed (bmq_broker_t *self)
{
    return zlistx_first (self->failed) ? zlistx_detach (self->failed, NULL) : NULL;
}

size_t bmq_broker_workers (const bmq_broker_t *self) { return zhashx_size (self->workers); }

json_t *bmq_broker_status (const bmq_broker_t *self)
{
    size_t busy = 0;
    int64_t now = bmq_mono_ms ();
    json_t *pool = json_array ();
    for (s_worker_t *w = zhashx_first (self->workers); w; w = zhashx_next (self->workers)) {
        busy += w->job != NULL;
        json_array_append_new (pool, json_pack ("{s:I, s:b, s:I}", "pid", (json_int_t) w->pid, "busy", w->job != NULL,
            "held_ms", (json_int_t) (w->job ? now - (w->job->deadline - self->deadline) : 0)));
    }
    return json_pack ("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:o}", "workers", (json_int_t) zhashx_size (self->workers),
                      "refused", (json_int_t) self->refused,
                      "busy", (json_int_t) busy, "queued", (json_int_t) zlistx_size (self->queue),
                      "dispatched", (json_int_t) self->dispatched, "verdicts", (json_int_t) self->verdicts,
                      "requeued", (json_int_t) self->requeued, "expired", (json_int_t) self->expired,
                      "failed", (json_int_t) self->failures, "deadline_ms", self->deadline, "pool", pool);
}
