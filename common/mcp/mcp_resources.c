/* mcp_resources — resources/list, templates, read; the surface's catalog. */
#include "mcp_surface_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char bmq_mcp_resources_json[];
extern const size_t bmq_mcp_resources_json_len;
extern const char bmq_mcp_test_tools_json[];
extern const size_t bmq_mcp_test_tools_json_len;

#define MAX_URI 1024

json_t *bmq_mcp_surface_public (const json_t *def)
{
    json_t *out = json_object ();
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) def, key, v) {
        if (key[0] == '_') continue;
        if (!strcmp (key, "arguments") && json_is_array (v)) {
            json_t *args = json_array ();
            size_t i;
            json_t *a;
            json_array_foreach (v, i, a) json_array_append_new (args, bmq_mcp_surface_public (a));
            json_object_set_new (out, key, args);
        }
        else json_object_set (out, key, v);
    }
    return out;
}

static json_t *s_public_list (const json_t *defs)
{
    json_t *list = json_array ();
    size_t i;
    json_t *d;
    json_array_foreach (defs, i, d) json_array_append_new (list, bmq_mcp_surface_public (d));
    return list;
}

/* Append doc[key] (an array, when present) to into. */
static int s_take (json_t *into, const char *text, size_t len, const char *const keys[3], json_t *const arrays[3], char *err,
                   size_t errlen)
{
    json_error_t jerr;
    json_t *doc = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr);
    (void) into;
    if (!doc) { snprintf (err, errlen, "resource file %d:%d: %s", jerr.line, jerr.column, jerr.text); return -1; }
    for (int k = 0; k < 3; k++) {
        json_t *a = json_object_get (doc, keys[k]);
        if (a && !json_is_array (a)) { snprintf (err, errlen, "resource file: %s is not an array", keys[k]); json_decref (doc); return -1; }
        json_array_extend (arrays[k], a ? a : json_array ());
    }
    json_decref (doc);
    return 0;
}

bmq_mcp_surface_t *bmq_mcp_surface_new (bool test_fixtures, char *err, size_t errlen)
{
    bmq_mcp_surface_t *self = calloc (1, sizeof *self);
    self->resources = json_array ();
    self->templates = json_array ();
    self->prompts = json_array ();
    static const char *const keys[3] = { "resources", "resourceTemplates", "prompts" };
    json_t *const arrays[3] = { self->resources, self->templates, self->prompts };
    if (s_take (NULL, bmq_mcp_resources_json, bmq_mcp_resources_json_len, keys, arrays, err, errlen)
        || (test_fixtures && s_take (NULL, bmq_mcp_test_tools_json, bmq_mcp_test_tools_json_len, keys, arrays, err, errlen)))
        goto err;
    size_t i;
    json_t *d;
    json_array_foreach (self->resources, i, d)
        if (!json_is_string (json_object_get (d, "uri")) || !json_is_string (json_object_get (d, "name"))) {
            snprintf (err, errlen, "resource %zu: uri and name are required", i);
            goto err;
        }
    json_array_foreach (self->templates, i, d) {
        const char *t = json_string_value (json_object_get (d, "uriTemplate"));
        const char *open = t ? strchr (t, '{') : NULL;
        if (!open || !strchr (open, '}') || strchr (strchr (open, '}'), '{')) {
            snprintf (err, errlen, "resource template %zu: uriTemplate needs exactly one {variable}", i);
            goto err;
        }
    }
    json_array_foreach (self->prompts, i, d)
        if (!json_is_string (json_object_get (d, "name")) || !json_is_array (json_object_get (d, "_messages"))) {
            snprintf (err, errlen, "prompt %zu: name and _messages are required", i);
            goto err;
        }
    self->resources_list = json_pack ("{s:o}", "resources", s_public_list (self->resources));
    self->templates_list = json_pack ("{s:o}", "resourceTemplates", s_public_list (self->templates));
    self->prompts_list = json_pack ("{s:o}", "prompts", s_public_list (self->prompts));
    return self;
err:
    bmq_mcp_surface_destroy (&self);
    return NULL;
}

void bmq_mcp_surface_destroy (bmq_mcp_surface_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_mcp_surface_t *self = *self_p;
    json_decref (self->resources);
    json_decref (self->templates);
    json_decref (self->prompts);
    json_decref (self->resources_list);
    json_decref (self->templates_list);
    json_decref (self->prompts_list);
    free (self);
    *self_p = NULL;
}

void bmq_mcp_answer_clear (bmq_mcp_answer_t *a)
{
    json_decref (a->result);
    json_decref (a->args);
    json_decref (a->error_data);
    memset (a, 0, sizeof *a);
}

json_t *bmq_mcp_resources_list (const bmq_mcp_surface_t *self) { return json_deep_copy (self->resources_list); }
json_t *bmq_mcp_resources_templates (const bmq_mcp_surface_t *self) { return json_deep_copy (self->templates_list); }

static int s_hex (int c) { return isdigit (c) ? c - '0' : isxdigit (c) ? (tolower (c) - 'a' + 10) : -1; }

