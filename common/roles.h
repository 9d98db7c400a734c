/* roles — authorization: may the authenticated sender of an envelope send it
 * to this service? The table is data, in roles.def.
 *
 * Identity comes from env->auth_name / env->auth_role (set by bmq_bus_recv
 * from the CURVE key that authenticated the peer, never from the body):
 *   - a client key (viewer, operator, reviewer, admin) is checked against the
 *     rows' client roles, when the row lets clients send it directly;
 *   - a service key is checked against the rows' service names, except…
 *   - …the `gateway` service key forwarding a client's request: it puts the
 *     client's authenticated name and role in body.on_behalf_of {name, role}
 *     and the request is checked as that client, on rows that allow VIA.
 *     on_behalf_of from any other sender is ignored (never trusted).
 *   - no identity: allowed only when CURVE is off (security.curve false:
 *     benchmarks); with CURVE on it is refused. One exception, asked for with
 *     BMQ_ROLES_TRUST_LOCAL: the gateway's own HTTP/MCP threads, which
 *     authenticate requests by token and say who in body.on_behalf_of, come
 *     on an inproc socket of their own (never the CURVE front: a peer there
 *     without an identity is refused, never taken for an in-process one).
 *   - a CURVE key not trusted now (revoked after its handshake) or whose
 *     cert has no name and role (auth.h, BMQ_AUTH_UNTRUSTED): always refused.
 *
 * A refusal is an `error` reply (code `forbidden`, naming the roles needed)
 * and an audit record of kind `auth.refused`. */
#ifndef BMQ_ROLES_H
#define BMQ_ROLES_H

#include "codec.h"
#include <czmq.h>
#include <stdbool.h>

#define BMQ_ON_BEHALF_OF "on_behalf_of"

/* ---- the one role model, for the bus and HTTP (issue 31) -------------------------
 * Who may do what (issue 12). A key's role comes from its cert's metadata in
 * the keys dir. viewer: watch, scene, audit; operator: viewer + chat, plans,
 * script submit; reviewer: viewer + confirm scripts (a person); operator+reviewer:
 * both (the page's `web` key: a person who builds and confirms, but does not
 * administer); admin: everything. Operator and reviewer are separate: a model
 * is not a person.
 * A role holds bits (BMQ_R_*); a rule or a route names what it needs as the
 * set of bits any one of which lets a holder in (BMQ_NEEDS_*, the CLIENTS of
 * roles.def). HTTP routes and MCP tools name a least role (bmq_role_t): its
 * BMQ_NEEDS_* set is bmq_role_needs (). */
enum {
    BMQ_R_VIEWER   = 1,
    BMQ_R_OPERATOR = 2,
    BMQ_R_REVIEWER = 4,
    BMQ_R_ADMIN    = 8,
};
#define BMQ_NEEDS_VIEWER   (BMQ_R_VIEWER | BMQ_R_OPERATOR | BMQ_R_REVIEWER | BMQ_R_ADMIN)
#define BMQ_NEEDS_OPERATOR (BMQ_R_OPERATOR | BMQ_R_ADMIN)
#define BMQ_NEEDS_REVIEWER (BMQ_R_REVIEWER | BMQ_R_ADMIN)
#define BMQ_NEEDS_ADMIN    (BMQ_R_ADMIN)

typedef enum { BMQ_ROLE_NONE = 0, BMQ_ROLE_VIEWER, BMQ_ROLE_OPERATOR, BMQ_ROLE_REVIEWER, BMQ_ROLE_ADMIN,
               BMQ_ROLE_OPERATOR_REVIEWER } bmq_role_t;

bmq_role_t  bmq_role_parse (const char *name);            /* BMQ_ROLE_NONE when unknown */
const char *bmq_role_name (bmq_role_t role);              /* "none" when unknown */
/* The bits `role` holds (0: none). */
unsigned    bmq_role_bits (bmq_role_t role);
/* The BMQ_NEEDS_* set of a least role (0 for NONE: anyone, no key needed). */
unsigned    bmq_role_needs (bmq_role_t role);
/* `have` may do what needs `need`: need is NONE, or have holds a bit of its set
 * (operator+reviewer as a need: both, or admin). The bus's rows decide the same way. */
bool        bmq_role_allows (bmq_role_t have, bmq_role_t need);

typedef enum { BMQ_PATH_DIRECT = 1, BMQ_PATH_VIA = 2, BMQ_PATH_BOTH = 3 } bmq_role_path_t;

typedef struct {
    const char     *to;
    bmq_msg_type_t  type;
    const char     *command;
    unsigned        clients;
    bmq_role_path_t path;
    const char     *services;
} bmq_role_rule_t;

/* Who a request is checked as. */
typedef struct {
    char name[64];            /* key name ("" unauthenticated, curve off) */
    char role[24];            /* viewer operator reviewer operator+reviewer admin service ("") */
    char transport[64];       /* the key that carried it (= name unless via) */
    bool via_gateway;         /* name/role come from on_behalf_of, carried by the gateway */
    bool authenticated;       /* false only with CURVE off */
} bmq_principal_t;

/* check flags */
#define BMQ_ROLES_TRUST_LOCAL 1

/* A role name's bits (bmq_role_bits; 0 for "service" and anything unknown). */
unsigned bmq_roles_bit (const char *role);
bool bmq_roles_client_role (const char *role);

/* Who `env` is to be checked as; -1 with err when it cannot be told (no
 * identity with CURVE on, a malformed on_behalf_of from the gateway). */
int bmq_roles_principal (const bmq_envelope_t *env, bool curve, int flags, bmq_principal_t *who,
                         char *err, size_t errlen);

/* May `who` send `type` (with `command`, may be NULL) to `to`? 0 yes; -1 no,
 * with a message naming what is needed in err. */
int bmq_roles_allowed (const char *to, bmq_msg_type_t type, const char *command, const bmq_principal_t *who,
                       char *err, size_t errlen);

/* Both: 0 allowed (who filled), -1 refused (err says why and what is needed). */
int bmq_roles_check (const bmq_envelope_t *env, const char *to, bool curve, int flags, bmq_principal_t *who,
                     char *err, size_t errlen);

/* The error reply for a refusal (code forbidden), or NULL when `env` is
 * itself an error (never answer an error). */
bmq_envelope_t *bmq_roles_refusal (const bmq_envelope_t *env, const char *why);
/* The data of an auth.refused audit record. */
json_t *bmq_roles_refusal_record (const bmq_envelope_t *env, const char *to, const bmq_principal_t *who,
                                  const char *why);

/* Put the client `who` into body.on_behalf_of (replacing whatever was there):
 * the gateway does it on everything it forwards for a client. */
void bmq_roles_set_on_behalf_of (json_t *body, const char *name, const char *role);

/* The hook every receiving service calls: check `env` at `to`; when refused,
 * log, audit (auth.refused, to `audit` if not NULL), answer `forbidden` on
 * `sock` (with `rid` on a ROUTER) and return true: the caller drops `env`.
 * `curve` is security.curve (bmq_roles_curve). */
struct bmq_audit_t;
bool bmq_roles_refused (zsock_t *sock, zframe_t *rid, const bmq_envelope_t *env, const char *to, bool curve,
                        int flags, struct bmq_audit_t *audit);
/* security.curve from the configuration. */
struct bmq_config_t;
bool bmq_roles_curve (const struct bmq_config_t *cfg);

/* The table as JSON rows {to, type, command?, roles: [...], path, services: [...]} (docs, tests). */
json_t *bmq_roles_table_json (void);

#endif
