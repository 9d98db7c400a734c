/* bench gui_plan: 50-step plans through the whole stack (gateway → validator →
 * executor) into a GUI Blender under xvfb-run, as a person with Blender open
 * uses blendmq: `up --no-blender` with the executor pointed at that Blender.
 *
 *   ms_50_steps        the client's time of a 50-cube plan (bench_cube_plan),
 *                      median of the rounds, each from an empty, settled scene;
 *                      timed here (CLOCK_MONOTONIC) from just before the run
 *                      request is sent to the gateway to its execute.result
 *   ticks              the add-on's main-loop timer passes in that time (extra:
 *                      busy_ticks, the passes that ran a request; redraws, the
 *                      3D viewport redraws), read from gui_probe.py before the
 *                      request and after the result: the executor holds the
 *                      add-on's only client slot, so the link cannot ask
 *   ms_50_steps_named, ticks_named
 *                      the same for 50 steps that name and target their own
 *                      objects (bench_named_plan: no scene lookup)
 *   ms_50_steps_existing, ticks_existing
 *                      the same for 25 cube additions and 25 moves of objects
 *                      ALREADY in the scene (bench_mixed_existing_plan; the 25
 *                      made by an untimed plan after the reset): the gateway
 *                      needs the scene's names, so that lookup is in the path
 * (the metric names say 50 steps: with a smaller [steps] argument they carry
 * the count in "steps", for the ctest smoke run only)
 *
 * One plan of each kind runs first, untimed (the first draws compile shaders).
 * The probe reports -1 while the add-on's service is not running: such a
 * reading fails the bench (a tick count of 0 would be a lie). Exit 77
 * (skipped, with why) when xvfb-run is missing.
 *
 *   bench_gui_plan [rounds [steps]]      (default 5 50) */
#include "bench_gui.h"
#include "bench_util.h"
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS_MAX 20
#define SETTLE_MS 15000

static int ROUNDS = 5, STEPS = 50;

typedef struct {
    double ms[ROUNDS_MAX], executor_ms[ROUNDS_MAX], ticks[ROUNDS_MAX], busy[ROUNDS_MAX], redraws[ROUNDS_MAX];
} figures_t;

static int s_counter (json_t *c, const char *name)
{
    return (int) json_integer_value (json_object_get (c, name));
}

/* Wait until the viewport stops redrawing (what reset_scene set off is drawn). */
static void s_settle (const bench_gui_t *g)
{
    int last = -1, calm = 0;
    for (int64_t until = bmq_mono_ms () + SETTLE_MS; calm < 3 && bmq_mono_ms () < until; ) {
        zclock_sleep (100);
        json_t *c = bench_gui_counters (g);
        int now = c ? s_counter (c, "redraws") : -2;
        calm = now == last ? calm + 1 : 0;
        last = now;
        json_decref (c);
    }
}

/* Wait (up to a minute) until the executor is connected to the GUI Blender:
 * until a scene_info comes back with a result. 0 / -1. */
static int s_wait_connected (zsock_t *gw)
{
    for (int64_t until = bmq_mono_ms () + 60000; bmq_mono_ms () < until; zclock_sleep (250)) {
        json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                                     json_pack ("{s:s}", "command", "scene_info")), NULL, 30000);
        int up = json_is_object (json_object_get (res, "result"));
        json_decref (res);
        if (up) return 0;
    }
    fprintf (stderr, "bench: the executor did not connect to the GUI Blender in a minute\n");
    return -1;
}

/* The probe's counters, when every one is a real count (not -1: the add-on's
 * service was not running). */
static bool s_counters_real (json_t *c)
{
    return c && s_counter (c, "ticks") >= 0 && s_counter (c, "busy_ticks") >= 0 && s_counter (c, "redraws") >= 0;
}

/* One timed plan (`plan` taken) from an empty scene (with `existing` named objects
 * made first by an untimed plan, when not 0) into round r of f (NULL: untimed).
 * 0, or -1 when it did not end done or the probe did not answer with real counts. */
static int s_round (zsock_t *gw, const bench_gui_t *g, json_t *plan, int existing, figures_t *f, int r)
{
    json_decref (bench_request (gw, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                 json_pack ("{s:s}", "command", "reset_scene")), NULL, 60000));
    if (existing) {
        json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL,
                                     json_pack ("{s:o}", "plan", bench_setup_plan (existing, "exist", 5.0))), NULL, 300000);
        const char *status = json_string_value (json_object_get (res, "status"));
        bool made = res && status && !strcmp (status, "done");
        json_decref (res);
        if (!made) { fprintf (stderr, "bench: gui plan: the objects to target were not made\n"); json_decref (plan); return -1; }
    }
    s_settle (g);
    json_t *c0 = bench_gui_counters (g);
    double t0 = bench_now_us ();
    json_t *res = bench_request (gw, bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:o}", "plan", plan)), NULL, 300000);
    double ms = (bench_now_us () - t0) / 1000.0;
    json_t *c1 = bench_gui_counters (g);
    const char *status = json_string_value (json_object_get (res, "status"));
    int rc = res && status && !strcmp (status, "done") && s_counters_real (c0) && s_counters_real (c1) ? 0 : -1;
    if (rc) fprintf (stderr, "bench: gui plan: %s\n", !res ? "no answer" : !status || strcmp (status, "done") ?
                     "the plan did not end done" : !c0 || !c1 ? "the probe did not answer"
                     : "the probe reported -1: the add-on's GUI service (blendmq.gui.SERVICE) was not running");
    if (!rc && f) {
        f->ms[r] = ms;
        f->executor_ms[r] = json_number_value (json_object_get (res, "duration_ms"));
        f->ticks[r] = s_counter (c1, "ticks") - s_counter (c0, "ticks");
        f->busy[r] = s_counter (c1, "busy_ticks") - s_counter (c0, "busy_ticks");
        f->redraws[r] = s_counter (c1, "redraws") - s_counter (c0, "redraws");
    }
    json_decref (res);
    json_decref (c0);
    json_decref (c1);
    return rc;
}

