/* The MCP library without any transport: the tool table (what tools/list
 * offers and what it costs), JSON-RPC dispatch and version negotiation, and
 * tool calls fed with the gateway's answers (progress, logs, results,
 * rejections, errors, deadlines, cancellation, images). */
#include "mcp_server.h"
#include "mcp_surface.h"
#include "mcp_watch.h"

#include <stdlib.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

static bmq_mcp_t *s_mcp;

static int s_setup (void **state)
{
    char err[256];
    bmq_mcp_options_t o = { .test_tools = false, .request_timeout_ms = 1000 };
    s_mcp = bmq_mcp_new (&o, err, sizeof err);
    if (!s_mcp) fprintf (stderr, "%s\n", err);
    return s_mcp ? 0 : -1;
}

static int s_teardown (void **state) { bmq_mcp_destroy (&s_mcp); return 0; }

static json_t *s_handle (bmq_mcp_session_t *s, const char *text, bmq_mcp_outcome_t *out)
{
    json_t *msg = json_loads (text, 0, NULL);
    assert_non_null (msg);
    bmq_mcp_handle (s_mcp, s, msg, out);
    json_decref (msg);
    return out->response;
}

static void test_tool_list (void **state)
{
    const bmq_mcp_tools_t *tools = bmq_mcp_tools (s_mcp);
    json_t *list = json_object_get (bmq_mcp_tools_list (tools), "tools");
    const char *want[] = { "discover_capabilities", "inspect_tool", "validate_plan", "execute_plan", "chat",
                           "get_scene_info", "get_object_info", "get_viewport_screenshot", "look", "inject_bpy_script",
                           "confirm_script", "save_recipe", "list_recipes", "search_assets", "import_asset", "generate_3d" };
    assert_int_equal (json_array_size (list), 16);
    for (size_t i = 0; i < 16; i++) {
        json_t *t = json_array_get (list, i);
        assert_string_equal (json_string_value (json_object_get (t, "name")), want[i]);
        assert_true (json_is_object (json_object_get (t, "inputSchema")));
        assert_true (json_is_object (json_object_get (t, "outputSchema")));       /* every tool: structured results (issue 25) */
        assert_true (bmq_mcp_tools_find (tools, want[i])->structured);
        assert_null (json_object_get (t, "_kind"));
    }
    /* the script service (script.request / script.confirm) is in this build */
    assert_true (bmq_mcp_tools_find (tools, "inject_bpy_script")->available);
    assert_true (bmq_mcp_tools_find (tools, "confirm_script")->available);
    assert_true (bmq_mcp_tools_find (tools, "save_recipe")->available);
    assert_null (bmq_mcp_tools_find (tools, "nope"));
    size_t bytes = bmq_mcp_tools_list_bytes (tools);
    fprintf (stderr, "tools/list: %zu tools, %zu bytes (about %zu tokens at 4 bytes each)\n", json_array_size (list), bytes, bytes / 4);
    assert_true (bytes < 8000);     /* 6000 until look, search_assets, import_asset, generate_3d (issue 16); 8000 with an outputSchema on every tool (issue 25) */
    char err[256];
    bmq_mcp_tools_t *with_tests = bmq_mcp_tools_new (true, err, sizeof err);
    assert_non_null (bmq_mcp_tools_find (with_tests, "test_tool_with_progress"));
    bmq_mcp_tools_destroy (&with_tests);
}

static void test_lifecycle (void **state)
{
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    bmq_mcp_outcome_t out;
    json_t *r = s_handle (&s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                              "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}", &out);
    assert_string_equal (json_string_value (json_object_get (json_object_get (r, "result"), "protocolVersion")), "2025-06-18");
    assert_non_null (json_object_get (json_object_get (json_object_get (r, "result"), "capabilities"), "logging"));
    json_decref (r);
    r = s_handle (&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2024-11-05\"}}", &out);
    assert_string_equal (json_string_value (json_object_get (json_object_get (r, "result"), "protocolVersion")), BMQ_MCP_LATEST_VERSION);
    json_decref (r);
    r = s_handle (&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{}}", &out);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (r, "error"), "code")), -32602);
    json_decref (r);
    assert_null (s_handle (&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &out));
    assert_true (s.initialized);
    r = s_handle (&s, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}", &out);
    assert_int_equal (json_object_size (json_object_get (r, "result")), 0);
    assert_string_equal (json_string_value (json_object_get (r, "id")), "p");
    json_decref (r);
    r = s_handle (&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}", &out);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (r, "error"), "code")), -32602);
    json_decref (r);
    json_decref (s_handle (&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"warning\"}}", &out));
    assert_int_equal (s.log_level, 3);
    r = s_handle (&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/nope\"}", &out);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (r, "error"), "code")), -32601);
    json_decref (r);
    r = s_handle (&s, "{\"jsonrpc\":\"1.0\",\"id\":6,\"method\":\"ping\"}", &out);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (r, "error"), "code")), -32600);
    json_decref (r);
    assert_null (s_handle (&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7}}", &out));
    assert_int_equal (json_integer_value (out.cancel_id), 7);
    json_decref (out.cancel_id);
    r = s_handle (&s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}", &out);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (r, "error"), "code")), -32602);
    json_decref (r);
}

/* Start a call through the server; returns the call, request in *req. */
static bmq_mcp_call_t *s_call (const char *params, int level, bmq_envelope_t **req, json_t **response)
{
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    s.log_level = level;
    char text[4096];
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":%s}", params);
    bmq_mcp_outcome_t out;
    s_handle (&s, text, &out);
    *req = out.request;
    *response = out.response;
    return out.call;
}

static bmq_envelope_t *s_answer (const bmq_envelope_t *req, bmq_msg_type_t type, const char *body)
{
    return bmq_envelope_reply (req, type, json_loads (body, 0, NULL));
}

static bool s_feed (bmq_mcp_call_t *call, const bmq_envelope_t *req, bmq_msg_type_t type, const char *body, json_t *out)
{
    bmq_envelope_t *env = s_answer (req, type, body);
    bool over = bmq_mcp_call_feed (call, env, out);
    bmq_envelope_destroy (&env);
    return over;
}

static json_t *s_result (json_t *out) { return json_object_get (json_array_get (out, json_array_size (out) - 1), "result"); }

static void test_execute_plan_progress_and_result (void **state)
{
    bmq_envelope_t *req;
    json_t *resp, *out = json_array ();
    bmq_mcp_call_t *call = s_call ("{\"name\":\"execute_plan\",\"arguments\":{\"plan\":[{\"operation\":\"a\"},{\"operation\":\"b\"}]},"
                                   "\"_meta\":{\"progressToken\":\"t1\"}}", 1, &req, &resp);
    assert_non_null (call);
    assert_null (resp);
    assert_int_equal (req->type, BMQ_MSG_RUN_REQUEST);
    assert_string_equal (req->sender, "mcp");
    assert_string_equal (bmq_mcp_call_cid (call), req->cid);
    assert_false (s_feed (call, req, BMQ_MSG_VALIDATE_REPLY, "{\"accepted\":true,\"errors\":[],\"plan_hash\":\"h\",\"plan_id\":\"p-1\"}", out));
    assert_false (s_feed (call, req, BMQ_MSG_PROGRESS, "{\"plan_id\":\"p-1\",\"step\":0,\"total\":2,\"status\":\"started\",\"event\":\"plan\"}", out));
    assert_false (s_feed (call, req, BMQ_MSG_PROGRESS, "{\"plan_id\":\"p-1\",\"step\":1,\"total\":2,\"status\":\"ok\",\"event\":\"step\",\"operation\":\"a\",\"duration_ms\":1.0}", out));
    assert_false (s_feed (call, req, BMQ_MSG_PROGRESS, "{\"plan_id\":\"p-1\",\"step\":2,\"total\":2,\"status\":\"ok\",\"event\":\"step\",\"operation\":\"b\",\"duration_ms\":1.0}", out));
    assert_true (s_feed (call, req, BMQ_MSG_EXECUTE_RESULT, "{\"plan_id\":\"p-1\",\"status\":\"done\",\"steps_done\":2,\"steps_total\":2,"
                                                            "\"duration_ms\":3.0,\"objects\":[\"x\"]}", out));
    size_t i, progress = 0, logs = 0;
    json_t *m;
    double last = -1;
    json_array_foreach (out, i, m) {
        const char *method = json_string_value (json_object_get (m, "method"));
        if (method && !strcmp (method, "notifications/progress")) {
            json_t *p = json_object_get (m, "params");
            assert_string_equal (json_string_value (json_object_get (p, "progressToken")), "t1");
            assert_true (json_number_value (json_object_get (p, "progress")) > last);
            last = json_number_value (json_object_get (p, "progress"));
            progress++;
        }
        else if (method) logs++;
    }
    assert_int_equal (progress, 3);                              /* started (0), step 1, step 2 */
    assert_true (logs >= 2);                                     /* validated, done (info); no debug ones */
    json_t *result = s_result (out);
    assert_false (json_is_true (json_object_get (result, "isError")));
    assert_string_equal (json_string_value (json_object_get (json_object_get (result, "structuredContent"), "status")), "done");
    assert_non_null (strstr (json_string_value (json_object_get (json_array_get (json_object_get (result, "content"), 0), "text")), "done: 2/2"));
    assert_int_equal (json_integer_value (json_object_get (json_array_get (out, json_array_size (out) - 1), "id")), 42);
    json_decref (out);
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
}

static void test_rejection_error_deadline (void **state)
{
    bmq_envelope_t *req;
    json_t *resp, *out = json_array ();
    bmq_mcp_call_t *call = s_call ("{\"name\":\"execute_plan\",\"arguments\":{\"plan\":[{\"operation\":\"bpy.ops.wm.quit_blender\"}]}}", 1, &req, &resp);
    assert_true (s_feed (call, req, BMQ_MSG_VALIDATE_REPLY, "{\"accepted\":false,\"plan_hash\":\"h\",\"plan_id\":\"p-2\",\"errors\":"
                                                            "[{\"step\":0,\"field\":\"operation\",\"reason\":\"not in the palette\"},"
                                                            "{\"step\":-1,\"field\":\"plan\",\"reason\":\"too big\"}]}", out));
    json_t *result = s_result (out);
    assert_true (json_is_true (json_object_get (result, "isError")));
    json_t *sc = json_object_get (result, "structuredContent");
    assert_string_equal (json_string_value (json_object_get (sc, "status")), "rejected");
    /* people count steps from 1 (issue 29); a whole-plan problem has no step */
    const char *text = json_string_value (json_object_get (json_array_get (json_object_get (result, "content"), 0), "text"));
    assert_non_null (strstr (text, "step 1 operation: not in the palette"));
    assert_non_null (strstr (text, "plan plan: too big"));
    assert_null (strstr (text, "step 0"));
    json_t *errs = json_object_get (sc, "errors");
    assert_int_equal (json_integer_value (json_object_get (json_array_get (errs, 0), "step")), 1);
    assert_null (json_object_get (json_array_get (errs, 1), "step"));
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_array_clear (out);

    call = s_call ("{\"name\":\"discover_capabilities\"}", 1, &req, &resp);
    assert_int_equal (req->type, BMQ_MSG_CAPABILITIES_REQUEST);
    assert_string_equal (bmq_body_str (req, "form"), "compact");
    assert_true (s_feed (call, req, BMQ_MSG_ERROR, "{\"code\":\"busy\",\"message\":\"queue full\"}", out));
    assert_non_null (strstr (json_string_value (json_object_get (json_array_get (json_object_get (s_result (out), "content"), 0), "text")),
                             "try again"));
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_array_clear (out);

    call = s_call ("{\"name\":\"get_scene_info\",\"arguments\":{}}", 1, &req, &resp);
    assert_false (bmq_mcp_call_tick (call, bmq_mono_ms (), out));
    assert_true (bmq_mcp_call_tick (call, bmq_mcp_call_wakeup (call) + 1, out));   /* the deadline */
    assert_true (json_is_true (json_object_get (s_result (out), "isError")));
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_decref (out);
}

