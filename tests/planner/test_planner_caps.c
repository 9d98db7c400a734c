/* planner_caps: the planner's one source of capabilities, against a fake
 * gateway front in this process. A palette rebuilt from its published form
 * (with the curated costs) publishes exactly the same and judges plans the
 * same; the planner starts with the curated palette, swaps in the pool's
 * (narrowed: an operation dropped, a bound tightened) once the gateway
 * answers, keeps it while it does not change, swaps again when it does;
 * errors, mismatched forms and malformed answers keep what is in use. The
 * tools answer discover_capabilities with the snapshot's bodies exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "bus.h"
#include "plan_validator.h"
#include "planner_caps.h"
#include "planner_tools.h"
#include "yaml_json.h"

#define SPHERE "bpy.ops.mesh.primitive_uv_sphere_add"
#define DROPPED "bpy.ops.mesh.primitive_torus_add"

typedef enum { F_SERVE, F_ERROR, F_MIXED, F_BOGUS } f_mode_t;

typedef struct {
    zsock_t          *router;
    atomic_int        mode;
    atomic_int        asked;
    json_t           *full, *compact;       /* served (set before the actor starts) */
    json_t           *other_compact;        /* F_MIXED: a compact form of another palette */
} fake_t;

static void s_fake (zsock_t *pipe, void *arg)
{
    fake_t *f = arg;
    zsock_signal (pipe, 0);
    zpoller_t *poller = zpoller_new (pipe, f->router, NULL);
    while (zpoller_wait (poller, -1) == f->router) {
        zframe_t *rid = NULL;
        bmq_envelope_t *req = bmq_bus_recv (f->router, &rid);
        if (req && req->type == BMQ_MSG_CAPABILITIES_REQUEST) {
            atomic_fetch_add (&f->asked, 1);
            bool compact = bmq_body_str (req, "form") && !strcmp (bmq_body_str (req, "form"), "compact");
            bmq_envelope_t *reply;
            int mode = atomic_load (&f->mode);
            if (mode == F_ERROR) reply = bmq_envelope_error (req, "validator_unavailable", "no validator is connected");
            else if (mode == F_BOGUS) reply = bmq_envelope_reply (req, BMQ_MSG_CAPABILITIES_REPLY,
                json_pack ("{s:{s:{s:s}}, s:{s:i}}", "palette", "bpy.ops.mesh.primitive_teapot_add", "description", "x", "limits", "max_steps", 5));
            else reply = bmq_envelope_reply (req, BMQ_MSG_CAPABILITIES_REPLY,
                json_deep_copy (compact ? (mode == F_MIXED ? f->other_compact : f->compact) : f->full));
            bmq_bus_send_and_destroy (f->router, rid, &reply);
        }
        zframe_destroy (&rid);
        bmq_envelope_destroy (&req);
    }
    zpoller_destroy (&poller);
}

static json_t *s_curated (void)
{
    char err[512];
    json_t *doc = bmq_yaml_load_file (BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);
    assert_non_null (doc);
    return doc;
}

/* The curated document narrowed as a merge with Blender's RNA may: one operation
 * dropped, the sphere's radius capped at `max_radius`. */
static bmq_palette_t *s_narrowed (const json_t *curated, double max_radius)
{
    json_t *doc = json_deep_copy (curated);
    json_t *ops = json_object_get (doc, "operations");
    assert_int_equal (json_object_del (ops, DROPPED), 0);
    json_object_set_new (json_object_get (json_object_get (json_object_get (ops, SPHERE), "params"), "radius"), "max", json_real (max_radius));
    char err[512];
    bmq_palette_t *p = bmq_palette_from_json (doc, err, sizeof err);
    if (!p) fail_msg ("%s", err);
    json_decref (doc);
    return p;
}

static json_t *s_plan (double radius, int spheres)
{
    json_t *plan = json_array ();
    for (int i = 0; i < spheres; i++)
        json_array_append_new (plan, json_pack ("{s:s, s:{s:f, s:i, s:i}}", "operation", SPHERE, "params", "radius", radius,
                                                "segments", 256, "ring_count", 128));
    return plan;
}

static bool s_accepts (const bmq_palette_t *p, json_t *plan)
{
    json_t *v = bmq_plan_validate (p, plan);
    bool ok = json_is_true (json_object_get (v, "accepted"));
    json_decref (v);
    json_decref (plan);
    return ok;
}

