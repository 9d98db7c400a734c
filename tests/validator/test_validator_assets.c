/* asset.import (issue 16): each source's ids, types, resolutions and formats,
 * and what a step may name or target by the kind of asset, through the whole
 * plan validator with a palette that holds the operation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "plan_assets.h"
#include "plan_validator.h"

static const char *s_palette_text =
    "{\"version\": 1, \"limits\": {\"max_steps\": 20, \"max_name_len\": 63, \"max_vertices\": 100000},"
    " \"operations\": {"
    "  \"bpy.ops.mesh.primitive_cube_add\": {\"description\": \"cube\", \"creates\": \"object\", \"cost\": {\"vertices\": 8}},"
    "  \"asset.import\": {\"description\": \"import\", \"creates\": \"object\", \"acts_on\": \"object\", \"params\": {"
    "    \"source\": {\"type\": \"enum\", \"items\": [\"polyhaven\", \"sketchfab\", \"hyper3d\"], \"required\": true},"
    "    \"id\": {\"type\": \"string\", \"max_len\": 64, \"required\": true},"
    "    \"type\": {\"type\": \"enum\", \"items\": [\"model\", \"hdri\", \"texture\"], \"required\": true},"
    "    \"resolution\": {\"type\": \"enum\", \"items\": [\"1k\", \"2k\", \"4k\", \"8k\"]},"
    "    \"format\": {\"type\": \"enum\", \"items\": [\"gltf\", \"glb\", \"fbx\", \"obj\", \"hdr\", \"exr\", \"jpg\", \"png\"]}}}}}";

static bmq_palette_t *s_palette;

static int s_setup (void **state)
{
    (void) state;
    char err[512];
    json_t *doc = json_loads (s_palette_text, 0, NULL);
    s_palette = doc ? bmq_palette_from_json (doc, err, sizeof err) : NULL;
    if (!s_palette) fprintf (stderr, "palette: %s\n", doc ? err : "does not parse");
    json_decref (doc);
    return s_palette ? 0 : -1;
}

static int s_teardown (void **state)
{
    (void) state;
    bmq_palette_destroy (&s_palette);
    return 0;
}

/* The verdict's errors as "step:field" joined by spaces ("" when accepted). */
static const char *s_errors (const char *plan_text)
{
    static char out[1024];
    json_t *plan = json_loads (plan_text, 0, NULL);
    if (!plan) fail_msg ("the test plan does not parse: %s", plan_text);
    json_t *verdict = bmq_plan_validate (s_palette, plan);
    out[0] = 0;
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get (verdict, "errors"), i, e)
        snprintf (out + strlen (out), sizeof out - strlen (out), "%s%d:%s", i ? " " : "",
                  (int) json_integer_value (json_object_get (e, "step")), json_string_value (json_object_get (e, "field")));
    if (json_is_true (json_object_get (verdict, "accepted")) != (out[0] == 0)) fail_msg ("accepted and errors disagree");
    json_decref (verdict);
    json_decref (plan);
    return out;
}

static void test_well_formed (void **state)
{
    (void) state;
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"name\": \"chair\", \"params\": {\"source\": \"polyhaven\","
                                   " \"id\": \"wooden_chair_01\", \"type\": \"model\", \"resolution\": \"2k\", \"format\": \"gltf\"}}]"), "");
    assert_string_equal (s_errors ("[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"box\"},"
                                   " {\"operation\": \"asset.import\", \"target\": \"box\", \"params\": {\"source\": \"polyhaven\","
                                   " \"id\": \"rock_wall_08\", \"type\": \"texture\", \"resolution\": \"1k\"}}]"), "");
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"params\": {\"source\": \"polyhaven\", \"id\": \"studio_small_09\","
                                   " \"type\": \"hdri\", \"format\": \"exr\"}}]"), "");
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"name\": \"car\", \"params\": {\"source\": \"sketchfab\","
                                   " \"id\": \"0123456789abcdef0123456789abcdef\", \"type\": \"model\", \"format\": \"glb\"}}]"), "");
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"params\": {\"source\": \"hyper3d\","
                                   " \"id\": \"5f1c-Job-42\", \"type\": \"model\"}}]"), "");
}

