/* bench_util — what the executor benchmarks share: a private stack started
 * with `blendmq up --ipc`, a gateway client, percentiles, JSON-line output,
 * counts from the command line, and the honest skip (exit 77 with the reason).
 *
 * Every interval a bench reports is timed with CLOCK_MONOTONIC (bench_now_us);
 * the one exception is a stamp made in another process in wall-clock time
 * (progress events' ts_us), compared with bench_wall_us. */
#ifndef BMQ_BENCH_UTIL_H
#define BMQ_BENCH_UTIL_H

#include "bus.h"
#include "config.h"

typedef struct {
    char          dir[256];
    bmq_config_t *cfg;
} bench_stack_t;

/* Start a stack (with a headless Blender) in a temp run dir. 0 / -1. */
int  bench_stack_up (bench_stack_t *st, int validators);
/* The same with more `up` options (e.g. "--no-blender": the executor connects to
 * the Blender that BLENDMQ_BLENDER_HOST/PORT/TOKEN_FILE name). 0 / -1. */
int  bench_stack_up_args (bench_stack_t *st, int validators, const char *up_args);
void bench_stack_down (bench_stack_t *st);

/* Print {"bench":…, "metric":…, "value":…, "unit":…} plus `extra` fields (taken). */
void bench_emit (const char *bench, const char *metric, double value, const char *unit, json_t *extra);
/* p in [0,100]; sorts v. */
double bench_percentile (double *v, size_t n, double p);
double bench_now_us (void);         /* CLOCK_MONOTONIC, µs: every interval */
double bench_wall_us (void);        /* CLOCK_REALTIME, µs: only against another process's wall-clock stamp */

/* Exit status of a bench that cannot run here (ctest's SKIP_RETURN_CODE). */
#define BENCH_SKIP 77
/* Print "bench NAME: skipped: WHY" on stderr and exit BENCH_SKIP. */
void bench_skip (const char *bench, const char *why) __attribute__ ((noreturn));
/* argv[i] as an integer in [min, max], `dflt` when absent; exits 2 with the
 * usage when it is not one. */
int bench_arg_int (int argc, char **argv, int i, int dflt, int min, int max, const char *usage);
/* A plan that names and makes `n` objects (cube additions PREFIX_<k>, spaced
 * along Y at y): run it untimed first, so a later plan can target them. */
json_t *bench_setup_plan (int n, const char *prefix, double y);
/* A plan of `n` steps, each moving an object already in the scene: step k
 * sets the location of PREFIX_<k mod objects> (made by bench_setup_plan), so
 * the gateway must know the scene's names to validate it. */
json_t *bench_existing_plan (int n, const char *prefix, int objects);
/* A plan of `n` steps, half new, half existing: even steps add a cube named
 * NEW_<k>, odd steps move EXISTING_<k> (an object already in the scene). */
json_t *bench_mixed_existing_plan (int n, const char *new_prefix, const char *existing_prefix);

/* Send `req` (taken) to the gateway and wait for its final answer (execute.result,
 * scene.reply, validate.reply or error). *first_step_us gets the arrival time
 * (bench_now_us) of the first step's progress event, if any. The answer's body
 * is returned (caller decrefs), NULL on timeout. */
json_t *bench_request (zsock_t *gw, bmq_envelope_t *req, double *first_step_us, int timeout_ms);

/* A plan of `n` cube additions, spaced along X. */
json_t *bench_cube_plan (int n);
/* A plan of `n` steps that names and targets objects as recipes do: even steps
 * add a cube named PREFIX_<k>, odd steps set the location of the one made just
 * before (target PREFIX_<k>). Every target is made by the plan itself, so the
 * gateway does NOT look the scene's names up (see bench_existing_plan). */
json_t *bench_named_plan (int n, const char *prefix);

#endif
