/* http_ctx — the state route handlers share (see http_ctx.h, http_req.h). */
#include "http_ctx.h"
#include "http_feed.h"
#include "http_events.h"
#include "http_mcp.h"
#include "http_metrics.h"
#include "http_plans.h"
#include "peer.h"
#include "sse_ring.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLANS_KEPT    1000
#define STREAM_NAMES  256           /* tokens with open streams, at most */

typedef struct {
    char name[64];
    int  open;
} s_stream_count_t;

struct bmq_http_ctx_t {
    const bmq_http_options_t *opts;
    bmq_http_auth_t    *auth;
    bmq_sse_ring_t     *events;
    bmq_http_plans_t   *plans;
    bmq_http_metrics_t *metrics;
    bmq_http_mcp_t     *mcp;
    bmq_http_seqs_t    *seqs;               /* executors' event sequences (the feed thread's only) */
    bmq_http_feed_t    *feed;               /* the gateway's stories, applied in a thread of its own */
    atomic_bool         stopping;
    atomic_llong        last_tick;
    pthread_mutex_t     caps_lock;
    char               *caps[2];            /* compact, full */
    int64_t             caps_at[2];
    pthread_mutex_t     streams_lock;
    s_stream_count_t    streams[STREAM_NAMES];
};

bmq_http_ctx_t *bmq_http_ctx_new (const bmq_http_options_t *opts, const char *token, char *err, size_t errlen)
{
    bmq_http_ctx_t *self = calloc (1, sizeof *self);
    if (!self) { snprintf (err, errlen, "out of memory"); return NULL; }
    self->opts = opts;
    pthread_mutex_init (&self->caps_lock, NULL);
    pthread_mutex_init (&self->streams_lock, NULL);
    atomic_store (&self->last_tick, bmq_mono_ms ());
    self->auth = bmq_http_auth_new (opts->keys_dir, token);
    self->events = bmq_sse_ring_new ((size_t) (opts->event_buffer > 0 ? opts->event_buffer : 4096), bmq_instance_id ());
    self->seqs = bmq_http_seqs_new ();
    self->plans = bmq_http_plans_new (PLANS_KEPT);
    self->metrics = bmq_http_metrics_new ();
    self->mcp = bmq_http_mcp_new (opts->mcp_test_tools, opts->request_timeout_ms + 5000, opts->mcp_sessions_per_token,
                                  opts->mcp_confirm_elicitation, err, errlen);
    if (!self->auth || !self->events || !self->seqs || !self->plans || !self->metrics || !self->mcp) {
        if (self->mcp) snprintf (err, errlen, "out of memory");
        bmq_http_ctx_destroy (&self);
    }
    return self;
}

void bmq_http_ctx_destroy (bmq_http_ctx_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_http_ctx_t *self = *self_p;
    bmq_http_ctx_stop (self);
    bmq_http_feed_destroy (&self->feed);         /* before what it feeds */
    bmq_http_mcp_destroy (&self->mcp);
    bmq_http_metrics_destroy (&self->metrics);
    bmq_http_plans_destroy (&self->plans);
    bmq_sse_ring_destroy (&self->events);
    bmq_http_seqs_destroy (&self->seqs);
    bmq_http_auth_destroy (&self->auth);
    for (int i = 0; i < 2; i++) free (self->caps[i]);
    pthread_mutex_destroy (&self->caps_lock);
    pthread_mutex_destroy (&self->streams_lock);
    free (self);
    *self_p = NULL;
}

int bmq_http_ctx_follow (bmq_http_ctx_t *self, const char *stories_endpoint)
{
    if (!stories_endpoint || !*stories_endpoint) return 0;
    self->feed = bmq_http_feed_new (self, stories_endpoint);
    return self->feed ? 0 : -1;
}

void bmq_http_ctx_stop (bmq_http_ctx_t *self)
{
    atomic_store (&self->stopping, true);
    if (self->events) bmq_sse_ring_close (self->events);
}

