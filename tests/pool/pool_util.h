/* pool_util — a validator pool for tests and benchmarks: the gateway's broker
 * (validator_broker.c) in this process, real blendmq-validator processes
 * (and optionally blendmq-audit) around it, every endpoint an ipc socket in a
 * private temp dir, so nothing binds a fixed port and runs can overlap. */
#ifndef BMQ_POOL_UTIL_H
#define BMQ_POOL_UTIL_H

#include "validator_broker.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define POOL_MAX_PROCS 32

typedef struct {
    char          dir[256];
    char          config[320];
    bmq_broker_t *broker;
    pid_t         pids[POOL_MAX_PROCS];
    char          names[POOL_MAX_PROCS][32];
    int           nprocs;
    int           interval;
} pool_t;

/* Temp dir, config (heartbeat interval_ms, liveness 3), verdict key, the
 * broker bound; with_audit starts blendmq-audit too. NULL on failure. */
pool_t *pool_new (int interval_ms, bool with_audit);
/* SIGTERM every process, wait, remove the dir. Returns the number of
 * sanitizer reports found in the processes' logs (the dir is kept then). */
int pool_destroy (pool_t **self_p);

pid_t pool_spawn (pool_t *self, const char *service);     /* "validator", "audit"; its log is DIR/NAME-N.log */
/* Drive the broker until it has n workers. */
bool pool_wait_workers (pool_t *self, size_t n, int timeout_ms);

/* Poll the broker for up to timeout_ms (or until done () says so); every
 * reply (worker or broker-made) goes to on_reply, which takes it. */
typedef void (pool_reply_fn) (bmq_envelope_t *reply, void *arg);
void pool_drive (pool_t *self, int timeout_ms, pool_reply_fn *on_reply, bool (*done) (void *arg), void *arg);

/* A plan for the mixed corpus: `steps` steps (objects created by name, then
 * given materials, moved, smoothed); when !valid one step is broken. */
json_t *pool_plan (uint64_t *rng, int steps, bool valid);
/* Peak resident set of a process (VmHWM), in kB; -1 if unknown. */
long pool_peak_rss_kb (pid_t pid);
/* Print one benchmark line: {"bench", "metric", "value", "unit"} plus extra (taken). */
void pool_bench_line (const char *bench, const char *metric, double value, const char *unit, json_t *extra);

#endif
