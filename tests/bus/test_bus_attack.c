/* bus.attack — the bus attacks of issue 24, each of which worked before:
 *   - heartbeat squat: a viewer key sending `heartbeat` (or worker.ready) to
 *     the validator broker became a worker and received other people's
 *     plans; now it gets `forbidden`, joins nothing, and only the validator
 *     key makes a worker (the join is logged with the key's name);
 *   - revoke mid-connection: after `keys revoke`, the connection that was
 *     already authenticated went on; now its next message is refused;
 *   - a certificate without name/role metadata was taken for an in-process
 *     caller and its body's on_behalf_of believed; now it is refused, even
 *     where in-process callers are trusted (BMQ_ROLES_TRUST_LOCAL). */
#include "auth.h"
#include "bus.h"
#include "keys.h"
#include "log.h"
#include "roles.h"
#include "validator_broker.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char s_dir[64], s_keys[128], s_log[128];
static int s_n;

static void s_ep (char *buf, size_t len, const char *what)
{
    snprintf (buf, len, "ipc://%s/%s-%d.sock", s_dir, what, ++s_n);
}

static bmq_envelope_t *s_recv (zsock_t *sock, zframe_t **rid, int ms)
{
    zpoller_t *p = zpoller_new (sock, NULL);
    bmq_envelope_t *env = NULL;
    if (zpoller_wait (p, ms)) env = bmq_bus_recv (sock, rid);
    zpoller_destroy (&p);
    return env;
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

/* A DEALER with an arbitrary keypair, talking to the server key "gateway". */
static zsock_t *s_dealer (zcert_t *cert, const char *ep)
{
    char err[256];
    zcert_t *gw = bmq_keys_load_public (s_keys, "gateway", err, sizeof err);
    assert_non_null (gw);
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    zcert_apply (cert, sock);
    zsock_set_curve_serverkey (sock, zcert_public_txt (gw));
    assert_int_equal (zsock_connect (sock, "%s", ep), 0);
    zcert_destroy (&gw);
    return sock;
}

static int s_setup (void **state)
{
    (void) state;
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-bus-attack-XXXXXX");
    assert_non_null (mkdtemp (s_dir));
    snprintf (s_keys, sizeof s_keys, "%s/keys", s_dir);
    snprintf (s_log, sizeof s_log, "%s/stderr.log", s_dir);
    assert_non_null (freopen (s_log, "a", stderr));
    setvbuf (stderr, NULL, _IONBF, 0);
    bmq_log_init ("bus-attack", false, BMQ_LOG_INFO);
    unsetenv ("BLENDMQ_SECURITY_CURVE");
    char err[512];
    if (bmq_keys_setup_process (s_keys, "gateway", err, sizeof err)) fail_msg ("%s", err);
    return 0;
}

static int s_teardown (void **state)
{
    (void) state;
    bmq_bus_security_shutdown ();
    char cmd[300];
    snprintf (cmd, sizeof cmd, "cat '%s'", s_log);
    if (system (cmd) != 0) return -1;
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (!getenv ("BMQ_KEEP_TMP") && system (cmd) != 0) return -1;
    return 0;
}

/* Drive the broker for `ms`: every message it takes, and its ticks. */
static void s_pump (bmq_broker_t *broker, int ms)
{
    zpoller_t *p = zpoller_new (bmq_broker_sock (broker), NULL);
    int64_t end = bmq_mono_ms () + ms;
    while (bmq_mono_ms () < end) {
        if (zpoller_wait (p, 20)) {
            bmq_envelope_t *verdict = bmq_broker_on_message (broker);
            bmq_envelope_destroy (&verdict);
        }
        bmq_broker_tick (broker);
    }
    zpoller_destroy (&p);
}

static void test_heartbeat_squat (void **state)
{
    (void) state;
    char ep[200], err[256];
    assert_int_equal (bmq_keys_add_client (s_keys, "squatter", "viewer", err, sizeof err), 0);
    s_ep (ep, sizeof ep, "broker");
    bmq_broker_t *broker = bmq_broker_new (ep, 200, 3);
    assert_non_null (broker);
    bmq_broker_set_auth (broker, true, NULL);
    zsock_t *viewer = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "squatter");
    assert_non_null (viewer);
    bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "validator"));
    bmq_bus_send_and_destroy (viewer, NULL, &hb);
    bmq_envelope_t *ready = bmq_envelope_new (BMQ_MSG_WORKER_READY, NULL, json_pack ("{s:I}", "pid", (json_int_t) 4242));
    bmq_bus_send_and_destroy (viewer, NULL, &ready);
    s_pump (broker, 300);
    assert_int_equal (bmq_broker_workers (broker), 0);
    /* each attempt is answered forbidden, naming the validator key */
    for (int i = 0; i < 2; i++) {
        bmq_envelope_t *no = s_recv (viewer, NULL, 2000);
        assert_non_null (no);
        assert_int_equal (no->type, BMQ_MSG_ERROR);
        assert_string_equal (bmq_body_str (no, "code"), "forbidden");
        assert_non_null (strstr (bmq_body_str (no, "message"), "validator"));
        bmq_envelope_destroy (&no);
    }
    /* the validator key joins, gets the next plan (the viewer nothing), and
     * the join names its key */
    zsock_t *worker = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "validator");
    ready = bmq_envelope_new (BMQ_MSG_WORKER_READY, NULL, json_pack ("{s:I}", "pid", (json_int_t) 777));
    bmq_bus_send_and_destroy (worker, NULL, &ready);
    s_pump (broker, 300);
    assert_int_equal (bmq_broker_workers (broker), 1);
    bmq_envelope_t *job = bmq_envelope_new (BMQ_MSG_VALIDATE_REQUEST, NULL, json_pack ("{s:[]}", "plan"));
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", job->cid);
    assert_int_equal (bmq_broker_submit (broker, &job), 0);
    s_pump (broker, 100);
    bmq_envelope_t *leak = s_recv (viewer, NULL, 200);
    if (leak) fail_msg ("the viewer key received %s %s", bmq_msg_type_name (leak->type), leak->cid);
    bmq_envelope_t *got = NULL;
    for (int i = 0; i < 10 && !got; i++) {
        got = s_recv (worker, NULL, 200);
        if (got && got->type != BMQ_MSG_VALIDATE_REQUEST) bmq_envelope_destroy (&got);
    }
    assert_non_null (got);
    assert_string_equal (got->cid, cid);
    bmq_envelope_destroy (&got);
    assert_true (s_logged ("validator worker 777 joined with key 'validator'"));
    assert_true (s_logged ("validator broker refused heartbeat from 'squatter'"));
    zsock_destroy (&worker);
    zsock_destroy (&viewer);
    bmq_broker_destroy (&broker);
}

