/* palette_rna — merge Blender's RNA into the curated palette; rules in palette_rna.h. */
#include "palette_rna.h"
#include "palette_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    json_t     *notes;
    const char *op;
} s_ctx_t;

static void s_note (s_ctx_t *ctx, const char *level, const char *param, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
static void s_note (s_ctx_t *ctx, const char *level, const char *param, const char *fmt, ...)
{
    if (!ctx->notes) return;
    char text[512];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    json_t *n = json_pack ("{s:s, s:s, s:s}", "level", level, "operation", ctx->op, "note", text);
    if (n && param) json_object_set_new (n, "param", json_string (param));
    json_array_append_new (ctx->notes, n);
}

bool bmq_palette_rna_wanted (const char *operation)
{
    return operation && !strncmp (operation, "bpy.ops.", 8);
}

bool bmq_palette_rna_property_ok (const char *s)
{
    const char *dot = s ? strchr (s, '.') : NULL;
    if (!dot || dot == s || strlen (s) > 120 || !(*s >= 'A' && *s <= 'Z')) return false;
    for (const char *c = s; c < dot; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_')) return false;
    char probe[160];
    snprintf (probe, sizeof probe, "object.%s", dot + 1);      /* the path rules: lower-case, one segment, not denied */
    return !strchr (dot + 1, '.') && palette_path_name_ok (probe);
}

const char *bmq_palette_rna_ask (const char *name, const json_t *spec, char *buf, size_t len)
{
    if (bmq_palette_rna_wanted (name)) { snprintf (buf, len, "%s", name); return buf; }
    const char *rna = json_string_value (json_object_get (spec, "rna"));
    if (!json_is_true (json_object_get (spec, "path")) || !rna) return NULL;
    snprintf (buf, len, "bpy.types.%s", rna);
    return buf;
}

/* ---- helpers ------------------------------------------------------------- */

static const char *s_str (const json_t *obj, const char *key)
{
    const char *s = json_string_value (json_object_get (obj, key));
    return s ? s : "";
}

/* Equal up to float32 rounding: RNA keeps single-precision numbers. */
static bool s_close (double a, double b)
{
    return fabs (a - b) <= 1e-9 + 1e-6 * fmax (fabs (a), fabs (b));
}

static bool s_same_value (const json_t *a, const json_t *b)
{
    if (json_is_number (a) && json_is_number (b)) return s_close (json_number_value (a), json_number_value (b));
    if (json_is_array (a) && json_is_array (b)) {
        if (json_array_size (a) != json_array_size (b)) return false;
        for (size_t i = 0; i < json_array_size (a); i++)
            if (!s_same_value (json_array_get (a, i), json_array_get (b, i))) return false;
        return true;
    }
    return json_equal (a, b);
}

static void s_show (char *buf, size_t len, const json_t *v)
{
    char *text = v ? json_dumps (v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION (7)) : NULL;
    snprintf (buf, len, "%s", text ? text : "none");
    free (text);
}

static const json_t *s_rna_param (const json_t *rna_op, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach (json_object_get (rna_op, "params"), i, p)
        if (!strcmp (s_str (p, "identifier"), name)) return p;
    return NULL;
}

/* Whether the vertex-cost expression of `op_spec` names parameter `name`. */
static bool s_cost_uses (const json_t *op_spec, const char *name)
{
    const char *expr = json_string_value (json_object_get (json_object_get (op_spec, "cost"), "vertices"));
    size_t len = strlen (name);
    for (const char *s = expr; s && *s; ) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_') {
            const char *start = s;
            while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_') s++;
            if ((size_t) (s - start) == len && !memcmp (start, name, len)) return true;
        }
        else s++;
    }
    return false;
}

