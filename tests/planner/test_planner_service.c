/* The planner process itself (blendmq-planner), spoken to over its socket as
 * the gateway does: plan.note messages in the request's story before the
 * plan.reply, dialogues on their own threads (heartbeats still answered),
 * fallback to recipes, errors, recipes and prompts read again without a
 * restart, the offline backend's parameters, and no API key in the log or in
 * any audit record. A fake Gemini and a fake audit service stand around it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bus.h"
#include "keys.h"
#include "roles.h"
#include "peer.h"
#include "planner_harness.h"
#include "recipe_save.h"

typedef struct {
    char        dir[64];
    char        ep[128], audit_ep[128];
    pid_t       pid;
    zsock_t    *dealer, *audit;
    json_t     *records;        /* audit records received */
    fake_llm_t *llm;
    zactor_t   *executor;
} s_proc_t;

/* CURVE: one keys dir for this test program (before any socket: the fake
 * audit binds with its service's key); it plays the gateway (its front, in
 * the harness, answers the planner's inspect and capabilities requests). */
static char s_keys[64];
static int s_keys_setup (void **state)
{
    (void) state;
    char err[512];
    snprintf (s_keys, sizeof s_keys, "/tmp/bmq_planner_keys_XXXXXX");
    if (!mkdtemp (s_keys) || bmq_keys_setup_process (s_keys, "gateway", err, sizeof err)) {
        fprintf (stderr, "keys: %s\n", err);
        return -1;
    }
    return 0;
}

static int s_keys_teardown (void **state)
{
    (void) state;
    bmq_bus_security_shutdown ();
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_keys);
    return system (cmd) == 0 ? 0 : -1;
}

/* The test plays the gateway (its key): a client's request carries the
 * client in on_behalf_of, as the gateway's forwarding does (common/roles.h). */
static void s_send_as_client (zsock_t *dealer, bmq_envelope_t **env_p)
{
    bmq_roles_set_on_behalf_of ((*env_p)->body, "cli", "admin");
    bmq_bus_send_and_destroy (dealer, NULL, env_p);
}

/* Start blendmq-planner with `backend`, everything on ipc sockets in a fresh folder. */
static s_proc_t *s_start (const char *backend, fake_llm_t *llm, const char *gateway_ep, const char *extra_env)
{
    s_proc_t *p = calloc (1, sizeof *p);
    snprintf (p->dir, sizeof p->dir, "/tmp/bmq_planner_svc_XXXXXX");
    assert_non_null (mkdtemp (p->dir));
    snprintf (p->ep, sizeof p->ep, "ipc://%s/planner.sock", p->dir);
    snprintf (p->audit_ep, sizeof p->audit_ep, "ipc://%s/audit.sock", p->dir);
    char cmd[4096];
    snprintf (cmd, sizeof cmd, "cp -r '%s/prompts' '%s/prompts' && mkdir '%s/saved'", BMQ_SOURCE_DIR, p->dir, p->dir);
    assert_int_equal (system (cmd), 0);
    p->audit = bmq_bus_bind_as (ZMQ_ROUTER, p->audit_ep, "audit");
    p->records = json_array ();
    p->llm = llm;
    p->pid = fork ();
    if (p->pid == 0) {
        char v[512];
        setenv ("BLENDMQ_PLANNER_ENDPOINT", p->ep, 1);
        setenv ("BLENDMQ_AUDIT_ENDPOINT", p->audit_ep, 1);
        setenv ("BLENDMQ_PLANNER_BACKEND", backend, 1);
        snprintf (v, sizeof v, "%s/prompts", p->dir);
        setenv ("BLENDMQ_PLANNER_PROMPTS_DIR", v, 1);
        snprintf (v, sizeof v, "%s/saved", p->dir);
        setenv ("BLENDMQ_PLANNER_SAVED_RECIPES_DIR", v, 1);
        setenv ("BLENDMQ_PLANNER_RETRY_BASE_MS", "20", 1);
        setenv ("BLENDMQ_PLANNER_RETRY_MAX_MS", "100", 1);
        setenv ("BLENDMQ_PLANNER_MAX_RETRIES", "2", 1);
        setenv ("BLENDMQ_PLANNER_INSPECT_TIMEOUT_MS", "300", 1);
        setenv ("BLENDMQ_LOG_LEVEL", "debug", 1);
        snprintf (v, sizeof v, "ipc://%s/no-gateway.sock", p->dir);       /* none: nobody answers there */
        setenv ("BLENDMQ_GATEWAY_ENDPOINT", gateway_ep ? gateway_ep : v, 1);
        if (llm) {
            setenv ("GEMINI_API_KEY", H_KEY, 1);
            setenv ("GEMINI_BASE_URL", fake_llm_url (llm), 1);
            setenv ("GEMINI_MODEL", "gemini-test-flash", 1);
            setenv ("OPENAI_API_KEY", H_KEY, 1);
            snprintf (v, sizeof v, "%s/v1", fake_llm_url (llm));
            setenv ("BLENDMQ_PLANNER_OPENAI_BASE_URL", v, 1);
        }
        if (extra_env) putenv (strdup (extra_env));
        snprintf (v, sizeof v, "%s/planner.log", p->dir);
        if (!freopen (v, "w", stderr)) _exit (3);
        execl (BMQ_BIN_DIR "/blendmq-planner", "blendmq-planner", (char *) NULL);
        _exit (4);
    }
    p->dealer = bmq_bus_connect (ZMQ_DEALER, p->ep, "planner");
    return p;
}

