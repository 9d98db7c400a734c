/* bmq_plan_validate: every rule gives the right step and field, all errors
 * are listed in order, and hostile input gets a verdict, never a crash. */
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
#include "yaml_json.h"



/* Validate a plan written as JSON text; the text must parse. */
static json_t *s_check (const char *text)
{
    json_error_t jerr;
    json_t *plan = json_loads (text, JSON_DECODE_ANY, &jerr);
    if (!plan) fail_msg ("test plan does not parse: %s (%s)", jerr.text, text);
    json_t *verdict = bmq_plan_validate (s_palette, plan);
    json_decref (plan);
    assert_non_null (verdict);
    return verdict;
}

static void s_dump (const json_t *verdict)
{
    char *text = json_dumps (verdict, JSON_INDENT (1));
    fprintf (stderr, "%s\n", text ? text : "(null)");
    free (text);
}

static bool s_accepted (const json_t *verdict)
{
    return json_is_true (json_object_get (verdict, "accepted"));
}

/* The error at (step, field), or NULL. */
static const json_t *s_error_at (const json_t *verdict, int step, const char *field)
{
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get (verdict, "errors"), i, e)
        if (json_integer_value (json_object_get (e, "step")) == step
            && !strcmp (json_string_value (json_object_get (e, "field")), field))
            return e;
    return NULL;
}

static void s_expect_accept (const char *text)
{
    json_t *v = s_check (text);
    if (!s_accepted (v)) { s_dump (v); fail_msg ("should be accepted: %s", text); }
    assert_int_equal (json_array_size (json_object_get (v, "errors")), 0);
    json_decref (v);
}

static void s_expect_error (const char *text, int step, const char *field, const char *needle)
{
    json_t *v = s_check (text);
    const json_t *e = s_error_at (v, step, field);
    if (s_accepted (v) || !e) { s_dump (v); fail_msg ("expected an error at step %d field %s: %s", step, field, text); }
    const char *reason = json_string_value (json_object_get (e, "reason"));
    if (needle && !strstr (reason, needle)) { s_dump (v); fail_msg ("reason '%s' lacks '%s'", reason, needle); }
    json_decref (v);
}

#define CUBE "\"bpy.ops.mesh.primitive_cube_add\""
#define UV   "\"bpy.ops.mesh.primitive_uv_sphere_add\""

static void test_snowman_recipe_accepted (void **state)
{
    char err[512];
    json_t *recipe = bmq_yaml_load_file (BMQ_SOURCE_DIR "/services/planner/recipes/snowman.yaml", err, sizeof err);
    if (!recipe) fail_msg ("%s", err);
    json_t *v = bmq_plan_validate (s_palette, json_object_get (recipe, "steps"));
    if (!s_accepted (v)) { s_dump (v); fail (); }
    assert_int_equal (json_integer_value (json_object_get (v, "steps")), json_array_size (json_object_get (recipe, "steps")));
    json_decref (v);
    json_decref (recipe);
}

static void test_seed_example_accepted (void **state)
{
    s_expect_accept ("[{\"operation\": " UV ", \"params\": {\"radius\": 1.0, \"location\": [0, 0, 1]}},"
                     " {\"operation\": " UV ", \"params\": {\"radius\": 0.5, \"location\": [0, 0, 2.5]}},"
                     " {\"operation\": \"bpy.ops.transform.translate\", \"params\": {\"value\": [0, 0, 1.5]}}]");
    /* widening: an integer where a float is expected; null params; all parameter kinds */
    s_expect_accept ("[{\"operation\": " UV ", \"params\": {\"radius\": 2, \"segments\": 3, \"ring_count\": 128}},"
                     " {\"operation\": \"bpy.ops.object.shade_smooth\", \"params\": null},"
                     " {\"operation\": \"bpy.ops.transform.rotate\", \"params\": {\"value\": -6.2832, \"orient_axis\": \"X\"}},"
                     " {\"operation\": \"object.material\", \"params\": {\"color\": [1, 0, 0, 0.5], \"metallic\": 1}},"
                     " {\"operation\": " CUBE ", \"name\": \"box 1.a-b\"},"
                     " {\"operation\": \"object.scale\", \"target\": \"box 1.a-b\", \"params\": {\"value\": [0.001, 1000, 1]}}]");
}

