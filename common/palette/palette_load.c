/* palette_load — load a palette file and check it hard: unknown keys and
 * types, bounds, defaults, enum items, operation names, limits. */
#include "palette_internal.h"
#include "palette_rna.h"
#include "yaml_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_ITEMS     256     /* enum items per parameter */
#define S_MAX_ITEM_LEN  64
#define S_MAX_OP_NAME   128

/* ---- loading one parameter ---------------------------------------------- */

static int s_number_key (const json_t *spec, const char *key, bool integer, double *d, long long *i)
{
    json_t *v = json_object_get (spec, key);
    if (!v) return 1;
    if (integer ? !json_is_integer (v) : !json_is_number (v)) return -1;
    if (integer) *i = json_integer_value (v);
    *d = json_number_value (v);
    return isfinite (*d) ? 0 : -1;
}

/* Which spec keys each type accepts, so a typo ("requried", "mx") is an error
 * instead of a silently missing constraint. */
static bool s_key_applies (palette_type_t t, const char *key)
{
    if (!strcmp (key, "type") || !strcmp (key, "required") || !strcmp (key, "default") || !strcmp (key, "description"))
        return true;
    if (!strcmp (key, "min") || !strcmp (key, "max"))
        return t == PALETTE_FLOAT || t == PALETTE_INT || t == PALETTE_VEC3 || t == PALETTE_COLOR;
    if (!strcmp (key, "max_len")) return t == PALETTE_STRING;
    if (!strcmp (key, "items")) return t == PALETTE_ENUM;
    return false;
}

static int s_param_bounds (bmq_palette_param_t *p, const json_t *spec, const char *ctx, char *err, size_t errlen)
{
    bool integer = p->type == PALETTE_INT;
    int rmin = s_number_key (spec, "min", integer, &p->min, &p->imin);
    int rmax = s_number_key (spec, "max", integer, &p->max, &p->imax);
    if (rmin < 0 || rmax < 0)
        return palette_fail (err, errlen, "%s: min and max must be %s", ctx, integer ? "integers" : "finite numbers");
    if (p->type == PALETTE_COLOR) {
        if (rmin) p->min = 0;
        if (rmax) p->max = 1;
        if (p->min < 0 || p->max > 1) return palette_fail (err, errlen, "%s: color bounds must stay within [0, 1]", ctx);
    }
    else if (rmin || rmax)     /* unbounded numbers are what the palette exists to prevent */
        return palette_fail (err, errlen, "%s: type %s needs both min and max", ctx, palette_type_names[p->type]);
    if (p->min > p->max || (integer && p->imin > p->imax))
        return palette_fail (err, errlen, "%s: min is greater than max", ctx);
    return 0;
}

/* Enum items are quoted in verdicts; ASCII keeps every message valid UTF-8. */
static bool s_printable (const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] < 0x20 || s[i] >= 0x7f) return false;
    return true;
}

static int s_param_items (bmq_palette_param_t *p, const json_t *spec, const char *ctx, char *err, size_t errlen)
{
    json_t *items = json_object_get (spec, "items");
    if (!json_is_array (items) || json_array_size (items) == 0 || json_array_size (items) > S_MAX_ITEMS)
        return palette_fail (err, errlen, "%s: enum needs items, a list of 1 to %d strings", ctx, S_MAX_ITEMS);
    size_t i, j;
    json_t *item;
    json_array_foreach (items, i, item) {
        if (!json_is_string (item) || json_string_length (item) == 0 || json_string_length (item) > S_MAX_ITEM_LEN
            || !s_printable (json_string_value (item), json_string_length (item)))
            return palette_fail (err, errlen, "%s: item %zu must be 1 to %d printable ASCII characters", ctx, i, S_MAX_ITEM_LEN);
        for (j = 0; j < i; j++)
            if (json_equal (item, json_array_get (items, j)))
                return palette_fail (err, errlen, "%s: item '%s' is listed twice", ctx, json_string_value (item));
    }
    p->items = json_deep_copy (items);
    return p->items ? 0 : palette_fail (err, errlen, "%s: out of memory", ctx);
}

/* The default as the validator would accept it, with floats made real so the
 * published palette reads 1.0, not 1, for a float. */
