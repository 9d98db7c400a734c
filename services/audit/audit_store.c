/* audit_store — SQLite storage of audit records. */
#include "audit_store.h"
#include "audit_chain.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

struct bmq_audit_store_t {
    sqlite3      *db;
    sqlite3_stmt *insert;
    sqlite3_stmt *prune;
    sqlite3_stmt *same;
    bmq_audit_chain_t *chain;
};

/* Migration N brings the schema from version N-1 to N. Never edit a released
 * one: add the next. */
static const char *s_migrations[BMQ_AUDIT_SCHEMA_VERSION + 1] = {
    NULL,
    /* 1: the records table */
    "CREATE TABLE records ("
    "  id INTEGER PRIMARY KEY,"
    "  stored_at INTEGER NOT NULL,"
    "  ts INTEGER NOT NULL,"
    "  cid TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  sender TEXT NOT NULL,"
    "  origin TEXT NOT NULL,"
    "  seq INTEGER NOT NULL,"
    "  data TEXT NOT NULL,"
    "  UNIQUE (origin, seq));"
    "CREATE INDEX records_cid ON records (cid, id);"
    "CREATE INDEX records_ts ON records (ts);"
    "CREATE INDEX records_kind ON records (kind, ts);",
    /* 2: stories read in time order (cid, ts); `--plan` finds a plan's stories
     * through plan_id, taken out of the data once at insert; retention prunes
     * by the audit's own clock (stored_at), which a skewed sender cannot move. */
    "ALTER TABLE records ADD COLUMN plan_id TEXT;"
    "UPDATE records SET plan_id = json_extract (data, '$.plan_id')"
    "  WHERE json_valid (data) AND json_type (data, '$.plan_id') = 'text';"
    "DROP INDEX records_cid;"
    "CREATE INDEX records_cid ON records (cid, ts);"
    "CREATE INDEX records_plan ON records (plan_id) WHERE plan_id IS NOT NULL;"
    "CREATE INDEX records_stored ON records (stored_at);",
    /* 3: origins are authenticated (issue 12). `origin` becomes the sender's
     * key name, set by the audit service; the process's own name (what the
     * body called origin) moves to `instance`, unique within its origin; a
     * record whose body claimed another origin is kept, flagged. Rows from
     * before keep their self-declared sender as origin. */
    "CREATE TABLE records3 ("
    "  id INTEGER PRIMARY KEY,"
    "  stored_at INTEGER NOT NULL,"
    "  ts INTEGER NOT NULL,"
    "  cid TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  sender TEXT NOT NULL,"
    "  origin TEXT NOT NULL,"
    "  instance TEXT NOT NULL DEFAULT '',"
    "  seq INTEGER NOT NULL,"
    "  data TEXT NOT NULL,"
    "  plan_id TEXT,"
    "  flag TEXT,"
    "  UNIQUE (origin, instance, seq));"
    "INSERT INTO records3 (id, stored_at, ts, cid, kind, sender, origin, instance, seq, data, plan_id)"
    "  SELECT id, stored_at, ts, cid, kind, sender, sender, origin, seq, data, plan_id FROM records;"
    "DROP TABLE records;"
    "ALTER TABLE records3 RENAME TO records;"
    "CREATE INDEX records_cid ON records (cid, ts);"
    "CREATE INDEX records_ts ON records (ts);"
    "CREATE INDEX records_kind ON records (kind, ts);"
    "CREATE INDEX records_plan ON records (plan_id) WHERE plan_id IS NOT NULL;"
    "CREATE INDEX records_stored ON records (stored_at);",
    /* 4: a tamper-evident trail (issue 24). `ts` is the audit's own clock at
     * intake from now on; the sender's clock is kept in sender_ts. Each row
     * is chained: prev (the hash of the row before), hash, mac (audit_chain.h).
     * Rows from before get theirs when the service first starts. */
    "ALTER TABLE records ADD COLUMN sender_ts INTEGER;"
    "ALTER TABLE records ADD COLUMN prev TEXT;"
    "ALTER TABLE records ADD COLUMN hash TEXT;"
    "ALTER TABLE records ADD COLUMN mac TEXT;",
};

static int64_t s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int s_user_version (sqlite3 *db)
{
    sqlite3_stmt *st;
    int version = -1;
    if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
        version = sqlite3_column_int (st, 0);
    sqlite3_finalize (st);
    return version;
}

