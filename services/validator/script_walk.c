/* script_walk — the allowlist walk: the driver (two passes, one dispatch per
 * node kind) and the helpers every rule uses; see script_walk.h for the rules
 * and why they are sound. The rules live in script_walk_names.c (bindings,
 * names, imports), script_walk_attrs.c (attribute chains, bpy, stores),
 * script_walk_calls.c (the rule of last resort) and script_walk_caps.c (loop,
 * range, size caps). */
#include "script_walk_internal.h"

#include <string.h>

/* ---------------------------------------------------------------- helpers */


void walk_error (walk_t *w, const char *rule, const char *fmt, const char *a, const char *b)
{
    char ca[64], cb[64];
    if (w->at)
        bmq_script_position (w->at, &w->line, &w->col);
    bmq_script_report_error (w->r, w->line, w->col, rule, fmt, bmq_script_clip (ca, sizeof ca, a, 48),
                             bmq_script_clip (cb, sizeof cb, b ? b : "", 48));
}

/* A finding whose message the walker wrote itself (not clipped like quoted script text). */
void walk_error_msg (walk_t *w, const char *rule, const char *msg)
{
    if (w->at)
        bmq_script_position (w->at, &w->line, &w->col);
    bmq_script_report_error (w->r, w->line, w->col, rule, "%s", msg);
}

/* The children of a node, in _fields order. A node the parser built holds
 * its fields in its instance dict, inserted in _fields order (ast2obj sets
 * them in that order, then the positions), under the same interned names as
 * _fields holds. So the dict's entries, read in order, are the fields: an
 * entry is used only when its key IS the field's name object (one dict has
 * one entry per key, so that entry is the field's value, exactly what
 * bmq_script_get finds); at the first entry that is not, the rest are looked
 * up one by one as before. This spares the field's lookup in the dict and
 * the node's class lookup per field in each pass (about a tenth of the walk
 * at 500 lines). */
void walk_children (walk_t *w, PyObject *node, void (*fn) (walk_t *, PyObject *))
{
    PyObject *fields = bmq_script_ast_fields (node);
    PyObject *dict = fields ? bmq_script_node_dict (node) : NULL;
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; fields && i < PyTuple_GET_SIZE (fields); i++) {
        PyObject *field = PyTuple_GET_ITEM (fields, i), *key, *v = NULL;
        if (dict && PyDict_Next (dict, &pos, &key, &v) && key == field)
            Py_INCREF (v);
        else {
            dict = NULL;
            v = bmq_script_get (node, field);
        }
        if (!v)
            continue;
        if (PyList_Check (v)) {
            for (Py_ssize_t k = 0; k < PyList_GET_SIZE (v); k++) {
                PyObject *item = PyList_GET_ITEM (v, k);
                if (bmq_script_ast_is_node (item))
                    fn (w, item);
            }
        }
        else if (bmq_script_ast_is_node (v))
            fn (w, v);
        Py_DECREF (v);
    }
}

void walk_visit_field (walk_t *w, PyObject *node, PyObject *field)
{
    PyObject *v = bmq_script_get (node, field);
    if (!v)
        return;
    if (PyList_Check (v)) {
        for (Py_ssize_t k = 0; k < PyList_GET_SIZE (v); k++)
            if (bmq_script_ast_is_node (PyList_GET_ITEM (v, k)))
                walk_visit (w, PyList_GET_ITEM (v, k));
    }
    else if (bmq_script_ast_is_node (v))
        walk_visit (w, v);
    Py_DECREF (v);
}

bmq_ast_kind_t walk_kind_of_field (walk_t *w, PyObject *node, PyObject *field)
{
    PyObject *v = bmq_script_get (node, field);
    bmq_ast_kind_t k = v ? bmq_script_ast_kind (v) : BMQ_AST_OTHER;
    Py_XDECREF (v);
    return k;
}


