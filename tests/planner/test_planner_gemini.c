/* The Gemini backend against a local fake Gemini that speaks the real wire
 * format: the dialogue (discover → inspect → submit), fix rounds, retries and
 * back-off, immediate failures, finish reasons, broken answers, streaming, and
 * that the API key never leaks. No test reaches Google. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "log.h"
#include "planner_harness.h"

#define PATH "/v1beta/models/gemini-test-flash:generateContent"

static void s_push_json (h_world_t *w, int status, char *body)
{
    fake_llm_json (w->llm, status, body);
    free (body);
}

static json_t *s_contents (h_world_t *w, size_t request)
{
    return json_object_get (fake_llm_body (w->llm, request), "contents");
}

/* contents[i].parts[j] of request r */
static json_t *s_part (h_world_t *w, size_t r, size_t i, size_t j)
{
    return json_array_get (json_object_get (json_array_get (s_contents (w, r), i), "parts"), j);
}

static void s_assert_alternating (h_world_t *w, size_t r)
{
    json_t *contents = s_contents (w, r);
    for (size_t i = 1; i < json_array_size (contents); i++)
        assert_string_not_equal (json_string_value (json_object_get (json_array_get (contents, i - 1), "role")),
                                 json_string_value (json_object_get (json_array_get (contents, i), "role")));
}

static void s_assert_no_key (h_world_t *w)
{
    char *all = h_everything (w);
    if (strstr (all, H_KEY)) fail_msg ("the API key leaked: %s", all);
    free (all);
}

static char *s_submit (const char *plan, const char *sig)
{
    char args[4096];
    snprintf (args, sizeof args, "{\"title\": \"snowman\", \"plan\": %s}", plan);
    return h_gemini_call ("submit_plan", args, sig);
}

/* ---- the dialogue ----------------------------------------------------------- */

static void test_discover_inspect_submit (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_push_json (w, 200, h_gemini_call ("discover_capabilities", "{}", "sig-A"));
    s_push_json (w, 200, h_gemini_call ("inspect_tool", "{\"tool_name\": \"bpy.ops.mesh.primitive_cone_add\"}", "sig-B"));
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, "sig-C"));
    assert_int_equal (h_run (w, "build a snowman"), 0);
    assert_int_equal (json_array_size (w->result.plan), 3);
    assert_string_equal (w->result.title, "snowman");
    assert_int_equal (w->result.turns, 3);
    assert_int_equal (fake_llm_requests (w->llm), 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal (fake_llm_path (w->llm, i), PATH);
        assert_string_equal (fake_llm_header (w->llm, i, "x-goog-api-key"), H_KEY);
        assert_string_equal (fake_llm_header (w->llm, i, "content-type"), "application/json");
        s_assert_alternating (w, i);
    }
    /* the first request: system prompt, tools declared from the palette, the prompt */
    json_t *r0 = fake_llm_body (w->llm, 0);
    assert_non_null (strstr (json_string_value (json_object_get (json_array_get (json_object_get (
        json_object_get (r0, "systemInstruction"), "parts"), 0), "text")), "discover_capabilities"));
    json_t *decls = json_object_get (json_array_get (json_object_get (r0, "tools"), 0), "functionDeclarations");
    assert_int_equal (json_array_size (decls), 6);      /* + place (issue 26), search_assets and look (issue 16) */
    assert_string_equal (json_string_value (json_object_get (json_array_get (decls, 2), "name")), "submit_plan");
    assert_string_equal (json_string_value (json_object_get (json_array_get (decls, 3), "name")), "place");
    assert_string_equal (json_string_value (json_object_get (json_array_get (decls, 4), "name")), "search_assets");
    assert_string_equal (json_string_value (json_object_get (json_array_get (decls, 5), "name")), "look");
    json_t *plan_schema = json_object_get (json_object_get (json_object_get (json_array_get (decls, 2), "parameters"),
                                                            "properties"), "plan");
    assert_string_equal (json_string_value (json_object_get (plan_schema, "type")), "ARRAY");
    assert_non_null (json_object_get (json_object_get (json_object_get (json_object_get (json_object_get (plan_schema, "items"),
                                                      "properties"), "params"), "properties"), "radius"));
    /* discover_capabilities takes MCP's form argument (full, compact) */
    json_t *form = json_object_get (json_object_get (json_object_get (json_array_get (decls, 0), "parameters"), "properties"), "form");
    assert_int_equal (json_array_size (json_object_get (form, "enum")), 2);
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_object_get (r0, "toolConfig"),
                                                                             "functionCallingConfig"), "mode")), "AUTO");
    assert_non_null (strstr (json_string_value (json_object_get (s_part (w, 0, 0, 0), "text")), "build a snowman"));
    /* the second: the model's call with its signature, unchanged, then the palette */
    assert_string_equal (json_string_value (json_object_get (s_part (w, 1, 1, 0), "thoughtSignature")), "sig-A");
    json_t *fr = json_object_get (s_part (w, 1, 2, 0), "functionResponse");
    assert_string_equal (json_string_value (json_object_get (fr, "name")), "discover_capabilities");
    assert_non_null (json_object_get (json_object_get (json_object_get (fr, "response"), "palette"),
                                      "bpy.ops.mesh.primitive_cone_add"));
    /* the third: both earlier turns kept exactly, the inspect answer through the gateway */
    assert_string_equal (json_string_value (json_object_get (s_part (w, 2, 1, 0), "thoughtSignature")), "sig-A");
    assert_string_equal (json_string_value (json_object_get (s_part (w, 2, 3, 0), "thoughtSignature")), "sig-B");
    fr = json_object_get (s_part (w, 2, 4, 0), "functionResponse");
    assert_string_equal (json_string_value (json_object_get (fr, "name")), "inspect_tool");
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_object_get (fr, "response"), "tool"), "name")),
                         "bpy.ops.mesh.primitive_cone_add");
    assert_non_null (json_object_get (json_object_get (fr, "response"), "allowed"));
    assert_int_equal (h_inspect_asked (w), 1);
    assert_true (h_noted (w, "asking for capabilities"));
    assert_true (h_noted (w, "inspecting bpy.ops.mesh.primitive_cone_add"));
    assert_true (h_noted (w, "plan of 3 steps ready"));
    size_t i, turns = 0, checks = 0;
    json_t *rec;
    json_array_foreach (w->sink.audit, i, rec) {
        const char *kind = json_string_value (json_object_get (rec, "kind"));
        turns += !strcmp (kind, "llm.turn");
        checks += !strcmp (kind, "plan.check");
    }
    assert_int_equal (turns, 3);
    assert_int_equal (checks, 1);
    s_assert_no_key (w);
    h_world_destroy (&w);
}

