/* llm_gemini — the Gemini REST API (v1beta generateContent and
 * streamGenerateContent?alt=sse) behind the llm_client interface.
 *
 * Wire facts this relies on (ai.google.dev, API reference and the function
 * calling and thought signature guides):
 *  - POST {base}/v1beta/models/{model}:generateContent, key in x-goog-api-key
 *    (never in the URL, so it cannot end up in a log line quoting the URL).
 *  - The answer's candidates[0].content.parts[] hold text parts, thought parts
 *    ("thought": true), and functionCall {name, args, id?} parts; any part may
 *    carry a thoughtSignature that must go back in the same part, unchanged, in
 *    the next request (Gemini 3 refuses function calling history without it).
 *    Streamed, a signature may come alone in a last, empty text part. So the
 *    model's parts are sent back as received; streamed text pieces are joined
 *    only when neither piece carries a signature.
 *  - functionResponse {name, response: object, id?} parts answer the calls, in
 *    a user turn. A picture a tool returned (BMQ_LLM_IMAGE_KEY) follows them in
 *    that same turn as an inlineData {mimeType, data: base64} part (a user
 *    Content's Part; every Gemini model takes it there, while images inside
 *    functionResponse.parts are a Gemini 3 feature only).
 *  - candidates[0].finishReason: STOP, MAX_TOKENS, SAFETY, RECITATION,
 *    BLOCKLIST, PROHIBITED_CONTENT, SPII, MALFORMED_FUNCTION_CALL … and a
 *    blocked prompt has no candidate but promptFeedback.blockReason.
 *  - Function declaration schemas are an OpenAPI subset whose types are the
 *    enum names STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT. */
#include "llm_client.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    bmq_llm_t          base;
    char              *url;
    char              *api_key;
    bool               stream;
    bmq_llm_http_policy_t  policy;
    bmq_llm_http_hooks_t   hooks;
    void             (*on_text) (void *ctx, const char *text, size_t len);
    void              *text_ctx;
    struct curl_slist *headers;
    json_t            *request;     /* owns contents */
    json_t            *contents;
    /* one turn being received */
    json_t            *parts;
    bmq_llm_reply_t   *reply;
    bool               got_candidate;
    char               event_err[200];
} s_gemini_t;

/* The neutral schema with types as Gemini's enum names. New reference. */
static json_t *s_schema (const json_t *in)
{
    if (json_is_array (in)) {
        json_t *out = json_array ();
        size_t i;
        json_t *v;
        json_array_foreach (in, i, v) json_array_append_new (out, s_schema (v));
        return out;
    }
    if (!json_is_object (in)) return json_deep_copy (in);
    json_t *out = json_object ();
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) in, key, v) {
        if (!strcmp (key, "type") && json_is_string (v)) {
            char up[32];
            snprintf (up, sizeof up, "%s", json_string_value (v));
            for (char *c = up; *c; c++) *c = (char) toupper ((unsigned char) *c);
            json_object_set_new (out, key, json_string (up));
        }
        else if (!strcmp (key, "properties") && json_is_object (v)) {
            json_t *props = json_object ();
            const char *pk;
            json_t *pv;
            json_object_foreach (v, pk, pv) json_object_set_new (props, pk, s_schema (pv));
            json_object_set_new (out, key, props);
        }
        else json_object_set_new (out, key, s_schema (v));
    }
    return out;
}

static json_t *s_declarations (const json_t *tools)
{
    json_t *decls = json_array ();
    size_t i;
    json_t *t;
    json_array_foreach (tools, i, t) {
        json_t *d = json_pack ("{s:O, s:O}", "name", json_object_get (t, "name"),
                               "description", json_object_get (t, "description"));
        json_t *params = json_object_get (t, "parameters");
        if (json_is_object (params) && json_object_size (json_object_get (params, "properties")))
            json_object_set_new (d, "parameters", s_schema (params));
        json_array_append_new (decls, d);
    }
    return decls;
}

/* Append parts to a user turn, joining the previous one if it is a user turn. */
static void s_user_parts (s_gemini_t *g, json_t *parts)
{
    json_t *last = json_array_get (g->contents, json_array_size (g->contents) - 1);
    const char *role = json_string_value (json_object_get (last, "role"));
    if (last && role && !strcmp (role, "user"))
        json_array_extend (json_object_get (last, "parts"), parts);
    else
        json_array_append_new (g->contents, json_pack ("{s:s, s:O}", "role", "user", "parts", parts));
    json_decref (parts);
}

