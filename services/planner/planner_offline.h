/* planner_offline — the backend that needs no network: the recipe book
 * (built-in and saved recipes), a prompt's objects composed into one scene
 * (each with its count, size, colour, position and relations), and
 * save_recipe.
 *
 * The recipe folders are looked at again before each prompt (a stat of each
 * folder), so a recipe another process saved is found without a restart. */
#ifndef BMQ_PLANNER_OFFLINE_H
#define BMQ_PLANNER_OFFLINE_H

#include "palette.h"

#include <jansson.h>
#include <stddef.h>

typedef struct bmq_offline_t bmq_offline_t;

/* saved_dir may be NULL or missing. The palette is borrowed (to fill in
 * parameter defaults and to check a modified recipe still validates). */
bmq_offline_t *bmq_offline_new (const char *recipes_dir, const char *saved_dir, const bmq_palette_t *palette,
                                char *err, size_t errlen);
void bmq_offline_destroy (bmq_offline_t **self_p);
size_t bmq_offline_count (bmq_offline_t *self);
/* [{name, description, steps, saved}] of every recipe (new array). */
json_t *bmq_offline_list (bmq_offline_t *self);

/* Plan `prompt` (scene_compose.h: every recipe it names, placed together).
 * 0 with *body = a plan.reply body {plan, source: "offline", recipe,
 * description, score, parts, not_understood, notes?, modifiers?} and *note =
 * what was applied (or NULL; malloc'd). -1 with code and message: "no_match"
 * (no recipe named: the closest recipes and how to turn on an LLM backend),
 * "too_big" (more than a plan may hold), "invalid" or "internal". */
int bmq_offline_plan (bmq_offline_t *self, const char *prompt, json_t **body, char **note,
                      char *code, size_t codelen, char *message, size_t msglen);

/* The same, placed clear of what the scene holds (scene_compose.h: scene_boxes,
 * [{name, min, max}], as a plan.request may carry them; NULL: nothing known). */
int bmq_offline_plan_in (bmq_offline_t *self, const char *prompt, const json_t *scene_boxes, json_t **body, char **note,
                         char *code, size_t codelen, char *message, size_t msglen);

/* save_recipe: the plan must pass the palette. 0 / -1 with err. */
int bmq_offline_save (bmq_offline_t *self, const char *name, size_t name_len, const char *description,
                      const json_t *keywords, const json_t *plan, char *path_out, size_t path_len, char *err, size_t errlen);

/* Read the folders again when they changed. 1 reloaded, 0 unchanged, -1 failed (the old book stays; err says why). */
int bmq_offline_refresh (bmq_offline_t *self, char *err, size_t errlen);

#endif