/* Answer the planner's audit client (acks, heartbeats); keep the records. */
static void s_audit_pump (s_proc_t *p)
{
    while (zsock_events (p->audit) & ZMQ_POLLIN) {
        zframe_t *rid = NULL;
        bmq_envelope_t *env = bmq_bus_recv (p->audit, &rid);
        if (env && !bmq_answer_heartbeat (p->audit, rid, env, "audit", "ok") && env->type == BMQ_MSG_AUDIT_RECORD) {
            json_array_append_new (p->records, json_pack ("{s:s, s:s, s:O}", "cid", env->cid,
                                                          "kind", bmq_body_str (env, "kind"), "data", json_object_get (env->body, "data")));
            bmq_envelope_t *ack = bmq_envelope_reply (env, BMQ_MSG_AUDIT_ACK, json_pack ("{s:I}", "seq", (json_int_t) bmq_body_int (env, "seq", 0)));
            bmq_bus_send_and_destroy (p->audit, rid, &ack);
        }
        bmq_envelope_destroy (&env);
        zframe_destroy (&rid);
    }
}

/* Every message of story cid until a plan.reply or an error (or timeout): a JSON array of {type, body}. */
static json_t *s_converse (s_proc_t *p, const char *cid, json_t *body, int timeout_ms)
{
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_PLAN_REQUEST, cid, body);
    s_send_as_client (p->dealer, &req);
    json_t *got = json_array ();
    zpoller_t *poller = zpoller_new (p->dealer, p->audit, NULL);
    int64_t until = bmq_mono_ms () + timeout_ms;
    bool end = false;
    while (!end && bmq_mono_ms () < until) {
        void *which = zpoller_wait (poller, 50);
        if (which == p->audit) s_audit_pump (p);
        if (which != p->dealer) continue;
        bmq_envelope_t *env = bmq_bus_recv (p->dealer, NULL);
        if (env && env->type != BMQ_MSG_HEARTBEAT && !strcmp (env->cid, cid)) {
            json_array_append_new (got, json_pack ("{s:s, s:O}", "type", bmq_msg_type_name (env->type), "body", env->body));
            end = env->type == BMQ_MSG_PLAN_REPLY || env->type == BMQ_MSG_ERROR;
        }
        bmq_envelope_destroy (&env);
    }
    zpoller_destroy (&poller);
    for (int i = 0; i < 10; i++) { zclock_sleep (20); s_audit_pump (p); }     /* the records that follow the reply */
    return got;
}

static json_t *s_last (json_t *msgs)
{
    return json_array_get (msgs, json_array_size (msgs) - 1);
}

static bool s_has_note (json_t *msgs, const char *needle)
{
    size_t i;
    json_t *m;
    json_array_foreach (msgs, i, m)
        if (!strcmp (json_string_value (json_object_get (m, "type")), "plan.note")
            && strstr (json_string_value (json_object_get (json_object_get (m, "body"), "text")), needle)) return true;
    return false;
}