/* confirm_script: sha256 is required in its schema and forwarded with the id (the executor refuses
 * a confirmation without it, or with another script's). */
static void test_confirm_script_forwards_sha256 (void **state)
{
    const bmq_mcp_tools_t *tools = bmq_mcp_tools (s_mcp);
    json_t *schema = json_object_get (bmq_mcp_tools_find (tools, "confirm_script")->def, "inputSchema");
    bool required = false;
    size_t i;
    json_t *r;
    json_array_foreach (json_object_get (schema, "required"), i, r)
        if (!strcmp (json_string_value (r), "sha256")) required = true;
    assert_true (required);
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_object_get (schema, "properties"), "sha256"), "type")),
                         "string");

    const char *sha = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    char params[512], text[1024];
    snprintf (params, sizeof params, "{\"name\":\"confirm_script\",\"arguments\":{\"script_id\":\"abc\",\"sha256\":\"%s\"}}", sha);
    bmq_envelope_t *req;
    json_t *resp, *out = json_array ();
    /* security.mcp_confirm: elicitation (opted into) */
    bmq_mcp_options_t eo = { .request_timeout_ms = 5000, .confirm_by_elicitation = true };
    char err[256];
    bmq_mcp_t *person_mcp = s_mcp;
    s_mcp = bmq_mcp_new (&eo, err, sizeof err);
    assert_non_null (s_mcp);
    /* a client that cannot ask its user: a tool error saying where a person can confirm, nothing sent */
    bmq_mcp_call_t *call = s_call (params, 1, &req, &resp);
    assert_null (call);
    assert_null (req);
    char *dump = json_dumps (resp, 0);
    assert_non_null (strstr (dump, "\"isError\": true"));
    assert_non_null (strstr (dump, "blendmq script apply abc --confirm --sha256"));
    free (dump);
    json_decref (resp);
    /* one that can (elicitation declared, an SSE answer): the listing, the question, then script.confirm with the sha256 */
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    s.elicitation = s.can_ask = true;
    snprintf (s.who, sizeof s.who, "mcp");
    s.role = BMQ_ROLE_OPERATOR;             /* an operator may not confirm by asking anyone: nothing is sent */
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":%s}", params);
    bmq_mcp_outcome_t o0;
    s_handle (&s, text, &o0);
    assert_null (o0.call);
    assert_null (o0.request);
    dump = json_dumps (o0.response, 0);
    assert_non_null (strstr (dump, "a confirmation needs reviewer"));
    free (dump);
    json_decref (o0.response);
    snprintf (s.who, sizeof s.who, "reviewer1");
    s.role = BMQ_ROLE_REVIEWER;
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":%s}", params);
    bmq_mcp_outcome_t o;
    s_handle (&s, text, &o);
    call = o.call;
    req = o.request;
    assert_non_null (call);
    assert_string_equal (bmq_msg_type_name (req->type), "script.list");
    assert_string_equal (bmq_body_str (req, "script_id"), "abc");
    snprintf (text, sizeof text, "{\"scripts\":[{\"script_id\":\"abc\",\"sha256\":\"%s\",\"ok\":true,\"applied\":false,\"lines\":1,"
              "\"script\":\"import bpy\"}]}", sha);
    assert_false (s_feed (call, req, bmq_msg_type_from_name ("script.listing"), text, out));
    json_t *ask = NULL;
    size_t i2;
    json_t *m;
    json_array_foreach (out, i2, m)
        if (json_string_value (json_object_get (m, "method")) && !strcmp (json_string_value (json_object_get (m, "method")), "elicitation/create")) ask = m;
    assert_non_null (ask);
    assert_true (bmq_mcp_call_awaits (call, json_object_get (ask, "id")));
    assert_false (bmq_mcp_call_on_bus (call));
    json_t *answer = json_pack ("{s:s, s:O, s:{s:s, s:{s:b}}}", "jsonrpc", "2.0", "id", json_object_get (ask, "id"), "result",
                                "action", "accept", "content", "confirm", 1);
    bmq_envelope_t *confirm = NULL;
    assert_false (bmq_mcp_call_answer (call, answer, out, &confirm));
    json_decref (answer);
    assert_non_null (confirm);
    assert_int_equal (confirm->type, BMQ_MSG_SCRIPT_CONFIRM);
    assert_string_equal (bmq_body_str (confirm, "sha256"), sha);
    assert_string_equal (bmq_mcp_call_cid (call), confirm->cid);
    assert_true (s_feed (call, confirm, BMQ_MSG_SCRIPT_REPLY, "{\"script_id\":\"abc\",\"status\":\"refused\",\"message\":\"the script's "
                                                              "sha256 differs from the one confirmed\"}", out));
    dump = json_dumps (s_result (out), 0);
    assert_non_null (strstr (dump, "refused"));
    free (dump);
    json_decref (out);
    bmq_envelope_destroy (&req);
    bmq_envelope_destroy (&confirm);
    bmq_mcp_call_destroy (&call);
    bmq_mcp_destroy (&s_mcp);
    s_mcp = person_mcp;
}

/* security.mcp_confirm: person (the default). A client that declares
 * elicitation and would answer it itself is never asked: the call lists the
 * script, waits for a person (polling the listing), and says "pending" or
 * "applied"; no script.confirm ever leaves it, and the script is on the list
 * the page shows (issue 24). */
static void test_confirm_script_person_default (void **state)
{
    const char *sha = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    char text[1024], listing[512];
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    s.elicitation = s.can_ask = true;
    snprintf (s.who, sizeof s.who, "mcp");
    s.role = BMQ_ROLE_OPERATOR;
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"confirm_script\","
              "\"arguments\":{\"script_id\":\"pers\",\"sha256\":\"%s\",\"wait_s\":1},\"_meta\":{\"progressToken\":\"p\"}}}", sha);
    bmq_mcp_outcome_t o;
    s_handle (&s, text, &o);
    assert_non_null (o.call);
    assert_string_equal (bmq_msg_type_name (o.request->type), "script.list");
    json_t *out = json_array ();
    snprintf (listing, sizeof listing, "{\"scripts\":[{\"script_id\":\"pers\",\"sha256\":\"%s\",\"ok\":true,\"applied\":%%s,"
              "\"lines\":1,\"script\":\"import bpy\"}]}", sha);
    snprintf (text, sizeof text, listing, "false");
    assert_false (s_feed (o.call, o.request, bmq_msg_type_from_name ("script.listing"), text, out));
    json_t *pending = bmq_mcp_pending_confirmations ();
    bool listed = false;
    size_t i;
    json_t *p;
    json_array_foreach (pending, i, p)
        if (!strcmp (json_string_value (json_object_get (p, "script_id")), "pers")) {
            listed = true;
            assert_string_equal (json_string_value (json_object_get (json_object_get (p, "requested_by"), "name")), "mcp");
        }
    json_decref (pending);
    assert_true (listed);
    int64_t t0 = bmq_mono_ms ();
    assert_false (bmq_mcp_call_tick (o.call, t0 + 600, out));
    assert_false (bmq_mcp_call_tick (o.call, t0 + 1100, out) && false);
    bmq_envelope_t *poll = bmq_mcp_call_next_request (o.call);
    if (!poll) {                                    /* the tick at +1100 may have ended the wait already */
        assert_true (bmq_mcp_call_tick (o.call, t0 + 2000, out));
    }
    else {
        assert_string_equal (bmq_msg_type_name (poll->type), "script.list");
        assert_string_equal (bmq_mcp_call_cid (o.call), poll->cid);
        snprintf (text, sizeof text, listing, "false");
        assert_false (s_feed (o.call, poll, bmq_msg_type_from_name ("script.listing"), text, out));
        assert_true (bmq_mcp_call_tick (o.call, t0 + 2000, out));
        bmq_envelope_destroy (&poll);
    }
    char *dump = json_dumps (out, 0);
    assert_null (strstr (dump, "elicitation/create"));
    assert_non_null (strstr (dump, "\"status\": \"pending\""));
    assert_non_null (strstr (dump, "blendmq script apply pers --confirm --sha256"));
    assert_null (strstr (dump, "\"isError\": true"));
    free (dump);
    assert_null (bmq_mcp_call_next_request (o.call));
    bmq_envelope_destroy (&o.request);
    bmq_mcp_call_destroy (&o.call);
    json_array_clear (out);
    /* called again once a person applied it: the outcome */
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"confirm_script\","
              "\"arguments\":{\"script_id\":\"pers\",\"sha256\":\"%s\"}}}", sha);
    s_handle (&s, text, &o);
    assert_non_null (o.call);
    snprintf (text, sizeof text, listing, "true");
    assert_true (s_feed (o.call, o.request, bmq_msg_type_from_name ("script.listing"), text, out));
    dump = json_dumps (s_result (out), 0);
    assert_non_null (strstr (dump, "\"status\": \"applied\""));
    assert_non_null (strstr (dump, "a person confirmed"));
    free (dump);
    assert_null (bmq_mcp_call_next_request (o.call));
    bmq_envelope_destroy (&o.request);
    bmq_mcp_call_destroy (&o.call);
    json_decref (out);
}

static void test_bad_arguments_and_unavailable_tools (void **state)
{
    const char *cases[] = {
        "{\"name\":\"execute_plan\",\"arguments\":{}}",
        "{\"name\":\"execute_plan\",\"arguments\":{\"plan\":[]}}",
        "{\"name\":\"execute_plan\",\"arguments\":{\"plan\":[{}],\"keep_partial\":\"no\"}}",
        "{\"name\":\"inspect_tool\",\"arguments\":{\"tool_name\":7}}",
        "{\"name\":\"get_viewport_screenshot\",\"arguments\":{\"width\":100000}}",
        "{\"name\":\"discover_capabilities\",\"arguments\":{\"form\":\"tiny\"}}",
        "{\"name\":\"chat\",\"arguments\":[1]}",
        "{\"name\":\"confirm_script\",\"arguments\":[\"x\"]}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bmq_envelope_t *req;
        json_t *resp;
        assert_null (s_call (cases[i], 1, &req, &resp));
        assert_null (req);
        assert_true (json_is_true (json_object_get (json_object_get (resp, "result"), "isError")));
        json_decref (resp);
    }
    bmq_envelope_t *req;
    json_t *resp;
    bmq_mcp_call_t *call = s_call ("{\"name\":\"validate_plan\",\"arguments\":{\"plan\":\"[{\\\"operation\\\":\\\"x\\\"}]\"}}", 1, &req, &resp);
    assert_non_null (call);                                      /* a plan given as a JSON string is read */
    assert_true (json_is_array (json_object_get (req->body, "plan")));
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
}

