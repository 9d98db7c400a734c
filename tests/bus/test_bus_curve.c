/* bus.curve — CURVE on the bus, in one process with a private keys dir:
 * a trusted client gets answers; an untrusted key, a revoked key and a plain
 * client get nothing (and the refusal is logged); auth_name/auth_role come
 * from the key, not the body; a PUB refuses an untrusted subscriber;
 * ZMQ_MAXMSGSIZE drops an oversized message; the keys dir layout. */
#include "auth.h"
#include "bus.h"
#include "keys.h"
#include "log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define QUIET_MS 800          /* long enough for a CURVE handshake on ipc:// to finish many times */

static char s_dir[64], s_keys[128], s_log[128];
static int s_n;

static void s_ep (char *buf, size_t len, const char *what)
{
    snprintf (buf, len, "ipc://%s/%s-%d.sock", s_dir, what, ++s_n);
}

/* Receive one envelope on `sock` within ms, or NULL. */
static bmq_envelope_t *s_recv (zsock_t *sock, zframe_t **rid, int ms)
{
    zpoller_t *p = zpoller_new (sock, NULL);
    bmq_envelope_t *env = NULL;
    if (zpoller_wait (p, ms)) env = bmq_bus_recv (sock, rid);
    zpoller_destroy (&p);
    return env;
}

static bmq_envelope_t *s_hello (const char *claimed_sender)
{
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_STATUS_REQUEST, NULL, NULL);
    if (claimed_sender) snprintf (env->sender, sizeof env->sender, "%s", claimed_sender);
    return env;
}

static int s_setup (void **state)
{
    (void) state;
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-bus-curve-XXXXXX");
    assert_non_null (mkdtemp (s_dir));
    snprintf (s_keys, sizeof s_keys, "%s/keys", s_dir);
    snprintf (s_log, sizeof s_log, "%s/stderr.log", s_dir);
    /* the log goes to a file we can read: refusals must be logged */
    assert_non_null (freopen (s_log, "a", stderr));
    setvbuf (stderr, NULL, _IONBF, 0);
    bmq_log_init ("bus-test", false, BMQ_LOG_INFO);
    char err[512];
    unsetenv ("BLENDMQ_SECURITY_CURVE");
    unsetenv ("BLENDMQ_SECURITY_MAX_MESSAGE_BYTES");
    if (bmq_keys_setup_process (s_keys, "gateway", err, sizeof err)) fail_msg ("%s", err);
    return 0;
}

static int s_teardown (void **state)
{
    (void) state;
    bmq_bus_security_shutdown ();
    char cmd[300];
    snprintf (cmd, sizeof cmd, "cat '%s'", s_log);      /* the log (and cmocka's failures) went there */
    if (system (cmd) != 0) return -1;
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (!getenv ("BMQ_KEEP_TMP") && system (cmd) != 0) return -1;
    return 0;
}

static bool s_logged (const char *needle)
{
    FILE *f = fopen (s_log, "r");
    if (!f) return false;
    char line[2048];
    bool found = false;
    while (!found && fgets (line, sizeof line, f)) found = strstr (line, needle) != NULL;
    fclose (f);
    return found;
}

static int s_mode (const char *fmt, const char *name)
{
    char path[400];
    snprintf (path, sizeof path, fmt, s_keys, name);
    struct stat st;
    if (lstat (path, &st)) return -1;
    return (int) (st.st_mode & 0777);
}