/* place (issue 26): the model lays out a desk and two monitors on it with the composer's engine
 * and gets world boxes back in its functionResponse, then submits */
static json_t *s_place_copy (json_t *response, const char *object, size_t k)
{
    size_t i;
    json_t *o;
    json_array_foreach (json_object_get (response, "objects"), i, o)
        if (!strcmp (json_string_value (json_object_get (o, "object")) ?: "", object))
            return json_array_get (json_object_get (o, "copies"), k);
    return NULL;
}

static double s_num_at (const json_t *copy, const char *key, size_t a)
{
    return json_number_value (json_array_get (json_object_get (copy, key), a));
}

static void test_place_by_relation (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_push_json (w, 200, h_gemini_call ("place", "{\"object\": \"desk\", \"size\": [1.4, 0.7, 0.75], \"spot\": \"wall\"}", "p-1"));
    s_push_json (w, 200, h_gemini_call ("place", "{\"object\": \"monitor\", \"size\": [0.55, 0.2, 0.4], \"relation\": \"on\","
                                                 " \"anchor\": \"desk\", \"count\": 2}", "p-2"));
    s_push_json (w, 200, h_gemini_call ("place", "{\"object\": \"lamp\", \"size\": [0.2, 0.2, 0.5], \"relation\": \"on\","
                                                 " \"anchor\": \"sofa\"}", "p-3"));
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, "p-4"));
    assert_int_equal (h_run (w, "a desk with two monitors on it"), 0);
    assert_int_equal (fake_llm_requests (w->llm), 4);
    /* request 1 answers the first call: the desk in a room, against a wall */
    json_t *fr = json_object_get (s_part (w, 1, 2, 0), "functionResponse");
    assert_string_equal (json_string_value (json_object_get (fr, "name")), "place");
    json_t *r1 = json_object_get (fr, "response");
    assert_non_null (json_object_get (r1, "room"));
    assert_non_null (s_place_copy (r1, "desk", 0));
    /* request 2: both monitors on the desk's top, apart */
    json_t *r2 = json_object_get (json_object_get (s_part (w, 2, 4, 0), "functionResponse"), "response");
    json_t *desk = s_place_copy (r2, "desk", 0), *m0 = s_place_copy (r2, "monitor", 0), *m1 = s_place_copy (r2, "monitor", 1);
    assert_non_null (m1);
    assert_true (fabs (s_num_at (m0, "min", 2) - s_num_at (desk, "max", 2)) < 0.002);
    assert_true (fabs (s_num_at (m1, "min", 2) - s_num_at (desk, "max", 2)) < 0.002);
    assert_true (s_num_at (m0, "max", 0) <= s_num_at (m1, "min", 0) + 1e-3 || s_num_at (m1, "max", 0) <= s_num_at (m0, "min", 0) + 1e-3);
    /* request 3: a wrong anchor is an error the model reads, and the dialogue goes on */
    json_t *r3 = json_object_get (json_object_get (s_part (w, 3, 6, 0), "functionResponse"), "response");
    assert_non_null (strstr (json_string_value (json_object_get (r3, "error")) ?: "", "anchor must name"));
    assert_string_equal (json_string_value (json_object_get (s_part (w, 3, 5, 0), "thoughtSignature")), "p-3");
    assert_true (h_noted (w, "placing monitor on desk"));
    h_world_destroy (&w);
}

