/* The curated palette merged with Blender's RNA (palette_rna): against the
 * RNA recorded from Blender 3.4.1 (fixtures/rna_blender_3.4.1.json, made by
 * fixtures/record_rna.py through the add-on's rna_info), and against edited
 * copies of it for every rule: the tighter bound wins, a missing operator or
 * parameter is dropped, types, enum items and defaults are checked, builtins
 * are left alone. And the property that makes swapping palettes safe: a plan
 * the merged palette accepts is one the curated palette accepts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "palette_rna.h"
#include "plan_validator.h"
#include "yaml_json.h"

#define PALETTE_PATH BMQ_SOURCE_DIR "/proto/palette.yaml"
#define FIXTURE_PATH BMQ_SOURCE_DIR "/tests/validator/fixtures/rna_blender_3.4.1.json"
#define UV   "bpy.ops.mesh.primitive_uv_sphere_add"
#define CYL  "bpy.ops.mesh.primitive_cylinder_add"
#define CUBE "bpy.ops.mesh.primitive_cube_add"

static json_t *s_curated, *s_rna;

static int s_setup (void **state)
{
    char err[512];
    json_error_t jerr;
    s_curated = bmq_yaml_load_file (PALETTE_PATH, err, sizeof err);
    s_rna = json_load_file (FIXTURE_PATH, 0, &jerr);
    if (!s_curated) fprintf (stderr, "%s\n", err);
    if (!s_rna) fprintf (stderr, "%s: %s\n", FIXTURE_PATH, jerr.text);
    return s_curated && s_rna ? 0 : -1;
}

static int s_teardown (void **state)
{
    json_decref (s_curated);
    json_decref (s_rna);
    return 0;
}

/* ---- helpers --------------------------------------------------------------- */

static json_t *s_param (json_t *rna, const char *op, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach (json_object_get (json_object_get (rna, op), "params"), i, p)
        if (!strcmp (json_string_value (json_object_get (p, "identifier")), name)) return p;
    fail_msg ("the fixture has no %s.%s", op, name);
    return NULL;
}

static bmq_palette_t *s_merge (const json_t *curated, const json_t *rna, json_t *notes)
{
    json_t *merged = bmq_palette_rna_merge (curated, rna, notes);
    assert_non_null (merged);
    char err[512];
    bmq_palette_t *p = bmq_palette_from_json (merged, err, sizeof err);
    if (!p) fail_msg ("merged palette does not load: %s", err);
    json_decref (merged);
    return p;
}

static size_t s_count (const json_t *notes, const char *level, const char *op, const char *param, const char *needle)
{
    size_t i, n = 0;
    json_t *note;
    json_array_foreach (notes, i, note) {
        const char *p = json_string_value (json_object_get (note, "param"));
        if (level && strcmp (json_string_value (json_object_get (note, "level")), level)) continue;
        if (op && strcmp (json_string_value (json_object_get (note, "operation")), op)) continue;
        if (param && (!p || strcmp (p, param))) continue;
        if (needle && !strstr (json_string_value (json_object_get (note, "note")), needle)) continue;
        n++;
    }
    return n;
}

static json_t *s_spec (const bmq_palette_t *p, const char *op, const char *param)
{
    json_t *all = bmq_palette_to_json (p);
    json_t *spec = json_incref (json_object_get (json_object_get (all, op), param));
    json_decref (all);
    return spec;
}

static bool s_accepts (const bmq_palette_t *p, const char *plan_text)
{
    json_t *plan = json_loads (plan_text, 0, NULL);
    assert_non_null (plan);
    json_t *v = bmq_plan_validate (p, plan);
    bool ok = json_is_true (json_object_get (v, "accepted"));
    json_decref (v);
    json_decref (plan);
    return ok;
}

static void s_dump_notes (const json_t *notes)
{
    char *text = json_dumps (notes, JSON_INDENT (1));
    fprintf (stderr, "%s\n", text);
    free (text);
}

/* ---- the recorded Blender ------------------------------------------------------ */