static void test_layout (void **state)
{
    (void) state;
    assert_int_equal (s_mode ("%s%s", ""), 0700);
    assert_int_equal (s_mode ("%s/%s", "trusted"), 0700);
    const char *all[] = { "gateway", "planner", "validator", "executor", "audit", "supervisor", "cli", "web", "panel", "mcp" };
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal (s_mode ("%s/%s.cert", all[i]), 0600);
        assert_int_equal (s_mode ("%s/%s.cert_secret", all[i]), 0600);
        assert_int_equal (s_mode ("%s/trusted/%s.cert", all[i]), 0600);
        assert_int_equal (s_mode ("%s/%s.token", all[i]), i < 6 ? -1 : 0600);
    }
    char path[400], token[100] = "";
    snprintf (path, sizeof path, "%s/mcp.token", s_keys);
    FILE *f = fopen (path, "r");
    assert_non_null (f);
    assert_non_null (fgets (token, sizeof token, f));
    fclose (f);
    assert_int_equal (strlen (token), 65);           /* 32 bytes in hex, newline */
    char err[256];
    json_t *list = bmq_keys_list (s_keys, err, sizeof err);
    assert_non_null (list);
    assert_int_equal (json_array_size (list), 10);
    size_t i;
    json_t *k;
    json_array_foreach (list, i, k) {
        const char *name = json_string_value (json_object_get (k, "name"));
        const char *role = json_string_value (json_object_get (k, "role"));
        /* the page's key is operator and reviewer, not admin (issue 24) */
        const char *want = !strcmp (name, "mcp") ? "operator" : !strcmp (name, "web") ? "operator+reviewer"
                         : !strcmp (name, "cli") || !strcmp (name, "panel") ? "admin" : "service";
        assert_string_equal (role, want);
        assert_true (json_is_true (json_object_get (k, "trusted")));
    }
    json_decref (list);
    /* init again keeps every key */
    int created = -1;
    assert_int_equal (bmq_keys_init (s_keys, &created, err, sizeof err), 0);
    assert_int_equal (created, 0);
    /* a keys dir made before the supervisor key existed gets it (and only it) */
    char gone[400];
    const char *fmts[] = { "%s/%s.cert", "%s/%s.cert_secret", "%s/trusted/%s.cert" };
    for (int i = 0; i < 3; i++) { snprintf (gone, sizeof gone, fmts[i], s_keys, "supervisor"); assert_int_equal (unlink (gone), 0); }
    assert_int_equal (bmq_keys_init (s_keys, &created, err, sizeof err), 0);
    assert_int_equal (created, 1);
    assert_int_equal (s_mode ("%s/%s.cert_secret", "supervisor"), 0600);
    assert_int_equal (s_mode ("%s/trusted/%s.cert", "supervisor"), 0600);
    /* a group-readable keys dir is refused */
    chmod (s_keys, 0750);
    assert_int_equal (bmq_keys_check_dir (s_keys, err, sizeof err), -1);
    chmod (s_keys, 0700);
    assert_int_equal (bmq_keys_add_client (s_keys, "x", "root", err, sizeof err), -1);
    assert_int_equal (bmq_keys_add_client (s_keys, "../x", "viewer", err, sizeof err), -1);
    assert_int_equal (bmq_keys_revoke (s_keys, "planner", err, sizeof err), -1);
}

/* A trusted client gets answers; the identity comes from its key, not the body. */
static void test_trusted_identity (void **state)
{
    (void) state;
    char ep[200];
    s_ep (ep, sizeof ep, "router");
    zsock_t *server = bmq_bus_bind (ZMQ_ROUTER, ep);
    assert_non_null (server);
    assert_true (bmq_bus_curve ());
    zsock_t *client = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "mcp");
    assert_non_null (client);
    bmq_envelope_t *req = s_hello ("executor");     /* the body claims another sender */
    json_object_set_new (req->body, "auth_name", json_string ("executor"));
    bool strict = bmq_codec_strict ();
    bmq_codec_set_strict (false);   /* strict builds refuse the undeclared field outright; others keep it, untrusted */
    assert_int_equal (bmq_bus_send_and_destroy (client, NULL, &req), 0);
    zframe_t *rid = NULL;
    bmq_envelope_t *got = s_recv (server, &rid, 5000);
    bmq_codec_set_strict (strict);
    assert_non_null (got);
    assert_string_equal (got->sender, "executor");  /* a claim, kept as sent */
    assert_string_equal (got->auth_name, "mcp");
    assert_string_equal (got->auth_role, "operator");
    assert_true (bmq_auth_is (got, "operator"));
    assert_false (bmq_auth_is (got, "admin"));
    assert_false (bmq_auth_is_service (got, "executor"));
    bmq_envelope_t *reply = bmq_envelope_error (got, "test", "an answer");
    assert_int_equal (bmq_bus_send_and_destroy (server, rid, &reply), 0);
    bmq_envelope_t *back = s_recv (client, NULL, 5000);
    assert_non_null (back);
    assert_int_equal (back->type, BMQ_MSG_ERROR);
    assert_string_equal (back->auth_name, "");      /* the client side has no ZAP metadata */
    bmq_envelope_destroy (&back);
    bmq_envelope_destroy (&got);
    zframe_destroy (&rid);

    /* a service key: role service, its name */
    zsock_t *svc = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "validator");
    req = s_hello (NULL);
    bmq_bus_send_and_destroy (svc, NULL, &req);
    got = s_recv (server, &rid, 5000);
    assert_non_null (got);
    assert_true (bmq_auth_is_service (got, "validator"));
    bmq_envelope_destroy (&got);
    zframe_destroy (&rid);
    zsock_destroy (&svc);
    zsock_destroy (&client);
    zsock_destroy (&server);
}

