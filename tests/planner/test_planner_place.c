/* The model's `place` function (issue 26): the offline composer's layout
 * engine for boxes a model names — things on a desk stand on its top, nothing
 * overlaps, spots make a room, each relation is in the anchor's frame, the
 * same name replaces; and every argument a model might get wrong is refused
 * with a reason. The dialogue tests (planner.gemini, planner.openai) drive it
 * through the real wire formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose_check.h"
#include "planner_place.h"

static compose_env_t s_env;

static int s_setup (void **state)
{
    (void) state;
    return compose_env_open (&s_env);
}

static int s_teardown (void **state)
{
    (void) state;
    compose_env_close (&s_env);
    return 0;
}

static json_t *s_call (bmq_place_t *p, const char *args)
{
    json_error_t jerr;
    json_t *a = json_loads (args, 0, &jerr);
    if (!a) fail_msg ("bad test JSON %s: %s", args, jerr.text);
    json_t *answer = bmq_place_call (p, a);
    json_decref (a);
    assert_non_null (answer);
    return answer;
}

static json_t *s_ok (bmq_place_t *p, const char *args)
{
    json_t *a = s_call (p, args);
    if (json_object_get (a, "error")) fail_msg ("%s: %s", args, json_string_value (json_object_get (a, "error")));
    return a;
}

static void s_refused (bmq_place_t *p, const char *args, const char *says)
{
    json_t *a = s_call (p, args);
    const char *e = json_string_value (json_object_get (a, "error"));
    if (!e || !strstr (e, says)) fail_msg ("%s: expected an error saying '%s', got %s", args, says, e ? e : "none");
    json_decref (a);
}

/* copy k of object `name` in answer: its box (min, max) */
static const json_t *s_copy (const json_t *answer, const char *name, size_t k)
{
    size_t i;
    json_t *o;
    json_array_foreach (json_object_get (answer, "objects"), i, o)
        if (!strcmp (json_string_value (json_object_get (o, "object")), name)) return json_array_get (json_object_get (o, "copies"), k);
    fail_msg ("no %s in the answer", name);
    return NULL;
}

static double s_v (const json_t *copy, const char *key, size_t a)
{
    return json_number_value (json_array_get (json_object_get (copy, key), a));
}

static bool s_overlap (const json_t *a, const json_t *b)
{
    for (size_t k = 0; k < 3; k++)
        if (s_v (a, "min", k) >= s_v (b, "max", k) - 1e-3 || s_v (b, "min", k) >= s_v (a, "max", k) - 1e-3) return false;
    return true;
}

