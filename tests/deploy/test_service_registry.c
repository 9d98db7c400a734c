/* The service registry (common/service_registry.def) is the one list of
 * services (issue 31). This test checks that what is made from it agrees:
 *   table     names valid as key names and unique, start order increasing,
 *             key-only rows last, endpoints "config.key=socket" with keys in
 *             the default configuration and sockets unique
 *   keys      bmq_keys_services is the registry, in its order
 *   roles     a SERVICES_ALL row (roles.def: "*") lets every service with a
 *             process send, `up`'s supervisor only where it is named, and a
 *             name the registry does not know never
 *   --json    prints the registry for tests/deploy/check_services.py, which
 *             checks the systemd units, the container and Kubernetes files */
#include "config.h"
#include "keys.h"
#include "roles.h"
#include "service_registry.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

static void test_table (void **state)
{
    size_t n;
    const bmq_service_t *s = bmq_services (&n);
    assert_true (n >= 6);
    int last_order = 0;
    bool key_only_seen = false;
    bmq_config_t *cfg = bmq_config_load (NULL, NULL, 0);        /* the defaults (deploy/blendmq.yaml, embedded) */
    assert_non_null (cfg);
    for (size_t i = 0; i < n; i++) {
        assert_true (bmq_keys_name_valid (s[i].name));
        assert_ptr_equal (bmq_service_find (s[i].name), &s[i]);
        for (size_t j = 0; j < i; j++) assert_string_not_equal (s[j].name, s[i].name);
        if (s[i].instances == BMQ_SVC_KEY_ONLY) {
            key_only_seen = true;
            assert_int_equal (s[i].order, 0);
            assert_string_equal (s[i].endpoints, "");
            assert_false (s[i].waited);
            continue;
        }
        assert_false (key_only_seen);                       /* key-only rows come last */
        assert_true (s[i].order > last_order);
        last_order = s[i].order;
        assert_true (!strcmp (s[i].health, "heartbeat") || !strcmp (s[i].health, "pool") || !strcmp (s[i].health, "self"));
        /* endpoints: "config.key=socket", each key in the default configuration */
        for (const char *p = s[i].endpoints; *p; p += strspn (p, " ")) {
            size_t len = strcspn (p, " ");
            char key[128], sock[64];
            assert_int_equal (sscanf (p, "%127[^= ]=%63[^ ]", key, sock), 2);
            assert_non_null (strchr (key, '.'));
            if (!*bmq_config_str (cfg, key)) fprintf (stderr, "%s: %s is not in the default configuration\n", s[i].name, key);
            assert_true (*bmq_config_str (cfg, key));
            for (size_t j = 0; j < n; j++) {       /* no other service binds that socket */
                char needle[80];
                snprintf (needle, sizeof needle, "=%s", sock);
                if (j != i) {
                    const char *hit = strstr (s[j].endpoints, needle);
                    assert_true (!hit || (hit[strlen (needle)] != ' ' && hit[strlen (needle)] != 0));
                }
            }
            p += len;
        }
    }
    assert_true (key_only_seen);
    assert_null (bmq_service_find ("sixth"));
    bmq_config_destroy (&cfg);
}

static void test_keys (void **state)
{
    size_t n, i = 0;
    const bmq_service_t *s = bmq_services (&n);
    for (; bmq_keys_services[i]; i++) {
        assert_true (i < n);
        assert_string_equal (bmq_keys_services[i], s[i].name);
    }
    assert_int_equal (i, n);
}

static bool s_may_send (const char *to, bmq_msg_type_t type, const char *name)
{
    bmq_principal_t who = { .authenticated = true };
    snprintf (who.name, sizeof who.name, "%s", name);
    snprintf (who.role, sizeof who.role, "service");
    snprintf (who.transport, sizeof who.transport, "%s", name);
    char err[300];
    return bmq_roles_allowed (to, type, NULL, &who, err, sizeof err) == 0;
}

static void test_roles (void **state)
{
    size_t n;
    const bmq_service_t *s = bmq_services (&n);
    for (size_t i = 0; i < n; i++) {
        bool process = s[i].instances != BMQ_SVC_KEY_ONLY;
        /* "*" rows: every service with a process; the audit heartbeat row names the supervisor too */
        assert_int_equal (s_may_send ("planner", BMQ_MSG_STATUS_REQUEST, s[i].name), process);
        assert_true (s_may_send ("audit", BMQ_MSG_HEARTBEAT, s[i].name));
    }
    assert_false (s_may_send ("planner", BMQ_MSG_STATUS_REQUEST, "sixth"));
    assert_false (s_may_send ("audit", BMQ_MSG_HEARTBEAT, "sixth"));
    assert_false (s_may_send ("planner", BMQ_MSG_STATUS_REQUEST, "*"));
    assert_true (bmq_service_listed ("* supervisor", "gateway"));
    assert_true (bmq_service_listed ("* supervisor", "supervisor"));
    assert_false (bmq_service_listed ("*", "supervisor"));
    assert_false (bmq_service_listed ("planner validator", "validato"));
    assert_false (bmq_service_listed ("", "planner"));
    char text[200];
    bmq_service_list_text ("* supervisor", text, sizeof text);
    char want[200] = "";                                    /* the registry's services with a process, in its order */
    size_t count;
    const bmq_service_t *svc = bmq_services (&count);
    for (size_t i = 0; i < count; i++)
        if (svc[i].instances != BMQ_SVC_KEY_ONLY) snprintf (want + strlen (want), sizeof want - strlen (want), "%s ", svc[i].name);
    strncat (want, "supervisor", sizeof want - strlen (want) - 1);
    assert_string_equal (text, want);
    bmq_service_list_text ("* supervisor", text, 12);       /* cut, terminated */
    assert_int_equal (strlen (text), 11);
}

static int s_print_json (void)
{
    static const char *instances[] = { "one", "per_blender", "pool", "key_only" };
    size_t n;
    const bmq_service_t *s = bmq_services (&n);
    json_t *rows = json_array ();
    for (size_t i = 0; i < n; i++)
        json_array_append_new (rows, json_pack ("{s:s, s:i, s:s, s:s, s:b, s:s}", "name", s[i].name, "order", s[i].order,
                                                "instances", instances[s[i].instances], "endpoints", s[i].endpoints,
                                                "waited", s[i].waited, "health", s[i].health));
    char *text = json_dumps (rows, JSON_INDENT (1));
    puts (text);
    free (text);
    json_decref (rows);
    return 0;
}

int main (int argc, char **argv)
{
    if (argc == 2 && !strcmp (argv[1], "--json")) return s_print_json ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_table),
        cmocka_unit_test (test_keys),
        cmocka_unit_test (test_roles),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
