/* assets_hyper3d — the Hyper3D Rodin client: make a model from text or images, follow
 * the job, fetch the model into the cache (issue 16).
 *
 * API (Rodin v2, https://hyperhuman.deemos.com/api, key as "Authorization:
 * Bearer KEY" on API calls only):
 *   POST {base}/v2/rodin     multipart/form-data prompt?, tier,
 *                            geometry_file_format=glb, images (0..5 file
 *                            parts image_N.png|jpg, image/png|image/jpeg)
 *                            → {uuid, jobs: {uuids: [...], subscription_key}}
 *   POST {base}/v2/status    JSON {subscription_key}
 *                            → {jobs: [{uuid, status: Waiting|Generating|Done|Failed, message?}]}
 *   POST {base}/v2/download  JSON {task_uuid} → {list: [{url, name}]}
 * Every API answer must be application/json, at most max_json_bytes, a JSON
 * object; an object with a non-empty "error" string is a refusal (its text
 * is quoted).
 *
 * Contract:
 *  - create is never retried (a POST that creates a job costs the user
 *    money: a lost answer must not make a second one); status and download
 *    use the configured retries (429, 5xx, transport errors).
 *  - No key (assets.hyper3d_api_key, else the environment's HYPER3D_API_KEY):
 *    the client still opens (its cache serves models made before); create,
 *    status and a download fail with a message naming both settings.
 *  - Task uuids and ids are [A-Za-z0-9-]{1,64} (common/palette/plan_assets.c's
 *    hyper3d rule); anything else from the API is refused.
 *  - fetch (id = task uuid, type model, format glb): served from the cache
 *    (manifest "hyper3d/<uuid>/model/glb") with no HTTP when it is there;
 *    otherwise the download list's first entry whose name ends in ".glb" is
 *    taken (the name is only looked at, never used as a path: the bundle's
 *    file is "model.glb"), its URL must pass bmq_assets_check_url against
 *    download_hosts, no key is sent to that host, the bytes stream into the
 *    cache capped at max_download_bytes, must be a binary glTF ("glTF"
 *    magic), and are named by their sha256 (Rodin declares no checksum).
 *  - A stop flag (may be NULL) ends a download between chunks ("cancelled").
 * A client is used by one thread at a time; separate clients on the same
 * cache dir may run on separate threads (the cache is content-addressed and
 * written through temp files). */
#ifndef BMQ_ASSETS_HYPER3D_H
#define BMQ_ASSETS_HYPER3D_H

#include "assets_bundle.h"
#include "assets_cache.h"
#include "assets_http.h"
#include "assets_sources.h"
#include "config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BMQ_HYPER3D_PROMPT_MAX 4000
#define BMQ_HYPER3D_KEY_MAX    1024        /* a subscription key */
#define BMQ_HYPER3D_IMAGES_MAX 5           /* images per job (Rodin's limit) */
#define BMQ_HYPER3D_IMAGE_MAX  (8u << 20)  /* bytes of one image, decoded */

/* One input image: its media type (from its magic bytes) and bytes (malloc'd). */
typedef struct {
    const char    *type;                    /* "image/png" | "image/jpeg" (static) */
    unsigned char *data;
    size_t         len;
} bmq_hyper3d_image_t;

typedef struct {
    char     base_url[512];         /* assets.hyper3d_base_url */
    char     download_hosts[512];   /* assets.hyper3d_download_hosts */
    char     api_key[512];          /* assets.hyper3d_api_key or HYPER3D_API_KEY; "" when none */
    char     tier[32];              /* assets.hyper3d_tier (default Regular) */
    char     cache_dir[1024];       /* assets.cache_dir, or assets-cache/ next to audit.database */
    uint64_t max_download_bytes;    /* assets.max_download_mb, in bytes */
    size_t   max_json_bytes;        /* one API answer; default 1 MiB */
    int      poll_ms;               /* assets.hyper3d_poll_ms (100..600000) */
    int      deadline_s;            /* assets.hyper3d_deadline_s (10..86400) */
    bmq_assets_http_policy_t http;  /* timeout_ms and retries from assets.* */
} bmq_hyper3d_options_t;

