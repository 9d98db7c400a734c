/* scene_layout — where each copy of each recipe goes, with boxes only.
 *
 * Every copy is its recipe's bounding box (recipe_bounds.h), turned by a
 * multiple of nothing but Z. Placing builds clusters from the inside out:
 *  - a copy alone stands with its footprint centred on its cluster's origin
 *    and its lowest point on the ground (z = 0);
 *  - "on": the copies of what stands on it share the highest surface over
 *    its centre (a table's top, a chair's seat), in an even grid that keeps
 *    them apart; their lowest point is that surface. What does not fit
 *    stands next to it instead, and a note says so. Copies of a part that
 *    stands on another are dealt out in turn to that part's copies;
 *  - next to / left of / right of / in front of (-Y) / behind (+Y): outside
 *    everything placed so far on that side (next to: right and left in
 *    turn, the side with less on it first), a gap apart, several in an evenly spaced line along the side,
 *    centred on the anchor; in front of and behind it each turns to face it,
 *    beside it only seats do (a chair at a table, not a bookshelf by a sofa;
 *    the recipe says where its front is: -Y unless it says otherwise; round
 *    things never turn);
 *  - around: evenly spaced angles from the front, each as close as its box
 *    allows without touching what is there, turned to face the centre;
 *    pushed out together until no two touch;
 *  - between A and B: a row A, the part, B (two copies of A when B is not
 *    given); when A or B is already placed by a relation, next to A;
 *  - the copies of a part on its own: one; a row along X (up to 6, or "in
 *    a row"); a square grid (more than 6); "in a circle": a ring facing its
 *    centre whose neighbours do not touch; all evenly spaced;
 *  - the groups left over stand in a row along X centred on the origin,
 *    unless they were given a position ("at 3 0 0": the group's footprint
 *    centre goes to (3, 0), its ground to z = 0 + 0).
 * Gaps grow with the smaller of two neighbours: 0.1 m + 10 % of its larger
 * footprint side, at most 1 m. Nothing placed by these rules overlaps
 * (boxes, up to floating-point rounding); only explicit positions can. */
#ifndef BMQ_SCENE_LAYOUT_H
#define BMQ_SCENE_LAYOUT_H

#include "recipe_bounds.h"
#include "scene_words.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const bmq_bounds_t *bounds;     /* of the part's steps (sizes already applied) */
    size_t        count;            /* copies */
    bmq_rel_t     relation;         /* NONE, ON .. AROUND */
    int           ref[2];           /* the parts it relates to (-1: none) */
    bmq_arrange_t arrange;
    bool          has_position;
    double        position[3];
    double        front;            /* where its front looks (radians from +X), NAN: round, never turned */
    bool          seat;             /* beside something, it turns to face it (recipe_book.h) */
    const char   *name;             /* for notes */
} bmq_layout_part_t;

/* Where a copy goes: its recipe's origin to pos, turned by theta about Z. */
typedef struct { double pos[3]; double theta; } bmq_placement_t;

/* Place every copy: place[i] has parts[i].count slots (the caller's). scene
 * gets the box around everything; notes (may be NULL) gets a string per
 * thing done differently than asked. 0, or -1 when out of memory. */
int bmq_layout (const bmq_layout_part_t *parts, size_t n, bmq_placement_t **place, bmq_box_t *scene, json_t *notes);

#endif
