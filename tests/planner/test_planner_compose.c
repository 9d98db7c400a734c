/* Compositions without Blender: every prompt of compose_prompts.json gives the
 * parts and the words not understood it lists (or its error), a plan the
 * validator accepts, one root per copy with every object under it; number
 * words, limits, names, a single recipe as it always was, hostile prompts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "compose_check.h"
#include "scene_compose.h"
#include "plan_validator.h"
#include "recipe_bounds.h"
#include "scene_instance.h"
#include "recipe_params.h"
#include "scene_parse.h"
#include "scene_words.h"

static compose_env_t s_env;

static int s_setup (void **state)
{
    return compose_env_open (&s_env);
}

static int s_teardown (void **state)
{
    compose_env_close (&s_env);
    return 0;
}

static const char *s_op (const json_t *step)
{
    const char *op = json_string_value (json_object_get (step, "operation"));
    return op ? op : "";
}

/* Roots, names and parents: what every composed plan must hold. Returns the number of roots. */
static size_t s_check_structure (const char *prompt, const json_t *body)
{
    json_t *plan = json_object_get (body, "plan"), *names = json_object (), *parent_of = json_object (), *roots = json_object ();
    size_t i, copies = 0, cameras = 0, suns = 0;
    json_t *step, *part;
    json_array_foreach (json_object_get (body, "parts"), i, part) copies += (size_t) json_integer_value (json_object_get (part, "count"));
    json_array_foreach (plan, i, step) {
        const char *name = json_string_value (json_object_get (step, "name"));
        if (name && json_object_get (names, name)) fail_msg ("'%s': the name %s is given twice", prompt, name);
        if (name) json_object_set_new (names, name, json_string (s_op (step)));
        if (!strcmp (s_op (step), "bpy.ops.object.empty_add")) json_object_set_new (roots, name, json_true ());
        if (!strcmp (s_op (step), "object.duplicate_tree")) {       /* a further copy: a copy of a root (issue 26) */
            const char *of = json_string_value (json_object_get (step, "target"));
            if (!of || !json_object_get (roots, of)) fail_msg ("'%s': step %zu copies %s, not a root", prompt, i, of ? of : "?");
            json_object_set_new (roots, name, json_true ());
        }
        if (!strcmp (s_op (step), "bpy.ops.object.camera_add")) cameras++;
        if (!strcmp (s_op (step), "bpy.ops.object.light_add")) suns++;
        if (!strcmp (s_op (step), "object.parent")) {
            const char *to = json_string_value (json_object_get (json_object_get (step, "params"), "parent"));
            const char *target = json_string_value (json_object_get (step, "target"));
            if (!to || !json_object_get (roots, to)) fail_msg ("'%s': step %zu parents %s to %s, not a root", prompt, i, target, to);
            json_object_set_new (parent_of, target, json_string (to));
        }
    }
    const char *name;
    json_t *op;
    json_object_foreach (names, name, op) {
        const char *o = json_string_value (op);
        bool root = !strcmp (o, "bpy.ops.object.empty_add") || !strcmp (o, "object.duplicate_tree"), scene = strstr (o, "camera_add") || strstr (o, "light_add");
        if (!root && !scene && !json_object_get (parent_of, name)) fail_msg ("'%s': %s (%s) hangs under no root", prompt, name, o);
    }
    if (json_object_get (body, "room")) copies++;          /* a room hangs under a root "room" of its own */
    if (json_object_size (roots) != copies) fail_msg ("'%s': %zu roots for %zu copies", prompt, json_object_size (roots), copies);
    if (cameras != (copies >= 2) || suns != (copies >= 2)) fail_msg ("'%s': %zu cameras and %zu suns for %zu copies", prompt, cameras, suns, copies);
    json_decref (names);
    json_decref (parent_of);
    json_decref (roots);
    return copies;
}

static void test_prompt_file (void **state)
{
    json_t *all = compose_prompts ();
    assert_non_null (all);
    size_t i, passed = 0, compositional = 0, rooms = 0, too_big = 0, free_form = 0;
    json_t *e;
    json_array_foreach (all, i, e) {
        const char *prompt = json_string_value (json_object_get (e, "prompt"));
        const char *want_code = json_string_value (json_object_get (e, "code"));
        json_t *body = NULL;
        char code[64], message[1024];
        int rc = compose_run (&s_env, prompt, &body, code, sizeof code, message, sizeof message);
        if (want_code) {
            if (rc != -1 || strcmp (code, want_code)) fail_msg ("'%s': expected error %s, got rc %d code '%s'", prompt, want_code, rc, code);
            compositional++;
            passed++;
            continue;
        }
        if (rc != 0 && json_object_get (e, "expect") && !strcmp (code, "too_big")) {     /* a room over 200 steps: said so */
            printf ("  room over the step limit: %.100s… (%s)\n", prompt, code);
            too_big++;
            continue;
        }
        if (rc != 0) fail_msg ("'%s': no plan (%d %s: %s)", prompt, rc, code, message);
        {   /* the answer travels as plan.reply: every field it carries is declared in messages.def
             * (an undeclared "room" once made every room chat fail on the real bus) */
            bmq_envelope_t *reply = bmq_envelope_new (BMQ_MSG_PLAN_REPLY, "story", json_incref (body));
            unsigned char *wire;
            size_t wire_len;
            char why[512];
            if (bmq_envelope_encode (reply, &wire, &wire_len, why, sizeof why)) fail_msg ("'%s': not a plan.reply: %s", prompt, why);
            free (wire);
            bmq_envelope_destroy (&reply);
        }
        if (json_object_get (e, "expect")) {         /* a room description (issue 26): a valid plan with a room; Blender scores it */
            json_t *verdict = bmq_plan_validate (s_env.palette, json_object_get (body, "plan"));
            if (!json_is_true (json_object_get (verdict, "accepted"))) fail_msg ("'%s': the plan is rejected: %s", prompt, json_dumps (verdict, 0));
            json_decref (verdict);
            if (!json_object_get (body, "room")) fail_msg ("'%s': no room", prompt);
            rooms++;
            passed++;
            json_decref (body);
            continue;
        }
        json_t *parts = json_object_get (body, "parts"), *want = json_object_get (e, "parts");
        char got[2048] = "", line[256];
        size_t j;
        json_t *p;
        json_array_foreach (parts, j, p) {
            compose_part_line (p, line, sizeof line);
            snprintf (got + strlen (got), sizeof got - strlen (got), "%s%s", j ? "; " : "", line);
            const char *w = json_string_value (json_array_get (want, j));
            if (!w || strcmp (w, line)) fail_msg ("'%s': part %zu is '%s', expected '%s' (all: %s)", prompt, j, line, w ? w : "none", got);
        }
        if (json_array_size (parts) != json_array_size (want)) fail_msg ("'%s': %zu parts (%s), expected %zu", prompt,
                                                                          json_array_size (parts), got, json_array_size (want));
        json_t *spots = json_object_get (e, "spots");      /* free-form descriptions (issue 26): where each part goes too */
        json_array_foreach (spots, j, p) {
            const char *want_spot = json_string_value (p);
            const char *got_spot = json_string_value (json_object_get (json_array_get (parts, j), "spot"));
            if ((want_spot || got_spot) && (!want_spot || !got_spot || strcmp (want_spot, got_spot)))
                fail_msg ("'%s': part %zu's spot is %s, expected %s", prompt, j, got_spot ? got_spot : "none",
                          want_spot ? want_spot : "none");
        }
        free_form += spots != NULL;
        if (!json_equal (json_object_get (body, "not_understood"), json_object_get (e, "not_understood"))) {
            char *a = json_dumps (json_object_get (body, "not_understood"), 0), *b = json_dumps (json_object_get (e, "not_understood"), 0);
            fail_msg ("'%s': not understood %s, expected %s", prompt, a, b);
        }
        json_t *verdict = bmq_plan_validate (s_env.palette, json_object_get (body, "plan"));
        if (!json_is_true (json_object_get (verdict, "accepted"))) fail_msg ("'%s': the plan is rejected: %s", prompt, json_dumps (verdict, 0));
        json_decref (verdict);
        size_t copies = s_check_structure (prompt, body);
        compositional += copies >= 2 || json_array_size (json_object_get (body, "not_understood")) > 0;
        passed++;
        json_decref (body);
    }
    printf ("composition: %zu/%zu prompts give the parts expected (%zu compose several objects, ask too much or hold words"
            " not understood)\n", passed, json_array_size (all), compositional);
    assert_true (compositional >= 60);
    printf ("free-form: %zu descriptions written as people write them give the parts and spots expected\n", free_form);
    assert_true (free_form >= 30);
    printf ("rooms: %zu room descriptions give a valid plan with a room, %zu are over the step limit\n", rooms, too_big);
    assert_true (rooms + too_big >= 300);
    assert_true (too_big * 100 <= rooms + too_big);         /* chat failures at most 1 % */
    json_decref (all);
}

