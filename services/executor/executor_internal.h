/* executor_internal — the executor's one state, shared by the files that
 * make up the service (not a public API: only services/executor/executor_*.c
 * include it).
 *
 *   executor_service.c     the loop, request intake, the Blender actor's pipe, SIGTERM
 *   executor_plan.c        a plan's state machine: begin, steps, commit or rollback, the end
 *   executor_pipeline.c    a plan as run_plan chunks: progress frames become events (issue 14)
 *   executor_interrupted.c plans Blender rolled back on its own (HELLO reports), held events
 *   executor_requesters.c  a requester that goes silent
 *   executor_names.c       the scene's object names, published as scene.names
 *   executor_assets.c      asset sources: searches, a plan's assets fetched and staged first
 *   executor_generate.c    Hyper3D generation jobs: asset.generate, asset.cancel */
#ifndef BMQ_EXECUTOR_INTERNAL_H
#define BMQ_EXECUTOR_INTERNAL_H

#include "audit_client.h"
#include "bus.h"
#include "config.h"
#include "executor_job.h"
#include "plan_seal.h"
#include "script_jobs.h"

#include <stdatomic.h>

#define QUEUE_MAX 1000
#define RECORDED_MAX 64             /* interrupted-plan report ids remembered (a lost ack repeats them) */
#define REPORT_ID_LEN 16
#define HELD_MAX 64                 /* interrupted-plan events kept for a subscriber that is not there yet */

typedef struct executor_gen_t executor_gen_t;     /* executor_generate.c */

typedef struct executor_t {
    bmq_config_t  *cfg;
    zsock_t       *router, *pub;
    json_t        *pub_burst;         /* progress bodies of one burst held for one progress.batch (executor_plan.c) */
    char           pub_burst_cid[BMQ_MAX_ID + 1];
    zactor_t      *blender;
    bmq_audit_t   *audit;
    bmq_script_jobs_t *scripts;       /* BPY scripts: sandbox runs, confirmed live runs (issue 8) */
    bmq_seal_key_t key;
    bmq_seal_guard_t *seals;          /* nonces of accepted seals, until they expire (issue 12) */
    const char    *name;              /* executor.name: seals must be made for it */
    zlistx_t      *queue;
    bmq_job_t     *current;
    bool           waiting;           /* a CALL is outstanding */
    bool           pipeline;          /* executor.pipeline: plans go as run_plan chunks (issue 14) */
    atomic_bool    link_cancel;       /* the streaming run_plan should stop (read by the Blender actor) */
    bool           blender_up;
    bool           blender_state_known;   /* the link reported once (before: "blender connecting") */
    bool           blender_hung;      /* the actor's last failure was silence: Blender accepted and said nothing */
    int64_t        heard_ms;          /* monotonic: when Blender last answered or sent progress */
    bool           was_waiting;       /* ex->waiting at the last loop pass: a call started since */
    bool           busy;              /* blender busy: silent for more than two heartbeats (issue 23) */
    int64_t        busy_since_wall;   /* its wall-clock start, written to blender.busy_file */
    char           blender_detail[256];
    char           blender_version[24];   /* the connected Blender's ("4.3.2"; its hello), "" when none (issue 30) */
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
    zactor_t      *assets;            /* executor_assets.c: searches and downloads, off the loop */
    json_t        *scene_names;       /* scene_names' latest result {names, count, truncated}, or NULL */
    executor_gen_t *gen;              /* executor_generate.c: Hyper3D generation jobs */
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
/* A batch of run_plan progress frames (steps ended in Blender), a JSON array. */
void executor_run_progress (executor_t *ex, const char *batch_text);
/* The answer to a run_plan chunk. */
void executor_run_result (executor_t *ex, int status, json_t *reply, const char *err);
/* Blender's answer to plan_begin, plan_commit or plan_rollback. */
void executor_phase_result (executor_t *ex, int status, json_t *reply, const char *err);
/* Blender's answer to run_step. */
/* A step's answer (run_step's reply, or a run_plan progress frame made into one
 * when `streamed`): its progress event and audit record; a failure is noted on
 * the job (and, unless streamed, leads to rollback or commit). */
void executor_step_result (executor_t *ex, int status, json_t *reply, const char *err, double elapsed_us, bool streamed);
/* Steps are recorded in the audit trail in batches ("steps" records). */
#define AUDIT_STEPS_BATCH 25
void executor_record_steps (executor_t *ex, bmq_job_t *job);
/* Progress for the job's requester and the watchers; `body` is stolen. */
void executor_progress (executor_t *ex, bmq_job_t *job, json_t *body);
void executor_burst_begin (executor_t *ex);
void executor_burst_flush (executor_t *ex);
/* Blender rolled the job's plan back (ok, result {removed, restored}) or could
 * not (why): the rollback event and audit record; returns the rollback object. */
json_t *executor_rolled_back (executor_t *ex, bmq_job_t *job, bool ok, const json_t *result, const char *why);
/* Note the scene fingerprint (64 hex digits) an add-on result carries, if it is one. */
void executor_note_fingerprint (bmq_job_t *job, const json_t *result);
/* executor_names.c: the actor's NAMES (scene_names' result) → scene.names on
 * the PUB; again for a new subscriber. */
void executor_on_names (executor_t *ex, const char *result_text);
void executor_republish_names (executor_t *ex);
/* executor_assets.c (issue 16): the assets actor; an asset.search; a plan's
 * assets fetched and staged before it runs (true: one is on its way, the plan
 * waits in BMQ_PHASE_ASSETS); the actor's DONE; asset_stage's answer. */
zactor_t *executor_assets_new (const bmq_config_t *cfg);
void executor_asset_search (executor_t *ex, const bmq_envelope_t *req, zframe_t *rid);
bool executor_plan_assets (executor_t *ex, bmq_job_t *job);
void executor_on_assets (executor_t *ex);
void executor_staged (executor_t *ex, int status, json_t *reply, const char *err);
/* executor_generate.c (issue 16): generation jobs, each on a thread of its
 * own; their reports arrive on executor_generate_sock (polled by the loop). */
executor_gen_t *executor_generate_new (const bmq_config_t *cfg);
zsock_t *executor_generate_sock (executor_gen_t *gen);
void executor_generate_request (executor_t *ex, const bmq_envelope_t *req, zframe_t *rid);
void executor_generate_cancel (executor_t *ex, const bmq_envelope_t *req, zframe_t *rid);
void executor_on_generate (executor_t *ex);
/* Stop the jobs whose requester went silent (called every loop). */
void executor_watch_generations (executor_t *ex);
/* Stopping: every job of *self_p (ex->gen) stopped and answered "cancelled" through ex (pull the
 * HTTP abort first); *self_p is NULL after, and a second call does nothing. */
void executor_generate_destroy (executor_gen_t **self_p, executor_t *ex);
/* executor_pipeline.c: send the job's next run_plan chunk (from job->step). */
void executor_send_chunk (executor_t *ex, bmq_job_t *job);
/* Stopping: a streaming plan is cancelled in Blender (rolled back there),
 * and ends "interrupted" when its answer comes. */
void executor_stop_run (executor_t *ex);

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
