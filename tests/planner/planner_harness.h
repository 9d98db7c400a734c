/* planner_harness — what the planner's dialogue tests share: a fake gateway
 * front answering inspect.request (as the gateway relays an executor's
 * answer) and capabilities.request (validator_unavailable: the dialogue
 * then plans with the curated palette), a sink that keeps notes and audit records, the
 * palette and prompts of the source tree, and builders for Gemini and OpenAI
 * answers. */
#ifndef BMQ_PLANNER_HARNESS_H
#define BMQ_PLANNER_HARNESS_H

#include "fake_llm.h"
#include "planner_dialogue.h"
#include "planner_prompts.h"

#include <czmq.h>
#include <jansson.h>

#define H_KEY "AIzaTEST-secret-key-0123456789abcdef"

typedef enum { H_EXEC_ANSWER, H_EXEC_SILENT, H_EXEC_ERROR } h_exec_mode_t;

typedef struct {
    json_t  *notes;             /* array of strings */
    json_t  *audit;             /* array of {kind, data} */
    int      cancel_after_notes;/* > 0: cancelled once this many notes came */
} h_sink_t;

typedef struct {
    bmq_palette_t        *palette;
    bmq_prompts_t        *prompts;
    fake_llm_t           *llm;
    zactor_t             *gateway;
    char                  gateway_ep[256];
    h_sink_t              sink;
    bmq_plan_sink_t       plan_sink;
    bmq_dialogue_opts_t   opts;
    bmq_dialogue_result_t result;
} h_world_t;

/* A world for backend "gemini" or "openai", the fake gateway's inspect answers in `mode`. */
h_world_t *h_world_new (const char *backend, h_exec_mode_t mode);
void       h_world_destroy (h_world_t **self_p);
/* Run the dialogue; returns its code. */
int        h_run (h_world_t *w, const char *prompt);
/* How many inspect.request the fake gateway received. */
int        h_inspect_asked (h_world_t *w);
/* True when some note contains `needle`. */
bool       h_noted (h_world_t *w, const char *needle);
/* Everything the test saw (notes, audit, result message) as one text. */
char      *h_everything (h_world_t *w);

/* Gemini answers (JSON text, malloc'd). args_json is an object's JSON text;
 * sig may be NULL. */
char *h_gemini_call (const char *name, const char *args_json, const char *sig);
char *h_gemini_text (const char *text, const char *finish);
/* OpenAI answers. args_text is the arguments *string*. */
char *h_openai_call (const char *id, const char *name, const char *args_text);
char *h_openai_text (const char *text, const char *finish);

/* A small valid plan, and one that the validator rejects (an unknown
 * operation and a radius out of bounds), as JSON text. */
extern const char *H_GOOD_PLAN;
extern const char *H_BAD_PLAN;

#endif
