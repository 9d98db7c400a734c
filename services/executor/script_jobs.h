/* script_jobs — the executor's side of BPY scripts (issue 8).
 *
 * script.request {script, script_id, verdict, seal} (from the gateway, after a
 * validator accepted and sealed the script): check the seal against the
 * script's sha256, copy the live scene (the add-on's save_blend, queued like
 * any scene command), run the script on that copy in the sandbox pool on a
 * worker thread (the executor loop stays responsive), keep {script_id,
 * script, script sha256, scene sha256, ok} in memory (bounded), and answer
 * script.reply {script_id, status "sandboxed" | "rejected" | "sandbox_failed",
 * verdict, sandbox}.
 *
 * script.confirm {script_id}: refused unless that script ran clean in the
 * sandbox, was not applied yet, and the live scene still hashes to the scene
 * it was tested on (sha256 of save_blend, the bytes the sandbox hashed too);
 * then the add-on's run_script applies it in a plan transaction with the same
 * run-time allowlists as the sandbox, and script.reply says "applied" or
 * "failed" (with the traceback; the transaction is rolled back). A progress
 * event is published. Audit kinds, all under the cid = script_id, each with
 * the script's sha256: script.sandbox, script.confirm, script.live. */
#ifndef BMQ_SCRIPT_JOBS_H
#define BMQ_SCRIPT_JOBS_H

#include "audit_client.h"
#include "codec.h"
#include "executor_job.h"
#include "plan_seal.h"

#include <czmq.h>

typedef struct bmq_script_jobs_t bmq_script_jobs_t;

/* router: answers go to requesters there; pub: progress events. Borrowed. */
bmq_script_jobs_t *bmq_script_jobs_new (const bmq_seal_key_t *key, bmq_audit_t *audit, zsock_t *router, zsock_t *pub);
void bmq_script_jobs_destroy (bmq_script_jobs_t **self_p);

/* The sandbox worker: poll it, call bmq_script_jobs_on_worker when readable. */
zactor_t *bmq_script_jobs_worker (bmq_script_jobs_t *self);
void bmq_script_jobs_on_worker (bmq_script_jobs_t *self);

/* script.request or script.confirm. Queues Blender commands on `queue`; returns
 * an immediate answer (caller sends it) or NULL. */
bmq_envelope_t *bmq_script_jobs_on_request (bmq_script_jobs_t *self, const bmq_envelope_t *req, zframe_t *rid,
                                            zlistx_t *queue);

/* Is this command job one of ours? Then its Blender result goes to on_command
 * (the caller destroys the job afterwards). */
bool bmq_script_jobs_owns (const bmq_job_t *job);
/* script.list: what the sandbox has seen, newest first (script.listing). */
bmq_envelope_t *bmq_script_jobs_list (bmq_script_jobs_t *self, const bmq_envelope_t *req);
void bmq_script_jobs_on_command (bmq_script_jobs_t *self, const bmq_job_t *job, int status, json_t *reply,
                                 zframe_t *blob, const char *err, zlistx_t *queue);

#endif
