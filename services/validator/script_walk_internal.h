/* script_walk_internal — what the files of the allowlist walk share (not
 * part of bmq_script's API: include script_walk.h for that).
 *
 * The walk state, the binding kinds pass 1 records, and the rules each file
 * supplies to the driver's dispatch (script_walk.c). GIL held throughout. */
#ifndef BMQ_SCRIPT_WALK_INTERNAL_H
#define BMQ_SCRIPT_WALK_INTERNAL_H

#include "script_walk.h"

#include "script_literal.h"
#include "script_ops.h"

#define WALK_MAX_DEPTH 1200     /* recursion guard; CPython's own guard stops deeper trees first */
#define WALK_MAX_CHAIN 32

typedef struct {
    const bmq_script_policy_t *p;
    const bmq_script_names_t *n;
    bmq_script_report_t *r;
    PyObject *bound;            /* set: names the script binds anywhere */
    PyObject *aliases;          /* dict: name → "bpy" | "bpy.ops" | "bpy.data" | "bpy.context" */
    PyObject *counts;           /* dict: name → number of binding sites, all scopes together */
    PyObject *kinds;            /* dict: name → walk_bind_kind_t of its first binding site */
    PyObject *pinned;           /* set: names bound by an import or a def (must be bound once) */
    size_t nodes;
    bool over_nodes, too_deep, uses_bpy;
    int depth, loop_depth, line, col;
    PyObject *at;               /* the node findings are reported at (borrowed); its position
                                 * is read only when there is something to report */
    double iterations;          /* product of the literal range sizes of the enclosing loops */
} walk_t;

typedef enum { WALK_BIND_OTHER = 0, WALK_BIND_MODULE, WALK_BIND_FROM, WALK_BIND_DEF, WALK_BIND_LAMBDA } walk_bind_kind_t;

/* An operator call found in a bpy chain, checked against its RNA by the caller. */
typedef struct {
    bool is_op;
    char category[64], name[96];
} walk_op_t;

static inline bool walk_has (PyObject *set, PyObject *name) { return bmq_script_policy_has (set, name); }

static inline bool walk_is_alias (walk_t *w, PyObject *name)
{
    PyObject *v = PyDict_GetItemWithError (w->aliases, name);
    if (!v)
        PyErr_Clear ();
    return v != NULL;
}

/* script_walk.c: dispatch, findings, children */
void walk_visit (walk_t *w, PyObject *node);
void walk_error (walk_t *w, const char *rule, const char *fmt, const char *a, const char *b);
void walk_error_msg (walk_t *w, const char *rule, const char *msg);
void walk_denied_string (walk_t *w, PyObject *node);
void walk_children (walk_t *w, PyObject *node, void (*fn) (walk_t *, PyObject *));
void walk_visit_field (walk_t *w, PyObject *node, PyObject *field);
bmq_ast_kind_t walk_kind_of_field (walk_t *w, PyObject *node, PyObject *field);

/* script_walk_names.c: pass 1 (binding sites) and the name rules */
void walk_collect (walk_t *w, PyObject *node);
long walk_count (walk_t *w, PyObject *name);
walk_bind_kind_t walk_first_kind (walk_t *w, PyObject *name);
walk_bind_kind_t walk_single_kind (walk_t *w, PyObject *name);
void walk_check_binding (walk_t *w, PyObject *name, bool is_import_of_alias);
void walk_name (walk_t *w, PyObject *node, bool head);
void walk_import (walk_t *w, PyObject *node, bool from);
void walk_global (walk_t *w, PyObject *node);

/* script_walk_attrs.c: attribute chains, bpy, the store rule */
void walk_attribute (walk_t *w, PyObject *node, bool called, walk_op_t *op);

/* script_walk_calls.c: the rule of last resort */
void walk_call (walk_t *w, PyObject *node);

/* script_walk_caps.c: size caps */
void walk_cap_named (walk_t *w, PyObject *name, PyObject *value);
void walk_cap_targets (walk_t *w, PyObject *node, PyObject *targets_field, bool list);
double walk_range (walk_t *w, PyObject *call);
void walk_binop (walk_t *w, PyObject *node);
void walk_loop (walk_t *w, PyObject *node, double size, PyObject *const *before, int nbefore,
                PyObject *const *body, int nbody);
void walk_comprehension (walk_t *w, PyObject *node);

#endif
