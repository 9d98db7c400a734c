/* roles — the role table (roles.def) and the checks every service makes. */
#include "roles.h"
#include "audit_client.h"
#include "auth.h"
#include "bus.h"
#include "config.h"
#include "log.h"
#include "service_registry.h"

#include <stdio.h>
#include <string.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

static const bmq_role_rule_t s_rules[] = {
#define BMQ_RULE(to, msg, command, clients, path, services) { to, BMQ_MSG_##msg, command, clients, path, services },
#include "roles.def"
#undef BMQ_RULE
    { NULL, BMQ_MSG_UNKNOWN, NULL, 0, 0, NULL }
};

/* The one role model: every role, the bits it holds, and what it means as a least role. The first
 * four hold one bit each (their names are how a rule's set is told: s_roles_text). */
static const struct { const char *name; bmq_role_t role; unsigned bit; unsigned needs; } s_roles[] = {
    { "viewer",   BMQ_ROLE_VIEWER,   BMQ_R_VIEWER,   BMQ_NEEDS_VIEWER },
    { "operator", BMQ_ROLE_OPERATOR, BMQ_R_OPERATOR, BMQ_NEEDS_OPERATOR },
    { "reviewer", BMQ_ROLE_REVIEWER, BMQ_R_REVIEWER, BMQ_NEEDS_REVIEWER },
    { "admin",    BMQ_ROLE_ADMIN,    BMQ_R_ADMIN,    BMQ_NEEDS_ADMIN },
    { "operator+reviewer", BMQ_ROLE_OPERATOR_REVIEWER, BMQ_R_OPERATOR | BMQ_R_REVIEWER, BMQ_NEEDS_ADMIN },   /* the page's `web` key */
};
#define N_ROLES 4               /* the single-bit ones */
#define N_MODEL (sizeof s_roles / sizeof s_roles[0])

bmq_role_t bmq_role_parse (const char *name)
{
    for (size_t i = 0; name && i < N_MODEL; i++)
        if (!strcmp (name, s_roles[i].name)) return s_roles[i].role;
    return BMQ_ROLE_NONE;
}

const char *bmq_role_name (bmq_role_t role)
{
    for (size_t i = 0; i < N_MODEL; i++)
        if (s_roles[i].role == role) return s_roles[i].name;
    return "none";
}

unsigned bmq_role_bits (bmq_role_t role)
{
    for (size_t i = 0; i < N_MODEL; i++)
        if (s_roles[i].role == role) return s_roles[i].bit;
    return 0;
}

unsigned bmq_role_needs (bmq_role_t role)
{
    for (size_t i = 0; i < N_MODEL; i++)
        if (s_roles[i].role == role) return s_roles[i].needs;
    return 0;
}

bool bmq_role_allows (bmq_role_t have, bmq_role_t need)
{
    if (need == BMQ_ROLE_NONE) return true;
    unsigned bits = bmq_role_bits (have);
    if (need == BMQ_ROLE_OPERATOR_REVIEWER)          /* both of its bits, or admin */
        return (bits & BMQ_R_ADMIN) || (bits & (BMQ_R_OPERATOR | BMQ_R_REVIEWER)) == (BMQ_R_OPERATOR | BMQ_R_REVIEWER);
    return (bits & bmq_role_needs (need)) != 0;
}


unsigned bmq_roles_bit (const char *role)
{
    return bmq_role_bits (bmq_role_parse (role));
}

bool bmq_roles_client_role (const char *role) { return bmq_roles_bit (role) != 0; }

/* A key name as keys.h allows: 1..32 of [a-z0-9_-] (a little wider here:
 * anything printable without spaces, so it can be logged and audited). */
static bool s_name_ok (const char *s)
{
    size_t n = s ? strlen (s) : 0;
    if (!n || n > 63) return false;
    for (const unsigned char *p = (const unsigned char *) s; *p; p++)
        if (*p < 0x21 || *p > 0x7e) return false;
    return true;
}

