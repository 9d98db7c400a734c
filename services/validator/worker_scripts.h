/* worker_scripts — a validator worker's answer to script.request (issue 8):
 * extract the script from the request (fenced block, plain text or
 * attachment), check it statically (bmq_script, with the RNA table loaded at
 * start), seal an accepted script like a plan (plan_seal.h: HMAC over
 * "script:" + the script's sha256, so a script seal can never pass as a plan
 * seal), audit script.request and script.verdict, and reply script.reply
 *   {script_id (the story's cid), status "validated" | "rejected",
 *    verdict (ValidationResult + sha256), script (what was extracted),
 *    seal (when validated; the gateway strips it before the client sees it)}. */
#ifndef BMQ_WORKER_SCRIPTS_H
#define BMQ_WORKER_SCRIPTS_H

#include "audit_client.h"
#include "codec.h"
#include "config.h"
#include "plan_seal.h"

typedef struct bmq_worker_scripts_t bmq_worker_scripts_t;

/* Load the RNA table (tests/script/fixtures/…, or validator.script_rna when the
 * config has it) and start the embedded Python. Never NULL: when the script
 * checker cannot start, every script.request is answered with an error that
 * says why. */
bmq_worker_scripts_t *bmq_worker_scripts_new (bmq_config_t *cfg);
void bmq_worker_scripts_destroy (bmq_worker_scripts_t **self_p);

/* The reply to a script.request (caller sends and destroys it). */
bmq_envelope_t *bmq_worker_scripts_handle (bmq_worker_scripts_t *self, const bmq_seal_key_t *key, bmq_audit_t *audit,
                                           const bmq_envelope_t *req);

#endif
