/* planner_tools — the functions a model may call while it plans, and the
 * planner's answers to them.
 *
 *   discover_capabilities (form?)     the capability palette exactly as MCP clients get
 *                                      it (capabilities.reply: the validator pool's
 *                                      palette merged with Blender's RNA, planner_caps.h;
 *                                      the curated one until the pool has answered);
 *                                      form "full" (the default here: descriptions
 *                                      included) or "compact" (one line per operation)
 *   inspect_tool (tool_name)           one operation in full, from Blender's RNA: asked
 *                                      through the gateway (common/inspect), whose
 *                                      executor set routes it; the published palette
 *                                      entry (what validation allows) comes with it.
 *                                      No answer in time is an error the model reads,
 *                                      never a hang.
 *   place (object, size, relation?,    where things go, by the offline composer's layout
 *          anchor?, spot?, …)           engine (planner_place.h): every object's world box,
 *                                      collision-free, relations checked (issue 26)
 *   submit_plan (plan, title?)         the action plan (seed 000's JSON array)
 *   submit_script (script, title?)     script mode only (seed 003): a bpy script
 *
 * Declarations are built from the palette, so the model's constrained decoding
 * already knows the operation names and parameter names and types. Not
 * thread-safe: one bmq_tools_t per dialogue; the palette may be shared. */
#ifndef BMQ_PLANNER_TOOLS_H
#define BMQ_PLANNER_TOOLS_H

#include "palette.h"
#include "planner_caps.h"

#include <jansson.h>
#include <stdbool.h>

#define BMQ_SCRIPT_MAX_BYTES  (64u << 10)

typedef struct bmq_tools_t bmq_tools_t;

/* `caps`: the snapshot to publish (borrowed, may be NULL: then bodies are
 * made from `palette`, marked curated). gateway_endpoint may be NULL or ""
 * (inspect_tool then answers from the palette only, saying so). `cid` is the
 * story the inspect requests serve (each is a story of its own at the
 * gateway, "<cid>.inspect-<n>"). `cancelled` (may be NULL) is polled while
 * waiting for the answer. */
bmq_tools_t *bmq_tools_new (const bmq_palette_t *palette, const bmq_caps_snapshot_t *caps, const char *gateway_endpoint,
                            int inspect_timeout_ms, const char *cid, bool (*cancelled) (void *ctx), void *cancel_ctx);
void bmq_tools_destroy (bmq_tools_t **self_p);

/* The neutral function declarations (see llm_client.h). New reference. */
json_t *bmq_tools_declarations (const bmq_palette_t *palette, bool script_mode);

/* discover_capabilities with the model's arguments (may be NULL): the
 * capabilities.reply body of that form, or {error}. New reference. */
json_t *bmq_tools_discover (bmq_tools_t *self, const json_t *args);
/* place: every object placed so far in this dialogue, laid out, or {error}. New reference. */
json_t *bmq_tools_place (bmq_tools_t *self, const json_t *args);
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
