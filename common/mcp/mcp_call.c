/* mcp_call — one MCP tools/call: arguments → bus request → answers → result. */
#include "mcp_call.h"
#include "mcp_call_internal.h"
#include "mcp_server.h"
#include "mcp_surface.h"

#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_PROMPT      16000
#define MAX_TEXT_ERRORS 20




/* ---- arguments → bus request ----------------------------------------------- */

/* The plan argument: an array of steps (a JSON string holding one is accepted too). */
static json_t *s_plan_arg (const json_t *args, char *err, size_t errlen)
{
    json_t *plan = json_object_get (args, "plan");
    if (json_is_string (plan)) plan = json_loads (json_string_value (plan), JSON_REJECT_DUPLICATES, NULL);
    else plan = json_incref (plan);
    if (!json_is_array (plan) || !json_array_size (plan)) {
        snprintf (err, errlen, "plan must be a non-empty array of steps like "
                  "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"box\", \"params\": {\"size\": 1}}]");
        json_decref (plan);
        return NULL;
    }
    return plan;
}

static int s_int_arg (const json_t *args, const char *key, int fallback, int lo, int hi, int *out, char *err, size_t errlen)
{
    json_t *v = json_object_get (args, key);
    if (!v || json_is_null (v)) { *out = fallback; return 0; }
    if (!json_is_integer (v) || json_integer_value (v) < lo || json_integer_value (v) > hi) {
        snprintf (err, errlen, "%s must be an integer in %d..%d", key, lo, hi);
        return -1;
    }
    *out = (int) json_integer_value (v);
    return 0;
}

static const char *s_str_arg (const json_t *args, const char *key, size_t max, char *err, size_t errlen)
{
    const char *s = json_string_value (json_object_get (args, key));
    if (!s || !*s || strlen (s) > max) {
        snprintf (err, errlen, "%s must be a non-empty string of at most %zu bytes", key, max);
        return NULL;
    }
    return s;
}

/* import_asset: {source, id, type, resolution?, format?, name?, object?} as a
 * one-step plan (asset.import; the validator checks the rest). */
static json_t *s_import_body (const json_t *args, char *err, size_t errlen)
{
    const char *source, *id, *type;
    if (!(source = s_str_arg (args, "source", 32, err, errlen)) || !(id = s_str_arg (args, "id", 128, err, errlen))
        || !(type = s_str_arg (args, "type", 16, err, errlen)))
        return NULL;
    json_t *params = json_pack ("{s:s, s:s, s:s}", "source", source, "id", id, "type", type);
    json_t *step = json_pack ("{s:s, s:o}", "operation", "asset.import", "params", params);
    static const char *const optional[] = { "resolution", "format", "name", "object" };
    for (size_t i = 0; i < sizeof optional / sizeof *optional; i++) {
        if (!json_object_get (args, optional[i])) continue;
        const char *v = s_str_arg (args, optional[i], 128, err, errlen);
        if (!v) { json_decref (step); return NULL; }
        if (i < 2) json_object_set_new (params, optional[i], json_string (v));
        else json_object_set_new (step, i == 2 ? "name" : "target", json_string (v));
    }
    return json_pack ("{s:[o]}", "plan", step);
}

