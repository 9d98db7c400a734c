/* assets_bundle — an import's files, its manifest and its link blob. */
#include "assets_bundle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bmq_asset_bundle_t *bmq_asset_bundle_new (void)
{
    return calloc (1, sizeof (bmq_asset_bundle_t));
}

void bmq_asset_bundle_destroy (bmq_asset_bundle_t **self_p)
{
    if (!self_p || !*self_p) return;
    free ((*self_p)->files);
    free (*self_p);
    *self_p = NULL;
}

static bool s_word (const char *text, size_t max)
{
    size_t n = 0;
    for (; text && text[n]; n++) {
        char c = text[n];
        if (n >= max || !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    }
    return n > 0;
}

int bmq_asset_bundle_add (bmq_asset_bundle_t *self, const char *path, const char *sha256, uint64_t size,
                          const char *map, char *err, size_t errlen)
{
    if (bmq_assets_check_path (path, path ? strlen (path) : 0, err, errlen)) return -1;
    if (!bmq_assets_sha256_hex_valid (sha256)) { snprintf (err, errlen, "file %s: \"%.80s\" is not a sha256", path, sha256 ? sha256 : ""); return -1; }
    if (map && *map && !s_word (map, sizeof self->files[0].map - 1)) { snprintf (err, errlen, "file %s: bad map name", path); return -1; }
    if (size > BMQ_ASSETS_FILE_MAX) { snprintf (err, errlen, "file %s: %llu bytes is more than any asset file may hold", path, (unsigned long long) size); return -1; }
    if (self->nfiles >= BMQ_ASSETS_MAX_FILES) { snprintf (err, errlen, "more than %d files in one asset", BMQ_ASSETS_MAX_FILES); return -1; }
    for (size_t i = 0; i < self->nfiles; i++)
        if (!strcmp (self->files[i].path, path)) { snprintf (err, errlen, "file %s is named twice", path); return -1; }
    bmq_asset_file_t *grown = realloc (self->files, (self->nfiles + 1) * sizeof *grown);
    if (!grown) { snprintf (err, errlen, "out of memory"); return -1; }
    self->files = grown;
    bmq_asset_file_t *f = &self->files[self->nfiles++];
    memset (f, 0, sizeof *f);
    snprintf (f->path, sizeof f->path, "%s", path);
    snprintf (f->sha256, sizeof f->sha256, "%s", sha256);
    snprintf (f->map, sizeof f->map, "%s", map ? map : "");
    f->size = size;
    return 0;
}

uint64_t bmq_asset_bundle_total (const bmq_asset_bundle_t *self)
{
    uint64_t t = 0;
    for (size_t i = 0; i < self->nfiles; i++) t += self->files[i].size;
    return t;
}

json_t *bmq_asset_bundle_manifest (const bmq_asset_bundle_t *self)
{
    json_t *files = json_array ();
    for (size_t i = 0; i < self->nfiles; i++) {
        const bmq_asset_file_t *f = &self->files[i];
        json_t *o = json_pack ("{s:s, s:I, s:s}", "path", f->path, "size", (json_int_t) f->size, "sha256", f->sha256);
        if (*f->map) json_object_set_new (o, "map", json_string (f->map));
        json_array_append_new (files, o);
    }
    return json_pack ("{s:s, s:s, s:s, s:o}", "main", self->main, "kind", self->kind, "format", self->format, "files", files);
}

json_t *bmq_asset_bundle_to_json (const bmq_asset_bundle_t *self)
{
    json_t *doc = bmq_asset_bundle_manifest (self);
    json_object_set_new (doc, "source", json_string (self->source));
    json_object_set_new (doc, "id", json_string (self->id));
    json_object_set_new (doc, "resolution", json_string (self->resolution));
    return doc;
}

/* A string member of at most max bytes copied into out; -1 with err. */
static int s_field (const json_t *doc, const char *name, char *out, size_t outlen, char *err, size_t errlen)
{
    json_t *v = json_object_get (doc, name);
    if (!json_is_string (v) || json_string_length (v) == 0 || json_string_length (v) >= outlen
        || strlen (json_string_value (v)) != json_string_length (v)) {
        snprintf (err, errlen, "the cached manifest's \"%s\" is missing or not a string of 1..%zu bytes", name, outlen - 1);
        return -1;
    }
    memcpy (out, json_string_value (v), json_string_length (v) + 1);
    return 0;
}

bmq_asset_bundle_t *bmq_asset_bundle_from_json (const json_t *doc, char *err, size_t errlen)
{
    bmq_asset_bundle_t *self = bmq_asset_bundle_new ();
    if (!self) { snprintf (err, errlen, "out of memory"); return NULL; }
    json_t *files = json_object_get (doc, "files");
    bool ok = s_field (doc, "source", self->source, sizeof self->source, err, errlen) == 0
           && s_field (doc, "id", self->id, sizeof self->id, err, errlen) == 0
           && s_field (doc, "kind", self->kind, sizeof self->kind, err, errlen) == 0
           && s_field (doc, "resolution", self->resolution, sizeof self->resolution, err, errlen) == 0
           && s_field (doc, "format", self->format, sizeof self->format, err, errlen) == 0
           && s_field (doc, "main", self->main, sizeof self->main, err, errlen) == 0;
    if (ok && (!json_is_array (files) || json_array_size (files) == 0 || json_array_size (files) > BMQ_ASSETS_MAX_FILES)) {
        snprintf (err, errlen, "the cached manifest's files are not a list of 1..%d", BMQ_ASSETS_MAX_FILES);
        ok = false;
    }
    size_t i;
    json_t *f;
    json_array_foreach (files, i, f) {
        if (!ok) break;
        json_t *path = json_object_get (f, "path"), *sha = json_object_get (f, "sha256"), *size = json_object_get (f, "size");
        json_t *map = json_object_get (f, "map");
        if (!json_is_string (path) || !json_is_string (sha) || !json_is_integer (size) || json_integer_value (size) < 0
            || (map && !json_is_string (map))) {
            snprintf (err, errlen, "the cached manifest's file %zu is not {path, sha256, size, map?}", i);
            ok = false;
            break;
        }
        if (bmq_assets_check_path (json_string_value (path), json_string_length (path), err, errlen)) { ok = false; break; }
        ok = bmq_asset_bundle_add (self, json_string_value (path), json_string_value (sha), (uint64_t) json_integer_value (size),
                                   map ? json_string_value (map) : "", err, errlen) == 0;
    }
    bool has_main = false;
    for (size_t k = 0; ok && k < self->nfiles; k++) has_main |= !strcmp (self->files[k].path, self->main);
    if (ok && !has_main) { snprintf (err, errlen, "the cached manifest's main file %s is not among its files", self->main); ok = false; }
    if (!ok) bmq_asset_bundle_destroy (&self);
    return self;
}

struct bmq_asset_bundle_reader_t {
    const bmq_asset_bundle_t  *bundle;
    bmq_assets_cache_t        *cache;
    bmq_assets_cache_reader_t *file;        /* the file being read, or NULL between files */
    size_t                     next;        /* the index of the file after it */
    uint64_t                   offset;      /* bytes of the blob handed out */
};

bmq_asset_bundle_reader_t *bmq_asset_bundle_reader (const bmq_asset_bundle_t *self, bmq_assets_cache_t *cache)
{
    bmq_asset_bundle_reader_t *r = calloc (1, sizeof *r);
    if (!r) return NULL;
    r->bundle = self;
    r->cache = cache;
    return r;
}

uint64_t bmq_asset_bundle_reader_offset (const bmq_asset_bundle_reader_t *r)
{
    return r->offset;
}

int bmq_asset_bundle_reader_next (bmq_asset_bundle_reader_t *r, uint8_t *dst, size_t max, size_t *got,
                                  char *err, size_t errlen)
{
    *got = 0;
    while (*got < max) {
        if (!r->file) {
            if (r->next >= r->bundle->nfiles) break;
            const bmq_asset_file_t *f = &r->bundle->files[r->next];
            char why[600];
            r->file = bmq_assets_cache_reader (r->cache, f->sha256, f->size, why, sizeof why);
            if (!r->file) { snprintf (err, errlen, "file %s of asset %s: %s", f->path, r->bundle->id, why); return -1; }
            r->next++;
        }
        uint64_t left = bmq_assets_cache_reader_left (r->file);
        size_t n = left < max - *got ? (size_t) left : max - *got;
        char why[600];
        if (bmq_assets_cache_reader_read (r->file, dst + *got, n, why, sizeof why)) {
            snprintf (err, errlen, "file %s of asset %s: %s", r->bundle->files[r->next - 1].path, r->bundle->id, why);
            return -1;
        }
        *got += n;
        r->offset += n;
        if (!bmq_assets_cache_reader_left (r->file)) bmq_assets_cache_reader_close (&r->file);
    }
    return 0;
}

void bmq_asset_bundle_reader_close (bmq_asset_bundle_reader_t **r_p)
{
    bmq_asset_bundle_reader_t *r = *r_p;
    if (!r) return;
    bmq_assets_cache_reader_close (&r->file);
    free (r);
    *r_p = NULL;
}

int bmq_asset_bundle_blob (const bmq_asset_bundle_t *self, bmq_assets_cache_t *cache, uint64_t max_bytes,
                           uint8_t **blob, size_t *len, json_t **manifest, char *err, size_t errlen)
{
    *blob = NULL;
    *len = 0;
    *manifest = NULL;
    uint64_t total = bmq_asset_bundle_total (self);
    if (total > max_bytes || total > SIZE_MAX - 1) {
        snprintf (err, errlen, "asset %s is %llu bytes, over the %llu-byte cap", self->id, (unsigned long long) total, (unsigned long long) max_bytes);
        return -1;
    }
    uint8_t *buf = malloc (total ? (size_t) total : 1);
    bmq_asset_bundle_reader_t *r = buf ? bmq_asset_bundle_reader (self, cache) : NULL;
    if (!r) { snprintf (err, errlen, "out of memory for %llu bytes", (unsigned long long) total); free (buf); return -1; }
    size_t got = 0;
    int rc = bmq_asset_bundle_reader_next (r, buf, (size_t) total, &got, err, errlen);
    bmq_asset_bundle_reader_close (&r);
    if (rc) { free (buf); return -1; }
    *blob = buf;
    *len = got;
    *manifest = bmq_asset_bundle_manifest (self);
    return 0;
}