static void test_revoke_mid_connection (void **state)
{
    (void) state;
    char ep[200], err[256];
    assert_int_equal (bmq_keys_add_client (s_keys, "mallory", "operator", err, sizeof err), 0);
    s_ep (ep, sizeof ep, "front");
    zsock_t *server = bmq_bus_bind (ZMQ_ROUTER, ep);
    zsock_t *client = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "mallory");
    assert_non_null (client);
    for (int round = 0; round < 2; round++) {
        bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:[]}", "plan"));
        bmq_bus_send_and_destroy (client, NULL, &req);
        zframe_t *rid = NULL;
        bmq_envelope_t *got = s_recv (server, &rid, 5000);
        assert_non_null (got);
        bmq_principal_t who;
        char why[512] = "";
        int rc = bmq_roles_check (got, "gateway", true, 0, &who, why, sizeof why);
        if (round == 0) {
            assert_string_equal (got->auth_name, "mallory");
            assert_int_equal (rc, 0);                    /* an operator may run a plan */
            /* revoked while the connection stays open */
            assert_int_equal (bmq_keys_revoke (s_keys, "mallory", err, sizeof err), 0);
        }
        else {
            assert_false (bmq_auth_known (got));
            assert_int_equal (rc, -1);
            assert_non_null (strstr (why, "no longer trusted"));
            assert_non_null (strstr (why, "mallory"));
            /* and every service's hook answers it forbidden */
            assert_true (bmq_roles_refused (server, rid, got, "executor", true, 0, NULL));
            bmq_envelope_t *no = s_recv (client, NULL, 2000);
            assert_non_null (no);
            assert_string_equal (bmq_body_str (no, "code"), "forbidden");
            bmq_envelope_destroy (&no);
        }
        bmq_envelope_destroy (&got);
        zframe_destroy (&rid);
    }
    zsock_destroy (&client);
    /* a trusted key with the page's compound role keeps it, message after message */
    client = bmq_bus_connect_as (ZMQ_DEALER, ep, "gateway", "web");
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_STATUS_REQUEST, NULL, NULL);
    bmq_bus_send_and_destroy (client, NULL, &req);
    zframe_t *rid = NULL;
    bmq_envelope_t *got = s_recv (server, &rid, 5000);
    assert_non_null (got);
    assert_string_equal (got->auth_name, "web");
    assert_string_equal (got->auth_role, "operator+reviewer");
    bmq_envelope_destroy (&got);
    zframe_destroy (&rid);
    zsock_destroy (&client);
    zsock_destroy (&server);
}

