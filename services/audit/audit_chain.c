/* audit_chain — hash chain, HMAC and checkpoint of the audit trail. */
#include "audit_chain.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)
#define HEAD_MAGIC "bmq-audit-head 1"
#define ROW_MAGIC  "bmq-audit-record 1"

typedef unsigned char s_hash_t[BMQ_AUDIT_HASH_LEN];

struct bmq_audit_chain_t {
    unsigned char key[crypto_auth_hmacsha256_KEYBYTES];
    char      head_path[1100];
    int64_t   head_id;            /* the last record stored (0: none) */
    s_hash_t  head_hash;
    int64_t   base_id;            /* the first record kept */
    s_hash_t  base_prev;          /* the hash before it (zeros at the very start) */
    int64_t   saved_head_id, saved_base_id;      /* at begin */
    s_hash_t  saved_head_hash, saved_base_prev;
    char      problem[400];       /* what opening found wrong ("" none) */
    int64_t   verified_id;        /* incremental verification (a rolling sweep): checked up to here */
    bool      sweep_clean;        /* the sweep under way began at the start and found nothing yet */
    s_hash_t  verified_hash;
};

/* ---- encoding --------------------------------------------------------------- */

static void s_hex (const unsigned char *bin, char out[65]) { sodium_bin2hex (out, 65, bin, BMQ_AUDIT_HASH_LEN); }

static int s_unhex (const char *hex, unsigned char *bin)
{
    size_t n = 0;
    if (!hex || strlen (hex) != 2 * BMQ_AUDIT_HASH_LEN) return -1;
    return sodium_hex2bin (bin, BMQ_AUDIT_HASH_LEN, hex, strlen (hex), NULL, &n, NULL) || n != BMQ_AUDIT_HASH_LEN ? -1 : 0;
}

static void s_put_int (crypto_hash_sha256_state *st, int64_t v, bool null)
{
    unsigned char b[9];
    b[0] = null;
    for (int i = 0; i < 8; i++) b[1 + i] = (unsigned char) ((uint64_t) v >> (56 - 8 * i));
    crypto_hash_sha256_update (st, b, sizeof b);
}

static void s_put_str (crypto_hash_sha256_state *st, const char *s)
{
    size_t n = s ? strlen (s) : 0;
    s_put_int (st, (int64_t) n, s == NULL);
    if (n) crypto_hash_sha256_update (st, (const unsigned char *) s, n);
}

/* SHA-256 over every column, in a fixed order, lengths first: no two rows
 * encode alike. */
static void s_row_hash (const bmq_audit_chain_row_t *r, const unsigned char *prev, unsigned char *out)
{
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init (&st);
    crypto_hash_sha256_update (&st, (const unsigned char *) ROW_MAGIC, sizeof ROW_MAGIC);
    s_put_int (&st, r->id, false);
    s_put_int (&st, r->stored_at, false);
    s_put_int (&st, r->ts, false);
    s_put_int (&st, r->sender_ts, r->sender_ts == 0);
    s_put_int (&st, r->seq, false);
    const char *strs[] = { r->cid, r->kind, r->sender, r->origin, r->instance, r->plan_id, r->flag, r->data };
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) s_put_str (&st, strs[i]);
    crypto_hash_sha256_update (&st, prev, BMQ_AUDIT_HASH_LEN);
    crypto_hash_sha256_final (&st, out);
}

static void s_mac (const bmq_audit_chain_t *self, const unsigned char *msg, size_t len, unsigned char *out)
{
    crypto_auth_hmacsha256 (out, msg, len, self->key);
}

/* ---- the key and the checkpoint files ---------------------------------------- */

