/* test_assets_hyper3d — the Hyper3D Rodin client (assets_hyper3d.c) against
 * fake_hyper3d in the documented shapes: create, status, download list and
 * the model's fetch into the cache; the cache serving a second fetch with no
 * HTTP; no key; a refused key; a failed job; hostile download lists (a name
 * that climbs out, a foreign host, not a glb, a body that never ends); a
 * wrong content type; a 429 on status (retried) and a create never retried;
 * the key never sent to the download host. Every case asserts the error
 * text and, through assets_fixture's scan, that nothing was written outside
 * the cache. (The generation jobs are test_assets_generate.c.) */
#include "assets_fixture.h"
#include "assets_hyper3d.h"
#include "fake_hyper3d.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define UUID "7c1f2a9e-0b3d-4e5f-9a6b-1c2d3e4f5a6b"
#define KEY  "test-key-0123456789"

static const unsigned char s_glb[] = "glTF\x02\x00\x00\x00\x20\x00\x00\x00" "0123456789abcdefghij";
static const size_t s_glb_len = sizeof s_glb - 1;
static char s_err[2048];

typedef struct {
    void      *fxs;             /* the fixture's state (temp dir, scan) */
    fx_t      *fx;
    fake_h3_t *fake;
    bmq_hyper3d_options_t opts;
} h3_t;

static int s_setup (void **state)
{
    h3_t *t = calloc (1, sizeof *t);
    if (fx_setup (&t->fxs)) return -1;
    t->fx = t->fxs;
    t->fake = fake_h3_new ();
    if (!t->fake) return -1;
    bmq_hyper3d_options_t *o = &t->opts;
    snprintf (o->base_url, sizeof o->base_url, "%s/api", fake_h3_url (t->fake));
    snprintf (o->download_hosts, sizeof o->download_hosts, "%s", fake_h3_hostport (t->fake));
    snprintf (o->api_key, sizeof o->api_key, KEY);
    snprintf (o->tier, sizeof o->tier, "Regular");
    snprintf (o->cache_dir, sizeof o->cache_dir, "%s", t->fx->cache);
    o->max_download_bytes = 64u << 10;
    o->poll_ms = 100;
    o->deadline_s = 10;
    o->http = t->fx->opts.http;
    *state = t;
    return 0;
}

static int s_teardown (void **state)
{
    h3_t *t = *state;
    fake_h3_destroy (&t->fake);
    fx_teardown (&t->fxs);
    free (t);
    return 0;
}

static bmq_hyper3d_t *s_client (h3_t *t)
{
    char err[600] = "";
    bmq_hyper3d_t *h = bmq_hyper3d_new (&t->opts, err, sizeof err);
    if (!h) fprintf (stderr, "client: %s\n", err);
    assert_non_null (h);
    return h;
}

static void s_created (h3_t *t)
{
    fake_h3_json (t->fake, "/api/v2/rodin", "{\"uuid\": \"" UUID "\", \"jobs\": {\"uuids\": [\"j1\", \"j2\"], \"subscription_key\": \"sub-KEY.1\"}}");
}

/* A download list with one glb entry named `name` at url (NULL: the fake's /dl/model.glb). */
static void s_list (h3_t *t, const char *name, const char *url)
{
    char dl[256], doc[1024];
    snprintf (dl, sizeof dl, "%s/dl/model.glb", fake_h3_url (t->fake));
    snprintf (doc, sizeof doc, "{\"list\": [{\"url\": \"%s/dl/preview.webp\", \"name\": \"preview.webp\"}, "
              "{\"url\": \"%s\", \"name\": \"%s\"}]}", fake_h3_url (t->fake), url ? url : dl, name);
    fake_h3_json (t->fake, "/api/v2/download", doc);
}

static void s_serve_glb (h3_t *t)
{
    fake_h3_route (t->fake, "/dl/model.glb", &(fake_resp_t) { .body = s_glb, .len = s_glb_len, .content_type = "model/gltf-binary" });
}

/* ---- the normal path -------------------------------------------------------- */

