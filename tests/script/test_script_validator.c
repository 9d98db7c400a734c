/* Static validation of BPY scripts (FR-004): seed acceptance A/B/C, the
 * benign and red-team corpora, RNA checks, caps, encodings, rules config,
 * and concurrent use of one validator. */
#include "script_validator.h"
#include "script_cache.h"
#include "script_python.h"
#include "script_testutil.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static json_t *s_rna;
static bmq_script_validator_t *s_v;

static int s_setup (void **state)
{
    char err[256];
    s_rna = bmq_script_rna_load (BMQ_SOURCE_DIR "/" BMQ_SCRIPT_RNA_FIXTURE, err, sizeof err);
    if (!s_rna) { fprintf (stderr, "%s\n", err); return -1; }
    s_v = bmq_script_validator_new (NULL, s_rna, err, sizeof err);
    if (!s_v) { fprintf (stderr, "%s\n", err); return -1; }
    return 0;
}

static int s_teardown (void **state)
{
    bmq_script_validator_destroy (&s_v);
    bmq_script_validator_destroy (&s_v);        /* safe twice */
    json_decref (s_rna);
    return 0;
}

static json_t *s_check (const char *src)
{
    json_t *r = bmq_script_validate (s_v, src, strlen (src));
    assert_non_null (r);
    return r;
}

static bool s_has_rule (json_t *r, const char *rule)
{
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get (r, "errors"), i, e)
        if (strcmp (json_string_value (json_object_get (e, "rule")), rule) == 0)
            return true;
    return false;
}

static void s_dump (const char *what, json_t *r)
{
    char *s = json_dumps (r, JSON_INDENT (1));
    fprintf (stderr, "%s: %s\n", what, s);
    free (s);
}

static void s_expect_valid (const char *src)
{
    json_t *r = s_check (src);
    if (!json_is_true (json_object_get (r, "is_valid")))
        s_dump (src, r);
    assert_true (json_is_true (json_object_get (r, "is_valid")));
    json_decref (r);
}

static void s_expect_rule (const char *src, const char *rule)
{
    json_t *r = s_check (src);
    if (json_is_true (json_object_get (r, "is_valid")) || !s_has_rule (r, rule))
        s_dump (src, r);
    assert_false (json_is_true (json_object_get (r, "is_valid")));
    assert_true (s_has_rule (r, rule));
    json_decref (r);
}

static void test_seed_acceptance_a (void **state)
{
    json_t *r = s_check ("import bpy\nbpy.ops.mesh.primitive_cube_add(size=2)\n");
    assert_true (json_is_true (json_object_get (r, "is_valid")));
    assert_int_equal (json_array_size (json_object_get (r, "errors")), 0);
    assert_string_equal (json_string_value (json_array_get (json_object_get (r, "operator_list"), 0)),
                         "bpy.ops.mesh.primitive_cube_add");
    assert_int_equal (strlen (json_string_value (json_object_get (r, "sha256"))), 64);
    json_decref (r);
}

static void test_seed_acceptance_b (void **state)
{
    json_t *r = s_check ("import os; os.remove('/important')\n");
    assert_false (json_is_true (json_object_get (r, "is_valid")));
    json_t *e = json_array_get (json_object_get (r, "errors"), 0);
    assert_string_equal (json_string_value (json_object_get (e, "rule")), "import");
    assert_int_equal (json_integer_value (json_object_get (e, "line")), 1);
    assert_int_equal (json_integer_value (json_object_get (e, "col")), 1);
    json_decref (r);
}

static void test_seed_acceptance_c (void **state)
{
    json_t *r = s_check ("import bpy\nbpy.ops.nonexistent()\n");
    assert_false (json_is_true (json_object_get (r, "is_valid")));
    assert_true (s_has_rule (r, "operator"));
    json_decref (r);
    r = s_check ("import bpy\n\nbpy.ops.mesh.nonexistent(size=1)\n");
    assert_true (s_has_rule (r, "rna"));
    json_t *e = json_array_get (json_object_get (r, "errors"), 0);
    assert_int_equal (json_integer_value (json_object_get (e, "line")), 3);
    assert_non_null (strstr (json_string_value (json_object_get (e, "message")), "unknown operator bpy.ops.mesh.nonexistent"));
    json_decref (r);
    /* an operator Blender lacks (recorded as null) */
    s_expect_rule ("import bpy\nbpy.ops.mesh.primitive_teapot_add()\n", "rna");
}

