/* test_assets_generate — the executor's generation jobs (executor_generate.c)
 * driven in-process: a small executor_t (a ROUTER its requester's DEALER
 * talks to, a PUB a SUB watches, the configuration pointed at fake_hyper3d)
 * and the loop's side played by this test (the jobs' reports read and
 * handled as executor_service.c does). Cases: asset.generate → progress
 * events in order (requester and PUB) → asset.generated done, the model in
 * the cache; asset.cancel mid-poll (by cid, and by job id from another asker)
 * → cancelled; a job that never finishes → deadline; a job Rodin fails;
 * refusals (another source, no key, more than 4 at once); hostile images
 * (bad base64, wrong magic, an unknown type, six, too large) refused before
 * any HTTP; stopping the
 * executor answers running jobs "cancelled". Linked into test_assets_hyper3d
 * (ctest assets.hyper3d): h3_generate_tests () runs this group. */
#include "assets_fixture.h"
#include "executor_internal.h"
#include "fake_hyper3d.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define UUID "0a1b2c3d-4e5f-4061-8293-a4b5c6d7e8f9"

static const unsigned char s_glb[] = "glTF\x02\x00\x00\x00\x20\x00\x00\x00" "generated-model-bytes";
static const size_t s_glb_len = sizeof s_glb - 1;

typedef struct {
    void      *fxs;
    fx_t      *fx;
    fake_h3_t *fake;
    executor_t ex;
    zsock_t   *dealer, *sub;
    zframe_t  *rid;             /* the dealer, as the ROUTER knows it */
    int64_t    heard;           /* its last heartbeat, in ex.requesters when it heartbeats */
} g_t;

static int s_n;                 /* a fresh inproc name per case */

static int g_setup (void **state)
{
    g_t *g = calloc (1, sizeof *g);
    if (fx_setup (&g->fxs)) return -1;
    g->fx = g->fxs;
    g->fake = fake_h3_new ();
    char err[512], url[256];
    g->ex.cfg = bmq_config_load (NULL, err, sizeof err);
    assert_non_null (g->ex.cfg);
    snprintf (url, sizeof url, "%s/api", fake_h3_url (g->fake));
    bmq_config_set (g->ex.cfg, "assets.hyper3d_base_url", url);
    bmq_config_set (g->ex.cfg, "assets.hyper3d_download_hosts", fake_h3_hostport (g->fake));
    bmq_config_set (g->ex.cfg, "assets.hyper3d_api_key", "gen-test-key");
    bmq_config_set (g->ex.cfg, "assets.cache_dir", g->fx->cache);
    bmq_config_set (g->ex.cfg, "assets.hyper3d_poll_ms", "100");
    bmq_config_set (g->ex.cfg, "assets.retries", "1");
    bmq_config_set (g->ex.cfg, "assets.timeout_ms", "5000");
    char ep[64];
    s_n++;
    snprintf (ep, sizeof ep, "@inproc://gen-router-%d", s_n);
    g->ex.router = zsock_new_router (ep);
    snprintf (ep, sizeof ep, "@inproc://gen-pub-%d", s_n);
    g->ex.pub = zsock_new_pub (ep);
    snprintf (ep, sizeof ep, ">inproc://gen-router-%d", s_n);
    g->dealer = zsock_new_dealer (ep);
    snprintf (ep, sizeof ep, ">inproc://gen-pub-%d", s_n);
    g->sub = zsock_new_sub (ep, "");
    g->ex.requesters = zhashx_new ();           /* executor_requesters.c keeps int64_t* last heard here */
    g->ex.interval = 1000;
    g->ex.liveness = 3;
    zstr_send (g->dealer, "hello");                  /* learn the dealer's routing id */
    zmsg_t *hello = zmsg_recv (g->ex.router);
    g->rid = zmsg_pop (hello);
    zmsg_destroy (&hello);
    *state = g;
    return 0;
}

static int g_teardown (void **state)
{
    g_t *g = *state;
    executor_generate_destroy (&g->ex.gen, &g->ex);
    zframe_destroy (&g->rid);
    zsock_destroy (&g->dealer);
    zsock_destroy (&g->sub);
    zsock_destroy (&g->ex.router);
    zsock_destroy (&g->ex.pub);
    zhashx_destroy (&g->ex.requesters);
    bmq_config_destroy (&g->ex.cfg);
    fake_h3_destroy (&g->fake);
    fx_teardown (&g->fxs);
    free (g);
    return 0;
}

