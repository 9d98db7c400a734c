/* script_ops — a bpy.ops call against the operator's RNA. */
#include "script_ops.h"

#include "script_literal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const bmq_script_policy_t *p;
    bmq_script_report_t *r;
    const char *op;             /* "bpy.ops.mesh.primitive_cube_add" */
    const char *param;
    int line, col;
} s_ctx_t;

static const json_t *s_param (const json_t *rna, const char *identifier)
{
    size_t i;
    json_t *p;
    json_array_foreach (json_object_get (rna, "params"), i, p)
        if (strcmp (json_string_value (json_object_get (p, "identifier")) ?: "", identifier) == 0)
            return p;
    return NULL;
}

static void s_known_params (const json_t *rna, char *out, size_t outlen)
{
    size_t i, n = 0;
    json_t *p;
    out[0] = 0;
    json_array_foreach (json_object_get (rna, "params"), i, p) {
        const char *id = json_string_value (json_object_get (p, "identifier"));
        if (!id || json_is_true (json_object_get (p, "hidden")))
            continue;
        int w = snprintf (out + n, outlen - n, "%s%s", n ? ", " : "", id);
        if (w < 0 || (size_t) w >= outlen - n) {
            snprintf (out + (n < outlen - 4 ? n : outlen - 4), 4, "...");
            return;
        }
        n += (size_t) w;
    }
}

static bool s_in_bounds (const json_t *param, double v)
{
    const json_t *lo = json_object_get (param, "min"), *hi = json_object_get (param, "max");
    /* RNA keeps bounds in float32: allow that rounding. */
    if (json_is_number (lo)) {
        double b = json_number_value (lo);
        if (v < b - 1e-6 * fmax (1.0, fabs (b)))
            return false;
    }
    if (json_is_number (hi)) {
        double b = json_number_value (hi);
        if (v > b + 1e-6 * fmax (1.0, fabs (b)))
            return false;
    }
    return true;
}

static void s_bounds_text (const json_t *param, char *out, size_t outlen)
{
    snprintf (out, outlen, "[%g, %g]", json_number_value (json_object_get (param, "min")),
              json_number_value (json_object_get (param, "max")));
}

/* One scalar of an INT / FLOAT / BOOLEAN parameter (an array element too). */
static void s_check_scalar (s_ctx_t *c, const json_t *param, const char *type, PyObject *node)
{
    double v;
    bool is_int, b;
    const char *text;
    Py_ssize_t len;
    char bounds[80];
    if (strcmp (type, "BOOLEAN") == 0) {
        if (bmq_script_literal_bool (node, &b))
            return;
        if (bmq_script_literal_number (node, &v, &is_int) && is_int && (v == 0 || v == 1))
            return;
        if (bmq_script_literal_number (node, &v, &is_int) || bmq_script_literal_str (node, &text, &len))
            bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects True or False",
                                     c->op, c->param);
        return;
    }
    if (bmq_script_literal_str (node, &text, &len)) {
        bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects a number",
                                 c->op, c->param);
        return;
    }
    if (!bmq_script_literal_number (node, &v, &is_int))
        return;                                     /* computed: the sandbox judges it */
    if (strcmp (type, "INT") == 0 && !is_int) {
        bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects an integer, not %g",
                                 c->op, c->param, v);
        return;
    }
    if (!isfinite (v) || !s_in_bounds (param, v)) {
        s_bounds_text (param, bounds, sizeof bounds);
        bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' = %g is outside Blender's limits %s",
                                 c->op, c->param, v, bounds);
    }
}

static bool s_enum_has (const json_t *param, const char *item)
{
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get (param, "enum_items"), i, e)
        if (strcmp (json_string_value (json_object_get (e, "identifier")) ?: "", item) == 0)
            return true;
    return false;
}

static void s_check_enum_item (s_ctx_t *c, const json_t *param, PyObject *node)
{
    const char *text;
    Py_ssize_t len;
    char clip[64];
    if (!bmq_script_literal_str (node, &text, &len)) {
        double v;
        bool is_int;
        if (bmq_script_literal_number (node, &v, &is_int))
            bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects one of its enum items, not a number",
                                     c->op, c->param);
        return;
    }
    if (json_array_size (json_object_get (param, "enum_items")) == 0)
        return;                                     /* items computed at run time */
    if (!s_enum_has (param, text))
        bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' has no item '%s'",
                                 c->op, c->param, bmq_script_clip (clip, sizeof clip, text, 40));
}