void bmq_http_ctx_tick (bmq_http_ctx_t *self) { atomic_store (&self->last_tick, bmq_mono_ms ()); }

/* ---- for the route handlers (http_req.h) ----------------------------------------------- */

const bmq_http_options_t *bmq_http_ctx_options (const bmq_http_ctx_t *self) { return self->opts; }
bmq_sse_ring_t     *bmq_http_ctx_events (bmq_http_ctx_t *self) { return self->events; }
bmq_http_plans_t   *bmq_http_ctx_plans (bmq_http_ctx_t *self) { return self->plans; }
bmq_http_metrics_t *bmq_http_ctx_metrics (bmq_http_ctx_t *self) { return self->metrics; }
bmq_http_seqs_t    *bmq_http_ctx_seqs (bmq_http_ctx_t *self) { return self->seqs; }
bmq_http_auth_t    *bmq_http_ctx_auth (bmq_http_ctx_t *self) { return self->auth; }
bmq_http_mcp_t     *bmq_http_ctx_mcp (bmq_http_ctx_t *self) { return self->mcp; }
bool    bmq_http_ctx_stopping (const bmq_http_ctx_t *self) { return atomic_load (&self->stopping); }
int64_t bmq_http_ctx_loop_age_ms (const bmq_http_ctx_t *self) { return bmq_mono_ms () - atomic_load (&self->last_tick); }

void bmq_http_ctx_catch_up (bmq_http_ctx_t *self)
{
    if (self->feed) bmq_http_feed_sync (self->feed, 1000);
}

char *bmq_http_ctx_cached_caps (bmq_http_ctx_t *self, const char *form)
{
    int i = form && !strcmp (form, "full") ? 1 : 0;
    char *copy = NULL;
    pthread_mutex_lock (&self->caps_lock);
    if (self->caps[i] && bmq_mono_ms () - self->caps_at[i] < self->opts->capabilities_cache_ms) copy = strdup (self->caps[i]);
    pthread_mutex_unlock (&self->caps_lock);
    return copy;
}

void bmq_http_ctx_cache_caps (bmq_http_ctx_t *self, const char *form, const char *text)
{
    int i = form && !strcmp (form, "full") ? 1 : 0;
    pthread_mutex_lock (&self->caps_lock);
    free (self->caps[i]);
    self->caps[i] = strdup (text);
    self->caps_at[i] = bmq_mono_ms ();
    pthread_mutex_unlock (&self->caps_lock);
}

bool bmq_http_ctx_stream_open (bmq_http_ctx_t *self, const char *who)
{
    if (!who || !*who) return true;
    bool ok = false;
    pthread_mutex_lock (&self->streams_lock);
    s_stream_count_t *slot = NULL, *free_slot = NULL;
    for (size_t i = 0; i < STREAM_NAMES && !slot; i++) {
        if (!strcmp (self->streams[i].name, who)) slot = &self->streams[i];
        else if (!free_slot && !self->streams[i].open) free_slot = &self->streams[i];
    }
    if (!slot && free_slot) { slot = free_slot; snprintf (slot->name, sizeof slot->name, "%s", who); slot->open = 0; }
    if (slot && slot->open < self->opts->streams_per_token) { slot->open++; ok = true; }
    pthread_mutex_unlock (&self->streams_lock);
    return ok;
}

void bmq_http_ctx_stream_close (bmq_http_ctx_t *self, const char *who)
{
    if (!who || !*who) return;
    pthread_mutex_lock (&self->streams_lock);
    for (size_t i = 0; i < STREAM_NAMES; i++)
        if (!strcmp (self->streams[i].name, who) && self->streams[i].open > 0) { self->streams[i].open--; break; }
    pthread_mutex_unlock (&self->streams_lock);
}

bool bmq_http_req_csrf (bmq_http_req_t *req, char *nonce, size_t len)
{
    return req->session && bmq_http_auth_csrf (req->ctx->auth, req->session, nonce, len);
}
