/* bench pipeline_overhead: a 50-step plan through gateway → validator →
 * executor → Blender, against the same bpy calls run directly in a loop
 * inside the same Blender; both from an empty scene, alternated, medians.
 *
 *   ratio        50 cube additions (bench_cube_plan) / bench_direct of 50 cubes
 *   ratio_named  50 steps that name and target objects as recipes do
 *                (bench_named_plan: 25 named cubes, each then moved by name;
 *                the gateway reads the scene's names before validation) /
 *                bench_direct of its 25 cube additions (the 25 location sets
 *                are microseconds of bpy and have no bench_direct form) */
#include "bench_util.h"
#include <stdio.h>

#define ROUNDS 7
#define STEPS 50

static void s_reset (zsock_t *gw)
{
    json_decref (bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                 json_pack ("{s:s}", "command", "reset_scene")), NULL, 30000));
}

/* bench_direct of `count` cubes from an empty scene: its direct_ms, or -1. */
static double s_direct (zsock_t *gw, int count)
{
    s_reset (gw);
    json_t *d = bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                 json_pack ("{s:s, s:{s:i}}", "command", "bench_direct", "args", "count", count)), NULL, 60000);
    double ms = json_number_value (json_object_get (json_object_get (d, "result"), "direct_ms"));
    json_decref (d);
    return d && ms > 0 ? ms : -1;
}

/* `plan` (taken) through the stack from an empty scene: wall ms at the client
 * (*executor_ms: the executor's duration_ms), or -1 when it did not end done. */
static double s_pipeline (zsock_t *gw, json_t *plan, double *executor_ms)
{
    s_reset (gw);
    double t0 = bench_now_us ();
    json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:o}", "plan", plan)), NULL, 60000);
    double ms = (bench_now_us () - t0) / 1000.0;
    *executor_ms = json_number_value (json_object_get (res, "duration_ms"));
    const char *status = json_string_value (json_object_get (res, "status"));
    int ok = res && status && !strcmp (status, "done");
    if (res && !ok) fprintf (stderr, "bench: plan ended %s\n", status ? status : "(no status)");
    json_decref (res);
    return ok ? ms : -1;
}

int main (void)
{
    bmq_envelope_set_sender ("bench");
    bench_stack_t st;
    if (bench_stack_up (&st, 1)) { fprintf (stderr, "cannot start the stack\n"); return 1; }
    zsock_t *gw = bmq_bus_connect (ZMQ_DEALER, bmq_config_str (st.cfg, "gateway.endpoint"), "gateway");
    double direct[ROUNDS], pipeline[ROUNDS], executor_ms[ROUNDS];
    double direct_n[ROUNDS], pipeline_n[ROUNDS], executor_n[ROUNDS];
    int ok = 1;
    for (int r = 0; r < ROUNDS && ok; r++) {
        char prefix[32];
        snprintf (prefix, sizeof prefix, "bench_r%d", r);
        direct[r] = s_direct (gw, STEPS);
        pipeline[r] = s_pipeline (gw, bench_cube_plan (STEPS), &executor_ms[r]);
        direct_n[r] = s_direct (gw, STEPS / 2);
        pipeline_n[r] = s_pipeline (gw, bench_named_plan (STEPS, prefix), &executor_n[r]);
        ok = direct[r] > 0 && pipeline[r] > 0 && direct_n[r] > 0 && pipeline_n[r] > 0;
    }
    if (ok) {
        double pm = bench_percentile (pipeline, ROUNDS, 50), dm = bench_percentile (direct, ROUNDS, 50);
        bench_emit ("pipeline_overhead", "ratio", pm / dm, "x",
                    json_pack ("{s:f, s:f, s:f, s:i, s:i}", "pipeline_ms", pm, "direct_ms", dm,
                               "executor_ms", bench_percentile (executor_ms, ROUNDS, 50), "steps", STEPS, "rounds", ROUNDS));
        pm = bench_percentile (pipeline_n, ROUNDS, 50);
        dm = bench_percentile (direct_n, ROUNDS, 50);
        bench_emit ("pipeline_overhead", "ratio_named", pm / dm, "x",
                    json_pack ("{s:f, s:f, s:f, s:i, s:i, s:i, s:s}", "pipeline_ms", pm, "direct_ms", dm,
                               "executor_ms", bench_percentile (executor_n, ROUNDS, 50), "steps", STEPS,
                               "objects", STEPS / 2, "rounds", ROUNDS,
                               "direct", "the plan's cube additions; its location sets are left out (microseconds)"));
    }
    zsock_destroy (&gw);
    bench_stack_down (&st);
    return ok ? 0 : 1;
}
