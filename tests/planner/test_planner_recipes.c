/* Recipes: every one passes the validator; prompts find the right one. */
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
#include "recipe_book.h"

#define RECIPES BMQ_SOURCE_DIR "/services/planner/recipes"

static bmq_recipe_book_t *s_book;

static int s_setup (void **state)
{
    char err[512];
    s_book = bmq_recipe_book_load (RECIPES, err, sizeof err);
    if (!s_book) fprintf (stderr, "recipes: %s\n", err);
    return s_book ? 0 : -1;
}

static int s_teardown (void **state)
{
    bmq_recipe_book_destroy (&s_book);
    bmq_recipe_book_destroy (&s_book);      /* safe twice */
    return 0;
}

static void test_every_recipe_is_valid (void **state)
{
    char err[512];
    bmq_palette_t *palette = bmq_palette_load (BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);
    if (!palette) fail_msg ("%s", err);
    assert_true (bmq_recipe_book_count (s_book) >= 8);
    const char *names[] = { "car", "chair", "house", "lamp", "mug", "snowman", "table", "tree" };
    json_t *all = bmq_recipe_book_suggest (s_book, "", 100);
    assert_int_equal (json_array_size (all), bmq_recipe_book_count (s_book));
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const json_t *r = bmq_recipe_book_match (s_book, names[i], NULL);
        if (!r) fail_msg ("no recipe named %s", names[i]);
        assert_string_equal (json_string_value (json_object_get (r, "name")), names[i]);
    }
    size_t i;
    json_t *name;
    json_array_foreach (all, i, name) {
        const json_t *r = bmq_recipe_book_match (s_book, json_string_value (name), NULL);
        assert_non_null (r);
        json_t *steps = json_object_get (r, "steps");
        json_t *verdict = bmq_plan_validate (palette, steps);
        if (!json_is_true (json_object_get (verdict, "accepted"))) {
            char *text = json_dumps (verdict, JSON_INDENT (1));
            fail_msg ("recipe %s is rejected:\n%s", json_string_value (name), text);
        }
        printf ("recipe %-8s %2zu steps, valid\n", json_string_value (name), json_array_size (steps));
        json_decref (verdict);
    }
    json_decref (all);
    bmq_palette_destroy (&palette);
}

static void s_expect (const char *prompt, const char *name)
{
    double score = -1;
    const json_t *r = bmq_recipe_book_match (s_book, prompt, &score);
    const char *got = r ? json_string_value (json_object_get (r, "name")) : NULL;
    if (!name) {
        if (got) fail_msg ("'%s' should match nothing, matched %s (score %.2f)", prompt, got, score);
        assert_true (score == 0);
        return;
    }
    if (!got || strcmp (got, name)) fail_msg ("'%s' should match %s, got %s", prompt, name, got ? got : "nothing");
    assert_true (score >= 0.75 && score <= 1.0);
}

static void test_matching (void **state)
{
    s_expect ("build a snowman", "snowman");
    s_expect ("Make me a snow man please", "snowman");
    s_expect ("bonhomme de neige", "snowman");
    s_expect ("snowmen", "snowman");
    s_expect ("please build me a snowman!", "snowman");
    s_expect ("Fais un BONHOMME DE NEIGE, s'il te plaît", "snowman");
    s_expect ("un muñeco de nieve", "snowman");
    s_expect ("UN MUÑECO DE NIEVE", "snowman");
    s_expect ("snow-man", "snowman");
    s_expect ("a snowmna", "snowman");              /* swapped letters */
    s_expect ("a chair", "chair");
    s_expect ("three chairs", "chair");
    s_expect ("a chiar", "chair");
    s_expect ("a table with chairs", "table");      /* the first object named */
    s_expect ("a table lamp", "lamp");              /* the longer keyword wins */
    s_expect ("a little house", "house");
    s_expect ("une maison", "house");
    s_expect ("Christmas trees", "tree");
    s_expect ("un árbol", "tree");
    s_expect ("coffee cup", "mug");
    s_expect ("red car", "car");
    s_expect ("quantum flux capacitor", NULL);
    s_expect ("a horse", NULL);                     /* not a house with a typo */
    s_expect ("cart", NULL);                        /* short words match exactly only */
    s_expect ("three", NULL);
    s_expect ("", NULL);
    s_expect ("!!! ??? ...", NULL);
    assert_null (bmq_recipe_book_match (s_book, NULL, NULL));
    assert_null (bmq_recipe_book_match (NULL, "snowman", NULL));
}

