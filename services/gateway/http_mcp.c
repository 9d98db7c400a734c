/* http_mcp — MCP Streamable HTTP: sessions, JSON and SSE answers, cancellation. */
#include "http_mcp.h"
#include "http_bus.h"
#include "http_metrics.h"
#include "log.h"
#include "mcp_server.h"
#include "mcp_surface.h"
#include "mcp_watch.h"
#include "sse_ring.h"

#include <czmq.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define MAX_SESSIONS  1000
#define SESSION_IDLE_MS (3600 * 1000)
#define SLICE_MS      250
#define KEEPALIVE_MS  15000

typedef struct s_stream_t s_stream_t;

typedef struct {
    char              id[33];
    bmq_mcp_session_t state;
    int64_t           last_used;
    zlistx_t         *streams;          /* s_stream_t* running in this session */
    bool              ephemeral;        /* 2026-07-28: one request's, gone with its answer */
    unsigned          listen_gen;       /* GET streams opened: only the newest one is the session's */
} s_session_t;

struct bmq_http_mcp_t {
    bmq_mcp_t       *mcp;
    atomic_int       task_threads;       /* calls running as tasks, each on a thread of its own */
    int              per_token;          /* sessions one token may hold (http.mcp_sessions_per_token) */
    pthread_mutex_t  lock;               /* sessions and their streams lists */
    zhashx_t        *sessions;           /* id → s_session_t* */
    zhashx_t        *listening;          /* token → its listen streams (GET, subscriptions/listen), as (void *) count */
};

/* One tools/call answered as an SSE stream (or waited for, in JSON mode). */
struct s_stream_t {
    bmq_http_mcp_t    *owner;
    bmq_http_ctx_t    *ctx;
    bmq_http_bus_t    *bus;              /* the connection's */
    char               session_id[33];
    bmq_mcp_call_t    *call;
    atomic_bool        cancelled;
    bool               over;
    json_t            *out;              /* messages not yet written */
    json_t            *answer;           /* the client's answer to our elicitation (under the owner's lock) */
    char              *pending;
    size_t             len, off;
    int64_t            last_write;
    char               who[64];          /* an SSE answer's token ("" in JSON mode): http.streams_per_token */
    bool               stateless;        /* 2026-07-28: results say their resultType */
};

static void s_session_free (void **item)
{
    s_session_t *s = *item;
    if (!s) return;
    zlistx_destroy (&s->streams);
    free (s);
    *item = NULL;
}

bmq_http_mcp_t *bmq_http_mcp_new (bool test_tools, int request_timeout_ms, int sessions_per_token, bool confirm_by_elicitation,
                                  char *err, size_t errlen)
{
    bmq_mcp_options_t opts = { .test_tools = test_tools, .request_timeout_ms = request_timeout_ms,
                               .confirm_by_elicitation = confirm_by_elicitation };
    bmq_mcp_t *mcp = bmq_mcp_new (&opts, err, errlen);
    if (!mcp) return NULL;
    bmq_http_mcp_t *self = calloc (1, sizeof *self);
    self->mcp = mcp;
    self->per_token = sessions_per_token > 0 ? sessions_per_token : 64;
    pthread_mutex_init (&self->lock, NULL);
    self->sessions = zhashx_new ();
    zhashx_set_destructor (self->sessions, s_session_free);
    self->listening = zhashx_new ();
    return self;
}

void bmq_http_mcp_destroy (bmq_http_mcp_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_http_mcp_t *self = *self_p;
    /* the server stops first: task threads see it within a slice and end */
    for (int i = 0; i < 400 && atomic_load (&self->task_threads) > 0; i++) zclock_sleep (25);
    zhashx_destroy (&self->sessions);
    zhashx_destroy (&self->listening);
    pthread_mutex_destroy (&self->lock);
    bmq_mcp_destroy (&self->mcp);
    free (self);
    *self_p = NULL;
}

/* ---- replies ------------------------------------------------------------------- */

