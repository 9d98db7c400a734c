/* script_policy — rules as frozensets for the walker. */
#include "script_policy.h"

#include <string.h>

static PyObject *s_set (const json_t *rules, const char *key)
{
    PyObject *set = PySet_New (NULL);
    size_t i;
    json_t *v;
    if (!set)
        return NULL;
    json_array_foreach (json_object_get (rules, key), i, v) {
        PyObject *s = PyUnicode_FromString (json_string_value (v));
        if (!s || PySet_Add (set, s) < 0) {
            Py_XDECREF (s);
            Py_DECREF (set);
            return NULL;
        }
        Py_DECREF (s);
    }
    PyObject *frozen = PyFrozenSet_New (set);
    Py_DECREF (set);
    return frozen;
}

/* Every name in Python's builtins module that the rules do not allow. */
static PyObject *s_forbidden (const json_t *rules, PyObject *allowed)
{
    PyObject *mod = PyImport_ImportModule ("builtins");    /* built in: no file is read */
    PyObject *dict = mod ? PyModule_GetDict (mod) : NULL;
    PyObject *set = dict ? PySet_New (NULL) : NULL;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    if (set) {
        while (PyDict_Next (dict, &pos, &key, &value))
            if (PyUnicode_Check (key) && PySet_Contains (allowed, key) == 0)
                PySet_Add (set, key);
        size_t i;
        json_t *v;
        json_array_foreach (json_object_get (rules, "forbidden_builtins"), i, v) {
            PyObject *s = PyUnicode_FromString (json_string_value (v));
            if (s && PySet_Contains (allowed, s) == 0)
                PySet_Add (set, s);
            Py_XDECREF (s);
        }
    }
    Py_XDECREF (mod);
    PyObject *frozen = set ? PyFrozenSet_New (set) : NULL;
    Py_XDECREF (set);
    return frozen;
}

int bmq_script_policy_init (bmq_script_policy_t *self, json_t *rules, json_t *rna)
{
    memset (self, 0, sizeof *self);
    self->rules = json_incref (rules);
    self->rna = rna ? json_incref (rna) : NULL;
    self->denied_op_words = json_incref (json_object_get (rules, "denied_op_words"));
    self->denied_path_subtypes = json_incref (json_object_get (rules, "denied_path_subtypes"));
    self->denied_string_words = json_incref (json_object_get (rules, "denied_string_words"));
    bmq_script_rules_limits (rules, &self->limits);
    self->modules = s_set (rules, "modules");
    self->builtins = s_set (rules, "builtins");
    self->denied_attributes = s_set (rules, "denied_attributes");
    self->bpy_roots = s_set (rules, "bpy_roots");
    self->data_collections = s_set (rules, "data_collections");
    self->context_attributes = s_set (rules, "context_attributes");
    self->op_categories = s_set (rules, "op_categories");
    self->denied_ops = s_set (rules, "denied_ops");
    self->subdivision_names = s_set (rules, "subdivision_names");
    self->count_names = s_set (rules, "count_names");
    self->resolution_names = s_set (rules, "resolution_names");
    self->methods = s_set (rules, "methods");
    self->forbidden = self->builtins ? s_forbidden (rules, self->builtins) : NULL;
    if (!self->modules || !self->builtins || !self->denied_attributes || !self->bpy_roots
        || !self->data_collections || !self->context_attributes || !self->op_categories
        || !self->denied_ops || !self->subdivision_names || !self->count_names
        || !self->resolution_names || !self->methods || !self->forbidden) {
        PyErr_Clear ();
        bmq_script_policy_clear (self);
        return -1;
    }
    return 0;
}

void bmq_script_policy_clear (bmq_script_policy_t *self)
{
    Py_CLEAR (self->modules);
    Py_CLEAR (self->builtins);
    Py_CLEAR (self->forbidden);
    Py_CLEAR (self->denied_attributes);
    Py_CLEAR (self->bpy_roots);
    Py_CLEAR (self->data_collections);
    Py_CLEAR (self->context_attributes);
    Py_CLEAR (self->op_categories);
    Py_CLEAR (self->denied_ops);
    Py_CLEAR (self->subdivision_names);
    Py_CLEAR (self->count_names);
    Py_CLEAR (self->resolution_names);
    Py_CLEAR (self->methods);
    json_decref (self->denied_op_words);
    json_decref (self->denied_path_subtypes);
    json_decref (self->denied_string_words);
    json_decref (self->rules);
    json_decref (self->rna);
    self->denied_op_words = self->denied_path_subtypes = self->denied_string_words = self->rules = self->rna = NULL;
}

bool bmq_script_policy_has (PyObject *set, PyObject *name)
{
    int rc = PySet_Contains (set, name);
    if (rc < 0)
        PyErr_Clear ();
    return rc == 1;
}

bool bmq_script_policy_has_str (PyObject *set, const char *name)
{
    PyObject *s = PyUnicode_FromString (name);
    bool out = s && bmq_script_policy_has (set, s);
    if (!s)
        PyErr_Clear ();
    Py_XDECREF (s);
    return out;
}