static void s_emit (figures_t *f, const char *ms_metric, const char *ticks_metric, const char *plan)
{
    const char *timed = "client: run request sent -> execute.result received (CLOCK_MONOTONIC); ticks: probe before and after";
    double ms = bench_percentile (f->ms, ROUNDS, 50), ticks = bench_percentile (f->ticks, ROUNDS, 50);
    bench_emit ("gui_plan", ms_metric, ms, "ms",
                json_pack ("{s:f, s:f, s:f, s:i, s:i, s:s, s:s, s:s}", "ms_per_step", ms / STEPS,
                           "executor_ms", bench_percentile (f->executor_ms, ROUNDS, 50),
                           "max_ms", bench_percentile (f->ms, ROUNDS, 100), "steps", STEPS, "rounds", ROUNDS,
                           "plan", plan, "blender", "GUI under xvfb-run (software GL), through the whole stack",
                           "timed", timed));
    bench_emit ("gui_plan", ticks_metric, ticks, "ticks",
                json_pack ("{s:f, s:f, s:f, s:i, s:i}", "busy_ticks", bench_percentile (f->busy, ROUNDS, 50),
                           "redraws", bench_percentile (f->redraws, ROUNDS, 50), "ticks_per_step", ticks / STEPS,
                           "steps", STEPS, "rounds", ROUNDS));
}

int main (int argc, char **argv)
{
    ROUNDS = bench_arg_int (argc, argv, 1, ROUNDS, 1, ROUNDS_MAX, "bench_gui_plan [rounds [steps]]");
    STEPS = bench_arg_int (argc, argv, 2, STEPS, 4, 200, "bench_gui_plan [rounds [steps]]");
    if (!bench_gui_available ())
        bench_skip ("gui_plan", "xvfb-run is not installed: a GUI Blender cannot start without a display "
                    "(deploy/install-deps.sh --test installs xvfb)");
    bmq_envelope_set_sender ("bench");
    bench_gui_t g;
    if (bench_gui_start (&g, true)) { bench_gui_stop (&g, true); return 1; }
    char port[16];
    snprintf (port, sizeof port, "%d", g.port);
    setenv ("BLENDMQ_BLENDER_HOST", "127.0.0.1", 1);
    setenv ("BLENDMQ_BLENDER_PORT", port, 1);
    setenv ("BLENDMQ_BLENDER_TOKEN_FILE", g.token_file, 1);
    bench_stack_t st;
    if (bench_stack_up_args (&st, 1, "--no-blender")) {
        fprintf (stderr, "cannot start the stack\n");
        bench_gui_stop (&g, true);
        return 1;
    }
    zsock_t *gw = bmq_bus_connect (ZMQ_DEALER, bmq_config_str (st.cfg, "gateway.endpoint"), "gateway");
    static figures_t cubes, named, existing;
    int ok = s_wait_connected (gw) == 0
             && s_round (gw, &g, bench_cube_plan (STEPS), 0, NULL, 0) == 0
             && s_round (gw, &g, bench_named_plan (STEPS, "gui_warm"), 0, NULL, 0) == 0;
    for (int r = 0; r < ROUNDS && ok; r++) {
        char prefix[32];
        snprintf (prefix, sizeof prefix, "gui_r%d", r);
        ok = s_round (gw, &g, bench_cube_plan (STEPS), 0, &cubes, r) == 0
             && s_round (gw, &g, bench_named_plan (STEPS, prefix), 0, &named, r) == 0
             && s_round (gw, &g, bench_mixed_existing_plan (STEPS, prefix, "exist"), STEPS / 2, &existing, r) == 0;
    }
    if (ok) {
        s_emit (&cubes, "ms_50_steps", "ticks", "cube additions");
        s_emit (&named, "ms_50_steps_named", "ticks_named", "named cubes, each moved by name (its own objects: no scene lookup)");
        s_emit (&existing, "ms_50_steps_existing", "ticks_existing",
                "half named cubes, half moves of objects already in the scene (the gateway looks their names up)");
    }
    zsock_destroy (&gw);
    bench_stack_down (&st);
    bench_gui_stop (&g, !ok);
    return ok ? 0 : 1;
}
