/* script_literal — reading literal values from the tree. */
#include "script_literal.h"

#include <math.h>
#include <string.h>

PyObject *bmq_script_node_dict (PyObject *node)
{
    if (bmq_script_ast_kind (node) == BMQ_AST_OTHER || Py_TYPE (node)->tp_dictoffset <= 0)
        return NULL;
    PyObject *dict = *(PyObject **) ((char *) node + Py_TYPE (node)->tp_dictoffset);
    return dict && PyDict_CheckExact (dict) ? dict : NULL;
}

PyObject *bmq_script_get (PyObject *node, PyObject *name)
{
    /* A node of a class the walker names (an exact _ast class, as the
     * parser builds it) holds every field and position in its instance dict:
     * ast2obj sets them all, None for an absent optional one, and those
     * classes define no descriptor of any field's name (only plain None
     * defaults, which an instance's own entry overrides in getattr too). So
     * the dict answers exactly what getattr would, without getattr's type
     * lookups (about a third of the walk). Missing there, or any other
     * object: getattr. */
    PyObject *dict = bmq_script_node_dict (node);
    if (dict) {
        PyObject *hit = PyDict_GetItemWithError (dict, name);
        if (hit) {
            Py_INCREF (hit);
            return hit;
        }
        PyErr_Clear ();
    }
    PyObject *v = PyObject_GetAttr (node, name);
    if (!v)
        PyErr_Clear ();
    return v;
}

const char *bmq_script_get_str (PyObject *node, PyObject *name)
{
    PyObject *v = bmq_script_get (node, name);
    const char *s = v && PyUnicode_Check (v) ? PyUnicode_AsUTF8 (v) : NULL;
    if (!s)
        PyErr_Clear ();
    /* The tree holds the str (it is a field of the node), so the UTF-8 buffer
     * cached in it lives as long as the node. */
    Py_XDECREF (v);
    return s ? s : "";
}

static bool s_constant (PyObject *node, PyObject **value)
{
    if (bmq_script_ast_kind (node) != BMQ_AST_Constant)
        return false;
    *value = bmq_script_get (node, bmq_script_names ()->value);
    return *value != NULL;
}

/* a + b, a - b, a * b, a ** b of literal numbers (so range(10**9) and
 * 9 ** 9 ** 9 are judged); depth-bounded, results saturate to ±inf. */
static bool s_folded (PyObject *node, double *out, bool *is_int, int depth)
{
    const bmq_script_names_t *n = bmq_script_names ();
    if (depth > 8)
        return false;
    PyObject *op = bmq_script_get (node, n->op);
    PyObject *l = bmq_script_get (node, n->left), *r = bmq_script_get (node, n->right);
    bmq_ast_kind_t k = op ? bmq_script_ast_kind (op) : BMQ_AST_OTHER;
    double a, b;
    bool ia, ib, ok = false;
    if (l && r && bmq_script_literal_number (l, &a, &ia) && bmq_script_literal_number (r, &b, &ib)) {
        ok = true;
        *is_int = ia && ib;
        if (k == BMQ_AST_Pow)
            *out = pow (a, b);
        else if (k == BMQ_AST_Mult)
            *out = a * b;
        else if (k == BMQ_AST_LShift)
            *out = ldexp (a, (int) fmin (b, 100000));
        else {
            PyObject *name = op ? PyObject_GetAttrString ((PyObject *) Py_TYPE (op), "__name__") : NULL;
            const char *on = name && PyUnicode_Check (name) ? PyUnicode_AsUTF8 (name) : "";
            if (on && strcmp (on, "Add") == 0)
                *out = a + b;
            else if (on && strcmp (on, "Sub") == 0)
                *out = a - b;
            else
                ok = false;
            Py_XDECREF (name);
            PyErr_Clear ();
        }
        if (ok && isnan (*out))
            *out = INFINITY;
    }
    Py_XDECREF (op);
    Py_XDECREF (l);
    Py_XDECREF (r);
    return ok;
}

bool bmq_script_literal_number (PyObject *node, double *out, bool *is_int)
{
    const bmq_script_names_t *n = bmq_script_names ();
    double sign = 1;
    if (bmq_script_ast_kind (node) == BMQ_AST_BinOp) {
        static _Thread_local int depth;      /* the GIL serialises calls; the counter bounds recursion */
        depth++;
        bool ok = s_folded (node, out, is_int, depth);
        depth--;
        return ok;
    }
    PyObject *inner = NULL;
    if (bmq_script_ast_kind (node) == BMQ_AST_UnaryOp) {
        PyObject *op = bmq_script_get (node, n->op);
        bmq_ast_kind_t k = op ? bmq_script_ast_kind (op) : BMQ_AST_OTHER;
        Py_XDECREF (op);
        if (k != BMQ_AST_USub && k != BMQ_AST_UAdd)
            return false;
        sign = k == BMQ_AST_USub ? -1 : 1;
        inner = bmq_script_get (node, n->operand);
        node = inner;
        if (!node)
            return false;
    }
    PyObject *v = NULL;
    bool ok = false;
    if (s_constant (node, &v)) {
        if (PyLong_Check (v)) {          /* bool is an int too */
            double d = PyLong_AsDouble (v);
            if (d == -1.0 && PyErr_Occurred ()) {
                PyErr_Clear ();
                d = INFINITY;
            }
            *out = sign * d;
            *is_int = true;
            ok = true;
        }
        else if (PyFloat_Check (v)) {
            *out = sign * PyFloat_AS_DOUBLE (v);
            *is_int = false;
            ok = true;
        }
    }
    Py_XDECREF (v);
    Py_XDECREF (inner);
    return ok;
}

bool bmq_script_literal_bool (PyObject *node, bool *out)
{
    PyObject *v = NULL;
    bool ok = s_constant (node, &v) && PyBool_Check (v);
    if (ok)
        *out = v == Py_True;
    Py_XDECREF (v);
    return ok;
}

bool bmq_script_literal_str (PyObject *node, const char **text, Py_ssize_t *len)
{
    PyObject *v = NULL;
    bool ok = s_constant (node, &v) && PyUnicode_Check (v);
    if (ok) {
        *text = PyUnicode_AsUTF8AndSize (v, len);
        if (!*text) {
            PyErr_Clear ();
            ok = false;
        }
    }
    Py_XDECREF (v);          /* the Constant node keeps the str alive */
    return ok;
}

PyObject *bmq_script_literal_elts (PyObject *node, bmq_ast_kind_t *kind)
{
    bmq_ast_kind_t k = bmq_script_ast_kind (node);
    if (k != BMQ_AST_List && k != BMQ_AST_Tuple && k != BMQ_AST_Set)
        return NULL;
    PyObject *elts = bmq_script_get (node, bmq_script_names ()->elts);
    if (elts && !PyList_Check (elts)) {
        Py_DECREF (elts);
        return NULL;
    }
    if (kind)
        *kind = k;
    return elts;
}

void bmq_script_position (PyObject *node, int *line, int *col)
{
    const bmq_script_names_t *n = bmq_script_names ();
    PyObject *l = bmq_script_get (node, n->lineno);
    if (!l) {
        PyErr_Clear ();
        return;                 /* not every node has one: keep the fallback */
    }
    PyObject *c = bmq_script_get (node, n->col_offset);
    if (PyLong_Check (l))
        *line = (int) PyLong_AsLong (l);
    if (c && PyLong_Check (c))
        *col = (int) PyLong_AsLong (c) + 1;
    Py_DECREF (l);
    Py_XDECREF (c);
}