static double s_count (const char *text)
{
    bmq_tokens_t k;
    double v = -1;
    assert_int_equal (bmq_tokens_read (text, &k), 0);
    size_t used = bmq_number_words (&k, 0, &v);
    if (used != k.n) v = -1;                    /* every word must be part of the number */
    bmq_tokens_free (&k);
    return v;
}

static void test_number_words (void **state)
{
    struct { const char *text; double value; } cases[] = {
        { "two", 2 }, { "twelve", 12 }, { "twenty one", 21 }, { "twenty-one", 21 }, { "a hundred", 100 },
        { "one hundred and five", 105 }, { "twenty thousand", 20000 }, { "a dozen", 12 }, { "two dozen", 24 },
        { "three million", 3e6 }, { "deux", 2 }, { "dix-sept", 17 }, { "vingt et un", 21 }, { "soixante-dix", 70 },
        { "quatre-vingts", 80 }, { "quatre-vingt-dix-neuf", 99 }, { "cent deux", 102 }, { "vingt mille", 20000 },
        { "une douzaine", 12 }, { "dos", 2 }, { "quince", 15 }, { "veintidos", 22 }, { "treinta y tres", 33 },
        { "doscientos", 200 }, { "ciento veinte", 120 }, { "dos mil", 2000 }, { "duas", 2 }, { "dezessete", 17 },
        { "vinte e dois", 22 }, { "cento e vinte", 120 }, { "quinhentos", 500 }, { "tres mil", 3000 },
        { "a billion billion", 1e9 },       /* saturates */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double v = s_count (cases[i].text);
        if (v != cases[i].value) fail_msg ("'%s' reads as %g, expected %g", cases[i].text, v, cases[i].value);
    }
    assert_true (s_count ("a") < 0);          /* an article alone is not a number */
    assert_true (s_count ("un") < 0);
    assert_true (s_count ("two three") < 0);  /* two numbers, not one */
}

static void test_limits (void **state)
{
    json_t *body = NULL;
    char code[64], message[1024];
    assert_int_equal (compose_run (&s_env, "twenty thousand trees", &body, code, sizeof code, message, sizeof message), -1);
    assert_string_equal (code, "too_big");
    if (!strstr (message, "tree ×20000") || !strstr (message, "at most 64 of them fit") || !strstr (message, "64 copies"))
        fail_msg ("unclear: %s", message);
    /* copy 1 from the recipe, each further copy one object.duplicate_tree step (issue 26) */
    assert_int_equal (compose_run (&s_env, "fifteen trees", &body, code, sizeof code, message, sizeof message), 0);
    json_decref (body);
    assert_int_equal (compose_run (&s_env, "64 trees", &body, code, sizeof code, message, sizeof message), 0);
    assert_true (json_array_size (json_object_get (body, "plan")) <= 200);
    json_decref (body);
    assert_int_equal (compose_run (&s_env, "65 trees", &body, code, sizeof code, message, sizeof message), -1);
    assert_string_equal (code, "too_big");
    assert_int_equal (compose_run (&s_env, "500 chairs", &body, code, sizeof code, message, sizeof message), -1);
    assert_string_equal (code, "too_big");
    assert_int_equal (compose_run (&s_env, "999999999999999999999999 chairs", &body, code, sizeof code, message, sizeof message), -1);
    assert_string_equal (code, "too_big");
    /* a prompt with no recipe is still the planner's no-match case */
    assert_int_equal (compose_run (&s_env, "build a castle with towers", &body, code, sizeof code, message, sizeof message), 1);
    assert_null (body);
}

static json_t *s_step_named (const json_t *plan, const char *name)
{
    size_t i;
    json_t *s;
    json_array_foreach (plan, i, s)
        if (json_is_string (json_object_get (s, "name")) && !strcmp (json_string_value (json_object_get (s, "name")), name)) return s;
    return NULL;
}

static double s_at (const json_t *step, const char *key, size_t a)
{
    return json_number_value (json_array_get (json_object_get (json_object_get (step, "params"), key), a));
}

