/* palette — the capability palette: which operations a plan may use and the
 * type and bounds of every parameter (seed 000 FR-002, proto/palette.yaml).
 *
 * The palette file is trusted configuration, but it is still checked hard at
 * load time (unknown types, min > max, defaults out of bounds, typos in keys):
 * a mistake there would silently widen what the validator lets through.
 * Lookups go through hash tables built once at load, so validating a step
 * costs a handful of hash probes.
 *
 * The palette is immutable after load and may be shared by threads. */
#ifndef BMQ_PALETTE_H
#define BMQ_PALETTE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct bmq_palette_t bmq_palette_t;
typedef struct bmq_palette_op_t bmq_palette_op_t;        /* one operation, owned by its palette */
typedef struct bmq_palette_param_t bmq_palette_param_t;  /* one parameter, owned by its operation */

/* Hard ceilings on what a palette file may configure. */
#define BMQ_PALETTE_MAX_OPS       1024
#define BMQ_PALETTE_MAX_PARAMS    64      /* per operation */
#define BMQ_PALETTE_MAX_STEPS     10000   /* limits.max_steps ceiling */
#define BMQ_PALETTE_MAX_NAME_LEN  63      /* Blender's ID name limit */
#define BMQ_PALETTE_MAX_STRING    4096    /* string max_len ceiling */

/* Load and check a palette file. NULL on error, with a message in err
 * (naming the file, the operation and the parameter at fault). */
bmq_palette_t *bmq_palette_load (const char *path, char *err, size_t errlen);
/* Same from a parsed document ({version, limits, operations}). */
bmq_palette_t *bmq_palette_from_json (const json_t *doc, char *err, size_t errlen);
/* Destroy; safe to call twice, nulls the caller's pointer. */
void bmq_palette_destroy (bmq_palette_t **self_p);

size_t bmq_palette_count (const bmq_palette_t *self);
bool bmq_palette_has (const bmq_palette_t *self, const char *operation);
/* The palette in seed 001's shape:
 * {"<operation>": {"<param>": {"type", "required", "default", "min", "max",
 *   "max_len", "items", "description"}}} (keys only where they apply).
 * New reference; caller decrefs. */
json_t *bmq_palette_to_json (const bmq_palette_t *self);
/* The full palette for an AI that plans: {"version", "limits", "operations":
 * {"<operation>": {"description", "creates", "acts_on", "params": {…}}}}.
 * New reference; caller decrefs. */
json_t *bmq_palette_describe (const bmq_palette_t *self);
/* What discover_capabilities / `blendmq capabilities` publish (seed 001 shape,
 * plus descriptions): {"<operation>": {"description", "creates" | "acts_on" |
 * "deletes": "object", "target": "required" (when it must be given),
 * "params": {"<param>": {"type", "required" (only when true), "default",
 * "min", "max", "max_len", "items", "description"}}}}.
 * compact: {"<operation>": "<signature>"}, one line per operation for an LLM
 * prompt, e.g. "creates; radius float 0.001..1000 =1" or "target; value! vec3
 * -10..10" ("target" takes a target, "target!" needs one; "!" after a
 * parameter marks it required, "=" a default; no descriptions); a property
 * path's line starts with "path" (and its full entry has "path": true).
 * New reference (palette_publish.c). */
json_t *bmq_palette_capabilities (const bmq_palette_t *self, bool compact);

int bmq_palette_max_steps (const bmq_palette_t *self);
int bmq_palette_max_name_len (const bmq_palette_t *self);
double bmq_palette_max_vertices (const bmq_palette_t *self);

/* Lookups used by the plan validator. `name` need not be NUL-terminated. */
const bmq_palette_op_t *bmq_palette_op (const bmq_palette_t *self, const char *name, size_t len);
const char *bmq_palette_op_name (const bmq_palette_op_t *op);
bool bmq_palette_op_creates (const bmq_palette_op_t *op);   /* adds one object */
bool bmq_palette_op_acts_on (const bmq_palette_op_t *op);   /* changes an existing object */
bool bmq_palette_op_deletes (const bmq_palette_op_t *op);   /* removes the object it acts on */
/* The step must name its target: it deletes, creates from its target
 * (duplicate), or its cost depends on the target's size (cost.multiplies).
 * Relying on "the current object" there would make a wrong guess costly. */
