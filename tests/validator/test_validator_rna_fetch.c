/* The inspect client (common/inspect) as the validators' RNA fetch uses it,
 * against a fake gateway front in this process: Blender not connected yet (a
 * transient error ends the round, the next one after a back-off gets
 * everything, one probe first, then the rest pipelined), an operator Blender
 * lacks (null), stray replies ignored, every request its own story (the
 * gateway refuses a cid in progress), `target` passed on, an answer no retry
 * can change (forbidden) ends at once, a gateway that never answers (bounded:
 * it gives up); and the blocking one-operator call the planner uses.
 * Ephemeral ports only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bus.h"
#include "inspect.h"

typedef struct {
    zsock_t *router;
    int      probes_refused;     /* answer this many requests with "interrupted" first */
    int      requests;           /* seen */
    int      max_in_flight;      /* most requests received before the first answer of a round */
    bool     silent;
    const char *refuse;          /* answer every request with this error code */
    zhashx_t *cids;              /* every cid seen (must never repeat) */
    char     target[64];         /* the last request's body target */
    char     last_cid[80];
} fake_t;

/* Answer one request as the gateway would (relaying an executor's answer). */
static void s_fake_on_request (fake_t *f)
{
    zframe_t *rid = NULL;
    bmq_envelope_t *req = bmq_bus_recv (f->router, &rid);
    assert_non_null (req);
    assert_int_equal (req->type, BMQ_MSG_INSPECT_REQUEST);
    f->requests++;
    if (!f->cids) f->cids = zhashx_new ();
    assert_null (zhashx_lookup (f->cids, req->cid));            /* a fresh story each time */
    zhashx_insert (f->cids, req->cid, (void *) 1);
    snprintf (f->last_cid, sizeof f->last_cid, "%s", req->cid);
    snprintf (f->target, sizeof f->target, "%s", bmq_body_str (req, "target") ? bmq_body_str (req, "target") : "");
    const char *name = bmq_body_str (req, "tool_name");
    bmq_envelope_t *reply;
    if (f->silent) reply = NULL;
    else if (f->refuse) reply = bmq_envelope_error (req, f->refuse, "refused by the fake gateway");
    else if (f->probes_refused > 0) {
        f->probes_refused--;
        reply = bmq_envelope_error (req, "interrupted", "inspect: Blender is not connected");
    }
    else if (strstr (name, "teapot")) reply = bmq_envelope_error (req, "unknown_tool", "no such operator");
    else {
        /* a stray reply first: another cid, must be ignored */
        bmq_envelope_t *stray = bmq_envelope_new (BMQ_MSG_INSPECT_REPLY, NULL, json_pack ("{s:{s:s}}", "tool", "name", "stray"));
        bmq_bus_send_and_destroy (f->router, rid, &stray);
        reply = bmq_envelope_reply (req, BMQ_MSG_INSPECT_REPLY,
                                    json_pack ("{s:{s:s, s:[]}}", "tool", "name", name, "params"));
    }
    if (reply) bmq_bus_send_and_destroy (f->router, rid, &reply);
    zframe_destroy (&rid);
    bmq_envelope_destroy (&req);
}

/* Drive the fetch and the fake until the fetch ends or `ms` pass. */
static void s_run (bmq_inspect_t *fetch, fake_t *f, int ms)
{
    int64_t end = bmq_mono_ms () + ms;
    while (bmq_inspect_state (fetch) == BMQ_INSPECT_FETCHING && bmq_mono_ms () < end) {
        zsock_t *fs = bmq_inspect_sock (fetch);
        zmq_pollitem_t items[2] = { { zsock_resolve (f->router), 0, ZMQ_POLLIN, 0 },
                                    { fs ? zsock_resolve (fs) : NULL, 0, ZMQ_POLLIN, 0 } };
        int64_t wait = bmq_inspect_due (fetch) - bmq_mono_ms ();
        double t0 = bmq_mono_us ();
        zmq_poll (items, fs ? 2 : 1, wait < 0 ? 0 : wait > 50 ? 50 : (long) wait);
        if (items[0].revents & ZMQ_POLLIN) s_fake_on_request (f);
        if (fs && (items[1].revents & ZMQ_POLLIN)) bmq_inspect_on_message (fetch);
        bmq_inspect_tick (fetch);
        assert_true (bmq_mono_us () - t0 < 200000);          /* never blocks its owner */
    }
}

static zsock_t *s_bind (char *endpoint, size_t len)
{
    zsock_t *router = bmq_bus_bind (ZMQ_ROUTER, "tcp://127.0.0.1:*");
    assert_non_null (router);
    snprintf (endpoint, len, "%s", zsock_endpoint (router));
    return router;
}

