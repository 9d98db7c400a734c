/* auth — the authenticated identity of a received envelope. */
#include "auth.h"
#include "roles.h"
#include <string.h>

bool bmq_auth_is (const bmq_envelope_t *env, const char *role)
{
    return env && role && env->auth_name[0] && !strcmp (env->auth_role, role);
}

bool bmq_auth_is_service (const bmq_envelope_t *env, const char *name)
{
    return bmq_auth_is (env, BMQ_ROLE_SERVICE) && name && !strcmp (env->auth_name, name);
}

bool bmq_auth_known (const bmq_envelope_t *env)
{
    return env && env->auth_name[0] && env->auth_role[0];
}

bool bmq_auth_role_valid (const char *role)
{
    return role && (bmq_role_parse (role) != BMQ_ROLE_NONE || !strcmp (role, BMQ_ROLE_SERVICE));
}
