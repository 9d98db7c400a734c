/* Hung validator workers and the broker's deadline:
 *   - a worker that keeps heartbeating but never answers is dropped at the
 *     deadline and its request re-sent to a live worker; its late answer is
 *     ignored (exactly one verdict);
 *   - a real validator stopped (SIGSTOP) while holding a request: dropped,
 *     the request answered by a validator started afterwards; once resumed,
 *     its stale answer is ignored and it rejoins the pool;
 *   - a request that hangs every worker it is given: after
 *     BMQ_BROKER_MAX_ATTEMPTS the broker answers it with an error. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bus.h"
#include "roles.h"
#include "pool_util.h"

/* A worker that says READY, heartbeats, takes requests and never answers. */
typedef struct {
    zsock_t        *sock;
    int64_t         last_beat;
    int             jobs;
    bmq_envelope_t *held;          /* the last request it took */
} fake_t;

static void s_fake_start (fake_t *f, pool_t *pool)
{
    char ep[400];
    snprintf (ep, sizeof ep, "ipc://%s/validators.sock", pool->dir);
    f->sock = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "validator");   /* a validator's key */
    bmq_envelope_t *ready = bmq_envelope_new (BMQ_MSG_WORKER_READY, NULL, json_pack ("{s:s, s:i}", "service", "validator", "pid", 0));
    bmq_bus_send_and_destroy (f->sock, NULL, &ready);
}

static void s_fake_service (fake_t *f)
{
    while (zsock_events (f->sock) & ZMQ_POLLIN) {
        bmq_envelope_t *env = bmq_bus_recv (f->sock, NULL);
        if (env && env->type == BMQ_MSG_VALIDATE_REQUEST) {
            f->jobs++;
            bmq_envelope_destroy (&f->held);
            f->held = env;
            env = NULL;
        }
        bmq_envelope_destroy (&env);
    }
    if (bmq_mono_ms () - f->last_beat >= 100) {
        bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "validator"));
        bmq_bus_send_and_destroy (f->sock, NULL, &hb);
        f->last_beat = bmq_mono_ms ();
    }
}

static void s_fake_stop (fake_t *f)
{
    bmq_envelope_destroy (&f->held);
    zsock_destroy (&f->sock);
}

/* Drive the broker and the fakes for `ms`; collect replies to `cid`. */
typedef struct { int count; bmq_envelope_t *last; } replies_t;

static void s_run (pool_t *pool, fake_t *fakes, int nfakes, int ms, const char *cid, replies_t *out)
{
    int64_t end = bmq_mono_ms () + ms;
    zsock_t *sock = bmq_broker_sock (pool->broker);
    while (bmq_mono_ms () < end) {
        zmq_pollitem_t item = { zsock_resolve (sock), 0, ZMQ_POLLIN, 0 };
        zmq_poll (&item, 1, 10);
        while (zsock_events (sock) & ZMQ_POLLIN) {
            bmq_envelope_t *reply = bmq_broker_on_message (pool->broker);
            if (reply && cid && !strcmp (reply->cid, cid)) {
                out->count++;
                bmq_envelope_destroy (&out->last);
                out->last = reply;
                reply = NULL;
            }
            bmq_envelope_destroy (&reply);
        }
        bmq_broker_tick (pool->broker);
        for (bmq_envelope_t *failed; (failed = bmq_broker_take_failed (pool->broker)); ) {
            if (cid && !strcmp (failed->cid, cid)) { out->count++; bmq_envelope_destroy (&out->last); out->last = failed; }
            else bmq_envelope_destroy (&failed);
        }
        for (int i = 0; i < nfakes; i++) s_fake_service (&fakes[i]);
    }
}

static bmq_envelope_t *s_request (char *cid, size_t len)
{
    uint64_t rng = 42;
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_VALIDATE_REQUEST, NULL, json_pack ("{s:o}", "plan", pool_plan (&rng, 30, true)));
    bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* as the gateway forwards a client's request */
    snprintf (cid, len, "%s", req->cid);
    return req;
}

