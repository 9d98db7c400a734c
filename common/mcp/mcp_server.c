/* mcp_server — JSON-RPC dispatch for MCP. */
#include "mcp_server.h"
#include "mcp_surface.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_versions[] = { BMQ_MCP_STATELESS_VERSION, BMQ_MCP_LATEST_VERSION, "2025-06-18", "2025-03-26", NULL };

#define META_VERSION      "io.modelcontextprotocol/protocolVersion"
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_CLIENT       "io.modelcontextprotocol/clientInfo"
#define META_LOG_LEVEL    "io.modelcontextprotocol/logLevel"
#define LOG_NONE          8            /* above emergency: no notifications/message */

/* Caching hints (SEP-2549): lists change only with a new build; what Blender holds, any time. */
static json_t *s_cacheable (json_t *result, int ttl_ms, const char *scope)
{
    json_object_set_new (result, "ttlMs", json_integer (ttl_ms));
    json_object_set_new (result, "cacheScope", json_string (scope));
    return result;
}

static const char *s_instructions =
    "blendmq builds things in Blender from validated plans. Call discover_capabilities, "
    "write a plan (a JSON array of steps: operation, params, name to name what a step creates, "
    "target to act on a named object), check it with validate_plan, then execute_plan. "
    "Or hand a plain request to chat.";

struct bmq_mcp_t {
    bmq_mcp_options_t opts;
    bmq_mcp_tools_t  *tools;
    bmq_mcp_surface_t *surface;
    bmq_mcp_tasks_t  *tasks;
};

bmq_mcp_t *bmq_mcp_new (const bmq_mcp_options_t *opts, char *err, size_t errlen)
{
    bmq_mcp_tools_t *tools = bmq_mcp_tools_new (opts->test_tools, err, errlen);
    if (!tools) return NULL;
    bmq_mcp_surface_t *surface = bmq_mcp_surface_new (opts->test_tools, err, errlen);
    if (!surface) { bmq_mcp_tools_destroy (&tools); return NULL; }
    bmq_mcp_t *self = calloc (1, sizeof *self);
    self->opts = *opts;
    self->tools = tools;
    self->surface = surface;
    self->tasks = bmq_mcp_tasks_new ();
    return self;
}

void bmq_mcp_destroy (bmq_mcp_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_mcp_tools_destroy (&(*self_p)->tools);
    bmq_mcp_surface_destroy (&(*self_p)->surface);
    bmq_mcp_tasks_destroy (&(*self_p)->tasks);
    free (*self_p);
    *self_p = NULL;
}

const bmq_mcp_tools_t *bmq_mcp_tools (const bmq_mcp_t *self) { return self->tools; }
bmq_mcp_tasks_t *bmq_mcp_tasks (bmq_mcp_t *self) { return self->tasks; }

/* Long work a client may follow as a task: plans, chat, imports, generations, sandboxed scripts. */
static bool s_long_running (const bmq_mcp_tool_t *tool)
{
    return tool && (tool->kind == BMQ_TOOL_EXECUTE || tool->kind == BMQ_TOOL_CHAT || tool->kind == BMQ_TOOL_IMPORT
                    || tool->kind == BMQ_TOOL_GENERATE || (tool->request_name && !strcmp (tool->request_name, "script.request")));
}

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

