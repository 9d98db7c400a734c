/* bench_util — what the executor benchmarks share: a private stack started
 * with `blendmq up --ipc`, a gateway client, percentiles, JSON-line output. */
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
double bench_now_us (void);         /* wall clock, µs */

/* Send `req` (taken) to the gateway and wait for its final answer (execute.result,
 * scene.reply, validate.reply or error). *first_step_us gets the arrival time
 * (bench_now_us) of the first step's progress event, if any. The answer's body
 * is returned (caller decrefs), NULL on timeout. */
json_t *bench_request (zsock_t *gw, bmq_envelope_t *req, double *first_step_us, int timeout_ms);

/* A plan of `n` cube additions, spaced along X. */
json_t *bench_cube_plan (int n);
/* A plan of `n` steps that names and targets objects as recipes do: even steps
 * add a cube named PREFIX_<k>, odd steps set the location of the one made just
 * before (target PREFIX_<k>). So the gateway reads the scene's names first. */
json_t *bench_named_plan (int n, const char *prefix);

#endif