static void s_function (walk_t *w, PyObject *node)
{
    PyObject *decorators = bmq_script_get (node, w->n->decorator_list);
    if (decorators && PyList_Check (decorators) && PyList_GET_SIZE (decorators) > 0)
        walk_error (w, "decorator", "decorators are not allowed%s%s", "", NULL);
    Py_XDECREF (decorators);
    PyObject *name = bmq_script_get (node, w->n->name);
    walk_check_binding (w, name, false);
    Py_XDECREF (name);
    /* a def and a loop do not nest: a function body starts at loop depth 0
     * (it runs when called, and each call is bounded by the sandbox) */
    int saved_depth = w->loop_depth;
    double saved_iter = w->iterations;
    w->loop_depth = 0;
    w->iterations = 1;
    walk_visit_field (w, node, w->n->args);
    walk_visit_field (w, node, w->n->returns);
    walk_visit_field (w, node, w->n->body);
    w->loop_depth = saved_depth;
    w->iterations = saved_iter;
}

static void s_subscript (walk_t *w, PyObject *node)
{
    PyObject *slice = bmq_script_get (node, w->n->slice);
    const char *text;
    Py_ssize_t len;
    if (slice && bmq_script_literal_str (slice, &text, &len) && text[0] == '_')
        walk_error (w, "underscore", "subscript keys beginning with '_' are not allowed: [\"%s\"]%s", text, NULL);
    Py_XDECREF (slice);
    walk_children (w, node, walk_visit);
}

/* `except:` and `except BaseException` would swallow the live watchdog's
 * timeout (point 5 in script_walk.h). */
static void s_except_handler (walk_t *w, PyObject *node)
{
    const bmq_script_names_t *n = w->n;
    PyObject *t = bmq_script_get (node, n->type);
    bmq_ast_kind_t tk = t ? bmq_script_ast_kind (t) : BMQ_AST_OTHER;
    PyObject *elts = tk == BMQ_AST_Tuple ? bmq_script_get (t, n->elts) : NULL;
    bool base = tk == BMQ_AST_Name && !strcmp (bmq_script_get_str (t, n->id), "BaseException");
    for (Py_ssize_t i = 0; elts && PyList_Check (elts) && i < PyList_GET_SIZE (elts); i++)
        base |= bmq_script_ast_kind (PyList_GET_ITEM (elts, i)) == BMQ_AST_Name
                && !strcmp (bmq_script_get_str (PyList_GET_ITEM (elts, i), n->id), "BaseException");
    if (!t || t == Py_None || base)
        walk_error (w, "except", "%s is not allowed: name the exceptions (except Exception:)%s",
                    base ? "catching BaseException" : "a bare 'except:'", NULL);
    Py_XDECREF (elts);
    Py_XDECREF (t);
    PyObject *v = bmq_script_get (node, n->name);
    if (v && v != Py_None)
        walk_check_binding (w, v, false);
    Py_XDECREF (v);
    walk_children (w, node, walk_visit);
}

static void s_for (walk_t *w, PyObject *node)
{
    const bmq_script_names_t *n = w->n;
    PyObject *v = bmq_script_get (node, n->iter);
    double size = v && bmq_script_ast_kind (v) == BMQ_AST_Call ? walk_range (w, v) : -1;
    Py_XDECREF (v);
    PyObject *before[] = { n->target, n->iter }, *body[] = { n->body };
    walk_loop (w, node, size, before, 2, body, 1);
    walk_visit_field (w, node, n->orelse);
}

static void s_while (walk_t *w, PyObject *node)
{
    const bmq_script_names_t *n = w->n;
    PyObject *before[] = { n->test }, *body[] = { n->body };
    walk_loop (w, node, -1, before, 1, body, 1);
    walk_visit_field (w, node, n->orelse);
}