static void test_rebuild_round_trip (void **state)
{
    json_t *curated = s_curated ();
    char err[512];
    bmq_palette_t *p = bmq_palette_from_json (curated, err, sizeof err);
    json_t *full = bmq_planner_caps_body (p, false, json_pack ("{s:s}", "state", "merged"));
    json_t *doc = bmq_planner_caps_rebuild (curated, full, err, sizeof err);
    assert_non_null (doc);
    bmq_palette_t *again = bmq_palette_from_json (doc, err, sizeof err);
    if (!again) fail_msg ("%s", err);
    for (int compact = 0; compact < 2; compact++) {
        json_t *a = bmq_palette_capabilities (p, compact), *b = bmq_palette_capabilities (again, compact);
        assert_true (json_equal (a, b));
        json_decref (a);
        json_decref (b);
    }
    /* the same verdicts, the vertex cost included (the published form has no costs: they are the curated ones) */
    assert_true (s_accepts (again, s_plan (1.0, 2)));
    assert_false (s_accepts (again, s_plan (5000.0, 1)));
    assert_true (s_accepts (p, s_plan (1.0, 60)));
    assert_false (s_accepts (p, s_plan (1.0, 70)));           /* 70 × 32768 vertices > 2,000,000 */
    assert_false (s_accepts (again, s_plan (1.0, 70)));
    assert_true (s_accepts (again, s_plan (1.0, 60)));
    /* an operation the curated palette lacks cannot come from a merge */
    json_object_set_new (json_object_get (full, "palette"), "bpy.ops.mesh.primitive_teapot_add", json_pack ("{s:{}}", "params"));
    assert_null (bmq_planner_caps_rebuild (curated, full, err, sizeof err));
    assert_non_null (strstr (err, "not in the curated palette"));
    json_t *empty = json_object ();
    assert_null (bmq_planner_caps_rebuild (curated, empty, err, sizeof err));
    json_decref (empty);
    json_decref (doc);
    json_decref (full);
    bmq_palette_destroy (&again);
    bmq_palette_destroy (&p);
    json_decref (curated);
}

/* Drive caps until `done` or `ms`. */
static void s_run (bmq_planner_caps_t *caps, bool (*done) (bmq_planner_caps_t *, void *), void *arg, int ms)
{
    int64_t end = bmq_mono_ms () + ms;
    while (bmq_mono_ms () < end && !(done && done (caps, arg))) {
        zsock_t *sock = bmq_planner_caps_sock (caps);
        if (sock) {
            zmq_pollitem_t item = { zsock_resolve (sock), 0, ZMQ_POLLIN, 0 };
            if (zmq_poll (&item, 1, 10) > 0) bmq_planner_caps_on_message (caps);
        }
        else zclock_sleep (5);
        bmq_planner_caps_tick (caps);
    }
}

static bool s_swapped (bmq_planner_caps_t *caps, void *n) { return bmq_planner_caps_swaps (caps) >= *(int *) n; }

