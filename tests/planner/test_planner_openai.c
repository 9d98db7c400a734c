/* The OpenAI-compatible backend (Ollama, llama.cpp server, vLLM…) against a
 * local fake chat completions server: tool calls whose arguments are a JSON
 * string, tool messages, Retry-After, finish reasons, broken arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "planner_harness.h"

static h_world_t *s_world (void)
{
    h_world_t *w = h_world_new ("openai", H_EXEC_ANSWER);
    static char base[128];
    snprintf (base, sizeof base, "%s/v1/", fake_llm_url (w->llm));     /* a trailing slash is fine */
    w->opts.llm.base_url = base;
    return w;
}

static void s_push (h_world_t *w, int status, char *body)
{
    fake_llm_json (w->llm, status, body);
    free (body);
}

static json_t *s_msg (h_world_t *w, size_t request, size_t i)
{
    return json_array_get (json_object_get (fake_llm_body (w->llm, request), "messages"), i);
}

static char *s_submit_args (const char *plan)
{
    json_t *args = json_pack ("{s:s, s:o}", "title", "snowman", "plan", json_loads (plan, 0, NULL));
    char *text = json_dumps (args, JSON_COMPACT);
    json_decref (args);
    return text;
}

/* place (issue 26) through tool_calls: string arguments in, the layout back in the tool message */
static void test_place (void **state)
{
    h_world_t *w = s_world ();
    s_push (w, 200, h_openai_call ("call_p1", "place", "{\"object\": \"table\", \"size\": [1.6, 0.9, 0.75]}"));
    s_push (w, 200, h_openai_call ("call_p2", "place", "{\"object\": \"chair\", \"size\": [0.45, 0.45, 0.9], \"relation\":"
                                                        " \"around\", \"anchor\": \"table\", \"count\": 4}"));
    char *args = s_submit_args (H_GOOD_PLAN);
    s_push (w, 200, h_openai_call ("call_p3", "submit_plan", args));
    free (args);
    assert_int_equal (h_run (w, "a table with four chairs around it"), 0);
    json_t *tool = NULL;
    for (size_t i = 0; i < json_array_size (json_object_get (fake_llm_body (w->llm, 2), "messages")); i++) {
        json_t *m = s_msg (w, 2, i);
        const char *id = json_string_value (json_object_get (m, "tool_call_id"));
        if (id && !strcmp (id, "call_p2")) tool = m;
    }
    assert_non_null (tool);
    assert_string_equal (json_string_value (json_object_get (tool, "role")), "tool");
    json_t *answer = json_loads (json_string_value (json_object_get (tool, "content")), 0, NULL);
    assert_non_null (answer);
    json_t *objects = json_object_get (answer, "objects");
    assert_int_equal (json_array_size (objects), 2);
    json_t *table = json_array_get (json_object_get (json_array_get (objects, 0), "copies"), 0);
    json_t *chairs = json_object_get (json_array_get (objects, 1), "copies");
    assert_int_equal (json_array_size (chairs), 4);
    size_t i;
    json_t *c;
    json_array_foreach (chairs, i, c) {         /* around: on the floor, off the table, each apart */
        double lo[3], hi[3], tlo[3], thi[3];
        for (size_t a = 0; a < 3; a++) {
            lo[a] = json_number_value (json_array_get (json_object_get (c, "min"), a));
            hi[a] = json_number_value (json_array_get (json_object_get (c, "max"), a));
            tlo[a] = json_number_value (json_array_get (json_object_get (table, "min"), a));
            thi[a] = json_number_value (json_array_get (json_object_get (table, "max"), a));
        }
        assert_true (lo[2] > -0.002 && lo[2] < 0.002);
        assert_true (hi[0] <= tlo[0] + 1e-3 || lo[0] >= thi[0] - 1e-3 || hi[1] <= tlo[1] + 1e-3 || lo[1] >= thi[1] - 1e-3);
    }
    assert_int_equal (json_array_size (json_object_get (answer, "notes")), 0);
    json_decref (answer);
    h_world_destroy (&w);
}

