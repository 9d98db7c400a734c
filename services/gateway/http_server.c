/* http_server — libmicrohttpd daemon, access checks, bodies, dispatch through the route table (http_routes.h).
 * What the route handlers share (plans, events, metrics, MCP, streams) is their context (http_ctx.c). */
#include "http_server.h"
#include "audit_tally.h"
#include "audit_client.h"
#include "mcp_tools.h"
#include "http_access.h"
#include "http_bus.h"
#include "http_ctx.h"
#include "http_events.h"
#include "http_feed.h"
#include "http_mcp.h"
#include "http_metrics.h"
#include "http_plans.h"
#include "http_routes.h"
#include "log.h"
#include "peer.h"
#include "sse_ring.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define REFUSALS_KEPT 1000          /* refusals waiting for the audit; more are only logged */
#define MAX_CONNS_TRACKED 8192
#define REAP_MS       100           /* how often headers that never finish are looked for */
#define KEEPALIVE_IDLE_MS 15000     /* a kept-alive connection may idle this long for its next request */

typedef struct s_conn_t s_conn_t;
struct s_conn_t {                           /* one connection (its thread) */
    bmq_http_bus_t *bus;
    int             fd;
    struct sockaddr_storage peer;           /* who it was at connect: the fd is checked to be still theirs */
    int64_t         waiting_since;          /* for a request's headers (monotonic ms); 0 while one is served */
    int64_t         deadline;               /* they must be complete by then (a kept-alive connection idles longer) */
    bool            dropped;                /* shut down for taking too long, or to make room */
    s_conn_t       *prev, *next;            /* the server's list, oldest first */
};

struct bmq_http_server_t {
    bmq_http_options_t  opts;
    char               *bind, *token, *origins, *endpoint;
    struct MHD_Daemon  *daemon;
    int                 port;
    char                url[320];
    bmq_http_access_t  *access;
    bmq_http_ctx_t     *ctx;                /* what the route handlers share (http_ctx.h) */
    bmq_http_auth_t    *auth;               /* the context's */
    pthread_mutex_t     refusals_lock;
    json_t             *refusals;           /* not yet audited */
    size_t              refusals_dropped;
    bmq_http_metrics_t *metrics;            /* the context's */
    atomic_bool         stopping;
    pthread_mutex_t     conns_lock;         /* connections, for floods (below) */
    s_conn_t           *conns_head, *conns_tail;
    size_t              nconns, nwaiting;
    size_t              dropped_slow, dropped_room;
    pthread_t           reaper;
    bool                reaper_running;
};


typedef struct {                            /* one request (MHD's req_cls) */
    bmq_http_req_t req;
    const bmq_http_route_t *row;            /* its route (NULL: 404 or 405) */
    size_t         max_body;                /* the route's cap, or the server's */
    char          *body;
    size_t         len, cap;
    bool           too_large;
} s_request_t;

/* ---- accessors ---------------------------------------------------------------- */

int         bmq_http_server_port (const bmq_http_server_t *self) { return self->port; }
const char *bmq_http_server_url (const bmq_http_server_t *self) { return self->url; }

/* ---- refusals, for the audit ------------------------------------------------------ */

static void s_refused (bmq_http_server_t *self, bmq_http_req_t *req, int status, const char *code, const char *why)
{
    const char *agent = bmq_http_req_header (req, "User-Agent");
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info (req->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    char peer[64] = "?";
    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET) inet_ntop (AF_INET, &((const struct sockaddr_in *) sa)->sin_addr, peer, sizeof peer);
        else if (sa->sa_family == AF_INET6) inet_ntop (AF_INET6, &((const struct sockaddr_in6 *) sa)->sin6_addr, peer, sizeof peer);
    }
    json_t *rec = json_pack ("{s:s, s:s, s:i, s:s, s:s, s:s, s:I}", "method", req->method, "path", req->route ? req->route : "other",
                             "status", status, "code", code, "reason", why, "peer", peer, "ts", (json_int_t) bmq_now_ms ());
    if (req->who.role != BMQ_ROLE_NONE)
        json_object_set_new (rec, "who", json_pack ("{s:s, s:s}", "name", req->who.name, "role", bmq_role_name (req->who.role)));
    if (agent) json_object_set_new (rec, "user_agent", json_stringn (agent, strnlen (agent, 200)));
    bmq_warn ("http: refused %s %s from %s%s%s: %d %s", req->method, req->route ? req->route : "other", peer,
              req->who.role != BMQ_ROLE_NONE ? " token " : "", req->who.role != BMQ_ROLE_NONE ? req->who.name : "", status, code);
    pthread_mutex_lock (&self->refusals_lock);       /* one aggregate per peer per second (audit_tally.h) */
    bmq_audit_tally_add (self->refusals, rec, REFUSALS_KEPT, &self->refusals_dropped);
    pthread_mutex_unlock (&self->refusals_lock);
    json_decref (rec);
}