static void test_names_and_turns (void **state)
{
    json_t *body = NULL;
    char code[64], message[1024];
    assert_int_equal (compose_run (&s_env, "a table with two chairs", &body, code, sizeof code, message, sizeof message), 0);
    json_t *plan = json_object_get (body, "plan");
    const char *expect[] = { "table", "table_top", "chair", "chair_seat", "chair.001", "camera", "sun" };
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++)
        if (!s_step_named (plan, expect[i])) fail_msg ("no step names %s", expect[i]);
    /* the second chair is a copy of the first, turned the other way; the names of its copied parts are the add-on's */
    json_t *copy = s_step_named (plan, "chair.001");
    assert_string_equal (s_op (copy), "object.duplicate_tree");
    assert_string_equal (json_string_value (json_object_get (copy, "target")), "chair");
    assert_true (fabs (fabs (s_at (copy, "rotation", 2) - s_at (s_step_named (plan, "chair"), "rotation", 2)) - M_PI) < 1e-3);
    assert_null (s_step_named (plan, "chair_seat.001"));
    /* the chairs face the table: the one on its right (+X) looks along -X, so its backrest is further out */
    json_t *root = s_step_named (plan, "chair"), *seat = s_step_named (plan, "chair_seat"), *back = s_step_named (plan, "chair_back");
    assert_true (s_at (root, "location", 0) > 0.8);
    assert_true (fabs (fabs (s_at (root, "rotation", 2)) - M_PI / 2) < 1e-3);
    assert_true (fabs (s_at (seat, "rotation", 2) - s_at (root, "rotation", 2)) < 1e-3);
    assert_true (s_at (back, "location", 0) > s_at (seat, "location", 0) + 0.1);
    /* the other chair mirrors it on the left */
    assert_true (s_at (s_step_named (plan, "chair.001"), "location", 0) < -0.8);
    json_decref (body);
}

static void test_single_recipe (void **state)
{
    /* one object: the recipe with its words, as before, under a root; no camera or sun of its own */
    json_t *body = NULL;
    char code[64], message[1024];
    assert_int_equal (compose_run (&s_env, "a big red chair at 3 0 0", &body, code, sizeof code, message, sizeof message), 0);
    json_t *plan = json_object_get (body, "plan");
    assert_int_equal (json_array_size (plan), 8 + 1 + 4);      /* 4 parts: add + material each, a root, a parent each */
    assert_string_equal (json_string_value (json_object_get (body, "recipe")), "chair");
    json_t *seat = s_step_named (plan, "chair_seat");
    assert_true (fabs (s_at (seat, "location", 0) - 3.0) < 1e-9);
    assert_true (fabs (s_at (seat, "location", 2) - 0.675) < 1e-9);
    assert_true (fabs (json_number_value (json_object_get (json_object_get (seat, "params"), "size")) - 1.5) < 1e-9);
    assert_non_null (json_object_get (body, "modifiers"));
    assert_int_equal (json_array_size (json_object_get (body, "not_understood")), 0);
    json_decref (body);
}

static void test_hostile (void **state)
{
    json_t *body = NULL;
    char code[64], message[1024];
    size_t len = 100000;
    char *big = malloc (len + 1);
    for (size_t i = 0; i < len; i++) big[i] = "chair \xc3\xa9\xff, 12 on "[i % 17];
    big[len] = 0;
    int rc = compose_run (&s_env, big, &body, code, sizeof code, message, sizeof message);
    assert_true (rc == 0 || rc == -1);
    json_decref (body);
    body = NULL;
    /* more objects than a request holds: the rest is reported, not dropped */
    char many[1200] = "";
    for (int i = 0; i < 40; i++) strcat (many, i % 2 ? "a mug and " : "a book and ");
    strcat (many, "a plate");
    bmq_scene_request_t req;
    assert_int_equal (bmq_scene_parse (s_env.book, many, &req), 0);
    assert_int_equal (req.count, BMQ_SCENE_MAX_PARTS);
    assert_true (json_array_size (req.not_understood) > 0);
    bmq_scene_request_clear (&req);
    assert_int_equal (compose_run (&s_env, many, &body, code, sizeof code, message, sizeof message), -1);
    assert_string_equal (code, "too_big");              /* and 32 objects are more than a plan holds anyway */
    memset (big, 'x', len);                              /* one endless word */
    assert_int_equal (compose_run (&s_env, big, &body, code, sizeof code, message, sizeof message), 1);
    const char *odd[] = { "", "   ", "a chair at 1e308 1e308 1e308", "a chair at -inf nan 3", "0 chairs", "-5 trees",
                          "a table with a lamp on it on it on it", "between between and and", "a lamp on a lamp",
                          "a table on a chair, the chair on the table", "x2 x2 x2 a mug", "a chair scale 99999999",
                          "a mug on", "with", "\xc3", "at 1 2 3" };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        body = NULL;
        rc = compose_run (&s_env, odd[i], &body, code, sizeof code, message, sizeof message);
        if (rc == 0) {
            json_t *verdict = bmq_plan_validate (s_env.palette, json_object_get (body, "plan"));
            if (!json_is_true (json_object_get (verdict, "accepted"))) fail_msg ("'%s': a rejected plan", odd[i]);
            json_decref (verdict);
            s_check_structure (odd[i], body);
        }
        json_decref (body);
    }
    /* words that are not UTF-8 are reported all the same (as '?'), never dropped */
    body = NULL;
    assert_int_equal (compose_run (&s_env, "a table with \xff\xfe towers", &body, code, sizeof code, message, sizeof message), 0);
    assert_int_equal (json_array_size (json_object_get (body, "not_understood")), 1);
    assert_string_equal (json_string_value (json_array_get (json_object_get (body, "not_understood"), 0)), "with ?? towers");
    json_decref (body);
    /* a cycle is refused: the second relation is reported */
    body = NULL;
    assert_int_equal (compose_run (&s_env, "a table on a chair, the chair on the table", &body, code, sizeof code, message, sizeof message), 0);
    assert_int_equal (json_array_size (json_object_get (body, "not_understood")), 1);
    json_decref (body);
    free (big);
}

static void s_box_is (const bmq_bounds_t *b, size_t i, double x0, double y0, double z0, double x1, double y1, double z1)
{
    const bmq_box_t *box = bmq_bounds_box (b, i);
    assert_non_null (box);
    double want[6] = { x0, y0, z0, x1, y1, z1 }, got[6] = { box->min[0], box->min[1], box->min[2], box->max[0], box->max[1], box->max[2] };
    for (int a = 0; a < 6; a++)
        if (fabs (want[a] - got[a]) > 1e-6)
            fail_msg ("box %zu: (%g %g %g)-(%g %g %g), expected (%g %g %g)-(%g %g %g)", i, got[0], got[1], got[2], got[3], got[4],
                      got[5], x0, y0, z0, x1, y1, z1);
}

