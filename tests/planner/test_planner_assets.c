/* Offline recipes that name assets (issue 16): a recipe's variants and the
 * world light add asset.import steps only when the prompt asks ("a wooden
 * table", "… with a sky", "studio lighting"), never by default; every
 * variant passes the palette; the book refuses malformed variants; the
 * boxes the layout uses ignore textures and HDRIs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan_validator.h"
#include "planner_offline.h"
#include "recipe_book.h"
#include "recipe_bounds.h"

#define RECIPES BMQ_SOURCE_DIR "/services/planner/recipes"

static bmq_palette_t *s_palette;
static bmq_offline_t *s_offline;

static int s_setup (void **state)
{
    char err[512];
    s_palette = bmq_palette_load (BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);
    if (!s_palette) { fprintf (stderr, "palette: %s\n", err); return -1; }
    s_offline = bmq_offline_new (RECIPES, NULL, s_palette, err, sizeof err);
    if (!s_offline) fprintf (stderr, "recipes: %s\n", err);
    return s_offline ? 0 : -1;
}

static int s_teardown (void **state)
{
    bmq_offline_destroy (&s_offline);
    bmq_palette_destroy (&s_palette);
    return 0;
}

/* The plan for a prompt (must plan); note in *note (may be NULL). */
static json_t *s_plan (const char *prompt, char **note)
{
    json_t *body = NULL;
    char code[32], message[1024], *n = NULL;
    if (bmq_offline_plan (s_offline, prompt, &body, &n, code, sizeof code, message, sizeof message))
        fail_msg ("'%s' did not plan: %s: %s", prompt, code, message);
    json_t *verdict = bmq_plan_validate (s_palette, json_object_get (body, "plan"));
    if (!json_is_true (json_object_get (verdict, "accepted")))
        fail_msg ("'%s': the plan does not validate: %s", prompt, json_dumps (verdict, 0));
    json_decref (verdict);
    if (note) *note = n;
    else free (n);
    return body;
}

/* The asset.import steps of a plan body (new array). */
static json_t *s_imports (const json_t *body)
{
    json_t *out = json_array ();
    size_t i;
    json_t *step;
    json_array_foreach (json_object_get (body, "plan"), i, step)
        if (!strcmp (json_string_value (json_object_get (step, "operation")), "asset.import")) json_array_append (out, step);
    return out;
}

static const char *s_param (const json_t *step, const char *key)
{
    return json_string_value (json_object_get (json_object_get (step, "params"), key));
}

static void test_never_by_default (void **state)
{
    const char *prompts[] = { "a table", "a snowman", "a bench", "a red table at 2 0 0", "a table with two chairs",
                              "a sky blue table", "skyscraper", "a studio apartment table" };
    for (size_t i = 0; i < sizeof prompts / sizeof *prompts; i++) {
        json_t *body = NULL;
        char code[32], message[1024], *note = NULL;
        if (bmq_offline_plan (s_offline, prompts[i], &body, &note, code, sizeof code, message, sizeof message)) continue;
        json_t *imports = s_imports (body);
        if (json_array_size (imports)) fail_msg ("'%s' imports assets: %s", prompts[i], json_dumps (imports, 0));
        assert_true (!note || !strstr (note, "Poly Haven"));
        json_decref (imports);
        json_decref (body);
        free (note);
    }
}

static void test_wooden_table (void **state)
{
    char *note = NULL;
    json_t *body = s_plan ("a wooden table", &note);
    json_t *imports = s_imports (body);
    assert_int_equal (json_array_size (imports), 1);
    json_t *step = json_array_get (imports, 0);
    assert_string_equal (json_string_value (json_object_get (step, "target")), "table_top");
    assert_string_equal (s_param (step, "source"), "polyhaven");
    assert_string_equal (s_param (step, "id"), "wood_table_001");
    assert_string_equal (s_param (step, "type"), "texture");
    assert_string_equal (s_param (step, "resolution"), "1k");
    assert_non_null (note);
    assert_non_null (strstr (note, "wood_table_001"));
    assert_non_null (strstr (note, "Poly Haven"));
    /* the texture comes after the part it covers exists */
    size_t i, made = 99, imported = 0;
    json_t *s;
    json_array_foreach (json_object_get (body, "plan"), i, s) {
        const char *name = json_string_value (json_object_get (s, "name"));
        if (name && !strcmp (name, "table_top")) made = i;
        if (s == step) imported = i;
    }
    assert_true (made < imported);
    json_decref (imports);
    json_decref (body);
    free (note);
    /* every copy gets it: two wooden tables, two textures, each on its own top */
    body = s_plan ("two wooden tables", NULL);
    imports = s_imports (body);
    assert_int_equal (json_array_size (imports), 2);
    assert_string_equal (json_string_value (json_object_get (json_array_get (imports, 0), "target")), "table_top");
    assert_string_equal (json_string_value (json_object_get (json_array_get (imports, 1), "target")), "table_top.001");
    json_decref (imports);
    json_decref (body);
    /* a wooden bench: seat and back */
    body = s_plan ("a wooden bench", NULL);
    imports = s_imports (body);
    assert_int_equal (json_array_size (imports), 2);
    assert_string_equal (json_string_value (json_object_get (json_array_get (imports, 0), "target")), "bench_seat");
    assert_string_equal (json_string_value (json_object_get (json_array_get (imports, 1), "target")), "bench_back");
    json_decref (imports);
    json_decref (body);
}