/* NULL when the curated type can take Blender's property, else what Blender has. */
static const char *s_incompatible (const char *type, const json_t *r, char *buf, size_t len)
{
    const char *rtype = s_str (r, "type");
    json_int_t n = json_integer_value (json_object_get (r, "array_length"));
    bool ok = false;
    if (!strcmp (type, "float")) ok = !strcmp (rtype, "FLOAT") && n == 0;
    else if (!strcmp (type, "int")) ok = (!strcmp (rtype, "INT") || !strcmp (rtype, "FLOAT")) && n == 0;
    else if (!strcmp (type, "bool")) ok = !strcmp (rtype, "BOOLEAN") && n == 0;
    else if (!strcmp (type, "enum")) ok = !strcmp (rtype, "ENUM") && !json_is_true (json_object_get (r, "enum_flag"));
    else if (!strcmp (type, "string")) ok = !strcmp (rtype, "STRING");
    else if (!strcmp (type, "vec3")) ok = !strcmp (rtype, "FLOAT") && n == 3;
    else if (!strcmp (type, "color")) ok = !strcmp (rtype, "FLOAT") && (n == 3 || n == 4);
    if (ok) return NULL;
    if (n) snprintf (buf, len, "%s[%lld]", rtype, (long long) n);
    else snprintf (buf, len, "%s%s", rtype, json_is_true (json_object_get (r, "enum_flag")) ? " (a set of flags)" : "");
    return buf;
}

/* ---- one parameter ---------------------------------------------------------- */

/* Narrow min/max of a numeric spec to Blender's hard limits. -1 when nothing is left. */
static int s_merge_bounds (s_ctx_t *ctx, const char *name, json_t *spec, const json_t *r)
{
    const char *type = s_str (spec, "type");
    bool integer = !strcmp (type, "int"), color = !strcmp (type, "color");
    json_t *cmin = json_object_get (spec, "min"), *cmax = json_object_get (spec, "max");
    double lo = cmin ? json_number_value (cmin) : color ? 0 : -HUGE_VAL;
    double hi = cmax ? json_number_value (cmax) : color ? 1 : HUGE_VAL;
    json_t *rmin = json_object_get (r, "min"), *rmax = json_object_get (r, "max");
    double nlo = lo, nhi = hi;
    if (json_is_number (rmin) && json_number_value (rmin) > lo && !s_close (json_number_value (rmin), lo))
        nlo = integer ? ceil (json_number_value (rmin)) : json_number_value (rmin);
    if (json_is_number (rmax) && json_number_value (rmax) < hi && !s_close (json_number_value (rmax), hi))
        nhi = integer ? floor (json_number_value (rmax)) : json_number_value (rmax);
    if (nlo > nhi) {
        s_note (ctx, "warn", name, "the curated range [%g, %g] and Blender's hard limits [%g, %g] do not overlap",
                lo, hi, json_number_value (rmin), json_number_value (rmax));
        return -1;
    }
    if (nlo != lo) {
        s_note (ctx, "info", name, "minimum raised from %g to Blender's hard minimum %g", lo, nlo);
        json_object_set_new (spec, "min", integer ? json_integer ((json_int_t) nlo) : json_real (nlo));
    }
    if (nhi != hi) {
        s_note (ctx, "info", name, "maximum lowered from %g to Blender's hard maximum %g", hi, nhi);
        json_object_set_new (spec, "max", integer ? json_integer ((json_int_t) nhi) : json_real (nhi));
    }
    return 0;
}

static int s_merge_items (s_ctx_t *ctx, const char *name, json_t *spec, const json_t *r)
{
    json_t *ritems = json_object_get (r, "enum_items");
    if (!json_array_size (ritems)) {
        s_note (ctx, "info", name, "Blender computes this enum's items at run time; the curated items are kept unchecked");
        return 0;
    }
    json_t *kept = json_array ();
    size_t i, j;
    json_t *item, *ritem;
    json_array_foreach (json_object_get (spec, "items"), i, item) {
        bool known = false;
        json_array_foreach (ritems, j, ritem)
            if (!strcmp (s_str (ritem, "identifier"), json_string_value (item))) { known = true; break; }
        if (known) json_array_append (kept, item);
        else s_note (ctx, "warn", name, "item '%s' is not one Blender knows: dropped", json_string_value (item));
    }
    if (!json_array_size (kept)) {
        json_decref (kept);
        s_note (ctx, "warn", name, "none of the curated items is known to Blender");
        return -1;
    }
    json_object_set_new (spec, "items", kept);
    return 0;
}

