/* planner_tools — declarations and answers for the planning functions. */
#include "planner_tools.h"
#include "planner_place.h"
#include "bus.h"
#include "inspect.h"
#include "log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bmq_tools_t {
    json_t  *full, *compact;        /* capabilities.reply bodies (references) */
    char    *gateway;
    int      timeout_ms;
    char     cid[BMQ_MAX_ID + 1];
    bool   (*cancelled) (void *ctx);
    void    *cancel_ctx;
    json_t  *described;             /* the palette described: primitive defaults for place's boxes */
    bmq_place_t *place;             /* place's objects, this dialogue's */
};

bmq_tools_t *bmq_tools_new (const bmq_palette_t *palette, const bmq_caps_snapshot_t *caps, const char *gateway_endpoint,
                            int inspect_timeout_ms, const char *cid, bool (*cancelled) (void *ctx), void *cancel_ctx)
{
    bmq_tools_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    if (caps) {
        self->full = json_incref (caps->full);
        self->compact = json_incref (caps->compact);
    }
    else {
        self->full = bmq_planner_caps_body (palette, false, json_pack ("{s:s}", "state", "curated"));
        self->compact = bmq_planner_caps_body (palette, true, json_pack ("{s:s}", "state", "curated"));
    }
    self->gateway = gateway_endpoint && *gateway_endpoint ? strdup (gateway_endpoint) : NULL;
    self->timeout_ms = inspect_timeout_ms > 0 ? inspect_timeout_ms : 3000;
    snprintf (self->cid, sizeof self->cid, "%s", cid ? cid : "");
    self->cancelled = cancelled;
    self->cancel_ctx = cancel_ctx;
    self->described = bmq_palette_describe (palette);
    self->place = bmq_place_new (self->described);
    if (!self->described || !self->place) bmq_tools_destroy (&self);
    return self;
}

void bmq_tools_destroy (bmq_tools_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_tools_t *self = *self_p;
    json_decref (self->full);
    json_decref (self->compact);
    bmq_place_destroy (&self->place);
    json_decref (self->described);
    free (self->gateway);
    free (self);
    *self_p = NULL;
}

/* ---- declarations -------------------------------------------------------- */

/* A palette parameter as a neutral schema. */
static json_t *s_param_schema (const json_t *p)
{
    const char *type = json_string_value (json_object_get (p, "type"));
    const char *desc = json_string_value (json_object_get (p, "description"));
    json_t *s;
    if (!type) type = "";
    if (!strcmp (type, "float")) s = json_pack ("{s:s}", "type", "number");
    else if (!strcmp (type, "int")) s = json_pack ("{s:s}", "type", "integer");
    else if (!strcmp (type, "bool")) s = json_pack ("{s:s}", "type", "boolean");
    else if (!strcmp (type, "enum")) s = json_pack ("{s:s, s:O}", "type", "string", "enum", json_object_get (p, "items"));
    else if (!strcmp (type, "vec3")) s = json_pack ("{s:s, s:{s:s}}", "type", "array", "items", "type", "number");
    else if (!strcmp (type, "color")) s = json_pack ("{s:s, s:{s:s}}", "type", "array", "items", "type", "number");
    else s = json_pack ("{s:s}", "type", "string");
    if (desc) json_object_set_new (s, "description", json_string (desc));
    else if (!strcmp (type, "vec3")) json_object_set_new (s, "description", json_string ("[x, y, z]"));
    else if (!strcmp (type, "color")) json_object_set_new (s, "description", json_string ("[r, g, b] or [r, g, b, a], each 0..1"));
    return s;
}

/* Every parameter name of the palette with its schema; a name whose type
 * differs between operations ("value" is a vec3 for translate, a float for
 * rotate) accepts any of them. */
static json_t *s_param_union (const json_t *described)
{
    json_t *props = json_object ();
    const char *op;
    json_t *entry;
    json_object_foreach (json_object_get (described, "operations"), op, entry) {
        const char *pname;
        json_t *p;
        json_object_foreach (json_object_get (entry, "params"), pname, p) {
            json_t *s = s_param_schema (p);
            json_object_del (s, "description");
            json_t *have = json_object_get (props, pname);
            json_t *have_items = json_object_get (have, "enum"), *items = json_object_get (s, "enum");
            if (have_items && items) {              /* two enums: one enum of every item */
                size_t k;
                json_t *it;
                json_array_foreach (items, k, it) {
                    bool seen = false;
                    size_t j;
                    json_t *h;
                    json_array_foreach (have_items, j, h) seen = seen || json_equal (h, it);
                    if (!seen) json_array_append (have_items, it);
                }
                json_decref (s);
            }
            else if (!have) json_object_set_new (props, pname, s);
            else if (json_object_get (have, "anyOf")) {
                json_t *alts = json_object_get (have, "anyOf");
                size_t i;
                json_t *a;
                bool seen = false;
                json_array_foreach (alts, i, a) seen = seen || json_equal (a, s);
                if (!seen) json_array_append (alts, s);
                json_decref (s);
            }
            else if (!json_equal (have, s))
                json_object_set_new (props, pname, json_pack ("{s:[O, o]}", "anyOf", have, s));
            else json_decref (s);
        }
    }
    return props;
}