static void s_wait_ready (s_proc_t *p)
{
    for (int i = 0; i < 100; i++) {         /* the planner is up once a heartbeat comes back */
        bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "test"));
        bmq_bus_send_and_destroy (p->dealer, NULL, &hb);
        zpoller_t *poller = zpoller_new (p->dealer, NULL);
        bool up = zpoller_wait (poller, 100) != NULL;
        zpoller_destroy (&poller);
        if (up) {
            bmq_envelope_t *env = bmq_bus_recv (p->dealer, NULL);
            bmq_envelope_destroy (&env);
            return;
        }
    }
    fail_msg ("the planner did not start (see %s/planner.log)", p->dir);
}

static char *s_read_file (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f) return strdup ("");
    char *buf = calloc (1, 1 << 20);
    size_t n = fread (buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose (f);
    return buf;
}

static void s_stop (s_proc_t **p_p)
{
    s_proc_t *p = *p_p;
    kill (p->pid, SIGTERM);
    int st;
    waitpid (p->pid, &st, 0);
    assert_true (WIFEXITED (st) && WEXITSTATUS (st) == 0);
    /* the key is in no log line and no audit record */
    char path[256];
    snprintf (path, sizeof path, "%s/planner.log", p->dir);
    char *log = s_read_file (path);
    char *audit = json_dumps (p->records, 0);
    if (strstr (log, H_KEY)) fail_msg ("the API key is in the planner's log:\n%s", log);
    if (strstr (audit, H_KEY)) fail_msg ("the API key is in an audit record:\n%s", audit);
    free (log);
    free (audit);
    zsock_destroy (&p->dealer);
    zsock_destroy (&p->audit);
    json_decref (p->records);
    char cmd[256];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", p->dir);
    if (system (cmd)) {}
    free (p);
    *p_p = NULL;
}

static bool s_audited (s_proc_t *p, const char *cid, const char *kind)
{
    size_t i;
    json_t *r;
    json_array_foreach (p->records, i, r)
        if (!strcmp (json_string_value (json_object_get (r, "cid")), cid)
            && !strcmp (json_string_value (json_object_get (r, "kind")), kind)) return true;
    return false;
}

/* ---- tests ---------------------------------------------------------------------- */

static void s_push (fake_llm_t *llm, char *body, int delay_ms)
{
    fake_reply_t r = { .status = 200, .body = body, .delay_ms = delay_ms };
    fake_llm_push (llm, &r);
    free (body);
}

static char *s_submit (const char *plan)
{
    char args[4096];
    snprintf (args, sizeof args, "{\"title\": \"snowman\", \"plan\": %s}", plan);
    return h_gemini_call ("submit_plan", args, "sig");
}

static void test_gemini_through_the_service (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);       /* its fake Gemini and gateway front */
    s_proc_t *p = s_start ("auto", w->llm, w->gateway_ep, NULL);
    s_wait_ready (p);
    s_push (w->llm, h_gemini_call ("discover_capabilities", "{}", "s1"), 0);
    s_push (w->llm, h_gemini_call ("inspect_tool", "{\"tool_name\": \"bpy.ops.mesh.primitive_cone_add\"}", "s2"), 0);
    s_push (w->llm, s_submit (H_BAD_PLAN), 0);
    s_push (w->llm, s_submit (H_GOOD_PLAN), 0);
    json_t *msgs = s_converse (p, "story-g1", json_pack ("{s:s}", "prompt", "build a snowman"), 10000);
    json_t *last = s_last (msgs);
    assert_string_equal (json_string_value (json_object_get (last, "type")), "plan.reply");
    json_t *body = json_object_get (last, "body");
    assert_int_equal (json_array_size (json_object_get (body, "plan")), 3);
    assert_string_equal (json_string_value (json_object_get (body, "source")), "gemini");
    assert_string_equal (json_string_value (json_object_get (body, "title")), "snowman");
    assert_int_equal (json_integer_value (json_object_get (body, "fix_rounds")), 1);
    assert_true (s_has_note (msgs, "asking Gemini (gemini-test-flash)"));
    assert_true (s_has_note (msgs, "asking for capabilities"));
    assert_true (s_has_note (msgs, "inspecting bpy.ops.mesh.primitive_cone_add"));
    assert_true (s_has_note (msgs, "plan rejected"));
    assert_true (s_has_note (msgs, "plan of 3 steps ready"));
    /* the fake gateway has no validator pool: the curated palette, and the user is told */
    assert_true (s_has_note (msgs, "capabilities are the planner's curated palette"));
    assert_int_equal (h_inspect_asked (w), 1);
    assert_true (s_audited (p, "story-g1", "prompt"));
    assert_true (s_audited (p, "story-g1", "llm.turn"));
    assert_true (s_audited (p, "story-g1", "plan.check"));
    assert_true (s_audited (p, "story-g1", "plan.proposed"));
    json_decref (msgs);
    s_stop (&p);
    h_world_destroy (&w);
}

