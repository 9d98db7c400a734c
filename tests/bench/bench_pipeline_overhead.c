/* bench pipeline_overhead: a 50-step plan through gateway → validator →
 * executor → Blender, against the same bpy calls run directly in a loop
 * inside the same Blender (bench_direct); alternated, medians over rounds.
 *
 * Timed (CLOCK_MONOTONIC, in this process): from just before the run request
 * is sent to the gateway to the arrival of its execute.result (validation,
 * sealing, routing, every step in Blender, every progress event on the way).
 * The baseline is bench_direct's own direct_ms, timed inside Blender around
 * its loop of bpy calls (so the ratio charges the pipeline with everything
 * that is not the bpy work itself).
 *
 *   ratio           50 cube additions (bench_cube_plan), from an empty scene
 *                   / bench_direct of 50 cubes from an empty scene
 *   ratio_named     50 steps that name and target their own objects as recipes
 *                   do (bench_named_plan: 25 named cubes, each then moved by
 *                   name); no scene lookup: every target is the plan's own
 *                   / bench_direct of its 25 cube additions
 *   ratio_existing  50 steps, 25 cube additions and 25 moves of objects that
 *                   were ALREADY in the scene (25 cubes made by an untimed plan
 *                   first, bench_mixed_existing_plan): the gateway needs the
 *                   scene's names before validation, so that lookup is in the
 *                   path / bench_direct of 25 cubes with the same 25 objects
 *                   already in the scene
 *   (the location sets are microseconds of bpy and have no bench_direct form)
 *
 *   bench_pipeline_overhead [rounds]     (default 7, 1..50) */
#include "bench_util.h"
#include <stdio.h>

#define ROUNDS_DEFAULT 7
#define ROUNDS_MAX 50
#define STEPS 50

static void s_reset (zsock_t *gw)
{
    json_decref (bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                 json_pack ("{s:s}", "command", "reset_scene")), NULL, 30000));
}

/* `plan` (taken) through the stack, untimed: 0 when it ended done. */
static int s_run_untimed (zsock_t *gw, json_t *plan)
{
    json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:o}", "plan", plan)), NULL, 60000);
    const char *status = json_string_value (json_object_get (res, "status"));
    int ok = res && status && !strcmp (status, "done");
    json_decref (res);
    return ok ? 0 : -1;
}

/* bench_direct of `count` cubes after a reset (and `existing` named objects made
 * first, when not 0): its direct_ms, or -1. */
static double s_direct (zsock_t *gw, int count, int existing)
{
    s_reset (gw);
    if (existing && s_run_untimed (gw, bench_setup_plan (existing, "exist", 5.0))) return -1;
    json_t *d = bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                 json_pack ("{s:s, s:{s:i}}", "command", "bench_direct", "args", "count", count)), NULL, 60000);
    double ms = json_number_value (json_object_get (json_object_get (d, "result"), "direct_ms"));
    json_decref (d);
    return d && ms > 0 ? ms : -1;
}

/* `plan` (taken) through the stack after a reset (and `existing` named objects
 * made by an untimed plan first): wall ms at the client (*executor_ms: the
 * executor's duration_ms), or -1 when it did not end done. */
static double s_pipeline (zsock_t *gw, json_t *plan, int existing, double *executor_ms)
{
    s_reset (gw);
    if (existing && s_run_untimed (gw, bench_setup_plan (existing, "exist", 5.0))) { json_decref (plan); return -1; }
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

typedef struct {
    double direct[ROUNDS_MAX], pipeline[ROUNDS_MAX], executor[ROUNDS_MAX];
} series_t;

static void s_emit (const char *metric, series_t *s, int rounds, int objects, const char *plan, const char *direct)
{
    double pm = bench_percentile (s->pipeline, (size_t) rounds, 50), dm = bench_percentile (s->direct, (size_t) rounds, 50);
    bench_emit ("pipeline_overhead", metric, pm / dm, "x",
                json_pack ("{s:f, s:f, s:f, s:i, s:i, s:i, s:s, s:s, s:s}", "pipeline_ms", pm, "direct_ms", dm,
                           "executor_ms", bench_percentile (s->executor, (size_t) rounds, 50), "steps", STEPS,
                           "objects", objects, "rounds", rounds, "plan", plan, "direct", direct,
                           "timed", "client: run request sent -> execute.result received (CLOCK_MONOTONIC) / "
                                    "bench_direct's loop timed inside Blender"));
}

int main (int argc, char **argv)
{
    int rounds = bench_arg_int (argc, argv, 1, ROUNDS_DEFAULT, 1, ROUNDS_MAX, "bench_pipeline_overhead [rounds]");
    bmq_envelope_set_sender ("bench");
    bench_stack_t st;
    if (bench_stack_up (&st, 1)) { fprintf (stderr, "cannot start the stack\n"); return 1; }
    zsock_t *gw = bmq_bus_connect (ZMQ_DEALER, bmq_config_str (st.cfg, "gateway.endpoint"), "gateway");
    static series_t cubes, named, existing;
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        char prefix[32];
        snprintf (prefix, sizeof prefix, "bench_r%d", r);
        cubes.direct[r] = s_direct (gw, STEPS, 0);
        cubes.pipeline[r] = s_pipeline (gw, bench_cube_plan (STEPS), 0, &cubes.executor[r]);
        named.direct[r] = s_direct (gw, STEPS / 2, 0);
        named.pipeline[r] = s_pipeline (gw, bench_named_plan (STEPS, prefix), 0, &named.executor[r]);
        existing.direct[r] = s_direct (gw, STEPS / 2, STEPS / 2);
        existing.pipeline[r] = s_pipeline (gw, bench_mixed_existing_plan (STEPS, prefix, "exist"), STEPS / 2,
                                           &existing.executor[r]);
        ok = cubes.direct[r] > 0 && cubes.pipeline[r] > 0 && named.direct[r] > 0 && named.pipeline[r] > 0
             && existing.direct[r] > 0 && existing.pipeline[r] > 0;
    }
    if (ok) {
        s_emit ("ratio", &cubes, rounds, STEPS, "50 cube additions", "50 cubes");
        s_emit ("ratio_named", &named, rounds, STEPS / 2, "25 named cubes, each then moved by name (its own objects: no scene lookup)",
                "the plan's 25 cube additions; its location sets are left out (microseconds)");
        s_emit ("ratio_existing", &existing, rounds, STEPS / 2,
                "25 named cubes and 25 moves of objects already in the scene (the gateway looks the scene's names up)",
                "25 cubes with the same 25 objects already in the scene; the location sets are left out (microseconds)");
    }
    else fprintf (stderr, "bench pipeline_overhead: a plan or bench_direct failed (see above)\n");
    zsock_destroy (&gw);
    bench_stack_down (&st);
    return ok ? 0 : 1;
}
