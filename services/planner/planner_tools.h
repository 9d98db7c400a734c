/* planner_tools — the functions a model may call while it plans, and the
 * planner's answers to them.
 *
 *   discover_capabilities ()           the capability palette, described for an AI
 *                                      (every operation, what it does, whether it
 *                                      creates or acts on an object, its parameters
 *                                      with types, bounds and defaults)
 *   inspect_tool (tool_name)           one operation in full, from Blender's RNA: the
 *                                      executor answers an inspect.request; the
 *                                      palette entry (what validation allows) comes
 *                                      with it. No answer in time is an error the
 *                                      model reads, never a hang.
 *   submit_plan (plan, title?)         the action plan (seed 000's JSON array)
 *   submit_script (script, title?)     script mode only (seed 003): a bpy script
 *
 * Declarations are built from the palette, so the model's constrained decoding
 * already knows the operation names and parameter names and types. Not
 * thread-safe: one bmq_tools_t per dialogue; the palette may be shared. */
#ifndef BMQ_PLANNER_TOOLS_H
#define BMQ_PLANNER_TOOLS_H

#include "palette.h"

#include <jansson.h>
#include <stdbool.h>

#define BMQ_SCRIPT_MAX_BYTES  (64u << 10)

typedef struct bmq_tools_t bmq_tools_t;

/* executor_endpoint may be NULL or "" (inspect_tool then answers from the
 * palette only, saying so). `cid` is the story the inspect requests belong to.
 * `cancelled` (may be NULL) is polled while waiting for the executor. */
bmq_tools_t *bmq_tools_new (const bmq_palette_t *palette, const char *executor_endpoint, int inspect_timeout_ms,
                            const char *cid, bool (*cancelled) (void *ctx), void *cancel_ctx);
void bmq_tools_destroy (bmq_tools_t **self_p);

/* The neutral function declarations (see llm_client.h). New reference. */
json_t *bmq_tools_declarations (const bmq_palette_t *palette, bool script_mode);

/* discover_capabilities: new reference. */
json_t *bmq_tools_discover (bmq_tools_t *self);
/* inspect_tool: {tool, allowed} or {error, allowed?}. New reference. */
json_t *bmq_tools_inspect (bmq_tools_t *self, const char *tool_name);

/* The plan in submit_plan's arguments: args.plan as an array. Tolerated, since
 * models do it: the array as a JSON string, an object {steps: [...]}, or
 * args.steps. New reference, or NULL with why. */
json_t *bmq_tools_plan_arg (const json_t *args, char *why, size_t whylen);

/* The script in text: the body of the first fenced code block (```python …
 * ``` or ``` … ```) when there is one, else the whole text trimmed. Checks
 * it is non-empty, at most BMQ_SCRIPT_MAX_BYTES, has no NUL and uses bpy.
 * malloc'd, or NULL with why. The script validator and sandbox decide the rest. */
char *bmq_tools_script_extract (const char *text, char *why, size_t whylen);

/* A title from the model's argument or else the prompt: printable, at most 60 bytes. */
void bmq_tools_title (const json_t *args, const char *prompt, char *out, size_t outlen);

#endif