static json_t *s_body (bmq_mcp_call_t *self, const json_t *args, char *err, size_t errlen)
{
    json_t *keep = json_object_get (args, "keep_partial");
    if (keep && !json_is_boolean (keep)) { snprintf (err, errlen, "keep_partial must be true or false"); return NULL; }
    const char *s;
    int a, b;
    switch (self->tool->kind) {
    case BMQ_TOOL_CAPABILITIES: {
        const char *form = json_string_value (json_object_get (args, "form"));
        if (json_object_get (args, "form") && (!form || (strcmp (form, "compact") && strcmp (form, "full")))) {
            snprintf (err, errlen, "form must be \"compact\" or \"full\"");
            return NULL;
        }
        return json_pack ("{s:s}", "form", form ? form : "compact");
    }
    case BMQ_TOOL_INSPECT:
        return (s = s_str_arg (args, "tool_name", 256, err, errlen)) ? json_pack ("{s:s}", "tool_name", s) : NULL;
    case BMQ_TOOL_VALIDATE:
    case BMQ_TOOL_EXECUTE: {
        json_t *plan = s_plan_arg (args, err, errlen);
        if (!plan) return NULL;
        json_t *body = json_pack ("{s:o}", "plan", plan);
        if (keep) json_object_set (body, "keep_partial", keep);
        return body;
    }
    case BMQ_TOOL_CHAT: {
        if (!(s = s_str_arg (args, "prompt", MAX_PROMPT, err, errlen))) return NULL;
        json_t *body = json_pack ("{s:s}", "prompt", s);
        if (keep) json_object_set (body, "keep_partial", keep);
        return body;
    }
    case BMQ_TOOL_SCENE_INFO:
        if (s_int_arg (args, "limit", 100, 0, 1000, &a, err, errlen) || s_int_arg (args, "offset", 0, 0, 1 << 30, &b, err, errlen))
            return NULL;
        return json_pack ("{s:s, s:{s:i, s:i}}", "command", "scene_info", "args", "limit", a, "offset", b);
    case BMQ_TOOL_OBJECT_INFO:
        if (!(s = s_str_arg (args, "name", 255, err, errlen))) return NULL;
        return json_pack ("{s:s, s:{s:s}}", "command", "object_info", "args", "name", s);
    case BMQ_TOOL_SCREENSHOT:
        if (s_int_arg (args, "width", 640, 16, 1920, &a, err, errlen) || s_int_arg (args, "height", 480, 16, 1080, &b, err, errlen))
            return NULL;
        return json_pack ("{s:s, s:{s:i, s:i}}", "command", "render_preview", "args", "width", a, "height", b);
    case BMQ_TOOL_LOOK:
        return bmq_mcp_look_body (args, err, errlen);
    case BMQ_TOOL_IMPORT:
        return s_import_body (args, err, errlen);
    case BMQ_TOOL_GENERATE:
        return bmq_mcp_generate_body (self, args, err, errlen);
    case BMQ_TOOL_FORWARD:
        return json_deep_copy (args);
    case BMQ_TOOL_CONFIRM:
        return json_pack ("{s:O, s:O}", "script_id", json_object_get (args, "script_id"), "sha256", json_object_get (args, "sha256"));
    case BMQ_TOOL_TEST:
        break;
    }
    return NULL;
}

/* Where a person can confirm it. */
#define S_WHERE_TO_CONFIRM "A person can confirm it on the blendmq web page (Scripts; `blendmq web --open`), with " \
    "`blendmq script apply %s --confirm --sha256 %s`, or with Apply to live in the Blender panel."

static bool s_is_hex64 (const char *s)
{
    if (!s || strlen (s) != 64) return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F'))) return false;
    return true;
}

static bool s_may_call (const bmq_mcp_tool_t *tool, const bmq_mcp_caller_t *caller)
{
    if (!caller || !caller->name) return true;
    if (tool->kind == BMQ_TOOL_CONFIRM)          /* a model may ask; a person decides (elicitation) */
        return caller->role == BMQ_ROLE_OPERATOR || caller->role == BMQ_ROLE_REVIEWER || caller->role == BMQ_ROLE_ADMIN
            || caller->role == BMQ_ROLE_OPERATOR_REVIEWER;
    return bmq_role_allows (caller->role, tool->role);
}

