/* rna_fetch against a fake executor in this process: Blender not connected
 * yet (a transient error ends the round, the next one after a back-off gets
 * everything, one probe first, then the rest pipelined), an operator Blender
 * lacks (null), stray replies ignored, and an executor that never answers
 * (bounded: it gives up). Ephemeral ports only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bus.h"
#include "rna_fetch.h"

typedef struct {
    zsock_t *router;
    int      probes_refused;     /* answer this many requests with "interrupted" first */
    int      requests;           /* seen */
    int      max_in_flight;      /* most requests received before the first answer of a round */
    bool     silent;
} fake_t;

/* Answer one request as an executor would. */
static void s_fake_on_request (fake_t *f)
{
    zframe_t *rid = NULL;
    bmq_envelope_t *req = bmq_bus_recv (f->router, &rid);
    assert_non_null (req);
    assert_int_equal (req->type, BMQ_MSG_INSPECT_REQUEST);
    f->requests++;
    const char *name = bmq_body_str (req, "tool_name");
    bmq_envelope_t *reply;
    if (f->silent) reply = NULL;
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
static void s_run (bmq_rna_fetch_t *fetch, fake_t *f, int ms)
{
    int64_t end = bmq_mono_ms () + ms;
    while (bmq_rna_fetch_state (fetch) == BMQ_RNA_FETCHING && bmq_mono_ms () < end) {
        zsock_t *fs = bmq_rna_fetch_sock (fetch);
        zmq_pollitem_t items[2] = { { zsock_resolve (f->router), 0, ZMQ_POLLIN, 0 },
                                    { fs ? zsock_resolve (fs) : NULL, 0, ZMQ_POLLIN, 0 } };
        int64_t wait = bmq_rna_fetch_due (fetch) - bmq_mono_ms ();
        double t0 = bmq_mono_us ();
        zmq_poll (items, fs ? 2 : 1, wait < 0 ? 0 : wait > 50 ? 50 : (long) wait);
        if (items[0].revents & ZMQ_POLLIN) s_fake_on_request (f);
        if (fs && (items[1].revents & ZMQ_POLLIN)) bmq_rna_fetch_on_message (fetch);
        bmq_rna_fetch_tick (fetch);
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
    bmq_rna_fetch_opts_t opts = { .round_ms = 2000, .backoff_ms = 50, .backoff_max_ms = 200, .max_rounds = 5 };
    bmq_rna_fetch_t *fetch = bmq_rna_fetch_new (endpoint, ops, &opts);
    assert_non_null (fetch);
    s_run (fetch, &f, 5000);
    assert_int_equal (bmq_rna_fetch_state (fetch), BMQ_RNA_DONE);
    assert_int_equal (bmq_rna_fetch_rounds (fetch), 2);
    assert_non_null (strstr (bmq_rna_fetch_detail (fetch), "interrupted"));
    assert_int_equal (f.requests, 5);                   /* 1 refused probe, then 4: nothing asked twice */
    const json_t *result = bmq_rna_fetch_result (fetch);
    assert_int_equal (json_object_size (result), 4);
    assert_true (json_is_null (json_object_get (result, "bpy.ops.mesh.primitive_teapot_add")));
    assert_string_equal (json_string_value (json_object_get (json_object_get (result, "bpy.ops.object.delete"), "name")),
                         "bpy.ops.object.delete");
    bmq_rna_fetch_destroy (&fetch);
    bmq_rna_fetch_destroy (&fetch);                     /* safe twice */
    json_decref (ops);
    zsock_destroy (&f.router);
}

static void test_silent_executor_gives_up (void **state)
{
    char endpoint[128];
    fake_t f = { .router = s_bind (endpoint, sizeof endpoint), .silent = true };
    json_t *ops = json_pack ("[s, s]", "bpy.ops.mesh.primitive_cube_add", "bpy.ops.object.delete");
    bmq_rna_fetch_opts_t opts = { .round_ms = 100, .backoff_ms = 20, .backoff_max_ms = 40, .max_rounds = 3 };
    bmq_rna_fetch_t *fetch = bmq_rna_fetch_new (endpoint, ops, &opts);
    int64_t t0 = bmq_mono_ms ();
    s_run (fetch, &f, 5000);
    assert_int_equal (bmq_rna_fetch_state (fetch), BMQ_RNA_GAVE_UP);
    assert_int_equal (bmq_rna_fetch_rounds (fetch), 3);
    assert_int_equal (f.requests, 3);                   /* one probe per round, nothing piled up */
    assert_true (bmq_mono_ms () - t0 < 1500);
    assert_non_null (strstr (bmq_rna_fetch_detail (fetch), "no answer"));
    bmq_rna_fetch_destroy (&fetch);
    json_decref (ops);
    zsock_destroy (&f.router);
    /* nothing listening at all (an ipc path nobody binds): same, bounded */
    snprintf (endpoint, sizeof endpoint, "ipc:///tmp/bmq-rna-fetch-nobody-%d.sock", (int) getpid ());
    fetch = bmq_rna_fetch_new (endpoint, ops = json_pack ("[s]", "bpy.ops.object.delete"), &opts);
    fake_t none = { .router = bmq_bus_bind (ZMQ_ROUTER, "tcp://127.0.0.1:*"), .silent = true };
    s_run (fetch, &none, 5000);
    assert_int_equal (bmq_rna_fetch_state (fetch), BMQ_RNA_GAVE_UP);
    assert_int_equal (none.requests, 0);
    bmq_rna_fetch_destroy (&fetch);
    zsock_destroy (&none.router);
    json_decref (ops);
    assert_null (bmq_rna_fetch_new (endpoint, NULL, NULL));        /* nothing to fetch */
}

int main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_blender_late_then_answers),
        cmocka_unit_test (test_silent_executor_gives_up),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