static enum MHD_Result s_reply_message (bmq_http_req_t *req, int status, json_t *msg, const char *session_id)
{
    char *text = json_dumps (msg, BMQ_MCP_JSON_FLAGS);
    json_decref (msg);
    struct MHD_Response *resp = MHD_create_response_from_buffer (strlen (text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header (resp, "Content-Type", "application/json");
    if (session_id) MHD_add_response_header (resp, "Mcp-Session-Id", session_id);
    return bmq_http_reply (req, status, resp);
}

static enum MHD_Result s_reply_rpc_error (bmq_http_req_t *req, int status, int code, const char *message)
{
    return s_reply_message (req, status, bmq_mcp_error (NULL, code, message), NULL);
}

static enum MHD_Result s_reply_empty (bmq_http_req_t *req, int status, const char *allow)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer (0, "", MHD_RESPMEM_PERSISTENT);
    if (allow) MHD_add_response_header (resp, "Allow", allow);
    return bmq_http_reply (req, status, resp);
}

/* ---- sessions (under the lock) ----------------------------------------------------- */

/* Room for a session of token `who`: idle ones go; then, when `who` holds
 * per_token sessions, its own least recently used one (with no call running)
 * goes, never another token's (issue 24: a viewer's 1,000 sessions evicted an
 * operator's). False when there is no room (every slot of `who` is busy, or
 * the server is full of sessions that are not idle). */
static bool s_evict (bmq_http_mcp_t *self, const char *who)
{
    int64_t now = bmq_mono_ms ();
    zlistx_t *old = zlistx_new ();
    s_session_t *lru = NULL;
    size_t mine = 0;
    for (s_session_t *s = zhashx_first (self->sessions); s; s = zhashx_next (self->sessions)) {
        if (now - s->last_used > SESSION_IDLE_MS && !zlistx_size (s->streams)) { zlistx_add_end (old, s->id); continue; }
        if (strcmp (s->state.who, who)) continue;
        mine++;
        if (!zlistx_size (s->streams) && (!lru || s->last_used < lru->last_used)) lru = s;
    }
    for (char *id = zlistx_first (old); id; id = zlistx_next (old)) zhashx_delete (self->sessions, id);
    zlistx_destroy (&old);
    if (mine >= (size_t) self->per_token) {
        if (!lru) return false;
        bmq_debug ("MCP session %.8s… of %s closed: the token opened more than %d (http.mcp_sessions_per_token)", lru->id, who,
                   self->per_token);
        zhashx_delete (self->sessions, lru->id);
    }
    return zhashx_size (self->sessions) < MAX_SESSIONS;
}

static s_session_t *s_session_new (bmq_http_mcp_t *self, const char *who)
{
    if (!s_evict (self, who)) return NULL;
    s_session_t *s = calloc (1, sizeof *s);
    unsigned char bytes[16];
    randombytes_buf (bytes, sizeof bytes);
    sodium_bin2hex (s->id, sizeof s->id, bytes, sizeof bytes);
    bmq_mcp_session_init (&s->state);
    s->last_used = bmq_mono_ms ();
    s->streams = zlistx_new ();
    snprintf (s->state.who, sizeof s->state.who, "%s", who);
    zhashx_insert (self->sessions, s->id, s);
    return s;
}

/* ---- driving a call --------------------------------------------------------------- */

static const char *s_outcome (const json_t *response)
{
    if (json_object_get (response, "error")) return "error";
    return json_is_true (json_object_get (json_object_get (response, "result"), "isError")) ? "error" : "ok";
}

/* Move the call on by at most one slice; what it produced lands in st->out. */
static void s_step (s_stream_t *st)
{
    if (st->over) return;
    if (bmq_http_ctx_stopping (st->ctx)) { st->over = true; return; }   /* the plan goes on: not a cancellation */
    if (atomic_load (&st->cancelled)) {
        bmq_envelope_t *cancel = bmq_mcp_call_cancel (st->call);
        if (cancel && st->bus) bmq_http_bus_send (st->bus, cancel);
        bmq_envelope_destroy (&cancel);
        bmq_http_metrics_tool (bmq_http_ctx_metrics (st->ctx), bmq_mcp_call_tool (st->call), "cancelled");
        st->over = true;
        return;
    }
    pthread_mutex_lock (&st->owner->lock);
    json_t *answer = st->answer;
    st->answer = NULL;
    pthread_mutex_unlock (&st->owner->lock);
    if (answer) {
        bmq_envelope_t *request = NULL;
        st->over = bmq_mcp_call_answer (st->call, answer, st->out, &request);
        json_decref (answer);
        if (request && (!st->bus || bmq_http_bus_send (st->bus, request)))
            bmq_mcp_call_fail (st->call, "the gateway is not reachable", st->out), st->over = true;
        bmq_envelope_destroy (&request);
        if (st->over) {
            json_t *last = json_array_get (st->out, json_array_size (st->out) - 1);
            bmq_http_metrics_tool (bmq_http_ctx_metrics (st->ctx), bmq_mcp_call_tool (st->call), s_outcome (last));
            return;
        }
    }
    int64_t wait = bmq_mcp_call_wakeup (st->call) - bmq_mono_ms ();
    if (wait > SLICE_MS) wait = SLICE_MS;
    if (wait < 0) wait = 0;
    if (bmq_mcp_call_on_bus (st->call) && st->bus) {
        bmq_envelope_t *env = bmq_http_bus_recv (st->bus, bmq_mcp_call_cid (st->call), (int) wait);
        if (env) st->over = bmq_mcp_call_feed (st->call, env, st->out);
        bmq_envelope_destroy (&env);
        bmq_envelope_t *next = st->over ? NULL : bmq_mcp_call_next_request (st->call);     /* generate_3d: its import */
        if (next && (!st->bus || bmq_http_bus_send (st->bus, next)))
            bmq_mcp_call_fail (st->call, "the gateway is not reachable", st->out), st->over = true;
        bmq_envelope_destroy (&next);
    }
    else if (wait) zclock_sleep ((int) wait);
    if (!st->over) st->over = bmq_mcp_call_tick (st->call, bmq_mono_ms (), st->out);
    if (st->over) {
        json_t *last = json_array_get (st->out, json_array_size (st->out) - 1);
        bmq_http_metrics_tool (bmq_http_ctx_metrics (st->ctx), bmq_mcp_call_tool (st->call), s_outcome (last));
    }
}

static void s_stream_free (void *cls)
{
    s_stream_t *st = cls;
    bmq_http_mcp_t *self = st->owner;
    pthread_mutex_lock (&self->lock);
    s_session_t *s = zhashx_lookup (self->sessions, st->session_id);
    if (s) {
        void *handle = zlistx_find (s->streams, st);
        if (handle) zlistx_delete (s->streams, handle);
        if (s->ephemeral && !zlistx_size (s->streams)) zhashx_delete (self->sessions, s->id);
    }
    pthread_mutex_unlock (&self->lock);
    bmq_http_ctx_stream_close (st->ctx, st->who);
    bmq_mcp_call_destroy (&st->call);
    json_decref (st->answer);
    json_decref (st->out);
    free (st->pending);
    free (st);
}

static ssize_t s_stream_read (void *cls, uint64_t pos, char *buf, size_t max)
{
    s_stream_t *st = cls;
    while (st->off == st->len) {
        free (st->pending);
        st->pending = NULL;
        st->len = st->off = 0;
        if (!json_array_size (st->out)) {
            if (st->over) return MHD_CONTENT_READER_END_OF_STREAM;
            s_step (st);
            if (!json_array_size (st->out) && bmq_mono_ms () - st->last_write >= KEEPALIVE_MS) {
                st->pending = strdup (": keepalive\n\n");
                st->len = strlen (st->pending);
                st->last_write = bmq_mono_ms ();
            }
            continue;
        }
        size_t cap = 0, used = 0, i;
        json_t *m;
        json_array_foreach (st->out, i, m) {
            if (st->stateless) bmq_mcp_stateless_result (m);
            char *text = json_dumps (m, BMQ_MCP_JSON_FLAGS);
            size_t n = strlen (text) + 24;
            if (used + n + 1 > cap) { cap = (used + n + 1) * 2; st->pending = realloc (st->pending, cap); }
            used += (size_t) snprintf (st->pending + used, cap - used, "event: message\ndata: %s\n\n", text);
            free (text);
        }
        json_array_clear (st->out);
        st->len = used;
        st->last_write = bmq_mono_ms ();
    }
    size_t n = st->len - st->off < max ? st->len - st->off : max;
    memcpy (buf, st->pending + st->off, n);
    st->off += n;
    return (ssize_t) n;
}

static bool s_accepts (const char *accept, const char *type)
{
    return accept && (strcasestr (accept, type) || strstr (accept, "*/*"));
}

/* A tools/call that runs: as an SSE stream, or waited for and answered as JSON. */
static enum MHD_Result s_run_call (bmq_http_mcp_t *self, bmq_http_req_t *req, s_session_t *session, bmq_mcp_outcome_t *out,
                                   bool sse)
{
    if (sse && !bmq_http_ctx_stream_open (req->ctx, req->who.name)) {
        pthread_mutex_unlock (&self->lock);
        bmq_mcp_call_destroy (&out->call);
        bmq_envelope_destroy (&out->request);
        return s_reply_rpc_error (req, 429, -32000, "Too many event streams for this token (http.streams_per_token): "
                                  "wait for a call to end");
    }
    s_stream_t *st = calloc (1, sizeof *st);
    st->owner = self;
    if (sse) snprintf (st->who, sizeof st->who, "%s", req->who.name);
    st->ctx = req->ctx;
    st->bus = bmq_http_req_bus (req);
    st->call = out->call;
    st->out = json_array ();
    st->last_write = bmq_mono_ms ();
    snprintf (st->session_id, sizeof st->session_id, "%s", session->id);
    bool ephemeral = session->ephemeral;
    st->stateless = session->state.stateless;
    zlistx_add_end (session->streams, st);             /* the caller holds the lock */
    pthread_mutex_unlock (&self->lock);
    if (out->request) {
        if (!st->bus || bmq_http_bus_send (st->bus, out->request)) bmq_mcp_call_fail (st->call, "the gateway is not reachable", st->out);
        bmq_envelope_destroy (&out->request);
    }
    if (sse) {
        struct MHD_Response *resp = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 64 * 1024, s_stream_read, st, s_stream_free);
        MHD_add_response_header (resp, "Content-Type", "text/event-stream");
        MHD_add_response_header (resp, "Cache-Control", "no-cache");
        if (!ephemeral) MHD_add_response_header (resp, "Mcp-Session-Id", st->session_id);
        return bmq_http_reply (req, 200, resp);
    }
    while (!st->over) s_step (st);
    json_t *last = json_array_get (st->out, json_array_size (st->out) - 1);
    if (st->stateless && last) bmq_mcp_stateless_result (last);
    enum MHD_Result rc = last && json_object_get (last, "id")
        ? s_reply_message (req, 200, json_incref (last), ephemeral ? NULL : st->session_id)
        : s_reply_empty (req, 202, NULL);                   /* cancelled: no answer is due */
    s_stream_free (st);
    return rc;
}