/* unlisted_ok: a tool behind a resource ("_listed": false) may run (as another method's source), never by tools/call */
static bmq_mcp_call_t *s_start (const bmq_mcp_tools_t *tools, const bmq_mcp_caller_t *caller, const json_t *id,
                                const json_t *params, int log_level, int timeout_ms, json_t **response,
                                bmq_envelope_t **request, bool unlisted_ok)
{
    *response = NULL;
    *request = NULL;
    const char *name = json_string_value (json_object_get (params, "name"));
    const bmq_mcp_tool_t *tool = bmq_mcp_tools_find (tools, name);
    if (!tool || (!tool->listed && !unlisted_ok)) {
        char msg[300];
        snprintf (msg, sizeof msg, name ? "Unknown tool: %.200s" : "tools/call needs params.name", name);
        *response = json_pack ("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code", -32602, "message", msg);
        return NULL;
    }
    json_t *args = json_object_get (params, "arguments");
    if (args && !json_is_null (args) && !json_is_object (args)) {
        *response = bmq_mcp_response (id, bmq_mcp_result_error ("%s: arguments must be an object", tool->name));
        return NULL;
    }
    if (!tool->available) {
        *response = bmq_mcp_response (id, bmq_mcp_result_error ("%s is not available in this build of blendmq: the service behind it "
                                                    "(bus message %s) is not part of it yet", tool->name, tool->request_name));
        return NULL;
    }
    if (!s_may_call (tool, caller)) {
        *response = bmq_mcp_response (id, bmq_mcp_result_error ("%s needs a token with role %s; this one (%s) has role %s. Ask the "
                                                    "admin for a token with that role (`blendmq keys add-client NAME --role %s`).",
                                                    tool->name, tool->kind == BMQ_TOOL_CONFIRM ? "operator or reviewer" : bmq_role_name (tool->role),
                                                    caller->name, bmq_role_name (caller->role), bmq_role_name (tool->role)));
        return NULL;
    }
    if (tool->kind == BMQ_TOOL_CONFIRM) {
        const char *sid = json_string_value (json_object_get (args, "script_id"));
        const char *sha = json_string_value (json_object_get (args, "sha256"));
        if (!sid || !*sid || strlen (sid) > BMQ_MAX_ID || !s_is_hex64 (sha)) {
            *response = bmq_mcp_response (id, bmq_mcp_result_error ("%s: script_id (from inject_bpy_script) and sha256 (its script_sha256, "
                                                        "64 hex digits) are required", tool->name));
            return NULL;
        }
        json_t *wait = json_object_get (args, "wait_s");
        if (wait && (!json_is_integer (wait) || json_integer_value (wait) < 0 || json_integer_value (wait) > 55)) {
            *response = bmq_mcp_response (id, bmq_mcp_result_error ("%s: wait_s is 0..55 seconds", tool->name));
            return NULL;
        }
        /* security.mcp_confirm: elicitation asks the client's user, and confirms with the token's OWN role:
         * a token that may not confirm (reviewer) does not get to by asking anyone */
        if (caller && caller->name && caller->confirm_by_elicitation && !bmq_role_allows (caller->role, BMQ_ROLE_REVIEWER)) {
            *response = bmq_mcp_response (id, bmq_mcp_result_error (
                "%s: nothing was applied. security.mcp_confirm is elicitation, which confirms with this token's own role, and "
                "token %s has role %s (a confirmation needs reviewer). " S_WHERE_TO_CONFIRM, tool->name, caller->name,
                bmq_role_name (caller->role), sid, sha));
            return NULL;
        }
        if (caller && caller->confirm_by_elicitation && (!caller->elicitation || (!caller->can_ask && !caller->stateless))) {
            *response = bmq_mcp_response (id, bmq_mcp_result_error (
                "%s: nothing was applied. A person must confirm a script, and this MCP client %s, so blendmq cannot ask its "
                "user. " S_WHERE_TO_CONFIRM, tool->name,
                caller && caller->elicitation ? "did not accept an event stream for this call (Accept: text/event-stream)"
                                              : "did not declare the elicitation capability at initialize", sid, sha));
            return NULL;
        }
    }
    json_t *no_args = json_object ();
    if (!args || json_is_null (args)) args = no_args;
    bmq_mcp_call_t *self = calloc (1, sizeof *self);
    self->tool = tool;
    self->id = json_incref ((json_t *) id);
    json_t *token = json_object_get (json_object_get (params, "_meta"), "progressToken");
    if (json_is_string (token) || json_is_integer (token)) self->token = json_incref (token);
    self->log_level = log_level;
    if (caller && caller->name)
        self->on_behalf_of = json_pack ("{s:s, s:s}", "name", caller->name, "role", bmq_role_name (caller->role));
    snprintf (self->client, sizeof self->client, "%s", caller && caller->client ? caller->client : "?");
    self->started = bmq_mono_ms ();
    self->quiet_ms = timeout_ms > 0 ? timeout_ms : 120000;
    self->deadline = self->started + self->quiet_ms;
    if (caller && caller->subscriptions) self->notify_uris = json_deep_copy (caller->subscriptions);
    if (tool->kind == BMQ_TOOL_TEST) {          /* served here: a local story id */
        snprintf (self->cid, sizeof self->cid, "local-%p", (void *) self);
        if (json_object_get (tool->def, "_ask")) {      /* asks the client (sampling, elicitation) first */
            if (caller && !caller->can_ask) {
                *response = bmq_mcp_response (id, bmq_mcp_result_error ("%s asks the client a question: accept an event stream "
                                                                        "(Accept: text/event-stream) for this call", tool->name));
                json_decref (no_args);
                bmq_mcp_call_destroy (&self);
                return NULL;
            }
            self->run = json_deep_copy (args);          /* the arguments fill the question in */
        }
        if (!json_array_size (json_object_get (tool->def, "_script")) && !json_object_get (tool->def, "_ask")) {
            *response = bmq_mcp_response (id, bmq_mcp_fill (json_object_get (tool->def, "_result"), args, NULL));
            bmq_mcp_call_destroy (&self);
        }
        json_decref (no_args);
        return self;
    }
    char err[512] = "";
    json_t *body = s_body (self, args, err, sizeof err);
    json_decref (no_args);
    if (!body) {
        *response = bmq_mcp_response (id, bmq_mcp_result_error ("%s: %s", tool->name, err));
        bmq_mcp_call_destroy (&self);
        return NULL;
    }
    if (self->on_behalf_of) json_object_set (body, "on_behalf_of", self->on_behalf_of);
    bmq_msg_type_t type = tool->request;
    if (tool->kind == BMQ_TOOL_CONFIRM) {       /* first what the executor knows of the script */
        type = bmq_msg_type_from_name ("script.list");
        self->by_person = !caller || !caller->confirm_by_elicitation;
        json_t *wait = json_object_get (args, "wait_s");
        self->wait_ms = wait ? json_integer_value (wait) * 1000 : PERSON_WAIT_MS;
        snprintf (self->script_id, sizeof self->script_id, "%s", json_string_value (json_object_get (body, "script_id")));
        snprintf (self->sha256, sizeof self->sha256, "%s", json_string_value (json_object_get (body, "sha256")));
        for (char *c = self->sha256; *c; c++) if (*c >= 'A' && *c <= 'F') *c = (char) (*c - 'A' + 'a');
        json_object_del (body, "sha256");
        self->phase = S_CONFIRM_LISTING;
        self->stateless = caller && caller->stateless && !self->by_person;
        if (self->stateless && json_object_get (params, "requestState")) {     /* the person answered: confirm or stop */
            json_t *out = json_array ();
            bmq_envelope_t *confirm = NULL;
            if (bmq_mcp_call_confirm_resume (self, params, out, &confirm)) confirm = NULL;
            json_decref (body);
            if (!confirm) {
                json_t *last = json_array_get (out, json_array_size (out) - 1);
                *response = json_incref (last);
                json_decref (out);
                bmq_mcp_call_destroy (&self);
                return NULL;
            }
            json_decref (out);
            snprintf (self->cid, sizeof self->cid, "%s", confirm->cid);
            self->sent = true;
            *request = confirm;
            return self;
        }
    }
    bmq_envelope_t *env = bmq_envelope_new (type, NULL, body);
    snprintf (env->sender, sizeof env->sender, "mcp");
    snprintf (self->cid, sizeof self->cid, "%s", env->cid);
    if (tool->kind == BMQ_TOOL_EXECUTE || tool->kind == BMQ_TOOL_CHAT || tool->kind == BMQ_TOOL_IMPORT) {
        self->run = json_pack ("{s:s, s:s, s:i, s:I}", "plan_id", "", "status", "error", "steps_done", 0,
                               "steps_total", (json_int_t) json_array_size (json_object_get (body, "plan")));
    }
    self->sent = true;
    *request = env;
    return self;
}

