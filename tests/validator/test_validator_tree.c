/* object.duplicate_tree (issue 26): the validator counts a copy of a whole
 * tree (the object.parent steps of the plan) against limits.max_vertices,
 * follows reparenting, deletes, unnamed parts and copies that stay under
 * their target's parent, refuses targets whose size it cannot know (scene
 * objects, in the tree or as the target) and parenting cycles, and gives
 * hostile steps typed, clear errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_validator.h"
#include "palette_fixture.h"


/* An ico sphere at 7 subdivisions: 163,842 vertices; 12 fit under the 2,000,000 limit, 13 do not. */
#define ICO(name) "{\"operation\": \"bpy.ops.mesh.primitive_ico_sphere_add\", \"name\": \"" name "\", \"params\": {\"subdivisions\": 7}}"
#define ICO_ANON  "{\"operation\": \"bpy.ops.mesh.primitive_ico_sphere_add\", \"params\": {\"subdivisions\": 7}}"
#define EMPTY(name) "{\"operation\": \"bpy.ops.object.empty_add\", \"name\": \"" name "\"}"
#define PARENT(t, p) "{\"operation\": \"object.parent\", \"target\": \"" t "\", \"params\": {\"parent\": \"" p "\"}}"
#define TREE "\"object.duplicate_tree\""


static json_t *s_check_in (const char *text, const char *scene)
{
    json_error_t jerr;
    json_t *plan = json_loads (text, JSON_DECODE_ANY, &jerr);
    if (!plan) fail_msg ("test plan does not parse: %s (%s)", jerr.text, text);
    json_t *objects = scene ? json_loads (scene, 0, &jerr) : NULL;
    json_t *verdict = bmq_plan_validate_in_scene (s_palette, plan, objects);
    json_decref (plan);
    json_decref (objects);
    assert_non_null (verdict);
    return verdict;
}

static void s_dump (const char *why, const char *text, const json_t *verdict)
{
    char *v = json_dumps (verdict, JSON_INDENT (1));
    fprintf (stderr, "%s: %s\nverdict: %s\n", why, text, v ? v : "(null)");
    free (v);
}

static void s_accept_in (const char *text, const char *scene)
{
    json_t *v = s_check_in (text, scene);
    if (!json_is_true (json_object_get (v, "accepted"))) { s_dump ("should be accepted", text, v); fail (); }
    json_decref (v);
}

static void s_accept (const char *text) { s_accept_in (text, NULL); }

/* Refused with (step, field) as the FIRST error and a reason holding needle. */
static void s_refuse_in (const char *text, const char *scene, int step, const char *field, const char *needle)
{
    json_t *v = s_check_in (text, scene);
    json_t *e = json_array_get (json_object_get (v, "errors"), 0);
    const char *f = json_string_value (json_object_get (e, "field")), *r = json_string_value (json_object_get (e, "reason"));
    if (json_is_true (json_object_get (v, "accepted")) || json_integer_value (json_object_get (e, "step")) != step
        || !f || strcmp (f, field) || !r || !strstr (r, needle)) {
        s_dump ("should be refused", text, v);
        fail_msg ("expected step %d, field %s, reason with '%s'", step, field, needle);
    }
    json_decref (v);
}

static void s_refuse (const char *text, int step, const char *field, const char *needle)
{
    s_refuse_in (text, NULL, step, field, needle);
}

/* prefix, then `copies` steps made by fmt (with %d: the copy's number), then "]" */
static char *s_plan (const char *prefix, int copies, const char *fmt)
{
    size_t cap = strlen (prefix) + (size_t) copies * (strlen (fmt) + 16) + 4, used;
    char *text = malloc (cap);
    assert_non_null (text);
    used = (size_t) snprintf (text, cap, "%s", prefix);
    for (int k = 0; k < copies; k++) {
        used += (size_t) snprintf (text + used, cap - used, ", ");
        used += (size_t) snprintf (text + used, cap - used, fmt, k + 1);
    }
    snprintf (text + used, cap - used, "]");
    return text;
}

/* A root with two 163,842-vertex parts: each copy of the tree costs both. 2 + 2 × 5 = 12 spheres fit; a 6th copy
 * is over at its own step. The plain duplicate copies the empty alone (0 vertices): any number fits. */
