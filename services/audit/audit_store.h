/* audit_store — the audit trail in SQLite (WAL).
 *
 * One row per record, unique on (origin, instance, seq) so a record sent twice
 * (after a lost acknowledgement) is stored once. `origin` is the sender's
 * authenticated key name, set by the audit service, never taken from the body;
 * `instance` is the sending process as it names itself (the body's origin),
 * meaningful only within its origin; `flag` marks a record whose body claimed
 * another origin. A second record with the same (origin, instance, seq) but
 * other content is a conflict: the caller stores an `alert` record. The schema is versioned with
 * PRAGMA user_version; migrations run at open, each in its own transaction.
 *
 * Durability: WAL with synchronous=FULL, so a committed transaction survives a
 * crash or power loss; the service acknowledges records only after commit. */
#ifndef BMQ_AUDIT_STORE_H
#define BMQ_AUDIT_STORE_H

#include <sqlite3.h>
#include <stdint.h>
#include <stddef.h>

#define BMQ_AUDIT_SCHEMA_VERSION 4

typedef struct bmq_audit_store_t bmq_audit_store_t;
struct bmq_audit_chain_t;

typedef struct {
    int64_t     stored_at;    /* audit's clock, ms; 0: now */
    int64_t     ts_ms;        /* when the audit received it (its own clock; the sender's before schema 4) */
    int64_t     sender_ts;    /* the sender's clock, as it said (0: none) */
    const char *cid;
    const char *kind;
    const char *sender;
    const char *origin;       /* authenticated key name */
    const char *instance;     /* the sender's process, as the body names it */
    int64_t     seq;
    const char *flag;         /* NULL, or why the record is suspect ("forged_origin: …; clock_skew: …; kind_not_own: …") */
    const char *plan_id;      /* may be NULL: the record names no plan */
    const char *data;         /* the record's data as compact JSON text */
} bmq_audit_row_t;

/* Open (creating and migrating as needed). The file is made 0600 (and its
 * WAL and shm files with it). NULL with err. */
bmq_audit_store_t *bmq_audit_store_open (const char *path, char *err, size_t errlen);
void bmq_audit_store_close (bmq_audit_store_t **self_p);
/* Cap the database size (0: no cap). Writes beyond it fail with "database or
 * disk is full", exactly as a full disk does. 0 / -1. */
int  bmq_audit_store_set_max_size (bmq_audit_store_t *self, int64_t bytes);
int  bmq_audit_store_begin (bmq_audit_store_t *self);
int  bmq_audit_store_commit (bmq_audit_store_t *self);
void bmq_audit_store_rollback (bmq_audit_store_t *self);
/* Insert one row (inside begin/commit). 1 stored, 0 duplicate (same kind,
 * cid and data already stored), 2 conflict (the stored one differs: nothing
 * stored, the caller records an alert), -1 error (err). */
int  bmq_audit_store_put (bmq_audit_store_t *self, const bmq_audit_row_t *row, char *err, size_t errlen);
int64_t bmq_audit_store_count (bmq_audit_store_t *self);
/* Chain every row stored from now on (audit_chain.h: prev, hash, mac, the
 * checkpoint written at commit). Not owned. */
void bmq_audit_store_set_chain (bmq_audit_store_t *self, struct bmq_audit_chain_t *chain);
/* Delete the oldest rows, at most `max_rows`, as long as they were stored
 * before `cutoff_ms`: always a prefix of the trail (by id), so the chain
 * stays whole; with a chain, an `audit.pruned` record (chained) says which
 * ids went and why (`reason`), and the checkpoint's start moves. In one short
 * transaction. Returns the number deleted, or -1 with err. */
int  bmq_audit_store_prune (bmq_audit_store_t *self, int64_t cutoff_ms, int max_rows, char *err, size_t errlen);
int  bmq_audit_store_prune_why (bmq_audit_store_t *self, int64_t cutoff_ms, int max_rows, const char *reason,
                                char *err, size_t errlen);
/* The bytes the records use (pages in use × page size, free pages not counted). */
int64_t bmq_audit_store_used_bytes (bmq_audit_store_t *self);
/* The schema version of the open database. */
int  bmq_audit_store_version (bmq_audit_store_t *self);
/* The SQLite handle, for readers in this service (audit_query). */
sqlite3 *bmq_audit_store_db (bmq_audit_store_t *self);
/* The last SQLite error message. */
const char *bmq_audit_store_error (bmq_audit_store_t *self);

#endif