json_t *bmq_tools_declarations (const bmq_palette_t *palette, bool script_mode)
{
    json_t *described = bmq_palette_describe (palette);
    json_t *ops = json_array ();
    const char *op;
    json_t *entry;
    json_object_foreach (json_object_get (described, "operations"), op, entry) json_array_append_new (ops, json_string (op));
    json_t *decls = json_pack ("[{s:s, s:s, s:{s:s, s:{s:{s:s, s:[s, s], s:s}}}}, {s:s, s:s, s:{s:s, s:{s:{s:s, s:s}}, s:[s]}}]",
        "name", "discover_capabilities",
        "description", "List the operations a plan may use: what each does, whether it creates an object or acts on one, "
                       "and its parameters with their types, bounds and defaults. Call it before planning anything non-trivial.",
        "parameters", "type", "object", "properties", "form", "type", "string", "enum", "full", "compact",
        "description", "full (default): with descriptions; compact: one signature line per operation",
        "name", "inspect_tool",
        "description", "Describe one operation in full, from Blender itself: every parameter, its type, default, limits "
                       "and enum items. The answer also gives what validation allows for it.",
        "parameters", "type", "object", "properties", "tool_name", "type", "string",
        "description", "The operation, e.g. bpy.ops.mesh.primitive_cone_add", "required", "tool_name");
    if (script_mode) {
        json_decref (ops);
        json_array_append_new (decls, json_pack ("{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}, s:[s]}}",
            "name", "submit_script",
            "description", "Submit a complete Blender Python script (bpy only) that builds what was asked. It is checked, "
                           "run in an isolated Blender, and shown to the user before it touches the live scene.",
            "parameters", "type", "object", "properties",
            "title", "type", "string", "description", "A short name for what the script builds, e.g. snowman",
            "script", "type", "string", "description", "The whole Python file",
            "required", "script"));
    }
    else {
        json_t *step = json_pack ("{s:s, s:{s:{s:s, s:o, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:o, s:s}}, s:[s]}",
            "type", "object", "properties",
            "operation", "type", "string", "enum", ops, "description", "An operation from the capability palette",
            "name", "type", "string", "description", "Names the object this step creates (unique in the plan)",
            "target", "type", "string", "description", "The named object, created by an earlier step, that this step changes",
            "params", "type", "object", "properties", s_param_union (described),
            "description", "The operation's parameters (only those it lists)",
            "required", "operation");
        json_array_append_new (decls, json_pack ("{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:o, s:s}}, s:[s]}}",
            "name", "submit_plan",
            "description", "Submit the action plan: steps run in order, each one operation of the palette. The whole plan is "
                           "validated before anything runs; when it is rejected you get every error to fix.",
            "parameters", "type", "object", "properties",
            "title", "type", "string", "description", "A short name for what the plan builds, e.g. snowman",
            "plan", "type", "array", "items", step, "description", "The steps, in order",
            "required", "plan"));
        json_array_append_new (decls, bmq_place_declaration ());      /* issue 26: the composer's layout */
    }
    json_decref (described);
    return decls;
}

/* ---- answers -------------------------------------------------------------- */

json_t *bmq_tools_discover (bmq_tools_t *self, const json_t *args)
{
    const json_t *form = json_object_get (args, "form");
    if (form && !json_is_null (form) && (!json_is_string (form) || (strcmp (json_string_value (form), "full")
                                                                    && strcmp (json_string_value (form), "compact"))))
        return json_pack ("{s:s}", "error", "form must be \"full\" or \"compact\"");
    bool compact = json_is_string (form) && !strcmp (json_string_value (form), "compact");
    return json_deep_copy (compact ? self->compact : self->full);
}

json_t *bmq_tools_place (bmq_tools_t *self, const json_t *args)
{
    return bmq_place_call (self->place, args);
}