static void s_generate (g_t *g, const char *cid, const char *source, json_int_t deadline_s)
{
    json_t *body = json_pack ("{s:s, s:s}", "source", source, "prompt", "a small brass teapot");
    if (deadline_s) json_object_set_new (body, "deadline_s", json_integer (deadline_s));
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_ASSET_GENERATE, cid, body);
    executor_generate_request (&g->ex, env, g->rid);
    bmq_envelope_destroy (&env);
}

static void s_cancel (g_t *g, const char *cid, const char *job)
{
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_ASSET_CANCEL, cid, job ? json_pack ("{s:s}", "job", job) : json_object ());
    executor_generate_cancel (&g->ex, env, g->rid);
    bmq_envelope_destroy (&env);
}

/* Play the loop until the requester gets a message that is not progress (or
 * timeout_ms): handle job reports, collect the progress the dealer got into
 * `progress` (when given) and return that message (NULL on time-out).
 * `on_progress` may act (e.g. cancel) on each progress event. */
typedef void (s_hook_fn) (g_t *g, const bmq_envelope_t *p, void *arg);

static bmq_envelope_t *s_until_answer (g_t *g, json_t *progress, int timeout_ms, s_hook_fn *hook, void *arg)
{
    zpoller_t *poller = zpoller_new (g->dealer, executor_generate_sock (g->ex.gen), NULL);
    int64_t until = bmq_mono_ms () + timeout_ms;
    bmq_envelope_t *answer = NULL;
    while (!answer && bmq_mono_ms () < until) {
        void *which = zpoller_wait (poller, 50);
        if (which == executor_generate_sock (g->ex.gen)) executor_on_generate (&g->ex);
        else if (which == g->dealer) {
            bmq_envelope_t *env = bmq_bus_recv (g->dealer, NULL);
            if (env && env->type == BMQ_MSG_PROGRESS) {
                if (progress) json_array_append (progress, env->body);
                if (hook) hook (g, env, arg);
                bmq_envelope_destroy (&env);
            }
            else answer = env;
        }
    }
    zpoller_destroy (&poller);
    return answer;
}

static void s_status (g_t *g, const char *st)
{
    char doc[160];
    snprintf (doc, sizeof doc, "{\"jobs\": [{\"uuid\": \"j1\", \"status\": \"%s\"}]}", st);
    fake_h3_json (g->fake, "/api/v2/status", doc);
}

static void s_created (g_t *g)
{
    fake_h3_json (g->fake, "/api/v2/rodin", "{\"uuid\": \"" UUID "\", \"jobs\": {\"uuids\": [\"j1\"], \"subscription_key\": \"sub-1\"}}");
}

/* ---- cases ---------------------------------------------------------------------- */