/* A recipe (a saved plan) holding an object.duplicate_tree step: placed like the rest of the copy (issue 26). */
static void test_instance_tree_copy (void **state)
{
    json_t *steps = json_loads ("[{\"operation\": \"bpy.ops.object.empty_add\", \"name\": \"base\"},"
        " {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"a\"},"
        " {\"operation\": \"object.parent\", \"target\": \"a\", \"params\": {\"parent\": \"base\"}},"
        " {\"operation\": \"object.duplicate_tree\", \"target\": \"base\", \"name\": \"twin\","
        "  \"params\": {\"location\": [1, 0, 0], \"rotation\": [0, 0, 0.5]}},"
        " {\"operation\": \"object.duplicate_tree\", \"target\": \"base\", \"name\": \"still\"}]", 0, NULL);
    json_t *plan = json_array (), *used = json_object ();
    const double at[3] = { 10, 0, 0 }, pos[3] = { 10, 0, 0 };
    bmq_instance_name (used, "thing", 63, (char[80]) { 0 }, 80);
    int n = bmq_instance_append (plan, used, 63, steps, s_env.described, "thing", at, 1, pos, M_PI / 2);
    assert_int_equal (n, 1 + 5 + 4);                 /* the root, the steps, a parent step for each object made */
    json_t *twin = s_step_named (plan, "twin"), *still = s_step_named (plan, "still");
    assert_non_null (twin);
    assert_string_equal (json_string_value (json_object_get (twin, "target")), "base");
    assert_true (fabs (s_at (twin, "location", 0) - 10) < 1e-4 && fabs (s_at (twin, "location", 1) - 1) < 1e-4);
    assert_true (fabs (s_at (twin, "rotation", 2) - (0.5 + M_PI / 2)) < 1e-3);
    assert_null (json_object_get (json_object_get (still, "params"), "location"));    /* stays with its target */
    json_t *verdict = bmq_plan_validate (s_env.palette, plan);
    assert_true (json_is_true (json_object_get (verdict, "accepted")));
    json_decref (verdict);
    json_decref (plan);
    json_decref (used);
    json_decref (steps);
}

static void test_bounds (void **state)
{
    json_t *steps = json_loads ("["
        "{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"a\", \"params\": {\"location\": [1, 2, 3]}},"
        "{\"operation\": \"bpy.ops.mesh.primitive_cylinder_add\", \"name\": \"b\", \"params\": {\"radius\": 0.5, \"rotation\": [1.5707963267948966, 0, 0]}},"
        "{\"operation\": \"bpy.ops.mesh.primitive_torus_add\", \"name\": \"c\", \"params\": {\"rotation\": [0, 0, 0.7]}},"
        "{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"d\", \"params\": {\"scale\": [2, 1, 1], \"rotation\": [0, 0, 1.5707963267948966]}},"
        "{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"e\", \"params\": {\"size\": 1}},"
        "{\"operation\": \"object.modifier\", \"target\": \"e\", \"params\": {\"type\": \"ARRAY\", \"count\": 3}},"
        "{\"operation\": \"bpy.ops.object.duplicate\", \"target\": \"a\", \"name\": \"f\"},"
        "{\"operation\": \"bpy.ops.transform.translate\", \"target\": \"f\", \"params\": {\"value\": [0, 0, 10]}},"
        "{\"operation\": \"bpy.ops.mesh.primitive_cone_add\", \"name\": \"g\"},"
        "{\"operation\": \"bpy.ops.object.delete\", \"target\": \"g\"},"
        "{\"operation\": \"bpy.ops.object.light_add\", \"name\": \"h\"}]", 0, NULL);
    assert_non_null (steps);
    bmq_bounds_t *b = bmq_bounds_new (steps, s_env.described);
    assert_int_equal (bmq_bounds_count (b), 6);                  /* the deleted cone and the light have no box */
    s_box_is (b, 0, 0, 1, 2, 2, 3, 4);                           /* a size-2 cube (the palette's default) */
    s_box_is (b, 1, -0.5, -1, -0.5, 0.5, 1, 0.5);                /* a cylinder lying along Y */
    s_box_is (b, 2, -1.25, -1.25, -0.25, 1.25, 1.25, 0.25);      /* round about Z: a turn changes nothing */
    s_box_is (b, 3, -1, -2, -1, 1, 2, 1);                        /* stretched along X, then turned: along Y */
    s_box_is (b, 4, -0.5, -0.5, -0.5, 2.5, 0.5, 0.5);            /* three copies along X */
    s_box_is (b, 5, 0, 1, 12, 2, 3, 14);                         /* the duplicate, moved up */
    bmq_box_t all;
    assert_true (bmq_bounds_total (b, &all));
    assert_true (all.max[2] == 14 && all.min[0] == -1.25);
    assert_true (bmq_bounds_rotatable (b));
    bmq_bounds_destroy (&b);
    bmq_bounds_destroy (&b);                                      /* safe twice */
    json_array_append_new (steps, json_pack ("{s:s, s:s, s:{s:f, s:s}}", "operation", "bpy.ops.transform.rotate", "target", "a",
                                             "params", "value", 0.5, "orient_axis", "X"));
    b = bmq_bounds_new (steps, s_env.described);
    assert_false (bmq_bounds_rotatable (b));                     /* a turn about X does not commute with one about Z */
    bmq_bounds_destroy (&b);
    json_decref (steps);
    /* what stands on a table stands on its top */
    bmq_bounds_t *table = bmq_bounds_new (json_object_get (bmq_recipe_book_get (s_env.book, "table"), "steps"), s_env.described);
    bmq_box_t top;
    assert_true (bmq_bounds_support (table, 0, 0, &top));
    assert_true (fabs (top.max[2] - 0.775) < 1e-9 && fabs (top.max[0] - 0.8) < 1e-9);
    assert_false (bmq_bounds_support (table, 5, 5, &top));
    bmq_bounds_destroy (&table);
}


/* Issue 26 and 29: rooms, the new relations and words, nothing silent, new work clear of the scene. */
/* A prompt longer than the offline planner reads: what it did not read is
 * reported under not_understood, never dropped silently (issue 29). */
static void test_unread_tail_reported (void **state)
{
    (void) state;
    char text[4000] = "a red ball";
    for (int i = 0; i < 120; i++) strcat (text, " and then some more");
    strcat (text, " and a blue chair");
    bmq_scene_request_t req;
    assert_int_equal (bmq_scene_parse (s_env.book, text, &req), 0);
    bool said = false;
    size_t i;
    json_t *n;
    json_array_foreach (req.not_understood, i, n) said = said || strstr (json_string_value (n), "the offline planner reads the first");
    assert_true (said);
    bmq_scene_request_clear (&req);
    assert_int_equal (bmq_scene_parse (s_env.book, "a red ball and a blue chair", &req), 0);
    json_array_foreach (req.not_understood, i, n) assert_null (strstr (json_string_value (n), "reads the first"));
    bmq_scene_request_clear (&req);
}