json_t *bmq_tools_inspect (bmq_tools_t *self, const char *tool_name)
{
    if (!tool_name || !*tool_name) return json_pack ("{s:s}", "error", "tool_name is required");
    json_t *allowed = json_object_get (json_object_get (self->full, "palette"), tool_name);
    if (!allowed) {
        char list[2048] = "";
        const char *op;
        json_t *e;
        json_object_foreach (json_object_get (self->full, "palette"), op, e) {
            if (*list) strncat (list, ", ", sizeof list - strlen (list) - 1);
            strncat (list, op, sizeof list - strlen (list) - 1);
        }
        char msg[2300];
        snprintf (msg, sizeof msg, "%.120s is not in the capability palette, so a plan may not use it. Allowed: %s",
                  tool_name, list);
        return json_pack ("{s:s}", "error", msg);
    }
    if (strncmp (tool_name, "bpy.ops.", 8))
        return json_pack ("{s:{s:s, s:O?}, s:O, s:s}", "tool", "name", tool_name,
                          "description", json_object_get (allowed, "description"), "allowed", allowed,
                          "note", "a blendmq builtin, not a Blender operator: 'allowed' is its full description");
    json_t *tool = NULL;
    char why[512];
    int rc = -1;
    if (!self->gateway) snprintf (why, sizeof why, "no gateway is configured");
    else {
        bmq_inspect_opts_t opts = { .story = self->cid[0] ? self->cid : NULL };
        rc = bmq_inspect_once (self->gateway, tool_name, &opts, self->timeout_ms, self->cancelled, self->cancel_ctx,
                               &tool, why, sizeof why);
    }
    if (rc == 0)
        return json_pack ("{s:o, s:O, s:s}", "tool", tool ? tool : json_object (), "allowed", allowed,
                          "note", "only the parameters and bounds under 'allowed' pass validation");
    char msg[700];
    snprintf (msg, sizeof msg, "inspect_tool could not ask Blender: %s. 'allowed' is what validation accepts", why);
    return json_pack ("{s:s, s:O}", "error", msg, "allowed", allowed);
}

json_t *bmq_tools_plan_arg (const json_t *args, char *why, size_t whylen)
{
    json_t *plan = json_object_get (args, "plan");
    if (!plan) plan = json_object_get (args, "steps");
    if (json_is_array (plan)) return json_incref (plan);
    if (json_is_object (plan) && json_is_array (json_object_get (plan, "steps")))
        return json_incref (json_object_get (plan, "steps"));
    if (json_is_string (plan)) {
        json_error_t jerr;
        json_t *parsed = json_loads (json_string_value (plan), JSON_REJECT_DUPLICATES, &jerr);
        if (json_is_array (parsed)) return parsed;
        if (json_is_object (parsed) && json_is_array (json_object_get (parsed, "steps"))) {
            json_t *steps = json_incref (json_object_get (parsed, "steps"));
            json_decref (parsed);
            return steps;
        }
        json_decref (parsed);
        snprintf (why, whylen, "'plan' is a string that is not a JSON array of steps%s%s",
                  *jerr.text ? ": " : "", jerr.text);
        return NULL;
    }
    snprintf (why, whylen, plan ? "'plan' must be an array of steps, not a %s" : "'plan' is missing: pass the steps as an array%s",
              plan ? (json_is_object (plan) ? "object" : json_is_number (plan) ? "number" : "scalar") : "");
    return NULL;
}

char *bmq_tools_script_extract (const char *text, char *why, size_t whylen)
{
    if (!text) { snprintf (why, whylen, "no script"); return NULL; }
    const char *start = text, *end = text + strlen (text);
    const char *fence = strstr (text, "```");
    if (fence) {
        const char *body = strchr (fence + 3, '\n');      /* skip ```python */
        const char *close = body ? strstr (body + 1, "```") : NULL;
        if (body && close) { start = body + 1; end = close; }
    }
    while (start < end && isspace ((unsigned char) *start)) start++;
    while (end > start && isspace ((unsigned char) end[-1])) end--;
    size_t n = (size_t) (end - start);
    if (n == 0) { snprintf (why, whylen, "the script is empty"); return NULL; }
    if (n > BMQ_SCRIPT_MAX_BYTES) { snprintf (why, whylen, "the script is longer than %u bytes", BMQ_SCRIPT_MAX_BYTES); return NULL; }
    char *script = strndup (start, n);
    if (script && !strstr (script, "bpy")) {
        snprintf (why, whylen, "the script does not use bpy: it must be Blender Python");
        free (script);
        return NULL;
    }
    return script;
}

void bmq_tools_title (const json_t *args, const char *prompt, char *out, size_t outlen)
{
    const char *t = json_string_value (json_object_get (args, "title"));
    if (!t || !*t) t = prompt ? prompt : "";
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *) t; *c; ) {      /* whole UTF-8 characters only */
        size_t n = *c < 0x80 ? 1 : (*c >> 5) == 6 ? 2 : (*c >> 4) == 14 ? 3 : (*c >> 3) == 30 ? 4 : 1;
        if (o + n >= outlen || o + n > 60) break;
        if (n == 1) out[o++] = (*c >= 0x20 && *c != 0x7f && *c < 0x80) ? (char) *c : ' ';
        else {
            size_t k = 0;
            while (k < n && c[k]) k++;
            if (k < n) break;
            if (n == 2 && c[0] == 0xC2 && c[1] < 0xA0) out[o++] = ' ';     /* a C1 control */
            else { memcpy (out + o, c, n); o += n; }
        }
        c += n;
    }
    out[o] = 0;
}