static void test_generate_done (void **state)
{
    g_t *g = *state;
    g->ex.gen = executor_generate_new (g->ex.cfg);
    s_created (g);
    s_status (g, "Waiting");
    fake_h3_route (g->fake, "/api/v2/status", &(fake_resp_t) { .status = 503, .body = "down" });    /* one poll fails */
    fake_h3_route (g->fake, "/api/v2/status", &(fake_resp_t) { .status = 503, .body = "down" });    /* (after its retry) */
    s_status (g, "Generating");
    s_status (g, "Generating");
    s_status (g, "Done");
    char dl[256], list[512];
    snprintf (dl, sizeof dl, "%s/dl/m.glb", fake_h3_url (g->fake));
    snprintf (list, sizeof list, "{\"list\": [{\"url\": \"%s\", \"name\": \"teapot.glb\"}]}", dl);
    fake_h3_json (g->fake, "/api/v2/download", list);
    fake_h3_route (g->fake, "/dl/m.glb", &(fake_resp_t) { .body = s_glb, .len = s_glb_len, .content_type = "model/gltf-binary" });
    json_t *progress = json_array ();
    zsys_set_rcvhwm (1000);
    s_generate (g, "gen-done-1", "hyper3d", 0);
    bmq_envelope_t *answer = s_until_answer (g, progress, 15000, NULL, NULL);
    assert_non_null (answer);
    assert_int_equal (answer->type, BMQ_MSG_ASSET_GENERATED);
    assert_string_equal (answer->cid, "gen-done-1");
    assert_string_equal (bmq_body_str (answer, "status"), "done");
    assert_string_equal (bmq_body_str (answer, "source"), "hyper3d");
    assert_string_equal (bmq_body_str (answer, "id"), UUID);
    assert_null (json_object_get (answer->body, "error"));
    assert_true (json_is_number (json_object_get (answer->body, "duration_ms")));
    bmq_envelope_destroy (&answer);
    /* progress in order: submitted 5, waiting 10, generating 20..90, downloading 95, done 100 */
    const char *order[] = { "submitted", "waiting", "generating", "downloading", "done" };
    size_t at = 0, i;
    json_int_t last = -1;
    json_t *p;
    json_array_foreach (progress, i, p) {
        const char *st = json_string_value (json_object_get (p, "status"));
        while (at < 5 && strcmp (order[at], st)) at++;
        assert_true (at < 5);                        /* never out of order */
        json_int_t step = json_integer_value (json_object_get (p, "step"));
        assert_true (step >= last);
        last = step;
        assert_string_equal (json_string_value (json_object_get (p, "event")), "generate");
        assert_string_equal (json_string_value (json_object_get (p, "plan_id")), "gen-done-1");
        assert_string_equal (json_string_value (json_object_get (p, "operation")), "hyper3d");
        assert_int_equal (json_integer_value (json_object_get (p, "total")), 100);
        fx_assert_says (json_string_value (json_object_get (p, "object")), "%", "(estimated)", NULL);
        assert_true (json_is_integer (json_object_get (p, "seq")));
    }
    assert_int_equal (at, 4);
    assert_int_equal (last, 100);
    assert_string_equal (json_string_value (json_object_get (json_array_get (progress, 0), "status")), "submitted");
    assert_int_equal (json_integer_value (json_object_get (json_array_get (progress, 0), "step")), 5);
    json_decref (progress);
    /* the watchers saw the same events on the PUB */
    size_t published = 0;
    const char *last_status = "";
    char last_buf[32] = "";
    zsock_set_rcvtimeo (g->sub, 300);
    for (bmq_envelope_t *seen; (seen = bmq_bus_recv (g->sub, NULL)); bmq_envelope_destroy (&seen)) {
        if (seen->type != BMQ_MSG_PROGRESS || strcmp (bmq_body_str (seen, "plan_id"), "gen-done-1")) continue;
        assert_string_equal (bmq_body_str (seen, "event"), "generate");
        published++;
        snprintf (last_buf, sizeof last_buf, "%s", bmq_body_str (seen, "status"));
        last_status = last_buf;
    }
    assert_int_equal (published, i);                 /* the SUB joined before the job started: it saw them all */
    assert_string_equal (last_status, "done");
    /* the model is in the cache: an import is served with no HTTP */
    assert_true (fx_in_cache (g->fx, s_glb, s_glb_len));
    assert_string_equal (fake_h3_auth (g->fake, "/dl/m.glb"), "(none)");
    assert_string_equal (fake_h3_auth (g->fake, "/api/v2/rodin"), "Bearer gen-test-key");
}

static void s_cancel_on_generating (g_t *g, const bmq_envelope_t *p, void *arg)
{
    const char *job = arg;
    static bool sent;
    if (!strcmp (bmq_body_str (p, "status"), "submitted")) sent = false;
    if (sent || strcmp (bmq_body_str (p, "status"), "generating")) return;
    sent = true;
    if (job) s_cancel (g, "canceller-1", job);
    else s_cancel (g, p->cid, NULL);
}

/* The requester was last heard long ago; the loop's watch runs. */
static void s_silence_on_generating (g_t *g, const bmq_envelope_t *p, void *arg)
{
    (void) arg;
    if (strcmp (bmq_body_str (p, "status"), "generating")) return;
    g->heard = bmq_mono_ms () - 60000;
    executor_watch_generations (&g->ex);
}