static void test_good_corpus_is_accepted (void **state)
{
    size_t n;
    char **files = stu_corpus ("good", &n);
    assert_true (n >= 12);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *src = stu_read (files[i], &len);
        json_t *r = bmq_script_validate (s_v, src, len);
        if (!json_is_true (json_object_get (r, "is_valid")))
            s_dump (files[i], r);
        assert_true (json_is_true (json_object_get (r, "is_valid")));
        assert_true (json_array_size (json_object_get (r, "operator_list")) > 0
                     || strstr (files[i], "bmesh") || strstr (files[i], "collection"));
        json_decref (r);
        free (src);
    }
    stu_free_list (files, n);
}

/* The red-team corpus: the *.py files under corpus/evil/CLASS, each stating what stops it (see
 * stu_expect_len): the validator with a given rule, the sandbox (valid here), or
 * nothing because it is harmless (valid here). Counts are printed per class. */
#define S_MAX_CLASSES 16
static void test_evil_corpus (void **state)
{
    size_t n, rejected = 0, for_sandbox = 0, harmless = 0, failed = 0;
    struct { char name[32]; size_t files, rejected, sandbox, harmless; } cls[S_MAX_CLASSES];
    size_t ncls = 0;
    char **files = stu_corpus ("evil", &n);
    assert_true (n >= 170);
    for (size_t i = 0; i < n; i++) {
        size_t len, c;
        char kind[32], what[32], name[32];
        char *src = stu_read (files[i], &len);
        assert_non_null (src);
        stu_expect_len (src, len, kind, sizeof kind, what, sizeof what);
        stu_corpus_class (files[i], name, sizeof name);
        for (c = 0; c < ncls && strcmp (cls[c].name, name); c++) { }
        if (c == ncls) {
            assert_true (ncls < S_MAX_CLASSES);
            memset (&cls[c], 0, sizeof cls[c]);
            snprintf (cls[c].name, sizeof cls[c].name, "%s", name);
            ncls++;
        }
        cls[c].files++;
        json_t *r = bmq_script_validate (s_v, src, len);
        assert_non_null (r);
        bool valid = json_is_true (json_object_get (r, "is_valid"));
        bool ok;
        if (strcmp (kind, "static") == 0) {
            ok = !valid && s_has_rule (r, what);
            rejected += ok;
            cls[c].rejected += ok;
        }
        else if (strcmp (kind, "sandbox") == 0 || strcmp (kind, "pass") == 0) {
            ok = valid;     /* the sandbox test (and e2e.script_corpus) run these */
            if (kind[0] == 's') {
                for_sandbox += ok;
                cls[c].sandbox += ok;
            }
            else {
                harmless += ok;
                cls[c].harmless += ok;
            }
        }
        else {
            fprintf (stderr, "%s: no '# expect: static RULE|sandbox VERDICT|pass harmless' line\n", files[i]);
            ok = false;
        }
        if (!ok) {
            fprintf (stderr, "UNEXPECTED (expected %s %s):\n", kind, what);
            s_dump (files[i], r);
            failed++;
        }
        json_decref (r);
        free (src);
    }
    for (size_t c = 0; c < ncls; c++) {
        printf ("evil corpus class %-15s %3zu files: %3zu rejected statically, %2zu left to the sandbox, %2zu harmless\n",
                cls[c].name, cls[c].files, cls[c].rejected, cls[c].sandbox, cls[c].harmless);
        if (strcmp (cls[c].name, "-"))
            assert_true (cls[c].files >= 15);
    }
    printf ("evil corpus: %zu files, %zu rejected statically, %zu left to the sandbox, %zu harmless, %zu unexpected\n",
            n, rejected, for_sandbox, harmless, failed);
    assert_int_equal (failed, 0);
    stu_free_list (files, n);
}

