/* assets_polyhaven — search and fetch against Poly Haven's public API. */
#include "assets_polyhaven.h"
#include "assets_check.h"
#include "assets_download.h"
#include "assets_options.h"
#include "bmq_assets_proto.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define S_MAX_ASSETS      50000     /* entries of /assets looked at */
#define S_MAX_LABELS      32        /* tags or categories kept per result */
#define S_MAX_LABEL_LEN   64
#define S_URL_MAX         2048

struct bmq_polyhaven_t {
    bmq_polyhaven_options_t opts;
    bmq_assets_cache_t     *cache;
};

/* One file to download. */
typedef struct {
    char     path[BMQ_ASSETS_PATH_MAX + 1];
    char     url[S_URL_MAX + 1];
    char     md5[33];
    uint64_t size;
    char     map[16];
} s_item_t;

typedef struct {
    s_item_t *items;
    size_t    n;
} s_list_t;

/* ---- options -------------------------------------------------------------- */

int bmq_polyhaven_options_from_config (bmq_polyhaven_options_t *o, const bmq_config_t *cfg, char *err, size_t errlen)
{
    memset (o, 0, sizeof *o);
    snprintf (o->base_url, sizeof o->base_url, "%s", bmq_config_str (cfg, "assets.polyhaven_base_url"));
    snprintf (o->download_hosts, sizeof o->download_hosts, "%s", bmq_config_str (cfg, "assets.polyhaven_download_hosts"));
    bmq_assets_shared_options_t shared;
    if (bmq_assets_shared_options_from_config (&shared, cfg, err, errlen)) return -1;
    snprintf (o->cache_dir, sizeof o->cache_dir, "%s", shared.cache_dir);
    o->max_download_bytes = shared.max_download_bytes;
    o->http = shared.http;
    if (!*o->base_url) { snprintf (err, errlen, "assets.polyhaven_base_url is empty"); return -1; }
    return 0;
}

bmq_polyhaven_t *bmq_polyhaven_new (const bmq_polyhaven_options_t *opts, char *err, size_t errlen)
{
    bmq_polyhaven_t *self = calloc (1, sizeof *self);
    if (!self) { snprintf (err, errlen, "out of memory"); return NULL; }
    self->opts = *opts;
    for (size_t n = strlen (self->opts.base_url); n && self->opts.base_url[n - 1] == '/'; n--) self->opts.base_url[n - 1] = 0;
    if (!self->opts.max_json_bytes) self->opts.max_json_bytes = 32u << 20;
    if (!self->opts.max_results) self->opts.max_results = 50;
    if (self->opts.max_results > 500) self->opts.max_results = 500;
    if (!self->opts.max_download_bytes) self->opts.max_download_bytes = 512ull << 20;
    self->cache = bmq_assets_cache_open (self->opts.cache_dir, err, errlen);
    if (!self->cache) { free (self); return NULL; }
    return self;
}

void bmq_polyhaven_destroy (bmq_polyhaven_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_assets_cache_close (&(*self_p)->cache);
    free (*self_p);
    *self_p = NULL;
}

bmq_assets_cache_t *bmq_polyhaven_cache (bmq_polyhaven_t *self)
{
    return self->cache;
}

/* ---- the API -------------------------------------------------------------- */

/* GET base_url + path as a JSON object (new reference); NULL with err. */
static json_t *s_api_get (bmq_polyhaven_t *self, const char *path, char *err, size_t errlen)
{
    char url[S_URL_MAX];
    snprintf (url, sizeof url, "%s%s", self->opts.base_url, path);
    bmq_assets_http_request_t req = {
        .url = url, .max_bytes = self->opts.max_json_bytes, .expect_type = "application/json", .what = "the Poly Haven API",
    };
    char shown[S_URL_MAX + 8];
    snprintf (shown, sizeof shown, "GET %s", path);
    return bmq_assets_http_json (&req, &self->opts.http, shown, NULL, err, errlen);
}

static const char *s_api_type (const char *type)
{
    if (!type || !*type) return "all";
    if (!strcmp (type, "hdri")) return "hdris";
    if (!strcmp (type, "texture")) return "textures";
    if (!strcmp (type, "model")) return "models";
    return NULL;
}

static const char *s_type_name (json_int_t t)
{
    return t == 0 ? "hdri" : t == 1 ? "texture" : t == 2 ? "model" : NULL;
}

/* ---- search --------------------------------------------------------------- */