static void test_dialogue (void **state)
{
    h_world_t *w = s_world ();
    s_push (w, 200, h_openai_call ("call_1", "discover_capabilities", "{}"));
    s_push (w, 200, h_openai_call ("call_2", "inspect_tool", "{\"tool_name\": \"bpy.ops.mesh.primitive_cone_add\"}"));
    char *args = s_submit_args (H_GOOD_PLAN);
    s_push (w, 200, h_openai_call ("call_3", "submit_plan", args));
    free (args);
    assert_int_equal (h_run (w, "build a snowman"), 0);
    assert_int_equal (json_array_size (w->result.plan), 3);
    assert_int_equal (fake_llm_requests (w->llm), 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal (fake_llm_path (w->llm, i), "/v1/chat/completions");
        assert_string_equal (fake_llm_header (w->llm, i, "authorization"), "Bearer " H_KEY);
    }
    json_t *r0 = fake_llm_body (w->llm, 0);
    assert_string_equal (json_string_value (json_object_get (r0, "model")), "local-model");
    assert_string_equal (json_string_value (json_object_get (r0, "tool_choice")), "auto");
    json_t *tools = json_object_get (r0, "tools");
    assert_int_equal (json_array_size (tools), 6);      /* + place (issue 26), search_assets and look (issue 16) */
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_array_get (tools, 3), "function"), "name")),
                         "place");
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_array_get (tools, 4), "function"), "name")),
                         "search_assets");
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_array_get (tools, 5), "function"), "name")),
                         "look");
    assert_string_equal (json_string_value (json_object_get (json_array_get (tools, 0), "type")), "function");
    json_t *p0 = json_object_get (json_object_get (json_array_get (tools, 0), "function"), "parameters");
    assert_string_equal (json_string_value (json_object_get (p0, "type")), "object");   /* JSON Schema spelling */
    assert_string_equal (json_string_value (json_object_get (s_msg (w, 0, 0), "role")), "system");
    assert_non_null (strstr (json_string_value (json_object_get (s_msg (w, 0, 1), "content")), "build a snowman"));
    /* the assistant's call, echoed with its id and string arguments, then the tool's answer */
    json_t *said = s_msg (w, 1, 2);
    assert_string_equal (json_string_value (json_object_get (said, "role")), "assistant");
    json_t *call = json_array_get (json_object_get (said, "tool_calls"), 0);
    assert_string_equal (json_string_value (json_object_get (call, "id")), "call_1");
    assert_true (json_is_string (json_object_get (json_object_get (call, "function"), "arguments")));
    json_t *tool = s_msg (w, 1, 3);
    assert_string_equal (json_string_value (json_object_get (tool, "role")), "tool");
    assert_string_equal (json_string_value (json_object_get (tool, "tool_call_id")), "call_1");
    json_t *content = json_loads (json_string_value (json_object_get (tool, "content")), 0, NULL);
    assert_non_null (json_object_get (json_object_get (content, "palette"), "bpy.ops.mesh.primitive_cone_add"));
    json_decref (content);
    content = json_loads (json_string_value (json_object_get (s_msg (w, 2, 5), "content")), 0, NULL);
    assert_non_null (json_object_get (content, "tool"));
    json_decref (content);
    assert_true (h_noted (w, "asking the OpenAI-compatible model (local-model)"));
    assert_true (h_noted (w, "plan of 3 steps ready"));
    h_world_destroy (&w);
}

static void test_bad_arguments_then_fixed (void **state)
{
    h_world_t *w = s_world ();
    s_push (w, 200, h_openai_call ("c1", "submit_plan", "{\"plan\": [{\"operation\": \"bpy.ops.mesh.primitive_cube_add\""));
    s_push (w, 200, h_openai_call ("c2", "submit_plan", "[1, 2]"));
    char *args = s_submit_args (H_GOOD_PLAN);
    s_push (w, 200, h_openai_call ("c3", "submit_plan", args));
    free (args);
    assert_int_equal (h_run (w, "a snowman"), 0);
    assert_int_equal (w->result.fix_rounds, 2);
    const char *c = json_string_value (json_object_get (s_msg (w, 1, 3), "content"));
    assert_non_null (strstr (c, "not valid JSON"));
    c = json_string_value (json_object_get (s_msg (w, 2, 5), "content"));
    assert_non_null (strstr (c, "JSON but not an object"));
    h_world_destroy (&w);
}

static void test_arguments_as_object_and_no_id (void **state)
{
    h_world_t *w = s_world ();
    /* Some servers give arguments as an object and no call id */
    fake_llm_json (w->llm, 200, "{\"choices\": [{\"message\": {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": "
                                "[{\"function\": {\"name\": \"discover_capabilities\", \"arguments\": {}}}]}, \"finish_reason\": \"tool_calls\"}]}");
    char *args = s_submit_args (H_GOOD_PLAN);
    s_push (w, 200, h_openai_call ("c2", "submit_plan", args));
    free (args);
    assert_int_equal (h_run (w, "a snowman"), 0);
    const char *id = json_string_value (json_object_get (json_array_get (json_object_get (s_msg (w, 1, 2), "tool_calls"), 0), "id"));
    assert_non_null (id);
    assert_string_equal (json_string_value (json_object_get (s_msg (w, 1, 3), "tool_call_id")), id);
    h_world_destroy (&w);
}

