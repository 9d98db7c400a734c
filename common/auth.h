/* auth — the authenticated identity of a received envelope.
 *
 * With CURVE on (security.curve, the default), every socket made by
 * bmq_bus_bind is a CURVE server whose ZAP handler (one zauth actor per
 * process, see bus.h) accepts only the public certs in <keys_dir>/trusted.
 * bmq_bus_recv copies the metadata of the cert that authenticated the
 * connection into env->auth_name / env->auth_role, checking each message's
 * key against <keys_dir>/trusted as it is now (a key revoked after the
 * handshake is refused on its next message; bus.h). The body's `sender` is a
 * claim; these two fields are the proof. Both are empty when CURVE is off or
 * the envelope did not come from a socket.
 *
 * Roles (blendmq keys add-client NAME --role ROLE):
 *   viewer, operator, reviewer, admin   clients (people and their tools)
 *   service                             one key per service: gateway, planner,
 *                                       validator, executor, audit */
#ifndef BMQ_AUTH_H
#define BMQ_AUTH_H

#include "codec.h"
#include <stdbool.h>

/* The client roles are the one role model's (roles.h: bmq_role_t, bmq_role_name);
 * a service key's role is this. */
#define BMQ_ROLE_SERVICE  "service"

/* auth_name starts with this (and auth_role is empty) when the connection's
 * CURVE key is not trusted now ("!revoked:NAME": `keys revoke` after the
 * handshake) or its cert names no name and role ("!unnamed:KEY"): every role
 * check refuses such an envelope, whatever its body says. */
#define BMQ_AUTH_UNTRUSTED "!"

/* True when env was authenticated with a key of exactly this role. */
bool bmq_auth_is (const bmq_envelope_t *env, const char *role);
/* True when env was authenticated as the service `name` (role service and
 * key name `name`, e.g. "executor"). */
bool bmq_auth_is_service (const bmq_envelope_t *env, const char *name);
/* True when env carries an authenticated identity at all. */
bool bmq_auth_known (const bmq_envelope_t *env);
/* A client role name (viewer, operator, reviewer, admin) or "service". */
bool bmq_auth_role_valid (const char *role);

#endif