static void test_dialogues_do_not_block_the_loop (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_proc_t *p = s_start ("gemini", w->llm, w->gateway_ep, NULL);
    s_wait_ready (p);
    s_push (w->llm, s_submit (H_GOOD_PLAN), 1500);
    s_push (w->llm, s_submit (H_GOOD_PLAN), 1500);
    bmq_envelope_t *a = bmq_envelope_new (BMQ_MSG_PLAN_REQUEST, "story-a", json_pack ("{s:s}", "prompt", "a snowman"));
    bmq_envelope_t *b = bmq_envelope_new (BMQ_MSG_PLAN_REQUEST, "story-b", json_pack ("{s:s}", "prompt", "another snowman"));
    s_send_as_client (p->dealer, &a);
    s_send_as_client (p->dealer, &b);
    zclock_sleep (200);
    /* while both dialogues wait on the slow model, a heartbeat is answered at once */
    int64_t t0 = bmq_mono_ms ();
    bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "test"));
    bmq_bus_send_and_destroy (p->dealer, NULL, &hb);
    int replies = 0, heartbeat_ms = -1;
    zpoller_t *poller = zpoller_new (p->dealer, p->audit, NULL);
    while (replies < 2 && bmq_mono_ms () - t0 < 8000) {
        void *which = zpoller_wait (poller, 50);
        if (which == p->audit) s_audit_pump (p);
        if (which != p->dealer) continue;
        bmq_envelope_t *env = bmq_bus_recv (p->dealer, NULL);
        if (env && env->type == BMQ_MSG_HEARTBEAT && heartbeat_ms < 0) {
            heartbeat_ms = (int) (bmq_mono_ms () - t0);
            assert_non_null (strstr (bmq_body_str (env, "state"), "gemini (gemini-test-flash)"));
        }
        if (env && env->type == BMQ_MSG_PLAN_REPLY) replies++;
        bmq_envelope_destroy (&env);
    }
    zpoller_destroy (&poller);
    assert_int_equal (replies, 2);
    assert_true (heartbeat_ms >= 0 && heartbeat_ms < 500);
    assert_true (bmq_mono_ms () - t0 < 3000);                 /* the two ran side by side */
    s_stop (&p);
    h_world_destroy (&w);
}

static void test_cancel (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_proc_t *p = s_start ("gemini", w->llm, w->gateway_ep, NULL);
    s_wait_ready (p);
    s_push (w->llm, s_submit (H_GOOD_PLAN), 5000);                /* a model that takes its time */
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_PLAN_REQUEST, "story-c", json_pack ("{s:s}", "prompt", "a chair"));
    s_send_as_client (p->dealer, &req);
    zclock_sleep (300);
    int64_t t0 = bmq_mono_ms ();
    bmq_envelope_t *cancel = bmq_envelope_new (BMQ_MSG_CANCEL_REQUEST, "story-c", NULL);
    s_send_as_client (p->dealer, &cancel);
    const char *code = NULL;
    zpoller_t *poller = zpoller_new (p->dealer, p->audit, NULL);
    while (!code && bmq_mono_ms () - t0 < 4000) {
        void *which = zpoller_wait (poller, 50);
        if (which == p->audit) s_audit_pump (p);
        if (which != p->dealer) continue;
        bmq_envelope_t *env = bmq_bus_recv (p->dealer, NULL);
        if (env && env->type == BMQ_MSG_ERROR && !strcmp (env->cid, "story-c")) code = strdup (bmq_body_str (env, "code"));
        else assert_false (env && env->type == BMQ_MSG_PLAN_REPLY && !strcmp (env->cid, "story-c"));
        bmq_envelope_destroy (&env);
    }
    zpoller_destroy (&poller);
    assert_non_null (code);
    assert_string_equal (code, "cancelled");                      /* not the recipes' chair */
    assert_true (bmq_mono_ms () - t0 < 2500);
    free ((char *) code);
    s_stop (&p);
    h_world_destroy (&w);
}

