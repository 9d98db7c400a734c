/* auth.seal_restart — a seal replayed after an executor restart (issue 24).
 *
 * A real blendmq-executor (no Blender needed: a sealed plan is checked and
 * queued before Blender is asked) gets a sealed plan from the gateway's key:
 * accepted. Killed (-9) and started again, the same plan with the same seal
 * comes again, as someone who saw it on the wire would send it: before, the
 * executor had forgotten the nonce (memory only) and ran it again; now the
 * nonces outlive the process (seal-nonces-NAME, 0600) and it is refused,
 * `unsealed`, naming the replay. A fresh seal still passes. */
#include "audit_harness.h"
#include "bus.h"
#include "keys.h"
#include "plan_seal.h"
#include "roles.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static ah_env_t s_env;
static char s_ep[400], s_events[400], s_keyfile[400], s_ep_env[450], s_events_env[450], s_key_env[450], s_token_env[450];

static pid_t s_start_executor (void)
{
    const char *argv[] = { "blendmq-executor", NULL };
    const char *extra[] = { s_ep_env, s_events_env, s_key_env, s_token_env, "BLENDMQ_BLENDER_PORT=9", "BLENDMQ_EXECUTOR_SANDBOX_WARM=0",
                            "BLENDMQ_EXECUTOR_NAME=local", NULL };
    return ah_spawn (&s_env, "executor", argv, extra);
}

/* One execute.request as the gateway sends it for an operator; the answer. */
static bmq_envelope_t *s_execute (const json_t *plan, const char *hash, const char *seal)
{
    zsock_t *sock = bmq_bus_connect (ZMQ_DEALER, s_ep, "executor");
    assert_non_null (sock);
    bmq_envelope_t *answer = NULL;
    /* the executor may still be starting: ask again until it answers */
    for (int attempt = 0; attempt < 50 && !answer; attempt++) {
        bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_EXECUTE_REQUEST, NULL,
            json_pack ("{s:s, s:O, s:s, s:s}", "plan_id", "p-replay", "plan", plan, "plan_hash", hash, "seal", seal));
        bmq_roles_set_on_behalf_of (req->body, "alice", "operator");
        char cid[BMQ_MAX_ID + 1];
        snprintf (cid, sizeof cid, "%s", req->cid);
        bmq_bus_send_and_destroy (sock, NULL, &req);
        zpoller_t *p = zpoller_new (sock, NULL);
        int64_t until = bmq_mono_ms () + 300;
        while (!answer && bmq_mono_ms () < until && zpoller_wait (p, 100)) {
            bmq_envelope_t *env = bmq_bus_recv (sock, NULL);
            if (env && !strcmp (env->cid, cid) && env->type != BMQ_MSG_HEARTBEAT) answer = env;
            else bmq_envelope_destroy (&env);
        }
        zpoller_destroy (&p);
        if (!answer) {
            /* the first send may have been lost to a restart: the nonce may be used already */
            zsock_destroy (&sock);
            sock = bmq_bus_connect (ZMQ_DEALER, s_ep, "executor");
        }
    }
    zsock_destroy (&sock);
    return answer;
}

static pid_t s_executor = -1;

static int s_setup (void **state) { (void) state; ah_setup (&s_env); return 0; }

/* runs even when an assertion failed: no executor or temp dir left behind */
static int s_teardown (void **state)
{
    (void) state;
    if (s_executor > 0) ah_stop (s_executor, SIGKILL, 5000);
    s_executor = -1;
    bmq_bus_security_shutdown ();
    ah_teardown (&s_env);
    return 0;
}

