/* palette — load, check and query the capability palette. */
#include "verdict_text.h"
#include "palette.h"
#include "yaml_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { S_FLOAT, S_INT, S_BOOL, S_STRING, S_ENUM, S_VEC3, S_COLOR, S_TYPES } s_type_t;
static const char *s_type_names[S_TYPES] = { "float", "int", "bool", "string", "enum", "vec3", "color" };

#define S_MAX_ITEMS     256     /* enum items per parameter */
#define S_MAX_ITEM_LEN  64
#define S_MAX_OP_NAME   128
#define S_COST_TOKENS   32

/* String → index, open addressing. Keys are borrowed from the owner. */
typedef struct { const char *key; size_t len; size_t value; } s_slot_t;
typedef struct { s_slot_t *slots; size_t mask; } s_table_t;

/* A vertex-cost expression compiled to postfix: numbers, parameter indexes, + * ^ */
typedef struct { char kind; double num; size_t param; } s_token_t;

struct bmq_palette_param_t {
    char *name;
    char *description;
    s_type_t type;
    bool required;
    double min, max;            /* float, vec3, color (int keeps exact bounds below) */
    long long imin, imax;
    size_t max_len;             /* string */
    json_t *items;              /* enum: array of strings */
    json_t *def;                /* normalised default, or NULL */
};

struct bmq_palette_op_t {
    char *name;
    char *description;
    bool creates, acts_on, deletes;
    bmq_palette_param_t *params;
    size_t param_count;
    s_table_t index;
    char *param_list;
    json_t *cost_src;           /* as written, for describe; NULL when no cost */
    s_token_t cost[S_COST_TOKENS];          /* vertices of the object the step creates */
    size_t cost_len;
    s_token_t mult[S_COST_TOKENS];          /* factor on the vertices of the object it acts on */
    size_t mult_len;
};

struct bmq_palette_t {
    int version, max_steps, max_name_len;
    double max_vertices;
    bmq_palette_op_t *ops;
    size_t op_count;
    s_table_t index;
};

static int s_fail (char *err, size_t errlen, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
static int s_fail (char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (err, errlen, fmt, ap);
        va_end (ap);
    }
    return -1;
}

/* ---- hash table ---------------------------------------------------------- */