static int s_key_load (bmq_audit_chain_t *self, const char *path, bool *created, char *err, size_t errlen)
{
    *created = false;
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        randombytes_buf (self->key, sizeof self->key);
        char hex[2 * sizeof self->key + 2];
        sodium_bin2hex (hex, sizeof hex, self->key, sizeof self->key);
        strcat (hex, "\n");
        fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || write (fd, hex, strlen (hex)) != (ssize_t) strlen (hex) || fsync (fd)) {
            ERR ("cannot create the audit key %s: %s", path, strerror (errno));
            if (fd >= 0) close (fd);
            return -1;
        }
        close (fd);
        *created = true;
        return 0;
    }
    if (fd < 0) { ERR ("cannot open the audit key %s: %s", path, strerror (errno)); return -1; }
    struct stat st;
    char hex[130] = "";
    ssize_t n = fstat (fd, &st) == 0 ? read (fd, hex, sizeof hex - 1) : -1;
    close (fd);
    if (n < 0) { ERR ("cannot read the audit key %s", path); return -1; }
    if (st.st_mode & 077) {
        bmq_warn ("the audit key %s was readable by others (mode %o): made 0600", path, (unsigned) (st.st_mode & 0777));
        chmod (path, 0600);
    }
    size_t len = 0;
    hex[n] = 0;
    if (sodium_hex2bin (self->key, sizeof self->key, hex, strcspn (hex, "\n"), NULL, &len, NULL) || len != sizeof self->key) {
        ERR ("the audit key %s is not 64 hex characters", path);
        return -1;
    }
    return 0;
}

static void s_head_text (const bmq_audit_chain_t *self, char *buf, size_t len)
{
    char hh[65], bp[65], mac_hex[65];
    s_hex (self->head_hash, hh);
    s_hex (self->base_prev, bp);
    char body[300];
    snprintf (body, sizeof body, "%s %lld %s %lld %s", HEAD_MAGIC, (long long) self->head_id, hh,
              (long long) self->base_id, bp);
    unsigned char mac[BMQ_AUDIT_HASH_LEN];
    s_mac (self, (const unsigned char *) body, strlen (body), mac);
    s_hex (mac, mac_hex);
    snprintf (buf, len, "%s %s\n", body, mac_hex);
}

static int s_head_write (const bmq_audit_chain_t *self, char *err, size_t errlen)
{
    char text[400], tmp[1200];
    s_head_text (self, text, sizeof text);
    snprintf (tmp, sizeof tmp, "%s.tmp", self->head_path);
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write (fd, text, strlen (text)) == (ssize_t) strlen (text) && fdatasync (fd) == 0;
    if (fd >= 0) close (fd);
    if (!ok || rename (tmp, self->head_path)) {
        ERR ("cannot write the audit checkpoint %s: %s", self->head_path, strerror (errno));
        unlink (tmp);
        return -1;
    }
    return 0;
}

/* Read DB.head: 1 read and its mac holds, 0 no file, -1 unreadable or forged (err). */
static int s_head_read (const bmq_audit_chain_t *self, int64_t *head_id, unsigned char *head_hash, int64_t *base_id,
                        unsigned char *base_prev, char *err, size_t errlen)
{
    FILE *f = fopen (self->head_path, "r");
    if (!f) {
        if (errno == ENOENT) return 0;
        ERR ("cannot read the audit checkpoint %s: %s", self->head_path, strerror (errno));
        return -1;
    }
    char line[400] = "";
    bool got = fgets (line, sizeof line, f) != NULL;
    fclose (f);
    long long hid, bid;
    char hh[80], bp[80], mac_hex[80];
    if (!got || sscanf (line, HEAD_MAGIC " %lld %70s %lld %70s %70s", &hid, hh, &bid, bp, mac_hex) != 5
        || s_unhex (hh, head_hash) || s_unhex (bp, base_prev)) {
        ERR ("the audit checkpoint %s is not in its format (altered?)", self->head_path);
        return -1;
    }
    *head_id = hid;
    *base_id = bid;
    char body[300];
    snprintf (body, sizeof body, "%s %lld %s %lld %s", HEAD_MAGIC, hid, hh, bid, bp);
    unsigned char want[BMQ_AUDIT_HASH_LEN], got_mac[BMQ_AUDIT_HASH_LEN];
    s_mac (self, (const unsigned char *) body, strlen (body), want);
    if (s_unhex (mac_hex, got_mac) || sodium_memcmp (want, got_mac, sizeof want)) {
        ERR ("the audit checkpoint %s does not carry the audit's mac (altered)", self->head_path);
        return -1;
    }
    return 1;
}

/* ---- rows --------------------------------------------------------------------- */

#define ROW_COLUMNS "id, stored_at, ts, sender_ts, seq, cid, kind, sender, origin, instance, plan_id, flag, data, prev, hash, mac"

