/* The palette speaks Blender (issue 27), on the validator's side:
 *   - the seeds' own plans (User Story 2's object.location.z.add, the data
 *     model's object.active.scale) validate as written;
 *   - every form of a property path (component, set/add/mul, subscripts,
 *     scene paths) is accepted within its bounds and refused outside;
 *   - hostile paths (files, drivers, handlers, bl_rna, '__', id_data, ...)
 *     are refused, and a palette that lists one does not load;
 *   - each new operation (edit mode, curves, text, booleans and the other
 *     modifiers, Principled fields, keyframes) is accepted within its bounds
 *     and refused outside;
 *   - `capabilities --compact` (as the CLI measures it) stays under 12,000
 *     bytes, curated and merged with the recorded RNA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "palette_rna.h"
#include "plan_validator.h"
#include "palette_fixture.h"
#include "yaml_json.h"

#define FIXTURE_PATH BMQ_SOURCE_DIR "/tests/validator/fixtures/rna_blender_3.4.1.json"
#define COMPACT_MAX  12000


/* The verdict of a plan given as JSON text. */
static json_t *s_verdict (const char *text)
{
    json_error_t jerr;
    json_t *plan = json_loads (text, 0, &jerr);
    if (!plan) fail_msg ("bad test plan: %s: %s", text, jerr.text);
    json_t *v = bmq_plan_validate (s_palette, plan);
    json_decref (plan);
    return v;
}

static void s_accepted (const char *text)
{
    json_t *v = s_verdict (text);
    if (!json_is_true (json_object_get (v, "accepted"))) {
        char *dump = json_dumps (v, JSON_COMPACT);
        fail_msg ("expected accepted: %s\n  verdict: %s", text, dump);
    }
    json_decref (v);
}

/* Refused, with an error whose reason holds `needle`. */
static void s_refused (const char *text, const char *needle)
{
    json_t *v = s_verdict (text);
    char *dump = json_dumps (v, JSON_COMPACT);
    if (json_is_true (json_object_get (v, "accepted")) || (needle && !strstr (dump, needle)))
        fail_msg ("expected refused (\"%s\"): %s\n  verdict: %s", needle ? needle : "", text, dump);
    free (dump);
    json_decref (v);
}

#define CUBE "{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"c\"}"
#define ONE(op, params) "[" CUBE ", {\"operation\": \"" op "\", \"target\": \"c\", \"params\": " params "}]"

static void test_seed_plans_validate_as_written (void **state)
{
    /* User Story 2, exactly as the specification writes it */
    s_accepted ("[{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"params\": {\"radius\": 1}},"
                " {\"operation\": \"object.location.z.add\", \"params\": {\"value\": 1}},"
                " {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"params\": {\"radius\": 0.5}}]");
    /* the data model's palette entry: the active object's scale */
    s_accepted ("[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\"},"
                " {\"operation\": \"object.active.scale\", \"params\": {\"value\": [1, 2, 1]}}]");
    s_accepted ("[" CUBE ", {\"operation\": \"object.active.scale.set\", \"target\": \"c\", \"params\": {\"value\": [2, 2, 2]}}]");
    /* User Story 1 names mode_set */
    s_accepted (ONE ("bpy.ops.object.mode_set", "{\"mode\": \"EDIT\"}"));
    /* an object path with nothing to act on is refused as any acts_on step is */
    s_refused ("[{\"operation\": \"object.location.z.add\", \"params\": {\"value\": 1}}]", "acts on an object");
}

