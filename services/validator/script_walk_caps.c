/* script_walk_caps — the size caps: literal ranges and their product over
 * nested loops, loop nesting, subdivision levels / array counts /
 * resolutions, literal repetition and powers. */
#include "script_walk_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- caps */

void walk_cap_named (walk_t *w, PyObject *name, PyObject *value)
{
    double v;
    bool is_int;
    if (!name || !PyUnicode_Check (name) || !bmq_script_literal_number (value, &v, &is_int))
        return;
    const bmq_script_limits_t *l = &w->p->limits;
    const char *what = NULL;
    double cap = 0;
    if (walk_has (w->p->subdivision_names, name)) { what = "subdivision level"; cap = l->max_subdivision; }
    else if (walk_has (w->p->count_names, name)) { what = "array count"; cap = l->max_array_count; }
    else if (walk_has (w->p->resolution_names, name)) { what = "resolution"; cap = l->max_resolution; }
    if (what && !(fabs (v) <= cap)) {
        char msg[200];
        snprintf (msg, sizeof msg, "%s = %g exceeds the %s cap of %g", PyUnicode_AsUTF8 (name), v, what, cap);
        walk_error (w, "limit", "%s%s", msg, NULL);
    }
}

void walk_cap_targets (walk_t *w, PyObject *node, PyObject *targets_field, bool list)
{
    PyObject *value = bmq_script_get (node, w->n->value);
    PyObject *t = bmq_script_get (node, targets_field);
    if (value && t) {
        Py_ssize_t count = list && PyList_Check (t) ? PyList_GET_SIZE (t) : 1;
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *target = list ? PyList_GET_ITEM (t, i) : t;
            if (bmq_script_ast_kind (target) == BMQ_AST_Attribute) {
                PyObject *attr = bmq_script_get (target, w->n->attr);
                walk_cap_named (w, attr, value);
                Py_XDECREF (attr);
            }
        }
    }
    Py_XDECREF (value);
    Py_XDECREF (t);
}

/* range(...) with literal bounds: the iteration count, or -1 when not literal. */
double walk_range (walk_t *w, PyObject *call)
{
    PyObject *func = bmq_script_get (call, w->n->func);
    bool is_range = func && bmq_script_ast_kind (func) == BMQ_AST_Name
                    && strcmp (bmq_script_get_str (func, w->n->id), "range") == 0;
    Py_XDECREF (func);
    if (!is_range)
        return -1;
    PyObject *args = bmq_script_get (call, w->n->args);
    double a[3] = { 0, 0, 1 };
    Py_ssize_t n = args && PyList_Check (args) ? PyList_GET_SIZE (args) : 0;
    bool literal = n >= 1 && n <= 3;
    for (Py_ssize_t i = 0; i < n && i < 3; i++) {
        double v;
        bool is_int;
        if (!bmq_script_literal_number (PyList_GET_ITEM (args, i), &v, &is_int)) {
            literal = false;
            continue;
        }
        if (!(fabs (v) <= w->p->limits.max_range)) {
            char msg[160];
            snprintf (msg, sizeof msg, "range() bound %g exceeds the cap of %g", v, w->p->limits.max_range);
            walk_error (w, "limit", "%s%s", msg, NULL);
            literal = false;
        }
        a[n == 1 ? 1 : i] = v;
    }
    Py_XDECREF (args);
    if (!literal || a[2] == 0)
        return -1;
    double size = ceil ((a[1] - a[0]) / a[2]);
    return size > 0 ? size : 0;
}

