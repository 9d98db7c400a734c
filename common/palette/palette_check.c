/* palette_check — one value against a parameter's type and bounds, shared by
 * defaults at load and plans at validation. */
#include "palette_internal.h"
#include "verdict_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (!isfinite (d)) return palette_fail (reason, rlen, "%snot a finite number", what);
    if (d < min) return palette_fail (reason, rlen, "%s%s is below the minimum %s", what, s_num (a, 32, d), s_num (b, 32, min));
    if (d > max) return palette_fail (reason, rlen, "%s%s is above the maximum %s", what, s_num (a, 32, d), s_num (b, 32, max));
    return 0;
}

/* A list of `lo`..`hi` numbers, each in [min, max]. */
static int s_check_list (const bmq_palette_param_t *p, const json_t *v, size_t lo, size_t hi,
                         const char *shape, char *reason, size_t rlen)
{
    size_t n = json_is_array (v) ? json_array_size (v) : 0;
    if (!json_is_array (v) || n < lo || n > hi)
        return palette_fail (reason, rlen, "expected %s, got %s%s", shape, s_kind (v),
                             json_is_array (v) ? (n < lo ? " that is too short" : " that is too long") : "");
    static const char *axis = "xyzw";
    static const char *channel = "rgba";
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get (v, i);
        double d = json_number_value (c);
        if (json_is_number (c) && d >= p->min && d <= p->max) continue;    /* the common case: no formatting */
        char what[48];
        snprintf (what, sizeof what, "component %zu (%c) ", i, (p->type == PALETTE_COLOR ? channel : axis)[i]);
        if (!json_is_number (c))
            return palette_fail (reason, rlen, "%sis %s; expected a number", what, s_kind (c));
        return s_range (d, p->min, p->max, what, reason, rlen);
    }
    return 0;
}

int bmq_palette_param_check (const bmq_palette_param_t *p, const json_t *v, char *reason, size_t rlen)
{
    if (!p || !v) return palette_fail (reason, rlen, "no value");
    char a[32];
    switch (p->type) {
    case PALETTE_FLOAT:
        if (!json_is_number (v)) return palette_fail (reason, rlen, "expected a number, got %s", s_kind (v));
        return s_range (json_number_value (v), p->min, p->max, "", reason, rlen);
    case PALETTE_INT: {
        if (json_is_real (v))
            return palette_fail (reason, rlen, "expected an integer, got the real number %s", s_num (a, 32, json_real_value (v)));
        if (!json_is_integer (v)) return palette_fail (reason, rlen, "expected an integer, got %s", s_kind (v));
        long long i = json_integer_value (v);
        if (i < p->imin) return palette_fail (reason, rlen, "%lld is below the minimum %lld", i, p->imin);
        if (i > p->imax) return palette_fail (reason, rlen, "%lld is above the maximum %lld", i, p->imax);
        return 0;
    }
    case PALETTE_BOOL:
        return json_is_boolean (v) ? 0 : palette_fail (reason, rlen, "expected true or false, got %s", s_kind (v));
    case PALETTE_STRING: {
        if (!json_is_string (v)) return palette_fail (reason, rlen, "expected a string, got %s", s_kind (v));
        size_t len = json_string_length (v);
        if (len > p->max_len)
            return palette_fail (reason, rlen, "string is %zu bytes long; at most %zu are allowed", len, p->max_len);
        const unsigned char *s = (const unsigned char *) json_string_value (v);
        for (size_t i = 0; i < len; i++)
            if (s[i] < 0x20 || s[i] == 0x7f)
                return palette_fail (reason, rlen, "string contains a control character at byte %zu", i);
        return 0;
    }
    case PALETTE_ENUM: {
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
            return palette_fail (reason, rlen, "'%s' is not one of: %s",
                                 bmq_verdict_clip (seen, sizeof seen, json_string_value (v), json_string_length (v)), list);
        return palette_fail (reason, rlen, "expected one of: %s; got %s", list, s_kind (v));
    }
    case PALETTE_VEC3:
        return s_check_list (p, v, 3, 3, "a list of exactly 3 numbers [x, y, z]", reason, rlen);
    case PALETTE_COLOR:
        return s_check_list (p, v, 3, 4, "a list of 3 or 4 numbers (RGB or RGBA)", reason, rlen);
    default:
        return palette_fail (reason, rlen, "unsupported type");
    }
}
