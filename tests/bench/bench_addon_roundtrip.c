/* bench addon_roundtrip: what the add-on adds to a bpy call, headless. The
 * executor is stopped so this program can hold Blender's single client slot;
 * each step's round trip over the link minus the bpy time the add-on measured
 * around the call itself. */
#include "bench_util.h"
#include "blender_link.h"
#include <signal.h>
#include <stdio.h>

#define CALLS 500

int main (void)
{
    bmq_envelope_set_sender ("bench");
    bench_stack_t st;
    if (bench_stack_up (&st, 1)) { fprintf (stderr, "cannot start the stack\n"); return 1; }
    char path[512], token[256] = "";
    snprintf (path, sizeof path, "%s/pids/executor.pid", st.dir);
    FILE *f = fopen (path, "r");
    int pid = 0;
    if (f) { if (fscanf (f, "%d", &pid) != 1) pid = 0; fclose (f); }
    if (pid > 0) kill (pid, SIGTERM);
    zclock_sleep (500);
    f = fopen (bmq_config_str (st.cfg, "blender.token_file"), "r");
    if (f) { if (!fgets (token, sizeof token, f)) token[0] = 0; fclose (f); }
    token[strcspn (token, "\r\n")] = 0;
    bmq_blender_link_t *link = bmq_blender_link_new ("127.0.0.1", (int) bmq_config_int (st.cfg, "blender.port"), token);
    char err[256];
    int ok = 0;
    for (int tries = 0; tries < 50 && !ok; tries++) {
        ok = bmq_blender_link_connect (link, 2000, err, sizeof err) == 0;
        if (!ok) zclock_sleep (100);
    }
    double over[CALLS], rt[CALLS];
    int n = 0;
    if (ok) {
        json_t *reply = NULL;
        json_t *make = json_loads ("{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"probe\"}}", 0, NULL);
        bmq_blender_link_call (link, "run_step", make, 10000, &reply, NULL, NULL, err, sizeof err);
        json_decref (reply);
        json_decref (make);
        json_t *args = json_loads ("{\"step\": {\"operation\": \"object.location\", \"target\": \"probe\", \"params\": {\"value\": [1, 2, 3]}}}", 0, NULL);
        for (int i = 0; i < CALLS; i++) {
            double t0 = bench_now_us ();
            if (bmq_blender_link_call (link, "run_step", args, 10000, &reply, NULL, NULL, err, sizeof err) != BMQ_LINK_OK) break;
            double total = (bench_now_us () - t0) / 1000.0;
            rt[n] = total;
            over[n++] = total - json_number_value (json_object_get (reply, "bpy_ms"));
            json_decref (reply);
        }
        json_decref (args);
    }
    if (n) {
        double p50 = bench_percentile (over, (size_t) n, 50);
        bench_emit ("addon_roundtrip", "headless_overhead_p50_ms", p50, "ms",
                    json_pack ("{s:f, s:f, s:i}", "overhead_p99_ms", bench_percentile (over, (size_t) n, 99),
                               "roundtrip_p50_ms", bench_percentile (rt, (size_t) n, 50), "calls", n));
    }
    bmq_blender_link_destroy (&link);
    bench_stack_down (&st);
    return n == CALLS ? 0 : 1;
}