static void test_path_forms (void **state)
{
    s_accepted (ONE ("object.location", "{\"value\": [1, 2, 3]}"));
    s_accepted (ONE ("object.location.set", "{\"value\": [1, 2, 3]}"));
    s_accepted (ONE ("object.location.x", "{\"value\": 5}"));
    s_accepted (ONE ("object.location.y.set", "{\"value\": -10000}"));
    s_accepted (ONE ("object.location.z.add", "{\"value\": 20000}"));
    s_accepted (ONE ("object.location.add", "{\"value\": [0, 0, 1]}"));
    s_accepted (ONE ("object.scale.mul", "{\"value\": [2, 2, 2]}"));
    s_accepted (ONE ("object.scale.z.mul", "{\"value\": 0.5}"));
    s_accepted (ONE ("object.rotation_euler.2", "{\"value\": 1.5}"));
    s_accepted (ONE ("object.data.color.r", "{\"value\": 0.5}"));
    s_accepted (ONE ("object.hide_render", "{\"value\": true}"));
    s_accepted (ONE ("object.data.energy.mul", "{\"value\": 2}"));
    s_accepted (ONE ("object.data.body", "{\"value\": \"OPEN 24/7\"}"));
    s_accepted (ONE ("object.data.align_x", "{\"value\": \"CENTER\"}"));
    s_accepted (ONE ("object.modifiers[\\\"Bevel\\\"].width", "{\"value\": 0.2}"));
    s_accepted (ONE ("object.modifiers['Bevel 2'].width.add", "{\"value\": 0.1}"));
    s_accepted (ONE ("object.modifiers[0].thickness", "{\"value\": 0.1}"));
    s_accepted ("[{\"operation\": \"scene.frame_end\", \"params\": {\"value\": 250}}]");
    s_accepted ("[{\"operation\": \"scene.frame_start.add\", \"params\": {\"value\": -10}}]");
    s_accepted ("[{\"operation\": \"scene.world.color\", \"params\": {\"value\": [0.1, 0.1, 0.2]}}]");
    s_accepted ("[{\"operation\": \"scene.render.resolution_x\", \"params\": {\"value\": 1920}}]");

    s_refused (ONE ("object.location", "{\"value\": [1, 2]}"), "exactly 3");
    s_refused (ONE ("object.location.x", "{\"value\": [1, 2, 3]}"), "expected a number");
    s_refused (ONE ("object.location.x", "{\"value\": 10001}"), "above the maximum 10000");
    s_refused (ONE ("object.location.z.add", "{\"value\": 20001}"), "above the maximum 20000");
    s_refused (ONE ("object.scale.mul", "{\"value\": [2, 2, 1001]}"), "above the maximum 1000");
    s_refused (ONE ("object.scale", "{\"value\": [0, 1, 1]}"), "below the minimum");
    s_refused (ONE ("object.scale.w", "{\"value\": 1}"), "components x, y, z only");
    s_refused (ONE ("object.hide_render.add", "{\"value\": 1}"), "only set applies");
    s_refused (ONE ("object.data.body.x", "{\"value\": 1}"), "no components");
    s_refused (ONE ("object.data.align_x", "{\"value\": \"MIDDLE\"}"), "is not one of");
    s_refused (ONE ("object.location", "{\"value\": [1, 2, 3], \"extra\": 1}"), "unknown parameter 'extra'");
    s_refused (ONE ("object.location", "{}"), "'value'");
    s_refused (ONE ("object.modifiers.width", "{\"value\": 0.1}"), "not in the capability palette");
    s_refused (ONE ("object.modifiers[\\\"a\\\\\\\"b\\\"].width", "{\"value\": 0.1}"), "subscript");
    s_refused (ONE ("object.modifiers[1000].width", "{\"value\": 0.1}"), "subscript");
    s_refused (ONE ("object.location[0]", "{\"value\": 1}"), "not in the capability palette");
    s_refused (ONE ("object.rotation_mode", "{\"value\": \"XYZ\"}"), "not in the capability palette");
    s_refused (ONE ("object.Location", "{\"value\": [1, 2, 3]}"), "lower-case");
    s_refused (ONE ("object.location.", "{\"value\": [1, 2, 3]}"), "is not object");
    s_refused (ONE ("object..location", "{\"value\": [1, 2, 3]}"), "is not object");
    s_refused ("[{\"operation\": \"scene.frame_end\", \"target\": \"c\", \"params\": {\"value\": 250}}]", "acts on the scene");
    s_refused ("[" CUBE ", {\"operation\": \"object.location\", \"name\": \"n\", \"target\": \"c\", \"params\": {\"value\": [0, 0, 0]}}]",
               "creates no object");
    s_refused ("[{\"operation\": \"scene.frame_end\", \"params\": {\"value\": 1.5}}]", "expected an integer");
    s_refused ("[{\"operation\": \"scene.frame_end.mul\", \"params\": {\"value\": 1001}}]", "above the maximum 1000");
}