/* ---- a call run as a task (2026-07-28, the tasks extension) ---------------------------- */

typedef struct {
    s_stream_t     *st;
    bmq_envelope_t *request;
    char            endpoint[256];
    char            task_id[33];
} s_task_run_t;

/* Drive the call to its end on its own line to the gateway; its steps become
 * the task's statusMessage, its response the task's result. tasks/cancel stops it. */
static void *s_task_thread (void *arg)
{
    s_task_run_t *run = arg;
    s_stream_t *st = run->st;
    bmq_http_mcp_t *self = st->owner;
    bmq_mcp_tasks_t *tasks = bmq_mcp_tasks (self->mcp);
    st->bus = bmq_http_bus_new (run->endpoint);
    if (!st->bus || bmq_http_bus_send (st->bus, run->request)) bmq_mcp_call_fail (st->call, "the gateway is not reachable", st->out);
    bmq_envelope_destroy (&run->request);
    for (;;) {
        size_t i;
        json_t *m;
        json_array_foreach (st->out, i, m) {
            const char *method = json_string_value (json_object_get (m, "method"));
            const char *note = json_string_value (json_object_get (json_object_get (m, "params"), "message"));
            if (method && !strcmp (method, "notifications/progress") && note) bmq_mcp_tasks_note (tasks, run->task_id, note);
            else if (!method && json_object_get (m, "id")) bmq_mcp_tasks_settle (tasks, run->task_id, m);
        }
        json_array_clear (st->out);
        if (st->over) break;
        if (bmq_mcp_tasks_cancelled (tasks, run->task_id)) atomic_store (&st->cancelled, true);
        s_step (st);
    }
    bmq_http_bus_destroy (&st->bus);
    s_stream_free (st);
    free (run);
    atomic_fetch_sub (&self->task_threads, 1);
    return NULL;
}