bmq_mcp_call_t *bmq_mcp_call_start (const bmq_mcp_tools_t *tools, const bmq_mcp_caller_t *caller, const json_t *id,
                                    const json_t *params, int log_level, int timeout_ms, json_t **response,
                                    bmq_envelope_t **request)
{
    return s_start (tools, caller, id, params, log_level, timeout_ms, response, request, false);
}

bmq_mcp_call_t *bmq_mcp_call_start_as (const bmq_mcp_tools_t *tools, const bmq_mcp_caller_t *caller, const json_t *id,
                                       const char *tool, const json_t *args, const char *uri, const char *mime,
                                       const char *from, const char *prefix, int timeout_ms, json_t **response,
                                       bmq_envelope_t **request)
{
    json_t *params = json_pack ("{s:s, s:O}", "name", tool, "arguments", args);
    bmq_mcp_caller_t quiet = *caller;
    quiet.subscriptions = NULL;
    bmq_mcp_call_t *self = s_start (tools, &quiet, id, params, 7, timeout_ms, response, request, true);
    json_decref (params);
    if (!self && *response && json_object_get (*response, "result")) {     /* the tool refused: the method's error */
        json_t *text = json_object_get (json_array_get (json_object_get (json_object_get (*response, "result"), "content"), 0), "text");
        json_t *error = bmq_mcp_error (id, -32603, json_is_string (text) ? json_string_value (text) : "the request failed");
        json_decref (*response);
        *response = error;
        return NULL;
    }
    if (!self) return NULL;
    self->shape = from ? S_AS_COMPLETION : S_AS_RESOURCE;
    snprintf (self->shape_uri, sizeof self->shape_uri, "%s", uri ? uri : "");
    snprintf (self->shape_mime, sizeof self->shape_mime, "%s", mime ? mime : "");
    snprintf (self->shape_from, sizeof self->shape_from, "%s", from ? from : "");
    snprintf (self->shape_prefix, sizeof self->shape_prefix, "%s", prefix ? prefix : "");
    return self;
}

void bmq_mcp_call_view (bmq_mcp_call_t *self, const char *view, int not_found_code)
{
    if (!self || !view) return;
    snprintf (self->shape_view, sizeof self->shape_view, "%s", view);
    self->shape_not_found = not_found_code;
}

void bmq_mcp_call_destroy (bmq_mcp_call_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_mcp_call_t *self = *self_p;
    json_decref (self->id);
    json_decref (self->token);
    json_decref (self->run);
    json_decref (self->on_behalf_of);
    json_decref (self->elicit_id);
    json_decref (self->notify_uris);
    bmq_envelope_destroy (&self->next);
    free (self);
    *self_p = NULL;
}