static void test_rna_types_and_bounds (void **state)
{
    s_expect_valid ("import bpy\nbpy.ops.object.light_add(type='SUN', radius=1.0, location=(0, 0, 5))\n");
    s_expect_valid ("import bpy\nbpy.ops.mesh.primitive_uv_sphere_add(segments=-(-8), ring_count=+4)\n");
    s_expect_rule ("import bpy\nbpy.ops.object.light_add(type='LASER')\n", "rna");
    s_expect_rule ("import bpy\nbpy.ops.mesh.primitive_cube_add(size='big')\n", "rna");
    s_expect_rule ("import bpy\nbpy.ops.mesh.primitive_cube_add(location=(1, 2))\n", "rna");
    s_expect_rule ("import bpy\nbpy.ops.mesh.primitive_cube_add(location=1)\n", "rna");
    s_expect_rule ("import bpy\nbpy.ops.mesh.primitive_uv_sphere_add(segments=8.5)\n", "rna");
    s_expect_rule ("import bpy\nbpy.ops.mesh.primitive_cube_add(calc_uvs='yes')\n", "rna");
    s_expect_rule ("import bpy\nbpy.ops.mesh.primitive_cube_add(colour=1)\n", "rna");
    s_expect_rule ("import bpy\nbpy.ops.mesh.primitive_cube_add(size=-5)\n", "rna");
    /* computed values are left to the sandbox */
    s_expect_valid ("import bpy\nimport math\nbpy.ops.mesh.primitive_cube_add(size=math.pi, location=[math.cos(1), 0, 0])\n");
}

static void test_names_and_positions (void **state)
{
    json_t *r = s_check ("import bpy\n\nx = 1\n  \nif x:\n    y = eval('2')\n");
    json_t *e = json_array_get (json_object_get (r, "errors"), 0);
    assert_int_equal (json_integer_value (json_object_get (e, "line")), 6);
    assert_int_equal (json_integer_value (json_object_get (e, "col")), 9);
    json_decref (r);
    s_expect_rule ("import bpy\nprint(undefined_thing)\n", "name");
    s_expect_valid ("import bpy\nsum = 0\nfor i in range(3):\n    sum += i\nprint(sum, max(1, 2), abs(-1))\n");
    s_expect_rule ("import bpy\ngetattr = print\n", "builtin");
    s_expect_rule ("import bpy\nfor type in range(2):\n    pass\n", "builtin");
    s_expect_rule ("import bpy\nimport math as open\n", "builtin");
    s_expect_rule ("import bpy\ndef f():\n    nonlocal_thing = 1\n    global gone\n", "name");
    s_expect_rule ("import bpy\nmatch 1:\n    case 1:\n        pass\n", "match");
}

static void test_unicode_identifiers_are_normalised (void **state)
{
    /* Python applies NFKC to identifiers: the parser, not a regex, sees them */
    s_expect_rule ("ｅｘｅｃ('1')\n", "builtin");
    s_expect_rule ("import bpy\nbpy.ａｐｐ.handlers\n", "bpy");
    s_expect_rule ("x = print.__\xef\xbd\x93" "elf__\n", "underscore");     /* fullwidth s */
    /* a fullwidth low line cannot start an identifier: the parser refuses it */
    s_expect_rule ("x = print.\xef\xbc\xbf\xef\xbc\xbfself__\n", "syntax");
}

static void test_encoding_and_size (void **state)
{
    json_t *r = bmq_script_validate (s_v, "import bpy\0import os\n", 21);
    assert_true (s_has_rule (r, "encoding"));
    json_decref (r);
    s_expect_rule ("import bpy\nx = '\xff'\n", "encoding");
    s_expect_rule ("# coding: latin-1\nimport bpy\n", "encoding");
    s_expect_valid ("# -*- coding: utf-8 -*-\nimport bpy\n");
    r = bmq_script_validate (s_v, "", 0);
    assert_true (s_has_rule (r, "empty"));
    json_decref (r);
    size_t big = 300 * 1024;
    char *src = malloc (big + 1);
    for (size_t i = 0; i < big; i += 10)
        memcpy (src + i, "x = 1234\n\n", 10);
    r = bmq_script_validate (s_v, src, big);
    assert_true (s_has_rule (r, "size"));
    json_decref (r);
    free (src);
}

