/* llm_openai — OpenAI-compatible chat completions (Ollama, llama.cpp server,
 * vLLM, LM Studio, OpenAI itself) behind the llm_client interface.
 *
 * POST {base}/chat/completions with {model, messages, tools: [{type:
 * "function", function: {name, description, parameters}}], tool_choice:
 * "auto"}; the answer's choices[0].message carries content and tool_calls
 * [{id, type, function: {name, arguments}}] where arguments is a JSON *string*
 * (some servers send an object: both are taken). Each call is answered by a
 * {role: "tool", tool_call_id, content: "<JSON text>"} message after the
 * assistant message that made it. finish_reason: stop, tool_calls, length,
 * content_filter. The key, when there is one, goes in Authorization: Bearer.
 * Not streamed: a local model's progress is shown per function call. */
#include "llm_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    bmq_llm_t          base;
    char              *url;
    char              *api_key;
    bmq_llm_http_policy_t  policy;
    bmq_llm_http_hooks_t   hooks;
    struct curl_slist *headers;
    json_t            *request;
    json_t            *messages;    /* borrowed from request */
    int                turns;
} s_openai_t;

static json_t *s_tools (const json_t *tools)
{
    json_t *out = json_array ();
    size_t i;
    json_t *t;
    json_array_foreach (tools, i, t) {
        json_t *params = json_object_get (t, "parameters");
        json_t *p = params ? json_incref (params) : json_pack ("{s:s, s:{}}", "type", "object", "properties");
        json_array_append_new (out, json_pack ("{s:s, s:{s:O, s:O, s:o}}", "type", "function", "function",
                                               "name", json_object_get (t, "name"),
                                               "description", json_object_get (t, "description"), "parameters", p));
    }
    return out;
}

static bmq_llm_finish_t s_finish (const char *r)
{
    if (!r || !strcmp (r, "stop") || !strcmp (r, "tool_calls") || !strcmp (r, "function_call")) return BMQ_LLM_FINISH_STOP;
    if (!strcmp (r, "length")) return BMQ_LLM_FINISH_MAX_TOKENS;
    if (!strcmp (r, "content_filter")) return BMQ_LLM_FINISH_BLOCKED;
    return BMQ_LLM_FINISH_OTHER;
}

/* One tool call into reply (and its echo into `echo`). */
static void s_call (s_openai_t *o, bmq_llm_reply_t *reply, json_t *echo, const json_t *tc, size_t index)
{
    json_t *fn = json_object_get (tc, "function");
    const char *name = json_string_value (json_object_get (fn, "name"));
    const char *id = json_string_value (json_object_get (tc, "id"));
    char made[48];
    if (!id || !*id) {                      /* some local servers give none: the tool message needs one */
        snprintf (made, sizeof made, "call_%d_%zu", o->turns, index);
        id = made;
    }
    bmq_llm_call_t *c = bmq_llm_reply_add_call (reply, id, name);
    if (!c) return;
    json_t *args = json_object_get (fn, "arguments");
    char *args_text = NULL;
    if (!name) snprintf (c->args_error, sizeof c->args_error, "the call has no function name");
    else if (json_is_string (args)) {
        const char *s = json_string_value (args);
        json_error_t jerr;
        json_t *parsed = *s ? json_loads (s, JSON_REJECT_DUPLICATES, &jerr) : json_object ();
        if (json_is_object (parsed)) c->args = parsed;
        else {
            if (parsed) snprintf (c->args_error, sizeof c->args_error, "its arguments are JSON but not an object");
            else snprintf (c->args_error, sizeof c->args_error, "its arguments are not valid JSON (%.80s, at character %d)",
                           jerr.text, jerr.position);
            json_decref (parsed);
        }
        args_text = strdup (s);
    }
    else if (json_is_object (args)) { c->args = json_incref (args); args_text = json_dumps (args, JSON_COMPACT); }
    else if (!args) { c->args = json_object (); args_text = strdup ("{}"); }
    else snprintf (c->args_error, sizeof c->args_error, "its arguments are neither a JSON string nor an object");
    json_array_append_new (echo, json_pack ("{s:s, s:s, s:{s:s, s:s}}", "id", id, "type", "function", "function",
                                            "name", name ? name : "", "arguments", args_text ? args_text : "{}"));
    free (args_text);
}