typedef struct bmq_hyper3d_t bmq_hyper3d_t;

typedef struct {
    char uuid[65];                          /* the task: the asset id once done */
    char subscription_key[BMQ_HYPER3D_KEY_MAX + 1];
} bmq_hyper3d_task_t;

typedef enum { BMQ_HYPER3D_WAITING, BMQ_HYPER3D_GENERATING, BMQ_HYPER3D_DONE, BMQ_HYPER3D_FAILED } bmq_hyper3d_state_t;

/* The source kind for assets_sources.c: no search, fetch by task uuid. */
extern const bmq_asset_source_kind_t bmq_asset_source_hyper3d;

/* Options from the configuration's assets section. 0 / -1 with err. */
int bmq_hyper3d_options_from_config (bmq_hyper3d_options_t *opts, const bmq_config_t *cfg, char *err, size_t errlen);

/* Opens (creates) the cache. NULL with err. */
bmq_hyper3d_t *bmq_hyper3d_new (const bmq_hyper3d_options_t *opts, char *err, size_t errlen);
void bmq_hyper3d_destroy (bmq_hyper3d_t **self_p);
bmq_assets_cache_t *bmq_hyper3d_cache (bmq_hyper3d_t *self);
const bmq_hyper3d_options_t *bmq_hyper3d_options (const bmq_hyper3d_t *self);

/* Start a job (tier NULL/"": the configured one). 0 with task; -1 with err. */
int bmq_hyper3d_create (bmq_hyper3d_t *self, const char *prompt, const char *tier, bmq_hyper3d_task_t *task,
                        char *err, size_t errlen);
/* The same with input images (nimages 0..BMQ_HYPER3D_IMAGES_MAX; prompt may
 * then be NULL/""; each image's magic bytes must match its type). */
int bmq_hyper3d_create_with (bmq_hyper3d_t *self, const char *prompt, const char *tier, const bmq_hyper3d_image_t *images,
                             size_t nimages, bmq_hyper3d_task_t *task, char *err, size_t errlen);

/* "image/png" or "image/jpeg" when data starts with that format's magic
 * bytes (PNG \x89PNG\r\n\x1a\n, JPEG \xff\xd8\xff); NULL otherwise. */
const char *bmq_hyper3d_image_magic (const void *data, size_t len);

/* asset.generate's `images` (hostile input): an array of 1..5 objects
 * {type: "image/png" | "image/jpeg", data: base64}, each valid base64 (the
 * standard alphabet, padded), 1..BMQ_HYPER3D_IMAGE_MAX bytes decoded, its
 * magic bytes those of its type. Fills out[0..*n) (free with
 * bmq_hyper3d_images_free); -1 with err naming the image (1-based) and what
 * is wrong, nothing allocated. NULL images: 0 with *n = 0. */
int bmq_hyper3d_images_decode (const json_t *images, bmq_hyper3d_image_t *out, size_t *n, char *err, size_t errlen);
void bmq_hyper3d_images_free (bmq_hyper3d_image_t *images, size_t n);

/* Where the job is: any job Failed → FAILED (reason: the source's message,
 * or "" when it gave none); all Done → DONE; any Generating → GENERATING;
 * else WAITING. 0 / -1 with err (the call itself failed). */
int bmq_hyper3d_status (bmq_hyper3d_t *self, const bmq_hyper3d_task_t *task, bmq_hyper3d_state_t *state,
                        char *reason, size_t reasonlen, char *err, size_t errlen);
/* The model of a finished task as a bundle (cache first). NULL with err. */
bmq_asset_bundle_t *bmq_hyper3d_fetch (bmq_hyper3d_t *self, const char *uuid, const atomic_bool *stop,
                                       char *err, size_t errlen);

#endif
