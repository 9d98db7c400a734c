/* script_walk_attrs — attribute chains: underscores and denied attributes,
 * bpy chains (bpy.ops.CATEGORY.OPERATOR called where named, bpy.data,
 * bpy.context), and the store rule: method names are never assigned and what
 * an import or a def bound is read-only (point 4 in script_walk.h). */
#include "script_walk_internal.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- bpy chains */


static bool s_word_denied (walk_t *w, const char *op)
{
    size_t i;
    json_t *word;
    json_array_foreach (w->p->denied_op_words, i, word)
        if (strstr (op, json_string_value (word)))
            return true;
    return false;
}

/* A str constant holding a word of rules.denied_string_words (CompositorNodeOutputFile, FLUID, …):
 * the types that make Blender write files on the host (issue 23). */
void walk_denied_string (walk_t *w, PyObject *node)
{
    PyObject *v = bmq_script_get (node, w->n->value);
    const char *s = v && PyUnicode_Check (v) ? PyUnicode_AsUTF8 (v) : NULL;
    size_t i;
    json_t *word;
    if (!s) {                       /* not a str: no word to find */
        PyErr_Clear ();
        Py_XDECREF (v);
        return;
    }
    json_array_foreach (w->p->denied_string_words, i, word)
        if (s && strstr (s, json_string_value (word))) {
            walk_error (w, "host_write", "the string '%s' names a type that writes files on the host (%s): not allowed",
                        json_string_value (word), "file output nodes, simulation caches");
            break;
        }
    Py_XDECREF (v);
}

/* parts[0] is "bpy"; n parts in all. */
static void s_bpy_chain (walk_t *w, const char **parts, int n, bool called, walk_op_t *op)
{
    char buf[200];
    w->uses_bpy = true;
    if (n < 2) {
        walk_error (w, "bpy", "bpy must be followed by an allowed attribute chain (bpy.ops.CATEGORY.OPERATOR(...), bpy.data.COLLECTION, bpy.context.ATTRIBUTE)%s%s", "", NULL);
        return;
    }
    if (!bmq_script_policy_has_str (w->p->bpy_roots, parts[1])) {
        walk_error (w, "bpy", "bpy.%s is not allowed (a script reaches bpy only through bpy.ops, bpy.data and bpy.context)%s", parts[1], NULL);
        return;
    }
    if (strcmp (parts[1], "ops") == 0) {
        if (n >= 4) {
            snprintf (buf, sizeof buf, "bpy.ops.%s.%s", parts[2], parts[3]);
            bmq_script_report_operator (w->r, buf);
        }
        if (n < 4) {
            walk_error (w, "operator", "bpy.ops%s%s is not an operator: call bpy.ops.CATEGORY.OPERATOR(...)",
                        n == 3 ? "." : "", n == 3 ? parts[2] : "");
            return;
        }
        if (n > 4) {
            walk_error (w, "operator", "bpy.ops.%s.%s: only a direct call of the operator is allowed", parts[2], parts[3]);
            return;
        }
        if (!called) {
            walk_error (w, "operator", "bpy.ops.%s.%s must be called where it is named, not stored or passed", parts[2], parts[3]);
            return;
        }
        if (!bmq_script_policy_has_str (w->p->op_categories, parts[2])) {
            walk_error (w, "operator", "operators of category bpy.ops.%s are not allowed%s", parts[2], NULL);
            return;
        }
        snprintf (buf, sizeof buf, "%s.%s", parts[2], parts[3]);
        if (bmq_script_policy_has_str (w->p->denied_ops, buf) || s_word_denied (w, parts[3])) {
            walk_error (w, "operator", "operator bpy.ops.%s is not allowed (files, baking, code or preferences)%s", buf, NULL);
            return;
        }
        op->is_op = true;
        snprintf (op->category, sizeof op->category, "%s", parts[2]);
        snprintf (op->name, sizeof op->name, "%s", parts[3]);
        return;
    }
    PyObject *allowed = strcmp (parts[1], "data") == 0 ? w->p->data_collections : w->p->context_attributes;
    if (n < 3)
        walk_error (w, "bpy", "bpy.%s must be followed by one of its allowed attributes, not used as a value%s", parts[1], NULL);
    else if (!bmq_script_policy_has_str (allowed, parts[2])) {
        snprintf (buf, sizeof buf, "%s.%s", parts[1], parts[2]);
        walk_error (w, "bpy", "bpy.%s is not allowed%s", buf, NULL);
    }
}

