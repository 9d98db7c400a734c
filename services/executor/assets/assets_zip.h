/* assets_zip — unpack a ZIP archive that sits in the cache (one file, by
 * sha256) into cache entries of a bundle, with libzip (no hand-written
 * unzip). The archive is hostile:
 *  - at most BMQ_ASSETS_MAX_FILES entries (counted before anything else);
 *  - every entry name passes bmq_assets_check_path (no "..", no absolute
 *    path, no backslash, …); it is a label in the bundle only: nothing is
 *    ever written under it;
 *  - directory entries are skipped; a symlink (or any other non-regular
 *    file type in Unix external attributes) and an encrypted entry are
 *    refused;
 *  - each entry's declared uncompressed size, and the running total, must
 *    fit `budget` before anything is inflated; while inflating, an entry
 *    that yields more than it declared (a zip bomb whose header lies) stops
 *    there, and one that yields fewer is refused; libzip checks each CRC;
 *  - every entry streams into bmq_assets_cache_begin/write/commit.
 * The bundle's main file is the single *.gltf or *.glb (case-insensitive)
 * at the shallowest depth; none, or several at that depth, is an error.
 * All names and sizes are checked in a first pass, before any inflating.
 * Errors name `label` (the model), the entry and what was expected. The
 * archive is read back from the cache into memory (its size is already
 * bounded by the caller's cap) and its sha256 checked on the way. */
#ifndef BMQ_ASSETS_ZIP_H
#define BMQ_ASSETS_ZIP_H

#include "assets_bundle.h"
#include "assets_cache.h"

#include <stddef.h>
#include <stdint.h>

/* Adds every file entry of the archive (sha256, size bytes) to `into` and
 * sets into->main. 0 / -1 with err (files already committed stay in the
 * cache as unreferenced content; `into` may hold some of them). */
int bmq_assets_zip_unpack (bmq_assets_cache_t *cache, const char *sha256, uint64_t size, uint64_t budget,
                           const char *label, bmq_asset_bundle_t *into, char *err, size_t errlen);

#endif