static void test_cancel_and_image (void **state)
{
    bmq_envelope_t *req;
    json_t *resp, *out = json_array ();
    bmq_mcp_call_t *call = s_call ("{\"name\":\"chat\",\"arguments\":{\"prompt\":\"build a snowman\"}}", 1, &req, &resp);
    s_feed (call, req, BMQ_MSG_CHAT_PLANNED, "{\"plan\":[{\"operation\":\"a\"}],\"plan_id\":\"p-9\",\"source\":\"offline\"}", out);
    bmq_envelope_t *cancel = bmq_mcp_call_cancel (call);
    assert_non_null (cancel);
    assert_int_equal (cancel->type, BMQ_MSG_CANCEL_REQUEST);
    assert_string_equal (cancel->cid, req->cid);
    assert_string_equal (bmq_body_str (cancel, "plan_id"), "p-9");
    assert_true (bmq_mcp_call_feed (call, req, out));            /* over: nothing more is answered */
    bmq_envelope_destroy (&cancel);
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_array_clear (out);

    call = s_call ("{\"name\":\"get_viewport_screenshot\",\"arguments\":{\"width\":32,\"height\":32}}", 1, &req, &resp);
    assert_string_equal (bmq_body_str (req, "command"), "render_preview");
    bmq_envelope_t *reply = s_answer (req, BMQ_MSG_SCENE_REPLY, "{\"command\":\"render_preview\",\"result\":{\"width\":32,\"height\":32}}");
    bmq_envelope_set_blob (reply, "\x89PNG\r\n\x1a\n", 8);
    assert_true (bmq_mcp_call_feed (call, reply, out));
    json_t *image = json_array_get (json_object_get (s_result (out), "content"), 0);
    assert_string_equal (json_string_value (json_object_get (image, "type")), "image");
    assert_string_equal (json_string_value (json_object_get (image, "data")), "iVBORw0KGgo=");
    assert_true (json_is_integer (json_object_get (json_object_get (s_result (out), "structuredContent"), "width")));
    bmq_envelope_destroy (&reply);
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_decref (out);
}

/* look: angles checked before anything is sent; the add-on's sheet as an image,
 * its topology as text (names from Blender with control characters blanked);
 * a reply without a PNG is an error, not an empty image. */
static void test_look (void **state)
{
    bmq_envelope_t *req;
    json_t *resp, *out = json_array ();
    const char *bad[] = { "{\"name\":\"look\",\"arguments\":{\"angles\":9}}", "{\"name\":\"look\",\"arguments\":{\"angles\":0}}",
                          "{\"name\":\"look\",\"arguments\":{\"angles\":\"4\"}}" };
    for (size_t i = 0; i < 3; i++) {
        assert_null (s_call (bad[i], 1, &req, &resp));
        assert_null (req);
        assert_true (json_is_true (json_object_get (json_object_get (resp, "result"), "isError")));
        char *dump = json_dumps (resp, 0);
        assert_non_null (strstr (dump, "angles must be an integer in 1..8"));
        free (dump);
        json_decref (resp);
    }
    bmq_mcp_call_t *call = s_call ("{\"name\":\"look\",\"arguments\":{}}", 1, &req, &resp);
    assert_non_null (call);
    assert_string_equal (bmq_body_str (req, "command"), "look");
    assert_int_equal (json_object_size (json_object_get (req->body, "args")), 0);      /* the add-on's default */
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);

    call = s_call ("{\"name\":\"look\",\"arguments\":{\"angles\":2}}", 1, &req, &resp);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (req->body, "args"), "angles")), 2);
    bmq_envelope_t *reply = s_answer (req, BMQ_MSG_SCENE_REPLY,
        "{\"command\":\"look\",\"result\":{\"angles\":[\"front\",\"right\"],\"width\":320,\"height\":240,"
        "\"sheet\":{\"width\":640,\"height\":240},\"count\":3,\"objects\":["
        "{\"name\":\"snow\\u0007man\",\"type\":\"MESH\",\"vertices\":8,\"faces\":6,\"non_manifold_edges\":0,\"loose_parts\":1,"
        "\"bounds\":{\"min\":[-1,-1,-1],\"max\":[1,1,1]}},"
        "{\"name\":\"lamp\",\"type\":\"LIGHT\",\"vertices\":null},"
        "{\"name\":\"odd\",\"type\":\"MESH\",\"vertices\":4,\"faces\":\"x\",\"bounds\":{\"min\":[1]}}],"
        "\"totals\":{\"objects\":3,\"with_geometry\":2,\"vertices\":12,\"faces\":7,\"non_manifold_edges\":4,\"loose_parts\":2}}}");
    bmq_envelope_set_blob (reply, "\x89PNG\r\n\x1a\n", 8);
    assert_true (bmq_mcp_call_feed (call, reply, out));
    json_t *content = json_object_get (s_result (out), "content");
    assert_int_equal (json_array_size (content), 2);
    assert_string_equal (json_string_value (json_object_get (json_array_get (content, 0), "type")), "image");
    assert_string_equal (json_string_value (json_object_get (json_array_get (content, 0), "mimeType")), "image/png");
    assert_string_equal (json_string_value (json_object_get (json_array_get (content, 0), "data")), "iVBORw0KGgo=");
    const char *text = json_string_value (json_object_get (json_array_get (content, 1), "text"));
    assert_non_null (strstr (text, "contact sheet 640x240 PNG (8 bytes)"));
    assert_non_null (strstr (text, "views of 320x240 in 2 columns"));
    assert_non_null (strstr (text, ": front, right"));
    assert_non_null (strstr (text, "- snow?man (MESH): 8 vertices, 6 faces, 0 non-manifold edges, 1 loose parts, bounds [-1,-1,-1]..[1,1,1]"));
    assert_non_null (strstr (text, "- lamp (LIGHT): no geometry"));
    assert_non_null (strstr (text, "- odd (MESH): 4 vertices, 0 faces, 0 non-manifold edges, 0 loose parts, bounds ?..?"));
    assert_non_null (strstr (text, "totals: 3 objects (2 with geometry), 12 vertices, 7 faces, 4 non-manifold edges, 2 loose parts"));
    assert_null (json_object_get (s_result (out), "isError"));
    json_t *structured = json_object_get (s_result (out), "structuredContent");         /* its outputSchema: count required */
    assert_int_equal (json_integer_value (json_object_get (structured, "count")), 3);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (structured, "totals"), "loose_parts")), 2);
    bmq_envelope_destroy (&reply);
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_array_clear (out);

    call = s_call ("{\"name\":\"look\"}", 1, &req, &resp);
    assert_true (s_feed (call, req, BMQ_MSG_SCENE_REPLY, "{\"command\":\"look\",\"result\":{\"angles\":[]}}", out));
    assert_true (json_is_true (json_object_get (s_result (out), "isError")));
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_decref (out);
}

/* generate_3d: asset.generate, its progress as rising notifications, then the import as a second
 * story (run.request of one asset.import step) whose result carries the job id; a failed job is an
 * error and imports nothing; cancelling while the model is made sends asset.cancel on its story. */
static bool s_is_progress (const json_t *m)
{
    const char *method = json_string_value (json_object_get (m, "method"));
    return method && !strcmp (method, "notifications/progress");
}

/* generate_3d with images: passed through as asset.generate's images (prompt optional then); a wrong shape refused */
static void test_generate_3d_images (void **state)
{
    (void) state;
    const char *bad[] = {
        "{\"name\":\"generate_3d\",\"arguments\":{\"images\":[]}}",
        "{\"name\":\"generate_3d\",\"arguments\":{\"images\":[{\"type\":\"image/gif\",\"data\":\"R0lG\"}]}}",
        "{\"name\":\"generate_3d\",\"arguments\":{\"images\":[{\"type\":\"image/png\",\"data\":7}]}}",
        "{\"name\":\"generate_3d\",\"arguments\":{\"images\":{\"type\":\"image/png\",\"data\":\"iVBO\"}}}",
        "{\"name\":\"generate_3d\",\"arguments\":{\"images\":[{\"type\":\"image/png\",\"data\":\"a\"},{\"type\":\"image/png\",\"data\":\"a\"},"
        "{\"type\":\"image/png\",\"data\":\"a\"},{\"type\":\"image/png\",\"data\":\"a\"},{\"type\":\"image/png\",\"data\":\"a\"},"
        "{\"type\":\"image/png\",\"data\":\"a\"}]}}" };
    bmq_envelope_t *req;
    json_t *resp;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_null (s_call (bad[i], 1, &req, &resp));
        assert_null (req);
        json_t *result = json_object_get (resp, "result");
        assert_true (json_is_true (json_object_get (result, "isError")));
        const char *text = json_string_value (json_object_get (json_array_get (json_object_get (result, "content"), 0), "text"));
        assert_non_null (text);
        assert_non_null (strstr (text, "images must be 1..5"));
        json_decref (resp);
    }
    /* images alone: no prompt sent; with a prompt: both */
    const char *images = "[{\"type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"},{\"type\":\"image/jpeg\",\"data\":\"/9j/4A==\"}]";
    char params[1024];
    for (int with_prompt = 0; with_prompt < 2; with_prompt++) {
        snprintf (params, sizeof params, "{\"name\":\"generate_3d\",\"arguments\":{%s\"images\":%s}}",
                  with_prompt ? "\"prompt\":\"this chair\"," : "", images);
        bmq_mcp_call_t *call = s_call (params, 1, &req, &resp);
        assert_non_null (call);
        assert_int_equal (req->type, BMQ_MSG_ASSET_GENERATE);
        json_t *want = json_loads (images, 0, NULL);
        assert_true (json_equal (json_object_get (req->body, "images"), want));
        json_decref (want);
        if (with_prompt) assert_string_equal (bmq_body_str (req, "prompt"), "this chair");
        else assert_null (json_object_get (req->body, "prompt"));
        bmq_envelope_destroy (&req);
        bmq_mcp_call_destroy (&call);
        json_decref (resp);
    }
}

