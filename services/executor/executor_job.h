/* executor_job — one unit of work for the executor: a sealed plan, or a
 * single scene command (info, render, save, reset). */
#ifndef BMQ_EXECUTOR_JOB_H
#define BMQ_EXECUTOR_JOB_H

#include "codec.h"
#include <czmq.h>
#include <stdbool.h>

typedef enum { BMQ_JOB_PLAN, BMQ_JOB_COMMAND } bmq_job_kind_t;
/* A plan runs in a transaction: BEGIN (Blender notes the scene), STEPS, then
 * COMMIT, or ROLLBACK after a failed step (unless keep_partial). */
/* Pipelined (executor.pipeline): RUN while a run_plan chunk streams; between
 * chunks STEPS again (a cancel then sends plan_rollback / plan_commit). */
typedef enum { BMQ_PHASE_BEGIN, BMQ_PHASE_STEPS, BMQ_PHASE_COMMIT, BMQ_PHASE_ROLLBACK, BMQ_PHASE_RUN,
               BMQ_PHASE_ASSETS } bmq_job_phase_t;      /* ASSETS: fetching and staging the plan's assets first */

typedef struct {
    bmq_job_kind_t kind;
    zframe_t *rid;                    /* requester (on the executor's ROUTER) */
    char      cid[BMQ_MAX_ID + 1];
    char      req_type[32];
    char      plan_id[BMQ_MAX_ID + 1];
    json_t   *plan;                   /* PLAN: the steps */
    size_t    step, total;            /* PLAN: next step index, step count */
    bmq_job_phase_t phase;            /* PLAN */
    bool      keep_partial;           /* PLAN: leave a failed plan's work in place */
    bool      cancel;                 /* PLAN: stop after the current step (cancel.request) */
    bool      orphaned;               /* PLAN: cancelled because its requester went silent */
    char      fail_status[16];        /* PLAN: set when a step failed: "failed" */
    char      fail_error[600];
    long long failed_step;
    bool      final_chunk;            /* PLAN, pipelined: the chunk in flight commits the plan */
    bool      stopping;               /* PLAN, pipelined: cancelled because the executor is stopping */
    size_t    asset_next;             /* PLAN: the next step to look at for an asset to stage */
    bool      assets_checked;         /* PLAN: its assets were looked for */
    json_t   *assets_staged;          /* PLAN: asset keys staged in Blender */
    json_t   *fallbacks;              /* PLAN: step index (text) → the note of an optional asset that fell back */
    json_t   *notes;                  /* PLAN: what was done differently, for the plan's end ("notes") */
    void     *asset_work;             /* PLAN: the asset being staged in chunks (executor_assets.c) … */
    void    (*asset_work_free) (void **work_p);   /* … and how to free it with the job */
    char      fingerprint[65];        /* PLAN: the scene's fingerprint Blender reported at the plan's end ("": none) */
    double    bpy_ms, addon_ms;       /* PLAN, pipelined: Blender's time in the steps and the add-on's own (-1: none) */
    json_t   *created;                /* PLAN: names of objects created so far */
    json_t   *audit_steps;            /* PLAN: [{event, step}] not yet recorded (one "steps" record per batch) */
    json_t   *names;                  /* PLAN: a step's "name" → the object's actual name ("box.001"
                                         when the scene had a "box"); later targets use it */
    char      command[32];            /* COMMAND */
    json_t   *args;                   /* COMMAND */
    double    started_us;
} bmq_job_t;

bmq_job_t *bmq_job_new_plan (const bmq_envelope_t *req, zframe_t *rid);
bmq_job_t *bmq_job_new_command (const bmq_envelope_t *req, zframe_t *rid);
void bmq_job_destroy (bmq_job_t **self_p);
void bmq_job_free (void **item);      /* zlistx destructor */

#endif