static void test_hostile_paths (void **state)
{
    static const char *hostile[] = {
        "object.data.filepath", "scene.render.filepath", "object.library.name", "object.animation_data.drivers",
        "object.driver_add", "scene.handlers", "object.bl_rna.name", "object.rna_type.name", "object.__class__",
        "object.__dict__.x", "object.id_data.name", "object.data.id_data.location", "object._private",
        "object.data.__doc__", "object.modifiers[\\\"x\\\"].__init__", "scene.world.node_tree.nodes",
        "object.data.materials[0].node_tree.name", "object.override_library.reference", "object.original.location",
        "scene.view_layers[0].name", "object.users", "scene.keying_sets.active", "object.data.image_filepath",
        "object.data.texts", "object.data.python", NULL
    };
    for (const char **h = hostile; *h; h++) {
        char plan[512];
        snprintf (plan, sizeof plan, ONE ("%s", "{\"value\": 1}"), *h);
        s_refused (plan, "refused at");
    }
    /* a path that is too long, and one with too many segments */
    char plan[1024], path[400] = "object";
    for (int i = 0; i < 60; i++) strcat (path, ".ab");
    snprintf (plan, sizeof plan, ONE ("%s", "{\"value\": 1}"), path);
    s_refused (plan, "at most");
}

static void s_load_fails (const char *yaml_ops, const char *needle)
{
    char text[2048], err[512] = "";
    snprintf (text, sizeof text, "{\"version\": 1, \"operations\": {%s}}", yaml_ops);
    json_error_t jerr;
    json_t *doc = json_loads (text, 0, &jerr);
    if (!doc) fail_msg ("bad test palette: %s", jerr.text);
    bmq_palette_t *p = bmq_palette_from_json (doc, err, sizeof err);
    json_decref (doc);
    if (p || !strstr (err, needle)) fail_msg ("expected the palette to fail with \"%s\": %s (%s)", needle, text, err);
    bmq_palette_destroy (&p);
}

#define VALUE "\"params\": {\"value\": {\"type\": \"float\", \"min\": 0, \"max\": 1, \"required\": true}}"

static void test_palette_refuses_bad_paths (void **state)
{
    s_load_fails ("\"object.data.filepath\": {\"path\": true, \"acts_on\": \"object\", " VALUE "}", "a path must be");
    s_load_fails ("\"object.__class__\": {\"path\": true, \"acts_on\": \"object\", " VALUE "}", "a path must be");
    s_load_fails ("\"object.id_data.x\": {\"path\": true, \"acts_on\": \"object\", " VALUE "}", "a path must be");
    s_load_fails ("\"object.active.x\": {\"path\": true, \"acts_on\": \"object\", " VALUE "}", "a path must be");
    s_load_fails ("\"object.location.add\": {\"path\": true, \"acts_on\": \"object\", " VALUE "}", "a path must be");
    s_load_fails ("\"world.color\": {\"path\": true, " VALUE "}", "a path must be");
    s_load_fails ("\"scene.frame_end\": {\"path\": true, \"acts_on\": \"object\", " VALUE "}", "a scene path on none");
    s_load_fails ("\"object.hide_render\": {\"path\": true, " VALUE "}", "an object path acts_on object");
    s_load_fails ("\"object.x_y\": {\"path\": true, \"acts_on\": \"object\", \"params\": {\"v\": {\"type\": \"bool\", \"required\": true}}}",
                  "exactly one parameter, value");
    s_load_fails ("\"object.x_y\": {\"path\": true, \"acts_on\": \"object\", \"params\": {\"value\": {\"type\": \"bool\"}}}",
                  "exactly one parameter, value");
    s_load_fails ("\"object.x_y\": {\"path\": false, \"acts_on\": \"object\", " VALUE "}", "path must be true");
    s_load_fails ("\"object.a[].b[\": {\"path\": true, \"acts_on\": \"object\", " VALUE "}", "a path must be");
}