static void test_cert_without_metadata (void **state)
{
    (void) state;
    char ep[200], path[300];
    /* a keypair trusted by the store, but its cert names no one */
    zcert_t *bare = zcert_new ();
    snprintf (path, sizeof path, "%s/trusted/bare.cert", s_keys);
    assert_int_equal (zcert_save_public (bare, path), 0);
    s_ep (ep, sizeof ep, "front");
    zsock_t *server = bmq_bus_bind (ZMQ_ROUTER, ep);
    zsock_t *client = s_dealer (bare, ep);
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:[]}", "plan"));
    bmq_roles_set_on_behalf_of (req->body, "cli", "admin");      /* the lie it tells */
    bmq_bus_send_and_destroy (client, NULL, &req);
    zframe_t *rid = NULL;
    bmq_envelope_t *got = s_recv (server, &rid, 5000);
    assert_non_null (got);          /* the handshake passed: the key is in trusted/ */
    assert_false (bmq_auth_known (got));
    bmq_principal_t who;
    char why[512] = "";
    /* refused on a CURVE socket, and refused even where in-process callers are trusted */
    assert_int_equal (bmq_roles_check (got, "gateway", true, 0, &who, why, sizeof why), -1);
    assert_int_equal (bmq_roles_check (got, "gateway", true, BMQ_ROLES_TRUST_LOCAL, &who, why, sizeof why), -1);
    assert_non_null (strstr (why, "no name and role"));
    assert_string_not_equal (who.name, "cli");
    bmq_envelope_destroy (&got);
    zframe_destroy (&rid);
    /* a real in-process caller (inproc: no CURVE) is still trusted for what it says */
    zsock_t *local = zsock_new_router ("@inproc://bus-attack-local");
    zsock_t *thread = zsock_new_dealer (">inproc://bus-attack-local");
    req = bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:[]}", "plan"));
    bmq_roles_set_on_behalf_of (req->body, "web", "operator");
    bmq_bus_send_and_destroy (thread, NULL, &req);
    got = s_recv (local, &rid, 2000);
    assert_non_null (got);
    assert_int_equal (bmq_roles_check (got, "gateway", true, BMQ_ROLES_TRUST_LOCAL, &who, why, sizeof why), 0);
    assert_string_equal (who.name, "web");
    assert_string_equal (who.transport, "inproc");
    bmq_envelope_destroy (&got);
    zframe_destroy (&rid);
    zsock_destroy (&thread);
    zsock_destroy (&local);
    zsock_destroy (&client);
    zsock_destroy (&server);
    zcert_destroy (&bare);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_heartbeat_squat),
        cmocka_unit_test (test_revoke_mid_connection),
        cmocka_unit_test (test_cert_without_metadata),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