/* Whether `v` fits the (merged) spec: the checks the palette makes, restated
 * for the few shapes a default can take. */
static bool s_fits (const json_t *spec, const json_t *v)
{
    const char *type = s_str (spec, "type");
    bool color = !strcmp (type, "color");
    double lo = json_object_get (spec, "min") ? json_number_value (json_object_get (spec, "min")) : color ? 0 : -HUGE_VAL;
    double hi = json_object_get (spec, "max") ? json_number_value (json_object_get (spec, "max")) : color ? 1 : HUGE_VAL;
    if (!strcmp (type, "float")) return json_is_number (v) && json_number_value (v) >= lo && json_number_value (v) <= hi;
    if (!strcmp (type, "int"))
        return json_is_integer (v) && json_number_value (v) >= lo && json_number_value (v) <= hi;
    if (!strcmp (type, "bool")) return json_is_boolean (v);
    if (!strcmp (type, "string"))
        return json_is_string (v) && json_string_length (v) <= (size_t) json_integer_value (json_object_get (spec, "max_len"));
    if (!strcmp (type, "enum")) {
        size_t i;
        json_t *item;
        json_array_foreach (json_object_get (spec, "items"), i, item)
            if (json_equal (item, (json_t *) v)) return true;
        return false;
    }
    size_t n = json_array_size (v);
    if (!json_is_array (v) || (color ? n < 3 || n > 4 : n != 3)) return false;
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get (v, i);
        if (!json_is_number (c) || json_number_value (c) < lo || json_number_value (c) > hi) return false;
    }
    return true;
}

/* Blender's default as the palette would write it (an integer-valued float
 * default for an int parameter becomes an integer). */
static json_t *s_rna_default (const json_t *spec, const json_t *r)
{
    json_t *d = json_object_get (r, "default");
    if (!d || json_is_null (d)) return NULL;
    if (!strcmp (s_str (spec, "type"), "int") && json_is_real (d) && json_real_value (d) == floor (json_real_value (d))
        && fabs (json_real_value (d)) < 9e15)
        return json_integer ((json_int_t) json_real_value (d));
    return json_incref (d);
}

static void s_merge_default (s_ctx_t *ctx, const char *name, json_t *spec, const json_t *r)
{
    json_t *cur = json_object_get (spec, "default");
    json_t *rd = s_rna_default (spec, r);
    bool required = json_is_true (json_object_get (spec, "required"));
    char a[128], b[128];
    s_show (a, sizeof a, cur);
    s_show (b, sizeof b, rd);
    if (cur && !s_fits (spec, cur)) {
        if (rd && s_fits (spec, rd)) {
            s_note (ctx, "warn", name, "curated default %s is outside Blender's limits; Blender's default %s is used", a, b);
            json_object_set (spec, "default", rd);
        }
        else {
            s_note (ctx, "warn", name, "curated default %s is outside Blender's limits: removed, the parameter is now required", a);
            json_object_del (spec, "default");
            json_object_set_new (spec, "required", json_true ());
        }
    }
    else if (cur && rd && !s_same_value (cur, rd))
        s_note (ctx, "info", name, "curated default %s; Blender's own default is %s (what runs when the parameter is left out)", a, b);
    else if (!cur && !required && rd) {
        if (s_fits (spec, rd)) {
            s_note (ctx, "info", name, "default %s from Blender", b);
            json_object_set (spec, "default", rd);
        }
        else {
            s_note (ctx, "warn", name, "Blender's default %s is outside the bounds: the parameter is now required", b);
            json_object_set_new (spec, "required", json_true ());
        }
    }
    json_decref (rd);
}

