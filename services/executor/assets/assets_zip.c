/* assets_zip — a cached archive into cache entries, checked (libzip). */
#include "assets_zip.h"
#include "assets_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <zip.h>

#define S_CHUNK 65536

/* Whether name ends in .gltf or .glb; its depth (slashes) in *depth. */
static bool s_is_model (const char *name, int *depth)
{
    size_t n = strlen (name);
    *depth = 0;
    for (const char *p = name; *p; p++) *depth += *p == '/';
    return (n > 5 && !strcasecmp (name + n - 5, ".gltf")) || (n > 4 && !strcasecmp (name + n - 4, ".glb"));
}

static const char *s_zip_why (zip_error_t *ze)
{
    return zip_error_code_zip (ze) == ZIP_ER_CRC ? "CRC mismatch (the entry's bytes are corrupt)" : zip_error_strerror (ze);
}

/* First pass: every entry checked, declared sizes summed, the main file
 * chosen. keep[i] says whether entry i is a file to unpack. */
static int s_plan (zip_t *za, zip_int64_t n, uint64_t budget, const char *label, bool *keep,
                   char *main, size_t mainlen, char *err, size_t errlen)
{
    uint64_t total = 0;
    int best = -1, nbest = 0;
    char other[BMQ_ASSETS_PATH_MAX + 1] = "";
    for (zip_int64_t i = 0; i < n; i++) {
        zip_stat_t st;
        zip_stat_init (&st);
        if (zip_stat_index (za, (zip_uint64_t) i, 0, &st) || !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE)) {
            snprintf (err, errlen, "model %s: archive entry %lld cannot be read: %s", label, (long long) i, zip_strerror (za));
            return -1;
        }
        size_t len = strlen (st.name);
        if (len > 0 && st.name[len - 1] == '/') continue;               /* a directory */
        char why[400];
        if (bmq_assets_check_path (st.name, len, why, sizeof why)) {
            snprintf (err, errlen, "model %s: archive entry \"%.200s\": %s: refused", label, st.name, why);
            return -1;
        }
        zip_uint8_t opsys;
        zip_uint32_t attr;
        if (zip_file_get_external_attributes (za, (zip_uint64_t) i, 0, &opsys, &attr) == 0 && opsys == ZIP_OPSYS_UNIX) {
            mode_t type = (mode_t) (attr >> 16) & S_IFMT;
            if (type == S_IFLNK) {
                snprintf (err, errlen, "model %s: archive entry %s is a symlink: refused (regular files only)", label, st.name);
                return -1;
            }
            if (type && type != S_IFREG && type != S_IFDIR) {
                snprintf (err, errlen, "model %s: archive entry %s is a special file (mode %o): refused (regular files only)",
                          label, st.name, (unsigned) type);
                return -1;
            }
            if (type == S_IFDIR) continue;
        }
        if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
            snprintf (err, errlen, "model %s: archive entry %s is encrypted: refused (plain entries only)", label, st.name);
            return -1;
        }
        if (st.size > budget || total + st.size > budget) {
            snprintf (err, errlen, "model %s: archive entry %s declares %llu bytes uncompressed, over the %llu left under "
                      "assets.max_download_mb: refused before inflating", label, st.name, (unsigned long long) st.size,
                      (unsigned long long) (budget - total));
            return -1;
        }
        total += st.size;
        keep[i] = true;
        int depth;
        if (s_is_model (st.name, &depth)) {
            if (best < 0 || depth < best) { best = depth; nbest = 1; snprintf (main, mainlen, "%s", st.name); }
            else if (depth == best && ++nbest == 2) snprintf (other, sizeof other, "%s", st.name);
        }
    }
    if (best < 0) {
        snprintf (err, errlen, "model %s: the archive holds no .gltf or .glb file: expected one to import", label);
        return -1;
    }
    if (nbest > 1) {
        snprintf (err, errlen, "model %s: the archive holds %d .gltf/.glb files at the same depth (%s, %s): expected one",
                  label, nbest, main, other);
        return -1;
    }
    return 0;
}

