/* The walk reads a node's children straight from its instance dict when the
 * dict's entries come in _fields order under the very name objects _fields
 * holds (what the parser builds), and looks each field up by name otherwise
 * (script_walk.c, walk_children). Both ways must give the same findings and
 * the same node count: every corpus script and generated scripts are walked
 * once as parsed and once with every node's dict rebuilt in reverse order
 * (so the in-order reading stops at the first field of every node and the
 * lookups answer), and the two reports must be equal. */
#include "script_literal.h"
#include "script_policy.h"
#include "script_python.h"
#include "script_report.h"
#include "script_testutil.h"
#include "script_validator.h"
#include "script_walk.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static json_t *s_rna;
static bmq_script_policy_t s_policy;

static int s_setup (void **state)
{
    (void) state;
    char err[256];
    s_rna = bmq_script_rna_load (BMQ_SOURCE_DIR "/" BMQ_SCRIPT_RNA_FIXTURE, err, sizeof err);
    json_t *rules = s_rna ? bmq_script_rules_effective (NULL, err, sizeof err) : NULL;
    if (!rules || bmq_script_python_init (err, sizeof err) < 0) {
        fprintf (stderr, "%s\n", err);
        json_decref (rules);
        return -1;
    }
    bmq_script_gil_t gil = bmq_script_python_lock ();
    int rc = bmq_script_policy_init (&s_policy, rules, s_rna);
    bmq_script_python_unlock (gil);
    json_decref (rules);
    return rc;
}

static int s_teardown (void **state)
{
    (void) state;
    bmq_script_gil_t gil = bmq_script_python_lock ();
    bmq_script_policy_clear (&s_policy);
    bmq_script_python_unlock (gil);
    json_decref (s_rna);
    return 0;
}

/* Rebuild the instance dict of every node under `obj` with its entries in
 * reverse order; counts the nodes whose dict had two entries or more. GIL held. */
static void s_reverse (PyObject *obj, size_t *reordered, int depth)
{
    if (depth > 3000)                   /* beyond the walk's own depth cap (WALK_MAX_DEPTH) */
        return;
    if (PyList_Check (obj)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE (obj); i++)
            s_reverse (PyList_GET_ITEM (obj, i), reordered, depth + 1);
        return;
    }
    PyObject *dict = bmq_script_node_dict (obj);
    if (!dict)
        return;
    PyObject *items = PyDict_Items (dict);
    assert_non_null (items);
    Py_ssize_t n = PyList_GET_SIZE (items);
    PyObject *rev = PyDict_New ();
    assert_non_null (rev);
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        PyObject *kv = PyList_GET_ITEM (items, i);
        assert_int_equal (PyDict_SetItem (rev, PyTuple_GET_ITEM (kv, 0), PyTuple_GET_ITEM (kv, 1)), 0);
    }
    Py_DECREF (items);
    assert_int_equal (PyObject_GenericSetDict (obj, rev, NULL), 0);
    Py_DECREF (rev);
    if (n >= 2)
        (*reordered)++;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    dict = bmq_script_node_dict (obj);
    while (PyDict_Next (dict, &pos, &k, &v))
        s_reverse (v, reordered, depth + 1);
}

/* The walk's report (with the node count) of `src`, the tree's dicts reversed or not.
 * NULL when the text does not parse. */
static json_t *s_walk (const char *src, bool reversed, size_t *reordered)
{
    bmq_script_gil_t gil = bmq_script_python_lock ();
    int line, col;
    char msg[256];
    PyObject *tree = bmq_script_python_parse (src, &line, &col, msg, sizeof msg);
    json_t *out = NULL;
    if (tree) {
        if (reversed)
            s_reverse (tree, reordered, 0);
        bmq_script_report_t *r = bmq_script_report_new (s_policy.limits.max_errors);
        size_t nodes = 0;
        bmq_script_walk (&s_policy, tree, r, &nodes);
        out = bmq_script_report_json (r);
        json_object_set_new (out, "nodes", json_integer ((json_int_t) nodes));
        bmq_script_report_destroy (&r);
        Py_DECREF (tree);
    }
    bmq_script_python_unlock (gil);
    return out;
}

/* Both walks of one text; returns whether it parsed. */
static bool s_same (const char *what, const char *src, size_t *compared_errors)
{
    size_t reordered = 0;
    json_t *a = s_walk (src, false, NULL), *b = s_walk (src, true, &reordered);
    assert_true ((a == NULL) == (b == NULL));
    if (!a)
        return false;
    assert_true (reordered > 0);            /* the lookups really were exercised */
    if (!json_equal (a, b)) {
        char *sa = json_dumps (a, JSON_COMPACT), *sb = json_dumps (b, JSON_COMPACT);
        fprintf (stderr, "%s:\n  as parsed: %s\n  reversed:  %s\n", what, sa, sb);
        free (sa);
        free (sb);
        fail_msg ("%s: the walk differs when the dicts are not in _fields order", what);
    }
    *compared_errors += json_array_size (json_object_get (a, "errors"));
    json_decref (a);
    json_decref (b);
    return true;
}

static void test_corpora_walk_the_same_either_way (void **state)
{
    (void) state;
    const char *which[] = { "good", "evil", "txn" };
    size_t walked = 0, errors = 0;
    for (size_t c = 0; c < sizeof which / sizeof which[0]; c++) {
        size_t n = 0;
        char **files = stu_corpus (which[c], &n);
        for (size_t i = 0; i < n; i++) {
            size_t len;
            char *src = stu_read (files[i], &len);
            assert_non_null (src);
            if (strlen (src) == len)        /* texts with NULs never reach the parser */
                walked += s_same (files[i], src, &errors);
            free (src);
        }
        stu_free_list (files, n);
    }
    /* the corpora are there and hold scripts the walk refuses */
    assert_true (walked >= 100);
    assert_true (errors >= 50);
}

static void test_generated_scripts_walk_the_same_either_way (void **state)
{
    (void) state;
    size_t errors = 0;
    for (int lines = 12; lines <= 600; lines += 97) {
        size_t len;
        char *src = stu_script_of_lines (lines, &len);
        assert_true (s_same ("generated", src, &errors));
        free (src);
    }
    /* one script with findings in every kind of node the walk reads fields of */
    const char *bad = "import os\nimport bpy\nfrom math import sin as _s\n"
                      "def f(a, _b=1, *c, **d):\n    global q\n    return a.__class__\n"
                      "x = [i for i in range(10**9) if i]\ny = {k: v for k, v in d.items()}\n"
                      "try:\n    pass\nexcept:\n    pass\nwhile True:\n    bpy.ops.mesh.primitive_cube_add(size='a', _x=1)\n"
                      "z = 'x' * 10**12\nlambda: eval('1')\nbpy.ops.wm.save_as_mainfile(filepath='/tmp/x')\n"
                      "obj.modifiers.new('S', 'SUBSURF').levels = 99\nprint(x, file=None)\n";
    errors = 0;
    assert_true (s_same ("refused", bad, &errors));
    assert_true (errors >= 10);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_corpora_walk_the_same_either_way),
        cmocka_unit_test (test_generated_scripts_walk_the_same_either_way),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