/* ---- receiving ----------------------------------------------------------- */

static bool s_text_only (const json_t *part)
{
    if (!json_is_string (json_object_get (part, "text")) || json_object_get (part, "thoughtSignature")) return false;
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) part, key, v)
        if (strcmp (key, "text") && strcmp (key, "thought")) return false;
    return true;
}

static void s_merge_part (s_gemini_t *g, const json_t *part)
{
    json_t *last = json_array_get (g->parts, json_array_size (g->parts) - 1);
    if (last && s_text_only (part) && s_text_only (last)
        && json_is_true (json_object_get (part, "thought")) == json_is_true (json_object_get (last, "thought"))) {
        const char *a = json_string_value (json_object_get (last, "text"));
        const char *b = json_string_value (json_object_get (part, "text"));
        size_t la = strlen (a), lb = strlen (b);
        char *joined = malloc (la + lb + 1);
        if (!joined) return;
        memcpy (joined, a, la);
        memcpy (joined + la, b, lb + 1);
        json_object_set_new (last, "text", json_string (joined));
        free (joined);
        return;
    }
    json_array_append_new (g->parts, json_deep_copy (part));
}

static bmq_llm_finish_t s_finish (const char *r)
{
    static const char *blocked[] = { "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
                                     "IMAGE_SAFETY", "LANGUAGE" };
    if (!r || !strcmp (r, "STOP") || !strcmp (r, "FINISH_REASON_UNSPECIFIED")) return BMQ_LLM_FINISH_STOP;
    if (!strcmp (r, "MAX_TOKENS")) return BMQ_LLM_FINISH_MAX_TOKENS;
    for (size_t i = 0; i < sizeof blocked / sizeof *blocked; i++)
        if (!strcmp (r, blocked[i])) return BMQ_LLM_FINISH_BLOCKED;
    if (!strcmp (r, "MALFORMED_FUNCTION_CALL") || !strcmp (r, "UNEXPECTED_TOOL_CALL") || !strcmp (r, "TOO_MANY_TOOL_CALLS"))
        return BMQ_LLM_FINISH_MALFORMED;
    return BMQ_LLM_FINISH_OTHER;
}

/* Take one GenerateContentResponse (whole, or one streamed chunk). -1 when it is not one. */
static int s_absorb (s_gemini_t *g, const json_t *resp)
{
    bmq_llm_reply_t *r = g->reply;
    if (!json_is_object (resp)) { snprintf (g->event_err, sizeof g->event_err, "an answer that is not a JSON object"); return -1; }
    json_t *error = json_object_get (resp, "error");
    if (error) {
        const char *m = json_string_value (json_object_get (error, "message"));
        snprintf (g->event_err, sizeof g->event_err, "error in the stream: %s", m ? m : "(no message)");
        return -1;
    }
    const char *block = json_string_value (json_object_get (json_object_get (resp, "promptFeedback"), "blockReason"));
    if (block) {
        g->got_candidate = true;
        r->finish = BMQ_LLM_FINISH_BLOCKED;
        snprintf (r->finish_raw, sizeof r->finish_raw, "%s", block);
        snprintf (r->detail, sizeof r->detail, "the prompt was blocked (%s)", block);
    }
    json_t *usage = json_object_get (resp, "usageMetadata");
    if (json_is_object (usage)) { json_decref (r->usage); r->usage = json_deep_copy (usage); }
    json_t *cands = json_object_get (resp, "candidates");
    if (cands && !json_is_array (cands)) { snprintf (g->event_err, sizeof g->event_err, "candidates is not a list"); return -1; }
    json_t *cand = json_array_get (cands, 0);
    if (!cand) return 0;
    if (!json_is_object (cand)) { snprintf (g->event_err, sizeof g->event_err, "a candidate that is not an object"); return -1; }
    g->got_candidate = true;
    json_t *parts = json_object_get (json_object_get (cand, "content"), "parts");
    if (parts && !json_is_array (parts)) { snprintf (g->event_err, sizeof g->event_err, "content.parts is not a list"); return -1; }
    size_t i;
    json_t *p;
    json_array_foreach (parts, i, p) {
        if (!json_is_object (p)) { snprintf (g->event_err, sizeof g->event_err, "a part that is not an object"); return -1; }
        s_merge_part (g, p);
        const char *text = json_string_value (json_object_get (p, "text"));
        if (text && !json_is_true (json_object_get (p, "thought")) && *text) {
            bmq_llm_reply_add_text (r, text, strlen (text));
            if (g->stream && g->on_text) { g->on_text (g->text_ctx, text, strlen (text)); r->streamed = true; }
        }
    }
    const char *fr = json_string_value (json_object_get (cand, "finishReason"));
    if (fr && r->finish != BMQ_LLM_FINISH_BLOCKED) {
        r->finish = s_finish (fr);
        snprintf (r->finish_raw, sizeof r->finish_raw, "%s", fr);
    }
    const char *fm = json_string_value (json_object_get (cand, "finishMessage"));
    if (fm) snprintf (r->detail, sizeof r->detail, "%s", fm);
    return 0;
}

