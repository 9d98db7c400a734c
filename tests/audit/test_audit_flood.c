/* audit.flood — a 401 flood leaves no refusal unrecorded (issue 24).
 *
 * The gateway's HTTP server (with a fake gateway loop) is flooded with
 * requests that carry no token, from several connections at once, while the
 * audit is fed the way the gateway's loop feeds it, here only twice a second
 * (a loaded gateway). Before, each refusal was one list entry, at most 1,000
 * between two feeds and the rest dropped silently (6,320 of 56,000). Now they
 * are counted per peer per second: the http.refused records a real audit
 * service stored add up to exactly the 401s the clients received, in about
 * one record per second, and nothing is recorded as dropped. */
#include "audit_harness.h"
#include "audit_client.h"
#include "bus.h"
#include "fake_gateway.h"
#include "http_server.h"
#include "keys.h"
#include "roles.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 8
#define PER_THREAD 2500
#define GW "inproc://audit-flood-gateway"

static char s_url[300];
static ah_env_t s_env;
static pid_t s_audit_pid = -1;

static int s_setup (void **state) { (void) state; ah_setup (&s_env); return 0; }

/* runs even when an assertion failed: no audit process or temp dir left behind */
static int s_teardown (void **state)
{
    (void) state;
    if (s_audit_pid > 0) ah_stop (s_audit_pid, SIGKILL, 5000);
    s_audit_pid = -1;
    bmq_bus_security_shutdown ();
    ah_teardown (&s_env);
    return 0;
}
static atomic_long s_401, s_other;

static size_t s_discard (char *p, size_t size, size_t n, void *u) { (void) p; (void) u; return size * n; }

static void *s_flood (void *arg)
{
    (void) arg;
    CURL *c = curl_easy_init ();          /* one connection, kept alive: as fast as it goes */
    curl_easy_setopt (c, CURLOPT_URL, s_url);
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, s_discard);
    curl_easy_setopt (c, CURLOPT_TIMEOUT_MS, 10000L);
    for (int i = 0; i < PER_THREAD; i++) {
        long status = 0;
        if (curl_easy_perform (c) == CURLE_OK) curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &status);
        if (status == 401) atomic_fetch_add (&s_401, 1);
        else atomic_fetch_add (&s_other, 1);
    }
    curl_easy_cleanup (c);
    return NULL;
}

/* What the gateway's loop does with the audit: acknowledgements and ticks. */
static void s_audit_turn (bmq_audit_t *audit, int ms)
{
    zpoller_t *p = zpoller_new (bmq_audit_sock (audit), NULL);
    int64_t end = bmq_mono_ms () + ms;
    while (bmq_mono_ms () < end) {
        if (zpoller_wait (p, 20)) {
            bmq_envelope_t *env = bmq_bus_recv (bmq_audit_sock (audit), NULL);
            if (env) bmq_audit_handle (audit, env);
            bmq_envelope_destroy (&env);
        }
        bmq_audit_tick (audit);
    }
    zpoller_destroy (&p);
}