/* The caller holds the lock; the session is the request's (ephemeral). */
static enum MHD_Result s_run_task (bmq_http_mcp_t *self, bmq_http_req_t *req, s_session_t *session, bmq_mcp_outcome_t *out)
{
    s_stream_t *st = calloc (1, sizeof *st);
    st->owner = self;
    st->ctx = req->ctx;
    st->call = out->call;
    st->out = json_array ();
    st->last_write = bmq_mono_ms ();
    st->stateless = true;
    snprintf (st->session_id, sizeof st->session_id, "%s", session->id);
    zlistx_add_end (session->streams, st);
    s_task_run_t *run = calloc (1, sizeof *run);
    run->st = st;
    run->request = out->request;
    out->request = NULL;
    snprintf (run->endpoint, sizeof run->endpoint, "%s", req->gateway ? req->gateway : "");
    json_t *created = bmq_mcp_tasks_start (bmq_mcp_tasks (self->mcp), session->state.who, run->task_id, sizeof run->task_id);
    pthread_mutex_unlock (&self->lock);
    json_t *response = json_pack ("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", bmq_mcp_call_id (st->call), "result", created);
    atomic_fetch_add (&self->task_threads, 1);
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init (&attr);
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create (&thread, &attr, s_task_thread, run)) {
        atomic_fetch_sub (&self->task_threads, 1);
        bmq_mcp_tasks_settle (bmq_mcp_tasks (self->mcp), run->task_id, NULL);
        bmq_envelope_destroy (&run->request);
        s_stream_free (st);
        free (run);
    }
    pthread_attr_destroy (&attr);
    return s_reply_message (req, 200, response, NULL);
}

/* ---- listen streams: every change to the scene, whoever made it ------------------------ */

/* A stream that tells its subscriptions of each change to the live scene
 * (mcp_watch.h), from the events every executor publishes (the ring behind
 * /api/events): plans and scripts of the CLI, the page, any MCP session.
 *   GET (2025-11-25 and older): the session's standalone stream; its URIs are
 *       the session's subscriptions as they are at each event. One per
 *       session (a new GET ends the old one); resumable (Last-Event-ID).
 *   subscriptions/listen (2026-07-28): the POST's answer stream; its URIs are
 *       the request's resourceSubscriptions, its id tags every notification.
 * Both count in http.streams_per_token, and take at most half of a token's
 * (its tool calls' answer streams keep the rest). A reader that falls so far behind that
 * the ring dropped events it had not read is dropped (it may reconnect: the
 * first read after a resume from a dropped id tells every subscription). */
typedef struct {
    bmq_http_mcp_t  *owner;
    bmq_http_ctx_t  *ctx;
    bmq_sse_ring_t  *ring;
    bmq_mcp_watch_t *watch;
    uint64_t         after;             /* the last ring event read */
    char             session_id[33];    /* GET: the session (its uris are read at each event) */
    unsigned         generation;        /* GET: the session's listen_gen when it opened */
    json_t          *uris;              /* listen: fixed */
    json_t          *subscription_id;   /* listen: the request's id */
    bool             resumed_gap;       /* events were lost before this stream: tell everything once */
    bool             over;
    char            *pending;
    size_t           len, off;
    int64_t          last_write;
    char             who[64];
    int              fd;
} s_listen_t;

#define LISTEN_CHUNK (64u << 10)

/* The URIs to tell now (new), or NULL when the stream should end (its
 * session is gone, or a newer GET replaced it). */
static json_t *s_listen_uris (s_listen_t *l)
{
    if (l->uris) return json_incref (l->uris);
    json_t *uris = NULL;
    pthread_mutex_lock (&l->owner->lock);
    s_session_t *s = zhashx_lookup (l->owner->sessions, l->session_id);
    if (s && s->listen_gen == l->generation) {
        uris = json_array ();
        for (int i = 0; i < s->state.subscriptions; i++) json_array_append_new (uris, json_string (s->state.subscribed[i]));
        s->last_used = bmq_mono_ms ();                  /* a listened-to session is in use */
    }
    pthread_mutex_unlock (&l->owner->lock);
    return uris;
}

static void s_listen_append (s_listen_t *l, const char *id, json_t *msgs, char **text, size_t *used, size_t *cap)
{
    size_t i;
    json_t *m;
    json_array_foreach (msgs, i, m) {
        char *body = json_dumps (m, BMQ_MCP_JSON_FLAGS);
        size_t n = strlen (body) + strlen (id) + 40;
        if (*used + n + 1 > *cap) { *cap = (*used + n + 1) * 2; *text = realloc (*text, *cap); }
        *used += (size_t) snprintf (*text + *used, *cap - *used, "%s%s%sevent: message\ndata: %s\n\n",
                                    *id && !l->uris ? "id: " : "", *id && !l->uris ? id : "", *id && !l->uris ? "\n" : "", body);
        free (body);
    }
    json_array_clear (msgs);
}

