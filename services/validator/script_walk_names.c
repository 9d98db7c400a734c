/* script_walk_names — name tracking: pass 1 counts every binding site per
 * name, pins import- and def-bound names and records bpy aliases; pass 2
 * checks names where they are bound and used, imports, global/nonlocal.
 * Points 2 and 3 of the soundness argument in script_walk.h. */
#include "script_walk_internal.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- pass 1: bindings */


/* Record one binding site of `name`. Import and def bindings pin the name:
 * it must then have exactly one binding site in the whole script. */
static void s_bind_as (walk_t *w, PyObject *name, walk_bind_kind_t kind)
{
    if (!name || !PyUnicode_Check (name))
        return;
    if (PySet_Add (w->bound, name) < 0)
        PyErr_Clear ();
    PyObject *c = PyDict_GetItemWithError (w->counts, name);
    long n = c ? PyLong_AsLong (c) + 1 : 1;
    PyObject *nv = PyLong_FromLong (n);
    if (!nv || PyDict_SetItem (w->counts, name, nv) < 0)
        PyErr_Clear ();
    Py_XDECREF (nv);
    if (n == 1 && !PyDict_Contains (w->kinds, name)) {
        PyObject *kv = PyLong_FromLong (kind);
        if (!kv || PyDict_SetItem (w->kinds, name, kv) < 0)
            PyErr_Clear ();
        Py_XDECREF (kv);
    }
    if (kind == WALK_BIND_MODULE || kind == WALK_BIND_FROM || kind == WALK_BIND_DEF)
        if (PySet_Add (w->pinned, name) < 0)
            PyErr_Clear ();
    PyErr_Clear ();
}

static void s_bind (walk_t *w, PyObject *name) { s_bind_as (w, name, WALK_BIND_OTHER); }

long walk_count (walk_t *w, PyObject *name)
{
    PyObject *c = name ? PyDict_GetItemWithError (w->counts, name) : NULL;
    PyErr_Clear ();
    return c ? PyLong_AsLong (c) : 0;
}

walk_bind_kind_t walk_first_kind (walk_t *w, PyObject *name)
{
    PyObject *k = name ? PyDict_GetItemWithError (w->kinds, name) : NULL;
    PyErr_Clear ();
    return k ? (walk_bind_kind_t) PyLong_AsLong (k) : WALK_BIND_OTHER;
}

/* The kind of a name bound exactly once (WALK_BIND_OTHER otherwise). */
walk_bind_kind_t walk_single_kind (walk_t *w, PyObject *name)
{
    if (walk_count (w, name) != 1)
        return WALK_BIND_OTHER;
    PyObject *k = PyDict_GetItemWithError (w->kinds, name);
    PyErr_Clear ();
    return k ? (walk_bind_kind_t) PyLong_AsLong (k) : WALK_BIND_OTHER;
}

static void s_bind_alias (walk_t *w, PyObject *name, const char *chain)
{
    PyObject *v = PyUnicode_FromString (chain);
    if (!v || PyDict_SetItem (w->aliases, name, v) < 0)
        PyErr_Clear ();
    Py_XDECREF (v);
}

static void s_collect_imports (walk_t *w, PyObject *node, bool from)
{
    const char *module = from ? bmq_script_get_str (node, w->n->module) : "";
    PyObject *names = bmq_script_get (node, w->n->names);
    for (Py_ssize_t i = 0; names && PyList_Check (names) && i < PyList_GET_SIZE (names); i++) {
        PyObject *alias = PyList_GET_ITEM (names, i);
        PyObject *name = bmq_script_get (alias, w->n->name);
        PyObject *asname = bmq_script_get (alias, w->n->asname);
        const char *full = name && PyUnicode_Check (name) ? PyUnicode_AsUTF8 (name) : NULL;
        if (!full) {
            PyErr_Clear ();
        }
        else if (asname && asname != Py_None) {
            s_bind_as (w, asname, from ? WALK_BIND_FROM : WALK_BIND_MODULE);
            if (!from && strcmp (full, "bpy") == 0)
                s_bind_alias (w, asname, "bpy");
            else if (from && strcmp (module, "bpy") == 0) {
                char chain[80];
                snprintf (chain, sizeof chain, "bpy.%s", full);
                s_bind_alias (w, asname, chain);
            }
        }
        else if (from) {
            s_bind_as (w, name, WALK_BIND_FROM);
            if (strcmp (module, "bpy") == 0) {
                char chain[80];
                snprintf (chain, sizeof chain, "bpy.%s", full);
                s_bind_alias (w, name, chain);
            }
        }
        else {                              /* import a.b binds a */
            const char *dot = strchr (full, '.');
            PyObject *root = PyUnicode_FromStringAndSize (full, dot ? dot - full : (Py_ssize_t) strlen (full));
            s_bind_as (w, root, WALK_BIND_MODULE);
            if (root && strcmp (PyUnicode_AsUTF8 (root), "bpy") == 0)
                s_bind_alias (w, root, "bpy");
            Py_XDECREF (root);
            PyErr_Clear ();
        }
        Py_XDECREF (name);
        Py_XDECREF (asname);
    }
    Py_XDECREF (names);
}

