/* The palette file loads, publishes seed 001's shape, and refuses mistakes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "palette.h"
#include "yaml_json.h"

#define PALETTE_PATH BMQ_SOURCE_DIR "/proto/palette.yaml"
#define OPL(s) (s), strlen (s)

static void test_loads_project_palette (void **state)
{
    char err[512] = "";
    bmq_palette_t *p = bmq_palette_load (PALETTE_PATH, err, sizeof err);
    if (!p) fail_msg ("palette did not load: %s", err);
    assert_true (bmq_palette_count (p) >= 18);
    assert_int_equal (bmq_palette_max_steps (p), 200);
    assert_int_equal (bmq_palette_max_name_len (p), 63);
    assert_true (bmq_palette_max_vertices (p) == 2000000);
    const char *must[] = {
        "bpy.ops.mesh.primitive_cube_add", "bpy.ops.mesh.primitive_uv_sphere_add",
        "bpy.ops.mesh.primitive_ico_sphere_add", "bpy.ops.mesh.primitive_cylinder_add",
        "bpy.ops.mesh.primitive_cone_add", "bpy.ops.mesh.primitive_torus_add",
        "bpy.ops.mesh.primitive_plane_add", "bpy.ops.mesh.primitive_circle_add",
        "bpy.ops.mesh.primitive_monkey_add", "bpy.ops.transform.translate", "bpy.ops.transform.resize",
        "bpy.ops.transform.rotate", "bpy.ops.object.shade_smooth", "object.material", "object.location",
        "object.rotation", "object.scale",
    };
    for (size_t i = 0; i < sizeof must / sizeof *must; i++)
        if (!bmq_palette_has (p, must[i])) fail_msg ("palette lacks %s", must[i]);
    assert_false (bmq_palette_has (p, "bpy.ops.wm.quit_blender"));
    assert_false (bmq_palette_has (p, "bpy.ops.mesh.primitive_cube_add "));
    assert_false (bmq_palette_has (p, ""));
    assert_false (bmq_palette_has (p, NULL));
    assert_true (bmq_palette_op_creates (bmq_palette_op (p, OPL ("bpy.ops.mesh.primitive_cone_add"))));
    assert_true (bmq_palette_op_acts_on (bmq_palette_op (p, OPL ("object.material"))));
    bmq_palette_destroy (&p);
    bmq_palette_destroy (&p);           /* safe twice */
    assert_null (p);
}

static void test_publishes_seed_shape (void **state)
{
    bmq_palette_t *p = bmq_palette_load (PALETTE_PATH, NULL, 0);
    assert_non_null (p);
    json_t *j = bmq_palette_to_json (p);
    assert_int_equal (json_object_size (j), bmq_palette_count (p));
    json_t *radius = json_object_get (json_object_get (j, "bpy.ops.mesh.primitive_uv_sphere_add"), "radius");
    assert_string_equal (json_string_value (json_object_get (radius, "type")), "float");
    assert_true (json_is_false (json_object_get (radius, "required")));
    assert_true (json_is_real (json_object_get (radius, "default")));
    assert_true (json_real_value (json_object_get (radius, "default")) == 1.0);
    assert_true (json_number_value (json_object_get (radius, "max")) == 1000);
    json_t *value = json_object_get (json_object_get (j, "bpy.ops.transform.translate"), "value");
    assert_true (json_is_true (json_object_get (value, "required")));
    assert_string_equal (json_string_value (json_object_get (value, "type")), "vec3");
    json_t *axis = json_object_get (json_object_get (j, "bpy.ops.transform.rotate"), "orient_axis");
    assert_int_equal (json_array_size (json_object_get (axis, "items")), 3);
    assert_int_equal (json_object_size (json_object_get (j, "bpy.ops.object.shade_smooth")), 0);
    char *text = json_dumps (j, JSON_COMPACT);
    assert_non_null (text);
    printf ("palette: %zu operations, %zu bytes as compact JSON\n", bmq_palette_count (p), strlen (text));
    free (text);
    json_decref (j);

    json_t *d = bmq_palette_describe (p);
    json_t *cone = json_object_get (json_object_get (d, "operations"), "bpy.ops.mesh.primitive_cone_add");
    assert_true (json_is_true (json_object_get (cone, "creates")));
    assert_non_null (json_object_get (cone, "description"));
    assert_int_equal (json_integer_value (json_object_get (json_object_get (d, "limits"), "max_steps")), 200);
    json_decref (d);
    bmq_palette_destroy (&p);
}

