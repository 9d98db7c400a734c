/* bench first_step_latency: a plan sent to the gateway → its first step's
 * progress event back at the client (so: validation, sealing, routing, the
 * plan transaction's start and the bpy call itself).
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
    static double lat[RUNS_MAX];
    int n = 0;
    for (int r = 0; r < runs; r++) {
        if (r % 10 == 0)
            json_decref (bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                         json_pack ("{s:s}", "command", "reset_scene")), NULL, 30000));
        double first = 0, t0 = bench_now_us ();
        json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL,
                                     json_pack ("{s:o}", "plan", bench_cube_plan (3))), &first, 30000);
        if (res && first > 0) lat[n++] = (first - t0) / 1000.0;
        json_decref (res);
    }
    if (n) {
        double p50 = bench_percentile (lat, (size_t) n, 50), p99 = bench_percentile (lat, (size_t) n, 99);
        bench_emit ("first_step_latency", "p50_ms", p50, "ms", json_pack ("{s:i}", "runs", n));
        bench_emit ("first_step_latency", "p99_ms", p99, "ms", json_pack ("{s:i}", "runs", n));
    }
    zsock_destroy (&gw);
    bench_stack_down (&st);
    return n == runs ? 0 : 1;
}