static void test_desk_room (void **state)
{
    (void) state;
    bmq_place_t *p = bmq_place_new (s_env.described);
    assert_non_null (p);
    json_decref (s_ok (p, "{\"object\": \"desk\", \"size\": [1.4, 0.7, 0.75], \"spot\": \"wall\"}"));
    json_decref (s_ok (p, "{\"object\": \"monitor\", \"size\": [0.55, 0.2, 0.4], \"relation\": \"on\", \"anchor\": \"desk\", \"count\": 2}"));
    json_decref (s_ok (p, "{\"object\": \"keyboard\", \"size\": [0.45, 0.15, 0.03], \"relation\": \"on\", \"anchor\": \"desk\"}"));
    json_decref (s_ok (p, "{\"object\": \"chair\", \"size\": [0.5, 0.5, 0.9], \"relation\": \"in_front_of\", \"anchor\": \"desk\"}"));
    json_decref (s_ok (p, "{\"object\": \"shelf\", \"size\": [0.8, 0.35, 1.8], \"relation\": \"next_to\", \"anchor\": \"desk\"}"));
    json_decref (s_ok (p, "{\"object\": \"plant\", \"size\": [0.4, 0.4, 1.2], \"spot\": \"corner\", \"front\": \"round\"}"));
    json_t *a = s_ok (p, "{\"object\": \"painting\", \"size\": [0.8, 0.05, 0.6], \"spot\": \"on_wall\", \"height\": 1.4}");
    json_t *room = json_object_get (a, "room");
    assert_non_null (room);                             /* a spot: the layout is a room's */
    double W = json_number_value (json_object_get (room, "width")) / 2, D = json_number_value (json_object_get (room, "depth")) / 2;
    assert_true (W > 1 && D > 1);
    const json_t *desk = s_copy (a, "desk", 0), *chair = s_copy (a, "chair", 0);
    /* on: the monitors and the keyboard stand on the desk's top, inside its footprint */
    const char *on[] = { "monitor", "monitor", "keyboard" };
    for (size_t i = 0; i < 3; i++) {
        const json_t *c = s_copy (a, on[i], i == 1);
        assert_true (fabs (s_v (c, "min", 2) - s_v (desk, "max", 2)) < 0.002);
        double cx = s_v (c, "center", 0), cy = s_v (c, "center", 1);
        assert_true (cx > s_v (desk, "min", 0) && cx < s_v (desk, "max", 0) && cy > s_v (desk, "min", 1) && cy < s_v (desk, "max", 1));
    }
    assert_false (s_overlap (s_copy (a, "monitor", 0), s_copy (a, "monitor", 1)));
    /* against a wall: the desk touches one */
    bool walled = fabs (s_v (desk, "min", 0) + W) < 0.02 || fabs (s_v (desk, "max", 0) - W) < 0.02
                || fabs (s_v (desk, "min", 1) + D) < 0.02 || fabs (s_v (desk, "max", 1) - D) < 0.02;
    assert_true (walled);
    /* in front of: the chair is off the desk's front, the side away from its wall */
    double dx = s_v (chair, "center", 0) - s_v (desk, "center", 0), dy = s_v (chair, "center", 1) - s_v (desk, "center", 1);
    double th = json_number_value (json_object_get (desk, "rotation_z")) - M_PI / 2;     /* the desk's front, turned */
    assert_true (dx * cos (th) + dy * sin (th) > 0.3);
    /* the painting hangs at its height */
    assert_true (fabs (s_v (s_copy (a, "painting", 0), "min", 2) - 1.4) < 0.002);
    /* nothing on the floor overlaps anything else on the floor; everything is inside the room */
    const char *floor[] = { "desk", "chair", "shelf", "plant" };
    for (size_t i = 0; i < 4; i++) {
        const json_t *c = s_copy (a, floor[i], 0);
        assert_true (fabs (s_v (c, "min", 2)) < 0.002);
        assert_true (s_v (c, "min", 0) >= -W - 1e-3 && s_v (c, "max", 0) <= W + 1e-3);
        assert_true (s_v (c, "min", 1) >= -D - 1e-3 && s_v (c, "max", 1) <= D + 1e-3);
        for (size_t j = i + 1; j < 4; j++)
            if (s_overlap (c, s_copy (a, floor[j], 0))) fail_msg ("%s overlaps %s", floor[i], floor[j]);
    }
    assert_int_equal (json_array_size (json_object_get (a, "notes")), 0);
    json_decref (a);

    /* the same name again replaces it where it was: a wider desk, the monitors still on it */
    a = s_ok (p, "{\"object\": \"desk\", \"size\": [1.8, 0.8, 0.72], \"spot\": \"wall\"}");
    assert_true (fabs (s_v (s_copy (a, "monitor", 0), "min", 2) - 0.72) < 0.002);
    assert_int_equal (json_array_size (json_object_get (a, "objects")), 7);
    json_decref (a);
    bmq_place_destroy (&p);
}

static void test_no_room_and_relations (void **state)
{
    (void) state;
    bmq_place_t *p = bmq_place_new (s_env.described);
    json_decref (s_ok (p, "{\"object\": \"bed\", \"size\": [1.6, 2.0, 0.6]}"));
    json_decref (s_ok (p, "{\"object\": \"nightstand\", \"size\": [0.45, 0.4, 0.55], \"relation\": \"both_sides\", \"anchor\": \"bed\"}"));
    json_t *a = s_ok (p, "{\"object\": \"table\", \"size\": [1.2, 0.8, 0.75], \"relation\": \"facing\", \"anchor\": \"bed\"}");
    assert_null (json_object_get (a, "room"));          /* no spot: no room */
    const json_t *bed = s_copy (a, "bed", 0), *n0 = s_copy (a, "nightstand", 0), *n1 = s_copy (a, "nightstand", 1);
    double bx = s_v (bed, "center", 0);
    assert_true ((s_v (n0, "center", 0) - bx) * (s_v (n1, "center", 0) - bx) < 0);      /* one each side */
    assert_false (s_overlap (bed, n0) || s_overlap (bed, n1) || s_overlap (bed, s_copy (a, "table", 0)));
    json_decref (a);
    /* what the layout does differently is a note, not silence: inside a plain box (no shelves) */
    a = s_ok (p, "{\"object\": \"book\", \"size\": [0.2, 0.15, 0.04], \"relation\": \"inside\", \"anchor\": \"table\"}");
    if (json_array_size (json_object_get (a, "notes")) < 1) fail_msg ("no note: %s", json_dumps (a, JSON_COMPACT));
    json_decref (a);
    bmq_place_destroy (&p);
}

