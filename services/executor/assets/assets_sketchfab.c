/* assets_sketchfab — search and fetch against Sketchfab's Data API v3. */
#include "assets_sketchfab.h"
#include "assets_check.h"
#include "assets_download.h"
#include "assets_options.h"
#include "assets_zip.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_URL_MAX        2048
#define S_MAX_PAGES      8
#define S_PAGE_MAX       24         /* Sketchfab's largest count per page */
#define S_TEXT_MAX       200
#define S_AS_PUBLISHED   "asis"     /* the cache record's resolution (see the header) */

struct bmq_sketchfab_t {
    bmq_sketchfab_options_t opts;
    bmq_assets_cache_t     *cache;
};

bool bmq_sketchfab_uid_valid (const char *text)
{
    size_t n = 0;
    for (; text && text[n]; n++)
        if (n >= 32 || !((text[n] >= '0' && text[n] <= '9') || (text[n] >= 'a' && text[n] <= 'f'))) return false;
    return n == 32;
}

static bool s_format_ok (const char *fmt)
{
    return !*fmt || !strcmp (fmt, "glb") || !strcmp (fmt, "gltf");
}

/* ---- options -------------------------------------------------------------- */

/* A token fits one header line: printable, no space, bounded. */
static int s_token_ok (const char *token, char *err, size_t errlen)
{
    if (strlen (token) > BMQ_SKETCHFAB_TOKEN_MAX) {
        snprintf (err, errlen, "assets.sketchfab_api_token is longer than %d bytes", BMQ_SKETCHFAB_TOKEN_MAX);
        return -1;
    }
    for (const char *p = token; *p; p++)
        if ((unsigned char) *p <= ' ' || *p == 0x7f) {
            snprintf (err, errlen, "assets.sketchfab_api_token holds a space or control character");
            return -1;
        }
    return 0;
}

int bmq_sketchfab_options_from_config (bmq_sketchfab_options_t *o, const bmq_config_t *cfg, char *err, size_t errlen)
{
    memset (o, 0, sizeof *o);
    bmq_assets_shared_options_t shared;
    if (bmq_assets_shared_options_from_config (&shared, cfg, err, errlen)) return -1;
    memcpy (o->cache_dir, shared.cache_dir, sizeof o->cache_dir);
    o->max_download_bytes = shared.max_download_bytes;
    o->http = shared.http;
    snprintf (o->base_url, sizeof o->base_url, "%s", bmq_config_str (cfg, "assets.sketchfab_base_url"));
    snprintf (o->download_hosts, sizeof o->download_hosts, "%s", bmq_config_str (cfg, "assets.sketchfab_download_hosts"));
    const char *fmt = bmq_config_str (cfg, "assets.sketchfab_format");
    if (strlen (fmt) >= sizeof o->format || !s_format_ok (fmt)) {
        snprintf (err, errlen, "assets.sketchfab_format must be glb, gltf or empty, not \"%.40s\"", fmt);
        return -1;
    }
    snprintf (o->format, sizeof o->format, "%s", fmt);
    const char *token = bmq_config_str (cfg, "assets.sketchfab_api_token");
    if (!*token && getenv ("SKETCHFAB_API_TOKEN")) token = getenv ("SKETCHFAB_API_TOKEN");
    if (s_token_ok (token, err, errlen)) return -1;
    snprintf (o->api_token, sizeof o->api_token, "%s", token);
    if (!*o->base_url) { snprintf (err, errlen, "assets.sketchfab_base_url is empty"); return -1; }
    return 0;
}

bmq_sketchfab_t *bmq_sketchfab_new (const bmq_sketchfab_options_t *opts, char *err, size_t errlen)
{
    if (s_token_ok (opts->api_token, err, errlen)) return NULL;
    bmq_sketchfab_t *self = calloc (1, sizeof *self);
    if (!self) { snprintf (err, errlen, "out of memory"); return NULL; }
    self->opts = *opts;
    for (size_t n = strlen (self->opts.base_url); n && self->opts.base_url[n - 1] == '/'; n--) self->opts.base_url[n - 1] = 0;
    if (!self->opts.max_json_bytes) self->opts.max_json_bytes = 8u << 20;
    if (!self->opts.max_results) self->opts.max_results = S_PAGE_MAX;
    if (self->opts.max_results > 200) self->opts.max_results = 200;
    if (!self->opts.max_download_bytes) self->opts.max_download_bytes = 512ull << 20;
    self->cache = bmq_assets_cache_open (self->opts.cache_dir, err, errlen);
    if (!self->cache) { free (self); return NULL; }
    return self;
}

