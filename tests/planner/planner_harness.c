/* planner_harness — shared pieces of the dialogue tests. */
#include "planner_harness.h"
#include "bus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *H_GOOD_PLAN =
    "[{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"base\", \"params\": {\"radius\": 1.0, \"location\": [0, 0, 1]}},"
    " {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"head\", \"params\": {\"radius\": 0.5, \"location\": [0, 0, 2.3]}},"
    " {\"operation\": \"object.material\", \"target\": \"head\", \"params\": {\"color\": [1, 1, 1]}}]";
const char *H_BAD_PLAN =
    "[{\"operation\": \"bpy.ops.mesh.primitive_teapot_add\", \"name\": \"pot\"},"
    " {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"ball\", \"params\": {\"radius\": 5000}}]";

/* ---- fake gateway front ------------------------------------------------ */

typedef struct { h_exec_mode_t mode; } s_exec_args_t;

static void s_gateway (zsock_t *pipe, void *args)
{
    h_exec_mode_t mode = ((s_exec_args_t *) args)->mode;
    free (args);
    zsock_t *router = bmq_bus_bind_as (ZMQ_ROUTER, "tcp://127.0.0.1:*", "gateway");   /* plays the gateway */
    zsock_signal (pipe, 0);
    char *endpoint = zsock_last_endpoint (router);     /* czmq 4.2: the caller frees it */
    zstr_send (pipe, endpoint);
    free (endpoint);
    int asked = 0;
    zpoller_t *poller = zpoller_new (pipe, router, NULL);
    while (true) {
        zsock_t *which = zpoller_wait (poller, -1);
        if (which == pipe) {
            char *cmd = zstr_recv (pipe);
            bool term = !cmd || !strcmp (cmd, "$TERM");
            if (cmd && !strcmp (cmd, "ASKED")) zstr_sendf (pipe, "%d", asked);
            free (cmd);
            if (term) break;
            continue;
        }
        if (which != router) break;
        zframe_t *rid = NULL;
        bmq_envelope_t *env = bmq_bus_recv (router, &rid);
        if (env && env->type == BMQ_MSG_CAPABILITIES_REQUEST) {
            bmq_envelope_t *reply = bmq_envelope_error (env, "validator_unavailable", "no validator is connected");
            bmq_bus_send_and_destroy (router, rid, &reply);
        }
        else if (env && env->type == BMQ_MSG_ASSET_SEARCH) {         /* the executor's asset.result, as relayed */
            const char *source = bmq_body_str (env, "source");
            bmq_envelope_t *reply = source && !strcmp (source, "polyhaven")
                ? bmq_envelope_new (BMQ_MSG_ASSET_RESULT, env->cid, json_pack (
                      "{s:s, s:[{s:s, s:s, s:s, s:[s], s:[s, s]}, {s:s, s:s, s:s, s:[], s:[]}]}", "source", "polyhaven", "results",
                      "id", "studio_small_09", "name", "Studio Small 09", "type", "hdri", "categories", "studio",
                      "tags", "soft", "indoor", "id", "brown_photostudio_02", "name", "Brown Photostudio 02", "type", "hdri",
                      "categories", "tags"))
                : bmq_envelope_error (env, "asset_source", "%s is not served yet (only polyhaven)", source ? source : "?");
            bmq_bus_send_and_destroy (router, rid, &reply);
        }
        else if (env && env->type == BMQ_MSG_SCENE_REQUEST && !strcmp (bmq_body_str (env, "command"), "look")) {
            bmq_envelope_t *reply = bmq_envelope_new (BMQ_MSG_SCENE_REPLY, env->cid, json_pack (
                "{s:s, s:{s:[s, s], s:i, s:i, s:{s:i, s:i}, s:i, s:[{s:s, s:s, s:i, s:i, s:i, s:i, s:{s:[f, f, f], s:[f, f, f]}}],"
                " s:{s:i, s:i, s:i, s:i, s:i, s:i}}}", "command", "look", "result", "angles", "front", "top", "width", 64,
                "height", 64, "sheet", "width", 128, "height", 64, "count", 1, "objects", "name", "base", "type", "MESH",
                "vertices", 482, "faces", 480, "non_manifold_edges", 0, "loose_parts", 1, "bounds", "min", -1.0, -1.0, 0.0,
                "max", 1.0, 1.0, 2.0, "totals", "objects", 1, "with_geometry", 1, "vertices", 482, "faces", 480,
                "non_manifold_edges", 0, "loose_parts", 1));
            static const unsigned char png[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R' };
            bmq_envelope_set_blob (reply, png, sizeof png);
            bmq_bus_send_and_destroy (router, rid, &reply);
        }
        else if (env && env->type == BMQ_MSG_INSPECT_REQUEST) {
            asked++;
            bmq_envelope_t *reply = NULL;
            const char *name = bmq_body_str (env, "tool_name");
            if (mode == H_EXEC_ANSWER)
                reply = bmq_envelope_reply (env, BMQ_MSG_INSPECT_REPLY, json_pack (
                    "{s:{s:s, s:s, s:[{s:s, s:s, s:f, s:f, s:f}]}}", "tool", "name", name, "description", "Construct a conic mesh",
                    "params", "name", "radius1", "type", "FLOAT", "default", 1.0, "min", 0.0, "max", 3.4e38));
            else if (mode == H_EXEC_ERROR)
                reply = bmq_envelope_error (env, "unsupported", "executor does not handle inspect.request");
            if (reply) bmq_bus_send_and_destroy (router, rid, &reply);
        }
        bmq_envelope_destroy (&env);
        zframe_destroy (&rid);
    }
    zpoller_destroy (&poller);
    zsock_destroy (&router);
}

int h_inspect_asked (h_world_t *w)
{
    zstr_send (w->gateway, "ASKED");
    char *n = zstr_recv (w->gateway);
    int asked = n ? atoi (n) : -1;
    free (n);
    return asked;
}

/* ---- sink ------------------------------------------------------------------- */

static void s_note (void *ctx, const char *text)
{
    h_sink_t *s = ctx;
    json_array_append_new (s->notes, json_string (text));
}

static void s_audit (void *ctx, const char *kind, json_t *data)
{
    h_sink_t *s = ctx;
    json_array_append_new (s->audit, json_pack ("{s:s, s:o}", "kind", kind, "data", data));
}

static bool s_cancelled (void *ctx)
{
    h_sink_t *s = ctx;
    return s->cancel_after_notes > 0 && (int) json_array_size (s->notes) >= s->cancel_after_notes;
}

bool h_noted (h_world_t *w, const char *needle)
{
    size_t i;
    json_t *n;
    json_array_foreach (w->sink.notes, i, n)
        if (strstr (json_string_value (n), needle)) return true;
    return false;
}

char *h_everything (h_world_t *w)
{
    json_t *all = json_pack ("{s:O, s:O, s:s, s:s}", "notes", w->sink.notes, "audit", w->sink.audit,
                             "code", w->result.code, "message", w->result.message);
    if (w->result.errors) json_object_set (all, "errors", w->result.errors);
    char *text = json_dumps (all, JSON_COMPACT);
    json_decref (all);
    return text;
}

/* ---- world ------------------------------------------------------------------ */

h_world_t *h_world_new (const char *backend, h_exec_mode_t mode)
{
    h_world_t *w = calloc (1, sizeof *w);
    char err[512];
    w->palette = bmq_palette_load (BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);
    w->prompts = bmq_prompts_load (BMQ_SOURCE_DIR "/prompts", err, sizeof err);
    if (!w->palette || !w->prompts) { fprintf (stderr, "harness: %s\n", err); abort (); }
    w->llm = fake_llm_new ();
    s_exec_args_t *args = malloc (sizeof *args);
    args->mode = mode;
    w->gateway = zactor_new (s_gateway, args);
    char *ep = zstr_recv (w->gateway);
    snprintf (w->gateway_ep, sizeof w->gateway_ep, "%s", ep);
    free (ep);
    w->sink.notes = json_array ();
    w->sink.audit = json_array ();
    w->plan_sink = (bmq_plan_sink_t) { .note = s_note, .audit = s_audit, .cancelled = s_cancelled, .ctx = &w->sink };
    bmq_dialogue_opts_t *o = &w->opts;
    o->backend = backend;
    o->llm.base_url = fake_llm_url (w->llm);
    o->llm.model = !strcmp (backend, "gemini") ? "gemini-test-flash" : "local-model";
    o->llm.api_key = H_KEY;
    o->llm.policy = (bmq_llm_http_policy_t) { .connect_timeout_ms = 2000, .request_timeout_ms = 5000, .max_retries = 3,
                                          .retry_base_ms = 20, .retry_max_ms = 200, .retry_after_max_ms = 3000 };
    o->timeout_ms = 20000;
    o->max_turns = 10;
    o->max_fix_rounds = 2;
    o->max_reformats = 2;
    o->system_prompt = bmq_prompts_get (w->prompts, BMQ_PROMPT_PLANNER);
    o->user_template = bmq_prompts_get (w->prompts, BMQ_PROMPT_CONTEXTUAL);
    o->reformat_template = bmq_prompts_get (w->prompts, BMQ_PROMPT_REFORMAT);
    o->fix_template = bmq_prompts_get (w->prompts, BMQ_PROMPT_FIX);
    o->palette = w->palette;
    o->gateway_endpoint = w->gateway_ep;
    o->inspect_timeout_ms = 300;
    o->cid = "story-1";
    return w;
}

void h_world_destroy (h_world_t **self_p)
{
    if (!self_p || !*self_p) return;
    h_world_t *w = *self_p;
    bmq_dialogue_result_clear (&w->result);
    zactor_destroy (&w->gateway);
    fake_llm_destroy (&w->llm);
    bmq_prompts_destroy (&w->prompts);
    bmq_palette_destroy (&w->palette);
    json_decref (w->sink.notes);
    json_decref (w->sink.audit);
    free (w);
    *self_p = NULL;
}

int h_run (h_world_t *w, const char *prompt)
{
    bmq_dialogue_result_clear (&w->result);
    return bmq_dialogue_run (&w->opts, prompt, &w->plan_sink, &w->result);
}

/* ---- answer builders --------------------------------------------------------- */

char *h_gemini_call (const char *name, const char *args_json, const char *sig)
{
    json_t *args = json_loads (args_json, 0, NULL);
    json_t *part = json_pack ("{s:{s:s, s:o}}", "functionCall", "name", name, "args", args ? args : json_string (args_json));
    if (sig) json_object_set_new (part, "thoughtSignature", json_string (sig));
    json_t *resp = json_pack ("{s:[{s:{s:s, s:[o]}, s:s, s:i}], s:{s:i, s:i}}", "candidates", "content", "role", "model",
                              "parts", part, "finishReason", "STOP", "index", 0,
                              "usageMetadata", "promptTokenCount", 100, "candidatesTokenCount", 20);
    char *text = json_dumps (resp, JSON_COMPACT);
    json_decref (resp);
    return text;
}

char *h_gemini_text (const char *text, const char *finish)
{
    json_t *resp = json_pack ("{s:[{s:{s:s, s:[{s:s}]}, s:s}]}", "candidates", "content", "role", "model",
                              "parts", "text", text, "finishReason", finish);
    char *out = json_dumps (resp, JSON_COMPACT);
    json_decref (resp);
    return out;
}

char *h_openai_call (const char *id, const char *name, const char *args_text)
{
    json_t *resp = json_pack ("{s:s, s:s, s:[{s:i, s:{s:s, s:n, s:[{s:s, s:s, s:{s:s, s:s}}]}, s:s}], s:{s:i, s:i}}",
                              "id", "chatcmpl-1", "object", "chat.completion", "choices", "index", 0,
                              "message", "role", "assistant", "content", "tool_calls", "id", id, "type", "function",
                              "function", "name", name, "arguments", args_text, "finish_reason", "tool_calls",
                              "usage", "prompt_tokens", 90, "completion_tokens", 30);
    char *out = json_dumps (resp, JSON_COMPACT);
    json_decref (resp);
    return out;
}

char *h_openai_text (const char *text, const char *finish)
{
    json_t *resp = json_pack ("{s:[{s:i, s:{s:s, s:s}, s:s}]}", "choices", "index", 0,
                              "message", "role", "assistant", "content", text, "finish_reason", finish);
    char *out = json_dumps (resp, JSON_COMPACT);
    json_decref (resp);
    return out;
}