static void test_cancel_mid_poll (void **state)
{
    g_t *g = *state;
    g->ex.gen = executor_generate_new (g->ex.cfg);
    s_created (g);
    s_status (g, "Generating");
    s_generate (g, "gen-cancel-1", "hyper3d", 0);
    bmq_envelope_t *answer = s_until_answer (g, NULL, 15000, s_cancel_on_generating, NULL);
    assert_non_null (answer);
    assert_int_equal (answer->type, BMQ_MSG_ASSET_GENERATED);
    assert_string_equal (bmq_body_str (answer, "status"), "cancelled");
    assert_string_equal (bmq_body_str (answer, "id"), UUID);
    fx_assert_says (bmq_body_str (answer, "error"), "cancelled", NULL);
    bmq_envelope_destroy (&answer);
    size_t polls = fake_h3_hits (g->fake, "/api/v2/status");
    usleep (400 * 1000);
    assert_int_equal (fake_h3_hits (g->fake, "/api/v2/status"), polls);     /* polling stopped */
    assert_int_equal (fake_h3_hits (g->fake, "/api/v2/download"), 0);

    /* by job id from another asker: both get the generation's end */
    s_generate (g, "gen-cancel-2", "hyper3d", 0);
    answer = s_until_answer (g, NULL, 15000, s_cancel_on_generating, UUID);
    assert_non_null (answer);
    assert_string_equal (bmq_body_str (answer, "status"), "cancelled");
    bmq_envelope_t *other = s_until_answer (g, NULL, 2000, NULL, NULL);
    assert_non_null (other);
    assert_int_equal (other->type, BMQ_MSG_ASSET_GENERATED);
    assert_string_equal (bmq_body_str (other, "status"), "cancelled");
    bool both = (!strcmp (answer->cid, "gen-cancel-2") && !strcmp (other->cid, "canceller-1"))
             || (!strcmp (answer->cid, "canceller-1") && !strcmp (other->cid, "gen-cancel-2"));
    assert_true (both);
    bmq_envelope_destroy (&answer);
    bmq_envelope_destroy (&other);
    /* the requester falls silent (it heartbeats, then stops): the job is stopped */
    char *key = zframe_strhex (g->rid);
    g->heard = bmq_mono_ms ();
    zhashx_insert (g->ex.requesters, key, &g->heard);
    free (key);
    s_generate (g, "gen-orphan-1", "hyper3d", 0);
    answer = s_until_answer (g, NULL, 15000, s_silence_on_generating, NULL);
    assert_non_null (answer);
    assert_string_equal (bmq_body_str (answer, "status"), "cancelled");
    assert_string_equal (answer->cid, "gen-orphan-1");
    bmq_envelope_destroy (&answer);
    zhashx_purge (g->ex.requesters);
    /* a cancel for nothing running */
    s_cancel (g, "nothing-here", NULL);
    answer = s_until_answer (g, NULL, 2000, NULL, NULL);
    assert_non_null (answer);
    assert_int_equal (answer->type, BMQ_MSG_ERROR);
    fx_assert_says (bmq_body_str (answer, "message"), "no generation with cid nothing-here", NULL);
    bmq_envelope_destroy (&answer);
}

