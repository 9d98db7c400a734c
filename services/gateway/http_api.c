/* http_api — the REST routes' handlers, health and metrics (the routes themselves: http_routes.c). */
#include "http_api.h"
#include "mcp_tools.h"
#include "mcp_call.h"
#include "http_bus.h"
#include "http_metrics.h"
#include "http_plans.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SLICE_MS       250          /* waits are cut in slices to notice shutdown */
#define FIRST_ANSWER_MS 200         /* POST /api/chat waits this long for an early refusal */

/* ---- talking to the gateway ----------------------------------------------------- */

typedef bool (s_final_fn) (const bmq_envelope_t *env);

static bool s_final_verdict (const bmq_envelope_t *env) { return env->type == BMQ_MSG_VALIDATE_REPLY || env->type == BMQ_MSG_ERROR; }
static bool s_final_any (const bmq_envelope_t *env) { return env->type != BMQ_MSG_HEARTBEAT; }
static bool s_final_listing (const bmq_envelope_t *env) { return env->type == BMQ_MSG_SCRIPT_LISTING || env->type == BMQ_MSG_ERROR; }
static bool s_final_reply (const bmq_envelope_t *env)
{
    return env->type == BMQ_MSG_SCENE_REPLY || env->type == BMQ_MSG_CAPABILITIES_REPLY || env->type == BMQ_MSG_AUDIT_RESULT
        || env->type == BMQ_MSG_ERROR;
}

/* Send `env` (taken) and wait for the first answer `final` accepts. NULL when
 * none came in time (or the server is stopping, or the bus is unusable). */
static bmq_envelope_t *s_ask (bmq_http_req_t *req, bmq_envelope_t **env_p, s_final_fn *final, int timeout_ms)
{
    bmq_envelope_t *env = *env_p;
    *env_p = NULL;
    snprintf (env->sender, sizeof env->sender, "http");
    if (req->who.role != BMQ_ROLE_NONE) {           /* who asked: the gateway and the services check and audit it */
        if (!env->body) env->body = json_object ();
        json_object_set_new (env->body, "on_behalf_of", json_pack ("{s:s, s:s}", "name", req->who.name, "role", bmq_role_name (req->who.role)));
    }
    bmq_http_bus_t *bus = bmq_http_req_bus (req);
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", env->cid);
    int rc = bus ? bmq_http_bus_send (bus, env) : -1;
    bmq_envelope_destroy (&env);
    if (rc) return NULL;
    int64_t until = bmq_mono_ms () + timeout_ms;
    while (bmq_mono_ms () < until && !bmq_http_ctx_stopping (req->ctx)) {
        bmq_envelope_t *answer = bmq_http_bus_recv (bus, cid, SLICE_MS);
        if (answer && final (answer)) return answer;
        bmq_envelope_destroy (&answer);
    }
    return NULL;
}

static int s_timeout (bmq_http_req_t *req) { return bmq_http_ctx_options (req->ctx)->request_timeout_ms + 5000; }

/* A gateway `error` answer as an HTTP error. */
static enum MHD_Result s_gateway_error (bmq_http_req_t *req, const bmq_envelope_t *env)
{
    static const struct { const char *code; int status; const char *as; } map[] = {
        { "busy", 503, "busy" }, { "timeout", 504, "timeout" }, { "unsupported", 501, "not_available" },
        { "duplicate", 409, "duplicate" }, { "bad_message", 400, "bad_request" }, { "bad_request", 400, "bad_request" },
        { "interrupted", 503, "blender_unavailable" }, { "blender_unavailable", 503, "blender_unavailable" },
        { "planner_unavailable", 503, "planner_unavailable" }, { "validator_unavailable", 503, "validator_unavailable" },
        { "executor_unavailable", 503, "executor_unavailable" }, { "audit_unavailable", 503, "audit_unavailable" },
        { "validator_failed", 502, "validator_failed" }, { "unknown_tool", 404, "unknown_tool" },
        { "no_match", 422, "no_match" }, { NULL, 502, "gateway_error" },
    };
    const char *code = env ? bmq_body_str (env, "code") : NULL;
    if (!env) return bmq_http_reply_error (req, 504, "gateway_timeout", "no answer from the gateway in time");
    int i = 0;
    while (map[i].code && (!code || strcmp (map[i].code, code))) i++;
    return bmq_http_reply_error (req, map[i].status, map[i].as, "%s", bmq_body_str (env, "message") ? bmq_body_str (env, "message") : "error");
}

