/* http_feed — the gateway's story stream (see http_feed.h). */
#include "http_feed.h"
#include "http_events.h"
#include "http_metrics.h"
#include "http_plans.h"
#include "http_ctx.h"
#include "mcp_tools.h"
#include "sse_ring.h"
#include "log.h"
#include "progress_batch.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define STORY_HWM 100000            /* stories queued for the feed before the PUB drops (never in practice) */

/* ---- the gateway's side ------------------------------------------------------------ */

zsock_t *bmq_story_pub_new (const char *endpoint)
{
    zsock_t *pub = zsock_new (ZMQ_PUB);
    if (!pub) return NULL;
    zsock_set_sndhwm (pub, STORY_HWM);
    if (zsock_bind (pub, "%s", endpoint) == -1) zsock_destroy (&pub);
    return pub;
}

static void s_tell (zsock_t *pub, const char *kind, const char *plan_id, const char *label, zframe_t *payload)
{
    zmsg_t *msg = zmsg_new ();
    zmsg_addstr (msg, kind);
    zmsg_addstr (msg, plan_id ? plan_id : "");
    zmsg_addstr (msg, label ? label : "");
    zmsg_append (msg, &payload);
    zmsg_send (&msg, pub);
}

static void s_tell_envelope (zsock_t *pub, const char *kind, const char *plan_id, const char *label, const bmq_envelope_t *env)
{
    if (!pub) return;
    unsigned char *buf = NULL;
    size_t len = 0;
    char err[256];
    if (bmq_envelope_encode (env, &buf, &len, err, sizeof err)) { bmq_warn ("story %s %s: %s", kind, plan_id, err); return; }
    s_tell (pub, kind, plan_id, label, zframe_new (buf, len));
    free (buf);
}

void bmq_story_request (zsock_t *pub, const char *plan_id, const char *kind, const bmq_envelope_t *env)
{
    s_tell_envelope (pub, "request", plan_id, kind, env);
}

void bmq_story_answer (zsock_t *pub, const char *plan_id, const bmq_envelope_t *env)
{
    s_tell_envelope (pub, "answer", plan_id, "", env);
}

void bmq_story_event (zsock_t *pub, const void *frame, size_t len)
{
    if (pub) s_tell (pub, "event", "", "", zframe_new (frame, len));
}

/* ---- applying a story to the HTTP side's state -------------------------------------- */

static int s_apply_one (const bmq_envelope_t *env, void *arg)
{
    bmq_http_ctx_t *self = arg;
    bmq_http_seqs_follow (bmq_http_ctx_seqs (self), bmq_http_ctx_events (self), env);      /* a gap before it goes first */
    json_t *data = json_deep_copy (env->body);
    json_object_set_new (data, "cid", json_string (env->cid));
    json_object_set_new (data, "ts", json_integer (env->ts_ms));
    char *text = json_dumps (data, BMQ_MCP_JSON_FLAGS);
    bmq_sse_ring_push (bmq_http_ctx_events (self), "progress", bmq_body_str (env, "plan_id"), text);
    free (text);
    json_decref (data);
    bmq_http_metrics_event (bmq_http_ctx_metrics (self));
    const char *event = bmq_body_str (env, "event"), *status = bmq_body_str (env, "status");
    double ms = json_number_value (json_object_get (env->body, "duration_ms"));
    if (event && status && !strcmp (event, "step")) bmq_http_metrics_step (bmq_http_ctx_metrics (self), status, ms);
    /* a report with `by` retells how an already-counted plan ended (Blender's rollback after a lost link) */
    else if (event && status && !strcmp (event, "plan") && strcmp (status, "started") && !json_object_get (env->body, "by"))
        bmq_http_metrics_plan (bmq_http_ctx_metrics (self), status, ms);
    return 0;
}

/* A progress, or a progress.batch (issue 28) taken apart in order. */
void bmq_http_ctx_apply_event (bmq_http_ctx_t *self, const void *frame, size_t len)
{
    if (!self) return;
    bmq_envelope_t *env = bmq_envelope_decode (frame, len, NULL, 0);
    size_t skipped = 0;
    bmq_progress_each (env, s_apply_one, self, &skipped);
    if (skipped) bmq_warn ("progress.batch: %zu event(s) that are not progress bodies skipped", skipped);
    bmq_envelope_destroy (&env);
}

void bmq_http_ctx_apply_request (bmq_http_ctx_t *self, const char *plan_id, const char *kind, const bmq_envelope_t *env)
{
    if (self) bmq_http_plans_start (bmq_http_ctx_plans (self), plan_id, kind, env);
}

void bmq_http_ctx_apply_answer (bmq_http_ctx_t *self, const char *plan_id, const bmq_envelope_t *env)
{
    bool accepted = false;
    if (self && bmq_http_plans_note (bmq_http_ctx_plans (self), plan_id, env, &accepted)) bmq_http_metrics_verdict (bmq_http_ctx_metrics (self), accepted);
}

/* ---- HTTP's side ------------------------------------------------------------------- */