static void test_fixture_merges_cleanly (void **state)
{
    json_t *notes = json_array ();
    bmq_palette_t *merged = s_merge (s_curated, s_rna, notes);
    /* the curated palette was written for 3.4.1: nothing is dropped or refused */
    if (s_count (notes, "warn", NULL, NULL, NULL)) { s_dump_notes (notes); fail_msg ("warnings against Blender 3.4.1"); }
    assert_int_equal (bmq_palette_count (merged), json_object_size (json_object_get (s_curated, "operations")));
    /* Blender's own default scale of the add operators is the "unset" [0, 0, 0]: noted, curated one kept */
    assert_true (s_count (notes, "info", UV, "scale", "Blender's own default is [0.0,0.0,0.0]") == 1);
    json_t *scale = s_spec (merged, UV, "scale");
    assert_int_equal (json_array_size (json_object_get (scale, "default")), 3);
    assert_true (json_real_value (json_array_get (json_object_get (scale, "default"), 0)) == 1.0);
    json_decref (scale);
    /* curated bounds are tighter than 3.4.1's everywhere: unchanged (float32 0.001 is still 0.001) */
    json_t *seg = s_spec (merged, UV, "segments");
    assert_int_equal (json_integer_value (json_object_get (seg, "max")), 256);
    json_decref (seg);
    json_t *radius = s_spec (merged, UV, "radius");
    assert_true (json_real_value (json_object_get (radius, "min")) == 0.001);
    json_decref (radius);
    /* the planner's snowman still passes */
    assert_true (s_accepts (merged, "[{\"operation\": \"" UV "\", \"name\": \"b\", \"params\": {\"radius\": 1.0,"
                                    " \"segments\": 48, \"ring_count\": 24, \"location\": [0, 0, 1]}},"
                                    " {\"operation\": \"object.material\", \"target\": \"b\", \"params\": {\"color\": [1, 1, 1]}},"
                                    " {\"operation\": \"bpy.ops.object.shade_smooth\", \"target\": \"b\"}]"));
    bmq_palette_destroy (&merged);
    json_decref (notes);
}

/* ---- each rule, on an edited copy ----------------------------------------------- */

static void test_tighter_bound_wins (void **state)
{
    json_t *rna = json_deep_copy (s_rna), *notes = json_array ();
    json_object_set_new (s_param (rna, UV, "segments"), "max", json_integer (100));      /* tighter than 256 */
    json_object_set_new (s_param (rna, UV, "ring_count"), "min", json_integer (1));      /* looser than 3 */
    json_object_set_new (s_param (rna, UV, "radius"), "min", json_real (0.01));          /* tighter than 0.001 */
    json_object_set_new (s_param (rna, UV, "location"), "max", json_real (50));          /* vec3: per component */
    json_object_set_new (s_param (rna, CYL, "depth"), "min", json_real (0.0010000000474974513));  /* float32 of 0.001 */
    bmq_palette_t *p = s_merge (s_curated, rna, notes);
    json_t *seg = s_spec (p, UV, "segments"), *ring = s_spec (p, UV, "ring_count"), *radius = s_spec (p, UV, "radius"),
           *loc = s_spec (p, UV, "location"), *depth = s_spec (p, CYL, "depth");
    assert_int_equal (json_integer_value (json_object_get (seg, "max")), 100);
    assert_int_equal (json_integer_value (json_object_get (ring, "min")), 3);
    assert_true (json_number_value (json_object_get (radius, "min")) == 0.01);
    assert_true (json_number_value (json_object_get (loc, "max")) == 50);
    assert_true (json_number_value (json_object_get (loc, "min")) == -10000);
    assert_true (json_number_value (json_object_get (depth, "min")) == 0.001);
    assert_int_equal (s_count (notes, "info", UV, "segments", "maximum lowered from 256 to Blender's hard maximum 100"), 1);
    assert_int_equal (s_count (notes, NULL, CYL, "depth", "minimum"), 0);
    assert_false (s_accepts (p, "[{\"operation\": \"" UV "\", \"params\": {\"segments\": 101}}]"));
    assert_true (s_accepts (p, "[{\"operation\": \"" UV "\", \"params\": {\"segments\": 100}}]"));
    assert_false (s_accepts (p, "[{\"operation\": \"" UV "\", \"params\": {\"location\": [0, 0, 51]}}]"));
    json_decref (seg); json_decref (ring); json_decref (radius); json_decref (loc); json_decref (depth);
    /* ranges that do not overlap: the parameter goes (the operation, since segments is in the cost) */
    json_object_set_new (s_param (rna, UV, "segments"), "min", json_integer (300));
    json_object_set_new (s_param (rna, UV, "segments"), "max", json_integer (400));
    bmq_palette_t *q = s_merge (s_curated, rna, notes);
    assert_false (bmq_palette_has (q, UV));
    assert_int_equal (s_count (notes, "warn", UV, "segments", "do not overlap"), 1);
    assert_int_equal (s_count (notes, "warn", UV, NULL, "used by its vertex cost"), 1);
    bmq_palette_destroy (&q);
    bmq_palette_destroy (&p);
    json_decref (notes);
    json_decref (rna);
}

