/* planner_prompts — the LLM prompts as files under prompts/ (seed 003
 * NFR-002), read at start and read again whenever a file changes, so they can
 * be revised on a running planner without a rebuild or a restart.
 *
 *   planner_system.md   system prompt, plan mode (the capability dialogue)
 *   format_to_bpy.md    system prompt, script mode (a whole bpy file)
 *   contextual.md       the first user message; {{prompt}} is the user's words
 *   reformat.md         sent when the model answers without calling a function;
 *                       {{reason}} says what was wrong, {{function}} what to call
 *   fix_plan.md         goes with a rejected plan's errors; {{round}}, {{rounds}}
 *   review.md           the first message of a review (after the plan ran):
 *                       {{prompt}}, {{plan}}, {{result}}, {{round}}, {{rounds}}
 *
 * <!-- … --> comments in a file are for people and are removed. */
#ifndef BMQ_PLANNER_PROMPTS_H
#define BMQ_PLANNER_PROMPTS_H

#include <stddef.h>

typedef enum {
    BMQ_PROMPT_PLANNER, BMQ_PROMPT_SCRIPT, BMQ_PROMPT_CONTEXTUAL, BMQ_PROMPT_REFORMAT, BMQ_PROMPT_FIX, BMQ_PROMPT_REVIEW,
    BMQ_PROMPT__COUNT
} bmq_prompt_id_t;

#define BMQ_PROMPT_MAX_BYTES (64u << 10)

typedef struct bmq_prompts_t bmq_prompts_t;

/* Every file must be there and readable. NULL with err naming the file. */
bmq_prompts_t *bmq_prompts_load (const char *dir, char *err, size_t errlen);
void bmq_prompts_destroy (bmq_prompts_t **self_p);
/* Read again the files whose modification time or size changed. A file that
 * became unreadable keeps its last text (err says so). Returns how many were
 * read again, or -1 when one failed. */
int bmq_prompts_refresh (bmq_prompts_t *self, char *err, size_t errlen);
const char *bmq_prompts_get (const bmq_prompts_t *self, bmq_prompt_id_t id);

/* tpl with every {{key}} replaced by its value; pairs is key, value, …, NULL.
 * Unknown keys stay as written. malloc'd. */
char *bmq_template_fill (const char *tpl, const char *const *pairs);

#endif