static void test_swaps_to_the_pool (void **state)
{
    json_t *curated = s_curated ();
    bmq_palette_t *narrow = s_narrowed (curated, 100.0), *narrower = s_narrowed (curated, 50.0);
    char err[512];
    bmq_palette_t *cur = bmq_palette_from_json (curated, err, sizeof err);
    fake_t f = { .router = bmq_bus_bind (ZMQ_ROUTER, "tcp://127.0.0.1:*") };
    json_t *rna = json_pack ("{s:s, s:s, s:[s], s:[]}", "state", "merged", "blender", "3.4.1", "dropped", DROPPED, "warnings");
    f.full = bmq_planner_caps_body (narrow, false, json_incref (rna));
    f.compact = bmq_planner_caps_body (narrow, true, json_incref (rna));
    f.other_compact = bmq_planner_caps_body (cur, true, json_incref (rna));
    atomic_init (&f.mode, F_ERROR);
    zactor_t *actor = zactor_new (s_fake, &f);
    bmq_planner_caps_opts_t opts = { .round_ms = 1000, .retry_ms = 40, .refresh_ms = 80 };
    bmq_planner_caps_t *caps = bmq_planner_caps_new (zsock_endpoint (f.router), curated, &opts, err, sizeof err);
    assert_non_null (caps);
    /* the pool is not there: the curated palette, saying why */
    const bmq_caps_snapshot_t *snap = bmq_planner_caps_current (caps);
    assert_false (snap->pool);
    assert_false (snap->merged);
    assert_non_null (strstr (snap->note, "curated palette"));
    assert_string_equal (json_string_value (json_object_get (json_object_get (snap->full, "rna"), "state")), "curated");
    assert_true (bmq_palette_has (snap->palette, DROPPED));
    s_run (caps, NULL, NULL, 300);
    assert_int_equal (bmq_planner_caps_swaps (caps), 0);
    assert_non_null (strstr (bmq_planner_caps_detail (caps), "validator_unavailable"));
    /* forms from validators in different states, then nonsense: nothing changes */
    atomic_store (&f.mode, F_MIXED);
    s_run (caps, NULL, NULL, 300);
    atomic_store (&f.mode, F_BOGUS);
    s_run (caps, NULL, NULL, 300);
    assert_int_equal (bmq_planner_caps_swaps (caps), 0);
    assert_false (bmq_planner_caps_current (caps)->pool);
    /* the pool answers: its palette, exactly as published */
    atomic_store (&f.mode, F_SERVE);
    int want = 1;
    s_run (caps, s_swapped, &want, 3000);
    assert_int_equal (bmq_planner_caps_swaps (caps), 1);
    snap = bmq_planner_caps_current (caps);
    assert_true (snap->pool);
    assert_true (snap->merged);
    assert_string_equal (bmq_planner_caps_detail (caps), "");
    assert_true (json_equal (snap->full, f.full));
    assert_true (json_equal (snap->compact, f.compact));
    assert_non_null (strstr (snap->note, "Blender 3.4.1"));
    assert_false (bmq_palette_has (snap->palette, DROPPED));
    assert_true (s_accepts (cur, s_plan (500.0, 1)));           /* the curated palette allows it… */
    assert_false (s_accepts (snap->palette, s_plan (500.0, 1)));   /* …the pool's does not: drafts are checked against it */
    /* unchanged answers: no swap */
    int asked = atomic_load (&f.asked);
    s_run (caps, NULL, NULL, 400);
    assert_true (atomic_load (&f.asked) >= asked + 4);             /* asked again (refresh) */
    assert_int_equal (bmq_planner_caps_swaps (caps), 1);
    assert_ptr_equal (bmq_planner_caps_current (caps), snap);
    /* the pool's palette changes: swapped again; the old one lives until collected */
    zactor_destroy (&actor);
    json_decref (f.full);
    json_decref (f.compact);
    f.full = bmq_planner_caps_body (narrower, false, json_incref (rna));
    f.compact = bmq_planner_caps_body (narrower, true, json_incref (rna));
    actor = zactor_new (s_fake, &f);
    want = 2;
    s_run (caps, s_swapped, &want, 3000);
    assert_int_equal (bmq_planner_caps_swaps (caps), 2);
    assert_true (s_accepts (snap->palette, s_plan (75.0, 1)));     /* still readable */
    assert_false (s_accepts (bmq_planner_caps_current (caps)->palette, s_plan (75.0, 1)));
    bmq_planner_caps_collect (caps);
    /* the tools publish the snapshot's bodies, in either form */
    snap = bmq_planner_caps_current (caps);
    bmq_tools_t *tools = bmq_tools_new (snap->palette, snap, NULL, 100, "story", NULL, NULL);
    json_t *args = json_pack ("{s:s}", "form", "compact"), *answer = bmq_tools_discover (tools, args);
    assert_true (json_equal (answer, snap->compact));
    json_decref (answer);
    answer = bmq_tools_discover (tools, NULL);
    assert_true (json_equal (answer, snap->full));
    json_decref (answer);
    json_object_set_new (args, "form", json_string ("tiny"));
    answer = bmq_tools_discover (tools, args);
    assert_non_null (json_object_get (answer, "error"));
    json_decref (answer);
    answer = bmq_tools_inspect (tools, DROPPED);                   /* not in the pool's palette */
    assert_non_null (strstr (json_string_value (json_object_get (answer, "error")), "not in the capability palette"));
    json_decref (answer);
    json_decref (args);
    bmq_tools_destroy (&tools);
    bmq_planner_caps_destroy (&caps);
    zactor_destroy (&actor);
    json_decref (f.full);
    json_decref (f.compact);
    json_decref (f.other_compact);
    json_decref (rna);
    zsock_destroy (&f.router);
    bmq_palette_destroy (&narrow);
    bmq_palette_destroy (&narrower);
    bmq_palette_destroy (&cur);
    json_decref (curated);
}

/* No gateway configured: the curated palette, never asking. */
static void test_no_gateway (void **state)
{
    json_t *curated = s_curated ();
    char err[512];
    bmq_planner_caps_t *caps = bmq_planner_caps_new ("", curated, NULL, err, sizeof err);
    assert_non_null (caps);
    assert_true (bmq_planner_caps_due (caps) == INT64_MAX);
    bmq_planner_caps_tick (caps);
    assert_null (bmq_planner_caps_sock (caps));
    assert_false (bmq_planner_caps_current (caps)->pool);
    bmq_planner_caps_destroy (&caps);
    bmq_planner_caps_destroy (&caps);
    json_object_set_new (curated, "version", json_integer (7));
    assert_null (bmq_planner_caps_new ("", curated, NULL, err, sizeof err));
    json_decref (curated);
}

int main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_rebuild_round_trip),
        cmocka_unit_test (test_swaps_to_the_pool),
        cmocka_unit_test (test_no_gateway),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
