/* peer — a DEALER connection to a service, with heartbeats both ways.
 *
 * The owner polls bmq_peer_sock, passes every envelope it receives from it to
 * bmq_peer_heard, and calls bmq_peer_tick at least every interval. The peer is
 * alive while it was heard from within liveness × interval (Paranoid Pirate). */
#ifndef BMQ_PEER_H
#define BMQ_PEER_H

#include "codec.h"
#include <czmq.h>
#include <stdbool.h>

typedef struct bmq_peer_t bmq_peer_t;

/* `name` is the service ("gateway", "planner", "audit", "executor" or
 * "executor:LABEL"): the part before ':' names the server key (bus.h). */
bmq_peer_t *bmq_peer_new (const char *name, const char *endpoint, int interval_ms, int liveness);
void     bmq_peer_destroy (bmq_peer_t **self_p);
zsock_t *bmq_peer_sock (bmq_peer_t *self);
void     bmq_peer_tick (bmq_peer_t *self);
/* Note traffic from the peer; a heartbeat's state is remembered. Returns true
 * when `env` was a heartbeat (nothing more to do with it). */
bool     bmq_peer_heard (bmq_peer_t *self, const bmq_envelope_t *env);
bool     bmq_peer_alive (const bmq_peer_t *self);
/* How long the peer has been dead: 0 while alive; a new peer is given
 * liveness × interval to be heard from before it counts as dead. */
int64_t  bmq_peer_down_ms (const bmq_peer_t *self);
/* Heartbeats carry the answering process's instance id: the generation counts
 * how often it changed, i.e. the service restarted (work it held is lost). */
unsigned bmq_peer_generation (const bmq_peer_t *self);
const char *bmq_peer_instance (const bmq_peer_t *self);
/* When the transport last saw the connection drop (monotonic ms, 0: never).
 * A message sent before it may have died with the old process; one sent after
 * it waits for, and reaches, whoever answers at the endpoint next. INT64_MAX
 * when the transport cannot be watched: then any message may have been lost. */
int64_t  bmq_peer_disconnected_at (bmq_peer_t *self);
/* The state its last heartbeat reported ("unreachable" when dead). */
const char *bmq_peer_state (const bmq_peer_t *self);
int      bmq_peer_interval (const bmq_peer_t *self);
/* {name, endpoint, alive, last_heard_ms, state, instance, restarts_seen} */
json_t  *bmq_peer_status (const bmq_peer_t *self);
/* Send on the peer's socket (not consumed). */
int      bmq_peer_send (bmq_peer_t *self, const bmq_envelope_t *env);

/* This process's instance id: 16 random hex chars, made once per process. */
#define BMQ_INSTANCE_LEN 16
const char *bmq_instance_id (void);

/* For ROUTER services: answer a heartbeat with our own, carrying `state` and
 * bmq_instance_id ().
 * Returns true when env was a heartbeat. */
bool bmq_answer_heartbeat (zsock_t *router, zframe_t *rid, const bmq_envelope_t *env,
                           const char *service, const char *state);

#endif
