/* http_req — what a route's handler gets: the request, its context (the HTTP
 * side's shared state: req->ctx) and the replies. The route modules (http_api,
 * http_web, http_events, http_mcp) include this, never http_server.h: the
 * server dispatches to them through the route table (http_routes.h), and they
 * neither know the server nor call it. Replies and request accessors:
 * http_reply.c; the context: http_ctx.c. */
#ifndef BMQ_HTTP_REQ_H
#define BMQ_HTTP_REQ_H

#include "codec.h"
#include "http_auth.h"
#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct bmq_http_ctx_t bmq_http_ctx_t;        /* http_ctx.c */
typedef struct bmq_http_bus_t bmq_http_bus_t;

typedef struct {
    const char *bind;                   /* listening address (127.0.0.1) */
    int         port;                   /* 0: any free port */
    const char *token;                  /* one more bearer token, role admin ("" for none: gateway.http_token) */
    const char *keys_dir;               /* tokens and roles (security.keys_dir; http_auth.h) */
    const char *allowed_origins;        /* extra browser origins, comma-separated */
    size_t      max_body;               /* bytes */
    int         max_connections;
    int         event_buffer;           /* events kept for Last-Event-ID */
    int         request_timeout_ms;     /* the gateway's; HTTP waits a little longer */
    int         capabilities_cache_ms;
    bool        mcp_test_tools;
    const char *gateway_endpoint;       /* where connection threads reach the gateway (inproc://…) */
    const char *stories_endpoint;       /* the gateway's story stream (http_feed.h); NULL: none */
    /* floods and sign-in (the http: section) */
    int         header_timeout_ms;      /* a request's headers must be complete by then (0: 3000) */
    int         pending_connections;    /* connections still sending headers, at most (0: 256) */
    int         per_ip_connection_limit;    /* 0: max_connections */
    int         streams_per_token;      /* open event streams of one token (0: 16) */
    int         mcp_sessions_per_token; /* 0: 64 */
    int         login_code_ttl_ms;      /* 0: 60000 */
    bool        mcp_confirm_elicitation;    /* security.mcp_confirm: elicitation (default: person) */
} bmq_http_options_t;

/* ---- for the route modules (http_routes.h) ------------------------------ */

typedef struct bmq_sse_ring_t bmq_sse_ring_t;
typedef struct bmq_http_plans_t bmq_http_plans_t;
typedef struct bmq_http_metrics_t bmq_http_metrics_t;
typedef struct bmq_http_mcp_t bmq_http_mcp_t;

typedef struct {
    bmq_http_ctx_t        *ctx;             /* what the handler may use besides the request (below) */
    struct MHD_Connection *conn;
    const char            *method, *url;
    const char            *body;            /* NUL-terminated */
    size_t                 body_len;
    const char            *route;           /* the route's pattern, also its metrics label ("other": none); set by the router */
    const char            *param;           /* the route's {id} segment (not NUL-terminated), or NULL */
    size_t                 param_len;
    const char            *origin;          /* an allowed Origin: echoed for CORS */
    int                    status;          /* what was answered (metrics) */
    double                 started_us;
    void                  *conn_state;      /* the server's, for this connection */
    bmq_http_bus_t       **bus_slot;        /* the connection's bus (made on first use), or NULL */
    const char            *gateway;         /* where that bus connects */
    bmq_http_who_t         who;             /* the token's name and role (role NONE: /healthz, preflight) */
    const char            *session;         /* the page's session cookie, when that is how it signed in */
} bmq_http_req_t;

/* The context's parts and services (http_ctx.c). */
const bmq_http_options_t *bmq_http_ctx_options (const bmq_http_ctx_t *ctx);
bmq_sse_ring_t     *bmq_http_ctx_events (bmq_http_ctx_t *ctx);
bmq_http_plans_t   *bmq_http_ctx_plans (bmq_http_ctx_t *ctx);
bmq_http_metrics_t *bmq_http_ctx_metrics (bmq_http_ctx_t *ctx);
typedef struct bmq_http_seqs_t bmq_http_seqs_t;
bmq_http_seqs_t    *bmq_http_ctx_seqs (bmq_http_ctx_t *ctx);     /* executors' event sequences (the feed's) */
bmq_http_auth_t    *bmq_http_ctx_auth (bmq_http_ctx_t *ctx);     /* tokens, sessions, login codes */
bmq_http_mcp_t     *bmq_http_ctx_mcp (bmq_http_ctx_t *ctx);      /* the MCP endpoint's state (http_mcp.h) */
bool                bmq_http_ctx_stopping (const bmq_http_ctx_t *ctx);
/* Milliseconds since the gateway loop last ticked. */
int64_t             bmq_http_ctx_loop_age_ms (const bmq_http_ctx_t *ctx);
/* The capabilities cache (GET /api/mcp/capabilities). */
char *bmq_http_ctx_cached_caps (bmq_http_ctx_t *ctx, const char *form);          /* malloc'd or NULL */
void  bmq_http_ctx_cache_caps (bmq_http_ctx_t *ctx, const char *form, const char *text);
/* Before reading plans or metrics: every story the gateway told so far has been applied. */
void bmq_http_ctx_catch_up (bmq_http_ctx_t *ctx);
/* An event stream of a token opens (false: it has http.streams_per_token
 * open already; answered 429 by the caller) / closes. */
bool bmq_http_ctx_stream_open (bmq_http_ctx_t *ctx, const char *who);
void bmq_http_ctx_stream_close (bmq_http_ctx_t *ctx, const char *who);

/* The page's anti-CSRF nonce for this request's session (false: not a session). */
bool bmq_http_req_csrf (bmq_http_req_t *req, char *nonce, size_t len);

/* This connection's DEALER to the gateway (created on first use); NULL when the endpoint is unusable. */
bmq_http_bus_t *bmq_http_req_bus (bmq_http_req_t *req);
const char *bmq_http_req_header (bmq_http_req_t *req, const char *name);
const char *bmq_http_req_query (bmq_http_req_t *req, const char *name);

/* The text an event stream (an MHD content reader) has made and not yet
 * handed out, a piece at a time. */
typedef struct {
    char  *text;                /* NULL: none */
    size_t len, off;
} bmq_http_pending_t;
/* true when all of it has been read (it is freed then): the reader makes more. */
bool    bmq_http_pending_done (bmq_http_pending_t *self);
/* text (taken; NULL: nothing) is what waits now: false for NULL. */
bool    bmq_http_pending_set (bmq_http_pending_t *self, char *text);
/* At most max bytes of it into buf: how many. */
ssize_t bmq_http_pending_read (bmq_http_pending_t *self, char *buf, size_t max);
void    bmq_http_pending_free (bmq_http_pending_t *self);

/* Queue `resp` with the common headers (CORS, no caching) and destroy it. */
enum MHD_Result bmq_http_reply (bmq_http_req_t *req, int status, struct MHD_Response *resp);
/* A response of a JSON body (stolen), not yet queued. */
struct MHD_Response *bmq_http_json_response (json_t *body);
/* A JSON body (stolen). */
enum MHD_Result bmq_http_reply_json (bmq_http_req_t *req, int status, json_t *body);
/* {"error": {"code", "message"}}. */
enum MHD_Result bmq_http_reply_error (bmq_http_req_t *req, int status, const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

#endif
