/* blender_link_report — see blender_link_report.h. */
#include "blender_link_report.h"
#include "bmq_link_proto.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define REPORTS_MAX    BMQ_LINK_REPORTS_MAX      /* reports taken from one hello (the add-on keeps 8) */
#define NAMES_MAX      BMQ_LINK_NAMES_MAX        /* object names per list (the add-on sends at most 256) */
#define NAME_MAX_BYTES BMQ_LINK_NAME_MAX_BYTES   /* Blender's own limit is 63 */
#define TEXT_MAX_BYTES BMQ_LINK_TEXT_MAX_BYTES   /* reason, error */
#define ID_MAX_BYTES   BMQ_LINK_ID_MAX_BYTES     /* plan ids; cids are the bus's ids (codec.c s_copy_id) */

static json_t *s_check_field (const bmq_link_field_t *f, json_t *value);

static json_t *s_check_object (json_t *value, const bmq_link_field_t *fields)
{
    if (!json_is_object (value)) return NULL;
    json_t *out = json_object ();
    for (const bmq_link_field_t *f = fields; f->name; f++) {
        json_t *got = json_object_get (value, f->name);
        json_t *clean = got && !json_is_null (got) ? s_check_field (f, got) : NULL;
        if (!clean && f->required) { json_decref (out); return NULL; }
        if (clean) json_object_set_new (out, f->name, clean);
    }
    return out;
}

/* A string of 1..max bytes without control characters. */
static bool s_plain (const char *text, size_t max)
{
    size_t n = text ? strlen (text) : 0;
    if (n == 0 || n > max) return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char) text[i] < 0x20 || text[i] == 0x7f) return false;
    return true;
}

static json_t *s_check_report_id (json_t *v)
{
    const char *t = json_string_value (v);
    if (!t || strlen (t) != 16 || strspn (t, "0123456789abcdef") != 16) return NULL;
    return json_string (t);
}

static json_t *s_check_plan_id (json_t *v)
{
    const char *t = json_string_value (v);
    return s_plain (t, ID_MAX_BYTES) ? json_string (t) : NULL;
}

static json_t *s_check_cid (json_t *v)
{
    const char *t = json_string_value (v);
    if (!t || !*t || strlen (t) > ID_MAX_BYTES) return NULL;
    for (const char *p = t; *p; p++)
        if ((unsigned char) *p < 0x21 || (unsigned char) *p > 0x7e) return NULL;
    return json_string (t);
}

static json_t *s_check_count (json_t *v)
{
    if (!json_is_integer (v) || json_integer_value (v) < 0 || json_integer_value (v) > ((json_int_t) 1 << 53)) return NULL;
    return json_integer (json_integer_value (v));
}

/* Free text, cut to TEXT_MAX_BYTES on a UTF-8 character boundary. */
static json_t *s_check_text (json_t *v)
{
    const char *t = json_string_value (v);
    if (!t) return NULL;
    size_t n = json_string_length (v);
    if (n > TEXT_MAX_BYTES) {
        n = TEXT_MAX_BYTES;
        while (n && ((unsigned char) t[n] & 0xC0) == 0x80) n--;
    }
    char buf[TEXT_MAX_BYTES + 1];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) buf[k++] = (unsigned char) t[i] < 0x20 ? ' ' : t[i];
    buf[k] = 0;
    return json_string (buf);
}

static json_t *s_check_names (json_t *v)
{
    if (!json_is_array (v)) return NULL;
    json_t *out = json_array ();
    size_t i;
    json_t *name;
    json_array_foreach (v, i, name) {
        if (json_array_size (out) >= NAMES_MAX) break;
        const char *t = json_string_value (name);
        if (t && json_string_length (name) == strlen (t) && *t && strlen (t) <= NAME_MAX_BYTES)
            json_array_append_new (out, json_string (t));
    }
    return out;
}

static json_t *s_check_rollback (json_t *v)
{
    json_t *out = s_check_object (v, bmq_link_rollback_fields);
    if (!out) return NULL;
    const char *lists[] = { "removed", "restored" }, *counts[] = { "removed_count", "restored_count" };
    for (int i = 0; i < 2; i++)         /* a count is never below what is listed */
        if (json_integer_value (json_object_get (out, counts[i])) < (json_int_t) json_array_size (json_object_get (out, lists[i])))
            json_object_set_new (out, counts[i], json_integer ((json_int_t) json_array_size (json_object_get (out, lists[i]))));
    return out;
}

static json_t *s_check_reports (json_t *v, const bmq_link_field_t *fields)
{
    if (!json_is_array (v)) return NULL;
    json_t *out = json_array ();
    size_t i;
    json_t *r;
    json_array_foreach (v, i, r) {
        if (i >= REPORTS_MAX) break;
        json_t *clean = s_check_object (r, fields);
        if (clean) json_array_append_new (out, clean);
    }
    return out;
}

/* One field by the check its table names (proto/blender_link.json, hello_report). */
static json_t *s_check_field (const bmq_link_field_t *f, json_t *value)
{
    switch (f->check) {
    case BMQ_LINK_CHECK_REPORT_ID: return s_check_report_id (value);
    case BMQ_LINK_CHECK_PLAN_ID:   return s_check_plan_id (value);
    case BMQ_LINK_CHECK_CID:       return s_check_cid (value);
    case BMQ_LINK_CHECK_COUNT:     return s_check_count (value);
    case BMQ_LINK_CHECK_TEXT:      return s_check_text (value);
    case BMQ_LINK_CHECK_NAMES:     return s_check_names (value);
    case BMQ_LINK_CHECK_OBJECT:    return f->fields == bmq_link_rollback_fields ? s_check_rollback (value)
                                                                               : s_check_object (value, f->fields);
    case BMQ_LINK_CHECK_ARRAY:     return s_check_reports (value, f->fields);
    }
    return NULL;
}


json_t *bmq_link_hello_report_check (json_t *result)
{
    return s_check_object (result, bmq_link_hello_fields);
}
