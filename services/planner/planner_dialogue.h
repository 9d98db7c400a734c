/* planner_dialogue — seed 000's dialogue between a model and the planner,
 * written once for every LLM backend (llm_client.h).
 *
 * The model gets the planning functions (planner_tools.h) and the user's
 * prompt. Each turn, every function call is answered: discover_capabilities
 * with the palette MCP clients get (planner_caps.h), inspect_tool with
 * Blender's RNA through the gateway (common/inspect), and submit_plan by
 * checking the plan with the validator's own code against the same palette. The dialogue ends when:
 *   - a submitted plan passes: success (the gateway's validator pool still
 *     checks and seals it; this check only saves a round trip per mistake);
 *   - a plan was rejected and sent back for fixing max_fix_rounds times
 *     already (seed 003 FR-005: 2): the user gets the last errors;
 *   - the model answers without calling a function (prose, a cut-off or
 *     malformed call) after max_reformats reminders;
 *   - the model refuses (SAFETY and the like): its reason, at once;
 *   - the API fails after its retries (llm_http.h), the turn limit or the
 *     deadline is reached, or the caller cancels.
 *
 * Two more tools reach the executor through the gateway (planner_eyes.h):
 * search_assets (asset ids for asset.import steps) and look (a contact sheet
 * of the live scene, sent to the model as an image, with topology numbers).
 *
 * Review mode (opts.review set: the gateway ran the plan and asks for a
 * second look, issue 16): the first message is the review template with the
 * prompt, the plan that ran and how it ended; the model is asked to call look
 * and then either `done` (or a plain answer: satisfied) or submit_plan with a
 * fix plan that changes the scene as it is now (its targets may name the
 * objects the plan made or look saw). out->satisfied with out->summary, or a
 * fix plan in out->plan.
 * Progress goes to the sink as short notes ("asking for capabilities…",
 * "inspecting bpy.ops.mesh.primitive_cone_add…", "plan of 7 steps ready"),
 * and every turn to the audit. The API key is in none of them. */
#ifndef BMQ_PLANNER_DIALOGUE_H
#define BMQ_PLANNER_DIALOGUE_H

#include "llm_client.h"
#include "palette.h"
#include "planner_caps.h"

#include <jansson.h>
#include <stdbool.h>

typedef struct {
    void (*note) (void *ctx, const char *text);
    void (*audit) (void *ctx, const char *kind, json_t *data);     /* data is stolen */
    bool (*cancelled) (void *ctx);
    void *ctx;
} bmq_plan_sink_t;

typedef struct {
    const char          *backend;           /* "gemini" or "openai" */
    bmq_llm_config_t     llm;               /* base_url, model, api_key, stream, policy; the rest is set here */
    int                  timeout_ms;        /* the whole dialogue */
    int                  max_turns;         /* model answers at most */
    int                  max_fix_rounds;    /* rejected plans sent back at most (2) */
    int                  max_reformats;     /* reminders to call a function at most (2) */
    bool                 script_mode;
    const char          *system_prompt;
    const char          *user_template;     /* {{prompt}} */
    const char          *reformat_template; /* {{reason}}, {{function}} */
    const char          *fix_template;      /* {{round}}, {{rounds}} */
    const bmq_palette_t *palette;           /* drafts are checked against it; declarations */
    const bmq_caps_snapshot_t *caps;        /* what discover_capabilities publishes (NULL: made from palette) */
    const char          *gateway_endpoint;  /* inspect_tool asks through it */
    int                  inspect_timeout_ms;
    const char          *cid;
    int                  look_timeout_ms;   /* look and search_assets (default 30000) */
    const json_t        *review;            /* review mode: {plan, result: {status, steps_done, steps_total, error?},
                                               round, rounds}; NULL: plan mode */
    const char          *review_template;   /* {{prompt}} {{plan}} {{result}} {{round}} {{rounds}} */
} bmq_dialogue_opts_t;

typedef struct {
    json_t *plan;           /* success, plan mode */
    char   *script;         /* success, script mode */
    char    title[64];
    json_t *errors;         /* the last verdict's errors when plans kept being rejected */
    char    code[32];       /* failure: llm_error, blocked, no_plan, truncated, plan_rejected, turn_limit, cancelled, config */
    char    message[1024];
    int     turns, submissions, fix_rounds, reformats, tool_calls;
    bool    fallback_ok;    /* the failure says nothing against the prompt: offline recipes may answer it */
    bool    satisfied;      /* review mode: the model found nothing to fix (out->plan is NULL) */
    char    summary[512];   /* review mode: what the model said it saw */
    int     looks;          /* look calls answered with a picture */
} bmq_dialogue_result_t;

/* Run one dialogue. 0 with a plan (or script) in out, -1 with out->code and
 * out->message. Blocking: run it on its own thread. */
int  bmq_dialogue_run (const bmq_dialogue_opts_t *opts, const char *prompt, const bmq_plan_sink_t *sink,
                       bmq_dialogue_result_t *out);
void bmq_dialogue_result_clear (bmq_dialogue_result_t *out);

/* "Gemini", "OpenAI-compatible model" */
const char *bmq_dialogue_backend_title (const char *backend);

#endif