void bmq_sketchfab_destroy (bmq_sketchfab_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_assets_cache_close (&(*self_p)->cache);
    free (*self_p);
    *self_p = NULL;
}

bmq_assets_cache_t *bmq_sketchfab_cache (bmq_sketchfab_t *self)
{
    return self->cache;
}

/* ---- the API -------------------------------------------------------------- */

/* GET url (under base_url) as a JSON object (new reference); the token is
 * sent when with_token. NULL with err; *status gets the HTTP status. */
static json_t *s_api_get (bmq_sketchfab_t *self, const char *url, bool with_token, int *status, char *err, size_t errlen)
{
    char auth[BMQ_SKETCHFAB_TOKEN_MAX + 32];
    snprintf (auth, sizeof auth, "Authorization: Token %s", self->opts.api_token);
    const char *const headers[] = { auth, NULL };
    bmq_assets_http_request_t req = {
        .url = url, .max_bytes = self->opts.max_json_bytes, .expect_type = "application/json", .what = "the Sketchfab API",
        .headers = with_token ? headers : NULL,
    };
    char shown[700];
    snprintf (shown, sizeof shown, "GET %.600s", url + strlen (self->opts.base_url));
    return bmq_assets_http_json (&req, &self->opts.http, shown, status, err, errlen);
}

/* ---- search --------------------------------------------------------------- */

/* A short printable string member, or NULL. */
static const char *s_text (const json_t *v)
{
    if (!json_is_string (v) || json_string_length (v) > S_TEXT_MAX || strlen (json_string_value (v)) != json_string_length (v))
        return NULL;
    return json_string_value (v);
}

static json_t *s_hit (const json_t *r)
{
    const char *uid = json_string_value (json_object_get (r, "uid"));
    if (!bmq_sketchfab_uid_valid (uid)) return NULL;
    const char *name = s_text (json_object_get (r, "name"));
    const char *author = s_text (json_object_get (json_object_get (r, "user"), "username"));
    const json_t *lic = json_object_get (r, "license");
    const char *license = json_is_object (lic) ? s_text (json_object_get (lic, "label")) : s_text (lic);
    json_t *faces = json_object_get (r, "faceCount");
    const char *url = s_text (json_object_get (r, "viewerUrl"));
    json_t *hit = json_pack ("{s:s, s:s, s:s, s:s, s:s}", "id", uid, "name", name ? name : uid, "type", "model",
                             "author", author ? author : "", "license", license ? license : "");
    if (json_is_integer (faces) && json_integer_value (faces) >= 0) json_object_set (hit, "faces", faces);
    if (url && !strncmp (url, "https://", 8)) json_object_set_new (hit, "url", json_string (url));
    return hit;
}

json_t *bmq_sketchfab_search (bmq_sketchfab_t *self, const char *query, char *err, size_t errlen)
{
    if (query && strlen (query) > BMQ_SKETCHFAB_QUERY_MAX) {
        snprintf (err, errlen, "the search text is longer than %d bytes", BMQ_SKETCHFAB_QUERY_MAX);
        return NULL;
    }
    char *q = curl_easy_escape (NULL, query ? query : "", 0);
    if (!q) { snprintf (err, errlen, "out of memory"); return NULL; }
    size_t count = self->opts.max_results < S_PAGE_MAX ? self->opts.max_results : S_PAGE_MAX;
    char url[S_URL_MAX + 1], prefix[600];
    snprintf (url, sizeof url, "%s/search?type=models&downloadable=true&count=%zu%s%s", self->opts.base_url, count,
              *q ? "&q=" : "", q);
    curl_free (q);
    snprintf (prefix, sizeof prefix, "%s/search?", self->opts.base_url);
    json_t *out = json_array ();
    for (int page = 0; page < S_MAX_PAGES && json_array_size (out) < self->opts.max_results; page++) {
        int status;
        json_t *doc = s_api_get (self, url, false, &status, err, errlen);
        if (!doc) { json_decref (out); return NULL; }
        json_t *results = json_object_get (doc, "results");
        if (!json_is_array (results)) {
            snprintf (err, errlen, "the Sketchfab API's search answer has no \"results\" list");
            json_decref (doc);
            json_decref (out);
            return NULL;
        }
        size_t i;
        json_t *r;
        json_array_foreach (results, i, r) {
            if (json_array_size (out) >= self->opts.max_results) break;
            json_t *hit = s_hit (r);
            if (hit) json_array_append_new (out, hit);
        }
        const char *next = json_string_value (json_object_get (doc, "next"));
        bool more = next && strlen (next) <= S_URL_MAX && !strncmp (next, prefix, strlen (prefix)) && json_array_size (results) > 0;
        if (more) snprintf (url, sizeof url, "%s", next);
        json_decref (doc);
        if (!more) break;
    }
    return out;
}