static void test_missing_operator_dropped (void **state)
{
    json_t *rna = json_deep_copy (s_rna), *notes = json_array ();
    json_object_set_new (rna, CUBE, json_null ());               /* "this Blender has no such operator" */
    json_object_del (rna, "bpy.ops.mesh.primitive_plane_add");   /* not answered: left unchecked */
    bmq_palette_t *p = s_merge (s_curated, rna, notes);
    assert_false (bmq_palette_has (p, CUBE));
    assert_true (bmq_palette_has (p, "bpy.ops.mesh.primitive_plane_add"));
    assert_int_equal (s_count (notes, "warn", CUBE, NULL, "no such operator"), 1);
    json_t *plan = json_loads ("[{\"operation\": \"" CUBE "\"}]", 0, NULL);
    json_t *v = bmq_plan_validate (p, plan);
    assert_false (json_is_true (json_object_get (v, "accepted")));
    assert_non_null (strstr (json_string_value (json_object_get (json_array_get (json_object_get (v, "errors"), 0), "reason")),
                             "not in the capability palette"));
    json_decref (v);
    json_decref (plan);
    bmq_palette_destroy (&p);
    json_decref (notes);
    json_decref (rna);
}

static void s_remove_param (json_t *rna, const char *op, const char *name)
{
    json_t *params = json_object_get (json_object_get (rna, op), "params");
    for (size_t i = 0; i < json_array_size (params); i++)
        if (!strcmp (json_string_value (json_object_get (json_array_get (params, i), "identifier")), name)) {
            json_array_remove (params, i);
            return;
        }
    fail_msg ("no %s.%s to remove", op, name);
}

static void test_parameters_checked (void **state)
{
    json_t *rna = json_deep_copy (s_rna), *notes = json_array ();
    s_remove_param (rna, CYL, "depth");                                        /* optional, not costed: param goes */
    s_remove_param (rna, "bpy.ops.transform.translate", "value");              /* required: operation goes */
    json_object_set_new (s_param (rna, UV, "location"), "array_length", json_integer (2));   /* vec3 vs FLOAT[2] */
    json_object_set_new (s_param (rna, CUBE, "size"), "type", json_string ("INT"));          /* float vs INT */
    bmq_palette_t *p = s_merge (s_curated, rna, notes);
    assert_true (bmq_palette_has (p, CYL));
    assert_false (s_accepts (p, "[{\"operation\": \"" CYL "\", \"params\": {\"depth\": 1}}]"));
    assert_true (s_accepts (p, "[{\"operation\": \"" CYL "\", \"params\": {\"radius\": 1}}]"));
    assert_false (bmq_palette_has (p, "bpy.ops.transform.translate"));
    assert_int_equal (s_count (notes, "warn", "bpy.ops.transform.translate", NULL, "is required"), 1);
    assert_int_equal (s_count (notes, "warn", UV, "location", "does not match Blender's FLOAT[2]"), 1);
    assert_false (s_accepts (p, "[{\"operation\": \"" UV "\", \"params\": {\"location\": [0, 0, 1]}}]"));
    assert_int_equal (s_count (notes, "warn", CUBE, "size", "curated type float does not match Blender's INT"), 1);
    bmq_palette_destroy (&p);
    /* a parameter Blender requires that the palette does not offer: the operator could never run */
    json_t *rna2 = json_deep_copy (s_rna);
    json_object_set_new (s_param (rna2, CYL, "calc_uvs"), "required", json_true ());
    bmq_palette_t *q = s_merge (s_curated, rna2, notes);
    assert_false (bmq_palette_has (q, CYL));
    assert_int_equal (s_count (notes, "warn", CYL, NULL, "Blender requires parameter 'calc_uvs'"), 1);
    bmq_palette_destroy (&q);
    json_decref (rna2);
    json_decref (notes);
    json_decref (rna);
}