static void s_check_value (s_ctx_t *c, const json_t *param, PyObject *node)
{
    const char *type = json_string_value (json_object_get (param, "type")) ?: "";
    const char *subtype = json_string_value (json_object_get (param, "subtype")) ?: "";
    size_t i;
    json_t *s;
    json_array_foreach (c->p->denied_path_subtypes, i, s)
        if (strcmp (subtype, json_string_value (s)) == 0) {
            bmq_script_report_error (c->r, c->line, c->col, "operator", "%s: parameter '%s' is a %s: scripts may not name files",
                                     c->op, c->param, subtype);
            return;
        }
    if (strcmp (type, "POINTER") == 0 || strcmp (type, "COLLECTION") == 0) {
        bmq_script_report_error (c->r, c->line, c->col, "operator", "%s: parameter '%s' (%s) cannot be set from a script",
                                 c->op, c->param, type);
        return;
    }
    bmq_ast_kind_t kind;
    PyObject *elts = bmq_script_literal_elts (node, &kind);
    if (strcmp (type, "INT") == 0 || strcmp (type, "FLOAT") == 0 || strcmp (type, "BOOLEAN") == 0) {
        json_int_t want = json_integer_value (json_object_get (param, "array_length"));
        if (want > 0 && elts) {
            if (PyList_GET_SIZE (elts) != want)
                bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects %lld values, got %zd",
                                         c->op, c->param, (long long) want, PyList_GET_SIZE (elts));
            else
                for (Py_ssize_t k = 0; k < PyList_GET_SIZE (elts); k++)
                    s_check_scalar (c, param, type, PyList_GET_ITEM (elts, k));
        }
        else if (want > 0) {
            double v;
            bool is_int;
            if (bmq_script_literal_number (node, &v, &is_int))
                bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects %lld values, got one number",
                                         c->op, c->param, (long long) want);
        }
        else if (elts)
            bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects one value, got a sequence",
                                     c->op, c->param);
        else
            s_check_scalar (c, param, type, node);
    }
    else if (strcmp (type, "ENUM") == 0) {
        if (json_is_true (json_object_get (param, "enum_flag"))) {
            const char *text;
            Py_ssize_t len;
            if (elts)
                for (Py_ssize_t k = 0; k < PyList_GET_SIZE (elts); k++)
                    s_check_enum_item (c, param, PyList_GET_ITEM (elts, k));
            else if (bmq_script_literal_str (node, &text, &len))
                bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects a set of items, e.g. {'%s'}",
                                         c->op, c->param, "ITEM");
        }
        else if (elts)
            bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects one item, got a sequence",
                                     c->op, c->param);
        else
            s_check_enum_item (c, param, node);
    }
    else if (strcmp (type, "STRING") == 0) {
        const char *text;
        Py_ssize_t len;
        json_int_t max_len = json_integer_value (json_object_get (param, "max_len"));
        double v;
        bool is_int;
        if (bmq_script_literal_str (node, &text, &len)) {
            if (max_len > 0 && len >= max_len)
                bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' is longer than %lld bytes",
                                         c->op, c->param, (long long) max_len - 1);
        }
        else if (elts || bmq_script_literal_number (node, &v, &is_int))
            bmq_script_report_error (c->r, c->line, c->col, "rna", "%s: parameter '%s' expects a string", c->op, c->param);
    }
    Py_XDECREF (elts);
}

void bmq_script_ops_check (const bmq_script_policy_t *p, const char *category, const char *name,
                           PyObject *call, int line, int col, bmq_script_report_t *r)
{
    const bmq_script_names_t *n = bmq_script_names ();
    char op[160], known[400], clip[64];
    snprintf (op, sizeof op, "bpy.ops.%s.%s", category, name);
    s_ctx_t c = { .p = p, .r = r, .op = op, .line = line, .col = col };

    const json_t *rna = p->rna ? json_object_get (p->rna, op) : NULL;
    if (!p->rna) {
        bmq_script_report_error (r, line, col, "rna", "%s cannot be checked: no operator RNA is loaded", op);
        return;
    }
    if (!rna) {
        bmq_script_report_error (r, line, col, "rna", "unknown operator %s: Blender's RNA has no such operator", op);
        return;
    }
    if (json_is_null (rna) || !json_is_object (rna)) {
        bmq_script_report_error (r, line, col, "rna", "unknown operator %s: this Blender lacks it", op);
        return;
    }
    PyObject *args = bmq_script_get (call, n->args);
    if (args && PyList_Check (args) && PyList_GET_SIZE (args) > 0)
        bmq_script_report_error (r, line, col, "operator",
                                 "%s: pass parameters by keyword (positional arguments such as an execution context are not allowed)", op);
    Py_XDECREF (args);
    PyObject *keywords = bmq_script_get (call, n->keywords);
    for (Py_ssize_t i = 0; keywords && PyList_Check (keywords) && i < PyList_GET_SIZE (keywords); i++) {
        PyObject *kw = PyList_GET_ITEM (keywords, i);
        PyObject *arg = bmq_script_get (kw, n->arg);
        int kl = line, kc = col;
        bmq_script_position (kw, &kl, &kc);
        c.line = kl;
        c.col = kc;
        if (!arg || arg == Py_None) {
            bmq_script_report_error (r, kl, kc, "operator", "%s: **arguments cannot be checked; name each parameter", op);
            Py_XDECREF (arg);
            continue;
        }
        const char *pname = PyUnicode_AsUTF8 (arg);
        const json_t *param = pname ? s_param (rna, pname) : NULL;
        if (!pname)
            PyErr_Clear ();
        else if (!param) {
            s_known_params (rna, known, sizeof known);
            bmq_script_report_error (r, kl, kc, "rna", "%s has no parameter '%s' (it has: %s)", op,
                                     bmq_script_clip (clip, sizeof clip, pname, 40), known);
        }
        else {
            c.param = pname;
            PyObject *value = bmq_script_get (kw, n->value);
            if (value)
                s_check_value (&c, param, value);
            Py_XDECREF (value);
        }
        Py_DECREF (arg);
    }
    Py_XDECREF (keywords);
}