static void s_reset_turn (s_gemini_t *g)
{
    bmq_llm_reply_clear (g->reply);
    json_decref (g->parts);
    g->parts = json_array ();
    g->got_candidate = false;
    g->event_err[0] = 0;
}

static int s_on_event (void *ctx, const char *data, size_t len)
{
    s_gemini_t *g = ctx;
    if (!data) { s_reset_turn (g); return 0; }
    json_error_t jerr;
    json_t *doc = json_loadb (data, len, 0, &jerr);
    if (!doc) {
        snprintf (g->event_err, sizeof g->event_err, "an event that is not JSON (%s)", jerr.text);
        return -1;
    }
    int rc = s_absorb (g, doc);
    json_decref (doc);
    return rc;
}

/* After the whole answer: the calls, and the model's turn into the history. */
static int s_finish_turn (s_gemini_t *g, bmq_llm_http_error_t *err)
{
    bmq_llm_reply_t *r = g->reply;
    if (!g->got_candidate) {
        snprintf (err->code, sizeof err->code, "bad_response");
        snprintf (err->message, sizeof err->message, "Gemini answered without a candidate or a block reason");
        return -1;
    }
    size_t i;
    json_t *p;
    json_array_foreach (g->parts, i, p) {
        json_t *fc = json_object_get (p, "functionCall");
        if (!fc) continue;
        const char *name = json_string_value (json_object_get (fc, "name"));
        bmq_llm_call_t *c = bmq_llm_reply_add_call (r, json_string_value (json_object_get (fc, "id")), name);
        if (!c) continue;
        json_t *args = json_object_get (fc, "args");
        if (!name) snprintf (c->args_error, sizeof c->args_error, "the call has no name");
        else if (!args) c->args = json_object ();
        else if (json_is_object (args)) c->args = json_incref (args);
        else snprintf (c->args_error, sizeof c->args_error, "its args are a JSON %s, not an object",
                       json_is_array (args) ? "array" : json_is_string (args) ? "string" : "scalar");
    }
    if (!r->text) r->text = strdup ("");
    if (json_array_size (g->parts))
        json_array_append_new (g->contents, json_pack ("{s:s, s:O}", "role", "model", "parts", g->parts));
    return 0;
}

/* ---- the interface ---------------------------------------------------------- */

static int s_turn (bmq_llm_t *base, bmq_llm_reply_t *reply, bmq_llm_http_error_t *err)
{
    s_gemini_t *g = (s_gemini_t *) base;
    g->reply = reply;
    s_reset_turn (g);
    bmq_llm_http_request_t req = {
        .url = g->url, .headers = g->headers, .body = g->request, .secret = g->api_key, .api_name = "Gemini",
        .on_event = g->stream ? s_on_event : NULL, .event_ctx = g,
        .event_err = g->event_err, .event_err_len = sizeof g->event_err,
    };
    json_t *doc = NULL;
    int rc = bmq_llm_http_post (&req, &g->policy, &g->hooks, &doc, err);
    if (rc == 0 && !g->stream && s_absorb (g, doc)) {
        snprintf (err->code, sizeof err->code, "bad_response");
        snprintf (err->message, sizeof err->message, "Gemini sent an answer that makes no sense: %s", g->event_err);
        rc = -1;
    }
    json_decref (doc);
    if (rc == 0) rc = s_finish_turn (g, err);
    if (rc) bmq_llm_http_redact (err->message, sizeof err->message, g->api_key);
    g->reply = NULL;
    return rc;
}

