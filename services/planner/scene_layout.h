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
 * Sides are in the anchor's own frame: its front is where its recipe's front
 * looks, "in front of" is there, "behind" opposite, "left of" / "right of" as
 * seen by someone facing its front (for a front of -Y: -X / +X).
 * More relations (issue 26): facing (in front of it, 1.2 m away or more,
 * turned to it), long / short side (the two sides along its longer /
 * shorter edges, in turn, each turned to it), under (centred under it, on
 * the ground; a flat thing under it lifts it onto its top; what came with
 * the thing under it, a chair at a desk under a loft bed, slides out clear of
 * its frame), above (a wall thing: over it on the wall it stands against, all
 * the hung things over one anchor in a line along that wall, 15 cm apart; a
 * wall thing "behind" a standing one hangs just behind it; else on it),
 * inside (on the lowest board inside something that holds things, all of
 * them in one grid, as many a row as its width holds, in layers when its
 * floor is full; else next to it, said).
 *
 * In a room (bmq_layout_room_t): every group is placed inside the walls,
 * clear of the door's swing and of everything placed before: hung things
 * (recipe place: wall) on a wall at their own height, over what they relate
 * to; groups with a spot where it says (against a wall, in a corner, in the
 * middle); the rest where their kind usually goes (beds, wardrobes, sofas,
 * desks, appliances against a wall, their back to it and their front to the
 * room; tables and rugs in the middle; plants in corners); a thing that
 * relates to a hung thing ("a desk under the window") against that wall,
 * under it; a hung thing facing a standing one ("a TV on the wall opposite
 * the bed") on the wall across from it, after it. Against a wall, what
 * stands touches the wall even with a rug under it (the rug slides into the
 * room, its centre 4 cm off its anchor at most); things beside the anchor
 * line their backs up with the anchor's own. In a corner, the thing named
 * touches both walls with what relates to it on the room's side (its back
 * to the corner's back / front wall, else its side wall); a thing "in the
 * corner next to" another takes the corner, the other by it on the wall.
 * A hung thing that finds no wall with room at its own height hangs up to
 * 85 cm higher or lower (35 cm off the floor at least), said; a row of hung
 * things lines their backs up on the wall.
 * Big groups first. What finds no room is set down outside, beside
 * the room, with a note. Flat things (rugs) are walked on: what stands on
 * one stands on its top. A room that was not sized fits its contents
 * (floor area about 2.2 × what stands on it, at least the usual size for its
 * kind).
 * Gaps grow with the smaller of two neighbours: 0.1 m + 10 % of its larger
 * footprint side, at most 1 m. Nothing placed by these rules overlaps
 * (boxes, up to floating-point rounding); only explicit positions can. */
#ifndef BMQ_SCENE_LAYOUT_H
#define BMQ_SCENE_LAYOUT_H

#include "recipe_book.h"
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
    int           place;            /* BMQ_PLACE_FLOOR / WALL / SURFACE (recipe_book.h) */
    bool          holds;            /* things can go inside it */
    bmq_spot_t    spot;             /* where in a room, when the prompt said */
    int           wall;             /* 0 any, 1 back, 2 left, 3 right, 4 front */
    bmq_spot_t    usual;            /* where its kind usually goes in a room */
    bool          each_other;       /* its copies face one another in two rows ("two sofas facing each other") */
} bmq_layout_part_t;

/* A room around the layout (walls 10 cm thick outside the floor). */
typedef struct {
    bool   sized;                   /* in: width and depth were asked */
    double width, depth;            /* in when sized; out: the floor, x in [-w/2, w/2], y in [-d/2, d/2] */
    double min_area;                /* in: the usual floor area of its kind */
    double scale;                   /* in: "small" 0.8 … "large" 1.3 */
    bool   door, window;            /* in: keep the usual door (back wall) / window (left wall) clear */
    double door_x;                  /* out: the door's centre along the back wall (y = d/2), 0.9 m wide */
    double window_y;                /* out: the window's centre along the left wall (x = -w/2), 1.2 m wide, 0.9–2.2 m up */
    size_t outside;                 /* out: copies that found no room inside */
    double origin_x;                /* where the room's centre ends up along X (moved clear of the scene) */
} bmq_layout_room_t;

/* Where a copy goes: its recipe's origin to pos, turned by theta about Z. */
typedef struct { double pos[3]; double theta; } bmq_placement_t;

/* Place every copy: place[i] has parts[i].count slots (the caller's). scene
 * gets the box around everything; notes (may be NULL) gets a string per
 * thing done differently than asked. 0, or -1 when out of memory. */
int bmq_layout (const bmq_layout_part_t *parts, size_t n, bmq_placement_t **place, bmq_box_t *scene, json_t *notes,
                bmq_layout_room_t *room);

/* The relations and spots the layout could not meet, checked on the boxes it
 * placed (each part against its anchor's copy, in the anchor's frame): one
 * note each in notes. Returns how many failed. */
size_t bmq_layout_check (const bmq_layout_part_t *parts, size_t n, bmq_placement_t *const *place, const bmq_layout_room_t *room,
                         json_t *notes);

#endif
