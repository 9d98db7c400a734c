/* recipe_bounds — the boxes of what a plan builds, from its steps alone (no
 * Blender), so the scene layout can put recipes side by side and one on
 * another.
 *
 * Each object a step creates gets the local box of its primitive (a cube of
 * size s is ±s/2, a sphere ±r, a cylinder ±r × ±r × ±depth/2, a cone the
 * larger radius, a torus ±(R + r) × ±r, a plane or grid flat, Suzanne
 * ±(0.68, 0.43, 0.49)·size; parameters a step leaves out take the palette's
 * defaults), then its transform: location, Euler rotation (XYZ) and scale
 * from the step, changed by later object.location / rotation / scale,
 * transform.translate / rotate / resize, duplicate and delete steps. ARRAY,
 * MIRROR and SOLIDIFY modifiers grow the local box; BEVEL and SUBSURF only
 * shrink a mesh and are ignored. The world box of an object is the box
 * around its eight transformed corners: exact for boxes turned by right
 * angles, a little generous for anything else. Lights, cameras and empties
 * have no box, nor has an imported model (asset.import type model: its size
 * is the library's); a texture import changes its target's look only and an
 * HDRI the world's, so neither changes a box.
 *
 * Rotatable: the plan can be turned about Z by adding the angle to every
 * Euler Z and turning every location — true unless a step turns about the
 * global X or Y axis or resizes unevenly along global axes (those do not
 * commute with a turn about Z). */
#ifndef BMQ_RECIPE_BOUNDS_H
#define BMQ_RECIPE_BOUNDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct { double min[3], max[3]; } bmq_box_t;

typedef struct bmq_bounds_t bmq_bounds_t;

/* The boxes of `steps` (a plan). `described` is bmq_palette_describe's
 * output (for defaults). NULL only when out of memory. */
bmq_bounds_t *bmq_bounds_new (const json_t *steps, const json_t *described);
void bmq_bounds_destroy (bmq_bounds_t **self_p);
/* The box around every object; false (and a zero box) when the plan builds
 * nothing with a shape. */
bool bmq_bounds_total (const bmq_bounds_t *self, bmq_box_t *box);
/* The objects with a shape that are still there at the end, in creation order. */
size_t bmq_bounds_count (const bmq_bounds_t *self);
const bmq_box_t *bmq_bounds_box (const bmq_bounds_t *self, size_t i);
bool bmq_bounds_rotatable (const bmq_bounds_t *self);
/* What something put "on" the plan's objects at (x, y) stands on: the
 * highest box over that point (its top is the surface, its x/y extent the
 * room there). False when no box covers the point. */
bool bmq_bounds_support (const bmq_bounds_t *self, double x, double y, bmq_box_t *surface);

#endif