static void test_create_status_download_fetch (void **state)
{
    h3_t *t = *state;
    bmq_hyper3d_t *h = s_client (t);
    s_created (t);
    fake_h3_json (t->fake, "/api/v2/status", "{\"jobs\": [{\"uuid\": \"j1\", \"status\": \"Waiting\"}, {\"uuid\": \"j2\", \"status\": \"Waiting\"}]}");
    fake_h3_json (t->fake, "/api/v2/status", "{\"jobs\": [{\"uuid\": \"j1\", \"status\": \"Done\"}, {\"uuid\": \"j2\", \"status\": \"Generating\"}]}");
    fake_h3_json (t->fake, "/api/v2/status", "{\"jobs\": [{\"uuid\": \"j1\", \"status\": \"Done\"}, {\"uuid\": \"j2\", \"status\": \"Done\"}]}");
    s_list (t, "base_basic_pbr.glb", NULL);
    s_serve_glb (t);

    bmq_hyper3d_task_t task;
    assert_int_equal (bmq_hyper3d_create (h, "a red wooden chair", "Sketch", &task, s_err, sizeof s_err), 0);
    assert_string_equal (task.uuid, UUID);
    assert_string_equal (task.subscription_key, "sub-KEY.1");
    const char *form = fake_h3_body (t->fake, "/api/v2/rodin");
    fx_assert_says (form, "name=\"prompt\"", "a red wooden chair", "name=\"tier\"", "Sketch", "name=\"geometry_file_format\"", "glb", NULL);
    assert_string_equal (fake_h3_auth (t->fake, "/api/v2/rodin"), "Bearer " KEY);

    bmq_hyper3d_state_t st;
    char reason[200];
    const bmq_hyper3d_state_t want[] = { BMQ_HYPER3D_WAITING, BMQ_HYPER3D_GENERATING, BMQ_HYPER3D_DONE };
    for (int i = 0; i < 3; i++) {
        assert_int_equal (bmq_hyper3d_status (h, &task, &st, reason, sizeof reason, s_err, sizeof s_err), 0);
        assert_int_equal (st, want[i]);
    }
    fx_assert_says (fake_h3_body (t->fake, "/api/v2/status"), "\"subscription_key\"", "sub-KEY.1", NULL);
    assert_string_equal (fake_h3_auth (t->fake, "/api/v2/status"), "Bearer " KEY);

    bmq_asset_bundle_t *b = bmq_hyper3d_fetch (h, UUID, NULL, s_err, sizeof s_err);
    if (!b) fprintf (stderr, "%s\n", s_err);
    assert_non_null (b);
    assert_string_equal (b->source, "hyper3d");
    assert_string_equal (b->id, UUID);
    assert_string_equal (b->kind, "model");
    assert_string_equal (b->format, "glb");
    assert_string_equal (b->resolution, "");           /* one size: the link's key carries none */
    assert_string_equal (b->main, "model.glb");
    assert_int_equal (b->nfiles, 1);
    assert_int_equal (b->files[0].size, s_glb_len);
    char sha[65];
    fx_sha256 (s_glb, s_glb_len, sha);
    assert_string_equal (b->files[0].sha256, sha);          /* no checksum declared: named by what arrived */
    assert_false (b->from_cache);
    assert_true (fx_in_cache (t->fx, s_glb, s_glb_len));
    fx_assert_says (fake_h3_body (t->fake, "/api/v2/download"), "\"task_uuid\"", UUID, NULL);
    assert_string_equal (fake_h3_auth (t->fake, "/api/v2/download"), "Bearer " KEY);
    /* the key goes to the API only, never to the download host */
    assert_int_equal (fake_h3_hits (t->fake, "/dl/model.glb"), 1);
    assert_string_equal (fake_h3_auth (t->fake, "/dl/model.glb"), "(none)");
    assert_int_equal (fake_h3_hits (t->fake, "/dl/preview.webp"), 0);
    bmq_asset_bundle_destroy (&b);

    /* again: from the cache, no HTTP at all (also through the source table's fetch) */
    size_t before = fake_h3_total (t->fake);
    b = bmq_hyper3d_fetch (h, UUID, NULL, s_err, sizeof s_err);
    assert_non_null (b);
    assert_true (b->from_cache);
    assert_string_equal (b->resolution, "");
    assert_string_equal (b->files[0].sha256, sha);
    bmq_asset_bundle_destroy (&b);
    b = bmq_asset_source_hyper3d.fetch (h, UUID, "model", "1k", "", s_err, sizeof s_err);
    assert_non_null (b);
    assert_true (b->from_cache);
    bmq_asset_bundle_destroy (&b);
    assert_int_equal (fake_h3_total (t->fake), before);
    /* a new client on the same cache (the plan assets actor's) serves it too, without a key */
    t->opts.api_key[0] = 0;
    bmq_hyper3d_t *other = s_client (t);
    b = bmq_hyper3d_fetch (other, UUID, NULL, s_err, sizeof s_err);
    assert_non_null (b);
    assert_true (b->from_cache);
    bmq_asset_bundle_destroy (&b);
    assert_int_equal (fake_h3_total (t->fake), before);
    bmq_hyper3d_destroy (&other);
    bmq_hyper3d_destroy (&h);
}