static void test_parallel_calls (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    /* two calls in one answer; only the first carries a signature (Gemini's parallel-call rule) */
    fake_llm_json (w->llm, 200,
        "{\"candidates\": [{\"content\": {\"role\": \"model\", \"parts\": ["
        "{\"functionCall\": {\"name\": \"discover_capabilities\", \"args\": {}}, \"thoughtSignature\": \"par-1\"},"
        "{\"functionCall\": {\"name\": \"inspect_tool\", \"args\": {\"tool_name\": \"bpy.ops.mesh.primitive_torus_add\"}}}]},"
        "\"finishReason\": \"STOP\"}]}");
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, NULL));
    assert_int_equal (h_run (w, "a ring"), 0);
    json_t *answers = json_object_get (json_array_get (s_contents (w, 1), 2), "parts");
    assert_int_equal (json_array_size (answers), 2);
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_array_get (answers, 0), "functionResponse"), "name")),
                         "discover_capabilities");
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_array_get (answers, 1), "functionResponse"), "name")),
                         "inspect_tool");
    json_t *model = json_object_get (json_array_get (s_contents (w, 1), 1), "parts");
    assert_int_equal (json_array_size (model), 2);
    assert_string_equal (json_string_value (json_object_get (json_array_get (model, 0), "thoughtSignature")), "par-1");
    assert_null (json_object_get (json_array_get (model, 1), "thoughtSignature"));
    h_world_destroy (&w);
}

static void test_rejected_then_fixed (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_push_json (w, 200, s_submit (H_BAD_PLAN, "sig-1"));
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, "sig-2"));
    assert_int_equal (h_run (w, "a snowman"), 0);
    assert_int_equal (w->result.fix_rounds, 1);
    assert_int_equal (w->result.submissions, 2);
    json_t *resp = json_object_get (json_object_get (s_part (w, 1, 2, 0), "functionResponse"), "response");
    assert_true (json_is_false (json_object_get (resp, "accepted")));
    json_t *errors = json_object_get (resp, "errors");
    assert_true (json_array_size (errors) >= 2);
    char *text = json_dumps (errors, 0);
    assert_non_null (strstr (text, "primitive_teapot_add"));
    assert_non_null (strstr (text, "radius"));
    free (text);
    assert_non_null (strstr (json_string_value (json_object_get (resp, "what_to_do")), "round 1 of 2"));
    assert_true (h_noted (w, "plan rejected"));
    h_world_destroy (&w);
}

static void test_rejected_until_the_end (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    for (int i = 0; i < 4; i++) s_push_json (w, 200, s_submit (H_BAD_PLAN, NULL));
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_string_equal (w->result.code, "plan_rejected");
    assert_int_equal (fake_llm_requests (w->llm), 3);          /* the first try and 2 fix rounds */
    assert_int_equal (w->result.fix_rounds, 2);
    assert_true (json_array_size (w->result.errors) >= 2);
    assert_non_null (strstr (w->result.message, "after 2 fix rounds"));
    assert_true (w->result.fallback_ok);
    h_world_destroy (&w);
}

/* ---- retries and failures ------------------------------------------------------ */

#define RATE_LIMITED(delay) \
    "{\"error\": {\"code\": 429, \"message\": \"Resource has been exhausted (e.g. check quota).\", \"status\": \"RESOURCE_EXHAUSTED\"," \
    " \"details\": [{\"@type\": \"type.googleapis.com/google.rpc.QuotaFailure\", \"violations\": [{\"quotaMetric\": \"m\"}]}," \
    " {\"@type\": \"type.googleapis.com/google.rpc.RetryInfo\", \"retryDelay\": \"" delay "\"}]}}"

static void test_429_honours_retry_delay (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    fake_llm_json (w->llm, 429, RATE_LIMITED ("0.400s"));
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, NULL));
    int64_t t0 = bmq_mono_ms ();
    assert_int_equal (h_run (w, "a snowman"), 0);
    int64_t took = bmq_mono_ms () - t0;
    assert_true (took >= 400);
    assert_true (took < 3000);
    assert_int_equal (fake_llm_requests (w->llm), 2);
    assert_true (h_noted (w, "429 RESOURCE_EXHAUSTED; retrying in 0.4 s"));
    h_world_destroy (&w);
}

static void test_429_delay_is_capped (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.policy.retry_after_max_ms = 150;
    fake_llm_json (w->llm, 429, RATE_LIMITED ("59s"));
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, NULL));
    int64_t t0 = bmq_mono_ms ();
    assert_int_equal (h_run (w, "a snowman"), 0);
    int64_t took = bmq_mono_ms () - t0;
    assert_true (took >= 150 && took < 3000);
    assert_true (h_noted (w, "retrying in 0.1 s") || h_noted (w, "retrying in 0.2 s"));
    h_world_destroy (&w);
}

static void test_429_past_the_deadline_fails_now (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.policy.retry_after_max_ms = 60000;
    w->opts.timeout_ms = 3000;
    fake_llm_json (w->llm, 429, RATE_LIMITED ("59s"));
    int64_t t0 = bmq_mono_ms ();
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_true (bmq_mono_ms () - t0 < 2000);
    assert_string_equal (w->result.code, "llm_error");
    assert_non_null (strstr (w->result.message, "429 RESOURCE_EXHAUSTED"));
    assert_non_null (strstr (w->result.message, "deadline"));
    assert_int_equal (fake_llm_requests (w->llm), 1);
    h_world_destroy (&w);
}

