/* http_ctx — the HTTP side's shared state, which route handlers reach through
 * their request (req->ctx; what they may use is declared in http_req.h). The
 * server (http_server.c) makes one, ticks and stops it, and is otherwise only
 * the server: connections, access, dispatch. Issue 31. */
#ifndef BMQ_HTTP_CTX_H
#define BMQ_HTTP_CTX_H

#include "http_req.h"

/* opts is the server's (borrowed: it outlives the context); token is one more
 * bearer token of role admin ("" for none). NULL with err. */
bmq_http_ctx_t *bmq_http_ctx_new (const bmq_http_options_t *opts, const char *token, char *err, size_t errlen);
/* The story feed stops first, then what it feeds. */
void bmq_http_ctx_destroy (bmq_http_ctx_t **self_p);
/* Follow the gateway's story stream (http_feed.h). 0 / -1. */
int  bmq_http_ctx_follow (bmq_http_ctx_t *self, const char *stories_endpoint);
/* The server is stopping: streams end, handlers waiting give up. */
void bmq_http_ctx_stop (bmq_http_ctx_t *self);
/* The gateway loop ticked (GET /healthz reports its age). */
void bmq_http_ctx_tick (bmq_http_ctx_t *self);

/* The gateway's stories, applied (http_feed.c; its thread, or a test). */
void bmq_http_ctx_apply_event (bmq_http_ctx_t *self, const void *frame, size_t len);
void bmq_http_ctx_apply_request (bmq_http_ctx_t *self, const char *plan_id, const char *kind, const bmq_envelope_t *env);
void bmq_http_ctx_apply_answer (bmq_http_ctx_t *self, const char *plan_id, const bmq_envelope_t *env);

#endif