/* The bytes of the multipart part whose headers name `filename`, and its Content-Type; NULL when absent. */
static const char *s_part (const char *body, size_t len, const char *filename, char *ctype, size_t *plen)
{
    char key[64];
    snprintf (key, sizeof key, "filename=\"%s\"", filename);
    const char *at = memmem (body, len, key, strlen (key));
    if (!at) return NULL;
    const char *ct = memmem (at, len - (size_t) (at - body), "Content-Type: ", 14);
    const char *start = memmem (at, len - (size_t) (at - body), "\r\n\r\n", 4);
    if (!ct || !start || ct > start) return NULL;
    const char *eol = memchr (ct, '\r', (size_t) (start - ct) + 1);
    snprintf (ctype, 64, "%.*s", (int) (eol - ct - 14), ct + 14);
    /* the boundary line is the body's first line */
    const char *nl = memchr (body, '\r', len);
    char boundary[128];
    snprintf (boundary, sizeof boundary, "\r\n%.*s", (int) (nl - body), body);
    start += 4;
    const char *end = memmem (start, len - (size_t) (start - body), boundary, strlen (boundary));
    if (!end) return NULL;
    *plen = (size_t) (end - start);
    return start;
}

static void test_create_with_images (void **state)
{
    h3_t *t = *state;
    bmq_hyper3d_t *h = s_client (t);
    static const unsigned char png[] = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01\x00\x01" "png-bytes\xff\x00";
    static const unsigned char jpg[] = "\xff\xd8\xff\xe0\x00\x10JFIF\x00jpeg\r\n--not-a-boundary\x00";
    bmq_hyper3d_image_t images[] = { { "image/png", (unsigned char *) png, sizeof png - 1 },
                                     { "image/jpeg", (unsigned char *) jpg, sizeof jpg - 1 } };
    s_created (t);
    bmq_hyper3d_task_t task;
    for (int with_prompt = 0; with_prompt < 2; with_prompt++) {
        assert_int_equal (bmq_hyper3d_create_with (h, with_prompt ? "a chair like this" : NULL, NULL, images, 2, &task,
                                                   s_err, sizeof s_err), 0);
        assert_string_equal (task.uuid, UUID);
        size_t len, plen;
        const char *body = fake_h3_body_bytes (t->fake, "/api/v2/rodin", &len);
        char ctype[64];
        const char *p = s_part (body, len, "image_1.png", ctype, &plen);
        assert_non_null (p);
        assert_string_equal (ctype, "image/png");
        assert_int_equal (plen, sizeof png - 1);
        assert_memory_equal (p, png, plen);
        assert_non_null (memmem (body, len, "name=\"images\"; filename=\"image_1.png\"", 37));
        p = s_part (body, len, "image_2.jpg", ctype, &plen);
        assert_non_null (p);
        assert_string_equal (ctype, "image/jpeg");
        assert_int_equal (plen, sizeof jpg - 1);
        assert_memory_equal (p, jpg, plen);
        assert_non_null (memmem (body, len, "name=\"images\"; filename=\"image_2.jpg\"", 37));
        assert_null (memmem (body, len, "image_3", 7));
        assert_non_null (memmem (body, len, "name=\"geometry_file_format\"", 27));
        assert_true ((memmem (body, len, "name=\"prompt\"", 13) != NULL) == (with_prompt == 1));
    }
    assert_int_equal (fake_h3_hits (t->fake, "/api/v2/rodin"), 2);
    /* an image whose bytes are not its type, and six: refused before any HTTP */
    fake_h3_reset (t->fake);
    bmq_hyper3d_image_t liar = { "image/png", (unsigned char *) jpg, sizeof jpg - 1 };
    assert_int_equal (bmq_hyper3d_create_with (h, NULL, NULL, &liar, 1, &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "image 1", "PNG or JPEG", NULL);
    bmq_hyper3d_image_t six[6] = { images[0], images[0], images[0], images[0], images[0], images[0] };
    assert_int_equal (bmq_hyper3d_create_with (h, "x", NULL, six, 6, &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "at most 5 images", NULL);
    assert_int_equal (bmq_hyper3d_create_with (h, NULL, NULL, NULL, 0, &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "prompt must be", "or give images", NULL);
    assert_int_equal (fake_h3_total (t->fake), 0);
    bmq_hyper3d_destroy (&h);
}

static void test_source_kind (void **state)
{
    h3_t *t = *state;
    bmq_hyper3d_t *h = s_client (t);
    assert_string_equal (bmq_asset_source_hyper3d.name, "hyper3d");
    assert_null (bmq_asset_source_hyper3d.search (h, "model", "chair", s_err, sizeof s_err));
    fx_assert_says (s_err, "Hyper3D generates models", "no search", NULL);
    assert_null (bmq_asset_source_hyper3d.fetch (h, UUID, "hdri", "1k", "", s_err, sizeof s_err));
    fx_assert_says (s_err, "makes models", "hdri", NULL);
    assert_null (bmq_asset_source_hyper3d.fetch (h, UUID, "model", "1k", "fbx", s_err, sizeof s_err));
    fx_assert_says (s_err, "glb", "fbx", NULL);
    assert_null (bmq_hyper3d_fetch (h, "../../etc", NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "../../etc", "not a Hyper3D task uuid", NULL);
    assert_int_equal (fake_h3_total (t->fake), 0);
    bmq_hyper3d_destroy (&h);
}

/* ---- refusals ----------------------------------------------------------------- */

static void test_no_key (void **state)
{
    h3_t *t = *state;
    t->opts.api_key[0] = 0;
    bmq_hyper3d_t *h = s_client (t);                  /* it opens: the cache still serves */
    bmq_hyper3d_task_t task;
    assert_int_equal (bmq_hyper3d_create (h, "a chair", NULL, &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "Hyper3D needs an API key", "assets.hyper3d_api_key", "HYPER3D_API_KEY", NULL);
    assert_null (bmq_hyper3d_fetch (h, UUID, NULL, s_err, sizeof s_err));       /* not cached: a download needs the key */
    fx_assert_says (s_err, "API key", NULL);
    assert_int_equal (fake_h3_total (t->fake), 0);
    bmq_hyper3d_destroy (&h);
}

static void test_key_refused_and_create_never_retried (void **state)
{
    h3_t *t = *state;
    bmq_hyper3d_t *h = s_client (t);
    fake_h3_route (t->fake, "/api/v2/rodin", &(fake_resp_t) { .status = 401, .body = "{\"error\": \"invalid api key\"}" });
    bmq_hyper3d_task_t task;
    assert_int_equal (bmq_hyper3d_create (h, "a chair", NULL, &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "Hyper3D API", "401", "invalid api key", "API key was refused", NULL);
    assert_int_equal (fake_h3_hits (t->fake, "/api/v2/rodin"), 1);
    /* a 503 on create is not tried again either (a lost answer must not make two paid jobs) */
    fake_h3_reset (t->fake);
    fake_h3_route (t->fake, "/api/v2/rodin", &(fake_resp_t) { .status = 503, .body = "busy" });
    s_created (t);
    assert_int_equal (bmq_hyper3d_create (h, "a chair", NULL, &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "503", "/v2/rodin", NULL);
    assert_int_equal (fake_h3_hits (t->fake, "/api/v2/rodin"), 1);
    /* an answer with an error field, and one without a usable uuid */
    fake_h3_reset (t->fake);
    fake_h3_json (t->fake, "/api/v2/rodin", "{\"error\": \"NO_CREDITS\", \"uuid\": null}");
    assert_int_equal (bmq_hyper3d_create (h, "a chair", NULL, &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "refused", "NO_CREDITS", NULL);
    fake_h3_reset (t->fake);
    fake_h3_json (t->fake, "/api/v2/rodin", "{\"uuid\": \"../../x\", \"jobs\": {\"subscription_key\": \"k\"}}");
    assert_int_equal (bmq_hyper3d_create (h, "a chair", NULL, &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "no task uuid", NULL);
    /* bad input never leaves the process */
    fake_h3_reset (t->fake);
    assert_int_equal (bmq_hyper3d_create (h, "", NULL, &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "prompt must be", NULL);
    assert_int_equal (bmq_hyper3d_create (h, "a chair", "Reg ular\"", &task, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "not a Hyper3D tier name", NULL);
    assert_int_equal (fake_h3_total (t->fake), 0);
    bmq_hyper3d_destroy (&h);
}

static void test_failed_job (void **state)
{
    h3_t *t = *state;
    bmq_hyper3d_t *h = s_client (t);
    bmq_hyper3d_task_t task = { .uuid = UUID, .subscription_key = "sub" };
    fake_h3_json (t->fake, "/api/v2/status", "{\"jobs\": [{\"uuid\": \"j1\", \"status\": \"Done\"}, "
                  "{\"uuid\": \"j2\", \"status\": \"Failed\", \"message\": \"prompt rejected by moderation\"}]}");
    bmq_hyper3d_state_t st;
    char reason[200];
    assert_int_equal (bmq_hyper3d_status (h, &task, &st, reason, sizeof reason, s_err, sizeof s_err), 0);
    assert_int_equal (st, BMQ_HYPER3D_FAILED);
    assert_string_equal (reason, "prompt rejected by moderation");
    /* a jobs list that is not one */
    fake_h3_reset (t->fake);
    fake_h3_json (t->fake, "/api/v2/status", "{\"jobs\": {\"status\": \"Done\"}}");
    assert_int_equal (bmq_hyper3d_status (h, &task, &st, reason, sizeof reason, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, UUID, "no jobs list", NULL);
    fake_h3_reset (t->fake);
    fake_h3_json (t->fake, "/api/v2/status", "{\"jobs\": [{\"status\": 3}]}");
    assert_int_equal (bmq_hyper3d_status (h, &task, &st, reason, sizeof reason, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "no status string", NULL);
    bmq_hyper3d_destroy (&h);
}

static void test_status_429_retried_and_wrong_type (void **state)
{
    h3_t *t = *state;
    bmq_hyper3d_t *h = s_client (t);
    bmq_hyper3d_task_t task = { .uuid = UUID, .subscription_key = "sub" };
    fake_h3_route (t->fake, "/api/v2/status", &(fake_resp_t) { .status = 429, .body = "slow down", .header_name = "Retry-After", .header_value = "0" });
    fake_h3_json (t->fake, "/api/v2/status", "{\"jobs\": [{\"uuid\": \"j1\", \"status\": \"Generating\"}]}");
    bmq_hyper3d_state_t st;
    char reason[200];
    assert_int_equal (bmq_hyper3d_status (h, &task, &st, reason, sizeof reason, s_err, sizeof s_err), 0);
    assert_int_equal (st, BMQ_HYPER3D_GENERATING);
    assert_int_equal (fake_h3_hits (t->fake, "/api/v2/status"), 2);
    fake_h3_reset (t->fake);
    fake_h3_route (t->fake, "/api/v2/status", &(fake_resp_t) { .content_type = "text/html", .body = "<html>login</html>" });
    assert_int_equal (bmq_hyper3d_status (h, &task, &st, reason, sizeof reason, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "Hyper3D API", "content type", "text/html", "application/json", NULL);
    bmq_hyper3d_destroy (&h);
}

/* ---- hostile download lists ----------------------------------------------------- */

static void test_name_climbs_out (void **state)
{
    h3_t *t = *state;
    bmq_hyper3d_t *h = s_client (t);
    s_list (t, "../../x.glb", NULL);
    s_serve_glb (t);
    bmq_asset_bundle_t *b = bmq_hyper3d_fetch (h, UUID, NULL, s_err, sizeof s_err);
    assert_non_null (b);                              /* the name is only looked at: it is no path */
    assert_string_equal (b->files[0].path, "model.glb");
    assert_true (fx_in_cache (t->fx, s_glb, s_glb_len));
    bmq_asset_bundle_destroy (&b);
    bmq_hyper3d_destroy (&h);                          /* the teardown's scan: nothing landed at ../../x.glb */
}

static void test_foreign_host (void **state)
{
    h3_t *t = *state;
    bmq_hyper3d_t *h = s_client (t);
    s_list (t, "model.glb", "https://evil.example/model.glb");
    assert_null (bmq_hyper3d_fetch (h, UUID, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, UUID, "evil.example", "hyper3d_download_hosts", NULL);
    s_list (t, "model.glb", "file:///etc/passwd");
    assert_null (bmq_hyper3d_fetch (h, UUID, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, UUID, "file:///etc/passwd", "not https", NULL);
    fake_h3_reset (t->fake);
    fake_h3_json (t->fake, "/api/v2/download", "{\"list\": [{\"url\": \"http://127.0.0.1:1/a.obj\", \"name\": \"a.obj\"}]}");
    assert_null (bmq_hyper3d_fetch (h, UUID, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "names no .glb file", NULL);
    assert_int_equal (fx_cached_files (t->fx), 0);
    bmq_hyper3d_destroy (&h);
}

static void test_not_a_glb_and_endless (void **state)
{
    h3_t *t = *state;
    bmq_hyper3d_t *h = s_client (t);
    s_list (t, "model.glb", NULL);
    fake_h3_route (t->fake, "/dl/model.glb", &(fake_resp_t) { .body = "<html>AccessDenied</html>", .content_type = "text/html" });
    assert_null (bmq_hyper3d_fetch (h, UUID, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "model.glb", "not a binary glTF", "refused", NULL);
    assert_int_equal (fx_cached_files (t->fx), 0);
    fake_h3_reset (t->fake);
    s_list (t, "model.glb", NULL);
    fake_h3_route (t->fake, "/dl/model.glb", &(fake_resp_t) { .body = "glTF", .mode = FAKE_ENDLESS, .content_type = "model/gltf-binary" });
    assert_null (bmq_hyper3d_fetch (h, UUID, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "model.glb", "sent more than", "assets.max_download_mb", NULL);
    assert_int_equal (fx_cached_files (t->fx), 0);
    /* a stop flag raised: the download ends "cancelled" */
    atomic_bool stop;
    atomic_init (&stop, true);
    fake_h3_reset (t->fake);
    s_list (t, "model.glb", NULL);
    s_serve_glb (t);
    assert_null (bmq_hyper3d_fetch (h, UUID, &stop, s_err, sizeof s_err));
    fx_assert_says (s_err, "cancelled", NULL);
    assert_int_equal (fx_cached_files (t->fx), 0);
    bmq_hyper3d_destroy (&h);
}

int h3_generate_tests (void);       /* test_assets_generate.c */

int main (void)
{
    bmq_assets_http_global_init ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_create_status_download_fetch, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_create_with_images, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_source_kind, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_no_key, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_key_refused_and_create_never_retried, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_failed_job, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_status_429_retried_and_wrong_type, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_name_climbs_out, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_foreign_host, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_not_a_glb_and_endless, s_setup, s_teardown),
    };
    int failed = cmocka_run_group_tests_name ("Hyper3D client", tests, NULL, NULL);
    return failed + h3_generate_tests ();
}