static void test_nesting_and_syntax (void **state)
{
    json_t *r = s_check ("import bpy\nfor i in range(3)\n    pass\n");
    assert_true (s_has_rule (r, "syntax"));
    assert_int_equal (json_integer_value (json_object_get (json_array_get (json_object_get (r, "errors"), 0), "line")), 2);
    json_decref (r);
    /* very deep expressions: the parser's own guard, no crash */
    size_t n = 120000;
    char *src = malloc (n * 2 + 4);
    src[0] = 'a';
    for (size_t i = 0; i < n; i++)
        memcpy (src + 1 + 2 * i, "+a", 2);
    src[1 + 2 * n] = '\n';
    r = bmq_script_validate (s_v, src, 2 + 2 * n);
    assert_false (json_is_true (json_object_get (r, "is_valid")));
    json_decref (r);
    memset (src, '(', 5000);
    r = bmq_script_validate (s_v, src, 5000);
    assert_true (s_has_rule (r, "syntax"));
    json_decref (r);
    free (src);
    s_expect_rule ("import bpy\nfor a in range(2):\n for b in range(2):\n  for c in range(2):\n   for d in range(2):\n    for e in range(2):\n     pass\n", "limit");
    s_expect_valid ("import bpy\ndef f():\n    for a in range(2):\n        for b in range(2):\n            pass\nfor c in range(2):\n    for d in range(2):\n        f()\n");
}

static void test_error_count_is_capped (void **state)
{
    char *src = malloc (64 * 1024);
    size_t n = 0;
    for (int i = 0; i < 400; i++)
        n += (size_t) sprintf (src + n, "eval('%d')\n", i);
    json_t *r = bmq_script_validate (s_v, src, n);
    assert_int_equal (json_array_size (json_object_get (r, "errors")), 50);
    assert_int_equal (json_integer_value (json_object_get (r, "errors_omitted")), 350);
    json_decref (r);
    free (src);
}

static void test_rules_config (void **state)
{
    char err[256];
    json_t *cfg = json_pack ("{s:[s,s], s:{s:i}}", "modules", "bpy", "math", "limits", "max_nodes", 40);
    bmq_script_validator_t *v = bmq_script_validator_new (cfg, s_rna, err, sizeof err);
    assert_non_null (v);
    json_t *r = bmq_script_validate (v, "import bpy\nimport random\n", 24);
    assert_true (s_has_rule (r, "import"));
    json_decref (r);
    const char *many = "import bpy\nx = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40]\n";
    r = bmq_script_validate (v, many, strlen (many));
    assert_true (s_has_rule (r, "size"));
    json_decref (r);
    bmq_script_validator_destroy (&v);
    json_decref (cfg);
    cfg = json_pack ("{s:i}", "modules", 3);
    assert_null (bmq_script_validator_new (cfg, s_rna, err, sizeof err));
    assert_non_null (strstr (err, "modules"));
    json_decref (cfg);
    cfg = json_pack ("{s:{s:i}}", "limits", "max_nodez", 3);
    assert_null (bmq_script_validator_new (cfg, s_rna, err, sizeof err));
    json_decref (cfg);
    /* no RNA table: every operator call is refused (nothing can be checked) */
    v = bmq_script_validator_new (NULL, NULL, err, sizeof err);
    const char *cube = "import bpy\nbpy.ops.mesh.primitive_cube_add()\n";
    r = bmq_script_validate (v, cube, strlen (cube));
    assert_true (s_has_rule (r, "rna"));
    json_decref (r);
    bmq_script_validator_destroy (&v);
}

/* `src` with a comment line "# <tag> <n>" appended: the same program under
 * another sha256, so the verdict cache cannot answer (malloc'd). */
static char *s_variant (const char *src, const char *tag, int n)
{
    size_t len = strlen (src) + strlen (tag) + 32;
    char *v = malloc (len);
    snprintf (v, len, "%s# %s %d\n", src, tag, n);
    return v;
}

typedef struct { const char *src; int id; } s_worker_arg_t;

/* Half the calls check a text no one checked before (parse and walk run
 * concurrently), half the shared text (the cache is read and filled concurrently). */
static void *s_worker (void *arg)
{
    const s_worker_arg_t *a = arg;
    char tag[32];
    snprintf (tag, sizeof tag, "thread %d", a->id);
    for (int i = 0; i < 200; i++) {
        char *text = i % 2 ? s_variant (a->src, tag, i) : NULL;
        json_t *r = bmq_script_validate (s_v, text ? text : a->src, strlen (text ? text : a->src));
        bool cached = json_is_true (json_object_get (json_object_get (r, "stats"), "cached"));
        free (text);
        if (!r || !json_is_true (json_object_get (r, "is_valid")) || (text && cached))
            return (void *) 1;
        json_decref (r);
    }
    return NULL;
}

