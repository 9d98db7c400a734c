/* assets_bundle — what one asset import hands to Blender: its files, in the
 * cache by sha256, under the relative names the source gave them.
 *
 * The link blob is the files' bytes concatenated in the bundle's order; the
 * link's JSON args are the manifest {main, kind, format, files: [{path, size,
 * sha256, map?}]}: the receiver cuts the blob by the sizes, checks each
 * sha256, and places each file under its path in a private folder of its own
 * (paths already passed bmq_assets_check_path). `map` names what a texture
 * file is: diffuse, normal, roughness, metallic, ao, displacement. */
#ifndef BMQ_ASSETS_BUNDLE_H
#define BMQ_ASSETS_BUNDLE_H

#include "assets_cache.h"
#include "assets_check.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define BMQ_ASSETS_MAX_FILES 256
#define BMQ_ASSETS_FILE_MAX  (1ull << 40)     /* bytes in one file: sums of 256 never wrap */

typedef struct {
    char     path[BMQ_ASSETS_PATH_MAX + 1];
    char     sha256[65];
    uint64_t size;
    char     map[16];           /* "" when not a texture map */
} bmq_asset_file_t;

typedef struct {
    char   source[16];          /* "polyhaven" */
    char   id[BMQ_ASSETS_ID_MAX + 1];
    char   kind[16];            /* hdri | texture | model */
    char   resolution[8];       /* 1k | 2k | 4k | 8k */
    char   format[8];           /* hdr exr | jpg png | gltf fbx */
    char   main[BMQ_ASSETS_PATH_MAX + 1];   /* the file to import; one of files[].path */
    bmq_asset_file_t *files;
    size_t nfiles;
    bool   from_cache;          /* served without any download */
} bmq_asset_bundle_t;

bmq_asset_bundle_t *bmq_asset_bundle_new (void);
void     bmq_asset_bundle_destroy (bmq_asset_bundle_t **self_p);
/* Add a file (path checked, sha256 hex, size at most BMQ_ASSETS_FILE_MAX, no
 * duplicate path, at most BMQ_ASSETS_MAX_FILES). 0 / -1 with err. */
int      bmq_asset_bundle_add (bmq_asset_bundle_t *self, const char *path, const char *sha256, uint64_t size,
                               const char *map, char *err, size_t errlen);
uint64_t bmq_asset_bundle_total (const bmq_asset_bundle_t *self);

/* The link's JSON args: {main, kind, format, files: [{path, size, sha256, map?}]}. */
json_t  *bmq_asset_bundle_manifest (const bmq_asset_bundle_t *self);
/* The cache's record: the manifest plus source, id, resolution. */
json_t  *bmq_asset_bundle_to_json (const bmq_asset_bundle_t *self);
/* Back from a cache record, every field checked as if hostile. NULL with err. */
bmq_asset_bundle_t *bmq_asset_bundle_from_json (const json_t *doc, char *err, size_t errlen);

/* The link blob (malloc'd, *len bytes) read from the cache, each file's size
 * and sha256 checked, total at most max_bytes; *manifest gets the JSON args
 * (new reference). 0 / -1 with err. */
int bmq_asset_bundle_blob (const bmq_asset_bundle_t *self, bmq_assets_cache_t *cache, uint64_t max_bytes,
                           uint8_t **blob, size_t *len, json_t **manifest, char *err, size_t errlen);

/* The link blob in pieces (assets larger than one link frame are staged in
 * chunks): each next () hands out up to max bytes from where the last one
 * stopped (*got 0 at the end), each file's size checked when it is opened
 * and its sha256 when its last byte is read. The reader borrows the bundle
 * and the cache: both outlive it. */
typedef struct bmq_asset_bundle_reader_t bmq_asset_bundle_reader_t;
bmq_asset_bundle_reader_t *bmq_asset_bundle_reader (const bmq_asset_bundle_t *self, bmq_assets_cache_t *cache);
int      bmq_asset_bundle_reader_next (bmq_asset_bundle_reader_t *r, uint8_t *dst, size_t max, size_t *got,
                                       char *err, size_t errlen);
uint64_t bmq_asset_bundle_reader_offset (const bmq_asset_bundle_reader_t *r);
void     bmq_asset_bundle_reader_close (bmq_asset_bundle_reader_t **r_p);

#endif