static void test_vertex_costs (void **state)
{
    bmq_palette_t *p = bmq_palette_load (PALETTE_PATH, NULL, 0);
    const bmq_palette_op_t *uv = bmq_palette_op (p, OPL ("bpy.ops.mesh.primitive_uv_sphere_add"));
    assert_true (bmq_palette_op_vertices (uv, NULL) == 32 * 16);
    json_t *params = json_pack ("{s:i, s:i}", "segments", 10, "ring_count", 5);
    assert_true (bmq_palette_op_vertices (uv, params) == 50);
    json_object_set_new (params, "segments", json_string ("many"));   /* invalid → default */
    assert_true (bmq_palette_op_vertices (uv, params) == 32 * 5);
    json_decref (params);
    const bmq_palette_op_t *ico = bmq_palette_op (p, OPL ("bpy.ops.mesh.primitive_ico_sphere_add"));
    params = json_pack ("{s:i}", "subdivisions", 7);
    assert_true (bmq_palette_op_vertices (ico, params) == 10 * 16384 + 2);
    json_decref (params);
    assert_true (bmq_palette_op_vertices (bmq_palette_op (p, OPL ("object.material")), NULL) == 0);
    bmq_palette_destroy (&p);
}

/* A palette text with one operation `op` whose params are `params` (YAML flow). */
static bmq_palette_t *s_palette (const char *text, char *err, size_t errlen)
{
    char inner[256];
    json_t *doc = bmq_yaml_parse (text, strlen (text), inner, sizeof inner);
    if (!doc) fail_msg ("test YAML does not parse: %s", inner);
    bmq_palette_t *p = bmq_palette_from_json (doc, err, errlen);
    json_decref (doc);
    return p;
}

static void s_expect_error (const char *text, const char *needle)
{
    char err[512] = "";
    bmq_palette_t *p = s_palette (text, err, sizeof err);
    if (p) fail_msg ("palette should not load: %s", text);
    if (!strstr (err, needle)) fail_msg ("error '%s' does not mention '%s'", err, needle);
}

#define OP(params) "version: 1\noperations:\n  test.op:\n    params: " params "\n"