static uint64_t s_hash (const char *key, size_t len)
{
    uint64_t h = 14695981039346656037ull;          /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char) key[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int s_table_init (s_table_t *t, size_t expected)
{
    size_t cap = 8;
    while (cap < expected * 2) cap <<= 1;
    t->slots = calloc (cap, sizeof *t->slots);
    t->mask = cap - 1;
    return t->slots ? 0 : -1;
}

/* 0 on insert, -1 if the key is already there. The table never fills: it is
 * sized for twice the keys its owner will insert. */
static int s_table_put (s_table_t *t, const char *key, size_t len, size_t value)
{
    size_t i = s_hash (key, len) & t->mask;
    while (t->slots[i].key) {
        if (t->slots[i].len == len && !memcmp (t->slots[i].key, key, len)) return -1;
        i = (i + 1) & t->mask;
    }
    t->slots[i] = (s_slot_t) { key, len, value };
    return 0;
}

static const s_slot_t *s_table_get (const s_table_t *t, const char *key, size_t len)
{
    if (!t->slots) return NULL;
    size_t i = s_hash (key, len) & t->mask;
    while (t->slots[i].key) {
        if (t->slots[i].len == len && !memcmp (t->slots[i].key, key, len)) return &t->slots[i];
        i = (i + 1) & t->mask;
    }
    return NULL;
}

/* ---- value checks (shared by defaults at load and plans at validation) --- */

/* Shortest form that reads back exactly, so "above the maximum" never shows
 * two equal-looking numbers. */
static const char *s_num (char *buf, size_t len, double d)
{
    snprintf (buf, len, "%.15g", d);
    if (strtod (buf, NULL) != d) snprintf (buf, len, "%.17g", d);
    return buf;
}


static const char *s_kind (const json_t *v)
{
    switch (json_typeof (v)) {
    case JSON_OBJECT:  return "an object";
    case JSON_ARRAY:   return "a list";
    case JSON_STRING:  return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL:    return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:   return "a boolean";
    default:           return "null";
    }
}

static int s_range (double d, double min, double max, const char *what, char *reason, size_t rlen)
{
    char a[32], b[32];
    if (!isfinite (d)) return s_fail (reason, rlen, "%snot a finite number", what);
    if (d < min) return s_fail (reason, rlen, "%s%s is below the minimum %s", what, s_num (a, 32, d), s_num (b, 32, min));
    if (d > max) return s_fail (reason, rlen, "%s%s is above the maximum %s", what, s_num (a, 32, d), s_num (b, 32, max));
    return 0;
}

/* A list of `lo`..`hi` numbers, each in [min, max]. */
static int s_check_list (const bmq_palette_param_t *p, const json_t *v, size_t lo, size_t hi,
                         const char *shape, char *reason, size_t rlen)
{
    size_t n = json_is_array (v) ? json_array_size (v) : 0;
    if (!json_is_array (v) || n < lo || n > hi)
        return s_fail (reason, rlen, "expected %s, got %s%s", shape, s_kind (v),
                       json_is_array (v) ? (n < lo ? " that is too short" : " that is too long") : "");
    static const char *axis = "xyzw";
    static const char *channel = "rgba";
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get (v, i);
        double d = json_number_value (c);
        if (json_is_number (c) && d >= p->min && d <= p->max) continue;    /* the common case: no formatting */
        char what[48];
        snprintf (what, sizeof what, "component %zu (%c) ", i, (p->type == S_COLOR ? channel : axis)[i]);
        if (!json_is_number (c))
            return s_fail (reason, rlen, "%sis %s; expected a number", what, s_kind (c));
        return s_range (d, p->min, p->max, what, reason, rlen);
    }
    return 0;
}

int bmq_palette_param_check (const bmq_palette_param_t *p, const json_t *v, char *reason, size_t rlen)
{
    if (!p || !v) return s_fail (reason, rlen, "no value");
    char a[32];
    switch (p->type) {
    case S_FLOAT:
        if (!json_is_number (v)) return s_fail (reason, rlen, "expected a number, got %s", s_kind (v));
        return s_range (json_number_value (v), p->min, p->max, "", reason, rlen);
    case S_INT: {
        if (json_is_real (v))
            return s_fail (reason, rlen, "expected an integer, got the real number %s", s_num (a, 32, json_real_value (v)));
        if (!json_is_integer (v)) return s_fail (reason, rlen, "expected an integer, got %s", s_kind (v));
        long long i = json_integer_value (v);
        if (i < p->imin) return s_fail (reason, rlen, "%lld is below the minimum %lld", i, p->imin);
        if (i > p->imax) return s_fail (reason, rlen, "%lld is above the maximum %lld", i, p->imax);
        return 0;
    }
    case S_BOOL:
        return json_is_boolean (v) ? 0 : s_fail (reason, rlen, "expected true or false, got %s", s_kind (v));
    case S_STRING: {
        if (!json_is_string (v)) return s_fail (reason, rlen, "expected a string, got %s", s_kind (v));
        size_t len = json_string_length (v);
        if (len > p->max_len)
            return s_fail (reason, rlen, "string is %zu bytes long; at most %zu are allowed", len, p->max_len);
        const unsigned char *s = (const unsigned char *) json_string_value (v);
        for (size_t i = 0; i < len; i++)
            if (s[i] < 0x20 || s[i] == 0x7f)
                return s_fail (reason, rlen, "string contains a control character at byte %zu", i);
        return 0;
    }
    case S_ENUM: {
        if (json_is_string (v)) {
            size_t i;
            json_t *item;
            json_array_foreach (p->items, i, item)
                if (json_equal (item, (json_t *) v)) return 0;
        }
        char list[512] = "", seen[80];
        size_t i, used = 0;
        json_t *item;
        json_array_foreach (p->items, i, item) {
            int n = snprintf (list + used, sizeof list - used, "%s%s", i ? ", " : "", json_string_value (item));
            if (n < 0 || (size_t) n >= sizeof list - used) break;
            used += (size_t) n;
        }
        if (json_is_string (v))
            return s_fail (reason, rlen, "'%s' is not one of: %s",
                           bmq_verdict_clip (seen, sizeof seen, json_string_value (v), json_string_length (v)), list);
        return s_fail (reason, rlen, "expected one of: %s; got %s", list, s_kind (v));
    }
    case S_VEC3:
        return s_check_list (p, v, 3, 3, "a list of exactly 3 numbers [x, y, z]", reason, rlen);
    case S_COLOR:
        return s_check_list (p, v, 3, 4, "a list of 3 or 4 numbers (RGB or RGBA)", reason, rlen);
    default:
        return s_fail (reason, rlen, "unsupported type");
    }
}

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
static bool s_key_applies (s_type_t t, const char *key)
{
    if (!strcmp (key, "type") || !strcmp (key, "required") || !strcmp (key, "default") || !strcmp (key, "description"))
        return true;
    if (!strcmp (key, "min") || !strcmp (key, "max"))
        return t == S_FLOAT || t == S_INT || t == S_VEC3 || t == S_COLOR;
    if (!strcmp (key, "max_len")) return t == S_STRING;
    if (!strcmp (key, "items")) return t == S_ENUM;
    return false;
}

