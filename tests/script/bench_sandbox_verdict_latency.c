/* bench sandbox_verdict_latency: the sandbox verdict for a 50-line modelling
 * script on a copy of a scene (.blend bytes, as the executor's save_blend
 * gives them), without preview.
 *   p50_ms_warm / p99_ms_warm  an instance of the warm pool was ready (the
 *                              replacement is left to boot between runs, as
 *                              it would between requests)
 *   cold_ms                    no warm instance: Blender starts for the run */
#include "sandbox_pool.h"
#include "script_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define S_RUNS 15

static int s_run (bmq_sandbox_pool_t *pool, const char *src, size_t len, const char *blend, size_t blen, double *ms)
{
    double t0 = stu_now_ms ();
    json_t *r = bmq_sandbox_pool_run (pool, src, len, blend, blen, NULL, NULL, NULL);
    *ms = stu_now_ms () - t0;
    int ok = json_is_true (json_object_get (r, "ok"));
    if (!ok) {
        char *s = json_dumps (r, 0);
        fprintf (stderr, "sandbox run failed: %s\n", s);
        free (s);
    }
    json_decref (r);
    return ok ? 0 : -1;
}

int main (void)
{
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
    double ms[S_RUNS], cold;
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
    free (src);
    free (blend);
    return 0;
}
