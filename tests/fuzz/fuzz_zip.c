/* Fuzz the Sketchfab archive unpacker (assets_zip.c) with arbitrary bytes
 * as the downloaded archive: it must never crash, never write outside the
 * cache (it only writes through the cache's sha256-named entries), and when
 * it accepts, every file of the bundle must carry a safe relative path and
 * the bundle's main file must be one of them and a .gltf or .glb. The cache
 * lives in a fresh temp dir, emptied after every input. */
#include "assets_bundle.h"
#include "assets_cache.h"
#include "assets_check.h"
#include "assets_zip.h"

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static char s_root[64];
static char s_dir[96];

static int s_rm (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st; (void) flag;
    if (ftw->level > 0) remove (path);      /* everything under the cache dir, never the dir itself */
    return 0;
}

static bmq_assets_cache_t *s_cache (void)
{
    static bmq_assets_cache_t *cache;
    if (cache) return cache;
    snprintf (s_root, sizeof s_root, "/tmp/bmq-fuzz-zip-XXXXXX");
    if (!mkdtemp (s_root)) abort ();
    snprintf (s_dir, sizeof s_dir, "%s/cache", s_root);
    char err[512];
    cache = bmq_assets_cache_open (s_dir, err, sizeof err);
    if (!cache) { fprintf (stderr, "%s\n", err); abort (); }
    return cache;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size == 0 || size > (1u << 20)) return 0;
    bmq_assets_cache_t *cache = s_cache ();
    char err[1024], sha[65];
    bmq_assets_cache_writer_t *w = bmq_assets_cache_begin (cache, err, sizeof err);
    if (!w) abort ();
    if (bmq_assets_cache_write (w, data, size, err, sizeof err) || bmq_assets_cache_commit (&w, sha, err, sizeof err)) abort ();
    bmq_asset_bundle_t *b = bmq_asset_bundle_new ();
    if (!b) abort ();
    int rc = bmq_assets_zip_unpack (cache, sha, size, 4u << 20, "fuzz", b, err, sizeof err);
    if (rc == 0) {
        bool main_found = false;
        for (size_t i = 0; i < b->nfiles; i++) {
            if (bmq_assets_check_path (b->files[i].path, strlen (b->files[i].path), err, sizeof err)) abort ();
            if (!strcmp (b->files[i].path, b->main)) main_found = true;
        }
        size_t n = strlen (b->main);
        bool model = (n > 5 && !strcasecmp (b->main + n - 5, ".gltf")) || (n > 4 && !strcasecmp (b->main + n - 4, ".glb"));
        if (!main_found || !model || bmq_asset_bundle_total (b) > (4u << 20)) abort ();
    }
    else if (!*err) abort ();               /* a refusal always says why */
    bmq_asset_bundle_destroy (&b);
    nftw (s_dir, s_rm, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