static void test_bad_palettes (void **state)
{
    s_expect_error ("- just\n- a list\n", "must be a mapping");
    s_expect_error ("42\n", "must be a mapping");
    s_expect_error ("version: 1\n", "operations");
    s_expect_error ("version: 2\noperations: {a: {}}\n", "version");
    s_expect_error ("version: 1\noperations: [a, b]\n", "operations");
    s_expect_error ("version: 1\nlimits: {max_steps: 0}\noperations: {a: {}}\n", "max_steps");
    s_expect_error ("version: 1\nlimits: {max_step: 10}\noperations: {a: {}}\n", "unknown limit");
    s_expect_error ("version: 1\noperations: {a: [1]}\n", "must be a mapping");
    s_expect_error ("version: 1\noperations: {\"bad op!\": {}}\n", "bad operation name");
    s_expect_error ("version: 1\noperations: {a: {creates: yes}}\n", "creates");
    s_expect_error ("version: 1\noperations: {a: {descripton: x}}\n", "unknown key 'descripton'");
    s_expect_error (OP ("{r: {type: quaternion}}"), "unknown type 'quaternion'");
    s_expect_error (OP ("{r: {min: 1}}"), "type is missing");
    s_expect_error (OP ("{r: 5}"), "must be a mapping");
    s_expect_error (OP ("[r]"), "params must be a mapping");
    s_expect_error (OP ("{r: {type: float, min: 5, max: 1}}"), "min is greater than max");
    s_expect_error (OP ("{r: {type: int, min: 5, max: 1}}"), "min is greater than max");
    s_expect_error (OP ("{r: {type: float, max: 1}}"), "needs both min and max");
    s_expect_error (OP ("{r: {type: int, min: 0.5, max: 1}}"), "integers");
    s_expect_error (OP ("{r: {type: float, min: 0, max: 1, default: 2}}"), "default is invalid: 2 is above the maximum 1");
    s_expect_error (OP ("{r: {type: float, min: 0, max: 1, default: -1}}"), "below the minimum 0");
    s_expect_error (OP ("{r: {type: int, min: 0, max: 9, default: 1.5}}"), "default is invalid");
    s_expect_error (OP ("{r: {type: vec3, min: 0, max: 1, default: [0, 0]}}"), "default is invalid");
    s_expect_error (OP ("{r: {type: vec3, min: 0, max: 1, default: [0, 0, 5]}}"), "component 2 (z)");
    s_expect_error (OP ("{r: {type: enum, items: [A, B], default: C}}"), "'C' is not one of: A, B");
    s_expect_error (OP ("{r: {type: enum, items: []}}"), "enum needs items");
    s_expect_error (OP ("{r: {type: enum, items: [A, A]}}"), "listed twice");
    s_expect_error (OP ("{r: {type: string}}"), "max_len");
    s_expect_error (OP ("{r: {type: string, max_len: 4, default: toolong}}"), "default is invalid");
    s_expect_error (OP ("{r: {type: color, min: 0, max: 2}}"), "within [0, 1]");
    s_expect_error (OP ("{r: {type: bool, min: 0}}"), "does not apply");
    s_expect_error (OP ("{r: {type: float, min: 0, max: 1, requried: true}}"), "key 'requried'");
    s_expect_error (OP ("{r: {type: float, min: 0, max: 1, required: true, default: 0.5}}"), "cannot have a default");
    s_expect_error (OP ("{r: {type: float, min: 0, max: 1, required: yes please}}"), "required must be");
    s_expect_error ("version: 1\noperations: {a: {cost: {vertices: \"x*2\"}}}\n", "bad cost expression");
    s_expect_error ("version: 1\noperations: {a: {cost: {vertices: \"n+\"}, params: {n: {type: int, min: 1, max: 2, default: 1}}}}\n",
                    "bad cost expression");
    s_expect_error ("version: 1\noperations: {a: {cost: {faces: 3}}}\n", "unknown cost key");

    /* a good minimal one loads */
    char err[256];
    bmq_palette_t *p = s_palette (OP ("{r: {type: float, min: 0, max: 1, default: 1}}"), err, sizeof err);
    if (!p) fail_msg ("minimal palette: %s", err);
    assert_int_equal (bmq_palette_count (p), 1);
    bmq_palette_destroy (&p);
}

static void test_load_errors_name_the_file (void **state)
{
    char err[512] = "";
    assert_null (bmq_palette_load ("/nonexistent/palette.yaml", err, sizeof err));
    assert_non_null (strstr (err, "/nonexistent/palette.yaml"));
    char path[] = "/tmp/bmq_palette_XXXXXX";
    int fd = mkstemp (path);
    assert_true (fd >= 0);
    const char *text = "version: 1\noperations: {a: {params: {r: {type: float, min: 3, max: 1}}}}\n";
    assert_int_equal (write (fd, text, strlen (text)), (ssize_t) strlen (text));
    close (fd);
    assert_null (bmq_palette_load (path, err, sizeof err));
    assert_non_null (strstr (err, path));
    assert_non_null (strstr (err, "min is greater than max"));
    assert_null (bmq_palette_load (path, NULL, 0));     /* no err buffer is fine */
    unlink (path);
    assert_null (bmq_palette_from_json (NULL, err, sizeof err));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_loads_project_palette),
        cmocka_unit_test (test_publishes_seed_shape),
        cmocka_unit_test (test_vertex_costs),
        cmocka_unit_test (test_bad_palettes),
        cmocka_unit_test (test_load_errors_name_the_file),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
