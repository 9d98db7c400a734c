/* test_assets_hostile — the Poly Haven client against a hostile fake:
 * include paths that climb out, md5s that lie, bodies that never end,
 * declared sizes over the cap, wrong content types, 429 then 200, 503
 * forever, a slow drip, foreign hosts, redirects and symlinks planted in the
 * cache. Every case asserts the error names the problem and, through the
 * fixture's scan, that nothing was written outside the cache. */
#include "assets_check.h"
#include "assets_fixture.h"
#include "assets_md5.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "codec.h"

static char s_err[2048];

/* ---- hostile servers ------------------------------------------------------ */

static void test_include_climbs_out (void **state)
{
    fx_t *fx = *state;
    const struct { const char *path, *says; } bad[] = {
        { "../escape", "climbs out" }, { "/etc/passwd", "absolute" }, { "a/../../b", "climbs out" },
        { "textures\\evil.jpg", "backslash" }, { "a//b.bin", "empty component" }, { "./chair.bin", "\".\" component" },
    };
    bmq_polyhaven_t *ph = fx_client (fx);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *inc = json_pack ("{s:o, s:o}", "chair.bin", fx_serve (fx, "chair.bin", fx_bin, fx_bin_len),
                                 bad[i].path, fx_serve (fx, "evil.bin", "pwned", 5));
        char id[32];
        snprintf (id, sizeof id, "evil_chair_%zu", i);
        char path[64];
        snprintf (path, sizeof path, "/files/%s", id);
        fx_json (fx, path, fx_model_tree (fx, inc));
        size_t before = fake_ph_total (fx->fake);
        assert_null (bmq_polyhaven_fetch (ph, id, "model", "1k", "gltf", s_err, sizeof s_err));
        fx_assert_says (s_err, id, bad[i].path, bad[i].says, "refused", NULL);
        assert_int_equal (fake_ph_total (fx->fake), before + 1);     /* the file list only: no download */
    }
    /* more includes than a bundle may hold */
    json_t *many = json_object ();
    json_t *one = fx_serve (fx, "one.bin", "1", 1);
    for (int i = 0; i < BMQ_ASSETS_MAX_FILES + 1; i++) {
        char name[32];
        snprintf (name, sizeof name, "parts/p%03d.bin", i);
        json_object_set (many, name, one);
    }
    json_decref (one);
    fx_json (fx, "/files/crowded_chair", fx_model_tree (fx, many));
    assert_null (bmq_polyhaven_fetch (ph, "crowded_chair", "model", "1k", "gltf", s_err, sizeof s_err));
    fx_assert_says (s_err, "more than 256 files", "refused", NULL);
    assert_int_equal (fake_ph_hits_prefix (fx->fake, "/dl/"), 0);
    assert_int_equal (fx_cached_files (fx), 0);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_md5_lies (void **state)
{
    fx_t *fx = *state;
    json_t *leaf = fx_serve (fx, "liar.hdr", fx_hdr, fx_hdr_len);
    json_object_set_new (leaf, "md5", json_string ("0123456789abcdef0123456789abcdef"));
    fx_json (fx, "/files/liar", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", leaf));
    bmq_polyhaven_t *ph = fx_client (fx);
    assert_null (bmq_polyhaven_fetch (ph, "liar", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "liar_1k.hdr", fake_ph_hostport (fx->fake), "md5 mismatch", "0123456789abcdef0123456789abcdef", NULL);
    assert_int_equal (fx_cached_files (fx), 0);                  /* the temp file is gone, nothing named */
    /* nothing was recorded: trying again downloads again */
    assert_null (bmq_polyhaven_fetch (ph, "liar", "hdri", "1k", "hdr", s_err, sizeof s_err));
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/liar.hdr"), 2);
    /* a malformed md5 is refused before downloading */
    json_t *odd = fx_serve (fx, "odd.hdr", fx_hdr, fx_hdr_len);
    json_object_set_new (odd, "md5", json_string ("not-an-md5"));
    fx_json (fx, "/files/odd", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", odd));
    assert_null (bmq_polyhaven_fetch (ph, "odd", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "odd", "not 32 hex digits", NULL);
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/odd.hdr"), 0);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_body_never_ends (void **state)
{
    fx_t *fx = *state;
    char url[256];
    snprintf (url, sizeof url, "%s/dl/endless.hdr", fake_ph_url (fx->fake));
    fake_ph_route (fx->fake, "/dl/endless.hdr", &(fake_resp_t) { .body = "0123456789", .mode = FAKE_ENDLESS,
                                                                  .content_type = "application/octet-stream" });
    fx_json (fx, "/files/endless", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", fx_leaf (url, NULL, 100000)));
    bmq_polyhaven_t *ph = fx_client (fx);
    int64_t t0 = bmq_mono_ms ();
    assert_null (bmq_polyhaven_fetch (ph, "endless", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "endless_1k.hdr", fake_ph_hostport (fx->fake), "sent more than the 100000 bytes it declared", NULL);
    assert_true (bmq_mono_ms () - t0 < 5000);
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/endless.hdr"), 1);      /* the cap is not retried */
    /* an API answer that never ends stops at max_json_bytes */
    fake_ph_route (fx->fake, "/files/endless_api", &(fake_resp_t) { .body = "[1,", .mode = FAKE_ENDLESS });
    assert_null (bmq_polyhaven_fetch (ph, "endless_api", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "Poly Haven API", "sent more than 262144 bytes", NULL);
    assert_int_equal (fx_cached_files (fx), 0);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_declared_over_cap (void **state)
{
    fx_t *fx = *state;
    json_t *inc = json_pack ("{s:o, s:o}", "chair.bin", fx_serve (fx, "chair.bin", fx_bin, fx_bin_len),
                             "big.bin", fx_leaf ("http://placeholder", NULL, 0));
    char url[256];
    snprintf (url, sizeof url, "%s/dl/big.bin", fake_ph_url (fx->fake));
    json_object_set_new (inc, "big.bin", fx_leaf (url, NULL, 700000));
    json_object_set_new (inc, "big2.bin", fx_leaf (url, NULL, 700000));       /* together over 1 MiB */
    fx_json (fx, "/files/huge_chair", fx_model_tree (fx, inc));
    bmq_polyhaven_t *ph = fx_client (fx);
    assert_null (bmq_polyhaven_fetch (ph, "huge_chair", "model", "1k", "gltf", s_err, sizeof s_err));
    fx_assert_says (s_err, "huge_chair", "over assets.max_download_mb (1048576 bytes)", "refused before downloading", NULL);
    assert_int_equal (fake_ph_hits_prefix (fx->fake, "/dl/"), 0);
    /* one absurd size alone */
    fx_json (fx, "/files/absurd", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", fx_leaf (url, NULL, 1LL << 60)));
    assert_null (bmq_polyhaven_fetch (ph, "absurd", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "absurd", "refused before downloading", NULL);
    /* no size at all */
    fx_json (fx, "/files/sizeless", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", fx_leaf (url, NULL, -1)));
    assert_null (bmq_polyhaven_fetch (ph, "sizeless", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "sizeless", "no declared size", NULL);
    assert_int_equal (fake_ph_hits_prefix (fx->fake, "/dl/"), 0);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_wrong_content_type (void **state)
{
    fx_t *fx = *state;
    fake_ph_route (fx->fake, "/files/html_page", &(fake_resp_t) { .body = "<html>{}</html>", .content_type = "text/html" });
    fake_ph_route (fx->fake, "/assets?t=models", &(fake_resp_t) { .body = "{}", .content_type = "text/plain; charset=utf-8" });
    fake_ph_route (fx->fake, "/assets?t=textures", &(fake_resp_t) { .body = "{}", .content_type = "application/json; charset=utf-8" });
    bmq_polyhaven_t *ph = fx_client (fx);
    assert_null (bmq_polyhaven_fetch (ph, "html_page", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "Poly Haven API", fake_ph_hostport (fx->fake), "content type \"text/html\"", "expected application/json", NULL);
    assert_null (bmq_polyhaven_search (ph, "model", NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "text/plain", "expected application/json", NULL);
    json_t *ok = bmq_polyhaven_search (ph, "texture", NULL, s_err, sizeof s_err);    /* parameters are fine */
    assert_non_null (ok);
    json_decref (ok);
    /* JSON, but not the documented shape */
    fx_json (fx, "/files/weird", json_pack ("{s:{s:{s:s}}}", "hdri", "1k", "hdr", "a string"));
    assert_null (bmq_polyhaven_fetch (ph, "weird", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "weird", "not a {url, md5, size} entry", NULL);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_429_then_200 (void **state)
{
    fx_t *fx = *state;
    fake_ph_route (fx->fake, "/assets?t=hdris", &(fake_resp_t) { .status = 429, .body = "{\"error\": \"slow down\"}",
                                                                  .header_name = "Retry-After", .header_value = "1" });
    fake_ph_route (fx->fake, "/assets?t=hdris", &(fake_resp_t) { .body = "{\"sky\": {\"name\": \"Sky\", \"type\": 0}}" });
    bmq_polyhaven_t *ph = fx_client (fx);
    int64_t t0 = bmq_mono_ms ();
    json_t *hits = bmq_polyhaven_search (ph, "hdri", NULL, s_err, sizeof s_err);
    int64_t took = bmq_mono_ms () - t0;
    if (!hits) fprintf (stderr, "%s\n", s_err);
    assert_non_null (hits);
    assert_int_equal (json_array_size (hits), 1);
    assert_int_equal (fake_ph_hits (fx->fake, "/assets?t=hdris"), 2);
    assert_true (took >= 950);                  /* Retry-After: 1, not the 10 ms back-off */
    assert_true (took < 3000);
    json_decref (hits);
    /* a Retry-After longer than the cap waits the cap */
    fake_ph_reset (fx->fake);
    fake_ph_route (fx->fake, "/assets?t=hdris", &(fake_resp_t) { .status = 429, .header_name = "Retry-After", .header_value = "3600" });
    fake_ph_route (fx->fake, "/assets?t=hdris", &(fake_resp_t) { .body = "{}" });
    fx->opts.http.retry_after_max_ms = 300;
    bmq_polyhaven_destroy (&ph);
    ph = fx_client (fx);
    t0 = bmq_mono_ms ();
    hits = bmq_polyhaven_search (ph, "hdri", NULL, s_err, sizeof s_err);
    took = bmq_mono_ms () - t0;
    assert_non_null (hits);
    assert_true (took >= 280 && took < 2000);
    json_decref (hits);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_503_forever (void **state)
{
    fx_t *fx = *state;
    fake_ph_route (fx->fake, "/files/down", &(fake_resp_t) { .status = 503, .body = "{\"error\": \"maintenance\"}" });
    json_t *leaf = fx_leaf ("http://placeholder", NULL, 0);
    char url[256];
    snprintf (url, sizeof url, "%s/dl/down.hdr", fake_ph_url (fx->fake));
    json_decref (leaf);
    fake_ph_route (fx->fake, "/dl/down.hdr", &(fake_resp_t) { .status = 502, .body = "bad gateway", .content_type = "text/plain" });
    fx_json (fx, "/files/down_dl", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", fx_leaf (url, NULL, 10)));
    bmq_polyhaven_t *ph = fx_client (fx);
    assert_null (bmq_polyhaven_fetch (ph, "down", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "Poly Haven API", "HTTP 503", "maintenance", "gave up after 3 attempts", "/files/down", NULL);
    assert_int_equal (fake_ph_hits (fx->fake, "/files/down"), 3);        /* retries: 2 */
    assert_null (bmq_polyhaven_fetch (ph, "down_dl", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "down_dl_1k.hdr", "HTTP 502", "gave up after 3 attempts", NULL);
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/down.hdr"), 3);
    /* a 404 is not retried */
    assert_null (bmq_polyhaven_fetch (ph, "no_such_thing", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "HTTP 404", NULL);
    assert_null (strstr (s_err, "gave up"));
    assert_int_equal (fx_cached_files (fx), 0);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_slow_drip (void **state)
{
    fx_t *fx = *state;
    static const char body[] = "0123456789abcdefghij";
    char url[256];
    snprintf (url, sizeof url, "%s/dl/drip.hdr", fake_ph_url (fx->fake));
    fake_ph_route (fx->fake, "/dl/drip.hdr", &(fake_resp_t) { .body = body, .mode = FAKE_DRIP, .content_type = "application/octet-stream" });
    fx_json (fx, "/files/drip", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", fx_leaf (url, NULL, (long long) strlen (body))));
    fx->opts.http.retries = 1;
    bmq_polyhaven_t *ph = fx_client (fx);
    int64_t t0 = bmq_mono_ms ();
    assert_null (bmq_polyhaven_fetch (ph, "drip", "hdri", "1k", "hdr", s_err, sizeof s_err));
    int64_t took = bmq_mono_ms () - t0;
    fx_assert_says (s_err, "drip_1k.hdr", fake_ph_hostport (fx->fake), "too slow", "gave up after 2 attempts", NULL);
    assert_true (took < 8000);                   /* 20 bytes at 1 byte/s would take 20 s a try */
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/drip.hdr"), 2);
    assert_int_equal (fx_cached_files (fx), 0);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void *s_abort_soon (void *arg)
{
    (void) arg;
    usleep (400 * 1000);
    bmq_assets_http_abort_all ();
    return NULL;
}

/* A service that stops pulls bmq_assets_http_abort_all: a download dripping
 * in (and its retries) ends within about a second, saying why. The abort is
 * for the whole process and for good: this test runs last. */
static void test_abort_on_stop (void **state)
{
    fx_t *fx = *state;
    static const char body[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    char url[256];
    snprintf (url, sizeof url, "%s/dl/slow.hdr", fake_ph_url (fx->fake));
    fake_ph_route (fx->fake, "/dl/slow.hdr", &(fake_resp_t) { .body = body, .mode = FAKE_DRIP, .content_type = "application/octet-stream" });
    fx_json (fx, "/files/slow", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", fx_leaf (url, NULL, (long long) strlen (body))));
    fx->opts.http.retries = 5;
    fx->opts.http.low_speed_secs = 60;          /* only the abort can end it early */
    bmq_polyhaven_t *ph = fx_client (fx);
    pthread_t t;
    assert_int_equal (pthread_create (&t, NULL, s_abort_soon, NULL), 0);
    int64_t t0 = bmq_mono_ms ();
    assert_null (bmq_polyhaven_fetch (ph, "slow", "hdri", "1k", "hdr", s_err, sizeof s_err));
    int64_t took = bmq_mono_ms () - t0;
    pthread_join (t, NULL);
    fx_assert_says (s_err, "slow_1k.hdr", "aborted", NULL);
    assert_true (took < 3000);                  /* 36 bytes at 1 byte/s: 36 s without the abort */
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/slow.hdr"), 1);     /* not retried */
    assert_true (bmq_assets_http_aborted ());
    assert_int_equal (fx_cached_files (fx), 0);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_foreign_host (void **state)
{
    fx_t *fx = *state;
    char local_other[256];
    snprintf (local_other, sizeof local_other, "http://localhost:%s/dl/x.hdr", strchr (fake_ph_hostport (fx->fake), ':') + 1);
    fake_ph_file (fx->fake, "/dl/x.hdr", fx_hdr, fx_hdr_len);
    const struct { const char *url, *says; } bad[] = {
        { "https://evil.example/x.hdr", "download host evil.example is not in assets.polyhaven_download_hosts" },
        { local_other, "is not in assets.polyhaven_download_hosts" },
        { "http://dl.polyhaven.org/x.hdr", "is http, not https" },
        { "file:///etc/passwd", "not https" },
    };
    bmq_polyhaven_t *ph = fx_client (fx);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char id[32], path[64];
        snprintf (id, sizeof id, "foreign_%zu", i);
        snprintf (path, sizeof path, "/files/%s", id);
        fx_json (fx, path, json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", fx_leaf (bad[i].url, NULL, (long long) fx_hdr_len)));
        assert_null (bmq_polyhaven_fetch (ph, id, "hdri", "1k", "hdr", s_err, sizeof s_err));
        fx_assert_says (s_err, id, bad[i].says, "refused", NULL);
    }
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/x.hdr"), 0);
    /* an include on another host spoils the whole model before any download */
    json_t *inc = json_pack ("{s:o, s:o}", "chair.bin", fx_serve (fx, "chair.bin", fx_bin, fx_bin_len),
                             "tex.jpg", fx_leaf ("https://cdn.evil.example/tex.jpg", NULL, 3));
    fx_json (fx, "/files/mixed_chair", fx_model_tree (fx, inc));
    assert_null (bmq_polyhaven_fetch (ph, "mixed_chair", "model", "1k", "gltf", s_err, sizeof s_err));
    fx_assert_says (s_err, "mixed_chair", "tex.jpg", "cdn.evil.example", NULL);
    assert_int_equal (fake_ph_hits_prefix (fx->fake, "/dl/"), 0);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_redirect (void **state)
{
    fx_t *fx = *state;
    char url[256];
    snprintf (url, sizeof url, "%s/dl/moved.hdr", fake_ph_url (fx->fake));
    fake_ph_route (fx->fake, "/dl/moved.hdr", &(fake_resp_t) { .status = 302, .body = "", .content_type = "text/plain",
                                                                .header_name = "Location", .header_value = "https://evil.example/steal.hdr" });
    fx_json (fx, "/files/moved", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", fx_leaf (url, NULL, (long long) fx_hdr_len)));
    fake_ph_route (fx->fake, "/files/moved_api", &(fake_resp_t) { .status = 301, .header_name = "Location", .header_value = "http://other.example/files/x" });
    bmq_polyhaven_t *ph = fx_client (fx);
    assert_null (bmq_polyhaven_fetch (ph, "moved", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "moved_1k.hdr", "302", "redirect to evil.example", "not followed", NULL);
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/moved.hdr"), 1);
    assert_null (bmq_polyhaven_fetch (ph, "moved_api", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "Poly Haven API", "301", "redirect to other.example", "not followed", NULL);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

static void test_symlinks_planted (void **state)
{
    fx_t *fx = *state;
    char outside[400], link[400], sha[65];
    snprintf (outside, sizeof outside, "%s/outside", fx->tdir);
    assert_int_equal (mkdir (outside, 0700), 0);
    fx->planted[0] = "t/outside";

    /* the cache dir itself a symlink */
    assert_int_equal (symlink (outside, fx->cache), 0);
    char err[1024];
    assert_null (bmq_polyhaven_new (&fx->opts, err, sizeof err));
    fx_assert_says (err, fx->cache, "symlink", "refused", NULL);
    assert_int_equal (unlink (fx->cache), 0);

    /* a writable-by-others cache dir */
    assert_int_equal (mkdir (fx->cache, 0700), 0);
    assert_int_equal (chmod (fx->cache, 0777), 0);
    assert_null (bmq_polyhaven_new (&fx->opts, err, sizeof err));
    fx_assert_says (err, "writable by others", "refused", NULL);
    assert_int_equal (chmod (fx->cache, 0700), 0);

    /* the folder the file's sha256 lands in, planted as a symlink to outside */
    fx_json (fx, "/files/planted", json_pack ("{s:{s:{s:o}}}", "hdri", "1k", "hdr", fx_serve (fx, "p.hdr", fx_hdr, fx_hdr_len)));
    fx_sha256 (fx_hdr, fx_hdr_len, sha);
    snprintf (link, sizeof link, "%s/%.2s", fx->cache, sha);
    assert_int_equal (symlink (outside, link), 0);
    static char planted_rel[16];
    snprintf (planted_rel, sizeof planted_rel, "t/cache/%.2s", sha);
    fx->planted[1] = planted_rel;
    bmq_polyhaven_t *ph = fx_client (fx);
    assert_null (bmq_polyhaven_fetch (ph, "planted", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "symlink", "refused", NULL);
    fx_assert_clean (fx);                       /* outside/ is still empty, no temp file left */
    assert_int_equal (unlink (link), 0);

    /* the manifests folder planted as a symlink */
    char mdir[400];
    snprintf (mdir, sizeof mdir, "%s/m", fx->cache);
    assert_int_equal (symlink (outside, mdir), 0);
    fx->planted[1] = "t/cache/m";
    assert_null (bmq_polyhaven_fetch (ph, "planted", "hdri", "1k", "hdr", s_err, sizeof s_err));
    fx_assert_says (s_err, "symlink", "refused", NULL);
    fx_assert_clean (fx);
    assert_int_equal (unlink (mdir), 0);
    fx->planted[1] = NULL;

    /* a cached file replaced by a symlink: not read through it, downloaded again */
    bmq_asset_bundle_t *b = bmq_polyhaven_fetch (ph, "planted", "hdri", "1k", "hdr", s_err, sizeof s_err);
    if (!b) fprintf (stderr, "%s\n", s_err);
    assert_non_null (b);
    bmq_asset_bundle_destroy (&b);
    char file[500], target[500];
    snprintf (file, sizeof file, "%s/%.2s/%s", fx->cache, sha, sha);
    snprintf (target, sizeof target, "%s/secret", outside);
    FILE *f = fopen (target, "w");
    fputs ("secret", f);
    fclose (f);
    assert_int_equal (unlink (file), 0);
    assert_int_equal (symlink (target, file), 0);
    b = bmq_polyhaven_fetch (ph, "planted", "hdri", "1k", "hdr", s_err, sizeof s_err);
    assert_non_null (b);
    assert_false (b->from_cache);
    uint8_t *blob;
    size_t len;
    json_t *manifest;
    assert_int_equal (bmq_asset_bundle_blob (b, bmq_polyhaven_cache (ph), 1 << 20, &blob, &len, &manifest, s_err, sizeof s_err), 0);
    assert_memory_equal (blob, fx_hdr, fx_hdr_len);
    free (blob);
    json_decref (manifest);
    bmq_asset_bundle_destroy (&b);
    struct stat st;
    assert_int_equal (lstat (file, &st), 0);
    assert_true (S_ISREG (st.st_mode));          /* the link was replaced, the secret untouched */
    f = fopen (target, "r");
    char got[16] = "";
    assert_non_null (fgets (got, sizeof got, f));
    fclose (f);
    assert_string_equal (got, "secret");
    assert_int_equal (unlink (target), 0);
    fx_assert_clean (fx);
    bmq_polyhaven_destroy (&ph);
}

int main (void)
{
    bmq_assets_http_global_init ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_include_climbs_out, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_md5_lies, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_body_never_ends, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_declared_over_cap, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_wrong_content_type, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_429_then_200, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_503_forever, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_slow_drip, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_foreign_host, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_redirect, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_symlinks_planted, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_abort_on_stop, fx_setup, fx_teardown),     /* last: it aborts for good */
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