const char   *bmq_mcp_call_cid (const bmq_mcp_call_t *self) { return self->cid; }
const json_t *bmq_mcp_call_id (const bmq_mcp_call_t *self) { return self->id; }
const char   *bmq_mcp_call_tool (const bmq_mcp_call_t *self) { return self->tool->name; }
bool          bmq_mcp_call_on_bus (const bmq_mcp_call_t *self) { return self->sent && self->phase != S_CONFIRM_ASKING; }

/* ---- answers → result ------------------------------------------------------ */

/* What a model should do about a gateway error code. */
static const char *s_hint (const char *code)
{
    if (!code) return "";
    if (!strcmp (code, "unsupported")) return " (this blendmq build does not serve that request yet)";
    if (!strcmp (code, "busy")) return " (try again in a moment)";
    if (!strcmp (code, "timeout")) return " (blendmq or Blender took too long; check `blendmq status`)";
    if (!strcmp (code, "interrupted")) return " (the connection to Blender dropped; it reconnects by itself, try again)";
    if (!strcmp (code, "unknown_tool")) return " (call discover_capabilities for the operations that exist)";
    if (strstr (code, "_unavailable")) return " (blendmq restarts the service by itself; try again in a few seconds)";
    return "";
}

static void s_on_error (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out)
{
    const char *code = bmq_body_str (env, "code"), *message = bmq_body_str (env, "message");
    if (self->run) {
        json_object_set_new (self->run, "status", json_string ("error"));
        json_object_set_new (self->run, "error", json_string (message ? message : "error"));
        char summary[2048];
        snprintf (summary, sizeof summary, "%s failed: %s: %s%s", self->tool->name, code ? code : "error",
                  message ? message : "", s_hint (code));
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_incref (self->run), summary, true), out);
        return;
    }
    bmq_mcp_call_finish (self, bmq_mcp_result_error ("%s failed: %s: %s%s", self->tool->name, code ? code : "error", message ? message : "",
                                    s_hint (code)), out);
}

/* The validator's problems as lines a model can act on. */
/* The validator's errors as people count: steps from 1 (the wire's index is from 0), and a
 * whole-plan problem (-1 on the wire) with no step at all, as `plan validate`, `plan run`,
 * progress, the page and the panel say them (issue 29). A new array. */
static json_t *s_errors_for_people (const json_t *errors)
{
    json_t *out = json_array (), *e;
    size_t i;
    json_array_foreach (errors, i, e) {
        if (!json_is_object (e)) continue;
        json_t *copy = json_deep_copy (e);
        json_t *step = json_object_get (copy, "step");
        if (!json_is_integer (step) || json_integer_value (step) < 0) json_object_del (copy, "step");
        else json_object_set_new (copy, "step", json_integer (json_integer_value (step) + 1));
        json_array_append_new (out, copy);
    }
    return out;
}

/* errors as s_errors_for_people made them */
static void s_errors_text (const json_t *errors, char *buf, size_t len)
{
    size_t used = 0, i;
    json_t *e;
    buf[0] = 0;
    json_array_foreach (errors, i, e) {
        if (i == MAX_TEXT_ERRORS) { snprintf (buf + used, len - used, "\n- … %zu more", json_array_size (errors) - i); return; }
        json_int_t step = json_is_integer (json_object_get (e, "step")) ? json_integer_value (json_object_get (e, "step")) : -1;
        const char *field = json_string_value (json_object_get (e, "field"));
        const char *reason = json_string_value (json_object_get (e, "reason"));
        int n = step >= 1 ? snprintf (buf + used, len - used, "\n- step %lld %s: %s", (long long) step, field ? field : "", reason ? reason : "")
                          : snprintf (buf + used, len - used, "\n- plan %s: %s", field ? field : "", reason ? reason : "");
        if (n < 0 || (size_t) n >= len - used) return;
        used += (size_t) n;
    }
}

static void s_set_plan_id (bmq_mcp_call_t *self, const bmq_envelope_t *env)
{
    const char *plan_id = bmq_body_str (env, "plan_id");
    if (plan_id && self->run) json_object_set_new (self->run, "plan_id", json_string (plan_id));
}