static int s_param_bounds (bmq_palette_param_t *p, const json_t *spec, const char *ctx, char *err, size_t errlen)
{
    bool integer = p->type == S_INT;
    int rmin = s_number_key (spec, "min", integer, &p->min, &p->imin);
    int rmax = s_number_key (spec, "max", integer, &p->max, &p->imax);
    if (rmin < 0 || rmax < 0)
        return s_fail (err, errlen, "%s: min and max must be %s", ctx, integer ? "integers" : "finite numbers");
    if (p->type == S_COLOR) {
        if (rmin) p->min = 0;
        if (rmax) p->max = 1;
        if (p->min < 0 || p->max > 1) return s_fail (err, errlen, "%s: color bounds must stay within [0, 1]", ctx);
    }
    else if (rmin || rmax)     /* unbounded numbers are what the palette exists to prevent */
        return s_fail (err, errlen, "%s: type %s needs both min and max", ctx, s_type_names[p->type]);
    if (p->min > p->max || (integer && p->imin > p->imax))
        return s_fail (err, errlen, "%s: min is greater than max", ctx);
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
        return s_fail (err, errlen, "%s: enum needs items, a list of 1 to %d strings", ctx, S_MAX_ITEMS);
    size_t i, j;
    json_t *item;
    json_array_foreach (items, i, item) {
        if (!json_is_string (item) || json_string_length (item) == 0 || json_string_length (item) > S_MAX_ITEM_LEN
            || !s_printable (json_string_value (item), json_string_length (item)))
            return s_fail (err, errlen, "%s: item %zu must be 1 to %d printable ASCII characters", ctx, i, S_MAX_ITEM_LEN);
        for (j = 0; j < i; j++)
            if (json_equal (item, json_array_get (items, j)))
                return s_fail (err, errlen, "%s: item '%s' is listed twice", ctx, json_string_value (item));
    }
    p->items = json_deep_copy (items);
    return p->items ? 0 : s_fail (err, errlen, "%s: out of memory", ctx);
}

/* The default as the validator would accept it, with floats made real so the
 * published palette reads 1.0, not 1, for a float. */
