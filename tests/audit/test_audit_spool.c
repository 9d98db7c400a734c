/* test_audit_spool — senders keep their records until stored: across a
 * sender restart (spool written at shutdown), a sender crash (spool appended
 * as records are made), a full disk at the audit service (reported as
 * degraded, nothing acknowledged), and records that can never be stored are
 * refused with a clear error. Real blendmq-audit and sender processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "audit_client.h"
#include "audit_harness.h"
#include "bus.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ah_env_t s_env;

static int s_setup (void **state) { ah_setup (&s_env); return 0; }
static int s_teardown (void **state) { ah_teardown (&s_env); return 0; }

/* The first line of LOG.out with "event": event, or NULL. */
static json_t *s_event (const char *log, const char *event)
{
    json_t *lines = ah_output (&s_env, log), *found = NULL;
    size_t i;
    json_t *l;
    json_array_foreach (lines, i, l)
        if (!found && !strcmp (json_string_value (json_object_get (l, "event")), event)) found = json_incref (l);
    json_decref (lines);
    return found;
}

static char *s_origin (const char *log)
{
    json_t *start = s_event (log, "start");
    assert_non_null (start);
    char *origin = strdup (json_string_value (json_object_get (start, "origin")));
    json_decref (start);
    return origin;
}

static int64_t s_int (const char *log, const char *event, const char *key)
{
    json_t *e = s_event (log, event);
    int64_t v = e ? json_integer_value (json_object_get (e, key)) : -1;
    json_decref (e);
    return v;
}

static int s_count_files (const char *dir, const char *containing)
{
    DIR *d = opendir (dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir (d))) if (strstr (e->d_name, containing)) n++;
    if (d) closedir (d);
    return n;
}

/* Two instances of one service run with the audit service down and exit:
 * each writes its own spool (NAME.0 and NAME.1 while both run). Only one
 * instance comes back: it sends its own slot's records and adopts the
 * other slot's, so nothing waits for a second instance that never returns. */
static void test_sender_restart (void **state)
{
    const char *a1[] = { "audit_test_sender", "--name", "svc", "--plans", "20", "--per-plan", "5", "--rate", "40",
                         "--exit-after-emit", NULL };
    pid_t p1 = ah_spawn (&s_env, "first1", a1, NULL), p2 = ah_spawn (&s_env, "first2", a1, NULL);
    assert_int_equal (ah_wait (p1, 20000), 3);      /* 3: records still pending at exit */
    assert_int_equal (ah_wait (p2, 20000), 3);
    printf ("spool files after the first run: %d\n", s_count_files (s_env.spool, ".spool"));
    assert_true (s_count_files (s_env.spool, ".spool") >= 1);
    char *o1 = s_origin ("first1"), *o2 = s_origin ("first2");

    pid_t audit = ah_start_audit (&s_env, NULL);
    assert_true (audit > 0);
    const char *a2[] = { "audit_test_sender", "--name", "svc", "--plans", "0", "--wait-ms", "20000", NULL };
    p1 = ah_spawn (&s_env, "second", a2, NULL);
    assert_int_equal (ah_wait (p1, 30000), 0);
    assert_int_equal (s_int ("second", "start", "loaded"), 200);
    assert_true (ah_db_exactly_once (&s_env, o1, 100));
    assert_true (ah_db_exactly_once (&s_env, o2, 100));
    assert_int_equal (ah_db_int (&s_env, "SELECT count(*) FROM records"), 200);
    /* everything acknowledged: no spool left behind */
    assert_int_equal (s_count_files (s_env.spool, ".spool"), 0);
    assert_int_equal (ah_stop (audit, SIGTERM, 10000), 0);
    free (o1);
    free (o2);
}

/* A sender killed outright: its records were appended to the spool as they
 * were made. A torn last write (garbage at the end) is set aside, not fatal. */
