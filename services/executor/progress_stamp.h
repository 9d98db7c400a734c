/* progress_stamp — what every progress event this executor publishes carries
 * so watchers can tell a gap from a restart (issue 17):
 *
 *   seq       1, 2, 3, … per executor process, in publishing order
 *   instance  this process's bmq_instance_id() (16 hex characters)
 *   ts_us     wall clock, µs (watchers measure delivery latency with it)
 *   executor  executor.name, once set: which executor's seq and instance these are
 *
 * A watcher that sees seq jump within one instance missed events; a new
 * instance means the executor restarted (its seq starts again at 1). Both the
 * plan loop (executor_plan.c) and script runs (script_jobs.c) stamp through
 * here, on the executor's main thread. */
#ifndef BMQ_PROGRESS_STAMP_H
#define BMQ_PROGRESS_STAMP_H

#include <jansson.h>
#include <stdint.h>

/* The executor's name (executor.name), copied; call once at start. */
void bmq_progress_stamp_name (const char *name);
/* Set seq, instance, ts_us and executor on `body` (borrowed). Returns the seq used. */
int64_t bmq_progress_stamp (json_t *body);

#endif
