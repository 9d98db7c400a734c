/* audit_chain — the audit trail made tamper-evident.
 *
 * Every stored record carries `prev` (the hash of the record stored before
 * it), its own `hash` (SHA-256 over all its columns, its id and prev
 * included) and `mac` (HMAC-SHA-256 of the hash under a key only the audit
 * service holds). So an edited row no longer matches its hash, a forged hash
 * has no valid mac, and a deleted row leaves a gap in the ids and a `prev`
 * that names no stored record.
 *
 * Files, next to the database, both 0600, created at the first start:
 *   DB.key    the 32-byte HMAC key (hex)
 *   DB.head   the checkpoint: the last record's id and hash and the first
 *             kept record's id and the hash before it (the base, moved by
 *             pruning), with their mac; rewritten atomically (write, fsync,
 *             rename) after every commit. A trail cut at its tail (the newest
 *             records deleted) is found by it; a trail cut at its start
 *             without an `audit.pruned` record too.
 * A database that has records but no chain yet (from before issue 24) is
 * sealed as found at the first start: its records become the chain's start.
 *
 * What it cannot do: a person who can read DB.key (the audit's own user) can
 * rewrite the whole chain. Run the audit service as its own user (the
 * systemd unit does) so the key is not the other services' or people's. */
#ifndef BMQ_AUDIT_CHAIN_H
#define BMQ_AUDIT_CHAIN_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define BMQ_AUDIT_HASH_LEN 32

typedef struct bmq_audit_chain_t bmq_audit_chain_t;

/* The columns a record's hash covers (strings may be NULL: SQL NULL). */
typedef struct {
    int64_t     id, stored_at, ts, sender_ts, seq;      /* sender_ts 0: NULL */
    const char *cid, *kind, *sender, *origin, *instance, *plan_id, *flag, *data;
} bmq_audit_chain_row_t;

/* Open the chain of the database at `db_path` (whose connection is `db`):
 * load or create DB.key and DB.head, find the head in the table, and seal
 * records from before the chain. NULL with err. */
bmq_audit_chain_t *bmq_audit_chain_open (const char *db_path, sqlite3 *db, char *err, size_t errlen);
void bmq_audit_chain_destroy (bmq_audit_chain_t **self_p);
/* What opening found wrong (the checkpoint altered or gone while records
 * exist, the tail cut while the audit was down), or NULL. A new checkpoint is
 * made from the database as found, so the service writes this into the
 * trail as an `alert` record: the evidence outlives the next commit. */
const char *bmq_audit_chain_problem (const bmq_audit_chain_t *self);

/* The id the next record gets, and its hash, prev and mac (hex, 65 bytes
 * each) for `row` (row->id must be that id). The head moves only with
 * bmq_audit_chain_advance, once the row is stored. */
int64_t bmq_audit_chain_next_id (const bmq_audit_chain_t *self);
void bmq_audit_chain_seal (const bmq_audit_chain_t *self, const bmq_audit_chain_row_t *row,
                           char prev_hex[65], char hash_hex[65], char mac_hex[65]);
void bmq_audit_chain_advance (bmq_audit_chain_t *self, int64_t id, const char *hash_hex);
/* Someone else's row holds id `id`: the next record goes after it, still
 * chained to the audit's own last record (verification reports the row). */
void bmq_audit_chain_skip_to (bmq_audit_chain_t *self, int64_t id);
/* Transactions: remember the head at begin, go back to it on rollback,
 * write the checkpoint on commit (0 / -1: logged by the caller). */
void bmq_audit_chain_begin (bmq_audit_chain_t *self);
void bmq_audit_chain_rollback (bmq_audit_chain_t *self);
int  bmq_audit_chain_commit (bmq_audit_chain_t *self, char *err, size_t errlen);
/* Pruning removed every record up to `last_id`, whose hash was `hash_hex`:
 * the kept trail now starts after it. */
void bmq_audit_chain_rebase (bmq_audit_chain_t *self, int64_t last_id, const char *hash_hex);

/* Verify the trail in `db`. `incremental`: the next step of a rolling sweep
 * (at most `max_rows` rows from where the last step stopped; a step that
 * reaches the head or finds a bad record makes the next start over from the
 * start of the trail), else the whole trail at once. The checkpoint (head and
 * base) and both ends are checked every time. Returns {ok, checked,
 * verified_upto, head_id, base_id, complete, pass_clean (a whole pass from
 * the start found nothing), first_bad?: {id, reason}} (NULL with err when the
 * database cannot be read). */
json_t *bmq_audit_chain_verify (bmq_audit_chain_t *self, sqlite3 *db, bool incremental, int max_rows,
                                char *err, size_t errlen);

#endif