/* The ring's SSE text ("id: …\nevent: progress|gap\ndata: {…}\n\n" blocks) into notifications. */
static void s_listen_feed (s_listen_t *l, char *ring_text, const json_t *uris, char **text, size_t *used, size_t *cap)
{
    json_t *msgs = json_array ();
    char *save = NULL;
    for (char *block = strtok_r (ring_text, "\n", &save), *id = "", *event = ""; block; block = strtok_r (NULL, "\n", &save)) {
        if (!strncmp (block, "id: ", 4)) id = block + 4;
        else if (!strncmp (block, "event: ", 7)) event = block + 7;
        else if (!strncmp (block, "data: ", 6)) {
            json_t *change = NULL;
            if (!strcmp (event, "gap")) change = bmq_mcp_watch_unknown ();
            else if (!strcmp (event, "progress")) {
                json_t *data = json_loads (block + 6, 0, NULL);
                change = bmq_mcp_watch_feed (l->watch, data);
                json_decref (data);
            }
            if (change) bmq_mcp_watch_notify (change, uris, l->subscription_id, msgs);
            json_decref (change);
            s_listen_append (l, id, msgs, text, used, cap);
        }
    }
    json_decref (msgs);
}

static ssize_t s_listen_read (void *cls, uint64_t pos, char *buf, size_t max)
{
    (void) pos;
    s_listen_t *l = cls;
    while (l->off == l->len) {
        free (l->pending);
        l->pending = NULL;
        l->len = l->off = 0;
        if (l->over) return MHD_CONTENT_READER_END_OF_STREAM;
        char peek;
        if (l->fd >= 0 && recv (l->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT) == 0) return MHD_CONTENT_READER_END_OF_STREAM;
        json_t *uris = s_listen_uris (l);
        if (!uris) return MHD_CONTENT_READER_END_OF_STREAM;
        char *text = NULL;
        size_t used = 0, cap = 0;
        if (bmq_http_ctx_stopping (l->ctx) || bmq_sse_ring_closed (l->ring)) {
            l->over = true;                     /* 2026-07-28: a listen stream ends with its (empty) result */
            if (l->subscription_id) {
                json_t *end = json_pack ("[{s:s, s:O, s:{s:s, s:{s:O}}}]", "jsonrpc", "2.0", "id", l->subscription_id, "result",
                                         "resultType", "complete", "_meta", "io.modelcontextprotocol/subscriptionId", l->subscription_id);
                s_listen_append (l, "", end, &text, &used, &cap);
                json_decref (end);
            }
        }
        else {
            uint64_t dropped = 0;
            char *ring_text = bmq_sse_ring_next (l->ring, &l->after, NULL, LISTEN_CHUNK, SLICE_MS * 4, &dropped);
            if (dropped && !l->resumed_gap) {
                bmq_warn ("MCP listen stream of %s dropped: it fell %llu events behind (gateway.http_event_buffer)", l->who,
                          (unsigned long long) dropped);
                free (ring_text);
                json_decref (uris);
                return MHD_CONTENT_READER_END_OF_STREAM;
            }
            if (l->resumed_gap) {               /* what was lost before this stream: tell every subscription */
                json_t *all = bmq_mcp_watch_unknown (), *msgs = json_array ();
                char id[BMQ_SSE_ID_MAX + 8];
                bmq_sse_ring_id (l->ring, l->after, id, sizeof id);
                bmq_mcp_watch_notify (all, uris, l->subscription_id, msgs);
                s_listen_append (l, id, msgs, &text, &used, &cap);
                json_decref (msgs);
                json_decref (all);
                l->resumed_gap = false;
            }
            if (ring_text) s_listen_feed (l, ring_text, uris, &text, &used, &cap);
            free (ring_text);
        }
        json_decref (uris);
        if (!used && bmq_mono_ms () - l->last_write >= KEEPALIVE_MS) {
            free (text);
            text = strdup (": keepalive\n\n");
            used = strlen (text);
        }
        if (used) { l->pending = text; l->len = used; l->last_write = bmq_mono_ms (); }
        else free (text);
    }
    size_t n = l->len - l->off < max ? l->len - l->off : max;
    memcpy (buf, l->pending + l->off, n);
    l->off += n;
    return (ssize_t) n;
}

/* A token's listen streams live long: they may hold at most half its event
 * streams (http.streams_per_token), so that its tool calls always find room.
 * Takes a listen slot and a stream slot (false: none left). Under the lock. */
static bool s_listen_slot (bmq_http_mcp_t *self, bmq_http_req_t *req)
{
    const bmq_http_options_t *o = bmq_http_ctx_options (req->ctx);
    intptr_t cap = (o && o->streams_per_token > 0 ? o->streams_per_token : 16) / 2;
    intptr_t open = (intptr_t) zhashx_lookup (self->listening, req->who.name);
    if (open >= (cap < 1 ? 1 : cap) || !bmq_http_ctx_stream_open (req->ctx, req->who.name)) return false;
    zhashx_update (self->listening, req->who.name, (void *) (open + 1));
    return true;
}

static void s_listen_unslot (bmq_http_mcp_t *self, bmq_http_ctx_t *ctx, const char *who)
{
    intptr_t open = (intptr_t) zhashx_lookup (self->listening, who);
    if (open > 1) zhashx_update (self->listening, who, (void *) (open - 1));
    else zhashx_delete (self->listening, who);
    bmq_http_ctx_stream_close (ctx, who);
}