/* A client with this key and options gets nothing within QUIET_MS. */
static void s_expect_nothing (zsock_t *server, zsock_t *client)
{
    bmq_envelope_t *req = s_hello ("cli");
    bmq_bus_send_and_destroy (client, NULL, &req);
    zframe_t *rid = NULL;
    bmq_envelope_t *got = s_recv (server, &rid, QUIET_MS);
    assert_null (got);
    zframe_destroy (&rid);
}

static void test_untrusted_and_plain (void **state)
{
    (void) state;
    char ep[200], err[256];
    s_ep (ep, sizeof ep, "router");
    zsock_t *server = bmq_bus_bind (ZMQ_ROUTER, ep);
    zcert_t *gw = bmq_keys_load_public (s_keys, "gateway", err, sizeof err);
    assert_non_null (gw);

    /* a well-formed CURVE key nobody trusts */
    zcert_t *stranger = zcert_new ();
    zsock_t *c1 = zsock_new (ZMQ_DEALER);
    zcert_apply (stranger, c1);
    zsock_set_curve_serverkey (c1, zcert_public_txt (gw));
    assert_int_equal (zsock_connect (c1, "%s", ep), 0);
    s_expect_nothing (server, c1);
    assert_true (s_logged ("refused a connection on"));
    assert_true (s_logged ("not trusted"));

    /* a plain client (no CURVE at all) */
    zsock_t *c2 = zsock_new (ZMQ_DEALER);
    assert_int_equal (zsock_connect (c2, "%s", ep), 0);
    s_expect_nothing (server, c2);

    /* a trusted key but the wrong server key (a squatter's, say) */
    zcert_t *other = zcert_new ();
    zcert_t *cli = bmq_keys_load (s_keys, "cli", err, sizeof err);
    zsock_t *c3 = zsock_new (ZMQ_DEALER);
    zcert_apply (cli, c3);
    zsock_set_curve_serverkey (c3, zcert_public_txt (other));
    assert_int_equal (zsock_connect (c3, "%s", ep), 0);
    s_expect_nothing (server, c3);

    /* still serving the trusted */
    zsock_t *ok = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "cli");
    bmq_envelope_t *req = s_hello (NULL);
    bmq_bus_send_and_destroy (ok, NULL, &req);
    zframe_t *rid = NULL;
    bmq_envelope_t *got = s_recv (server, &rid, 5000);
    assert_non_null (got);
    assert_string_equal (got->auth_name, "cli");
    assert_string_equal (got->auth_role, "admin");
    bmq_envelope_destroy (&got);
    zframe_destroy (&rid);
    zsock_destroy (&ok);
    zsock_destroy (&c1);
    zsock_destroy (&c2);
    zsock_destroy (&c3);
    zcert_destroy (&stranger);
    zcert_destroy (&other);
    zcert_destroy (&cli);
    zcert_destroy (&gw);
    zsock_destroy (&server);
}