static void s_add_results (bmq_llm_t *base, const bmq_llm_reply_t *reply, json_t *const *results)
{
    s_gemini_t *g = (s_gemini_t *) base;
    json_t *parts = json_array (), *images = json_array ();
    for (size_t i = 0; i < reply->call_count; i++) {
        json_t *image = json_object_get (results[i], BMQ_LLM_IMAGE_KEY), *response = json_copy (results[i]);
        json_object_del (response, BMQ_LLM_IMAGE_KEY);
        json_t *fr = json_pack ("{s:s, s:o}", "name", reply->calls[i].name, "response", response);
        if (reply->calls[i].id) json_object_set_new (fr, "id", json_string (reply->calls[i].id));
        json_array_append_new (parts, json_pack ("{s:o}", "functionResponse", fr));
        const char *mime = json_string_value (json_object_get (image, "mime_type"));
        const char *data = json_string_value (json_object_get (image, "data"));
        if (mime && data)           /* Content.parts[].inlineData {mimeType, data (base64)}, in the same user turn */
            json_array_append_new (images, json_pack ("{s:{s:s, s:s}}", "inlineData", "mimeType", mime, "data", data));
    }
    json_array_extend (parts, images);
    json_decref (images);
    s_user_parts (g, parts);
}

static void s_add_user_text (bmq_llm_t *base, const char *text)
{
    s_user_parts ((s_gemini_t *) base, json_pack ("[{s:s}]", "text", text));
}

static json_t *s_history (bmq_llm_t *base)
{
    return ((s_gemini_t *) base)->contents;
}

static void s_destroy (bmq_llm_t *base)
{
    s_gemini_t *g = (s_gemini_t *) base;
    free (g->url);
    free (g->api_key);
    curl_slist_free_all (g->headers);
    json_decref (g->request);
    json_decref (g->parts);
    free (g);
}

static const bmq_llm_ops_t s_ops = { s_turn, s_add_results, s_add_user_text, s_destroy, s_history };

static bool s_model_ok (const char *m)
{
    if (!m || !*m || strlen (m) > 128) return false;
    for (; *m; m++)
        if (!isalnum ((unsigned char) *m) && *m != '-' && *m != '.' && *m != '_') return false;
    return true;
}

bmq_llm_t *bmq_llm_gemini_new (const bmq_llm_config_t *cfg, const char *prompt)
{
    const char *model = cfg->model && !strncmp (cfg->model, "models/", 7) ? cfg->model + 7 : cfg->model;
    if (!s_model_ok (model) || !cfg->base_url || !*cfg->base_url) return NULL;
    s_gemini_t *g = calloc (1, sizeof *g);
    if (!g) return NULL;
    g->base.ops = &s_ops;
    g->base.backend = "gemini";
    size_t bl = strlen (cfg->base_url);
    while (bl && cfg->base_url[bl - 1] == '/') bl--;
    size_t ul = bl + strlen (model) + 64;
    g->url = malloc (ul);
    if (g->url)
        snprintf (g->url, ul, "%.*s/v1beta/models/%s:%s", (int) bl, cfg->base_url, model,
                  cfg->stream ? "streamGenerateContent?alt=sse" : "generateContent");
    g->api_key = strdup (cfg->api_key ? cfg->api_key : "");
    g->stream = cfg->stream;
    g->policy = cfg->policy;
    g->hooks = cfg->hooks;
    g->on_text = cfg->on_text;
    g->text_ctx = cfg->text_ctx;
    if (g->api_key && *g->api_key) {
        size_t hl = strlen (g->api_key) + 32;
        char *h = malloc (hl);
        if (h) {
            snprintf (h, hl, "x-goog-api-key: %s", g->api_key);
            g->headers = curl_slist_append (NULL, h);
            memset (h, 0, hl);
            free (h);
        }
    }
    g->contents = json_pack ("[{s:s, s:[{s:s}]}]", "role", "user", "parts", "text", prompt);
    g->request = json_pack ("{s:{s:[{s:s}]}, s:O, s:[{s:o}], s:{s:{s:s}}}",
                            "systemInstruction", "parts", "text", cfg->system ? cfg->system : "",
                            "contents", g->contents,
                            "tools", "functionDeclarations", s_declarations (cfg->tools),
                            "toolConfig", "functionCallingConfig", "mode", "AUTO");
    g->parts = json_array ();
    if (!g->url || !g->api_key || !g->contents || !g->request) {
        json_decref (g->contents);
        s_destroy (&g->base);
        return NULL;
    }
    json_decref (g->contents);      /* the request holds it */
    return &g->base;
}
