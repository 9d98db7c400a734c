/* plan_seal — bind a validator's verdict to exactly the plan it checked.
 *
 * The plan hash is SHA-256 over the plan's canonical JSON (sorted keys,
 * compact, reals printed with 17 significant digits). A validator that accepts
 * a plan seals it: HMAC-SHA256(key, "accepted:" + hash) with a key shared by
 * validators and executors (security.verdict_key_file). The executor recomputes
 * the hash from the plan it received and checks the seal, so a plan changed
 * after validation, or never validated, is refused. Since issue 12 the seal
 * also names its executor, expires and is single-use (version 2, below). */
#ifndef BMQ_PLAN_SEAL_H
#define BMQ_PLAN_SEAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BMQ_SEAL_KEY_BYTES 32
#define BMQ_HEX_DIGEST     65      /* 64 hex chars + NUL */

typedef struct { unsigned char bytes[BMQ_SEAL_KEY_BYTES]; } bmq_seal_key_t;

int  bmq_plan_hash (const json_t *plan, char out[BMQ_HEX_DIGEST]);
/* Read a key file (64 hex chars, surrounding whitespace ignored). 0 / -1 with err. */
int  bmq_seal_key_load (const char *path, bmq_seal_key_t *key, char *err, size_t errlen);
/* Create a new random key file with mode 0600 (O_EXCL|O_NOFOLLOW: the path
 * must not exist). 0 / -1. */
int  bmq_seal_key_create (const char *path, char *err, size_t errlen);
/* Version 1 (subject only; no target, expiry or nonce). Executors no longer
 * accept these: use bmq_seal_make / bmq_seal_check. */
void bmq_seal_sign (const bmq_seal_key_t *key, const char *plan_hash, char out[BMQ_HEX_DIGEST]);
bool bmq_seal_verify (const bmq_seal_key_t *key, const char *plan_hash, const char *seal);

/* Version 2 seals (issue 12) bind the subject ("<plan hash>" or
 * "script:<sha256>") to the executor it is for, an expiry and a random nonce:
 *   "v2:<expires, unix ms>:<nonce, 32 hex>:<target executor>:<mac, 64 hex>"
 * mac = HMAC-SHA256(key, "blendmq-seal-v2" 0 subject 0 target 0 expires 0 nonce)
 * (0: a NUL byte). The executor refuses a seal made for another executor, an
 * expired one, and one whose nonce it has already accepted (the guard keeps
 * nonces until their expiry; it is bounded, and refuses rather than forgets
 * when full). Times are wall-clock: validators and executors may be on
 * different machines, so their clocks must agree to within BMQ_SEAL_SKEW_MS. */
#define BMQ_SEAL_MAX        (3 + 20 + 1 + 32 + 1 + 128 + 1 + 64 + 1)
#define BMQ_SEAL_TARGET_MAX 128
#define BMQ_SEAL_SKEW_MS    5000
#define BMQ_SEAL_TTL_DEFAULT_MS 300000

typedef enum {
    BMQ_SEAL_OK = 0,
    BMQ_SEAL_INVALID,       /* malformed, or the mac does not match this subject and key */
    BMQ_SEAL_WRONG_TARGET,  /* a valid seal, made for another executor */
    BMQ_SEAL_EXPIRED,
    BMQ_SEAL_TOO_LONG,      /* expires further ahead than the executor allows */
    BMQ_SEAL_REPLAYED,      /* its nonce was accepted before */
    BMQ_SEAL_BUSY           /* the replay guard is full of live nonces */
} bmq_seal_status_t;

typedef struct bmq_seal_guard_t bmq_seal_guard_t;

int64_t bmq_seal_now_ms (void);     /* wall clock, unix ms */
/* Make a seal for `target`, valid for ttl_ms from now. 0, or -1 when the
 * target is empty, too long or holds ':' / NUL-free but non-printable bytes. */
int  bmq_seal_make (const bmq_seal_key_t *key, const char *subject, const char *target, int64_t ttl_ms,
                    char out[BMQ_SEAL_MAX]);
/* Check a seal for `subject` at this executor (`self_name`) at time now_ms.
 * With a guard, an accepted seal's nonce is remembered (a second use is
 * REPLAYED) and seals expiring later than the guard's max TTL are TOO_LONG.
 * A message for logs / replies goes to why (may be NULL). */
bmq_seal_status_t bmq_seal_check (const bmq_seal_key_t *key, const char *subject, const char *seal,
                                  const char *self_name, int64_t now_ms, bmq_seal_guard_t *guard,
                                  char *why, size_t whylen);
const char *bmq_seal_status_name (bmq_seal_status_t status);   /* "invalid", "wrong_target", ... */

/* The replay guard: at most max_nonces remembered, each until its expiry;
 * seals may expire at most max_ttl_ms (+ skew) after they are checked. */
bmq_seal_guard_t *bmq_seal_guard_new (size_t max_nonces, int64_t max_ttl_ms);
void bmq_seal_guard_destroy (bmq_seal_guard_t **self_p);
size_t bmq_seal_guard_size (bmq_seal_guard_t *self);
/* Keep the nonces in `path` too (0600, one "nonce expires" a line): those
 * still live at now_ms are loaded now, and every nonce accepted from here on
 * is appended and fdatasync'd before its seal counts (when that fails the
 * seal is refused, BUSY). So a seal used before an executor restart is
 * REPLAYED after it, as long as it has not expired. Why this rather than
 * refusing seals issued before the start: a seal says when it expires, not
 * when it was made, and validators may use another TTL than the executor,
 * so "issued before" could only be guessed. 0 / -1 with err. */
int bmq_seal_guard_persist (bmq_seal_guard_t *self, const char *path, int64_t now_ms, char *err, size_t errlen);

#endif
