/* plan_validator — check a whole action plan against the capability palette
 * before anything runs (seed 000 FR-005, SC-002).
 *
 * A plan is a JSON array of steps; a step is an object with
 *   operation  string, required, a key of the palette
 *   params     object, optional (null counts as absent), checked per parameter
 *   name       string, optional: names the object the step creates
 *              (^[A-Za-z0-9_][A-Za-z0-9_. -]{0,62}$, unique within the plan)
 *   target     string, optional: the object an acts_on step changes; must be
 *              the name given by an earlier step
 * and nothing else. An acts_on step without a target changes the current
 * object: the one most recently created or targeted; there must be one.
 * A step that deletes, copies (creates + acts_on) or multiplies its object's
 * size (cost.multiplies) must give its target. A deleted object cannot be
 * targeted again, and after a delete nothing is current.
 * Vertices are estimated per object (palette cost): a creating step adds its
 * object's (a copy its target's too), a multiplying step scales its object's;
 * the plan's total (deleted objects included: an upper bound) is capped by
 * limits.max_vertices.
 * Trees (issue 26): object.parent steps whose target and parent are objects
 * the validator knows are tracked as a tree (a step that would close a cycle
 * is refused). BMQ_PLAN_TREE_COPY copies its target and every object under
 * it: the copy costs the whole tree's estimate (what hung under a deleted
 * object and unnamed objects parented there included: an upper bound), and
 * stays under its target's parent as in Blender. Its target must
 * be an object this plan built and nothing under it may come from the scene
 * (their size is unknown here): such a step is refused, not guessed at.
 *
 * The plan is input from an AI or a network peer, so it is treated as hostile:
 * nothing here asserts on it, every loop is bounded by the palette's
 * max_steps, and text quoted from the plan in messages is clipped to
 * printable ASCII. */
#ifndef BMQ_PLAN_VALIDATOR_H
#define BMQ_PLAN_VALIDATOR_H

#include "palette.h"

/* At most this many errors are listed; the rest are counted in
 * "errors_omitted" so a hostile plan cannot make the verdict huge. */
#define BMQ_PLAN_MAX_ERRORS 256

/* The palette operation that copies a whole tree (the add-on's builtin). */
#define BMQ_PLAN_TREE_COPY "object.duplicate_tree"

/* Check the WHOLE plan; never stops at the first problem. Returns a new verdict:
 *   {"accepted": bool, "steps": n,
 *    "errors": [{"step": i, "field": "operation" | "params" | "params.radius" |
 *                "name" | "target" | "step" | "vertices" | "<unknown key>",
 *                "reason": "human readable"}],
 *    "errors_omitted": n   (only when more than BMQ_PLAN_MAX_ERRORS)}
 * Plan-level problems (not an array, too many steps) have step -1. Errors are
 * ordered by step, then field; the same plan always gives the same verdict.
 * Steps beyond max_steps are not examined. NULL only when out of memory. */
json_t *bmq_plan_validate (const bmq_palette_t *palette, const json_t *plan);

/* The same, for a plan that may act on objects already in the scene:
 * scene_objects is an array of their names (at most BMQ_PLAN_MAX_SCENE_OBJECTS
 * are considered; may be NULL). A target may then name one of them, and a step
 * may not give a new object one of their names. */
#define BMQ_PLAN_MAX_SCENE_OBJECTS 10000
json_t *bmq_plan_validate_in_scene (const bmq_palette_t *palette, const json_t *plan, const json_t *scene_objects);

#endif
