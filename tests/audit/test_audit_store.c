/* test_audit_store — the audit store, intake checks, queries and retention,
 * in-process on a database in a temp dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "audit_client.h"
#include "audit_intake.h"
#include "audit_query.h"
#include "audit_retention.h"
#include "audit_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DAY_MS 86400000LL

static char s_dir[64];
static char s_path[128];

static int s_setup (void **state)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-audit-store-XXXXXX");
    assert_non_null (mkdtemp (s_dir));
    snprintf (s_path, sizeof s_path, "%s/audit.db", s_dir);
    return 0;
}

static int s_teardown (void **state)
{
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static bmq_audit_store_t *s_open (void)
{
    char err[512] = "";
    bmq_audit_store_t *store = bmq_audit_store_open (s_path, err, sizeof err);
    if (!store) fail_msg ("open: %s", err);
    return store;
}

static int s_put (bmq_audit_store_t *store, int64_t stored_at, int64_t ts, const char *cid, const char *kind,
                  const char *origin, int64_t seq, const char *plan_id)
{
    char data[128], err[512];
    if (plan_id) snprintf (data, sizeof data, "{\"plan_id\":\"%s\",\"seq\":%lld}", plan_id, (long long) seq);
    else snprintf (data, sizeof data, "{\"seq\":%lld}", (long long) seq);
    bmq_audit_row_t row = { .stored_at = stored_at, .ts_ms = ts, .cid = cid, .kind = kind, .sender = "test",
                            .origin = origin, .seq = seq, .plan_id = plan_id, .data = data };
    return bmq_audit_store_put (store, &row, err, sizeof err);
}

static int64_t s_scalar (const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t v = -1;
    assert_int_equal (sqlite3_open (s_path, &db), SQLITE_OK);
    if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
        v = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    sqlite3_close (db);
    return v;
}

/* ---- schema ----------------------------------------------------------------- */

static void test_migrate_from_empty (void **state)
{
    bmq_audit_store_t *store = s_open ();
    assert_int_equal (bmq_audit_store_version (store), BMQ_AUDIT_SCHEMA_VERSION);
    assert_int_equal (bmq_audit_store_count (store), 0);
    bmq_audit_store_close (&store);
    assert_null (store);
    bmq_audit_store_close (&store);              /* twice is harmless */
    /* reopening runs no migration again */
    store = s_open ();
    assert_int_equal (bmq_audit_store_version (store), BMQ_AUDIT_SCHEMA_VERSION);
    bmq_audit_store_close (&store);
    assert_int_equal (s_scalar ("SELECT count(*) FROM sqlite_master WHERE name = 'records_plan'"), 1);
}