static void test_refusals (void **state)
{
    (void) state;
    bmq_place_t *p = bmq_place_new (s_env.described);
    s_refused (p, "[1, 2]", "object of arguments");
    s_refused (p, "{\"size\": [1, 1, 1]}", "object must be a name");
    s_refused (p, "{\"object\": \"\", \"size\": [1, 1, 1]}", "object must be a name");
    s_refused (p, "{\"object\": \"a\\u0007b\", \"size\": [1, 1, 1]}", "object must be a name");
    s_refused (p, "{\"object\": \"box\"}", "size must be");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1]}", "size must be");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, \"1\", 1]}", "between 0.01 and 30");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1e9]}", "between 0.01 and 30");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 0]}", "between 0.01 and 30");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1], \"count\": 0}", "count must be");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1], \"count\": 1000000}", "count must be");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1], \"count\": 2.5}", "count must be");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1], \"relation\": \"on\"}", "anchor must name");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1], \"relation\": \"on\", \"anchor\": \"ghost\"}", "anchor must name");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1], \"relation\": \"atop\", \"anchor\": \"ghost\"}", "not one place knows");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1], \"spot\": \"ceiling\"}", "spot ceiling");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1], \"front\": \"up\"}", "front must be");
    s_refused (p, "{\"object\": \"box\", \"size\": [1, 1, 1], \"spot\": \"on_wall\", \"height\": 99}", "height must be");
    json_decref (s_ok (p, "{\"object\": \"a\", \"size\": [1, 1, 1]}"));
    json_decref (s_ok (p, "{\"object\": \"b\", \"size\": [0.5, 0.5, 0.5], \"relation\": \"on\", \"anchor\": \"a\"}"));
    s_refused (p, "{\"object\": \"a\", \"size\": [1, 1, 1], \"relation\": \"on\", \"anchor\": \"a\"}", "anchor must name");
    s_refused (p, "{\"object\": \"a\", \"size\": [1, 1, 1], \"relation\": \"on\", \"anchor\": \"b\"}", "stand on itself");
    s_refused (p, "{\"object\": \"c\", \"size\": [1, 1, 1], \"relation\": \"between\", \"anchor\": \"a\"}", "anchor2");
    s_refused (p, "{\"object\": \"c\", \"size\": [1, 1, 1], \"relation\": \"between\", \"anchor\": \"a\", \"anchor2\": \"a\"}", "anchor2");
    json_t *a = s_ok (p, "{\"object\": \"c\", \"size\": [0.3, 0.3, 0.3], \"relation\": \"between\", \"anchor\": \"a\", \"anchor2\": \"b\"}");
    json_decref (a);
    for (int i = 3; i < BMQ_PLACE_MAX; i++) {           /* up to the cap, then refused */
        char args[128];
        snprintf (args, sizeof args, "{\"object\": \"box%d\", \"size\": [0.2, 0.2, 0.2]}", i);
        json_decref (s_ok (p, args));
    }
    s_refused (p, "{\"object\": \"one_more\", \"size\": [0.2, 0.2, 0.2]}", "at most 32");
    json_decref (s_ok (p, "{\"object\": \"box5\", \"size\": [0.3, 0.3, 0.3]}"));       /* replacing still works */
    bmq_place_destroy (&p);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_desk_room),
        cmocka_unit_test (test_no_room_and_relations),
        cmocka_unit_test (test_refusals),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
