/* bench addon_roundtrip: what the add-on adds, two metrics.
 *
 * headless_overhead_p50_ms: the executor of a headless stack is stopped so this
 * program can hold Blender's single client slot; each step's round trip over
 * the link minus the bpy time the add-on measured around the call itself.
 *
 * gui_read_p50_ms: scene_info round trips against a GUI Blender under xvfb-run
 * (the add-on started by its launcher, a few objects in the scene), which the
 * add-on answers from its snapshot on its I/O thread. For contrast the line
 * also carries main_thread_ping_p50_ms: `ping` always waits for the main
 * thread's timer pass, as every command of the add-ons measured in issue 4
 * does.
 *
 * gui_read_after_write_p50_ms: in the same GUI Blender, object_info of an object
 * sent the instant the run_step that moved it answered: the write made the
 * snapshot stale, so the read waits for the main thread (its timer pass and the
 * snapshot's rebuild). The line carries the steps' own round trip as well.
 * Skipped, with a note, when xvfb-run is missing. */
#include "bench_gui.h"
#include "bench_util.h"
#include "blender_link.h"
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#define CALLS 500
#define GUI_READS 500
#define GUI_PINGS 20
#define GUI_OBJECTS 20
#define GUI_WRITES 60

/* Round trips of `cmd` in ms into out[]; returns how many succeeded. Calls are
 * spaced 0..12 ms apart, so they land anywhere in the main loop's cycle (a
 * call sent the instant the previous reply came back can catch the same timer
 * pass, which flatters main-thread commands). */
static int s_time_calls (bmq_blender_link_t *link, const char *cmd, json_t *args, double *out, int n)
{
    char err[256];
    for (int i = 0; i < n; i++) {
        json_t *reply = NULL;
        zclock_sleep ((i * 7) % 13);
        double t0 = bench_now_us ();
        if (bmq_blender_link_call (link, cmd, args, 60000, &reply, NULL, NULL, err, sizeof err) != BMQ_LINK_OK
            || !json_is_true (json_object_get (reply, "ok"))) {
            fprintf (stderr, "bench: %s: %s\n", cmd, err);
            json_decref (reply);
            return i;
        }
        out[i] = (bench_now_us () - t0) / 1000.0;
        json_decref (reply);
    }
    return n;
}

/* gui_read_after_write_p50_ms: a step that moves a named object, then at once
 * object_info of it; both timed. 0 measured, -1 failed. */
static int s_read_after_write (bmq_blender_link_t *link)
{
    char err[256];
    json_t *reply = NULL;
    json_t *make = json_loads ("{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"raw_probe\"}}", 0, NULL);
    bmq_link_status_t st = bmq_blender_link_call (link, "run_step", make, 60000, &reply, NULL, NULL, err, sizeof err);
    int made = st == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"));
    json_decref (reply);
    json_decref (make);
    if (!made) { fprintf (stderr, "bench: cannot make raw_probe: %s\n", st == BMQ_LINK_OK ? "refused" : err); return -1; }
    static double writes[GUI_WRITES], reads[GUI_WRITES];
    json_t *read = json_pack ("{s:s}", "name", "raw_probe");
    int n = 0;
    for (int i = 0; i < GUI_WRITES; i++) {
        json_t *move = json_pack ("{s:{s:s, s:s, s:{s:[f,f,f]}}}", "step", "operation", "object.location",
                                  "target", "raw_probe", "params", "value", (double) (i % 7), 1.0, 0.0);
        int wrote = s_time_calls (link, "run_step", move, &writes[n], 1) == 1;    /* spaced: any point of the cycle */
        json_decref (move);
        if (!wrote) break;
        double t0 = bench_now_us ();
        if (bmq_blender_link_call (link, "object_info", read, 60000, &reply, NULL, NULL, err, sizeof err) != BMQ_LINK_OK
            || !json_is_true (json_object_get (reply, "ok"))) {
            fprintf (stderr, "bench: object_info after a step: %s\n", err);
            json_decref (reply);
            break;
        }
        reads[n++] = (bench_now_us () - t0) / 1000.0;
        json_decref (reply);
    }
    json_decref (read);
    if (n < GUI_WRITES) return -1;
    bench_emit ("addon_roundtrip", "gui_read_after_write_p50_ms", bench_percentile (reads, (size_t) n, 50), "ms",
                json_pack ("{s:f, s:f, s:i, s:s, s:s}", "read_p99_ms", bench_percentile (reads, (size_t) n, 99),
                           "step_p50_ms", bench_percentile (writes, (size_t) n, 50), "pairs", n,
                           "read", "object_info of the object the step just moved",
                           "blender", "GUI under xvfb-run (software GL)"));
    return 0;
}

/* The pid in RUN/pids/NAME.pid, or 0. */
static int s_pid (const bench_stack_t *st, const char *name)
{
    char path[512];
    snprintf (path, sizeof path, "%s/pids/%s.pid", st->dir, name);
    FILE *f = fopen (path, "r");
    int pid = 0;
    if (f) { if (fscanf (f, "%d", &pid) != 1 || pid < 0) pid = 0; fclose (f); }
    return pid;
}

