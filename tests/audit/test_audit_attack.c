/* audit.attack — the audit trail attacks of issue 24, against a real
 * blendmq-audit, with the database edited behind its back as its own user
 * could (sqlite3 on the file):
 *   - an identity edited, a record deleted in the middle, the newest records
 *     cut off: `blendmq audit verify` exits 1 naming the first bad record, and
 *     the service's own state (what `status` shows) says "tampered";
 *   - undone, the trail verifies again (the check is the content, not a mark);
 *   - a sender's clock a year back is not the record's time (the audit
 *     stamps it; the sender's is kept, flagged clock_skew); a kind that is not
 *     the sender's own is flagged kind_not_own; `audit show` prints every flag;
 *   - the database, its key and checkpoint are 0600. */
#include "audit_harness.h"
#include "audit_client.h"
#include "bus.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static ah_env_t s_env;
static pid_t s_audit;

static int s_setup (void **state)
{
    (void) state;
    ah_setup (&s_env);
    s_audit = ah_start_audit (&s_env, NULL);
    return s_audit > 0 ? 0 : -1;
}

static int s_teardown (void **state)
{
    (void) state;
    if (s_audit > 0) ah_stop (s_audit, SIGTERM, 5000);
    ah_teardown (&s_env);
    return 0;
}

/* `blendmq ARGS` against the test's audit; stdout, exit code in *code. */
static char *s_cli (const char *args, int *code)
{
    char cmd[1400];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' %s 2>>'%s/cli.err'", ah_bin ("blendmq"), s_env.dir, args, s_env.dir);
    return ah_run (cmd, code);
}

