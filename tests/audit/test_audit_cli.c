/* test_audit_cli — `blendmq audit list | show | export` against a real
 * blendmq-audit holding records from test senders. The CLI asks the service
 * over the bus; the endpoint comes from BLENDMQ_AUDIT_ENDPOINT (ah_setup). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "audit_client.h"
#include "audit_harness.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ah_env_t s_env;
static pid_t s_audit;

/* Story records: 3 plans of 7 (request, verdict, plan.start, 3 steps,
 * plan.end) from "gateway"; bulk: 130 plans of 10 from "bulk", to page. */
static int s_setup (void **state)
{
    ah_setup (&s_env);
    s_audit = ah_start_audit (&s_env, NULL);
    if (s_audit <= 0) return -1;
    const char *story[] = { "audit_test_sender", "--name", "gateway", "--plans", "3", "--per-plan", "7", NULL };
    if (ah_wait (ah_spawn (&s_env, "story", story, NULL), 30000) != 0) return -1;
    const char *bulk[] = { "audit_test_sender", "--name", "bulk", "--plans", "130", "--per-plan", "10", NULL };
    if (ah_wait (ah_spawn (&s_env, "bulk", bulk, NULL), 60000) != 0) return -1;
    return 0;
}

static int s_teardown (void **state)
{
    ah_stop (s_audit, SIGTERM, 10000);
    ah_teardown (&s_env);
    return 0;
}

/* `blendmq --run-dir DIR ARGS` (stderr to DIR/cli.err); stdout, exit code in *code. */
static char *s_cli (const char *args, int *code)
{
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' %s 2>'%s/cli.err'", ah_bin ("blendmq"), s_env.dir, args, s_env.dir);
    return ah_run (cmd, code);
}

static int s_lines (const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++) n += *p == '\n';
    return n;
}

static int s_count (const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr (p, what)); p += strlen (what)) n++;
    return n;
}

static void test_list (void **state)
{
    int code;
    char *out = s_cli ("audit list --plan p-0001", &code);
    assert_int_equal (code, 0);
    /* both senders used plan ids p-0000..: story-0001 from each, 7 + 10 records */
    assert_int_equal (s_lines (out), 17);
    assert_int_equal (s_count (out, "story-0001"), 17);
    assert_non_null (strstr (out, "plan.start"));
    free (out);

    out = s_cli ("audit list", &code);                /* the latest 100, oldest first */
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 100);
    assert_non_null (strstr (out, "story-0129"));
    free (out);

    out = s_cli ("audit list --limit 0", &code);      /* everything, paged */
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 1321);
    free (out);

    out = s_cli ("--json audit list --kind 'plan.*' --limit 0", &code);
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 2 * 3 + 3 * 130);     /* kinds cycle: see audit_test_sender */
    assert_int_equal (s_count (out, "\"kind\":\"plan.end\""), 3 + 130);
    free (out);

    out = s_cli ("audit list --since 1h --limit 0", &code);
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 1321);
    free (out);
    out = s_cli ("audit list --since 2999-01-01", &code);
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 0);
    free (out);
    out = s_cli ("audit list --since yesterday", &code);
    assert_int_equal (code, 2);
    free (out);
}

static void test_show (void **state)
{
    int code;
    char *out = s_cli ("audit show story-0002", &code);
    assert_int_equal (code, 0);
    printf ("%s", out);
    assert_true (!strncmp (out, "story story-0002: 17 records", 28));
    /* each sender's records in its order: request before verdict before plan.end */
    const char *req = strstr (out, "request"), *verdict = strstr (out, "verdict"), *end = strstr (out, "plan.end");
    assert_true (req && verdict && end && req < verdict && verdict < end);
    free (out);

    out = s_cli ("--json audit show story-0002", &code);
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 17);
    /* JSON lines in time order */
    long long prev = 0;
    for (char *line = strtok (out, "\n"); line; line = strtok (NULL, "\n")) {
        json_t *rec = json_loads (line, 0, NULL);
        assert_non_null (rec);
        assert_string_equal (json_string_value (json_object_get (rec, "cid")), "story-0002");
        long long ts = json_integer_value (json_object_get (rec, "ts"));
        assert_true (ts >= prev);
        prev = ts;
        json_decref (rec);
    }
    free (out);

    out = s_cli ("audit show no-such-story", &code);
    assert_int_equal (code, 1);
    free (out);
}

