/* test_audit_retention — the real service prunes on its schedule, in small
 * batches, while a sender keeps writing: old records go, new ones all arrive.
 * (The schedule itself is tested with an injected clock in test_audit_store.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "audit_harness.h"
#include "audit_store.h"
#include "codec.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#define OLD_RECORDS 100000
#define DAY_MS      86400000LL

static void test_prunes_while_writing (void **state)
{
    ah_env_t env;
    ah_setup (&env);
    char err[512];
    bmq_audit_store_t *store = bmq_audit_store_open (env.database, err, sizeof err);
    assert_non_null (store);
    int64_t old = bmq_now_ms () - 40 * DAY_MS;
    assert_int_equal (bmq_audit_store_begin (store), 0);
    for (int i = 1; i <= OLD_RECORDS; i++) {
        bmq_audit_row_t row = { .stored_at = old, .ts_ms = old, .cid = "ancient", .kind = "k", .sender = "s",
                                .origin = "old", .seq = i, .data = "{}" };
        assert_int_equal (bmq_audit_store_put (store, &row, err, sizeof err), 1);
    }
    assert_int_equal (bmq_audit_store_commit (store), 0);
    bmq_audit_store_close (&store);

    const char *small_batches[] = { "BLENDMQ_AUDIT_PRUNE_BATCH=100", "BLENDMQ_AUDIT_RETENTION_DAYS=30", NULL };
    pid_t audit = ah_start_audit (&env, small_batches);
    assert_true (audit > 0);
    const char *a[] = { "audit_test_sender", "--name", "writer", "--plans", "100", "--per-plan", "10", "--rate", "200",
                        "--wait-ms", "30000", NULL };
    pid_t sender = ah_spawn (&env, "writer", a, NULL);
    assert_int_equal (ah_wait (sender, 60000), 0);
    for (int i = 0; i < 300 && ah_db_int (&env, "SELECT count(*) FROM records WHERE origin = 'old'") > 0; i++)
        ah_sleep_ms (100);
    assert_int_equal (ah_db_int (&env, "SELECT count(*) FROM records WHERE origin = 'old'"), 0);
    assert_int_equal (ah_db_int (&env, "SELECT count(*) FROM records WHERE kind != 'audit.pruned'"), 1000);
    /* every batch pruned is said in the trail (issue 24), ids and all: the chain still verifies */
    assert_int_equal (ah_db_int (&env, "SELECT sum (json_extract (data, '$.rows')) FROM records WHERE kind = 'audit.pruned'"), OLD_RECORDS);
    json_t *st = ah_status (&env, 2000);
    assert_int_equal (json_integer_value (json_object_get (st, "pruned")), OLD_RECORDS);
    assert_int_equal (json_integer_value (json_object_get (st, "records")), ah_db_int (&env, "SELECT count(*) FROM records"));
    assert_string_equal (json_string_value (json_object_get (st, "state")), "ok");
    assert_true (json_is_true (json_object_get (json_object_get (st, "chain"), "ok")));
    json_decref (st);
    assert_int_equal (ah_stop (audit, SIGTERM, 10000), 0);
    ah_teardown (&env);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_prunes_while_writing),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
