/* keys — a deployment's CURVE keys and HTTP tokens, in one keys dir.
 *
 * Layout (security.keys_dir; `blendmq up` uses <run dir>/keys), the dir 0700
 * and owned by the user, every file 0600 created O_EXCL|O_NOFOLLOW:
 *   NAME.cert          public cert (czmq zcert format), metadata name, role
 *   NAME.cert_secret   its secret key (zcert format)
 *   NAME.token         clients only: HTTP bearer token, 64 hex chars (32 random bytes) + "\n"
 *   trusted/NAME.cert  the zcertstore directory: every public cert a server accepts
 *   revoked/           keypairs of revoked clients (no longer trusted)
 * Keys come from czmq (zcert_new: libzmq's zmq_curve_keypair); tokens from
 * libsodium's randombytes_buf. No hand-written crypto. */
#ifndef BMQ_KEYS_H
#define BMQ_KEYS_H

#include <czmq.h>
#include <jansson.h>
#include <stdbool.h>

/* Every service of the registry (service_registry.def), `up`'s supervisor
 * included, each with its own keypair (role "service"). bmq_keys_init adds a
 * missing one to an existing keys dir. */
extern const char *const bmq_keys_services[];     /* NULL-terminated */

/* Create the keys dir if needed (0700), and every key that is missing: one per
 * service, and clients cli (admin), web (admin), panel (admin), mcp
 * (operator) with their tokens. Existing keys are kept, so this is safe to
 * run again. *created_out (may be NULL) counts new keypairs. 0 / -1 with err. */
int bmq_keys_init (const char *dir, int *created_out, char *err, size_t errlen);
/* A new client keypair, trusted, with a token. Fails if NAME exists. */
int bmq_keys_add_client (const char *dir, const char *name, const char *role, char *err, size_t errlen);
/* Stop trusting a client: trusted/NAME.cert and NAME.token are removed, the
 * keypair moves to revoked/. Servers refuse its next connection (zcertstore
 * reloads trusted/ when it changes); a connection already authenticated stays
 * open until it breaks. Service keys cannot be revoked. */
int bmq_keys_revoke (const char *dir, const char *name, char *err, size_t errlen);
/* [{name, role, public_key, trusted, token}] sorted by name; NULL with err. */
json_t *bmq_keys_list (const char *dir, char *err, size_t errlen);
/* The keypair NAME (secret included); NULL with err. */
zcert_t *bmq_keys_load (const char *dir, const char *name, char *err, size_t errlen);
/* The public cert NAME (from NAME.cert, else revoked/… is NOT consulted); NULL with err. */
zcert_t *bmq_keys_load_public (const char *dir, const char *name, char *err, size_t errlen);
/* The keys dir must be a real directory (lstat: no symlink), owned by us, mode
 * 0700. 0 / -1 with err. */
int bmq_keys_check_dir (const char *dir, char *err, size_t errlen);
/* For tests and tools that start services themselves: make the keys in `dir`
 * (bmq_keys_init), export BLENDMQ_SECURITY_KEYS_DIR=dir so that child
 * processes' configs use it, and start this process's bus security with the
 * key `self_key` (bmq_bus_security_init; the environment's security.* apply).
 * 0 / -1 with err. */
int bmq_keys_setup_process (const char *dir, const char *self_key, char *err, size_t errlen);
/* A key name: 1..32 of [a-z0-9_-], starting with a letter or digit. */
bool bmq_keys_name_valid (const char *name);

#endif