bool bmq_palette_op_needs_target (const bmq_palette_op_t *op);
size_t bmq_palette_op_param_count (const bmq_palette_op_t *op);
const bmq_palette_param_t *bmq_palette_op_param_at (const bmq_palette_op_t *op, size_t index);
const bmq_palette_param_t *bmq_palette_op_param (const bmq_palette_op_t *op, const char *name, size_t len);
/* Comma-separated parameter names, for "unknown parameter" messages. */
const char *bmq_palette_op_param_list (const bmq_palette_op_t *op);
/* Vertex estimate of one step (0 when the operation has no cost). Parameters
 * missing or ill-typed in `params` count at their default. */
double bmq_palette_op_vertices (const bmq_palette_op_t *op, const json_t *params);
/* The factor an acts_on step applies to its object's vertex estimate
 * (cost.multiplies; 1 when none, never below 1). */
double bmq_palette_op_multiplier (const bmq_palette_op_t *op, const json_t *params);

/* ---- property paths (palette_path.c, issue 27) ----------------------------
 * An operation with `path: true` in the palette is a property template:
 * object.<path> (acts on the step's target, else the current object) or
 * scene.<path>, with one parameter, value. A plan's operation may name it as
 *   object[.active].<path>[.<component>][.<verb>]   or   scene.<path>[...]
 * where each [] of the template is written ["Name"] or [N], <component> is
 * x|y|z|w, r|g|b|a or 0..3 (vec3 and color only) and <verb> set (default),
 * add or mul (numbers only). `object.active.` is `object.` (the target, else
 * the current object). What value must be:
 *   set             the template's type and bounds (a component: a number
 *                   within the same bounds);
 *   add             the same shape, each number within +-(max - min);
 *   mul             the same shape (a float for an int), each number within
 *                   +-BMQ_PALETTE_PATH_MUL_MAX.
 * The add-on applies add and mul only when the result stays within the
 * template's bounds (and Blender's RNA limits); otherwise the step fails.
 * Segments starting with '_' or holding "__", and those that reach files,
 * code, drivers, handlers or RNA internals (filepath, bl_rna, id_data, ...)
 * are refused, in the palette file and in plans. */
#define BMQ_PALETTE_PATH_MUL_MAX 1000
typedef enum { BMQ_PALETTE_PATH_SET, BMQ_PALETTE_PATH_ADD, BMQ_PALETTE_PATH_MUL } bmq_palette_path_verb_t;
typedef struct {
    const bmq_palette_op_t *op;            /* the template */
    const bmq_palette_param_t *value;      /* what params.value must be for this form */
    int component;                         /* -1: the whole value */
    bmq_palette_path_verb_t verb;
    bool active;                           /* written object.active. */
    int subscripts;                        /* ["Name"] / [N] given */
} bmq_palette_path_t;
bool bmq_palette_op_is_path (const bmq_palette_op_t *op);
/* 1: `name` is a path of the palette (out filled); 0: it does not start with
 * object. or scene. (not a path); -1: refused, with the reason. */
int bmq_palette_path_resolve (const bmq_palette_t *self, const char *name, size_t len, bmq_palette_path_t *out,
                              char *reason, size_t rlen);

const char *bmq_palette_param_name (const bmq_palette_param_t *param);
bool bmq_palette_param_required (const bmq_palette_param_t *param);
/* Check one value against the parameter's type and bounds. 0 if it conforms;
 * -1 with a human-readable reason (naming the bound) otherwise. */
int bmq_palette_param_check (const bmq_palette_param_t *param, const json_t *value,
                             char *reason, size_t reasonlen);

#endif