static void test_enum_items (void **state)
{
    json_t *rna = json_deep_copy (s_rna), *notes = json_array ();
    json_t *items = json_object_get (s_param (rna, CYL, "end_fill_type"), "enum_items");
    json_array_remove (items, json_array_size (items) - 1);                  /* TRIFAN unknown to "Blender" */
    json_array_clear (json_object_get (s_param (rna, "bpy.ops.transform.rotate", "orient_axis"), "enum_items"));  /* dynamic */
    json_object_set_new (s_param (rna, "bpy.ops.object.light_add", "type"), "enum_flag", json_true ());  /* a flag set */
    bmq_palette_t *p = s_merge (s_curated, rna, notes);
    json_t *fill = s_spec (p, CYL, "end_fill_type"), *axis = s_spec (p, "bpy.ops.transform.rotate", "orient_axis");
    assert_int_equal (json_array_size (json_object_get (fill, "items")), 2);
    assert_int_equal (json_array_size (json_object_get (axis, "items")), 3);
    assert_int_equal (s_count (notes, "warn", CYL, "end_fill_type", "item 'TRIFAN'"), 1);
    assert_int_equal (s_count (notes, "info", "bpy.ops.transform.rotate", "orient_axis", "run time"), 1);
    assert_false (s_accepts (p, "[{\"operation\": \"" CYL "\", \"params\": {\"end_fill_type\": \"TRIFAN\"}}]"));
    assert_true (s_accepts (p, "[{\"operation\": \"" CYL "\", \"params\": {\"end_fill_type\": \"NGON\"}}]"));
    assert_int_equal (s_count (notes, "warn", "bpy.ops.object.light_add", "type", "a set of flags"), 1);
    json_decref (fill);
    json_decref (axis);
    bmq_palette_destroy (&p);
    json_decref (notes);
    json_decref (rna);
}

