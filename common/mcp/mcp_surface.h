/* mcp_surface — what blendmq's MCP server offers beside tools: resources
 * (mcp_resources.c), prompts (mcp_prompts.c) and completion (mcp_complete.c).
 *
 * The catalog is data (common/mcp/mcp_resources.json, and the conformance
 * suite's fixtures in mcp_test_tools.json when gateway.mcp_test_tools is on).
 * What lives in Blender (the scene, an object, the preview, the palette, the
 * recipes) is read through the tool that already serves it: the request
 * becomes an mcp_call whose tool result is reshaped into the method's answer
 * (bmq_mcp_call_start_as). Immutable after construction: may be shared by
 * threads. */
#ifndef BMQ_MCP_SURFACE_H
#define BMQ_MCP_SURFACE_H

#include "mcp_tools.h"
#include <jansson.h>
#include <stdbool.h>

typedef struct bmq_mcp_surface_t bmq_mcp_surface_t;

/* NULL with err when a built-in file is malformed (a build bug). */
bmq_mcp_surface_t *bmq_mcp_surface_new (bool test_fixtures, char *err, size_t errlen);
void bmq_mcp_surface_destroy (bmq_mcp_surface_t **self_p);

/* What a request needs: an answer now, or a tool call whose result is reshaped. */
typedef struct {
    json_t     *result;         /* the JSON-RPC result to send now (owned), or NULL */
    int         error;          /* or a JSON-RPC error code (0: none) … */
    char        message[256];   /* … with this message */
    json_t     *error_data;     /* … and data (owned), or NULL */
    const char *tool;           /* or this tool to call … */
    json_t     *args;           /* … with these arguments (owned) … */
    char        mime[64];       /* resources/read: the resource's MIME type */
    char        from[16];       /* completion: objects, recipes, operations, assets */
    char        view[16];       /* resources/read: the tool's result seen through a view (mcp_audit.c): "stories", "story" */
} bmq_mcp_answer_t;

void bmq_mcp_answer_clear (bmq_mcp_answer_t *a);

/* resources/list, resources/templates/list, prompts/list: the result (new). */
json_t *bmq_mcp_resources_list (const bmq_mcp_surface_t *self);
json_t *bmq_mcp_resources_templates (const bmq_mcp_surface_t *self);
json_t *bmq_mcp_prompts_list (const bmq_mcp_surface_t *self);
/* resources/read of `uri`; not_found_code: the revision's code for an unknown resource. */
void bmq_mcp_resources_read (const bmq_mcp_surface_t *self, const char *uri, int not_found_code, bmq_mcp_answer_t *a);
/* The uri names a resource or matches a template (subscribe checks it). */
bool bmq_mcp_resources_known (const bmq_mcp_surface_t *self, const char *uri);
typedef struct { bool elicitation, sampling, roots; } bmq_mcp_client_caps_t;

/* prompts/get params ({name, arguments}; a prompt that asks the client first
 * answers an input-required result: inputResponses, requestState) */
void bmq_mcp_prompts_get (const bmq_mcp_surface_t *self, const char *name, const json_t *params, bmq_mcp_client_caps_t caps,
                          bmq_mcp_answer_t *a);
/* completion/complete params ({ref, argument, context}) */
void bmq_mcp_complete (const bmq_mcp_surface_t *self, const json_t *params, bmq_mcp_answer_t *a);

/* A tool's result as resources/read contents for uri (NULL with err when the tool failed). */
json_t *bmq_mcp_resource_contents (const char *uri, const char *mime, const json_t *tool_result, char *err, size_t errlen);
/* A tool's result (the scene, the recipes, the palette) as a completion result for prefix. */
json_t *bmq_mcp_complete_values (const char *from, const char *prefix, const json_t *tool_result);
/* The static values that start with (then contain) prefix, at most 100: {completion: {values, total, hasMore}}. */
json_t *bmq_mcp_complete_filter (const json_t *names, const char *prefix);

