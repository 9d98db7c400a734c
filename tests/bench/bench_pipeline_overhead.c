/* bench pipeline_overhead: a 50-step plan through gateway → validator →
 * executor → Blender, against the same 50 bpy calls run directly in a loop
 * inside the same Blender; both from an empty scene, alternated, medians. */
#include "bench_util.h"
#include <stdio.h>

#define ROUNDS 7
#define STEPS 50

int main (void)
{
    bmq_envelope_set_sender ("bench");
    bench_stack_t st;
    if (bench_stack_up (&st, 1)) { fprintf (stderr, "cannot start the stack\n"); return 1; }
    zsock_t *gw = bmq_bus_connect (ZMQ_DEALER, bmq_config_str (st.cfg, "gateway.endpoint"), "gateway");
    double direct[ROUNDS], pipeline[ROUNDS], executor_ms[ROUNDS];
    int ok = 1;
    for (int r = 0; r < ROUNDS && ok; r++) {
        json_decref (bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                     json_pack ("{s:s}", "command", "reset_scene")), NULL, 30000));
        json_t *d = bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                     json_pack ("{s:s, s:{s:i}}", "command", "bench_direct", "args", "count", STEPS)), NULL, 60000);
        direct[r] = json_number_value (json_object_get (json_object_get (d, "result"), "direct_ms"));
        ok = d && direct[r] > 0;
        json_decref (d);
        json_decref (bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                     json_pack ("{s:s}", "command", "reset_scene")), NULL, 30000));
        double t0 = bench_now_us ();
        json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL,
                                     json_pack ("{s:o}", "plan", bench_cube_plan (STEPS))), NULL, 60000);
        pipeline[r] = (bench_now_us () - t0) / 1000.0;
        executor_ms[r] = json_number_value (json_object_get (res, "duration_ms"));
        ok = ok && res && !strcmp (json_string_value (json_object_get (res, "status")), "done");
        json_decref (res);
    }
    if (ok) {
        double pm = bench_percentile (pipeline, ROUNDS, 50), dm = bench_percentile (direct, ROUNDS, 50);
        bench_emit ("pipeline_overhead", "ratio", pm / dm, "x",
                    json_pack ("{s:f, s:f, s:f, s:i, s:i}", "pipeline_ms", pm, "direct_ms", dm,
                               "executor_ms", bench_percentile (executor_ms, ROUNDS, 50), "steps", STEPS, "rounds", ROUNDS));
    }
    zsock_destroy (&gw);
    bench_stack_down (&st);
    return ok ? 0 : 1;
}
