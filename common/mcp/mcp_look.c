/* mcp_look — the MCP tool `look` (issue 16, "a second pair of eyes"): a model
 * checks its own work.
 *
 * The call becomes scene.request {command: look, args: {angles?}} (the
 * add-on's look, services/executor/addon/blendmq/look.py). Its answer becomes
 * a tool result of two content blocks: the contact sheet as image/png, then
 * the topology as text: which views, in which order, then one line per object
 * (type, vertices, faces, non-manifold edges, loose parts, world bounds) and
 * the totals. The reply comes from Blender through the bus: every field is
 * type-checked, names are cut and their control characters blanked, and the
 * text is bounded (LOOK_TEXT_MAX; the lines that do not fit are counted). */
#include "mcp_call_internal.h"

#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOK_ANGLES_MAX 8
#define LOOK_TEXT_MAX   (48 * 1024)
#define LOOK_NAME_MAX   64
#define LOOK_LINE_MAX   512     /* an object line is shorter; the totals too */

json_t *bmq_mcp_look_body (const json_t *args, char *err, size_t errlen)
{
    json_t *angles = json_object_get (args, "angles");
    json_t *body = json_pack ("{s:s, s:{}}", "command", "look", "args");
    if (!angles || json_is_null (angles)) return body;
    if (!json_is_integer (angles) || json_integer_value (angles) < 1 || json_integer_value (angles) > LOOK_ANGLES_MAX) {
        snprintf (err, errlen, "angles must be an integer in 1..%d", LOOK_ANGLES_MAX);
        json_decref (body);
        return NULL;
    }
    json_object_set (json_object_get (body, "args"), "angles", angles);
    return body;
}

typedef struct { char *buf; size_t len, used; bool full; } s_text_t;

static void s_add (s_text_t *t, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static void s_add (s_text_t *t, const char *fmt, ...)
{
    if (t->full) return;
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (t->buf + t->used, t->len - t->used, fmt, ap);
    va_end (ap);
    if (n < 0 || (size_t) n >= t->len - t->used) { t->buf[t->used] = 0; t->full = true; return; }
    t->used += (size_t) n;
}

static void s_clean (const json_t *s, char *out, size_t len)
{
    const char *in = json_string_value (s);
    size_t i = 0;
    for (; in && in[i] && i + 1 < len; i++) out[i] = (unsigned char) in[i] < 0x20 || in[i] == 0x7f ? '?' : in[i];
    out[i] = 0;
    if (!in) snprintf (out, len, "?");
}

static long long s_int (const json_t *o, const char *key)
{
    json_t *v = json_object_get (o, key);
    return json_is_integer (v) ? (long long) json_integer_value (v) : 0;
}

/* "[x,y,z]" of a bounds corner, "?" when it is not three numbers. */
static void s_corner (const json_t *v, char *out, size_t len)
{
    if (json_array_size (v) != 3 || !json_is_number (json_array_get (v, 0)) || !json_is_number (json_array_get (v, 1))
        || !json_is_number (json_array_get (v, 2))) { snprintf (out, len, "?"); return; }
    snprintf (out, len, "[%.4g,%.4g,%.4g]", json_number_value (json_array_get (v, 0)), json_number_value (json_array_get (v, 1)),
              json_number_value (json_array_get (v, 2)));
}

static void s_object_line (s_text_t *t, const json_t *o)
{
    char name[LOOK_NAME_MAX + 1], type[16], lo[96], hi[96];
    s_clean (json_object_get (o, "name"), name, sizeof name);
    s_clean (json_object_get (o, "type"), type, sizeof type);
    if (!json_is_integer (json_object_get (o, "vertices"))) { s_add (t, "- %s (%s): no geometry\n", name, type); return; }
    json_t *bounds = json_object_get (o, "bounds");
    s_corner (json_object_get (bounds, "min"), lo, sizeof lo);
    s_corner (json_object_get (bounds, "max"), hi, sizeof hi);
    s_add (t, "- %s (%s): %lld vertices, %lld faces, %lld non-manifold edges, %lld loose parts, bounds %s..%s\n", name, type,
           s_int (o, "vertices"), s_int (o, "faces"), s_int (o, "non_manifold_edges"), s_int (o, "loose_parts"), lo, hi);
}

static char *s_stats_text (const json_t *result, size_t png_bytes)
{
    s_text_t t = { .buf = malloc (LOOK_TEXT_MAX), .len = LOOK_TEXT_MAX };
    t.buf[0] = 0;
    json_t *sheet = json_object_get (result, "sheet"), *a;
    size_t i;
    long long view_w = s_int (result, "width"), cols = view_w > 0 ? s_int (sheet, "width") / view_w : 0;
    s_add (&t, "contact sheet %lldx%lld PNG (%zu bytes), views of %lldx%lld in %lld column%s, left to right, top to bottom:",
           s_int (sheet, "width"), s_int (sheet, "height"), png_bytes, view_w, s_int (result, "height"), cols, cols == 1 ? "" : "s");
    json_array_foreach (json_object_get (result, "angles"), i, a) {
        char name[32];
        if (i >= LOOK_ANGLES_MAX) break;
        s_clean (a, name, sizeof name);
        s_add (&t, "%s %s", i ? "," : "", name);
    }
    json_t *objects = json_object_get (result, "objects"), *o;
    long long count = s_int (result, "count");
    s_add (&t, "\n%lld objects%s (non-manifold: edges without exactly 2 faces; loose parts: connected pieces):\n", count,
           count > (long long) json_array_size (objects) ? ", the first ones by name" : "");
    size_t shown = 0;
    json_array_foreach (objects, i, o) {
        if (t.used + 3 * LOOK_LINE_MAX > t.len) break;           /* room left for the end */
        s_object_line (&t, o);
        shown++;
    }
    json_t *tot = json_object_get (result, "totals");
    if (shown < json_array_size (objects)) s_add (&t, "(%zu more listed objects not shown)\n", json_array_size (objects) - shown);
    s_add (&t, "totals: %lld objects (%lld with geometry), %lld vertices, %lld faces, %lld non-manifold edges, %lld loose parts",
           s_int (tot, "objects"), s_int (tot, "with_geometry"), s_int (tot, "vertices"), s_int (tot, "faces"),
           s_int (tot, "non_manifold_edges"), s_int (tot, "loose_parts"));
    return t.buf;
}

json_t *bmq_mcp_look_result (const bmq_envelope_t *env)
{
    json_t *result = json_object_get (env->body, "result");
    if (!json_is_object (result) || env->blob_len < 8 || memcmp (env->blob, "\x89PNG\r\n\x1a\n", 8))
        return bmq_mcp_result_error ("look: Blender returned no picture (%zu bytes)", env->blob_len);
    size_t b64len = sodium_base64_ENCODED_LEN (env->blob_len, sodium_base64_VARIANT_ORIGINAL);
    char *b64 = malloc (b64len);
    sodium_bin2base64 (b64, b64len, env->blob, env->blob_len, sodium_base64_VARIANT_ORIGINAL);
    char *text = s_stats_text (result, env->blob_len);
    json_t *r = json_pack ("{s:[{s:s, s:s, s:s}, o], s:{s:I, s:O?, s:O?}}", "content", "type", "image", "mimeType", "image/png", "data", b64,
                           bmq_mcp_text (text), "structuredContent", "count", (json_int_t) s_int (result, "count"),
                           "totals", json_object_get (result, "totals"), "objects", json_object_get (result, "objects"));
    free (text);
    free (b64);
    return r;
}