void walk_visit (walk_t *w, PyObject *node)
{
    if (++w->depth > WALK_MAX_DEPTH) {
        w->depth--;
        return;                     /* pass 1 reported it */
    }
    PyObject *saved_at = w->at;
    bmq_ast_kind_t kind = bmq_script_ast_kind (node);
    if (kind == BMQ_AST_Constant)               /* file-writing node types, simulation caches (issue 23) */
        walk_denied_string (w, node);
    if (kind == BMQ_AST_Load || kind == BMQ_AST_Store || kind == BMQ_AST_Del || kind == BMQ_AST_Constant) {
        w->depth--;
        return;
    }
    w->at = node;
    const bmq_script_names_t *n = w->n;
    PyObject *v;
    switch (kind) {
    case BMQ_AST_Name: walk_name (w, node, false); break;
    case BMQ_AST_Attribute: { walk_op_t op = { 0 }; walk_attribute (w, node, false, &op); break; }
    case BMQ_AST_Call: walk_call (w, node); break;
    case BMQ_AST_Subscript: s_subscript (w, node); break;
    case BMQ_AST_BinOp: walk_binop (w, node); break;
    case BMQ_AST_Import: walk_import (w, node, false); break;
    case BMQ_AST_ImportFrom: walk_import (w, node, true); break;
    case BMQ_AST_Global: case BMQ_AST_Nonlocal: walk_global (w, node); break;
    case BMQ_AST_FunctionDef: s_function (w, node); break;
    case BMQ_AST_AsyncFunctionDef: case BMQ_AST_AsyncFor: case BMQ_AST_AsyncWith: case BMQ_AST_Await:
        walk_error (w, "async", "async code is not allowed%s%s", "", NULL);
        break;
    case BMQ_AST_ClassDef:
        walk_error (w, "class", "class definitions are not allowed%s%s", "", NULL);
        break;
    case BMQ_AST_Match:
        walk_error (w, "match", "match statements are not allowed%s%s", "", NULL);
        break;
    case BMQ_AST_arg:
        v = bmq_script_get (node, n->arg);
        walk_check_binding (w, v, false);
        Py_XDECREF (v);
        walk_visit_field (w, node, n->annotation);
        break;
    case BMQ_AST_ExceptHandler: s_except_handler (w, node); break;
    case BMQ_AST_Assign: walk_cap_targets (w, node, n->targets, true); walk_children (w, node, walk_visit); break;
    case BMQ_AST_AugAssign: case BMQ_AST_AnnAssign:
        walk_cap_targets (w, node, n->target, false);
        walk_children (w, node, walk_visit);
        break;
    case BMQ_AST_For: s_for (w, node); break;
    case BMQ_AST_While: s_while (w, node); break;
    case BMQ_AST_ListComp: case BMQ_AST_SetComp: case BMQ_AST_DictComp: case BMQ_AST_GeneratorExp:
        walk_comprehension (w, node);
        break;
    default:
        walk_children (w, node, walk_visit);
        break;
    }
    w->at = saved_at;
    w->depth--;
}

void bmq_script_walk (const bmq_script_policy_t *policy, PyObject *tree, bmq_script_report_t *report, size_t *nodes)
{
    walk_t w = { .p = policy, .n = bmq_script_names (), .r = report, .iterations = 1, .line = 0, .col = 0 };
    w.bound = PySet_New (NULL);
    w.aliases = PyDict_New ();
    w.counts = PyDict_New ();
    w.kinds = PyDict_New ();
    w.pinned = PySet_New (NULL);
    if (!w.bound || !w.aliases || !w.counts || !w.kinds || !w.pinned) {
        PyErr_Clear ();
        bmq_script_report_error (report, 0, 0, "internal", "out of memory");
        goto done;
    }
    walk_collect (&w, tree);
    w.depth = 0;
    if (nodes)
        *nodes = w.nodes;
    if (w.over_nodes) {
        bmq_script_report_error (report, 0, 0, "size", "the script has more than %zu syntax nodes",
                                 policy->limits.max_nodes);
        goto done;
    }
    if (w.too_deep) {
        bmq_script_report_error (report, 0, 0, "size", "the script nests deeper than %d levels", WALK_MAX_DEPTH);
        goto done;
    }
    walk_visit (&w, tree);
    if (!w.uses_bpy)
        bmq_script_report_warning (report, 0, 0, "bpy", "the script does not use bpy");
done:
    Py_XDECREF (w.bound);
    Py_XDECREF (w.aliases);
    Py_XDECREF (w.counts);
    Py_XDECREF (w.kinds);
    Py_XDECREF (w.pinned);
    PyErr_Clear ();
}