static void test_503_twice_then_success (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    const char *busy = "{\"error\": {\"code\": 503, \"message\": \"The model is overloaded. Please try again later.\", \"status\": \"UNAVAILABLE\"}}";
    fake_llm_json (w->llm, 503, busy);
    fake_llm_json (w->llm, 503, busy);
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, NULL));
    assert_int_equal (h_run (w, "a snowman"), 0);
    assert_int_equal (fake_llm_requests (w->llm), 3);
    assert_true (h_noted (w, "503 UNAVAILABLE; retrying"));
    assert_true (h_noted (w, "(2 of 3)"));
    h_world_destroy (&w);
}

static void test_500_until_giving_up (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    for (int i = 0; i < 6; i++)
        fake_llm_json (w->llm, 500, "{\"error\": {\"code\": 500, \"message\": \"An internal error has occurred.\", \"status\": \"INTERNAL\"}}");
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_string_equal (w->result.code, "llm_error");
    assert_int_equal (fake_llm_requests (w->llm), 4);              /* 1 + max_retries */
    assert_non_null (strstr (w->result.message, "gave up after 4 attempts"));
    assert_non_null (strstr (w->result.message, "An internal error has occurred."));
    assert_true (w->result.fallback_ok);
    h_world_destroy (&w);
}

static void test_html_502_is_retried (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    fake_reply_t html = { .status = 502, .content_type = "text/html", .body = "<html><body><h1>502 Bad Gateway</h1></body></html>" };
    fake_llm_push (w->llm, &html);
    fake_llm_json (w->llm, 408, "");
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, NULL));
    assert_int_equal (h_run (w, "a snowman"), 0);
    assert_int_equal (fake_llm_requests (w->llm), 3);
    h_world_destroy (&w);
}

static void s_fails_at_once (int status, const char *api_status, const char *message)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    char body[1024];
    snprintf (body, sizeof body, "{\"error\": {\"code\": %d, \"message\": \"%s\", \"status\": \"%s\"}}", status, message, api_status);
    fake_llm_json (w->llm, status, body);
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, NULL));
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_int_equal (fake_llm_requests (w->llm), 1);
    assert_string_equal (w->result.code, "llm_error");
    char expect[64];
    snprintf (expect, sizeof expect, "Gemini answered %d %s", status, api_status);
    if (!strstr (w->result.message, expect)) fail_msg ("'%s' lacks '%s'", w->result.message, expect);
    s_assert_no_key (w);
    h_world_destroy (&w);
}

static void test_400_401_403_fail_at_once (void **state)
{
    /* the API echoing the key back must not carry it any further */
    s_fails_at_once (400, "INVALID_ARGUMENT", "API key not valid: " H_KEY ". Please pass a valid API key.");
    s_fails_at_once (401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
    s_fails_at_once (403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.");
    s_fails_at_once (404, "NOT_FOUND", "models/gemini-test-flash is not found for API version v1beta");
}

static void test_slow_server_times_out (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.policy.request_timeout_ms = 300;
    w->opts.llm.policy.max_retries = 1;
    char *body = s_submit (H_GOOD_PLAN, NULL);
    fake_reply_t slow = { .status = 200, .body = body, .delay_ms = 2000 };
    fake_llm_push (w->llm, &slow);
    fake_llm_push (w->llm, &slow);
    free (body);
    int64_t t0 = bmq_mono_ms ();
    assert_int_equal (h_run (w, "a snowman"), -1);
    int64_t took = bmq_mono_ms () - t0;
    assert_true (took >= 600 && took < 1800);
    assert_string_equal (w->result.code, "llm_error");
    assert_non_null (strstr (w->result.message, "no complete answer in time"));
    assert_non_null (strstr (w->result.message, "gave up after 2 attempts"));
    h_world_destroy (&w);
}

static void test_unreachable_server (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.base_url = "http://127.0.0.1:1";          /* nothing listens on port 1 */
    w->opts.llm.policy.max_retries = 1;
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_string_equal (w->result.code, "llm_error");
    assert_non_null (strstr (w->result.message, "cannot reach the server"));
    assert_true (h_noted (w, "cannot reach it"));
    h_world_destroy (&w);
}

/* ---- what the model says ------------------------------------------------------ */

static void test_prose_then_call (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_push_json (w, 200, h_gemini_text ("Sure! A snowman is three spheres stacked up.", "STOP"));
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, NULL));
    assert_int_equal (h_run (w, "a snowman"), 0);
    assert_int_equal (w->result.reformats, 1);
    assert_true (h_noted (w, "gemini: Sure! A snowman is three spheres stacked up."));
    assert_true (h_noted (w, "reminding it (1 of 2)"));
    json_t *contents = s_contents (w, 1);
    assert_int_equal (json_array_size (contents), 3);
    const char *reminder = json_string_value (json_object_get (s_part (w, 1, 2, 0), "text"));
    assert_non_null (strstr (reminder, "you answered in words instead of calling a function"));
    assert_non_null (strstr (reminder, "call\nsubmit_plan now") ? reminder : strstr (reminder, "submit_plan"));
    s_assert_alternating (w, 1);
    h_world_destroy (&w);
}

static void test_prose_forever (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    for (int i = 0; i < 4; i++) s_push_json (w, 200, h_gemini_text ("I would rather talk about the weather.", "STOP"));
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_string_equal (w->result.code, "no_plan");
    assert_int_equal (fake_llm_requests (w->llm), 3);
    assert_non_null (strstr (w->result.message, "It said: \"I would rather talk about the weather.\""));
    h_world_destroy (&w);
}