static void test_401_flood (void **state)
{
    (void) state;
    ah_env_t env = s_env;
    char err[512], keys[400], log[400];
    snprintf (keys, sizeof keys, "%s/keys", env.dir);
    if (bmq_keys_setup_process (keys, "gateway", err, sizeof err)) fail_msg ("%s", err);    /* as the gateway */
    pid_t audit_pid = s_audit_pid = ah_start_audit (&env, NULL);
    assert_true (audit_pid > 0);
    /* the HTTP layer logs each refusal: to a file, not the test's output */
    snprintf (log, sizeof log, "%s/http.log", env.dir);
    int saved = dup (2);
    assert_non_null (freopen (log, "a", stderr));

    curl_global_init (CURL_GLOBAL_DEFAULT);
    fake_gateway_t *gw = fake_gateway_new (GW, NULL);
    bmq_http_options_t o = { .bind = "127.0.0.1", .port = 0, .token = "", .keys_dir = keys, .allowed_origins = "",
                             .max_body = 1u << 20, .max_connections = 400, .event_buffer = 64, .request_timeout_ms = 3000,
                             .capabilities_cache_ms = 1000, .gateway_endpoint = GW };
    bmq_http_server_t *srv = bmq_http_server_new (&o, err, sizeof err);
    assert_non_null (srv);
    fake_gateway_attach (gw, srv);
    bmq_http_server_tick (srv);
    snprintf (s_url, sizeof s_url, "%s/api/plans", bmq_http_server_url (srv));
    bmq_audit_t *audit = bmq_audit_new (env.endpoint, 250, 4);
    assert_non_null (audit);

    int64_t t0 = bmq_mono_ms ();
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) assert_int_equal (pthread_create (&th[i], NULL, s_flood, NULL), 0);
    /* the gateway loop, slowed: the audit is fed every 500 ms */
    while (atomic_load (&s_401) + atomic_load (&s_other) < (long) THREADS * PER_THREAD && bmq_mono_ms () - t0 < 120000) {
        s_audit_turn (audit, 500);
        bmq_http_server_tick (srv);
        bmq_http_server_audit (srv, audit);
    }
    for (int i = 0; i < THREADS; i++) pthread_join (th[i], NULL);
    double secs = (bmq_mono_ms () - t0) / 1000.0;
    /* the last second is over: its counts are final */
    s_audit_turn (audit, 1100);
    bmq_http_server_audit (srv, audit);
    bmq_audit_flush (audit, 20000);
    assert_int_equal (bmq_audit_pending (audit), 0);
    assert_int_equal (bmq_audit_dropped (audit), 0);

    fflush (stderr);
    dup2 (saved, 2);          /* cmocka's messages and ours: back on the test's stderr */
    close (saved);
    FILE *out = stderr;
    long got = atomic_load (&s_401);
    int64_t recorded = ah_db_int (&env, "SELECT coalesce (sum (json_extract (data, '$.count')), 0) FROM records"
                                        " WHERE kind = 'http.refused' AND json_extract (data, '$.status') = 401");
    int64_t records = ah_db_int (&env, "SELECT count(*) FROM records WHERE kind = 'http.refused'");
    int64_t dropped = ah_db_int (&env, "SELECT coalesce (sum (json_extract (data, '$.count')), 0) FROM records"
                                       " WHERE kind = 'http.refused.dropped'");
    fprintf (out, "audit.flood: %ld requests refused 401 in %.1f s (%.0f/s), %ld other answers; %lld recorded in %lld"
                  " records, %lld recorded as dropped, %lld unrecorded\n", got, secs, got / secs, atomic_load (&s_other),
             (long long) recorded, (long long) records, (long long) dropped, (long long) (got - recorded - dropped));
    fflush (out);
    assert_int_equal (atomic_load (&s_other), 0);
    assert_int_equal (recorded + dropped, got);           /* zero unrecorded refusals */
    assert_int_equal (dropped, 0);
    /* one record per peer per second (a second may straddle two feeds: counted once, it is final when over) */
    assert_true (records <= (int64_t) secs + 3);

    bmq_audit_destroy (&audit);
    fake_gateway_attach (gw, NULL);
    bmq_http_server_destroy (&srv);
    fake_gateway_destroy (&gw);
    curl_global_cleanup ();
    ah_stop (audit_pid, SIGTERM, 10000);
    s_audit_pid = -1;
}

/* The bus: a key refused message after message (here a viewer asking the
 * executor to run plans) is one auth.refused record per second with a count,
 * at a service (bmq_roles_refused) and at the audit service itself. */