#define TWO_PARTS "[" EMPTY ("r") ", " ICO ("a") ", " ICO ("b") ", " PARENT ("a", "r") ", " PARENT ("b", "r")
static void test_tree_cost (void **state)
{
    char *five = s_plan (TWO_PARTS, 5, "{\"operation\": " TREE ", \"target\": \"r\", \"name\": \"r%d\"}");
    char *six = s_plan (TWO_PARTS, 6, "{\"operation\": " TREE ", \"target\": \"r\", \"name\": \"r%d\"}");
    s_accept (five);
    s_refuse (six, 10, "vertices", "over the limit");
    free (five);
    free (six);
    char *plain = s_plan (TWO_PARTS, 40, "{\"operation\": \"bpy.ops.object.duplicate\", \"target\": \"r\", \"name\": \"p%d\"}");
    s_accept (plain);
    free (plain);
    /* a copy of a copy costs its whole tree too */
    s_accept (TWO_PARTS ", {\"operation\": " TREE ", \"target\": \"r\", \"name\": \"c1\"},"
              " {\"operation\": " TREE ", \"target\": \"c1\", \"name\": \"c2\"},"
              " {\"operation\": " TREE ", \"target\": \"c2\", \"name\": \"c3\"},"
              " {\"operation\": " TREE ", \"target\": \"c3\", \"name\": \"c4\"},"
              " {\"operation\": " TREE ", \"target\": \"c4\", \"name\": \"c5\"}]");
    s_refuse (TWO_PARTS ", {\"operation\": " TREE ", \"target\": \"r\", \"name\": \"c1\"},"
              " {\"operation\": " TREE ", \"target\": \"c1\", \"name\": \"c2\"},"
              " {\"operation\": " TREE ", \"target\": \"c2\", \"name\": \"c3\"},"
              " {\"operation\": " TREE ", \"target\": \"c3\", \"name\": \"c4\"},"
              " {\"operation\": " TREE ", \"target\": \"c4\", \"name\": \"c5\"},"
              " {\"operation\": " TREE ", \"target\": \"c5\", \"name\": \"c6\"}]", 10, "vertices", "over the limit");
    /* deeper trees: a part of a part counts */
    s_refuse ("[" EMPTY ("r") ", " ICO ("a") ", " ICO ("b") ", " PARENT ("a", "r") ", " PARENT ("b", "a") ","
              " {\"operation\": " TREE ", \"target\": \"r\"}, {\"operation\": " TREE ", \"target\": \"r\"},"
              " {\"operation\": " TREE ", \"target\": \"r\"}, {\"operation\": " TREE ", \"target\": \"r\"},"
              " {\"operation\": " TREE ", \"target\": \"r\"}, {\"operation\": " TREE ", \"target\": \"r\"}]",
              10, "vertices", "over the limit");
}

/* What the tree holds follows the plan: a part moved to another root, a deleted part, an unnamed part, a
 * plain copy of a part (Blender keeps it under the same parent). */
static void test_tree_follows_the_plan (void **state)
{
    /* b moved under r2: r's tree is a alone, so 2 + 10 = 12 fit, 13 do not */
    const char *moved = "[" EMPTY ("r") ", " EMPTY ("r2") ", " ICO ("a") ", " ICO ("b") ", " PARENT ("a", "r") ", "
                        PARENT ("b", "r") ", " PARENT ("b", "r2");
    char *ten = s_plan (moved, 10, "{\"operation\": " TREE ", \"target\": \"r\"}");
    char *eleven = s_plan (moved, 11, "{\"operation\": " TREE ", \"target\": \"r\"}");
    s_accept (ten);
    s_refuse (eleven, 17, "vertices", "over the limit");
    free (ten);
    free (eleven);
    /* b deleted: r's copies cost a alone */
    const char *gone = TWO_PARTS ", {\"operation\": \"bpy.ops.object.delete\", \"target\": \"b\"}";
    ten = s_plan (gone, 10, "{\"operation\": " TREE ", \"target\": \"r\"}");
    s_accept (ten);
    free (ten);
    /* an unnamed part parented (as the current object) still counts */
    const char *anon = "[" EMPTY ("r") ", " ICO_ANON ", {\"operation\": \"object.parent\", \"params\": {\"parent\": \"r\"}}";
    char *eleven_ok = s_plan (anon, 11, "{\"operation\": " TREE ", \"target\": \"r\"}");
    char *twelve = s_plan (anon, 12, "{\"operation\": " TREE ", \"target\": \"r\"}");
    s_accept (eleven_ok);
    s_refuse (twelve, 14, "vertices", "over the limit");
    free (eleven_ok);
    free (twelve);
    /* a plain duplicate of a part stays under r: r's tree is a and a2 */
    const char *dup = "[" EMPTY ("r") ", " ICO ("a") ", " PARENT ("a", "r") ","
                      " {\"operation\": \"bpy.ops.object.duplicate\", \"target\": \"a\", \"name\": \"a2\"}";
    char *five = s_plan (dup, 5, "{\"operation\": " TREE ", \"target\": \"r\"}");
    char *six = s_plan (dup, 6, "{\"operation\": " TREE ", \"target\": \"r\"}");
    s_accept (five);
    s_refuse (six, 9, "vertices", "over the limit");
    free (five);
    free (six);
    /* a tree copy of a part stays under r as well */
    const char *tdup = "[" EMPTY ("r") ", " ICO ("a") ", " PARENT ("a", "r") ","
                       " {\"operation\": " TREE ", \"target\": \"a\", \"name\": \"a2\"}";
    six = s_plan (tdup, 6, "{\"operation\": " TREE ", \"target\": \"r\"}");
    s_refuse (six, 9, "vertices", "over the limit");
    free (six);
}

