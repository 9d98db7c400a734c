/* assets_fixture — temp dirs, the fake server, files and the outside-the-cache scan. */
#include "assets_fixture.h"
#include "assets_md5.h"

#include <dirent.h>
#include <ftw.h>
#include <setjmp.h>
#include <sodium.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

const unsigned char fx_hdr[] = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 1\n\x80\x80\x80\x81";
const size_t fx_hdr_len = sizeof fx_hdr - 1;
const unsigned char fx_png[] = {       /* a 1x1 RGBA PNG */
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82 };
const size_t fx_png_len = sizeof fx_png;
const unsigned char fx_jpg[] = {       /* JPEG markers only: the client never decodes */
    0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00, 0x01, 0x01, 0x00, 0x00, 0x01,
    0x00, 0x01, 0x00, 0x00, 0xFF, 0xD9 };
const size_t fx_jpg_len = sizeof fx_jpg;
const char fx_gltf[] =
    "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],"
    "\"nodes\":[{\"mesh\":0,\"name\":\"chair\"}],"
    "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},\"material\":0}]}],"
    "\"materials\":[{\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":0}}}],"
    "\"textures\":[{\"source\":0}],\"images\":[{\"uri\":\"textures/chair_diff_1k.jpg\"}],"
    "\"buffers\":[{\"uri\":\"chair.bin\",\"byteLength\":36}],\"bufferViews\":[{\"buffer\":0,\"byteLength\":36}],"
    "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[1,1,0]}]}";
const unsigned char fx_bin[] = {       /* (0,0,0) (1,0,0) (0,1,0) as float32 LE */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0 };
const size_t fx_bin_len = sizeof fx_bin;

int fx_setup (void **state)
{
    fx_t *fx = calloc (1, sizeof *fx);
    const char *tmp = getenv ("TMPDIR");
    snprintf (fx->root, sizeof fx->root, "%s/bmq-assets-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (fx->root)) { free (fx); return -1; }
    snprintf (fx->tdir, sizeof fx->tdir, "%s/t", fx->root);
    snprintf (fx->cache, sizeof fx->cache, "%s/cache", fx->tdir);
    if (mkdir (fx->tdir, 0700)) { free (fx); return -1; }
    fx->fake = fake_ph_new ();
    if (!fx->fake) { free (fx); return -1; }
    bmq_polyhaven_options_t *o = &fx->opts;
    snprintf (o->base_url, sizeof o->base_url, "%s", fake_ph_url (fx->fake));
    snprintf (o->download_hosts, sizeof o->download_hosts, "dl.polyhaven.org, %s", fake_ph_hostport (fx->fake));
    snprintf (o->cache_dir, sizeof o->cache_dir, "%s", fx->cache);
    o->max_download_bytes = 1u << 20;
    o->max_json_bytes = 256u << 10;
    o->max_results = 50;
    o->http = (bmq_assets_http_policy_t) {
        .connect_timeout_ms = 2000, .timeout_ms = 8000, .low_speed_bytes = 100, .low_speed_secs = 1,
        .retries = 2, .retry_base_ms = 10, .retry_max_ms = 50, .retry_after_max_ms = 3000,
    };
    *state = fx;
    return 0;
}

static int s_rm (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove (path);
}

int fx_teardown (void **state)
{
    fx_t *fx = *state;
    fx_assert_clean (fx);
    fake_ph_destroy (&fx->fake);
    nftw (fx->root, s_rm, 16, FTW_DEPTH | FTW_PHYS);
    free (fx);
    return 0;
}

bmq_polyhaven_t *fx_client (fx_t *fx)
{
    char err[1024] = "";
    bmq_polyhaven_t *ph = bmq_polyhaven_new (&fx->opts, err, sizeof err);
    if (!ph) fprintf (stderr, "client: %s\n", err);
    assert_non_null (ph);
    return ph;
}

void fx_sha256 (const void *bytes, size_t len, char out[65])
{
    unsigned char d[crypto_hash_sha256_BYTES];
    crypto_hash_sha256 (d, bytes, len);
    for (size_t i = 0; i < sizeof d; i++) sprintf (out + 2 * i, "%02x", d[i]);
}

json_t *fx_leaf (const char *url, const char *md5, long long size)
{
    json_t *o = json_pack ("{s:s}", "url", url);
    if (md5) json_object_set_new (o, "md5", json_string (md5));
    if (size >= 0) json_object_set_new (o, "size", json_integer (size));
    return o;
}

json_t *fx_serve (fx_t *fx, const char *name, const void *bytes, size_t len)
{
    char path[256], url[512], md5[33];
    snprintf (path, sizeof path, "/dl/%s", name);
    snprintf (url, sizeof url, "%s%s", fake_ph_url (fx->fake), path);
    fake_ph_file (fx->fake, path, bytes, len);
    bmq_assets_md5_t m;
    bmq_assets_md5_init (&m);
    bmq_assets_md5_update (&m, bytes, len);
    bmq_assets_md5_hex (&m, md5);
    return fx_leaf (url, md5, (long long) len);
}

void fx_json (fx_t *fx, const char *path, json_t *doc)
{
    char *text = json_dumps (doc, JSON_COMPACT);
    fake_ph_json (fx->fake, path, text);
    free (text);
    json_decref (doc);
}

static bool s_hex (const char *s, size_t n)
{
    if (strlen (s) != n) return false;
    for (size_t i = 0; i < n; i++) if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* Walk dir (relative name rel under R); count what does not belong. */
static int s_scan (fx_t *fx, const char *dir, const char *rel, int depth)
{
    DIR *d = opendir (dir);
    if (!d) return 0;
    int bad = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, "..")) continue;
        char path[1024], r[1024];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf (r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        struct stat st;
        if (lstat (path, &st)) continue;
        bool planted = false;
        for (int i = 0; i < 8 && fx->planted[i]; i++) planted |= !strcmp (fx->planted[i], r);
        bool dir_ok = S_ISDIR (st.st_mode), file_ok = S_ISREG (st.st_mode);
        bool ok = planted;
        const char *in_cache = !strncmp (r, "t/cache/", 8) ? r + 8 : NULL;
        if (!ok && dir_ok && (!strcmp (r, "t") || !strcmp (r, "t/cache"))) ok = true;
        if (!ok && in_cache && dir_ok && (!strcmp (in_cache, "m") || s_hex (in_cache, 2))) ok = true;
        if (!ok && in_cache && file_ok) {
            const char *slash = strchr (in_cache, '/');
            if (slash && !strncmp (in_cache, "m/", 2)) ok = s_hex (slash + 1, 64);
            else if (slash && slash - in_cache == 2) ok = s_hex (slash + 1, 64) && !strncmp (in_cache, slash + 1, 2);
        }
        if (!ok) { fprintf (stderr, "unexpected entry under the test dir: %s (mode %o)\n", r, (unsigned) st.st_mode); bad++; }
        if (S_ISDIR (st.st_mode) && !S_ISLNK (st.st_mode) && depth < 8) bad += s_scan (fx, path, r, depth + 1);
    }
    closedir (d);
    return bad;
}