static void test_fallback_and_errors (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_proc_t *p = s_start ("gemini", w->llm, w->gateway_ep, NULL);
    s_wait_ready (p);
    /* the model is down: the recipes answer, and the user is told */
    for (int i = 0; i < 3; i++)
        fake_llm_json (w->llm, 503, "{\"error\": {\"code\": 503, \"message\": \"overloaded\", \"status\": \"UNAVAILABLE\"}}");
    json_t *msgs = s_converse (p, "story-f1", json_pack ("{s:s}", "prompt", "a red chair"), 10000);
    json_t *body = json_object_get (s_last (msgs), "body");
    assert_string_equal (json_string_value (json_object_get (s_last (msgs), "type")), "plan.reply");
    assert_string_equal (json_string_value (json_object_get (body, "source")), "offline");
    assert_string_equal (json_string_value (json_object_get (body, "fallback_from")), "gemini");
    assert_string_equal (json_string_value (json_object_get (body, "recipe")), "chair");
    assert_true (s_has_note (msgs, "Gemini could not plan this (llm_error)"));
    assert_true (s_has_note (msgs, "503 UNAVAILABLE; retrying"));
    json_decref (msgs);
    /* a refusal is not second-guessed by the recipes */
    fake_llm_json (w->llm, 200, "{\"candidates\": [{\"finishReason\": \"SAFETY\"}]}");
    msgs = s_converse (p, "story-f2", json_pack ("{s:s}", "prompt", "a chair"), 10000);
    assert_string_equal (json_string_value (json_object_get (s_last (msgs), "type")), "error");
    assert_string_equal (json_string_value (json_object_get (json_object_get (s_last (msgs), "body"), "code")), "blocked");
    json_decref (msgs);
    /* no recipe either: the API's own message reaches the user */
    fake_llm_json (w->llm, 403, "{\"error\": {\"code\": 403, \"message\": \"Permission denied: consumer has been suspended.\", \"status\": \"PERMISSION_DENIED\"}}");
    msgs = s_converse (p, "story-f3", json_pack ("{s:s}", "prompt", "a quantum flux capacitor"), 10000);
    json_t *err = json_object_get (s_last (msgs), "body");
    assert_string_equal (json_string_value (json_object_get (err, "code")), "llm_error");
    assert_non_null (strstr (json_string_value (json_object_get (err, "message")), "consumer has been suspended"));
    json_decref (msgs);
    /* rejected to the end: the errors go with the message */
    for (int i = 0; i < 3; i++) s_push (w->llm, s_submit (H_BAD_PLAN), 0);
    msgs = s_converse (p, "story-f4", json_pack ("{s:s}", "prompt", "a quantum flux capacitor"), 10000);
    err = json_object_get (s_last (msgs), "body");
    assert_string_equal (json_string_value (json_object_get (err, "code")), "plan_rejected");
    assert_true (json_array_size (json_object_get (err, "errors")) >= 2);
    json_decref (msgs);
    s_stop (&p);
    h_world_destroy (&w);
}

static void test_prompts_are_read_again (void **state)
{
    h_world_t *w = h_world_new ("gemini", H_EXEC_ANSWER);
    s_proc_t *p = s_start ("gemini", w->llm, w->gateway_ep, NULL);
    s_wait_ready (p);
    s_push (w->llm, s_submit (H_GOOD_PLAN), 0);
    json_decref (s_converse (p, "story-p1", json_pack ("{s:s}", "prompt", "a snowman"), 10000));
    char path[256];
    snprintf (path, sizeof path, "%s/prompts/planner_system.md", p->dir);
    FILE *f = fopen (path, "w");
    fputs ("<!-- revised -->\nYou are a careful planner. REVISED-PROMPT-MARK.\n", f);
    fclose (f);
    s_push (w->llm, s_submit (H_GOOD_PLAN), 0);
    json_decref (s_converse (p, "story-p2", json_pack ("{s:s}", "prompt", "a snowman"), 10000));
    assert_int_equal (fake_llm_requests (w->llm), 2);
    const char *sys0 = json_string_value (json_object_get (json_array_get (json_object_get (json_object_get (
        fake_llm_body (w->llm, 0), "systemInstruction"), "parts"), 0), "text"));
    const char *sys1 = json_string_value (json_object_get (json_array_get (json_object_get (json_object_get (
        fake_llm_body (w->llm, 1), "systemInstruction"), "parts"), 0), "text"));
    assert_null (strstr (sys0, "REVISED-PROMPT-MARK"));
    assert_string_equal (sys1, "You are a careful planner. REVISED-PROMPT-MARK.");
    s_stop (&p);
    h_world_destroy (&w);
}