void walk_binop (walk_t *w, PyObject *node)
{
    PyObject *op = bmq_script_get (node, w->n->op);
    PyObject *left = bmq_script_get (node, w->n->left), *right = bmq_script_get (node, w->n->right);
    bmq_ast_kind_t k = op ? bmq_script_ast_kind (op) : BMQ_AST_OTHER;
    double a, b;
    bool ia, ib;
    bool la = left && bmq_script_literal_number (left, &a, &ia);
    bool lb = right && bmq_script_literal_number (right, &b, &ib);
    const bmq_script_limits_t *l = &w->p->limits;
    char msg[160] = "";
    if (k == BMQ_AST_Pow && lb && ib && fabs (b) > 1) {
        double bits = la ? (fabs (a) > 1 ? b * log2 (fabs (a)) : 0) : b;
        if (!(bits <= l->max_pow_bits))
            snprintf (msg, sizeof msg, "a literal power of about %g bits exceeds the cap of %g", bits, l->max_pow_bits);
    }
    else if (k == BMQ_AST_LShift && lb && !(b <= l->max_pow_bits))
        snprintf (msg, sizeof msg, "a literal shift by %g bits exceeds the cap of %g", b, l->max_pow_bits);
    else if (k == BMQ_AST_Mult) {
        bmq_ast_kind_t kl = left ? bmq_script_ast_kind (left) : BMQ_AST_OTHER;
        bmq_ast_kind_t kr = right ? bmq_script_ast_kind (right) : BMQ_AST_OTHER;
        bool seq_l = kl == BMQ_AST_List || kl == BMQ_AST_Tuple || (kl == BMQ_AST_Constant && !la);
        bool seq_r = kr == BMQ_AST_List || kr == BMQ_AST_Tuple || (kr == BMQ_AST_Constant && !lb);
        double times = seq_l && lb ? b : seq_r && la ? a : 0;
        if ((seq_l && lb) || (seq_r && la))
            if (!(fabs (times) <= l->max_repeat))
                snprintf (msg, sizeof msg, "repeating a sequence %g times exceeds the cap of %g", times, l->max_repeat);
    }
    if (msg[0])
        walk_error (w, "limit", "%s%s", msg, NULL);
    Py_XDECREF (op);
    Py_XDECREF (left);
    Py_XDECREF (right);
    walk_children (w, node, walk_visit);
}

void walk_loop (walk_t *w, PyObject *node, double size, PyObject *const *before, int nbefore,
                PyObject *const *body, int nbody)
{
    for (int i = 0; i < nbefore; i++)
        walk_visit_field (w, node, before[i]);
    double saved = w->iterations;
    w->loop_depth++;
    if (w->loop_depth == w->p->limits.max_loop_depth + 1)
        walk_error (w, "limit", "loops nested deeper than %s%s", "the cap", NULL);
    if (size >= 0) {
        w->iterations *= size > 1 ? size : 1;
        if (w->iterations > w->p->limits.max_loop_iterations && saved <= w->p->limits.max_loop_iterations) {
            char msg[160];
            snprintf (msg, sizeof msg, "nested literal ranges run about %g iterations, over the cap of %g",
                      w->iterations, w->p->limits.max_loop_iterations);
            walk_error (w, "limit", "%s%s", msg, NULL);
        }
    }
    for (int i = 0; i < nbody; i++)
        walk_visit_field (w, node, body[i]);
    w->loop_depth--;
    w->iterations = saved;
}

void walk_comprehension (walk_t *w, PyObject *node)
{
    PyObject *gens = bmq_script_get (node, w->n->generators);
    int saved_depth = w->loop_depth;
    double saved_iter = w->iterations;
    bool reported = saved_iter > w->p->limits.max_loop_iterations;
    for (Py_ssize_t i = 0; gens && PyList_Check (gens) && i < PyList_GET_SIZE (gens); i++) {
        PyObject *g = PyList_GET_ITEM (gens, i);
        PyObject *iter = bmq_script_get (g, w->n->iter);
        double size = iter && bmq_script_ast_kind (iter) == BMQ_AST_Call ? walk_range (w, iter) : -1;
        Py_XDECREF (iter);
        walk_children (w, g, walk_visit);         /* target, iter, ifs */
        w->loop_depth++;
        if (w->loop_depth == w->p->limits.max_loop_depth + 1)
            walk_error (w, "limit", "loops nested deeper than %s%s", "the cap", NULL);
        if (size > 1)
            w->iterations *= size;
        if (w->iterations > w->p->limits.max_loop_iterations && !reported) {
            char msg[160];
            snprintf (msg, sizeof msg, "nested literal ranges run about %g iterations, over the cap of %g",
                      w->iterations, w->p->limits.max_loop_iterations);
            walk_error (w, "limit", "%s%s", msg, NULL);
            reported = true;
        }
    }
    PyObject *all = bmq_script_ast_fields (node);     /* elt, or key and value */
    for (Py_ssize_t i = 0; all && i < PyTuple_GET_SIZE (all); i++) {
        PyObject *f = PyTuple_GET_ITEM (all, i);
        if (PyUnicode_Compare (f, w->n->generators) != 0)
            walk_visit_field (w, node, f);
    }
    w->loop_depth = saved_depth;
    w->iterations = saved_iter;
    Py_XDECREF (gens);
}