static int s_parse (s_openai_t *o, const json_t *doc, bmq_llm_reply_t *reply, bmq_llm_http_error_t *err)
{
    const char *why = NULL;
    json_t *choice = json_array_get (json_object_get (doc, "choices"), 0);
    json_t *msg = json_object_get (choice, "message");
    json_t *e = json_object_get (doc, "error");
    if (e) {
        const char *m = json_is_string (e) ? json_string_value (e) : json_string_value (json_object_get (e, "message"));
        snprintf (err->code, sizeof err->code, "bad_response");
        snprintf (err->message, sizeof err->message, "the OpenAI-compatible server answered with an error: %s", m ? m : "(no message)");
        return -1;
    }
    if (!json_is_object (doc)) why = "the answer is not a JSON object";
    else if (!json_is_object (choice)) why = "choices[0] is missing";
    else if (!json_is_object (msg)) why = "choices[0].message is missing";
    json_t *content = json_object_get (msg, "content");
    json_t *calls = json_object_get (msg, "tool_calls");
    if (!why && content && !json_is_string (content) && !json_is_null (content)) why = "message.content is not text";
    if (!why && calls && !json_is_array (calls) && !json_is_null (calls)) why = "message.tool_calls is not a list";
    if (why) {
        snprintf (err->code, sizeof err->code, "bad_response");
        snprintf (err->message, sizeof err->message, "the OpenAI-compatible server sent an answer that makes no sense: %s", why);
        return -1;
    }
    const char *text = json_string_value (content);
    bmq_llm_reply_add_text (reply, text ? text : "", text ? strlen (text) : 0);
    json_t *echo = json_array ();
    size_t i;
    json_t *tc;
    json_array_foreach (calls, i, tc) s_call (o, reply, echo, tc, i);
    json_t *legacy = json_object_get (msg, "function_call");
    if (json_is_object (legacy) && !json_array_size (calls)) {
        json_t *wrapped = json_pack ("{s:O}", "function", legacy);
        s_call (o, reply, echo, wrapped, 0);
        json_decref (wrapped);
    }
    const char *fr = json_string_value (json_object_get (choice, "finish_reason"));
    reply->finish = s_finish (fr);
    snprintf (reply->finish_raw, sizeof reply->finish_raw, "%s", fr ? fr : "");
    json_t *usage = json_object_get (doc, "usage");
    if (json_is_object (usage)) reply->usage = json_deep_copy (usage);
    json_t *said = json_pack ("{s:s, s:s}", "role", "assistant", "content", text ? text : "");
    if (json_array_size (echo)) json_object_set (said, "tool_calls", echo);
    json_array_append_new (o->messages, said);
    json_decref (echo);
    return 0;
}

static int s_turn (bmq_llm_t *base, bmq_llm_reply_t *reply, bmq_llm_http_error_t *err)
{
    s_openai_t *o = (s_openai_t *) base;
    bmq_llm_reply_clear (reply);
    o->turns++;
    bmq_llm_http_request_t req = { .url = o->url, .headers = o->headers, .body = o->request, .secret = o->api_key,
                               .api_name = "the OpenAI-compatible server" };
    json_t *doc = NULL;
    int rc = bmq_llm_http_post (&req, &o->policy, &o->hooks, &doc, err);
    if (rc == 0) rc = s_parse (o, doc, reply, err);
    json_decref (doc);
    if (rc) bmq_llm_http_redact (err->message, sizeof err->message, o->api_key);
    return rc;
}