static void test_operation_outside_palette (void **state)
{
    json_t *v = s_check ("[{\"operation\": " CUBE "}, {\"operation\": " CUBE "},"
                         " {\"operation\": \"bpy.ops.wm.quit_blender\"}, {\"operation\": " CUBE "}]");
    assert_false (s_accepted (v));
    json_t *errors = json_object_get (v, "errors");
    assert_int_equal (json_array_size (errors), 1);
    json_t *e = json_array_get (errors, 0);
    assert_int_equal (json_integer_value (json_object_get (e, "step")), 2);
    assert_string_equal (json_string_value (json_object_get (e, "field")), "operation");
    assert_string_equal (json_string_value (json_object_get (e, "reason")),
                         "operation bpy.ops.wm.quit_blender is not in the capability palette");
    json_decref (v);
}

static void test_plan_shape_errors (void **state)
{
    s_expect_error ("{\"operation\": " CUBE "}", -1, "plan", "must be a list");
    s_expect_error ("\"make a snowman\"", -1, "plan", "got a string");
    s_expect_error ("null", -1, "plan", "null");
    s_expect_error ("[]", -1, "plan", "no steps");
    /* more than max_steps: refused, and only the first 200 looked at */
    json_t *plan = json_array ();
    for (int i = 0; i < 201; i++) json_array_append_new (plan, json_pack ("{s:s}", "operation", "nope"));
    json_t *v = bmq_plan_validate (s_palette, plan);
    assert_non_null (s_error_at (v, -1, "plan"));
    assert_non_null (s_error_at (v, 199, "operation"));
    assert_null (s_error_at (v, 200, "operation"));
    assert_int_equal (json_integer_value (json_object_get (v, "steps")), 201);
    json_decref (v);
    json_decref (plan);
    v = bmq_plan_validate (s_palette, NULL);
    assert_non_null (s_error_at (v, -1, "plan"));
    json_decref (v);
    v = bmq_plan_validate (NULL, NULL);
    assert_false (s_accepted (v));
    json_decref (v);
}

static void test_step_errors (void **state)
{
    s_expect_error ("[42]", 0, "step", "must be an object");
    s_expect_error ("[{\"operation\": " CUBE "}, [\"nested\"]]", 1, "step", "got a list");
    s_expect_error ("[{\"params\": {}}]", 0, "operation", "missing");
    s_expect_error ("[{\"operation\": 5}]", 0, "operation", "must be a string");
    s_expect_error ("[{\"operation\": \"BPY.OPS.MESH.PRIMITIVE_CUBE_ADD\"}]", 0, "operation", "not in the capability palette");
    s_expect_error ("[{\"operation\": " CUBE ", \"colour\": \"red\"}]", 0, "colour", "unknown step key 'colour'");
    s_expect_error ("[{\"operation\": " CUBE ", \"params\": [1, 2]}]", 0, "params", "must be an object");
}

