/* validator_broker — the gateway's pool of validator workers.
 *
 * Workers connect (DEALER) and announce themselves with worker.ready; the
 * broker keeps the idle ones in least-recently-used order and hands each
 * validation to the one idle longest, so throughput grows with workers.
 * Heartbeats go both ways; a worker silent for liveness × interval is dropped
 * and the request it held is given to another (once). Requests wait in a
 * bounded queue while every worker is busy. */
#ifndef BMQ_VALIDATOR_BROKER_H
#define BMQ_VALIDATOR_BROKER_H

#include "codec.h"
#include <czmq.h>

typedef struct bmq_broker_t bmq_broker_t;

bmq_broker_t *bmq_broker_new (const char *endpoint, int interval_ms, int liveness);
void     bmq_broker_destroy (bmq_broker_t **self_p);
zsock_t *bmq_broker_sock (bmq_broker_t *self);
/* Queue a validate.request (taken). -1 when the queue is full (caller answers busy). */
int      bmq_broker_submit (bmq_broker_t *self, bmq_envelope_t **req_p);
/* Handle one message from a worker; returns a verdict (caller owns) or NULL. */
bmq_envelope_t *bmq_broker_on_message (bmq_broker_t *self);
/* Heartbeats, expiry of dead workers, dispatch. Call often. */
void     bmq_broker_tick (bmq_broker_t *self);
size_t   bmq_broker_workers (const bmq_broker_t *self);
json_t  *bmq_broker_status (const bmq_broker_t *self);

#endif
