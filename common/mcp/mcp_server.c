/* mcp_server — JSON-RPC dispatch for MCP. */
#include "mcp_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_versions[] = { BMQ_MCP_LATEST_VERSION, "2025-06-18", "2025-03-26", NULL };

static const char *s_instructions =
    "blendmq builds things in Blender from validated plans. Call discover_capabilities, "
    "write a plan (a JSON array of steps: operation, params, name to name what a step creates, "
    "target to act on a named object), check it with validate_plan, then execute_plan. "
    "Or hand a plain request to chat.";

struct bmq_mcp_t {
    bmq_mcp_options_t opts;
    bmq_mcp_tools_t  *tools;
};

bmq_mcp_t *bmq_mcp_new (const bmq_mcp_options_t *opts, char *err, size_t errlen)
{
    bmq_mcp_tools_t *tools = bmq_mcp_tools_new (opts->test_tools, err, errlen);
    if (!tools) return NULL;
    bmq_mcp_t *self = calloc (1, sizeof *self);
    self->opts = *opts;
    self->tools = tools;
    return self;
}

void bmq_mcp_destroy (bmq_mcp_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_mcp_tools_destroy (&(*self_p)->tools);
    free (*self_p);
    *self_p = NULL;
}

const bmq_mcp_tools_t *bmq_mcp_tools (const bmq_mcp_t *self) { return self->tools; }

void bmq_mcp_session_init (bmq_mcp_session_t *session)
{
    memset (session, 0, sizeof *session);
    session->log_level = bmq_mcp_log_level ("info");
}

bool bmq_mcp_version_supported (const char *version)
{
    for (int i = 0; version && s_versions[i]; i++)
        if (!strcmp (version, s_versions[i])) return true;
    return false;
}

json_t *bmq_mcp_error (const json_t *id, int code, const char *message)
{
    return json_pack ("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null (),
                      "error", "code", code, "message", message);
}

static json_t *s_result (const json_t *id, json_t *result)
{
    return json_pack ("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

bool bmq_mcp_is_request (const json_t *msg)
{
    json_t *id = json_object_get (msg, "id");
    return json_is_string (json_object_get (msg, "method")) && (json_is_string (id) || json_is_integer (id));
}

bool bmq_mcp_is_initialize (const json_t *msg)
{
    const char *method = json_string_value (json_object_get (msg, "method"));
    return bmq_mcp_is_request (msg) && method && !strcmp (method, "initialize");
}

static json_t *s_initialize (bmq_mcp_session_t *session, const json_t *id, const json_t *params)
{
    const char *asked = json_string_value (json_object_get (params, "protocolVersion"));
    if (!json_is_object (params) || !asked) return bmq_mcp_error (id, -32602, "initialize needs params.protocolVersion");
    snprintf (session->version, sizeof session->version, "%s", bmq_mcp_version_supported (asked) ? asked : BMQ_MCP_LATEST_VERSION);
    session->elicitation = json_is_object (json_object_get (json_object_get (params, "capabilities"), "elicitation"));
    json_t *info = json_object_get (params, "clientInfo");
    snprintf (session->client, sizeof session->client, "%.60s %.30s",
              json_string_value (json_object_get (info, "name")) ? json_string_value (json_object_get (info, "name")) : "?",
              json_string_value (json_object_get (info, "version")) ? json_string_value (json_object_get (info, "version")) : "");
    return s_result (id, json_pack ("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s, s:s}, s:s}",
                                    "protocolVersion", session->version,
                                    "capabilities", "tools", "listChanged", 0, "logging",
                                    "serverInfo", "name", "blendmq", "title", "blendmq: build in Blender from validated plans",
                                    "version", "0.1.0",
                                    "instructions", s_instructions));
}

static void s_notification (bmq_mcp_session_t *session, const char *method, const json_t *params, bmq_mcp_outcome_t *out)
{
    if (!strcmp (method, "notifications/initialized")) session->initialized = true;
    else if (!strcmp (method, "notifications/cancelled")) {
        json_t *rid = json_object_get (params, "requestId");
        if (json_is_string (rid) || json_is_integer (rid)) out->cancel_id = json_incref (rid);
    }
    /* anything else (progress from a client, roots changes…) needs nothing from us */
}

void bmq_mcp_handle (bmq_mcp_t *self, bmq_mcp_session_t *session, const json_t *msg, bmq_mcp_outcome_t *out)
{
    memset (out, 0, sizeof *out);
    const char *jsonrpc = json_string_value (json_object_get (msg, "jsonrpc"));
    if (!json_is_object (msg) || !jsonrpc || strcmp (jsonrpc, "2.0")) {
        out->response = bmq_mcp_error (NULL, -32600, "Invalid Request: expected a JSON-RPC 2.0 object");
        return;
    }
    const char *method = json_string_value (json_object_get (msg, "method"));
    json_t *id = json_object_get (msg, "id");
    json_t *params = json_object_get (msg, "params");
    if (!method) {                                         /* a response to us: an elicitation's answer */
        if ((json_is_string (id) || json_is_integer (id)) && (json_object_get (msg, "result") || json_object_get (msg, "error")))
            out->answer = json_incref ((json_t *) msg);
        return;
    }
    if (!id) { s_notification (session, method, params, out); return; }
    if (!json_is_string (id) && !json_is_integer (id)) {
        out->response = bmq_mcp_error (NULL, -32600, "Invalid Request: id must be a string or an integer");
        return;
    }
    if (params && !json_is_object (params)) { out->response = bmq_mcp_error (id, -32602, "params must be an object"); return; }
    if (!strcmp (method, "initialize")) out->response = s_initialize (session, id, params);
    else if (!strcmp (method, "ping")) out->response = s_result (id, json_object ());
    else if (!strcmp (method, "tools/list")) out->response = s_result (id, json_deep_copy (bmq_mcp_tools_list (self->tools)));
    else if (!strcmp (method, "logging/setLevel")) {
        int level = bmq_mcp_log_level (json_string_value (json_object_get (params, "level")));
        if (level < 0) out->response = bmq_mcp_error (id, -32602, "level must be one of debug, info, notice, warning, error, critical, alert, emergency");
        else {
            session->log_level = level;
            out->response = s_result (id, json_object ());
        }
    }
    else if (!strcmp (method, "tools/call")) {
        if (!params) { out->response = bmq_mcp_error (id, -32602, "tools/call needs params"); return; }
        bmq_mcp_caller_t caller = { .name = session->who[0] ? session->who : NULL, .role = session->role,
                                    .client = session->client, .elicitation = session->elicitation, .can_ask = session->can_ask,
                                    .confirm_by_elicitation = self->opts.confirm_by_elicitation };
        out->call = bmq_mcp_call_start (self->tools, &caller, id, params, session->log_level, self->opts.request_timeout_ms,
                                        &out->response, &out->request);
    }
    else {
        char text[200];
        snprintf (text, sizeof text, "Method not found: %.100s", method);
        out->response = bmq_mcp_error (id, -32601, text);
    }
}