static void test_blender_late_then_answers (void **state)
{
    char endpoint[128];
    fake_t f = { .router = s_bind (endpoint, sizeof endpoint), .probes_refused = 1 };
    json_t *ops = json_pack ("[s, s, s, s]", "bpy.ops.mesh.primitive_cube_add", "bpy.ops.mesh.primitive_teapot_add",
                             "bpy.ops.object.delete", "bpy.ops.transform.translate");
    bmq_inspect_opts_t opts = { .round_ms = 2000, .backoff_ms = 50, .backoff_max_ms = 200, .max_rounds = 5 };
    bmq_inspect_t *fetch = bmq_inspect_new (endpoint, ops, &opts);
    assert_non_null (fetch);
    s_run (fetch, &f, 5000);
    assert_int_equal (bmq_inspect_state (fetch), BMQ_INSPECT_DONE);
    assert_int_equal (bmq_inspect_rounds (fetch), 2);
    assert_non_null (strstr (bmq_inspect_detail (fetch), "interrupted"));
    assert_int_equal (f.requests, 5);                   /* 1 refused probe, then 4: nothing asked twice */
    const json_t *result = bmq_inspect_result (fetch);
    assert_int_equal (json_object_size (result), 4);
    assert_true (json_is_null (json_object_get (result, "bpy.ops.mesh.primitive_teapot_add")));
    assert_string_equal (json_string_value (json_object_get (json_object_get (result, "bpy.ops.object.delete"), "name")),
                         "bpy.ops.object.delete");
    bmq_inspect_destroy (&fetch);
    bmq_inspect_destroy (&fetch);                     /* safe twice */
    json_decref (ops);
    zhashx_destroy (&f.cids);
    zsock_destroy (&f.router);
}

static void test_silent_gateway_gives_up (void **state)
{
    char endpoint[128];
    fake_t f = { .router = s_bind (endpoint, sizeof endpoint), .silent = true };
    json_t *ops = json_pack ("[s, s]", "bpy.ops.mesh.primitive_cube_add", "bpy.ops.object.delete");
    bmq_inspect_opts_t opts = { .round_ms = 100, .backoff_ms = 20, .backoff_max_ms = 40, .max_rounds = 3 };
    bmq_inspect_t *fetch = bmq_inspect_new (endpoint, ops, &opts);
    int64_t t0 = bmq_mono_ms ();
    s_run (fetch, &f, 5000);
    assert_int_equal (bmq_inspect_state (fetch), BMQ_INSPECT_GAVE_UP);
    assert_int_equal (bmq_inspect_rounds (fetch), 3);
    assert_int_equal (f.requests, 3);                   /* one probe per round, nothing piled up */
    assert_true (bmq_mono_ms () - t0 < 1500);
    assert_non_null (strstr (bmq_inspect_detail (fetch), "no answer"));
    bmq_inspect_destroy (&fetch);
    json_decref (ops);
    zhashx_destroy (&f.cids);
    zsock_destroy (&f.router);
    /* nothing listening at all (an ipc path nobody binds): same, bounded */
    snprintf (endpoint, sizeof endpoint, "ipc:///tmp/bmq-inspect-nobody-%d.sock", (int) getpid ());
    fetch = bmq_inspect_new (endpoint, ops = json_pack ("[s]", "bpy.ops.object.delete"), &opts);
    fake_t none = { .router = bmq_bus_bind (ZMQ_ROUTER, "tcp://127.0.0.1:*"), .silent = true };
    s_run (fetch, &none, 5000);
    assert_int_equal (bmq_inspect_state (fetch), BMQ_INSPECT_GAVE_UP);
    assert_int_equal (none.requests, 0);
    bmq_inspect_destroy (&fetch);
    zsock_destroy (&none.router);
    json_decref (ops);
    assert_null (bmq_inspect_new (endpoint, NULL, NULL));        /* nothing to fetch */
}