/* ---- request bodies -------------------------------------------------------------- */

static json_t *s_body_json (bmq_http_req_t *req, enum MHD_Result *rc)
{
    /* its Content-Type: checked by the router (the route's body is BMQ_BODY_JSON) */
    json_error_t jerr;
    json_t *body = json_loadb (req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!body) *rc = bmq_http_reply_error (req, 400, "bad_json", "the body is not valid JSON: %s (line %d, column %d)",
                                           jerr.text, jerr.line, jerr.column);
    return body;
}

/* A plan body: the seed 001 array itself, or {"plan": [...], "keep_partial": bool}. */
static json_t *s_plan_body (bmq_http_req_t *req, enum MHD_Result *rc)
{
    json_t *body = s_body_json (req, rc);
    if (!body) return NULL;
    json_t *out = json_is_array (body) ? json_pack ("{s:O}", "plan", body) : json_incref (body);
    json_decref (body);
    json_t *plan = json_object_get (out, "plan"), *keep = json_object_get (out, "keep_partial");
    if (!json_is_array (plan) || !json_array_size (plan) || (keep && !json_is_boolean (keep))) {
        *rc = bmq_http_reply_error (req, 400, "bad_request", "expected a non-empty array of steps, or {\"plan\": [steps], "
                                    "\"keep_partial\": true|false}; a step is {\"operation\", \"params\", \"name\", \"target\"}");
        json_decref (out);
        return NULL;
    }
    json_t *clean = json_pack ("{s:O}", "plan", plan);
    if (keep) json_object_set (clean, "keep_partial", keep);
    json_decref (out);
    return clean;
}

static json_t *s_links (const char *plan_id)
{
    char plan[128], events[160];
    snprintf (plan, sizeof plan, "/api/plans/%s", plan_id);
    snprintf (events, sizeof events, "/api/events?plan_id=%s", plan_id);
    return json_pack ("{s:s, s:s}", "plan", plan, "events", events);
}

/* The same shape as the gateway's own plan ids. */
static void s_new_plan_id (char *buf, size_t len)
{
    zuuid_t *uuid = zuuid_new ();
    snprintf (buf, len, "p-%.12s", zuuid_str (uuid));
    zuuid_destroy (&uuid);
}

/* ---- routes ----------------------------------------------------------------------- */

enum MHD_Result bmq_http_api_capabilities (bmq_http_req_t *req)
{
    const char *form = bmq_http_req_query (req, "form");
    if (form && strcmp (form, "full") && strcmp (form, "compact"))
        return bmq_http_reply_error (req, 400, "bad_request", "form must be full or compact");
    if (!form) form = "full";
    char *text = bmq_http_ctx_cached_caps (req->ctx, form);
    if (!text) {
        bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_CAPABILITIES_REQUEST, NULL, json_pack ("{s:s}", "form", form));
        bmq_envelope_t *answer = s_ask (req, &env, s_final_reply, s_timeout (req));
        if (!answer || answer->type != BMQ_MSG_CAPABILITIES_REPLY) {
            enum MHD_Result rc = s_gateway_error (req, answer);
            bmq_envelope_destroy (&answer);
            return rc;
        }
        text = json_dumps (answer->body, BMQ_MCP_JSON_FLAGS);
        bmq_envelope_destroy (&answer);
        bmq_http_ctx_cache_caps (req->ctx, form, text);
    }
    struct MHD_Response *resp = MHD_create_response_from_buffer (strlen (text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header (resp, "Content-Type", "application/json");
    return bmq_http_reply (req, 200, resp);
}

enum MHD_Result bmq_http_api_chat (bmq_http_req_t *req)
{
    enum MHD_Result rc;
    json_t *body = s_body_json (req, &rc);
    if (!body) return rc;
    json_t *prompt = json_object_get (body, "prompt"), *keep = json_object_get (body, "keep_partial");
    if (!json_is_object (body) || !json_is_string (prompt) || !json_string_length (prompt) || (keep && !json_is_boolean (keep))) {
        json_decref (body);
        return bmq_http_reply_error (req, 400, "bad_request", "expected {\"prompt\": \"build a snowman\"} (and optionally \"keep_partial\": true)");
    }
    char plan_id[32];
    s_new_plan_id (plan_id, sizeof plan_id);
    json_t *msg = json_pack ("{s:O, s:s}", "prompt", prompt, "plan_id", plan_id);
    if (keep) json_object_set (msg, "keep_partial", keep);
    json_decref (body);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_CHAT_REQUEST, NULL, msg);
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", env->cid);
    bmq_envelope_t *first = s_ask (req, &env, s_final_any, FIRST_ANSWER_MS);
    if (first && first->type == BMQ_MSG_ERROR) {
        rc = s_gateway_error (req, first);
        bmq_envelope_destroy (&first);
        return rc;
    }
    bmq_envelope_destroy (&first);
    return bmq_http_reply_json (req, 202, json_pack ("{s:s, s:s, s:s, s:o}", "plan_id", plan_id, "cid", cid,
                                                     "state", "planning", "links", s_links (plan_id)));
}