static void test_generate_3d (void **state)
{
    const char *bad[] = { "{\"name\":\"generate_3d\",\"arguments\":{}}",
                          "{\"name\":\"generate_3d\",\"arguments\":{\"prompt\":\"a chair\",\"deadline_s\":5}}",
                          "{\"name\":\"generate_3d\",\"arguments\":{\"prompt\":\"a chair\",\"name\":\"\"}}",
                          "{\"name\":\"generate_3d\",\"arguments\":{\"prompt\":7}}" };
    bmq_envelope_t *req, *import;
    json_t *resp, *out = json_array ();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_null (s_call (bad[i], 1, &req, &resp));
        assert_null (req);
        assert_true (json_is_true (json_object_get (json_object_get (resp, "result"), "isError")));
        json_decref (resp);
    }
    bmq_mcp_call_t *call = s_call ("{\"name\":\"generate_3d\",\"arguments\":{\"prompt\":\"a chair\",\"name\":\"chair\",\"tier\":"
                                   "\"Sketch\",\"deadline_s\":60},\"_meta\":{\"progressToken\":\"g\"}}", 0, &req, &resp);
    assert_non_null (call);
    assert_int_equal (req->type, BMQ_MSG_ASSET_GENERATE);
    assert_string_equal (bmq_body_str (req, "source"), "hyper3d");
    assert_string_equal (bmq_body_str (req, "prompt"), "a chair");
    assert_string_equal (bmq_body_str (req, "tier"), "Sketch");
    assert_int_equal (bmq_body_int (req, "deadline_s", 0), 60);
    assert_true (bmq_mcp_call_wakeup (call) <= bmq_mono_ms () + 60 * 1000 + 125000);
    static const char *const events[] = { "\"step\":0,\"status\":\"submitted\"", "\"step\":0,\"status\":\"waiting\"",
                                          "\"step\":40,\"status\":\"generating\",\"object\":\"generating 40%\"",
                                          "\"step\":40,\"status\":\"generating\",\"object\":\"generating 40%\"",
                                          "\"step\":900,\"status\":\"generating\"",      /* out of range: clamped */
                                          "\"step\":100,\"status\":\"done\",\"object\":\"done\"" };
    char body[512];
    for (size_t i = 0; i < sizeof events / sizeof *events; i++) {
        snprintf (body, sizeof body, "{\"plan_id\":\"%s\",\"total\":100,\"event\":\"generate\",%s}", req->cid, events[i]);
        assert_false (s_feed (call, req, BMQ_MSG_PROGRESS, body, out));
        assert_null (bmq_mcp_call_next_request (call));
    }
    assert_false (s_feed (call, req, BMQ_MSG_ASSET_GENERATED, "{\"source\":\"hyper3d\",\"id\":\"job-1\",\"status\":\"done\","
                                                              "\"duration_ms\":1500}", out));
    import = bmq_mcp_call_next_request (call);
    assert_non_null (import);
    assert_null (bmq_mcp_call_next_request (call));
    assert_int_equal (import->type, BMQ_MSG_RUN_REQUEST);
    assert_string_equal (bmq_mcp_call_cid (call), import->cid);          /* the import's story now */
    assert_string_not_equal (import->cid, req->cid);
    json_t *step = json_array_get (json_object_get (import->body, "plan"), 0);
    assert_int_equal (json_array_size (json_object_get (import->body, "plan")), 1);
    assert_string_equal (json_string_value (json_object_get (step, "operation")), "asset.import");
    assert_string_equal (json_string_value (json_object_get (step, "name")), "chair");
    json_t *params = json_object_get (step, "params");
    assert_string_equal (json_string_value (json_object_get (params, "source")), "hyper3d");
    assert_string_equal (json_string_value (json_object_get (params, "id")), "job-1");
    assert_string_equal (json_string_value (json_object_get (params, "type")), "model");
    assert_string_equal (json_string_value (json_object_get (params, "format")), "glb");
    assert_false (s_feed (call, import, BMQ_MSG_VALIDATE_REPLY, "{\"accepted\":true,\"errors\":[],\"plan_id\":\"p-g\"}", out));
    assert_false (s_feed (call, import, BMQ_MSG_PROGRESS, "{\"plan_id\":\"p-g\",\"step\":1,\"total\":1,\"status\":\"ok\",\"event\":\"step\"}", out));
    assert_true (s_feed (call, import, BMQ_MSG_EXECUTE_RESULT, "{\"plan_id\":\"p-g\",\"status\":\"done\",\"steps_done\":1,"
                                                               "\"steps_total\":1,\"duration_ms\":9.0,\"objects\":[\"chair\"]}", out));
    size_t i, n = 0;
    json_t *m;
    double last = -1;
    bool said_40 = false;
    json_array_foreach (out, i, m) {
        if (!s_is_progress (m)) continue;
        json_t *p = json_object_get (m, "params");
        assert_true (json_number_value (json_object_get (p, "progress")) > last);      /* rising only */
        assert_true (json_number_value (json_object_get (p, "progress")) <= 100);
        assert_true (json_number_value (json_object_get (p, "total")) == 100);
        last = json_number_value (json_object_get (p, "progress"));
        said_40 |= !strcmp (json_string_value (json_object_get (p, "message")) ?: "", "generating 40%");
        n++;
    }
    assert_int_equal (n, 3);                                         /* 0 (submitted), 40, 100 (900 clamped); repeats dropped */
    assert_true (last == 100);
    assert_true (said_40);
    json_t *result = s_result (out);
    assert_false (json_is_true (json_object_get (result, "isError")));
    json_t *sc = json_object_get (result, "structuredContent");
    assert_string_equal (json_string_value (json_object_get (sc, "job")), "job-1");
    assert_string_equal (json_string_value (json_object_get (sc, "status")), "done");
    assert_string_equal (json_string_value (json_array_get (json_object_get (sc, "objects"), 0)), "chair");
    assert_non_null (strstr (json_string_value (json_object_get (json_array_get (json_object_get (result, "content"), 0), "text")),
                             "model job-1 made in 1.5 s; its import: done: 1/1"));
    bmq_envelope_destroy (&import);
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_array_clear (out);

    /* a job that failed: an error saying why, nothing imported */
    call = s_call ("{\"name\":\"generate_3d\",\"arguments\":{\"prompt\":\"a chair\"}}", 1, &req, &resp);
    assert_null (bmq_body_str (req, "tier"));
    assert_true (s_feed (call, req, BMQ_MSG_ASSET_GENERATED, "{\"source\":\"hyper3d\",\"id\":\"job-2\",\"status\":\"failed\","
                                                             "\"error\":\"Rodin: out of credits\",\"duration_ms\":200}", out));
    assert_null (bmq_mcp_call_next_request (call));
    result = s_result (out);
    assert_true (json_is_true (json_object_get (result, "isError")));
    const char *text = json_string_value (json_object_get (json_array_get (json_object_get (result, "content"), 0), "text"));
    assert_non_null (strstr (text, "failed: Rodin: out of credits"));
    assert_non_null (strstr (text, "nothing was imported"));
    assert_string_equal (json_string_value (json_object_get (json_object_get (result, "structuredContent"), "job")), "job-2");
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_array_clear (out);

    /* done without a job id is not imported either */
    call = s_call ("{\"name\":\"generate_3d\",\"arguments\":{\"prompt\":\"a chair\"}}", 1, &req, &resp);
    assert_true (s_feed (call, req, BMQ_MSG_ASSET_GENERATED, "{\"source\":\"hyper3d\",\"status\":\"done\"}", out));
    assert_null (bmq_mcp_call_next_request (call));
    assert_true (json_is_true (json_object_get (s_result (out), "isError")));
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_array_clear (out);

    /* cancelled while the model is made: asset.cancel on the generation's story, nothing more answered */
    call = s_call ("{\"name\":\"generate_3d\",\"arguments\":{\"prompt\":\"a chair\"}}", 1, &req, &resp);
    bmq_envelope_t *cancel = bmq_mcp_call_cancel (call);
    assert_non_null (cancel);
    assert_int_equal (cancel->type, BMQ_MSG_ASSET_CANCEL);
    assert_string_equal (cancel->cid, req->cid);
    assert_null (bmq_body_str (cancel, "job"));
    assert_true (s_feed (call, req, BMQ_MSG_ASSET_GENERATED, "{\"source\":\"hyper3d\",\"id\":\"job-3\",\"status\":\"done\"}", out));
    assert_null (bmq_mcp_call_next_request (call));
    assert_int_equal (json_array_size (out), 0);
    bmq_envelope_destroy (&cancel);
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);

    /* cancelled while importing: the plan is cancelled as execute_plan's is */
    call = s_call ("{\"name\":\"generate_3d\",\"arguments\":{\"prompt\":\"a chair\"}}", 1, &req, &resp);
    assert_false (s_feed (call, req, BMQ_MSG_ASSET_GENERATED, "{\"source\":\"hyper3d\",\"id\":\"job-4\",\"status\":\"done\"}", out));
    import = bmq_mcp_call_next_request (call);
    assert_false (s_feed (call, import, BMQ_MSG_VALIDATE_REPLY, "{\"accepted\":true,\"errors\":[],\"plan_id\":\"p-4\"}", out));
    cancel = bmq_mcp_call_cancel (call);
    assert_int_equal (cancel->type, BMQ_MSG_CANCEL_REQUEST);
    assert_string_equal (cancel->cid, import->cid);
    assert_string_equal (bmq_body_str (cancel, "plan_id"), "p-4");
    bmq_envelope_destroy (&cancel);
    bmq_envelope_destroy (&import);
    bmq_envelope_destroy (&req);
    bmq_mcp_call_destroy (&call);
    json_decref (out);
}


/* ---- resources, prompts, completion (mcp_surface.h) -------------------------- */

static json_t *s_rpc (bmq_mcp_t *mcp, bmq_mcp_session_t *s, const char *text, bmq_mcp_outcome_t *out)
{
    json_t *msg = json_loads (text, 0, NULL);
    assert_non_null (msg);
    bmq_mcp_handle (mcp, s, msg, out);
    json_decref (msg);
    return out->response;
}

static int64_t s_error_code (const json_t *r) { return json_integer_value (json_object_get (json_object_get (r, "error"), "code")); }

static void test_resources (void **state)
{
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    bmq_mcp_outcome_t out;
    json_t *r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}", &out);
    json_t *caps = json_object_get (json_object_get (r, "result"), "capabilities");
    assert_true (json_is_true (json_object_get (json_object_get (caps, "resources"), "subscribe")));
    assert_non_null (json_object_get (caps, "prompts"));
    assert_non_null (json_object_get (caps, "completions"));
    json_decref (r);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}", &out);
    json_t *list = json_object_get (json_object_get (r, "result"), "resources");
    assert_true (json_array_size (list) >= 4);
    assert_string_equal (json_string_value (json_object_get (json_array_get (list, 0), "uri")), "blendmq://scene");
    assert_null (json_object_get (json_array_get (list, 0), "_tool"));           /* private keys stay inside */
    for (size_t i = 0; i < json_array_size (list); i++)                          /* no conformance fixtures without test tools */
        assert_null (strstr (json_string_value (json_object_get (json_array_get (list, i), "uri")), "test://"));
    json_decref (r);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/templates/list\"}", &out);
    assert_string_equal (json_string_value (json_object_get (json_array_get (json_object_get (json_object_get (r, "result"),
                         "resourceTemplates"), 0), "uriTemplate")), "blendmq://objects/{name}");
    json_decref (r);
    /* an object by template: the scene request with the decoded name, the reply as JSON contents */
    assert_null (s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"blendmq://objects/Cube%20A\"}}", &out));
    assert_non_null (out.call);
    assert_int_equal (out.request->type, BMQ_MSG_SCENE_REQUEST);
    assert_string_equal (json_string_value (json_object_get (json_object_get (out.request->body, "args"), "name")), "Cube A");
    json_t *sent = json_array ();
    assert_true (s_feed (out.call, out.request, BMQ_MSG_SCENE_REPLY, "{\"result\":{\"name\":\"Cube A\",\"type\":\"MESH\"}}", sent));
    json_t *c = json_array_get (json_object_get (s_result (sent), "contents"), 0);
    assert_string_equal (json_string_value (json_object_get (c, "uri")), "blendmq://objects/Cube%20A");
    assert_string_equal (json_string_value (json_object_get (c, "mimeType")), "application/json");
    json_t *obj = json_loads (json_string_value (json_object_get (c, "text")), 0, NULL);
    assert_string_equal (json_string_value (json_object_get (obj, "type")), "MESH");
    json_decref (obj);
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    /* the scene, and Blender failing: a JSON-RPC error, not empty contents */
    s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":\"blendmq://scene\"}}", &out);
    assert_non_null (out.call);
    sent = json_array ();
    assert_true (s_feed (out.call, out.request, BMQ_MSG_ERROR, "{\"code\":\"blender_unavailable\",\"message\":\"down\"}", sent));
    assert_int_equal (s_error_code (json_array_get (sent, json_array_size (sent) - 1)), -32603);
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    /* unknown: -32002 with the uri (2025-11-25); templates match one path segment only */
    static const char *const unknown[] = { "blendmq://nope", "blendmq://objects/", "blendmq://objects/a/b", "test://static-text" };
    for (size_t i = 0; i < 4; i++) {
        char text[300];
        snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":\"%s\"}}", unknown[i]);
        r = s_rpc (s_mcp, &s, text, &out);
        assert_null (out.call);
        assert_int_equal (s_error_code (r), -32002);
        assert_string_equal (json_string_value (json_object_get (json_object_get (json_object_get (r, "error"), "data"), "uri")), unknown[i]);
        json_decref (r);
    }
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{}}", &out);
    assert_int_equal (s_error_code (r), -32602);
    json_decref (r);
    /* subscribe: a committed plan tells the scene's subscribers before its result */
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"blendmq://nope\"}}", &out);
    assert_int_equal (s_error_code (r), -32002);
    json_decref (r);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"blendmq://scene\"}}", &out);
    assert_int_equal (json_object_size (json_object_get (r, "result")), 0);
    json_decref (r);
    assert_int_equal (s.subscriptions, 1);
    for (int round = 0; round < 2; round++) {
        s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_plan\",\"arguments\":"
                          "{\"plan\":[{\"operation\":\"a\"}]}}}", &out);
        sent = json_array ();
        assert_true (s_feed (out.call, out.request, BMQ_MSG_EXECUTE_RESULT, "{\"plan_id\":\"p\",\"status\":\"done\",\"steps_done\":1,\"steps_total\":1}", sent));
        json_t *n = json_array_get (sent, json_array_size (sent) - 2);
        if (round == 0) {
            assert_string_equal (json_string_value (json_object_get (n, "method")), "notifications/resources/updated");
            assert_string_equal (json_string_value (json_object_get (json_object_get (n, "params"), "uri")), "blendmq://scene");
        }
        else assert_null (n && json_object_get (n, "method") ? strstr (json_string_value (json_object_get (n, "method")), "resources") : NULL);
        json_decref (sent);
        bmq_envelope_destroy (&out.request);
        bmq_mcp_call_destroy (&out.call);
        if (round == 0) {
            json_decref (s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"resources/unsubscribe\",\"params\":{\"uri\":\"blendmq://scene\"}}", &out));
            assert_int_equal (s.subscriptions, 0);
        }
    }
    /* SEP-2164: a 2026-07-28 session hears -32602 for an unknown resource */
    snprintf (s.version, sizeof s.version, "2026-07-28");
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"resources/read\",\"params\":{\"uri\":\"blendmq://nope\"}}", &out);
    assert_int_equal (s_error_code (r), -32602);
    json_decref (r);
}

