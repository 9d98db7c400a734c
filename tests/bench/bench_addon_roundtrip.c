/* bench addon_roundtrip: what the add-on adds. Every figure is timed here with
 * CLOCK_MONOTONIC, from just before a link request is written to the socket
 * to the arrival of its whole reply (bmq_blender_link_call).
 *
 * headless_overhead_p50_ms: the executor of a headless stack is stopped so this
 * program can hold Blender's single client slot; each run_step's round trip
 * over the link minus the bpy time the add-on measured around the call itself.
 *
 * gui_read_p50_ms: scene_info round trips against a GUI Blender under xvfb-run
 * (the add-on started by its launcher, a few objects in the scene), which the
 * add-on answers from its snapshot on its I/O thread. For contrast the line
 * also carries main_thread_ping_p50_ms: `ping` always waits for the main
 * thread's timer pass.
 *
 * gui_read_after_write_p50_ms, gui_read_after_write_p99_ms: in the same GUI
 * Blender, object_info of an object sent the instant the run_step that moved
 * it answered (timed: object_info sent -> its reply). The writes are spaced
 * 0..12 ms apart so they land anywhere in the main loop's cycle (a read may
 * meet a redraw). _hog: the same pairs again with a CPU hog beside the bench
 * (one busy process per core, niceness 0, for the whole measurement), as when
 * other work runs on the machine.
 *
 * Exit 77 (skipped, with why) when xvfb-run is missing: the headless figure is
 * printed first, the GUI ones cannot be measured.
 *
 *   bench_addon_roundtrip [calls [gui_reads [pairs]]]   (default 500 500 200) */
#include "bench_gui.h"
#include "bench_util.h"
#include "blender_link.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CALLS_MAX 5000
#define GUI_PINGS 20
#define GUI_OBJECTS 20

static int s_calls = 500, s_gui_reads = 500, s_pairs = 200;

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

/* One busy process per online core, in a process group of its own (0: none started). */
static pid_t s_hog_start (void)
{
    long cores = sysconf (_SC_NPROCESSORS_ONLN);
    pid_t leader = fork ();
    if (leader == 0) {
        setpgid (0, 0);
        for (long i = 1; i < (cores > 0 ? cores : 1); i++)
            if (fork () == 0) break;
        for (volatile unsigned long x = 0;; x++) ;
    }
    if (leader > 0) setpgid (leader, leader);
    return leader > 0 ? leader : 0;
}

static void s_hog_stop (pid_t hog)
{
    if (hog <= 0) return;
    kill (-hog, SIGKILL);
    waitpid (hog, NULL, 0);
}

/* gui_read_after_write_*: a step that moves a named object, then at once
 * object_info of it; both timed. `suffix` names the metrics ("" or "_hog").
 * 0 measured, -1 failed. */
static int s_read_after_write (bmq_blender_link_t *link, const char *suffix, const char *load)
{
    char err[256];
    json_t *reply = NULL;
    json_t *make = json_loads ("{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"raw_probe\"}}", 0, NULL);
    bmq_link_status_t st = bmq_blender_link_call (link, "run_step", make, 60000, &reply, NULL, NULL, err, sizeof err);
    int made = st == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"));
    json_decref (reply);
    json_decref (make);
    if (!made) { fprintf (stderr, "bench: cannot make raw_probe: %s\n", st == BMQ_LINK_OK ? "refused" : err); return -1; }
    static double writes[CALLS_MAX], reads[CALLS_MAX];
    const int GUI_WRITES = s_pairs;
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
    char metric[64];
    double p50 = bench_percentile (reads, (size_t) n, 50), p99 = bench_percentile (reads, (size_t) n, 99);
    double max = bench_percentile (reads, (size_t) n, 100), step = bench_percentile (writes, (size_t) n, 50);
    snprintf (metric, sizeof metric, "gui_read_after_write_p50_ms%s", suffix);
    bench_emit ("addon_roundtrip", metric, p50, "ms",
                json_pack ("{s:f, s:f, s:i, s:s, s:s, s:s}", "read_p99_ms", p99, "step_p50_ms", step, "pairs", n,
                           "read", "object_info of the object the step just moved", "load", load,
                           "blender", "GUI under xvfb-run (software GL)"));
    snprintf (metric, sizeof metric, "gui_read_after_write_p99_ms%s", suffix);
    bench_emit ("addon_roundtrip", metric, p99, "ms",
                json_pack ("{s:f, s:f, s:i, s:s, s:s}", "read_p50_ms", p50, "read_max_ms", max, "pairs", n,
                           "load", load, "timed", "object_info sent -> reply, right after the run_step's reply"));
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

/* 0 measured, -1 failed (the caller skips it without xvfb-run). */
static int s_bench_gui (void)
{
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
        static double reads[CALLS_MAX], pings[GUI_PINGS];
        const int GUI_READS = s_gui_reads;
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
            rc = s_read_after_write (link, "", "quiet (only this bench and its Blender)");
            if (rc == 0) {
                pid_t hog = s_hog_start ();
                zclock_sleep (200);
                rc = s_read_after_write (link, "_hog", "a CPU hog beside the bench (one busy process per core)");
                s_hog_stop (hog);
            }
        }
    }
    else fprintf (stderr, "bench: no GUI Blender to talk to (port %d): %s; see %s/blender.log\n", g.port, err, g.dir);
    bmq_blender_link_destroy (&link);
    bench_gui_stop (&g, rc != 0);
    return rc;
}

int main (int argc, char **argv)
{
    const char *usage = "bench_addon_roundtrip [calls [gui_reads [pairs]]]";
    s_calls = bench_arg_int (argc, argv, 1, s_calls, 10, CALLS_MAX, usage);
    s_gui_reads = bench_arg_int (argc, argv, 2, s_gui_reads, 10, CALLS_MAX, usage);
    s_pairs = bench_arg_int (argc, argv, 3, s_pairs, 5, CALLS_MAX, usage);
    const int CALLS = s_calls;
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
    static double over[CALLS_MAX], rt[CALLS_MAX];
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
    if (n != CALLS) return 1;
    if (!bench_gui_available ())
        bench_skip ("addon_roundtrip", "xvfb-run is not installed: the GUI figures (gui_read_*, gui_read_after_write_*) "
                    "cannot be measured (deploy/install-deps.sh --test installs xvfb)");
    return s_bench_gui () == 0 ? 0 : 1;
}