static void test_param_errors (void **state)
{
    s_expect_error ("[{\"operation\": " CUBE ", \"params\": {\"sise\": 1}}]", 0, "params.sise", "unknown parameter 'sise'");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"radius\": \"big\"}}]", 0, "params.radius", "expected a number");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"radius\": true}}]", 0, "params.radius", "a boolean");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"radius\": 5000}}]", 0, "params.radius", "above the maximum 1000");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"radius\": 0}}]", 0, "params.radius", "below the minimum 0.001");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"segments\": 32.5}}]", 0, "params.segments", "expected an integer");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"segments\": 32.0}}]", 0, "params.segments", "expected an integer");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"segments\": 2}}]", 0, "params.segments", "below the minimum 3");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"segments\": 100000}}]", 0, "params.segments", "above the maximum 256");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"location\": [0, 1]}}]", 0, "params.location", "exactly 3 numbers");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"location\": [0, 1, 2, 3]}}]", 0, "params.location", "too long");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"location\": 3}}]", 0, "params.location", "exactly 3 numbers");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"location\": [0, \"1\", 2]}}]", 0, "params.location", "component 1 (y)");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"location\": [0, 1, 20000]}}]", 0, "params.location",
                    "component 2 (z) 20000 is above the maximum 10000");
    s_expect_error ("[{\"operation\": " UV ", \"params\": {\"location\": [0, false, 2]}}]", 0, "params.location", "a boolean");
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"bpy.ops.transform.translate\"}]", 1, "params.value",
                    "required parameter 'value'");
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"bpy.ops.transform.translate\", \"params\": {}}]", 1,
                    "params.value", "missing");
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"bpy.ops.transform.rotate\", \"params\": {\"value\": 1,"
                    " \"orient_axis\": \"W\"}}]", 1, "params.orient_axis", "'W' is not one of: X, Y, Z");
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"bpy.ops.transform.rotate\", \"params\": {\"value\": 1,"
                    " \"orient_axis\": 1}}]", 1, "params.orient_axis", "expected one of");
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"object.material\", \"params\": {\"color\": [1, 0]}}]", 1,
                    "params.color", "3 or 4 numbers");
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"object.material\", \"params\": {\"color\": [1, 0, 0, 1, 1]}}]",
                    1, "params.color", "3 or 4 numbers");
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"object.material\", \"params\": {\"color\": [1.5, 0, 0]}}]",
                    1, "params.color", "component 0 (r) 1.5 is above the maximum 1");
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"bpy.ops.transform.resize\", \"params\": {\"value\": [0, 1, 1]}}]",
                    1, "params.value", "below the minimum 0.001");
}

static void test_string_params (void **state)
{
    /* the project palette has no string parameter yet: use a small one */
    const char *text = "version: 1\noperations:\n  text.add:\n    creates: object\n"
                       "    params: {body: {type: string, max_len: 8, required: true}}\n";
    json_t *doc = bmq_yaml_parse (text, strlen (text), NULL, 0);
    bmq_palette_t *p = bmq_palette_from_json (doc, NULL, 0);
    json_decref (doc);
    assert_non_null (p);
    json_t *plan = json_pack ("[{s:s, s:{s:s}}]", "operation", "text.add", "params", "body", "12345678");
    json_t *v = bmq_plan_validate (p, plan);
    assert_true (s_accepted (v));
    json_decref (v);
    json_object_set_new (json_object_get (json_array_get (plan, 0), "params"), "body", json_string ("123456789"));
    v = bmq_plan_validate (p, plan);
    assert_non_null (s_error_at (v, 0, "params.body"));
    assert_non_null (strstr (json_string_value (json_object_get (s_error_at (v, 0, "params.body"), "reason")), "at most 8"));
    json_decref (v);
    json_object_set_new (json_object_get (json_array_get (plan, 0), "params"), "body", json_stringn ("a\0b", 3));
    v = bmq_plan_validate (p, plan);
    assert_non_null (s_error_at (v, 0, "params.body"));
    json_decref (v);
    json_decref (plan);
    bmq_palette_destroy (&p);
}

static void test_name_and_target_errors (void **state)
{
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"bad/name\"}]", 0, "name", "not valid");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"\"}]", 0, "name", "not valid");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \" lead\"}]", 0, "name", "not valid");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"a_very_long_name_that_goes_on_and_on_past_sixty_three_characters_x\"}]",
                    0, "name", "1 to 63 characters");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": 7}]", 0, "name", "must be a string");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": " CUBE ", \"name\": \"box\"}]",
                    1, "name", "already used");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": \"object.material\", \"name\": \"m\","
                    " \"params\": {\"color\": [1, 1, 1]}}]", 1, "name", "creates no object");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": \"object.scale\", \"target\": \"bix\","
                    " \"params\": {\"value\": [1, 1, 1]}}]", 1, "target", "target 'bix' is not the name");
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"object.scale\", \"target\": \"later\","
                    " \"params\": {\"value\": [1, 1, 1]}}, {\"operation\": " CUBE ", \"name\": \"later\"}]",
                    1, "target", "earlier step");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": " CUBE ", \"target\": \"box\"}]",
                    1, "target", "takes no target");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": \"object.scale\", \"target\": [\"box\"],"
                    " \"params\": {\"value\": [1, 1, 1]}}]", 1, "target", "must be a string");
    s_expect_error ("[{\"operation\": \"bpy.ops.object.shade_smooth\"}, {\"operation\": " CUBE "}]", 0, "target",
                    "acts on an object");
    /* a name on a bad step still counts, so one mistake does not cascade */
    json_t *v = s_check ("[{\"operation\": \"bpy.ops.mesh.primitive_cub_add\", \"name\": \"box\"},"
                         " {\"operation\": \"bpy.ops.object.shade_smooth\", \"target\": \"box\"}]");
    assert_int_equal (json_array_size (json_object_get (v, "errors")), 1);
    json_decref (v);
}

