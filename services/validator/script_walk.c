/* script_walk — the allowlist walk; see script_walk.h for the rules. */
#include "script_walk.h"

#include "script_literal.h"
#include "script_ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define S_MAX_DEPTH 1200        /* recursion guard; CPython's own guard stops deeper trees first */
#define S_MAX_CHAIN 32

typedef struct {
    const bmq_script_policy_t *p;
    const bmq_script_names_t *n;
    bmq_script_report_t *r;
    PyObject *bound;            /* set: names the script binds anywhere */
    PyObject *aliases;          /* dict: name → "bpy" | "bpy.ops" | "bpy.data" | "bpy.context" */
    PyObject *counts;           /* dict: name → number of binding sites, all scopes together */
    PyObject *kinds;            /* dict: name → s_bind_kind_t of its first binding site */
    PyObject *pinned;           /* set: names bound by an import or a def (must be bound once) */
    size_t nodes;
    bool over_nodes, too_deep, uses_bpy;
    int depth, loop_depth, line, col;
    PyObject *at;               /* the node findings are reported at (borrowed); its position
                                 * is read only when there is something to report */
    double iterations;          /* product of the literal range sizes of the enclosing loops */
} s_walk_t;

static void s_visit (s_walk_t *w, PyObject *node);

/* ---------------------------------------------------------------- helpers */

static bool s_has (PyObject *set, PyObject *name) { return bmq_script_policy_has (set, name); }

static bool s_is_alias (s_walk_t *w, PyObject *name)
{
    PyObject *v = PyDict_GetItemWithError (w->aliases, name);
    if (!v)
        PyErr_Clear ();
    return v != NULL;
}

static void s_error (s_walk_t *w, const char *rule, const char *fmt, const char *a, const char *b)
{
    char ca[64], cb[64];
    if (w->at)
        bmq_script_position (w->at, &w->line, &w->col);
    bmq_script_report_error (w->r, w->line, w->col, rule, fmt, bmq_script_clip (ca, sizeof ca, a, 48),
                             bmq_script_clip (cb, sizeof cb, b ? b : "", 48));
}

/* A finding whose message the walker wrote itself (not clipped like quoted script text). */
static void s_error_msg (s_walk_t *w, const char *rule, const char *msg)
{
    if (w->at)
        bmq_script_position (w->at, &w->line, &w->col);
    bmq_script_report_error (w->r, w->line, w->col, rule, "%s", msg);
}

