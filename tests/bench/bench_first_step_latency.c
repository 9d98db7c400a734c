/* bench first_step_latency: from a plan sent to the gateway to its first
 * step's progress event back at the client (so: validation, sealing, routing,
 * the plan transaction's start and the first bpy call itself).
 *
 * Timed (CLOCK_MONOTONIC, in this process): from just before the run request
 * is sent to the arrival of the progress event {event: step, step: 1} of that
 * request on the same gateway socket.
 *
 *   p50_ms, p99_ms                    3 cube additions (bench_cube_plan)
 *   p50_ms_named, p99_ms_named        3 steps that name and target their own
 *                                     objects as recipes do (bench_named_plan,
 *                                     fresh names each run): no scene lookup
 *   p50_ms_existing, p99_ms_existing  3 steps that move objects ALREADY in the
 *                                     scene (bench_existing_plan; 10 named cubes
 *                                     made untimed after each reset): the
 *                                     gateway needs the scene's names before
 *                                     validation, so that lookup is in the path
 *
 *   bench_first_step_latency [runs]      (default 40, 10..1000) */
#include "bench_util.h"
#include <stdio.h>
#include <stdlib.h>

#define RUNS 40
#define RUNS_MAX 1000
#define EXISTING 10

/* Send `plan` (taken); its first step's latency in ms into out[*n] when it came. */
static void s_time (zsock_t *gw, json_t *plan, double *out, int *n)
{
    double first = 0, t0 = bench_now_us ();
    json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:o}", "plan", plan)), &first, 30000);
    const char *status = json_string_value (json_object_get (res, "status"));
    if (res && first > 0 && status && !strcmp (status, "done")) out[(*n)++] = (first - t0) / 1000.0;
    else fprintf (stderr, "bench: a plan ended %s\n", !res ? "without an answer" : status ? status : "without a status");
    json_decref (res);
}

static void s_emit (const char *suffix, double *lat, int n, const char *plan)
{
    char p50[32], p99[32];
    snprintf (p50, sizeof p50, "p50_ms%s", suffix);
    snprintf (p99, sizeof p99, "p99_ms%s", suffix);
    const char *timed = "client: run request sent -> progress {event: step, step: 1} received (CLOCK_MONOTONIC)";
    bench_emit ("first_step_latency", p50, bench_percentile (lat, (size_t) n, 50), "ms",
                json_pack ("{s:i, s:s, s:s}", "runs", n, "plan", plan, "timed", timed));
    bench_emit ("first_step_latency", p99, bench_percentile (lat, (size_t) n, 99), "ms",
                json_pack ("{s:i, s:s, s:s}", "runs", n, "plan", plan, "timed", timed));
}

int main (int argc, char **argv)
{
    int runs = bench_arg_int (argc, argv, 1, RUNS, 10, RUNS_MAX, "bench_first_step_latency [runs]");
    bmq_envelope_set_sender ("bench");
    bench_stack_t st;
    if (bench_stack_up (&st, 1)) { fprintf (stderr, "cannot start the stack\n"); return 1; }
    zsock_t *gw = bmq_bus_connect (ZMQ_DEALER, bmq_config_str (st.cfg, "gateway.endpoint"), "gateway");
    static double lat[RUNS_MAX], lat_named[RUNS_MAX], lat_existing[RUNS_MAX];
    int n = 0, n_named = 0, n_existing = 0, setup_ok = 1;
    for (int r = 0; r < runs && setup_ok; r++) {
        if (r % 10 == 0) {
            json_decref (bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                         json_pack ("{s:s}", "command", "reset_scene")), NULL, 30000));
            json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL,
                                         json_pack ("{s:o}", "plan", bench_setup_plan (EXISTING, "exist", 5.0))), NULL, 30000);
            const char *status = json_string_value (json_object_get (res, "status"));
            setup_ok = res && status && !strcmp (status, "done");
            json_decref (res);
        }
        char prefix[32];
        snprintf (prefix, sizeof prefix, "first_r%d", r);
        s_time (gw, bench_cube_plan (3), lat, &n);
        s_time (gw, bench_named_plan (3, prefix), lat_named, &n_named);
        s_time (gw, bench_existing_plan (3, "exist", EXISTING), lat_existing, &n_existing);
    }
    if (!setup_ok) fprintf (stderr, "bench first_step_latency: the plan making the existing objects failed\n");
    if (n) s_emit ("", lat, n, "3 cube additions");
    if (n_named) s_emit ("_named", lat_named, n_named, "3 steps: a named cube, moved by name, another named cube (no scene lookup)");
    if (n_existing) s_emit ("_existing", lat_existing, n_existing, "3 moves of objects already in the scene (the gateway looks their names up)");
    zsock_destroy (&gw);
    bench_stack_down (&st);
    return n == runs && n_named == runs && n_existing == runs ? 0 : 1;
}
