/* The validator pool under failure, with real validator processes around the
 * gateway's broker:
 *   - one of three validators killed (SIGKILL) while 1,000 plans are in
 *     flight: every plan gets exactly one verdict, the right one, and the
 *     request the dead worker held is answered by another;
 *   - capabilities.request answered by any worker, full and compact. */
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

#define PLANS 1000

typedef struct {
    zhashx_t *expect;          /* cid → "1" (accept) / "0" (reject) */
    zhashx_t *seen;            /* cid → count */
    size_t    replies, wrong, errors, duplicates;
    pool_t   *pool;
    pid_t     victim;
    size_t    kill_after;
    json_int_t queued_at_kill;  /* requests still waiting in the broker's queue when the victim died */
} run_t;

static void s_on_reply (bmq_envelope_t *reply, void *arg)
{
    run_t *r = arg;
    const char *want = zhashx_lookup (r->expect, reply->cid);
    if (!want) { bmq_envelope_destroy (&reply); return; }
    size_t n = (size_t) zhashx_lookup (r->seen, reply->cid);
    zhashx_update (r->seen, reply->cid, (void *) (n + 1));
    if (n) r->duplicates++;
    r->replies++;
    if (reply->type != BMQ_MSG_VALIDATE_REPLY) {
        fprintf (stderr, "non-verdict reply %s: %s\n", bmq_msg_type_name (reply->type), bmq_body_str (reply, "message"));
        r->errors++;
    }
    else if (json_is_true (json_object_get (reply->body, "accepted")) != (want[0] == '1')) r->wrong++;
    bmq_envelope_destroy (&reply);
    /* kill a worker that holds a request right now */
    if (!r->victim && r->replies >= r->kill_after) {
        json_t *st = bmq_broker_status (r->pool->broker);
        size_t i;
        json_t *w;
        json_array_foreach (json_object_get (st, "pool"), i, w)
            if (json_is_true (json_object_get (w, "busy"))) { r->victim = (pid_t) json_integer_value (json_object_get (w, "pid")); break; }
        r->queued_at_kill = json_integer_value (json_object_get (st, "queued"));
        json_decref (st);
        if (r->victim) {
            kill (r->victim, SIGKILL);
            printf ("killed validator %d (busy) after %zu verdicts\n", (int) r->victim, r->replies);
        }
    }
}

static bool s_all_in (void *arg)
{
    run_t *r = arg;
    return zhashx_size (r->seen) == PLANS;
}

static void test_kill_one_while_1000_in_flight (void **state)
{
    /* plans first: the broker must not stall (and miss heartbeats) while they are built */
    static json_t *plans[PLANS];
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < PLANS; i++) plans[i] = pool_plan (&rng, 60 + (int) (rng % 140), i % 4 != 3);
    pool_t *pool = pool_new (100, false);
    assert_non_null (pool);
    bmq_broker_set_deadline (pool->broker, 2000);
    for (int i = 0; i < 3; i++) assert_true (pool_spawn (pool, "validator") > 0);
    assert_true (pool_wait_workers (pool, 3, 20000));

    run_t r = { zhashx_new (), zhashx_new (), 0, 0, 0, 0, pool, 0, PLANS / 4, 0 };
    for (int i = 0; i < PLANS; i++) {
        bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_VALIDATE_REQUEST, NULL, json_pack ("{s:o}", "plan", plans[i]));
        bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* as the gateway forwards a client's request */
        zhashx_insert (r.expect, req->cid, i % 4 != 3 ? "1" : "0");
        assert_int_equal (bmq_broker_submit (pool->broker, &req), 0);
    }
    int64_t t0 = bmq_mono_ms ();
    pool_drive (pool, 60000, s_on_reply, s_all_in, &r);
    double seconds = (bmq_mono_ms () - t0) / 1000.0;
    /* keep listening a while: a late or duplicated answer would show up now */
    pool_drive (pool, 1000, s_on_reply, NULL, &r);

    json_t *st = bmq_broker_status (pool->broker);
    char *text = json_dumps (st, JSON_COMPACT);
    printf ("%d plans in %.2f s; %zu replies, %zu duplicates, %zu wrong, %zu errors; broker %s\n", PLANS, seconds,
            r.replies, r.duplicates, r.wrong, r.errors, text);
    free (text);
    assert_true (r.victim > 0);
    assert_int_equal (zhashx_size (r.seen), PLANS);        /* none lost */
    assert_int_equal (r.replies, PLANS);                   /* none duplicated */
    assert_int_equal (r.duplicates, 0);
    assert_int_equal (r.wrong, 0);
    assert_int_equal (r.errors, 0);
    assert_int_equal (json_integer_value (json_object_get (st, "workers")), 2);
    assert_int_equal (json_integer_value (json_object_get (st, "failed")), 0);
    /* The victim held a request when it was killed. Either its answer had not left
     * it, or it had, and the broker, reading it, handed the dead worker the next
     * request of the queue at once (queued > 0 then): either way the dead worker
     * ends up holding a request nobody answers, which the broker must re-send to
     * another worker when it drops the victim. So at least one re-send, and every
     * re-send was dispatched again and answered once (none lost, none twice). */
    json_int_t requeued = json_integer_value (json_object_get (st, "requeued"));
    json_int_t dispatched = json_integer_value (json_object_get (st, "dispatched"));
    json_int_t verdicts = json_integer_value (json_object_get (st, "verdicts"));
    printf ("requests re-sent after the kill: %lld (queued at the kill: %lld)\n", (long long) requeued,
            (long long) r.queued_at_kill);
    assert_true (r.queued_at_kill > 0);                    /* the argument above needs a non-empty queue */
    assert_true (requeued >= 1);                           /* the victim's request went to another worker */
    assert_int_equal (dispatched, PLANS + requeued);       /* each re-send dispatched once more */
    assert_int_equal (verdicts, PLANS);                    /* and answered exactly once, by a live worker */
    assert_int_equal (json_integer_value (json_object_get (st, "busy")), 0);
    assert_int_equal (json_integer_value (json_object_get (st, "queued")), 0);
    json_decref (st);
    zhashx_destroy (&r.expect);
    zhashx_destroy (&r.seen);
    assert_int_equal (pool_destroy (&pool), 0);
}

