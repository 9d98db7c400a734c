/* planner_place — the `place` function a model may call while it plans (issue
 * 26): where things go, by relation, worked out by the offline composer's own
 * layout engine (scene_layout.h), so a room a model builds from primitives is
 * laid out as a recipe room is: collision-free, on top surfaces, against
 * walls, in corners, each relation checked after layout.
 *
 *   place ({object, size: [w, d, h], relation?, anchor?, anchor2?, spot?,
 *           count?, front?})
 *
 * Each call adds (or, for a name placed before, replaces) one object: a box of
 * `size` metres (width along X, depth along Y, height), `count` copies, its
 * front towards -Y unless `front` says "+x", "-x", "+y" or "round". It may
 * relate to an object placed before (relation: on, next_to, both_sides,
 * in_front_of, behind, left_of, right_of, between (anchor and anchor2),
 * around, under, above, inside, facing, long_side, short_side) and/or go to
 * a spot of a room (wall, corner, center, on_wall). A spot anywhere makes the
 * layout a room's, its size chosen to fit (the answer gives the floor: x in
 * ±width/2, y in ±depth/2, its top at z = 0). The whole layout is placed
 * again on each call (an object added may move what stood in a row), and the
 * answer lists every object: for each copy its world box {min, max}, the
 * box's `center` (where a primitive's location goes), and `rotation_z` (the
 * turn about Z, radians); plus notes for each relation or spot the layout
 * could not meet. At most BMQ_PLACE_MAX objects and BMQ_PLACE_MAX_COPIES
 * copies of one; every argument is checked (a model's words are input). */
#ifndef BMQ_PLANNER_PLACE_H
#define BMQ_PLANNER_PLACE_H

#include <jansson.h>

#define BMQ_PLACE_MAX         32
#define BMQ_PLACE_MAX_COPIES  24

typedef struct bmq_place_t bmq_place_t;

/* `described`: bmq_palette_describe's output (borrowed; for primitive defaults). */
bmq_place_t *bmq_place_new (const json_t *described);
void bmq_place_destroy (bmq_place_t **self_p);

/* The function's declaration (neutral schema, llm_client.h). New reference. */
json_t *bmq_place_declaration (void);

/* One call: the layout of everything placed so far, or {error}. New reference. */
json_t *bmq_place_call (bmq_place_t *self, const json_t *args);

#endif
