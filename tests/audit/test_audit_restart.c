/* test_audit_restart — nothing lost: the audit service is killed (SIGKILL)
 * while 200 plans run and stays down for 30 s; started again, every record
 * arrives exactly once.
 *
 * It is frozen (SIGSTOP) for a second before the kill, so some records die
 * unacknowledged inside it and must be sent again.
 *
 * Three sender processes stand in for the gateway (2 records per plan), the
 * validator (1) and the executor (7): 10 records per plan, 2000 in all, each
 * plan's records in one story. Plans are spread so that the outage falls in
 * the middle of the run. BMQ_AUDIT_OUTAGE_S shortens the outage for local
 * runs; CI runs the 30 s of the issue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "audit_harness.h"
#include "codec.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLANS     200
#define SENDERS   3

static const struct { const char *name; const char *per_plan; } s_senders[SENDERS] = {
    { "gateway", "2" }, { "validator", "1" }, { "executor", "7" },
};

static json_t *s_done (ah_env_t *env, const char *log)
{
    json_t *lines = ah_output (env, log), *done = NULL;
    size_t i;
    json_t *l;
    json_array_foreach (lines, i, l)
        if (!strcmp (json_string_value (json_object_get (l, "event")), "done")) done = json_incref (l);
    json_decref (lines);
    return done;
}

static void test_restart_exactly_once (void **state)
{
    ah_env_t env;
    ah_setup (&env);
    int outage_s = getenv ("BMQ_AUDIT_OUTAGE_S") ? atoi (getenv ("BMQ_AUDIT_OUTAGE_S")) : 30;
    const int before_s = 4, after_s = 6;
    /* plans run from start to `before + outage + after` seconds */
    char rate[32];
    snprintf (rate, sizeof rate, "%.3f", PLANS / (double) (before_s + outage_s + after_s));

    int64_t t0 = bmq_mono_ms ();
    pid_t audit = ah_start_audit (&env, NULL);
    assert_true (audit > 0);
    pid_t senders[SENDERS];
    for (int i = 0; i < SENDERS; i++) {
        const char *argv[] = { "audit_test_sender", "--name", s_senders[i].name, "--plans", "200",
                               "--per-plan", s_senders[i].per_plan, "--rate", rate, "--wait-ms", "120000", NULL };
        senders[i] = ah_spawn (&env, s_senders[i].name, argv, NULL);
    }
    ah_sleep_ms (before_s * 1000);
    /* freeze it first, so records sit unacknowledged in its socket buffers
     * when it dies: the senders must notice and send those again */
    kill (audit, SIGSTOP);
    ah_sleep_ms (1000);
    assert_int_equal (ah_stop (audit, SIGKILL, 5000), 128 + SIGKILL);
    int64_t killed_at = bmq_mono_ms ();
    int64_t stored_before = ah_db_int (&env, "SELECT count(*) FROM records");
    printf ("audit frozen then killed after %.1f s with %lld records stored; down for %d s more\n",
            (killed_at - t0) / 1000.0, (long long) stored_before, outage_s);
    assert_true (stored_before > 0 && stored_before < PLANS * 10);

    ah_sleep_ms (outage_s * 1000);
    audit = ah_start_audit (&env, NULL);
    assert_true (audit > 0);
    int64_t restarted_at = bmq_mono_ms ();
    /* the backlog: what the senders made until now, on their fixed schedule */
    int64_t backlog = PLANS * 10 * (restarted_at - t0) / ((before_s + outage_s + after_s) * 1000);
    int64_t backlog_at = 0;
    while (!backlog_at && bmq_mono_ms () - restarted_at < 60000) {
        if (ah_db_int (&env, "SELECT count(*) FROM records") >= backlog) backlog_at = bmq_mono_ms ();
        else ah_sleep_ms (50);
    }
    for (int i = 0; i < SENDERS; i++) assert_int_equal (ah_wait (senders[i], 180000), 0);
    int64_t all_acked_at = bmq_mono_ms ();

    int64_t total = 0;
    for (int i = 0; i < SENDERS; i++) {
        json_t *done = s_done (&env, s_senders[i].name);
        assert_non_null (done);
        int64_t emitted = json_integer_value (json_object_get (done, "emitted"));
        assert_int_equal (emitted, PLANS * atoi (s_senders[i].per_plan));
        assert_int_equal (json_integer_value (json_object_get (done, "dropped")), 0);
        assert_true (ah_db_exactly_once (&env, json_string_value (json_object_get (done, "origin")), emitted));
        total += emitted;
        json_decref (done);
    }
    assert_int_equal (ah_db_int (&env, "SELECT count(*) FROM records"), total);
    /* every plan's story is whole */
    assert_int_equal (ah_db_int (&env, "SELECT count(*) FROM (SELECT cid FROM records GROUP BY cid HAVING count(*) = 10)"), PLANS);
    json_t *st = ah_status (&env, 2000);
    printf ("restart test: %lld records from %d senders, %d plans, each stored exactly once; outage %d s; the "
            "backlog (~%lld records) stored %.2f s after the restart; last record acknowledged %.1f s after it "
            "(plans ran on until then; %.1f s in all); %lld duplicate deliveries ignored by the store\n",
            (long long) total, SENDERS, PLANS, outage_s + 1, (long long) backlog,
            backlog_at ? (backlog_at - restarted_at) / 1000.0 : -1.0, (all_acked_at - restarted_at) / 1000.0,
            (all_acked_at - t0) / 1000.0, (long long) json_integer_value (json_object_get (st, "duplicates")));
    json_decref (st);
    assert_int_equal (ah_stop (audit, SIGTERM, 10000), 0);
    ah_teardown (&env);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_restart_exactly_once),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
