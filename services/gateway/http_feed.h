/* http_feed — the gateway's story stream, and the HTTP side that follows it.
 *
 * The gateway loop never calls into HTTP: it publishes what HTTP needs on an
 * inproc PUB (BMQ_GW_STORIES), and HTTP's feed thread applies it to the plan
 * records, the SSE ring and the metrics. Three kinds of story, each one
 * multipart message [kind, plan_id, label, payload]:
 *   "request"  a client started a plan (label chat | run | validate); payload: its envelope
 *   "answer"   the gateway answered the requester of plan_id;           payload: the envelope
 *   "event"    a progress event as re-published on gateway.events;    payload: the raw frame
 * Stories are published before the gateway sends the answer they describe,
 * and inproc delivers in that order into the feed's queue, so a handler that
 * calls bmq_http_feed_sync after it got an answer reads state that includes
 * the answer (GET /api/plans/{id} right after POST /api/run). */
#ifndef BMQ_HTTP_FEED_H
#define BMQ_HTTP_FEED_H

#include "codec.h"
#include <czmq.h>

#define BMQ_GW_STORIES "inproc://blendmq-gateway-stories"

/* ---- the gateway's side -------------------------------------------------------- */

/* The PUB the gateway tells its stories on (bound at endpoint), or NULL. */
zsock_t *bmq_story_pub_new (const char *endpoint);
void bmq_story_request (zsock_t *pub, const char *plan_id, const char *kind, const bmq_envelope_t *env);
void bmq_story_answer (zsock_t *pub, const char *plan_id, const bmq_envelope_t *env);
void bmq_story_event (zsock_t *pub, const void *frame, size_t len);

/* ---- HTTP's side --------------------------------------------------------------- */

typedef struct bmq_http_ctx_t bmq_http_ctx_t;
typedef struct bmq_http_feed_t bmq_http_feed_t;

/* Subscribe to endpoint (subscribed before this returns: no story published
 * after it is missed) and apply every story to ctx (http_ctx.h) in a thread of its own. */
bmq_http_feed_t *bmq_http_feed_new (bmq_http_ctx_t *ctx, const char *endpoint);
void bmq_http_feed_destroy (bmq_http_feed_t **self_p);
/* Return once every story published before this call has been applied (or
 * after timeout_ms). */
void bmq_http_feed_sync (bmq_http_feed_t *self, int timeout_ms);

#endif