static void s_on_progress (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out)
{
    const char *event = bmq_body_str (env, "event"), *status = bmq_body_str (env, "status");
    double total = (double) bmq_body_int (env, "total", 0);
    char msg[1024];
    if (event && !strcmp (event, "plan") && status && !strcmp (status, "started")) {
        snprintf (msg, sizeof msg, "plan %s started: %.0f steps", bmq_body_str (env, "plan_id"), total);
        bmq_mcp_call_progress (self, out, 0, total, msg);
    }
    else if (event && !strcmp (event, "step")) {
        const char *error = bmq_body_str (env, "error");
        snprintf (msg, sizeof msg, "step %lld/%.0f %s %s %.1f ms%s%s", (long long) bmq_body_int (env, "step", 0), total,
                  bmq_body_str (env, "operation") ? bmq_body_str (env, "operation") : "?", status ? status : "?",
                  json_number_value (json_object_get (env->body, "duration_ms")), error ? ": " : "", error ? error : "");
        bmq_mcp_call_progress (self, out, (double) bmq_body_int (env, "step", 0), total, msg);
        if (status && strcmp (status, "ok")) bmq_mcp_call_log (self, out, 4, "%s", msg);
        else bmq_mcp_call_log (self, out, 0, "%s", msg);
    }
    else if (event && !strcmp (event, "rollback")) {
        json_t *rb = json_object_get (env->body, "rollback");
        bmq_mcp_call_log (self, out, 3, "plan %s %s: removed %zu object(s), restored %zu", bmq_body_str (env, "plan_id"),
               status ? status : "rolled back", json_array_size (json_object_get (rb, "removed")),
               json_array_size (json_object_get (rb, "restored")));
    }
}

bool bmq_mcp_call_feed_run (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out)
{
    switch (env->type) {
    case BMQ_MSG_PLAN_NOTE:
        bmq_mcp_call_log (self, out, 1, "planner: %s", bmq_body_str (env, "text"));
        return false;
    case BMQ_MSG_CHAT_PLANNED: {
        json_t *plan = json_object_get (env->body, "plan");
        const char *title = bmq_body_str (env, "recipe") ? bmq_body_str (env, "recipe") : bmq_body_str (env, "title");
        s_set_plan_id (self, env);
        json_object_set (self->run, "plan", plan);
        json_object_set_new (self->run, "steps_total", json_integer ((json_int_t) json_array_size (plan)));
        bmq_mcp_call_log (self, out, 1, "plan %s: %s, %zu steps (%s planner)", bmq_body_str (env, "plan_id"), title ? title : "?",
               json_array_size (plan), bmq_body_str (env, "source") ? bmq_body_str (env, "source") : "?");
        /* what the planner understood and what it could not place: a model must hear about dropped words too */
        static const char *const said[] = { "parts", "not_understood", "notes" };
        for (size_t i = 0; i < sizeof said / sizeof said[0]; i++)
            if (json_is_array (json_object_get (env->body, said[i])))
                json_object_set (self->run, said[i], json_object_get (env->body, said[i]));
        json_t *missed = json_object_get (env->body, "not_understood");
        if (json_array_size (missed)) {
            char *text = json_dumps (missed, JSON_COMPACT);
            bmq_mcp_call_log (self, out, 1, "not understood: %s", text ? text : "?");
            free (text);
        }
        return false;
    }
    case BMQ_MSG_VALIDATE_REPLY: {
        s_set_plan_id (self, env);
        if (json_is_true (json_object_get (env->body, "accepted"))) {
            bmq_mcp_call_log (self, out, 1, "validated: %lld steps accepted", (long long) json_integer_value (json_object_get (self->run, "steps_total")));
            return false;
        }
        json_t *errors = s_errors_for_people (json_object_get (env->body, "errors"));
        json_object_set_new (self->run, "status", json_string ("rejected"));
        json_object_set_new (self->run, "errors", errors);
        char lines[4096], summary[4300];
        s_errors_text (errors, lines, sizeof lines);
        snprintf (summary, sizeof summary, "The plan was rejected, nothing ran. Fix %s and call again "
                  "(discover_capabilities lists what is allowed):%s", json_array_size (errors) == 1 ? "this" : "these", lines);
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_incref (self->run), summary, true), out);
        return true;
    }
    case BMQ_MSG_EXECUTE_ACCEPTED:
        s_set_plan_id (self, env);
        bmq_mcp_call_log (self, out, 0, "plan %s queued at position %lld", bmq_body_str (env, "plan_id"), (long long) bmq_body_int (env, "position", 0));
        return false;
    case BMQ_MSG_PROGRESS:
        s_on_progress (self, env, out);
        return false;
    case BMQ_MSG_EXECUTE_RESULT: {
        json_object_update (self->run, env->body);
        const char *status = bmq_body_str (env, "status");
        const char *error = bmq_body_str (env, "error");
        bool ok = status && !strcmp (status, "done");
        char summary[2048];
        snprintf (summary, sizeof summary, "%s: %lld/%lld steps in %.1f ms (plan %s)%s%s", status ? status : "?",
                  (long long) bmq_body_int (env, "steps_done", 0), (long long) bmq_body_int (env, "steps_total", 0),
                  json_number_value (json_object_get (env->body, "duration_ms")), bmq_body_str (env, "plan_id"),
                  error ? ": " : "", error ? error : "");
        bmq_mcp_call_log (self, out, ok ? 1 : 4, "%s", summary);
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_incref (self->run), summary, !ok), out);
        return true;
    }
    default:
        return false;
    }
}