static enum MHD_Result s_plans (bmq_http_req_t *req, bool validate_only)
{
    enum MHD_Result rc;
    json_t *body = s_plan_body (req, &rc);
    if (!body) return rc;
    bmq_envelope_t *env = bmq_envelope_new (validate_only ? BMQ_MSG_VALIDATE_REQUEST : BMQ_MSG_RUN_REQUEST, NULL, body);
    bmq_envelope_t *answer = s_ask (req, &env, s_final_verdict, s_timeout (req));
    if (!answer || answer->type == BMQ_MSG_ERROR) {
        rc = s_gateway_error (req, answer);
        bmq_envelope_destroy (&answer);
        return rc;
    }
    json_t *verdict = json_deep_copy (answer->body);
    const char *plan_id = bmq_body_str (answer, "plan_id") ? bmq_body_str (answer, "plan_id") : "";
    bool accepted = json_is_true (json_object_get (verdict, "accepted"));
    if (validate_only) rc = bmq_http_reply_json (req, 200, verdict);
    else if (accepted)
        rc = bmq_http_reply_json (req, 202, json_pack ("{s:s, s:s, s:o, s:o}", "plan_id", plan_id, "state", "queued",
                                                       "verdict", verdict, "links", s_links (plan_id)));
    else
        rc = bmq_http_reply_json (req, 422, json_pack ("{s:{s:s, s:s}, s:s, s:o}", "error", "code", "rejected", "message",
                                                       "the plan was rejected by the validator; nothing ran (see verdict.errors)",
                                                       "plan_id", plan_id, "verdict", verdict));
    bmq_envelope_destroy (&answer);
    return rc;
}

enum MHD_Result bmq_http_api_plan_get (bmq_http_req_t *req)
{
    char id[BMQ_MAX_ID + 1];
    snprintf (id, sizeof id, "%.*s", (int) req->param_len, req->param);
    bmq_http_ctx_catch_up (req->ctx);
    json_t *rec = bmq_http_plans_get (bmq_http_ctx_plans (req->ctx), id);
    if (!rec) return bmq_http_reply_error (req, 404, "unknown_plan", "no plan %.64s is known here (plans are kept for the "
                                           "1000 most recent requests)", id);
    return bmq_http_reply_json (req, 200, rec);
}

enum MHD_Result bmq_http_api_scene (bmq_http_req_t *req)
{
    const char *limit = bmq_http_req_query (req, "limit"), *offset = bmq_http_req_query (req, "offset");
    char *end = NULL;
    long l = limit ? strtol (limit, &end, 10) : 100;
    if (limit && (*end || l < 0 || l > 1000)) return bmq_http_reply_error (req, 400, "bad_request", "limit must be 0..1000");
    long o = offset ? strtol (offset, &end, 10) : 0;
    if (offset && (*end || o < 0 || o > (1L << 30))) return bmq_http_reply_error (req, 400, "bad_request", "offset must be >= 0");
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                                            json_pack ("{s:s, s:{s:i, s:i}}", "command", "scene_info", "args", "limit", (int) l, "offset", (int) o));
    bmq_envelope_t *answer = s_ask (req, &env, s_final_reply, s_timeout (req));
    enum MHD_Result rc;
    if (!answer || answer->type != BMQ_MSG_SCENE_REPLY) rc = s_gateway_error (req, answer);
    else rc = bmq_http_reply_json (req, 200, json_incref (json_object_get (answer->body, "result")));
    bmq_envelope_destroy (&answer);
    return rc;
}

