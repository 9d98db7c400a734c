/* script_rules — what a BPY script may use: the allowlists and caps the
 * script walker enforces (issue 8, FR-004), as data.
 *
 * The rules are a JSON object. The defaults are declared once, in
 * proto/script_rules.json (the add-on's run-time guard, script_exec.py, takes
 * the same lists from it, generated into blendmq/script_rules.py); every key is
 * optional in a configuration and falls back to the built-in default
 * (bmq_script_rules_default). Lists
 * replace the default list, limits are merged key by key:
 *   modules             importable modules (bpy, bmesh, mathutils, math, random)
 *   builtins            builtin names a script may use (an allowlist)
 *   forbidden_builtins  builtins named in the error message when used (exec, eval, …);
 *                       anything not in `builtins` is refused either way
 *   denied_attributes   attribute names refused on ANY object (handlers, driver_add,
 *                       filepath, as_module, gi_frame, format, …): the walker cannot
 *                       know an object's type, so dangerous names are refused everywhere
 *   bpy_roots           bpy.<root> allowed: ops, data, context
 *   data_collections    bpy.data.<collection> allowed
 *   context_attributes  bpy.context.<attribute> allowed
 *   op_categories       bpy.ops.<category> allowed
 *   denied_ops          bpy.ops.<category>.<name> refused inside allowed categories
 *   denied_op_words     an operator whose name contains one of these is refused
 *                       (export, import, save, load, bake, …)
 *   denied_path_subtypes  operator STRING parameters of these RNA subtypes are refused
 *   denied_string_words  a str constant holding one of these is refused (rule host_write):
 *                       CompositorNodeOutputFile and every *OutputFile* node type, FLUID,
 *                       SMOKE, CLOTH, DYNAMIC_PAINT (types that write files on the host)
 *   subdivision_names / count_names / resolution_names
 *                       keyword or attribute names whose literal values are capped by
 *                       limits.max_subdivision / max_array_count / max_resolution
 *   methods             method names a call `EXPR.NAME(...)` may use (the rule of last
 *                       resort: a call the walker cannot resolve to a checked operator,
 *                       a builtin, a script function, a module function or one of these
 *                       is refused)
 *   limits  {max_bytes, max_nodes, max_loop_depth, max_range, max_loop_iterations,
 *            max_subdivision, max_array_count, max_resolution, max_repeat,
 *            max_pow_bits, max_errors} */
#ifndef BMQ_SCRIPT_RULES_H
#define BMQ_SCRIPT_RULES_H

#include <jansson.h>
#include <stddef.h>

typedef struct {
    size_t max_bytes;           /* script size (default 262144) */
    size_t max_nodes;           /* AST nodes (default 60000) */
    int    max_loop_depth;      /* nested for/while/comprehensions (default 4) */
    double max_range;           /* a literal range() bound (default 100000) */
    double max_loop_iterations; /* product of literal range sizes of nested loops (default 1e6) */
    double max_subdivision;     /* literal subdivision levels (default 6) */
    double max_array_count;     /* literal array counts (default 1000) */
    double max_resolution;      /* literal segments, vertices, cuts (default 4096) */
    double max_repeat;          /* literal sequence repetition "x" * n (default 1e6) */
    double max_pow_bits;        /* size of a literal a ** b, in bits (default 65536) */
    size_t max_errors;          /* errors listed in a verdict (default 50) */
} bmq_script_limits_t;

/* The built-in rules (new reference). */
json_t *bmq_script_rules_default (void);

/* The effective rules: the defaults with `config` laid over them (config may
 * be NULL). New reference, or NULL with a reason in err when the config is
 * malformed (a list that is not a list of strings, an unknown key, a limit
 * that is not a positive number). */
json_t *bmq_script_rules_effective (const json_t *config, char *err, size_t errlen);

/* The limits of an effective rules document. */
void bmq_script_rules_limits (const json_t *rules, bmq_script_limits_t *limits);

#endif