static void s_listen_free (void *cls)
{
    s_listen_t *l = cls;
    pthread_mutex_lock (&l->owner->lock);
    s_session_t *s = l->uris ? NULL : zhashx_lookup (l->owner->sessions, l->session_id);
    if (s && s->listen_gen == l->generation) s->state.listening = false;        /* calls tell their own commits again */
    s_listen_unslot (l->owner, l->ctx, l->who);
    pthread_mutex_unlock (&l->owner->lock);
    bmq_mcp_watch_destroy (&l->watch);
    json_decref (l->uris);
    json_decref (l->subscription_id);
    free (l->pending);
    free (l);
}

/* Open a listen stream (the token's stream slot is taken); `first` (stolen, may be NULL) goes out first. */
static enum MHD_Result s_listen_open (bmq_http_mcp_t *self, bmq_http_req_t *req, s_listen_t *l, json_t *first)
{
    l->owner = self;
    l->ctx = req->ctx;
    l->ring = bmq_http_ctx_events (req->ctx);
    l->watch = bmq_mcp_watch_new ();
    snprintf (l->who, sizeof l->who, "%s", req->who.name);
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info (req->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    l->fd = fd ? fd->connect_fd : -1;
    l->last_write = bmq_mono_ms ();
    size_t used = 0, cap = 0;
    char *text = NULL;
    if (first) {
        json_t *msgs = json_pack ("[o]", first);
        s_listen_append (l, "", msgs, &text, &used, &cap);
        json_decref (msgs);
    }
    else text = strdup (": connected\n\n"), used = strlen (text);
    l->pending = text;
    l->len = used;
    struct MHD_Response *resp = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, LISTEN_CHUNK, s_listen_read, l, s_listen_free);
    MHD_add_response_header (resp, "Content-Type", "text/event-stream");
    MHD_add_response_header (resp, "Cache-Control", "no-cache");
    MHD_add_response_header (resp, "X-Accel-Buffering", "no");
    if (!l->uris) MHD_add_response_header (resp, "Mcp-Session-Id", l->session_id);
    return bmq_http_reply (req, 200, resp);
}

/* GET /mcp: the session's standalone stream (2025-11-25 Streamable HTTP). */
static enum MHD_Result s_get (bmq_http_mcp_t *self, bmq_http_req_t *req)
{
    const char *accept = bmq_http_req_header (req, "Accept"), *sid = bmq_http_req_header (req, "Mcp-Session-Id");
    const char *version = bmq_http_req_header (req, "MCP-Protocol-Version");
    if (version && !strcmp (version, BMQ_MCP_STATELESS_VERSION))      /* 2026-07-28: subscriptions/listen replaces GET */
        return s_reply_empty (req, 405, "POST, DELETE");
    if (!accept || !strcasestr (accept, "text/event-stream"))
        return s_reply_rpc_error (req, 406, -32000, "Not Acceptable: a GET stream is text/event-stream");
    if (!sid) return s_reply_rpc_error (req, 400, -32000, "Bad Request: Mcp-Session-Id header is required (initialize first)");
    bmq_sse_ring_t *ring = bmq_http_ctx_events (req->ctx);
    const char *last = bmq_http_req_header (req, "Last-Event-ID");
    uint64_t after = bmq_sse_ring_last (ring);
    bmq_sse_resume_t resume = last ? bmq_sse_ring_resume (ring, last, &after) : BMQ_SSE_RESUME_SAME;
    if (resume == BMQ_SSE_RESUME_BAD) return s_reply_rpc_error (req, 400, -32000, "Bad Request: Last-Event-ID is not an id this stream sent");
    s_listen_t *l = calloc (1, sizeof *l);
    l->after = resume == BMQ_SSE_RESUME_OTHER ? bmq_sse_ring_last (ring) : after;
    l->resumed_gap = resume == BMQ_SSE_RESUME_OTHER || (last && after + 1 < bmq_sse_ring_first (ring));
    pthread_mutex_lock (&self->lock);
    s_session_t *s = zhashx_lookup (self->sessions, sid);
    if (!s || strcmp (s->state.who, req->who.name) || s->state.stateless) {
        pthread_mutex_unlock (&self->lock);
        free (l);
        return s_reply_rpc_error (req, 404, -32001, "Session not found: initialize a new session");
    }
    if (!s_listen_slot (self, req)) {
        pthread_mutex_unlock (&self->lock);
        free (l);
        return s_reply_rpc_error (req, 429, -32000, "Too many listening streams for this token (half of http.streams_per_token): "
                                  "close one first");
    }
    l->generation = ++s->listen_gen;                    /* an older GET of the session ends */
    s->state.listening = true;
    s->last_used = bmq_mono_ms ();
    snprintf (l->session_id, sizeof l->session_id, "%s", s->id);
    pthread_mutex_unlock (&self->lock);
    if (l->resumed_gap) l->after = bmq_sse_ring_last (ring);
    return s_listen_open (self, req, l, NULL);
}

/* ---- POST / GET / DELETE -------------------------------------------------------------- */

/* A header value without the optional whitespace around it (RFC 9110 5.5) equals want. */
static bool s_header_is (const char *value, const char *want)
{
    if (!value || !want) return false;
    while (*value == ' ' || *value == '\t') value++;
    size_t n = strlen (value);
    while (n && (value[n - 1] == ' ' || value[n - 1] == '\t')) n--;
    return n == strlen (want) && !strncmp (value, want, n);
}

static const char *s_req_header (void *req, const char *name) { return bmq_http_req_header (req, name); }