static json_t *s_normalise (const bmq_palette_param_t *p, const json_t *v)
{
    if (p->type == PALETTE_FLOAT) return json_real (json_number_value (v));
    if (p->type != PALETTE_VEC3 && p->type != PALETTE_COLOR) return json_deep_copy (v);
    json_t *out = json_array ();
    size_t i;
    json_t *c;
    json_array_foreach (v, i, c) json_array_append_new (out, json_real (json_number_value (c)));
    return out;
}

static int s_param_load (bmq_palette_param_t *p, const char *op, const char *name, const json_t *spec,
                         char *err, size_t errlen)
{
    char ctx[256];
    snprintf (ctx, sizeof ctx, "operation '%s' parameter '%s'", op, name);
    if (!(p->name = strdup (name))) return palette_fail (err, errlen, "%s: out of memory", ctx);
    if (!json_is_object (spec)) return palette_fail (err, errlen, "%s: must be a mapping with a type", ctx);
    const char *type = json_string_value (json_object_get (spec, "type"));
    if (!type) return palette_fail (err, errlen, "%s: type is missing", ctx);
    int t = 0;
    while (t < PALETTE_TYPES && strcmp (type, palette_type_names[t])) t++;
    if (t == PALETTE_TYPES)
        return palette_fail (err, errlen, "%s: unknown type '%.32s' (known: float, int, bool, string, enum, vec3, color)", ctx, type);
    p->type = (palette_type_t) t;
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) spec, key, v)
        if (!s_key_applies (p->type, key))
            return palette_fail (err, errlen, "%s: key '%.32s' does not apply to type %s", ctx, key, type);
    v = json_object_get (spec, "required");
    if (v && !json_is_boolean (v)) return palette_fail (err, errlen, "%s: required must be true or false", ctx);
    p->required = json_is_true (v);
    v = json_object_get (spec, "description");
    if (v && !json_is_string (v)) return palette_fail (err, errlen, "%s: description must be a string", ctx);
    if (v && !(p->description = strdup (json_string_value (v)))) return palette_fail (err, errlen, "%s: out of memory", ctx);
    if (p->type == PALETTE_STRING) {
        v = json_object_get (spec, "max_len");
        if (!json_is_integer (v) || json_integer_value (v) < 1 || json_integer_value (v) > BMQ_PALETTE_MAX_STRING)
            return palette_fail (err, errlen, "%s: string needs max_len between 1 and %d", ctx, BMQ_PALETTE_MAX_STRING);
        p->max_len = (size_t) json_integer_value (v);
    }
    else if (p->type == PALETTE_ENUM) {
        if (s_param_items (p, spec, ctx, err, errlen)) return -1;
    }
    else if (p->type != PALETTE_BOOL && s_param_bounds (p, spec, ctx, err, errlen))
        return -1;
    v = json_object_get (spec, "default");
    if (v && p->required) return palette_fail (err, errlen, "%s: a required parameter cannot have a default", ctx);
    if (v) {
        char reason[256];
        if (bmq_palette_param_check (p, v, reason, sizeof reason))
            return palette_fail (err, errlen, "%s: default is invalid: %s", ctx, reason);
        if (!(p->def = s_normalise (p, v))) return palette_fail (err, errlen, "%s: out of memory", ctx);
    }
    return 0;
}

/* ---- loading operations -------------------------------------------------- */

static bool s_op_name_ok (const char *s)
{
    size_t n = strlen (s);
    if (n == 0 || n > S_MAX_OP_NAME || s[0] == '.' || s[n - 1] == '.') return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
            return false;
    return true;
}

static int s_flag (const json_t *spec, const char *key, bool *out, const char *op, char *err, size_t errlen)
{
    json_t *v = json_object_get (spec, key);
    if (v && !(json_is_string (v) && !strcmp (json_string_value (v), "object")))
        return palette_fail (err, errlen, "operation '%s': %s must be 'object'", op, key);
    *out = v != NULL;
    return 0;
}