const json_t *bmq_mcp_template_match (const bmq_mcp_surface_t *self, const char *uri, char *var, size_t varlen,
                                      char *value, size_t valuelen)
{
    size_t i, ulen = strlen (uri);
    json_t *d;
    json_array_foreach (self->templates, i, d) {
        const char *t = json_string_value (json_object_get (d, "uriTemplate"));
        const char *open = strchr (t, '{'), *close = strchr (open, '}');
        size_t pre = (size_t) (open - t), post = strlen (close + 1);
        if (ulen <= pre + post || strncmp (uri, t, pre) || strcmp (uri + ulen - post, close + 1)) continue;
        const char *v = uri + pre, *end = uri + ulen - post;
        if (memchr (v, '/', (size_t) (end - v))) continue;              /* one path segment */
        size_t n = 0;
        for (; v < end && n + 1 < valuelen; v++) {
            if (*v == '%' && end - v >= 3 && s_hex (v[1]) >= 0 && s_hex (v[2]) >= 0) {
                value[n++] = (char) (s_hex (v[1]) * 16 + s_hex (v[2]));
                v += 2;
            }
            else value[n++] = *v;
        }
        if (v < end || !n || memchr (value, 0, n)) continue;           /* too long, empty, or a NUL */
        value[n] = 0;
        snprintf (var, varlen, "%.*s", (int) (close - open - 1), open + 1);
        return d;
    }
    return NULL;
}

static const json_t *s_find (const bmq_mcp_surface_t *self, const char *uri)
{
    size_t i;
    json_t *d;
    json_array_foreach (self->resources, i, d)
        if (!strcmp (json_string_value (json_object_get (d, "uri")), uri)) return d;
    return NULL;
}

bool bmq_mcp_resources_known (const bmq_mcp_surface_t *self, const char *uri)
{
    char var[64], value[512];
    return uri && strlen (uri) < MAX_URI && (s_find (self, uri) || bmq_mcp_template_match (self, uri, var, sizeof var, value, sizeof value));
}

void bmq_mcp_resources_read (const bmq_mcp_surface_t *self, const char *uri, int not_found_code, bmq_mcp_answer_t *a)
{
    memset (a, 0, sizeof *a);
    if (!uri || !*uri || strlen (uri) >= MAX_URI) {
        a->error = -32602;
        snprintf (a->message, sizeof a->message, "resources/read needs params.uri (a string under %d bytes)", MAX_URI);
        return;
    }
    char var[64] = "", value[512] = "";
    const json_t *def = s_find (self, uri);
    if (!def) def = bmq_mcp_template_match (self, uri, var, sizeof var, value, sizeof value);
    if (!def) {
        a->error = not_found_code;
        snprintf (a->message, sizeof a->message, "Resource not found");
        a->error_data = json_pack ("{s:s}", "uri", uri);
        return;
    }
    const char *mime = json_string_value (json_object_get (def, "mimeType"));
    snprintf (a->mime, sizeof a->mime, "%s", mime ? mime : "application/json");
    json_t *contents = json_object_get (def, "_contents");
    if (contents) {                                        /* a fixture: served as written */
        json_t *vars = json_pack ("{s:s}", var[0] ? var : "_", value);
        a->result = json_pack ("{s:o}", "contents", bmq_mcp_fill (contents, vars, NULL));
        json_decref (vars);
        return;
    }
    a->tool = json_string_value (json_object_get (def, "_tool"));
    a->args = json_deep_copy (json_object_get (def, "_args"));
    if (!a->args) a->args = json_object ();
    const char *arg = json_string_value (json_object_get (def, "_arg"));
    const char *dot = arg ? strchr (arg, '.') : NULL;          /* "filter.plan": a key of an object argument */
    json_t *into = dot ? json_object_get (a->args, "filter") : a->args;
    if (dot && strncmp (arg, "filter.", 7)) into = NULL;
    if (arg && json_is_object (into)) json_object_set_new (into, dot ? dot + 1 : arg, json_string (value));
    const char *view = json_string_value (json_object_get (def, "_view"));
    snprintf (a->view, sizeof a->view, "%s", view ? view : "");
}

/* ---- a tool's result as contents ------------------------------------------- */

json_t *bmq_mcp_resource_contents (const char *uri, const char *mime, const json_t *result, char *err, size_t errlen)
{
    json_t *content = json_object_get (result, "content");
    if (!json_is_object (result) || json_is_true (json_object_get (result, "isError"))) {
        const char *text = json_string_value (json_object_get (json_array_get (content, 0), "text"));
        snprintf (err, errlen, "%s", text ? text : "the resource could not be read");
        return NULL;
    }
    json_t *contents = json_array ();
    json_t *structured = json_object_get (result, "structuredContent");
    if (structured) {                       /* the data alone, without the summary line meant for models */
        char *text = json_dumps (structured, BMQ_MCP_JSON_FLAGS);
        json_array_append_new (contents, json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType", "application/json", "text", text ? text : "{}"));
        free (text);
        return json_pack ("{s:o, s:i, s:s}", "contents", contents, "ttlMs", 0, "cacheScope", "private");
    }
    size_t i;
    json_t *c;
    json_array_foreach (content, i, c) {
        const char *type = json_string_value (json_object_get (c, "type"));
        if (type && (!strcmp (type, "image") || !strcmp (type, "audio")) && json_is_string (json_object_get (c, "data")))
            json_array_append_new (contents, json_pack ("{s:s, s:O, s:O}", "uri", uri, "mimeType", json_object_get (c, "mimeType"),
                                                        "blob", json_object_get (c, "data")));
        else if (type && !strcmp (type, "text") && json_is_string (json_object_get (c, "text"))) {
            const char *text = json_string_value (json_object_get (c, "text"));
            bool json = strchr ("{[", text[0]) && text[0];
            json_array_append_new (contents, json_pack ("{s:s, s:s, s:O}", "uri", uri,
                                                        "mimeType", json ? "application/json" : "text/plain", "text", json_object_get (c, "text")));
        }
    }
    (void) mime;
    if (!json_array_size (contents)) {
        json_decref (contents);
        snprintf (err, errlen, "the resource came back empty");
        return NULL;
    }
    return json_pack ("{s:o, s:i, s:s}", "contents", contents, "ttlMs", 0, "cacheScope", "private");
}