/* Each new operation: one step within its bounds accepted, one outside refused. */
static void test_new_operations_bounds (void **state)
{
    static const struct { const char *op, *good, *bad, *why; } cases[] = {
        { "bpy.ops.object.mode_set", "{\"mode\": \"OBJECT\"}", "{\"mode\": \"SCULPT\"}", "is not one of" },
        { "bpy.ops.mesh.select_all", "{\"action\": \"DESELECT\"}", "{}", "required parameter 'action'" },
        { "mesh.extrude", "{\"offset\": [0, 0, 1]}", "{\"offset\": [0, 0, 1001]}", "above the maximum" },
        { "mesh.extrude", "{\"distance\": 0.5}", "{\"distance\": \"far\"}", "expected a number" },
        { "mesh.loop_cut", "{\"cuts\": 3, \"edge\": 4}", "{\"cuts\": 33}", "above the maximum 32" },
        { "mesh.translate", "{\"offset\": [0.1, 0, 0]}", "{}", "required parameter 'offset'" },
        { "bpy.ops.mesh.inset", "{\"thickness\": 0.1, \"depth\": 0.02}", "{\"thickness\": -1}", "below the minimum" },
        { "bpy.ops.mesh.bevel", "{\"offset\": 0.1, \"segments\": 4, \"affect\": \"VERTICES\"}", "{\"offset\": 0.1, \"segments\": 17}", "above the maximum 16" },
        { "bpy.ops.mesh.subdivide", "{\"number_cuts\": 2}", "{\"number_cuts\": 11}", "above the maximum 10" },
        { "bpy.ops.mesh.merge", "{\"type\": \"COLLAPSE\"}", "{\"type\": \"FIRST\"}", "is not one of" },
        { "bpy.ops.mesh.bridge_edge_loops", "{\"number_cuts\": 4}", "{\"number_cuts\": 65}", "above the maximum 64" },
        { "bpy.ops.mesh.spin", "{\"steps\": 16, \"angle\": 6.2832, \"axis\": [0, 0, 1]}", "{\"steps\": 16, \"angle\": 6.2832}", "required parameter 'axis'" },
        { "bpy.ops.mesh.spin", "{\"steps\": 256, \"angle\": -3, \"axis\": [1, 0, 0]}", "{\"steps\": 257, \"angle\": 1, \"axis\": [0, 0, 1]}", "above the maximum 256" },
        { "bpy.ops.mesh.screw", "{\"steps\": 8, \"turns\": 3, \"axis\": [0, 0, 1]}", "{\"steps\": 8, \"turns\": 33, \"axis\": [0, 0, 1]}", "above the maximum 32" },
        { "bpy.ops.mesh.solidify", "{\"thickness\": 0.05}", "{\"thickness\": 101}", "above the maximum 100" },
        { "object.modifier", "{\"type\": \"BOOLEAN\", \"object\": \"c\", \"operation\": \"UNION\"}", "{\"type\": \"BOOLEAN\", \"operation\": \"XOR\"}", "is not one of" },
        { "object.modifier", "{\"type\": \"SCREW\", \"steps\": 32, \"angle\": 3.14}", "{\"type\": \"SCREW\", \"steps\": 129}", "above the maximum 128" },
        { "object.modifier", "{\"type\": \"SHRINKWRAP\", \"object\": \"c\"}", "{\"type\": \"SHRINKWRAP\", \"object\": 7}", "expected a string" },
        { "object.modifier", "{\"type\": \"ARRAY\", \"count\": 8, \"object\": \"rail\"}", "{\"type\": \"ARRAY\", \"count\": 21}", "above the maximum 20" },
        { "object.material", "{\"color\": [1, 1, 1], \"transmission\": 1, \"emission_strength\": 10, \"emission_color\": [1, 0.5, 0]}",
          "{\"color\": [1, 1, 1], \"emission_strength\": 1001}", "above the maximum 1000" },
        { "object.material", "{\"color\": [1, 1, 1], \"transmission\": 0.5}", "{\"color\": [1, 1, 1], \"transmission\": 2}", "above the maximum 1" },
        { "object.keyframe_insert", "{\"data_path\": \"rotation_euler\", \"frame\": 100, \"index\": 2, \"interpolation\": \"LINEAR\", \"extrapolation\": \"LINEAR\"}",
          "{\"data_path\": \"data.filepath\", \"frame\": 1}", "is not one of" },
        { "object.keyframe_insert", "{\"data_path\": \"location\", \"frame\": 1}", "{\"data_path\": \"location\"}", "required parameter 'frame'" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char plan[1024];
        snprintf (plan, sizeof plan, "[" CUBE ", {\"operation\": \"%s\", \"target\": \"c\", \"params\": %s}]", cases[k].op, cases[k].good);
        s_accepted (plan);
        snprintf (plan, sizeof plan, "[" CUBE ", {\"operation\": \"%s\", \"target\": \"c\", \"params\": %s}]", cases[k].op, cases[k].bad);
        s_refused (plan, cases[k].why);
    }
    static const char *adds[] = { "bpy.ops.curve.primitive_bezier_curve_add", "bpy.ops.curve.primitive_bezier_circle_add",
                                  "bpy.ops.curve.primitive_nurbs_path_add", "bpy.ops.object.text_add", NULL };
    for (const char **a = adds; *a; a++) {
        char plan[512];
        snprintf (plan, sizeof plan, "[{\"operation\": \"%s\", \"name\": \"x\", \"params\": {\"radius\": 2, \"location\": [0, 0, 1]}}]", *a);
        s_accepted (plan);
        snprintf (plan, sizeof plan, "[{\"operation\": \"%s\", \"params\": {\"radius\": 0}}]", *a);
        s_refused (plan, "below the minimum");
    }
    /* edit steps that grow a mesh must name their target (their cost is a factor on it) */
    s_refused ("[" CUBE ", {\"operation\": \"bpy.ops.mesh.subdivide\", \"params\": {\"number_cuts\": 2}}]", "needs a target");
    /* and count: ten subdivisions of 10 cuts on a big grid go over the vertex limit */
    s_refused ("[{\"operation\": \"bpy.ops.mesh.primitive_grid_add\", \"name\": \"g\", \"params\": {\"x_subdivisions\": 100, \"y_subdivisions\": 100}},"
               " {\"operation\": \"bpy.ops.mesh.subdivide\", \"target\": \"g\", \"params\": {\"number_cuts\": 10}},"
               " {\"operation\": \"bpy.ops.mesh.subdivide\", \"target\": \"g\", \"params\": {\"number_cuts\": 10}}]", "over the limit");
}

static size_t s_compact_bytes (const bmq_palette_t *p)
{
    json_t *caps = bmq_palette_capabilities (p, true);
    size_t bytes = json_dumpb (caps, NULL, 0, JSON_COMPACT | JSON_REAL_PRECISION (10));   /* as cli_inspect.c measures */
    json_t *line = json_object_get (caps, "object.data.energy");
    assert_non_null (line);
    assert_non_null (strstr (json_string_value (line), "path, target"));
    json_decref (caps);
    return bytes;
}

static void test_compact_capabilities_affordable (void **state)
{
    size_t curated = s_compact_bytes (s_palette);
    char err[512];
    json_t *doc = bmq_yaml_load_file (PALETTE_PATH, err, sizeof err);
    json_error_t jerr;
    json_t *rna = json_load_file (FIXTURE_PATH, 0, &jerr);
    assert_non_null (doc);
    assert_non_null (rna);
    json_t *merged = bmq_palette_rna_merge (doc, rna, NULL);
    bmq_palette_t *p = bmq_palette_from_json (merged, err, sizeof err);
    if (!p) fail_msg ("merged palette: %s", err);
    assert_int_equal (bmq_palette_count (p), bmq_palette_count (s_palette));     /* nothing dropped by Blender 3.4 */
    size_t after = s_compact_bytes (p);
    printf ("capabilities --compact: %zu operations, %zu bytes curated, %zu merged with Blender 3.4.1's RNA (~%zu tokens)\n",
            bmq_palette_count (p), curated, after, after / 4);
    assert_true (curated < COMPACT_MAX);
    assert_true (after < COMPACT_MAX);
    bmq_palette_destroy (&p);
    json_decref (merged);
    json_decref (rna);
    json_decref (doc);
}

/* The merge with Blender's RNA narrows a path (issue 27): bounds to the
 * property's hard limits, enum items to Blender's; a property Blender lacks or
 * holds read-only drops the path. */
static void test_paths_merge_with_rna (void **state)
{
    json_error_t jerr;
    json_t *doc = json_loads ("{\"version\": 1, \"operations\": {"
        "\"bpy.ops.mesh.primitive_cube_add\": {\"creates\": \"object\"},"
        "\"object.data.bevel_resolution\": {\"path\": true, \"rna\": \"Curve.bevel_resolution\", \"acts_on\": \"object\","
        "  \"params\": {\"value\": {\"type\": \"int\", \"min\": -5, \"max\": 100, \"required\": true}}},"
        "\"object.data.align_x\": {\"path\": true, \"rna\": \"TextCurve.align_x\", \"acts_on\": \"object\","
        "  \"params\": {\"value\": {\"type\": \"enum\", \"items\": [\"LEFT\", \"MIDDLE\"], \"required\": true}}},"
        "\"object.type_name\": {\"path\": true, \"rna\": \"Object.type\", \"acts_on\": \"object\","
        "  \"params\": {\"value\": {\"type\": \"string\", \"max_len\": 8, \"required\": true}}},"
        "\"object.gone\": {\"path\": true, \"rna\": \"Object.gone\", \"acts_on\": \"object\","
        "  \"params\": {\"value\": {\"type\": \"bool\", \"required\": true}}},"
        "\"object.hide_render\": {\"path\": true, \"acts_on\": \"object\","
        "  \"params\": {\"value\": {\"type\": \"bool\", \"required\": true}}}}}", 0, &jerr);
    assert_non_null (doc);
    json_t *rna = json_loads ("{"
        "\"bpy.types.Curve.bevel_resolution\": {\"name\": \"bpy.types.Curve.bevel_resolution\", \"readonly\": false,"
        "  \"params\": [{\"identifier\": \"value\", \"type\": \"INT\", \"array_length\": 0, \"min\": 0, \"max\": 32}]},"
        "\"bpy.types.TextCurve.align_x\": {\"name\": \"x\", \"readonly\": false, \"params\": [{\"identifier\": \"value\","
        "  \"type\": \"ENUM\", \"enum_flag\": false, \"enum_items\": [{\"identifier\": \"LEFT\"}, {\"identifier\": \"CENTER\"}]}]},"
        "\"bpy.types.Object.type\": {\"name\": \"x\", \"readonly\": true, \"params\": [{\"identifier\": \"value\", \"type\": \"STRING\"}]},"
        "\"bpy.types.Object.gone\": null}", 0, &jerr);
    assert_non_null (rna);
    json_t *notes = json_array ();
    json_t *merged = bmq_palette_rna_merge (doc, rna, notes);
    char err[512];
    bmq_palette_t *p = bmq_palette_from_json (merged, err, sizeof err);
    if (!p) fail_msg ("%s", err);
    assert_true (bmq_palette_has (p, "object.data.bevel_resolution"));
    assert_true (bmq_palette_has (p, "object.data.align_x"));
    assert_true (bmq_palette_has (p, "object.hide_render"));          /* no rna key: left curated */
    assert_false (bmq_palette_has (p, "object.type_name"));           /* read-only */
    assert_false (bmq_palette_has (p, "object.gone"));                /* Blender lacks it */
    json_t *ops = json_object_get (merged, "operations");
    json_t *v = json_object_get (json_object_get (json_object_get (ops, "object.data.bevel_resolution"), "params"), "value");
    assert_int_equal (json_integer_value (json_object_get (v, "min")), 0);
    assert_int_equal (json_integer_value (json_object_get (v, "max")), 32);
    v = json_object_get (json_object_get (json_object_get (ops, "object.data.align_x"), "params"), "value");
    assert_int_equal (json_array_size (json_object_get (v, "items")), 1);
    char *text = json_dumps (notes, JSON_COMPACT);
    assert_non_null (strstr (text, "read-only"));
    assert_non_null (strstr (text, "no property Object.gone"));
    free (text);
    /* the merged path still resolves in all its forms, within the narrowed bounds */
    bmq_palette_t *keep = s_palette;
    s_palette = p;
    s_accepted (ONE ("object.data.bevel_resolution.add", "{\"value\": 32}"));
    s_refused (ONE ("object.data.bevel_resolution", "{\"value\": 33}"), "above the maximum 32");
    s_refused (ONE ("object.data.bevel_resolution.add", "{\"value\": 33}"), "above the maximum 32");
    s_refused (ONE ("object.data.align_x", "{\"value\": \"MIDDLE\"}"), "is not one of");
    s_palette = keep;
    bmq_palette_destroy (&p);
    json_decref (merged);
    json_decref (notes);
    json_decref (rna);
    json_decref (doc);
    /* the rna key is for paths only, and names a property the path rules allow */
    s_load_fails ("\"bpy.ops.mesh.x_y\": {\"rna\": \"Mesh.x\", \"acts_on\": \"object\"}", "rna is for paths only");
    s_load_fails ("\"object.x_y\": {\"path\": true, \"rna\": \"Image.filepath\", \"acts_on\": \"object\", " VALUE "}", "rna is for paths only");
    s_load_fails ("\"object.x_y\": {\"path\": true, \"rna\": \"object.x\", \"acts_on\": \"object\", " VALUE "}", "rna is for paths only");
}

/* Hostile input: random names of path characters through the resolver (run
 * under ASan by deploy/test.sh): always a verdict, never a read or write out
 * of bounds, and a resolved path always names a template. */
static void test_random_names (void **state)
{
    static const char alphabet[] = "object.scene.active.location.data.modifiers[]\"'0123456789xyzwrgba_._set.add.mul.__AZ\\";
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    char name[300], reason[320];
    size_t resolved = 0;
    for (int k = 0; k < 50000; k++) {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        size_t len = (size_t) (rng % 260), prefix = (rng >> 20) % 3;
        const char *head = prefix == 0 ? "object." : prefix == 1 ? "scene." : "object.active.";
        size_t h = strlen (head);
        memcpy (name, head, h);
        for (size_t i = h; i < len; i++) {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
            name[i] = alphabet[rng % (sizeof alphabet - 1)];
        }
        size_t n = len > h ? len : h;
        bmq_palette_path_t path;
        int rc = bmq_palette_path_resolve (s_palette, name, n, &path, reason, sizeof reason);
        assert_true (rc == 1 || rc == -1);
        if (rc == 1) {
            assert_true (bmq_palette_op_is_path (path.op) && path.value != NULL);
            resolved++;
        }
        else assert_true (strlen (reason) > 0);
    }
    /* valid names with one to three characters changed, cut or doubled */
    static const char *seeds[] = { "object.location.z.add", "object.active.scale.x.mul", "scene.world.color.r",
                                   "object.modifiers[\"Bevel\"].width.set", "object.data.body", "scene.render.fps.add", NULL };
    for (int k = 0; k < 50000; k++) {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        const char *seed = seeds[rng % 6];
        size_t n = strlen (seed);
        memcpy (name, seed, n);
        for (int m = 0; m < 1 + (int) ((rng >> 8) % 3); m++) {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
            size_t at = (size_t) (rng >> 16) % n;
            switch ((rng >> 40) % 3) {
            case 0: name[at] = alphabet[(rng >> 24) % (sizeof alphabet - 1)]; break;
            case 1: n = at > 6 ? at : n; break;
            default: if (n < 250) { memmove (name + at + 1, name + at, n - at); n++; } break;
            }
        }
        bmq_palette_path_t path;
        int rc = bmq_palette_path_resolve (s_palette, name, n, &path, reason, sizeof reason);
        assert_true (rc >= -1 && rc <= 1);
        if (rc == 1) { assert_true (bmq_palette_op_is_path (path.op) && path.value != NULL); resolved++; }
    }
    /* and some that must resolve */
    static const char *good[] = { "object.location.x", "object.active.scale.mul", "scene.world.color.g.add",
                                  "object.modifiers[\"A b-c.d\"].width.mul", "object.modifiers[12].angle", NULL };
    for (const char **g = good; *g; g++) {
        bmq_palette_path_t path;
        assert_int_equal (bmq_palette_path_resolve (s_palette, *g, strlen (*g), &path, reason, sizeof reason), 1);
    }
    printf ("%zu of 100000 random and mutated names resolved\n", resolved);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_seed_plans_validate_as_written),
        cmocka_unit_test (test_path_forms),
        cmocka_unit_test (test_hostile_paths),
        cmocka_unit_test (test_palette_refuses_bad_paths),
        cmocka_unit_test (test_new_operations_bounds),
        cmocka_unit_test (test_compact_capabilities_affordable),
        cmocka_unit_test (test_paths_merge_with_rna),
        cmocka_unit_test (test_random_names),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
