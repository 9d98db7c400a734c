/* http_events — the /api/events stream: resume, gaps, keepalives. */
#include "http_events.h"
#include "http_metrics.h"
#include "mcp_tools.h"
#include "peer.h"
#include "sse_ring.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define SLICE_MS     250            /* waits are cut in slices to notice shutdown */
#define KEEPALIVE_MS 15000
#define SSE_CHUNK    (64u << 10)
#define EXECUTORS_TRACKED 64        /* executor processes whose event seq is followed */

typedef struct {
    bmq_http_ctx_t    *ctx;
    bmq_sse_ring_t    *ring;
    uint64_t           after;       /* number of the last event handed out (or skipped) */
    char              *plan_id;     /* NULL: every plan */
    bmq_http_pending_t out;             /* made, not yet read */
    int64_t            last_write;
    char               who[64];     /* the token whose stream it is (http.streams_per_token) */
    int                fd;          /* the connection's socket: a reader that left ends the stream at once */
} s_stream_t;

/* "id: …\nevent: gap\ndata: {…}\n\n" (body stolen); `resume_at` is the
 * number the stream goes on after. */
static char *s_gap_event (s_stream_t *s, uint64_t resume_at, json_t *body)
{
    char id[BMQ_SSE_ID_MAX + 8], *text = json_dumps (body, BMQ_MCP_JSON_FLAGS), *out = NULL;
    json_decref (body);
    bmq_sse_ring_id (s->ring, resume_at, id, sizeof id);
    if (!text || asprintf (&out, "id: %s\nevent: gap\ndata: %s\n\n", id, text) < 0) out = NULL;
    free (text);
    return out;
}

/* `dropped` events after last_event_id went before this stream read them; it resumes after number resume_at. */
static char *s_gap_evicted (s_stream_t *s, const char *last_event_id, uint64_t dropped, uint64_t resume_at)
{
    char message[400];
    snprintf (message, sizeof message, "%llu event(s) after %s were dropped from the gateway's buffer (gateway.http_event_buffer) "
              "before this stream read them%s", (unsigned long long) dropped, last_event_id,
              s->plan_id ? "; the count is of every plan's events" : "");
    json_t *body = json_pack ("{s:s, s:s, s:s}", "reason", "evicted", "last_event_id", last_event_id, "message", message);
    if (s->plan_id) {                   /* how many were this plan's is not known */
        json_object_set_new (body, "missed", json_null ());
        json_object_set_new (body, "dropped", json_integer ((json_int_t) dropped));
    }
    else json_object_set_new (body, "missed", json_integer ((json_int_t) dropped));
    return s_gap_event (s, resume_at, body);
}

static char *s_gap_restarted (s_stream_t *s, const char *last_event_id)
{
    json_t *body = json_pack ("{s:s, s:s, s:n, s:s, s:s}", "reason", "gateway restarted", "last_event_id", last_event_id,
                              "missed", "instance", bmq_sse_ring_instance (s->ring), "message",
                              "the gateway restarted since that event: events published while it was down are missing; "
                              "the events the new gateway holds follow");
    return s_gap_event (s, s->after, body);
}

/* An id without data: an EventSource takes it as its last event id and fires
 * nothing (WHATWG "dispatch the event", steps 1-2). On connecting and in
 * keepalives it gives every client a position, also one that saw no event
 * yet, so a later reconnection can be told what it missed; on a ?plan_id=
 * stream it also moves the client past other plans' events. */
static char *s_position (s_stream_t *s, const char *comment)
{
    char id[BMQ_SSE_ID_MAX + 8], *out = NULL;
    bmq_sse_ring_id (s->ring, s->after, id, sizeof id);
    if (asprintf (&out, "id: %s\n%s\n\n", id, comment) < 0) out = NULL;
    return out;
}

/* head + tail, both taken (either may be NULL). */
static char *s_join (char *head, char *tail)
{
    if (!head || !tail) return head ? head : tail;
    char *out = NULL;
    if (asprintf (&out, "%s%s", head, tail) < 0) out = NULL;
    free (head);
    free (tail);
    return out;
}