/* A target whose size the validator cannot know is refused, not guessed at. */
static void test_scene_objects_refused (void **state)
{
    s_refuse_in ("[{\"operation\": " TREE ", \"target\": \"chair\", \"name\": \"chair2\"}]", "[\"chair\"]", 0, "target",
                 "copies only objects this plan built: 'chair' was already in the scene");
    /* the plain duplicate of a scene object is allowed, as before */
    s_accept_in ("[{\"operation\": \"bpy.ops.object.duplicate\", \"target\": \"chair\", \"name\": \"chair2\"}]", "[\"chair\"]");
    s_refuse_in ("[" EMPTY ("r") ", " PARENT ("lamp", "r") ", {\"operation\": " TREE ", \"target\": \"r\"}]", "[\"lamp\"]", 2,
                 "target", "'lamp' under 'r' was already in the scene");
    /* a name the plan gives again means the plan's new object: its tree is known */
    s_accept_in ("[" EMPTY ("chair") ", " ICO ("seat") ", " PARENT ("seat", "chair") ","
                 " {\"operation\": " TREE ", \"target\": \"chair\", \"name\": \"chair2\"}]", "[\"chair\", \"rug\"]");
    /* a scene object parented under the scene's "chair" before the plan re-made the name is not under the new one */
    s_accept_in ("[" PARENT ("rug", "chair") ", " EMPTY ("chair") ", {\"operation\": " TREE ", \"target\": \"chair\"}]",
                 "[\"chair\", \"rug\"]");
    /* an unknown target stays the usual error */
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": \"nobody\"}]", 1, "target", "not the name of an object");
}

static void test_cycles_refused (void **state)
{
    s_refuse ("[" EMPTY ("a") ", " EMPTY ("b") ", " PARENT ("a", "b") ", " PARENT ("b", "a") "]", 3, "params.parent",
              "would make a cycle");
    s_refuse ("[" EMPTY ("a") ", " PARENT ("a", "a") "]", 1, "params.parent", "would make a cycle");
    s_refuse ("[" EMPTY ("a") ", " EMPTY ("b") ", " EMPTY ("c") ", " PARENT ("b", "a") ", " PARENT ("c", "b") ", "
              PARENT ("a", "c") "]", 5, "params.parent", "would make a cycle");
    /* reparenting that is not a cycle, then copies: fine (and the walk ends) */
    s_accept ("[" EMPTY ("a") ", " EMPTY ("b") ", " EMPTY ("c") ", " PARENT ("b", "a") ", " PARENT ("c", "b") ", "
              PARENT ("c", "a") ", " PARENT ("b", "c") ", {\"operation\": " TREE ", \"target\": \"a\"},"
              " {\"operation\": " TREE ", \"target\": \"b\"}, {\"operation\": " TREE ", \"target\": \"c\"}]");
}

/* Typed, bounded, clear errors for hostile steps. */
static void test_hostile_steps (void **state)
{
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE "}]", 1, "target", "needs a target");
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": 7}]", 1, "target", "must be a string");
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": \"r\", \"params\": {\"location\": [1, 2]}}]", 1,
              "params.location", "3");
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": \"r\", \"params\": {\"location\": [1e9, 0, 0]}}]", 1,
              "params.location", "10000");
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": \"r\", \"params\": {\"rotation\": [0, 0, 7]}}]", 1,
              "params.rotation", "6.2832");
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": \"r\", \"params\": {\"linked\": \"yes\"}}]", 1,
              "params.linked", "expected true or false");
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": \"r\", \"params\": {\"count\": 3}}]", 1,
              "params.count", "unknown parameter");
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": \"r\", \"name\": \"r\"}]", 1, "name", "already used");
    s_refuse ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": \"r\", \"name\": \"../x\"}]", 1, "name", "not valid");
    s_refuse ("[" EMPTY ("r") ", {\"operation\": \"object.parent\", \"target\": \"r\", \"params\": {\"parent\": [\"r\"]}}]", 1,
              "params.parent", "string");
    s_accept ("[" EMPTY ("r") ", {\"operation\": " TREE ", \"target\": \"r\", \"name\": \"r2\", \"params\":"
              " {\"linked\": false, \"location\": [1, 2, 0], \"rotation\": [0, 0, 1.57]}}]");
    /* a long plan of parent steps and copies over the step limit: a verdict, quickly */
    char *big = s_plan ("[" EMPTY ("r") ", " EMPTY ("s"), 400, PARENT ("s", "r"));
    json_t *v = s_check_in (big, NULL);
    assert_false (json_is_true (json_object_get (v, "accepted")));
    json_decref (v);
    free (big);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_tree_cost),
        cmocka_unit_test (test_tree_follows_the_plan),
        cmocka_unit_test (test_scene_objects_refused),
        cmocka_unit_test (test_cycles_refused),
        cmocka_unit_test (test_hostile_steps),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
