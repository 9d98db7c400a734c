/* assets_fixture — what every assets-client test case shares: a fresh temp
 * dir R with the cache at R/t/cache, a fake Poly Haven (fake_polyhaven.h),
 * client options with short timeouts, small asset files and their
 * /files/ID trees, and the scan that proves nothing was written outside the
 * cache: every entry under R must be the cache's own shape (R/t, R/t/cache,
 * cache/ab/<64 hex starting ab>, cache/m/<64 hex>) or one the case planted. */
#ifndef BMQ_ASSETS_FIXTURE_H
#define BMQ_ASSETS_FIXTURE_H

#include "assets_polyhaven.h"
#include "fake_polyhaven.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    fake_ph_t *fake;
    char root[256];             /* R */
    char tdir[300];             /* R/t: the directory above the cache */
    char cache[320];            /* R/t/cache */
    bmq_polyhaven_options_t opts;
    const char *planted[8];     /* paths under R a case put there itself */
} fx_t;

int  fx_setup (void **state);
int  fx_teardown (void **state);    /* asserts the scan, removes R */
/* A client on the fixture's options (asserts it opens). */
bmq_polyhaven_t *fx_client (fx_t *fx);
/* Serve bytes at /dl/NAME and return a {url, md5, size} leaf for them. */
json_t *fx_serve (fx_t *fx, const char *name, const void *bytes, size_t len);
/* The leaf with its md5 or size replaced (md5 NULL: keep; size < 0: keep). */
json_t *fx_leaf (const char *url, const char *md5, long long size);
/* Serve a JSON document at path. */
void fx_json (fx_t *fx, const char *path, json_t *doc);
/* Fail the test when R holds anything the cache did not write or the case did not plant. */
void fx_assert_clean (fx_t *fx);
/* Assert text contains every needle (NULL-terminated), printing text when not. */
void fx_assert_says (const char *text, ...);
/* A model's /files tree: gltf → 1k → gltf (the tiny glTF) with `includes`
 * (path → leaf, taken), and a blend entry the client must not touch. */
json_t *fx_model_tree (fx_t *fx, json_t *includes);
/* Regular files under the cache's ab/ folders (manifests not counted). */
int  fx_cached_files (fx_t *fx);
/* Whether bytes sit in the cache under their sha256, a regular 0600 file. */
bool fx_in_cache (fx_t *fx, const void *bytes, size_t len);
/* The sha256 of bytes, hex. */
void fx_sha256 (const void *bytes, size_t len, char out[65]);

/* Small files. */
extern const unsigned char fx_hdr[];   extern const size_t fx_hdr_len;
extern const unsigned char fx_png[];   extern const size_t fx_png_len;
extern const unsigned char fx_jpg[];   extern const size_t fx_jpg_len;
extern const char fx_gltf[];
extern const unsigned char fx_bin[];   extern const size_t fx_bin_len;

#endif