/* ---- fetch ---------------------------------------------------------------- */

/* The cached bundle for key, as for Poly Haven; NULL with err "" when not cached.
 * (The key names the format asked for; a gltf archive may hold a .glb, so
 * the bundle's own format may be the other one.) */
static bmq_asset_bundle_t *s_from_cache (bmq_sketchfab_t *self, const char *key, const char *uid, char *err, size_t errlen)
{
    json_t *doc = bmq_assets_cache_get_manifest (self->cache, key, err, errlen);
    if (!doc) return NULL;
    char why[512] = "";
    bmq_asset_bundle_t *b = bmq_asset_bundle_from_json (doc, why, sizeof why);
    json_decref (doc);
    if (!b) { snprintf (err, errlen, "cache for %s: %s", key, why); return NULL; }
    if (strcmp (b->source, "sketchfab") || strcmp (b->id, uid) || strcmp (b->kind, "model")
        || strcmp (b->resolution, S_AS_PUBLISHED) || (strcmp (b->format, "glb") && strcmp (b->format, "gltf"))) {
        snprintf (err, errlen, "cache for %s: its manifest names another asset (%s/%s/%s/%s/%s)", key, b->source, b->id,
                  b->kind, b->resolution, b->format);
        bmq_asset_bundle_destroy (&b);
        return NULL;
    }
    for (size_t i = 0; i < b->nfiles; i++)
        if (!bmq_assets_cache_has (self->cache, b->files[i].sha256, b->files[i].size)) {
            bmq_asset_bundle_destroy (&b);       /* a file was removed: download again */
            err[0] = 0;
            return NULL;
        }
    b->resolution[0] = 0;
    b->from_cache = true;
    return b;
}

/* The {url, size} of the chosen form in the download answer. */
static int s_pick (const json_t *doc, const char *uid, const char *want, char *fmt_out, char *url, size_t urllen,
                   uint64_t *size, char *err, size_t errlen)
{
    const char *fmt = *want ? want : json_is_object (json_object_get (doc, "glb")) ? "glb" : "gltf";
    const json_t *form = json_object_get (doc, fmt);
    if (!json_is_object (form)) {
        snprintf (err, errlen, "model %s: Sketchfab offers no %s download%s", uid, fmt,
                  *want ? "" : " (neither glb nor gltf)");
        return -1;
    }
    json_t *u = json_object_get (form, "url"), *s = json_object_get (form, "size");
    if (!json_is_string (u) || json_string_length (u) >= urllen || strlen (json_string_value (u)) != json_string_length (u)) {
        snprintf (err, errlen, "model %s: the %s download has no URL of at most %zu bytes", uid, fmt, urllen - 1);
        return -1;
    }
    if (!json_is_integer (s) || json_integer_value (s) <= 0) {
        snprintf (err, errlen, "model %s: the %s download declares no size (a positive integer is expected)", uid, fmt);
        return -1;
    }
    snprintf (fmt_out, 8, "%s", fmt);
    snprintf (url, urllen, "%s", json_string_value (u));
    *size = (uint64_t) json_integer_value (s);
    return 0;
}