static void test_long_words_are_not_flooded (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.stream = true;
    char text[4000] = "";
    for (int i = 0; i < 40; i++) strcat (text, "line of musing about snowmen\\n");
    char *body = malloc (8000);
    snprintf (body, 8000, "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"%s\"}]}, \"finishReason\": \"STOP\"}]}\n\n", text);
    fake_reply_t r = { .status = 200, .content_type = "text/event-stream", .body = body, .chunk = 64 };
    fake_llm_push (w->llm, &r);
    free (body);
    char *submit = s_submit (H_GOOD_PLAN, NULL);
    s_push_json (w, 200, submit);
    assert_int_equal (h_run (w, "a snowman"), 0);
    size_t i, words = 0;
    json_t *n;
    json_array_foreach (w->sink.notes, i, n) words += !strncmp (json_string_value (n), "gemini: ", 8);
    assert_int_equal (words, 4);
    h_world_destroy (&w);
}

/* Words that would drive a terminal, and long non-ASCII text cut by clips. */
static void test_hostile_words (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    char text[2048] = "\x1b]0;pwned\x07\x1b[2J\xc2\x9b" "31m";
    for (int i = 0; i < 300; i++) strcat (text, "\xc3\xa9");
    char args[2048] = "{\"tool_name\": \"bpy.ops.\\u001b[2J";
    for (int i = 0; i < 130; i++) strcat (args, "\\u00e9");
    strcat (args, "\"}");
    s_push_json (w, 200, h_gemini_call ("inspect_tool", args, NULL));
    for (int i = 0; i < 3; i++) s_push_json (w, 200, h_gemini_text (text, "STOP"));
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_string_equal (w->result.code, "no_plan");
    assert_true (h_noted (w, "inspecting bpy.ops."));
    char *all = h_everything (w);       /* it all went into JSON, so every string is valid UTF-8 */
    assert_non_null (all);
    free (all);
    /* what reaches a terminal (notes, the message) has no control characters; the audit keeps the words as said */
    char *notes = json_dumps (w->sink.notes, JSON_COMPACT);
    assert_null (strstr (notes, "\\u001b"));
    assert_null (strstr (notes, "\xc2\x9b"));
    assert_null (strchr (w->result.message, 0x1b));
    assert_null (strstr (w->result.message, "\xc2\x9b"));
    free (notes);
    h_world_destroy (&w);
}

static void test_safety_block (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    fake_llm_json (w->llm, 200, "{\"candidates\": [{\"finishReason\": \"SAFETY\", \"index\": 0, \"safetyRatings\": "
                                "[{\"category\": \"HARM_CATEGORY_DANGEROUS_CONTENT\", \"probability\": \"HIGH\", \"blocked\": true}]}]}");
    assert_int_equal (h_run (w, "something nasty"), -1);
    assert_string_equal (w->result.code, "blocked");
    assert_non_null (strstr (w->result.message, "Gemini refused to answer (SAFETY)"));
    assert_false (w->result.fallback_ok);
    assert_int_equal (fake_llm_requests (w->llm), 1);
    h_world_destroy (&w);

    w = h_world_new ("gemini", H_EXEC_ANSWER);
    fake_llm_json (w->llm, 200, "{\"promptFeedback\": {\"blockReason\": \"PROHIBITED_CONTENT\"}}");
    assert_int_equal (h_run (w, "something worse"), -1);
    assert_string_equal (w->result.code, "blocked");
    assert_non_null (strstr (w->result.message, "PROHIBITED_CONTENT"));
    h_world_destroy (&w);
}

static void test_malformed_and_cut_off (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    fake_llm_json (w->llm, 200, "{\"candidates\": [{\"finishReason\": \"MALFORMED_FUNCTION_CALL\", "
                                "\"finishMessage\": \"Malformed function call: submit_plan(plan=[{...\", \"index\": 0}]}");
    s_push_json (w, 200, h_gemini_text ("[{\"operation\": \"bpy.ops.mesh.primitive_uv_sph", "MAX_TOKENS"));
    s_push_json (w, 200, s_submit (H_GOOD_PLAN, NULL));
    assert_int_equal (h_run (w, "a snowman"), 0);
    assert_int_equal (w->result.reformats, 2);
    assert_true (h_noted (w, "(MALFORMED_FUNCTION_CALL)"));
    assert_true (h_noted (w, "(MAX_TOKENS)"));
    const char *r1 = json_string_value (json_object_get (s_part (w, 1, 0, 1), "text"));    /* joined the first user turn */
    assert_non_null (strstr (r1, "malformed"));
    s_assert_alternating (w, 1);
    s_assert_alternating (w, 2);
    const char *r2 = json_string_value (json_object_get (s_part (w, 2, 2, 0), "text"));
    assert_non_null (strstr (r2, "cut off"));
    h_world_destroy (&w);

    w = h_world_new ("gemini", H_EXEC_ANSWER);
    for (int i = 0; i < 3; i++) s_push_json (w, 200, h_gemini_text ("[{\"operation\": ", "MAX_TOKENS"));
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_string_equal (w->result.code, "truncated");
    assert_non_null (strstr (w->result.message, "cut off"));
    h_world_destroy (&w);
}

