/* palette_rna — the curated palette checked against the running Blender's RNA
 * (issue 3): each allowlisted bpy.ops operator's parameters, types, defaults,
 * enum items and hard limits, as the add-on's rna_info command reports them
 * (bpy.ops.X.Y.get_rna_type ()), merged with the curated entry.
 *
 * The merge only ever narrows: the merged palette accepts a subset of what the
 * curated one accepts. So validators that have merged and validators that
 * have not (yet) can serve side by side, and a plan a merged validator
 * accepts is one every validator accepts.
 *
 * Rules, per bpy.ops operation (builtins such as object.material have no RNA
 * and stay curated-only; an operation absent from `rna` is left unchecked):
 *   - Blender lacks it (rna value null): the operation is dropped.
 *   - each curated parameter must exist in the RNA with a compatible type
 *     (float: FLOAT; int: INT or FLOAT; bool: BOOLEAN; enum: ENUM, not a flag
 *     set; string: STRING; vec3: FLOAT[3]; color: FLOAT[3|4]);
 *   - bounds: the tighter wins (curated min/max against hard_min/hard_max);
 *     numbers within float32 rounding of each other count as equal;
 *   - enum items: the curated items Blender knows (an enum whose items Blender
 *     computes at run time comes back empty and keeps the curated items);
 *   - string max_len: the smaller;
 *   - defaults: a curated default Blender's limits refuse is replaced by
 *     Blender's default, or removed; with no curated default, Blender's is
 *     published when it fits the bounds, and otherwise the parameter becomes
 *     required (leaving it out would let Blender use an out-of-bounds value);
 *   - a parameter that fails a check is dropped, or the whole operation when
 *     that parameter is required or used by the vertex cost;
 *   - an RNA property Blender requires that the curated entry lacks drops the
 *     operation (it could never run);
 *   - descriptions missing from the curated entry come from the RNA.
 * Every finding is appended to `notes` as {"level": "warn"|"info",
 * "operation", "param" (when about one), "note"}. */
#ifndef BMQ_PALETTE_RNA_H
#define BMQ_PALETTE_RNA_H

#include <jansson.h>
#include <stdbool.h>

/* True when `operation` is a Blender operator name (bpy.ops.*), i.e. has RNA. */
bool bmq_palette_rna_wanted (const char *operation);

/* Property paths (issue 27): a path operation with `rna: Struct.prop` is asked
 * of Blender as "bpy.types.Struct.prop"; the add-on's rna_info answers it like
 * an operator with one parameter, "value" (the property), plus "readonly".
 * The merge treats that parameter like an operator's (types, hard limits,
 * enum items, max_len) and drops the path when Blender lacks the property or
 * holds it read-only. */
/* The name to ask Blender for operation `name` with palette entry `spec`
 * (its own name for bpy.ops.*, bpy.types.Struct.prop for a path with rna),
 * written into buf; NULL when it has no RNA to ask for. */
const char *bmq_palette_rna_ask (const char *name, const json_t *spec, char *buf, size_t len);
/* Whether s is Struct.property (letters/digits/_ struct, lower-case
 * property, not denied). */
bool bmq_palette_rna_property_ok (const char *s);

/* Merge. `curated`: the palette document as palette.yaml parses ({version,
 * limits, operations}); `rna`: operation → rna_info result, or null when the
 * running Blender lacks it. Returns a new document of the same shape (load it
 * with bmq_palette_from_json), NULL when `curated` is not a palette document.
 * `notes` (an array, may be NULL) receives the findings. */
json_t *bmq_palette_rna_merge (const json_t *curated, const json_t *rna, json_t *notes);

#endif
