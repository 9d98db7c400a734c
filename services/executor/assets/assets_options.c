/* assets_options — the assets section's shared keys (cache, cap, timeouts). */
#include "assets_options.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bmq_assets_shared_options_from_config (bmq_assets_shared_options_t *o, const bmq_config_t *cfg,
                                           char *err, size_t errlen)
{
    memset (o, 0, sizeof *o);
    const char *dir = bmq_config_str (cfg, "assets.cache_dir");
    if (*dir) snprintf (o->cache_dir, sizeof o->cache_dir, "%s", dir);
    else {
        char *db = strdup (bmq_config_str (cfg, "audit.database"));
        if (!db) { snprintf (err, errlen, "out of memory"); return -1; }
        snprintf (o->cache_dir, sizeof o->cache_dir, "%s/assets-cache", dirname (db));
        free (db);
    }
    int64_t mb = bmq_config_int (cfg, "assets.max_download_mb");
    if (mb <= 0 || mb > (1 << 20)) {
        snprintf (err, errlen, "assets.max_download_mb must be 1..%d, not %lld", 1 << 20, (long long) mb);
        return -1;
    }
    o->max_download_bytes = (uint64_t) mb << 20;
    int64_t timeout = bmq_config_int (cfg, "assets.timeout_ms"), retries = bmq_config_int (cfg, "assets.retries");
    if (timeout < 0 || timeout > 86400000 || retries < 0 || retries > 20) {
        snprintf (err, errlen, "assets.timeout_ms (0..86400000) or assets.retries (0..20) out of range");
        return -1;
    }
    o->http.timeout_ms = (int) timeout;
    o->http.retries = (int) retries;
    return 0;
}