static void test_prompts_and_completion (void **state)
{
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    bmq_mcp_outcome_t out;
    json_t *r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/list\"}", &out);
    json_t *prompts = json_object_get (json_object_get (r, "result"), "prompts");
    assert_int_equal (json_array_size (prompts), 5);
    assert_string_equal (json_string_value (json_object_get (json_array_get (prompts, 0), "name")), "build");
    assert_null (json_object_get (json_array_get (json_object_get (json_array_get (prompts, 0), "arguments"), 1), "_complete"));
    json_decref (r);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/get\",\"params\":{\"name\":\"build\",\"arguments\":"
                          "{\"what\":\"a {operation} snowman\",\"extra\":\"x\"}}}", &out);
    const char *text = json_string_value (json_object_get (json_object_get (json_array_get (json_object_get (json_object_get (r, "result"),
                                          "messages"), 0), "content"), "text"));
    assert_non_null (strstr (text, "a {operation} snowman"));         /* an argument's text is not filled in again */
    assert_non_null (strstr (text, "operation any"));                 /* the optional argument's default */
    json_decref (r);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{\"name\":\"build\"}}", &out);
    assert_int_equal (s_error_code (r), -32602);                      /* `what` is required */
    json_decref (r);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{\"name\":\"nope\"}}", &out);
    assert_int_equal (s_error_code (r), -32602);
    json_decref (r);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":\"review_scene\"}}", &out);
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_array_get (json_object_get (json_object_get (r, "result"),
                         "messages"), 0), "content"), "type")), "resource_link");
    json_decref (r);
    /* recipe names from the planner's book */
    assert_null (s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
                                   "\"name\":\"recipe\"},\"argument\":{\"name\":\"name\",\"value\":\"Sn\"}}}", &out));
    assert_int_equal (out.request->type, BMQ_MSG_RECIPE_LIST);
    json_t *sent = json_array ();
    assert_true (s_feed (out.call, out.request, BMQ_MSG_RECIPE_REPLY, "{\"recipes\":[{\"name\":\"table\"},{\"name\":\"snowman\"},"
                                                                    "{\"name\":\"big snow\"}]}", sent));
    json_t *completion = json_object_get (s_result (sent), "completion");
    assert_int_equal (json_array_size (json_object_get (completion, "values")), 2);
    assert_string_equal (json_string_value (json_array_get (json_object_get (completion, "values"), 0)), "snowman");   /* prefix first */
    assert_string_equal (json_string_value (json_array_get (json_object_get (completion, "values"), 1)), "big snow");
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    /* object names for the template's variable; palette operations for build */
    s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/resource\","
                      "\"uri\":\"blendmq://objects/{name}\"},\"argument\":{\"name\":\"name\",\"value\":\"c\"}}}", &out);
    assert_int_equal (out.request->type, BMQ_MSG_SCENE_REQUEST);
    sent = json_array ();
    assert_true (s_feed (out.call, out.request, BMQ_MSG_SCENE_REPLY, "{\"result\":{\"count\":2,\"objects\":[{\"name\":\"Cube\"},{\"name\":\"Lamp\"}]}}", sent));
    completion = json_object_get (s_result (sent), "completion");
    assert_int_equal (json_integer_value (json_object_get (completion, "total")), 1);
    assert_string_equal (json_string_value (json_array_get (json_object_get (completion, "values"), 0)), "Cube");
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
                      "\"name\":\"build\"},\"argument\":{\"name\":\"operation\",\"value\":\"bpy.ops.mesh.primitive_c\"}}}", &out);
    assert_int_equal (out.request->type, BMQ_MSG_CAPABILITIES_REQUEST);
    sent = json_array ();
    assert_true (s_feed (out.call, out.request, BMQ_MSG_CAPABILITIES_REPLY, "{\"palette\":{\"bpy.ops.mesh.primitive_cube_add\":{},"
                                                                          "\"bpy.ops.mesh.primitive_cone_add\":{},\"bpy.ops.transform.translate\":{}}}", sent));
    assert_int_equal (json_array_size (json_object_get (json_object_get (s_result (sent), "completion"), "values")), 2);
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    /* asset ids from the catalogue (search_assets: what was typed, of the type the other argument names), at most 100 */
    s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
                      "\"name\":\"import_asset\"},\"argument\":{\"name\":\"id\",\"value\":\"ro\"},\"context\":{\"arguments\":{\"type\":\"hdri\"}}}}", &out);
    assert_int_equal (out.request->type, BMQ_MSG_ASSET_SEARCH);
    assert_string_equal (json_string_value (json_object_get (out.request->body, "source")), "polyhaven");
    assert_string_equal (json_string_value (json_object_get (out.request->body, "query")), "ro");
    assert_string_equal (json_string_value (json_object_get (out.request->body, "type")), "hdri");
    char *many = malloc (200 * 40 + 100);
    size_t used = (size_t) sprintf (many, "{\"source\":\"polyhaven\",\"results\":[{\"id\":\"barn_ro\"},");
    for (int i = 0; i < 150; i++) used += (size_t) sprintf (many + used, "{\"id\":\"rocks_%03d\",\"type\":\"hdri\"},", i);
    sprintf (many + used, "{\"id\":7}]}");
    sent = json_array ();
    assert_true (s_feed (out.call, out.request, BMQ_MSG_ASSET_RESULT, many, sent));
    free (many);
    completion = json_object_get (s_result (sent), "completion");
    assert_int_equal (json_array_size (json_object_get (completion, "values")), 100);
    assert_int_equal (json_integer_value (json_object_get (completion, "total")), 151);
    assert_true (json_is_true (json_object_get (completion, "hasMore")));
    assert_string_equal (json_string_value (json_array_get (json_object_get (completion, "values"), 0)), "rocks_000");     /* prefix first */
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    /* the catalogue out of reach (offline): no values, no error */
    s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
                      "\"name\":\"import_asset\"},\"argument\":{\"name\":\"id\",\"value\":\"\"}}}", &out);
    assert_null (json_object_get (out.request->body, "query"));
    sent = json_array ();
    assert_true (s_feed (out.call, out.request, BMQ_MSG_ERROR, "{\"code\":\"unavailable\",\"message\":\"api.polyhaven.com: no route\"}", sent));
    completion = json_object_get (s_result (sent), "completion");
    assert_true (json_is_array (json_object_get (completion, "values")));                /* a completion, not an error */
    assert_int_equal (json_array_size (json_object_get (completion, "values")), 0);
    assert_false (json_is_true (json_object_get (completion, "hasMore")));
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
                          "\"name\":\"import_asset\"},\"argument\":{\"name\":\"type\",\"value\":\"h\"}}}", &out);
    assert_string_equal (json_string_value (json_array_get (json_object_get (json_object_get (json_object_get (r, "result"), "completion"), "values"), 0)), "hdri");
    json_decref (r);
    /* an argument with nothing to offer, and a malformed request */
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
                          "\"name\":\"build\"},\"argument\":{\"name\":\"what\",\"value\":\"x\"}}}", &out);
    assert_int_equal (json_array_size (json_object_get (json_object_get (json_object_get (r, "result"), "completion"), "values")), 0);
    json_decref (r);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"completion/complete\",\"params\":{\"ref\":{}}}", &out);
    assert_int_equal (s_error_code (r), -32602);
    json_decref (r);
}

/* ---- every change, whoever made it (mcp_watch.h) and subscriptions/listen ------ */

static json_t *s_event (bmq_mcp_watch_t *w, const char *text)
{
    json_t *e = json_loads (text, 0, NULL);
    assert_non_null (e);
    json_t *change = bmq_mcp_watch_feed (w, e);
    json_decref (e);
    return change;
}

