/* audit_retention — prune records older than the retention period, on a
 * schedule, in small batches.
 *
 * Every `interval_ms` a pass starts: it deletes records stored before
 * now - retention, `batch` rows per transaction, one batch per call to
 * bmq_audit_retention_step. The service calls it between write batches, so a
 * writer never waits behind more than one small delete. The caller passes the
 * clock (`now_ms`), so tests can move time. */
#ifndef BMQ_AUDIT_RETENTION_H
#define BMQ_AUDIT_RETENTION_H

#include "audit_store.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct bmq_audit_retention_t bmq_audit_retention_t;

/* retention_ms 0 keeps records forever. The first pass is due at once. */
bmq_audit_retention_t *bmq_audit_retention_new (int64_t retention_ms, int64_t interval_ms, int batch);
void bmq_audit_retention_destroy (bmq_audit_retention_t **self_p);
/* Do one batch of pruning if a pass is due or under way at `now_ms`.
 * Returns the rows deleted (0: nothing to do), or -1 with err (the pass is
 * abandoned and retried at the next interval). */
int  bmq_audit_retention_step (bmq_audit_retention_t *self, bmq_audit_store_t *store, int64_t now_ms,
                               char *err, size_t errlen);
/* True while a pass has more to delete: call step again soon. */
bool bmq_audit_retention_busy (const bmq_audit_retention_t *self);
/* Milliseconds until the next pass is due (0 when busy or due). */
int64_t bmq_audit_retention_wait_ms (const bmq_audit_retention_t *self, int64_t now_ms);
/* Rows deleted since creation. */
int64_t bmq_audit_retention_pruned (const bmq_audit_retention_t *self);

#endif
