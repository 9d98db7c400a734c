/* palette_publish — the palette as discover_capabilities publishes it, full
 * (seed 001 shape plus descriptions) or compact (one signature line per
 * operation, for an LLM prompt). Built from bmq_palette_describe, so it needs
 * nothing of the palette's internals. */
#include "palette.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static json_t *s_full_op (const json_t *op)
{
    json_t *out = json_object ();
    json_t *desc = json_object_get (op, "description");
    if (desc) json_object_set (out, "description", desc);
    if (json_is_true (json_object_get (op, "creates"))) json_object_set_new (out, "creates", json_string ("object"));
    if (json_is_true (json_object_get (op, "acts_on"))) json_object_set_new (out, "acts_on", json_string ("object"));
    if (json_is_true (json_object_get (op, "deletes"))) json_object_set_new (out, "deletes", json_string ("object"));
    if (json_is_true (json_object_get (op, "needs_target"))) json_object_set_new (out, "target", json_string ("required"));
    if (json_is_true (json_object_get (op, "path"))) json_object_set_new (out, "path", json_true ());
    json_t *params = json_object ();
    const char *name;
    json_t *spec;
    json_object_foreach (json_object_get (op, "params"), name, spec) {
        json_t *p = json_deep_copy (spec);
        if (!json_is_true (json_object_get (p, "required"))) json_object_del (p, "required");
        json_object_set_new (params, name, p);
    }
    json_object_set_new (out, "params", params);
    return out;
}

/* Append printf-style text to buf (bounded; a too-long signature is cut). */
static void s_cat (char *buf, size_t size, size_t *used, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
static void s_cat (char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size - 1) return;
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (buf + *used, size - *used, fmt, ap);
    va_end (ap);
    if (n > 0) *used = *used + (size_t) n < size - 1 ? *used + (size_t) n : size - 1;
}

static void s_value (char *buf, size_t size, size_t *used, const json_t *v)
{
    if (json_is_number (v)) s_cat (buf, size, used, "%g", json_number_value (v));
    else if (json_is_string (v)) s_cat (buf, size, used, "%s", json_string_value (v));
    else if (json_is_boolean (v)) s_cat (buf, size, used, "%s", json_is_true (v) ? "true" : "false");
    else if (json_is_array (v)) {
        size_t i;
        json_t *c;
        s_cat (buf, size, used, "[");
        json_array_foreach (v, i, c) {
            if (i) s_cat (buf, size, used, ",");
            s_value (buf, size, used, c);
        }
        s_cat (buf, size, used, "]");
    }
}

static json_t *s_compact_op (const json_t *op)
{
    char buf[4096];
    size_t used = 0;
    bool creates = json_is_true (json_object_get (op, "creates")), acts = json_is_true (json_object_get (op, "acts_on"));
    bool needs = json_is_true (json_object_get (op, "needs_target")), deletes = json_is_true (json_object_get (op, "deletes"));
    bool path = json_is_true (json_object_get (op, "path"));
    s_cat (buf, sizeof buf, &used, "%s%s%s%s%s", path ? "path" : "", path && (acts || creates || deletes) ? ", " : "",
           acts ? (needs ? "target!" : "target") : "", acts && (creates || deletes) ? ", " : "",
           creates ? "creates" : deletes ? "deletes" : "");
    const char *name;
    json_t *spec;
    bool first = true;
    json_object_foreach (json_object_get (op, "params"), name, spec) {
        const char *type = json_string_value (json_object_get (spec, "type"));
        s_cat (buf, sizeof buf, &used, "%s%s%s %s", first ? (used ? "; " : "") : ", ", name,
               json_is_true (json_object_get (spec, "required")) ? "!" : "", type ? type : "?");
        first = false;
        json_t *items = json_object_get (spec, "items");
        if (items) {
            size_t i;
            json_t *item;
            json_array_foreach (items, i, item) s_cat (buf, sizeof buf, &used, "%s%s", i ? "|" : " ", json_string_value (item));
        }
        json_t *min = json_object_get (spec, "min"), *max = json_object_get (spec, "max");
        if (min && max && !(type && !strcmp (type, "color") && json_number_value (min) == 0 && json_number_value (max) == 1))
            s_cat (buf, sizeof buf, &used, " %g..%g", json_number_value (min), json_number_value (max));
        json_t *max_len = json_object_get (spec, "max_len");
        if (max_len) s_cat (buf, sizeof buf, &used, " <=%lld", (long long) json_integer_value (max_len));
        json_t *def = json_object_get (spec, "default");
        if (def) { s_cat (buf, sizeof buf, &used, " ="); s_value (buf, sizeof buf, &used, def); }
    }
    return json_string (buf);
}

json_t *bmq_palette_capabilities (const bmq_palette_t *self, bool compact)
{
    json_t *described = bmq_palette_describe (self);
    if (!described) return NULL;
    json_t *out = json_object ();
    const char *name;
    json_t *op;
    json_object_foreach (json_object_get (described, "operations"), name, op)
        json_object_set_new (out, name, compact ? s_compact_op (op) : s_full_op (op));
    json_decref (described);
    return out;
}
