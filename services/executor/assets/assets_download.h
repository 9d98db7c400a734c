/* assets_download — one file from a source into the cache.
 *
 * The bytes stream into a cache temp file (assets_cache), never into memory
 * whole and never under the source's name. The transfer stops at the smaller
 * of the declared size and the budget left for the asset (the caller's
 * max_download_mb share), so a body that never ends fails there. After the
 * transfer the size must equal the declared size and the md5, when the
 * source gave one, must match; otherwise the temp file is removed and err
 * says which file, from which host, and what was expected. */
#ifndef BMQ_ASSETS_DOWNLOAD_H
#define BMQ_ASSETS_DOWNLOAD_H

#include "assets_cache.h"
#include "assets_http.h"

#include <stdint.h>

typedef struct {
    const char *url;            /* already allowed by bmq_assets_check_url */
    const char *label;          /* the file's relative path, for messages */
    const char *md5;            /* 32 lower-case hex digits, or NULL / "" when none was given */
    uint64_t    size;           /* declared */
    uint64_t    budget;         /* bytes the asset may still take */
} bmq_assets_download_t;

/* 0 with the file's sha256 (its name in the cache); -1 with err. */
int bmq_assets_download (bmq_assets_cache_t *cache, const bmq_assets_http_policy_t *policy,
                         const bmq_assets_download_t *d, char sha256[65], char *err, size_t errlen);

#endif