static void test_concurrent_calls (void **state)
{
    size_t len;
    char *src = stu_script_of_lines (50, &len);
    pthread_t t[4];
    s_worker_arg_t args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (s_worker_arg_t) { src, i };
        pthread_create (&t[i], NULL, s_worker, &args[i]);
    }
    for (int i = 0; i < 4; i++) {
        void *rc;
        pthread_join (t[i], &rc);
        assert_null (rc);
    }
    free (src);
}

static void test_generated_scripts_are_valid_and_fast (void **state)
{
    size_t len;
    char *src = stu_script_of_lines (500, &len);
    json_t *r = bmq_script_validate (s_v, src, len);
    if (!json_is_true (json_object_get (r, "is_valid")))
        s_dump ("generated", r);
    assert_true (json_is_true (json_object_get (r, "is_valid")));
    assert_true (json_number_value (json_object_get (json_object_get (r, "stats"), "ms")) < 500);  /* NFR-001 asks < 2 s */
    json_decref (r);
    free (src);
}

/* No Python object outlives a check: LSan cannot see a leaked node (the GC's
 * lists keep it reachable), so count what the GC tracks. */
static void test_no_python_objects_leak (void **state)
{
    size_t len;
    char *good = stu_script_of_lines (200, &len);
    const char *bad = "import os\nx = eval('1')\nprint.__self__\nbpy.ops.mesh.nope(1, **k)\nfor i in range(10**9): pass\n";
    for (int i = 0; i < 5; i++) {           /* warm every lazily built cache */
        json_decref (bmq_script_validate (s_v, good, len));
        json_decref (bmq_script_validate (s_v, bad, strlen (bad)));
    }
    size_t before = bmq_script_python_tracked_objects ();
    for (int i = 0; i < 50; i++) {         /* new texts each time: parsed and walked, not cached */
        char *g = s_variant (good, "leak", i), *b = s_variant (bad, "leak", i), *s = s_variant ("def f(:\n", "leak", i);
        json_t *vg = bmq_script_validate (s_v, g, strlen (g));
        assert_false (json_is_true (json_object_get (json_object_get (vg, "stats"), "cached")));
        json_decref (vg);
        json_decref (bmq_script_validate (s_v, b, strlen (b)));
        json_decref (bmq_script_validate (s_v, s, strlen (s)));
        free (g);
        free (b);
        free (s);
    }
    size_t after = bmq_script_python_tracked_objects ();
    if (after > before)
        fail_msg ("%zu Python objects leaked over 150 checks", after - before);
    free (good);
}

/* The verdict cache (script_cache.h): the same bytes get the same verdict,
 * as a copy, marked cached; one byte more is checked afresh; a validator with
 * other rules has its own cache; a caller's changes never reach the cache. */
