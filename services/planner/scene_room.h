/* scene_room — what a room adds to a composed plan (issue 26): its floor and
 * walls, the usual door and window, the furniture a bare room gets, where
 * each kind of thing usually goes, and material words as looks.
 *
 * The room is one copy like any other: a root empty "room" with the floor
 * (its top at z = 0), the back and left walls at full height (2.6 m), the
 * front and right walls low (0.5 m) so a camera from the front right sees
 * in, a door in the back wall near the right corner and a window in the left
 * wall (when asked for, or usual for the room's kind), each hung under the
 * root: 3 steps a piece (add, material, parent). */
#ifndef BMQ_SCENE_ROOM_H
#define BMQ_SCENE_ROOM_H

#include "recipe_book.h"
#include "scene_layout.h"
#include "scene_parse.h"

#include <jansson.h>

#define BMQ_ROOM_WALL_H   2.6
#define BMQ_ROOM_LOW_H    0.5
#define BMQ_ROOM_STEPS    22            /* root + floor, 4 walls, door, window: 1 + 7 × 3 */

/* Where a recipe usually goes in a room (by its name and kind). */
bmq_spot_t bmq_room_usual (const json_t *recipe);
/* The usual floor area (m²) of a room kind. */
double bmq_room_area (bmq_room_kind_t kind);
/* A room named with nothing in it gets the usual furniture of its kind
 * (minus what the prompt said no to): parts added to req. */
void bmq_room_defaults (const bmq_recipe_book_t *book, bmq_scene_request_t *req);
/* The room's steps appended to plan (names reserved in used). Steps appended or -1. */
int bmq_room_append (json_t *plan, json_t *used, int max_len, const bmq_layout_room_t *room, bool door, bool window);
/* A material word's look on the parts that take a colour (color_parts): roughness and metallic always, the
 * colour too unless a colour was asked for. Steps changed in place. */
void bmq_room_material (json_t *steps, const json_t *color_parts, const bmq_material_t *m, bool keep_colour);

#endif