static void test_broken_answers (void **state)
{
    const char *bodies[] = {
        "this is not json {",
        "{\"candidates\": []}",
        "{\"candidates\": \"nope\"}",
        "{\"candidates\": [{\"content\": {\"parts\": [42]}}]}",
        "{\"candidates\": [{\"content\": {\"parts\": {\"text\": \"x\"}}}]}",
        "[1, 2, 3]",
        "",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
        fake_llm_json (w->llm, 200, bodies[i]);
        assert_int_equal (h_run (w, "a snowman"), -1);
        assert_string_equal (w->result.code, "llm_error");
        assert_int_equal (fake_llm_requests (w->llm), 1);       /* a broken answer is not retried */
        if (!strstr (w->result.message, "not JSON") && !strstr (w->result.message, "makes no sense")
            && !strstr (w->result.message, "without a candidate"))
            fail_msg ("body %zu: unclear message '%s'", i, w->result.message);
        h_world_destroy (&w);
    }
}

static void test_wrong_shaped_args (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_push_json (w, 200, h_gemini_call ("submit_plan", "{\"plan\": \"first a sphere, then another\"}", NULL));
    fake_llm_json (w->llm, 200, "{\"candidates\": [{\"content\": {\"role\": \"model\", \"parts\": "
                                "[{\"functionCall\": {\"name\": \"inspect_tool\", \"args\": [\"bpy.ops.mesh.primitive_cube_add\"]}}]}}]}");
    json_t *as_string = json_pack ("{s:s, s:s}", "title", "snowman", "plan", H_GOOD_PLAN);     /* the plan as a JSON string */
    char *args = json_dumps (as_string, 0);
    s_push_json (w, 200, h_gemini_call ("submit_plan", args, NULL));
    free (args);
    json_decref (as_string);
    assert_int_equal (h_run (w, "a snowman"), 0);
    assert_int_equal (json_array_size (w->result.plan), 3);
    assert_int_equal (w->result.fix_rounds, 1);
    json_t *resp = json_object_get (json_object_get (s_part (w, 1, 2, 0), "functionResponse"), "response");
    char *text = json_dumps (resp, 0);
    assert_non_null (strstr (text, "'plan' is a string that is not a JSON array of steps"));
    free (text);
    resp = json_object_get (json_object_get (s_part (w, 2, 4, 0), "functionResponse"), "response");
    assert_non_null (strstr (json_string_value (json_object_get (resp, "error")), "args are a JSON array, not an object"));
    h_world_destroy (&w);
}

static void test_unknown_function_and_turn_limit (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.max_turns = 3;
    s_push_json (w, 200, h_gemini_call ("delete_everything", "{}", NULL));
    for (int i = 0; i < 3; i++) s_push_json (w, 200, h_gemini_call ("discover_capabilities", "{}", NULL));
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_string_equal (w->result.code, "turn_limit");
    assert_int_equal (fake_llm_requests (w->llm), 3);
    json_t *resp = json_object_get (json_object_get (s_part (w, 1, 2, 0), "functionResponse"), "response");
    assert_non_null (strstr (json_string_value (json_object_get (resp, "error")), "there is no function delete_everything"));
    h_world_destroy (&w);
}

static void test_inspect_without_blender (void **state)
{
    h_exec_mode_t modes[] = { H_EXEC_SILENT, H_EXEC_ERROR };
    const char *expect[] = { "within 300 ms", "the gateway answered unsupported" };
    for (int m = 0; m < 2; m++) {
        h_world_t *w = h_world_new ("gemini", modes[m]);
        s_push_json (w, 200, h_gemini_call ("inspect_tool", "{\"tool_name\": \"bpy.ops.mesh.primitive_cone_add\"}", NULL));
        s_push_json (w, 200, h_gemini_call ("inspect_tool", "{\"tool_name\": \"bpy.ops.wm.quit_blender\"}", NULL));
        s_push_json (w, 200, h_gemini_call ("inspect_tool", "{\"tool_name\": \"object.material\"}", NULL));
        s_push_json (w, 200, s_submit (H_GOOD_PLAN, NULL));
        assert_int_equal (h_run (w, "a snowman"), 0);
        json_t *resp = json_object_get (json_object_get (s_part (w, 1, 2, 0), "functionResponse"), "response");
        assert_non_null (strstr (json_string_value (json_object_get (resp, "error")), expect[m]));
        assert_non_null (json_object_get (resp, "allowed"));
        resp = json_object_get (json_object_get (s_part (w, 2, 4, 0), "functionResponse"), "response");
        assert_non_null (strstr (json_string_value (json_object_get (resp, "error")), "not in the capability palette"));
        resp = json_object_get (json_object_get (s_part (w, 3, 6, 0), "functionResponse"), "response");
        assert_non_null (json_object_get (resp, "tool"));      /* a builtin: described by the palette */
        assert_int_equal (h_inspect_asked (w), 1);            /* only the real operator went to Blender */
        h_world_destroy (&w);
    }
}

/* ---- streaming --------------------------------------------------------------- */