static json_t *s_normalise (const bmq_palette_param_t *p, const json_t *v)
{
    if (p->type == S_FLOAT) return json_real (json_number_value (v));
    if (p->type != S_VEC3 && p->type != S_COLOR) return json_deep_copy (v);
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
    if (!(p->name = strdup (name))) return s_fail (err, errlen, "%s: out of memory", ctx);
    if (!json_is_object (spec)) return s_fail (err, errlen, "%s: must be a mapping with a type", ctx);
    const char *type = json_string_value (json_object_get (spec, "type"));
    if (!type) return s_fail (err, errlen, "%s: type is missing", ctx);
    int t = 0;
    while (t < S_TYPES && strcmp (type, s_type_names[t])) t++;
    if (t == S_TYPES)
        return s_fail (err, errlen, "%s: unknown type '%.32s' (known: float, int, bool, string, enum, vec3, color)", ctx, type);
    p->type = (s_type_t) t;
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) spec, key, v)
        if (!s_key_applies (p->type, key))
            return s_fail (err, errlen, "%s: key '%.32s' does not apply to type %s", ctx, key, type);
    v = json_object_get (spec, "required");
    if (v && !json_is_boolean (v)) return s_fail (err, errlen, "%s: required must be true or false", ctx);
    p->required = json_is_true (v);
    v = json_object_get (spec, "description");
    if (v && !json_is_string (v)) return s_fail (err, errlen, "%s: description must be a string", ctx);
    if (v && !(p->description = strdup (json_string_value (v)))) return s_fail (err, errlen, "%s: out of memory", ctx);
    if (p->type == S_STRING) {
        v = json_object_get (spec, "max_len");
        if (!json_is_integer (v) || json_integer_value (v) < 1 || json_integer_value (v) > BMQ_PALETTE_MAX_STRING)
            return s_fail (err, errlen, "%s: string needs max_len between 1 and %d", ctx, BMQ_PALETTE_MAX_STRING);
        p->max_len = (size_t) json_integer_value (v);
    }
    else if (p->type == S_ENUM) {
        if (s_param_items (p, spec, ctx, err, errlen)) return -1;
    }
    else if (p->type != S_BOOL && s_param_bounds (p, spec, ctx, err, errlen))
        return -1;
    v = json_object_get (spec, "default");
    if (v && p->required) return s_fail (err, errlen, "%s: a required parameter cannot have a default", ctx);
    if (v) {
        char reason[256];
        if (bmq_palette_param_check (p, v, reason, sizeof reason))
            return s_fail (err, errlen, "%s: default is invalid: %s", ctx, reason);
        if (!(p->def = s_normalise (p, v))) return s_fail (err, errlen, "%s: out of memory", ctx);
    }
    return 0;
}

/* ---- vertex cost: "10*4^subdivisions+2" -------------------------------- */
/* Grammar (no parentheses, kept deliberately tiny):
 *   sum := prod ('+' prod)* ; prod := pow ('*' pow)* ; pow := atom ('^' atom)?
 *   atom := number | parameter (int or float, with a default or required) */

typedef struct {
    const char *s;
    bmq_palette_op_t *op;
    int failed;
    s_token_t *out;             /* op->cost or op->mult */
    size_t *len;
} s_lexer_t;

static void s_emit (s_lexer_t *lx, char kind, double num, size_t param)
{
    if (*lx->len >= S_COST_TOKENS) { lx->failed = 1; return; }
    lx->out[(*lx->len)++] = (s_token_t) { kind, num, param };
}

static void s_atom (s_lexer_t *lx)
{
    while (*lx->s == ' ') lx->s++;
    const char *start = lx->s;
    if ((*lx->s >= '0' && *lx->s <= '9') || *lx->s == '.') {
        char *end;
        double d = strtod (lx->s, &end);
        lx->s = end;
        if (!isfinite (d) || d < 0) lx->failed = 1;
        else s_emit (lx, 'n', d, 0);
    }
    else {
        while ((*lx->s >= 'a' && *lx->s <= 'z') || (*lx->s >= 'A' && *lx->s <= 'Z') || *lx->s == '_'
               || (lx->s > start && *lx->s >= '0' && *lx->s <= '9'))
            lx->s++;
        const s_slot_t *slot = s_table_get (&lx->op->index, start, (size_t) (lx->s - start));
        const bmq_palette_param_t *p = slot ? &lx->op->params[slot->value] : NULL;
        if (!p || (p->type != S_INT && p->type != S_FLOAT) || (!p->def && !p->required)) lx->failed = 1;
        else s_emit (lx, 'p', 0, slot->value);
    }
    while (*lx->s == ' ') lx->s++;
}

