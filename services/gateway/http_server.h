/* http_server — the gateway's HTTP face, on libmicrohttpd.
 *
 * Routes: the REST API (http_api: /api/…, /healthz, /metrics), live progress
 * as Server-Sent Events (/api/events, from sse_ring), and MCP Streamable HTTP
 * (http_mcp: /mcp). Every request passes http_access first (Host, Origin,
 * bearer token); bodies are capped; every error is a JSON body
 * {"error": {"code", "message"}} with a stable code.
 *
 * Threads: libmicrohttpd runs one thread per connection, so a handler may
 * block on the gateway (each connection has its own http_bus DEALER on the
 * gateway's inproc endpoint) and an SSE stream may wait for events without
 * holding up anyone else. The gateway's loop does not call into HTTP for
 * what happens to requests: it tells its stories (http_feed.h), and HTTP's
 * feed thread applies them to the handlers' context (http_ctx.h). */
#ifndef BMQ_HTTP_SERVER_H
#define BMQ_HTTP_SERVER_H

#include "codec.h"
#include "config.h"
#include "http_req.h"
#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>

typedef struct bmq_http_server_t bmq_http_server_t;

/* Start listening. NULL with err when the address cannot be used. */
bmq_http_server_t *bmq_http_server_new (const bmq_http_options_t *opts, char *err, size_t errlen);
/* Stop: close SSE streams, wait for connection threads. Safe to call twice. */
void bmq_http_server_destroy (bmq_http_server_t **self_p);

/* From the gateway configuration (gateway.http_*): 0 with *server set, or
 * NULL when gateway.http_enabled is false; -1 with a logged error. A token
 * generated for a non-loopback bind goes to gateway.http_token_file when set,
 * else it is printed once on stdout (never to the log). */
int bmq_http_server_start (bmq_config_t *cfg, const char *gateway_endpoint, const char *stories_endpoint,
                           bmq_http_server_t **server);

int         bmq_http_server_port (const bmq_http_server_t *self);
const char *bmq_http_server_url (const bmq_http_server_t *self);      /* http://host:port */

/* ---- what the gateway's story stream brings (the feed applies it to the
 * context, http_ctx.h; these are for tests) -------------------------------------- */

/* A progress envelope as re-published on gateway.events (raw frame). */
void bmq_http_server_apply_event (bmq_http_server_t *self, const void *frame, size_t len);
/* A client request started (chat, run, validate) with its plan id. */
void bmq_http_server_apply_request (bmq_http_server_t *self, const char *plan_id, const char *kind, const bmq_envelope_t *env);
/* An answer the gateway sent the requester of plan_id. */
void bmq_http_server_apply_answer (bmq_http_server_t *self, const char *plan_id, const bmq_envelope_t *env);
/* Every story told so far has been applied. */
void bmq_http_server_catch_up (bmq_http_server_t *self);

/* ---- the gateway loop (NULL server: no-op) --------------------------------- */

/* The gateway loop is alive (for /healthz). */
void bmq_http_server_tick (bmq_http_server_t *self);
/* Audit the refusals (401, 403) HTTP answered since the last call, with the
 * gateway's audit client (kind "http.refused"); call from the gateway loop. */
typedef struct bmq_audit_t bmq_audit_t;
void bmq_http_server_audit (bmq_http_server_t *self, bmq_audit_t *audit);
/* The refusals not yet audited, taken (a JSON array; for tests). */
json_t *bmq_http_server_take_refusals (bmq_http_server_t *self);

#endif
