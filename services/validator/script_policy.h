/* script_policy — the effective script rules (script_rules) turned into what
 * the walker looks names up in: Python frozensets of str, built once under
 * the GIL, plus the limits and the operator RNA table. Read-only after
 * construction, so any number of checks may share one policy. */
#ifndef BMQ_SCRIPT_POLICY_H
#define BMQ_SCRIPT_POLICY_H

#include "script_python.h"
#include "script_rules.h"

typedef struct {
    PyObject *modules, *builtins, *forbidden, *denied_attributes, *bpy_roots,
             *data_collections, *context_attributes, *op_categories, *denied_ops,
             *subdivision_names, *count_names, *resolution_names, *methods;
    json_t *denied_op_words;        /* array of strings */
    json_t *denied_path_subtypes;   /* array of strings */
    json_t *denied_string_words;    /* array of strings: a str constant holding one is refused */
    json_t *rules;                  /* the effective rules (for messages) */
    json_t *rna;                    /* "bpy.ops.X.Y" → rna_info result | null; NULL: none loaded */
    bmq_script_limits_t limits;
} bmq_script_policy_t;

/* Build from effective rules (borrowed; a reference is kept) and an RNA table
 * (borrowed; a reference is kept; may be NULL). `forbidden` is every Python
 * builtin not in rules.builtins, plus rules.forbidden_builtins. GIL held.
 * 0 / -1. */
int  bmq_script_policy_init (bmq_script_policy_t *self, json_t *rules, json_t *rna);
void bmq_script_policy_clear (bmq_script_policy_t *self);

/* True when the set holds `name`. */
bool bmq_script_policy_has (PyObject *set, PyObject *name);
bool bmq_script_policy_has_str (PyObject *set, const char *name);

#endif