static void test_world_light (void **state)
{
    char *note = NULL;
    json_t *body = s_plan ("a table with a sky", &note);
    json_t *imports = s_imports (body);
    assert_int_equal (json_array_size (imports), 1);
    json_t *step = json_array_get (imports, 0);
    assert_null (json_object_get (step, "target"));
    assert_null (json_object_get (step, "name"));
    assert_string_equal (s_param (step, "type"), "hdri");
    assert_string_equal (s_param (step, "id"), "kloppenheim_06_puresky");
    /* the last step: the world light of the whole scene */
    json_t *plan = json_object_get (body, "plan");
    assert_ptr_equal (json_array_get (plan, json_array_size (plan) - 1), step);
    assert_int_equal (json_array_size (json_object_get (body, "not_understood")), 0);    /* "with a sky" was used */
    assert_non_null (strstr (note, "sky light from the HDRI kloppenheim_06_puresky"));
    free (note);
    json_decref (imports);
    json_decref (body);

    const char *studio[] = { "a chair in studio lighting", "a snowman, hdri", "a robot in a studio" };
    for (size_t i = 0; i < sizeof studio / sizeof *studio; i++) {
        body = s_plan (studio[i], NULL);
        imports = s_imports (body);
        if (json_array_size (imports) != 1) fail_msg ("'%s': %s", studio[i], json_dumps (imports, 0));
        assert_string_equal (s_param (json_array_get (imports, 0), "id"), "studio_small_08");
        assert_string_equal (s_param (json_array_get (imports, 0), "type"), "hdri");
        json_decref (imports);
        json_decref (body);
    }
    /* both at once: one texture, one world light */
    body = s_plan ("a wooden table in studio lighting", NULL);
    imports = s_imports (body);
    assert_int_equal (json_array_size (imports), 2);
    assert_string_equal (s_param (json_array_get (imports, 0), "type"), "texture");
    assert_string_equal (s_param (json_array_get (imports, 1), "type"), "hdri");
    json_decref (imports);
    json_decref (body);
}

/* Every recipe's steps with each of its variants pass the palette. */
static void test_every_variant_is_valid (void **state)
{
    char err[512];
    bmq_recipe_book_t *book = bmq_recipe_book_load (RECIPES, err, sizeof err);
    assert_non_null (book);
    json_t *list = bmq_recipe_book_list (book);
    size_t i, k, with = 0;
    json_t *entry, *v;
    json_array_foreach (list, i, entry) {
        const json_t *r = bmq_recipe_book_get (book, json_string_value (json_object_get (entry, "name")));
        json_array_foreach (json_object_get (r, "variants"), k, v) {
            json_t *plan = json_deep_copy (json_object_get (r, "steps"));
            json_array_extend (plan, json_object_get (v, "steps"));
            json_t *verdict = bmq_plan_validate (s_palette, plan);
            if (!json_is_true (json_object_get (verdict, "accepted")))
                fail_msg ("%s variant %zu: %s", json_string_value (json_object_get (r, "name")), k, json_dumps (verdict, 0));
            json_decref (verdict);
            json_decref (plan);
            with++;
        }
    }
    assert_true (with >= 2);
    json_decref (list);
    bmq_recipe_book_destroy (&book);
}