int bmq_roles_principal (const bmq_envelope_t *env, bool curve, int flags, bmq_principal_t *who,
                         char *err, size_t errlen)
{
    memset (who, 0, sizeof *who);
    if (!strncmp (env->auth_name, BMQ_AUTH_UNTRUSTED, strlen (BMQ_AUTH_UNTRUSTED))) {
        /* a CURVE key that is not trusted now, or whose cert names no one:
         * never an in-process caller, whatever flags say (bus.c) */
        snprintf (who->name, sizeof who->name, "%s", env->auth_name);
        if (!strncmp (env->auth_name + 1, "revoked:", 8))
            ERR ("key '%s' is no longer trusted (revoked after it connected)", env->auth_name + 9);
        else
            ERR ("a key whose certificate has no name and role metadata is refused (%s)", env->auth_name + 1);
        return -1;
    }
    const json_t *obo = json_object_get (env->body, BMQ_ON_BEHALF_OF);
    bool known = env->auth_name[0] && env->auth_role[0];
    bool local = !known && (flags & BMQ_ROLES_TRUST_LOCAL);
    bool from_gateway = known && !strcmp (env->auth_role, "service") && !strcmp (env->auth_name, "gateway");
    if (!known && !local) {
        if (curve) { ERR ("no authenticated identity (CURVE is on: only known keys may send)"); return -1; }
        return 0;       /* CURVE off (benchmarks): unauthenticated but allowed */
    }
    if (known) {
        snprintf (who->name, sizeof who->name, "%s", env->auth_name);
        snprintf (who->role, sizeof who->role, "%s", env->auth_role);
        snprintf (who->transport, sizeof who->transport, "%s", env->auth_name);
        who->authenticated = true;
    }
    /* on_behalf_of counts from the gateway's key only (or its own threads) */
    if (!(from_gateway || local) || !obo) {
        if (local && curve) { ERR ("an in-process request without on_behalf_of (the HTTP layer must say who)"); return -1; }
        return 0;
    }
    const char *name = json_string_value (json_object_get (obo, "name"));
    const char *role = json_string_value (json_object_get (obo, "role"));
    if (!json_is_object (obo) || !s_name_ok (name) || !bmq_roles_client_role (role)) {
        ERR ("on_behalf_of must be {name, role} with a client role (viewer, operator, reviewer, admin)");
        return -1;
    }
    snprintf (who->name, sizeof who->name, "%s", name);
    snprintf (who->role, sizeof who->role, "%s", role);
    if (local) snprintf (who->transport, sizeof who->transport, "inproc");
    who->via_gateway = from_gateway;
    who->authenticated = true;
    return 0;
}

static bool s_in_list (const char *list, const char *name) { return bmq_service_listed (list, name); }

static bool s_rule_matches (const bmq_role_rule_t *r, const char *to, bmq_msg_type_t type)
{
    return r->type == type && (!strcmp (r->to, "*") || !strcmp (r->to, to));
}

/* The row that governs (to, type, command): the one for this command, else
 * the NULL-command row (the fallback). */
static const bmq_role_rule_t *s_find (const char *to, bmq_msg_type_t type, const char *command, const bmq_role_rule_t *after)
{
    const bmq_role_rule_t *fallback = NULL;
    for (const bmq_role_rule_t *r = after ? after + 1 : s_rules; r->to; r++) {
        if (!s_rule_matches (r, to, type)) continue;
        if (r->command && command && !strcmp (r->command, command)) return r;
        if (!r->command && !fallback) fallback = r;
    }
    return fallback;
}

static void s_roles_text (unsigned mask, char *buf, size_t len)
{
    buf[0] = 0;
    size_t used = 0;
    for (size_t i = 0; i < N_ROLES; i++)
        if (mask & s_roles[i].bit)
            used += (size_t) snprintf (buf + used, used < len ? len - used : 0, "%s%s", used ? " or " : "", s_roles[i].name);
}

int bmq_roles_allowed (const char *to, bmq_msg_type_t type, const char *command, const bmq_principal_t *who,
                       char *err, size_t errlen)
{
    if (!who->authenticated) return 0;      /* CURVE off */
    const char *what = bmq_msg_type_name (type);
    const bmq_role_rule_t *r = s_find (to, type, command, NULL);
    if (!r) {
        ERR ("forbidden: no role may send %s to %s", what, to);
        return -1;
    }
    unsigned bit = bmq_roles_bit (who->role);
    char roles[96], services[256];
    s_roles_text (r->clients, roles, sizeof roles);
    bmq_service_list_text (r->services, services, sizeof services);
    if (bit) {
        bmq_role_path_t path = who->via_gateway ? BMQ_PATH_VIA : BMQ_PATH_DIRECT;
        if ((r->clients & bit) && (r->path & path)) return 0;
        if (!(r->clients & bit) && r->clients)
            ERR ("forbidden: %s%s%s to %s needs role %s (%s '%s' is %s)", what, command ? " " : "", command ? command : "",
                 to, roles, who->via_gateway ? "client" : "key", who->name, who->role);
        else if (!r->clients)
            ERR ("forbidden: %s to %s is for the service key%s of %s only (%s '%s' is %s)", what, to,
                 strchr (services, ' ') ? "s" : "", services, who->via_gateway ? "client" : "key", who->name, who->role);
        else
            ERR ("forbidden: %s to %s is accepted %s only (role %s)", what, to,
                 r->path == BMQ_PATH_VIA ? "through the gateway" : "from a client's own key", roles);
        return -1;
    }
    if (!strcmp (who->role, "service") && !who->via_gateway) {
        if (s_in_list (r->services, who->name)) return 0;
        if (*r->services)
            ERR ("forbidden: %s to %s is for the service key%s of %s only (key '%s' may not)", what, to,
                 strchr (services, ' ') ? "s" : "", services, who->name);
        else if (r->path & BMQ_PATH_VIA)
            ERR ("forbidden: %s to %s needs role %s, carried by the gateway on behalf of a client (service key '%s' may not)",
                 what, to, roles, who->name);
        else
            ERR ("forbidden: %s to %s needs role %s (service key '%s' may not)", what, to, roles, who->name);
        return -1;
    }
    ERR ("forbidden: unknown role '%s' of '%s'", who->role, who->name);
    return -1;
}