static void test_offline_service (void **state)
{
    s_proc_t *p = s_start ("offline", NULL, NULL, NULL);
    s_wait_ready (p);
    json_t *msgs = s_converse (p, "story-o1", json_pack ("{s:s}", "prompt", "a big red chair at 3 0 0"), 5000);
    json_t *body = json_object_get (s_last (msgs), "body");
    assert_string_equal (json_string_value (json_object_get (body, "recipe")), "chair");
    assert_true (s_has_note (msgs, "offline recipe 'chair': red, 1.5× (big), at (3, 0, 0)"));
    json_t *seat = NULL, *step;                    /* the plan starts with the chair's root; its seat comes next */
    size_t i;
    json_array_foreach (json_object_get (body, "plan"), i, step)
        if (!seat && json_is_string (json_object_get (step, "name")) && !strcmp (json_string_value (json_object_get (step, "name")), "chair_seat"))
            seat = step;
    assert_non_null (seat);
    json_t *loc = json_object_get (json_object_get (seat, "params"), "location");
    assert_true (json_real_value (json_array_get (loc, 0)) == 3.0);
    assert_true (fabs (json_real_value (json_array_get (loc, 2)) - 0.675) < 1e-9);
    json_decref (msgs);
    msgs = s_converse (p, "story-o2", json_pack ("{s:s}", "prompt", "a quantum flux capacitor"), 5000);
    json_t *err = json_object_get (s_last (msgs), "body");
    assert_string_equal (json_string_value (json_object_get (err, "code")), "no_match");
    assert_non_null (strstr (json_string_value (json_object_get (err, "message")), "GEMINI_API_KEY"));
    assert_non_null (strstr (json_string_value (json_object_get (err, "message")), "closest:"));
    json_decref (msgs);
    msgs = s_converse (p, "story-o3", json_pack ("{s:s, s:s}", "prompt", "a chair", "mode", "script"), 5000);
    assert_string_equal (json_string_value (json_object_get (json_object_get (s_last (msgs), "body"), "code")), "unsupported");
    json_decref (msgs);
    /* the offline planner never reviews a result (issue 16): unsupported, said so; a malformed review is refused first */
    msgs = s_converse (p, "story-o5", json_pack ("{s:s, s:s, s:{s:[], s:{s:s}, s:i, s:i}}", "prompt", "a chair", "mode", "review",
                                                 "review", "plan", "result", "status", "done", "round", 1, "rounds", 1), 5000);
    err = json_object_get (s_last (msgs), "body");
    assert_string_equal (json_string_value (json_object_get (err, "code")), "unsupported");
    assert_non_null (strstr (json_string_value (json_object_get (err, "message")), "the offline planner never does"));
    json_decref (msgs);
    msgs = s_converse (p, "story-o6", json_pack ("{s:s, s:s, s:{s:s}}", "prompt", "a chair", "mode", "review",
                                                 "review", "plan", "not a list"), 5000);
    assert_string_equal (json_string_value (json_object_get (json_object_get (s_last (msgs), "body"), "code")), "bad_request");
    json_decref (msgs);
    /* a recipe saved by someone else is found without a restart */
    char dir[256], err_text[256];
    snprintf (dir, sizeof dir, "%s/saved", p->dir);
    bmq_recipe_book_t *book = bmq_recipe_book_load_dirs (BMQ_SOURCE_DIR "/services/planner/recipes", dir, err_text, sizeof err_text);
    json_t *plan = json_loads (H_GOOD_PLAN, 0, NULL);
    json_t *kws = json_pack ("[s]", "totem pole");
    assert_int_equal (bmq_recipe_save (book, dir, "totem", 5, "Two balls", kws, plan, NULL, 0, err_text, sizeof err_text), 0);
    json_decref (kws);
    json_decref (plan);
    bmq_recipe_book_destroy (&book);
    msgs = s_converse (p, "story-o4", json_pack ("{s:s}", "prompt", "build a totem pole"), 5000);
    assert_string_equal (json_string_value (json_object_get (json_object_get (s_last (msgs), "body"), "recipe")), "totem");
    json_decref (msgs);
    assert_true (s_audited (p, "story-o1", "plan.proposed"));
    assert_true (s_audited (p, "story-o2", "plan.none"));
    s_stop (&p);
}

