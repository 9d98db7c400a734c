/* audit_query — filters and keyset paging over the records table. */
#include "audit_query.h"
#include "audit_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)
#define FILTER_STR_MAX 128

typedef struct {
    bool        has_since, has_until, has_after, desc;
    int64_t     since, until, after_ts, after_id;
    const char *cid, *plan, *kind;
    int         limit;
} s_query_t;

static int s_filter_str (const json_t *v, const char *key, const char **out, char *err, size_t errlen)
{
    if (!json_is_string (v) || json_string_length (v) == 0 || json_string_length (v) > FILTER_STR_MAX) {
        ERR ("filter.%s must be a string of 1..%d characters", key, FILTER_STR_MAX);
        return -1;
    }
    *out = json_string_value (v);
    return 0;
}

static int s_parse (const json_t *body, s_query_t *q, char *err, size_t errlen)
{
    memset (q, 0, sizeof *q);
    q->limit = 100;
    const json_t *filter = json_object_get (body, "filter");
    const char *key;
    json_t *v;
    /* strict: a misspelt filter must fail, not silently list everything */
    json_object_foreach ((json_t *) filter, key, v) {
        if (!strcmp (key, "since") || !strcmp (key, "until")) {
            if (!json_is_integer (v)) { ERR ("filter.%s must be an integer (ms since the epoch)", key); return -1; }
            if (key[0] == 's') { q->has_since = true; q->since = json_integer_value (v); }
            else { q->has_until = true; q->until = json_integer_value (v); }
        }
        else if (!strcmp (key, "cid")) { if (s_filter_str (v, key, &q->cid, err, errlen)) return -1; }
        else if (!strcmp (key, "plan")) { if (s_filter_str (v, key, &q->plan, err, errlen)) return -1; }
        else if (!strcmp (key, "kind")) { if (s_filter_str (v, key, &q->kind, err, errlen)) return -1; }
        else { ERR ("unknown filter '%s' (since, until, cid, plan, kind)", key); return -1; }
    }
    const char *order = json_string_value (json_object_get (body, "order"));
    if (order && strcmp (order, "asc") && strcmp (order, "desc")) { ERR ("order must be \"asc\" or \"desc\""); return -1; }
    q->desc = order && !strcmp (order, "desc");
    json_t *limit = json_object_get (body, "limit");
    if (limit && !json_is_null (limit)) {
        json_int_t n = json_integer_value (limit);
        if (n < 1) { ERR ("limit must be at least 1"); return -1; }
        q->limit = n > BMQ_AUDIT_PAGE_MAX ? BMQ_AUDIT_PAGE_MAX : (int) n;
    }
    json_t *after = json_object_get (body, "after");
    if (after && !json_is_null (after)) {
        if (json_array_size (after) != 2 || !json_is_integer (json_array_get (after, 0))
            || !json_is_integer (json_array_get (after, 1))) { ERR ("after must be [ts, id] as returned in next"); return -1; }
        q->has_after = true;
        q->after_ts = json_integer_value (json_array_get (after, 0));
        q->after_id = json_integer_value (json_array_get (after, 1));
    }
    return 0;
}

/* Only fixed fragments go into the SQL; every value is bound. */
static void s_sql (const s_query_t *q, char *sql, size_t len)
{
    snprintf (sql, len, "SELECT id, ts, stored_at, cid, kind, sender, origin, seq, plan_id, data, instance, flag, sender_ts"
                        " FROM records WHERE 1%s%s%s%s%s%s ORDER BY ts %s, id %s LIMIT :limit",
              q->has_since ? " AND ts >= :since" : "",
              q->has_until ? " AND ts < :until" : "",
              q->cid ? " AND cid = :cid" : "",
              q->kind ? " AND kind GLOB :kind" : "",
              q->plan ? " AND cid IN (SELECT cid FROM records WHERE plan_id = :plan)" : "",
              !q->has_after ? "" : q->desc ? " AND (ts < :ats OR (ts = :ats AND id < :aid))"
                                           : " AND (ts > :ats OR (ts = :ats AND id > :aid))",
              q->desc ? "DESC" : "ASC", q->desc ? "DESC" : "ASC");
}

static void s_bind_int (sqlite3_stmt *st, const char *name, int64_t v)
{
    int i = sqlite3_bind_parameter_index (st, name);
    if (i) sqlite3_bind_int64 (st, i, v);
}

static void s_bind_text (sqlite3_stmt *st, const char *name, const char *v)
{
    int i = sqlite3_bind_parameter_index (st, name);
    if (i && v) sqlite3_bind_text (st, i, v, -1, SQLITE_STATIC);
}