static json_int_t s_stat (pool_t *pool, const char *key)
{
    json_t *st = bmq_broker_status (pool->broker);
    json_int_t v = json_integer_value (json_object_get (st, key));
    json_decref (st);
    return v;
}

static void test_heartbeating_but_silent_worker (void **state)
{
    pool_t *pool = pool_new (100, false);
    assert_non_null (pool);
    bmq_broker_set_deadline (pool->broker, 300);
    fake_t fake = { 0 };
    s_fake_start (&fake, pool);
    replies_t got = { 0 };
    s_run (pool, &fake, 1, 200, NULL, &got);
    assert_int_equal (bmq_broker_workers (pool->broker), 1);
    assert_true (pool_spawn (pool, "validator") > 0);
    while (bmq_broker_workers (pool->broker) < 2) s_run (pool, &fake, 1, 50, NULL, &got);
    char cid[BMQ_MAX_ID + 1];
    bmq_envelope_t *req = s_request (cid, sizeof cid);
    int64_t t0 = bmq_mono_ms ();
    assert_int_equal (bmq_broker_submit (pool->broker, &req), 0);     /* LRU: the fake, idle longest, gets it */
    while (!got.count && bmq_mono_ms () - t0 < 5000) s_run (pool, &fake, 1, 20, cid, &got);
    int64_t took = bmq_mono_ms () - t0;
    assert_int_equal (fake.jobs, 1);
    assert_int_equal (got.count, 1);
    assert_int_equal (got.last->type, BMQ_MSG_VALIDATE_REPLY);
    assert_true (json_is_true (json_object_get (got.last->body, "accepted")));
    assert_true (took >= 300);                                        /* not before the deadline */
    assert_int_equal (s_stat (pool, "expired"), 1);
    assert_int_equal (s_stat (pool, "requeued"), 1);
    assert_int_equal (bmq_broker_workers (pool->broker), 1);         /* the hung one is out */
    /* its late answer, and its heartbeats, change nothing */
    bmq_envelope_t *late = bmq_envelope_reply (fake.held, BMQ_MSG_VALIDATE_REPLY,
        json_pack ("{s:b, s:[], s:s}", "accepted", 0, "errors", "plan_hash", "x"));
    bmq_bus_send_and_destroy (fake.sock, NULL, &late);
    s_run (pool, &fake, 1, 500, cid, &got);
    assert_int_equal (got.count, 1);
    assert_int_equal (bmq_broker_workers (pool->broker), 1);
    printf ("hung worker dropped and the request answered by another after %lld ms\n", (long long) took);
    bmq_envelope_destroy (&got.last);
    s_fake_stop (&fake);
    assert_int_equal (pool_destroy (&pool), 0);
}

static void test_stopped_validator (void **state)
{
    pool_t *pool = pool_new (100, false);
    assert_non_null (pool);
    bmq_broker_set_deadline (pool->broker, 400);
    pid_t a = pool_spawn (pool, "validator");
    assert_true (pool_wait_workers (pool, 1, 20000));
    assert_true (pool_spawn (pool, "validator") > 0);                 /* joins later: idle for less time */
    assert_true (pool_wait_workers (pool, 2, 20000));
    kill (a, SIGSTOP);
    char cid[BMQ_MAX_ID + 1];
    bmq_envelope_t *req = s_request (cid, sizeof cid);
    assert_int_equal (bmq_broker_submit (pool->broker, &req), 0);     /* goes to the stopped one (idle longest) */
    replies_t got = { 0 };
    int64_t t0 = bmq_mono_ms ();
    while (!got.count && bmq_mono_ms () - t0 < 20000) s_run (pool, NULL, 0, 50, cid, &got);
    assert_int_equal (got.count, 1);                                  /* answered by the other one */
    assert_int_equal (got.last->type, BMQ_MSG_VALIDATE_REPLY);
    assert_true (s_stat (pool, "requeued") + s_stat (pool, "expired") >= 1);   /* after the re-send */
    assert_int_equal (bmq_broker_workers (pool->broker), 1);          /* the stopped one was dropped */
    kill (a, SIGCONT);                                                /* it wakes, answers late, reconnects */
    t0 = bmq_mono_ms ();
    while (bmq_broker_workers (pool->broker) < 2 && bmq_mono_ms () - t0 < 10000) s_run (pool, NULL, 0, 50, cid, &got);
    s_run (pool, NULL, 0, 300, cid, &got);
    assert_int_equal (got.count, 1);                                  /* its stale answer was ignored */
    assert_int_equal (bmq_broker_workers (pool->broker), 2);          /* and it is back in the pool */
    bmq_envelope_destroy (&got.last);
    assert_int_equal (pool_destroy (&pool), 0);
}