json_t *bmq_http_server_take_refusals (bmq_http_server_t *self)
{
    pthread_mutex_lock (&self->refusals_lock);
    json_t *taken = self->refusals;
    self->refusals = json_array ();
    pthread_mutex_unlock (&self->refusals_lock);
    return taken;
}

void bmq_http_server_audit (bmq_http_server_t *self, bmq_audit_t *audit)
{
    if (!self || !audit) return;
    /* the seconds that are over: final counts; and what did not fit, counted (never silent) */
    pthread_mutex_lock (&self->refusals_lock);
    json_t *taken = bmq_audit_tally_take_complete (self->refusals, bmq_now_ms ());
    size_t dropped = self->refusals_dropped;
    self->refusals_dropped = 0;
    pthread_mutex_unlock (&self->refusals_lock);
    if (dropped)
        bmq_audit_record (audit, NULL, "http.refused.dropped", json_pack ("{s:I, s:s}", "count", (json_int_t) dropped,
                          "reason", "more peers were refused in one interval than aggregates are kept"));
    size_t i;
    json_t *rec;
    json_array_foreach (taken, i, rec) {
        char cid[48];
        snprintf (cid, sizeof cid, "http-refused-%lld-%zu", (long long) bmq_now_ms (), i);
        bmq_audit_record (audit, cid, "http.refused", json_incref (rec));
    }
    json_decref (taken);
}
/* ---- floods: headers that never finish, and room for the rest ---------------------
 * Every connection is on a list with the time it started waiting for a
 * request's headers (at connect, and again after each answer on a kept-alive
 * connection). A new connection whose first request's headers are not all
 * in after http.header_timeout_ms is shut down (a slow-loris sends a byte now
 * and then, so this is a total, not an idle time; a kept-alive connection gets
 * KEEPALIVE_IDLE_MS for its next request, so clients reusing it rarely race
 * our close); and when http.pending_connections are waiting, the oldest of them
 * is shut down for each new one. Connections being served (authenticated
 * streams included, capped per token) are never touched, so /healthz and
 * authenticated requests keep room: a flood of half-sent requests only
 * crowds itself. */

static void s_conn_drop (bmq_http_server_t *self, s_conn_t *c, bool slow)      /* conns_lock held */
{
    if (c->dropped || c->fd < 0) return;
    c->dropped = true;
    /* MHD may have closed this fd a moment before telling us, and a new connection got the number */
    struct sockaddr_storage now;
    socklen_t len = sizeof now;
    if (getpeername (c->fd, (struct sockaddr *) &now, &len) || memcmp (&now, &c->peer, len < sizeof now ? len : sizeof now)) return;
    shutdown (c->fd, SHUT_RDWR);            /* its thread sees the end, and MHD closes it */
    if (slow) self->dropped_slow++;
    else self->dropped_room++;
}

static void s_conn_waiting (bmq_http_server_t *self, s_conn_t *c, bool waiting)
{
    pthread_mutex_lock (&self->conns_lock);
    if (waiting && !c->waiting_since) {
        c->waiting_since = bmq_mono_ms ();
        int idle = self->opts.header_timeout_ms > KEEPALIVE_IDLE_MS ? self->opts.header_timeout_ms : KEEPALIVE_IDLE_MS;
        c->deadline = c->waiting_since + idle;
        self->nwaiting++;
    }
    else if (!waiting && c->waiting_since) { c->waiting_since = 0; self->nwaiting--; }
    pthread_mutex_unlock (&self->conns_lock);
}

static void *s_reaper (void *arg)
{
    bmq_http_server_t *self = arg;
    int timeout = self->opts.header_timeout_ms;
    while (!atomic_load (&self->stopping)) {
        usleep (REAP_MS * 1000);
        int64_t now = bmq_mono_ms ();
        size_t slow = 0;
        pthread_mutex_lock (&self->conns_lock);
        for (s_conn_t *c = self->conns_head; c; c = c->next)
            if (c->waiting_since && !c->dropped && now > c->deadline) { s_conn_drop (self, c, true); slow++; }
        pthread_mutex_unlock (&self->conns_lock);
        if (slow) bmq_debug ("http: dropped %zu connection(s) whose request headers did not come within %d ms", slow, timeout);
    }
    return NULL;
}