static void test_revoked (void **state)
{
    (void) state;
    char ep[200], err[256];
    assert_int_equal (bmq_keys_add_client (s_keys, "eve", "viewer", err, sizeof err), 0);
    assert_int_equal (bmq_keys_add_client (s_keys, "eve", "viewer", err, sizeof err), -1);   /* exists */
    s_ep (ep, sizeof ep, "router");
    zsock_t *server = bmq_bus_bind (ZMQ_ROUTER, ep);
    zcert_t *eve = bmq_keys_load (s_keys, "eve", err, sizeof err);
    zcert_t *gw = bmq_keys_load_public (s_keys, "gateway", err, sizeof err);
    assert_non_null (eve);

    zsock_t *c1 = zsock_new (ZMQ_DEALER);
    zcert_apply (eve, c1);
    zsock_set_curve_serverkey (c1, zcert_public_txt (gw));
    zsock_connect (c1, "%s", ep);
    bmq_envelope_t *req = s_hello (NULL);
    bmq_bus_send_and_destroy (c1, NULL, &req);
    zframe_t *rid = NULL;
    bmq_envelope_t *got = s_recv (server, &rid, 5000);
    assert_non_null (got);
    assert_string_equal (got->auth_name, "eve");
    assert_string_equal (got->auth_role, "viewer");
    bmq_envelope_destroy (&got);
    zframe_destroy (&rid);
    zsock_destroy (&c1);

    assert_int_equal (bmq_keys_revoke (s_keys, "eve", err, sizeof err), 0);
    char path[300];
    snprintf (path, sizeof path, "%s/eve.token", s_keys);
    assert_int_equal (access (path, F_OK), -1);
    snprintf (path, sizeof path, "%s/trusted/eve.cert", s_keys);
    assert_int_equal (access (path, F_OK), -1);
    zsock_t *c2 = zsock_new (ZMQ_DEALER);
    zcert_apply (eve, c2);
    zsock_set_curve_serverkey (c2, zcert_public_txt (gw));
    zsock_connect (c2, "%s", ep);
    s_expect_nothing (server, c2);     /* zcertstore reloaded trusted/ from disk */
    zsock_destroy (&c2);
    /* the name can be given to a new key */
    assert_int_equal (bmq_keys_add_client (s_keys, "eve", "reviewer", err, sizeof err), 0);
    zcert_destroy (&eve);
    zcert_destroy (&gw);
    zsock_destroy (&server);
}

static void test_pub_sub (void **state)
{
    (void) state;
    char ep[200], err[256];
    s_ep (ep, sizeof ep, "pub");
    zsock_t *pub = bmq_bus_bind (ZMQ_PUB, ep);
    zsock_t *good = bmq_bus_connect_as (ZMQ_SUB, ep, "gateway", "cli");
    zcert_t *stranger = zcert_new ();
    zcert_t *gw = bmq_keys_load_public (s_keys, "gateway", err, sizeof err);
    zsock_t *bad = zsock_new_sub (NULL, "");
    zcert_apply (stranger, bad);
    zsock_set_curve_serverkey (bad, zcert_public_txt (gw));
    zsock_connect (bad, "%s", ep);
    zsock_t *plain = zsock_new_sub (ep, "");
    int good_got = 0, bad_got = 0;
    for (int i = 0; i < 20; i++) {
        bmq_envelope_t *ev = s_hello (NULL);
        bmq_bus_send_and_destroy (pub, NULL, &ev);
        zclock_sleep (50);
        while (zsock_events (good) & ZMQ_POLLIN) { zmsg_t *m = zmsg_recv (good); zmsg_destroy (&m); good_got++; }
        while (zsock_events (bad) & ZMQ_POLLIN) { zmsg_t *m = zmsg_recv (bad); zmsg_destroy (&m); bad_got++; }
        while (zsock_events (plain) & ZMQ_POLLIN) { zmsg_t *m = zmsg_recv (plain); zmsg_destroy (&m); bad_got++; }
    }
    assert_true (good_got > 0);
    assert_int_equal (bad_got, 0);
    zsock_destroy (&good);
    zsock_destroy (&bad);
    zsock_destroy (&plain);
    zcert_destroy (&stranger);
    zcert_destroy (&gw);
    zsock_destroy (&pub);
}