/* GET /api/audit?since=&until=&plan=&kind=&cid=&limit=&order=&after= — the
 * audit trail, a page at a time ({records, next}; pass next back as after). */
enum MHD_Result bmq_http_api_audit (bmq_http_req_t *req)
{
    json_t *filter = json_object ();
    static const char *texts[] = { "plan", "kind", "cid", NULL }, *times[] = { "since", "until", NULL };
    for (int i = 0; texts[i]; i++) {
        const char *v = bmq_http_req_query (req, texts[i]);
        if (v && strlen (v) <= 128) json_object_set_new (filter, texts[i], json_string (v));
    }
    char *end = NULL;
    for (int i = 0; times[i]; i++) {
        const char *v = bmq_http_req_query (req, times[i]);
        if (!v) continue;
        long long ms = strtoll (v, &end, 10);
        if (*end || ms < 0) {
            json_decref (filter);
            return bmq_http_reply_error (req, 400, "bad_request", "since/until are milliseconds since the Unix epoch");
        }
        json_object_set_new (filter, times[i], json_integer (ms));
    }
    json_t *body = json_pack ("{s:o}", "filter", filter);
    const char *limit = bmq_http_req_query (req, "limit"), *order = bmq_http_req_query (req, "order"),
               *after = bmq_http_req_query (req, "after");
    if (limit) {
        long l = strtol (limit, &end, 10);
        if (*end || l < 1 || l > 500) { json_decref (body); return bmq_http_reply_error (req, 400, "bad_request", "limit must be 1..500"); }
        json_object_set_new (body, "limit", json_integer (l));
    }
    if (order) {
        if (strcmp (order, "asc") && strcmp (order, "desc")) { json_decref (body); return bmq_http_reply_error (req, 400, "bad_request", "order must be asc or desc"); }
        json_object_set_new (body, "order", json_string (order));
    }
    if (after) {
        json_t *cursor = strlen (after) <= 256 ? json_loads (after, 0, NULL) : NULL;
        if (!json_is_array (cursor)) { json_decref (cursor); json_decref (body); return bmq_http_reply_error (req, 400, "bad_request", "after must be the `next` of the previous page"); }
        json_object_set_new (body, "after", cursor);
    }
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_AUDIT_QUERY, NULL, body);
    bmq_envelope_t *answer = s_ask (req, &env, s_final_reply, s_timeout (req));
    enum MHD_Result rc;
    if (!answer || answer->type != BMQ_MSG_AUDIT_RESULT) rc = s_gateway_error (req, answer);
    else rc = bmq_http_reply_json (req, 200, json_incref (answer->body));
    bmq_envelope_destroy (&answer);
    return rc;
}

static bool s_final_script (const bmq_envelope_t *env) { return env->type == BMQ_MSG_SCRIPT_REPLY || env->type == BMQ_MSG_ERROR; }

/* POST /api/scripts {script, mode?, attachment?, validate_only?}: script.request (validated, then
 * sandboxed; the script_id in the answer is the executor's, fresh for every submission);
 * POST /api/scripts/{id}/confirm {sha256}: script.confirm, applied only when sha256 is the sha256
 * of the sandboxed script (what the person reviewed). The answer is the script.reply body:
 * 200 validated / sandboxed / applied, 409 refused, 422 rejected / sandbox_failed / failed. */
/* GET /api/scripts: what the sandbox has seen, newest first, for "Apply to live" (each with its
 * sha256); GET /api/scripts/{id}: that entry with its exact text in "script", for review. */
static enum MHD_Result s_script_list (bmq_http_req_t *req, const char *id, size_t id_len)
{
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_SCRIPT_LIST, NULL, id ? json_pack ("{s:s%}", "script_id", id, id_len) : NULL);
    bmq_envelope_t *answer = s_ask (req, &env, s_final_listing, s_timeout (req));
    enum MHD_Result rc;
    if (!answer || answer->type != BMQ_MSG_SCRIPT_LISTING) rc = s_gateway_error (req, answer);
    else if (!id) rc = bmq_http_reply_json (req, 200, json_incref (answer->body));
    else {
        json_t *entry = json_array_get (json_object_get (answer->body, "scripts"), 0);
        if (json_is_object (entry)) rc = bmq_http_reply_json (req, 200, json_incref (entry));
        else rc = bmq_http_reply_error (req, 404, "unknown_script", "no sandboxed script %.*s is known (the executor keeps "
                                        "the 64 most recent)", (int) id_len, id);
    }
    bmq_envelope_destroy (&answer);
    return rc;
}

