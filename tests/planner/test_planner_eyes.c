/* test_planner_eyes — the dialogue's search_assets and look (issue 16), and a
 * review of a plan that ran, with the real dialogue code against the fake
 * Gemini (and OpenAI) server and the fake gateway front (planner_harness.c):
 *   - search_assets answers reach the model; a plan with asset.import passes;
 *   - a source the executor does not serve is a tool error the model reads;
 *   - look's picture goes to Gemini as an inlineData image/png part beside the
 *     functionResponse (numbers), and to an OpenAI server as an image_url;
 *   - review mode: look then done (satisfied), or look then a fix plan that
 *     targets an object the first plan made; a plain answer is satisfied. */
#include "planner_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void s_push (h_world_t *w, char *body)
{
    fake_llm_json (w->llm, 200, body);
    free (body);
}

/* The request body i as compact text (for substring checks). */
static char *s_body (h_world_t *w, size_t i)
{
    json_t *b = fake_llm_body (w->llm, i);
    return b ? json_dumps (b, JSON_COMPACT) : strdup ("");
}

/* The functionResponse.response of the last user turn of Gemini request i. */
static json_t *s_last_response (h_world_t *w, size_t i)
{
    json_t *contents = json_object_get (fake_llm_body (w->llm, i), "contents");
    json_t *last = json_array_get (contents, json_array_size (contents) - 1);
    size_t k;
    json_t *p;
    json_array_foreach (json_object_get (last, "parts"), k, p)
        if (json_object_get (p, "functionResponse")) return json_object_get (json_object_get (p, "functionResponse"), "response");
    return NULL;
}

static void test_search_then_asset_plan (void **state)
{
    (void) state;
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_push (w, h_gemini_call ("search_assets", "{\"source\": \"polyhaven\", \"query\": \"studio\", \"type\": \"hdri\"}", NULL));
    s_push (w, h_gemini_call ("submit_plan", "{\"title\": \"ball in a studio\", \"plan\": ["
        "{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"ball\", \"params\": {\"radius\": 1.0}},"
        "{\"operation\": \"asset.import\", \"params\": {\"source\": \"polyhaven\", \"id\": \"studio_small_09\", \"type\": \"hdri\","
        " \"resolution\": \"1k\"}}]}", NULL));
    assert_int_equal (h_run (w, "a ball in a photo studio"), 0);
    assert_non_null (w->result.plan);
    assert_int_equal (json_array_size (w->result.plan), 2);
    assert_string_equal (json_string_value (json_object_get (json_array_get (w->result.plan, 1), "operation")), "asset.import");
    /* the declarations offered the tools; the answer reached the model, compact */
    char *first = s_body (w, 0);
    assert_non_null (strstr (first, "\"search_assets\""));
    assert_non_null (strstr (first, "\"look\""));
    free (first);
    json_t *resp = s_last_response (w, 1);
    assert_non_null (resp);
    json_t *results = json_object_get (resp, "results");
    assert_int_equal (json_array_size (results), 2);
    assert_string_equal (json_string_value (json_object_get (json_array_get (results, 0), "id")), "studio_small_09");
    assert_int_equal (json_integer_value (json_object_get (resp, "found")), 2);
    assert_true (h_noted (w, "searching polyhaven"));
    h_world_destroy (&w);
}

static void test_search_source_not_served (void **state)
{
    (void) state;
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_push (w, h_gemini_call ("search_assets", "{\"source\": \"sketchfab\", \"query\": \"chair\"}", NULL));
    s_push (w, h_gemini_call ("search_assets", "{\"source\": \"polyhaven\", \"type\": \"banana\"}", NULL));
    s_push (w, h_gemini_call ("submit_plan", "{\"plan\": [{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"box\"}]}", NULL));
    assert_int_equal (h_run (w, "a chair"), 0);
    const char *err = json_string_value (json_object_get (s_last_response (w, 1), "error"));
    assert_non_null (err);
    assert_non_null (strstr (err, "not served"));
    assert_non_null (strstr (err, "asset_source"));
    err = json_string_value (json_object_get (s_last_response (w, 2), "error"));
    assert_non_null (err);
    assert_non_null (strstr (err, "type must be"));
    h_world_destroy (&w);
}