static json_t *s_compose (const char *prompt, const json_t *scene)
{
    json_t *body = NULL;
    char *note = NULL, code[64], message[1024];
    int rc = bmq_scene_compose_in (s_env.book, s_env.palette, s_env.described, prompt, scene, &body, &note, code, sizeof code, message,
                                   sizeof message);
    free (note);
    if (rc != 0) fail_msg ("'%s': %d %s: %s", prompt, rc, code, message);
    return body;
}

static bool s_note_has (const json_t *body, const char *text)
{
    size_t i;
    json_t *n;
    json_array_foreach (json_object_get (body, "notes"), i, n)
        if (strstr (json_string_value (n), text)) return true;
    return false;
}

static const json_t *s_part_named (const json_t *body, const char *recipe)
{
    size_t i;
    json_t *p;
    json_array_foreach (json_object_get (body, "parts"), i, p)
        if (!strcmp (json_string_value (json_object_get (p, "recipe")), recipe)) return p;
    return NULL;
}

static const json_t *s_part_of (const json_t *body, const char *recipe)
{
    size_t i;
    json_t *p;
    json_array_foreach (json_object_get (body, "parts"), i, p)
        if (!strcmp (json_string_value (json_object_get (p, "recipe")) ?: "", recipe)) return p;
    return NULL;
}

/* Where a copy stands (its root's location), and is it on top of the anchor's copy: above its top's
 * height and within its reach in the plane (as placed, before Blender; room_bench scores the geometry). */
static bool s_stands_on (const json_t *plan, const char *what, const char *anchor, double top)
{
    json_t *a = s_step_named (plan, what), *b = s_step_named (plan, anchor);
    if (!a || !b) return false;
    double dx = s_at (a, "location", 0) - s_at (b, "location", 0), dy = s_at (a, "location", 1) - s_at (b, "location", 1);
    return s_at (a, "location", 2) >= top && dx * dx + dy * dy < 1.0;
}

/* The two gaps free-form prompts showed (issue 26): "with A and B on it" puts both on it; "the desk"
 * after "an L-shaped desk" is that desk, not a second one. */
static void test_free_form (void **state)
{
    (void) state;
    json_t *b = s_compose ("a desk with two monitors and a keyboard on it", NULL), *plan = json_object_get (b, "plan");
    const json_t *monitors = s_part_of (b, "computer_monitor"), *keyboard = s_part_of (b, "keyboard");
    assert_non_null (monitors);
    assert_int_equal (json_integer_value (json_object_get (monitors, "count")), 2);
    assert_string_equal (json_string_value (json_object_get (json_object_get (monitors, "relation"), "type")), "on");
    assert_string_equal (json_string_value (json_object_get (json_object_get (keyboard, "relation"), "type")), "on");
    assert_true (s_stands_on (plan, "computer_monitor", "desk", 0.6));
    assert_true (s_stands_on (plan, "computer_monitor.001", "desk", 0.6));
    assert_true (s_stands_on (plan, "keyboard", "desk", 0.6));
    assert_null (json_object_get (b, "notes"));
    json_decref (b);

    b = s_compose ("I want an L-shaped desk by the window. Put a lamp on the desk and an office chair at the desk.", NULL);
    plan = json_object_get (b, "plan");
    assert_non_null (s_part_of (b, "l_shaped_desk"));
    assert_null (s_part_of (b, "desk"));                    /* "the desk" is the L-shaped one */
    const json_t *lamp = s_part_of (b, "lamp"), *chair = s_part_of (b, "office_chair");
    assert_string_equal (json_string_value (json_object_get (json_object_get (lamp, "relation"), "to")), "l_shaped_desk");
    assert_string_equal (json_string_value (json_object_get (json_object_get (chair, "relation"), "type")), "in_front_of");
    assert_true (s_stands_on (plan, "lamp", "l_shaped_desk", 0.6));      /* its top covers its middle now */
    assert_int_equal (json_array_size (json_object_get (b, "not_understood")), 0);
    json_decref (b);

    /* "a lamp on each nightstand": the nightstands named before, one lamp each; "next to it, X" */
    b = s_compose ("a bed with a nightstand on each side and a lamp on each nightstand. In the corner there's a plant and next "
                   "to it a floor lamp.", NULL);
    assert_int_equal (json_integer_value (json_object_get (s_part_of (b, "lamp"), "count")), 2);
    size_t i, nightstands = 0;
    json_t *p;
    json_array_foreach (json_object_get (b, "parts"), i, p) nightstands += !strcmp (json_string_value (json_object_get (p, "recipe")), "nightstand");
    assert_int_equal (nightstands, 1);
    assert_string_equal (json_string_value (json_object_get (json_object_get (s_part_of (b, "floor_lamp"), "relation"), "type")),
                         "next_to");
    assert_int_equal (json_array_size (json_object_get (b, "not_understood")), 0);
    json_decref (b);
}

