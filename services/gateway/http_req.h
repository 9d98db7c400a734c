/* http_req — what a route's handler gets: the request, the server's services
 * it may use, and the replies. The route modules (http_api, http_web,
 * http_events, http_mcp) include this, never http_server.h: the server
 * dispatches to them through the route table (http_routes.h), and they do not
 * know the server's lifecycle. Replies and request accessors: http_reply.c;
 * the server's services: http_server.c. */
#ifndef BMQ_HTTP_REQ_H
#define BMQ_HTTP_REQ_H

#include "codec.h"
#include "http_auth.h"
#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bmq_http_server_t bmq_http_server_t;
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
    bmq_http_server_t     *server;
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

const bmq_http_options_t *bmq_http_server_options (const bmq_http_server_t *self);
bmq_sse_ring_t     *bmq_http_server_events (bmq_http_server_t *self);
bmq_http_plans_t   *bmq_http_server_plans (bmq_http_server_t *self);
bmq_http_metrics_t *bmq_http_server_metrics (bmq_http_server_t *self);
typedef struct bmq_http_seqs_t bmq_http_seqs_t;
bmq_http_seqs_t    *bmq_http_server_seqs (bmq_http_server_t *self);     /* executors' event sequences (the feed's) */
/* Note a refusal for the audit (and the log): what was asked, by whom, why. */
void bmq_http_server_refused (bmq_http_server_t *self, bmq_http_req_t *req, int status, const char *code, const char *why);
bool                bmq_http_server_stopping (const bmq_http_server_t *self);
/* Milliseconds since the gateway loop last ticked. */
int64_t             bmq_http_server_loop_age_ms (const bmq_http_server_t *self);
/* The capabilities cache (GET /api/mcp/capabilities). */
char *bmq_http_server_cached_caps (bmq_http_server_t *self, const char *form);          /* malloc'd or NULL */
void  bmq_http_server_cache_caps (bmq_http_server_t *self, const char *form, const char *text);

/* Before reading plans or metrics: every story the gateway told so far has been applied. */
void bmq_http_server_catch_up (bmq_http_server_t *self);
/* The MCP endpoint's state (http_mcp.h). */
bmq_http_mcp_t *bmq_http_server_mcp (bmq_http_server_t *self);

/* The page's anti-CSRF nonce for this request's session (false: not a session). */
bool bmq_http_req_csrf (bmq_http_req_t *req, char *nonce, size_t len);
/* An event stream of req's token opens (false: it has http.streams_per_token
 * open already; answered 429 by the caller) / closes. */
bool bmq_http_server_stream_open (bmq_http_server_t *self, const char *who);
void bmq_http_server_stream_close (bmq_http_server_t *self, const char *who);
/* The auth table (login codes: http_web.c). */
bmq_http_auth_t *bmq_http_server_auth (bmq_http_server_t *self);

/* This connection's DEALER to the gateway (created on first use); NULL when the endpoint is unusable. */
bmq_http_bus_t *bmq_http_req_bus (bmq_http_req_t *req);
const char *bmq_http_req_header (bmq_http_req_t *req, const char *name);
const char *bmq_http_req_query (bmq_http_req_t *req, const char *name);

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
