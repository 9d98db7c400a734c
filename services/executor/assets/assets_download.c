/* assets_download — stream one file into the cache, check its size and md5. */
#include "assets_download.h"
#include "assets_md5.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    bmq_assets_cache_writer_t *w;
    bmq_assets_md5_t md5;
    char err[512];
} s_sink_t;

static int s_sink (void *ctx, const void *data, size_t len)
{
    s_sink_t *s = ctx;
    bmq_assets_md5_update (&s->md5, data, len);
    return bmq_assets_cache_write (s->w, data, len, s->err, sizeof s->err);
}

static int s_reset (void *ctx)
{
    s_sink_t *s = ctx;
    bmq_assets_md5_init (&s->md5);
    return bmq_assets_cache_rewind (s->w, s->err, sizeof s->err);
}

int bmq_assets_download (bmq_assets_cache_t *cache, const bmq_assets_http_policy_t *policy,
                         const bmq_assets_download_t *d, char sha256[65], char *err, size_t errlen)
{
    char host[256];
    bmq_assets_http_host (d->url, host, sizeof host);
    if (d->size > d->budget) {
        snprintf (err, errlen, "file %s declares %llu bytes, more than the %llu left under assets.max_download_mb: refused before downloading",
                  d->label, (unsigned long long) d->size, (unsigned long long) d->budget);
        return -1;
    }
    s_sink_t s = { 0 };
    bmq_assets_md5_init (&s.md5);
    s.w = bmq_assets_cache_begin (cache, err, errlen);
    if (!s.w) return -1;
    char what[400];
    snprintf (what, sizeof what, "file %s", d->label);
    char cap_label[96];
    snprintf (cap_label, sizeof cap_label, "the %llu bytes it declared", (unsigned long long) d->size);
    bmq_assets_http_request_t req = {
        .url = d->url, .max_bytes = d->size, .cap_label = cap_label, .what = what,
        .sink = s_sink, .reset = s_reset, .ctx = &s, .sink_err = s.err, .sink_err_len = sizeof s.err,
    };
    bmq_assets_http_error_t herr;
    if (bmq_assets_http_get (&req, policy, NULL, NULL, &herr)) {
        snprintf (err, errlen, "%s", herr.message);
        bmq_assets_cache_abort (&s.w);
        return -1;
    }
    uint64_t got = bmq_assets_cache_written (s.w);
    char md5[33];
    bmq_assets_md5_hex (&s.md5, md5);
    if (got != d->size) {
        snprintf (err, errlen, "file %s from %s: got %llu bytes, the source declared %llu", d->label, host,
                  (unsigned long long) got, (unsigned long long) d->size);
        bmq_assets_cache_abort (&s.w);
        return -1;
    }
    if (d->md5 && *d->md5 && strcmp (md5, d->md5)) {
        snprintf (err, errlen, "file %s from %s: md5 mismatch: the bytes hash to %s, the source declared %s", d->label, host, md5, d->md5);
        bmq_assets_cache_abort (&s.w);
        return -1;
    }
    return bmq_assets_cache_commit (&s.w, sha256, err, errlen);
}