static bool s_contains (const char *hay, const char *needle)
{
    return hay && strcasestr (hay, needle) != NULL;
}

/* Up to S_MAX_LABELS short strings of a list. */
static json_t *s_labels (json_t *list)
{
    json_t *out = json_array ();
    size_t i;
    json_t *v;
    json_array_foreach (list, i, v) {
        if (json_array_size (out) >= S_MAX_LABELS) break;
        if (json_is_string (v) && json_string_length (v) <= S_MAX_LABEL_LEN && strlen (json_string_value (v)) == json_string_length (v))
            json_array_append (out, v);
    }
    return out;
}

static int s_by_downloads (const void *a, const void *b)
{
    json_t *x = *(json_t * const *) a, *y = *(json_t * const *) b;
    json_int_t dx = json_integer_value (json_object_get (x, "download_count"));
    json_int_t dy = json_integer_value (json_object_get (y, "download_count"));
    if (dx != dy) return dx > dy ? -1 : 1;
    return strcmp (json_string_value (json_object_get (x, "id")), json_string_value (json_object_get (y, "id")));
}

json_t *bmq_polyhaven_search (bmq_polyhaven_t *self, const char *type, const char *query, char *err, size_t errlen)
{
    const char *t = s_api_type (type);
    if (!t) { snprintf (err, errlen, "asset type \"%.40s\" is not one of hdri, texture, model", type); return NULL; }
    if (query && strlen (query) > BMQ_POLYHAVEN_QUERY_MAX) { snprintf (err, errlen, "the search text is longer than %d bytes", BMQ_POLYHAVEN_QUERY_MAX); return NULL; }
    char path[64];
    snprintf (path, sizeof path, "/assets?t=%s", t);
    json_t *doc = s_api_get (self, path, err, errlen);
    if (!doc) return NULL;
    size_t cap = 0, n = 0, seen = 0;
    json_t **hits = NULL;
    const char *id;
    json_t *info;
    json_object_foreach (doc, id, info) {
        if (++seen > S_MAX_ASSETS) break;
        if (!bmq_assets_id_valid (id) || !json_is_object (info)) continue;
        json_t *name = json_object_get (info, "name");
        const char *nm = json_is_string (name) && json_string_length (name) <= 200 ? json_string_value (name) : id;
        const char *kind = s_type_name (json_is_integer (json_object_get (info, "type")) ? json_integer_value (json_object_get (info, "type")) : -1);
        if (!kind) continue;
        if (type && *type && strcmp (kind, type)) continue;
        json_t *tags = s_labels (json_object_get (info, "tags"));
        bool match = !query || !*query || s_contains (id, query) || s_contains (nm, query);
        size_t i;
        json_t *v;
        json_array_foreach (tags, i, v) match = match || s_contains (json_string_value (v), query);
        if (!match) { json_decref (tags); continue; }
        json_t *dc = json_object_get (info, "download_count");
        json_t *hit = json_pack ("{s:s, s:s, s:s, s:o, s:o, s:I}", "id", id, "name", nm, "type", kind,
                                 "categories", s_labels (json_object_get (info, "categories")), "tags", tags,
                                 "download_count", (json_int_t) (json_is_integer (dc) ? json_integer_value (dc) : 0));
        if (n == cap) {
            size_t c = cap ? cap * 2 : 64;
            json_t **grown = realloc (hits, c * sizeof *grown);
            if (!grown) { json_decref (hit); break; }
            hits = grown;
            cap = c;
        }
        hits[n++] = hit;
    }
    json_decref (doc);
    if (n) qsort (hits, n, sizeof *hits, s_by_downloads);
    json_t *out = json_array ();
    for (size_t i = 0; i < n; i++) {
        if (json_array_size (out) < self->opts.max_results) {
            json_object_del (hits[i], "download_count");
            json_array_append (out, hits[i]);
        }
        json_decref (hits[i]);
    }
    free (hits);
    return out;
}

/* ---- fetch: reading the file tree ---------------------------------------- */

