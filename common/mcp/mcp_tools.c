/* mcp_tools — the MCP tool table, parsed from the built-in JSON files. */
#include "mcp_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char bmq_mcp_tools_json[];
extern const size_t bmq_mcp_tools_json_len;
extern const char bmq_mcp_test_tools_json[];
extern const size_t bmq_mcp_test_tools_json_len;

#define MAX_TOOLS 64

struct bmq_mcp_tools_t {
    json_t         *doc, *test_doc;
    json_t         *list;                  /* {"tools": [...]} */
    size_t          list_bytes;
    bmq_mcp_tool_t  tools[MAX_TOOLS];
    size_t          count;
};

static const struct { const char *name; bmq_mcp_tool_kind_t kind; } s_kinds[] = {
    { "capabilities", BMQ_TOOL_CAPABILITIES }, { "inspect", BMQ_TOOL_INSPECT }, { "validate", BMQ_TOOL_VALIDATE },
    { "execute", BMQ_TOOL_EXECUTE }, { "chat", BMQ_TOOL_CHAT }, { "scene_info", BMQ_TOOL_SCENE_INFO },
    { "object_info", BMQ_TOOL_OBJECT_INFO }, { "screenshot", BMQ_TOOL_SCREENSHOT }, { "forward", BMQ_TOOL_FORWARD },
    { "confirm", BMQ_TOOL_CONFIRM }, { "look", BMQ_TOOL_LOOK }, { "import", BMQ_TOOL_IMPORT },
    { "generate", BMQ_TOOL_GENERATE },
};

/* bmq_role_parse, bmq_role_name, bmq_role_allows: the one role model, common/roles.c */

/* Replace every string "@key" by a copy of doc[key] (shared schema fragments). */
static int s_resolve (json_t *node, const json_t *doc, char *err, size_t errlen)
{
    if (json_is_object (node)) {
        const char *key;
        json_t *v;
        json_object_foreach (node, key, v) {
            const char *s = json_string_value (v);
            if (s && s[0] == '@') {
                json_t *target = json_object_get (doc, s + 1);
                if (!target) { snprintf (err, errlen, "unknown schema fragment %s", s); return -1; }
                json_object_set_new (node, key, json_deep_copy (target));
            }
            else if (s_resolve (v, doc, err, errlen)) return -1;
        }
    }
    else if (json_is_array (node)) {
        size_t i;
        json_t *v;
        json_array_foreach (node, i, v)
            if (s_resolve (v, doc, err, errlen)) return -1;
    }
    return 0;
}

/* The entry as clients see it: keys starting with '_' removed. */
static json_t *s_public (const json_t *def)
{
    json_t *out = json_object ();
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) def, key, v)
        if (key[0] != '_') json_object_set (out, key, v);
    return out;
}