static void test_migrate_from_v1 (void **state)
{
    sqlite3 *db;
    assert_int_equal (sqlite3_open (s_path, &db), SQLITE_OK);
    const char *v1 =
        "CREATE TABLE records (id INTEGER PRIMARY KEY, stored_at INTEGER NOT NULL, ts INTEGER NOT NULL,"
        " cid TEXT NOT NULL, kind TEXT NOT NULL, sender TEXT NOT NULL, origin TEXT NOT NULL, seq INTEGER NOT NULL,"
        " data TEXT NOT NULL, UNIQUE (origin, seq));"
        "CREATE INDEX records_cid ON records (cid, id);"
        "CREATE INDEX records_ts ON records (ts);"
        "CREATE INDEX records_kind ON records (kind, ts);"
        "INSERT INTO records VALUES (1, 10, 10, 'c1', 'request', 'gateway', 'g-1', 1, '{\"prompt\":\"x\"}');"
        "INSERT INTO records VALUES (2, 11, 11, 'c1', 'plan.start', 'executor', 'e-1', 1, '{\"plan_id\":\"p-1\"}');"
        "INSERT INTO records VALUES (3, 12, 12, 'c2', 'plan.start', 'executor', 'e-1', 2, '{\"plan_id\":42}');"
        "PRAGMA user_version = 1;";
    assert_int_equal (sqlite3_exec (db, v1, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close (db);

    bmq_audit_store_t *store = s_open ();
    assert_int_equal (bmq_audit_store_version (store), BMQ_AUDIT_SCHEMA_VERSION);
    assert_int_equal (bmq_audit_store_count (store), 3);
    bmq_audit_store_close (&store);
    /* 3: the old self-declared sender is the origin, the old origin the instance */
    assert_int_equal (s_scalar ("SELECT count(*) FROM records WHERE origin = 'executor' AND instance = 'e-1'"), 2);
    assert_int_equal (s_scalar ("SELECT count(*) FROM records WHERE plan_id = 'p-1'"), 1);
    /* a plan_id that is not a string is not indexed */
    assert_int_equal (s_scalar ("SELECT count(*) FROM records WHERE plan_id IS NULL"), 2);
}

static void test_newer_schema_refused (void **state)
{
    sqlite3 *db;
    assert_int_equal (sqlite3_open (s_path, &db), SQLITE_OK);
    assert_int_equal (sqlite3_exec (db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close (db);
    char err[512] = "";
    assert_null (bmq_audit_store_open (s_path, err, sizeof err));
    assert_non_null (strstr (err, "newer"));
}

/* ---- writes ------------------------------------------------------------------ */

static void test_duplicate_ignored (void **state)
{
    bmq_audit_store_t *store = s_open ();
    assert_int_equal (bmq_audit_store_begin (store), 0);
    assert_int_equal (s_put (store, 0, 1, "c", "k", "origin-a", 1, NULL), 1);
    assert_int_equal (s_put (store, 0, 1, "c", "k", "origin-a", 1, NULL), 0);     /* resent */
    assert_int_equal (s_put (store, 0, 1, "c", "k", "origin-b", 1, NULL), 1);     /* another instance */
    assert_int_equal (bmq_audit_store_commit (store), 0);
    /* and across transactions, as after an audit restart */
    assert_int_equal (bmq_audit_store_begin (store), 0);
    assert_int_equal (s_put (store, 0, 1, "c", "k", "origin-a", 1, NULL), 0);
    assert_int_equal (bmq_audit_store_commit (store), 0);
    assert_int_equal (bmq_audit_store_count (store), 2);
    bmq_audit_store_close (&store);
}

/* A full disk, simulated by capping the page count: the write fails with a
 * clear error, the transaction leaves nothing behind, and what was committed
 * before stays; once there is room again writes succeed. */
static void test_failed_write (void **state)
{
    bmq_audit_store_t *store = s_open ();
    assert_int_equal (bmq_audit_store_begin (store), 0);
    for (int i = 1; i <= 10; i++) assert_int_equal (s_put (store, 0, i, "c", "k", "o", i, NULL), 1);
    assert_int_equal (bmq_audit_store_commit (store), 0);
    assert_int_equal (bmq_audit_store_set_max_size (store, 4096 * 8), 0);

    char err[512] = "", big[8192];
    memset (big, 'x', sizeof big - 10);
    snprintf (big + sizeof big - 10, 10, "\"}");
    memcpy (big, "{\"pad\":\"", 8);
    assert_int_equal (bmq_audit_store_begin (store), 0);
    int rc = 0;
    for (int i = 11; i < 200 && rc >= 0; i++) {
        bmq_audit_row_t row = { .ts_ms = i, .cid = "c", .kind = "k", .sender = "s", .origin = "o", .seq = i, .data = big };
        rc = bmq_audit_store_put (store, &row, err, sizeof err);
    }
    assert_int_equal (rc, -1);
    assert_non_null (strstr (err, "full"));
    bmq_audit_store_rollback (store);
    assert_int_equal (bmq_audit_store_count (store), 10);

    assert_int_equal (bmq_audit_store_set_max_size (store, 0), 0);
    assert_int_equal (bmq_audit_store_begin (store), 0);
    assert_int_equal (s_put (store, 0, 11, "c", "k", "o", 11, NULL), 1);
    assert_int_equal (bmq_audit_store_commit (store), 0);
    assert_int_equal (bmq_audit_store_count (store), 11);
    bmq_audit_store_close (&store);
}

/* ---- retention with an injected clock ------------------------------------------- */

static void test_prune_injected_clock (void **state)
{
    const int64_t now = 1800000000000LL;
    bmq_audit_store_t *store = s_open ();
    assert_int_equal (bmq_audit_store_begin (store), 0);
    for (int i = 1; i <= 1200; i++) s_put (store, now - 40 * DAY_MS + i, now - 40 * DAY_MS, "old", "k", "o", i, NULL);
    for (int i = 1201; i <= 1500; i++) s_put (store, now - 10 * DAY_MS, now - 10 * DAY_MS, "new", "k", "o", i, NULL);
    assert_int_equal (bmq_audit_store_commit (store), 0);

    char err[512];
    bmq_audit_retention_t *r = bmq_audit_retention_new (30 * DAY_MS, 3600 * 1000, 500);
    assert_int_equal (bmq_audit_retention_wait_ms (r, now), 0);           /* first pass due at once */
    assert_int_equal (bmq_audit_retention_step (r, store, now, err, sizeof err), 500);
    assert_true (bmq_audit_retention_busy (r));

    /* between two batches another connection writes without waiting: no lock is held */
    sqlite3 *writer;
    assert_int_equal (sqlite3_open (s_path, &writer), SQLITE_OK);
    sqlite3_busy_timeout (writer, 0);
    assert_int_equal (sqlite3_exec (writer, "INSERT INTO records (stored_at, ts, cid, kind, sender, origin, seq, data)"
                                            " VALUES (1800000000000, 1, 'x', 'k', 's', 'w', 1, '{}')", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close (writer);

    assert_int_equal (bmq_audit_retention_step (r, store, now + 5, err, sizeof err), 500);
    assert_int_equal (bmq_audit_retention_step (r, store, now + 10, err, sizeof err), 200);
    assert_false (bmq_audit_retention_busy (r));
    assert_int_equal (bmq_audit_store_count (store), 301);
    assert_int_equal (bmq_audit_retention_pruned (r), 1200);

    /* not due again until the interval passed */
    assert_int_equal (bmq_audit_retention_wait_ms (r, now + 10 + 1000), 3600 * 1000 - 1000);
    assert_int_equal (bmq_audit_retention_step (r, store, now + 1000, err, sizeof err), 0);
    /* 21 days later the 10-day-old records are 31 days old */
    assert_int_equal (bmq_audit_retention_step (r, store, now + 21 * DAY_MS, err, sizeof err), 300);
    assert_int_equal (bmq_audit_store_count (store), 1);
    bmq_audit_retention_destroy (&r);
    assert_null (r);

    /* retention 0 keeps everything */
    r = bmq_audit_retention_new (0, 1000, 500);
    assert_int_equal (bmq_audit_retention_step (r, store, now + 1000 * DAY_MS, err, sizeof err), 0);
    assert_int_equal (bmq_audit_store_count (store), 1);
    bmq_audit_retention_destroy (&r);
    bmq_audit_store_close (&store);
}

/* ---- intake: what is never stored ---------------------------------------------- */

static bmq_envelope_t *s_record (const char *origin, int64_t seq, const char *kind, json_t *data)
{
    json_t *body = json_pack ("{s:s, s:o, s:I}", "kind", kind, "data", data, "seq", (json_int_t) seq);
    if (origin) json_object_set_new (body, "origin", json_string (origin));
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_AUDIT_RECORD, "story", body);
    /* as bmq_bus_recv sets it from the CURVE key */
    snprintf (env->auth_name, sizeof env->auth_name, "gw");
    snprintf (env->auth_role, sizeof env->auth_role, "service");
    return env;
}

static void s_expect_reject (bmq_envelope_t *env, const char *why)
{
    bmq_audit_row_t row;
    char *data = NULL, *flag = NULL, err[512] = "";
    assert_int_equal (bmq_audit_intake (env, &row, &data, &flag, err, sizeof err), -1);
    assert_null (data);
    if (!strstr (err, why)) fail_msg ("expected '%s' in '%s'", why, err);
    bmq_envelope_destroy (&env);
}

static void test_intake (void **state)
{
    bmq_audit_row_t row;
    char *data = NULL, *flag = NULL, err[512];
    bmq_envelope_t *env = s_record ("gw-1-1", 7, "plan.start", json_pack ("{s:s}", "plan_id", "p-1"));
    assert_int_equal (bmq_audit_intake (env, &row, &data, &flag, err, sizeof err), 0);
    assert_string_equal (row.origin, "gw");             /* the key, not the body */
    assert_string_equal (row.instance, "gw-1-1");
    assert_null (flag);
    assert_int_equal (row.seq, 7);
    assert_string_equal (row.plan_id, "p-1");
    assert_string_equal (row.data, "{\"plan_id\":\"p-1\"}");
    free (data);
    bmq_envelope_destroy (&env);

    size_t big = BMQ_AUDIT_DATA_MAX + 10;
    char *pad = malloc (big + 1);
    memset (pad, 'a', big);
    pad[big] = 0;
    s_expect_reject (s_record ("gw-1-1", 8, "k", json_pack ("{s:s}", "pad", pad)), "exceeds");
    free (pad);
    s_expect_reject (s_record (NULL, 9, "k", json_object ()), "origin");
    s_expect_reject (s_record ("gw 1", 9, "k", json_object ()), "origin");
    s_expect_reject (s_record ("gw-1-1", 0, "k", json_object ()), "seq");
    s_expect_reject (s_record ("gw-1-1", -3, "k", json_object ()), "seq");
    s_expect_reject (s_record ("gw-1-1", 9, "", json_object ()), "kind");
    s_expect_reject (s_record ("gw-1-1", 9, "a\tb", json_object ()), "kind");

    json_t *many = json_array ();
    for (int i = 0; i <= BMQ_AUDIT_DATA_ITEMS; i++) json_array_append_new (many, json_integer (i));
    s_expect_reject (s_record ("gw-1-1", 9, "k", json_pack ("{s:o}", "many", many)), "item");
    json_t *deep = json_object ();
    for (int i = 0; i < BMQ_AUDIT_DATA_DEPTH; i++) deep = json_pack ("{s:o}", "d", deep);
    s_expect_reject (s_record ("gw-1-1", 9, "k", deep), "level");
}

/* ---- queries ----------------------------------------------------------------------- */

static json_t *s_query (bmq_audit_store_t *store, const char *json)
{
    json_t *body = json_loads (json, 0, NULL);
    assert_non_null (body);
    bool bad;
    char err[512];
    json_t *reply = bmq_audit_query (store, body, &bad, err, sizeof err);
    json_decref (body);
    if (!reply) fail_msg ("query %s: %s", json, err);
    return reply;
}

static void test_query (void **state)
{
    bmq_audit_store_t *store = s_open ();
    assert_int_equal (bmq_audit_store_begin (store), 0);
    /* two stories interleaved in time; story a names plan p-a only in its later records */
    s_put (store, 0, 100, "a", "request", "gw", 1, NULL);
    s_put (store, 0, 101, "b", "request", "gw", 2, NULL);
    s_put (store, 0, 102, "a", "verdict", "val", 1, NULL);
    s_put (store, 0, 103, "a", "plan.start", "ex", 1, "p-a");
    s_put (store, 0, 103, "b", "plan.start", "ex", 2, "p-b");
    s_put (store, 0, 104, "a", "plan.end", "ex", 3, "p-a");
    s_put (store, 0, 99, "a", "late", "slow", 1, NULL);    /* arrives last, happened first */
    assert_int_equal (bmq_audit_store_commit (store), 0);

    json_t *r = s_query (store, "{\"filter\":{\"cid\":\"a\"}}");
    json_t *recs = json_object_get (r, "records");
    assert_int_equal (json_array_size (recs), 5);
    const char *story[] = { "late", "request", "verdict", "plan.start", "plan.end" };
    for (int i = 0; i < 5; i++)
        assert_string_equal (json_string_value (json_object_get (json_array_get (recs, i), "kind")), story[i]);
    assert_null (json_object_get (r, "next"));
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_array_get (recs, 3), "data"), "plan_id")), "p-a");
    json_decref (r);

    /* --plan: the whole story of the plan, not just the records naming it */
    r = s_query (store, "{\"filter\":{\"plan\":\"p-a\"}}");
    assert_int_equal (json_array_size (json_object_get (r, "records")), 5);
    json_decref (r);
    r = s_query (store, "{\"filter\":{\"kind\":\"plan.*\"}}");
    assert_int_equal (json_array_size (json_object_get (r, "records")), 3);
    json_decref (r);
    r = s_query (store, "{\"filter\":{\"since\":103, \"until\":104}}");
    assert_int_equal (json_array_size (json_object_get (r, "records")), 2);
    json_decref (r);

    /* paging: pages of 2 walk all 7 in order, both ways */
    for (int desc = 0; desc < 2; desc++) {
        json_t *after = NULL;
        int64_t seen = 0, prev_ts = desc ? 1000 : 0;
        while (true) {
            json_t *q = json_pack ("{s:s, s:i}", "order", desc ? "desc" : "asc", "limit", 2);
            if (after) json_object_set (q, "after", after);
            json_decref (after);
            after = NULL;
            bool bad;
            char err[512];
            json_t *page = bmq_audit_query (store, q, &bad, err, sizeof err);
            json_decref (q);
            assert_non_null (page);
            size_t i;
            json_t *rec;
            json_array_foreach (json_object_get (page, "records"), i, rec) {
                int64_t ts = json_integer_value (json_object_get (rec, "ts"));
                assert_true (desc ? ts <= prev_ts : ts >= prev_ts);
                prev_ts = ts;
                seen++;
            }
            after = json_incref (json_object_get (page, "next"));
            json_decref (page);
            if (!after) break;
        }
        assert_int_equal (seen, 7);
    }

    /* bad queries are the asker's fault */
    const char *bad_queries[] = { "{\"filter\":{\"sinse\":1}}", "{\"order\":\"up\"}", "{\"limit\":0}",
                                  "{\"after\":[1]}", "{\"filter\":{\"since\":\"yesterday\"}}", "{\"filter\":{\"cid\":\"\"}}" };
    for (size_t i = 0; i < sizeof bad_queries / sizeof bad_queries[0]; i++) {
        json_t *body = json_loads (bad_queries[i], 0, NULL);
        bool bad = false;
        char err[512] = "";
        assert_null (bmq_audit_query (store, body, &bad, err, sizeof err));
        assert_true (bad);
        assert_true (strlen (err) > 0);
        json_decref (body);
    }
    bmq_audit_store_close (&store);
}

/* Pages stop before BMQ_AUDIT_PAGE_BYTES of data or BMQ_AUDIT_PAGE_ITEMS
 * items, so a result always fits in one envelope; paging still reaches all. */
static int s_pages (bmq_audit_store_t *store, const char *kind, int *records)
{
    json_t *after = NULL;
    int pages = 0;
    *records = 0;
    do {
        json_t *q = json_pack ("{s:i, s:{s:s}}", "limit", 500, "filter", "kind", kind);
        if (after) json_object_set_new (q, "after", after);
        bool bad;
        char err[512];
        json_t *page = bmq_audit_query (store, q, &bad, err, sizeof err);
        json_decref (q);
        assert_non_null (page);
        pages++;
        *records += (int) json_array_size (json_object_get (page, "records"));
        after = json_incref (json_object_get (page, "next"));
        json_decref (page);
    } while (after);
    return pages;
}

static void test_query_page_bounds (void **state)
{
    bmq_audit_store_t *store = s_open ();
    size_t big = 600 * 1024;
    char *data = malloc (big + 16);
    snprintf (data, 16, "{\"pad\":\"");
    memset (data + 8, 'p', big);
    strcpy (data + 8 + big, "\"}");
    char err[512];
    assert_int_equal (bmq_audit_store_begin (store), 0);
    for (int i = 1; i <= 3; i++) {
        bmq_audit_row_t row = { .ts_ms = i, .cid = "c", .kind = "k", .sender = "s", .origin = "o", .seq = i, .data = data };
        assert_int_equal (bmq_audit_store_put (store, &row, err, sizeof err), 1);
    }
    assert_int_equal (bmq_audit_store_commit (store), 0);
    int records;
    assert_int_equal (s_pages (store, "k", &records), 3);        /* one 600 KB record per page */
    assert_int_equal (records, 3);
    free (data);

    /* 40,000 items each: two fit in a page, a third would not */
    char *many = malloc (40000 * 2 + 16);
    char *p = many + sprintf (many, "{\"m\":[");
    for (int i = 0; i < 40000; i++) p += sprintf (p, i ? ",1" : "1");
    strcpy (p, "]}");
    assert_int_equal (bmq_audit_store_begin (store), 0);
    for (int i = 4; i <= 6; i++) {
        bmq_audit_row_t row = { .ts_ms = i, .cid = "c", .kind = "m", .sender = "s", .origin = "o", .seq = i, .data = many };
        assert_int_equal (bmq_audit_store_put (store, &row, err, sizeof err), 1);
    }
    assert_int_equal (bmq_audit_store_commit (store), 0);
    free (many);
    assert_int_equal (s_pages (store, "m", &records), 2);
    assert_int_equal (records, 3);
    bmq_audit_store_close (&store);
}

/* Issue 12: the origin is the authenticated key; a body claiming another is
 * kept under the real one, flagged, and cannot shadow the other's records. */
static void test_forged_origin (void **state)
{
    (void) state;
    char err[512];
    bmq_audit_store_t *store = s_open ();
    /* the executor's real record 1 */
    bmq_envelope_t *real = s_record ("executor-10-1", 1, "plan.end", json_pack ("{s:s}", "plan_id", "p-9"));
    snprintf (real->auth_name, sizeof real->auth_name, "executor");
    /* a validator key claims to be that executor instance, same seq */
    bmq_envelope_t *fake = s_record ("executor-10-1", 1, "plan.end", json_pack ("{s:s}", "plan_id", "p-forged"));
    snprintf (fake->auth_name, sizeof fake->auth_name, "validator");
    bmq_audit_row_t row;
    char *data = NULL, *flag = NULL;
    assert_int_equal (bmq_audit_intake (fake, &row, &data, &flag, err, sizeof err), 0);
    assert_string_equal (row.origin, "validator");
    assert_string_equal (row.sender, "validator");
    assert_non_null (flag);
    assert_non_null (strstr (flag, "forged_origin"));
    assert_int_equal (bmq_audit_store_begin (store), 0);
    assert_int_equal (bmq_audit_store_put (store, &row, err, sizeof err), 1);
    free (data); free (flag);
    /* the real record is not shadowed by the forgery: it is stored too */
    assert_int_equal (bmq_audit_intake (real, &row, &data, &flag, err, sizeof err), 0);
    assert_null (flag);
    assert_int_equal (bmq_audit_store_put (store, &row, err, sizeof err), 1);
    assert_int_equal (bmq_audit_store_commit (store), 0);
    free (data); free (flag);
    assert_int_equal (s_scalar ("SELECT count(*) FROM records WHERE origin = 'executor' AND flag IS NULL"), 1);
    assert_int_equal (s_scalar ("SELECT count(*) FROM records WHERE origin = 'validator' AND flag LIKE 'forged_origin%'"), 1);
    /* a body origin merely starting with the key's name is still forged */
    bmq_envelope_t *near = s_record ("executorX-1-1", 2, "k", json_object ());
    snprintf (near->auth_name, sizeof near->auth_name, "executor");
    assert_int_equal (bmq_audit_intake (near, &row, &data, &flag, err, sizeof err), 0);
    assert_non_null (flag);
    free (data); free (flag);
    bmq_envelope_destroy (&near);
    bmq_envelope_destroy (&real);
    bmq_envelope_destroy (&fake);
    bmq_audit_store_close (&store);
}

/* Same (origin, instance, seq), same content: a resend (0). Other content: a
 * conflict (2) that the service stores as an alert. */
static void test_conflicting_duplicate (void **state)
{
    (void) state;
    char err[512];
    bmq_audit_store_t *store = s_open ();
    bmq_audit_row_t a = { .ts_ms = 1, .cid = "c", .kind = "plan.end", .sender = "executor", .origin = "executor",
                          .instance = "executor-1-1", .seq = 5, .data = "{\"ok\":true}" };
    bmq_audit_row_t b = a;
    b.data = "{\"ok\":false}";
    assert_int_equal (bmq_audit_store_begin (store), 0);
    assert_int_equal (bmq_audit_store_put (store, &a, err, sizeof err), 1);
    assert_int_equal (bmq_audit_store_put (store, &a, err, sizeof err), 0);
    assert_int_equal (bmq_audit_store_put (store, &b, err, sizeof err), 2);
    /* another instance of the same key numbers on its own */
    b.instance = "executor-2-2";
    assert_int_equal (bmq_audit_store_put (store, &b, err, sizeof err), 1);
    assert_int_equal (bmq_audit_store_commit (store), 0);
    assert_int_equal (s_scalar ("SELECT count(*) FROM records"), 2);
    bmq_audit_store_close (&store);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_migrate_from_empty, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_migrate_from_v1, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_newer_schema_refused, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_duplicate_ignored, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_failed_write, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_prune_injected_clock, s_setup, s_teardown),
        cmocka_unit_test (test_intake),
        cmocka_unit_test_setup_teardown (test_forged_origin, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_conflicting_duplicate, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_query, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_query_page_bounds, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