static void test_rooms_and_words (void **state)
{
    (void) state;
    /* a room: floor and walls, compound names, flanking, negation, everything inside the walls */
    json_t *b = s_compose ("A bedroom with a bed against the wall, two nightstands on both sides of the bed, a TV stand, a sofa chair "
                           "and no wardrobe.", NULL);
    json_t *plan = json_object_get (b, "plan"), *room = json_object_get (b, "room");
    assert_non_null (room);
    assert_string_equal (json_string_value (json_object_get (room, "kind")), "bedroom");
    assert_non_null (s_step_named (plan, "room_floor"));
    assert_non_null (s_step_named (plan, "room_wall_back"));
    assert_non_null (s_part_named (b, "tv_stand"));
    assert_null (s_part_named (b, "tv"));                   /* "TV stand" is one object */
    assert_non_null (s_part_named (b, "armchair"));         /* "sofa chair" too */
    assert_null (s_part_named (b, "chair"));
    assert_null (s_part_named (b, "wardrobe"));             /* "no wardrobe" */
    assert_int_equal (json_integer_value (json_object_get (s_part_named (b, "nightstand"), "count")), 2);
    double W = json_number_value (json_object_get (room, "width")) / 2, D = json_number_value (json_object_get (room, "depth")) / 2;
    json_t *bed = s_step_named (plan, "bed"), *n1 = s_step_named (plan, "nightstand"), *n2 = s_step_named (plan, "nightstand.001");
    assert_true (fabs (s_at (bed, "location", 0)) <= W && fabs (s_at (bed, "location", 1)) <= D);
    /* flanking: the two nightstands on opposite sides of the bed, in its own frame */
    double th = s_at (bed, "rotation", 2), ux = -sin (th), uy = cos (th);      /* the bed's right-left axis turned */
    double r1 = (s_at (n1, "location", 0) - s_at (bed, "location", 0)) * cos (th) + (s_at (n1, "location", 1) - s_at (bed, "location", 1)) * sin (th);
    double r2 = (s_at (n2, "location", 0) - s_at (bed, "location", 0)) * cos (th) + (s_at (n2, "location", 1) - s_at (bed, "location", 1)) * sin (th);
    (void) ux; (void) uy;
    assert_true (r1 * r2 < 0);
    assert_int_equal (json_array_size (json_object_get (b, "not_understood")), 0);
    json_decref (b);

    /* nothing silent: a colour is the object's, a clamp is said, joints build or are reported */
    b = s_compose ("a red ball at 1000000 0 0", NULL);
    json_t *mat = NULL, *step;
    size_t i;
    json_array_foreach (json_object_get (b, "plan"), i, step)
        if (!strcmp (json_string_value (json_object_get (step, "operation")), "object.material")
            && !strcmp (json_string_value (json_object_get (step, "target")), "ball_body"))
            mat = step;
    assert_non_null (mat);
    assert_true (json_number_value (json_array_get (json_object_get (json_object_get (mat, "params"), "color"), 0)) > 0.7);
    assert_true (json_number_value (json_array_get (json_object_get (json_object_get (mat, "params"), "color"), 1)) < 0.2);
    assert_true (s_note_has (b, "past the ±1000 m"));
    json_decref (b);
    b = s_compose ("a bookshelf full of books", NULL);
    assert_string_equal (json_string_value (json_object_get (json_object_get (s_part_named (b, "book"), "relation"), "type")), "inside");
    json_decref (b);
    b = s_compose ("a snowman wearing a hat", NULL);
    assert_int_equal (json_array_size (json_object_get (b, "not_understood")), 1);     /* no hat recipe: "wearing a hat" reported */
    json_decref (b);
    b = s_compose ("a leather sofa", NULL);
    assert_string_equal (json_string_value (json_object_get (s_part_named (b, "sofa"), "material")), "leather");
    json_decref (b);

    /* new work goes where there is room: a second snowman beside the first, said so */
    json_t *first = s_compose ("build a snowman", NULL);
    json_t *scene = json_pack ("[{s:s, s:[f, f, f], s:[f, f, f]}]", "name", "snowman", "min", -0.5, -0.5, 0.0, "max", 0.5, 0.5, 1.7);
    json_t *second = s_compose ("build a snowman", scene);
    json_t *root1 = s_step_named (json_object_get (first, "plan"), "snowman"), *root2 = s_step_named (json_object_get (second, "plan"), "snowman");
    assert_true (s_at (root2, "location", 0) > s_at (root1, "location", 0) + 1.0);
    assert_true (s_note_has (second, "beside what the scene already holds"));
    json_t *third = s_compose ("build a snowman at 0 0 0", scene);                  /* asked for a place: left there */
    assert_true (fabs (s_at (s_step_named (json_object_get (third, "plan"), "snowman"), "location", 0)) < 0.3);
    json_decref (first);
    json_decref (second);
    json_decref (third);
    json_decref (scene);
}

/* How near a wall a root stands: the least distance from its location to one of the room's four walls. */
static double s_off_wall (const json_t *body, const char *name)
{
    const json_t *room = json_object_get (body, "room");
    json_t *st = s_step_named (json_object_get (body, "plan"), name);
    if (!room || !st) return INFINITY;
    double W = json_number_value (json_object_get (room, "width")) / 2, D = json_number_value (json_object_get (room, "depth")) / 2;
    return fmin (W - fabs (s_at (st, "location", 0)), D - fabs (s_at (st, "location", 1)));
}

/* Relations the offline planner placed wrong (issue 26, h7): a hung thing above an anchor against the wall
 * touches that wall even with a rug under the anchor; a TV facing the bed hangs on the opposite wall;
 * "centred against the wall" stays on the wall; "two on each long side and one at each end"; a corner
 * cluster leaves the thing named in the corner. */
static void test_relations_against_walls (void **state)
{
    (void) state;
    json_t *b = s_compose ("A bedroom with a bed against the wall on a grey rug, and a painting above the bed.", NULL);
    const json_t *rug = json_object_get (s_part_named (b, "rug"), "relation");
    assert_string_equal (json_string_value (json_object_get (rug, "type")), "under");      /* not the bed on a lone rug */
    assert_string_equal (json_string_value (json_object_get (rug, "to")), "bed");
    assert_string_equal (json_string_value (json_object_get (s_part_named (b, "bed"), "spot")), "wall");
    assert_false (s_note_has (b, "not against a wall"));
    assert_false (s_note_has (b, "not under"));
    assert_true (s_off_wall (b, "painting") < 0.1);                                         /* hung on the bed's wall */
    json_decref (b);

    b = s_compose ("A desk against the wall on a blue rug, with a bookshelf on either side of the desk, in an office.", NULL);
    assert_false (s_note_has (b, "not against a wall"));
    assert_int_equal (json_integer_value (json_object_get (s_part_named (b, "bookshelf"), "count")), 2);
    json_decref (b);

    b = s_compose ("Bedroom with a bed and a TV mounted on the wall opposite the bed.", NULL);
    json_t *plan = json_object_get (b, "plan"), *tv = s_step_named (plan, "wall_tv"), *bed = s_step_named (plan, "bed");
    assert_non_null (tv);
    assert_non_null (bed);
    assert_true (s_off_wall (b, "wall_tv") < 0.1);
    bool across = s_at (tv, "location", 1) * s_at (bed, "location", 1) < 0 || s_at (tv, "location", 0) * s_at (bed, "location", 0) < 0;
    assert_true (across);
    assert_false (s_note_has (b, "not in front of"));
    json_decref (b);

    b = s_compose ("A living room with a sofa centered against the wall and a coffee table in front of it.", NULL);
    assert_string_equal (json_string_value (json_object_get (s_part_named (b, "sofa"), "spot")), "wall");
    assert_int_equal (json_array_size (json_object_get (b, "not_understood")), 0);
    json_decref (b);

    b = s_compose ("A dining room with a long table, two chairs on each long side and one at each end.", NULL);
    size_t i, sides = 0, ends = 0;
    json_t *p;
    json_array_foreach (json_object_get (b, "parts"), i, p) {
        const char *type = json_string_value (json_object_get (json_object_get (p, "relation"), "type"));
        if (strcmp (json_string_value (json_object_get (p, "recipe")), "chair") || !type) continue;
        if (!strcmp (type, "long_side")) sides += (size_t) json_integer_value (json_object_get (p, "count"));
        if (!strcmp (type, "short_side")) ends += (size_t) json_integer_value (json_object_get (p, "count"));
    }
    assert_int_equal (sides, 4);
    assert_int_equal (ends, 2);
    assert_int_equal (json_array_size (json_object_get (b, "not_understood")), 0);
    json_decref (b);

    b = s_compose ("A reading corner: an armchair in the corner with a side table beside it.", NULL);
    assert_false (s_note_has (b, "not in a corner"));
    json_decref (b);

    b = s_compose ("A den with a fireplace and a small christmas tree in the corner next to the fireplace.", NULL);
    assert_false (s_note_has (b, "christmas tree is not in a corner"));      /* the tree in the corner, the fireplace by it */
    assert_true (s_off_wall (b, "christmas_tree") < 0.5);
    json_decref (b);
}