static void test_verdict_cache (void **state)
{
    const char *bad = "import os\nimport bpy\nos.system('x')\n# cache test\n";
    json_t *first = bmq_script_validate (s_v, bad, strlen (bad));
    json_t *again = bmq_script_validate (s_v, bad, strlen (bad));
    json_t *fs = json_object_get (first, "stats"), *as = json_object_get (again, "stats");
    assert_false (json_is_true (json_object_get (fs, "cached")));
    assert_true (json_is_true (json_object_get (as, "cached")));
    assert_true (json_number_value (json_object_get (as, "parse_ms")) == 0);
    assert_true (json_equal (json_object_get (first, "errors"), json_object_get (again, "errors")));
    assert_true (json_equal (json_object_get (first, "warnings"), json_object_get (again, "warnings")));
    assert_true (json_equal (json_object_get (first, "sha256"), json_object_get (again, "sha256")));
    assert_false (json_is_true (json_object_get (again, "is_valid")));
    assert_true (json_array_size (json_object_get (again, "errors")) > 0);
    /* a caller that changes its copy changes nothing for the next one */
    json_object_set_new (again, "is_valid", json_true ());
    json_array_clear (json_object_get (again, "errors"));
    json_t *third = bmq_script_validate (s_v, bad, strlen (bad));
    assert_false (json_is_true (json_object_get (third, "is_valid")));
    assert_true (json_equal (json_object_get (first, "errors"), json_object_get (third, "errors")));
    /* the same text under other rules: another validator, another cache, another verdict */
    const char *rnd = "import bpy\nimport random\nx = random.random()\nbpy.context.scene.frame_set(1)\n";
    json_t *d = bmq_script_validate (s_v, rnd, strlen (rnd));
    assert_true (json_is_true (json_object_get (d, "is_valid")));
    char err[256];
    json_t *rules = json_pack ("{s:[s,s]}", "modules", "bpy", "math");
    bmq_script_validator_t *other = bmq_script_validator_new (rules, s_rna, err, sizeof err);
    assert_non_null (other);
    json_t *o = bmq_script_validate (other, rnd, strlen (rnd));
    assert_false (json_is_true (json_object_get (json_object_get (o, "stats"), "cached")));
    assert_false (json_is_true (json_object_get (o, "is_valid")));
    assert_true (s_has_rule (o, "import"));
    json_decref (o);
    json_decref (d);
    bmq_script_validator_destroy (&other);
    json_decref (rules);
    /* one byte more: a new check */
    char *longer = s_variant (bad, "x", 1);
    json_t *l = bmq_script_validate (s_v, longer, strlen (longer));
    assert_false (json_is_true (json_object_get (json_object_get (l, "stats"), "cached")));
    json_decref (l);
    free (longer);
    json_decref (first);
    json_decref (again);
    json_decref (third);
}

/* The cache is bounded and evicts the least recently used verdict. */
static void test_verdict_cache_bound (void **state)
{
    bmq_script_cache_t *c = bmq_script_cache_new (3);
    unsigned char k[5][BMQ_SCRIPT_CACHE_KEY_BYTES];
    for (int i = 0; i < 5; i++) {
        memset (k[i], 0, sizeof k[i]);         /* same home slot: collisions are probed */
        k[i][31] = (unsigned char) i;
    }
    for (int i = 0; i < 3; i++) {
        json_t *v = json_pack ("{s:i}", "n", i);
        bmq_script_cache_put (c, k[i], v);
        json_decref (v);
    }
    json_decref (bmq_script_cache_get (c, k[0]));     /* 0 is now the most recent: 1 is the oldest */
    json_t *v3 = json_pack ("{s:i}", "n", 3);
    bmq_script_cache_put (c, k[3], v3);
    json_decref (v3);
    assert_int_equal (bmq_script_cache_size (c), 3);
    assert_null (bmq_script_cache_get (c, k[1]));
    for (int i = 0; i < 4; i++) {
        if (i == 1)
            continue;
        json_t *got = bmq_script_cache_get (c, k[i]);
        assert_non_null (got);
        assert_int_equal (json_integer_value (json_object_get (got, "n")), i);
        json_decref (got);
    }
    assert_null (bmq_script_cache_get (c, k[4]));
    bmq_script_cache_destroy (&c);
    bmq_script_cache_t *none = bmq_script_cache_new (0);
    json_t *v = json_pack ("{s:i}", "n", 0);
    bmq_script_cache_put (none, k[0], v);
    assert_null (bmq_script_cache_get (none, k[0]));
    json_decref (v);
    bmq_script_cache_destroy (&none);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_seed_acceptance_a),
        cmocka_unit_test (test_seed_acceptance_b),
        cmocka_unit_test (test_seed_acceptance_c),
        cmocka_unit_test (test_good_corpus_is_accepted),
        cmocka_unit_test (test_evil_corpus),
        cmocka_unit_test (test_rna_types_and_bounds),
        cmocka_unit_test (test_names_and_positions),
        cmocka_unit_test (test_unicode_identifiers_are_normalised),
        cmocka_unit_test (test_encoding_and_size),
        cmocka_unit_test (test_nesting_and_syntax),
        cmocka_unit_test (test_error_count_is_capped),
        cmocka_unit_test (test_rules_config),
        cmocka_unit_test (test_concurrent_calls),
        cmocka_unit_test (test_generated_scripts_are_valid_and_fast),
        cmocka_unit_test (test_no_python_objects_leak),
        cmocka_unit_test (test_verdict_cache),
        cmocka_unit_test (test_verdict_cache_bound),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