static void s_pow (s_lexer_t *lx)
{
    s_atom (lx);
    if (*lx->s == '^') { lx->s++; s_atom (lx); s_emit (lx, '^', 0, 0); }
}

static void s_prod (s_lexer_t *lx)
{
    s_pow (lx);
    while (!lx->failed && *lx->s == '*') { lx->s++; s_pow (lx); s_emit (lx, '*', 0, 0); }
}

/* Compile cost.<key> (a number or an expression) into out / *len. */
static int s_cost_expr (bmq_palette_op_t *op, const char *key, const json_t *v, s_token_t *out, size_t *len,
                        char *err, size_t errlen)
{
    s_lexer_t lx = { json_string_value (v) ? json_string_value (v) : "", op, 0, out, len };
    if (json_is_number (v) && json_number_value (v) >= 0 && isfinite (json_number_value (v)))
        s_emit (&lx, 'n', json_number_value (v), 0);
    else if (json_is_string (v) && json_string_length (v) < 128) {
        s_prod (&lx);
        while (!lx.failed && *lx.s == '+') { lx.s++; s_prod (&lx); s_emit (&lx, '+', 0, 0); }
        if (lx.failed || *lx.s)
            return s_fail (err, errlen, "operation '%s': bad cost expression '%s' (numbers, int/float parameters"
                           " with a default, + * ^)", op->name, json_string_value (v));
    }
    else
        return s_fail (err, errlen, "operation '%s': cost.%s must be a number or an expression", op->name, key);
    return 0;
}

/* cost.vertices: the vertices of the object a creating step adds;
 * cost.multiplies: the factor an acts_on step applies to its object's. */
static int s_cost_load (bmq_palette_op_t *op, const json_t *cost, char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) cost, key, v)
        if (strcmp (key, "vertices") && strcmp (key, "multiplies"))
            return s_fail (err, errlen, "operation '%s': unknown cost key '%.32s' (known: vertices, multiplies)",
                           op->name, key);
    if ((v = json_object_get (cost, "vertices")) && s_cost_expr (op, "vertices", v, op->cost, &op->cost_len, err, errlen))
        return -1;
    if ((v = json_object_get (cost, "multiplies"))) {
        if (!op->acts_on) return s_fail (err, errlen, "operation '%s': cost.multiplies needs acts_on", op->name);
        if (s_cost_expr (op, "multiplies", v, op->mult, &op->mult_len, err, errlen)) return -1;
    }
    op->cost_src = json_deep_copy (cost);
    return 0;
}

/* A parameter's value for costing: the step's value when it is a number in
 * bounds (an invalid one is reported elsewhere), else the default, else min. */
static double s_cost_value (const bmq_palette_param_t *p, const json_t *params)
{
    const json_t *v = json_is_object (params) ? json_object_get (params, p->name) : NULL;
    if (json_is_number (v) && json_number_value (v) >= p->min && json_number_value (v) <= p->max)
        return json_number_value (v);
    return p->def ? json_number_value (p->def) : p->min;
}

static double s_eval (const bmq_palette_op_t *op, const s_token_t *tokens, size_t len, const json_t *params)
{
    double stack[S_COST_TOKENS];
    size_t sp = 0;
    for (size_t i = 0; i < len; i++) {
        const s_token_t *t = &tokens[i];
        if (t->kind == 'n') stack[sp++] = t->num;
        else if (t->kind == 'p') stack[sp++] = s_cost_value (&op->params[t->param], params);
        else {          /* compiled at load: every operator has two operands */
            double b = stack[--sp], a = stack[--sp];
            stack[sp++] = t->kind == '+' ? a + b : t->kind == '*' ? a * b : pow (a, b);
        }
    }
    double v = sp ? stack[0] : 0;
    return isfinite (v) && v >= 0 ? v : HUGE_VAL;
}