/* The parts of a body with this recipe, and their copies in all. */
static size_t s_parts_of (const json_t *body, const char *recipe, size_t *copies)
{
    size_t i, n = 0;
    json_t *p;
    *copies = 0;
    json_array_foreach (json_object_get (body, "parts"), i, p)
        if (!strcmp (json_string_value (json_object_get (p, "recipe")) ?: "", recipe)) {
            n++;
            *copies += (size_t) json_integer_value (json_object_get (p, "count"));
        }
    return n;
}

static const char *s_rel_of (const json_t *body, const char *recipe, const char *key)
{
    return json_string_value (json_object_get (json_object_get (s_part_of (body, recipe), "relation"), key));
}

/* Where b's root stands in a's frame (a's rotation about Z undone): along a's own X and Y. */
static void s_local (const json_t *plan, const char *a, const char *b, double *x, double *y)
{
    json_t *sa = s_step_named (plan, a), *sb = s_step_named (plan, b);
    assert_non_null (sa);
    assert_non_null (sb);
    double th = s_at (sa, "rotation", 2), dx = s_at (sb, "location", 0) - s_at (sa, "location", 0);
    double dy = s_at (sb, "location", 1) - s_at (sa, "location", 1);
    *x = cos (th) * dx + sin (th) * dy;
    *y = -sin (th) * dx + cos (th) * dy;
}

/* What an outside set of room descriptions showed (issue 26, h8): hung things over one anchor overlapped; a
 * "flat-screen TV" was two TVs; "draped over" was a second thing beside the seat; a chair at a desk under a
 * loft bed stood in the bed; "flanked by" and a plural "on either side" made three. */