/* subscriptions/listen (2026-07-28): the POST's answer is the stream. */
static enum MHD_Result s_listen_stateless (bmq_http_mcp_t *self, bmq_http_req_t *req, bmq_mcp_outcome_t *out)
{
    json_t *ack = out->listen;
    const char *accept = bmq_http_req_header (req, "Accept");
    json_t *sub_id = json_object_get (json_object_get (json_object_get (ack, "params"), "_meta"), "io.modelcontextprotocol/subscriptionId");
    if (!accept || !strcasestr (accept, "text/event-stream")) {
        json_t *e = bmq_mcp_error (sub_id, -32600, "subscriptions/listen answers as a stream: accept text/event-stream");
        json_decref (ack);
        return s_reply_message (req, 400, e, NULL);
    }
    pthread_mutex_lock (&self->lock);
    bool room = s_listen_slot (self, req);
    pthread_mutex_unlock (&self->lock);
    if (!room) {
        json_t *e = bmq_mcp_error (sub_id, -32000, "Too many listening streams for this token (half of http.streams_per_token): "
                                   "close one first");
        json_decref (ack);
        return s_reply_message (req, 429, e, NULL);
    }
    s_listen_t *l = calloc (1, sizeof *l);
    l->subscription_id = json_incref (sub_id);
    l->uris = json_object_get (json_object_get (json_object_get (ack, "params"), "notifications"), "resourceSubscriptions");
    l->uris = l->uris ? json_incref (l->uris) : json_array ();
    l->after = bmq_sse_ring_last (bmq_http_ctx_events (req->ctx));
    return s_listen_open (self, req, l, ack);
}

/* 2026-07-28 (SEP-2575): one request, no session; who asks is in its _meta.
 * Mcp-Method and Mcp-Name must say what the body says (SEP-2243). */
static enum MHD_Result s_post_stateless (bmq_http_mcp_t *self, bmq_http_req_t *req, json_t *msg, const char *version, const char *accept)
{
    const char *method = json_string_value (json_object_get (msg, "method"));
    json_t *id = json_object_get (msg, "id"), *params = json_object_get (msg, "params");
    const char *name = NULL;
    if (method && (!strcmp (method, "tools/call") || !strcmp (method, "prompts/get"))) name = json_string_value (json_object_get (params, "name"));
    else if (method && !strcmp (method, "resources/read")) name = json_string_value (json_object_get (params, "uri"));
    else if (method && (!strcmp (method, "tasks/get") || !strcmp (method, "tasks/update") || !strcmp (method, "tasks/cancel")))
        name = json_string_value (json_object_get (params, "taskId"));
    json_t *error = NULL;
    int status = 0;
    if (!bmq_mcp_is_request (msg)) {                    /* notifications and answers need a session */
        json_decref (msg);
        return s_reply_empty (req, 202, NULL);
    }
    if (!s_header_is (bmq_http_req_header (req, "Mcp-Method"), method)
        || (name && !s_header_is (bmq_http_req_header (req, "Mcp-Name"), name))) {
        error = bmq_mcp_error (id, -32020, name ? "Header mismatch: Mcp-Method and Mcp-Name must repeat the body's method and name"
                                                : "Header mismatch: Mcp-Method must repeat the body's method");
        status = 400;
    }
    char why[300];
    if (!error && bmq_mcp_param_headers_check (self->mcp, msg, s_req_header, req, why, sizeof why)) {
        error = bmq_mcp_error (id, -32020, why);
        status = 400;
    }
    bmq_mcp_session_t state;
    bmq_mcp_session_init (&state);
    if (!error) status = bmq_mcp_stateless_open (&state, msg, version, &error);
    if (error) {
        json_decref (msg);
        return s_reply_message (req, status, error, NULL);
    }
    pthread_mutex_lock (&self->lock);
    s_session_t *session = s_session_new (self, req->who.name);
    if (!session) {
        pthread_mutex_unlock (&self->lock);
        json_decref (msg);
        return s_reply_rpc_error (req, 429, -32000, "Too many MCP requests in flight for this token");
    }
    snprintf (state.who, sizeof state.who, "%s", req->who.name);
    state.role = req->who.role;
    state.can_ask = false;                              /* 2026-07-28: no requests of ours on a response stream */
    session->state = state;
    session->ephemeral = true;
    bmq_mcp_outcome_t out;
    bmq_mcp_handle (self->mcp, &session->state, msg, &out);
    json_decref (msg);
    json_decref (out.answer);
    json_decref (out.cancel_id);
    if (out.call && out.as_task) return s_run_task (self, req, session, &out);
    if (out.call) return s_run_call (self, req, session, &out, accept && strcasestr (accept, "text/event-stream"));
    zhashx_delete (self->sessions, session->id);
    pthread_mutex_unlock (&self->lock);
    if (out.listen) return s_listen_stateless (self, req, &out);
    int64_t code = json_integer_value (json_object_get (json_object_get (out.response, "error"), "code"));
    status = code == -32601 ? 404 : code == -32021 || code == -32020 || code == -32022 ? 400 : 200;
    if (!out.response) return s_reply_empty (req, 202, NULL);
    bmq_mcp_stateless_result (out.response);
    return s_reply_message (req, status, out.response, NULL);
}