double bmq_palette_op_vertices (const bmq_palette_op_t *op, const json_t *params)
{
    return op && op->cost_len ? s_eval (op, op->cost, op->cost_len, params) : 0;
}

double bmq_palette_op_multiplier (const bmq_palette_op_t *op, const json_t *params)
{
    double f = op && op->mult_len ? s_eval (op, op->mult, op->mult_len, params) : 1;
    return f < 1 ? 1 : f;          /* a factor never shrinks the estimate */
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
        return s_fail (err, errlen, "operation '%s': %s must be 'object'", op, key);
    *out = v != NULL;
    return 0;
}

static int s_op_params (bmq_palette_op_t *op, const json_t *params, char *err, size_t errlen)
{
    size_t n = json_object_size (params);
    if ((params && !json_is_object (params) && !json_is_null (params)) || n > BMQ_PALETTE_MAX_PARAMS)
        return s_fail (err, errlen, "operation '%s': params must be a mapping of at most %d parameters",
                       op->name, BMQ_PALETTE_MAX_PARAMS);
    op->params = calloc (n ? n : 1, sizeof *op->params);
    op->param_list = calloc (1, n * (S_MAX_OP_NAME + 2) + 8);
    if (!op->params || !op->param_list || s_table_init (&op->index, n))
        return s_fail (err, errlen, "out of memory");
    const char *name;
    json_t *spec;
    json_object_foreach ((json_t *) params, name, spec) {
        bmq_palette_param_t *p = &op->params[op->param_count++];
        if (!s_op_name_ok (name) || strchr (name, '.'))
            return s_fail (err, errlen, "operation '%s': bad parameter name '%.32s'", op->name, name);
        if (s_param_load (p, op->name, name, spec, err, errlen)) return -1;
        s_table_put (&op->index, p->name, strlen (p->name), op->param_count - 1);
        if (op->param_count > 1) strcat (op->param_list, ", ");
        strcat (op->param_list, p->name);
    }
    if (!n) strcpy (op->param_list, "(none)");
    return 0;
}

static int s_op_load (bmq_palette_op_t *op, const char *name, const json_t *spec, char *err, size_t errlen)
{
    if (!(op->name = strdup (name))) return s_fail (err, errlen, "out of memory");
    if (!s_op_name_ok (name))
        return s_fail (err, errlen, "bad operation name '%.64s' (letters, digits, '_' and '.')", name);
    if (!json_is_object (spec) && !json_is_null (spec))
        return s_fail (err, errlen, "operation '%s': must be a mapping", name);
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) spec, key, v)
        if (strcmp (key, "description") && strcmp (key, "creates") && strcmp (key, "acts_on")
            && strcmp (key, "deletes") && strcmp (key, "cost") && strcmp (key, "params"))
            return s_fail (err, errlen, "operation '%s': unknown key '%.32s' (known: description, creates,"
                           " acts_on, deletes, cost, params)", name, key);
    v = json_object_get (spec, "description");
    if (v && !json_is_string (v)) return s_fail (err, errlen, "operation '%s': description must be a string", name);
    if (v && !(op->description = strdup (json_string_value (v)))) return s_fail (err, errlen, "out of memory");
    if (s_flag (spec, "creates", &op->creates, name, err, errlen)
        || s_flag (spec, "acts_on", &op->acts_on, name, err, errlen)
        || s_flag (spec, "deletes", &op->deletes, name, err, errlen)
        || s_op_params (op, json_object_get (spec, "params"), err, errlen))
        return -1;
    if (op->deletes && (!op->acts_on || op->creates))
        return s_fail (err, errlen, "operation '%s': deletes needs acts_on (and no creates)", name);
    v = json_object_get (spec, "cost");
    if (v && !json_is_object (v)) return s_fail (err, errlen, "operation '%s': cost must be a mapping", name);
    return v ? s_cost_load (op, v, err, errlen) : 0;
}

