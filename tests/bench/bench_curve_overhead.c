/* bench curve_overhead — what CURVE costs (issue 12): validate_latency,
 * first_step_latency and audit_ingest with security.curve false and true, in
 * one run, as ratios.
 *
 *   bench_curve_overhead [rounds [--quick]]     (default 10; --quick: the
 *                        benches with their smallest counts, for ctest's smoke run)
 *
 * Timed: by each bench as its own header says (CLOCK_MONOTONIC); nothing here.
 *
 * The measurements are those benchmarks themselves: this runs the same
 * bench_validate_latency, bench_first_step_latency (with 200 plans, for a
 * p99 that is not just the maximum) and bench_audit_ingest executables, with
 * BLENDMQ_SECURITY_CURVE=false or =true in their environment. Every process
 * they start inherits it, so a whole stack runs with one setting (a CURVE
 * socket and a plain one cannot talk: a mixed stack would fail, not mislead).
 * Each round runs every bench off and on back to back, the order alternating
 * from round to round (off/on, on/off, ...), so that drift on a noisy machine
 * falls on both sides alike. F_off and F_on are the medians over the rounds of
 * each run's own figure; F_ratio is the median of the rounds' on/off ratios
 * (each compares two runs made seconds apart, which is what cancels drift).
 *
 * Prints, for each figure F (e.g. validate_latency_p50, in the bench's unit):
 *   {"bench":"curve_overhead","metric":"F_off",...}   {"...","metric":"F_on",...}
 *   {"bench":"curve_overhead","metric":"F_ratio","value":median on/off,"unit":"x",
 *    "ratio_of_medians":F_on/F_off,"off":[per round],"on":[per round],
 *    "round_ratios":[per round],"rounds":N}
 * For latencies a ratio above 1 is CURVE's cost; for audit_ingest's
 * records_per_s (a rate) a ratio below 1 is. */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define ROUNDS_DEFAULT 10
#define ROUNDS_MAX 50

typedef struct {
    const char *metric;         /* the bench's metric */
    const char *name;           /* in our metric names */
} figure_t;

typedef struct {
    const char *bench;
    const char *args;
    const char *quick_args;
    figure_t    figures[3];
} bench_t;

static const bench_t s_benches[] = {
    { "validate_latency",   "",    "100", { { "p50_ms", "p50" }, { "p99_ms", "p99" } } },
    { "first_step_latency", "200", "10",  { { "p50_ms", "p50" }, { "p99_ms", "p99" } } },
    { "audit_ingest",       "",    "--records 2000", { { "records_per_s", "records_per_s" }, { "rss_mb", "rss_mb" } } },
};
static bool s_quick;
#define NBENCH (sizeof s_benches / sizeof s_benches[0])
#define NFIG 3

typedef struct {
    double value[2][ROUNDS_MAX];    /* [curve off / on][round] */
    char   unit[32];
} result_t;

/* Run bench_NAME once with CURVE on or off; fill round `r` of its figures. 0 / -1. */
static int s_run (const bench_t *b, result_t *res, bool curve, int r)
{
    setenv ("BLENDMQ_SECURITY_CURVE", curve ? "true" : "false", 1);
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s/bench_%s' %s", BMQ_BIN_DIR, b->bench, s_quick ? b->quick_args : b->args);
    fprintf (stderr, "== curve_overhead: round %d, %s, CURVE %s\n", r + 1, b->bench, curve ? "on" : "off");
    FILE *out = popen (cmd, "r");
    if (!out) { perror ("popen"); return -1; }
    bool seen[NFIG] = { false };
    char line[4096];
    while (fgets (line, sizeof line, out)) {
        json_t *j = json_loads (line, 0, NULL);
        const char *bench = json_string_value (json_object_get (j, "bench"));
        const char *metric = json_string_value (json_object_get (j, "metric"));
        for (int f = 0; f < NFIG && bench && metric && !strcmp (bench, b->bench); f++)
            if (b->figures[f].metric && !strcmp (metric, b->figures[f].metric)) {
                res[f].value[curve][r] = json_number_value (json_object_get (j, "value"));
                snprintf (res[f].unit, sizeof res[f].unit, "%s", json_string_value (json_object_get (j, "unit")));
                seen[f] = true;
            }
        json_decref (j);
    }
    int status = pclose (out);
    if (status == -1 || !WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        fprintf (stderr, "curve_overhead: bench_%s failed with CURVE %s\n", b->bench, curve ? "on" : "off");
        return -1;
    }
    for (int f = 0; f < NFIG; f++)
        if (b->figures[f].metric && !seen[f]) {
            fprintf (stderr, "curve_overhead: bench_%s printed no %s\n", b->bench, b->figures[f].metric);
            return -1;
        }
    return 0;
}

static double s_median (const double *v, int n)
{
    double s[ROUNDS_MAX];
    memcpy (s, v, (size_t) n * sizeof *v);
    bench_percentile (s, (size_t) n, 0);     /* sorts */
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static json_t *s_array (const double *v, int n)
{
    json_t *a = json_array ();
    for (int i = 0; i < n; i++) json_array_append_new (a, json_real (v[i]));
    return a;
}

int main (int argc, char **argv)
{
    int rounds = argc > 1 ? atoi (argv[1]) : ROUNDS_DEFAULT;
    s_quick = argc > 2 && !strcmp (argv[2], "--quick");
    if (rounds < 1 || rounds > ROUNDS_MAX || (argc > 2 && !s_quick) || argc > 3) {
        fprintf (stderr, "usage: bench_curve_overhead [rounds 1..%d [--quick]]\n", ROUNDS_MAX);
        return 2;
    }
    static result_t res[NBENCH][NFIG];
    for (int r = 0; r < rounds; r++)
        for (size_t b = 0; b < NBENCH; b++) {
            bool first = r % 2;             /* off/on, then on/off, ... */
            if (s_run (&s_benches[b], res[b], first, r) || s_run (&s_benches[b], res[b], !first, r)) return 1;
        }
    for (size_t b = 0; b < NBENCH; b++)
        for (int f = 0; f < NFIG; f++) {
            const figure_t *fig = &s_benches[b].figures[f];
            if (!fig->metric) continue;
            result_t *x = &res[b][f];
            double off = s_median (x->value[0], rounds), on = s_median (x->value[1], rounds);
            double ratios[ROUNDS_MAX];
            for (int r = 0; r < rounds; r++) ratios[r] = x->value[0][r] > 0 ? x->value[1][r] / x->value[0][r] : 0;
            char metric[128];
            snprintf (metric, sizeof metric, "%s_%s_off", s_benches[b].bench, fig->name);
            bench_emit ("curve_overhead", metric, off, x->unit, json_pack ("{s:b, s:i}", "curve", 0, "rounds", rounds));
            snprintf (metric, sizeof metric, "%s_%s_on", s_benches[b].bench, fig->name);
            bench_emit ("curve_overhead", metric, on, x->unit, json_pack ("{s:b, s:i}", "curve", 1, "rounds", rounds));
            snprintf (metric, sizeof metric, "%s_%s_ratio", s_benches[b].bench, fig->name);
            bench_emit ("curve_overhead", metric, s_median (ratios, rounds), "x",
                        json_pack ("{s:f, s:o, s:o, s:o, s:i}", "ratio_of_medians", off > 0 ? on / off : 0,
                                   "off", s_array (x->value[0], rounds), "on", s_array (x->value[1], rounds),
                                   "round_ratios", s_array (ratios, rounds), "rounds", rounds));
        }
    return 0;
}
