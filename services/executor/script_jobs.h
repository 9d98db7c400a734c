/* script_jobs — the executor's side of BPY scripts (issue 8).
 *
 * script.request {script, verdict, seal} (from the gateway, after a validator
 * accepted and sealed the script): check the seal against the script's
 * sha256, give the run a fresh script_id (128 random bits, 32 lowercase hex
 * chars; any script_id in the request — a client's, the validator's — is
 * ignored), copy the live scene (the add-on's save_blend, queued like any
 * scene command; its bpy.data.filepath goes to the sandbox as the job's
 * scene_path), run the script on that copy in the sandbox pool on a worker
 * thread (the executor loop stays responsive), keep {script_id, script,
 * script sha256, scene sha256, ok} in memory (bounded: the oldest entry is
 * forgotten; an entry is never replaced — the same script sent twice is two
 * entries with two ids), and answer script.reply {script_id, status
 * "sandboxed" | "rejected" | "sandbox_failed", verdict, sandbox}.
 *
 * script.confirm {script_id, sha256}: refused unless sha256 is the stored
 * script's sha256 (what the person reviewed is what would run), that script
 * ran clean in the sandbox, was not applied yet, and the live scene still
 * hashes to the scene it was tested on (sha256 of save_blend, the bytes the
 * sandbox hashed too); then the add-on's run_script {script, plan_id, sha256,
 * timeout_ms, modules, builtins} applies it in a plan transaction with the
 * same run-time allowlists as the sandbox, and script.reply says "applied" or
 * "failed" (with the traceback; the transaction is rolled back). A progress
 * event is published. Audit kinds, all under the cid = script_id, each with
 * the script's sha256: script.sandbox (with request_cid: the script.request's
 * cid, under which the validator recorded script.request and script.verdict),
 * script.confirm (refusals too: status "refused", reason), script.live.
 *
 * script.list {}: every entry, newest first, without the text; script.list
 * {script_id}: that one entry (or none) with its exact text in "script".
 *
 * cancel.request {plan_id: script_id} (issue 29: Ctrl-C on `script apply`, `blendmq
 * cancel`; the gateway already checked who may cancel): a live run still queued is
 * answered "cancelled" at once (nothing ran; the script may be confirmed again); a
 * running one is interrupted in Blender: run_script goes to the Blender actor as a
 * STREAM naming the script id, so the executor's link cancel sends cancel_plan
 * {plan_id: script_id}, the add-on's watchdog stops the script and rolls it back, and
 * its answer ("cancelled: … rolled back: …") becomes script.reply status "cancelled".
 * Audited as script.cancel (who asked) and script.live (status cancelled). */
#ifndef BMQ_SCRIPT_JOBS_H
#define BMQ_SCRIPT_JOBS_H

#include "audit_client.h"
#include "codec.h"
#include "executor_job.h"
#include "plan_seal.h"

#include <czmq.h>

#define BMQ_SCRIPT_TIMEOUT_MS_DEFAULT 20000     /* executor.script_timeout_ms */

typedef struct bmq_script_jobs_t bmq_script_jobs_t;

/* router: answers go to requesters there; pub: progress events. Borrowed. */
bmq_script_jobs_t *bmq_script_jobs_new (const bmq_seal_key_t *key, bmq_audit_t *audit, zsock_t *router, zsock_t *pub);
void bmq_script_jobs_destroy (bmq_script_jobs_t **self_p);
/* The add-on's limit for a live run (run_script's timeout_ms; executor.script_timeout_ms). */
void bmq_script_jobs_set_timeout (bmq_script_jobs_t *self, int timeout_ms);
/* Warm sandbox instances (executor.sandbox_warm, clamped to 1..BMQ_SANDBOX_WARM_MAX):
 * call before the first script; the pool is made on the first script. */
void bmq_script_jobs_set_sandbox_warm (bmq_script_jobs_t *self, int warm);
/* Seals must be for executor `name` (kept, not copied) and are remembered in
 * `guard` (borrowed) so none is used twice (issue 12). */
void bmq_script_jobs_set_seals (bmq_script_jobs_t *self, const char *name, bmq_seal_guard_t *guard);

/* The live Blender's version ("4.3.2", from its hello; "" while none is connected). A script is
 * sandboxed and applied only for a Blender whose RNA is recorded (blender_rna.h), checked
 * against that version's table, and applied only on the version it was sandboxed for (issue 30). */
void bmq_script_jobs_set_blender (bmq_script_jobs_t *self, const char *version);
/* The link timeout for one of our Blender commands: timeout_ms + 15 s for run_script (the
 * add-on's own limit answers first), 0 for anything else (the caller's default). */
int bmq_script_jobs_link_timeout (const bmq_script_jobs_t *self, const bmq_job_t *job);

/* Send run_script to the Blender actor as a STREAM naming its script id (so a cancel reaches
 * it), with the link timeout bmq_script_jobs_link_timeout gave. */
void bmq_script_jobs_send (zactor_t *blender, const bmq_job_t *job, int timeout_ms);
/* cancel.request {plan_id} naming a live run's script id: 0 not one of ours; 1 it is `current`
 * (marked cancelled: the caller raises the link's cancel, the add-on interrupts the script);
 * 2 it was queued and is answered "cancelled" now (removed from `queue`). */
int bmq_script_jobs_cancel (bmq_script_jobs_t *self, const bmq_envelope_t *req, bmq_job_t *current, zlistx_t *queue);

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
/* script.list: what the sandbox has seen, newest first (script.listing); with
 * {script_id}: that entry only, with its text. */
bmq_envelope_t *bmq_script_jobs_list (bmq_script_jobs_t *self, const bmq_envelope_t *req);
void bmq_script_jobs_on_command (bmq_script_jobs_t *self, const bmq_job_t *job, int status, json_t *reply,
                                 zframe_t *blob, const char *err, zlistx_t *queue);

#endif
