/* assets_cache — a content-addressed store of downloaded asset files, and a
 * manifest per asset key.
 *
 * Layout under the cache dir: `ab/abcdef…` (the sha256 of the bytes, hex;
 * the first two digits name the folder) and `m/<sha256 of the key>` for
 * manifests. No name that came from a source is ever used on disk.
 *
 * Safety contract:
 *  - The cache dir is created 0700 when missing (its parent must exist). A
 *    cache dir that is a symlink, not a directory, owned by another user or
 *    writable by group or others is refused.
 *  - Everything is reached relative to the open directory (openat and
 *    friends) with O_NOFOLLOW: a symlink planted anywhere in the cache is
 *    refused, never followed.
 *  - Bytes are written to a temp file in the cache dir (O_CREAT|O_EXCL|
 *    O_NOFOLLOW, 0600), hashed as they arrive, then renamed to their sha256
 *    name; a failed or abandoned write removes its temp file, and opening
 *    the cache removes temp files older than an hour (a process died).
 *  - Reading a file back checks its size and sha256 (a cache tampered with,
 *    or cut by a crash, is an error, not content). */
#ifndef BMQ_ASSETS_CACHE_H
#define BMQ_ASSETS_CACHE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bmq_assets_cache_t bmq_assets_cache_t;
typedef struct bmq_assets_cache_writer_t bmq_assets_cache_writer_t;
typedef struct bmq_assets_cache_reader_t bmq_assets_cache_reader_t;

bmq_assets_cache_t *bmq_assets_cache_open (const char *dir, char *err, size_t errlen);
void        bmq_assets_cache_close (bmq_assets_cache_t **self_p);
const char *bmq_assets_cache_dir (const bmq_assets_cache_t *self);

/* A new temp file in the cache; NULL with err. */
bmq_assets_cache_writer_t *bmq_assets_cache_begin (bmq_assets_cache_t *self, char *err, size_t errlen);
int      bmq_assets_cache_write (bmq_assets_cache_writer_t *w, const void *data, size_t len, char *err, size_t errlen);
/* Forget what was written (a retry starts over). 0 / -1. */
int      bmq_assets_cache_rewind (bmq_assets_cache_writer_t *w, char *err, size_t errlen);
uint64_t bmq_assets_cache_written (const bmq_assets_cache_writer_t *w);
/* Name the file by its sha256 (hex into sha256) and free the writer, whatever
 * the outcome. 0 / -1 (the temp file is removed). */
int      bmq_assets_cache_commit (bmq_assets_cache_writer_t **w_p, char sha256[65], char *err, size_t errlen);
/* Remove the temp file and free the writer. */
void     bmq_assets_cache_abort (bmq_assets_cache_writer_t **w_p);

/* Whether a regular file named sha256 of exactly `size` bytes is present. */
bool bmq_assets_cache_has (bmq_assets_cache_t *self, const char *sha256, uint64_t size);
/* Read the file named sha256 into dst (size bytes), checking its size and
 * its sha256. 0 / -1 with err. */
int  bmq_assets_cache_read (bmq_assets_cache_t *self, const char *sha256, uint64_t size, void *dst,
                            char *err, size_t errlen);

/* The same in pieces, for files too large to hold at once: a reader checks
 * the size when it opens and the sha256 when its last byte is read (that
 * read fails when they differ). NULL / -1 with err. */
bmq_assets_cache_reader_t *bmq_assets_cache_reader (bmq_assets_cache_t *self, const char *sha256, uint64_t size,
                                                    char *err, size_t errlen);
int      bmq_assets_cache_reader_read (bmq_assets_cache_reader_t *r, void *dst, size_t len, char *err, size_t errlen);
uint64_t bmq_assets_cache_reader_left (const bmq_assets_cache_reader_t *r);
void     bmq_assets_cache_reader_close (bmq_assets_cache_reader_t **r_p);

/* The manifest for a key (any text naming an asset): store (a copy of doc),
 * load (new reference; NULL with err "" when there is none, NULL with err
 * set when it is unreadable or not a JSON object of at most 1 MiB). */
int     bmq_assets_cache_put_manifest (bmq_assets_cache_t *self, const char *key, const json_t *doc,
                                       char *err, size_t errlen);
json_t *bmq_assets_cache_get_manifest (bmq_assets_cache_t *self, const char *key, char *err, size_t errlen);

/* Whether text is 64 lower-case hex digits. */
bool bmq_assets_sha256_hex_valid (const char *text);

#endif