static bool s_is_sha256 (const json_t *v)
{
    const char *s = json_string_value (v);
    if (!s || strlen (s) != 64) return false;
    for (const char *c = s; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F'))) return false;
    return true;
}

static enum MHD_Result s_scripts (bmq_http_req_t *req, const char *confirm_id, size_t id_len)
{
    enum MHD_Result rc;
    json_t *in = s_body_json (req, &rc);             /* malformed bodies still get 400 */
    if (!in) return rc;
    json_t *body;
    if (confirm_id) {
        json_t *sha = json_object_get (in, "sha256");
        if (!json_is_object (in) || !s_is_sha256 (sha)) {
            json_decref (in);
            return bmq_http_reply_error (req, 400, "bad_request", "expected {\"sha256\": \"<64 hex digits>\"}: the sha256 of the "
                                         "script you reviewed (GET /api/scripts/{id}); only exactly that script is applied");
        }
        /* the channel a person confirmed through, for the audit: the page (its session), the Blender panel (its
         * `panel` key: scripts_client.py), or another client of a token */
        const char *channel = req->session ? "page" : !strcmp (req->who.name, "panel") ? "panel" : "http";
        body = json_pack ("{s:s%, s:O, s:s}", "script_id", confirm_id, id_len, "sha256", sha, "channel", channel);
    }
    else {
        json_t *script = json_object_get (in, "script"), *mode = json_object_get (in, "mode");
        json_t *att = json_object_get (in, "attachment"), *only = json_object_get (in, "validate_only");
        if (!json_is_object (in) || (script && !json_is_string (script)) || (!script && !att) || (mode && !json_is_string (mode))
            || (att && !json_is_object (att)) || (only && !json_is_boolean (only))) {
            json_decref (in);
            return bmq_http_reply_error (req, 400, "bad_request", "expected {\"script\": str, \"mode\": \"format-to-bpy\"|"
                                         "\"contextual\", \"attachment\": {\"name\", \"content\"}, \"validate_only\": bool}");
        }
        body = json_pack ("{s:o}", "script", script ? json_incref (script) : json_string (""));
        if (mode) json_object_set (body, "mode", mode);
        if (att) json_object_set (body, "attachment", att);
        if (only) json_object_set (body, "validate_only", only);
    }
    json_decref (in);
    bmq_envelope_t *env = bmq_envelope_new (confirm_id ? BMQ_MSG_SCRIPT_CONFIRM : BMQ_MSG_SCRIPT_REQUEST, NULL, body);
    bmq_envelope_t *answer = s_ask (req, &env, s_final_script, s_timeout (req));
    if (!answer || answer->type != BMQ_MSG_SCRIPT_REPLY) rc = s_gateway_error (req, answer);
    else {
        const char *status = bmq_body_str (answer, "status");
        if (!confirm_id) bmq_mcp_note_script (answer->body);       /* what confirm_script shows a person */
        int code = !strcmp (status, "refused") ? 409
                 : !strcmp (status, "validated") || !strcmp (status, "sandboxed") || !strcmp (status, "applied") ? 200 : 422;
        rc = bmq_http_reply_json (req, code, json_incref (answer->body));
    }
    bmq_envelope_destroy (&answer);
    return rc;
}

/* POST /api/plans/{id}/cancel: stop that plan. The gateway is asked by plan id, on a story
 * of its own (cancel.reply names what it stopped; the executor rolls it back): 202 cancelling,
 * 403 when the plan is another key's and this token is not a person's (issue 29), 404 when
 * no such plan is in progress. A live script is cancelled by its script id the same way. */
static bool s_final_cancel (const bmq_envelope_t *env) { return env->type == BMQ_MSG_CANCEL_REPLY || env->type == BMQ_MSG_ERROR; }

enum MHD_Result bmq_http_api_plan_cancel (bmq_http_req_t *req)
{
    char plan_id[128];
    snprintf (plan_id, sizeof plan_id, "%.*s", (int) req->param_len, req->param);
    bmq_http_ctx_catch_up (req->ctx);
    json_t *rec = bmq_http_plans_get (bmq_http_ctx_plans (req->ctx), plan_id);
    bool known = json_string_value (json_object_get (rec, "cid")) != NULL;
    json_decref (rec);
    /* not in this book: a live script (script.confirm, issue 29) is named by its script id, and the gateway knows it */
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_CANCEL_REQUEST, NULL, json_pack ("{s:s}", "plan_id", plan_id));
    bmq_envelope_t *answer = s_ask (req, &env, s_final_cancel, 10000);
    enum MHD_Result rc;
    const char *code = answer && answer->type == BMQ_MSG_ERROR ? bmq_body_str (answer, "code") : NULL;
    if (code && !strcmp (code, "forbidden"))
        rc = bmq_http_reply_error (req, 403, "forbidden", "%s", bmq_body_str (answer, "message") ?: "forbidden");
    else if (!known && (!answer || answer->type != BMQ_MSG_CANCEL_REPLY || !json_array_size (json_object_get (answer->body, "cancelled"))))
        rc = bmq_http_reply_error (req, 404, "unknown_plan", "no plan or script %s is in progress here%s%s", plan_id,
                                   answer && answer->type == BMQ_MSG_ERROR ? ": " : "",
                                   answer && answer->type == BMQ_MSG_ERROR ? bmq_body_str (answer, "message") ?: "" : "");
    else if (!answer || answer->type != BMQ_MSG_CANCEL_REPLY) rc = s_gateway_error (req, answer);
    else if (!json_array_size (json_object_get (answer->body, "cancelled")))
        rc = bmq_http_reply_error (req, 404, "unknown_plan", "no plan %s is in progress (it ended, or never started)", plan_id);
    else rc = bmq_http_reply_json (req, 202, json_pack ("{s:s, s:s}", "plan_id", plan_id, "state", "cancelling"));
    bmq_envelope_destroy (&answer);
    return rc;
}