typedef struct { bmq_envelope_t *reply; } one_t;
static void s_keep (bmq_envelope_t *reply, void *arg) { ((one_t *) arg)->reply = reply; }
static bool s_have (void *arg) { return ((one_t *) arg)->reply != NULL; }

static void test_capabilities_from_any_worker (void **state)
{
    pool_t *pool = pool_new (100, false);
    assert_non_null (pool);
    assert_true (pool_spawn (pool, "validator") > 0);
    assert_true (pool_wait_workers (pool, 1, 20000));
    const char *forms[] = { "full", "compact", "bogus" };
    size_t sizes[2] = { 0 };
    for (int k = 0; k < 3; k++) {
        bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_CAPABILITIES_REQUEST, NULL, json_pack ("{s:s}", "form", forms[k]));
        bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* as the gateway forwards a client's request */
        char cid[BMQ_MAX_ID + 1];
        snprintf (cid, sizeof cid, "%s", req->cid);
        assert_int_equal (bmq_broker_submit (pool->broker, &req), 0);
        one_t one = { NULL };
        pool_drive (pool, 10000, s_keep, s_have, &one);
        assert_non_null (one.reply);
        assert_string_equal (one.reply->cid, cid);
        if (k == 2) {
            assert_int_equal (one.reply->type, BMQ_MSG_ERROR);
            assert_string_equal (bmq_body_str (one.reply, "code"), "bad_request");
            bmq_envelope_destroy (&one.reply);
            continue;
        }
        assert_int_equal (one.reply->type, BMQ_MSG_CAPABILITIES_REPLY);
        json_t *palette = json_object_get (one.reply->body, "palette");
        assert_true (json_object_size (palette) >= 20);
        json_t *uv = json_object_get (palette, "bpy.ops.mesh.primitive_uv_sphere_add");
        if (k == 0) {            /* seed 001 shape: description, params with type, bounds, default */
            assert_non_null (json_object_get (uv, "description"));
            json_t *radius = json_object_get (json_object_get (uv, "params"), "radius");
            assert_string_equal (json_string_value (json_object_get (radius, "type")), "float");
            assert_true (json_real_value (json_object_get (radius, "default")) == 1.0);
            json_t *del = json_object_get (palette, "bpy.ops.object.delete");
            assert_string_equal (json_string_value (json_object_get (del, "target")), "required");
            assert_string_equal (json_string_value (json_object_get (del, "deletes")), "object");
        }
        else assert_non_null (strstr (json_string_value (uv), "segments int 3..256 =32"));
        /* no executor here: the curated palette, and it says so */
        assert_string_equal (json_string_value (json_object_get (json_object_get (one.reply->body, "rna"), "state")), "pending");
        sizes[k] = json_dumpb (palette, NULL, 0, JSON_COMPACT | JSON_REAL_PRECISION (10));
        bmq_envelope_destroy (&one.reply);
    }
    printf ("discover_capabilities: full %zu bytes (~%zu tokens), compact %zu bytes (~%zu tokens)\n",
            sizes[0], sizes[0] / 4, sizes[1], sizes[1] / 4);
    assert_true (sizes[1] * 2 < sizes[0]);
    assert_int_equal (pool_destroy (&pool), 0);
}

int main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_capabilities_from_any_worker),
        cmocka_unit_test (test_kill_one_while_1000_in_flight),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
