/* assets_polyhaven — the Poly Haven client: search and fetch, checked.
 *
 * API (https://api.polyhaven.com, its swagger.yml): GET /assets?t=TYPE (an
 * object: id → info), GET /files/ID (a tree of {url, md5, size} leaves:
 * hdri → res → format; a texture's maps → res → format; a model's gltf/fbx
 * → res → format with `include`: relative path → {url, md5, size}). Every
 * API answer must be application/json, at most max_json_bytes.
 *
 * search (type, query): [{id, name, type, categories, tags}], the query
 * matched case-insensitively against id, name and tags on our side, most
 * downloaded first, at most max_results.
 *
 * fetch (id, type, resolution, format) → a bundle (assets_bundle.h):
 *  - id [A-Za-z0-9_-]{1,64}; type hdri|texture|model; resolution 1k|2k|4k|8k;
 *    format hdri: hdr|exr (default hdr), texture: jpg|png (default jpg),
 *    model: gltf|fbx (default gltf).
 *  - Served from the cache when a manifest for (polyhaven, id, type,
 *    resolution, format) is there and its files are: no HTTP at all.
 *  - Otherwise every download URL must pass bmq_assets_check_url against
 *    download_hosts, every include path bmq_assets_check_path; the declared
 *    sizes together must fit max_download_bytes before anything is
 *    downloaded; each file is streamed into the cache capped at its declared
 *    size and checked (size, md5) by assets_download.
 *  - A texture gets the usual PBR maps that exist at that resolution and
 *    format (diffuse, normal (GL), roughness, metallic, ao, displacement),
 *    each file tagged with its map; a diffuse map is required.
 * Errors name the asset, the file, the host and what was expected.
 * A client is used by one thread at a time; bmq_assets_http_global_init runs
 * once per process before any. */
#ifndef BMQ_ASSETS_POLYHAVEN_H
#define BMQ_ASSETS_POLYHAVEN_H

#include "assets_bundle.h"
#include "assets_cache.h"
#include "assets_http.h"
#include "config.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define BMQ_POLYHAVEN_QUERY_MAX 100

typedef struct {
    char     base_url[512];         /* assets.polyhaven_base_url */
    char     download_hosts[512];   /* assets.polyhaven_download_hosts */
    char     cache_dir[1024];       /* assets.cache_dir, or assets-cache/ next to audit.database */
    uint64_t max_download_bytes;    /* assets.max_download_mb, in bytes */
    size_t   max_json_bytes;        /* one API answer; default 32 MiB */
    size_t   max_results;           /* search; default 50, at most 500 */
    bmq_assets_http_policy_t http;  /* timeout_ms and retries from assets.* */
} bmq_polyhaven_options_t;

typedef struct bmq_polyhaven_t bmq_polyhaven_t;

/* Options from the configuration's assets section. 0 / -1 with err. */
int bmq_polyhaven_options_from_config (bmq_polyhaven_options_t *opts, const bmq_config_t *cfg, char *err, size_t errlen);

/* Opens (creates) the cache. NULL with err. */
bmq_polyhaven_t *bmq_polyhaven_new (const bmq_polyhaven_options_t *opts, char *err, size_t errlen);
void bmq_polyhaven_destroy (bmq_polyhaven_t **self_p);
bmq_assets_cache_t *bmq_polyhaven_cache (bmq_polyhaven_t *self);

/* type: hdri|texture|model, or NULL/"" for all; query: NULL/"" for all.
 * A JSON array (new reference); NULL with err. */
json_t *bmq_polyhaven_search (bmq_polyhaven_t *self, const char *type, const char *query, char *err, size_t errlen);

/* format NULL or "": the type's default. NULL with err. */
bmq_asset_bundle_t *bmq_polyhaven_fetch (bmq_polyhaven_t *self, const char *id, const char *type,
                                         const char *resolution, const char *format, char *err, size_t errlen);

#endif