static void test_watch (void **state)
{
    bmq_mcp_watch_t *w = bmq_mcp_watch_new ();
    json_t *uris = json_pack ("[s, s, s, s]", "blendmq://scene", "blendmq://objects/Cube%20A", "blendmq://objects/Lamp",
                              "blendmq://recipes");
    /* a plan that commits: the scene and the object it made, not the other object nor the recipes */
    assert_null (s_event (w, "{\"event\":\"plan\",\"status\":\"started\",\"plan_id\":\"p1\",\"step\":0,\"total\":2}"));
    assert_null (s_event (w, "{\"event\":\"step\",\"status\":\"ok\",\"plan_id\":\"p1\",\"step\":1,\"object\":\"Cube A\",\"objects\":[\"Cube A\"]}"));
    assert_null (s_event (w, "{\"event\":\"step\",\"status\":\"ok\",\"plan_id\":\"p1\",\"step\":2,\"object\":\"Cube A\"}"));
    json_t *change = s_event (w, "{\"event\":\"plan\",\"status\":\"done\",\"plan_id\":\"p1\",\"step\":2,\"objects\":[\"Cube A\"]}");
    assert_non_null (change);
    json_t *out = json_array ();
    assert_int_equal (bmq_mcp_watch_notify (change, uris, NULL, out), 2);
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_array_get (out, 0), "params"), "uri")), "blendmq://scene");
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_array_get (out, 1), "params"), "uri")),
                         "blendmq://objects/Cube%20A");
    assert_string_equal (json_string_value (json_object_get (json_array_get (out, 1), "method")), "notifications/resources/updated");
    assert_null (json_object_get (json_object_get (json_array_get (out, 0), "params"), "_meta"));
    json_decref (out);
    json_decref (change);
    /* rolled back: nothing changed; a failed plan that kept its steps did */
    assert_null (s_event (w, "{\"event\":\"step\",\"status\":\"ok\",\"plan_id\":\"p2\",\"step\":1,\"object\":\"Lamp\"}"));
    assert_null (s_event (w, "{\"event\":\"rollback\",\"status\":\"rolled back\",\"plan_id\":\"p2\",\"step\":1}"));
    assert_null (s_event (w, "{\"event\":\"plan\",\"status\":\"failed\",\"plan_id\":\"p2\",\"step\":1}"));
    assert_null (s_event (w, "{\"event\":\"step\",\"status\":\"ok\",\"plan_id\":\"p3\",\"step\":1,\"object\":\"Lamp\"}"));
    assert_null (s_event (w, "{\"event\":\"step\",\"status\":\"failed\",\"plan_id\":\"p3\",\"step\":2}"));
    change = s_event (w, "{\"event\":\"plan\",\"status\":\"failed\",\"plan_id\":\"p3\",\"step\":2}");
    assert_non_null (change);
    assert_true (bmq_mcp_watch_touches (change, "blendmq://objects/Lamp"));
    assert_false (bmq_mcp_watch_touches (change, "blendmq://objects/Cube%20A"));
    assert_false (bmq_mcp_watch_touches (change, "blendmq://objects/%zz"));
    json_decref (change);
    /* a retold end (Blender rolled it back) and a plan that ran nothing: no change */
    assert_null (s_event (w, "{\"event\":\"plan\",\"status\":\"interrupted\",\"plan_id\":\"p4\",\"step\":3,\"by\":\"blender\"}"));
    assert_null (s_event (w, "{\"event\":\"plan\",\"status\":\"failed\",\"plan_id\":\"p5\",\"step\":0}"));
    /* a live script: any object; hostile shapes are ignored */
    change = s_event (w, "{\"event\":\"script\",\"status\":\"applied\",\"plan_id\":\"s1\",\"step\":1,\"total\":1}");
    assert_true (bmq_mcp_watch_touches (change, "blendmq://objects/Anything"));
    json_decref (change);
    assert_null (s_event (w, "{\"event\":\"script\",\"status\":\"refused\",\"plan_id\":\"s2\"}"));
    /* a scene command that changed the scene (reset_scene): any object, whoever asked */
    change = s_event (w, "{\"event\":\"scene\",\"status\":\"changed\",\"plan_id\":\"c1\",\"step\":0,\"total\":0,"
                         "\"operation\":\"reset_scene\"}");
    assert_true (bmq_mcp_watch_touches (change, "blendmq://objects/Anything"));
    assert_true (bmq_mcp_watch_touches (change, "blendmq://scene"));
    json_decref (change);
    assert_null (s_event (w, "{\"event\":\"scene\",\"status\":\"other\",\"plan_id\":\"c2\"}"));
    assert_null (s_event (w, "{\"event\":7,\"status\":[],\"plan_id\":{}}"));
    assert_null (s_event (w, "{\"event\":\"step\",\"status\":\"ok\",\"plan_id\":\"p6\",\"objects\":[1,null,{}],\"object\":[]}"));
    assert_null (s_event (w, "[]"));
    /* more plans than followed at once, each with more objects than kept: bounded, and "all" past the bound */
    for (int p = 0; p < 100; p++)
        for (int o = 0; o < 300; o++) {
            char text[200];
            snprintf (text, sizeof text, "{\"event\":\"step\",\"status\":\"ok\",\"plan_id\":\"q%d\",\"object\":\"o%d\"}", p, o);
            assert_null (s_event (w, text));
        }
    change = s_event (w, "{\"event\":\"plan\",\"status\":\"done\",\"plan_id\":\"q99\"}");
    assert_true (json_is_true (json_object_get (change, "all")));
    assert_true (json_array_size (json_object_get (change, "objects")) <= 256);
    json_decref (change);
    /* lost events: every subscription hears */
    change = bmq_mcp_watch_unknown ();
    out = json_array ();
    json_t *sub = json_integer (7);
    assert_int_equal (bmq_mcp_watch_notify (change, uris, sub, out), 3);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (json_object_get (json_array_get (out, 2), "params"), "_meta"),
                                                           "io.modelcontextprotocol/subscriptionId")), 7);
    json_decref (sub);
    json_decref (out);
    json_decref (change);
    json_decref (uris);
    bmq_mcp_watch_destroy (&w);
    bmq_mcp_watch_destroy (&w);
}

static void test_subscriptions_listen (void **state)
{
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    bmq_mcp_outcome_t out;
    json_t *e = NULL;
    const char *meta = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}";
    char text[600];
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":\"L1\",\"method\":\"subscriptions/listen\",\"params\":{%s,\"notifications\":"
              "{\"resourceSubscriptions\":[\"blendmq://scene\",\"blendmq://nope\",\"blendmq://objects/Cube\"],\"toolsListChanged\":true}}}", meta);
    json_t *msg = json_loads (text, 0, NULL);
    assert_int_equal (bmq_mcp_stateless_open (&s, msg, NULL, &e), 0);
    bmq_mcp_handle (s_mcp, &s, msg, &out);
    json_decref (msg);
    assert_null (out.response);
    assert_non_null (out.listen);
    assert_string_equal (json_string_value (json_object_get (out.listen, "method")), "notifications/subscriptions/acknowledged");
    json_t *params = json_object_get (out.listen, "params");
    assert_string_equal (json_string_value (json_object_get (json_object_get (params, "_meta"), "io.modelcontextprotocol/subscriptionId")), "L1");
    json_t *honoured = json_object_get (params, "notifications");
    assert_int_equal (json_array_size (json_object_get (honoured, "resourceSubscriptions")), 2);     /* the unknown one left out */
    assert_null (json_object_get (honoured, "toolsListChanged"));                                   /* our lists do not change */
    json_decref (out.listen);
    /* too many, or a malformed filter: -32602; a session's client has resources/subscribe instead */
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"subscriptions/listen\",\"params\":{%s,\"notifications\":"
              "{\"resourceSubscriptions\":\"blendmq://scene\"}}}", meta);
    json_t *r = s_rpc (s_mcp, &s, text, &out);
    assert_int_equal (s_error_code (r), -32602);
    json_decref (r);
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"subscriptions/listen\",\"params\":{%s,\"notifications\":"
              "{\"resourceSubscriptions\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]}}}", meta);
    r = s_rpc (s_mcp, &s, text, &out);
    assert_int_equal (s_error_code (r), -32602);
    json_decref (r);
    bmq_mcp_session_t old;
    bmq_mcp_session_init (&old);
    r = s_rpc (s_mcp, &old, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":{}}}", &out);
    assert_int_equal (s_error_code (r), -32601);
    json_decref (r);
    /* server/discover no longer says resources.subscribe is off */
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"server/discover\",\"params\":{%s}}", meta);
    r = s_rpc (s_mcp, &s, text, &out);
    assert_true (json_is_true (json_object_get (json_object_get (json_object_get (json_object_get (r, "result"), "capabilities"),
                                                                 "resources"), "subscribe")));
    json_decref (r);
    /* a listening session's calls do not tell their own commits again (the stream does) */
    r = s_rpc (s_mcp, &old, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}", &out);
    json_decref (r);
    json_decref (s_rpc (s_mcp, &old, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"blendmq://scene\"}}", &out));
    old.listening = true;
    s_rpc (s_mcp, &old, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_plan\",\"arguments\":"
                        "{\"plan\":[{\"operation\":\"a\"}]}}}", &out);
    json_t *sent = json_array ();
    assert_true (s_feed (out.call, out.request, BMQ_MSG_EXECUTE_RESULT, "{\"plan_id\":\"p\",\"status\":\"done\",\"steps_done\":1,\"steps_total\":1}", sent));
    for (size_t i = 0; i < json_array_size (sent); i++) {
        const char *m = json_string_value (json_object_get (json_array_get (sent, i), "method"));
        assert_true (!m || strcmp (m, "notifications/resources/updated"));
    }
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
}

/* ---- the audit trail as resources (mcp_audit.c): who reads which story -------------- */

static const char *s_trail =
    "{\"records\":["
    "{\"id\":9,\"ts\":9,\"cid\":\"C3\",\"kind\":\"request.end\",\"sender\":\"gateway\",\"data\":{\"outcome\":\"ok\",\"plan_id\":\"p-3\",\"duration_ms\":5}},"
    "{\"id\":8,\"ts\":8,\"cid\":\"C3\",\"kind\":\"request\",\"sender\":\"gateway\",\"data\":{\"request\":\"chat.request\",\"identity\":{\"name\":\"cli\",\"role\":\"operator\"}}},"
    "{\"id\":7,\"ts\":7,\"cid\":\"C2\",\"kind\":\"request\",\"sender\":\"gateway\",\"data\":{\"request\":\"inspect.request\",\"identity\":{\"name\":\"planner\",\"role\":\"service\"}}},"
    "{\"id\":6,\"ts\":6,\"cid\":\"C1\",\"kind\":\"request.end\",\"sender\":\"gateway\",\"data\":{\"outcome\":\"ok\",\"plan_id\":\"p-1\"}},"
    "{\"id\":5,\"ts\":5,\"cid\":\"C1\",\"kind\":\"request\",\"sender\":\"gateway\",\"data\":{\"request\":\"run.request\",\"identity\":{\"name\":\"mcp\",\"role\":\"operator\"}}},"
    "{\"id\":4,\"ts\":4,\"cid\":\"C0\",\"kind\":\"request.end\",\"sender\":\"gateway\",\"data\":\"not an object\"},"
    "{\"id\":3,\"ts\":3,\"kind\":\"request\",\"data\":{}},"
    "7]}";

/* resources/read of uri by a session of key `who` (role), fed `trail` as the audit's answer */
static json_t *s_read_audit (const char *who, bmq_role_t role, const char *version, const char *uri, const char *trail,
                             bmq_envelope_t **asked)
{
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    snprintf (s.who, sizeof s.who, "%s", who);
    s.role = role;
    snprintf (s.version, sizeof s.version, "%s", version);
    bmq_mcp_outcome_t out;
    char text[400];
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"%s\"}}", uri);
    assert_null (s_rpc (s_mcp, &s, text, &out));
    assert_non_null (out.call);
    assert_int_equal (out.request->type, BMQ_MSG_AUDIT_QUERY);
    json_t *sent = json_array ();
    assert_true (s_feed (out.call, out.request, BMQ_MSG_AUDIT_RESULT, trail, sent));
    json_t *last = json_incref (json_array_get (sent, json_array_size (sent) - 1));
    json_decref (sent);
    if (asked) *asked = out.request;
    else bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    return last;
}