/* ---- libmicrohttpd callbacks ------------------------------------------------------ */

static void s_notify_connection (void *cls, struct MHD_Connection *conn, void **socket_context,
                                 enum MHD_ConnectionNotificationCode toe)
{
    bmq_http_server_t *self = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        s_conn_t *c = calloc (1, sizeof (s_conn_t));
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info (conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        c->fd = fd ? fd->connect_fd : -1;
        socklen_t plen = sizeof c->peer;
        if (c->fd >= 0 && getpeername (c->fd, (struct sockaddr *) &c->peer, &plen)) c->fd = -1;
        c->waiting_since = bmq_mono_ms ();
        c->deadline = c->waiting_since + self->opts.header_timeout_ms;
        pthread_mutex_lock (&self->conns_lock);
        c->prev = self->conns_tail;
        if (self->conns_tail) self->conns_tail->next = c;
        else self->conns_head = c;
        self->conns_tail = c;
        self->nconns++;
        self->nwaiting++;
        /* room for the rest: the oldest connections still sending headers go */
        for (s_conn_t *o = self->conns_head; o && self->nwaiting > (size_t) self->opts.pending_connections; o = o->next)
            if (o != c && o->waiting_since && !o->dropped) { s_conn_drop (self, o, false); self->nwaiting--; o->waiting_since = 0; }
        pthread_mutex_unlock (&self->conns_lock);
        *socket_context = c;
    }
    else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        s_conn_t *c = *socket_context;
        pthread_mutex_lock (&self->conns_lock);
        if (c->waiting_since) self->nwaiting--;
        if (c->prev) c->prev->next = c->next;
        else self->conns_head = c->next;
        if (c->next) c->next->prev = c->prev;
        else self->conns_tail = c->prev;
        self->nconns--;
        pthread_mutex_unlock (&self->conns_lock);
        bmq_http_bus_destroy (&c->bus);
        free (c);
        *socket_context = NULL;
    }
}

static void s_completed (void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe)
{
    bmq_http_server_t *self = cls;
    s_request_t *r = *req_cls;
    if (!r) return;
    if (r->req.conn_state) s_conn_waiting (self, r->req.conn_state, true);     /* kept alive: the next request's headers */
    bmq_http_metrics_request (self->metrics, r->req.route, r->req.method, r->req.status ? r->req.status : 499,
                              (bmq_mono_us () - r->req.started_us) / 1e6);
    free (r->body);
    free (r);
    *req_cls = NULL;
}