static void s_row_from (sqlite3_stmt *st, bmq_audit_chain_row_t *r)
{
    r->id = sqlite3_column_int64 (st, 0);
    r->stored_at = sqlite3_column_int64 (st, 1);
    r->ts = sqlite3_column_int64 (st, 2);
    r->sender_ts = sqlite3_column_type (st, 3) == SQLITE_NULL ? 0 : sqlite3_column_int64 (st, 3);
    r->seq = sqlite3_column_int64 (st, 4);
    const char **strs[] = { &r->cid, &r->kind, &r->sender, &r->origin, &r->instance, &r->plan_id, &r->flag, &r->data };
    for (int i = 0; i < 8; i++)
        *strs[i] = sqlite3_column_type (st, 5 + i) == SQLITE_NULL ? NULL : (const char *) sqlite3_column_text (st, 5 + i);
}

/* Seal the records that have no mac yet (a database from before the chain),
 * in id order, as they are: they become the chain's start. */
static int s_seal_legacy (bmq_audit_chain_t *self, sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *sel = NULL, *upd = NULL;
    int rc = -1, n = 0;
    if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK
        || sqlite3_prepare_v2 (db, "SELECT " ROW_COLUMNS " FROM records ORDER BY id", -1, &sel, NULL) != SQLITE_OK
        || sqlite3_prepare_v2 (db, "UPDATE records SET prev = ?, hash = ?, mac = ? WHERE id = ?", -1, &upd, NULL) != SQLITE_OK) {
        ERR ("cannot seal the earlier audit records: %s", sqlite3_errmsg (db));
        goto done;
    }
    s_hash_t prev = { 0 };
    int step;
    while ((step = sqlite3_step (sel)) == SQLITE_ROW) {
        bmq_audit_chain_row_t r;
        s_row_from (sel, &r);
        if (!n) self->base_id = r.id;
        char prev_hex[65], hash_hex[65], mac_hex[65];
        s_hash_t hash, mac;
        s_row_hash (&r, prev, hash);
        s_mac (self, hash, sizeof hash, mac);
        s_hex (prev, prev_hex);
        s_hex (hash, hash_hex);
        s_hex (mac, mac_hex);
        sqlite3_reset (upd);
        sqlite3_bind_text (upd, 1, prev_hex, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text (upd, 2, hash_hex, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text (upd, 3, mac_hex, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64 (upd, 4, r.id);
        if (sqlite3_step (upd) != SQLITE_DONE) { ERR ("cannot seal record %lld: %s", (long long) r.id, sqlite3_errmsg (db)); goto done; }
        memcpy (prev, hash, sizeof prev);
        self->head_id = r.id;
        memcpy (self->head_hash, hash, sizeof hash);
        n++;
    }
    if (step != SQLITE_DONE) { ERR ("cannot read the earlier audit records: %s", sqlite3_errmsg (db)); goto done; }
    rc = sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    if (rc) ERR ("cannot commit the sealing: %s", sqlite3_errmsg (db));
    else if (n) bmq_warn ("audit: %d records from before the hash chain were sealed as found (they start the chain)", n);
done:
    sqlite3_finalize (sel);
    sqlite3_finalize (upd);
    if (rc) sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static int64_t s_int (sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
        v = sqlite3_column_type (st, 0) == SQLITE_NULL ? 0 : sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    return v;
}

bmq_audit_chain_t *bmq_audit_chain_open (const char *db_path, sqlite3 *db, char *err, size_t errlen)
{
    if (sodium_init () < 0) { ERR ("libsodium cannot start"); return NULL; }
    bmq_audit_chain_t *self = calloc (1, sizeof *self);
    char key_path[1100];
    snprintf (key_path, sizeof key_path, "%s.key", db_path);
    snprintf (self->head_path, sizeof self->head_path, "%s.head", db_path);
    bool created;
    if (s_key_load (self, key_path, &created, err, errlen)) goto fail;
    int64_t ck_head = 0, ck_base = 0;
    s_hash_t ck_hash, ck_prev;
    int have = s_head_read (self, &ck_head, ck_hash, &ck_base, ck_prev, err, errlen);
    if (have < 0) {
        /* kept as evidence in the trail itself (bmq_audit_chain_problem: the
         * service records an alert), then a new checkpoint from the database */
        snprintf (self->problem, sizeof self->problem, "%s", err);
        bmq_error ("AUDIT TAMPERING: %s", err);
    }
    int64_t unsealed = s_int (db, "SELECT count(*) FROM records WHERE mac IS NULL");
    if (unsealed < 0) { ERR ("cannot read the audit records: %s", sqlite3_errmsg (db)); goto fail; }
    int64_t rows = s_int (db, "SELECT count(*) FROM records");
    if (have == 0 && unsealed > 0 && unsealed == rows) {
        if (s_seal_legacy (self, db, err, errlen)) goto fail;
    }
    else if (have <= 0) {
        /* a new trail, or one whose checkpoint was removed or altered: it
         * starts where the database starts, chained to what that record says */
        self->base_id = rows > 0 ? s_int (db, "SELECT min(id) FROM records") : 1;
        if (rows > 0) {
            sqlite3_stmt *st;
            if (sqlite3_prepare_v2 (db, "SELECT prev FROM records WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
                sqlite3_bind_int64 (st, 1, self->base_id);
                if (sqlite3_step (st) != SQLITE_ROW || s_unhex ((const char *) sqlite3_column_text (st, 0), self->base_prev))
                    memset (self->base_prev, 0, sizeof self->base_prev);
                sqlite3_finalize (st);
            }
        }
        if (created && rows > unsealed)
            snprintf (self->problem, sizeof self->problem, "the audit key was gone while %lld records were sealed with it:"
                      " they cannot be verified", (long long) (rows - unsealed));
        else if (have == 0 && rows > 0 && !created) {
            snprintf (self->problem, sizeof self->problem, "the checkpoint %.300s was gone while the trail held %lld records",
                      self->head_path, (long long) rows);
            bmq_error ("AUDIT TAMPERING: %s: a new one is made from the database as found", self->problem);
        }
    }
    else {
        self->base_id = ck_base;
        memcpy (self->base_prev, ck_prev, sizeof ck_prev);
    }
    /* the head: the last record stored; never behind the checkpoint, so a
     * trail cut at its tail stays cut (a gap in the ids) after new records */
    int64_t max_id = s_int (db, "SELECT max(id) FROM records");
    self->head_id = max_id > 0 ? max_id : 0;
    if (max_id > 0) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2 (db, "SELECT hash FROM records WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64 (st, 1, max_id);
            if (sqlite3_step (st) != SQLITE_ROW || s_unhex ((const char *) sqlite3_column_text (st, 0), self->head_hash))
                memset (self->head_hash, 0, sizeof self->head_hash);
            sqlite3_finalize (st);
        }
    }
    else if (self->base_id > 1) memcpy (self->head_hash, self->base_prev, sizeof self->head_hash);
    if (have > 0 && ck_head > self->head_id) {
        snprintf (self->problem, sizeof self->problem, "the checkpoint says the trail reached record %lld, the database"
                  " ended at %lld when the audit started: records were deleted from its end", (long long) ck_head,
                  (long long) self->head_id);
        bmq_error ("AUDIT TAMPERING: %s", self->problem);
        self->head_id = ck_head;
        memcpy (self->head_hash, ck_hash, sizeof ck_hash);
    }
    if (have > 0 && !self->head_id) self->head_id = self->base_id - 1;
    self->verified_id = self->base_id - 1;
    memcpy (self->verified_hash, self->base_prev, sizeof self->verified_hash);
    if (s_head_write (self, err, errlen)) goto fail;
    if (created) bmq_info ("audit: a new HMAC key in %s (0600): only this service reads it", key_path);
    return self;
fail:
    sodium_memzero (self->key, sizeof self->key);
    free (self);
    return NULL;
}

void bmq_audit_chain_destroy (bmq_audit_chain_t **self_p)
{
    if (!self_p || !*self_p) return;
    sodium_memzero ((*self_p)->key, sizeof (*self_p)->key);
    free (*self_p);
    *self_p = NULL;
}

int64_t bmq_audit_chain_next_id (const bmq_audit_chain_t *self) { return self->head_id + 1; }
const char *bmq_audit_chain_problem (const bmq_audit_chain_t *self) { return self->problem[0] ? self->problem : NULL; }

void bmq_audit_chain_seal (const bmq_audit_chain_t *self, const bmq_audit_chain_row_t *row,
                           char prev_hex[65], char hash_hex[65], char mac_hex[65])
{
    s_hash_t hash, mac;
    s_row_hash (row, self->head_hash, hash);
    s_mac (self, hash, sizeof hash, mac);
    s_hex (self->head_hash, prev_hex);
    s_hex (hash, hash_hex);
    s_hex (mac, mac_hex);
}

void bmq_audit_chain_advance (bmq_audit_chain_t *self, int64_t id, const char *hash_hex)
{
    self->head_id = id;
    if (s_unhex (hash_hex, self->head_hash)) memset (self->head_hash, 0, sizeof self->head_hash);
}

void bmq_audit_chain_skip_to (bmq_audit_chain_t *self, int64_t id) { if (id > self->head_id) self->head_id = id; }

void bmq_audit_chain_begin (bmq_audit_chain_t *self)
{
    self->saved_head_id = self->head_id;
    self->saved_base_id = self->base_id;
    memcpy (self->saved_head_hash, self->head_hash, sizeof self->head_hash);
    memcpy (self->saved_base_prev, self->base_prev, sizeof self->base_prev);
}

void bmq_audit_chain_rollback (bmq_audit_chain_t *self)
{
    self->head_id = self->saved_head_id;
    self->base_id = self->saved_base_id;
    memcpy (self->head_hash, self->saved_head_hash, sizeof self->head_hash);
    memcpy (self->base_prev, self->saved_base_prev, sizeof self->base_prev);
}

int bmq_audit_chain_commit (bmq_audit_chain_t *self, char *err, size_t errlen)
{
    if (self->head_id == self->saved_head_id && self->base_id == self->saved_base_id) return 0;
    return s_head_write (self, err, errlen);
}

void bmq_audit_chain_rebase (bmq_audit_chain_t *self, int64_t last_id, const char *hash_hex)
{
    self->base_id = last_id + 1;
    if (s_unhex (hash_hex, self->base_prev)) memset (self->base_prev, 0, sizeof self->base_prev);
}

/* ---- verification ------------------------------------------------------------- */

static json_t *s_bad (int64_t id, const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (why, sizeof why, fmt, ap);
    va_end (ap);
    return json_pack ("{s:I, s:s}", "id", (json_int_t) id, "reason", why);
}

json_t *bmq_audit_chain_verify (bmq_audit_chain_t *self, sqlite3 *db, bool incremental, int max_rows,
                                char *err, size_t errlen)
{
    json_t *bad = NULL;
    /* the checkpoint on disk must be the one this service wrote */
    char ck_err[400] = "";
    int64_t ck_head = 0, ck_base = 0;
    s_hash_t ck_hash, ck_prev;
    int have = s_head_read (self, &ck_head, ck_hash, &ck_base, ck_prev, ck_err, sizeof ck_err);
    if (self->problem[0]) bad = s_bad (0, "%s (found when the audit started; an alert record says so)", self->problem);
    else if (have <= 0) bad = s_bad (0, "%s", have < 0 ? ck_err : "the checkpoint file is gone");
    else if (ck_base != self->base_id || sodium_memcmp (ck_prev, self->base_prev, sizeof ck_prev))
        bad = s_bad (0, "the checkpoint file names another start of the trail than the audit keeps");
    int64_t min_id = s_int (db, "SELECT min(id) FROM records"), max_id = s_int (db, "SELECT max(id) FROM records");
    if (min_id < 0 || max_id < 0) { ERR ("cannot read the audit records: %s", sqlite3_errmsg (db)); json_decref (bad); return NULL; }
    /* the start: nothing before the base, and the base itself still there */
    if (!bad && max_id > 0 && min_id < self->base_id)
        bad = s_bad (min_id, "record %lld precedes the start of the trail (%lld): inserted", (long long) min_id,
                     (long long) self->base_id);
    else if (!bad && self->head_id >= self->base_id && (max_id == 0 || min_id > self->base_id))
        bad = s_bad (self->base_id, "records from %lld on are missing at the start of the trail (deleted without an"
                     " audit.pruned record)", (long long) self->base_id);
    /* the end: nothing cut off the tail */
    if (!bad && max_id < self->head_id)
        bad = s_bad (max_id + 1 > self->base_id ? max_id + 1 : self->base_id,
                     "records %lld..%lld are missing at the end of the trail (truncated; the trail reached %lld)",
                     (long long) (max_id + 1 > self->base_id ? max_id + 1 : self->base_id), (long long) self->head_id,
                     (long long) self->head_id);
    int64_t from = self->base_id;
    s_hash_t prev;
    memcpy (prev, self->base_prev, sizeof prev);
    if (incremental && self->verified_id >= self->base_id) {
        from = self->verified_id + 1;
        memcpy (prev, self->verified_hash, sizeof prev);
    }
    else self->sweep_clean = true;      /* a pass from the start of the trail */
    int64_t checked = 0, expect = from;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (db, "SELECT " ROW_COLUMNS " FROM records WHERE id >= ? AND id <= ? ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
        ERR ("cannot read the audit records: %s", sqlite3_errmsg (db));
        json_decref (bad);
        return NULL;
    }
    sqlite3_bind_int64 (st, 1, from);
    sqlite3_bind_int64 (st, 2, self->head_id);
    int step;
    bool row_bad = false;
    while (!row_bad && (!max_rows || checked < max_rows) && (step = sqlite3_step (st)) == SQLITE_ROW) {
        bmq_audit_chain_row_t r;
        s_row_from (st, &r);
        const char *prev_hex = (const char *) sqlite3_column_text (st, 13);
        const char *hash_hex = (const char *) sqlite3_column_text (st, 14);
        const char *mac_hex = (const char *) sqlite3_column_text (st, 15);
        s_hash_t stored_prev, stored_hash, stored_mac, hash, mac;
        json_t *why = NULL;
        if (r.id != expect)
            why = s_bad (expect, "records %lld..%lld are missing (deleted)", (long long) expect, (long long) (r.id - 1));
        else if (!hash_hex || !mac_hex || !prev_hex || s_unhex (hash_hex, stored_hash) || s_unhex (mac_hex, stored_mac)
                 || s_unhex (prev_hex, stored_prev))
            why = s_bad (r.id, "record %lld has no seal (its hash, prev or mac was removed)", (long long) r.id);
        else if (sodium_memcmp (stored_prev, prev, sizeof prev))
            why = s_bad (r.id, "record %lld does not follow record %lld (its prev is another record's hash)",
                         (long long) r.id, (long long) (r.id - 1));
        else {
            s_row_hash (&r, prev, hash);
            s_mac (self, stored_hash, sizeof stored_hash, mac);
            if (sodium_memcmp (hash, stored_hash, sizeof hash))
                why = s_bad (r.id, "record %lld was edited (%s %s: its contents do not match its hash)",
                             (long long) r.id, r.kind ? r.kind : "?", r.cid ? r.cid : "?");
            else if (sodium_memcmp (mac, stored_mac, sizeof mac))
                why = s_bad (r.id, "record %lld carries a hash the audit did not make (its mac is wrong)", (long long) r.id);
        }
        if (why) {
            if (!bad) bad = why; else json_decref (why);
            row_bad = true;
            break;
        }
        memcpy (prev, stored_hash, sizeof prev);
        expect = r.id + 1;
        checked++;
        if (!bad) {
            self->verified_id = r.id;
            memcpy (self->verified_hash, stored_hash, sizeof stored_hash);
        }
    }
    sqlite3_finalize (st);
    bool done = !max_rows || checked < max_rows;
    if (!bad && !row_bad && done && expect <= self->head_id && max_id >= self->head_id)
        bad = s_bad (expect, "records %lld..%lld are missing (deleted)", (long long) expect, (long long) self->head_id);
    /* a failed check is redone in full next time: nothing after it counts as verified */
    if (bad) self->sweep_clean = false;
    /* a whole pass, start to head, found nothing: only that clears an earlier finding */
    bool pass_clean = done && !bad && self->sweep_clean;
    json_t *out = json_pack ("{s:b, s:I, s:I, s:I, s:I, s:b, s:b}", "ok", bad == NULL, "checked", (json_int_t) checked,
                             "verified_upto", (json_int_t) self->verified_id, "head_id", (json_int_t) self->head_id,
                             "base_id", (json_int_t) self->base_id, "complete", done, "pass_clean", pass_clean);
    if (bad) json_object_set_new (out, "first_bad", bad);
    /* the next step starts over from the start of the trail when this one
     * reached the head or failed: a rolling sweep, so a record edited after
     * it was first verified is found within one pass */
    if (bad || done) self->verified_id = self->base_id - 1, memcpy (self->verified_hash, self->base_prev, sizeof prev);
    return out;
}
