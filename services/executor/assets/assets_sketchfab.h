/* assets_sketchfab — the Sketchfab client (Data API v3): search and fetch, checked.
 *
 * API (https://api.sketchfab.com/v3):
 *  - GET /search?type=models&downloadable=true&count=N&q=QUERY →
 *    {results: [{uid, name, user: {username}, license?: {label}, faceCount?,
 *    viewerUrl?, …}], next, previous}. No token is sent. `next` is followed
 *    (at most 8 pages) only when it is a URL under base_url + "/search?".
 *  - GET /models/UID/download with "Authorization: Token API_TOKEN" →
 *    {gltf: {url, size, expires}, usdz: {…}, glb?: {url, size, expires}};
 *    the gltf form is a ZIP archive (scene.gltf, scene.bin, textures/…).
 * Every API answer must be application/json, at most max_json_bytes.
 *
 * search (query): [{id (the uid), name, type: "model", author, license,
 * faces, url?}], at most max_results; the query (at most
 * BMQ_SKETCHFAB_QUERY_MAX bytes) is matched by Sketchfab.
 *
 * fetch (uid, format) → a bundle (assets_bundle.h): source "sketchfab",
 * kind "model", resolution "" (Sketchfab models come as published: the
 * cache record holds "asis" there, since bmq_asset_bundle_from_json wants
 * 1..7 bytes, and it is cleared again on the way out), format "glb" or
 * "gltf":
 *  - uid: exactly 32 lower-case hex digits; format "glb", "gltf", or
 *    NULL/"" (glb when offered, else the gltf archive).
 *  - Served from the cache when a manifest for (sketchfab, uid, format or
 *    "auto") is there and its files are: no HTTP at all, no token needed.
 *  - Otherwise the token is required ("Sketchfab needs
 *    assets.sketchfab_api_token or SKETCHFAB_API_TOKEN"); a 401/403 says the
 *    token was refused. The token goes to the API base URL only, never to
 *    the download host.
 *  - The download URL must pass bmq_assets_check_url against
 *    download_hosts; its declared size must fit max_download_bytes before
 *    anything is downloaded; the file streams into the cache capped at that
 *    size (assets_download). A glb is the bundle's one file ("scene.glb");
 *    a gltf archive is unpacked by assets_zip (its rules there).
 * Errors name the model, the file or entry, the host and what was expected.
 * A client is used by one thread at a time; bmq_assets_http_global_init runs
 * once per process before any. */
#ifndef BMQ_ASSETS_SKETCHFAB_H
#define BMQ_ASSETS_SKETCHFAB_H

#include "assets_bundle.h"
#include "assets_cache.h"
#include "assets_http.h"
#include "config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BMQ_SKETCHFAB_QUERY_MAX 100
#define BMQ_SKETCHFAB_TOKEN_MAX 256

typedef struct {
    char     base_url[512];         /* assets.sketchfab_base_url */
    char     api_token[BMQ_SKETCHFAB_TOKEN_MAX + 1];   /* assets.sketchfab_api_token, else $SKETCHFAB_API_TOKEN; "" none */
    char     download_hosts[512];   /* assets.sketchfab_download_hosts */
    char     format[8];             /* assets.sketchfab_format: "" (glb when offered), "glb" or "gltf" */
    char     cache_dir[1024];       /* assets.cache_dir (shared, assets_options.h) */
    uint64_t max_download_bytes;    /* assets.max_download_mb, in bytes (shared) */
    size_t   max_json_bytes;        /* one API answer; default 8 MiB */
    size_t   max_results;           /* search; default 24, at most 200 */
    bmq_assets_http_policy_t http;  /* timeout_ms and retries from assets.* (shared) */
} bmq_sketchfab_options_t;

typedef struct bmq_sketchfab_t bmq_sketchfab_t;

/* Options from the configuration's assets section. 0 / -1 with err. */
int bmq_sketchfab_options_from_config (bmq_sketchfab_options_t *opts, const bmq_config_t *cfg, char *err, size_t errlen);

/* Opens (creates) the cache. NULL with err. */
bmq_sketchfab_t *bmq_sketchfab_new (const bmq_sketchfab_options_t *opts, char *err, size_t errlen);
void bmq_sketchfab_destroy (bmq_sketchfab_t **self_p);
bmq_assets_cache_t *bmq_sketchfab_cache (bmq_sketchfab_t *self);

/* Downloadable models matching query (NULL/"": Sketchfab's own order). A
 * JSON array (new reference); NULL with err. */
json_t *bmq_sketchfab_search (bmq_sketchfab_t *self, const char *query, char *err, size_t errlen);

/* format "glb" | "gltf" | NULL/"" (the options' format, then glb when
 * offered, else gltf). NULL with err. */
bmq_asset_bundle_t *bmq_sketchfab_fetch (bmq_sketchfab_t *self, const char *uid, const char *format,
                                         char *err, size_t errlen);

/* Whether text is a Sketchfab model uid: 32 lower-case hex digits. */
bool bmq_sketchfab_uid_valid (const char *text);

#endif
