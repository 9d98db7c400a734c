/* bench first_step_latency: a plan sent to the gateway → its first step's
 * progress event back at the client (so: validation, sealing, routing, the
 * plan transaction's start and the bpy call itself).
 *
 *   p50_ms, p99_ms              3 cube additions (bench_cube_plan)
 *   p50_ms_named, p99_ms_named  3 steps that name and target objects as recipes
 *                               do (bench_named_plan, fresh names each run): the
 *                               gateway reads the scene's names before validation
 *
 *   bench_first_step_latency [runs]      (default 40) */
#include "bench_util.h"
#include <stdio.h>
#include <stdlib.h>

#define RUNS 40
#define RUNS_MAX 1000

int main (int argc, char **argv)
{
    int runs = argc > 1 ? atoi (argv[1]) : RUNS;
    if (runs < 10 || runs > RUNS_MAX) { fprintf (stderr, "usage: bench_first_step_latency [10..%d]\n", RUNS_MAX); return 2; }
    bmq_envelope_set_sender ("bench");
    bench_stack_t st;
    if (bench_stack_up (&st, 1)) { fprintf (stderr, "cannot start the stack\n"); return 1; }
    zsock_t *gw = bmq_bus_connect (ZMQ_DEALER, bmq_config_str (st.cfg, "gateway.endpoint"), "gateway");
    static double lat[RUNS_MAX], lat_named[RUNS_MAX];
    int n = 0, n_named = 0;
    for (int r = 0; r < runs; r++) {
        if (r % 10 == 0)
            json_decref (bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                         json_pack ("{s:s}", "command", "reset_scene")), NULL, 30000));
        char prefix[32];
        snprintf (prefix, sizeof prefix, "first_r%d", r);
        double first = 0, t0 = bench_now_us ();
        json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL,
                                     json_pack ("{s:o}", "plan", bench_cube_plan (3))), &first, 30000);
        if (res && first > 0) lat[n++] = (first - t0) / 1000.0;
        json_decref (res);
        first = 0;
        t0 = bench_now_us ();
        res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL,
                             json_pack ("{s:o}", "plan", bench_named_plan (3, prefix))), &first, 30000);
        if (res && first > 0) lat_named[n_named++] = (first - t0) / 1000.0;
        json_decref (res);
    }
    if (n) {
        double p50 = bench_percentile (lat, (size_t) n, 50), p99 = bench_percentile (lat, (size_t) n, 99);
        bench_emit ("first_step_latency", "p50_ms", p50, "ms", json_pack ("{s:i}", "runs", n));
        bench_emit ("first_step_latency", "p99_ms", p99, "ms", json_pack ("{s:i}", "runs", n));
    }
    if (n_named) {
        double p50 = bench_percentile (lat_named, (size_t) n_named, 50), p99 = bench_percentile (lat_named, (size_t) n_named, 99);
        bench_emit ("first_step_latency", "p50_ms_named", p50, "ms", json_pack ("{s:i, s:s}", "runs", n_named,
                    "plan", "3 steps: a named cube, moved by name, another named cube"));
        bench_emit ("first_step_latency", "p99_ms_named", p99, "ms", json_pack ("{s:i}", "runs", n_named));
    }
    zsock_destroy (&gw);
    bench_stack_down (&st);
    return n == runs && n_named == runs ? 0 : 1;
}
