/* validator_broker — the gateway's pool of validator workers.
 *
 * Workers connect (DEALER) and announce themselves with worker.ready; the
 * broker keeps the idle ones in least-recently-used order and hands each
 * request (validate.request, capabilities.request) to the one idle longest,
 * so throughput grows with workers. Requests wait in a bounded queue while
 * every worker is busy.
 *
 * Every request gets exactly one reply (Paranoid Pirate, zguide ch. 4):
 *   - a worker silent for liveness × interval is dead: dropped, and the
 *     request it held goes back to the head of the queue for another worker;
 *   - a worker holding a request past the deadline (it heartbeats but does
 *     not answer, or is stopped) is dropped the same way;
 *   - a reply counts only from a worker of the pool, for the request it holds
 *     (same cid): a late reply from a dropped worker, or a stray one, is
 *     ignored, so a re-sent request is never answered twice;
 *   - a request dispatched BMQ_BROKER_MAX_ATTEMPTS times without an answer
 *     (a plan that hangs every worker) is answered by the broker itself with
 *     an error (code validator_failed) instead of taking down the pool;
 *   - while the pool has had no worker for a whole interval, queued requests
 *     are answered by the broker (code validator_unavailable) at once. */
#ifndef BMQ_VALIDATOR_BROKER_H
#define BMQ_VALIDATOR_BROKER_H

#include "codec.h"
#include <czmq.h>

#define BMQ_BROKER_QUEUE_MAX     10000
#define BMQ_BROKER_MAX_ATTEMPTS  3

typedef struct bmq_broker_t bmq_broker_t;

/* Bind the ROUTER workers connect to. The deadline starts at 2 × interval. */
bmq_broker_t *bmq_broker_new (const char *endpoint, int interval_ms, int liveness);
void     bmq_broker_destroy (bmq_broker_t **self_p);
/* How long a worker may hold one request (ms, > 0). */
void     bmq_broker_set_deadline (bmq_broker_t *self, int deadline_ms);
/* How long the pool has had no worker (ms; 0 while it has one). */
int64_t  bmq_broker_empty_ms (const bmq_broker_t *self);
/* Authorization (roles.def, "broker"): only validator keys may join the pool
 * and answer; a refusal is answered `forbidden` and audited to `audit` (may be
 * NULL). With curve false an unauthenticated worker is accepted. */
struct bmq_audit_t;
void     bmq_broker_set_auth (bmq_broker_t *self, bool curve, struct bmq_audit_t *audit);
zsock_t *bmq_broker_sock (bmq_broker_t *self);
/* Queue a request (taken). -1 when the queue is full (caller answers busy). */
int      bmq_broker_submit (bmq_broker_t *self, bmq_envelope_t **req_p);
/* Handle one message from a worker; returns a reply (caller owns) or NULL. */
bmq_envelope_t *bmq_broker_on_message (bmq_broker_t *self);
/* Heartbeats, expiry of dead and hung workers, dispatch. Call often (at
 * least every interval / 2). */
void     bmq_broker_tick (bmq_broker_t *self);
/* A reply the broker made itself (validator_failed), or NULL. Drain after
 * each tick; caller owns. */
bmq_envelope_t *bmq_broker_take_failed (bmq_broker_t *self);
size_t   bmq_broker_workers (const bmq_broker_t *self);
/* {workers, busy, queued, dispatched, verdicts, requeued, expired, failed,
 *  pool: [{pid, busy, held_ms}]} */
json_t  *bmq_broker_status (const bmq_broker_t *self);

#endif