static void test_vertex_limit (void **state)
{
    /* 13 ico spheres at 7 subdivisions: 13 × 163,842 = 2,129,946 > 2,000,000 */
    json_t *plan = json_array ();
    for (int i = 0; i < 13; i++)
        json_array_append_new (plan, json_pack ("{s:s, s:{s:i}}", "operation", "bpy.ops.mesh.primitive_ico_sphere_add",
                                                "params", "subdivisions", 7));
    json_t *v = bmq_plan_validate (s_palette, plan);
    assert_false (s_accepted (v));
    assert_int_equal (json_array_size (json_object_get (v, "errors")), 1);
    assert_non_null (s_error_at (v, 12, "vertices"));
    json_decref (v);
    json_array_remove (plan, 12);
    v = bmq_plan_validate (s_palette, plan);
    assert_true (s_accepted (v));
    json_decref (v);
    json_decref (plan);
}

/* Deleting, copying and multiplying steps: targets required, a deleted object
 * cannot be targeted, copies and modifiers count in the vertex estimate. */
#define ICO7 "{\"operation\": \"bpy.ops.mesh.primitive_ico_sphere_add\", \"name\": \"ball\", \"params\": {\"subdivisions\": 7}}"
static void test_object_lifecycle (void **state)
{
    s_expect_accept ("[{\"operation\": " CUBE ", \"name\": \"box\"},"
                     " {\"operation\": \"bpy.ops.object.duplicate\", \"target\": \"box\", \"name\": \"box2\"},"
                     " {\"operation\": \"object.location\", \"params\": {\"value\": [3, 0, 0]}},"
                     " {\"operation\": \"bpy.ops.object.modifier_add\", \"target\": \"box2\", \"params\": {\"type\": \"BEVEL\"}},"
                     " {\"operation\": \"bpy.ops.object.subdivision_set\", \"target\": \"box\", \"params\": {\"level\": 2}},"
                     " {\"operation\": \"bpy.ops.object.delete\", \"target\": \"box\"},"
                     " {\"operation\": \"bpy.ops.object.light_add\", \"params\": {\"type\": \"SUN\", \"location\": [0, 0, 9]}},"
                     " {\"operation\": \"bpy.ops.object.camera_add\", \"params\": {\"location\": [0, -9, 2]}}]");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": \"bpy.ops.object.delete\"}]",
                    1, "target", "needs a target");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": \"bpy.ops.object.duplicate\"}]",
                    1, "target", "needs a target");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": \"bpy.ops.object.subdivision_set\"}]",
                    1, "target", "needs a target");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": \"bpy.ops.object.delete\", \"target\": \"box\"},"
                    " {\"operation\": \"object.scale\", \"target\": \"box\", \"params\": {\"value\": [2, 2, 2]}}]",
                    2, "target", "deleted by step 1");
    /* after a delete nothing is current */
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": \"bpy.ops.object.delete\", \"target\": \"box\"},"
                    " {\"operation\": \"bpy.ops.object.shade_smooth\"}]", 2, "target", "acts on an object");
    /* a step cannot target the name it gives itself */
    s_expect_error ("[{\"operation\": " CUBE "}, {\"operation\": \"bpy.ops.object.duplicate\", \"target\": \"twin\", \"name\": \"twin\"}]",
                    1, "target", "earlier step");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"},"
                    " {\"operation\": \"bpy.ops.object.subdivision_set\", \"target\": \"box\", \"params\": {\"level\": 4}}]",
                    1, "params.level", "above the maximum 3");
    s_expect_error ("[{\"operation\": " CUBE ", \"name\": \"box\"}, {\"operation\": \"bpy.ops.object.modifier_add\","
                    " \"target\": \"box\", \"params\": {\"type\": \"BOOLEAN\"}}]", 1, "params.type", "not one of");
    /* 163,842 vertices, copied 11 times: 12 × 163,842 = 1,966,104 fits; a 13th is over */
    char plan[4096];
    size_t used = (size_t) snprintf (plan, sizeof plan, "[" ICO7);
    for (int i = 0; i < 12; i++)
        used += (size_t) snprintf (plan + used, sizeof plan - used,
                                   ", {\"operation\": \"bpy.ops.object.duplicate\", \"target\": \"ball\"}");
    snprintf (plan + used, sizeof plan - used, "]");
    s_expect_error (plan, 12, "vertices", "over the limit");
    /* the same sphere subdivided at level 1 becomes 163,842 × 48 */
    s_expect_error ("[" ICO7 ", {\"operation\": \"bpy.ops.object.subdivision_set\", \"target\": \"ball\", \"params\": {\"level\": 1}}]",
                    1, "vertices", "over the limit");
    s_expect_accept ("[{\"operation\": " CUBE ", \"name\": \"box\"},"
                     " {\"operation\": \"bpy.ops.object.subdivision_set\", \"target\": \"box\", \"params\": {\"level\": 3}}]");
}

