/* bench sandbox_verdict_latency: the sandbox verdict for a 50-line modelling
 * script on a copy of a scene (.blend bytes, as the executor's save_blend
 * gives them), without preview.
 *   p50_ms_warm / p99_ms_warm  an instance of the warm pool was ready (the
 *                              replacement is left to boot between runs, as
 *                              it would between requests)
 *   cold_ms                    no warm instance: Blender starts for the run
 *   p50_ms_back_to_back        a user submitting scripts one after another:
 *   (max_ms_back_to_back,      10 scripts, each sent as soon as the previous
 *    warm_back_to_back)        verdict came back (sequential, nothing queued),
 *                              to a pool of BMQ_SANDBOX_WARM_DEFAULT warm
 *                              instances that had time to start before the
 *                              first; the pool's own background refill is all
 *                              that replaces what each run used. warm_back_to_back
 *                              counts the runs that found a ready instance.
 * BENCH_SANDBOX_WARM=N sets the back-to-back pool's size (default the pool's default).
 * Timed (CLOCK_MONOTONIC, stu_now_ms): bmq_sandbox_pool_run's call, from the
 * script and scene handed over to the verdict returned.
 * Exit 77 when no `blender` can run here (the sandbox runs one).
 *
 *   bench_sandbox_verdict_latency [runs [back_to_back]]   (default 15 10; 2..200) */
#include "sandbox_pool.h"
#include "script_testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_MAX 200
static int S_RUNS = 15, S_BACK_TO_BACK = 10;

/* One run; *ms its whole verdict time, *warm (when not NULL) whether a ready instance took it. */
static int s_run_start (bmq_sandbox_pool_t *pool, const char *src, size_t len, const char *blend, size_t blen,
                        double *ms, bool *warm)
{
    double t0 = stu_now_ms ();
    json_t *r = bmq_sandbox_pool_run (pool, src, len, blend, blen, NULL, NULL, NULL);
    *ms = stu_now_ms () - t0;
    if (warm)
        *warm = !strcmp (json_string_value (json_object_get (r, "start")) ?: "", "warm");
    int ok = json_is_true (json_object_get (r, "ok"));
    if (!ok) {
        char *s = json_dumps (r, 0);
        fprintf (stderr, "sandbox run failed: %s\n", s);
        free (s);
    }
    json_decref (r);
    return ok ? 0 : -1;
}

static int s_run (bmq_sandbox_pool_t *pool, const char *src, size_t len, const char *blend, size_t blen, double *ms)
{
    return s_run_start (pool, src, len, blend, blen, ms, NULL);
}

/* 10 scripts back to back; 0 / -1. */
static int s_back_to_back (const char *src, size_t len, const char *blend, size_t blen)
{
    char err[512];
    const char *env = getenv ("BENCH_SANDBOX_WARM");
    bmq_sandbox_opts_t o = { .warm = env && *env ? atoi (env) : BMQ_SANDBOX_WARM_DEFAULT };
    bmq_sandbox_pool_t *pool = bmq_sandbox_pool_new (&o, err, sizeof err);
    if (!pool) {
        fprintf (stderr, "bench_sandbox_verdict_latency: %s\n", err);
        return -1;
    }
    double ms[S_MAX], max = 0;
    int nwarm = 0;
    if (bmq_sandbox_pool_wait_ready (pool, o.warm, 60000) < 0)
        return -1;
    for (int i = 0; i < S_BACK_TO_BACK; i++) {
        bool warm;
        if (s_run_start (pool, src, len, blend, blen, &ms[i], &warm) < 0)
            return -1;
        nwarm += warm;
        max = ms[i] > max ? ms[i] : max;
    }
    bmq_sandbox_pool_destroy (&pool);
    stu_emit ("sandbox_verdict_latency", "p50_ms_back_to_back", stu_percentile (ms, S_BACK_TO_BACK, 50), "ms");
    stu_emit ("sandbox_verdict_latency", "max_ms_back_to_back", max, "ms");
    stu_emit ("sandbox_verdict_latency", "warm_back_to_back", nwarm, "runs");
    return 0;
}

int main (int argc, char **argv)
{
    S_RUNS = argc > 1 ? atoi (argv[1]) : S_RUNS;
    S_BACK_TO_BACK = argc > 2 ? atoi (argv[2]) : S_BACK_TO_BACK;
    if (S_RUNS < 2 || S_RUNS > S_MAX || S_BACK_TO_BACK < 2 || S_BACK_TO_BACK > S_MAX) {
        fprintf (stderr, "usage: bench_sandbox_verdict_latency [runs [back_to_back]]  (2..%d)\n", S_MAX);
        return 2;
    }
    if (system ("command -v blender >/dev/null 2>&1") != 0) {
        fprintf (stderr, "bench sandbox_verdict_latency: skipped: no blender on PATH (deploy/install-deps.sh installs it)\n");
        return 77;
    }
    char err[512], path[128], cmd[512];
    snprintf (path, sizeof path, "/tmp/blendmq-bench-scene-%d.blend", (int) getpid ());
    snprintf (cmd, sizeof cmd, "blender -b --factory-startup --python-expr \"import bpy; "
              "bpy.ops.wm.save_as_mainfile(filepath='%s')\" > /dev/null 2>&1", path);
    size_t blen = 0, len;
    char *blend = system (cmd) == 0 ? stu_read (path, &blen) : NULL;
    unlink (path);
    if (!blend) {
        fprintf (stderr, "bench_sandbox_verdict_latency: cannot make the scene copy\n");
        return 1;
    }
    char *src = stu_script_of_lines (50, &len);

    bmq_sandbox_opts_t o = { .warm = 1 };
    bmq_sandbox_pool_t *pool = bmq_sandbox_pool_new (&o, err, sizeof err);
    if (!pool) {
        fprintf (stderr, "bench_sandbox_verdict_latency: %s\n", err);
        return 1;
    }
    double ms[S_MAX], cold;
    for (int i = 0; i < S_RUNS; i++) {
        if (bmq_sandbox_pool_wait_ready (pool, 1, 60000) < 0 || s_run (pool, src, len, blend, blen, &ms[i]) < 0)
            return 1;
    }
    bmq_sandbox_pool_destroy (&pool);
    stu_emit ("sandbox_verdict_latency", "p50_ms_warm", stu_percentile (ms, S_RUNS, 50), "ms");
    stu_emit ("sandbox_verdict_latency", "p99_ms_warm", stu_percentile (ms, S_RUNS, 99), "ms");

    o.warm = 0;
    pool = bmq_sandbox_pool_new (&o, err, sizeof err);
    if (!pool || s_run (pool, src, len, blend, blen, &cold) < 0)
        return 1;
    bmq_sandbox_pool_destroy (&pool);
    stu_emit ("sandbox_verdict_latency", "cold_ms", cold, "ms");
    if (s_back_to_back (src, len, blend, blen) < 0)
        return 1;
    free (src);
    free (blend);
    return 0;
}