static ssize_t s_read (void *cls, uint64_t pos, char *buf, size_t max)
{
    s_stream_t *s = cls;
    while (bmq_http_pending_done (&s->out)) {
        if (bmq_http_ctx_stopping (s->ctx)) return MHD_CONTENT_READER_END_OF_STREAM;
        char peek;
        if (s->fd >= 0 && recv (s->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
            return MHD_CONTENT_READER_END_OF_STREAM;        /* the reader left: its room goes back (http.streams_per_token) */
        char before[BMQ_SSE_ID_MAX + 8];
        bmq_sse_ring_id (s->ring, s->after, before, sizeof before);
        uint64_t dropped = 0, start = s->after;
        char *text = bmq_sse_ring_next (s->ring, &s->after, s->plan_id, SSE_CHUNK, SLICE_MS * 4, &dropped);
        if (dropped) text = s_join (s_gap_evicted (s, before, dropped, start + dropped), text);
        if (!text && bmq_mono_ms () - s->last_write >= KEEPALIVE_MS) text = s_position (s, ": keepalive");
        if (bmq_sse_ring_closed (s->ring) && !text) return MHD_CONTENT_READER_END_OF_STREAM;
        if (bmq_http_pending_set (&s->out, text)) s->last_write = bmq_mono_ms ();
    }
    return bmq_http_pending_read (&s->out, buf, max);
}

static void s_free (void *cls)
{
    s_stream_t *s = cls;
    bmq_http_metrics_subscribers (bmq_http_ctx_metrics (s->ctx), -1);
    bmq_http_ctx_stream_close (s->ctx, s->who);
    bmq_http_pending_free (&s->out);
    free (s->plan_id);
    free (s);
}

enum MHD_Result bmq_http_events_handle (bmq_http_req_t *req)
{
    bmq_sse_ring_t *ring = bmq_http_ctx_events (req->ctx);
    const char *plan_id = bmq_http_req_query (req, "plan_id");
    const char *last = bmq_http_req_header (req, "Last-Event-ID");
    if (!last) last = bmq_http_req_query (req, "last_event_id");
    if (plan_id && (!*plan_id || strlen (plan_id) > 64)) return bmq_http_reply_error (req, 400, "bad_request", "plan_id is 1..64 characters");
    uint64_t after = bmq_sse_ring_last (ring);
    bmq_sse_resume_t resume = last ? bmq_sse_ring_resume (ring, last, &after) : BMQ_SSE_RESUME_SAME;
    if (resume == BMQ_SSE_RESUME_BAD)
        return bmq_http_reply_error (req, 400, "bad_request", "Last-Event-ID must be the id of an event this gateway sent "
                                     "(INSTANCE-N), an id from an earlier gateway, or 0 (at most %d characters)", BMQ_SSE_ID_MAX);
    if (!bmq_http_ctx_stream_open (req->ctx, req->who.name))
        return bmq_http_reply_error (req, 429, "too_many_streams", "the token %s has as many event streams open as it may "
                                     "(http.streams_per_token): close one first", req->who.name);
    s_stream_t *s = calloc (1, sizeof *s);
    snprintf (s->who, sizeof s->who, "%s", req->who.name);
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info (req->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    s->fd = fd ? fd->connect_fd : -1;
    s->ctx = req->ctx;
    s->ring = ring;
    s->plan_id = plan_id ? strdup (plan_id) : NULL;
    s->after = after;                   /* an evicted id is found out by the first read */
    if (resume == BMQ_SSE_RESUME_OTHER) s->after = bmq_sse_ring_first (ring) - 1;     /* all the new process holds came after */
    /* ": connected" tells a client the stream is live */
    char *head = s_join (strdup ("retry: 2000\n"), s_position (s, ": connected"));
    if (resume == BMQ_SSE_RESUME_OTHER) head = s_join (head, s_gap_restarted (s, last));
    bmq_http_pending_set (&s->out, head);
    s->last_write = bmq_mono_ms ();
    bmq_http_metrics_subscribers (bmq_http_ctx_metrics (req->ctx), 1);
    struct MHD_Response *resp = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, SSE_CHUNK, s_read, s, s_free);
    MHD_add_response_header (resp, "Content-Type", "text/event-stream");
    MHD_add_response_header (resp, "Cache-Control", "no-cache");
    MHD_add_response_header (resp, "X-Accel-Buffering", "no");
    return bmq_http_reply (req, 200, resp);
}

/* ---- executors' event sequences ------------------------------------------------------------- */

typedef struct {                    /* the last event seen from one executor process */
    char    instance[BMQ_INSTANCE_LEN + 1];
    char    name[64];               /* the events' "executor" name, when they carry one */
    char    plan_id[65];            /* of its last event */
    int64_t seq;
    int64_t used;                   /* for eviction: the least recently heard goes */
} s_exec_seq_t;

struct bmq_http_seqs_t {
    s_exec_seq_t seqs[EXECUTORS_TRACKED];
    int64_t      clock;
};

bmq_http_seqs_t *bmq_http_seqs_new (void) { return calloc (1, sizeof (bmq_http_seqs_t)); }

void bmq_http_seqs_destroy (bmq_http_seqs_t **self_p)
{
    if (!self_p || !*self_p) return;
    free (*self_p);
    *self_p = NULL;
}

/* The slot of an executor instance; a new one (seq 0) replaces the least recently heard. */
static s_exec_seq_t *s_seq_slot (bmq_http_seqs_t *self, const char *instance)
{
    s_exec_seq_t *empty = NULL, *oldest = NULL;
    for (int i = 0; i < EXECUTORS_TRACKED; i++) {
        s_exec_seq_t *t = &self->seqs[i];
        if (!strcmp (t->instance, instance)) return t;
        if (!t->instance[0]) { if (!empty) empty = t; }
        else if (!oldest || t->used < oldest->used) oldest = t;
    }
    s_exec_seq_t *t = empty ? empty : oldest;
    memset (t, 0, sizeof *t);
    memcpy (t->instance, instance, BMQ_INSTANCE_LEN + 1);
    return t;
}

/* A `gap` event (body stolen) for readers of either plan and of every plan. */
static void s_push_gap (bmq_sse_ring_t *ring, json_t *body, const char *plan_a, const char *plan_b)
{
    char last[BMQ_SSE_ID_MAX + 8];
    bmq_sse_ring_id (ring, bmq_sse_ring_last (ring), last, sizeof last);
    json_object_set_new (body, "last_event_id", json_string (last));
    char *text = json_dumps (body, BMQ_MCP_JSON_FLAGS);
    if (text) bmq_sse_ring_push2 (ring, "gap", plan_a && *plan_a ? plan_a : NULL, plan_b, text);
    free (text);
    json_decref (body);
}

/* Another process spoke under this one's name before: what it published last may be missing. */
static void s_check_restart (bmq_http_seqs_t *self, bmq_sse_ring_t *ring, s_exec_seq_t *now, const char *plan_id)
{
    for (int i = 0; i < EXECUTORS_TRACKED; i++) {
        s_exec_seq_t *old = &self->seqs[i];
        if (old == now || !old->instance[0] || strcmp (old->name, now->name)) continue;
        char message[300];
        snprintf (message, sizeof message, "executor %s restarted: events of plans in flight may be missing", now->name);
        s_push_gap (ring, json_pack ("{s:s, s:s, s:s, s:s, s:n, s:s}", "reason", "executor restarted", "executor", now->name,
                                     "instance", now->instance, "previous_instance", old->instance, "missed", "message", message),
                    old->plan_id, plan_id);
        memset (old, 0, sizeof *old);
    }
}

void bmq_http_seqs_follow (bmq_http_seqs_t *self, bmq_sse_ring_t *ring, const bmq_envelope_t *env)
{
    const char *instance = bmq_body_str (env, "instance"), *plan_id = bmq_body_str (env, "plan_id");
    const char *name = bmq_body_str (env, "executor");
    json_t *seq_v = json_object_get (env->body, "seq");
    if (!self || !instance || strlen (instance) != BMQ_INSTANCE_LEN || !json_is_integer (seq_v) || json_integer_value (seq_v) < 1)
        return;
    int64_t seq = (int64_t) json_integer_value (seq_v);
    s_exec_seq_t *t = s_seq_slot (self, instance);
    bool fresh = !t->seq;
    if (name && *name) snprintf (t->name, sizeof t->name, "%s", name);
    if (fresh && t->name[0]) s_check_restart (self, ring, t, plan_id);
    else if (!fresh && seq > t->seq + 1) {
        char message[300];
        snprintf (message, sizeof message, "gap: missed %lld event(s) from executor %s", (long long) (seq - t->seq - 1),
                  t->name[0] ? t->name : t->instance);
        s_push_gap (ring, json_pack ("{s:s, s:s?, s:s, s:I, s:I, s:I, s:s}", "reason", "executor events lost",
                                     "executor", t->name[0] ? t->name : NULL, "instance", t->instance,
                                     "missed", (json_int_t) (seq - t->seq - 1), "last_seq", (json_int_t) t->seq,
                                     "seq", (json_int_t) seq, "message", message),
                    t->plan_id, plan_id);
    }
    if (seq > t->seq) t->seq = seq;     /* a repeated or late event does not move it back */
    snprintf (t->plan_id, sizeof t->plan_id, "%s", plan_id ? plan_id : "");
    t->used = ++self->clock;
}