static void test_suggest (void **state)
{
    json_t *names = bmq_recipe_book_suggest (s_book, "quantum flux capacitor", 3);
    assert_int_equal (json_array_size (names), 3);
    for (size_t i = 0; i < 3; i++) assert_true (json_is_string (json_array_get (names, i)));
    json_decref (names);
    names = bmq_recipe_book_suggest (s_book, "a snowy mann", 2);
    assert_string_equal (json_string_value (json_array_get (names, 0)), "snowman");
    json_decref (names);
    names = bmq_recipe_book_suggest (s_book, "chairz", 1);
    assert_string_equal (json_string_value (json_array_get (names, 0)), "chair");
    json_decref (names);
    names = bmq_recipe_book_suggest (s_book, NULL, 0);
    assert_int_equal (json_array_size (names), 0);
    json_decref (names);
}

static void test_hostile_prompts (void **state)
{
    size_t len = 100000;
    char *big = malloc (len + 1);
    for (size_t i = 0; i < len; i++) big[i] = "ab \xc3\xa9\xff snow"[i % 12];
    big[len] = 0;
    bmq_recipe_book_match (s_book, big, NULL);
    json_decref (bmq_recipe_book_suggest (s_book, big, 5));
    memset (big, 'x', len);                          /* one endless word */
    assert_null (bmq_recipe_book_match (s_book, big, NULL));
    memcpy (big, "\xc3", 2);                         /* truncated UTF-8 */
    bmq_recipe_book_match (s_book, big, NULL);
    free (big);
}

/* Write `files` (name, text pairs) into a fresh folder and try to load it. */
static char *s_load_dir (const char *files[][2], size_t n, bmq_recipe_book_t **book)
{
    static char err[512];
    char dir[] = "/tmp/bmq_recipes_XXXXXX";
    assert_non_null (mkdtemp (dir));
    for (size_t i = 0; i < n; i++) {
        char path[256];
        snprintf (path, sizeof path, "%s/%s", dir, files[i][0]);
        FILE *f = fopen (path, "w");
        fputs (files[i][1], f);
        fclose (f);
    }
    *err = 0;
    *book = bmq_recipe_book_load (dir, err, sizeof err);
    for (size_t i = 0; i < n; i++) {
        char path[256];
        snprintf (path, sizeof path, "%s/%s", dir, files[i][0]);
        unlink (path);
    }
    rmdir (dir);
    return err;
}

#define GOOD "name: cube\ndescription: a cube\nkeywords: [cube, box]\nsteps: [{operation: bpy.ops.mesh.primitive_cube_add}]\n"

static void s_expect_bad (const char *text, const char *needle)
{
    const char *files[][2] = { { "a_good.yaml", GOOD }, { "b_bad.yaml", text }, { "notes.txt", "not yaml: [" } };
    bmq_recipe_book_t *book;
    const char *err = s_load_dir (files, 3, &book);
    if (book) fail_msg ("should not load: %s", text);
    if (!strstr (err, "b_bad.yaml") || !strstr (err, needle)) fail_msg ("error '%s' lacks b_bad.yaml / %s", err, needle);
}

static void test_bad_recipes (void **state)
{
    s_expect_bad ("- a list\n", "must be a mapping");
    s_expect_bad ("name: x\ndescription: d\nkeywords: [x]\n", "steps");
    s_expect_bad ("name: x\ndescription: d\nkeywords: []\nsteps: [{operation: a}]\n", "keywords");
    s_expect_bad ("name: Bad Name\ndescription: d\nkeywords: [x]\nsteps: [{operation: a}]\n", "name");
    s_expect_bad ("name: x\ndescription: d\nkeywords: [x]\nsteps: [{operation: a}]\nsecret: 1\n", "unknown key");
    s_expect_bad ("name: cube\ndescription: d\nkeywords: [x]\nsteps: [{operation: a}]\n", "also used by a_good.yaml");
    s_expect_bad ("name: x\ndescription: [d\n", "YAML");
    s_expect_bad ("name: x\ndescription: d\nkeywords: [[nested]]\nsteps: [{operation: a}]\n", "keyword 0");

    const char *files[][2] = { { "z.yaml", GOOD }, { ".hidden.yaml", "junk: [" }, { "readme.md", "# hi" } };
    bmq_recipe_book_t *book;
    s_load_dir (files, 3, &book);
    assert_non_null (book);
    assert_int_equal (bmq_recipe_book_count (book), 1);
    assert_non_null (bmq_recipe_book_match (book, "a box", NULL));
    bmq_recipe_book_destroy (&book);

    char err[256] = "";
    assert_null (bmq_recipe_book_load ("/nonexistent/recipes", err, sizeof err));
    assert_non_null (strstr (err, "/nonexistent/recipes"));
    assert_null (bmq_recipe_book_load (NULL, err, sizeof err));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_every_recipe_is_valid),
        cmocka_unit_test (test_matching),
        cmocka_unit_test (test_suggest),
        cmocka_unit_test (test_hostile_prompts),
        cmocka_unit_test (test_bad_recipes),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