void walk_collect (walk_t *w, PyObject *node)
{
    if (w->over_nodes || w->too_deep)
        return;
    if (++w->nodes > w->p->limits.max_nodes) {
        w->over_nodes = true;
        return;
    }
    if (++w->depth > WALK_MAX_DEPTH) {
        w->too_deep = true;
        w->depth--;
        return;
    }
    PyObject *v;
    switch (bmq_script_ast_kind (node)) {
    case BMQ_AST_Name:
        if (walk_kind_of_field (w, node, w->n->ctx) != BMQ_AST_Load) {
            v = bmq_script_get (node, w->n->id);
            s_bind (w, v);
            Py_XDECREF (v);
        }
        break;
    case BMQ_AST_FunctionDef: case BMQ_AST_AsyncFunctionDef: case BMQ_AST_ClassDef:
        v = bmq_script_get (node, w->n->name);
        s_bind_as (w, v, WALK_BIND_DEF);
        Py_XDECREF (v);
        break;
    case BMQ_AST_Assign: {          /* f = lambda ...: a callable like a def, if bound once */
        PyObject *t = bmq_script_get (node, w->n->targets);
        v = bmq_script_get (node, w->n->value);
        if (t && PyList_Check (t) && PyList_GET_SIZE (t) == 1 && v && bmq_script_ast_kind (v) == BMQ_AST_Lambda
            && bmq_script_ast_kind (PyList_GET_ITEM (t, 0)) == BMQ_AST_Name) {
            PyObject *id = bmq_script_get (PyList_GET_ITEM (t, 0), w->n->id);
            if (id && PyUnicode_Check (id) && !PyDict_Contains (w->kinds, id)) {
                PyObject *kv = PyLong_FromLong (WALK_BIND_LAMBDA);
                if (!kv || PyDict_SetItem (w->kinds, id, kv) < 0)
                    PyErr_Clear ();
                Py_XDECREF (kv);
            }
            Py_XDECREF (id);
        }
        Py_XDECREF (t);
        Py_XDECREF (v);
        PyErr_Clear ();
        break;
    }
    case BMQ_AST_arg:
        v = bmq_script_get (node, w->n->arg);
        s_bind (w, v);
        Py_XDECREF (v);
        break;
    case BMQ_AST_ExceptHandler:
        v = bmq_script_get (node, w->n->name);
        if (v && v != Py_None)
            s_bind (w, v);
        Py_XDECREF (v);
        break;
    case BMQ_AST_Import: s_collect_imports (w, node, false); break;
    case BMQ_AST_ImportFrom: s_collect_imports (w, node, true); break;
    default: break;
    }
    walk_children (w, node, walk_collect);
    w->depth--;
}

/* ---------------------------------------------------------------- names */

/* A name being bound (assignment target, def, argument, import alias, …). */
void walk_check_binding (walk_t *w, PyObject *name, bool is_import_of_alias)
{
    const char *s = name && PyUnicode_Check (name) ? PyUnicode_AsUTF8 (name) : NULL;
    if (!s) {
        PyErr_Clear ();
        return;
    }
    if (s[0] == '_')
        walk_error (w, "underscore", "names beginning with '_' are not allowed: %s%s", s, NULL);
    else if (walk_has (w->p->forbidden, name))
        walk_error (w, "builtin", "the builtin name '%s' may not be rebound%s", s, NULL);
    else if (walk_has (w->pinned, name) && walk_count (w, name) > 1)
        walk_error (w, "rebind", "'%s' is bound by an import or a def, so it must be bound exactly once in the whole "
                    "script; it is bound %s times (use another name)", s, walk_count (w, name) == 2 ? "2" : "several");
    else if (!is_import_of_alias && walk_is_alias (w, name))
        walk_error (w, "bpy", "'%s' names the bpy module (or part of it) and may not be rebound%s", s, NULL);
}

void walk_name (walk_t *w, PyObject *node, bool head)
{
    PyObject *id = bmq_script_get (node, w->n->id);
    const char *s = id && PyUnicode_Check (id) ? PyUnicode_AsUTF8 (id) : NULL;
    if (!s) {
        PyErr_Clear ();
        Py_XDECREF (id);
        return;
    }
    if (walk_kind_of_field (w, node, w->n->ctx) != BMQ_AST_Load)
        walk_check_binding (w, id, false);
    else if (s[0] == '_')
        walk_error (w, "underscore", "names beginning with '_' are not allowed: %s%s", s, NULL);
    else if (walk_is_alias (w, id))
        walk_error (w, "bpy", "'%s' must be followed by an allowed attribute chain (bpy.ops.CATEGORY.OPERATOR(...), bpy.data.COLLECTION, bpy.context.ATTRIBUTE)%s", s, NULL);
    else if (!head && walk_first_kind (w, id) == WALK_BIND_MODULE)
        walk_error (w, "module", "'%s' names a module: use it only as the head of an attribute chain (math.sin(x)), "
                    "never as a value%s", s, NULL);
    else if (walk_has (w->bound, id))
        ;
    else if (walk_has (w->p->builtins, id))
        ;
    else if (walk_has (w->p->forbidden, id))
        walk_error (w, "builtin", "the builtin '%s' is not allowed%s", s, NULL);
    else
        walk_error (w, "name", "unknown name '%s': not defined by the script and not an allowed builtin%s", s, NULL);
    Py_DECREF (id);
}