static void test_max_message_size (void **state)
{
    (void) state;
    char ep[200], err[256];
    setenv ("BLENDMQ_SECURITY_MAX_MESSAGE_BYTES", "4096", 1);
    bmq_config_t *cfg = bmq_config_load (NULL, err, sizeof err);
    assert_non_null (cfg);
    assert_int_equal (bmq_bus_security_init (cfg, "gateway", err, sizeof err), 0);
    bmq_config_destroy (&cfg);
    s_ep (ep, sizeof ep, "router");
    zsock_t *server = bmq_bus_bind (ZMQ_ROUTER, ep);
    zsock_t *client = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "cli");
    bmq_envelope_t *big = s_hello (NULL);
    char pad[8192];
    memset (pad, 'x', sizeof pad);
    bmq_envelope_set_blob (big, pad, sizeof pad);
    bmq_bus_send_and_destroy (client, NULL, &big);
    zframe_t *rid = NULL;
    bmq_envelope_t *got = s_recv (server, &rid, QUIET_MS);
    assert_null (got);
    zsock_destroy (&client);
    /* a small one from a fresh connection still gets through */
    client = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "cli");
    bmq_envelope_t *small = s_hello (NULL);
    bmq_bus_send_and_destroy (client, NULL, &small);
    got = s_recv (server, &rid, 5000);
    assert_non_null (got);
    bmq_envelope_destroy (&got);
    zframe_destroy (&rid);
    zsock_destroy (&client);
    zsock_destroy (&server);
    unsetenv ("BLENDMQ_SECURITY_MAX_MESSAGE_BYTES");
}

/* curve off (benchmarks only): plain sockets, no identity */
static void test_curve_off (void **state)
{
    (void) state;
    char ep[200], err[256];
    setenv ("BLENDMQ_SECURITY_CURVE", "false", 1);
    bmq_config_t *cfg = bmq_config_load (NULL, err, sizeof err);
    assert_int_equal (bmq_bus_security_init (cfg, "gateway", err, sizeof err), 0);
    bmq_config_destroy (&cfg);
    assert_false (bmq_bus_curve ());
    s_ep (ep, sizeof ep, "router");
    zsock_t *server = bmq_bus_bind (ZMQ_ROUTER, ep);
    zsock_t *client = zsock_new_dealer (ep);
    bmq_envelope_t *req = s_hello ("cli");
    bmq_bus_send_and_destroy (client, NULL, &req);
    zframe_t *rid = NULL;
    bmq_envelope_t *got = s_recv (server, &rid, 5000);
    assert_non_null (got);
    assert_string_equal (got->auth_name, "");
    assert_string_equal (got->auth_role, "");
    assert_false (bmq_auth_known (got));
    bmq_envelope_destroy (&got);
    zframe_destroy (&rid);
    zsock_destroy (&client);
    zsock_destroy (&server);
    unsetenv ("BLENDMQ_SECURITY_CURVE");
}

/* a service refuses to start without its key */
static void test_no_keys_dir (void **state)
{
    (void) state;
    char err[256];
    setenv ("BLENDMQ_SECURITY_KEYS_DIR", "/nonexistent/keys", 1);
    bmq_config_t *cfg = bmq_config_load (NULL, err, sizeof err);
    assert_int_equal (bmq_bus_security_init (cfg, "gateway", err, sizeof err), -1);
    assert_non_null (strstr (err, "/nonexistent/keys"));
    bmq_config_destroy (&cfg);
    setenv ("BLENDMQ_SECURITY_KEYS_DIR", s_keys, 1);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_layout),
        cmocka_unit_test (test_trusted_identity),
        cmocka_unit_test (test_untrusted_and_plain),
        cmocka_unit_test (test_revoked),
        cmocka_unit_test (test_pub_sub),
        cmocka_unit_test (test_max_message_size),
        cmocka_unit_test (test_curve_off),
        cmocka_unit_test (test_no_keys_dir),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