static void s_add_results (bmq_llm_t *base, const bmq_llm_reply_t *reply, json_t *const *results)
{
    s_openai_t *o = (s_openai_t *) base;
    json_t *images = json_array ();
    for (size_t i = 0; i < reply->call_count; i++) {
        json_t *image = json_object_get (results[i], BMQ_LLM_IMAGE_KEY), *copy = json_copy (results[i]);
        json_object_del (copy, BMQ_LLM_IMAGE_KEY);
        char *text = json_dumps (copy, JSON_COMPACT);
        json_decref (copy);
        json_array_append_new (o->messages, json_pack ("{s:s, s:s, s:s}", "role", "tool",
                                                       "tool_call_id", reply->calls[i].id ? reply->calls[i].id : "",
                                                       "content", text ? text : "{}"));
        free (text);
        const char *mime = json_string_value (json_object_get (image, "mime_type"));
        const char *data = json_string_value (json_object_get (image, "data"));
        if (mime && data) {         /* a tool message holds text only: the picture follows as the user's image */
            size_t n = strlen (mime) + strlen (data) + 16;
            char *url = malloc (n);
            if (url) {
                snprintf (url, n, "data:%s;base64,%s", mime, data);
                json_array_append_new (images, json_pack ("{s:s, s:{s:s}}", "type", "image_url", "image_url", "url", url));
                free (url);
            }
        }
    }
    if (json_array_size (images)) {
        json_array_insert_new (images, 0, json_pack ("{s:s, s:s}", "type", "text", "text", "The picture the tool returned:"));
        json_array_append_new (o->messages, json_pack ("{s:s, s:O}", "role", "user", "content", images));
    }
    json_decref (images);
}

static void s_add_user_text (bmq_llm_t *base, const char *text)
{
    s_openai_t *o = (s_openai_t *) base;
    json_array_append_new (o->messages, json_pack ("{s:s, s:s}", "role", "user", "content", text));
}

static json_t *s_history (bmq_llm_t *base)
{
    return ((s_openai_t *) base)->messages;
}

static void s_destroy (bmq_llm_t *base)
{
    s_openai_t *o = (s_openai_t *) base;
    free (o->url);
    free (o->api_key);
    curl_slist_free_all (o->headers);
    json_decref (o->request);
    free (o);
}

static const bmq_llm_ops_t s_ops = { s_turn, s_add_results, s_add_user_text, s_destroy, s_history };

bmq_llm_t *bmq_llm_openai_new (const bmq_llm_config_t *cfg, const char *prompt)
{
    if (!cfg->base_url || !*cfg->base_url || !cfg->model || !*cfg->model) return NULL;
    s_openai_t *o = calloc (1, sizeof *o);
    if (!o) return NULL;
    o->base.ops = &s_ops;
    o->base.backend = "openai";
    size_t bl = strlen (cfg->base_url);
    while (bl && cfg->base_url[bl - 1] == '/') bl--;
    o->url = malloc (bl + 32);
    if (o->url) snprintf (o->url, bl + 32, "%.*s/chat/completions", (int) bl, cfg->base_url);
    o->api_key = strdup (cfg->api_key ? cfg->api_key : "");
    o->policy = cfg->policy;
    o->hooks = cfg->hooks;
    if (o->api_key && *o->api_key) {
        size_t hl = strlen (o->api_key) + 32;
        char *h = malloc (hl);
        if (h) {
            snprintf (h, hl, "Authorization: Bearer %s", o->api_key);
            o->headers = curl_slist_append (NULL, h);
            memset (h, 0, hl);
            free (h);
        }
    }
    o->messages = json_pack ("[{s:s, s:s}, {s:s, s:s}]", "role", "system", "content", cfg->system ? cfg->system : "",
                             "role", "user", "content", prompt);
    o->request = json_pack ("{s:s, s:o, s:o, s:s, s:b}", "model", cfg->model, "messages", o->messages,
                            "tools", s_tools (cfg->tools), "tool_choice", "auto", "stream", 0);
    if (!o->url || !o->api_key || !o->request) {
        s_destroy (&o->base);
        return NULL;
    }
    return &o->base;
}