void fx_assert_clean (fx_t *fx)
{
    assert_int_equal (s_scan (fx, fx->root, "", 0), 0);
}

void fx_assert_says (const char *text, ...)
{
    va_list ap;
    va_start (ap, text);
    for (const char *needle = va_arg (ap, const char *); needle; needle = va_arg (ap, const char *)) {
        if (!text || !strstr (text, needle)) {
            fprintf (stderr, "expected \"%s\" in: %s\n", needle, text ? text : "(null)");
            va_end (ap);
            fail ();
        }
    }
    va_end (ap);
}

json_t *fx_model_tree (fx_t *fx, json_t *includes)
{
    json_t *main = fx_serve (fx, "chair_1k.gltf", fx_gltf, strlen (fx_gltf));
    json_object_set_new (main, "include", includes);
    return json_pack ("{s:{s:{s:o}}, s:{s:{s:o}}}", "gltf", "1k", "gltf", main,
                      "blend", "1k", "blend", fx_leaf ("https://dl.polyhaven.org/chair.blend", NULL, 99));
}

int fx_cached_files (fx_t *fx)
{
    int n = 0;
    DIR *d = opendir (fx->cache);
    struct dirent *e;
    while (d && (e = readdir (d))) {
        if (strlen (e->d_name) != 2 || e->d_name[0] == '.') continue;
        char sub[512];
        snprintf (sub, sizeof sub, "%s/%s", fx->cache, e->d_name);
        DIR *s = opendir (sub);
        struct dirent *f;
        while (s && (f = readdir (s))) if (f->d_name[0] != '.') n++;
        if (s) closedir (s);
    }
    if (d) closedir (d);
    return n;
}

bool fx_in_cache (fx_t *fx, const void *bytes, size_t len)
{
    char sha[65], path[512];
    fx_sha256 (bytes, len, sha);
    snprintf (path, sizeof path, "%s/%.2s/%s", fx->cache, sha, sha);
    struct stat st;
    return lstat (path, &st) == 0 && S_ISREG (st.st_mode) && (size_t) st.st_size == len && (st.st_mode & 0777) == 0600;
}