static void s_expect_bad (const char *variants, const char *needle)
{
    char dir[] = "/tmp/bmq_variants_XXXXXX", path[256], err[512] = "";
    assert_non_null (mkdtemp (dir));
    snprintf (path, sizeof path, "%s/v.yaml", dir);
    FILE *f = fopen (path, "w");
    fprintf (f, "name: box\ndescription: a box\nkeywords: [box]\n"
                "steps: [{operation: bpy.ops.mesh.primitive_cube_add, name: box_body}]\n%s", variants);
    fclose (f);
    bmq_recipe_book_t *book = bmq_recipe_book_load (dir, err, sizeof err);
    unlink (path);
    rmdir (dir);
    if (book) { bmq_recipe_book_destroy (&book); fail_msg ("should not load: %s", variants); }
    if (!strstr (err, needle)) fail_msg ("error '%s' lacks '%s'", err, needle);
}

static void test_bad_variants (void **state)
{
    s_expect_bad ("variants: {when: [x]}\n", "variants must be a list");
    s_expect_bad ("variants: []\n", "variants must be a list");
    s_expect_bad ("variants: [7]\n", "must be a mapping");
    s_expect_bad ("variants: [{when: [], steps: [{operation: a}]}]\n", "when must be a list");
    s_expect_bad ("variants: [{when: [[nested]], steps: [{operation: a}]}]\n", "when[0]");
    s_expect_bad ("variants: [{when: [x], steps: []}]\n", "steps must be a list");
    s_expect_bad ("variants: [{when: [x], steps: [{params: {}}]}]\n", "with an operation");
    s_expect_bad ("variants: [{when: [x], steps: [{operation: a, name: extra}]}]\n", "may not name");
    s_expect_bad ("variants: [{when: [x], steps: [{operation: a, target: lid}]}]\n", "target names no step");
    s_expect_bad ("variants: [{when: [x], steps: [{operation: a}], secret: 1}]\n", "unknown key 'secret'");
    s_expect_bad ("variants: [{when: [x], note: [1], steps: [{operation: a}]}]\n", "note must be");
}

static void test_phrases (void **state)
{
    const char *t = "Two WOODEN tables, with a sky!";
    assert_true (bmq_recipe_phrase_in (t, strlen (t), "wooden table"));
    assert_true (bmq_recipe_phrase_in (t, strlen (t), "with a sky"));
    assert_false (bmq_recipe_phrase_in (t, strlen (t), "wood table"));
    assert_false (bmq_recipe_phrase_in ("a woodentable", 13, "wooden table"));
    assert_false (bmq_recipe_phrase_in ("a sky blue chair", 16, "with a sky"));
    assert_false (bmq_recipe_phrase_in ("", 0, "sky"));
    assert_false (bmq_recipe_phrase_in ("sky", 3, ""));
}

/* Boxes: a texture or an HDRI changes none; a model is an object of no known size. */
static void test_bounds (void **state)
{
    json_t *described = bmq_palette_describe (s_palette);
    json_t *plan = json_loads ("[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"top\", \"params\": {\"size\": 2}},"
        " {\"operation\": \"asset.import\", \"target\": \"top\", \"params\": {\"source\": \"polyhaven\", \"id\": \"wood_table_001\", \"type\": \"texture\"}},"
        " {\"operation\": \"asset.import\", \"params\": {\"source\": \"polyhaven\", \"id\": \"studio_small_08\", \"type\": \"hdri\"}},"
        " {\"operation\": \"asset.import\", \"name\": \"chair\", \"params\": {\"source\": \"polyhaven\", \"id\": \"x\", \"type\": \"model\"}},"
        " {\"operation\": \"object.location\", \"target\": \"top\", \"params\": {\"value\": [1, 0, 0]}}]", 0, NULL);
    assert_non_null (plan);
    bmq_bounds_t *b = bmq_bounds_new (plan, described);
    assert_non_null (b);
    assert_int_equal (bmq_bounds_count (b), 1);           /* the cube only */
    bmq_box_t box;
    assert_true (bmq_bounds_total (b, &box));
    assert_true (box.min[0] > -0.001 && box.min[0] < 0.001 && box.max[0] > 1.999 && box.max[0] < 2.001);   /* moved, not copied */
    assert_true (box.max[2] > 0.999 && box.max[2] < 1.001);
    bmq_bounds_destroy (&b);
    json_decref (plan);
    json_decref (described);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_never_by_default),
        cmocka_unit_test (test_wooden_table),
        cmocka_unit_test (test_world_light),
        cmocka_unit_test (test_every_variant_is_valid),
        cmocka_unit_test (test_bad_variants),
        cmocka_unit_test (test_phrases),
        cmocka_unit_test (test_bounds),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