static int s_op_params (bmq_palette_op_t *op, const json_t *params, char *err, size_t errlen)
{
    size_t n = json_object_size (params);
    if ((params && !json_is_object (params) && !json_is_null (params)) || n > BMQ_PALETTE_MAX_PARAMS)
        return palette_fail (err, errlen, "operation '%s': params must be a mapping of at most %d parameters",
                             op->name, BMQ_PALETTE_MAX_PARAMS);
    op->params = calloc (n ? n : 1, sizeof *op->params);
    op->param_list = calloc (1, n * (S_MAX_OP_NAME + 2) + 8);
    if (!op->params || !op->param_list || palette_table_init (&op->index, n))
        return palette_fail (err, errlen, "out of memory");
    const char *name;
    json_t *spec;
    json_object_foreach ((json_t *) params, name, spec) {
        bmq_palette_param_t *p = &op->params[op->param_count++];
        if (!s_op_name_ok (name) || strchr (name, '.'))
            return palette_fail (err, errlen, "operation '%s': bad parameter name '%.32s'", op->name, name);
        if (s_param_load (p, op->name, name, spec, err, errlen)) return -1;
        palette_table_put (&op->index, p->name, strlen (p->name), op->param_count - 1);
        if (op->param_count > 1) strcat (op->param_list, ", ");
        strcat (op->param_list, p->name);
    }
    if (!n) strcpy (op->param_list, "(none)");
    return 0;
}

static int s_op_load (bmq_palette_op_t *op, const char *name, const json_t *spec, char *err, size_t errlen)
{
    if (!(op->name = strdup (name))) return palette_fail (err, errlen, "out of memory");
    bool path = json_is_true (json_object_get (spec, "path"));
    if (!path && !s_op_name_ok (name))
        return palette_fail (err, errlen, "bad operation name '%.64s' (letters, digits, '_' and '.')", name);
    if (!json_is_object (spec) && !json_is_null (spec))
        return palette_fail (err, errlen, "operation '%s': must be a mapping", name);
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) spec, key, v)
        if (strcmp (key, "description") && strcmp (key, "creates") && strcmp (key, "acts_on")
            && strcmp (key, "deletes") && strcmp (key, "cost") && strcmp (key, "params") && strcmp (key, "path")
            && strcmp (key, "rna"))
            return palette_fail (err, errlen, "operation '%s': unknown key '%.32s' (known: description, creates,"
                           " acts_on, deletes, cost, params, path, rna)", name, key);
    v = json_object_get (spec, "path");
    if (v && !json_is_true (v)) return palette_fail (err, errlen, "operation '%s': path must be true when given", name);
    v = json_object_get (spec, "rna");
    if (v && (!json_is_true (json_object_get (spec, "path")) || !bmq_palette_rna_property_ok (json_string_value (v))))
        return palette_fail (err, errlen, "operation '%s': rna is for paths only: Struct.property (an RNA struct and one"
                             " of its lower-case properties, none denied)", name);
    v = json_object_get (spec, "description");
    if (v && !json_is_string (v)) return palette_fail (err, errlen, "operation '%s': description must be a string", name);
    if (v && !(op->description = strdup (json_string_value (v)))) return palette_fail (err, errlen, "out of memory");
    if (s_flag (spec, "creates", &op->creates, name, err, errlen)
        || s_flag (spec, "acts_on", &op->acts_on, name, err, errlen)
        || s_flag (spec, "deletes", &op->deletes, name, err, errlen)
        || s_op_params (op, json_object_get (spec, "params"), err, errlen))
        return -1;
    if (op->deletes && (!op->acts_on || op->creates))
        return palette_fail (err, errlen, "operation '%s': deletes needs acts_on (and no creates)", name);
    v = json_object_get (spec, "cost");
    if (v && !json_is_object (v)) return palette_fail (err, errlen, "operation '%s': cost must be a mapping", name);
    if (v && palette_cost_load (op, v, err, errlen)) return -1;
    return path ? palette_path_load (op, err, errlen) : 0;
}

static int s_limit (const json_t *limits, const char *key, double lo, double hi, double dflt, double *out,
                    char *err, size_t errlen)
{
    json_t *v = json_object_get (limits, key);
    *out = dflt;
    if (!v) return 0;
    if (!json_is_integer (v) || json_number_value (v) < lo || json_number_value (v) > hi)
        return palette_fail (err, errlen, "limits.%s must be an integer between %.0f and %.0f", key, lo, hi);
    *out = json_number_value (v);
    return 0;
}

