/* planner_eyes — search_assets and look for the dialogue; see planner_eyes.h. */
#include "planner_eyes.h"
#include "bus.h"
#include "planner_ask.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_STR_MAX 80

/* A string from the executor: cut at S_STR_MAX bytes on a character boundary, control characters blanked. */
static json_t *s_clean (const json_t *v)
{
    const char *in = json_string_value (v);
    if (!in) return NULL;
    char out[S_STR_MAX + 1];
    size_t n = strnlen (in, S_STR_MAX);
    if (in[n]) while (n && ((unsigned char) in[n] & 0xC0) == 0x80) n--;
    for (size_t i = 0; i < n; i++) out[i] = (unsigned char) in[i] < 0x20 || in[i] == 0x7f ? ' ' : in[i];
    out[n] = 0;
    return json_stringn (out, n);        /* NULL when the cut left invalid UTF-8: dropped */
}

static json_t *s_strings (const json_t *arr, size_t max)
{
    json_t *out = json_array ();
    size_t i;
    json_t *v;
    json_array_foreach (arr, i, v) {
        if (json_array_size (out) >= max) break;
        json_t *s = s_clean (v);
        if (s) json_array_append_new (out, s);
    }
    return out;
}

static json_t *s_error (const char *tool, const char *why)
{
    char msg[700];
    snprintf (msg, sizeof msg, "%s could not ask the executor: %s", tool, why);
    return json_pack ("{s:s}", "error", msg);
}

static json_t *s_refused (const char *tool, const bmq_envelope_t *env)
{
    const char *code = bmq_body_str (env, "code"), *message = bmq_body_str (env, "message");
    char msg[700];
    snprintf (msg, sizeof msg, "%s: the executor answered %.40s: %.500s", tool, code ? code : "error", message ? message : "");
    for (char *c = msg; *c; c++) if ((unsigned char) *c < 0x20 || *c == 0x7f) *c = ' ';
    json_t *err = json_pack ("{s:s}", "error", msg);
    return err ? err : json_pack ("{s:s}", "error", "the executor refused (its words were not UTF-8)");
}

/* ---- search_assets ---------------------------------------------------------- */

json_t *bmq_eyes_search_assets (const bmq_eyes_t *eyes, const json_t *args)
{
    const json_t *source = json_object_get (args, "source"), *query = json_object_get (args, "query"),
                 *type = json_object_get (args, "type");
    if (!json_is_string (source) || !json_string_length (source) || json_string_length (source) > 32)
        return json_pack ("{s:s}", "error", "source is required: polyhaven");
    if (query && !json_is_null (query) && (!json_is_string (query) || json_string_length (query) > 256))
        return json_pack ("{s:s}", "error", "query must be a string of at most 256 bytes");
    if (type && !json_is_null (type) && (!json_is_string (type) || (strcmp (json_string_value (type), "model")
        && strcmp (json_string_value (type), "hdri") && strcmp (json_string_value (type), "texture"))))
        return json_pack ("{s:s}", "error", "type must be model, hdri or texture");
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_ASSET_SEARCH, NULL, json_pack ("{s:O}", "source", source));
    if (json_is_string (query)) json_object_set (req->body, "query", (json_t *) query);
    if (json_is_string (type)) json_object_set (req->body, "type", (json_t *) type);
    bmq_envelope_t *reply = NULL;
    char why[400];
    if (bmq_planner_ask (eyes->gateway, eyes->story, "assets", &req, eyes->timeout_ms, eyes->cancelled, eyes->ctx, &reply,
                         why, sizeof why))
        return s_error ("search_assets", why);
    json_t *answer;
    if (reply->type != BMQ_MSG_ASSET_RESULT) answer = s_refused ("search_assets", reply);
    else {
        json_t *results = json_object_get (reply->body, "results"), *out = json_array (), *r;
        size_t i;
        json_array_foreach (results, i, r) {
            if (json_array_size (out) >= BMQ_EYES_MAX_RESULTS) break;
            json_t *id = s_clean (json_object_get (r, "id"));
            if (!id) continue;
            json_t *one = json_pack ("{s:o}", "id", id);
            json_t *name = s_clean (json_object_get (r, "name")), *t = s_clean (json_object_get (r, "type"));
            if (name) json_object_set_new (one, "name", name);
            if (t) json_object_set_new (one, "type", t);
            json_object_set_new (one, "categories", s_strings (json_object_get (r, "categories"), 4));
            json_object_set_new (one, "tags", s_strings (json_object_get (r, "tags"), 6));
            json_array_append_new (out, one);
        }
        answer = json_pack ("{s:O, s:o, s:i, s:s}", "source", source, "results", out, "found", (int) json_array_size (results),
                            "note", "use an id in an asset.import step: {operation: asset.import, params: {source, id, type}}");
    }
    bmq_envelope_destroy (&reply);
    return answer;
}

/* ---- look ------------------------------------------------------------------- */

static json_t *s_int (const json_t *o, const char *key)
{
    json_t *v = json_object_get (o, key);
    return json_is_integer (v) ? json_integer (json_integer_value (v)) : json_null ();
}

static json_t *s_vec3 (const json_t *v)
{
    if (json_array_size (v) != 3) return json_null ();
    json_t *out = json_array ();
    for (size_t i = 0; i < 3; i++) {
        json_t *x = json_array_get (v, i);
        if (!json_is_number (x)) { json_decref (out); return json_null (); }
        json_array_append_new (out, json_real ((double) (long long) (json_number_value (x) * 1000.0) / 1000.0));
    }
    return out;
}