/* GET /api/whoami: the name and role of the token (or the page's session). */
enum MHD_Result bmq_http_api_whoami (bmq_http_req_t *req)
{
    json_t *me = json_pack ("{s:s, s:s}", "name", req->who.name, "role", bmq_role_name (req->who.role));
    char nonce[BMQ_HTTP_CSRF_LEN + 1];
    /* the page's nonce for confirmations: readable by this origin only (no CORS grant to any other) */
    if (bmq_http_req_csrf (req, nonce, sizeof nonce)) json_object_set_new (me, "csrf", json_string (nonce));
    return bmq_http_reply_json (req, 200, me);
}

/* ---- health and metrics ------------------------------------------------------------------ */

enum MHD_Result bmq_http_api_health (bmq_http_req_t *req)
{
    int64_t age = bmq_http_ctx_loop_age_ms (req->ctx);
    bool ok = age < 5000;
    return bmq_http_reply_json (req, ok ? 200 : 503, json_pack ("{s:s, s:I}", "status", ok ? "ok" : "stuck", "gateway_loop_ms", (json_int_t) age));
}

enum MHD_Result bmq_http_api_metrics (bmq_http_req_t *req)
{
    bmq_http_ctx_catch_up (req->ctx);
    char *text = bmq_http_metrics_render (bmq_http_ctx_metrics (req->ctx));
    struct MHD_Response *resp = MHD_create_response_from_buffer (strlen (text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header (resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    return bmq_http_reply (req, 200, resp);
}

/* ---- the routes' entry points (http_routes.c names them) ------------------------------- */

enum MHD_Result bmq_http_api_plans_run (bmq_http_req_t *req) { return s_plans (req, false); }
enum MHD_Result bmq_http_api_plans_validate (bmq_http_req_t *req) { return s_plans (req, true); }
enum MHD_Result bmq_http_api_script_list (bmq_http_req_t *req) { return s_script_list (req, NULL, 0); }
enum MHD_Result bmq_http_api_script_get (bmq_http_req_t *req) { return s_script_list (req, req->param, req->param_len); }
enum MHD_Result bmq_http_api_script_submit (bmq_http_req_t *req) { return s_scripts (req, NULL, 0); }
enum MHD_Result bmq_http_api_script_confirm (bmq_http_req_t *req) { return s_scripts (req, req->param, req->param_len); }

enum MHD_Result bmq_http_api_confirmations (bmq_http_req_t *req)
{
    return bmq_http_reply_json (req, 200, json_pack ("{s:o}", "pending", bmq_mcp_pending_confirmations ()));
}
