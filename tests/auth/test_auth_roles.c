/* auth.roles — every client role allowed and refused on representative
 * messages; service keys limited to their own messages; on_behalf_of trusted
 * from the gateway's key only; no identity refused with CURVE on. */
#include "service_registry.h"
#include "roles.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

static bmq_envelope_t *s_env (bmq_msg_type_t type, const char *name, const char *role, json_t *body)
{
    bmq_envelope_t *env = bmq_envelope_new (type, NULL, body);
    snprintf (env->auth_name, sizeof env->auth_name, "%s", name ? name : "");
    snprintf (env->auth_role, sizeof env->auth_role, "%s", role ? role : "");
    return env;
}

/* 0 allowed, -1 refused */
static int s_check (const char *to, bmq_msg_type_t type, const char *name, const char *role, json_t *body, bool curve)
{
    bmq_envelope_t *env = s_env (type, name, role, body);
    bmq_principal_t who;
    char err[512] = "";
    int rc = bmq_roles_check (env, to, curve, 0, &who, err, sizeof err);
    if (rc) assert_true (err[0] != 0);        /* a refusal always says why */
    bmq_envelope_destroy (&env);
    return rc;
}

static json_t *s_obo (const char *name, const char *role, json_t *body)
{
    if (!body) body = json_object ();
    bmq_roles_set_on_behalf_of (body, name, role);
    return body;
}

