/* mcp_result — JSON-RPC responses, tool results and the notifications a
 * call sends while it runs (log messages, progress); see mcp_call_internal.h. */
#include "mcp_call_internal.h"
#include "mcp_server.h"
#include "mcp_surface.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_levels[] = { "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency" };

int bmq_mcp_log_level (const char *name)
{
    for (int i = 0; name && i < 8; i++)
        if (!strcmp (name, s_levels[i])) return i;
    return -1;
}


/* ---- JSON-RPC and result builders ------------------------------------------ */

json_t *bmq_mcp_response (const json_t *id, json_t *result)
{
    return json_pack ("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

json_t *bmq_mcp_text (const char *text) { return json_pack ("{s:s, s:s}", "type", "text", "text", text); }

static json_t *s_vresult_error (const char *fmt, va_list ap)
{
    char text[4096];
    vsnprintf (text, sizeof text, fmt, ap);
    return json_pack ("{s:[o], s:b}", "content", bmq_mcp_text (text), "isError", 1);
}

json_t *bmq_mcp_result_error (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    json_t *r = s_vresult_error (fmt, ap);
    va_end (ap);
    return r;
}

/* A result with structuredContent (stolen) and its JSON as text, after an
 * optional one-line summary for people and models reading the text. */
json_t *bmq_mcp_result_structured (json_t *structured, const char *summary, bool is_error)
{
    char *json = json_dumps (structured, BMQ_MCP_JSON_FLAGS);
    size_t n = (summary ? strlen (summary) + 1 : 0) + strlen (json ? json : "") + 1;
    char *text = malloc (n);
    snprintf (text, n, "%s%s%s", summary ? summary : "", summary ? "\n" : "", json ? json : "");
    json_t *r = json_pack ("{s:[o], s:o}", "content", bmq_mcp_text (text), "structuredContent", structured);
    if (is_error) json_object_set_new (r, "isError", json_true ());
    free (text);
    free (json);
    return r;
}

/* A plan committed (execute, chat, import, generate): the session's
 * subscriptions to the scene and its objects hear of it before the result. */
static void s_notify_updates (bmq_mcp_call_t *self, const json_t *result, json_t *out)
{
    const char *status = json_string_value (json_object_get (json_object_get (result, "structuredContent"), "status"));
    if (!self->run || !json_array_size (self->notify_uris) || !status || strcmp (status, "done")) return;
    size_t i;
    json_t *uri;
    json_array_foreach (self->notify_uris, i, uri) {
        const char *u = json_string_value (uri);
        if (u && (!strcmp (u, "blendmq://scene") || !strncmp (u, "blendmq://objects/", 18) || !strcmp (u, "blendmq://preview")
                  || !strcmp (u, "blendmq://look")))
            json_array_append_new (out, json_pack ("{s:s, s:s, s:{s:O}}", "jsonrpc", "2.0", "method",
                                                   "notifications/resources/updated", "params", "uri", uri));
    }
}

void bmq_mcp_call_finish (bmq_mcp_call_t *self, json_t *result, json_t *out)
{
    self->over = true;
    if (self->shape == S_AS_RESOURCE && self->shape_view[0] && !json_is_true (json_object_get (result, "isError"))) {
        json_t *seen = bmq_mcp_audit_view (self->shape_view, self->shape_uri,
                                           json_object_get (json_object_get (result, "structuredContent"), "records"), self->on_behalf_of);
        json_decref (result);
        if (!seen) {                    /* nothing this key may read: as if there were no such resource */
            json_t *e = bmq_mcp_error (self->id, self->shape_not_found ? self->shape_not_found : -32002, "Resource not found");
            json_object_set_new (json_object_get (e, "error"), "data", json_pack ("{s:s}", "uri", self->shape_uri));
            json_array_append_new (out, e);
            return;
        }
        result = seen;
    }
    if (self->shape == S_AS_RESOURCE || self->shape == S_AS_COMPLETION) {
        char err[1024] = "";
        json_t *reshaped = self->shape == S_AS_COMPLETION ? bmq_mcp_complete_values (self->shape_from, self->shape_prefix, result)
                         : bmq_mcp_resource_contents (self->shape_uri, self->shape_mime, result, err, sizeof err);
        json_decref (result);
        json_array_append_new (out, reshaped ? bmq_mcp_response (self->id, reshaped) : bmq_mcp_error (self->id, -32603, err));
        return;
    }
    s_notify_updates (self, result, out);
    json_array_append_new (out, bmq_mcp_response (self->id, result));
}

void bmq_mcp_call_log (bmq_mcp_call_t *self, json_t *out, int level, const char *fmt, ...)
{
    if (level < self->log_level) return;
    char text[2048];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    json_array_append_new (out, json_pack ("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc", "2.0", "method", "notifications/message",
                                           "params", "level", s_levels[level], "logger", "blendmq", "data", text));
}

/* notifications/progress; the value must grow with each notification. */
void bmq_mcp_call_progress (bmq_mcp_call_t *self, json_t *out, double progress, double total, const char *message)
{
    if (!self->token || (self->progressed && progress <= self->last_progress)) return;
    self->progressed = true;
    self->last_progress = progress;
    json_t *params = json_pack ("{s:O, s:f}", "progressToken", self->token, "progress", progress);
    if (total > 0) json_object_set_new (params, "total", json_real (total));
    if (message) json_object_set_new (params, "message", json_string (message));
    json_array_append_new (out, json_pack ("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", "notifications/progress", "params", params));
}


/* ---- text templates ------------------------------------------------------ */

static json_t *s_fill_string (const char *s, const json_t *args, const json_t *fallback)
{
    size_t cap = strlen (s) + 64, used = 0;
    char *out = malloc (cap);
    while (*s) {
        const char *close = s[0] == '{' ? strchr (s, '}') : NULL;
        json_t *v = NULL;
        char key[64];
        if (close && (size_t) (close - s) < sizeof key) {
            snprintf (key, sizeof key, "%.*s", (int) (close - s - 1), s + 1);
            v = json_object_get (args, key);
            if (!v) v = json_object_get (fallback, key);
        }
        char *dump = v && !json_is_string (v) ? json_dumps (v, BMQ_MCP_JSON_FLAGS | JSON_ENCODE_ANY) : NULL;
        const char *piece = v ? (dump ? dump : json_string_value (v)) : s;
        size_t n = v ? strlen (piece) : 1;
        if (used + n + 1 > cap) { cap = (used + n + 1) * 2; out = realloc (out, cap); }
        memcpy (out + used, piece, n);
        used += n;
        free (dump);
        s = v ? close + 1 : s + 1;
    }
    out[used] = 0;
    json_t *r = json_string (out);
    free (out);
    return r ? r : json_string ("");
}

json_t *bmq_mcp_fill (const json_t *tmpl, const json_t *args, const json_t *fallback)
{
    if (json_is_string (tmpl)) return s_fill_string (json_string_value (tmpl), args, fallback);
    if (json_is_array (tmpl)) {
        json_t *out = json_array ();
        size_t i;
        json_t *v;
        json_array_foreach ((json_t *) tmpl, i, v) json_array_append_new (out, bmq_mcp_fill (v, args, fallback));
        return out;
    }
    if (json_is_object (tmpl)) {
        json_t *out = json_object ();
        const char *key;
        json_t *v;
        json_object_foreach ((json_t *) tmpl, key, v) json_object_set_new (out, key, bmq_mcp_fill (v, args, fallback));
        return out;
    }
    return json_deep_copy (tmpl);
}