static json_t *s_look_stats (const json_t *result)
{
    json_t *objects = json_array (), *o;
    size_t i;
    json_array_foreach (json_object_get (result, "objects"), i, o) {
        if (json_array_size (objects) >= BMQ_EYES_MAX_OBJECTS) break;
        json_t *name = s_clean (json_object_get (o, "name"));
        if (!name) continue;
        json_t *bounds = json_object_get (o, "bounds");
        json_t *t = s_clean (json_object_get (o, "type"));
        json_array_append_new (objects, json_pack ("{s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o}}", "name", name,
            "type", t ? t : json_null (), "vertices", s_int (o, "vertices"), "faces", s_int (o, "faces"),
            "non_manifold_edges", s_int (o, "non_manifold_edges"), "loose_parts", s_int (o, "loose_parts"),
            "bounds", "min", s_vec3 (json_object_get (bounds, "min")), "max", s_vec3 (json_object_get (bounds, "max"))));
    }
    json_t *tot = json_object_get (result, "totals"), *sheet = json_object_get (result, "sheet");
    return json_pack ("{s:o, s:{s:o, s:o}, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o, s:o}}",
        "views", s_strings (json_object_get (result, "angles"), 8),
        "sheet", "width", s_int (sheet, "width"), "height", s_int (sheet, "height"),
        "objects", objects, "count", s_int (result, "count"),
        "totals", "objects", s_int (tot, "objects"), "with_geometry", s_int (tot, "with_geometry"),
        "vertices", s_int (tot, "vertices"), "faces", s_int (tot, "faces"),
        "non_manifold_edges", s_int (tot, "non_manifold_edges"), "loose_parts", s_int (tot, "loose_parts"));
}

json_t *bmq_eyes_look (const bmq_eyes_t *eyes, const json_t *args)
{
    json_t *angles = json_object_get (args, "angles");
    if (angles && !json_is_null (angles)
        && (!json_is_integer (angles) || json_integer_value (angles) < 1 || json_integer_value (angles) > BMQ_EYES_MAX_ANGLES))
        return json_pack ("{s:s}", "error", "angles must be an integer in 1..4");
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL, json_pack ("{s:s, s:{}}", "command", "look", "args"));
    if (json_is_integer (angles)) json_object_set (json_object_get (req->body, "args"), "angles", angles);
    bmq_envelope_t *reply = NULL;
    char why[400];
    if (bmq_planner_ask (eyes->gateway, eyes->story, "look", &req, eyes->timeout_ms, eyes->cancelled, eyes->ctx, &reply,
                         why, sizeof why))
        return s_error ("look", why);
    json_t *answer;
    json_t *result = json_object_get (reply->body, "result");
    if (reply->type != BMQ_MSG_SCENE_REPLY) answer = s_refused ("look", reply);
    else if (!json_is_object (result)) answer = json_pack ("{s:s}", "error", "look: the executor's answer has no result");
    else {
        answer = s_look_stats (result);
        bool png = reply->blob_len >= 8 && !memcmp (reply->blob, "\x89PNG\r\n\x1a\n", 8);
        if (!png) json_object_set_new (answer, "picture", json_string ("Blender returned no picture; the numbers above are all"));
        else if (reply->blob_len > BMQ_EYES_MAX_PNG)
            json_object_set_new (answer, "picture", json_string ("the contact sheet was too large to send; ask for fewer angles"));
        else {
            size_t b64len = sodium_base64_ENCODED_LEN (reply->blob_len, sodium_base64_VARIANT_ORIGINAL);
            char *b64 = malloc (b64len);
            if (b64) {
                sodium_bin2base64 (b64, b64len, reply->blob, reply->blob_len, sodium_base64_VARIANT_ORIGINAL);
                json_object_set_new (answer, "_image", json_pack ("{s:s, s:s}", "mime_type", "image/png", "data", b64));
                json_object_set_new (answer, "picture", json_string ("the contact sheet is attached as an image: one view per "
                                                                      "angle, left to right, top to bottom, in the order of 'views'"));
            }
            free (b64);
        }
    }
    bmq_envelope_destroy (&reply);
    return answer;
}

void bmq_eyes_declare (json_t *decls)
{
    json_array_append_new (decls, json_pack ("{s:s, s:s, s:{s:s, s:{s:{s:s, s:[s, s, s], s:s}, s:{s:s, s:s}, s:{s:s, s:[s, s, s]}}, s:[s]}}",
        "name", "search_assets",
        "description", "Search an online asset library (Poly Haven: CC0 models, HDRIs, textures) for ids to use in "
                       "asset.import steps. Answers at most 12 matches: id, name, type, categories, tags.",
        "parameters", "type", "object", "properties",
        "source", "type", "string", "enum", "polyhaven", "sketchfab", "hyper3d", "description", "The library (polyhaven is served)",
        "query", "type", "string", "description", "Words to look for, e.g. wooden chair, sunset, brick",
        "type", "type", "string", "enum", "model", "hdri", "texture",
        "required", "source"));
    json_array_append_new (decls, json_pack ("{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}}}}",
        "name", "look",
        "description", "See the live scene: a contact sheet of renders from several sides (an image) and, per object, "
                       "vertices, faces, non-manifold edges, loose parts and world bounds.",
        "parameters", "type", "object", "properties", "angles", "type", "integer",
        "description", "How many views, 1..4 (default 4: front, side, top, perspective)"));
}