static void test_streaming (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.stream = true;
    /* turn 1: words in pieces, then a call with its signature, in chunks cut anywhere */
    fake_reply_t t1 = { .status = 200, .content_type = "text/event-stream", .chunk = 7, .chunk_delay_ms = 2, .body =
        "data: {\"candidates\": [{\"content\": {\"role\": \"model\", \"parts\": [{\"text\": \"Let me check\"}]}}]}\r\n\r\n"
        "data: {\"candidates\": [{\"content\": {\"role\": \"model\", \"parts\": [{\"text\": \" the palette.\\n\"}]}}]}\n\n"
        ": a comment line\n"
        "data: {\"candidates\": [{\"content\": {\"role\": \"model\", \"parts\": [{\"functionCall\": {\"name\": "
        "\"discover_capabilities\", \"args\": {}}, \"thoughtSignature\": \"s-one\"}]}, \"finishReason\": \"STOP\"}],"
        " \"usageMetadata\": {\"totalTokenCount\": 12}}\n\n" };
    /* turn 2: a call, then the signature alone in a last, empty text part */
    fake_reply_t t2 = { .status = 200, .content_type = "text/event-stream", .chunk = 11, .body =
        "data: {\"candidates\": [{\"content\": {\"role\": \"model\", \"parts\": [{\"functionCall\": {\"name\": "
        "\"inspect_tool\", \"args\": {\"tool_name\": \"bpy.ops.mesh.primitive_cone_add\"}}}]}}]}\n\n"
        "data: {\"candidates\": [{\"content\": {\"role\": \"model\", \"parts\": [{\"text\": \"\", \"thoughtSignature\": \"s-two\"}]},"
        " \"finishReason\": \"STOP\"}]}\n\n" };
    fake_llm_push (w->llm, &t1);
    fake_llm_push (w->llm, &t2);
    char *body = s_submit (H_GOOD_PLAN, "s-three");
    char *sse = malloc (strlen (body) + 16);
    sprintf (sse, "data: %s\n\n", body);
    fake_reply_t t3 = { .status = 200, .content_type = "text/event-stream", .body = sse };
    fake_llm_push (w->llm, &t3);
    free (body);
    free (sse);
    assert_int_equal (h_run (w, "a cone"), 0);
    assert_int_equal (fake_llm_requests (w->llm), 3);
    assert_string_equal (fake_llm_path (w->llm, 0), "/v1beta/models/gemini-test-flash:streamGenerateContent?alt=sse");
    assert_true (h_noted (w, "gemini: Let me check the palette."));
    json_t *model1 = json_object_get (json_array_get (s_contents (w, 1), 1), "parts");
    assert_int_equal (json_array_size (model1), 2);            /* the pieces of text joined; the call kept whole */
    assert_string_equal (json_string_value (json_object_get (json_array_get (model1, 0), "text")), "Let me check the palette.\n");
    assert_string_equal (json_string_value (json_object_get (json_array_get (model1, 1), "thoughtSignature")), "s-one");
    json_t *model2 = json_object_get (json_array_get (s_contents (w, 2), 3), "parts");
    assert_int_equal (json_array_size (model2), 2);
    json_t *sig_part = json_array_get (model2, 1);
    assert_string_equal (json_string_value (json_object_get (sig_part, "text")), "");
    assert_string_equal (json_string_value (json_object_get (sig_part, "thoughtSignature")), "s-two");
    assert_int_equal (json_object_size (sig_part), 2);         /* exactly as received */
    s_assert_no_key (w);
    h_world_destroy (&w);
}

static void test_streaming_errors (void **state)
{
    /* a 429 answered to a streaming request is JSON, not events: read as an error and retried */
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.stream = true;
    fake_llm_json (w->llm, 429, RATE_LIMITED ("0.05s"));
    fake_reply_t bad = { .status = 200, .content_type = "text/event-stream",
                         .body = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"half\"}]}}]}\n\ndata: {not json\n\n" };
    fake_llm_push (w->llm, &bad);
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_int_equal (fake_llm_requests (w->llm), 2);
    assert_non_null (strstr (w->result.message, "an event that is not JSON"));
    h_world_destroy (&w);

    /* an error inside the stream */
    w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.stream = true;
    fake_reply_t err = { .status = 200, .content_type = "text/event-stream",
                         .body = "data: {\"error\": {\"code\": 500, \"message\": \"stream broke\", \"status\": \"INTERNAL\"}}\n\n" };
    fake_llm_push (w->llm, &err);
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_non_null (strstr (w->result.message, "stream broke"));
    h_world_destroy (&w);

    /* a server that ignores alt=sse and answers one JSON array */
    w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.stream = true;
    char *one = s_submit (H_GOOD_PLAN, NULL);
    char *arr = malloc (strlen (one) + 4);
    sprintf (arr, "[%s]", one);
    fake_llm_json (w->llm, 200, arr);
    free (one);
    free (arr);
    assert_int_equal (h_run (w, "a snowman"), 0);
    h_world_destroy (&w);
}

/* ---- the key, cancellation ---------------------------------------------------- */

