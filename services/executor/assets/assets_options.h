/* assets_options — the settings every asset source shares, read once from
 * the configuration's assets section (so each source's options reuse them
 * rather than copy the rules):
 *  - cache_dir: assets.cache_dir, or assets-cache/ next to audit.database;
 *  - max_download_bytes: assets.max_download_mb (1..1048576) in bytes;
 *  - http: timeout_ms (assets.timeout_ms, 0..86400000) and retries
 *    (assets.retries, 0..20); the policy's other fields stay 0 (defaults).
 * An out-of-range value is an error naming the key, never clamped. */
#ifndef BMQ_ASSETS_OPTIONS_H
#define BMQ_ASSETS_OPTIONS_H

#include "assets_http.h"
#include "config.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char     cache_dir[1024];
    uint64_t max_download_bytes;
    bmq_assets_http_policy_t http;
} bmq_assets_shared_options_t;

/* 0 / -1 with err. */
int bmq_assets_shared_options_from_config (bmq_assets_shared_options_t *o, const bmq_config_t *cfg,
                                           char *err, size_t errlen);

#endif