/* ---------------------------------------------------------------- statements */

void walk_import (walk_t *w, PyObject *node, bool from)
{
    char list[200] = "";
    const char *module = from ? bmq_script_get_str (node, w->n->module) : NULL;
    if (from) {
        PyObject *level = bmq_script_get (node, w->n->level);
        long lv = level && PyLong_Check (level) ? PyLong_AsLong (level) : 0;
        Py_XDECREF (level);
        if (lv != 0) {
            walk_error (w, "import", "relative imports are not allowed%s%s", "", NULL);
            return;
        }
    }
    PyObject *names = bmq_script_get (node, w->n->names);
    for (Py_ssize_t i = 0; names && PyList_Check (names) && i < PyList_GET_SIZE (names); i++) {
        PyObject *alias = PyList_GET_ITEM (names, i);
        const char *name = bmq_script_get_str (alias, w->n->name);
        PyObject *asname = bmq_script_get (alias, w->n->asname);
        const char *full = from ? module : name;
        char root[64];
        size_t rl = strcspn (full, ".");
        snprintf (root, sizeof root, "%.*s", (int) (rl < 63 ? rl : 63), full);
        if (!bmq_script_policy_has_str (w->p->modules, root)) {
            size_t k;
            json_t *m;
            size_t used = 0;
            json_array_foreach (json_object_get (w->p->rules, "modules"), k, m)
                used += (size_t) snprintf (list + used, used < sizeof list ? sizeof list - used : 0, "%s%s",
                                           k ? ", " : "", json_string_value (m));
            walk_error (w, "import", "import of '%s' is not allowed (allowed: %s)", full, list);
        }
        else if (strchr (full, '_') && (full[0] == '_' || strstr (full, "._")))
            walk_error (w, "underscore", "modules beginning with '_' are not allowed: %s%s", full, NULL);
        else if (strcmp (root, "bpy") == 0 && strcmp (full, "bpy") != 0)
            walk_error (w, "import", "import bpy itself, not %s%s", full, NULL);
        else if (from && strcmp (name, "*") == 0)
            walk_error (w, "import", "'from %s import *' is not allowed%s", full, NULL);
        else if (from && name[0] == '_')
            walk_error (w, "underscore", "names beginning with '_' are not allowed: %s%s", name, NULL);
        else if (from && strcmp (full, "bpy") == 0 && !bmq_script_policy_has_str (w->p->bpy_roots, name))
            walk_error (w, "bpy", "'from bpy import %s' is not allowed (only ops, data, context)%s", name, NULL);
        if (asname && asname != Py_None)
            walk_check_binding (w, asname, true);
        else if (!from) {                   /* import a.b binds a */
            PyObject *r = PyUnicode_FromString (root);
            if (r)
                walk_check_binding (w, r, true);
            Py_XDECREF (r);
            PyErr_Clear ();
        }
        else if (from) {
            PyObject *n = PyUnicode_FromString (name);
            if (n && name[0] != '_' && strcmp (name, "*") != 0)
                walk_check_binding (w, n, true);
            Py_XDECREF (n);
            PyErr_Clear ();
        }
        if (strcmp (root, "bpy") == 0)
            w->uses_bpy = true;
        Py_XDECREF (asname);
    }
    Py_XDECREF (names);
}

void walk_global (walk_t *w, PyObject *node)
{
    PyObject *names = bmq_script_get (node, w->n->names);
    for (Py_ssize_t i = 0; names && PyList_Check (names) && i < PyList_GET_SIZE (names); i++) {
        PyObject *name = PyList_GET_ITEM (names, i);
        if (walk_has (w->pinned, name))
            walk_error (w, "rebind", "global/nonlocal '%s': a name bound by an import or a def may not be redeclared%s",
                        PyUnicode_Check (name) ? PyUnicode_AsUTF8 (name) : "?", NULL);
        walk_check_binding (w, name, false);
        if (!walk_has (w->bound, name))
            walk_error (w, "name", "global/nonlocal '%s' must name a variable the script assigns%s",
                        PyUnicode_Check (name) ? PyUnicode_AsUTF8 (name) : "?", NULL);
    }
    Py_XDECREF (names);
}