static json_t *s_contents_json (const json_t *response)
{
    const char *text = json_string_value (json_object_get (json_array_get (json_object_get (json_object_get (response, "result"), "contents"), 0), "text"));
    return text ? json_loads (text, 0, NULL) : NULL;
}

static void test_audit_stories (void **state)
{
    /* listed: the stories resource and the story template; the tool behind them is no tool of tools/list nor of tools/call */
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    bmq_mcp_outcome_t out;
    json_t *r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}", &out);
    char *listed = json_dumps (r, 0);
    assert_non_null (strstr (listed, "\"blendmq://audit/stories\""));
    free (listed);
    json_decref (r);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/templates/list\"}", &out);
    listed = json_dumps (r, 0);
    assert_non_null (strstr (listed, "\"blendmq://audit/stories/{plan_id}\""));
    free (listed);
    json_decref (r);
    listed = json_dumps (bmq_mcp_tools_list (bmq_mcp_tools (s_mcp)), 0);
    assert_null (strstr (listed, "audit_query"));
    free (listed);
    r = s_rpc (s_mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"audit_query\",\"arguments\":{}}}", &out);
    assert_null (out.call);
    assert_int_equal (s_error_code (r), -32602);
    json_decref (r);

    /* the list: newest first; an agent's key (mcp, operator) sees its own stories only, services' look-ups never */
    bmq_envelope_t *asked = NULL;
    r = s_read_audit ("mcp", BMQ_ROLE_OPERATOR, "2025-11-25", "blendmq://audit/stories", s_trail, &asked);
    assert_string_equal (json_string_value (json_object_get (asked->body, "order")), "desc");
    assert_string_equal (json_string_value (json_object_get (json_object_get (asked->body, "filter"), "kind")), "request*");
    bmq_envelope_destroy (&asked);
    json_t *view = s_contents_json (r);
    json_t *stories = json_object_get (view, "stories");
    assert_int_equal (json_array_size (stories), 1);
    assert_string_equal (json_string_value (json_object_get (json_array_get (stories, 0), "story")), "C1");
    assert_string_equal (json_string_value (json_object_get (json_array_get (stories, 0), "plan_id")), "p-1");
    assert_string_equal (json_string_value (json_object_get (json_array_get (stories, 0), "started_by")), "mcp");
    assert_string_equal (json_string_value (json_object_get (json_array_get (stories, 0), "outcome")), "ok");
    json_decref (view);
    json_decref (r);
    /* a person (reviewer) sees every person's and agent's story, newest first */
    r = s_read_audit ("bob", BMQ_ROLE_REVIEWER, "2025-11-25", "blendmq://audit/stories", s_trail, NULL);
    view = s_contents_json (r);
    stories = json_object_get (view, "stories");
    assert_int_equal (json_array_size (stories), 2);
    assert_string_equal (json_string_value (json_object_get (json_array_get (stories, 0), "story")), "C3");
    assert_string_equal (json_string_value (json_object_get (json_array_get (stories, 0), "request")), "chat.request");
    assert_string_equal (json_string_value (json_object_get (json_array_get (stories, 1), "story")), "C1");
    json_decref (view);
    json_decref (r);

    /* one story: the plan filter asked of the audit; another key's story is not found (as if it did not exist) */
    const char *story3 = "{\"records\":["
        "{\"ts\":8,\"cid\":\"C3\",\"kind\":\"request\",\"sender\":\"gateway\",\"data\":{\"identity\":{\"name\":\"cli\",\"role\":\"operator\"}}},"
        "{\"ts\":9,\"cid\":\"C3\",\"kind\":\"plan.end\",\"sender\":\"executor\",\"plan_id\":\"p-3\",\"data\":{\"status\":\"done\"}}]}";
    r = s_read_audit ("mcp", BMQ_ROLE_OPERATOR, "2025-11-25", "blendmq://audit/stories/p-3", story3, &asked);
    assert_string_equal (json_string_value (json_object_get (json_object_get (asked->body, "filter"), "plan")), "p-3");
    bmq_envelope_destroy (&asked);
    assert_int_equal (s_error_code (r), -32002);
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_object_get (r, "error"), "data"), "uri")),
                         "blendmq://audit/stories/p-3");
    json_decref (r);
    r = s_read_audit ("mcp", BMQ_ROLE_OPERATOR, "2026-07-28", "blendmq://audit/stories/p-3", story3, NULL);
    assert_int_equal (s_error_code (r), -32602);                       /* SEP-2164 */
    json_decref (r);
    r = s_read_audit ("cli", BMQ_ROLE_OPERATOR, "2025-11-25", "blendmq://audit/stories/p-3", story3, NULL);
    view = s_contents_json (r);
    assert_int_equal (json_array_size (json_object_get (view, "records")), 2);
    assert_string_equal (json_string_value (json_object_get (view, "started_by")), "cli");
    assert_string_equal (json_string_value (json_object_get (json_array_get (json_object_get (view, "records"), 1), "kind")), "plan.end");
    json_decref (view);
    json_decref (r);
    r = s_read_audit ("admin", BMQ_ROLE_ADMIN, "2025-11-25", "blendmq://audit/stories/p-3", story3, NULL);
    view = s_contents_json (r);
    assert_int_equal (json_array_size (json_object_get (view, "records")), 2);
    json_decref (view);
    json_decref (r);
    /* no such plan, and a hostile answer: not found, no crash */
    r = s_read_audit ("admin", BMQ_ROLE_ADMIN, "2025-11-25", "blendmq://audit/stories/p-9", "{\"records\":[]}", NULL);
    assert_int_equal (s_error_code (r), -32002);
    json_decref (r);
    r = s_read_audit ("admin", BMQ_ROLE_ADMIN, "2025-11-25", "blendmq://audit/stories/p-9", "{\"records\":[1,\"x\",{\"kind\":7}]}", NULL);
    assert_int_equal (s_error_code (r), -32002);
    json_decref (r);
}

/* The conformance suite's fixtures (gateway.mcp_test_tools): static resources,
 * a template, prompts, and tools that ask the client before they answer. */
static void test_conformance_fixtures (void **state)
{
    char err[256];
    bmq_mcp_options_t o = { .test_tools = true, .request_timeout_ms = 1000 };
    bmq_mcp_t *mcp = bmq_mcp_new (&o, err, sizeof err);
    assert_non_null (mcp);
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    bmq_mcp_outcome_t out;
    json_t *r = s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"test://template/123/data\"}}", &out);
    const char *text = json_string_value (json_object_get (json_array_get (json_object_get (json_object_get (r, "result"), "contents"), 0), "text"));
    assert_string_equal (text, "{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}");
    json_decref (r);
    r = s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"test://static-binary\"}}", &out);
    assert_non_null (json_object_get (json_array_get (json_object_get (json_object_get (r, "result"), "contents"), 0), "blob"));
    json_decref (r);
    r = s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{\"name\":\"test_prompt_with_arguments\","
                        "\"arguments\":{\"arg1\":\"v1\",\"arg2\":\"v2\"}}}", &out);
    char *dump = json_dumps (r, 0);
    assert_non_null (strstr (dump, "arg1='v1', arg2='v2'"));
    free (dump);
    json_decref (r);
    /* elicitation: without an event stream the tool says why; with one, it asks and answers with what the user said */
    s.can_ask = false;
    r = s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"test_elicitation\",\"arguments\":{\"message\":\"who?\"}}}", &out);
    assert_true (json_is_true (json_object_get (json_object_get (r, "result"), "isError")));
    json_decref (r);
    s.can_ask = true;
    assert_null (s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"test_elicitation\",\"arguments\":{\"message\":\"who?\"}}}", &out));
    assert_non_null (out.call);
    json_t *sent = json_array ();
    assert_false (bmq_mcp_call_tick (out.call, bmq_mono_ms (), sent));
    json_t *ask = json_array_get (sent, 0);
    assert_string_equal (json_string_value (json_object_get (ask, "method")), "elicitation/create");
    assert_string_equal (json_string_value (json_object_get (json_object_get (ask, "params"), "message")), "who?");
    assert_true (bmq_mcp_call_awaits (out.call, json_object_get (ask, "id")));
    json_t *answer = json_pack ("{s:s, s:O, s:{s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", json_object_get (ask, "id"), "result",
                                "action", "accept", "content", "username", "testuser");
    bmq_envelope_t *request = NULL;
    assert_true (bmq_mcp_call_answer (out.call, answer, sent, &request));
    assert_null (request);
    text = json_string_value (json_object_get (json_array_get (json_object_get (s_result (sent), "content"), 0), "text"));
    assert_non_null (strstr (text, "testuser"));
    json_decref (answer);
    json_decref (sent);
    bmq_mcp_call_destroy (&out.call);
    bmq_mcp_destroy (&mcp);
}

/* 2026-07-28 and security.mcp_confirm: elicitation: confirm_script asks the
 * person through an input-required result (the sha256 and the script shown),
 * the script's id and sha256 signed into its requestState; the second call
 * with the answer sends script.confirm; a changed state applies nothing. */
static void test_confirm_by_input_required_result (void **state)
{
    char err[256];
    bmq_mcp_options_t eo = { .request_timeout_ms = 5000, .confirm_by_elicitation = true };
    bmq_mcp_t *mcp = bmq_mcp_new (&eo, err, sizeof err);
    assert_non_null (mcp);
    const char *sha = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    const char *meta = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                       "\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}}}";
    char text[2048];
    snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"confirm_script\","
              "\"arguments\":{\"script_id\":\"abc\",\"sha256\":\"%s\"},%s}}", sha, meta);
    json_t *msg = json_loads (text, 0, NULL), *error = NULL;
    bmq_mcp_session_t s;
    bmq_mcp_session_init (&s);
    assert_int_equal (bmq_mcp_stateless_open (&s, msg, "2026-07-28", &error), 0);
    snprintf (s.who, sizeof s.who, "desk");
    s.role = BMQ_ROLE_OPERATOR_REVIEWER;
    bmq_mcp_outcome_t out;
    bmq_mcp_handle (mcp, &s, msg, &out);
    json_decref (msg);
    assert_non_null (out.call);
    assert_string_equal (bmq_msg_type_name (out.request->type), "script.list");
    json_t *sent = json_array ();
    char listing[512];
    snprintf (listing, sizeof listing, "{\"scripts\":[{\"script_id\":\"abc\",\"sha256\":\"%s\",\"ok\":true,\"applied\":false,"
              "\"lines\":1,\"script\":\"import bpy\"}]}", sha);
    bmq_envelope_t *env = bmq_envelope_reply (out.request, bmq_msg_type_from_name ("script.listing"), json_loads (listing, 0, NULL));
    assert_true (bmq_mcp_call_feed (out.call, env, sent));
    bmq_envelope_destroy (&env);
    json_t *result = s_result (sent);
    assert_string_equal (json_string_value (json_object_get (result, "resultType")), "input_required");
    json_t *ask = json_object_get (json_object_get (result, "inputRequests"), "confirm");
    assert_string_equal (json_string_value (json_object_get (ask, "method")), "elicitation/create");
    const char *question = json_string_value (json_object_get (json_object_get (ask, "params"), "message"));
    assert_non_null (strstr (question, sha));
    assert_non_null (strstr (question, "import bpy"));
    char *state_text = strdup (json_string_value (json_object_get (result, "requestState")));
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    for (int round = 0; round < 3; round++) {       /* 0: tampered state, 1: declined, 2: accepted */
        char *st = strdup (state_text);
        if (round == 0) st[strlen (st) - 1] = st[strlen (st) - 1] == '0' ? '1' : '0';
        snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"confirm_script\","
                  "\"arguments\":{\"script_id\":\"abc\",\"sha256\":\"%s\"},\"requestState\":\"%s\",\"inputResponses\":{\"confirm\":"
                  "{\"action\":\"%s\",\"content\":{\"confirm\":true}}},%s}}", sha, st, round == 1 ? "decline" : "accept", meta);
        free (st);
        msg = json_loads (text, 0, NULL);
        bmq_mcp_handle (mcp, &s, msg, &out);
        json_decref (msg);
        if (round < 2) {
            assert_null (out.call);
            assert_null (out.request);
            assert_true (json_is_true (json_object_get (json_object_get (out.response, "result"), "isError")));
            json_decref (out.response);
            continue;
        }
        assert_non_null (out.call);
        assert_int_equal (out.request->type, BMQ_MSG_SCRIPT_CONFIRM);
        assert_string_equal (json_string_value (json_object_get (out.request->body, "sha256")), sha);
        assert_string_equal (json_string_value (json_object_get (out.request->body, "channel")), "mcp-elicitation");
        bmq_envelope_destroy (&out.request);
        bmq_mcp_call_destroy (&out.call);
    }
    free (state_text);
    bmq_mcp_destroy (&mcp);
}