/* Fail fast (issue 17): with no worker for a whole interval, a queued request
 * is answered validator_unavailable instead of waiting for the client's timeout. */
static void test_empty_pool_answers (void **state)
{
    pool_t *pool = pool_new (100, false);
    assert_non_null (pool);
    char cid[BMQ_MAX_ID + 1];
    bmq_envelope_t *req = s_request (cid, sizeof cid);
    assert_int_equal (bmq_broker_submit (pool->broker, &req), 0);
    replies_t got = { 0 };
    int64_t t0 = bmq_mono_ms ();
    while (!got.count && bmq_mono_ms () - t0 < 5000) s_run (pool, NULL, 0, 50, cid, &got);
    int64_t took = bmq_mono_ms () - t0;
    assert_int_equal (got.count, 1);
    assert_int_equal (got.last->type, BMQ_MSG_ERROR);
    assert_string_equal (bmq_body_str (got.last, "code"), "validator_unavailable");
    assert_true (took < 3 * 100 + 200);                               /* within two intervals of the pool's grace */
    assert_int_equal (s_stat (pool, "queued"), 0);
    bmq_envelope_destroy (&got.last);
    assert_int_equal (pool_destroy (&pool), 0);
}

static void test_request_that_hangs_every_worker (void **state)
{
    pool_t *pool = pool_new (100, false);
    assert_non_null (pool);
    bmq_broker_set_deadline (pool->broker, 200);
    fake_t fakes[BMQ_BROKER_MAX_ATTEMPTS] = { { 0 } };
    for (int i = 0; i < BMQ_BROKER_MAX_ATTEMPTS; i++) s_fake_start (&fakes[i], pool);
    replies_t got = { 0 };
    while (bmq_broker_workers (pool->broker) < BMQ_BROKER_MAX_ATTEMPTS) s_run (pool, fakes, BMQ_BROKER_MAX_ATTEMPTS, 50, NULL, &got);
    char cid[BMQ_MAX_ID + 1];
    bmq_envelope_t *req = s_request (cid, sizeof cid);
    assert_int_equal (bmq_broker_submit (pool->broker, &req), 0);
    int64_t t0 = bmq_mono_ms ();
    while (!got.count && bmq_mono_ms () - t0 < 5000) s_run (pool, fakes, BMQ_BROKER_MAX_ATTEMPTS, 20, cid, &got);
    assert_int_equal (got.count, 1);
    assert_int_equal (got.last->type, BMQ_MSG_ERROR);
    assert_string_equal (bmq_body_str (got.last, "code"), "validator_failed");
    for (int i = 0; i < BMQ_BROKER_MAX_ATTEMPTS; i++) assert_int_equal (fakes[i].jobs, 1);     /* each tried once */
    assert_int_equal (s_stat (pool, "failed"), 1);
    s_run (pool, fakes, BMQ_BROKER_MAX_ATTEMPTS, 300, cid, &got);
    assert_int_equal (got.count, 1);
    bmq_envelope_destroy (&got.last);
    for (int i = 0; i < BMQ_BROKER_MAX_ATTEMPTS; i++) s_fake_stop (&fakes[i]);
    assert_int_equal (pool_destroy (&pool), 0);
}

int main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_heartbeating_but_silent_worker),
        cmocka_unit_test (test_stopped_validator),
        cmocka_unit_test (test_empty_pool_answers),
        cmocka_unit_test (test_request_that_hangs_every_worker),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