static enum MHD_Result s_post (bmq_http_mcp_t *self, bmq_http_req_t *req)
{
    const char *accept = bmq_http_req_header (req, "Accept"), *type = bmq_http_req_header (req, "Content-Type");
    if (accept && !s_accepts (accept, "application/json") && !s_accepts (accept, "text/event-stream"))
        return s_reply_rpc_error (req, 406, -32000, "Not Acceptable: accept application/json and text/event-stream");
    if (type && strncasecmp (type, "application/json", 16))
        return s_reply_rpc_error (req, 415, -32000, "Unsupported Media Type: send application/json");
    json_error_t jerr;
    json_t *msg = json_loadb (req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!msg) {
        char why[300];
        snprintf (why, sizeof why, "Parse error: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
        return s_reply_rpc_error (req, 400, -32700, why);
    }
    if (!json_is_object (msg)) {
        json_decref (msg);
        return s_reply_rpc_error (req, 400, -32600, "Invalid Request: send one JSON-RPC message per POST (no batches)");
    }
    const char *sid = bmq_http_req_header (req, "Mcp-Session-Id");
    const char *version = bmq_http_req_header (req, "MCP-Protocol-Version");
    bool init = bmq_mcp_is_initialize (msg);
    if (!sid && ((version && !bmq_mcp_session_version (version)) || (!version && bmq_mcp_request_version (msg))))
        return s_post_stateless (self, req, msg, version, accept);
    if (!init && version && !bmq_mcp_version_supported (version)) {
        json_decref (msg);
        return s_reply_rpc_error (req, 400, -32000, "Bad Request: unsupported MCP-Protocol-Version (supported: 2025-11-25, 2025-06-18, 2025-03-26)");
    }
    if (!init && !sid) {
        json_decref (msg);
        return s_reply_rpc_error (req, 400, -32000, "Bad Request: Mcp-Session-Id header is required (initialize first)");
    }
    pthread_mutex_lock (&self->lock);
    s_session_t *session = init ? s_session_new (self, req->who.name) : zhashx_lookup (self->sessions, sid);
    if (!session && init) {
        pthread_mutex_unlock (&self->lock);
        json_decref (msg);
        return s_reply_rpc_error (req, 429, -32000, "Too many MCP sessions: this token's sessions are all running calls "
                                  "(http.mcp_sessions_per_token), or the server holds its most; close one (DELETE) first");
    }
    if (!session) {
        pthread_mutex_unlock (&self->lock);
        json_decref (msg);
        return s_reply_rpc_error (req, 404, -32001, "Session not found: initialize a new session");
    }
    if (init) {
        snprintf (session->state.who, sizeof session->state.who, "%s", req->who.name);
        session->state.role = req->who.role;
    }
    else if (strcmp (session->state.who, req->who.name)) {      /* a session is its token's: another token does not find it */
        pthread_mutex_unlock (&self->lock);
        json_decref (msg);
        return s_reply_rpc_error (req, 404, -32001, "Session not found: initialize a new session");
    }
    else session->state.role = req->who.role;                      /* the role as the keys dir says now */
    session->last_used = bmq_mono_ms ();
    session->state.can_ask = accept && strcasestr (accept, "text/event-stream");
    bmq_mcp_outcome_t out;
    bmq_mcp_handle (self->mcp, &session->state, msg, &out);
    if (out.answer) {                   /* the answer to a question a call asked: hand it to that call's stream */
        json_t *rid = json_object_get (out.answer, "id");
        for (s_stream_t *st = zlistx_first (session->streams); st; st = zlistx_next (session->streams))
            if (bmq_mcp_call_awaits (st->call, rid) && !st->answer) { st->answer = json_incref (out.answer); break; }
        json_decref (out.answer);
    }
    if (init) bmq_info ("MCP session %.8s… opened by %s (protocol %s, token %s, role %s%s)", session->id, session->state.client,
                        session->state.version, req->who.name, bmq_role_name (req->who.role),
                        session->state.elicitation ? ", elicitation" : "");
    if (out.cancel_id) {
        for (s_stream_t *st = zlistx_first (session->streams); st; st = zlistx_next (session->streams))
            if (json_equal ((json_t *) bmq_mcp_call_id (st->call), out.cancel_id)) atomic_store (&st->cancelled, true);
        json_decref (out.cancel_id);
    }
    json_decref (out.listen);                        /* a session's client has GET instead */
    json_decref (msg);
    if (out.call) return s_run_call (self, req, session, &out, accept && strcasestr (accept, "text/event-stream"));
    char id[33];
    snprintf (id, sizeof id, "%s", session->id);
    pthread_mutex_unlock (&self->lock);
    if (!out.response) return s_reply_empty (req, 202, NULL);
    return s_reply_message (req, 200, out.response, id);
}

enum MHD_Result bmq_http_mcp_handle (bmq_http_mcp_t *self, bmq_http_req_t *req)
{
    if (!strcmp (req->method, "POST")) return s_post (self, req);
    if (!strcmp (req->method, "DELETE")) {
        const char *sid = bmq_http_req_header (req, "Mcp-Session-Id");
        if (!sid) return s_reply_rpc_error (req, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
        pthread_mutex_lock (&self->lock);
        s_session_t *found = zhashx_lookup (self->sessions, sid);
        bool known = found && !strcmp (found->state.who, req->who.name);
        if (known) {
            s_session_t *s = found;
            for (s_stream_t *st = zlistx_first (s->streams); st; st = zlistx_next (s->streams)) atomic_store (&st->cancelled, true);
            zhashx_delete (self->sessions, sid);
        }
        pthread_mutex_unlock (&self->lock);
        return known ? s_reply_empty (req, 200, NULL) : s_reply_rpc_error (req, 404, -32001, "Session not found");
    }
    if (!strcmp (req->method, "GET")) return s_get (self, req);
    return s_reply_empty (req, 405, "GET, POST, DELETE");
}