static void test_client_roles_at_gateway (void **state)
{
    (void) state;
    const char *roles[] = { "viewer", "operator", "reviewer", "admin" };
    /* expected: viewer operator reviewer admin (1 allowed) */
    struct { bmq_msg_type_t type; const char *command; int allowed[4]; } cases[] = {
        { BMQ_MSG_STATUS_REQUEST,       NULL, { 1, 1, 1, 1 } },
        { BMQ_MSG_AUDIT_QUERY,          NULL, { 1, 1, 1, 1 } },
        { BMQ_MSG_CAPABILITIES_REQUEST, NULL, { 1, 1, 1, 1 } },
        { BMQ_MSG_INSPECT_REQUEST,      NULL, { 1, 1, 1, 1 } },
        { BMQ_MSG_SCRIPT_LIST,          NULL, { 1, 1, 1, 1 } },
        { BMQ_MSG_SCENE_REQUEST, "scene_info",  { 1, 1, 1, 1 } },
        { BMQ_MSG_SCENE_REQUEST, "render_preview", { 1, 1, 1, 1 } },
        { BMQ_MSG_SCENE_REQUEST, "look",        { 1, 1, 1, 1 } },
        { BMQ_MSG_SCENE_REQUEST, "save_blend",  { 0, 0, 0, 1 } },
        { BMQ_MSG_SCENE_REQUEST, "reset_scene", { 0, 0, 0, 1 } },
        { BMQ_MSG_SCENE_REQUEST, "no_such",     { 0, 0, 0, 1 } },
        { BMQ_MSG_CHAT_REQUEST,         NULL, { 0, 1, 0, 1 } },
        { BMQ_MSG_RUN_REQUEST,          NULL, { 0, 1, 0, 1 } },
        { BMQ_MSG_VALIDATE_REQUEST,     NULL, { 0, 1, 0, 1 } },
        { BMQ_MSG_SCRIPT_REQUEST,       NULL, { 0, 1, 0, 1 } },
        { BMQ_MSG_CANCEL_REQUEST,       NULL, { 0, 1, 0, 1 } },
        { BMQ_MSG_SCRIPT_CONFIRM,       NULL, { 0, 0, 1, 1 } },
        { BMQ_MSG_WORKER_READY,         NULL, { 0, 0, 0, 0 } },
        { BMQ_MSG_AUDIT_RECORD,         NULL, { 0, 0, 0, 0 } },
        { BMQ_MSG_EXECUTE_REQUEST,      NULL, { 0, 0, 0, 0 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int r = 0; r < 4; r++) {
            json_t *body = cases[c].command ? json_pack ("{s:s}", "command", cases[c].command) : NULL;
            int rc = s_check ("gateway", cases[c].type, "someone", roles[r], body, true);
            if ((rc == 0) != cases[c].allowed[r])
                fail_msg ("%s %s as %s: expected %s", bmq_msg_type_name (cases[c].type), cases[c].command ? cases[c].command : "",
                          roles[r], cases[c].allowed[r] ? "allowed" : "refused");
        }
}

static void test_refusal_names_role (void **state)
{
    (void) state;
    bmq_envelope_t *env = s_env (BMQ_MSG_SCRIPT_CONFIRM, "ops", "operator", json_pack ("{s:s}", "script_id", "x"));
    bmq_principal_t who;
    char err[512];
    assert_int_equal (bmq_roles_check (env, "gateway", true, 0, &who, err, sizeof err), -1);
    assert_non_null (strstr (err, "reviewer or admin"));
    bmq_envelope_t *reply = bmq_roles_refusal (env, err);
    assert_int_equal (reply->type, BMQ_MSG_ERROR);
    assert_string_equal (bmq_body_str (reply, "code"), "forbidden");
    json_t *rec = bmq_roles_refusal_record (env, "gateway", &who, err);
    assert_string_equal (json_string_value (json_object_get (rec, "name")), "ops");
    assert_string_equal (json_string_value (json_object_get (rec, "role")), "operator");
    assert_string_equal (json_string_value (json_object_get (rec, "type")), "script.confirm");
    json_decref (rec);
    bmq_envelope_destroy (&reply);
    bmq_envelope_destroy (&env);
}

static void test_services (void **state)
{
    (void) state;
    /* only validator keys join the pool and answer from it */
    assert_int_equal (s_check ("broker", BMQ_MSG_WORKER_READY, "validator", "service", NULL, true), 0);
    assert_int_equal (s_check ("broker", BMQ_MSG_VALIDATE_REPLY, "validator", "service", NULL, true), 0);
    assert_int_equal (s_check ("broker", BMQ_MSG_WORKER_READY, "executor", "service", NULL, true), -1);
    assert_int_equal (s_check ("broker", BMQ_MSG_WORKER_READY, "planner", "service", NULL, true), -1);
    assert_int_equal (s_check ("broker", BMQ_MSG_WORKER_READY, "mallory", "admin", NULL, true), -1);
    assert_int_equal (s_check ("broker", BMQ_MSG_VALIDATE_REPLY, "gateway", "service", NULL, true), -1);
    /* every service of the registry writes audit records (their origin is the key) */
    size_t nsvc;
    const bmq_service_t *svc = bmq_services (&nsvc);
    for (size_t k = 0; k < nsvc; k++)
        if (svc[k].instances != BMQ_SVC_KEY_ONLY)
            assert_int_equal (s_check ("audit", BMQ_MSG_AUDIT_RECORD, svc[k].name, "service", NULL, true), 0);
    assert_int_equal (s_check ("audit", BMQ_MSG_AUDIT_RECORD, "someone", "admin", NULL, true), -1);
    /* `up`'s supervisor writes its service.restart records and heartbeats the
     * audit service, and may do nothing else */
    assert_int_equal (s_check ("audit", BMQ_MSG_AUDIT_RECORD, "supervisor", "service", NULL, true), 0);
    assert_int_equal (s_check ("audit", BMQ_MSG_HEARTBEAT, "supervisor", "service", NULL, true), 0);
    assert_int_equal (s_check ("audit", BMQ_MSG_HEARTBEAT, "gateway", "service", NULL, true), 0);
    assert_int_equal (s_check ("executor", BMQ_MSG_HEARTBEAT, "supervisor", "service", NULL, true), -1);
    assert_int_equal (s_check ("audit", BMQ_MSG_AUDIT_QUERY, "supervisor", "service", NULL, true), -1);
    assert_int_equal (s_check ("gateway", BMQ_MSG_STATUS_REQUEST, "supervisor", "service", NULL, true), -1);
    /* a validator key cannot ask the executor to run, nor the planner to plan */
    assert_int_equal (s_check ("executor", BMQ_MSG_EXECUTE_REQUEST, "validator", "service", NULL, true), -1);
    assert_int_equal (s_check ("executor", BMQ_MSG_SCENE_REQUEST, "validator", "service",
                               json_pack ("{s:s}", "command", "save_blend"), true), -1);
    assert_int_equal (s_check ("planner", BMQ_MSG_PLAN_REQUEST, "validator", "service", NULL, true), -1);
    /* but may look up RNA through the gateway (common/inspect), as the planner may,
     * which may also ask for the pool's palette; never the executor directly */
    assert_int_equal (s_check ("gateway", BMQ_MSG_INSPECT_REQUEST, "validator", "service", NULL, true), 0);
    assert_int_equal (s_check ("gateway", BMQ_MSG_INSPECT_REQUEST, "planner", "service", NULL, true), 0);
    assert_int_equal (s_check ("gateway", BMQ_MSG_CAPABILITIES_REQUEST, "planner", "service", NULL, true), 0);
    assert_int_equal (s_check ("gateway", BMQ_MSG_CAPABILITIES_REQUEST, "validator", "service", NULL, true), -1);
    assert_int_equal (s_check ("gateway", BMQ_MSG_INSPECT_REQUEST, "executor", "service", NULL, true), -1);
    assert_int_equal (s_check ("executor", BMQ_MSG_INSPECT_REQUEST, "validator", "service", NULL, true), -1);
    assert_int_equal (s_check ("executor", BMQ_MSG_INSPECT_REQUEST, "planner", "service", NULL, true), -1);
    /* the gateway forwards those look-ups as its own (no on_behalf_of) */
    assert_int_equal (s_check ("executor", BMQ_MSG_INSPECT_REQUEST, "gateway", "service", NULL, true), 0);
    assert_int_equal (s_check ("validator", BMQ_MSG_CAPABILITIES_REQUEST, "gateway", "service", NULL, true), 0);
    assert_int_equal (s_check ("validator", BMQ_MSG_VALIDATE_REQUEST, "gateway", "service", NULL, true), -1);
    /* a service key is no client at the gateway */
    assert_int_equal (s_check ("gateway", BMQ_MSG_CHAT_REQUEST, "planner", "service", NULL, true), -1);
    /* heartbeats everywhere */
    assert_int_equal (s_check ("executor", BMQ_MSG_HEARTBEAT, "gateway", "service", NULL, true), 0);
}

static void test_on_behalf_of (void **state)
{
    (void) state;
    /* the gateway carries the client: checked as the client */
    assert_int_equal (s_check ("executor", BMQ_MSG_EXECUTE_REQUEST, "gateway", "service", s_obo ("ann", "operator", NULL), true), 0);
    assert_int_equal (s_check ("executor", BMQ_MSG_EXECUTE_REQUEST, "gateway", "service", s_obo ("vic", "viewer", NULL), true), -1);
    assert_int_equal (s_check ("executor", BMQ_MSG_SCRIPT_CONFIRM, "gateway", "service", s_obo ("rev", "reviewer", NULL), true), 0);
    assert_int_equal (s_check ("executor", BMQ_MSG_SCRIPT_CONFIRM, "gateway", "service", s_obo ("ann", "operator", NULL), true), -1);
    assert_int_equal (s_check ("executor", BMQ_MSG_SCENE_REQUEST, "gateway", "service",
                               s_obo ("vic", "viewer", json_pack ("{s:s}", "command", "save_blend")), true), -1);
    assert_int_equal (s_check ("executor", BMQ_MSG_SCENE_REQUEST, "gateway", "service",
                               s_obo ("adm", "admin", json_pack ("{s:s}", "command", "save_blend")), true), 0);
    assert_int_equal (s_check ("planner", BMQ_MSG_PLAN_REQUEST, "gateway", "service", s_obo ("ann", "operator", NULL), true), 0);
    assert_int_equal (s_check ("validator", BMQ_MSG_VALIDATE_REQUEST, "gateway", "service", s_obo ("ann", "operator", NULL), true), 0);
    assert_int_equal (s_check ("validator", BMQ_MSG_CAPABILITIES_REQUEST, "gateway", "service", s_obo ("vic", "viewer", NULL), true), 0);
    /* the gateway on its own (no client) may not execute */
    assert_int_equal (s_check ("executor", BMQ_MSG_EXECUTE_REQUEST, "gateway", "service", NULL, true), -1);
    /* on_behalf_of from anyone else is ignored: a planner claiming admin is still the planner */
    assert_int_equal (s_check ("executor", BMQ_MSG_EXECUTE_REQUEST, "planner", "service", s_obo ("x", "admin", NULL), true), -1);
    /* a client's own key cannot reach the executor directly, whatever the body says */
    assert_int_equal (s_check ("executor", BMQ_MSG_SCENE_REQUEST, "adm", "admin",
                               s_obo ("adm", "admin", json_pack ("{s:s}", "command", "scene_info")), true), -1);
    /* on_behalf_of must carry a client role */
    assert_int_equal (s_check ("executor", BMQ_MSG_INSPECT_REQUEST, "gateway", "service", s_obo ("v", "service", NULL), true), -1);
    /* a client at the gateway cannot promote itself with on_behalf_of */
    assert_int_equal (s_check ("gateway", BMQ_MSG_SCRIPT_CONFIRM, "vic", "viewer", s_obo ("x", "admin", NULL), true), -1);
}

static void test_no_identity (void **state)
{
    (void) state;
    /* CURVE on: nobody is refused; CURVE off (benchmarks): allowed */
    assert_int_equal (s_check ("executor", BMQ_MSG_SCENE_REQUEST, NULL, NULL, json_pack ("{s:s}", "command", "save_blend"), true), -1);
    assert_int_equal (s_check ("executor", BMQ_MSG_SCENE_REQUEST, NULL, NULL, json_pack ("{s:s}", "command", "save_blend"), false), 0);
    assert_int_equal (s_check ("broker", BMQ_MSG_WORKER_READY, NULL, NULL, NULL, true), -1);
    /* the gateway's own HTTP threads (inproc, no CURVE): who is in on_behalf_of */
    bmq_principal_t who;
    char err[256];
    bmq_envelope_t *env = s_env (BMQ_MSG_SCRIPT_CONFIRM, NULL, NULL, s_obo ("web", "reviewer", NULL));
    assert_int_equal (bmq_roles_check (env, "gateway", true, BMQ_ROLES_TRUST_LOCAL, &who, err, sizeof err), 0);
    assert_string_equal (who.role, "reviewer");
    bmq_envelope_destroy (&env);
    env = s_env (BMQ_MSG_SCRIPT_CONFIRM, NULL, NULL, s_obo ("web", "operator", NULL));
    assert_int_equal (bmq_roles_check (env, "gateway", true, BMQ_ROLES_TRUST_LOCAL, &who, err, sizeof err), -1);
    bmq_envelope_destroy (&env);
    env = s_env (BMQ_MSG_CHAT_REQUEST, NULL, NULL, json_pack ("{s:s}", "prompt", "x"));
    assert_int_equal (bmq_roles_check (env, "gateway", true, BMQ_ROLES_TRUST_LOCAL, &who, err, sizeof err), -1);
    bmq_envelope_destroy (&env);
}

static void test_table (void **state)
{
    (void) state;
    json_t *rows = bmq_roles_table_json ();
    assert_true (json_array_size (rows) > 40);
    /* every row names a real message and a known receiver */
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        assert_int_not_equal (bmq_msg_type_from_name (json_string_value (json_object_get (row, "type"))), BMQ_MSG_UNKNOWN);
        const char *to = json_string_value (json_object_get (row, "to"));
        assert_true (!strcmp (to, "*") || !strcmp (to, "broker") || bmq_service_find (to));   /* service_registry.def */
    }
    json_decref (rows);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_client_roles_at_gateway),
        cmocka_unit_test (test_refusal_names_role),
        cmocka_unit_test (test_services),
        cmocka_unit_test (test_on_behalf_of),
        cmocka_unit_test (test_no_identity),
        cmocka_unit_test (test_table),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
