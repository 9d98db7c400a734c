/* audit_client — send audit records so that none is lost.
 *
 * Each record carries (origin, seq): origin names this process instance,
 * seq counts up from 1. The audit store ignores an (origin, seq) it already
 * holds, so sending a record twice is harmless and each is stored exactly once.
 *
 * A record stays queued, encoded, until the audit service acknowledges it
 * (which it does only after committing it). Sending is go-back-N: at most
 * BMQ_AUDIT_WINDOW records are in flight; when no acknowledgement arrived for
 * a while and the audit service is alive again, everything unacknowledged is
 * sent again from the oldest. Sends never block the caller.
 *
 * The queue is bounded (records and bytes). With a spool (see
 * bmq_audit_new_from_config) every record is also appended to a spool file
 * before it is sent, the file is emptied whenever everything is acknowledged,
 * and at shutdown it is rewritten with what is still unacknowledged and
 * fsynced. The next process of the same name loads it and sends those records
 * again, with their original (origin, seq). So records survive an audit
 * outage, a sender restart, and a sender crash (the appends reach the kernel
 * at once; only a host crash between appends and shutdown can lose them). */
#ifndef BMQ_AUDIT_CLIENT_H
#define BMQ_AUDIT_CLIENT_H

#include "codec.h"
#include "config.h"
#include "peer.h"

#define BMQ_AUDIT_QUEUE_MAX  100000         /* records a sender keeps at most */
#define BMQ_AUDIT_WINDOW     1000           /* records in flight at most */
/* Bounds on a record's data, so a stored record can always be sent back in a
 * query result (which nests it two levels deeper, beside other records)
 * within the codec's limits. */
#define BMQ_AUDIT_DATA_MAX   (1u << 20)     /* bytes, as compact JSON */
#define BMQ_AUDIT_DATA_ITEMS 50000          /* children of all its containers */
#define BMQ_AUDIT_DATA_DEPTH 24             /* nesting */

typedef struct bmq_audit_t bmq_audit_t;

/* Without a spool: records survive audit outages, not a restart of this process. */
bmq_audit_t *bmq_audit_new (const char *endpoint, int interval_ms, int liveness);
/* From the configuration: audit.endpoint, heartbeat.*, and a spool in
 * audit.spool_dir (default: spool/ next to audit.database) bounded by
 * audit.spool_max_mb. A spool that cannot be used is logged and the client
 * works without it. */
bmq_audit_t *bmq_audit_new_from_config (const bmq_config_t *cfg);
/* Use a spool in `dir` (created if needed), holding at most max_bytes of
 * records: load what an earlier process of this name left there. Each process
 * locks its own spool file (NAME.N.spool), so several instances of a service
 * can share a folder. Call before the first record. 0 / -1 (logged). */
int  bmq_audit_set_spool (bmq_audit_t *self, const char *dir, size_t max_bytes);
/* Writes the spool (if any) with what is unacknowledged, then frees. */
void bmq_audit_destroy (bmq_audit_t **self_p);
/* The socket to poll; pass what arrives to bmq_audit_handle. */
zsock_t *bmq_audit_sock (bmq_audit_t *self);
/* Record that something happened in story `cid`. `data` is stolen. Data
 * larger than BMQ_AUDIT_DATA_MAX is replaced by {error: "oversized", bytes}
 * and logged: the story keeps the event, the store stays bounded. */
void bmq_audit_record (bmq_audit_t *self, const char *cid, const char *kind, json_t *data);
/* Count a record instead of sending each (refusals under a flood): records
 * of `kind` with the same `key` (e.g. "key|service|message type") within one
 * second become one record, the first one's data plus count, first_ms and
 * last_ms, sent once the second is over (bmq_audit_tick; at flush and
 * destroy, at once). At most BMQ_AUDIT_COUNT_KEYS keys are counted at a time;
 * beyond, records are dropped and recorded as dropped (audit.dropped).
 * `data` is stolen. True when this record starts a new count (the first of
 * its key this second: worth a log line; the others are not). */
#define BMQ_AUDIT_COUNT_KEYS 4096
bool bmq_audit_count (bmq_audit_t *self, const char *cid, const char *kind, const char *key, json_t *data);
/* Handle a message from the audit service (ack, error or heartbeat). */
void bmq_audit_handle (bmq_audit_t *self, const bmq_envelope_t *env);
/* Heartbeat, send, and resend what is overdue. Call at least once a second. */
void bmq_audit_tick (bmq_audit_t *self);
size_t bmq_audit_pending (const bmq_audit_t *self);
/* Records dropped because the queue was full (logged; and once the queue has
 * room again, one record of kind audit.dropped {count, first_ms, last_ms}
 * says how many: a drop is never silent in the trail). */
size_t bmq_audit_dropped (const bmq_audit_t *self);
/* Try for up to timeout_ms to get every pending record acknowledged (at shutdown). */
void bmq_audit_flush (bmq_audit_t *self, int timeout_ms);
bmq_peer_t *bmq_audit_peer (bmq_audit_t *self);
/* Measure `data` as the codec counts: items (the children of every
 * container, a map's keys and values both) and depth (1 for a flat map).
 * Stops descending past 64 levels. */
void bmq_audit_data_shape (const json_t *data, size_t *items, int *depth);
/* This instance's origin (the first half of every record's identity). */
const char *bmq_audit_origin (const bmq_audit_t *self);
/* The spool file in use, or NULL. */
const char *bmq_audit_spool_path (const bmq_audit_t *self);

#endif