static void test_bus_refusal_flood (void **state)
{
    (void) state;
    ah_env_t env = s_env;
    char err[512], keys[400], ep[400];
    snprintf (keys, sizeof keys, "%s/keys", env.dir);
    if (bmq_keys_setup_process (keys, "executor", err, sizeof err)) fail_msg ("%s", err);
    assert_int_equal (bmq_keys_add_client (keys, "nosy", "viewer", err, sizeof err), 0);
    pid_t audit_pid = s_audit_pid = ah_start_audit (&env, NULL);
    assert_true (audit_pid > 0);
    snprintf (ep, sizeof ep, "ipc://%s/service.sock", env.dir);
    zsock_t *server = bmq_bus_bind (ZMQ_ROUTER, ep);
    zsock_t *client = bmq_bus_connect_as (ZMQ_DEALER, ep, "executor", "nosy");
    zsock_t *at_audit = bmq_bus_connect_as (ZMQ_DEALER, env.endpoint, "audit", "nosy");
    bmq_audit_t *audit = bmq_audit_new (env.endpoint, 250, 4);
    const int N = 3000;
    int64_t t0 = bmq_mono_ms ();
    for (int i = 0; i < N; i++) {
        bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_EXECUTE_REQUEST, NULL,
            json_pack ("{s:s, s:[], s:s, s:s}", "plan_id", "p", "plan", "plan_hash", "h", "seal", "s"));
        bmq_bus_send_and_destroy (client, NULL, &req);
        /* a record only services write, from a viewer's key: refused by the audit itself */
        req = bmq_envelope_new (BMQ_MSG_AUDIT_RECORD, NULL, json_pack ("{s:s, s:{}, s:i, s:s}", "kind", "plan.end", "data",
                                "seq", i + 1, "origin", "nosy"));
        bmq_bus_send_and_destroy (at_audit, NULL, &req);
    }
    zpoller_t *p = zpoller_new (server, NULL);
    int refused = 0;
    while (refused < N && zpoller_wait (p, 5000)) {
        zframe_t *rid = NULL;
        bmq_envelope_t *env_in = bmq_bus_recv (server, &rid);
        if (env_in && bmq_roles_refused (server, rid, env_in, "executor", true, 0, audit)) refused++;
        bmq_envelope_destroy (&env_in);
        zframe_destroy (&rid);
        if (refused % 500 == 0) s_audit_turn (audit, 1);
    }
    zpoller_destroy (&p);
    assert_int_equal (refused, N);
    double secs = (bmq_mono_ms () - t0) / 1000.0;
    s_audit_turn (audit, 1100);
    bmq_audit_flush (audit, 20000);
    assert_int_equal (bmq_audit_pending (audit), 0);
    ah_sleep_ms (1500);            /* the audit's own count: stored once its second is over */
    int64_t at_service = ah_db_int (&env, "SELECT coalesce (sum (json_extract (data, '$.count')), 0) FROM records"
                                          " WHERE kind = 'auth.refused' AND origin = 'executor'");
    int64_t service_records = ah_db_int (&env, "SELECT count(*) FROM records WHERE kind = 'auth.refused' AND origin = 'executor'");
    int64_t at_audit_n = ah_db_int (&env, "SELECT coalesce (sum (json_extract (data, '$.count')), 0) FROM records"
                                          " WHERE kind = 'auth.refused' AND origin = 'audit'");
    int64_t audit_records = ah_db_int (&env, "SELECT count(*) FROM records WHERE kind = 'auth.refused' AND origin = 'audit'");
    fprintf (stderr, "audit.flood bus: %d refusals at a service in %.1f s: %lld counted in %lld records; at the audit: %lld"
                     " counted in %lld records\n", N, secs, (long long) at_service, (long long) service_records,
             (long long) at_audit_n, (long long) audit_records);
    assert_int_equal (at_service, N);
    assert_true (service_records <= (int64_t) secs + 3);
    assert_int_equal (at_audit_n, N);
    assert_true (audit_records <= (int64_t) secs + 3);
    bmq_audit_destroy (&audit);
    zsock_destroy (&at_audit);
    zsock_destroy (&client);
    zsock_destroy (&server);
    ah_stop (audit_pid, SIGTERM, 10000);
    s_audit_pid = -1;
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_401_flood, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_bus_refusal_flood, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