/* A store or del of `.last` on the chain headed by `head`: a method name is
 * never assigned (an object with an instance dict — a def'd function, an
 * exception, a random.Random — would otherwise carry any callable under an
 * allowlisted method name), and what an import bound is read-only (math.sin =
 * … would change what a module call means). */
static void s_store (walk_t *w, const char *last, PyObject *head)
{
    if (bmq_script_policy_has_str (w->p->methods, last))
        walk_error (w, "attribute", "'.%s' names a method: it cannot be assigned or deleted%s", last, NULL);
    else if (bmq_script_ast_kind (head) == BMQ_AST_Name) {
        PyObject *id = bmq_script_get (head, w->n->id);
        walk_bind_kind_t k = walk_first_kind (w, id);
        if ((k == WALK_BIND_MODULE || k == WALK_BIND_FROM || k == WALK_BIND_DEF || k == WALK_BIND_LAMBDA) && !walk_is_alias (w, id))
            walk_error (w, "attribute", "'%s' was bound by an import or a def: its attributes are read-only%s",
                        bmq_script_get_str (head, w->n->id), NULL);
        Py_XDECREF (id);
    }
}

/* An attribute chain a.b.c (node is the outermost Attribute). */
void walk_attribute (walk_t *w, PyObject *node, bool called, walk_op_t *op)
{
    PyObject *held[WALK_MAX_CHAIN + 1];
    const char *attrs[WALK_MAX_CHAIN];
    int count = 0, nheld = 0;
    PyObject *cur = node;
    Py_INCREF (cur);
    held[nheld++] = cur;
    PyObject *saved_at = w->at;
    while (bmq_script_ast_kind (cur) == BMQ_AST_Attribute && count < WALK_MAX_CHAIN) {
        w->at = cur;
        const char *a = bmq_script_get_str (cur, w->n->attr);
        PyObject *aobj = bmq_script_get (cur, w->n->attr);
        if (a[0] == '_')
            walk_error (w, "underscore", "attributes beginning with '_' are not allowed: .%s%s", a, NULL);
        else if (aobj && walk_has (w->p->denied_attributes, aobj))
            walk_error (w, "attribute", "the attribute .%s is not allowed%s", a, NULL);
        else if (strcmp (a, "format") == 0 || strcmp (a, "format_map") == 0)
            walk_error (w, "attribute", "str.%s is not allowed (use f-strings)%s", a, NULL);
        Py_XDECREF (aobj);
        w->at = saved_at;
        attrs[count++] = a;
        PyObject *next = bmq_script_get (cur, w->n->value);
        if (!next)
            break;
        cur = next;
        if (nheld <= WALK_MAX_CHAIN)
            held[nheld++] = cur;
        else
            Py_DECREF (cur);        /* cannot happen: count bounds nheld */
    }
    if (walk_kind_of_field (w, node, w->n->ctx) != BMQ_AST_Load && count > 0) {
        w->at = node;
        s_store (w, attrs[0], cur);
        w->at = saved_at;
    }
    if (bmq_script_ast_kind (cur) == BMQ_AST_Attribute) {
        walk_error (w, "size", "attribute chain longer than %s%s", "32", NULL);
        walk_visit (w, cur);
    }
    else if (bmq_script_ast_kind (cur) == BMQ_AST_Name) {
        PyObject *id = bmq_script_get (cur, w->n->id);
        PyObject *chain = id ? PyDict_GetItemWithError (w->aliases, id) : NULL;
        if (!chain)
            PyErr_Clear ();
        if (chain && PyUnicode_Check (chain)) {
            /* alias prefix ("bpy", "bpy.data", …) + the attributes, outermost last */
            const char *parts[WALK_MAX_CHAIN + 2];
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
            walk_name (w, cur, true);
        Py_XDECREF (id);
    }
    else
        walk_visit (w, cur);
    for (int k = 0; k < nheld; k++)
        Py_DECREF (held[k]);
}