static int s_palette_fill (bmq_palette_t *self, const json_t *doc, char *err, size_t errlen)
{
    if (!json_is_object (doc)) return palette_fail (err, errlen, "the palette must be a mapping with version, limits, operations");
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) doc, key, v)
        if (strcmp (key, "version") && strcmp (key, "limits") && strcmp (key, "operations"))
            return palette_fail (err, errlen, "unknown top-level key '%.32s' (known: version, limits, operations)", key);
    v = json_object_get (doc, "version");
    if (!json_is_integer (v) || json_integer_value (v) != 1) return palette_fail (err, errlen, "version must be 1");
    self->version = 1;
    json_t *limits = json_object_get (doc, "limits");
    if (limits && !json_is_object (limits)) return palette_fail (err, errlen, "limits must be a mapping");
    json_object_foreach (limits, key, v)
        if (strcmp (key, "max_steps") && strcmp (key, "max_name_len") && strcmp (key, "max_vertices"))
            return palette_fail (err, errlen, "unknown limit '%.32s' (known: max_steps, max_name_len, max_vertices)", key);
    double steps, name_len;
    if (s_limit (limits, "max_steps", 1, BMQ_PALETTE_MAX_STEPS, 200, &steps, err, errlen)
        || s_limit (limits, "max_name_len", 1, BMQ_PALETTE_MAX_NAME_LEN, BMQ_PALETTE_MAX_NAME_LEN, &name_len, err, errlen)
        || s_limit (limits, "max_vertices", 1, 1e12, 2e6, &self->max_vertices, err, errlen))
        return -1;
    self->max_steps = (int) steps;
    self->max_name_len = (int) name_len;
    json_t *ops = json_object_get (doc, "operations");
    size_t n = json_object_size (ops);
    if (!json_is_object (ops) || n == 0 || n > BMQ_PALETTE_MAX_OPS)
        return palette_fail (err, errlen, "operations must be a mapping of 1 to %d operations", BMQ_PALETTE_MAX_OPS);
    if (!(self->ops = calloc (n, sizeof *self->ops)) || palette_table_init (&self->index, n))
        return palette_fail (err, errlen, "out of memory");
    json_object_foreach (ops, key, v) {
        bmq_palette_op_t *op = &self->ops[self->op_count++];
        if (s_op_load (op, key, v, err, errlen)) return -1;
        palette_table_put (&self->index, op->name, strlen (op->name), self->op_count - 1);
    }
    return 0;
}

bmq_palette_t *bmq_palette_from_json (const json_t *doc, char *err, size_t errlen)
{
    bmq_palette_t *self = calloc (1, sizeof *self);
    if (!self) { palette_fail (err, errlen, "out of memory"); return NULL; }
    if (s_palette_fill (self, doc, err, errlen))
        bmq_palette_destroy (&self);
    return self;
}

bmq_palette_t *bmq_palette_load (const char *path, char *err, size_t errlen)
{
    char inner[512];
    json_t *doc = bmq_yaml_load_file (path, inner, sizeof inner);
    if (!doc) { palette_fail (err, errlen, "%s", inner); return NULL; }
    bmq_palette_t *self = bmq_palette_from_json (doc, inner, sizeof inner);
    json_decref (doc);
    if (!self) palette_fail (err, errlen, "%s: %s", path, inner);
    return self;
}

void bmq_palette_destroy (bmq_palette_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_palette_t *self = *self_p;
    for (size_t i = 0; i < self->op_count; i++) {
        bmq_palette_op_t *op = &self->ops[i];
        for (size_t j = 0; j < op->param_count; j++) {
            free (op->params[j].name);
            free (op->params[j].description);
            json_decref (op->params[j].items);
            json_decref (op->params[j].def);
        }
        free (op->params);
        for (size_t j = 0; j < PALETTE_PATH_FORMS; j++) free (op->derived[j].name);
        free (op->index.slots);
        free (op->param_list);
        free (op->name);
        free (op->description);
        json_decref (op->cost_src);
    }
    free (self->ops);
    free (self->index.slots);
    free (self);
    *self_p = NULL;
}
