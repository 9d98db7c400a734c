/* plan_seal — bind a validator's verdict to exactly the plan it checked.
 *
 * The plan hash is SHA-256 over the plan's canonical JSON (sorted keys,
 * compact, reals printed with 17 significant digits). A validator that accepts
 * a plan seals it: HMAC-SHA256(key, "accepted:" + hash) with a key shared by
 * validators and executors (security.verdict_key_file). The executor recomputes
 * the hash from the plan it received and checks the seal, so a plan changed
 * after validation, or never validated, is refused. */
#ifndef BMQ_PLAN_SEAL_H
#define BMQ_PLAN_SEAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define BMQ_SEAL_KEY_BYTES 32
#define BMQ_HEX_DIGEST     65      /* 64 hex chars + NUL */

typedef struct { unsigned char bytes[BMQ_SEAL_KEY_BYTES]; } bmq_seal_key_t;

int  bmq_plan_hash (const json_t *plan, char out[BMQ_HEX_DIGEST]);
/* Read a key file (64 hex chars, surrounding whitespace ignored). 0 / -1 with err. */
int  bmq_seal_key_load (const char *path, bmq_seal_key_t *key, char *err, size_t errlen);
/* Create a new random key file with mode 0600. 0 / -1. */
int  bmq_seal_key_create (const char *path, char *err, size_t errlen);
void bmq_seal_sign (const bmq_seal_key_t *key, const char *plan_hash, char out[BMQ_HEX_DIGEST]);
bool bmq_seal_verify (const bmq_seal_key_t *key, const char *plan_hash, const char *seal);

#endif