/* target and story reach the gateway; forbidden ends the fetch at once. */
static void test_target_story_and_forbidden (void **state)
{
    char endpoint[128];
    fake_t f = { .router = s_bind (endpoint, sizeof endpoint), .refuse = "forbidden" };
    json_t *ops = json_pack ("[s, s]", "bpy.ops.mesh.primitive_cube_add", "bpy.ops.object.delete");
    bmq_inspect_opts_t opts = { .round_ms = 2000, .backoff_ms = 20, .max_rounds = 10, .target = "blender-2", .story = "story-1" };
    bmq_inspect_t *fetch = bmq_inspect_new (endpoint, ops, &opts);
    s_run (fetch, &f, 5000);
    assert_int_equal (bmq_inspect_state (fetch), BMQ_INSPECT_GAVE_UP);
    assert_int_equal (bmq_inspect_rounds (fetch), 1);          /* no retry can change a refusal */
    assert_int_equal (f.requests, 1);
    assert_string_equal (bmq_inspect_code (fetch), "forbidden");
    assert_string_equal (f.target, "blender-2");
    assert_int_equal (strncmp (f.last_cid, "story-1.inspect-", 16), 0);
    bmq_inspect_destroy (&fetch);
    /* a transient code is retried */
    f.refuse = "executor_unavailable";
    opts.max_rounds = 3;
    fetch = bmq_inspect_new (endpoint, ops, &opts);
    s_run (fetch, &f, 5000);
    assert_int_equal (bmq_inspect_state (fetch), BMQ_INSPECT_GAVE_UP);
    assert_int_equal (bmq_inspect_rounds (fetch), 3);
    assert_non_null (strstr (bmq_inspect_detail (fetch), "executor_unavailable"));
    bmq_inspect_destroy (&fetch);
    json_decref (ops);
    zhashx_destroy (&f.cids);
    zsock_destroy (&f.router);
}

/* The fake gateway on its own thread, for the blocking call. */
static void s_fake_actor (zsock_t *pipe, void *arg)
{
    fake_t *f = arg;
    zsock_signal (pipe, 0);
    zpoller_t *poller = zpoller_new (pipe, f->router, NULL);
    while (true) {
        void *which = zpoller_wait (poller, -1);
        if (which == f->router) s_fake_on_request (f);
        else break;             /* $TERM */
    }
    zpoller_destroy (&poller);
}

static bool s_cancel_now (void *ctx) { return *(bool *) ctx; }

static void test_once (void **state)
{
    char endpoint[128];
    fake_t f = { .router = s_bind (endpoint, sizeof endpoint) };
    zactor_t *actor = zactor_new (s_fake_actor, &f);
    json_t *tool = NULL;
    char why[512];
    bool cancel = false;
    bmq_inspect_opts_t opts = { .story = "dialogue-7" };
    assert_int_equal (bmq_inspect_once (endpoint, "bpy.ops.mesh.primitive_cone_add", &opts, 2000, s_cancel_now, &cancel,
                                        &tool, why, sizeof why), 0);
    assert_string_equal (json_string_value (json_object_get (tool, "name")), "bpy.ops.mesh.primitive_cone_add");
    json_decref (tool);
    assert_int_equal (bmq_inspect_once (endpoint, "bpy.ops.mesh.primitive_teapot_add", &opts, 2000, NULL, NULL,
                                        &tool, why, sizeof why), -1);
    assert_null (tool);
    assert_non_null (strstr (why, "Blender has no operator bpy.ops.mesh.primitive_teapot_add"));
    zactor_destroy (&actor);
    /* an error answer is passed on with its code */
    f.refuse = "executor_unavailable";
    actor = zactor_new (s_fake_actor, &f);
    assert_int_equal (bmq_inspect_once (endpoint, "bpy.ops.object.delete", NULL, 2000, NULL, NULL, &tool, why, sizeof why), -1);
    assert_non_null (strstr (why, "the gateway answered executor_unavailable"));
    zactor_destroy (&actor);
    assert_int_equal (f.requests, 3);
    /* silent: bounded by the timeout; cancelled: at once */
    f.silent = true;
    actor = zactor_new (s_fake_actor, &f);
    int64_t t0 = bmq_mono_ms ();
    assert_int_equal (bmq_inspect_once (endpoint, "bpy.ops.object.delete", NULL, 300, NULL, NULL, &tool, why, sizeof why), -1);
    int64_t took = bmq_mono_ms () - t0;
    assert_true (took >= 290 && took < 1500);
    assert_non_null (strstr (why, "no answer"));
    cancel = true;
    t0 = bmq_mono_ms ();
    assert_int_equal (bmq_inspect_once (endpoint, "bpy.ops.object.delete", NULL, 5000, s_cancel_now, &cancel, &tool, why, sizeof why), -1);
    assert_string_equal (why, "cancelled");
    assert_true (bmq_mono_ms () - t0 < 1000);
    zactor_destroy (&actor);
    assert_int_equal (bmq_inspect_once ("", "bpy.ops.object.delete", NULL, 300, NULL, NULL, &tool, why, sizeof why), -1);
    assert_non_null (strstr (why, "no gateway"));
    zhashx_destroy (&f.cids);
    zsock_destroy (&f.router);
}

int main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_blender_late_then_answers),
        cmocka_unit_test (test_silent_gateway_gives_up),
        cmocka_unit_test (test_target_story_and_forbidden),
        cmocka_unit_test (test_once),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