static void s_children (s_walk_t *w, PyObject *node, void (*fn) (s_walk_t *, PyObject *))
{
    PyObject *fields = bmq_script_ast_fields (node);
    for (Py_ssize_t i = 0; fields && i < PyTuple_GET_SIZE (fields); i++) {
        PyObject *v = bmq_script_get (node, PyTuple_GET_ITEM (fields, i));
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

static void s_visit_field (s_walk_t *w, PyObject *node, PyObject *field)
{
    PyObject *v = bmq_script_get (node, field);
    if (!v)
        return;
    if (PyList_Check (v)) {
        for (Py_ssize_t k = 0; k < PyList_GET_SIZE (v); k++)
            if (bmq_script_ast_is_node (PyList_GET_ITEM (v, k)))
                s_visit (w, PyList_GET_ITEM (v, k));
    }
    else if (bmq_script_ast_is_node (v))
        s_visit (w, v);
    Py_DECREF (v);
}

static bmq_ast_kind_t s_kind_of_field (s_walk_t *w, PyObject *node, PyObject *field)
{
    PyObject *v = bmq_script_get (node, field);
    bmq_ast_kind_t k = v ? bmq_script_ast_kind (v) : BMQ_AST_OTHER;
    Py_XDECREF (v);
    return k;
}

/* ---------------------------------------------------------------- pass 1: bindings */

typedef enum { S_BIND_OTHER = 0, S_BIND_MODULE, S_BIND_FROM, S_BIND_DEF, S_BIND_LAMBDA } s_bind_kind_t;

/* Record one binding site of `name`. Import and def bindings pin the name:
 * it must then have exactly one binding site in the whole script. */
static void s_bind_as (s_walk_t *w, PyObject *name, s_bind_kind_t kind)
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
    if (kind == S_BIND_MODULE || kind == S_BIND_FROM || kind == S_BIND_DEF)
        if (PySet_Add (w->pinned, name) < 0)
            PyErr_Clear ();
    PyErr_Clear ();
}

static void s_bind (s_walk_t *w, PyObject *name) { s_bind_as (w, name, S_BIND_OTHER); }

static long s_count (s_walk_t *w, PyObject *name)
{
    PyObject *c = name ? PyDict_GetItemWithError (w->counts, name) : NULL;
    PyErr_Clear ();
    return c ? PyLong_AsLong (c) : 0;
}

static s_bind_kind_t s_first_kind (s_walk_t *w, PyObject *name)
{
    PyObject *k = name ? PyDict_GetItemWithError (w->kinds, name) : NULL;
    PyErr_Clear ();
    return k ? (s_bind_kind_t) PyLong_AsLong (k) : S_BIND_OTHER;
}

/* The kind of a name bound exactly once (S_BIND_OTHER otherwise). */
static s_bind_kind_t s_single_kind (s_walk_t *w, PyObject *name)
{
    if (s_count (w, name) != 1)
        return S_BIND_OTHER;
    PyObject *k = PyDict_GetItemWithError (w->kinds, name);
    PyErr_Clear ();
    return k ? (s_bind_kind_t) PyLong_AsLong (k) : S_BIND_OTHER;
}

static void s_bind_alias (s_walk_t *w, PyObject *name, const char *chain)
{
    PyObject *v = PyUnicode_FromString (chain);
    if (!v || PyDict_SetItem (w->aliases, name, v) < 0)
        PyErr_Clear ();
    Py_XDECREF (v);
}

static void s_collect_imports (s_walk_t *w, PyObject *node, bool from)
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
            s_bind_as (w, asname, from ? S_BIND_FROM : S_BIND_MODULE);
            if (!from && strcmp (full, "bpy") == 0)
                s_bind_alias (w, asname, "bpy");
            else if (from && strcmp (module, "bpy") == 0) {
                char chain[80];
                snprintf (chain, sizeof chain, "bpy.%s", full);
                s_bind_alias (w, asname, chain);
            }
        }
        else if (from) {
            s_bind_as (w, name, S_BIND_FROM);
            if (strcmp (module, "bpy") == 0) {
                char chain[80];
                snprintf (chain, sizeof chain, "bpy.%s", full);
                s_bind_alias (w, name, chain);
            }
        }
        else {                              /* import a.b binds a */
            const char *dot = strchr (full, '.');
            PyObject *root = PyUnicode_FromStringAndSize (full, dot ? dot - full : (Py_ssize_t) strlen (full));
            s_bind_as (w, root, S_BIND_MODULE);
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

static void s_collect (s_walk_t *w, PyObject *node)
{
    if (w->over_nodes || w->too_deep)
        return;
    if (++w->nodes > w->p->limits.max_nodes) {
        w->over_nodes = true;
        return;
    }
    if (++w->depth > S_MAX_DEPTH) {
        w->too_deep = true;
        w->depth--;
        return;
    }
    PyObject *v;
    switch (bmq_script_ast_kind (node)) {
    case BMQ_AST_Name:
        if (s_kind_of_field (w, node, w->n->ctx) != BMQ_AST_Load) {
            v = bmq_script_get (node, w->n->id);
            s_bind (w, v);
            Py_XDECREF (v);
        }
        break;
    case BMQ_AST_FunctionDef: case BMQ_AST_AsyncFunctionDef: case BMQ_AST_ClassDef:
        v = bmq_script_get (node, w->n->name);
        s_bind_as (w, v, S_BIND_DEF);
        Py_XDECREF (v);
        break;
    case BMQ_AST_Assign: {          /* f = lambda ...: a callable like a def, if bound once */
        PyObject *t = bmq_script_get (node, w->n->targets);
        v = bmq_script_get (node, w->n->value);
        if (t && PyList_Check (t) && PyList_GET_SIZE (t) == 1 && v && bmq_script_ast_kind (v) == BMQ_AST_Lambda
            && bmq_script_ast_kind (PyList_GET_ITEM (t, 0)) == BMQ_AST_Name) {
            PyObject *id = bmq_script_get (PyList_GET_ITEM (t, 0), w->n->id);
            if (id && PyUnicode_Check (id) && !PyDict_Contains (w->kinds, id)) {
                PyObject *kv = PyLong_FromLong (S_BIND_LAMBDA);
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
    s_children (w, node, s_collect);
    w->depth--;
}

/* ---------------------------------------------------------------- names */

/* A name being bound (assignment target, def, argument, import alias, …). */
static void s_check_binding (s_walk_t *w, PyObject *name, bool is_import_of_alias)
{
    const char *s = name && PyUnicode_Check (name) ? PyUnicode_AsUTF8 (name) : NULL;
    if (!s) {
        PyErr_Clear ();
        return;
    }
    if (s[0] == '_')
        s_error (w, "underscore", "names beginning with '_' are not allowed: %s%s", s, NULL);
    else if (s_has (w->p->forbidden, name))
        s_error (w, "builtin", "the builtin name '%s' may not be rebound%s", s, NULL);
    else if (s_has (w->pinned, name) && s_count (w, name) > 1)
        s_error (w, "rebind", "'%s' is bound by an import or a def, so it must be bound exactly once in the whole "
                 "script; it is bound %s times (use another name)", s, s_count (w, name) == 2 ? "2" : "several");
    else if (!is_import_of_alias && s_is_alias (w, name))
        s_error (w, "bpy", "'%s' names the bpy module (or part of it) and may not be rebound%s", s, NULL);
}

static void s_name (s_walk_t *w, PyObject *node, bool head)
{
    PyObject *id = bmq_script_get (node, w->n->id);
    const char *s = id && PyUnicode_Check (id) ? PyUnicode_AsUTF8 (id) : NULL;
    if (!s) {
        PyErr_Clear ();
        Py_XDECREF (id);
        return;
    }
    if (s_kind_of_field (w, node, w->n->ctx) != BMQ_AST_Load)
        s_check_binding (w, id, false);
    else if (s[0] == '_')
        s_error (w, "underscore", "names beginning with '_' are not allowed: %s%s", s, NULL);
    else if (s_is_alias (w, id))
        s_error (w, "bpy", "'%s' must be followed by an allowed attribute chain (bpy.ops.CATEGORY.OPERATOR(...), bpy.data.COLLECTION, bpy.context.ATTRIBUTE)%s", s, NULL);
    else if (!head && s_first_kind (w, id) == S_BIND_MODULE)
        s_error (w, "module", "'%s' names a module: use it only as the head of an attribute chain (math.sin(x)), "
                 "never as a value%s", s, NULL);
    else if (s_has (w->bound, id))
        ;
    else if (s_has (w->p->builtins, id))
        ;
    else if (s_has (w->p->forbidden, id))
        s_error (w, "builtin", "the builtin '%s' is not allowed%s", s, NULL);
    else
        s_error (w, "name", "unknown name '%s': not defined by the script and not an allowed builtin%s", s, NULL);
    Py_DECREF (id);
}

/* ---------------------------------------------------------------- bpy chains */

typedef struct {
    bool is_op;
    char category[64], name[96];
} s_op_t;

static bool s_word_denied (s_walk_t *w, const char *op)
{
    size_t i;
    json_t *word;
    json_array_foreach (w->p->denied_op_words, i, word)
        if (strstr (op, json_string_value (word)))
            return true;
    return false;
}

/* parts[0] is "bpy"; n parts in all. */
static void s_bpy_chain (s_walk_t *w, const char **parts, int n, bool called, s_op_t *op)
{
    char buf[200];
    w->uses_bpy = true;
    if (n < 2) {
        s_error (w, "bpy", "bpy must be followed by an allowed attribute chain (bpy.ops.CATEGORY.OPERATOR(...), bpy.data.COLLECTION, bpy.context.ATTRIBUTE)%s%s", "", NULL);
        return;
    }
    if (!bmq_script_policy_has_str (w->p->bpy_roots, parts[1])) {
        s_error (w, "bpy", "bpy.%s is not allowed (a script reaches bpy only through bpy.ops, bpy.data and bpy.context)%s", parts[1], NULL);
        return;
    }
    if (strcmp (parts[1], "ops") == 0) {
        if (n >= 4) {
            snprintf (buf, sizeof buf, "bpy.ops.%s.%s", parts[2], parts[3]);
            bmq_script_report_operator (w->r, buf);
        }
        if (n < 4) {
            s_error (w, "operator", "bpy.ops%s%s is not an operator: call bpy.ops.CATEGORY.OPERATOR(...)",
                     n == 3 ? "." : "", n == 3 ? parts[2] : "");
            return;
        }
        if (n > 4) {
            s_error (w, "operator", "bpy.ops.%s.%s: only a direct call of the operator is allowed", parts[2], parts[3]);
            return;
        }
        if (!called) {
            s_error (w, "operator", "bpy.ops.%s.%s must be called where it is named, not stored or passed", parts[2], parts[3]);
            return;
        }
        if (!bmq_script_policy_has_str (w->p->op_categories, parts[2])) {
            s_error (w, "operator", "operators of category bpy.ops.%s are not allowed%s", parts[2], NULL);
            return;
        }
        snprintf (buf, sizeof buf, "%s.%s", parts[2], parts[3]);
        if (bmq_script_policy_has_str (w->p->denied_ops, buf) || s_word_denied (w, parts[3])) {
            s_error (w, "operator", "operator bpy.ops.%s is not allowed (files, baking, code or preferences)%s", buf, NULL);
            return;
        }
        op->is_op = true;
        snprintf (op->category, sizeof op->category, "%s", parts[2]);
        snprintf (op->name, sizeof op->name, "%s", parts[3]);
        return;
    }
    PyObject *allowed = strcmp (parts[1], "data") == 0 ? w->p->data_collections : w->p->context_attributes;
    if (n < 3)
        s_error (w, "bpy", "bpy.%s must be followed by one of its allowed attributes, not used as a value%s", parts[1], NULL);
    else if (!bmq_script_policy_has_str (allowed, parts[2])) {
        snprintf (buf, sizeof buf, "%s.%s", parts[1], parts[2]);
        s_error (w, "bpy", "bpy.%s is not allowed%s", buf, NULL);
    }
}

/* An attribute chain a.b.c (node is the outermost Attribute). */
static void s_attribute (s_walk_t *w, PyObject *node, bool called, s_op_t *op)
{
    PyObject *held[S_MAX_CHAIN + 1];
    const char *attrs[S_MAX_CHAIN];
    int count = 0, nheld = 0;
    PyObject *cur = node;
    Py_INCREF (cur);
    held[nheld++] = cur;
    PyObject *saved_at = w->at;
    while (bmq_script_ast_kind (cur) == BMQ_AST_Attribute && count < S_MAX_CHAIN) {
        w->at = cur;
        const char *a = bmq_script_get_str (cur, w->n->attr);
        PyObject *aobj = bmq_script_get (cur, w->n->attr);
        if (a[0] == '_')
            s_error (w, "underscore", "attributes beginning with '_' are not allowed: .%s%s", a, NULL);
        else if (aobj && s_has (w->p->denied_attributes, aobj))
            s_error (w, "attribute", "the attribute .%s is not allowed%s", a, NULL);
        else if (strcmp (a, "format") == 0 || strcmp (a, "format_map") == 0)
            s_error (w, "attribute", "str.%s is not allowed (use f-strings)%s", a, NULL);
        Py_XDECREF (aobj);
        w->at = saved_at;
        attrs[count++] = a;
        PyObject *next = bmq_script_get (cur, w->n->value);
        if (!next)
            break;
        cur = next;
        if (nheld <= S_MAX_CHAIN)
            held[nheld++] = cur;
        else
            Py_DECREF (cur);        /* cannot happen: count bounds nheld */
    }
    /* A store or del: a method name is never assigned (an object with an instance
     * dict — a def'd function, an exception, a random.Random — would otherwise
     * carry any callable under an allowlisted method name), and what an import
     * bound is read-only (math.sin = … would change what a module call means). */
    if (s_kind_of_field (w, node, w->n->ctx) != BMQ_AST_Load && count > 0) {
        w->at = node;
        if (bmq_script_policy_has_str (w->p->methods, attrs[0]))
            s_error (w, "attribute", "'.%s' names a method: it cannot be assigned or deleted%s", attrs[0], NULL);
        else if (bmq_script_ast_kind (cur) == BMQ_AST_Name) {
            PyObject *id = bmq_script_get (cur, w->n->id);
            s_bind_kind_t k = s_first_kind (w, id);
            if ((k == S_BIND_MODULE || k == S_BIND_FROM || k == S_BIND_DEF || k == S_BIND_LAMBDA) && !s_is_alias (w, id))
                s_error (w, "attribute", "'%s' was bound by an import or a def: its attributes are read-only%s",
                         bmq_script_get_str (cur, w->n->id), NULL);
            Py_XDECREF (id);
        }
        w->at = saved_at;
    }
    if (bmq_script_ast_kind (cur) == BMQ_AST_Attribute) {
        s_error (w, "size", "attribute chain longer than %s%s", "32", NULL);
        s_visit (w, cur);
    }
    else if (bmq_script_ast_kind (cur) == BMQ_AST_Name) {
        PyObject *id = bmq_script_get (cur, w->n->id);
        PyObject *chain = id ? PyDict_GetItemWithError (w->aliases, id) : NULL;
        if (!chain)
            PyErr_Clear ();
        if (chain && PyUnicode_Check (chain)) {
            /* alias prefix ("bpy", "bpy.data", …) + the attributes, outermost last */
            const char *parts[S_MAX_CHAIN + 2];
            int n = 0;
            const char *prefix = PyUnicode_AsUTF8 (chain);
            parts[n++] = "bpy";
            if (prefix && strncmp (prefix, "bpy.", 4) == 0)
                parts[n++] = prefix + 4;
            for (int k = count - 1; k >= 0; k--)
                parts[n++] = attrs[k];
            s_bpy_chain (w, parts, n, called, op);
        }
        else
            s_name (w, cur, true);
        Py_XDECREF (id);
    }
    else
        s_visit (w, cur);
    for (int k = 0; k < nheld; k++)
        Py_DECREF (held[k]);
}

/* ---------------------------------------------------------------- caps */

static void s_cap_named (s_walk_t *w, PyObject *name, PyObject *value)
{
    double v;
    bool is_int;
    if (!name || !PyUnicode_Check (name) || !bmq_script_literal_number (value, &v, &is_int))
        return;
    const bmq_script_limits_t *l = &w->p->limits;
    const char *what = NULL;
    double cap = 0;
    if (s_has (w->p->subdivision_names, name)) { what = "subdivision level"; cap = l->max_subdivision; }
    else if (s_has (w->p->count_names, name)) { what = "array count"; cap = l->max_array_count; }
    else if (s_has (w->p->resolution_names, name)) { what = "resolution"; cap = l->max_resolution; }
    if (what && !(fabs (v) <= cap)) {
        char msg[200];
        snprintf (msg, sizeof msg, "%s = %g exceeds the %s cap of %g", PyUnicode_AsUTF8 (name), v, what, cap);
        s_error (w, "limit", "%s%s", msg, NULL);
    }
}

static void s_cap_targets (s_walk_t *w, PyObject *node, PyObject *targets_field, bool list)
{
    PyObject *value = bmq_script_get (node, w->n->value);
    PyObject *t = bmq_script_get (node, targets_field);
    if (value && t) {
        Py_ssize_t count = list && PyList_Check (t) ? PyList_GET_SIZE (t) : 1;
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *target = list ? PyList_GET_ITEM (t, i) : t;
            if (bmq_script_ast_kind (target) == BMQ_AST_Attribute) {
                PyObject *attr = bmq_script_get (target, w->n->attr);
                s_cap_named (w, attr, value);
                Py_XDECREF (attr);
            }
        }
    }
    Py_XDECREF (value);
    Py_XDECREF (t);
}

/* range(...) with literal bounds: the iteration count, or -1 when not literal. */
static double s_range (s_walk_t *w, PyObject *call)
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
            s_error (w, "limit", "%s%s", msg, NULL);
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

static void s_binop (s_walk_t *w, PyObject *node)
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
        s_error (w, "limit", "%s%s", msg, NULL);
    Py_XDECREF (op);
    Py_XDECREF (left);
    Py_XDECREF (right);
    s_children (w, node, s_visit);
}

/* ---------------------------------------------------------------- statements */

static void s_import (s_walk_t *w, PyObject *node, bool from)
{
    char list[200] = "";
    const char *module = from ? bmq_script_get_str (node, w->n->module) : NULL;
    if (from) {
        PyObject *level = bmq_script_get (node, w->n->level);
        long lv = level && PyLong_Check (level) ? PyLong_AsLong (level) : 0;
        Py_XDECREF (level);
        if (lv != 0) {
            s_error (w, "import", "relative imports are not allowed%s%s", "", NULL);
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
            s_error (w, "import", "import of '%s' is not allowed (allowed: %s)", full, list);
        }
        else if (strchr (full, '_') && (full[0] == '_' || strstr (full, "._")))
            s_error (w, "underscore", "modules beginning with '_' are not allowed: %s%s", full, NULL);
        else if (strcmp (root, "bpy") == 0 && strcmp (full, "bpy") != 0)
            s_error (w, "import", "import bpy itself, not %s%s", full, NULL);
        else if (from && strcmp (name, "*") == 0)
            s_error (w, "import", "'from %s import *' is not allowed%s", full, NULL);
        else if (from && name[0] == '_')
            s_error (w, "underscore", "names beginning with '_' are not allowed: %s%s", name, NULL);
        else if (from && strcmp (full, "bpy") == 0 && !bmq_script_policy_has_str (w->p->bpy_roots, name))
            s_error (w, "bpy", "'from bpy import %s' is not allowed (only ops, data, context)%s", name, NULL);
        if (asname && asname != Py_None)
            s_check_binding (w, asname, true);
        else if (!from) {                   /* import a.b binds a */
            PyObject *r = PyUnicode_FromString (root);
            if (r)
                s_check_binding (w, r, true);
            Py_XDECREF (r);
            PyErr_Clear ();
        }
        else if (from) {
            PyObject *n = PyUnicode_FromString (name);
            if (n && name[0] != '_' && strcmp (name, "*") != 0)
                s_check_binding (w, n, true);
            Py_XDECREF (n);
            PyErr_Clear ();
        }
        if (strcmp (root, "bpy") == 0)
            w->uses_bpy = true;
        Py_XDECREF (asname);
    }
    Py_XDECREF (names);
}

static void s_global (s_walk_t *w, PyObject *node)
{
    PyObject *names = bmq_script_get (node, w->n->names);
    for (Py_ssize_t i = 0; names && PyList_Check (names) && i < PyList_GET_SIZE (names); i++) {
        PyObject *name = PyList_GET_ITEM (names, i);
        if (s_has (w->pinned, name))
            s_error (w, "rebind", "global/nonlocal '%s': a name bound by an import or a def may not be redeclared%s",
                     PyUnicode_Check (name) ? PyUnicode_AsUTF8 (name) : "?", NULL);
        s_check_binding (w, name, false);
        if (!s_has (w->bound, name))
            s_error (w, "name", "global/nonlocal '%s' must name a variable the script assigns%s",
                     PyUnicode_Check (name) ? PyUnicode_AsUTF8 (name) : "?", NULL);
    }
    Py_XDECREF (names);
}

static void s_loop (s_walk_t *w, PyObject *node, double size, PyObject *const *before, int nbefore,
                    PyObject *const *body, int nbody)
{
    for (int i = 0; i < nbefore; i++)
        s_visit_field (w, node, before[i]);
    double saved = w->iterations;
    w->loop_depth++;
    if (w->loop_depth == w->p->limits.max_loop_depth + 1)
        s_error (w, "limit", "loops nested deeper than %s%s", "the cap", NULL);
    if (size >= 0) {
        w->iterations *= size > 1 ? size : 1;
        if (w->iterations > w->p->limits.max_loop_iterations && saved <= w->p->limits.max_loop_iterations) {
            char msg[160];
            snprintf (msg, sizeof msg, "nested literal ranges run about %g iterations, over the cap of %g",
                      w->iterations, w->p->limits.max_loop_iterations);
            s_error (w, "limit", "%s%s", msg, NULL);
        }
    }
    for (int i = 0; i < nbody; i++)
        s_visit_field (w, node, body[i]);
    w->loop_depth--;
    w->iterations = saved;
}

static void s_comprehension (s_walk_t *w, PyObject *node)
{
    PyObject *gens = bmq_script_get (node, w->n->generators);
    int saved_depth = w->loop_depth;
    double saved_iter = w->iterations;
    bool reported = saved_iter > w->p->limits.max_loop_iterations;
    for (Py_ssize_t i = 0; gens && PyList_Check (gens) && i < PyList_GET_SIZE (gens); i++) {
        PyObject *g = PyList_GET_ITEM (gens, i);
        PyObject *iter = bmq_script_get (g, w->n->iter);
        double size = iter && bmq_script_ast_kind (iter) == BMQ_AST_Call ? s_range (w, iter) : -1;
        Py_XDECREF (iter);
        s_children (w, g, s_visit);         /* target, iter, ifs */
        w->loop_depth++;
        if (w->loop_depth == w->p->limits.max_loop_depth + 1)
            s_error (w, "limit", "loops nested deeper than %s%s", "the cap", NULL);
        if (size > 1)
            w->iterations *= size;
        if (w->iterations > w->p->limits.max_loop_iterations && !reported) {
            char msg[160];
            snprintf (msg, sizeof msg, "nested literal ranges run about %g iterations, over the cap of %g",
                      w->iterations, w->p->limits.max_loop_iterations);
            s_error (w, "limit", "%s%s", msg, NULL);
            reported = true;
        }
    }
    PyObject *all = bmq_script_ast_fields (node);     /* elt, or key and value */
    for (Py_ssize_t i = 0; all && i < PyTuple_GET_SIZE (all); i++) {
        PyObject *f = PyTuple_GET_ITEM (all, i);
        if (PyUnicode_Compare (f, w->n->generators) != 0)
            s_visit_field (w, node, f);
    }
    w->loop_depth = saved_depth;
    w->iterations = saved_iter;
    Py_XDECREF (gens);
}

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
static const char *s_callee_problem (s_walk_t *w, PyObject *func, bool as_value, char *why, size_t len)
{
    bmq_ast_kind_t k = bmq_script_ast_kind (func);
    if (k == BMQ_AST_Lambda && as_value)
        return NULL;
    if (k == BMQ_AST_Name) {
        PyObject *id = bmq_script_get (func, w->n->id);
        const char *s = id && PyUnicode_Check (id) ? PyUnicode_AsUTF8 (id) : "?";
        s_bind_kind_t kind = s_single_kind (w, id);
        bool ok = !s_has (w->bound, id) || kind == S_BIND_DEF       /* unbound: an allowed builtin, or s_name reports it */
                  || kind == S_BIND_FROM || kind == S_BIND_LAMBDA;
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
    for (int i = 0; i < S_MAX_CHAIN && bmq_script_ast_kind (cur) == BMQ_AST_Attribute; i++) {
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
            s_bind_kind_t kind = s_single_kind (w, id);
            module_api = kind == S_BIND_MODULE || kind == S_BIND_FROM;
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
static void s_check_passed_callables (s_walk_t *w, PyObject *node, PyObject *func)
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
            s_error_msg (w, "call", msg);
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
            s_error (w, "call", "print() may only write to the script's output: no file= and no **keywords%s%s", "", NULL);
        else if (a && !strcmp (a, "key")) {
            PyObject *value = bmq_script_get (kw, w->n->value);
            if (value && bmq_script_ast_kind (value) != BMQ_AST_Constant && s_callee_problem (w, value, true, why, sizeof why))
            {
                char msg[300];
                snprintf (msg, sizeof msg, "key= is called: %s", why);
                s_error_msg (w, "call", msg);
            }
            Py_XDECREF (value);
        }
        Py_XDECREF (arg);
        PyErr_Clear ();
    }
    Py_XDECREF (keywords);
}

static void s_call (s_walk_t *w, PyObject *node)
{
    s_op_t op = { 0 };
    PyObject *func = bmq_script_get (node, w->n->func);
    PyObject *saved_at = w->at;
    if (func && bmq_script_ast_kind (func) == BMQ_AST_Attribute)
        s_attribute (w, func, true, &op);
    else if (func)
        s_visit (w, func);
    char why[200];
    if (func && !op.is_op && s_callee_problem (w, func, false, why, sizeof why)) {
        w->at = node;
        s_error_msg (w, "call", why);
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
    s_range (w, node);
    PyObject *keywords = bmq_script_get (node, w->n->keywords);
    for (Py_ssize_t i = 0; keywords && PyList_Check (keywords) && i < PyList_GET_SIZE (keywords); i++) {
        PyObject *kw = PyList_GET_ITEM (keywords, i);
        PyObject *arg = bmq_script_get (kw, w->n->arg);
        PyObject *value = bmq_script_get (kw, w->n->value);
        w->at = kw;
        if (arg && PyUnicode_Check (arg) && PyUnicode_AsUTF8 (arg)[0] == '_')
            s_error (w, "underscore", "keyword arguments beginning with '_' are not allowed: %s%s", PyUnicode_AsUTF8 (arg), NULL);
        if (arg && value)
            s_cap_named (w, arg, value);
        if (value)
            s_visit (w, value);
        Py_XDECREF (arg);
        Py_XDECREF (value);
        w->at = saved_at;
    }
    Py_XDECREF (keywords);
    s_visit_field (w, node, w->n->args);
}

static void s_function (s_walk_t *w, PyObject *node)
{
    PyObject *decorators = bmq_script_get (node, w->n->decorator_list);
    if (decorators && PyList_Check (decorators) && PyList_GET_SIZE (decorators) > 0)
        s_error (w, "decorator", "decorators are not allowed%s%s", "", NULL);
    Py_XDECREF (decorators);
    PyObject *name = bmq_script_get (node, w->n->name);
    s_check_binding (w, name, false);
    Py_XDECREF (name);
    /* a def and a loop do not nest: a function body starts at loop depth 0
     * (it runs when called, and each call is bounded by the sandbox) */
    int saved_depth = w->loop_depth;
    double saved_iter = w->iterations;
    w->loop_depth = 0;
    w->iterations = 1;
    s_visit_field (w, node, w->n->args);
    s_visit_field (w, node, w->n->returns);
    s_visit_field (w, node, w->n->body);
    w->loop_depth = saved_depth;
    w->iterations = saved_iter;
}

static void s_subscript (s_walk_t *w, PyObject *node)
{
    PyObject *slice = bmq_script_get (node, w->n->slice);
    const char *text;
    Py_ssize_t len;
    if (slice && bmq_script_literal_str (slice, &text, &len) && text[0] == '_')
        s_error (w, "underscore", "subscript keys beginning with '_' are not allowed: [\"%s\"]%s", text, NULL);
    Py_XDECREF (slice);
    s_children (w, node, s_visit);
}

static void s_visit (s_walk_t *w, PyObject *node)
{
    if (++w->depth > S_MAX_DEPTH) {
        w->depth--;
        return;                     /* pass 1 reported it */
    }
    PyObject *saved_at = w->at;
    bmq_ast_kind_t kind = bmq_script_ast_kind (node);
    if (kind == BMQ_AST_Load || kind == BMQ_AST_Store || kind == BMQ_AST_Del || kind == BMQ_AST_Constant) {
        w->depth--;
        return;
    }
    w->at = node;
    const bmq_script_names_t *n = w->n;
    PyObject *v;
    switch (kind) {
    case BMQ_AST_Name: s_name (w, node, false); break;
    case BMQ_AST_Attribute: { s_op_t op = { 0 }; s_attribute (w, node, false, &op); break; }
    case BMQ_AST_Call: s_call (w, node); break;
    case BMQ_AST_Subscript: s_subscript (w, node); break;
    case BMQ_AST_BinOp: s_binop (w, node); break;
    case BMQ_AST_Import: s_import (w, node, false); break;
    case BMQ_AST_ImportFrom: s_import (w, node, true); break;
    case BMQ_AST_Global: case BMQ_AST_Nonlocal: s_global (w, node); break;
    case BMQ_AST_FunctionDef: s_function (w, node); break;
    case BMQ_AST_AsyncFunctionDef: case BMQ_AST_AsyncFor: case BMQ_AST_AsyncWith: case BMQ_AST_Await:
        s_error (w, "async", "async code is not allowed%s%s", "", NULL);
        break;
    case BMQ_AST_ClassDef:
        s_error (w, "class", "class definitions are not allowed%s%s", "", NULL);
        break;
    case BMQ_AST_Match:
        s_error (w, "match", "match statements are not allowed%s%s", "", NULL);
        break;
    case BMQ_AST_arg:
        v = bmq_script_get (node, n->arg);
        s_check_binding (w, v, false);
        Py_XDECREF (v);
        s_visit_field (w, node, n->annotation);
        break;
    case BMQ_AST_ExceptHandler:
        {
            PyObject *t = bmq_script_get (node, n->type);
            bmq_ast_kind_t tk = t ? bmq_script_ast_kind (t) : BMQ_AST_OTHER;
            PyObject *elts = tk == BMQ_AST_Tuple ? bmq_script_get (t, n->elts) : NULL;
            bool base = tk == BMQ_AST_Name && !strcmp (bmq_script_get_str (t, n->id), "BaseException");
            for (Py_ssize_t i = 0; elts && PyList_Check (elts) && i < PyList_GET_SIZE (elts); i++)
                base |= bmq_script_ast_kind (PyList_GET_ITEM (elts, i)) == BMQ_AST_Name
                        && !strcmp (bmq_script_get_str (PyList_GET_ITEM (elts, i), n->id), "BaseException");
            if (!t || t == Py_None || base)
                s_error (w, "except", "%s is not allowed: name the exceptions (except Exception:)%s",
                         base ? "catching BaseException" : "a bare 'except:'", NULL);
            Py_XDECREF (elts);
            Py_XDECREF (t);
        }
        v = bmq_script_get (node, n->name);
        if (v && v != Py_None)
            s_check_binding (w, v, false);
        Py_XDECREF (v);
        s_children (w, node, s_visit);
        break;
    case BMQ_AST_Assign: s_cap_targets (w, node, n->targets, true); s_children (w, node, s_visit); break;
    case BMQ_AST_AugAssign: case BMQ_AST_AnnAssign:
        s_cap_targets (w, node, n->target, false);
        s_children (w, node, s_visit);
        break;
    case BMQ_AST_For: {
        v = bmq_script_get (node, n->iter);
        double size = v && bmq_script_ast_kind (v) == BMQ_AST_Call ? s_range (w, v) : -1;
        Py_XDECREF (v);
        PyObject *before[] = { n->target, n->iter }, *body[] = { n->body };
        s_loop (w, node, size, before, 2, body, 1);
        s_visit_field (w, node, n->orelse);
        break;
    }
    case BMQ_AST_While: {
        PyObject *before[] = { n->test }, *body[] = { n->body };
        s_loop (w, node, -1, before, 1, body, 1);
        s_visit_field (w, node, n->orelse);
        break;
    }
    case BMQ_AST_ListComp: case BMQ_AST_SetComp: case BMQ_AST_DictComp: case BMQ_AST_GeneratorExp:
        s_comprehension (w, node);
        break;
    default:
        s_children (w, node, s_visit);
        break;
    }
    w->at = saved_at;
    w->depth--;
}

void bmq_script_walk (const bmq_script_policy_t *policy, PyObject *tree, bmq_script_report_t *report, size_t *nodes)
{
    s_walk_t w = { .p = policy, .n = bmq_script_names (), .r = report, .iterations = 1, .line = 0, .col = 0 };
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
    s_collect (&w, tree);
    w.depth = 0;
    if (nodes)
        *nodes = w.nodes;
    if (w.over_nodes) {
        bmq_script_report_error (report, 0, 0, "size", "the script has more than %zu syntax nodes",
                                 policy->limits.max_nodes);
        goto done;
    }
    if (w.too_deep) {
        bmq_script_report_error (report, 0, 0, "size", "the script nests deeper than %d levels", S_MAX_DEPTH);
        goto done;
    }
    s_visit (&w, tree);
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
