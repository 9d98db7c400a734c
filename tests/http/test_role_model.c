/* One role model for the bus and HTTP (issue 31): roles.h's bmq_role_t, the
 * bits each role holds, and the set of bits a least role lets in. Checks:
 *   semantics   the decisions HTTP and MCP made before the merge (operator and
 *               reviewer apart, operator+reviewer both but not admin, admin all)
 *   names       every role's name parses back to it; auth.c accepts exactly
 *               the model's names and "service"
 *   bus = http  every client row of roles.def that a client's own key may send
 *               names the set of one least role, and the bus's decision for each
 *               role is bmq_role_allows' for that least role
 *   routes      every HTTP route names a role of the model */
#include "auth.h"
#include "http_routes.h"
#include "roles.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

static const bmq_role_t s_all[] = { BMQ_ROLE_VIEWER, BMQ_ROLE_OPERATOR, BMQ_ROLE_REVIEWER, BMQ_ROLE_ADMIN,
                                    BMQ_ROLE_OPERATOR_REVIEWER };
#define NALL (sizeof s_all / sizeof s_all[0])

static void test_semantics (void **state)
{
    /* rows: have; columns: need none, viewer, operator, reviewer, admin, operator+reviewer */
    static const bool want[6][6] = {
        /* none */              { 1, 0, 0, 0, 0, 0 },
        /* viewer */            { 1, 1, 0, 0, 0, 0 },
        /* operator */          { 1, 1, 1, 0, 0, 0 },
        /* reviewer */          { 1, 1, 0, 1, 0, 0 },
        /* admin */             { 1, 1, 1, 1, 1, 1 },
        /* operator+reviewer */ { 1, 1, 1, 1, 0, 1 },
    };
    for (int have = 0; have < 6; have++)
        for (int need = 0; need < 6; need++) {
            bool got = bmq_role_allows ((bmq_role_t) have, (bmq_role_t) need);
            if (got != want[have][need])
                fprintf (stderr, "%s for %s: %d\n", bmq_role_name ((bmq_role_t) have), bmq_role_name ((bmq_role_t) need), got);
            assert_int_equal (got, want[have][need]);
        }
}

static void test_names (void **state)
{
    for (size_t i = 0; i < NALL; i++) {
        const char *name = bmq_role_name (s_all[i]);
        assert_int_equal (bmq_role_parse (name), s_all[i]);
        assert_true (bmq_auth_role_valid (name));
        assert_true (bmq_role_bits (s_all[i]) != 0);
        assert_int_equal (bmq_roles_bit (name), bmq_role_bits (s_all[i]));
    }
    assert_int_equal (bmq_role_parse ("root"), BMQ_ROLE_NONE);
    assert_int_equal (bmq_role_parse (NULL), BMQ_ROLE_NONE);
    assert_string_equal (bmq_role_name ((bmq_role_t) 99), "none");
    assert_true (bmq_auth_role_valid (BMQ_ROLE_SERVICE));
    assert_false (bmq_auth_role_valid ("none"));
    assert_false (bmq_auth_role_valid ("Admin"));
    assert_int_equal (bmq_roles_bit (BMQ_ROLE_SERVICE), 0);
}

/* The least role whose BMQ_NEEDS_* set is `mask` (NONE: none is). */
static bmq_role_t s_least (unsigned mask)
{
    for (size_t i = 0; i < NALL; i++)
        if (s_all[i] != BMQ_ROLE_OPERATOR_REVIEWER && bmq_role_needs (s_all[i]) == mask) return s_all[i];
    return BMQ_ROLE_NONE;
}

static void test_bus_decides_as_http (void **state)
{
    json_t *rows = bmq_roles_table_json ();
    size_t i, checked = 0;
    json_t *row;
    json_array_foreach (rows, i, row) {
        const char *to = json_string_value (json_object_get (row, "to"));
        const char *path = json_string_value (json_object_get (row, "path"));
        json_t *roles = json_object_get (row, "roles");
        if (!json_array_size (roles) || !strcmp (to, "*") || !strcmp (path, "via gateway")) continue;
        unsigned mask = 0;
        size_t j;
        json_t *name;
        json_array_foreach (roles, j, name) mask |= bmq_roles_bit (json_string_value (name));
        bmq_role_t least = s_least (mask);
        if (least == BMQ_ROLE_NONE) fprintf (stderr, "row %s %s: roles no least role means\n", to, json_string_value (json_object_get (row, "type")));
        assert_int_not_equal (least, BMQ_ROLE_NONE);
        bmq_msg_type_t type = bmq_msg_type_from_name (json_string_value (json_object_get (row, "type")));
        const char *command = json_string_value (json_object_get (row, "command"));
        if (!command) {            /* the fallback row of a message with command rows: asked with another command */
            bool has_commands = false;
            size_t k;
            json_t *other;
            json_array_foreach (rows, k, other)
                if (k != i && json_object_get (other, "command") && !strcmp (json_string_value (json_object_get (other, "to")), to)
                    && !strcmp (json_string_value (json_object_get (other, "type")), json_string_value (json_object_get (row, "type"))))
                    has_commands = true;
            if (has_commands) command = "a-command-no-row-names";
        }
        for (size_t r = 0; r < NALL; r++) {
            bmq_principal_t who = { .authenticated = true };
            snprintf (who.name, sizeof who.name, "k");
            snprintf (who.role, sizeof who.role, "%s", bmq_role_name (s_all[r]));
            snprintf (who.transport, sizeof who.transport, "k");
            char err[256] = "";
            bool bus = bmq_roles_allowed (to, type, command, &who, err, sizeof err) == 0;
            bool http = bmq_role_allows (s_all[r], least);
            if (bus != http)
                fprintf (stderr, "%s %s %s as %s: bus %d, model %d (%s)\n", to, json_string_value (json_object_get (row, "type")),
                         command ? command : "", who.role, bus, http, err);
            assert_int_equal (bus, http);
        }
        checked++;
    }
    json_decref (rows);
    assert_true (checked >= 10);
}

static void test_routes_use_the_model (void **state)
{
    size_t n;
    const bmq_http_route_t *routes = bmq_http_routes (&n);
    for (size_t i = 0; i < n; i++)
        assert_true (routes[i].role == BMQ_ROLE_NONE || bmq_role_needs (routes[i].role) != 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_semantics),
        cmocka_unit_test (test_names),
        cmocka_unit_test (test_bus_decides_as_http),
        cmocka_unit_test (test_routes_use_the_model),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