/* The review of a plan that ran: look (an image reaches Gemini), then done. */
static void test_review_look_then_done (void **state)
{
    (void) state;
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    json_t *review = json_pack ("{s:o, s:{s:s, s:i, s:i}, s:i, s:i}", "plan", json_loads (H_GOOD_PLAN, 0, NULL),
                                "result", "status", "done", "steps_done", 3, "steps_total", 3, "round", 1, "rounds", 1);
    w->opts.review = review;
    w->opts.review_template = bmq_prompts_get (w->prompts, BMQ_PROMPT_REVIEW);
    s_push (w, h_gemini_call ("look", "{\"angles\": 2}", "sig-look"));
    s_push (w, h_gemini_call ("done", "{\"summary\": \"a snowman of two spheres, standing on the ground\"}", NULL));
    assert_int_equal (h_run (w, "build a snowman"), 0);
    assert_true (w->result.satisfied);
    assert_null (w->result.plan);
    assert_int_equal (w->result.looks, 1);
    assert_non_null (strstr (w->result.summary, "two spheres"));
    /* the first message is the review: the prompt, the plan that ran and how it ended */
    char *first = s_body (w, 0);
    assert_non_null (strstr (first, "build a snowman"));
    assert_non_null (strstr (first, "primitive_uv_sphere_add"));
    assert_non_null (strstr (first, "done, 3 of 3 steps"));
    assert_non_null (strstr (first, "\"done\""));              /* the done tool is declared */
    free (first);
    /* the look answer: numbers in the functionResponse, the PNG as an inlineData part of the same turn */
    json_t *resp = s_last_response (w, 1);
    assert_non_null (resp);
    assert_null (json_object_get (resp, "_image"));
    assert_string_equal (json_string_value (json_object_get (json_array_get (json_object_get (resp, "objects"), 0), "name")), "base");
    assert_int_equal (json_integer_value (json_object_get (json_object_get (resp, "totals"), "faces")), 480);
    json_t *contents = json_object_get (fake_llm_body (w->llm, 1), "contents");
    json_t *last = json_array_get (contents, json_array_size (contents) - 1);
    json_t *img = NULL, *p;
    size_t k;
    json_array_foreach (json_object_get (last, "parts"), k, p)
        if (json_object_get (p, "inlineData")) img = json_object_get (p, "inlineData");
    assert_non_null (img);
    assert_string_equal (json_string_value (json_object_get (img, "mimeType")), "image/png");
    assert_string_equal (json_string_value (json_object_get (img, "data")), "iVBORw0KGgoAAAANSUhEUg==");
    assert_true (h_noted (w, "reviewing the result"));
    assert_true (h_noted (w, "satisfied"));
    json_decref (review);
    h_world_destroy (&w);
}

/* The review finds a fault: a fix plan that acts on the first plan's object passes the planner's check. */
static void test_review_fix_plan (void **state)
{
    (void) state;
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    json_t *review = json_pack ("{s:o, s:{s:s, s:i, s:i}, s:i, s:i}", "plan", json_loads (H_GOOD_PLAN, 0, NULL),
                                "result", "status", "done", "steps_done", 3, "steps_total", 3, "round", 1, "rounds", 1);
    w->opts.review = review;
    s_push (w, h_gemini_call ("look", "{}", NULL));
    s_push (w, h_gemini_call ("submit_plan", "{\"title\": \"fix\", \"plan\": [{\"operation\": \"object.material\", "
                                             "\"target\": \"base\", \"params\": {\"color\": [1, 1, 1]}}]}", NULL));
    assert_int_equal (h_run (w, "build a snowman"), 0);
    assert_false (w->result.satisfied);
    assert_non_null (w->result.plan);
    assert_string_equal (json_string_value (json_object_get (json_array_get (w->result.plan, 0), "target")), "base");
    json_decref (review);
    h_world_destroy (&w);
}

/* A plain answer in a review is a verdict (satisfied), not a reason for reminders. */
static void test_review_plain_answer (void **state)
{
    (void) state;
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    json_t *review = json_pack ("{s:[], s:{s:s, s:i, s:i}}", "plan", "result", "status", "done", "steps_done", 0, "steps_total", 0);
    w->opts.review = review;
    s_push (w, h_gemini_text ("It looks right to me.", "STOP"));
    assert_int_equal (h_run (w, "build a snowman"), 0);
    assert_true (w->result.satisfied);
    assert_int_equal (w->result.reformats, 0);
    assert_int_equal (fake_llm_requests (w->llm), 1);
    json_decref (review);
    h_world_destroy (&w);
}

/* Outside a review, done is no function, and a plain answer gets a reminder as before. */
static void test_done_only_in_review (void **state)
{
    (void) state;
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_push (w, h_gemini_call ("done", "{\"summary\": \"x\"}", NULL));
    s_push (w, h_gemini_call ("submit_plan", "{\"plan\": [{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"box\"}]}", NULL));
    assert_int_equal (h_run (w, "a box"), 0);
    assert_false (w->result.satisfied);
    const char *err = json_string_value (json_object_get (s_last_response (w, 1), "error"));
    assert_non_null (err);
    assert_non_null (strstr (err, "no function done"));
    char *first = s_body (w, 0);
    assert_null (strstr (first, "\"name\":\"done\""));
    free (first);
    h_world_destroy (&w);
}

/* OpenAI-compatible servers: the tool message holds the numbers, a user message the picture. */
static void test_look_openai_image (void **state)
{
    (void) state;
    h_world_t *w = h_world_new ("openai", H_EXEC_ANSWER);
    char *a = h_openai_call ("c1", "look", "{}"), *b = h_openai_call ("c2", "submit_plan",
        "{\"plan\": [{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"box\"}]}");
    s_push (w, a);
    s_push (w, b);
    assert_int_equal (h_run (w, "a box next to what is there"), 0);
    char *second = s_body (w, 1);
    assert_non_null (strstr (second, "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="));
    assert_null (strstr (second, "_image"));
    free (second);
    h_world_destroy (&w);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_search_then_asset_plan),
        cmocka_unit_test (test_search_source_not_served),
        cmocka_unit_test (test_review_look_then_done),
        cmocka_unit_test (test_review_fix_plan),
        cmocka_unit_test (test_review_plain_answer),
        cmocka_unit_test (test_done_only_in_review),
        cmocka_unit_test (test_look_openai_image),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