/* Read one {url, md5?, size} leaf into it (path and map set by the caller). */
static int s_leaf (const json_t *leaf, const char *what, s_item_t *it, char *err, size_t errlen)
{
    json_t *url = json_object_get (leaf, "url"), *md5 = json_object_get (leaf, "md5"), *size = json_object_get (leaf, "size");
    if (!json_is_object (leaf) || !json_is_string (url) || json_string_length (url) > S_URL_MAX
        || strlen (json_string_value (url)) != json_string_length (url)) {
        snprintf (err, errlen, "%s: not a {url, md5, size} entry with a URL of at most %d bytes", what, S_URL_MAX);
        return -1;
    }
    if (!json_is_integer (size) || json_integer_value (size) < 0) {
        snprintf (err, errlen, "%s: no declared size (a non-negative integer is expected)", what);
        return -1;
    }
    it->md5[0] = 0;
    if (md5 && !json_is_null (md5)) {
        const char *m = json_string_value (md5);
        bool ok = m && strlen (m) == 32;
        for (int i = 0; ok && i < 32; i++) ok = isxdigit ((unsigned char) m[i]);
        if (!ok) { snprintf (err, errlen, "%s: md5 \"%.40s\" is not 32 hex digits", what, m ? m : "(not a string)"); return -1; }
        for (int i = 0; i < 32; i++) it->md5[i] = (char) tolower ((unsigned char) m[i]);
        it->md5[32] = 0;
    }
    snprintf (it->url, sizeof it->url, "%s", json_string_value (url));
    it->size = (uint64_t) json_integer_value (size);
    return 0;
}

static s_item_t *s_push (s_list_t *list, char *err, size_t errlen)
{
    if (list->n >= BMQ_ASSETS_MAX_FILES) { snprintf (err, errlen, "more than %d files in one asset: refused", BMQ_ASSETS_MAX_FILES); return NULL; }
    s_item_t *grown = realloc (list->items, (list->n + 1) * sizeof *grown);
    if (!grown) { snprintf (err, errlen, "out of memory"); return NULL; }
    list->items = grown;
    s_item_t *it = &list->items[list->n++];
    memset (it, 0, sizeof *it);
    return it;
}

/* tree[a][b][c] (any type: s_leaf says when it is not a file entry), or NULL. */
static json_t *s_at (const json_t *tree, const char *a, const char *b, const char *c)
{
    json_t *v = json_object_get (json_object_get (json_object_get (tree, a), b), c);
    return json_is_null (v) ? NULL : v;
}

/* The texture maps (their staged names and file-tree keys) come from proto/assets.json
 * (bmq_assets_proto.h), the declaration the add-on's asset_import.py is generated from too. */

static int s_collect (const json_t *tree, const char *id, const char *type, const char *res, const char *fmt,
                      s_list_t *list, char *main, size_t mainlen, char *err, size_t errlen)
{
    char what[512];
    if (!strcmp (type, "hdri")) {
        json_t *leaf = s_at (tree, "hdri", res, fmt);
        if (!leaf) { snprintf (err, errlen, "HDRI %s has no %s file at %s", id, fmt, res); return -1; }
        s_item_t *it = s_push (list, err, errlen);
        if (!it) return -1;
        snprintf (it->path, sizeof it->path, "%s_%s.%s", id, res, fmt);
        snprintf (what, sizeof what, "HDRI %s, %s %s", id, res, fmt);
        snprintf (main, mainlen, "%s", it->path);
        return s_leaf (leaf, what, it, err, errlen);
    }
    if (!strcmp (type, "texture")) {
        for (const bmq_asset_map_t *m = bmq_asset_maps; m->name; m++) {
            json_t *leaf = NULL;
            const char *key = NULL;
            for (int k = 0; !leaf && m->polyhaven[k]; k++) leaf = s_at (tree, key = m->polyhaven[k], res, fmt);
            if (!leaf) {
                if (m->required) { snprintf (err, errlen, "texture %s has no %s map at %s %s", id, m->name, res, fmt); return -1; }
                continue;
            }
            s_item_t *it = s_push (list, err, errlen);
            if (!it) return -1;
            snprintf (it->path, sizeof it->path, "%s_%s_%s.%s", id, m->name, res, fmt);
            snprintf (it->map, sizeof it->map, "%s", m->name);
            snprintf (what, sizeof what, "texture %s, map %s (%s) at %s %s", id, m->name, key, res, fmt);
            if (s_leaf (leaf, what, it, err, errlen)) return -1;
            if (m == bmq_asset_maps) snprintf (main, mainlen, "%s", it->path);
        }
        return 0;
    }
    json_t *leaf = s_at (tree, fmt, res, fmt);          /* model: gltf → 1k → gltf */
    if (!leaf) { snprintf (err, errlen, "model %s has no %s file at %s", id, fmt, res); return -1; }
    s_item_t *it = s_push (list, err, errlen);
    if (!it) return -1;
    snprintf (it->path, sizeof it->path, "%s_%s.%s", id, res, fmt);
    snprintf (main, mainlen, "%s", it->path);
    snprintf (what, sizeof what, "model %s, %s %s", id, res, fmt);
    if (s_leaf (leaf, what, it, err, errlen)) return -1;
    json_t *include = json_object_get (leaf, "include");
    if (include && !json_is_object (include)) { snprintf (err, errlen, "model %s: \"include\" is not an object of files", id); return -1; }
    const char *path;
    json_t *inc;
    json_object_foreach (include, path, inc) {
        char why[400];
        if (bmq_assets_check_path (path, strlen (path), why, sizeof why)) {
            snprintf (err, errlen, "model %s: %s: refused", id, why);
            return -1;
        }
        for (size_t i = 0; i < list->n; i++)
            if (!strcmp (list->items[i].path, path)) { snprintf (err, errlen, "model %s: include path \"%s\" is named twice", id, path); return -1; }
        s_item_t *f = s_push (list, err, errlen);
        if (!f) return -1;
        snprintf (f->path, sizeof f->path, "%s", path);
        snprintf (what, sizeof what, "model %s, include %s", id, path);
        if (s_leaf (inc, what, f, err, errlen)) return -1;
    }
    return 0;
}