static void test_key_never_in_logs (void **state)
{
    char path[] = "/tmp/bmq_planner_log_XXXXXX";
    int fd = mkstemp (path);
    assert_true (fd >= 0);
    fflush (stderr);
    int saved = dup (2);
    dup2 (fd, 2);
    bmq_log_init ("planner", false, BMQ_LOG_DEBUG);
    h_world_t *w = h_world_new ("gemini", H_EXEC_SILENT);
    w->opts.llm.stream = true;
    fake_llm_json (w->llm, 503, "{\"error\": {\"code\": 503, \"message\": \"overloaded for key " H_KEY "\", \"status\": \"UNAVAILABLE\"}}");
    s_push_json (w, 200, h_gemini_call ("inspect_tool", "{\"tool_name\": \"bpy.ops.mesh.primitive_cube_add\"}", NULL));
    fake_llm_json (w->llm, 400, "{\"error\": {\"code\": 400, \"message\": \"API key not valid: " H_KEY "\", \"status\": \"INVALID_ARGUMENT\"}}");
    assert_int_equal (h_run (w, "a snowman"), -1);
    fflush (stderr);
    dup2 (saved, 2);
    close (saved);
    s_assert_no_key (w);
    assert_non_null (strstr (w->result.message, "[redacted]"));
    char buf[65536];
    lseek (fd, 0, SEEK_SET);
    ssize_t n = read (fd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    close (fd);
    unlink (path);
    assert_null (strstr (buf, H_KEY));
    for (size_t i = 0; i < fake_llm_requests (w->llm); i++) {
        assert_null (strstr (fake_llm_path (w->llm, i), H_KEY));          /* never in the URL */
        char *body = json_dumps (fake_llm_body (w->llm, i), 0);
        assert_null (strstr (body, H_KEY));                              /* never sent to the model */
        free (body);
    }
    h_world_destroy (&w);
}

static void test_cancel_during_backoff (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.llm.policy.retry_after_max_ms = 10000;
    w->sink.cancel_after_notes = 2;                   /* "asking…", then the retry note */
    fake_llm_json (w->llm, 429, RATE_LIMITED ("8s"));
    int64_t t0 = bmq_mono_ms ();
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_true (bmq_mono_ms () - t0 < 1500);
    assert_string_equal (w->result.code, "cancelled");
    assert_false (w->result.fallback_ok);
    h_world_destroy (&w);
}

/* ---- script mode ------------------------------------------------------------ */

static void test_script_mode (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.script_mode = true;
    w->opts.system_prompt = bmq_prompts_get (w->prompts, BMQ_PROMPT_SCRIPT);
    s_push_json (w, 200, h_gemini_text ("Here you go:\n```python\nimport bpy\nbpy.ops.mesh.primitive_cube_add(size=2)\n```\nEnjoy!", "STOP"));
    assert_int_equal (h_run (w, "a cube"), 0);
    assert_string_equal (w->result.script, "import bpy\nbpy.ops.mesh.primitive_cube_add(size=2)");
    json_t *decls = json_object_get (json_array_get (json_object_get (fake_llm_body (w->llm, 0), "tools"), 0), "functionDeclarations");
    assert_string_equal (json_string_value (json_object_get (json_array_get (decls, 2), "name")), "submit_script");
    h_world_destroy (&w);

    w = h_world_new ("gemini", H_EXEC_ANSWER);
    w->opts.script_mode = true;
    s_push_json (w, 200, h_gemini_call ("submit_script", "{\"script\": \"print('hello')\"}", NULL));
    s_push_json (w, 200, h_gemini_call ("submit_script", "{\"title\": \"cube\", \"script\": \"import bpy\\nbpy.ops.mesh.primitive_cube_add()\"}", NULL));
    assert_int_equal (h_run (w, "a cube"), 0);
    assert_int_equal (w->result.fix_rounds, 1);
    assert_string_equal (w->result.title, "cube");
    h_world_destroy (&w);
}

int main (void)
{
    bmq_llm_http_global_init ();
    zsys_init ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_discover_inspect_submit),
        cmocka_unit_test (test_parallel_calls),
        cmocka_unit_test (test_place_by_relation),
        cmocka_unit_test (test_rejected_then_fixed),
        cmocka_unit_test (test_rejected_until_the_end),
        cmocka_unit_test (test_429_honours_retry_delay),
        cmocka_unit_test (test_429_delay_is_capped),
        cmocka_unit_test (test_429_past_the_deadline_fails_now),
        cmocka_unit_test (test_503_twice_then_success),
        cmocka_unit_test (test_500_until_giving_up),
        cmocka_unit_test (test_html_502_is_retried),
        cmocka_unit_test (test_400_401_403_fail_at_once),
        cmocka_unit_test (test_slow_server_times_out),
        cmocka_unit_test (test_unreachable_server),
        cmocka_unit_test (test_prose_then_call),
        cmocka_unit_test (test_prose_forever),
        cmocka_unit_test (test_long_words_are_not_flooded),
        cmocka_unit_test (test_hostile_words),
        cmocka_unit_test (test_safety_block),
        cmocka_unit_test (test_malformed_and_cut_off),
        cmocka_unit_test (test_broken_answers),
        cmocka_unit_test (test_wrong_shaped_args),
        cmocka_unit_test (test_unknown_function_and_turn_limit),
        cmocka_unit_test (test_inspect_without_blender),
        cmocka_unit_test (test_streaming),
        cmocka_unit_test (test_streaming_errors),
        cmocka_unit_test (test_key_never_in_logs),
        cmocka_unit_test (test_cancel_during_backoff),
        cmocka_unit_test (test_script_mode),
    };
    int rc = cmocka_run_group_tests (tests, NULL, NULL);
    curl_global_cleanup ();
    return rc;
}