static void test_deadline_and_failed (void **state)
{
    g_t *g = *state;
    g->ex.gen = executor_generate_new (g->ex.cfg);
    s_created (g);
    s_status (g, "Waiting");                          /* never finishes */
    int64_t t0 = bmq_mono_ms ();
    s_generate (g, "gen-late-1", "hyper3d", 10);
    bmq_envelope_t *answer = s_until_answer (g, NULL, 20000, NULL, NULL);
    assert_non_null (answer);
    assert_string_equal (bmq_body_str (answer, "status"), "deadline");
    fx_assert_says (bmq_body_str (answer, "error"), "no model within 10 s", UUID, NULL);
    assert_true (bmq_mono_ms () - t0 >= 9900);
    bmq_envelope_destroy (&answer);

    fake_h3_reset (g->fake);
    s_created (g);
    fake_h3_route (g->fake, "/api/v2/status", &(fake_resp_t) { .status = 401, .body = "{\"error\": \"key revoked\"}" });
    s_generate (g, "gen-revoked-1", "hyper3d", 0);
    answer = s_until_answer (g, NULL, 15000, NULL, NULL);
    assert_non_null (answer);
    assert_string_equal (bmq_body_str (answer, "status"), "failed");
    fx_assert_says (bmq_body_str (answer, "error"), "could not be read 3 times in a row", "401", "key revoked", UUID, NULL);
    assert_int_equal (fake_h3_hits (g->fake, "/api/v2/status"), 3);    /* a 401 is not retried within a poll */
    bmq_envelope_destroy (&answer);

    fake_h3_reset (g->fake);
    s_created (g);
    fake_h3_json (g->fake, "/api/v2/status", "{\"jobs\": [{\"uuid\": \"j1\", \"status\": \"Failed\", \"message\": \"out of credits\"}]}");
    s_generate (g, "gen-failed-1", "hyper3d", 0);
    answer = s_until_answer (g, NULL, 15000, NULL, NULL);
    assert_non_null (answer);
    assert_string_equal (bmq_body_str (answer, "status"), "failed");
    fx_assert_says (bmq_body_str (answer, "error"), UUID, "failed", "out of credits", NULL);
    bmq_envelope_destroy (&answer);
}

static void test_refusals_and_stop (void **state)
{
    g_t *g = *state;
    bmq_config_set (g->ex.cfg, "assets.hyper3d_api_key", "");
    unsetenv ("HYPER3D_API_KEY");
    g->ex.gen = executor_generate_new (g->ex.cfg);
    s_generate (g, "gen-nokey", "hyper3d", 0);
    bmq_envelope_t *answer = s_until_answer (g, NULL, 2000, NULL, NULL);
    assert_non_null (answer);
    assert_int_equal (answer->type, BMQ_MSG_ERROR);
    fx_assert_says (bmq_body_str (answer, "message"), "hyper3d", "API key", "HYPER3D_API_KEY", NULL);
    bmq_envelope_destroy (&answer);
    executor_generate_destroy (&g->ex.gen, &g->ex);
    assert_int_equal (fake_h3_total (g->fake), 0);

    bmq_config_set (g->ex.cfg, "assets.hyper3d_api_key", "gen-test-key");
    g->ex.gen = executor_generate_new (g->ex.cfg);
    s_generate (g, "gen-ph", "polyhaven", 0);
    answer = s_until_answer (g, NULL, 2000, NULL, NULL);
    assert_non_null (answer);
    fx_assert_says (bmq_body_str (answer, "message"), "polyhaven", "cannot generate", NULL);
    bmq_envelope_destroy (&answer);

    s_created (g);
    s_status (g, "Waiting");
    char cid[32];
    for (int i = 0; i < 4; i++) {
        snprintf (cid, sizeof cid, "gen-many-%d", i);
        s_generate (g, cid, "hyper3d", 0);
    }
    s_generate (g, "gen-many-0", "hyper3d", 0);
    answer = s_until_answer (g, NULL, 3000, NULL, NULL);
    assert_non_null (answer);
    fx_assert_says (bmq_body_str (answer, "message"), "already running", NULL);
    bmq_envelope_destroy (&answer);
    s_generate (g, "gen-many-4", "hyper3d", 0);
    answer = s_until_answer (g, NULL, 3000, NULL, NULL);
    assert_non_null (answer);
    assert_int_equal (answer->type, BMQ_MSG_ERROR);
    fx_assert_says (bmq_body_str (answer, "message"), "4 generations are already running", NULL);
    bmq_envelope_destroy (&answer);
    /* stopping the executor: every running job answered "cancelled", promptly */
    int64_t t0 = bmq_mono_ms ();
    executor_generate_destroy (&g->ex.gen, &g->ex);
    assert_true (bmq_mono_ms () - t0 < 3000);
    int ended = 0;
    zsock_set_rcvtimeo (g->dealer, 1000);
    for (bmq_envelope_t *env; (env = bmq_bus_recv (g->dealer, NULL)); bmq_envelope_destroy (&env)) {
        if (env->type != BMQ_MSG_ASSET_GENERATED) continue;
        assert_string_equal (bmq_body_str (env, "status"), "cancelled");
        fx_assert_says (bmq_body_str (env, "error"), "executor stopped", NULL);
        ended++;
    }
    assert_int_equal (ended, 4);
}