/* Inflate entry i into the cache, stopping past its declared size. */
static int s_inflate (zip_t *za, zip_int64_t i, const char *label, bmq_assets_cache_t *cache,
                      char sha[65], uint64_t *size, char *err, size_t errlen)
{
    zip_stat_t st;
    zip_stat_init (&st);
    zip_stat_index (za, (zip_uint64_t) i, 0, &st);
    zip_file_t *zf = zip_fopen_index (za, (zip_uint64_t) i, 0);
    if (!zf) {
        snprintf (err, errlen, "model %s: archive entry %s cannot be opened: %s", label, st.name, zip_strerror (za));
        return -1;
    }
    char why[512];
    bmq_assets_cache_writer_t *w = bmq_assets_cache_begin (cache, why, sizeof why);
    if (!w) {
        snprintf (err, errlen, "model %s: archive entry %s: %s", label, st.name, why);
        zip_fclose (zf);
        return -1;
    }
    char *buf = malloc (S_CHUNK);
    uint64_t got = 0;
    int rc = 0;
    if (!buf) { snprintf (err, errlen, "out of memory"); rc = -1; }
    while (rc == 0) {
        uint64_t want = st.size - got + 1;                  /* one byte more than declared shows a lie */
        zip_int64_t r = zip_fread (zf, buf, want < S_CHUNK ? want : S_CHUNK);
        if (r < 0) {
            snprintf (err, errlen, "model %s: archive entry %s: %s", label, st.name, s_zip_why (zip_file_get_error (zf)));
            rc = -1;
            break;
        }
        if (r == 0) break;
        if ((uint64_t) r > st.size - got) {
            snprintf (err, errlen, "model %s: archive entry %s inflates past the %llu bytes it declared: stopped (a zip bomb?)",
                      label, st.name, (unsigned long long) st.size);
            rc = -1;
            break;
        }
        if (bmq_assets_cache_write (w, buf, (size_t) r, why, sizeof why)) {
            snprintf (err, errlen, "model %s: archive entry %s: %s", label, st.name, why);
            rc = -1;
            break;
        }
        got += (uint64_t) r;
    }
    free (buf);
    zip_fclose (zf);
    if (rc == 0 && got != st.size) {
        snprintf (err, errlen, "model %s: archive entry %s inflates to %llu bytes, it declared %llu", label, st.name,
                  (unsigned long long) got, (unsigned long long) st.size);
        rc = -1;
    }
    if (rc) { bmq_assets_cache_abort (&w); return -1; }
    if (bmq_assets_cache_commit (&w, sha, why, sizeof why)) {
        snprintf (err, errlen, "model %s: archive entry %s: %s", label, st.name, why);
        return -1;
    }
    *size = got;
    return 0;
}

int bmq_assets_zip_unpack (bmq_assets_cache_t *cache, const char *sha256, uint64_t size, uint64_t budget,
                           const char *label, bmq_asset_bundle_t *into, char *err, size_t errlen)
{
    if (size == 0 || size > SIZE_MAX) { snprintf (err, errlen, "model %s: the archive is empty", label); return -1; }
    void *bytes = malloc ((size_t) size);
    if (!bytes) { snprintf (err, errlen, "model %s: out of memory for its %llu-byte archive", label, (unsigned long long) size); return -1; }
    char why[512];
    if (bmq_assets_cache_read (cache, sha256, size, bytes, why, sizeof why)) {
        snprintf (err, errlen, "model %s: its archive: %s", label, why);
        free (bytes);
        return -1;
    }
    zip_error_t ze;
    zip_error_init (&ze);
    zip_source_t *src = zip_source_buffer_create (bytes, (zip_uint64_t) size, 0, &ze);
    zip_t *za = src ? zip_open_from_source (src, ZIP_RDONLY | ZIP_CHECKCONS, &ze) : NULL;
    if (!za) {
        snprintf (err, errlen, "model %s: the download is not a ZIP archive libzip can read: %s", label, zip_error_strerror (&ze));
        zip_source_free (src);
        zip_error_fini (&ze);
        free (bytes);
        return -1;
    }
    zip_error_fini (&ze);
    int rc = 0;
    bool *keep = NULL;
    zip_int64_t n = zip_get_num_entries (za, 0);
    if (n < 0 || n > BMQ_ASSETS_MAX_FILES) {
        snprintf (err, errlen, "model %s: the archive holds %lld entries, more than %d: refused", label, (long long) n, BMQ_ASSETS_MAX_FILES);
        rc = -1;
    }
    else if (!(keep = calloc ((size_t) n + 1, sizeof *keep))) { snprintf (err, errlen, "out of memory"); rc = -1; }
    char main[BMQ_ASSETS_PATH_MAX + 1] = "";
    if (rc == 0) rc = s_plan (za, n, budget, label, keep, main, sizeof main, err, errlen);
    for (zip_int64_t i = 0; rc == 0 && i < n; i++) {
        if (!keep[i]) continue;
        char sha[65];
        uint64_t got = 0;
        rc = s_inflate (za, i, label, cache, sha, &got, err, errlen);
        if (rc == 0 && bmq_asset_bundle_add (into, zip_get_name (za, (zip_uint64_t) i, 0), sha, got, "", why, sizeof why)) {
            snprintf (err, errlen, "model %s: %s", label, why);
            rc = -1;
        }
    }
    if (rc == 0) snprintf (into->main, sizeof into->main, "%s", main);
    free (keep);
    zip_discard (za);               /* read-only: frees the source and so the bytes' wrapper */
    free (bytes);
    return rc;
}