static void test_export (void **state)
{
    int code;
    char *out = s_cli ("audit export --format jsonl", &code);
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 1321);
    /* every record whole: the fields a reader needs, data as JSON, once each */
    json_t *seen = json_object ();
    for (char *line = strtok (out, "\n"); line; line = strtok (NULL, "\n")) {
        json_t *rec = json_loads (line, 0, NULL);
        assert_non_null (rec);
        const char *fields[] = { "id", "ts", "stored_at", "cid", "kind", "sender", "origin", "seq", "plan_id" };
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) assert_non_null (json_object_get (rec, fields[i]));
        assert_true (json_is_object (json_object_get (rec, "data")));
        char key[128];
        snprintf (key, sizeof key, "%s#%lld", json_string_value (json_object_get (rec, "origin")),
                  (long long) json_integer_value (json_object_get (rec, "seq")));
        assert_null (json_object_get (seen, key));
        json_object_set_new (seen, key, json_true ());
        json_decref (rec);
    }
    assert_int_equal (json_object_size (seen), 1321);
    json_decref (seen);
    free (out);

    out = s_cli ("audit export", &code);               /* jsonl is the default */
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 1321);
    free (out);
    out = s_cli ("audit export --format csv", &code);
    assert_int_equal (code, 2);
    free (out);
    out = s_cli ("audit frobnicate", &code);
    assert_int_equal (code, 2);
    free (out);
}

/* Records near the size bounds come back whole: pages stop early, by bytes
 * and by items, so every reply fits the codec's limits. */
static void test_big_records (void **state)
{
    bmq_audit_t *client = bmq_audit_new (s_env.endpoint, 250, 4);
    size_t big = 900 * 1024;
    char *pad = malloc (big + 1);
    memset (pad, 'b', big);
    pad[big] = 0;
    for (int i = 0; i < 3; i++) bmq_audit_record (client, "story-big", "big.bytes", json_pack ("{s:s}", "pad", pad));
    free (pad);
    for (int i = 0; i < 3; i++) {
        json_t *many = json_array ();
        for (int k = 0; k < 40000; k++) json_array_append_new (many, json_real (0.5));
        bmq_audit_record (client, "story-big", "big.items", json_pack ("{s:o}", "many", many));
    }
    bmq_audit_flush (client, 20000);
    assert_int_equal (bmq_audit_pending (client), 0);
    bmq_audit_destroy (&client);

    int code;
    char *out = s_cli ("--json audit show story-big", &code);
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 6);
    assert_int_equal (s_count (out, "\"kind\":\"big.bytes\""), 3);
    assert_int_equal (s_count (out, "\"kind\":\"big.items\""), 3);
    free (out);
    out = s_cli ("audit show story-big", &code);
    assert_int_equal (code, 0);
    assert_int_equal (s_lines (out), 7);
    free (out);
}

/* With the audit service down the CLI says so and exits 2, quickly. */
static void test_unreachable (void **state)
{
    int code;
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "BLENDMQ_AUDIT_ENDPOINT=ipc://%s/nobody.sock '%s' --run-dir '%s' audit list 2>&1",
              s_env.dir, ah_bin ("blendmq"), s_env.dir);
    char *out = ah_run (cmd, &code);
    assert_int_equal (code, 2);
    assert_non_null (strstr (out, "no answer from the audit service"));
    free (out);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_list),
        cmocka_unit_test (test_show),
        cmocka_unit_test (test_export),
        cmocka_unit_test (test_big_records),
        cmocka_unit_test (test_unreachable),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