static void test_retry_after_header (void **state)
{
    h_world_t *w = s_world ();
    w->opts.llm.policy.retry_after_max_ms = 250;
    fake_reply_t limited = { .status = 429, .header_name = "Retry-After", .header_value = "20",
                             .body = "{\"error\": {\"message\": \"Rate limit reached\", \"type\": \"requests\", \"code\": \"rate_limit_exceeded\"}}" };
    fake_llm_push (w->llm, &limited);
    char *args = s_submit_args (H_GOOD_PLAN);
    s_push (w, 200, h_openai_call ("c1", "submit_plan", args));
    free (args);
    int64_t t0 = bmq_mono_ms ();
    assert_int_equal (h_run (w, "a snowman"), 0);
    int64_t took = bmq_mono_ms () - t0;
    assert_true (took >= 250 && took < 3000);
    assert_true (h_noted (w, "429 requests; retrying in 0.2 s") || h_noted (w, "429 requests; retrying in 0.3 s"));
    h_world_destroy (&w);
}

static void test_errors_at_once (void **state)
{
    h_world_t *w = s_world ();
    fake_llm_json (w->llm, 401, "{\"error\": {\"message\": \"Incorrect API key provided: AIzaTEST****cdef.\", "
                                "\"type\": \"invalid_request_error\", \"param\": null, \"code\": \"invalid_api_key\"}}");
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_int_equal (fake_llm_requests (w->llm), 1);
    assert_non_null (strstr (w->result.message, "answered 401 invalid_request_error: Incorrect API key provided"));
    h_world_destroy (&w);

    w = s_world ();
    fake_llm_json (w->llm, 404, "{\"error\": \"model \\\"local-model\\\" not found, try pulling it first\"}");   /* Ollama */
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_non_null (strstr (w->result.message, "not found, try pulling it first"));
    h_world_destroy (&w);
}

static void test_finish_reasons (void **state)
{
    h_world_t *w = s_world ();
    s_push (w, 200, h_openai_text ("[{\"operation\": \"bpy.ops", "length"));
    s_push (w, 200, h_openai_text ("I think a snowman has three balls.", "stop"));
    char *args = s_submit_args (H_GOOD_PLAN);
    s_push (w, 200, h_openai_call ("c1", "submit_plan", args));
    free (args);
    assert_int_equal (h_run (w, "a snowman"), 0);
    assert_int_equal (w->result.reformats, 2);
    const char *c = json_string_value (json_object_get (s_msg (w, 1, 3), "content"));
    assert_string_equal (json_string_value (json_object_get (s_msg (w, 1, 3), "role")), "user");
    assert_non_null (strstr (c, "cut off"));
    assert_true (h_noted (w, "openai: I think a snowman has three balls."));
    h_world_destroy (&w);

    w = s_world ();
    s_push (w, 200, h_openai_text ("", "content_filter"));
    assert_int_equal (h_run (w, "a snowman"), -1);
    assert_string_equal (w->result.code, "blocked");
    h_world_destroy (&w);
}

static void test_no_key_no_header (void **state)
{
    h_world_t *w = s_world ();
    w->opts.llm.api_key = "";
    char *args = s_submit_args (H_GOOD_PLAN);
    s_push (w, 200, h_openai_call ("c1", "submit_plan", args));
    free (args);
    assert_int_equal (h_run (w, "a snowman"), 0);
    assert_null (fake_llm_header (w->llm, 0, "authorization"));
    h_world_destroy (&w);
}

static void test_broken_answers (void **state)
{
    const char *bodies[] = {
        "<html>oops</html>",
        "{\"choices\": []}",
        "{\"choices\": [{\"message\": {\"content\": 42}}]}",
        "{\"choices\": [{\"message\": {\"content\": \"x\", \"tool_calls\": {\"a\": 1}}}]}",
        "{\"error\": {\"message\": \"backend crashed\"}}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        h_world_t *w = s_world ();
        fake_llm_json (w->llm, 200, bodies[i]);
        assert_int_equal (h_run (w, "a snowman"), -1);
        assert_string_equal (w->result.code, "llm_error");
        assert_int_equal (fake_llm_requests (w->llm), 1);
        h_world_destroy (&w);
    }
}

int main (void)
{
    bmq_llm_http_global_init ();
    zsys_init ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_dialogue),
        cmocka_unit_test (test_place),
        cmocka_unit_test (test_bad_arguments_then_fixed),
        cmocka_unit_test (test_arguments_as_object_and_no_id),
        cmocka_unit_test (test_retry_after_header),
        cmocka_unit_test (test_errors_at_once),
        cmocka_unit_test (test_finish_reasons),
        cmocka_unit_test (test_no_key_no_header),
        cmocka_unit_test (test_broken_answers),
    };
    int rc = cmocka_run_group_tests (tests, NULL, NULL);
    curl_global_cleanup ();
    return rc;
}