static json_t *s_image_result (const bmq_envelope_t *env)
{
    if (!env->blob_len) return bmq_mcp_result_error ("get_viewport_screenshot: Blender returned no image");
    size_t b64len = sodium_base64_ENCODED_LEN (env->blob_len, sodium_base64_VARIANT_ORIGINAL);
    char *b64 = malloc (b64len);
    sodium_bin2base64 (b64, b64len, env->blob, env->blob_len, sodium_base64_VARIANT_ORIGINAL);
    json_t *result = json_object_get (env->body, "result");
    char text[256];
    snprintf (text, sizeof text, "preview %lldx%lld, %zu bytes PNG", (long long) json_integer_value (json_object_get (result, "width")),
              (long long) json_integer_value (json_object_get (result, "height")), env->blob_len);
    json_t *r = json_pack ("{s:[{s:s, s:s, s:s}, o], s:{s:I, s:I, s:I}}", "content", "type", "image", "mimeType", "image/png", "data", b64,
                           bmq_mcp_text (text), "structuredContent", "width", (json_int_t) json_integer_value (json_object_get (result, "width")),
                           "height", (json_int_t) json_integer_value (json_object_get (result, "height")), "bytes", (json_int_t) env->blob_len);
    free (b64);
    return r;
}

bool bmq_mcp_call_feed (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out)
{
    if (self->over) return true;
    if (env->type == BMQ_MSG_ERROR) { s_on_error (self, env, out); return true; }
    const bmq_mcp_tool_t *t = self->tool;
    json_t *body = env->body;
    switch (t->kind) {
    case BMQ_TOOL_EXECUTE:
    case BMQ_TOOL_CHAT:
    case BMQ_TOOL_IMPORT:
        return bmq_mcp_call_feed_run (self, env, out);
    case BMQ_TOOL_GENERATE:
        return bmq_mcp_generate_feed (self, env, out);
    case BMQ_TOOL_CAPABILITIES:
        if (env->type != BMQ_MSG_CAPABILITIES_REPLY) return false;
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_deep_copy (body), NULL, false), out);
        return true;
    case BMQ_TOOL_INSPECT:
        if (env->type != BMQ_MSG_INSPECT_REPLY) return false;
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_deep_copy (body), NULL, false), out);
        return true;
    case BMQ_TOOL_VALIDATE: {
        if (env->type != BMQ_MSG_VALIDATE_REPLY) return false;
        bool accepted = json_is_true (json_object_get (body, "accepted"));
        char lines[4096], summary[4200];
        json_t *shown = json_deep_copy (body);
        json_object_set_new (shown, "errors", s_errors_for_people (json_object_get (body, "errors")));
        s_errors_text (json_object_get (shown, "errors"), lines, sizeof lines);
        if (accepted) snprintf (summary, sizeof summary, "accepted: the plan may run");
        else snprintf (summary, sizeof summary, "rejected:%s", lines);
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (shown, summary, false), out);
        return true;
    }
    case BMQ_TOOL_SCENE_INFO:
    case BMQ_TOOL_OBJECT_INFO: {
        if (env->type != BMQ_MSG_SCENE_REPLY) return false;
        json_t *result = json_object_get (body, "result");
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_is_object (result) ? json_deep_copy (result) : json_object (), NULL, false), out);
        return true;
    }
    case BMQ_TOOL_SCREENSHOT:
        if (env->type != BMQ_MSG_SCENE_REPLY) return false;
        bmq_mcp_call_finish (self, s_image_result (env), out);
        return true;
    case BMQ_TOOL_LOOK:
        if (env->type != BMQ_MSG_SCENE_REPLY) return false;
        bmq_mcp_call_finish (self, bmq_mcp_look_result (env), out);
        return true;
    case BMQ_TOOL_CONFIRM:
        return bmq_mcp_call_feed_confirm (self, env, out);
    case BMQ_TOOL_FORWARD:
        if (env->type != t->reply) return false;
        if (env->type == BMQ_MSG_SCRIPT_REPLY) bmq_mcp_note_script (body);
        if (t->structured) bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_deep_copy (body), NULL, false), out);
        else {
            char *text = json_dumps (body, BMQ_MCP_JSON_FLAGS);
            bmq_mcp_call_finish (self, json_pack ("{s:[o]}", "content", bmq_mcp_text (text ? text : "{}")), out);
            free (text);
        }
        return true;
    case BMQ_TOOL_TEST:
        break;
    }
    return false;
}