static void test_outside_set_classes (void **state)
{
    (void) state;
    size_t copies;
    /* hung things over one anchor: side by side along its wall, never in one another */
    json_t *b = s_compose ("An office with a desk, a whiteboard above the desk and a wall clock above the desk.", NULL);
    json_t *plan = json_object_get (b, "plan"), *wb = s_step_named (plan, "whiteboard"), *clock = s_step_named (plan, "wall_clock");
    assert_non_null (wb);
    assert_non_null (clock);
    double apart = fmax (fabs (s_at (wb, "location", 0) - s_at (clock, "location", 0)), fabs (s_at (wb, "location", 1) - s_at (clock, "location", 1)));
    bmq_bounds_t *wbb = bmq_bounds_new (json_object_get (bmq_recipe_book_get (s_env.book, "whiteboard"), "steps"), s_env.described);
    bmq_bounds_t *clb = bmq_bounds_new (json_object_get (bmq_recipe_book_get (s_env.book, "wall_clock"), "steps"), s_env.described);
    bmq_box_t bw, bc;
    assert_true (bmq_bounds_total (wbb, &bw) && bmq_bounds_total (clb, &bc));
    assert_true (apart >= (bw.max[0] - bw.min[0] + bc.max[0] - bc.min[0]) / 2);       /* their half widths apart at least */
    bmq_bounds_destroy (&wbb);
    bmq_bounds_destroy (&clb);
    assert_true (s_off_wall (b, "whiteboard") < 0.1 && s_off_wall (b, "wall_clock") < 0.1);
    json_decref (b);

    /* seven things on the walls of a small office: none outside the room; one that finds no wall at its own
     * height hangs higher or lower, said */
    b = s_compose ("A 3 by 3 m office with a desk, a whiteboard, a wall map, a poster, a painting, a mirror and a wall clock above "
                   "the desk.", NULL);
    assert_false (s_note_has (b, "outside"));
    assert_true (s_note_has (b, "at its usual height"));
    json_decref (b);

    /* "a wall shelf … the shelf" is that shelf, not a bookshelf */
    b = s_compose ("An office with a wall shelf and a clock above the shelf.", NULL);
    assert_int_equal (s_parts_of (b, "bookshelf", &copies), 0);
    assert_string_equal (s_rel_of (b, "wall_clock", "to"), "wall_shelf");
    json_decref (b);

    /* compound names and adjectives name one object */
    static const char *const one_tv[][2] = {
        { "A living room with a flat-screen TV mounted above the fireplace.", "wall_tv" },
        { "A den with a big flat-screen television hung on the wall.", "wall_tv" },
        { "a wall mounted flat screen tv above the fireplace", "wall_tv" },
        { "a flat-screen TV", "tv" },
    };
    for (size_t i = 0; i < sizeof one_tv / sizeof *one_tv; i++) {
        b = s_compose (one_tv[i][0], NULL);
        size_t tvs = 0, walls = 0;
        s_parts_of (b, "tv", &tvs);
        s_parts_of (b, "wall_tv", &walls);
        if (tvs + walls != 1 || !s_part_of (b, one_tv[i][1])) fail_msg ("'%s': %zu tv and %zu wall_tv", one_tv[i][0], tvs, walls);
        json_decref (b);
    }
    /* a count before a thing without a recipe is that thing's, not the next one's: one bed, the slippers said */
    b = s_compose ("a bedroom with a bed and a pair of slippers under the bed", NULL);
    assert_int_equal (s_parts_of (b, "bed", &copies), 1);
    assert_int_equal (copies, 1);
    assert_true (json_array_size (json_object_get (b, "not_understood")) >= 1);
    json_decref (b);
    b = s_compose ("A living room with a TV stand and a flat-screen TV on it.", NULL);
    assert_int_equal (s_parts_of (b, "tv", &copies), 1);
    assert_int_equal (copies, 1);
    assert_string_equal (s_rel_of (b, "tv", "to"), "tv_stand");
    json_decref (b);

    /* a textile draped / thrown / laid over a seat lies on it */
    static const char *const draped[][2] = {
        { "A living room with a recliner and a grey blanket draped over it.", "recliner" },
        { "A bedroom with a bed, an armchair and a throw thrown over the armchair.", "armchair" },
        { "A living room with a sofa and a red blanket laid across the sofa.", "sofa" },
    };
    for (size_t i = 0; i < sizeof draped / sizeof *draped; i++) {
        b = s_compose (draped[i][0], NULL);
        assert_string_equal (s_rel_of (b, "blanket", "type"), "on");
        assert_string_equal (s_rel_of (b, "blanket", "to"), draped[i][1]);
        assert_int_equal (json_array_size (json_object_get (b, "not_understood")), 0);
        json_decref (b);
    }

    /* a chair at a desk under a loft bed stands clear of the bed's frame and lower bunk */
    b = s_compose ("A bedroom with a loft bed and a desk under it, a chair at the desk and a mini fridge next to the desk.", NULL);
    plan = json_object_get (b, "plan");
    bmq_bounds_t *bb = bmq_bounds_new (json_object_get (bmq_recipe_book_get (s_env.book, "bunk_bed"), "steps"), s_env.described);
    bmq_box_t bed;
    assert_true (bmq_bounds_total (bb, &bed));
    bmq_bounds_destroy (&bb);
    static const char *const beside[] = { "chair", "mini_fridge" };
    for (size_t i = 0; i < 2; i++) {
        double x, y;
        s_local (plan, "bunk_bed", beside[i], &x, &y);
        if (x > bed.min[0] + 0.1 && x < bed.max[0] - 0.1 && y > bed.min[1] + 0.1 && y < bed.max[1] - 0.1)
            fail_msg ("the %s stands in the bunk bed (%.2f, %.2f in its frame)", beside[i], x, y);
    }
    json_decref (b);

    /* flanking: one a side, two in all, whichever way it is said */
    static const char *const flank[][2] = {
        { "A bedroom with a bed flanked by nightstands.", "nightstand" },
        { "A living room with a sofa flanked by two side tables.", "side_table" },
        { "A living room with a sofa and floor lamps on either side of it.", "floor_lamp" },
        { "A living room with a fireplace and potted plants flanking the fireplace.", "potted_plant" },
    };
    for (size_t i = 0; i < sizeof flank / sizeof *flank; i++) {
        b = s_compose (flank[i][0], NULL);
        s_parts_of (b, flank[i][1], &copies);
        if (copies != 2) fail_msg ("'%s': %zu %s", flank[i][0], copies, flank[i][1]);
        assert_string_equal (s_rel_of (b, flank[i][1], "type"), "next_to");
        assert_int_equal (json_array_size (json_object_get (b, "not_understood")), 0);
        json_decref (b);
    }
    b = s_compose ("A living room with a fireplace flanked by two tall plants and a TV above it.", NULL);
    assert_string_equal (s_rel_of (b, "wall_tv", "to"), "fireplace");       /* "it": the thing flanked */
    json_decref (b);

    /* "a bookcase full of books next to the desk": the bookcase is next to it, the books in the bookcase */
    b = s_compose ("A study with a bookcase full of books next to the desk.", NULL);
    assert_string_equal (s_rel_of (b, "bookshelf", "type"), "next_to");
    assert_string_equal (s_rel_of (b, "bookshelf", "to"), "desk");
    assert_string_equal (s_rel_of (b, "book", "type"), "inside");
    assert_int_equal (json_array_size (json_object_get (b, "not_understood")), 0);
    json_decref (b);

    /* inside: three apples fit in a bowl (made a little smaller, said), blankets in a basket, two baskets in a cabinet */
    b = s_compose ("A kitchen with a counter, a bowl on the counter and apples in the bowl.", NULL);
    assert_string_equal (s_rel_of (b, "apple", "type"), "inside");
    assert_true (s_note_has (b, "smaller to fit inside the bowl"));
    assert_false (s_note_has (b, "not inside"));
    json_decref (b);
    b = s_compose ("A living room with a sofa and a basket of blankets next to it.", NULL);      /* folded, in layers */
    assert_string_equal (s_rel_of (b, "storage_box", "type"), "next_to");
    assert_string_equal (s_rel_of (b, "blanket", "type"), "inside");
    assert_false (s_note_has (b, "too big"));
    assert_false (s_note_has (b, "not inside"));
    plan = json_object_get (b, "plan");
    assert_true (s_at (s_step_named (plan, "blanket.001"), "location", 2) > s_at (s_step_named (plan, "blanket"), "location", 2) + 0.01);
    json_decref (b);
    b = s_compose ("A hallway with a cabinet and two storage baskets inside the cabinet.", NULL);
    plan = json_object_get (b, "plan");
    json_t *b1 = s_step_named (plan, "storage_box"), *b2 = s_step_named (plan, "storage_box.001");
    assert_non_null (b1);
    assert_non_null (b2);
    assert_false (s_note_has (b, "not inside"));
    bmq_bounds_t *sb = bmq_bounds_new (json_object_get (bmq_recipe_book_get (s_env.book, "storage_box"), "steps"), s_env.described);
    bmq_box_t basket;
    assert_true (bmq_bounds_total (sb, &basket));
    bmq_bounds_destroy (&sb);
    double f = json_number_value (json_object_get (s_part_of (b, "storage_box"), "size"));
    if (f <= 0) f = 1;
    /* side by side or one on the other: their centres a basket's least size apart at least */
    double gap = hypot (hypot (s_at (b1, "location", 0) - s_at (b2, "location", 0), s_at (b1, "location", 1) - s_at (b2, "location", 1)),
                        s_at (b1, "location", 2) - s_at (b2, "location", 2));
    assert_true (gap >= 0.99 * f * fmin (fmin (basket.max[0] - basket.min[0], basket.max[1] - basket.min[1]), basket.max[2] - basket.min[2]));
    json_decref (b);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_prompt_file),
        cmocka_unit_test (test_number_words),
        cmocka_unit_test (test_limits),
        cmocka_unit_test (test_names_and_turns),
        cmocka_unit_test (test_single_recipe),
        cmocka_unit_test (test_hostile),
        cmocka_unit_test (test_instance_tree_copy),
        cmocka_unit_test (test_bounds),
        cmocka_unit_test (test_rooms_and_words),
        cmocka_unit_test (test_free_form),
        cmocka_unit_test (test_unread_tail_reported),
        cmocka_unit_test (test_relations_against_walls),
        cmocka_unit_test (test_outside_set_classes),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
