/* executor_internal — the executor's one state, shared by the files that
 * make up the service (not a public API: only services/executor/executor_*.c
 * include it).
 *
 *   executor_service.c     the loop, request intake, the Blender actor's pipe, SIGTERM
 *   executor_plan.c        a plan's state machine: begin, steps, commit or rollback, the end
 *   executor_interrupted.c plans Blender rolled back on its own (HELLO reports), held events
 *   executor_requesters.c  a requester that goes silent */
#ifndef BMQ_EXECUTOR_INTERNAL_H
#define BMQ_EXECUTOR_INTERNAL_H

#include "audit_client.h"
#include "bus.h"
#include "config.h"
#include "executor_job.h"
#include "plan_seal.h"
#include "script_jobs.h"

#define QUEUE_MAX 1000
#define RECORDED_MAX 64             /* interrupted-plan report ids remembered (a lost ack repeats them) */
#define REPORT_ID_LEN 16
#define HELD_MAX 64                 /* interrupted-plan events kept for a subscriber that is not there yet */

typedef struct executor_t {
    bmq_config_t  *cfg;
    zsock_t       *router, *pub;
    zactor_t      *blender;
    bmq_audit_t   *audit;
    bmq_script_jobs_t *scripts;       /* BPY scripts: sandbox runs, confirmed live runs (issue 8) */
    bmq_seal_key_t key;
    bmq_seal_guard_t *seals;          /* nonces of accepted seals, until they expire (issue 12) */
    const char    *name;              /* executor.name: seals must be made for it */
    zlistx_t      *queue;
    bmq_job_t     *current;
    bool           waiting;           /* a CALL is outstanding */
    bool           blender_up;
    char           blender_detail[256];
    int            step_timeout, command_timeout;
    int64_t        plans_run;
    char           recorded[RECORDED_MAX][REPORT_ID_LEN + 1];   /* report ids already in the audit trail */
    size_t         recorded_next;
    bool           subscribed;        /* the XPUB saw a subscriber (the gateway) */
    zhashx_t      *requesters;        /* routing id (hex) → int64_t* last heard (ms), for those that heartbeat */
    int            interval, liveness;
    int64_t        last_watch;
    int64_t        watch_grace;       /* after a stall of our own: no requester judged before then */
    json_t        *held;              /* [{cid, body}]: interrupted-plan events waiting for one */
} executor_t;

/* `env` is stolen and sent to the job's requester. */
static inline void executor_reply (executor_t *ex, bmq_job_t *job, bmq_envelope_t *env)
{
    bmq_bus_send_and_destroy (ex->router, job->rid, &env);
}

/* executor_plan.c */
/* Start or continue work when nothing is outstanding. */
void executor_pump (executor_t *ex);
/* The current plan ends: its last progress event, plan.end in its story, its
 * execute.result; `rollback` (or NULL) is stolen. */
void executor_finish_plan (executor_t *ex, const char *status, const char *error, json_int_t failed_step,
                           json_t *rollback);
/* Blender's answer to plan_begin, plan_commit or plan_rollback. */
void executor_phase_result (executor_t *ex, int status, json_t *reply, const char *err);
/* Blender's answer to run_step. */
void executor_step_result (executor_t *ex, int status, json_t *reply, const char *err, double elapsed_us);

/* executor_interrupted.c */
/* "HELLO" from the actor: record the interrupted-plan reports, acknowledge them. */
void executor_on_hello (executor_t *ex, const char *text);
/* A (un)subscription on the XPUB: the first subscriber gets what was held. */
void executor_on_subscription (executor_t *ex);

/* executor_requesters.c */
/* routing id (hex) → last heard, for the requesters that heartbeat. */
zhashx_t *executor_requesters_new (void);
/* A message from `rid` arrived (a heartbeat starts tracking it). */
void executor_heard (executor_t *ex, zframe_t *rid, bool heartbeat);
/* Stop the plans of requesters silent for liveness × interval (called every loop). */
void executor_watch_requesters (executor_t *ex);

#endif