/* One row as a record; *items is what it adds to the page as the codec counts. */
static json_t *s_row (sqlite3_stmt *st, size_t *items)
{
    const char *data = (const char *) sqlite3_column_text (st, 9);
    json_t *parsed = data ? json_loads (data, 0, NULL) : NULL;
    int depth;
    bmq_audit_data_shape (parsed, items, &depth);
    *items += 2 * 14;                      /* the record's own fields */
    json_t *rec = json_pack ("{s:I, s:I, s:I, s:s, s:s, s:s, s:s, s:I, s:o}",
        "id", (json_int_t) sqlite3_column_int64 (st, 0), "ts", (json_int_t) sqlite3_column_int64 (st, 1),
        "stored_at", (json_int_t) sqlite3_column_int64 (st, 2), "cid", (const char *) sqlite3_column_text (st, 3),
        "kind", (const char *) sqlite3_column_text (st, 4), "sender", (const char *) sqlite3_column_text (st, 5),
        "origin", (const char *) sqlite3_column_text (st, 6), "seq", (json_int_t) sqlite3_column_int64 (st, 7),
        /* stored text that no longer parses is shown as it is, not dropped */
        "data", parsed ? parsed : json_string (data ? data : ""));
    if (rec && sqlite3_column_type (st, 8) == SQLITE_TEXT)
        json_object_set_new (rec, "plan_id", json_string ((const char *) sqlite3_column_text (st, 8)));
    if (rec && sqlite3_column_type (st, 10) == SQLITE_TEXT)
        json_object_set_new (rec, "instance", json_string ((const char *) sqlite3_column_text (st, 10)));
    if (rec && sqlite3_column_type (st, 11) == SQLITE_TEXT)     /* forged_origin: …; clock_skew: …; kind_not_own: … */
        json_object_set_new (rec, "flag", json_string ((const char *) sqlite3_column_text (st, 11)));
    if (rec && sqlite3_column_type (st, 12) == SQLITE_INTEGER)  /* the sender's clock (ts is the audit's) */
        json_object_set_new (rec, "sender_ts", json_integer (sqlite3_column_int64 (st, 12)));
    return rec;
}

json_t *bmq_audit_query (bmq_audit_store_t *store, const json_t *body, bool *bad_request, char *err, size_t errlen)
{
    s_query_t q;
    *bad_request = true;
    if (s_parse (body, &q, err, errlen)) return NULL;
    *bad_request = false;
    char sql[1024];
    s_sql (&q, sql, sizeof sql);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2 (bmq_audit_store_db (store), sql, -1, &st, NULL) != SQLITE_OK) {
        ERR ("cannot query the audit trail: %s", bmq_audit_store_error (store));
        return NULL;
    }
    s_bind_int (st, ":since", q.since);
    s_bind_int (st, ":until", q.until);
    s_bind_text (st, ":cid", q.cid);
    s_bind_text (st, ":kind", q.kind);
    s_bind_text (st, ":plan", q.plan);
    s_bind_int (st, ":ats", q.after_ts);
    s_bind_int (st, ":aid", q.after_id);
    s_bind_int (st, ":limit", q.limit);
    json_t *records = json_array ();
    size_t total = 0;
    int64_t last_ts = 0, last_id = 0;
    int rc;
    bool full = false;
    int rows = 0;
    size_t items = 0;
    while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
        /* a row that would overflow the page starts the next one (a page
         * always holds at least one row, and one row is within bounds) */
        size_t bytes = (size_t) sqlite3_column_bytes (st, 9), row_items;
        json_t *rec = s_row (st, &row_items);
        if (rows && (total + bytes > BMQ_AUDIT_PAGE_BYTES || items + row_items > BMQ_AUDIT_PAGE_ITEMS)) {
            json_decref (rec);
            full = true;
            break;
        }
        if (rec) json_array_append_new (records, rec);
        last_ts = sqlite3_column_int64 (st, 1);
        last_id = sqlite3_column_int64 (st, 0);
        total += bytes;
        items += row_items;
        if (++rows >= q.limit) { full = true; break; }
    }
    bool failed = rc != SQLITE_ROW && rc != SQLITE_DONE;
    sqlite3_finalize (st);
    if (failed) {
        ERR ("cannot read the audit trail: %s", bmq_audit_store_error (store));
        json_decref (records);
        return NULL;
    }
    json_t *reply = json_pack ("{s:o}", "records", records);
    if (full) json_object_set_new (reply, "next", json_pack ("[I, I]", (json_int_t) last_ts, (json_int_t) last_id));
    return reply;
}