struct bmq_http_feed_t {
    bmq_http_ctx_t    *ctx;
    zsock_t           *sub;             /* the feed thread's alone once it runs */
    int                wake;            /* eventfd: a sync asks the thread to drain now */
    pthread_t          thread;
    atomic_bool        stopping;
    pthread_mutex_t    lock;
    pthread_cond_t     fed;
    uint64_t           asked, done;     /* syncs asked for, and the last one the thread served */
};

static void s_apply (bmq_http_feed_t *self, zmsg_t *msg)
{
    char *kind = zmsg_popstr (msg), *plan_id = zmsg_popstr (msg), *label = zmsg_popstr (msg);
    zframe_t *payload = zmsg_pop (msg);
    if (kind && plan_id && label && payload) {
        if (!strcmp (kind, "event")) bmq_http_ctx_apply_event (self->ctx, zframe_data (payload), zframe_size (payload));
        else {
            char err[256];
            bmq_envelope_t *env = bmq_envelope_decode (zframe_data (payload), zframe_size (payload), err, sizeof err);
            if (!env) bmq_warn ("http: a %s story for %s does not decode: %s", kind, plan_id, err);
            else if (!strcmp (kind, "request")) bmq_http_ctx_apply_request (self->ctx, plan_id, label, env);
            else if (!strcmp (kind, "answer")) bmq_http_ctx_apply_answer (self->ctx, plan_id, env);
            bmq_envelope_destroy (&env);
        }
    }
    free (kind);
    free (plan_id);
    free (label);
    zframe_destroy (&payload);
}

static void *s_run (void *arg)
{
    bmq_http_feed_t *self = arg;
    zmq_pollitem_t items[] = { { zsock_resolve (self->sub), 0, ZMQ_POLLIN, 0 }, { NULL, self->wake, ZMQ_POLLIN, 0 } };
    while (!atomic_load (&self->stopping)) {
        if (zmq_poll (items, 2, 200) < 0 && errno != EINTR) break;
        if (items[1].revents & ZMQ_POLLIN) {
            uint64_t n;
            if (read (self->wake, &n, sizeof n) < 0 && errno != EAGAIN) break;
        }
        pthread_mutex_lock (&self->lock);
        uint64_t serving = self->asked;
        pthread_mutex_unlock (&self->lock);
        /* everything queued now, which includes every story told before the syncs counted in `serving` */
        while (zsock_events (self->sub) & ZMQ_POLLIN) {
            zmsg_t *msg = zmsg_recv (self->sub);
            if (!msg) break;
            s_apply (self, msg);
            zmsg_destroy (&msg);
        }
        pthread_mutex_lock (&self->lock);
        self->done = serving;
        pthread_cond_broadcast (&self->fed);
        pthread_mutex_unlock (&self->lock);
    }
    pthread_mutex_lock (&self->lock);
    self->done = UINT64_MAX;                     /* stopping: no sync waits any longer */
    pthread_cond_broadcast (&self->fed);
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

bmq_http_feed_t *bmq_http_feed_new (bmq_http_ctx_t *ctx, const char *endpoint)
{
    bmq_http_feed_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    self->ctx = ctx;
    self->wake = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
    self->sub = zsock_new (ZMQ_SUB);
    if (self->sub) {
        zsock_set_rcvhwm (self->sub, STORY_HWM);
        zsock_set_subscribe (self->sub, "");
    }
    if (self->wake < 0 || !self->sub || zsock_connect (self->sub, "%s", endpoint) == -1) {
        bmq_error ("http: cannot follow the gateway's stories at %s", endpoint);
        zsock_destroy (&self->sub);
        if (self->wake >= 0) close (self->wake);
        free (self);
        return NULL;
    }
    pthread_mutex_init (&self->lock, NULL);
    pthread_cond_init (&self->fed, NULL);
    if (pthread_create (&self->thread, NULL, s_run, self)) {
        bmq_error ("http: cannot start the story feed thread");
        pthread_cond_destroy (&self->fed);
        pthread_mutex_destroy (&self->lock);
        zsock_destroy (&self->sub);
        close (self->wake);
        free (self);
        return NULL;
    }
    return self;
}

void bmq_http_feed_destroy (bmq_http_feed_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_http_feed_t *self = *self_p;
    atomic_store (&self->stopping, true);
    uint64_t one = 1;
    if (write (self->wake, &one, sizeof one) < 0) { }
    pthread_join (self->thread, NULL);
    zsock_destroy (&self->sub);
    close (self->wake);
    pthread_cond_destroy (&self->fed);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

void bmq_http_feed_sync (bmq_http_feed_t *self, int timeout_ms)
{
    if (!self) return;
    pthread_mutex_lock (&self->lock);
    uint64_t mine = ++self->asked;
    pthread_mutex_unlock (&self->lock);
    uint64_t one = 1;
    if (write (self->wake, &one, sizeof one) < 0) { }
    struct timespec until;
    clock_gettime (CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
    pthread_mutex_lock (&self->lock);
    while (self->done < mine)
        if (pthread_cond_timedwait (&self->fed, &self->lock, &until) == ETIMEDOUT) break;
    pthread_mutex_unlock (&self->lock);
}
