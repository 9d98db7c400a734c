/* scene_instance — one copy of a recipe in a composed plan: its root, its
 * steps renamed and placed, and the steps that hang its objects under the
 * root.
 *
 * Names stay unique in the plan the way Blender keeps them unique in a
 * scene: the first "chair_seat" keeps its name, the next is
 * "chair_seat.001". Objects a recipe leaves unnamed get "<root>_part<i>" so
 * they can be parented. Targets (and object.parent's parent) follow the
 * renames; a target the recipe did not create (a scene object) is left as
 * it is.
 *
 * Placing a copy turns it about Z by theta, then moves it by pos: every
 * location a step gives (or the palette's default) is turned and moved,
 * every Euler rotation gets theta on Z (Blender's XYZ order applies Z last,
 * so that is the turn), object.location and transform.translate values are
 * turned too. Only steps whose effect does not depend on the order (see
 * bmq_bounds_rotatable) may be turned; the caller passes theta 0 otherwise. */
#ifndef BMQ_SCENE_INSTANCE_H
#define BMQ_SCENE_INSTANCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A name for a new object, unique among `used` (a JSON object used as a
 * set; the name is added): base, else base.001, base.002, ... (base cut to
 * fit max_len). Writes it to out; false when none is left (never in practice). */
bool bmq_instance_name (json_t *used, const char *base, int max_len, char *out, size_t outlen);

/* Append to plan: the root empty `root` (already reserved in used) at
 * root_at turned by theta, displayed radius `radius`; then `steps` renamed
 * and placed at pos/theta; then an object.parent step for every object
 * they create and do not delete. `described` is bmq_palette_describe's
 * output. Returns the number of steps appended, or -1 when out of memory. */
int bmq_instance_append (json_t *plan, json_t *used, int max_len, const json_t *steps, const json_t *described,
                         const char *root, const double root_at[3], double radius, const double pos[3], double theta);

/* The composer's cap on copies in one plan (all parts together): with one
 * step per further copy a plan could hold a hundred and more; "a hundred chairs" stays a
 * clear too_big. */
#define BMQ_INSTANCE_MAX_COPIES 64

/* Append one object.duplicate_tree step (issue 26): a copy of the copy
 * bmq_instance_append built from plan index `from` under src_root, named
 * `root`, its root at root_at turned by theta about Z (the copy's parts keep
 * their place in it, so they land where building the copy from scratch at
 * that placement would put them). The names the add-on gives the copied parts
 * (each part's name, else name.001, .002, ..., given in name order) are
 * reserved in used, so no later step asks for one. Returns the number of
 * steps appended (1), or -1 when out of memory or out of names. */
int bmq_instance_copy (json_t *plan, json_t *used, int max_len, size_t from, const char *src_root, const char *root,
                       const double root_at[3], double theta);

#endif
