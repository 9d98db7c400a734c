/* http_plans — what the gateway knows of each recent plan, for
 * GET /api/plans/{id}.
 *
 * The gateway loop notes every request it starts (chat, run, validate) and
 * every answer it sends the requester in that story (the plan the planner
 * proposed, the verdict, queueing, each step, the end or an error), whoever
 * the client was: CLI, REST or MCP. A record reads:
 *   {plan_id, kind, state, cid, created_ms, updated_ms, prompt?, plan?, source?,
 *    verdict?: {accepted, errors, plan_hash}, steps: [{step, operation, status,
 *    duration_ms, error?}], rollback?, result?: {status, steps_done, …}, error?: {code, message}}
 * state: planning, validating, accepted, rejected, queued, executing, then the
 * plan's end (done, failed, interrupted, cancelled, …) or error / timeout.
 * The newest `capacity` plans are kept. Thread-safe. */
#ifndef BMQ_HTTP_PLANS_H
#define BMQ_HTTP_PLANS_H

#include "codec.h"
#include <jansson.h>
#include <stdbool.h>

typedef struct bmq_http_plans_t bmq_http_plans_t;

bmq_http_plans_t *bmq_http_plans_new (size_t capacity);
void bmq_http_plans_destroy (bmq_http_plans_t **self_p);

/* A request started: kind "chat", "run" or "validate"; env is the request. */
void bmq_http_plans_start (bmq_http_plans_t *self, const char *plan_id, const char *kind, const bmq_envelope_t *env);
/* An answer sent to the requester of plan_id. Returns true when it was a
 * verdict, with *accepted set (for the metrics). */
bool bmq_http_plans_note (bmq_http_plans_t *self, const char *plan_id, const bmq_envelope_t *env, bool *accepted);
/* A copy of the record (caller decrefs), or NULL for an unknown plan. */
json_t *bmq_http_plans_get (bmq_http_plans_t *self, const char *plan_id);

#endif