static void test_sender_crash (void **state)
{
    const char *a1[] = { "audit_test_sender", "--name", "svc", "--plans", "30", "--per-plan", "5", "--wait-ms", "60000", NULL };
    pid_t p1 = ah_spawn (&s_env, "crashing", a1, NULL);
    for (int i = 0; i < 200 && s_int ("crashing", "emitted", "records") < 0; i++) ah_sleep_ms (50);
    assert_int_equal (s_int ("crashing", "emitted", "records"), 150);
    assert_int_equal (ah_stop (p1, SIGKILL, 5000), 128 + SIGKILL);
    char *origin = s_origin ("crashing");
    char path[400];
    snprintf (path, sizeof path, "%s/svc.0.spool", s_env.spool);
    FILE *f = fopen (path, "ab");
    assert_non_null (f);
    fwrite ("\x00\x01", 1, 2, f);
    fclose (f);

    pid_t audit = ah_start_audit (&s_env, NULL);
    assert_true (audit > 0);
    const char *a2[] = { "audit_test_sender", "--name", "svc", "--plans", "3", "--per-plan", "5", "--wait-ms", "20000", NULL };
    pid_t p2 = ah_spawn (&s_env, "after", a2, NULL);
    assert_int_equal (ah_wait (p2, 30000), 0);
    assert_int_equal (s_int ("after", "start", "loaded"), 150);
    char *o2 = s_origin ("after");
    assert_true (ah_db_exactly_once (&s_env, origin, 150));
    assert_true (ah_db_exactly_once (&s_env, o2, 15));
    assert_int_equal (s_count_files (s_env.spool, ".damaged-"), 1);
    assert_int_equal (ah_stop (audit, SIGTERM, 10000), 0);
    free (origin);
    free (o2);
}

static char *s_file (const char *name)
{
    char path[400];
    snprintf (path, sizeof path, "%s/%s", s_env.dir, name);
    FILE *f = fopen (path, "rb");
    if (!f) return strdup ("");
    char *buf = calloc (1, 1 << 20);
    size_t n = fread (buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose (f);
    return buf;
}

/* The database fills up (a 1 MB cap behaves as a full disk): the service says
 * so loudly and in its state, acknowledges nothing it did not store, and the
 * sender keeps what is unstored until the service can write again. */
static void test_full_disk (void **state)
{
    const char *capped[] = { "BLENDMQ_AUDIT_MAX_SIZE_MB=1", NULL };
    pid_t audit = ah_start_audit (&s_env, capped);
    assert_true (audit > 0);
    const char *a[] = { "audit_test_sender", "--name", "svc", "--plans", "200", "--per-plan", "5",
                        "--data-bytes", "2000", "--wait-ms", "90000", NULL };
    pid_t sender = ah_spawn (&s_env, "sender", a, NULL);
    char state_seen[300] = "";
    for (int i = 0; i < 150 && strncmp (state_seen, "degraded: ", 10); i++) {
        json_t *st = ah_status (&s_env, 1000);
        snprintf (state_seen, sizeof state_seen, "%s", st ? json_string_value (json_object_get (st, "state")) : "");
        json_decref (st);
        ah_sleep_ms (100);
    }
    printf ("state while full: %s\n", state_seen);
    assert_true (!strncmp (state_seen, "degraded: ", 10));
    assert_non_null (strstr (state_seen, "full"));
    /* heartbeats carry the same state, so `blendmq status` shows it */
    /* (a small batch can still fit in a freed page now and then, and a stored
     * batch reports "ok" until the next one fails: ask a few times) */
    zsock_t *sock = bmq_bus_connect (ZMQ_DEALER, s_env.endpoint, "audit");
    bool degraded_hb = false;
    for (int i = 0; i < 50 && !degraded_hb; i++) {
        bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "test"));
        bmq_bus_send_and_destroy (sock, NULL, &hb);
        hb = bmq_bus_recv (sock, NULL);
        assert_non_null (hb);
        degraded_hb = !strncmp (bmq_body_str (hb, "state"), "degraded: ", 10);
        bmq_envelope_destroy (&hb);
        if (!degraded_hb) ah_sleep_ms (100);
    }
    assert_true (degraded_hb);
    zsock_destroy (&sock);
    char *log = s_file ("audit.log");
    assert_non_null (strstr (log, "AUDIT WRITE FAILED"));
    free (log);
    int64_t stored = ah_db_int (&s_env, "SELECT count(*) FROM records");
    assert_true (stored < 1000);
    assert_int_equal (ah_wait (sender, 0), -1);              /* still holding records */

    /* room again: restart without the cap; everything arrives, once */
    assert_int_equal (ah_stop (audit, SIGTERM, 10000), 0);
    audit = ah_start_audit (&s_env, NULL);
    assert_true (audit > 0);
    assert_int_equal (ah_wait (sender, 90000), 0);
    char *origin = s_origin ("sender");
    assert_true (ah_db_exactly_once (&s_env, origin, 1000));
    json_t *st = ah_status (&s_env, 1000);
    assert_string_equal (json_string_value (json_object_get (st, "state")), "ok");
    json_decref (st);
    assert_int_equal (ah_stop (audit, SIGTERM, 10000), 0);
    free (origin);
}

