/* Fuzz the cache's asset records (bmq_asset_bundle_from_json): whatever a
 * tampered cache manifest holds, it must be refused with a reason or give a
 * bundle whose every path is safe, whose sha256s are 64 hex digits and whose
 * main file is one of its files; and that bundle must survive a round trip
 * through bmq_asset_bundle_to_json unchanged. */
#include "assets_bundle.h"
#include "assets_cache.h"
#include "assets_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb ((const char *) data, size, JSON_DECODE_ANY, NULL);
    if (!doc) return 0;
    char err[1024] = "";
    bmq_asset_bundle_t *b = bmq_asset_bundle_from_json (doc, err, sizeof err);
    if (!b) {
        if (!*err) abort ();
        json_decref (doc);
        return 0;
    }
    bool main_found = false;
    for (size_t i = 0; i < b->nfiles; i++) {
        if (bmq_assets_check_path (b->files[i].path, strlen (b->files[i].path), err, sizeof err)) abort ();
        if (!bmq_assets_sha256_hex_valid (b->files[i].sha256)) abort ();
        if (!strcmp (b->files[i].path, b->main)) main_found = true;
    }
    if (!main_found) abort ();
    json_t *back = bmq_asset_bundle_to_json (b);
    bmq_asset_bundle_t *again = back ? bmq_asset_bundle_from_json (back, err, sizeof err) : NULL;
    if (!again || again->nfiles != b->nfiles || strcmp (again->main, b->main)) abort ();
    for (size_t i = 0; i < b->nfiles; i++)
        if (strcmp (again->files[i].path, b->files[i].path) || strcmp (again->files[i].sha256, b->files[i].sha256)
            || again->files[i].size != b->files[i].size)
            abort ();
    bmq_asset_bundle_destroy (&again);
    bmq_asset_bundle_destroy (&b);
    json_decref (back);
    json_decref (doc);
    return 0;
}
