/* script_walk_calls — the rule of last resort (point 4 in script_walk.h):
 * every call must resolve to something checked, and so must every callable
 * handed to a builtin that calls it. */
#include "script_walk_internal.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- callees (the rule of last resort) */

/* Why `func` cannot be resolved to something checked, or NULL when it can:
 *   a Name: an allowed builtin the script never binds, or a name bound exactly
 *     once by a def, a `from M import name` or `name = lambda …`;
 *   an Attribute chain: rooted at a bpy alias (operators are checked where
 *     the chain is walked; any other bpy call must end in an allowed method
 *     name), at a module or a from-imported name bound once (the allowed
 *     modules' public API), or anything else ending in an allowed method name;
 *   a Lambda, only where a callable is passed (`as_value`), never called in place;
 *     where a callable is passed, a bound method (obj.meth) is refused too.
 * Everything else (a variable, a parameter, a subscript, a call's result) is
 * refused: the walker cannot know what it is. */
static const char *s_callee_problem (walk_t *w, PyObject *func, bool as_value, char *why, size_t len)
{
    bmq_ast_kind_t k = bmq_script_ast_kind (func);
    if (k == BMQ_AST_Lambda && as_value)
        return NULL;
    if (k == BMQ_AST_Name) {
        PyObject *id = bmq_script_get (func, w->n->id);
        const char *s = id && PyUnicode_Check (id) ? PyUnicode_AsUTF8 (id) : "?";
        walk_bind_kind_t kind = walk_single_kind (w, id);
        bool ok = !walk_has (w->bound, id) || kind == WALK_BIND_DEF       /* unbound: an allowed builtin, or walk_name reports it */
                  || kind == WALK_BIND_FROM || kind == WALK_BIND_LAMBDA;
        if (!ok)
            snprintf (why, len, "'%.48s' is not a function the walker can resolve (an allowed builtin the script "
                      "does not rebind, a def or a from-import bound exactly once)", s);
        Py_XDECREF (id);
        PyErr_Clear ();
        return ok ? NULL : why;
    }
    if (k != BMQ_AST_Attribute) {
        snprintf (why, len, "only named functions, module functions and methods may be called, not %s",
                  k == BMQ_AST_Call ? "the result of a call" : k == BMQ_AST_Subscript ? "an item of a container"
                  : k == BMQ_AST_Lambda ? "a lambda in place" : "this expression");
        return why;
    }
    const char *last = bmq_script_get_str (func, w->n->attr);
    const char *inner = last;           /* the attribute right after the chain's head */
    PyObject *cur = func;
    Py_INCREF (cur);
    for (int i = 0; i < WALK_MAX_CHAIN && bmq_script_ast_kind (cur) == BMQ_AST_Attribute; i++) {
        inner = bmq_script_get_str (cur, w->n->attr);     /* borrowed from cur's parent chain, alive via func */
        PyObject *next = bmq_script_get (cur, w->n->value);
        Py_DECREF (cur);
        cur = next;
        if (!cur)
            break;
    }
    bool module_api = false;
    if (cur && bmq_script_ast_kind (cur) == BMQ_AST_Name) {
        PyObject *id = bmq_script_get (cur, w->n->id);
        PyObject *chain = id ? PyDict_GetItemWithError (w->aliases, id) : NULL;
        const char *prefix = chain && PyUnicode_Check (chain) ? PyUnicode_AsUTF8 (chain) : NULL;
        if (prefix)     /* bpy: operator chains are judged where the chain is walked */
            module_api = !strcmp (prefix, "bpy.ops") || (!strcmp (prefix, "bpy") && !strcmp (inner, "ops"));
        else {
            walk_bind_kind_t kind = walk_single_kind (w, id);
            module_api = kind == WALK_BIND_MODULE || kind == WALK_BIND_FROM;
        }
        Py_XDECREF (id);
        PyErr_Clear ();
    }
    Py_XDECREF (cur);
    if (module_api || (!as_value && bmq_script_policy_has_str (w->p->methods, last)))
        return NULL;
    if (as_value) {             /* a bound method handed over is called where the walker cannot see it */
        snprintf (why, len, "pass a lambda or a def'd function, not the method .%.48s", last);
        return why;
    }
    snprintf (why, len, "the method .%.48s is not in the allowed method list (script rules: methods)", last);
    return why;
}

