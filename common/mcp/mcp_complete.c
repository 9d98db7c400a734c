/* mcp_complete — completion/complete: prompt arguments and resource template
 * variables, from a static list or from the live scene, the recipe book and
 * the palette (through the tools that serve them). */
#include "mcp_surface_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_VALUES 100

static const struct { const char *from, *tool; const char *args; } s_sources[] = {
    { "objects", "get_scene_info", "{\"limit\": 1000}" },
    { "recipes", "list_recipes", "{}" },
    { "operations", "discover_capabilities", "{\"form\": \"compact\"}" },
    { "assets", "search_assets", "{\"source\": \"polyhaven\"}" },  /* the catalogue, as import_asset takes its ids */
};

json_t *bmq_mcp_complete_filter (const json_t *names, const char *prefix)
{
    size_t plen = prefix ? strlen (prefix) : 0, i, total = 0;
    json_t *values = json_array (), *n;
    /* those that start with the prefix first, then those that contain it */
    for (int pass = 0; pass < 2; pass++)
        json_array_foreach (names, i, n) {
            const char *s = json_string_value (n);
            if (!s) continue;
            bool starts = !strncasecmp (s, prefix ? prefix : "", plen);
            bool hit = pass == 0 ? starts : (!starts && plen && strcasestr (s, prefix));
            if (!hit) continue;
            total++;
            if (json_array_size (values) < MAX_VALUES) json_array_append (values, n);
        }
    return json_pack ("{s:{s:o, s:I, s:b}}", "completion", "values", values, "total", (json_int_t) total,
                      "hasMore", total > MAX_VALUES);
}

json_t *bmq_mcp_complete_values (const char *from, const char *prefix, const json_t *result)
{
    json_t *names = json_array ();
    json_t *data = json_object_get (result, "structuredContent");
    json_t *parsed = NULL;
    if (!data) {                                     /* a forwarded reply: its JSON is the text */
        const char *text = json_string_value (json_object_get (json_array_get (json_object_get (result, "content"), 0), "text"));
        data = parsed = text ? json_loads (text, 0, NULL) : NULL;
    }
    if (json_is_true (json_object_get (result, "isError"))) data = NULL;
    size_t i;
    json_t *e;
    if (!strcmp (from, "objects"))
        json_array_foreach (json_object_get (data, "objects"), i, e) {
            json_t *name = json_object_get (e, "name");
            if (json_is_string (name)) json_array_append (names, name);
        }
    else if (!strcmp (from, "recipes"))
        json_array_foreach (json_object_get (data, "recipes"), i, e) {
            json_t *name = json_is_string (e) ? e : json_object_get (e, "name");
            if (json_is_string (name)) json_array_append (names, name);
        }
    else if (!strcmp (from, "assets"))
        json_array_foreach (json_object_get (data, "results"), i, e) {
            json_t *id = json_object_get (e, "id");
            if (json_is_string (id)) json_array_append (names, id);
        }
    else if (!strcmp (from, "operations")) {
        const char *op;
        json_t *v;
        json_object_foreach (json_object_get (data, "palette"), op, v) json_array_append_new (names, json_string (op));
    }
    json_t *out = bmq_mcp_complete_filter (names, prefix);
    json_decref (names);
    json_decref (parsed);
    return out;
}

/* Where the values of `argument` come from: the prompt's argument or the template's variable. */
static const json_t *s_source (const bmq_mcp_surface_t *self, const json_t *ref, const char *argument)
{
    const char *type = json_string_value (json_object_get (ref, "type"));
    size_t i;
    json_t *d;
    if (type && !strcmp (type, "ref/prompt")) {
        const char *name = json_string_value (json_object_get (ref, "name"));
        json_array_foreach (self->prompts, i, d) {
            if (!name || strcmp (json_string_value (json_object_get (d, "name")), name)) continue;
            size_t j;
            json_t *arg;
            json_array_foreach (json_object_get (d, "arguments"), j, arg)
                if (!strcmp (json_string_value (json_object_get (arg, "name")), argument)) return json_object_get (arg, "_complete");
        }
    }
    else if (type && !strcmp (type, "ref/resource")) {
        const char *uri = json_string_value (json_object_get (ref, "uri"));
        json_array_foreach (self->templates, i, d) {
            const char *t = json_string_value (json_object_get (d, "uriTemplate"));
            char var[64];
            const char *open = strchr (t, '{');
            snprintf (var, sizeof var, "%.*s", (int) (strchr (open, '}') - open - 1), open + 1);
            if (uri && !strcmp (uri, t) && !strcmp (var, argument)) return json_object_get (d, "_complete");
        }
    }
    return NULL;
}

/* Asset ids: the catalogue searched for what was typed (ids, names and tags
 * containing it), of the type the prompt's other argument names when it does. */
static void s_asset_search (json_t *args, const char *value, const json_t *context)
{
    if (*value) json_object_set_new (args, "query", json_string (value));
    const char *type = json_string_value (json_object_get (json_object_get (context, "arguments"), "type"));
    if (type && (!strcmp (type, "model") || !strcmp (type, "hdri") || !strcmp (type, "texture")))
        json_object_set_new (args, "type", json_string (type));
}

void bmq_mcp_complete (const bmq_mcp_surface_t *self, const json_t *params, bmq_mcp_answer_t *a)
{
    memset (a, 0, sizeof *a);
    json_t *ref = json_object_get (params, "ref"), *argument = json_object_get (params, "argument");
    const char *name = json_string_value (json_object_get (argument, "name"));
    const char *value = json_string_value (json_object_get (argument, "value"));
    if (!json_is_object (ref) || !name || !value || strlen (value) > 256) {
        a->error = -32602;
        snprintf (a->message, sizeof a->message, "completion/complete needs ref and argument {name, value} (a value of at most 256 bytes)");
        return;
    }
    const json_t *source = s_source (self, ref, name);
    if (json_is_array (source)) { a->result = bmq_mcp_complete_filter (source, value); return; }
    for (size_t i = 0; json_is_string (source) && i < sizeof s_sources / sizeof *s_sources; i++)
        if (!strcmp (json_string_value (source), s_sources[i].from)) {
            a->tool = s_sources[i].tool;
            a->args = json_loads (s_sources[i].args, 0, NULL);
            snprintf (a->from, sizeof a->from, "%s", s_sources[i].from);
            if (!strcmp (a->from, "assets")) s_asset_search (a->args, value, json_object_get (params, "context"));
            return;
        }
    a->result = json_pack ("{s:{s:[], s:i, s:b}}", "completion", "values", "total", 0, "hasMore", 0);     /* nothing to offer */
}
