/* audit_store — the audit trail in SQLite (WAL).
 *
 * One row per record, unique on (origin, seq) so a record sent twice (after a
 * lost acknowledgement) is stored once. The schema is versioned; migrations
 * run at open. */
#ifndef BMQ_AUDIT_STORE_H
#define BMQ_AUDIT_STORE_H

#include <jansson.h>
#include <stdint.h>

typedef struct bmq_audit_store_t bmq_audit_store_t;

typedef struct {
    int64_t     ts_ms;        /* sender's clock */
    const char *cid;
    const char *kind;
    const char *sender;
    const char *origin;
    int64_t     seq;
    const json_t *data;
} bmq_audit_row_t;

bmq_audit_store_t *bmq_audit_store_open (const char *path, char *err, size_t errlen);
void bmq_audit_store_close (bmq_audit_store_t **self_p);
int  bmq_audit_store_begin (bmq_audit_store_t *self);
int  bmq_audit_store_commit (bmq_audit_store_t *self);
void bmq_audit_store_rollback (bmq_audit_store_t *self);
/* Insert one row (inside begin/commit). 1 stored, 0 duplicate, -1 error (err). */
int  bmq_audit_store_put (bmq_audit_store_t *self, const bmq_audit_row_t *row, char *err, size_t errlen);
int64_t bmq_audit_store_count (bmq_audit_store_t *self);

#endif