/* Callables handed to builtins that call them: map/filter's function, iter's
 * callable, and any key= argument. */
static void s_check_passed_callables (walk_t *w, PyObject *node, PyObject *func)
{
    char why[200];
    const char *fname = func && bmq_script_ast_kind (func) == BMQ_AST_Name ? bmq_script_get_str (func, w->n->id) : "";
    PyObject *args = bmq_script_get (node, w->n->args);
    Py_ssize_t nargs = args && PyList_Check (args) ? PyList_GET_SIZE (args) : 0;
    bool first_is_fn = !strcmp (fname, "map") || !strcmp (fname, "filter") || (!strcmp (fname, "iter") && nargs == 2);
    if (first_is_fn && nargs >= 1) {
        PyObject *a = PyList_GET_ITEM (args, 0);
        if (!(bmq_script_ast_kind (a) == BMQ_AST_Constant && !strcmp (fname, "filter"))   /* filter(None, …) */
            && s_callee_problem (w, a, true, why, sizeof why)) {
            char msg[300];
            w->at = a;
            snprintf (msg, sizeof msg, "%s() calls its argument: %s", fname, why);
            walk_error_msg (w, "call", msg);
        }
    }
    Py_XDECREF (args);
    PyObject *keywords = bmq_script_get (node, w->n->keywords);
    for (Py_ssize_t i = 0; keywords && PyList_Check (keywords) && i < PyList_GET_SIZE (keywords); i++) {
        PyObject *kw = PyList_GET_ITEM (keywords, i);
        PyObject *arg = bmq_script_get (kw, w->n->arg);
        const char *a = arg && PyUnicode_Check (arg) ? PyUnicode_AsUTF8 (arg) : NULL;
        w->at = kw;
        if (!strcmp (fname, "print") && (!a || !strcmp (a, "file")))
            walk_error (w, "call", "print() may only write to the script's output: no file= and no **keywords%s%s", "", NULL);
        else if (a && !strcmp (a, "key")) {
            PyObject *value = bmq_script_get (kw, w->n->value);
            if (value && bmq_script_ast_kind (value) != BMQ_AST_Constant && s_callee_problem (w, value, true, why, sizeof why))
            {
                char msg[300];
                snprintf (msg, sizeof msg, "key= is called: %s", why);
                walk_error_msg (w, "call", msg);
            }
            Py_XDECREF (value);
        }
        Py_XDECREF (arg);
        PyErr_Clear ();
    }
    Py_XDECREF (keywords);
}

void walk_call (walk_t *w, PyObject *node)
{
    walk_op_t op = { 0 };
    PyObject *func = bmq_script_get (node, w->n->func);
    PyObject *saved_at = w->at;
    if (func && bmq_script_ast_kind (func) == BMQ_AST_Attribute)
        walk_attribute (w, func, true, &op);
    else if (func)
        walk_visit (w, func);
    char why[200];
    if (func && !op.is_op && s_callee_problem (w, func, false, why, sizeof why)) {
        w->at = node;
        walk_error_msg (w, "call", why);
    }
    if (func)
        s_check_passed_callables (w, node, func);
    Py_XDECREF (func);
    w->at = saved_at;
    if (op.is_op) {
        int line = w->line, col = w->col;
        bmq_script_position (node, &line, &col);
        bmq_script_ops_check (w->p, op.category, op.name, node, line, col, w->r);
    }
    walk_range (w, node);
    PyObject *keywords = bmq_script_get (node, w->n->keywords);
    for (Py_ssize_t i = 0; keywords && PyList_Check (keywords) && i < PyList_GET_SIZE (keywords); i++) {
        PyObject *kw = PyList_GET_ITEM (keywords, i);
        PyObject *arg = bmq_script_get (kw, w->n->arg);
        PyObject *value = bmq_script_get (kw, w->n->value);
        w->at = kw;
        if (arg && PyUnicode_Check (arg) && PyUnicode_AsUTF8 (arg)[0] == '_')
            walk_error (w, "underscore", "keyword arguments beginning with '_' are not allowed: %s%s", PyUnicode_AsUTF8 (arg), NULL);
        if (arg && value)
            walk_cap_named (w, arg, value);
        if (value)
            walk_visit (w, value);
        Py_XDECREF (arg);
        Py_XDECREF (value);
        w->at = saved_at;
    }
    Py_XDECREF (keywords);
    walk_visit_field (w, node, w->n->args);
}