/* Send a raw frame and return the reply (NULL on timeout). */
static bmq_envelope_t *s_exchange (zsock_t *sock, const void *frame, size_t len)
{
    zframe_t *f = zframe_new (frame, len);
    zframe_send (&f, sock, 0);
    zpoller_t *poller = zpoller_new (sock, NULL);
    bmq_envelope_t *reply = NULL;
    if (zpoller_wait (poller, 5000)) reply = bmq_bus_recv (sock, NULL);
    zpoller_destroy (&poller);
    return reply;
}

static bmq_envelope_t *s_send_record (zsock_t *sock, const char *origin, int64_t seq, json_t *data)
{
    json_t *body = json_pack ("{s:s, s:o, s:I}", "kind", "test", "data", data, "seq", (json_int_t) seq);
    if (origin) json_object_set_new (body, "origin", json_string (origin));
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_AUDIT_RECORD, NULL, body);
    unsigned char *buf;
    size_t len;
    assert_int_equal (bmq_envelope_encode (env, &buf, &len, NULL, 0), 0);
    bmq_envelope_destroy (&env);
    bmq_envelope_t *reply = s_exchange (sock, buf, len);
    free (buf);
    return reply;
}

static void s_expect_refusal (bmq_envelope_t *reply, const char *code, const char *why, int64_t seq)
{
    assert_non_null (reply);
    assert_int_equal (reply->type, BMQ_MSG_ERROR);
    assert_string_equal (bmq_body_str (reply, "code"), code);
    if (!strstr (bmq_body_str (reply, "message"), why)) fail_msg ("'%s' not in '%s'", why, bmq_body_str (reply, "message"));
    if (seq) assert_int_equal (bmq_body_int (reply, "seq", 0), seq);
    bmq_envelope_destroy (&reply);
}

static void test_refused_records (void **state)
{
    pid_t audit = ah_start_audit (&s_env, NULL);
    assert_true (audit > 0);
    bmq_envelope_set_sender ("tester");
    zsock_t *sock = bmq_bus_connect_as (ZMQ_DEALER, s_env.endpoint, "audit", "planner");   /* records come from services */

    size_t big = BMQ_AUDIT_DATA_MAX + 512 * 1024;
    char *pad = malloc (big + 1);
    memset (pad, 'z', big);
    pad[big] = 0;
    s_expect_refusal (s_send_record (sock, "raw-1", 1, json_pack ("{s:s}", "pad", pad)), "bad_record", "exceeds", 1);
    free (pad);
    s_expect_refusal (s_send_record (sock, NULL, 2, json_object ()), "bad_record", "origin", 2);
    s_expect_refusal (s_send_record (sock, "raw-1", 0, json_object ()), "bad_record", "seq", 0);
    s_expect_refusal (s_exchange (sock, "\x93\x01\x02", 3), "bad_message", "", 0);
    s_expect_refusal (s_exchange (sock, "\xc1", 1), "bad_message", "", 0);

    bmq_envelope_t *ack = s_send_record (sock, "raw-1", 3, json_pack ("{s:s}", "fine", "yes"));
    assert_non_null (ack);
    assert_int_equal (ack->type, BMQ_MSG_AUDIT_ACK);
    assert_int_equal (bmq_body_int (ack, "seq", 0), 3);
    bmq_envelope_destroy (&ack);
    zsock_destroy (&sock);

    /* the client side: a refused record is dropped, not resent forever; an
     * oversized one is kept as a marker so the story still shows the event */
    bmq_audit_t *client = bmq_audit_new (s_env.endpoint, 250, 4);
    bmq_audit_record (client, "story-big", "huge", json_pack ("{s:s}", "pad", "placeholder"));
    pad = malloc (big + 1);
    memset (pad, 'y', big);
    pad[big] = 0;
    bmq_audit_record (client, "story-big", "huge", json_pack ("{s:s}", "pad", pad));
    free (pad);
    bmq_audit_record (client, "story-big", "bad\tkind", json_object ());     /* the service refuses it */
    bmq_audit_flush (client, 10000);
    assert_int_equal (bmq_audit_pending (client), 0);
    bmq_audit_destroy (&client);
    assert_int_equal (ah_db_int (&s_env, "SELECT count(*) FROM records WHERE cid = 'story-big'"), 2);
    assert_int_equal (ah_db_int (&s_env, "SELECT count(*) FROM records WHERE json_extract (data, '$.error') = 'oversized'"), 1);

    json_t *st = ah_status (&s_env, 1000);
    assert_int_equal (json_integer_value (json_object_get (st, "rejected")), 4);
    json_decref (st);
    assert_int_equal (ah_db_int (&s_env, "SELECT count(*) FROM records"), 3);
    assert_int_equal (ah_stop (audit, SIGTERM, 10000), 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_sender_restart, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_sender_crash, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_full_disk, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_refused_records, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