/* asset.generate with hostile images: each refused at once with a clear error, no HTTP made */
static void s_generate_images (g_t *g, const char *cid, json_t *images, bool prompt)
{
    json_t *body = json_pack ("{s:s, s:o}", "source", "hyper3d", "images", images);
    if (prompt) json_object_set_new (body, "prompt", json_string ("this teapot"));
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_ASSET_GENERATE, cid, body);
    executor_generate_request (&g->ex, env, g->rid);
    bmq_envelope_destroy (&env);
}

static void test_hostile_images (void **state)
{
    g_t *g = *state;
    g->ex.gen = executor_generate_new (g->ex.cfg);
    s_created (g);
    const char *png = "iVBORw0KGgoAAAANSUhEUg==";           /* \x89PNG\r\n\x1a\n + an IHDR start */
    char *big = malloc ((8u << 20) / 3 * 4 + 16);
    size_t nbig = ((8u << 20) + 3) / 3 * 4;                  /* 8 MiB + 1..3 bytes decoded */
    memcpy (big, "iVBORw0K", 8);
    memset (big + 8, 'A', nbig - 8);
    big[nbig] = 0;
    struct { json_t *images; bool prompt; const char *says[3]; } cases[] = {
        { json_pack ("[{s:s, s:s}]", "type", "image/png", "data", "iVBO!!!!"), false, { "image 1", "not valid base64" } },
        { json_pack ("[{s:s, s:s}]", "type", "image/png", "data", "/9j/4AAQ"), true, { "image 1", "says image/png", "image/jpeg" } },
        { json_pack ("[{s:s, s:s}]", "type", "image/jpeg", "data", "R0lGODlhAQAB"), false, { "image 1", "neither a PNG nor a JPEG" } },
        { json_pack ("[{s:s, s:s}]", "type", "image/gif", "data", "R0lGODlhAQAB"), false, { "image 1", "image/gif", "only image/png and image/jpeg" } },
        { json_pack ("[{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "type", "image/png", "data", png,
                     "type", "image/png", "data", png, "type", "image/png", "data", png, "type", "image/png", "data", png,
                     "type", "image/png", "data", png, "type", "image/png", "data", png), true, { "1..5 images", "6" } },
        { json_pack ("[{s:s, s:s}, {s:s, s:s}]", "type", "image/png", "data", png, "type", "image/png", "data", big), false,
          { "image 2", "larger than", "8 MiB" } },
        { json_pack ("[{s:s}]", "type", "image/png"), false, { "image 1", "no data" } },
        { json_pack ("[]"), true, { "1..5 images" } },
        { json_null (), false, { "needs a prompt", "or images" } },
    };
    free (big);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cid[32];
        snprintf (cid, sizeof cid, "gen-img-%zu", i);
        s_generate_images (g, cid, cases[i].images, cases[i].prompt);
        bmq_envelope_t *answer = s_until_answer (g, NULL, 2000, NULL, NULL);
        assert_non_null (answer);
        assert_int_equal (answer->type, BMQ_MSG_ERROR);
        assert_string_equal (bmq_body_str (answer, "code"), "bad_request");
        const char *msg = bmq_body_str (answer, "message");
        for (int k = 0; k < 3 && cases[i].says[k]; k++)
            if (!strstr (msg, cases[i].says[k])) fail_msg ("case %zu: \"%s\" lacks \"%s\"", i, msg, cases[i].says[k]);
        bmq_envelope_destroy (&answer);
    }
    assert_int_equal (fake_h3_total (g->fake), 0);
}

int h3_generate_tests (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_generate_done, g_setup, g_teardown),
        cmocka_unit_test_setup_teardown (test_cancel_mid_poll, g_setup, g_teardown),
        cmocka_unit_test_setup_teardown (test_deadline_and_failed, g_setup, g_teardown),
        cmocka_unit_test_setup_teardown (test_refusals_and_stop, g_setup, g_teardown),
        cmocka_unit_test_setup_teardown (test_hostile_images, g_setup, g_teardown),
    };
    return cmocka_run_group_tests_name ("generation jobs", tests, NULL, NULL);
}