static int s_limit (const json_t *limits, const char *key, double lo, double hi, double dflt, double *out,
                    char *err, size_t errlen)
{
    json_t *v = json_object_get (limits, key);
    *out = dflt;
    if (!v) return 0;
    if (!json_is_integer (v) || json_number_value (v) < lo || json_number_value (v) > hi)
        return s_fail (err, errlen, "limits.%s must be an integer between %.0f and %.0f", key, lo, hi);
    *out = json_number_value (v);
    return 0;
}

static int s_palette_fill (bmq_palette_t *self, const json_t *doc, char *err, size_t errlen)
{
    if (!json_is_object (doc)) return s_fail (err, errlen, "the palette must be a mapping with version, limits, operations");
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) doc, key, v)
        if (strcmp (key, "version") && strcmp (key, "limits") && strcmp (key, "operations"))
            return s_fail (err, errlen, "unknown top-level key '%.32s' (known: version, limits, operations)", key);
    v = json_object_get (doc, "version");
    if (!json_is_integer (v) || json_integer_value (v) != 1) return s_fail (err, errlen, "version must be 1");
    self->version = 1;
    json_t *limits = json_object_get (doc, "limits");
    if (limits && !json_is_object (limits)) return s_fail (err, errlen, "limits must be a mapping");
    json_object_foreach (limits, key, v)
        if (strcmp (key, "max_steps") && strcmp (key, "max_name_len") && strcmp (key, "max_vertices"))
            return s_fail (err, errlen, "unknown limit '%.32s' (known: max_steps, max_name_len, max_vertices)", key);
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
        return s_fail (err, errlen, "operations must be a mapping of 1 to %d operations", BMQ_PALETTE_MAX_OPS);
    if (!(self->ops = calloc (n, sizeof *self->ops)) || s_table_init (&self->index, n))
        return s_fail (err, errlen, "out of memory");
    json_object_foreach (ops, key, v) {
        bmq_palette_op_t *op = &self->ops[self->op_count++];
        if (s_op_load (op, key, v, err, errlen)) return -1;
        s_table_put (&self->index, op->name, strlen (op->name), self->op_count - 1);
    }
    return 0;
}

bmq_palette_t *bmq_palette_from_json (const json_t *doc, char *err, size_t errlen)
{
    bmq_palette_t *self = calloc (1, sizeof *self);
    if (!self) { s_fail (err, errlen, "out of memory"); return NULL; }
    if (s_palette_fill (self, doc, err, errlen))
        bmq_palette_destroy (&self);
    return self;
}