static void test_all_errors_listed_in_order (void **state)
{
    json_t *v = s_check ("[{\"operation\": " UV ", \"params\": {\"segments\": 1, \"radius\": -1, \"zzz\": 0}, \"name\": \"x/y\"},"
                         " {\"operation\": \"os.system\", \"params\": {\"cmd\": \"rm -rf /\"}},"
                         " {\"operation\": " CUBE ", \"extra\": 1, \"target\": \"nobody\"},"
                         " 17]");
    if (s_accepted (v)) fail ();
    struct { int step; const char *field; } want[] = {
        { 0, "name" }, { 0, "params.radius" }, { 0, "params.segments" }, { 0, "params.zzz" },
        { 1, "operation" }, { 2, "extra" }, { 2, "target" }, { 3, "step" },
    };
    json_t *errors = json_object_get (v, "errors");
    if (json_array_size (errors) != sizeof want / sizeof *want) { s_dump (v); fail (); }
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        json_t *e = json_array_get (errors, i);
        assert_int_equal (json_integer_value (json_object_get (e, "step")), want[i].step);
        assert_string_equal (json_string_value (json_object_get (e, "field")), want[i].field);
    }
    /* the same plan always gives the same verdict */
    json_t *again = s_check ("[{\"operation\": " UV ", \"params\": {\"segments\": 1, \"radius\": -1, \"zzz\": 0}, \"name\": \"x/y\"},"
                             " {\"operation\": \"os.system\", \"params\": {\"cmd\": \"rm -rf /\"}},"
                             " {\"operation\": " CUBE ", \"extra\": 1, \"target\": \"nobody\"},"
                             " 17]");
    assert_true (json_equal (v, again));
    json_decref (again);
    json_decref (v);
}