/* ---- fetch ---------------------------------------------------------------- */

/* Does the file tree offer the asset at res in fmt (a texture: its required maps)? */
static bool s_offers (const json_t *tree, const char *type, const char *res, const char *fmt)
{
    if (!strcmp (type, "hdri")) return s_at (tree, "hdri", res, fmt) != NULL;
    if (!strcmp (type, "model")) return s_at (tree, fmt, res, fmt) != NULL;
    for (const bmq_asset_map_t *m = bmq_asset_maps; m->name; m++) {
        bool found = false;
        for (int k = 0; !found && m->polyhaven[k]; k++) found = s_at (tree, m->polyhaven[k], res, fmt) != NULL;
        if (m->required && !found) return false;
    }
    return true;
}

/* The cached bundle for key when its manifest and every file are there;
 * NULL with err "" when not cached, NULL with err set when the cache is bad. */
static bmq_asset_bundle_t *s_from_cache (bmq_polyhaven_t *self, const char *key, const char *id, const char *type,
                                         const char *res, const char *fmt, char *err, size_t errlen)
{
    json_t *doc = bmq_assets_cache_get_manifest (self->cache, key, err, errlen);
    if (!doc) return NULL;
    char why[512] = "";
    bmq_asset_bundle_t *b = bmq_asset_bundle_from_json (doc, why, sizeof why);
    json_decref (doc);
    if (!b) { snprintf (err, errlen, "cache for %s: %s", key, why); return NULL; }
    if (strcmp (b->source, "polyhaven") || strcmp (b->id, id) || strcmp (b->kind, type) || strcmp (b->resolution, res) || strcmp (b->format, fmt)) {
        snprintf (err, errlen, "cache for %s: its manifest names another asset (%s/%s/%s/%s/%s)", key, b->source, b->id, b->kind, b->resolution, b->format);
        bmq_asset_bundle_destroy (&b);
        return NULL;
    }
    for (size_t i = 0; i < b->nfiles; i++)
        if (!bmq_assets_cache_has (self->cache, b->files[i].sha256, b->files[i].size)) {
            bmq_asset_bundle_destroy (&b);       /* a file was removed: download again */
            err[0] = 0;
            return NULL;
        }
    b->from_cache = true;
    return b;
}