/* 0 measured (or skipped: no xvfb-run), -1 failed. */
static int s_bench_gui (void)
{
    if (!bench_gui_available ()) {
        fprintf (stderr, "bench: xvfb-run not installed: gui_read_p50_ms and gui_read_after_write_p50_ms skipped "
                         "(deploy/install-deps.sh --test)\n");
        return 0;
    }
    bench_gui_t g;
    int rc = -1;
    bmq_blender_link_t *link = bench_gui_start (&g, false) == 0 ? bmq_blender_link_new ("127.0.0.1", g.port, BENCH_GUI_TOKEN) : NULL;
    char err[256] = "did not start";
    if (link) bmq_blender_link_load_palette (link, BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);   /* run_step needs it */
    if (link && bmq_blender_link_connect (link, 10000, err, sizeof err) == 0) {
        json_t *reply = NULL;
        for (int i = 0; i < GUI_OBJECTS; i++) {     /* something to list */
            json_t *make = json_pack ("{s:{s:s, s:{s:[f,f,f]}}}", "step", "operation", "bpy.ops.mesh.primitive_cube_add",
                                      "params", "location", (double) i * 3, 0.0, 0.0);
            bmq_blender_link_call (link, "run_step", make, 60000, &reply, NULL, NULL, err, sizeof err);
            json_decref (reply);
            json_decref (make);
        }
        /* let Blender draw what the steps made first (software GL: seconds of both
         * cores): the metric is a query against a settled GUI, not one racing a redraw */
        double settle[1];
        for (int calm = 0, i = 0; calm < 3 && i < 300; i++) {
            if (s_time_calls (link, "ping", NULL, settle, 1) != 1) break;
            calm = settle[0] < 30 ? calm + 1 : 0;
        }
        static double reads[GUI_READS], pings[GUI_PINGS];
        json_t *args = json_pack ("{s:i}", "limit", 100);
        s_time_calls (link, "scene_info", args, reads, 1);         /* the first builds the snapshot */
        int nr = s_time_calls (link, "scene_info", args, reads, GUI_READS);
        int np = s_time_calls (link, "ping", NULL, pings, GUI_PINGS);
        json_decref (args);
        if (nr == GUI_READS && np == GUI_PINGS) {
            double p50 = bench_percentile (reads, GUI_READS, 50);
            bench_emit ("addon_roundtrip", "gui_read_p50_ms", p50, "ms",
                        json_pack ("{s:f, s:i, s:i, s:f, s:s}", "read_p99_ms", bench_percentile (reads, GUI_READS, 99),
                                   "reads", GUI_READS, "objects", GUI_OBJECTS,
                                   "main_thread_ping_p50_ms", bench_percentile (pings, GUI_PINGS, 50),
                                   "blender", "GUI under xvfb-run (software GL)"));
            rc = s_read_after_write (link);
        }
    }
    else fprintf (stderr, "bench: no GUI Blender to talk to (port %d): %s; see %s/blender.log\n", g.port, err, g.dir);
    bmq_blender_link_destroy (&link);
    bench_gui_stop (&g, rc != 0);
    return rc;
}

int main (void)
{
    bmq_envelope_set_sender ("bench");
    bench_stack_t st;
    if (bench_stack_up (&st, 1)) { fprintf (stderr, "cannot start the stack\n"); return 1; }
    /* the supervisor `up` left would start the executor again, which would take
     * Blender's only client slot back: it is held (SIGSTOP) until the stack goes down */
    char token[256] = "";
    int supervisor = s_pid (&st, "supervisor"), pid = s_pid (&st, "executor");
    if (supervisor > 0) kill (supervisor, SIGSTOP);
    if (pid > 0) kill (pid, SIGTERM);
    zclock_sleep (500);
    FILE *f = fopen (bmq_config_str (st.cfg, "blender.token_file"), "r");
    if (f) { if (!fgets (token, sizeof token, f)) token[0] = 0; fclose (f); }
    token[strcspn (token, "\r\n")] = 0;
    char host[300] = "127.0.0.1";      /* `up`'s Blender serves a unix socket (blender.socket) */
    if (*bmq_config_str (st.cfg, "blender.socket")) snprintf (host, sizeof host, "unix:%s", bmq_config_str (st.cfg, "blender.socket"));
    bmq_blender_link_t *link = bmq_blender_link_new (host, (int) bmq_config_int (st.cfg, "blender.port"), token);
    char err[256];
    bmq_blender_link_load_palette (link, BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);   /* run_step needs it */
    int ok = 0;
    for (int tries = 0; tries < 50 && !ok; tries++) {
        ok = bmq_blender_link_connect (link, 2000, err, sizeof err) == 0;
        if (!ok) zclock_sleep (100);
    }
    if (!ok) fprintf (stderr, "bench: cannot hold the headless Blender's link: %s\n", err);
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
    if (supervisor > 0) kill (supervisor, SIGCONT);
    bench_stack_down (&st);
    int gui = s_bench_gui ();
    return n == CALLS && gui == 0 ? 0 : 1;
}