static int s_add (bmq_mcp_tools_t *self, json_t *def, bool test, char *err, size_t errlen)
{
    const char *name = json_string_value (json_object_get (def, "name"));
    if (!name || !json_is_string (json_object_get (def, "description")) || !json_is_object (json_object_get (def, "inputSchema"))) {
        snprintf (err, errlen, "tool %zu: name, description and inputSchema are required", self->count);
        return -1;
    }
    if (self->count == MAX_TOOLS || bmq_mcp_tools_find (self, name)) {
        snprintf (err, errlen, "tool %s: duplicate or too many tools", name);
        return -1;
    }
    bmq_mcp_tool_t *t = &self->tools[self->count++];
    t->name = name;
    t->def = def;
    t->structured = json_is_object (json_object_get (def, "outputSchema"));
    t->listed = !json_is_false (json_object_get (def, "_listed"));
    const char *role = json_string_value (json_object_get (def, "_role"));
    t->role = role ? bmq_role_parse (role) : test ? BMQ_ROLE_VIEWER : BMQ_ROLE_OPERATOR;
    if (t->role == BMQ_ROLE_NONE) { snprintf (err, errlen, "tool %s: unknown _role %s", name, role); return -1; }
    if (test) {
        t->kind = BMQ_TOOL_TEST;
        t->available = true;
        return 0;
    }
    const char *kind = json_string_value (json_object_get (def, "_kind"));
    size_t k = 0;
    while (k < sizeof s_kinds / sizeof *s_kinds && (!kind || strcmp (kind, s_kinds[k].name))) k++;
    if (k == sizeof s_kinds / sizeof *s_kinds) { snprintf (err, errlen, "tool %s: unknown _kind", name); return -1; }
    t->kind = s_kinds[k].kind;
    t->request_name = json_string_value (json_object_get (def, "_request"));
    t->request = t->request_name ? bmq_msg_type_from_name (t->request_name) : BMQ_MSG_UNKNOWN;
    const char *reply = json_string_value (json_object_get (def, "_reply"));
    t->reply = reply ? bmq_msg_type_from_name (reply) : BMQ_MSG_UNKNOWN;
    t->available = t->request != BMQ_MSG_UNKNOWN && (t->kind != BMQ_TOOL_FORWARD || t->reply != BMQ_MSG_UNKNOWN);
    if (t->kind == BMQ_TOOL_CONFIRM)     /* asks the executor's listing first, then confirms */
        t->available = t->available && bmq_msg_type_from_name ("script.list") != BMQ_MSG_UNKNOWN;
    if (t->kind == BMQ_TOOL_GENERATE)    /* the model made, it is imported as a one-step plan, answered by asset.generated */
        t->available = t->available && bmq_msg_type_from_name ("asset.generated") != BMQ_MSG_UNKNOWN
                       && bmq_msg_type_from_name ("asset.cancel") != BMQ_MSG_UNKNOWN;
    return 0;
}

static json_t *s_parse (const char *text, size_t len, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *doc = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) snprintf (err, errlen, "tool file %d:%d: %s", jerr.line, jerr.column, jerr.text);
    else if (!json_is_array (json_object_get (doc, "tools"))) {
        snprintf (err, errlen, "tool file: no tools array");
        json_decref (doc);
        doc = NULL;
    }
    return doc;
}

bmq_mcp_tools_t *bmq_mcp_tools_new (bool test_tools, char *err, size_t errlen)
{
    bmq_mcp_tools_t *self = calloc (1, sizeof *self);
    self->doc = s_parse (bmq_mcp_tools_json, bmq_mcp_tools_json_len, err, errlen);
    if (!self->doc || s_resolve (json_object_get (self->doc, "tools"), self->doc, err, errlen)) goto err;
    if (test_tools && !(self->test_doc = s_parse (bmq_mcp_test_tools_json, bmq_mcp_test_tools_json_len, err, errlen))) goto err;
    size_t i;
    json_t *def;
    json_array_foreach (json_object_get (self->doc, "tools"), i, def)
        if (s_add (self, def, false, err, errlen)) goto err;
    json_array_foreach (json_object_get (self->test_doc, "tools"), i, def)
        if (s_add (self, def, true, err, errlen)) goto err;
    json_t *tools = json_array ();
    for (size_t t = 0; t < self->count; t++)
        if (self->tools[t].available && self->tools[t].listed) json_array_append_new (tools, s_public (self->tools[t].def));
    self->list = json_pack ("{s:o}", "tools", tools);
    char *text = json_dumps (self->list, BMQ_MCP_JSON_FLAGS);
    self->list_bytes = text ? strlen (text) : 0;
    free (text);
    return self;
err:
    bmq_mcp_tools_destroy (&self);
    return NULL;
}

void bmq_mcp_tools_destroy (bmq_mcp_tools_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_mcp_tools_t *self = *self_p;
    json_decref (self->list);
    json_decref (self->doc);
    json_decref (self->test_doc);
    free (self);
    *self_p = NULL;
}

const json_t *bmq_mcp_tools_list (const bmq_mcp_tools_t *self) { return self->list; }
size_t bmq_mcp_tools_list_bytes (const bmq_mcp_tools_t *self) { return self->list_bytes; }

const bmq_mcp_tool_t *bmq_mcp_tools_find (const bmq_mcp_tools_t *self, const char *name)
{
    for (size_t i = 0; name && i < self->count; i++)
        if (!strcmp (self->tools[i].name, name)) return &self->tools[i];
    return NULL;
}