/* Defaults, on a small palette of its own. */
static void test_defaults (void **state)
{
    json_t *curated = json_loads ("{\"version\": 1, \"operations\": {\"" UV "\": {\"creates\": \"object\", \"params\": {"
        "\"segments\": {\"type\": \"int\", \"min\": 3, \"max\": 64, \"default\": 8},"          /* fine, differs from 32 */
        "\"ring_count\": {\"type\": \"int\", \"min\": 3, \"max\": 12},"                         /* Blender's 16 does not fit */
        "\"radius\": {\"type\": \"float\", \"min\": 0.5, \"max\": 2},"                          /* Blender's 1.0 fits */
        "\"calc_uvs\": {\"type\": \"bool\", \"default\": true}}}}}", 0, NULL);
    json_t *rna = json_deep_copy (s_rna), *notes = json_array ();
    json_object_set_new (s_param (rna, UV, "segments"), "max", json_integer (6));           /* curated default 8 now too big */
    bmq_palette_t *p = s_merge (curated, rna, notes);
    json_t *seg = s_spec (p, UV, "segments"), *ring = s_spec (p, UV, "ring_count"), *radius = s_spec (p, UV, "radius");
    /* Blender's own default (32) does not fit either: the parameter becomes required */
    assert_null (json_object_get (seg, "default"));
    assert_true (json_is_true (json_object_get (seg, "required")));
    assert_true (json_is_true (json_object_get (ring, "required")));
    assert_true (json_real_value (json_object_get (radius, "default")) == 1.0);
    assert_false (json_is_true (json_object_get (radius, "required")));
    assert_int_equal (s_count (notes, "warn", UV, "ring_count", "outside the bounds"), 1);
    assert_int_equal (s_count (notes, "info", UV, "radius", "default 1.0 from Blender"), 1);
    json_decref (seg); json_decref (ring); json_decref (radius);
    bmq_palette_destroy (&p);
    /* a curated default Blender's limits refuse, with a Blender default that fits: Blender's is used */
    json_object_set_new (s_param (rna, UV, "segments"), "max", json_integer (40));
    json_object_set_new (s_param (rna, UV, "segments"), "min", json_integer (10));
    p = s_merge (curated, rna, notes);
    seg = s_spec (p, UV, "segments");
    assert_int_equal (json_integer_value (json_object_get (seg, "default")), 32);
    assert_int_equal (s_count (notes, "warn", UV, "segments", "Blender's default 32 is used"), 1);
    json_decref (seg);
    bmq_palette_destroy (&p);
    json_decref (notes);
    json_decref (rna);
    json_decref (curated);
}

static void test_builtins_untouched (void **state)
{
    json_t *rna = json_deep_copy (s_rna), *notes = json_array ();
    json_object_set_new (rna, "object.material", json_null ());        /* even if someone answered for it */
    bmq_palette_t *p = s_merge (s_curated, rna, notes);
    assert_true (bmq_palette_has (p, "object.material"));
    assert_true (bmq_palette_has (p, "object.location"));
    assert_false (bmq_palette_rna_wanted ("object.material"));
    assert_true (bmq_palette_rna_wanted (CUBE));
    assert_int_equal (s_count (notes, NULL, "object.material", NULL, NULL), 0);
    bmq_palette_destroy (&p);
    json_t *not_a_palette = json_string ("no");
    assert_null (bmq_palette_rna_merge (not_a_palette, rna, NULL));
    json_decref (not_a_palette);
    json_decref (notes);
    json_decref (rna);
}

/* ---- merged ⊆ curated ------------------------------------------------------------ */

static uint64_t s_rng = 88172645463325252ull;
static uint32_t s_rand (void) { s_rng ^= s_rng << 13; s_rng ^= s_rng >> 7; s_rng ^= s_rng << 17; return (uint32_t) (s_rng >> 32); }
static double s_unit (void) { return (s_rand () >> 8) / 16777216.0; }

/* A value near the curated bounds or the items, sometimes just outside. */
static json_t *s_value (const json_t *spec)
{
    const char *type = json_string_value (json_object_get (spec, "type"));
    double lo = json_number_value (json_object_get (spec, "min")), hi = json_number_value (json_object_get (spec, "max"));
    double span = hi - lo, x = lo - 0.1 * span + 1.2 * span * s_unit ();
    if (!strcmp (type, "int")) return json_integer ((json_int_t) floor (x));
    if (!strcmp (type, "float")) return json_real (x);
    if (!strcmp (type, "bool")) return json_boolean (s_rand () & 1);
    if (!strcmp (type, "enum")) {
        json_t *items = json_object_get (spec, "items");
        return s_rand () % 5 ? json_incref (json_array_get (items, s_rand () % json_array_size (items))) : json_string ("X");
    }
    if (!strcmp (type, "color")) return json_pack ("[f, f, f]", s_unit (), s_unit (), s_unit () * 1.1);
    return json_pack ("[f, f, f]", x, lo + span * s_unit (), lo + span * s_unit ());
}

/* Edit the RNA at random: tighter or looser bounds, fewer items, a missing
 * parameter or operator, another default. */