/* Garbage of every shape: a verdict with errors, valid JSON out, no crash. */
static void test_hostile_input (void **state)
{
    /* deeply nested junk as a step, as params and as a parameter value */
    json_t *deep = json_array ();
    for (int i = 0; i < 5000; i++) deep = json_pack ("[o]", deep);
    json_t *plan = json_pack ("[O, {s:s, s:O}, {s:s, s:{s:O}}]", deep, "operation", "bpy.ops.mesh.primitive_cube_add",
                              "params", deep, "operation", "bpy.ops.mesh.primitive_cube_add", "params", "size", deep);
    json_t *v = bmq_plan_validate (s_palette, plan);
    assert_non_null (s_error_at (v, 0, "step"));
    assert_non_null (s_error_at (v, 1, "params"));
    assert_non_null (s_error_at (v, 2, "params.size"));
    json_decref (v);
    json_decref (plan);
    json_decref (deep);

    /* thousands of unknown parameters: the verdict stays bounded */
    json_t *params = json_object ();
    for (int i = 0; i < 5000; i++) {
        char key[32];
        snprintf (key, sizeof key, "p%d", i);
        json_object_set_new (params, key, json_integer (i));
    }
    plan = json_pack ("[{s:s, s:o}]", "operation", "bpy.ops.mesh.primitive_cube_add", "params", params);
    v = bmq_plan_validate (s_palette, plan);
    assert_false (s_accepted (v));
    assert_int_equal (json_array_size (json_object_get (v, "errors")), BMQ_PLAN_MAX_ERRORS);
    assert_int_equal (json_integer_value (json_object_get (v, "errors_omitted")), 5000 - BMQ_PLAN_MAX_ERRORS);
    json_decref (v);
    json_decref (plan);

    /* a key with a NUL byte must not pass for "size"; invalid UTF-8 and
     * control bytes quoted back must leave the verdict valid JSON */
    plan = json_array ();
    json_t *step = json_pack ("{s:s}", "operation", "bpy.ops.mesh.primitive_cube_add");
    json_t *p = json_object ();
    json_object_setn_new_nocheck (p, "size\0evil", 9, json_real (1));
    json_object_set_new (step, "params", p);
    json_object_set_new_nocheck (step, "\xff\xfe\n", json_true ());
    json_array_append_new (plan, step);
    json_array_append_new (plan, json_pack ("{s:o, s:o}", "operation", json_stringn_nocheck ("bpy\xc3(\x01", 6),
                                            "name", json_stringn_nocheck ("n\xe9", 2)));
    json_array_append_new (plan, json_pack ("{s:s, s:o}", "operation", "bpy.ops.mesh.primitive_cube_add",
                                            "name", json_stringn_nocheck ("ok\0no", 5)));
    v = bmq_plan_validate (s_palette, plan);
    assert_false (s_accepted (v));
    assert_non_null (s_error_at (v, 0, "params.size?evil"));
    assert_non_null (s_error_at (v, 1, "operation"));
    assert_non_null (s_error_at (v, 1, "name"));
    assert_non_null (s_error_at (v, 2, "name"));
    char *text = json_dumps (v, 0);
    assert_non_null (text);
    json_t *back = json_loads (text, 0, NULL);
    assert_non_null (back);
    json_decref (back);
    free (text);
    json_decref (v);
    json_decref (plan);

    /* random bytes: whatever jansson makes of them gets a verdict */
    srand (7);
    for (int round = 0; round < 2000; round++) {
        char buf[64];
        size_t n = (size_t) (rand () % 63);
        const char alphabet[] = "[]{}\":,0123456789.e-truefalsnl op";
        for (size_t i = 0; i < n; i++) buf[i] = alphabet[rand () % (sizeof alphabet - 1)];
        buf[n] = 0;
        json_t *junk = json_loads (buf, JSON_DECODE_ANY, NULL);
        v = bmq_plan_validate (s_palette, junk);
        assert_non_null (v);
        assert_false (s_accepted (v));
        json_decref (v);
        json_decref (junk);
    }
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_snowman_recipe_accepted),
        cmocka_unit_test (test_seed_example_accepted),
        cmocka_unit_test (test_operation_outside_palette),
        cmocka_unit_test (test_plan_shape_errors),
        cmocka_unit_test (test_step_errors),
        cmocka_unit_test (test_param_errors),
        cmocka_unit_test (test_string_params),
        cmocka_unit_test (test_name_and_target_errors),
        cmocka_unit_test (test_vertex_limit),
        cmocka_unit_test (test_object_lifecycle),
        cmocka_unit_test (test_all_errors_listed_in_order),
        cmocka_unit_test (test_hostile_input),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