static int s_migrate (sqlite3 *db, char *err, size_t errlen)
{
    int version = s_user_version (db);
    if (version < 0) { ERR ("cannot read the audit schema version: %s", sqlite3_errmsg (db)); return -1; }
    if (version > BMQ_AUDIT_SCHEMA_VERSION) {
        ERR ("audit database schema %d is newer than this program (%d)", version, BMQ_AUDIT_SCHEMA_VERSION);
        return -1;
    }
    for (int v = version + 1; v <= BMQ_AUDIT_SCHEMA_VERSION; v++) {
        char *msg = NULL, pragma[64];
        snprintf (pragma, sizeof pragma, "PRAGMA user_version = %d;", v);
        /* the schema change and its version number commit together, or neither */
        if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec (db, s_migrations[v], NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec (db, pragma, NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec (db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            ERR ("audit schema migration %d failed: %s", v, msg ? msg : sqlite3_errmsg (db));
            sqlite3_free (msg);
            sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
    }
    return 0;
}

static int s_prepare (bmq_audit_store_t *self, char *err, size_t errlen)
{
    if (sqlite3_prepare_v2 (self->db, "INSERT OR IGNORE INTO records"
                            " (stored_at, ts, cid, kind, sender, origin, seq, plan_id, data, instance, flag,"
                            "  id, sender_ts, prev, hash, mac)"
                            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &self->insert, NULL) != SQLITE_OK
        || sqlite3_prepare_v2 (self->db, "SELECT kind = ?4 AND cid = ?5 AND data = ?6 FROM records"
                               " WHERE origin = ?1 AND instance = ?2 AND seq = ?3", -1, &self->same, NULL) != SQLITE_OK
        /* the oldest rows by id: what is pruned is always a prefix of the trail */
        || sqlite3_prepare_v2 (self->db, "SELECT id, stored_at, hash FROM records ORDER BY id LIMIT ?",
                               -1, &self->prune, NULL) != SQLITE_OK) {
        ERR ("cannot prepare audit statements: %s", sqlite3_errmsg (self->db));
        return -1;
    }
    return 0;
}

/* The database and its WAL and shm files are the audit's alone: 0600. */
static int s_private (const char *path, char *err, size_t errlen)
{
    if (!strcmp (path, ":memory:") || !strncmp (path, "file:", 5)) return 0;
    int fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || fchmod (fd, 0600)) {
        ERR ("cannot create %s as 0600: %s", path, strerror (errno));
        if (fd >= 0) close (fd);
        return -1;
    }
    close (fd);
    const char *suffixes[] = { "-wal", "-shm", "-journal" };
    for (int i = 0; i < 3; i++) {
        char side[1200];
        snprintf (side, sizeof side, "%s%s", path, suffixes[i]);
        chmod (side, 0600);          /* absent: nothing to do; SQLite makes them with the database's mode */
    }
    return 0;
}

bmq_audit_store_t *bmq_audit_store_open (const char *path, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    if (s_private (path, err, errlen)) return NULL;
    if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        ERR ("cannot open audit database %s: %s", path, db ? sqlite3_errmsg (db) : "out of memory");
        sqlite3_close (db);
        return NULL;
    }
    sqlite3_busy_timeout (db, 5000);
    /* WAL: readers never block the writer; synchronous=FULL fsyncs the WAL at
     * every commit, so an acknowledged record survives a crash. The WAL is
     * trimmed after checkpoints so a burst does not leave a huge file behind. */
    char *msg = NULL;
    if (sqlite3_exec (db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA journal_size_limit=67108864;",
                      NULL, NULL, &msg) != SQLITE_OK) {
        ERR ("cannot configure %s: %s", path, msg);
        sqlite3_free (msg);
        sqlite3_close (db);
        return NULL;
    }
    if (s_migrate (db, err, errlen)) { sqlite3_close (db); return NULL; }
    bmq_audit_store_t *self = calloc (1, sizeof *self);
    if (!self) { sqlite3_close (db); ERR ("out of memory"); return NULL; }
    self->db = db;
    if (s_prepare (self, err, errlen)) bmq_audit_store_close (&self);
    return self;
}

void bmq_audit_store_close (bmq_audit_store_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_audit_store_t *self = *self_p;
    sqlite3_finalize (self->insert);
    sqlite3_finalize (self->prune);
    sqlite3_finalize (self->same);
    sqlite3_close (self->db);
    free (self);
    *self_p = NULL;
}

int bmq_audit_store_set_max_size (bmq_audit_store_t *self, int64_t bytes)
{
    sqlite3_stmt *st;
    int64_t page = 4096;
    if (sqlite3_prepare_v2 (self->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
        page = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    /* SQLite's default cap is effectively unlimited (2^32 - 2 pages) */
    int64_t pages = bytes > 0 ? bytes / page : 4294967294LL;
    char sql[64];
    snprintf (sql, sizeof sql, "PRAGMA max_page_count = %lld", (long long) (pages > 0 ? pages : 1));
    return sqlite3_exec (self->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

void bmq_audit_store_set_chain (bmq_audit_store_t *self, bmq_audit_chain_t *chain) { self->chain = chain; }

int bmq_audit_store_begin (bmq_audit_store_t *self)
{
    if (sqlite3_exec (self->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return -1;
    if (self->chain) bmq_audit_chain_begin (self->chain);
    return 0;
}

int bmq_audit_store_commit (bmq_audit_store_t *self)
{
    if (sqlite3_exec (self->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) return -1;
    char err[512];
    /* the rows are stored: a checkpoint that lags only weakens the tail check until the next commit */
    if (self->chain && bmq_audit_chain_commit (self->chain, err, sizeof err))
        fprintf (stderr, "audit: %s\n", err);
    return 0;
}

void bmq_audit_store_rollback (bmq_audit_store_t *self)
{
    /* after some errors SQLite has already rolled back: that is fine */
    if (!sqlite3_get_autocommit (self->db)) sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
    if (self->chain) bmq_audit_chain_rollback (self->chain);
}

static int s_insert (bmq_audit_store_t *self, const bmq_audit_row_t *row, int64_t stored_at, char *err, size_t errlen)
{
    sqlite3_stmt *st = self->insert;
    char prev[65], hash[65], mac[65];
    int64_t id = self->chain ? bmq_audit_chain_next_id (self->chain) : 0;
    if (self->chain) {
        bmq_audit_chain_row_t cr = {
            .id = id, .stored_at = stored_at, .ts = row->ts_ms, .sender_ts = row->sender_ts, .seq = row->seq,
            .cid = row->cid, .kind = row->kind, .sender = row->sender, .origin = row->origin,
            .instance = row->instance ? row->instance : "", .plan_id = row->plan_id, .flag = row->flag,
            .data = row->data ? row->data : "{}",
        };
        bmq_audit_chain_seal (self->chain, &cr, prev, hash, mac);
    }
    sqlite3_reset (st);
    sqlite3_bind_int64 (st, 1, stored_at);
    sqlite3_bind_int64 (st, 2, row->ts_ms);
    sqlite3_bind_text (st, 3, row->cid, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 4, row->kind, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 5, row->sender, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 6, row->origin, -1, SQLITE_STATIC);
    sqlite3_bind_int64 (st, 7, row->seq);
    if (row->plan_id) sqlite3_bind_text (st, 8, row->plan_id, -1, SQLITE_STATIC);
    else sqlite3_bind_null (st, 8);
    sqlite3_bind_text (st, 9, row->data ? row->data : "{}", -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 10, row->instance ? row->instance : "", -1, SQLITE_STATIC);
    if (row->flag) sqlite3_bind_text (st, 11, row->flag, -1, SQLITE_STATIC);
    else sqlite3_bind_null (st, 11);
    if (self->chain) {
        sqlite3_bind_int64 (st, 12, id);
        sqlite3_bind_text (st, 14, prev, -1, SQLITE_STATIC);
        sqlite3_bind_text (st, 15, hash, -1, SQLITE_STATIC);
        sqlite3_bind_text (st, 16, mac, -1, SQLITE_STATIC);
    }
    if (row->sender_ts) sqlite3_bind_int64 (st, 13, row->sender_ts);
    int rc = sqlite3_step (st);
    /* unbind: the strings belong to the caller and die after this call */
    sqlite3_clear_bindings (st);
    sqlite3_reset (st);
    if (rc != SQLITE_DONE) { ERR ("cannot store audit record: %s", sqlite3_errmsg (self->db)); return -1; }
    if (sqlite3_changes (self->db) == 0) return 0;
    if (self->chain) bmq_audit_chain_advance (self->chain, id, hash);
    return 1;
}

int bmq_audit_store_put (bmq_audit_store_t *self, const bmq_audit_row_t *row, char *err, size_t errlen)
{
    int64_t stored_at = row->stored_at ? row->stored_at : s_now_ms ();
    int rc = s_insert (self, row, stored_at, err, errlen);
    if (rc != 0) return rc;
    /* (origin, instance, seq) is taken: a resend of the same record, or another record under its name? */
    sqlite3_stmt *st = self->same;
    sqlite3_reset (st);
    sqlite3_bind_text (st, 1, row->origin, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 2, row->instance ? row->instance : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64 (st, 3, row->seq);
    sqlite3_bind_text (st, 4, row->kind, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 5, row->cid, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 6, row->data ? row->data : "{}", -1, SQLITE_STATIC);
    rc = sqlite3_step (st);
    int same = rc == SQLITE_ROW ? sqlite3_column_int (st, 0) : rc == SQLITE_DONE ? -2 : -1;
    sqlite3_clear_bindings (st);
    sqlite3_reset (st);
    if (same == -2 && self->chain) {
        /* not a duplicate: the id was taken, by a row someone put there behind
         * the audit's back. Step over it (verification reports it) and store. */
        sqlite3_stmt *mx;
        if (sqlite3_prepare_v2 (self->db, "SELECT max(id), hash FROM records", -1, &mx, NULL) == SQLITE_OK
            && sqlite3_step (mx) == SQLITE_ROW) {
            fprintf (stderr, "audit: AUDIT TAMPERING: record id %lld was taken by a row the audit did not write\n",
                     (long long) bmq_audit_chain_next_id (self->chain));
            bmq_audit_chain_skip_to (self->chain, sqlite3_column_int64 (mx, 0));
        }
        sqlite3_finalize (mx);
        if (s_insert (self, row, stored_at, err, errlen) == 1) return 1;
        ERR ("cannot store audit record: its id is taken");
        return -1;
    }
    if (same < 0) { ERR ("cannot compare a duplicate audit record: %s", sqlite3_errmsg (self->db)); return -1; }
    return same ? 0 : 2;
}

int64_t bmq_audit_store_count (bmq_audit_store_t *self)
{
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_prepare_v2 (self->db, "SELECT count(*) FROM records", -1, &st, NULL) == SQLITE_OK
        && sqlite3_step (st) == SQLITE_ROW)
        n = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    return n;
}

int bmq_audit_store_prune (bmq_audit_store_t *self, int64_t cutoff_ms, int max_rows, char *err, size_t errlen)
{
    return bmq_audit_store_prune_why (self, cutoff_ms, max_rows, "retention", err, errlen);
}

int bmq_audit_store_prune_why (bmq_audit_store_t *self, int64_t cutoff_ms, int max_rows, const char *reason,
                               char *err, size_t errlen)
{
    if (bmq_audit_store_begin (self)) { ERR ("cannot begin pruning: %s", sqlite3_errmsg (self->db)); return -1; }
    /* the prefix: the oldest rows by id, up to the first one stored after the cutoff */
    sqlite3_stmt *st = self->prune;
    sqlite3_reset (st);
    sqlite3_bind_int (st, 1, max_rows > 0 ? max_rows : 1);
    int64_t first = 0, last = 0, n = 0;
    char last_hash[65] = "";
    int rc;
    while ((rc = sqlite3_step (st)) == SQLITE_ROW && sqlite3_column_int64 (st, 1) < cutoff_ms) {
        if (!n) first = sqlite3_column_int64 (st, 0);
        last = sqlite3_column_int64 (st, 0);
        snprintf (last_hash, sizeof last_hash, "%s", sqlite3_column_type (st, 2) == SQLITE_TEXT
                  ? (const char *) sqlite3_column_text (st, 2) : "");
        n++;
    }
    sqlite3_reset (st);
    int deleted = 0;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
        rc = SQLITE_DONE;
        if (n) {
            char sql[96];
            snprintf (sql, sizeof sql, "DELETE FROM records WHERE id <= %lld", (long long) last);
            rc = sqlite3_exec (self->db, sql, NULL, NULL, NULL) == SQLITE_OK ? SQLITE_DONE : SQLITE_ERROR;
            deleted = sqlite3_changes (self->db);
        }
    }
    if (rc == SQLITE_DONE && n && self->chain) {
        bmq_audit_chain_rebase (self->chain, last, last_hash);
        /* said in the trail itself, chained like any record */
        char data[300];
        snprintf (data, sizeof data, "{\"from_id\":%lld,\"reason\":\"%s\",\"rows\":%d,\"to_id\":%lld}",
                  (long long) first, reason, deleted, (long long) last);
        bmq_audit_row_t row = { .ts_ms = s_now_ms (), .cid = "-", .kind = "audit.pruned", .sender = "audit",
                                .origin = "audit", .instance = "audit-prune", .seq = last, .data = data };
        if (bmq_audit_store_put (self, &row, err, errlen) < 0) rc = SQLITE_ERROR;
    }
    if (rc != SQLITE_DONE || bmq_audit_store_commit (self)) {
        ERR ("cannot prune audit records: %s", sqlite3_errmsg (self->db));
        bmq_audit_store_rollback (self);
        return -1;
    }
    return deleted;
}

int64_t bmq_audit_store_used_bytes (bmq_audit_store_t *self)
{
    int64_t v[3] = { 0, 0, 0 };
    const char *sql[3] = { "PRAGMA page_count", "PRAGMA freelist_count", "PRAGMA page_size" };
    for (int i = 0; i < 3; i++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2 (self->db, sql[i], -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
            v[i] = sqlite3_column_int64 (st, 0);
        sqlite3_finalize (st);
    }
    return (v[0] - v[1]) * v[2];
}

int bmq_audit_store_version (bmq_audit_store_t *self) { return s_user_version (self->db); }
sqlite3 *bmq_audit_store_db (bmq_audit_store_t *self) { return self->db; }
const char *bmq_audit_store_error (bmq_audit_store_t *self) { return sqlite3_errmsg (self->db); }