/* planner.review_rounds 0: an LLM planner refuses reviews too, and asks the model nothing. */
static void test_review_off (void **state)
{
    fake_llm_t *llm = fake_llm_new ();
    s_proc_t *p = s_start ("gemini", llm, NULL, "BLENDMQ_PLANNER_REVIEW_ROUNDS=0");
    s_wait_ready (p);
    json_t *msgs = s_converse (p, "story-r1", json_pack ("{s:s, s:s, s:{s:[], s:{s:s}, s:i, s:i}}", "prompt", "a chair", "mode",
                                                         "review", "review", "plan", "result", "status", "done", "round", 1,
                                                         "rounds", 1), 5000);
    json_t *err = json_object_get (s_last (msgs), "body");
    assert_string_equal (json_string_value (json_object_get (err, "code")), "unsupported");
    assert_non_null (strstr (json_string_value (json_object_get (err, "message")), "planner.review_rounds is 0"));
    assert_int_equal (fake_llm_requests (llm), 0);
    json_decref (msgs);
    s_stop (&p);
    fake_llm_destroy (&llm);
}

static void test_bad_settings_refuse_to_start (void **state)
{
    const char *cases[][2] = {
        { "BLENDMQ_PLANNER_BACKEND=gemini", "GEMINI_API_KEY is not set" },
        { "BLENDMQ_PLANNER_BACKEND=claude", "is not one of auto, offline, gemini, openai" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cmd[1024];
        snprintf (cmd, sizeof cmd, "env -u GEMINI_API_KEY %s '%s/blendmq-planner' 2>&1", cases[i][0], BMQ_BIN_DIR);
        FILE *f = popen (cmd, "r");
        char out[4096] = "";
        size_t n = fread (out, 1, sizeof out - 1, f);
        out[n] = 0;
        int st = pclose (f);
        /* every setting that cannot work is a configuration problem (78: not restarted in a loop,
         * and `up` prints the "configuration problem" report it finds on stderr) */
        assert_int_equal (WEXITSTATUS (st), BMQ_EXIT_CONFIG);
        assert_non_null (strstr (out, "configuration problem"));
        if (!strstr (out, cases[i][1])) fail_msg ("'%s' lacks '%s'", out, cases[i][1]);
    }
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "GEMINI_API_KEY=%s GEMINI_BASE_URL=http://example.com '%s/blendmq-planner' 2>&1", H_KEY, BMQ_BIN_DIR);
    FILE *f = popen (cmd, "r");
    char out[4096] = "";
    size_t n = fread (out, 1, sizeof out - 1, f);
    out[n] = 0;
    int st = pclose (f);
    assert_int_equal (WEXITSTATUS (st), BMQ_EXIT_CONFIG);
    assert_non_null (strstr (out, "refusing to send an API key over plain http://"));
    assert_null (strstr (out, H_KEY));
}

int main (void)
{
    signal (SIGPIPE, SIG_IGN);
    zsys_init ();
    bmq_llm_http_global_init ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_gemini_through_the_service),
        cmocka_unit_test (test_dialogues_do_not_block_the_loop),
        cmocka_unit_test (test_cancel),
        cmocka_unit_test (test_fallback_and_errors),
        cmocka_unit_test (test_prompts_are_read_again),
        cmocka_unit_test (test_offline_service),
        cmocka_unit_test (test_review_off),
        cmocka_unit_test (test_bad_settings_refuse_to_start),
    };
    return cmocka_run_group_tests (tests, s_keys_setup, s_keys_teardown);
}
