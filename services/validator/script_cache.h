/* script_cache — a bounded cache of script verdicts (issue 14): a script
 * submitted again costs a sha256 and a copy instead of a parse and a walk.
 *
 * Keyed by the sha256 of the exact bytes checked. One cache belongs to one
 * validator (script_validator.c), whose rules and RNA table are fixed for its
 * whole life, so the key plus the cache's owner is the identity of what was
 * checked and under which rules: a validator built with other rules or
 * another RNA table starts with an empty cache. bmq_script_validate is a
 * pure function of (bytes, rules, RNA) — the intake's mode only chooses
 * which bytes — so a cached verdict is exactly the one a fresh check would
 * give, stats aside.
 *
 * At most `capacity` verdicts (least recently used evicted); verdicts are
 * stored as private deep copies and handed out as new deep copies, so no
 * caller ever sees or changes another's. Thread-safe (one mutex). */
#ifndef BMQ_SCRIPT_CACHE_H
#define BMQ_SCRIPT_CACHE_H

#include <jansson.h>
#include <stddef.h>

#define BMQ_SCRIPT_CACHE_KEY_BYTES 32          /* crypto_hash_sha256_BYTES */
#define BMQ_SCRIPT_CACHE_DEFAULT 256

typedef struct bmq_script_cache_t bmq_script_cache_t;

/* capacity 0: a cache that keeps nothing. NULL when out of memory. */
bmq_script_cache_t *bmq_script_cache_new (size_t capacity);
void bmq_script_cache_destroy (bmq_script_cache_t **self_p);

/* A new copy of the verdict stored under key, or NULL. */
json_t *bmq_script_cache_get (bmq_script_cache_t *self, const unsigned char key[BMQ_SCRIPT_CACHE_KEY_BYTES]);
/* Store a copy of verdict under key (the caller keeps its own). */
void bmq_script_cache_put (bmq_script_cache_t *self, const unsigned char key[BMQ_SCRIPT_CACHE_KEY_BYTES],
                           const json_t *verdict);
/* Verdicts held now (tests). */
size_t bmq_script_cache_size (bmq_script_cache_t *self);

#endif