bmq_asset_bundle_t *bmq_polyhaven_fetch (bmq_polyhaven_t *self, const char *id, const char *type,
                                         const char *resolution, const char *format, char *err, size_t errlen)
{
    if (!bmq_assets_id_valid (id)) { snprintf (err, errlen, "asset id \"%.80s\" is not a Poly Haven id ([A-Za-z0-9_-], 1..64)", id ? id : ""); return NULL; }
    if (!type || (strcmp (type, "hdri") && strcmp (type, "texture") && strcmp (type, "model"))) {
        snprintf (err, errlen, "asset type \"%.40s\" is not one of hdri, texture, model", type ? type : "");
        return NULL;
    }
    const char *res = resolution;
    if (!res || (strcmp (res, "1k") && strcmp (res, "2k") && strcmp (res, "4k") && strcmp (res, "8k"))) {
        snprintf (err, errlen, "resolution \"%.40s\" is not one of 1k, 2k, 4k, 8k", res ? res : "");
        return NULL;
    }
    /* no format: the first of the type's formats (proto/assets.json's order: a texture jpg,
     * then png, then exr) that is cached, else that the asset's file tree offers */
    bool chosen = !(format && *format);
    const char *const *prefs = bmq_asset_formats (type);
    const char *fmt = chosen ? prefs[0] : format;
    if (!bmq_asset_format_ok (type, fmt)) {
        snprintf (err, errlen, "format \"%.40s\" is not one for a %s (%s)", fmt, type, bmq_asset_formats_text (type));
        return NULL;
    }
    char key[160];
    bmq_asset_bundle_t *b = NULL;
    const char *const given[] = { fmt, NULL };
    for (const char *const *f = chosen ? prefs : given; *f; f++) {
        snprintf (key, sizeof key, "polyhaven/%s/%s/%s/%s", id, type, res, *f);
        err[0] = 0;
        b = s_from_cache (self, key, id, type, res, *f, err, errlen);
        if (b || *err) return b;
    }

    char path[128];
    snprintf (path, sizeof path, "/files/%s", id);
    json_t *tree = s_api_get (self, path, err, errlen);
    if (!tree) return NULL;
    if (chosen) {
        const char *const *f = prefs;
        while (*f && !s_offers (tree, type, res, *f)) f++;
        if (!*f) {
            snprintf (err, errlen, "%s %s is offered in none of its formats at %s (%s)", type, id, res, bmq_asset_formats_text (type));
            json_decref (tree);
            return NULL;
        }
        fmt = *f;
    }
    snprintf (key, sizeof key, "polyhaven/%s/%s/%s/%s", id, type, res, fmt);
    s_list_t list = { 0 };
    char main[BMQ_ASSETS_PATH_MAX + 1] = "";
    int rc = s_collect (tree, id, type, res, fmt, &list, main, sizeof main, err, errlen);
    json_decref (tree);
    uint64_t total = 0;
    for (size_t i = 0; rc == 0 && i < list.n; i++) {
        char why[600];
        if (bmq_assets_check_url (list.items[i].url, self->opts.download_hosts, "assets.polyhaven_download_hosts", why, sizeof why)) {
            snprintf (err, errlen, "%s %s, file %s: %s", type, id, list.items[i].path, why);
            rc = -1;
        }
        total += list.items[i].size;
        if (list.items[i].size > self->opts.max_download_bytes) total = UINT64_MAX;
    }
    if (rc == 0 && total > self->opts.max_download_bytes) {
        snprintf (err, errlen, "%s %s at %s %s declares %s%llu bytes, over assets.max_download_mb (%llu bytes): refused before downloading",
                  type, id, res, fmt, total == UINT64_MAX ? "over " : "",
                  (unsigned long long) (total == UINT64_MAX ? self->opts.max_download_bytes : total),
                  (unsigned long long) self->opts.max_download_bytes);
        rc = -1;
    }
    if (rc == 0 && !(b = bmq_asset_bundle_new ())) { snprintf (err, errlen, "out of memory"); rc = -1; }
    if (b) {
        snprintf (b->source, sizeof b->source, "polyhaven");
        snprintf (b->id, sizeof b->id, "%s", id);
        snprintf (b->kind, sizeof b->kind, "%s", type);
        snprintf (b->resolution, sizeof b->resolution, "%s", res);
        snprintf (b->format, sizeof b->format, "%s", fmt);
        snprintf (b->main, sizeof b->main, "%s", main);
    }
    uint64_t used = 0;
    for (size_t i = 0; rc == 0 && i < list.n; i++) {
        s_item_t *it = &list.items[i];
        bmq_assets_download_t d = { .url = it->url, .label = it->path, .md5 = it->md5, .size = it->size,
                                    .budget = self->opts.max_download_bytes - used };
        char sha[65];
        rc = bmq_assets_download (self->cache, &self->opts.http, &d, sha, err, errlen);
        if (rc == 0) rc = bmq_asset_bundle_add (b, it->path, sha, it->size, it->map, err, errlen);
        used += it->size;
    }
    free (list.items);
    if (rc == 0) {
        json_t *doc = bmq_asset_bundle_to_json (b);
        rc = bmq_assets_cache_put_manifest (self->cache, key, doc, err, errlen);
        json_decref (doc);
    }
    if (rc) bmq_asset_bundle_destroy (&b);
    return b;
}