static enum MHD_Result s_preflight (bmq_http_req_t *req)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer (0, "", MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header (resp, "Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
    MHD_add_response_header (resp, "Access-Control-Allow-Headers",
                             "Content-Type, Authorization, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID");
    MHD_add_response_header (resp, "Access-Control-Max-Age", "600");
    return bmq_http_reply (req, 204, resp);
}

/* A person opening the page without a session gets words, not JSON. */
static const char s_signin_page[] =
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>blendmq: sign in</title></head>"
    "<body><main><h1>blendmq</h1><p>This page needs a sign-in link. On the machine running blendmq, run</p>"
    "<pre>blendmq web</pre><p>and open the address it prints (it carries your token), or add "
    "<code>--open</code> to open it in your browser.</p></main></body></html>\n";

static enum MHD_Result s_unauthorized (bmq_http_server_t *self, bmq_http_req_t *req, const char *why)
{
    s_refused (self, req, 401, "unauthorized", why);
    const char *accept = bmq_http_req_header (req, "Accept");
    if (!strcmp (req->url, "/") && !strcmp (req->method, "GET") && accept && strstr (accept, "text/html")) {
        struct MHD_Response *page = MHD_create_response_from_buffer (sizeof s_signin_page - 1, (void *) s_signin_page,
                                                                     MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header (page, "Content-Type", "text/html; charset=utf-8");
        MHD_add_response_header (page, "WWW-Authenticate", "Bearer realm=\"blendmq\"");
        return bmq_http_reply (req, 401, page);
    }
    char message[600];
    snprintf (message, sizeof message, "%s. Send \"Authorization: Bearer TOKEN\" with a token from the keys dir "
              "(<run dir>/keys/NAME.token), or open the URL `blendmq web` prints (it carries a token).", why);
    struct MHD_Response *resp = bmq_http_json_response (json_pack ("{s:{s:s, s:s}}", "error", "code", "unauthorized", "message", message));
    MHD_add_response_header (resp, "WWW-Authenticate", "Bearer realm=\"blendmq\"");
    return bmq_http_reply (req, 401, resp);
}

/* GET /?token=T or /?code=C: a session for the page, in a cookie, and back to
 * / without the token or code in the address. A code is good once. */
static enum MHD_Result s_exchange (bmq_http_server_t *self, bmq_http_req_t *req, const char *token, const char *code)
{
    char sid[BMQ_HTTP_SESSION_MAX + 1];
    if (token && !bmq_http_auth_session_new (self->auth, token, sid, sizeof sid))
        return s_unauthorized (self, req, "the token in the address is not valid (wrong, or revoked)");
    if (!token && !bmq_http_auth_code_take (self->auth, code, sid, sizeof sid))
        return s_unauthorized (self, req, "the sign-in code in the address is not valid (used already, expired, or wrong: "
                                          "run `blendmq web --open` again)");
    char cookie[BMQ_HTTP_SESSION_MAX + 120];
    /* __Host-: Secure, Path=/ and no Domain, so no other origin's cookie can shadow it */
    snprintf (cookie, sizeof cookie, BMQ_HTTP_SESSION_COOKIE "=%s; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200", sid);
    sodium_memzero (sid, sizeof sid);
    struct MHD_Response *resp = MHD_create_response_from_buffer (0, "", MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header (resp, "Set-Cookie", cookie);
    MHD_add_response_header (resp, "Location", "/");
    MHD_add_response_header (resp, "Referrer-Policy", "no-referrer");
    sodium_memzero (cookie, sizeof cookie);
    return bmq_http_reply (req, 303, resp);
}

/* Who sent the request: a bearer token, else the page's session cookie. */
static bool s_identify (bmq_http_server_t *self, bmq_http_req_t *req, const char **why)
{
    const char *authorization = bmq_http_req_header (req, "Authorization");
    if (authorization) {
        if (strncasecmp (authorization, "Bearer ", 7)) { *why = "only bearer tokens are accepted"; return false; }
        if (bmq_http_auth_token (self->auth, authorization + 7, &req->who)) return true;
        *why = "the bearer token is not valid (wrong, or revoked)";
        return false;
    }
    const char *sid = MHD_lookup_connection_value (req->conn, MHD_COOKIE_KIND, BMQ_HTTP_SESSION_COOKIE);
    if (sid) {
        if (bmq_http_auth_session (self->auth, sid, &req->who)) { req->session = sid; return true; }
        *why = "the page's session has expired or its token was revoked";
        return false;
    }
    *why = "a token is required";
    return false;
}

static enum MHD_Result s_too_large (bmq_http_server_t *self, s_request_t *r)
{
    bool own = r->max_body < self->opts.max_body;
    return bmq_http_reply_error (&r->req, 413, "too_large", "the request body is larger than %zu bytes (%s)", r->max_body,
                                 own ? "this route's cap: docs/http-routes.md" : "gateway.http_max_body_kb");
}

/* A path whose rows take other methods: 405 with the methods they take. */
static enum MHD_Result s_not_allowed (bmq_http_req_t *req)
{
    char allow[64];
    bmq_http_route_allow (req->route, allow, sizeof allow);
    json_t *body = json_pack ("{s:{s:s, s:s, s:s}}", "error", "code", "method_not_allowed", "message",
                              "this route does not accept that method", "allow", allow);
    struct MHD_Response *resp = bmq_http_json_response (body);
    MHD_add_response_header (resp, "Allow", allow);
    return bmq_http_reply (req, 405, resp);
}

/* First call for a request: checks that need no body. MHD_YES to read on, or an answer. */
static enum MHD_Result s_begin (bmq_http_server_t *self, s_request_t *r, bool *answered)
{
    bmq_http_req_t *req = &r->req;
    const char *origin = bmq_http_req_header (req, "Origin");
    const char *code, *message;
    int status = bmq_http_access_check (self->access, bmq_http_req_header (req, "Host"), origin, NULL, false, &code, &message);
    *answered = true;
    if (status) {
        s_refused (self, req, status, code, message);
        return bmq_http_reply_error (req, status, code, "%s", message);
    }
    if (origin) req->origin = origin;
    if (!strcmp (req->method, "OPTIONS")) return s_preflight (req);
    bool page_get = !strcmp (req->url, "/") && !strcmp (req->method, "GET");
    const char *page_token = page_get ? bmq_http_req_query (req, "token") : NULL;
    const char *page_code = page_get ? bmq_http_req_query (req, "code") : NULL;
    if (page_token || page_code) return s_exchange (self, req, page_token, page_code);
    bool reads = !strcmp (req->method, "GET") || !strcmp (req->method, "HEAD");
    bmq_role_t need = bmq_http_route_role (req->method, req->url);
    if (need != BMQ_ROLE_NONE) {
        const char *why = NULL;
        if (!s_identify (self, req, &why)) return s_unauthorized (self, req, why);
        if (!bmq_role_allows (req->who.role, need)) {
            char text[300];
            snprintf (text, sizeof text, "%s %s needs role %s; the token %s has role %s", req->method, req->route, bmq_role_name (need),
                      req->who.name, bmq_role_name (req->who.role));
            s_refused (self, req, 403, "forbidden", text);
            json_t *body = json_pack ("{s:{s:s, s:s, s:s, s:s}}", "error", "code", "forbidden", "message", text,
                                      "needs_role", bmq_role_name (need), "role", bmq_role_name (req->who.role));
            return bmq_http_reply_json (req, 403, body);
        }
        /* A state-changing request must be one a browser preflights when it comes
         * from another origin: a JSON body (or our own header), never a "simple"
         * request (a form, or fetch no-cors with a text or Blob body). */
        if (!reads && !bmq_http_req_header (req, "Authorization")) {     /* a bearer token is a header no page sends unasked */
            const char *type = bmq_http_req_header (req, "Content-Type");
            bool json = type && !strncasecmp (type, "application/json", 16) && (!type[16] || type[16] == ';' || type[16] == ' ');
            if (!json && !bmq_http_req_header (req, BMQ_HTTP_CSRF_HEADER)) {
                s_refused (self, req, 415, "unsupported_media_type", "a state-changing request without Content-Type: application/json");
                return bmq_http_reply_error (req, 415, "unsupported_media_type", "send the body as Content-Type: application/json "
                                             "(every request that changes something must; an empty body is {})");
            }
        }
        /* the page's session: a confirmation (a person applying a script live) also needs the
         * session's nonce, which only a page of this origin could read (GET /api/whoami) */
        if (req->session && !reads && r->row && (r->row->flags & BMQ_ROUTE_PERSON)
            && !bmq_http_auth_csrf_ok (self->auth, req->session, bmq_http_req_header (req, BMQ_HTTP_CSRF_HEADER))) {
            s_refused (self, req, 403, "csrf", "a confirmation from the page without the session's nonce");
            return bmq_http_reply_error (req, 403, "csrf", "this confirmation lacks the page's nonce (header " BMQ_HTTP_CSRF_HEADER
                                         "): reload the page and confirm there");
        }
    }
    const char *length = bmq_http_req_header (req, "Content-Length");
    if (length && strtoull (length, NULL, 10) > r->max_body) return s_too_large (self, r);
    /* a JSON route: the body says it is JSON (or says nothing) */
    const char *type = bmq_http_req_header (req, "Content-Type");
    if (r->row && r->row->body == BMQ_BODY_JSON && type && strncasecmp (type, "application/json", 16))
        return bmq_http_reply_error (req, 415, "unsupported_media_type", "send the body as application/json");
    *answered = false;
    return MHD_YES;
}

static enum MHD_Result s_access (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
    bmq_http_server_t *self = cls;
    s_request_t *r = *req_cls;
    if (!r) {
        r = calloc (1, sizeof *r);
        *req_cls = r;
        r->req = (bmq_http_req_t) { .ctx = self->ctx, .conn = conn, .method = method, .url = url,
                                    .gateway = self->endpoint, .started_us = bmq_mono_us () };
        r->row = bmq_http_route_find (method, url, &r->req.route, &r->req.param, &r->req.param_len);
        if (!r->req.route) r->req.route = "other";
        r->max_body = r->row && r->row->max_body_kb && r->row->max_body_kb * 1024 < self->opts.max_body
                    ? r->row->max_body_kb * 1024 : self->opts.max_body;
        const union MHD_ConnectionInfo *info = MHD_get_connection_info (conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        r->req.conn_state = info ? info->socket_context : NULL;
        if (r->req.conn_state) r->req.bus_slot = &((s_conn_t *) r->req.conn_state)->bus;
        if (r->req.conn_state) s_conn_waiting (self, r->req.conn_state, false);     /* its headers are in: served now */
        bool answered;
        enum MHD_Result rc = s_begin (self, r, &answered);
        return answered ? rc : MHD_YES;
    }
    if (r->req.status) { *upload_data_size = 0; return MHD_YES; }     /* answered early; drain */
    if (*upload_data_size) {
        if (!r->too_large && r->len + *upload_data_size > r->max_body) {
            r->too_large = true;
            free (r->body);
            r->body = NULL;
            r->len = r->cap = 0;
        }
        if (!r->too_large) {
            if (r->len + *upload_data_size + 1 > r->cap) {
                r->cap = (r->len + *upload_data_size + 1) * 2;
                if (r->cap > r->max_body + 1) r->cap = r->max_body + 1;
                r->body = realloc (r->body, r->cap);
            }
            memcpy (r->body + r->len, upload_data, *upload_data_size);
            r->len += *upload_data_size;
            r->body[r->len] = 0;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->too_large) return s_too_large (self, r);
    r->req.body = r->body ? r->body : "";
    r->req.body_len = r->len;
    if (r->row) return r->row->handler (&r->req);
    if (strcmp (r->req.route, "other")) return s_not_allowed (&r->req);
    return bmq_http_reply_error (&r->req, 404, "not_found", "no such route: %.200s %.200s", method, url);
}

static void s_mhd_log (void *cls, const char *fmt, va_list ap)
{
    char text[512];
    vsnprintf (text, sizeof text, fmt, ap);
    size_t n = strlen (text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r')) text[--n] = 0;
    /* clients leaving an SSE stream are routine: only problems of the server itself are warnings */
    if (strstr (text, "bind") || strstr (text, "listen") || strstr (text, "thread")) bmq_warn ("http: %s", text);
    else bmq_debug ("http: %s", text);
}

/* ---- lifecycle ------------------------------------------------------------------------ */

bmq_http_server_t *bmq_http_server_new (const bmq_http_options_t *opts, char *err, size_t errlen)
{
    struct addrinfo hints = { .ai_flags = AI_NUMERICSERV | AI_PASSIVE, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    char port[16];
    snprintf (port, sizeof port, "%d", opts->port);
    int gai = getaddrinfo (opts->bind && *opts->bind ? opts->bind : "127.0.0.1", port, &hints, &ai);
    if (gai) { snprintf (err, errlen, "cannot resolve http_bind '%s': %s", opts->bind, gai_strerror (gai)); return NULL; }
    char e2[512];
    bmq_http_server_t *self = calloc (1, sizeof *self);
    self->opts = *opts;
    self->bind = strdup (opts->bind && *opts->bind ? opts->bind : "127.0.0.1");
    self->token = strdup (opts->token ? opts->token : "");
    self->origins = strdup (opts->allowed_origins ? opts->allowed_origins : "");
    self->endpoint = strdup (opts->gateway_endpoint ? opts->gateway_endpoint : "");
    self->opts.stories_endpoint = NULL;         /* only used here, below */
    self->opts.bind = self->bind;
    self->opts.token = self->token;
    self->opts.allowed_origins = self->origins;
    self->opts.gateway_endpoint = self->endpoint;
    if (!self->opts.max_body) self->opts.max_body = 1u << 20;
    pthread_mutex_init (&self->conns_lock, NULL);
    if (self->opts.header_timeout_ms <= 0) self->opts.header_timeout_ms = 3000;
    if (self->opts.pending_connections <= 0) self->opts.pending_connections = 256;
    if (self->opts.streams_per_token <= 0) self->opts.streams_per_token = 16;
    if (self->opts.mcp_sessions_per_token <= 0) self->opts.mcp_sessions_per_token = 64;
    if (self->opts.login_code_ttl_ms <= 0 || self->opts.login_code_ttl_ms > 60000) self->opts.login_code_ttl_ms = 60000;
    self->access = bmq_http_access_new (self->bind, "", self->origins);
    if (!(self->ctx = bmq_http_ctx_new (&self->opts, self->token, e2, sizeof e2))) { snprintf (err, errlen, "%s", e2); goto fail; }
    self->auth = bmq_http_ctx_auth (self->ctx);
    self->metrics = bmq_http_ctx_metrics (self->ctx);
    pthread_mutex_init (&self->refusals_lock, NULL);
    self->refusals = json_array ();
    if (!bmq_http_auth_tokens (self->auth))
        bmq_warn ("http: no tokens (keys dir '%s'): every route but /healthz answers 401 until `blendmq keys init` makes them",
                  opts->keys_dir ? opts->keys_dir : "");
    unsigned max_conns = (unsigned) (opts->max_connections > 0 ? opts->max_connections : 512);
    unsigned per_ip = opts->per_ip_connection_limit > 0 ? (unsigned) opts->per_ip_connection_limit : max_conns;
    /* poll, not select: a flood's descriptors pass FD_SETSIZE (1024), and select cannot watch those */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG
                   | (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    self->daemon = MHD_start_daemon (flags, 0, NULL, NULL, s_access, self,
        MHD_OPTION_EXTERNAL_LOGGER, s_mhd_log, self,
        MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_CONNECTION_LIMIT, max_conns,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 60,     /* idle; headers have their own limit (s_reaper) */
        MHD_OPTION_THREAD_STACK_SIZE, (size_t) (512 * 1024),
        MHD_OPTION_NOTIFY_COMPLETED, s_completed, self,
        MHD_OPTION_NOTIFY_CONNECTION, s_notify_connection, self,
        MHD_OPTION_END);
    if (!self->daemon) {
        snprintf (err, errlen, "cannot listen on %s:%d (in use? set gateway.http_port, 0 for any free port, or gateway.http_enabled: false)",
                  self->bind, opts->port);
        goto fail;
    }
    self->reaper_running = pthread_create (&self->reaper, NULL, s_reaper, self) == 0;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_BIND_PORT);
    self->port = info ? info->port : opts->port;
    bool v6 = strchr (self->bind, ':') != NULL;
    snprintf (self->url, sizeof self->url, "http://%s%s%s:%d", v6 ? "[" : "", self->bind, v6 ? "]" : "", self->port);
    if (bmq_http_ctx_follow (self->ctx, opts->stories_endpoint)) {
        snprintf (err, errlen, "cannot follow the gateway's stories at %s", opts->stories_endpoint);
        goto fail;
    }
    freeaddrinfo (ai);
    return self;
fail:
    freeaddrinfo (ai);
    bmq_http_server_destroy (&self);
    return NULL;
}

void bmq_http_server_destroy (bmq_http_server_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_http_server_t *self = *self_p;
    atomic_store (&self->stopping, true);
    if (self->ctx) bmq_http_ctx_stop (self->ctx);
    if (self->reaper_running) pthread_join (self->reaper, NULL);
    if (self->daemon) MHD_stop_daemon (self->daemon);
    bmq_http_ctx_destroy (&self->ctx);
    bmq_http_access_destroy (&self->access);
    if (self->refusals) {
        json_decref (self->refusals);
        pthread_mutex_destroy (&self->refusals_lock);
    }
    pthread_mutex_destroy (&self->conns_lock);
    if (self->token) sodium_memzero (self->token, strlen (self->token));
    free (self->token);
    free (self->bind);
    free (self->origins);
    free (self->endpoint);
    free (self);
    *self_p = NULL;
}

/* A token for a server reachable from other hosts: configured, read from
 * http_token_file, or generated (and handed over once, never logged). */
static int s_token (bmq_config_t *cfg, const char *bind, char *token, size_t len)
{
    snprintf (token, len, "%s", bmq_config_str (cfg, "gateway.http_token"));
    const char *file = bmq_config_str (cfg, "gateway.http_token_file");
    if (!*token && *file) {
        FILE *f = fopen (file, "r");
        if (f) {
            size_t n = fread (token, 1, len - 1, f);
            fclose (f);
            token[n] = 0;
            while (n && (token[n - 1] == '\n' || token[n - 1] == '\r' || token[n - 1] == ' ')) token[--n] = 0;
        }
    }
    if (*token || bmq_http_host_is_loopback (bind)) return 0;
    unsigned char bytes[24];
    randombytes_buf (bytes, sizeof bytes);
    sodium_bin2hex (token, len, bytes, sizeof bytes);
    if (*file) {
        int fd = open (file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        bool ok = fd >= 0 && write (fd, token, strlen (token)) == (ssize_t) strlen (token);
        if (fd >= 0) close (fd);
        if (!ok) { bmq_error ("cannot write the generated HTTP token to %s", file); return -1; }
        bmq_info ("HTTP listens on %s: generated a bearer token, written to %s", bind, file);
    }
    else {
        printf ("blendmq gateway: HTTP on %s requires a bearer token; generated (shown once): %s\n", bind, token);
        fflush (stdout);
        bmq_info ("HTTP listens on %s: generated a bearer token (printed once on stdout)", bind);
    }
    return 0;
}

int bmq_http_server_start (bmq_config_t *cfg, const char *gateway_endpoint, const char *stories_endpoint,
                           bmq_http_server_t **server)
{
    *server = NULL;
    if (!bmq_config_bool (cfg, "gateway.http_enabled")) return 0;
    char token[256], err[512];
    const char *bind = bmq_config_str (cfg, "gateway.http_bind");
    if (s_token (cfg, bind, token, sizeof token)) return -1;
    const char *confirm = bmq_config_str (cfg, "security.mcp_confirm");
    if (*confirm && strcmp (confirm, "person") && strcmp (confirm, "elicitation")) {
        bmq_error ("security.mcp_confirm is '%s': it is person (the default) or elicitation", confirm);
        return -1;
    }
    char origins[2048];
    snprintf (origins, sizeof origins, "%s,%s", bmq_config_str (cfg, "http.allowed_origins"),
              bmq_config_str (cfg, "gateway.http_allowed_origins"));
    bmq_http_options_t opts = {
        .bind = bind, .port = (int) bmq_config_int (cfg, "gateway.http_port"), .token = token,
        .allowed_origins = origins,
        .max_body = (size_t) bmq_config_int (cfg, "gateway.http_max_body_kb") * 1024,
        .max_connections = (int) bmq_config_int (cfg, "gateway.http_max_connections"),
        .event_buffer = (int) bmq_config_int (cfg, "gateway.http_event_buffer"),
        .request_timeout_ms = (int) bmq_config_int (cfg, "gateway.request_timeout_ms"),
        .capabilities_cache_ms = (int) bmq_config_int (cfg, "gateway.capabilities_cache_ms"),
        .mcp_test_tools = bmq_config_bool (cfg, "gateway.mcp_test_tools"),
        .gateway_endpoint = gateway_endpoint,
        .stories_endpoint = stories_endpoint,
        .keys_dir = bmq_config_str (cfg, "security.keys_dir"),
        .header_timeout_ms = (int) bmq_config_int (cfg, "http.header_timeout_ms"),
        .pending_connections = (int) bmq_config_int (cfg, "http.pending_connections"),
        .per_ip_connection_limit = (int) bmq_config_int (cfg, "http.per_ip_connection_limit"),
        .streams_per_token = (int) bmq_config_int (cfg, "http.streams_per_token"),
        .mcp_sessions_per_token = (int) bmq_config_int (cfg, "http.mcp_sessions_per_token"),
        .login_code_ttl_ms = (int) bmq_config_int (cfg, "http.login_code_ttl_ms"),
        .mcp_confirm_elicitation = !strcmp (bmq_config_str (cfg, "security.mcp_confirm"), "elicitation"),
    };
    *server = bmq_http_server_new (&opts, err, sizeof err);
    sodium_memzero (token, sizeof token);
    if (!*server) { bmq_error ("http: %s", err); return -1; }
    bmq_info ("HTTP on %s (MCP at %s/mcp, live progress at %s/api/events); %zu token(s) from the keys dir, required on every "
              "route but /healthz (`blendmq web` prints a URL for the page)", (*server)->url, (*server)->url, (*server)->url,
              bmq_http_auth_tokens ((*server)->auth));
    return 0;
}

/* ---- the gateway loop, and its stories (applied by http_feed.c's thread) --------------------- */

void bmq_http_server_tick (bmq_http_server_t *self)
{
    if (self) bmq_http_ctx_tick (self->ctx);
}

void bmq_http_server_catch_up (bmq_http_server_t *self)
{
    if (self) bmq_http_ctx_catch_up (self->ctx);
}

void bmq_http_server_apply_event (bmq_http_server_t *self, const void *frame, size_t len)
{
    if (self) bmq_http_ctx_apply_event (self->ctx, frame, len);
}

void bmq_http_server_apply_request (bmq_http_server_t *self, const char *plan_id, const char *kind, const bmq_envelope_t *env)
{
    if (self) bmq_http_ctx_apply_request (self->ctx, plan_id, kind, env);
}

void bmq_http_server_apply_answer (bmq_http_server_t *self, const char *plan_id, const bmq_envelope_t *env)
{
    if (self) bmq_http_ctx_apply_answer (self->ctx, plan_id, env);
}
