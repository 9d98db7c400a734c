/* bench script_validate_latency: static validation of generated modelling
 * scripts of 50 and 500 lines (parse with the embedded libpython3.11 + the
 * allowlist walk + RNA checks), one validator, one thread.
 * Metrics p50/p99 per size, in ms (DESIGN.md §5 aims p99 < 5 ms at 500 lines). */
#include "script_testutil.h"
#include "script_validator.h"

#include <stdio.h>
#include <stdlib.h>

static int s_measure (bmq_script_validator_t *v, int lines, int runs)
{
    size_t len;
    char *src = stu_script_of_lines (lines, &len);
    double *ms = malloc ((size_t) runs * sizeof *ms);
    for (int i = 0; i < runs + 50; i++) {
        double t0 = stu_now_ms ();
        json_t *r = bmq_script_validate (v, src, len);
        double dt = stu_now_ms () - t0;
        if (!json_is_true (json_object_get (r, "is_valid"))) {
            fprintf (stderr, "bench script rejected\n");
            return -1;
        }
        json_decref (r);
        if (i >= 50)                        /* the first calls warm the caches */
            ms[i - 50] = dt;
    }
    char metric[64];
    snprintf (metric, sizeof metric, "p50_ms_%d_lines", lines);
    stu_emit ("script_validate_latency", metric, stu_percentile (ms, (size_t) runs, 50), "ms");
    snprintf (metric, sizeof metric, "p99_ms_%d_lines", lines);
    stu_emit ("script_validate_latency", metric, stu_percentile (ms, (size_t) runs, 99), "ms");
    free (ms);
    free (src);
    return 0;
}

int main (void)
{
    char err[256];
    json_t *rna = bmq_script_rna_load (BMQ_SOURCE_DIR "/" BMQ_SCRIPT_RNA_FIXTURE, err, sizeof err);
    bmq_script_validator_t *v = rna ? bmq_script_validator_new (NULL, rna, err, sizeof err) : NULL;
    if (!v) {
        fprintf (stderr, "bench_script_validate_latency: %s\n", err);
        return 1;
    }
    int rc = s_measure (v, 50, 2000) || s_measure (v, 500, 1000);
    bmq_script_validator_destroy (&v);
    json_decref (rna);
    return rc ? 1 : 0;
}