bmq_palette_t *bmq_palette_load (const char *path, char *err, size_t errlen)
{
    char inner[512];
    json_t *doc = bmq_yaml_load_file (path, inner, sizeof inner);
    if (!doc) { s_fail (err, errlen, "%s", inner); return NULL; }
    bmq_palette_t *self = bmq_palette_from_json (doc, inner, sizeof inner);
    json_decref (doc);
    if (!self) s_fail (err, errlen, "%s: %s", path, inner);
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

/* ---- publishing ----------------------------------------------------------- */

static json_t *s_param_json (const bmq_palette_param_t *p)
{
    json_t *o = json_pack ("{s:s, s:b}", "type", s_type_names[p->type], "required", p->required);
    if (!o) return NULL;
    if (p->def) json_object_set (o, "default", p->def);
    if (p->type == S_INT) {
        json_object_set_new (o, "min", json_integer (p->imin));
        json_object_set_new (o, "max", json_integer (p->imax));
    }
    else if (p->type == S_FLOAT || p->type == S_VEC3 || p->type == S_COLOR) {
        json_object_set_new (o, "min", json_real (p->min));
        json_object_set_new (o, "max", json_real (p->max));
    }
    if (p->type == S_STRING) json_object_set_new (o, "max_len", json_integer ((json_int_t) p->max_len));
    if (p->items) json_object_set (o, "items", p->items);
    if (p->description) json_object_set_new (o, "description", json_string (p->description));
    return o;
}

static json_t *s_params_json (const bmq_palette_op_t *op)
{
    json_t *params = json_object ();
    for (size_t j = 0; params && j < op->param_count; j++)
        json_object_set_new (params, op->params[j].name, s_param_json (&op->params[j]));
    return params;
}

json_t *bmq_palette_to_json (const bmq_palette_t *self)
{
    json_t *out = json_object ();
    for (size_t i = 0; self && out && i < self->op_count; i++)
        json_object_set_new (out, self->ops[i].name, s_params_json (&self->ops[i]));
    return out;
}

json_t *bmq_palette_describe (const bmq_palette_t *self)
{
    if (!self) return NULL;
    json_t *ops = json_object ();
    for (size_t i = 0; ops && i < self->op_count; i++) {
        const bmq_palette_op_t *op = &self->ops[i];
        json_t *o = json_pack ("{s:b, s:b, s:b, s:b, s:o}", "creates", op->creates, "acts_on", op->acts_on,
                               "deletes", op->deletes, "needs_target", bmq_palette_op_needs_target (op),
                               "params", s_params_json (op));
        if (o && op->description) json_object_set_new (o, "description", json_string (op->description));
        if (o && op->cost_src) json_object_set (o, "cost", op->cost_src);
        json_object_set_new (ops, op->name, o);
    }
    return json_pack ("{s:i, s:{s:i, s:i, s:f}, s:o}", "version", self->version,
                      "limits", "max_steps", self->max_steps, "max_name_len", self->max_name_len,
                      "max_vertices", self->max_vertices, "operations", ops);
}

/* ---- accessors ------------------------------------------------------------ */

size_t bmq_palette_count (const bmq_palette_t *self) { return self ? self->op_count : 0; }
int bmq_palette_max_steps (const bmq_palette_t *self) { return self ? self->max_steps : 0; }
int bmq_palette_max_name_len (const bmq_palette_t *self) { return self ? self->max_name_len : 0; }
double bmq_palette_max_vertices (const bmq_palette_t *self) { return self ? self->max_vertices : 0; }

bool bmq_palette_has (const bmq_palette_t *self, const char *operation)
{
    return operation && bmq_palette_op (self, operation, strlen (operation)) != NULL;
}

const bmq_palette_op_t *bmq_palette_op (const bmq_palette_t *self, const char *name, size_t len)
{
    const s_slot_t *slot = self && name ? s_table_get (&self->index, name, len) : NULL;
    return slot ? &self->ops[slot->value] : NULL;
}

const char *bmq_palette_op_name (const bmq_palette_op_t *op) { return op ? op->name : NULL; }
bool bmq_palette_op_creates (const bmq_palette_op_t *op) { return op && op->creates; }
bool bmq_palette_op_acts_on (const bmq_palette_op_t *op) { return op && op->acts_on; }
bool bmq_palette_op_deletes (const bmq_palette_op_t *op) { return op && op->deletes; }
bool bmq_palette_op_needs_target (const bmq_palette_op_t *op)
{
    return op && (op->deletes || op->mult_len || (op->creates && op->acts_on));
}
size_t bmq_palette_op_param_count (const bmq_palette_op_t *op) { return op ? op->param_count : 0; }
const char *bmq_palette_op_param_list (const bmq_palette_op_t *op) { return op ? op->param_list : ""; }

const bmq_palette_param_t *bmq_palette_op_param_at (const bmq_palette_op_t *op, size_t index)
{
    return op && index < op->param_count ? &op->params[index] : NULL;
}

const bmq_palette_param_t *bmq_palette_op_param (const bmq_palette_op_t *op, const char *name, size_t len)
{
    const s_slot_t *slot = op && name ? s_table_get (&op->index, name, len) : NULL;
    return slot ? &op->params[slot->value] : NULL;
}

const char *bmq_palette_param_name (const bmq_palette_param_t *param) { return param ? param->name : NULL; }
bool bmq_palette_param_required (const bmq_palette_param_t *param) { return param && param->required; }
