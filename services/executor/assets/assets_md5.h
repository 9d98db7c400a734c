/* assets_md5 — MD5 (RFC 1321), incremental, for checking the checksums an
 * asset source declares. Not for security: sha256 names what is cached. */
#ifndef BMQ_ASSETS_MD5_H
#define BMQ_ASSETS_MD5_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t state[4];
    uint64_t bytes;
    uint8_t  block[64];
    size_t   fill;
} bmq_assets_md5_t;

void bmq_assets_md5_init (bmq_assets_md5_t *m);
void bmq_assets_md5_update (bmq_assets_md5_t *m, const void *data, size_t len);
/* The digest as 32 lower-case hex digits and a NUL. */
void bmq_assets_md5_hex (bmq_assets_md5_t *m, char out[33]);

#endif
