/* mcp_result — JSON-RPC responses, tool results and the notifications a
 * call sends while it runs (log messages, progress); see mcp_call_internal.h. */
#include "mcp_call_internal.h"

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

void bmq_mcp_call_finish (bmq_mcp_call_t *self, json_t *result, json_t *out)
{
    json_array_append_new (out, bmq_mcp_response (self->id, result));
    self->over = true;
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

