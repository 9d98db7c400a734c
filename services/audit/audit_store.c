/* audit_store — SQLite storage of audit records. */
#include "audit_store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)
#define SCHEMA_VERSION 1

struct bmq_audit_store_t {
    sqlite3      *db;
    sqlite3_stmt *insert;
};

/* Migration N brings the schema from version N-1 to N. */
static const char *s_migrations[] = {
    NULL,
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
};

static int s_migrate (sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    int version = 0;
    if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
        version = sqlite3_column_int (st, 0);
    sqlite3_finalize (st);
    if (version > SCHEMA_VERSION) { ERR ("audit database schema %d is newer than this program (%d)", version, SCHEMA_VERSION); return -1; }
    for (int v = version + 1; v <= SCHEMA_VERSION; v++) {
        char *msg = NULL, pragma[64];
        snprintf (pragma, sizeof pragma, "PRAGMA user_version = %d;", v);
        if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec (db, s_migrations[v], NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec (db, pragma, NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec (db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            ERR ("audit schema migration %d failed: %s", v, msg ? msg : "?");
            sqlite3_free (msg);
            sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
    }
    return 0;
}

bmq_audit_store_t *bmq_audit_store_open (const char *path, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        ERR ("cannot open audit database %s: %s", path, db ? sqlite3_errmsg (db) : "out of memory");
        sqlite3_close (db);
        return NULL;
    }
    sqlite3_busy_timeout (db, 5000);
    /* WAL: readers (CLI, gateway) never block the writer; synchronous=FULL
     * fsyncs the WAL at every commit, so an acknowledged record survives a crash. */
    char *msg = NULL;
    if (sqlite3_exec (db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", NULL, NULL, &msg) != SQLITE_OK) {
        ERR ("cannot configure %s: %s", path, msg);
        sqlite3_free (msg);
        sqlite3_close (db);
        return NULL;
    }
    if (s_migrate (db, err, errlen)) { sqlite3_close (db); return NULL; }
    bmq_audit_store_t *self = calloc (1, sizeof *self);
    self->db = db;
    if (sqlite3_prepare_v2 (db, "INSERT OR IGNORE INTO records (stored_at, ts, cid, kind, sender, origin, seq, data)"
                                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", -1, &self->insert, NULL) != SQLITE_OK) {
        ERR ("cannot prepare insert: %s", sqlite3_errmsg (db));
        bmq_audit_store_close (&self);
    }
    return self;
}

void bmq_audit_store_close (bmq_audit_store_t **self_p)
{
    if (!self_p || !*self_p) return;
    sqlite3_finalize ((*self_p)->insert);
    sqlite3_close ((*self_p)->db);
    free (*self_p);
    *self_p = NULL;
}

int bmq_audit_store_begin (bmq_audit_store_t *self)
{
    return sqlite3_exec (self->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

int bmq_audit_store_commit (bmq_audit_store_t *self)
{
    return sqlite3_exec (self->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

void bmq_audit_store_rollback (bmq_audit_store_t *self)
{
    sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
}

int bmq_audit_store_put (bmq_audit_store_t *self, const bmq_audit_row_t *row, char *err, size_t errlen)
{
    char *data = json_dumps (row->data, JSON_COMPACT | JSON_SORT_KEYS);
    if (!data) { ERR ("cannot serialise record data"); return -1; }
    struct timeval tv;
    gettimeofday (&tv, NULL);
    sqlite3_stmt *st = self->insert;
    sqlite3_reset (st);
    sqlite3_bind_int64 (st, 1, (sqlite3_int64) tv.tv_sec * 1000 + tv.tv_usec / 1000);
    sqlite3_bind_int64 (st, 2, row->ts_ms);
    sqlite3_bind_text (st, 3, row->cid, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 4, row->kind, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 5, row->sender, -1, SQLITE_STATIC);
    sqlite3_bind_text (st, 6, row->origin, -1, SQLITE_STATIC);
    sqlite3_bind_int64 (st, 7, row->seq);
    sqlite3_bind_text (st, 8, data, -1, SQLITE_TRANSIENT);
    free (data);
    int rc = sqlite3_step (st);
    if (rc != SQLITE_DONE) { ERR ("cannot store audit record: %s", sqlite3_errmsg (self->db)); return -1; }
    return sqlite3_changes (self->db) > 0 ? 1 : 0;
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
