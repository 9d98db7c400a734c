/* msgpack_json — bounded conversion between msgpack objects and jansson trees.
 * Used only by codec.c; kept apart so the fuzzers can reach it directly. */
#ifndef BMQ_MSGPACK_JSON_H
#define BMQ_MSGPACK_JSON_H

#include <jansson.h>
#include <msgpack.h>
#include <stddef.h>

/* Walk the raw msgpack bytes without allocating, checking that the input holds
 * exactly one value, that every declared length fits in the bytes that remain,
 * that nesting stays within max_depth and the item count within max_items, and
 * that no ext types appear. msgpack-c pre-allocates each container for its
 * declared count, so this must pass before msgpack_unpack_next sees the bytes.
 * 0 / -1 with err. */
int bmq_msgpack_prescan (const unsigned char *buf, size_t len, int max_depth, size_t max_items,
                         char *err, size_t errlen);

/* msgpack object → new jansson value. Binary and ext values, non-string map
 * keys, invalid UTF-8, non-finite floats and integers above INT64_MAX are
 * errors. NULL with err on failure. */
json_t *bmq_msgpack_to_json (const msgpack_object *obj, int max_depth, char *err, size_t errlen);

/* jansson value → msgpack. 0 / -1 (too deep). */
int bmq_json_pack (msgpack_packer *pk, const json_t *value, int max_depth);

#endif