int bmq_roles_check (const bmq_envelope_t *env, const char *to, bool curve, int flags, bmq_principal_t *who,
                     char *err, size_t errlen)
{
    if (bmq_roles_principal (env, curve, flags, who, err, errlen)) return -1;
    const char *command = env->type == BMQ_MSG_SCENE_REQUEST ? bmq_body_str (env, "command") : NULL;
    return bmq_roles_allowed (to, env->type, command, who, err, errlen);
}

bmq_envelope_t *bmq_roles_refusal (const bmq_envelope_t *env, const char *why)
{
    if (env->type == BMQ_MSG_ERROR) return NULL;
    return bmq_envelope_error (env, "forbidden", "%s", why);
}

json_t *bmq_roles_refusal_record (const bmq_envelope_t *env, const char *to, const bmq_principal_t *who,
                                  const char *why)
{
    json_t *data = json_pack ("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "name", who->name[0] ? who->name : env->auth_name,
                              "role", who->role[0] ? who->role : env->auth_role, "type", bmq_msg_type_name (env->type),
                              "service", to, "reason", why, "key", env->auth_name, "claimed_sender", env->sender);
    if (who->via_gateway) json_object_set_new (data, "via", json_string (who->transport));
    if (env->type == BMQ_MSG_SCENE_REQUEST && bmq_body_str (env, "command"))
        json_object_set_new (data, "command", json_string (bmq_body_str (env, "command")));
    return data;
}

void bmq_roles_set_on_behalf_of (json_t *body, const char *name, const char *role)
{
    if (!body) return;
    if (name && *name && role && *role)
        json_object_set_new (body, BMQ_ON_BEHALF_OF, json_pack ("{s:s, s:s}", "name", name, "role", role));
    else
        json_object_del (body, BMQ_ON_BEHALF_OF);       /* CURVE off: nobody to name, and nothing forged passes */
}

json_t *bmq_roles_table_json (void)
{
    json_t *rows = json_array ();
    for (const bmq_role_rule_t *r = s_rules; r->to; r++) {
        json_t *roles = json_array (), *services = json_array ();
        for (size_t i = 0; i < N_ROLES; i++)
            if (r->clients & s_roles[i].bit) json_array_append_new (roles, json_string (s_roles[i].name));
        char list[256];
        bmq_service_list_text (r->services, list, sizeof list);
        for (char *save = NULL, *t = strtok_r (list, " ", &save); t; t = strtok_r (NULL, " ", &save))
            json_array_append_new (services, json_string (t));
        json_array_append_new (rows, json_pack ("{s:s, s:s, s:s?, s:o, s:s, s:o}", "to", r->to,
            "type", bmq_msg_type_name (r->type), "command", r->command, "roles", roles,
            "path", r->path == BMQ_PATH_DIRECT ? "direct" : r->path == BMQ_PATH_VIA ? "via gateway" : "direct or via gateway",
            "services", services));
    }
    return rows;
}

bool bmq_roles_curve (const bmq_config_t *cfg) { return cfg && bmq_config_bool (cfg, "security.curve"); }

bool bmq_roles_refused (zsock_t *sock, zframe_t *rid, const bmq_envelope_t *env, const char *to, bool curve,
                        int flags, bmq_audit_t *audit)
{
    bmq_principal_t who;
    char why[512];
    if (bmq_roles_check (env, to, curve, flags, &who, why, sizeof why) == 0) return false;
    /* one record per key, service and message type per second, with a count,
     * and one log line: a flood stays bounded in both */
    bool first = true;
    if (audit) {
        char key[200];
        snprintf (key, sizeof key, "%s|%s|%s", who.name[0] ? who.name : env->auth_name, to, bmq_msg_type_name (env->type));
        first = bmq_audit_count (audit, env->cid, "auth.refused", key, bmq_roles_refusal_record (env, to, &who, why));
    }
    if (first)
        bmq_warn ("%s refused %s from '%s' (%s): %s", to, bmq_msg_type_name (env->type), who.name[0] ? who.name : env->auth_name,
                  who.role[0] ? who.role : env->auth_role, why);
    bmq_envelope_t *reply = bmq_roles_refusal (env, why);
    if (reply && sock) bmq_bus_send_and_destroy (sock, rid, &reply);     /* rid stays the caller's */
    bmq_envelope_destroy (&reply);
    return true;
}