/* Merge one curated parameter with its RNA property. -1: it cannot stay. */
static int s_merge_param (s_ctx_t *ctx, const char *name, json_t *spec, const json_t *rna_op)
{
    const json_t *r = s_rna_param (rna_op, name);
    if (!r) {
        s_note (ctx, "warn", name, "Blender's operator has no parameter '%s'", name);
        return -1;
    }
    char buf[64];
    const char *type = s_str (spec, "type");
    const char *theirs = s_incompatible (type, r, buf, sizeof buf);
    if (theirs) {
        s_note (ctx, "warn", name, "curated type %s does not match Blender's %s", type, theirs);
        return -1;
    }
    if (!strcmp (type, "float") || !strcmp (type, "int") || !strcmp (type, "vec3") || !strcmp (type, "color")) {
        if (s_merge_bounds (ctx, name, spec, r)) return -1;
    }
    else if (!strcmp (type, "enum")) {
        if (s_merge_items (ctx, name, spec, r)) return -1;
    }
    else if (!strcmp (type, "string")) {
        json_int_t mine = json_integer_value (json_object_get (spec, "max_len"));
        json_int_t theirs_len = json_integer_value (json_object_get (r, "max_len"));
        if (theirs_len > 0 && theirs_len < mine) {
            s_note (ctx, "info", name, "max_len lowered from %lld to Blender's %lld", (long long) mine, (long long) theirs_len);
            json_object_set_new (spec, "max_len", json_integer (theirs_len));
        }
    }
    s_merge_default (ctx, name, spec, r);
    const char *desc = s_str (r, "description");
    if (!json_object_get (spec, "description") && *desc)
        json_object_set_new (spec, "description", json_string (desc));
    return 0;
}

/* ---- one operation ----------------------------------------------------------- */

/* Merge in place. -1: the operation must be dropped. */
static int s_merge_op (s_ctx_t *ctx, json_t *op_spec, const json_t *rna_op)
{
    json_t *params = json_object_get (op_spec, "params");
    const char *name;
    json_t *spec;
    void *tmp;
    json_object_foreach_safe (params, tmp, name, spec) {
        if (!json_is_object (spec) || s_merge_param (ctx, name, spec, rna_op) == 0) continue;
        if (json_is_true (json_object_get (spec, "required")) || s_cost_uses (op_spec, name)) {
            s_note (ctx, "warn", NULL, "dropped: parameter '%s' is %s", name,
                    s_cost_uses (op_spec, name) ? "used by its vertex cost" : "required");
            return -1;
        }
        s_note (ctx, "warn", name, "parameter dropped");
        json_object_del (params, name);
    }
    size_t i;
    json_t *r;
    json_array_foreach (json_object_get (rna_op, "params"), i, r)
        if (json_is_true (json_object_get (r, "required")) && !json_object_get (params, s_str (r, "identifier"))) {
            s_note (ctx, "warn", NULL, "dropped: Blender requires parameter '%s', which the palette does not offer",
                    s_str (r, "identifier"));
            return -1;
        }
    const char *desc = s_str (rna_op, "description");
    if (!json_object_get (op_spec, "description") && *desc)
        json_object_set_new (op_spec, "description", json_string (desc));
    return 0;
}

json_t *bmq_palette_rna_merge (const json_t *curated, const json_t *rna, json_t *notes)
{
    if (!json_is_object (curated) || !json_is_object (json_object_get (curated, "operations"))) return NULL;
    json_t *out = json_deep_copy (curated);
    json_t *ops = json_object_get (out, "operations");
    const char *name;
    json_t *spec;
    void *tmp;
    json_object_foreach_safe (ops, tmp, name, spec) {
        s_ctx_t ctx = { notes, name };
        char ask[200];
        if (!bmq_palette_rna_ask (name, spec, ask, sizeof ask)) continue;   /* builtins: no RNA */
        json_t *r = json_object_get (rna, ask);
        if (!r) continue;                                       /* not asked or no answer: unchecked */
        bool path = strcmp (ask, name) != 0;
        if (json_is_null (r)) {
            s_note (&ctx, "warn", NULL, path ? "dropped: the running Blender has no property %s" : "dropped: the running"
                    " Blender has no such operator", ask + 10);
            json_object_del (ops, name);
        }
        else if (path && json_is_true (json_object_get (r, "readonly"))) {
            s_note (&ctx, "warn", NULL, "dropped: %s is read-only in the running Blender", ask + 10);
            json_object_del (ops, name);
        }
        else if (!json_is_object (r) || !json_is_object (spec) || s_merge_op (&ctx, spec, r))
            json_object_del (ops, name);
    }
    return out;
}