static void test_seal_replayed_after_restart (void **state)
{
    (void) state;
    char err[512], keys[400];
    snprintf (keys, sizeof keys, "%s/keys", s_env.dir);
    if (bmq_keys_setup_process (keys, "gateway", err, sizeof err)) fail_msg ("%s", err);
    snprintf (s_ep, sizeof s_ep, "ipc://%s/executor.sock", s_env.dir);
    snprintf (s_events, sizeof s_events, "ipc://%s/executor-events.sock", s_env.dir);
    snprintf (s_keyfile, sizeof s_keyfile, "%s/verdict.key", s_env.dir);
    snprintf (s_ep_env, sizeof s_ep_env, "BLENDMQ_EXECUTOR_ENDPOINT=%s", s_ep);
    snprintf (s_events_env, sizeof s_events_env, "BLENDMQ_EXECUTOR_EVENTS=%s", s_events);
    snprintf (s_key_env, sizeof s_key_env, "BLENDMQ_SECURITY_VERDICT_KEY_FILE=%s", s_keyfile);
    assert_int_equal (bmq_seal_key_create (s_keyfile, err, sizeof err), 0);
    char token[400];
    snprintf (token, sizeof token, "%s/blender.token", s_env.dir);
    FILE *f = fopen (token, "w");
    assert_non_null (f);
    fprintf (f, "0123456789abcdef0123456789abcdef\n");
    fclose (f);
    snprintf (s_token_env, sizeof s_token_env, "BLENDMQ_BLENDER_TOKEN_FILE=%s", token);
    bmq_seal_key_t key;
    assert_int_equal (bmq_seal_key_load (s_keyfile, &key, err, sizeof err), 0);

    json_t *plan = json_pack ("[{s:s, s:{}}]", "operation", "bpy.ops.mesh.primitive_cube_add", "params");
    char hash[BMQ_HEX_DIGEST], seal[BMQ_SEAL_MAX];
    assert_int_equal (bmq_plan_hash (plan, hash), 0);
    assert_int_equal (bmq_seal_make (&key, hash, "local", 120000, seal), 0);

    pid_t ex = s_executor = s_start_executor ();
    assert_true (ex > 0);
    bmq_envelope_t *first = s_execute (plan, hash, seal);
    assert_non_null (first);
    if (first->type != BMQ_MSG_EXECUTE_ACCEPTED)
        fail_msg ("the first use of a good seal was refused: %s", bmq_body_str (first, "message"));
    bmq_envelope_destroy (&first);
    ah_stop (ex, SIGKILL, 5000);
    s_executor = -1;

    /* the nonces file: the executor's, private */
    char nonces[400];
    snprintf (nonces, sizeof nonces, "%s/seal-nonces-local", s_env.spool);
    struct stat st;
    assert_int_equal (stat (nonces, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0600);

    ex = s_executor = s_start_executor ();
    assert_true (ex > 0);
    bmq_envelope_t *replay = s_execute (plan, hash, seal);
    assert_non_null (replay);
    if (replay->type != BMQ_MSG_ERROR) fail_msg ("a seal used before the restart was accepted again after it");
    assert_string_equal (bmq_body_str (replay, "code"), "unsealed");
    assert_non_null (strstr (bmq_body_str (replay, "message"), "replay"));
    bmq_envelope_destroy (&replay);

    /* a new seal for the same plan: fine */
    assert_int_equal (bmq_seal_make (&key, hash, "local", 120000, seal), 0);
    bmq_envelope_t *fresh = s_execute (plan, hash, seal);
    assert_non_null (fresh);
    assert_int_equal (fresh->type, BMQ_MSG_EXECUTE_ACCEPTED);
    bmq_envelope_destroy (&fresh);
    ah_stop (ex, SIGTERM, 10000);
    s_executor = -1;
    json_decref (plan);
}

/* The guard itself: nonces persist until they expire, no longer. */
static void test_guard_file (void **state)
{
    (void) state;
    char dir[] = "/tmp/bmq-seal-guard-XXXXXX", path[100], err[256], keyfile[100];
    assert_non_null (mkdtemp (dir));
    snprintf (path, sizeof path, "%s/nonces", dir);
    snprintf (keyfile, sizeof keyfile, "%s/key", dir);
    assert_int_equal (bmq_seal_key_create (keyfile, err, sizeof err), 0);
    bmq_seal_key_t key;
    assert_int_equal (bmq_seal_key_load (keyfile, &key, err, sizeof err), 0);
    int64_t now = bmq_seal_now_ms ();
    char s1[BMQ_SEAL_MAX], s2[BMQ_SEAL_MAX];
    assert_int_equal (bmq_seal_make (&key, "h1", "x", 60000, s1), 0);
    assert_int_equal (bmq_seal_make (&key, "h2", "x", 1000, s2), 0);
    bmq_seal_guard_t *g = bmq_seal_guard_new (100, 60000);
    assert_int_equal (bmq_seal_guard_persist (g, path, now, err, sizeof err), 0);
    assert_int_equal (bmq_seal_check (&key, "h1", s1, "x", now, g, NULL, 0), BMQ_SEAL_OK);
    assert_int_equal (bmq_seal_check (&key, "h2", s2, "x", now, g, NULL, 0), BMQ_SEAL_OK);
    bmq_seal_guard_destroy (&g);
    /* a restart 2 s later: s1 still live and used, s2 expired (forgotten, and refused as expired anyway) */
    g = bmq_seal_guard_new (100, 60000);
    assert_int_equal (bmq_seal_guard_persist (g, path, now + 2000, err, sizeof err), 0);
    assert_int_equal (bmq_seal_guard_size (g), 1);
    assert_int_equal (bmq_seal_check (&key, "h1", s1, "x", now + 2000, g, NULL, 0), BMQ_SEAL_REPLAYED);
    assert_int_equal (bmq_seal_check (&key, "h2", s2, "x", now + 2000, g, NULL, 0), BMQ_SEAL_EXPIRED);
    bmq_seal_guard_destroy (&g);
    /* a hostile file: garbage lines are skipped, not trusted */
    FILE *f = fopen (path, "a");
    fprintf (f, "not-a-nonce 99999999999999\n%s\n", "zzzz");
    fclose (f);
    g = bmq_seal_guard_new (100, 60000);
    assert_int_equal (bmq_seal_guard_persist (g, path, now + 2000, err, sizeof err), 0);
    assert_int_equal (bmq_seal_guard_size (g), 1);
    bmq_seal_guard_destroy (&g);
    char cmd[200];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal (system (cmd), 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_guard_file),
        cmocka_unit_test_setup_teardown (test_seal_replayed_after_restart, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