static void test_ids (void **state)
{
    (void) state;
    assert_true (bmq_asset_id_ok ("polyhaven", "ArmChair_01"));     /* Poly Haven's ids have capitals */
    const char *bad[] = { "../../etc/passwd", "chair.01", "chair 01", "chair%2f01", "", "a/b",
                          "x1234567890123456789012345678901234567890123456789012345678901234" };   /* 65 */
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char plan[512];
        snprintf (plan, sizeof plan, "[{\"operation\": \"asset.import\", \"params\": {\"source\": \"polyhaven\", \"id\": \"%s\","
                  " \"type\": \"hdri\"}}]", bad[i]);
        const char *errors = s_errors (plan);
        if (!strstr (errors, "0:params.id")) fail_msg ("id '%s' passed: %s", bad[i], errors);
    }
    assert_false (bmq_asset_id_ok ("sketchfab", "0123456789ABCDEF0123456789abcdef"));   /* uids are lower-case hex */
    assert_false (bmq_asset_id_ok ("sketchfab", "0123456789abcdef"));
    assert_true (bmq_asset_id_ok ("sketchfab", "0123456789abcdef0123456789abcdef"));
    assert_false (bmq_asset_id_ok ("hyper3d", "job_1"));
    assert_false (bmq_asset_id_ok ("elsewhere", "x"));
}

static void test_types_resolutions_formats (void **state)
{
    (void) state;
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"params\": {\"source\": \"sketchfab\","
                                   " \"id\": \"0123456789abcdef0123456789abcdef\", \"type\": \"hdri\"}}]"), "0:params.type");
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"params\": {\"source\": \"sketchfab\","
                                   " \"id\": \"0123456789abcdef0123456789abcdef\", \"type\": \"model\", \"resolution\": \"4k\"}}]"),
                         "0:params.resolution");
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"params\": {\"source\": \"polyhaven\", \"id\": \"sky\","
                                   " \"type\": \"hdri\", \"format\": \"jpg\"}}]"), "0:params.format");
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"params\": {\"source\": \"polyhaven\", \"id\": \"sky\","
                                   " \"type\": \"hdri\", \"resolution\": \"16k\"}}]"), "0:params.resolution");
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"params\": {\"source\": \"hyper3d\", \"id\": \"j-1\","
                                   " \"type\": \"model\", \"format\": \"fbx\"}}]"), "0:params.format");
}

static void test_name_and_target_by_kind (void **state)
{
    (void) state;
    /* a texture needs its target; a model and an HDRI take none; only a model is named */
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"params\": {\"source\": \"polyhaven\", \"id\": \"bricks\","
                                   " \"type\": \"texture\"}}]"), "0:target");
    assert_string_equal (s_errors ("[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"box\"},"
                                   " {\"operation\": \"asset.import\", \"target\": \"box\", \"params\": {\"source\": \"polyhaven\","
                                   " \"id\": \"sky\", \"type\": \"hdri\"}}]"), "1:target");
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"name\": \"sky\", \"params\": {\"source\": \"polyhaven\","
                                   " \"id\": \"sky\", \"type\": \"hdri\"}}]"), "0:name");
    /* a texture's target must exist like any target */
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"target\": \"ghost\", \"params\": {\"source\": \"polyhaven\","
                                   " \"id\": \"bricks\", \"type\": \"texture\"}}]"), "0:target");
    /* a named model is a target later steps may use */
    assert_string_equal (s_errors ("[{\"operation\": \"asset.import\", \"name\": \"chair\", \"params\": {\"source\": \"polyhaven\","
                                   " \"id\": \"chair_01\", \"type\": \"model\"}},"
                                   " {\"operation\": \"asset.import\", \"target\": \"chair\", \"params\": {\"source\": \"polyhaven\","
                                   " \"id\": \"wood_06\", \"type\": \"texture\"}}]"), "");
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_well_formed),
        cmocka_unit_test (test_ids),
        cmocka_unit_test (test_types_resolutions_formats),
        cmocka_unit_test (test_name_and_target_by_kind),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