static void s_perturb (json_t *rna)
{
    const char *op;
    json_t *r;
    json_object_foreach (rna, op, r) {
        if (json_is_null (r)) continue;
        if (s_rand () % 20 == 0) { json_object_set_new (rna, op, json_null ()); continue; }
        json_t *params = json_object_get (r, "params");
        for (size_t i = 0; i < json_array_size (params); i++) {
            json_t *p = json_array_get (params, i);
            switch (s_rand () % 8) {
            case 0: if (json_object_get (p, "max")) json_object_set_new (p, "max", json_real (s_unit () * 300)); break;
            case 1: if (json_object_get (p, "min")) json_object_set_new (p, "min", json_real (s_unit () * 2)); break;
            case 2: if (json_array_size (json_object_get (p, "enum_items")))
                        json_array_remove (json_object_get (p, "enum_items"), 0);
                    break;
            case 3: if (s_rand () % 4 == 0) { json_array_remove (params, i); i--; } break;
            case 4: json_object_set_new (p, "default", json_real (s_unit () * 10)); break;
            default: break;
            }
        }
    }
}

static void test_merged_accepts_subset_of_curated (void **state)
{
    char err[512];
    bmq_palette_t *curated = bmq_palette_from_json (s_curated, err, sizeof err);
    assert_non_null (curated);
    json_t *described = bmq_palette_describe (curated);
    json_t *ops = json_object_get (described, "operations");
    size_t merged_only = 0, both = 0, plans = 0;
    for (int round = 0; round < 60; round++) {
        json_t *rna = json_deep_copy (s_rna);
        s_perturb (rna);
        json_t *doc = bmq_palette_rna_merge (s_curated, rna, NULL);
        bmq_palette_t *merged = bmq_palette_from_json (doc, err, sizeof err);
        json_decref (doc);
        json_decref (rna);
        if (!merged) continue;          /* everything dropped: nothing to compare */
        const char *op;
        json_t *spec;
        for (int k = 0; k < 100; k++) {
            json_t *plan = json_array ();
            int steps = 1 + (int) (s_rand () % 3);
            for (int s = 0; s < steps; s++) {
                size_t pick = s_rand () % json_object_size (ops), n = 0;
                json_object_foreach (ops, op, spec) if (n++ == pick) break;
                if (json_is_true (json_object_get (spec, "acts_on"))) continue;     /* creating steps only: no targets needed */
                json_t *params = json_object (), *pspec;
                const char *pname;
                json_object_foreach (json_object_get (spec, "params"), pname, pspec)
                    if (s_rand () % 2) json_object_set_new (params, pname, s_value (pspec));
                json_array_append_new (plan, json_pack ("{s:s, s:o}", "operation", op, "params", params));
            }
            json_t *vm = bmq_plan_validate (merged, plan), *vc = bmq_plan_validate (curated, plan);
            bool m = json_is_true (json_object_get (vm, "accepted")), c = json_is_true (json_object_get (vc, "accepted"));
            if (m && !c) {
                char *text = json_dumps (plan, JSON_COMPACT);
                fail_msg ("merged accepts what curated refuses: %s", text);
            }
            both += m && c;
            merged_only += c && !m;
            plans++;
            json_decref (vm);
            json_decref (vc);
            json_decref (plan);
        }
        bmq_palette_destroy (&merged);
    }
    printf ("%zu plans: %zu accepted by both, %zu accepted by the curated palette only\n", plans, both, merged_only);
    assert_true (both > 100 && merged_only > 100);       /* both sides of the property were exercised */
    json_decref (described);
    bmq_palette_destroy (&curated);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_fixture_merges_cleanly),
        cmocka_unit_test (test_tighter_bound_wins),
        cmocka_unit_test (test_missing_operator_dropped),
        cmocka_unit_test (test_parameters_checked),
        cmocka_unit_test (test_enum_items),
        cmocka_unit_test (test_defaults),
        cmocka_unit_test (test_builtins_untouched),
        cmocka_unit_test (test_merged_accepts_subset_of_curated),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