bool bmq_mcp_call_tick (bmq_mcp_call_t *self, int64_t now_ms, json_t *out)
{
    if (self->over) return true;
    if (self->tool->kind == BMQ_TOOL_TEST && json_object_get (self->tool->def, "_ask")) {
        if (self->phase == S_CONFIRM_ASKING) {
            if (now_ms < self->deadline) return false;
            bmq_mcp_call_fail (self, "the client did not answer its question in time", out);
            return true;
        }
        json_t *ask = json_object_get (self->tool->def, "_ask");
        char eid[BMQ_MAX_ID + 16];
        snprintf (eid, sizeof eid, "ask-%s", self->cid);
        self->elicit_id = json_string (eid);
        json_array_append_new (out, json_pack ("{s:s, s:O, s:O, s:o}", "jsonrpc", "2.0", "id", self->elicit_id,
                                               "method", json_object_get (ask, "method"),
                                               "params", bmq_mcp_fill (json_object_get (ask, "params"), self->run, NULL)));
        self->phase = S_CONFIRM_ASKING;
        self->deadline = now_ms + ELICIT_MS;
        return false;
    }
    if (self->tool->kind == BMQ_TOOL_TEST) {
        json_t *script = json_object_get (self->tool->def, "_script");
        while (self->script_next < json_array_size (script)) {
            json_t *n = json_array_get (script, self->script_next);
            if (self->started + json_integer_value (json_object_get (n, "_after_ms")) > now_ms) return false;
            self->script_next++;
            const char *method = json_string_value (json_object_get (n, "method"));
            json_t *params = json_object_get (n, "params");
            if (!strcmp (method, "notifications/progress"))
                bmq_mcp_call_progress (self, out, json_number_value (json_object_get (params, "progress")),
                            json_number_value (json_object_get (params, "total")), NULL);
            else if (bmq_mcp_log_level (json_string_value (json_object_get (params, "level"))) >= self->log_level)
                json_array_append_new (out, json_pack ("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method", method, "params", params));
        }
        bmq_mcp_call_finish (self, json_deep_copy (json_object_get (self->tool->def, "_result")), out);
        return true;
    }
    if (self->phase == S_CONFIRM_WAITING) return bmq_mcp_call_tick_confirm (self, now_ms, out);
    if (now_ms < self->deadline) return false;
    char why[256];
    if (self->phase == S_CONFIRM_ASKING) snprintf (why, sizeof why, "the user did not answer within %d minutes; nothing was applied", ELICIT_MS / 60000);
    else snprintf (why, sizeof why, "no answer from blendmq within %lld s", (long long) (self->deadline - self->started) / 1000);
    bmq_mcp_call_fail (self, why, out);
    return true;
}

bmq_envelope_t *bmq_mcp_call_next_request (bmq_mcp_call_t *self)
{
    bmq_envelope_t *env = self->next;
    self->next = NULL;
    return env;
}

int64_t bmq_mcp_call_wakeup (const bmq_mcp_call_t *self)
{
    if (self->tool->kind == BMQ_TOOL_TEST && json_object_get (self->tool->def, "_ask"))
        return self->phase == S_CONFIRM_ASKING ? self->deadline : self->started;
    if (self->tool->kind == BMQ_TOOL_TEST) {
        json_t *n = json_array_get (json_object_get (self->tool->def, "_script"), self->script_next);
        return self->started + (n ? json_integer_value (json_object_get (n, "_after_ms")) : 0);
    }
    if (self->phase == S_CONFIRM_WAITING) return self->next_poll < self->wait_until ? self->next_poll : self->wait_until;
    return self->deadline;
}

void bmq_mcp_call_fail (bmq_mcp_call_t *self, const char *why, json_t *out)
{
    if (self->over) return;
    if (self->run) {
        json_object_set_new (self->run, "status", json_string ("error"));
        json_object_set_new (self->run, "error", json_string (why));
        char summary[600];
        snprintf (summary, sizeof summary, "%s failed: %s", self->tool->name, why);
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_incref (self->run), summary, true), out);
    }
    else bmq_mcp_call_finish (self, bmq_mcp_result_error ("%s failed: %s", self->tool->name, why), out);
}

bmq_envelope_t *bmq_mcp_call_cancel (bmq_mcp_call_t *self)
{
    bool was_over = self->over;
    self->over = true;
    if (was_over || !self->sent || !self->run) return NULL;     /* reads stop by themselves */
    if (self->tool->kind == BMQ_TOOL_GENERATE && self->gen == S_GEN_MAKING) return bmq_mcp_generate_cancel (self);
    json_t *body = json_object ();
    const char *plan_id = json_string_value (json_object_get (self->run, "plan_id"));
    if (plan_id && *plan_id) json_object_set_new (body, "plan_id", json_string (plan_id));
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_CANCEL_REQUEST, self->cid, body);
    snprintf (env->sender, sizeof env->sender, "mcp");
    return env;
}