/* The tasks extension: fixture tasks through the server (created, polled,
 * asking, updated, cancelled, a token's own), and a task the transport runs. */
static void test_tasks (void **state)
{
    char err[256];
    bmq_mcp_options_t o = { .test_tools = true, .request_timeout_ms = 1000 };
    bmq_mcp_t *mcp = bmq_mcp_new (&o, err, sizeof err);
    bmq_mcp_session_t s, other;
    bmq_mcp_session_init (&s);
    snprintf (s.version, sizeof s.version, "2026-07-28");
    s.stateless = s.tasks = true;
    snprintf (s.who, sizeof s.who, "mcp");
    s.role = BMQ_ROLE_OPERATOR;
    other = s;
    snprintf (other.who, sizeof other.who, "someone");
    bmq_mcp_outcome_t out;
    json_t *r = s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow_compute\",\"arguments\":{\"seconds\":0,\"label\":\"x\"}}}", &out);
    json_t *created = json_object_get (r, "result");
    assert_string_equal (json_string_value (json_object_get (created, "resultType")), "task");
    assert_non_null (json_object_get (created, "createdAt"));
    assert_null (json_object_get (created, "result"));
    char get[300], id[40];
    snprintf (id, sizeof id, "%s", json_string_value (json_object_get (created, "taskId")));
    json_decref (r);
    snprintf (get, sizeof get, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"%s\"}}", id);
    r = s_rpc (mcp, &s, get, &out);
    assert_string_equal (json_string_value (json_object_get (json_object_get (r, "result"), "status")), "completed");
    char *dump = json_dumps (r, 0);
    assert_non_null (strstr (dump, "Computed x in 0 s"));
    free (dump);
    json_decref (r);
    r = s_rpc (mcp, &other, get, &out);                               /* another token's task: not found */
    assert_int_equal (s_error_code (r), -32602);
    json_decref (r);
    s.tasks = false;                                                  /* not declared: -32021 */
    r = s_rpc (mcp, &s, get, &out);
    assert_int_equal (s_error_code (r), -32021);
    json_decref (r);
    r = s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"failing_job\"}}", &out);
    assert_int_equal (s_error_code (r), -32021);                      /* task support required */
    json_decref (r);
    s.tasks = true;
    /* a task that asks the client: input_required, then tasks/update, then completed */
    r = s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"confirm_delete\",\"arguments\":{}}}", &out);
    snprintf (id, sizeof id, "%s", json_string_value (json_object_get (json_object_get (r, "result"), "taskId")));
    json_decref (r);
    snprintf (get, sizeof get, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"%s\"}}", id);
    r = s_rpc (mcp, &s, get, &out);
    assert_string_equal (json_string_value (json_object_get (json_object_get (r, "result"), "status")), "input_required");
    assert_non_null (json_object_get (json_object_get (json_object_get (r, "result"), "inputRequests"), "confirm"));
    json_decref (r);
    char update[400];
    snprintf (update, sizeof update, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tasks/update\",\"params\":{\"taskId\":\"%s\","
              "\"inputResponses\":{\"confirm\":{\"action\":\"accept\",\"content\":{\"confirm\":true}}}}}", id);
    r = s_rpc (mcp, &s, update, &out);
    assert_int_equal (json_object_size (json_object_get (r, "result")), 0);     /* an ack */
    json_decref (r);
    r = s_rpc (mcp, &s, get, &out);
    dump = json_dumps (r, 0);
    assert_non_null (strstr (dump, "\"completed\""));
    assert_non_null (strstr (dump, "Deleted: true"));
    free (dump);
    json_decref (r);
    /* cancel: an ack; the status says cancelled; again: the same ack */
    r = s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"slow_compute\",\"arguments\":{\"seconds\":60}}}", &out);
    snprintf (id, sizeof id, "%s", json_string_value (json_object_get (json_object_get (r, "result"), "taskId")));
    json_decref (r);
    for (int i = 0; i < 2; i++) {
        snprintf (get, sizeof get, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tasks/cancel\",\"params\":{\"taskId\":\"%s\"}}", id);
        r = s_rpc (mcp, &s, get, &out);
        assert_int_equal (json_object_size (json_object_get (r, "result")), 0);
        json_decref (r);
    }
    snprintf (get, sizeof get, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"%s\"}}", id);
    r = s_rpc (mcp, &s, get, &out);
    assert_string_equal (json_string_value (json_object_get (json_object_get (r, "result"), "status")), "cancelled");
    json_decref (r);
    /* execute_plan from a client with the extension: the transport runs it as a task */
    s_rpc (mcp, &s, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_plan\",\"arguments\":"
                    "{\"plan\":[{\"operation\":\"a\"}]}}}", &out);
    assert_true (out.as_task);
    assert_non_null (out.call);
    bmq_mcp_tasks_t *tasks = bmq_mcp_tasks (mcp);
    char tid[40];
    json_t *start = bmq_mcp_tasks_start (tasks, "mcp", tid, sizeof tid);
    json_decref (start);
    json_t *sent = json_array ();
    assert_false (s_feed (out.call, out.request, BMQ_MSG_PROGRESS, "{\"plan_id\":\"p\",\"step\":1,\"total\":1,\"status\":\"ok\",\"event\":\"step\","
                                                                   "\"operation\":\"a\",\"duration_ms\":1.0}", sent));
    json_t *progress = json_array_get (sent, 0);                         /* its steps: the task's statusMessage */
    bmq_mcp_tasks_note (tasks, tid, json_string_value (json_object_get (json_object_get (progress, "params"), "message")));
    assert_true (s_feed (out.call, out.request, BMQ_MSG_EXECUTE_RESULT, "{\"plan_id\":\"p\",\"status\":\"done\",\"steps_done\":1,\"steps_total\":1}", sent));
    bmq_mcp_tasks_settle (tasks, tid, json_array_get (sent, json_array_size (sent) - 1));
    assert_false (bmq_mcp_tasks_cancelled (tasks, tid));
    json_t *params = json_pack ("{s:s}", "taskId", tid);
    int code = 0;
    json_t *got = bmq_mcp_tasks_request (tasks, "mcp", "tasks/get", params, &code, err, sizeof err);
    assert_string_equal (json_string_value (json_object_get (got, "status")), "completed");
    assert_string_equal (json_string_value (json_object_get (json_object_get (json_object_get (got, "result"), "structuredContent"), "status")), "done");
    assert_non_null (strstr (json_string_value (json_object_get (got, "statusMessage")), "step 1/1"));
    json_decref (got);
    json_decref (params);
    json_decref (sent);
    bmq_envelope_destroy (&out.request);
    bmq_mcp_call_destroy (&out.call);
    bmq_mcp_destroy (&mcp);
}

/* SEP-2243: a parameter marked x-mcp-header must be repeated in its
 * Mcp-Param-<Name> header, as is or as strict =?base64?…?=. */
static const char *s_one_header;
static const char *s_lookup (void *ctx, const char *name)
{
    (void) ctx;
    return !strcmp (name, "Mcp-Param-Region") ? s_one_header : NULL;
}

static void test_param_headers (void **state)
{
    char err[300];
    bmq_mcp_options_t o = { .test_tools = true, .request_timeout_ms = 1000 };
    bmq_mcp_t *mcp = bmq_mcp_new (&o, err, sizeof err);
    static const struct { const char *body, *header; int rc; } cases[] = {
        { "Hello", "Hello", 0 }, { "Hello", "  Hello ", 0 }, { "Hello", "=?base64?SGVsbG8=?=", 0 },
        { "Hello", "=?base64?SGVsbG8?=", -1 },              /* padding missing */
        { "Hello", "=?base64?SGVs!!!bG8=?=", -1 },          /* not the alphabet */
        { "SGVsbG8=", "SGVsbG8=", 0 },                       /* no wrapper: literal */
        { "=?base64?SGVsbG8=", "=?base64?SGVsbG8=", 0 },     /* no ?= suffix: literal */
        { "Hello", NULL, -1 },                               /* missing */
        { "Hello", "Bye", -1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *msg = json_pack ("{s:s, s:i, s:s, s:{s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", 1, "method", "tools/call",
                                 "params", "name", "test_region", "arguments", "region", cases[i].body);
        s_one_header = cases[i].header;
        int rc = bmq_mcp_param_headers_check (mcp, msg, s_lookup, NULL, err, sizeof err);
        if (rc != cases[i].rc) fprintf (stderr, "case %zu: %s / %s: %d (%s)\n", i, cases[i].body, cases[i].header, rc, err);
        assert_int_equal (rc, cases[i].rc);
        json_decref (msg);
    }
    json_t *other = json_pack ("{s:s, s:i, s:s, s:{s:s}}", "jsonrpc", "2.0", "id", 1, "method", "tools/call", "params", "name", "test_simple_text");
    s_one_header = NULL;
    assert_int_equal (bmq_mcp_param_headers_check (mcp, other, s_lookup, NULL, err, sizeof err), 0);     /* no such parameter */
    json_decref (other);
    bmq_mcp_destroy (&mcp);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_tool_list),
        cmocka_unit_test (test_lifecycle),
        cmocka_unit_test (test_execute_plan_progress_and_result),
        cmocka_unit_test (test_rejection_error_deadline),
        cmocka_unit_test (test_bad_arguments_and_unavailable_tools),
        cmocka_unit_test (test_confirm_script_forwards_sha256),
        cmocka_unit_test (test_confirm_script_person_default),
        cmocka_unit_test (test_cancel_and_image),
        cmocka_unit_test (test_look),
        cmocka_unit_test (test_generate_3d),
        cmocka_unit_test (test_generate_3d_images),
        cmocka_unit_test (test_resources),
        cmocka_unit_test (test_prompts_and_completion),
        cmocka_unit_test (test_conformance_fixtures),
        cmocka_unit_test (test_confirm_by_input_required_result),
        cmocka_unit_test (test_tasks),
        cmocka_unit_test (test_param_headers),
        cmocka_unit_test (test_watch),
        cmocka_unit_test (test_subscriptions_listen),
        cmocka_unit_test (test_audit_stories),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
