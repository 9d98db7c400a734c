/* plan_job — one LLM dialogue on its own thread (a czmq actor), so the
 * planner's ROUTER loop keeps answering heartbeats and other prompts while a
 * model thinks, waits on a rate limit or streams.
 *
 * The thread owns copies of everything it reads except the palette (immutable,
 * shared). It talks to the loop only through the actor's pipe:
 *   ["NOTE", text]            progress for the user
 *   ["AUDIT", kind, json]     a record for the audit trail (the loop owns the
 *                             audit client, which is not thread-safe)
 *   ["DONE"]                  the result is ready (bmq_plan_job_result)
 * Destroying a job cancels it: the dialogue stops at its next check (during
 * a transfer, a back-off wait or an inspect), then the thread ends. */
#ifndef BMQ_PLAN_JOB_H
#define BMQ_PLAN_JOB_H

#include "codec.h"
#include "planner_dialogue.h"

#include <czmq.h>

typedef struct bmq_plan_job_t bmq_plan_job_t;

/* Start. opts' strings and prompt are copied; rid (the gateway) too. */
bmq_plan_job_t *bmq_plan_job_new (const bmq_dialogue_opts_t *opts, const char *prompt, const char *cid, zframe_t *rid);
/* Ask the dialogue to stop; it ends soon after with code "cancelled" (DONE
 * still comes). Does not block. */
void bmq_plan_job_cancel (bmq_plan_job_t *self);
/* Cancel if running, wait for the thread, free. Safe to call twice. */
void bmq_plan_job_destroy (bmq_plan_job_t **self_p);
/* The socket to poll. */
zactor_t *bmq_plan_job_actor (bmq_plan_job_t *self);

typedef struct {
    void (*note) (void *ctx, bmq_plan_job_t *job, const char *text);
    void (*audit) (void *ctx, bmq_plan_job_t *job, const char *kind, json_t *data);     /* data stolen */
    void *ctx;
} bmq_plan_job_handler_t;

/* Read one message from the job and hand it over. true once the job is done. */
bool bmq_plan_job_recv (bmq_plan_job_t *self, const bmq_plan_job_handler_t *handler);

const bmq_dialogue_result_t *bmq_plan_job_result (const bmq_plan_job_t *self);
const char *bmq_plan_job_cid (const bmq_plan_job_t *self);
const char *bmq_plan_job_prompt (const bmq_plan_job_t *self);
/* A review of a plan that ran (opts.review), not a first plan. */
bool bmq_plan_job_reviewing (const bmq_plan_job_t *self);
zframe_t *bmq_plan_job_rid (bmq_plan_job_t *self);
/* ms since the job started */
int64_t bmq_plan_job_age_ms (const bmq_plan_job_t *self);

#endif
