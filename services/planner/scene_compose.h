/* scene_compose — the offline planner's plan for a whole prompt: the parts
 * scene_parse finds, sized and coloured (recipe_params), placed
 * (scene_layout), each copy under a root of its own, and for a scene of two
 * copies or more a camera and a sun that frame all of it.
 *
 * The plan, copy by copy:
 *   bpy.ops.object.empty_add   name "chair" (then "chair.001", ...), at the
 *                              copy's footprint centre on its ground, turned
 *                              as the copy is
 *   the recipe's own steps     names made unique the way Blender would
 *                              ("chair_seat.001"), placed: every location
 *                              turned about Z and moved, every Euler Z turned
 *   object.parent              each object the copy made, under its root
 * then bpy.ops.object.camera_add "camera" and bpy.ops.object.light_add "sun".
 *
 * Limits come from the palette before anything is built: when the copies
 * asked for need more steps than a plan may hold, the answer is an error
 * (code "too_big") that says how many fit. The finished plan is checked by
 * the validator too (vertices and every bound), and an error (code
 * "invalid") says why if it fails. */
#ifndef BMQ_SCENE_COMPOSE_H
#define BMQ_SCENE_COMPOSE_H

#include "palette.h"
#include "recipe_book.h"

#include <jansson.h>
#include <stddef.h>

/* Plan a prompt. 0 with *body = {plan, source: "offline", recipe, description,
 * score, parts, not_understood, notes?, modifiers?} and *note = a line for
 * the user (or NULL; malloc'd). 1 when the prompt names no recipe at all
 * (nothing set). -1 with code and message. `described` is
 * bmq_palette_describe (palette). */
int bmq_scene_compose (const bmq_recipe_book_t *book, const bmq_palette_t *palette, const json_t *described,
                       const char *prompt, json_t **body, char **note, char *code, size_t codelen, char *message,
                       size_t msglen);

/* The same, with what the scene already holds: scene_boxes is NULL or
 * [{name, min: [x, y, z], max: [x, y, z]}, ...] (world boxes; at most 4096
 * read, malformed entries skipped). A composition none of whose parts has a
 * position is then moved along +X until its footprint is clear of every box
 * (0.5 m apart), standing on the ground, and a note says where it went
 * ("build a snowman" twice: the second beside the first). */
int bmq_scene_compose_in (const bmq_recipe_book_t *book, const bmq_palette_t *palette, const json_t *described,
                          const char *prompt, const json_t *scene_boxes, json_t **body, char **note, char *code, size_t codelen,
                          char *message, size_t msglen);

/* "table ×1, chair ×2 next to table" for a body's parts (as the CLI prints it). */
void bmq_scene_parts_text (const json_t *parts, char *out, size_t outlen);

#endif