bmq_asset_bundle_t *bmq_sketchfab_fetch (bmq_sketchfab_t *self, const char *uid, const char *format,
                                         char *err, size_t errlen)
{
    if (!bmq_sketchfab_uid_valid (uid)) {
        snprintf (err, errlen, "model id \"%.80s\" is not a Sketchfab uid (32 lower-case hex digits)", uid ? uid : "");
        return NULL;
    }
    const char *want = format && *format ? format : self->opts.format;
    if (strlen (want) > 4 || !s_format_ok (want)) {
        snprintf (err, errlen, "format \"%.40s\" is not one for a Sketchfab model (glb, gltf)", want);
        return NULL;
    }
    char key[160];
    snprintf (key, sizeof key, "sketchfab/%s/model/%s", uid, *want ? want : "auto");
    err[0] = 0;
    bmq_asset_bundle_t *b = s_from_cache (self, key, uid, err, errlen);
    if (b || *err) return b;
    if (!*self->opts.api_token) {
        snprintf (err, errlen, "model %s: Sketchfab needs assets.sketchfab_api_token or SKETCHFAB_API_TOKEN to download", uid);
        return NULL;
    }

    char url[S_URL_MAX + 1];
    snprintf (url, sizeof url, "%s/models/%s/download", self->opts.base_url, uid);
    int status;
    json_t *doc = s_api_get (self, url, true, &status, err, errlen);
    if (!doc && (status == 401 || status == 403)) {
        char why[700];
        snprintf (why, sizeof why, "%s", err);
        snprintf (err, errlen, "model %s: Sketchfab refused the API token (HTTP %d): check assets.sketchfab_api_token or "
                  "SKETCHFAB_API_TOKEN (%s)", uid, status, why);
    }
    if (!doc) return NULL;
    char fmt[8] = "", dl[S_URL_MAX + 1];
    uint64_t size = 0;
    int rc = s_pick (doc, uid, want, fmt, dl, sizeof dl, &size, err, errlen);
    json_decref (doc);
    if (rc) return NULL;
    char why[700];
    if (bmq_assets_check_url (dl, self->opts.download_hosts, "assets.sketchfab_download_hosts", why, sizeof why)) {
        snprintf (err, errlen, "model %s, %s download: %s", uid, fmt, why);
        return NULL;
    }
    if (size > self->opts.max_download_bytes) {
        snprintf (err, errlen, "model %s: its %s download declares %llu bytes, over assets.max_download_mb (%llu bytes): "
                  "refused before downloading", uid, fmt, (unsigned long long) size, (unsigned long long) self->opts.max_download_bytes);
        return NULL;
    }
    char label[64], sha[65];
    snprintf (label, sizeof label, "%s.%s", uid, !strcmp (fmt, "glb") ? "glb" : "zip");
    bmq_assets_download_t d = { .url = dl, .label = label, .md5 = NULL, .size = size, .budget = self->opts.max_download_bytes };
    if (bmq_assets_download (self->cache, &self->opts.http, &d, sha, err, errlen)) return NULL;
    if (!(b = bmq_asset_bundle_new ())) { snprintf (err, errlen, "out of memory"); return NULL; }
    snprintf (b->source, sizeof b->source, "sketchfab");
    snprintf (b->id, sizeof b->id, "%s", uid);
    snprintf (b->kind, sizeof b->kind, "model");
    snprintf (b->resolution, sizeof b->resolution, S_AS_PUBLISHED);
    if (!strcmp (fmt, "glb")) {
        snprintf (b->format, sizeof b->format, "glb");
        snprintf (b->main, sizeof b->main, "scene.glb");
        rc = bmq_asset_bundle_add (b, "scene.glb", sha, size, "", err, errlen);
    }
    else {
        rc = bmq_assets_zip_unpack (self->cache, sha, size, self->opts.max_download_bytes, uid, b, err, errlen);
        size_t n = strlen (b->main);
        snprintf (b->format, sizeof b->format, "%s", n > 4 && !strcmp (b->main + n - 4, ".glb") ? "glb" : "gltf");
    }
    if (rc == 0) {
        json_t *rec = bmq_asset_bundle_to_json (b);
        rc = bmq_assets_cache_put_manifest (self->cache, key, rec, err, errlen);
        json_decref (rec);
    }
    if (rc) bmq_asset_bundle_destroy (&b);
    else b->resolution[0] = 0;
    return b;
}
