/* audit_client — send audit records so that none is lost.
 *
 * Each record carries (origin, seq): origin names this process instance,
 * seq counts up from 1. A record stays in a bounded in-memory queue until the
 * audit service acknowledges it; unacknowledged records are sent again after
 * a timeout, and the audit store ignores a (origin, seq) it already holds, so
 * each record is stored exactly once even across audit restarts. */
#ifndef BMQ_AUDIT_CLIENT_H
#define BMQ_AUDIT_CLIENT_H

#include "codec.h"
#include "peer.h"

#define BMQ_AUDIT_QUEUE_MAX 100000

typedef struct bmq_audit_t bmq_audit_t;

bmq_audit_t *bmq_audit_new (const char *endpoint, int interval_ms, int liveness);
void bmq_audit_destroy (bmq_audit_t **self_p);
/* The socket to poll; pass what arrives to bmq_audit_handle. */
zsock_t *bmq_audit_sock (bmq_audit_t *self);
/* Record that something happened in story `cid`. `data` is stolen. */
void bmq_audit_record (bmq_audit_t *self, const char *cid, const char *kind, json_t *data);
/* Handle a message from the audit service (ack or heartbeat). */
void bmq_audit_handle (bmq_audit_t *self, const bmq_envelope_t *env);
/* Heartbeat and resend what is overdue. Call at least once a second. */
void bmq_audit_tick (bmq_audit_t *self);
size_t bmq_audit_pending (const bmq_audit_t *self);
/* Try for up to timeout_ms to get every pending record acknowledged (at shutdown). */
void bmq_audit_flush (bmq_audit_t *self, int timeout_ms);
bmq_peer_t *bmq_audit_peer (bmq_audit_t *self);

#endif