/* A deep copy of `tmpl` with every "{key}" in its strings replaced by args[key]
 * (strings as they are, anything else as compact JSON; a missing key by the
 * fallback's value, else left as is). */
json_t *bmq_mcp_fill (const json_t *tmpl, const json_t *args, const json_t *fallback);

/* ---- the audit trail as resources (mcp_audit.c) ---------------------------- */

#define BMQ_MCP_AUDIT_STORIES 50        /* blendmq://audit/stories lists at most this many */

/* An audit.query result (`records`) as the resource `uri` shows it to `who`
 * ({name, role}: the key reading; NULL: in-process, sees all) through `view`:
 *   "stories"  one entry per story, newest first: {story, plan_id, request,
 *              command, started_by, role, ts, outcome, duration_ms}; stories
 *              services started among themselves left out
 *   "story"    {plan_id, stories, started_by, records: [{ts, kind, sender, data}]}
 * A person (a reviewer or admin key) sees every story; anyone else only those
 * their own key started. Returns a tool result ({structuredContent}), or NULL
 * when there is nothing `who` may read (the story: not found). */
json_t *bmq_mcp_audit_view (const char *view, const char *uri, const json_t *records, const json_t *who);

/* ---- input-required results (mcp_mrtr.c, 2026-07-28) ---------------------- */

/* One step of a multi-round request `subject` (a tool or prompt name) whose
 * rounds ([{inputRequests: {key: {method, params}}}]) ask the client, given
 * the request's params (inputResponses, requestState). Only what the client
 * declared is asked. Returns 1 with *out an InputRequiredResult to answer; 0
 * with *out {answers: {key: response}, extra} when every round is answered;
 * -1 with err (invalid input, a requestState that fails its signature).
 * `extra` rides along, signed, in the state (e.g. the sha256 a person saw). */
int bmq_mcp_mrtr (const char *subject, const json_t *rounds, const json_t *extra, const json_t *params, bmq_mcp_client_caps_t caps,
                  json_t **out, char *err, size_t errlen);
/* The answers as text variables for bmq_mcp_fill (elicited content, sampled text, else JSON). */
json_t *bmq_mcp_mrtr_vars (const json_t *answers);

/* ---- tasks (mcp_tasks.c, the io.modelcontextprotocol/tasks extension) ---- */

#define BMQ_MCP_TASKS_EXTENSION "io.modelcontextprotocol/tasks"

typedef struct bmq_mcp_tasks_t bmq_mcp_tasks_t;

bmq_mcp_tasks_t *bmq_mcp_tasks_new (void);
void bmq_mcp_tasks_destroy (bmq_mcp_tasks_t **self_p);
/* A task of `owner` (a token name) doing what `spec` (a tool's _task) says,
 * `vars` filling its result: the CreateTaskResult (new). Thread-safe. */
json_t *bmq_mcp_tasks_create (bmq_mcp_tasks_t *self, const char *owner, const json_t *spec, const json_t *vars);
/* A task for a tool call the transport runs (execute_plan, chat…): working
 * until settled with the call's JSON-RPC response (a result: completed; an
 * error: failed) unless cancelled first. The CreateTaskResult (new); its id in id. */
json_t *bmq_mcp_tasks_start (bmq_mcp_tasks_t *self, const char *owner, char *id, size_t idlen);
void bmq_mcp_tasks_settle (bmq_mcp_tasks_t *self, const char *id, const json_t *response);
/* The call's last step, as the task's statusMessage. */
void bmq_mcp_tasks_note (bmq_mcp_tasks_t *self, const char *id, const char *message);
/* tasks/cancel came (or the task is gone): stop the call. */
bool bmq_mcp_tasks_cancelled (bmq_mcp_tasks_t *self, const char *id);
/* tasks/get, tasks/update, tasks/cancel params of `owner`: the result (new),
 * or NULL with *code (-32602: unknown task, bad params) and err. Thread-safe. */
json_t *bmq_mcp_tasks_request (bmq_mcp_tasks_t *self, const char *owner, const char *method, const json_t *params, int *code,
                               char *err, size_t errlen);

#endif