bool bmq_mcp_session_version (const char *version)
{
    return bmq_mcp_version_supported (version) && strcmp (version, BMQ_MCP_STATELESS_VERSION);
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

static json_t *s_capabilities (void)
{
    return json_pack ("{s:{s:b}, s:{}, s:{s:b, s:b}, s:{s:b}, s:{}}", "tools", "listChanged", 0, "logging",
                      "resources", "subscribe", 1, "listChanged", 0, "prompts", "listChanged", 0, "completions");
}

static json_t *s_initialize (bmq_mcp_session_t *session, const json_t *id, const json_t *params)
{
    const char *asked = json_string_value (json_object_get (params, "protocolVersion"));
    if (!json_is_object (params) || !asked) return bmq_mcp_error (id, -32602, "initialize needs params.protocolVersion");
    snprintf (session->version, sizeof session->version, "%s",
              bmq_mcp_version_supported (asked) && strcmp (asked, BMQ_MCP_STATELESS_VERSION) ? asked : BMQ_MCP_LATEST_VERSION);
    session->sampling = json_is_object (json_object_get (json_object_get (params, "capabilities"), "sampling"));
    session->roots = json_is_object (json_object_get (json_object_get (params, "capabilities"), "roots"));
    session->elicitation = json_is_object (json_object_get (json_object_get (params, "capabilities"), "elicitation"));
    json_t *info = json_object_get (params, "clientInfo");
    snprintf (session->client, sizeof session->client, "%.60s %.30s",
              json_string_value (json_object_get (info, "name")) ? json_string_value (json_object_get (info, "name")) : "?",
              json_string_value (json_object_get (info, "version")) ? json_string_value (json_object_get (info, "version")) : "");
    return s_result (id, json_pack ("{s:s, s:o, s:{s:s, s:s, s:s}, s:s}",
                                    "protocolVersion", session->version, "capabilities", s_capabilities (),
                                    "serverInfo", "name", "blendmq", "title", "blendmq: build in Blender from validated plans",
                                    "version", "0.1.0",
                                    "instructions", s_instructions));
}

/* server/discover (2026-07-28): what initialize told, without a session. */
static json_t *s_discover (const json_t *id)
{
    json_t *versions = json_array ();
    for (int i = 0; s_versions[i]; i++) json_array_append_new (versions, json_string (s_versions[i]));
    json_t *caps = s_capabilities ();
    json_object_del (caps, "logging");                 /* per-request log levels; logging/setLevel is gone */
    /* resources/subscribe is gone in 2026-07-28: subscriptions/listen carries resourceSubscriptions */
    json_object_set_new (caps, "extensions", json_pack ("{s:{}}", BMQ_MCP_TASKS_EXTENSION));
    return s_result (id, json_pack ("{s:o, s:o, s:{s:s, s:s, s:s}, s:s, s:{s:{s:s, s:s}}, s:i, s:s}", "supportedVersions", versions,
                                    "capabilities", caps, "serverInfo", "name", "blendmq", "title",
                                    "blendmq: build in Blender from validated plans", "version", "0.1.0",
                                    "instructions", s_instructions,
                                    "_meta", "io.modelcontextprotocol/serverInfo", "name", "blendmq", "version", "0.1.0",
                                    "ttlMs", 3600000, "cacheScope", "public"));
}

void bmq_mcp_stateless_result (json_t *msg)
{
    json_t *result = json_object_get (msg, "result");
    if (json_is_object (result) && !json_object_get (result, "resultType"))
        json_object_set_new (result, "resultType", json_string ("complete"));
}

const char *bmq_mcp_request_version (const json_t *msg)
{
    return json_string_value (json_object_get (json_object_get (json_object_get (msg, "params"), "_meta"), META_VERSION));
}

int bmq_mcp_stateless_open (bmq_mcp_session_t *session, const json_t *msg, const char *header_version, json_t **error)
{
    *error = NULL;
    const json_t *id = json_object_get (msg, "id");
    json_t *meta = json_object_get (json_object_get (msg, "params"), "_meta");
    const char *version = json_string_value (json_object_get (meta, META_VERSION));
    json_t *caps = json_object_get (meta, META_CAPABILITIES);
    if (!json_is_object (meta) || !version || !json_is_object (caps)) {
        *error = bmq_mcp_error (id, -32602, "Invalid params: a request without a session needs params._meta with "
                                META_VERSION " and " META_CAPABILITIES);
        return 400;
    }
    if (header_version && strcmp (header_version, version)) {
        *error = bmq_mcp_error (id, -32020, "Header mismatch: MCP-Protocol-Version and _meta's protocolVersion differ");
        return 400;
    }
    if (strcmp (version, BMQ_MCP_STATELESS_VERSION)) {
        json_t *supported = json_array ();
        for (int i = 0; s_versions[i]; i++) json_array_append_new (supported, json_string (s_versions[i]));
        *error = bmq_mcp_error (id, -32022, "Unsupported protocol version for a request without a session: "
                                "initialize a session for 2025-11-25 and older");
        json_object_set_new (json_object_get (*error, "error"), "data", json_pack ("{s:o, s:s}", "supported", supported, "requested", version));
        return 400;
    }
    snprintf (session->version, sizeof session->version, "%s", version);
    session->stateless = true;
    session->initialized = true;
    session->elicitation = json_is_object (json_object_get (caps, "elicitation"));
    session->sampling = json_is_object (json_object_get (caps, "sampling"));
    session->roots = json_is_object (json_object_get (caps, "roots"));
    session->tasks = json_is_object (json_object_get (json_object_get (caps, "extensions"), BMQ_MCP_TASKS_EXTENSION));
    json_t *info = json_object_get (meta, META_CLIENT);
    snprintf (session->client, sizeof session->client, "%.60s %.30s",
              json_string_value (json_object_get (info, "name")) ? json_string_value (json_object_get (info, "name")) : "?",
              json_string_value (json_object_get (info, "version")) ? json_string_value (json_object_get (info, "version")) : "");
    int level = bmq_mcp_log_level (json_string_value (json_object_get (meta, META_LOG_LEVEL)));
    session->log_level = level >= 0 ? level : LOG_NONE;       /* no level asked: no log messages */
    return 0;
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

static bmq_mcp_caller_t s_caller (const bmq_mcp_t *self, const bmq_mcp_session_t *session)
{
    return (bmq_mcp_caller_t) { .name = session->who[0] ? session->who : NULL, .role = session->role,
                                .client = session->client, .elicitation = session->elicitation, .can_ask = session->can_ask,
                                .confirm_by_elicitation = self->opts.confirm_by_elicitation, .stateless = session->stateless };
}

static json_t *s_subscriptions (const bmq_mcp_session_t *session)
{
    if (session->listening) return NULL;               /* the GET stream tells them (mcp_watch.h) */
    json_t *uris = json_array ();
    for (int i = 0; i < session->subscriptions; i++) json_array_append_new (uris, json_string (session->subscribed[i]));
    return uris;
}

/* -32021: this needs the client to declare the tasks extension. */
static json_t *s_needs_tasks (const json_t *id)
{
    json_t *e = bmq_mcp_error (id, -32021, "Missing required client capability: the " BMQ_MCP_TASKS_EXTENSION " extension");
    json_object_set_new (json_object_get (e, "error"), "data",
                         json_pack ("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions", BMQ_MCP_TASKS_EXTENSION));
    return e;
}

/* A test tool run as a task when the client declared the extension
 * (optional support runs at once otherwise; required support refuses). */
static json_t *s_task_call (bmq_mcp_t *self, const bmq_mcp_tool_t *tool, const bmq_mcp_session_t *session, const json_t *id,
                            const json_t *vars)
{
    json_t *spec = json_object_get (tool->def, "_task");
    const char *support = json_string_value (json_object_get (spec, "support"));
    if (session->tasks) return s_result (id, bmq_mcp_tasks_create (self->tasks, session->who, spec, vars));
    if (support && !strcmp (support, "required")) return s_needs_tasks (id);
    json_t *error = json_object_get (spec, "error");
    if (error) return bmq_mcp_error (id, (int) json_integer_value (json_object_get (error, "code")),
                                     json_string_value (json_object_get (error, "message")));
    if (json_object_size (json_object_get (spec, "ask")))
        return bmq_mcp_error (id, -32021, "this tool asks the client while it runs: declare the " BMQ_MCP_TASKS_EXTENSION " extension");
    return s_result (id, bmq_mcp_fill (json_object_get (spec, "result"), vars, NULL));
}

static bmq_mcp_client_caps_t s_caps (const bmq_mcp_session_t *session)
{
    return (bmq_mcp_client_caps_t) { .elicitation = session->elicitation, .sampling = session->sampling, .roots = session->roots };
}

/* A test tool that asks the client (_rounds; _ask without a session), answered by input-required results. */
static json_t *s_ask_by_result (bmq_mcp_t *self, const bmq_mcp_tool_t *tool, const bmq_mcp_session_t *session, const json_t *id,
                                const json_t *params)
{
    json_t *rounds = json_incref (json_object_get (tool->def, "_rounds"));
    if (!rounds) rounds = json_pack ("[{s:{s:O}}]", "inputRequests", "answer", json_object_get (tool->def, "_ask"));
    json_t *step = NULL;
    char err[256];
    int rc = bmq_mcp_mrtr (tool->name, rounds, NULL, params, s_caps (session), &step, err, sizeof err);
    json_decref (rounds);
    if (rc < 0) return bmq_mcp_error (id, -32602, err);
    if (rc > 0) return s_result (id, step);
    json_t *vars = bmq_mcp_mrtr_vars (json_object_get (step, "answers"));
    if (json_object_get (tool->def, "_task")) {           /* answered: on as a task (MRTR, then Tasks) */
        json_t *r = s_task_call (self, tool, session, id, vars);
        json_decref (vars);
        json_decref (step);
        return r;
    }
    json_t *said = bmq_mcp_fill (json_object_get (tool->def, "_answer"), vars, NULL);
    json_t *r = s_result (id, json_pack ("{s:[{s:s, s:O}]}", "content", "type", "text", "text", said));
    json_decref (said);
    json_decref (vars);
    json_decref (step);
    return r;
}

/* resources/subscribe and unsubscribe: {} for a resource we serve. */
static json_t *s_subscribe (bmq_mcp_t *self, bmq_mcp_session_t *session, const json_t *id, const char *uri, bool on, int not_found)
{
    if (!bmq_mcp_resources_known (self->surface, uri) || strlen (uri) >= sizeof session->subscribed[0]) {
        json_t *e = bmq_mcp_error (id, uri ? not_found : -32602, uri ? "Resource not found" : "params.uri is required");
        if (uri) json_object_set_new (json_object_get (e, "error"), "data", json_pack ("{s:s}", "uri", uri));
        return e;
    }
    int at = 0;
    while (at < session->subscriptions && strcmp (session->subscribed[at], uri)) at++;
    if (on && at == session->subscriptions) {
        if (at == BMQ_MCP_MAX_SUBSCRIPTIONS)
            return bmq_mcp_error (id, -32602, "too many subscriptions in this session (8): unsubscribe one first");
        snprintf (session->subscribed[session->subscriptions++], sizeof session->subscribed[0], "%s", uri);
    }
    else if (!on && at < session->subscriptions) {
        memmove (session->subscribed[at], session->subscribed[at + 1], (size_t) (session->subscriptions - at - 1) * sizeof session->subscribed[0]);
        session->subscriptions--;
    }
    return s_result (id, json_object ());
}

/* subscriptions/listen (2026-07-28, SEP-2575): the stream's acknowledgement.
 * Of the filter only resourceSubscriptions is honoured (blendmq's lists of
 * tools, prompts and resources do not change while it runs); URIs it does not
 * serve are left out of the acknowledgement, as the schema says. */
static void s_listen (bmq_mcp_t *self, const json_t *id, const json_t *params, bmq_mcp_outcome_t *out)
{
    json_t *filter = json_object_get (params, "notifications");
    json_t *asked = json_object_get (filter, "resourceSubscriptions");
    if (!json_is_object (filter) || (asked && !json_is_array (asked))) {
        out->response = bmq_mcp_error (id, -32602, "subscriptions/listen needs params.notifications {resourceSubscriptions: [uri]}");
        return;
    }
    if (json_array_size (asked) > BMQ_MCP_MAX_SUBSCRIPTIONS) {
        out->response = bmq_mcp_error (id, -32602, "at most 8 resourceSubscriptions on one listen stream");
        return;
    }
    json_t *uris = json_array ();
    size_t i;
    json_t *uri;
    json_array_foreach (asked, i, uri) {
        const char *u = json_string_value (uri);
        if (u && strlen (u) < 256 && bmq_mcp_resources_known (self->surface, u)) json_array_append (uris, uri);
    }
    json_t *honoured = json_object ();
    if (json_array_size (uris)) json_object_set (honoured, "resourceSubscriptions", uris);
    json_decref (uris);
    out->listen = json_pack ("{s:s, s:s, s:{s:{s:O}, s:o}}", "jsonrpc", "2.0", "method", "notifications/subscriptions/acknowledged",
                             "params", "_meta", "io.modelcontextprotocol/subscriptionId", id, "notifications", honoured);
}

/* Resources, prompts, completion: answered now, or through a tool call. */
static void s_surface (bmq_mcp_t *self, bmq_mcp_session_t *session, const json_t *id, const char *method, const json_t *params,
                       bmq_mcp_outcome_t *out)
{
    /* 2025-11-25 names -32002 for an unknown resource; SEP-2164 (2026-07-28) makes it -32602 */
    int not_found = !strcmp (session->version, "2026-07-28") ? -32602 : -32002;
    const char *uri = json_string_value (json_object_get (params, "uri"));
    bmq_mcp_answer_t a;
    memset (&a, 0, sizeof a);
    if (!strcmp (method, "resources/list")) {
        out->response = s_result (id, s_cacheable (bmq_mcp_resources_list (self->surface), 3600000, "public"));
        return;
    }
    if (!strcmp (method, "resources/templates/list")) {
        out->response = s_result (id, s_cacheable (bmq_mcp_resources_templates (self->surface), 3600000, "public"));
        return;
    }
    if (!strcmp (method, "prompts/list")) {
        out->response = s_result (id, s_cacheable (bmq_mcp_prompts_list (self->surface), 3600000, "public"));
        return;
    }
    if (!strcmp (method, "resources/subscribe") || !strcmp (method, "resources/unsubscribe")) {
        out->response = s_subscribe (self, session, id, uri, !strcmp (method, "resources/subscribe"), not_found);
        return;
    }
    if (!strcmp (method, "resources/read")) bmq_mcp_resources_read (self->surface, uri, not_found, &a);
    else if (!strcmp (method, "prompts/get"))
        bmq_mcp_prompts_get (self->surface, json_string_value (json_object_get (params, "name")), params, s_caps (session), &a);
    else if (!strcmp (method, "completion/complete")) bmq_mcp_complete (self->surface, params, &a);
    else {
        char text[200];
        snprintf (text, sizeof text, "Method not found: %.100s", method);
        out->response = bmq_mcp_error (id, -32601, text);
        return;
    }
    if (a.result && !strcmp (method, "resources/read")) s_cacheable (a.result, 0, "private");
    if (a.result) out->response = s_result (id, json_incref (a.result));
    else if (a.error) {
        out->response = bmq_mcp_error (id, a.error, a.message);
        if (a.error_data) json_object_set (json_object_get (out->response, "error"), "data", a.error_data);
    }
    else if (a.tool) {
        bmq_mcp_caller_t caller = s_caller (self, session);
        const char *prefix = json_string_value (json_object_get (json_object_get (params, "argument"), "value"));
        out->call = bmq_mcp_call_start_as (self->tools, &caller, id, a.tool, a.args, uri, a.mime, a.from[0] ? a.from : NULL,
                                           prefix, self->opts.request_timeout_ms, &out->response, &out->request);
        if (a.view[0]) bmq_mcp_call_view (out->call, a.view, not_found);
    }
    bmq_mcp_answer_clear (&a);
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
    if (session->stateless && (!strcmp (method, "initialize") || !strcmp (method, "ping") || !strcmp (method, "logging/setLevel")
                               || !strcmp (method, "resources/subscribe") || !strcmp (method, "resources/unsubscribe"))) {
        char text[200];
        snprintf (text, sizeof text, "Method not found: %.100s is not part of %s", method, BMQ_MCP_STATELESS_VERSION);
        out->response = bmq_mcp_error (id, -32601, text);
    }
    else if (!strcmp (method, "server/discover")) out->response = s_discover (id);
    else if (!strcmp (method, "subscriptions/listen") && session->stateless) s_listen (self, id, params, out);
    else if (!strcmp (method, "tasks/get") || !strcmp (method, "tasks/update") || !strcmp (method, "tasks/cancel")) {
        if (!session->tasks) { out->response = s_needs_tasks (id); return; }
        int code = 0;
        char err[200];
        json_t *r = bmq_mcp_tasks_request (self->tasks, session->who, method, params, &code, err, sizeof err);
        out->response = r ? s_result (id, r) : bmq_mcp_error (id, code, err);
    }
    else if (!strcmp (method, "initialize")) out->response = s_initialize (session, id, params);
    else if (!strcmp (method, "ping")) out->response = s_result (id, json_object ());
    else if (!strcmp (method, "tools/list"))
        out->response = s_result (id, s_cacheable (json_deep_copy (bmq_mcp_tools_list (self->tools)), 3600000, "public"));
    else if (!strcmp (method, "logging/setLevel")) {
        int level = bmq_mcp_log_level (json_string_value (json_object_get (params, "level")));
        if (level < 0) out->response = bmq_mcp_error (id, -32602, "level must be one of debug, info, notice, warning, error, critical, alert, emergency");
        else {
            session->log_level = level;
            out->response = s_result (id, json_object ());
        }
    }
    else if (!strncmp (method, "resources/", 10) || !strncmp (method, "prompts/", 8) || !strcmp (method, "completion/complete"))
        s_surface (self, session, id, method, params, out);
    else if (!strcmp (method, "tools/call")) {
        if (!params) { out->response = bmq_mcp_error (id, -32602, "tools/call needs params"); return; }
        const bmq_mcp_tool_t *tool = bmq_mcp_tools_find (self->tools, json_string_value (json_object_get (params, "name")));
        const char *needs = tool ? json_string_value (json_object_get (tool->def, "_requires")) : NULL;
        if (needs && !strcmp (needs, "sampling") && !session->sampling) {
            out->response = bmq_mcp_error (id, -32021, "Missing required client capability: sampling");
            json_object_set_new (json_object_get (out->response, "error"), "data", json_pack ("{s:{s:{}}}", "requiredCapabilities", "sampling"));
            return;
        }
        if (tool && tool->kind == BMQ_TOOL_TEST && (json_object_get (tool->def, "_rounds")
                                                    || (session->stateless && json_object_get (tool->def, "_ask")))) {
            out->response = s_ask_by_result (self, tool, session, id, params);
            return;
        }
        if (tool && tool->kind == BMQ_TOOL_TEST && json_object_get (tool->def, "_task")) {
            json_t *args = json_object_get (params, "arguments");
            out->response = s_task_call (self, tool, session, id, json_is_object (args) ? args : NULL);
            return;
        }
        json_t *subscriptions = s_subscriptions (session);
        bmq_mcp_caller_t caller = s_caller (self, session);
        caller.subscriptions = subscriptions;
        json_t *task_params = NULL;
        if (session->tasks && s_long_running (tool)) {        /* its steps become the task's statusMessage */
            task_params = json_deep_copy (params);
            json_t *meta = json_object_get (task_params, "_meta");
            if (!json_is_object (meta)) json_object_set_new (task_params, "_meta", meta = json_object ());
            if (!json_object_get (meta, "progressToken")) json_object_set_new (meta, "progressToken", json_string ("task"));
        }
        out->call = bmq_mcp_call_start (self->tools, &caller, id, task_params ? task_params : params, session->log_level,
                                        self->opts.request_timeout_ms, &out->response, &out->request);
        out->as_task = out->call && task_params;
        json_decref (task_params);
        json_decref (subscriptions);
    }
    else {
        char text[200];
        snprintf (text, sizeof text, "Method not found: %.100s", method);
        out->response = bmq_mcp_error (id, -32601, text);
    }
}