static void s_sql (const char *sql)
{
    sqlite3 *db;
    assert_int_equal (sqlite3_open (s_env.database, &db), SQLITE_OK);
    sqlite3_busy_timeout (db, 5000);
    char *msg = NULL;
    if (sqlite3_exec (db, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg ("%s: %s", sql, msg);
    sqlite3_close (db);
}

/* verify must find `needle` (NULL: must pass) */
static void s_expect_verify (const char *needle)
{
    int code = -1;
    char *out = s_cli ("audit verify", &code);
    if (needle) {
        if (code != 1 || !strstr (out, needle)) fail_msg ("audit verify exited %d, wanted 1 naming '%s': %s", code, needle, out);
    }
    else if (code != 0 || !strstr (out, "audit ok")) fail_msg ("audit verify exited %d, wanted 0: %s", code, out);
    free (out);
}

static const char *s_state (void)
{
    static char state[300];
    json_t *st = ah_status (&s_env, 3000);
    assert_non_null (st);
    snprintf (state, sizeof state, "%s", json_string_value (json_object_get (st, "state")));
    json_decref (st);
    return state;
}

static void s_records (int n)
{
    char err[256];
    (void) err;
    bmq_audit_t *audit = bmq_audit_new (s_env.endpoint, 250, 4);
    assert_non_null (audit);
    for (int i = 0; i < n; i++) {
        char cid[32];
        snprintf (cid, sizeof cid, "story-%d", i);
        bmq_audit_record (audit, cid, "plan.proposed", json_pack ("{s:i, s:s}", "n", i, "who", "alice"));
    }
    bmq_audit_flush (audit, 10000);
    assert_int_equal (bmq_audit_pending (audit), 0);
    bmq_audit_destroy (&audit);
}

static int s_mode (const char *suffix)
{
    char path[400];
    snprintf (path, sizeof path, "%s%s", s_env.database, suffix);
    struct stat st;
    return stat (path, &st) ? -1 : (int) (st.st_mode & 0777);
}

static void test_files_private (void **state)
{
    (void) state;
    s_records (3);
    assert_int_equal (s_mode (""), 0600);
    assert_int_equal (s_mode (".key"), 0600);
    assert_int_equal (s_mode (".head"), 0600);
    assert_int_equal (s_mode ("-wal"), 0600);
}

static void test_edits_deletions_truncation (void **state)
{
    (void) state;
    s_records (20);
    s_expect_verify (NULL);
    assert_string_equal (s_state (), "ok");

    /* an identity edited (who did it), in a record already verified: the
     * service's rolling sweep finds it by itself (what `status` shows) */
    s_sql ("UPDATE records SET origin = 'executor', sender = 'executor' WHERE id = 7");
    ah_sleep_ms (1500);
    assert_non_null (strstr (s_state (), "tampered: record 7 was edited"));
    s_expect_verify ("record 7 was edited");
    s_sql ("UPDATE records SET origin = 'planner', sender = 'planner' WHERE id = 7");
    s_expect_verify (NULL);
    /* the data edited, its hash copied from another record: no way around the chain */
    s_sql ("CREATE TABLE keep AS SELECT * FROM records WHERE id = 9;"
           "UPDATE records SET data = '{\"n\":8,\"who\":\"mallory\"}', hash = (SELECT hash FROM records WHERE id = 8),"
           " mac = (SELECT mac FROM records WHERE id = 8) WHERE id = 9");
    s_expect_verify ("record 9");
    s_sql ("DELETE FROM records WHERE id = 9; INSERT INTO records SELECT * FROM keep; DROP TABLE keep");
    s_expect_verify (NULL);

    /* a record deleted in the middle, then put back */
    s_sql ("CREATE TABLE keep AS SELECT * FROM records WHERE id = 12; DELETE FROM records WHERE id = 12");
    s_expect_verify ("records 12..12 are missing");
    s_sql ("INSERT INTO records SELECT * FROM keep; DROP TABLE keep");
    s_expect_verify (NULL);
    assert_string_equal (s_state (), "ok");

    /* the newest records cut off: only the checkpoint outside the database knows */
    int64_t last = ah_db_int (&s_env, "SELECT max(id) FROM records");
    char sql[200];
    snprintf (sql, sizeof sql, "DELETE FROM records WHERE id > %lld", (long long) (last - 3));
    s_sql (sql);
    char needle[100];
    snprintf (needle, sizeof needle, "records %lld..%lld are missing at the end", (long long) (last - 2), (long long) last);
    s_expect_verify (needle);
    assert_non_null (strstr (s_state (), "tampered"));
    /* new records do not paper over the cut */
    s_records (2);
    snprintf (needle, sizeof needle, "first bad record %lld", (long long) (last - 2));
    s_expect_verify (needle);
}

/* While the audit is down: the tail cut, then the checkpoint removed too. */
static void test_tampering_while_down (void **state)
{
    (void) state;
    s_records (10);
    s_expect_verify (NULL);
    int64_t last = ah_db_int (&s_env, "SELECT max(id) FROM records");
    assert_int_equal (ah_stop (s_audit, SIGTERM, 10000), 0);
    char sql[200];
    snprintf (sql, sizeof sql, "DELETE FROM records WHERE id > %lld", (long long) (last - 2));
    s_sql (sql);
    s_audit = ah_start_audit (&s_env, NULL);
    assert_true (s_audit > 0);
    char needle[120];
    snprintf (needle, sizeof needle, "reached record %lld, the database ended at %lld", (long long) last, (long long) (last - 2));
    s_expect_verify (needle);
    /* the evidence is in the trail, chained */
    assert_int_equal (ah_db_int (&s_env, "SELECT count(*) FROM records WHERE kind = 'alert'"
                                         " AND json_extract (data, '$.alert') = 'audit_tampering'"), 1);
    /* the checkpoint deleted with more records: found at the next start */
    assert_int_equal (ah_stop (s_audit, SIGTERM, 10000), 0);
    char path[400];
    snprintf (path, sizeof path, "%s.head", s_env.database);
    assert_int_equal (unlink (path), 0);
    s_audit = ah_start_audit (&s_env, NULL);
    assert_true (s_audit > 0);
    s_expect_verify ("checkpoint");
    assert_non_null (strstr (s_state (), "tampered"));
    assert_int_equal (ah_db_int (&s_env, "SELECT count(*) FROM records WHERE kind = 'alert'"
                                         " AND json_extract (data, '$.alert') = 'audit_tampering'"), 2);
}

/* A raw audit.record as the planner's key, with the sender's clock and kind of choice. */
static void s_raw (const char *cid, const char *kind, int64_t ts_ms)
{
    zsock_t *sock = bmq_bus_connect (ZMQ_DEALER, s_env.endpoint, "audit");
    assert_non_null (sock);
    static int seq;
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_AUDIT_RECORD, cid,
        json_pack ("{s:s, s:{s:s}, s:I, s:s}", "kind", kind, "data", "note", "raw", "seq", (json_int_t) ++seq,
                   "origin", "planner-raw"));
    env->ts_ms = ts_ms;
    bmq_bus_send_and_destroy (sock, NULL, &env);
    zpoller_t *p = zpoller_new (sock, NULL);
    bmq_envelope_t *ack = zpoller_wait (p, 5000) ? bmq_bus_recv (sock, NULL) : NULL;
    assert_non_null (ack);
    assert_int_equal (ack->type, BMQ_MSG_AUDIT_ACK);
    bmq_envelope_destroy (&ack);
    zpoller_destroy (&p);
    zsock_destroy (&sock);
}

static void test_time_kinds_flags (void **state)
{
    (void) state;
    int64_t now = bmq_now_ms ();
    s_raw ("skewed-story", "plan.proposed", now - 365LL * 86400 * 1000);      /* a year back */
    s_raw ("foreign-story", "plan.start", now);                                  /* plan.* is the planner's: own */
    s_raw ("foreign-story", "script.confirm", now);                              /* the executor's, not the planner's */
    char sql[200];
    snprintf (sql, sizeof sql, "SELECT ts FROM records WHERE cid = 'skewed-story'");
    int64_t ts = ah_db_int (&s_env, sql);
    assert_true (ts >= now - 60000 && ts <= now + 60000);         /* the audit's own time */
    assert_true (ah_db_int (&s_env, "SELECT sender_ts FROM records WHERE cid = 'skewed-story'") < now - 300LL * 86400 * 1000);
    assert_int_equal (ah_db_int (&s_env, "SELECT count(*) FROM records WHERE cid = 'skewed-story' AND flag LIKE '%clock_skew%'"), 1);
    assert_int_equal (ah_db_int (&s_env, "SELECT count(*) FROM records WHERE kind = 'plan.start' AND flag IS NULL"), 1);
    assert_int_equal (ah_db_int (&s_env, "SELECT count(*) FROM records WHERE kind = 'script.confirm' AND flag LIKE 'kind_not_own%'"), 1);
    int code;
    char *out = s_cli ("audit show skewed-story", &code);
    assert_int_equal (code, 0);
    if (!strstr (out, "FLAGGED: clock_skew")) fail_msg ("audit show hides the flag: %s", out);
    free (out);
    out = s_cli ("audit show foreign-story", &code);
    assert_int_equal (code, 0);
    if (!strstr (out, "FLAGGED: kind_not_own")) fail_msg ("audit show hides the flag: %s", out);
    free (out);
}

int main (void)
{
    /* each test its own audit and database: a tampered trail stays tampered */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_files_private, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_edits_deletions_truncation, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_tampering_while_down, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_time_kinds_flags, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
