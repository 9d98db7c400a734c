/* test_assets_sketchfab — the Sketchfab client against fake_sketchfab:
 * search (query sent, results bounded, pages followed only on the API),
 * a glb and a gltf archive (built here with libzip) into the cache and back
 * from it with no HTTP; then hostile answers: no token, 401/403, archive
 * entries that climb out, symlinks, encrypted entries, 300 entries, zip
 * bombs (honest and lying), a corrupt CRC, no or two .gltf, a foreign
 * download host, a redirect, a wrong content type, 429 then 200, a size
 * over the cap. Every request's Authorization header is checked: the token
 * goes to the API only. Every case asserts the error text and, through the
 * fixture's scan, that nothing was written outside the cache. */
#include "assets_fixture.h"
#include "assets_sketchfab.h"
#include "fake_sketchfab.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#define TOKEN "sekrit-token-42"

static char s_err[2048];

typedef struct {
    fx_t      *fx;              /* temp dirs, the cache and the scan */
    fake_sf_t *sf;
    bmq_sketchfab_options_t o;
} t_t;

static int t_setup (void **state)
{
    void *inner = NULL;
    if (fx_setup (&inner)) return -1;
    t_t *t = calloc (1, sizeof *t);
    t->fx = inner;
    t->sf = fake_sf_new ();
    if (!t->sf) return -1;
    snprintf (t->o.base_url, sizeof t->o.base_url, "%s/v3", fake_sf_url (t->sf));
    snprintf (t->o.api_token, sizeof t->o.api_token, TOKEN);
    snprintf (t->o.download_hosts, sizeof t->o.download_hosts, "sketchfab-prod-media.s3.amazonaws.com, %s", fake_sf_hostport (t->sf));
    snprintf (t->o.cache_dir, sizeof t->o.cache_dir, "%s", t->fx->cache);
    t->o.max_download_bytes = 1u << 20;
    t->o.max_json_bytes = 64u << 10;
    t->o.max_results = 4;
    t->o.http = t->fx->opts.http;
    *state = t;
    return 0;
}

static int t_teardown (void **state)
{
    t_t *t = *state;
    fake_sf_destroy (&t->sf);
    void *inner = t->fx;
    free (t);
    return fx_teardown (&inner);
}

static bmq_sketchfab_t *t_client (t_t *t)
{
    char err[1024] = "";
    bmq_sketchfab_t *sf = bmq_sketchfab_new (&t->o, err, sizeof err);
    if (!sf) fprintf (stderr, "client: %s\n", err);
    assert_non_null (sf);
    return sf;
}

/* The token went to /v3/… routes only, and to every one of them that downloads. */
static void t_assert_token_api_only (t_t *t)
{
    fake_sf_req_t r;
    for (size_t i = 0; fake_sf_request (t->sf, i, &r); i++) {
        bool api_dl = !strncmp (r.route, "/v3/models/", 11);
        if (api_dl) assert_string_equal (r.auth, "Token " TOKEN);
        else if (r.has_auth) { fprintf (stderr, "the token reached %s\n", r.route); fail (); }
    }
}

/* ---- scripting the fake --------------------------------------------------- */

static void t_uid (int n, char out[33])
{
    snprintf (out, 33, "%08x0123456789abcdef%08x", (unsigned) n * 2654435761u, (unsigned) n);
}

/* Serve bytes at /dl/NAME; the download answer for uid offers it as `form`
 * (glb or gltf) with `size` (< 0: the true size), and a usdz the client must ignore. */
static void t_offer (t_t *t, const char *uid, const char *form, const char *name, const void *bytes, size_t len, long long size)
{
    char route[128], url[512];
    snprintf (route, sizeof route, "/dl/%s", name);
    snprintf (url, sizeof url, "%s%s?X-Amz-Signature=abc", fake_sf_url (t->sf), route);
    fake_sf_file (t->sf, route, bytes, len);
    json_t *doc = json_pack ("{s:{s:s, s:I, s:i}, s:{s:s, s:I, s:i}}",
                             form, "url", url, "size", (json_int_t) (size < 0 ? (long long) len : size), "expires", 300,
                             "usdz", "url", "https://evil.example/model.usdz", "size", 10, "expires", 300);
    char *text = json_dumps (doc, JSON_COMPACT);
    snprintf (route, sizeof route, "/v3/models/%s/download", uid);
    fake_sf_json (t->sf, route, text);
    free (text);
    json_decref (doc);
}

/* Offer an archive for uid and fetch it: NULL expected, with the error in s_err. */
static void t_fetch_fails (t_t *t, bmq_sketchfab_t *sf, int n, const fake_sf_zent_t *e, size_t ne, void (*tweak) (unsigned char *, size_t))
{
    char uid[33], name[64];
    t_uid (n, uid);
    snprintf (name, sizeof name, "%s.zip", uid);
    size_t len;
    unsigned char *zip = fake_sf_zip (e, ne, &len);
    assert_non_null (zip);
    if (tweak) tweak (zip, len);
    t_offer (t, uid, "gltf", name, zip, len, -1);
    free (zip);
    assert_null (bmq_sketchfab_fetch (sf, uid, "gltf", s_err, sizeof s_err));
    fx_assert_says (s_err, uid, NULL);
}

static const char s_gltf[] = "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"uri\":\"scene.bin\",\"byteLength\":36}]}";

/* ---- normal --------------------------------------------------------------- */

static void test_search (void **state)
{
    t_t *t = *state;
    char page2[256];
    snprintf (page2, sizeof page2, "%s/v3/search?type=models&cursor=p2", fake_sf_url (t->sf));
    json_t *p1 = json_pack ("{s:[{s:s, s:s, s:{s:s}, s:{s:s}, s:i, s:s, s:i}, {s:s, s:s}, {s:s, s:s, s:{s:s}}], s:s, s:n}",
        "results",
        "uid", "0123456789abcdef0123456789abcdef", "name", "Wooden Chair", "user", "username", "carpenter",
        "license", "label", "CC Attribution", "faceCount", 1234, "viewerUrl", "https://sketchfab.com/3d-models/x", "vertexCount", 99,
        "uid", "../../etc/passwd", "name", "evil",
        "uid", "fedcba9876543210fedcba9876543210", "name", "Chair 2", "user", "username", "b",
        "next", page2, "previous");
    char *text = json_dumps (p1, JSON_COMPACT);
    fake_sf_json (t->sf, "/v3/search", text);
    free (text);
    json_decref (p1);
    fake_sf_json (t->sf, "/v3/search?cursor=p2",
                  "{\"results\": [{\"uid\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", \"name\": \"Chair 3\"},"
                  " {\"uid\": \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\", \"name\": \"Chair 4\"},"
                  " {\"uid\": \"cccccccccccccccccccccccccccccccc\", \"name\": \"Chair 5\"}],"
                  " \"next\": \"http://evil.example/v3/search?cursor=p3\", \"previous\": null}");
    bmq_sketchfab_t *sf = t_client (t);
    json_t *hits = bmq_sketchfab_search (sf, "wooden chair", s_err, sizeof s_err);
    assert_non_null (hits);
    assert_int_equal (json_array_size (hits), 4);                       /* max_results, across two pages */
    json_t *h = json_array_get (hits, 0);
    assert_string_equal (json_string_value (json_object_get (h, "id")), "0123456789abcdef0123456789abcdef");
    assert_string_equal (json_string_value (json_object_get (h, "name")), "Wooden Chair");
    assert_string_equal (json_string_value (json_object_get (h, "type")), "model");
    assert_string_equal (json_string_value (json_object_get (h, "author")), "carpenter");
    assert_string_equal (json_string_value (json_object_get (h, "license")), "CC Attribution");
    assert_int_equal (json_integer_value (json_object_get (h, "faces")), 1234);
    assert_string_equal (json_string_value (json_object_get (h, "url")), "https://sketchfab.com/3d-models/x");
    assert_string_equal (json_string_value (json_object_get (json_array_get (hits, 1), "id")), "fedcba9876543210fedcba9876543210");
    assert_string_equal (json_string_value (json_object_get (json_array_get (hits, 3), "name")), "Chair 4");
    json_decref (hits);
    fake_sf_req_t r;
    assert_true (fake_sf_request (t->sf, 0, &r));
    assert_string_equal (r.q, "wooden chair");
    assert_string_equal (r.type, "models");
    assert_string_equal (r.downloadable, "true");
    assert_string_equal (r.count, "4");
    assert_false (r.has_auth);                                          /* search needs no token */
    assert_int_equal (fake_sf_total (t->sf), 2);                        /* the second page, not the foreign third */
    /* a long query is refused before asking */
    char longq[BMQ_SKETCHFAB_QUERY_MAX + 2];
    memset (longq, 'a', sizeof longq - 1);
    longq[sizeof longq - 1] = 0;
    assert_null (bmq_sketchfab_search (sf, longq, s_err, sizeof s_err));
    fx_assert_says (s_err, "longer than 100 bytes", NULL);
    /* a foreign next on the first page is not followed either */
    fake_sf_reset (t->sf);
    fake_sf_json (t->sf, "/v3/search", "{\"results\": [{\"uid\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}], \"next\": \"http://evil.example/v3/search?cursor=2\"}");
    hits = bmq_sketchfab_search (sf, NULL, s_err, sizeof s_err);
    assert_int_equal (json_array_size (hits), 1);
    assert_int_equal (fake_sf_total (t->sf), 1);
    json_decref (hits);
    /* an answer that is not the documented shape */
    fake_sf_reset (t->sf);
    fake_sf_json (t->sf, "/v3/search", "{\"results\": {\"uid\": 1}}");
    assert_null (bmq_sketchfab_search (sf, "x", s_err, sizeof s_err));
    fx_assert_says (s_err, "no \"results\" list", NULL);
    bmq_sketchfab_destroy (&sf);
}

static void test_glb_then_cache (void **state)
{
    t_t *t = *state;
    char uid[33];
    t_uid (1, uid);
    static const unsigned char glb[] = "glTF\x02\0\0\0 fake glb bytes";
    char route[128];
    snprintf (route, sizeof route, "/v3/models/%s/download", uid);
    char url[256], gurl[256];
    snprintf (url, sizeof url, "%s/dl/m.glb", fake_sf_url (t->sf));
    snprintf (gurl, sizeof gurl, "%s/dl/m.zip", fake_sf_url (t->sf));
    fake_sf_file (t->sf, "/dl/m.glb", glb, sizeof glb);
    json_t *doc = json_pack ("{s:{s:s, s:i, s:i}, s:{s:s, s:i, s:i}}", "gltf", "url", gurl, "size", 500, "expires", 300,
                             "glb", "url", url, "size", (int) sizeof glb, "expires", 300);
    char *text = json_dumps (doc, JSON_COMPACT);
    fake_sf_json (t->sf, route, text);
    free (text);
    json_decref (doc);
    bmq_sketchfab_t *sf = t_client (t);
    bmq_asset_bundle_t *b = bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err);
    if (!b) fprintf (stderr, "%s\n", s_err);
    assert_non_null (b);
    assert_false (b->from_cache);
    assert_string_equal (b->source, "sketchfab");
    assert_string_equal (b->id, uid);
    assert_string_equal (b->kind, "model");
    assert_string_equal (b->format, "glb");                             /* preferred when offered */
    assert_string_equal (b->resolution, "");
    assert_string_equal (b->main, "scene.glb");
    assert_int_equal (b->nfiles, 1);
    assert_int_equal (b->files[0].size, sizeof glb);
    assert_true (fx_in_cache (t->fx, glb, sizeof glb));
    assert_int_equal (fake_sf_hits (t->sf, "/dl/m.zip"), 0);
    t_assert_token_api_only (t);
    bmq_asset_bundle_destroy (&b);
    size_t before = fake_sf_total (t->sf);
    assert_int_equal (before, 2);
    /* again, and from a new client (a restarted executor), and without a token: the cache */
    b = bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err);
    assert_non_null (b);
    assert_true (b->from_cache);
    assert_string_equal (b->resolution, "");
    bmq_asset_bundle_destroy (&b);
    bmq_sketchfab_destroy (&sf);
    t->o.api_token[0] = 0;
    sf = t_client (t);
    b = bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err);
    assert_non_null (b);
    assert_true (b->from_cache);
    assert_string_equal (b->main, "scene.glb");
    uint8_t *blob;
    size_t len;
    json_t *manifest;
    assert_int_equal (bmq_asset_bundle_blob (b, bmq_sketchfab_cache (sf), 1u << 20, &blob, &len, &manifest, s_err, sizeof s_err), 0);
    assert_int_equal (len, sizeof glb);
    assert_memory_equal (blob, glb, len);
    free (blob);
    json_decref (manifest);
    bmq_asset_bundle_destroy (&b);
    assert_int_equal (fake_sf_total (t->sf), before);                   /* no HTTP at all */
    bmq_sketchfab_destroy (&sf);
}

static void test_gltf_archive_then_cache (void **state)
{
    t_t *t = *state;
    char uid[33];
    t_uid (2, uid);
    static const char license[] = "CC-BY-4.0 by carpenter";
    const fake_sf_zent_t e[] = {
        { "textures/", NULL, 0, FAKE_ZDIR },
        { "scene.gltf", s_gltf, sizeof s_gltf - 1, FAKE_ZFILE },
        { "scene.bin", fx_bin, fx_bin_len, FAKE_ZFILE },
        { "textures/Material_baseColor.png", fx_png, fx_png_len, FAKE_ZFILE },
        { "extra/lod1.gltf", s_gltf, sizeof s_gltf - 1, FAKE_ZFILE },       /* deeper: not the main file */
        { "license.txt", license, sizeof license - 1, FAKE_ZFILE },
    };
    size_t len;
    unsigned char *zip = fake_sf_zip (e, 6, &len);
    assert_non_null (zip);
    t_offer (t, uid, "gltf", "model.zip", zip, len, -1);
    bmq_sketchfab_t *sf = t_client (t);
    bmq_asset_bundle_t *b = bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err);   /* no glb offered: gltf */
    if (!b) fprintf (stderr, "%s\n", s_err);
    assert_non_null (b);
    assert_string_equal (b->format, "gltf");
    assert_string_equal (b->main, "scene.gltf");
    assert_int_equal (b->nfiles, 5);
    const char *paths[] = { "scene.gltf", "scene.bin", "textures/Material_baseColor.png", "extra/lod1.gltf", "license.txt" };
    for (size_t i = 0; i < 5; i++) assert_string_equal (b->files[i].path, paths[i]);
    assert_true (fx_in_cache (t->fx, s_gltf, sizeof s_gltf - 1));
    assert_true (fx_in_cache (t->fx, fx_bin, fx_bin_len));
    assert_true (fx_in_cache (t->fx, fx_png, fx_png_len));
    assert_true (fx_in_cache (t->fx, zip, len));                        /* the archive itself, by sha256 */
    t_assert_token_api_only (t);
    bmq_asset_bundle_destroy (&b);
    size_t before = fake_sf_total (t->sf);
    b = bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err);
    assert_non_null (b);
    assert_true (b->from_cache);
    assert_int_equal (b->nfiles, 5);
    assert_int_equal (fake_sf_total (t->sf), before);
    bmq_asset_bundle_destroy (&b);
    /* asking for glb explicitly is another key: Sketchfab is asked, and offers none */
    assert_null (bmq_sketchfab_fetch (sf, uid, "glb", s_err, sizeof s_err));
    fx_assert_says (s_err, uid, "offers no glb download", NULL);
    free (zip);
    /* an archive whose one model is a .glb: a glb bundle, cached under the gltf key */
    t_uid (3, uid);
    static const unsigned char glb[] = "glTF\x02\0\0\0 glb in a zip";
    const fake_sf_zent_t g[] = { { "scene.glb", glb, sizeof glb, FAKE_ZFILE }, { "readme.txt", "hi", 2, FAKE_ZFILE } };
    zip = fake_sf_zip (g, 2, &len);
    assert_non_null (zip);
    t_offer (t, uid, "gltf", "glb.zip", zip, len, -1);
    free (zip);
    for (int round = 0; round < 2; round++) {
        b = bmq_sketchfab_fetch (sf, uid, "gltf", s_err, sizeof s_err);
        if (!b) fprintf (stderr, "%s\n", s_err);
        assert_non_null (b);
        assert_int_equal (b->from_cache, round == 1);
        assert_string_equal (b->format, "glb");
        assert_string_equal (b->main, "scene.glb");
        bmq_asset_bundle_destroy (&b);
    }
    assert_int_equal (fake_sf_hits (t->sf, "/dl/glb.zip"), 1);
    bmq_sketchfab_destroy (&sf);
}

/* ---- hostile -------------------------------------------------------------- */

static void test_bad_arguments_and_token (void **state)
{
    t_t *t = *state;
    bmq_sketchfab_t *sf = t_client (t);
    const struct { const char *uid, *fmt, *says; } bad[] = {
        { "0123456789ABCDEF0123456789abcdef", NULL, "not a Sketchfab uid" },
        { "0123456789abcdef0123456789abcde", NULL, "not a Sketchfab uid" },
        { "../0123456789abcdef0123456789abc", NULL, "not a Sketchfab uid" },
        { "0123456789abcdef0123456789abcdef", "fbx", "not one for a Sketchfab model" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null (bmq_sketchfab_fetch (sf, bad[i].uid, bad[i].fmt, s_err, sizeof s_err));
        fx_assert_says (s_err, bad[i].says, NULL);
    }
    bmq_sketchfab_destroy (&sf);
    snprintf (t->o.api_token, sizeof t->o.api_token, "tok\r\nX-Evil: 1");     /* a header injection */
    assert_null (bmq_sketchfab_new (&t->o, s_err, sizeof s_err));
    fx_assert_says (s_err, "space or control character", NULL);
    t->o.api_token[0] = 0;
    sf = t_client (t);
    assert_null (bmq_sketchfab_fetch (sf, "0123456789abcdef0123456789abcdef", NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "0123456789abcdef0123456789abcdef", "Sketchfab needs assets.sketchfab_api_token or SKETCHFAB_API_TOKEN", NULL);
    assert_int_equal (fake_sf_total (t->sf), 0);
    bmq_sketchfab_destroy (&sf);
    snprintf (t->o.api_token, sizeof t->o.api_token, TOKEN);
    sf = t_client (t);
    const int statuses[] = { 401, 403 };
    for (int i = 0; i < 2; i++) {
        char uid[33], route[128];
        t_uid (100 + i, uid);
        snprintf (route, sizeof route, "/v3/models/%s/download", uid);
        fake_sf_route (t->sf, route, &(fake_sf_resp_t) { .status = statuses[i], .body = "{\"detail\": \"Invalid token.\"}" });
        assert_null (bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err));
        char code[16];
        snprintf (code, sizeof code, "HTTP %d", statuses[i]);
        fx_assert_says (s_err, uid, "Sketchfab refused the API token", code, "SKETCHFAB_API_TOKEN", "Invalid token", NULL);
        assert_int_equal (fake_sf_hits (t->sf, route), 1);              /* not retried */
    }
    t_assert_token_api_only (t);
    bmq_sketchfab_destroy (&sf);
}

static void test_archive_names (void **state)
{
    t_t *t = *state;
    bmq_sketchfab_t *sf = t_client (t);
    const struct { const char *name, *says; } bad[] = {
        { "../escape", "climbs out" }, { "/etc/passwd", "absolute" }, { "a\\b", "backslash" }, { "textures/../../x.png", "climbs out" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const fake_sf_zent_t e[] = { { "scene.gltf", s_gltf, sizeof s_gltf - 1, FAKE_ZFILE }, { bad[i].name, "pwned", 5, FAKE_ZFILE } };
        int before = fx_cached_files (t->fx);
        t_fetch_fails (t, sf, 10 + (int) i, e, 2, NULL);
        fx_assert_says (s_err, bad[i].name, bad[i].says, "refused", NULL);
        assert_int_equal (fx_cached_files (t->fx), before + 1);        /* the archive only: nothing unpacked */
    }
    const fake_sf_zent_t link[] = { { "scene.gltf", s_gltf, sizeof s_gltf - 1, FAKE_ZFILE }, { "textures/base.png", "/etc/passwd", 11, FAKE_ZLINK } };
    t_fetch_fails (t, sf, 20, link, 2, NULL);
    fx_assert_says (s_err, "textures/base.png", "is a symlink: refused", NULL);
    bmq_sketchfab_destroy (&sf);
}

static void t_encrypt_bin (unsigned char *zip, size_t len) { assert_int_equal (fake_sf_zip_patch (zip, len, "scene.bin", FAKE_ZENCRYPTED, 0), 2); }
static void t_break_crc (unsigned char *zip, size_t len) { assert_int_equal (fake_sf_zip_patch (zip, len, "scene.bin", FAKE_ZCRC, 0x1), 2); }
static void t_lie_size (unsigned char *zip, size_t len) { assert_int_equal (fake_sf_zip_patch (zip, len, "bomb.bin", FAKE_ZUSIZE, 100), 2); }

static void test_archive_hostile (void **state)
{
    t_t *t = *state;
    bmq_sketchfab_t *sf = t_client (t);
    const fake_sf_zent_t base[] = { { "scene.gltf", s_gltf, sizeof s_gltf - 1, FAKE_ZFILE }, { "scene.bin", fx_bin, fx_bin_len, FAKE_ZFILE } };
    t_fetch_fails (t, sf, 30, base, 2, t_encrypt_bin);
    fx_assert_says (s_err, "scene.bin", "is encrypted: refused", NULL);
    t_fetch_fails (t, sf, 31, base, 2, t_break_crc);
    fx_assert_says (s_err, "scene.bin", "CRC", NULL);
    /* 300 entries */
    fake_sf_zent_t *many = calloc (300, sizeof *many);
    char (*names)[32] = calloc (300, 32);
    for (int i = 0; i < 300; i++) {
        snprintf (names[i], 32, "parts/p%03d.bin", i);
        many[i] = (fake_sf_zent_t) { names[i], "1", 1, FAKE_ZFILE };
    }
    many[0].name = "scene.gltf";
    t_fetch_fails (t, sf, 32, many, 300, NULL);
    fx_assert_says (s_err, "300 entries", "more than 256", "refused", NULL);
    free (many);
    free (names);
    /* zip bombs: 8 MiB of zeros that says so, 2 MiB of zeros that says 100 bytes */
    size_t big = 8u << 20;
    char *zeros = calloc (1, big);
    const fake_sf_zent_t honest[] = { { "scene.gltf", s_gltf, sizeof s_gltf - 1, FAKE_ZFILE }, { "bomb.bin", zeros, big, FAKE_ZFILE } };
    int before = fx_cached_files (t->fx);
    t_fetch_fails (t, sf, 33, honest, 2, NULL);
    fx_assert_says (s_err, "bomb.bin", "declares 8388608 bytes uncompressed", "refused before inflating", NULL);
    assert_int_equal (fx_cached_files (t->fx), before + 1);
    const fake_sf_zent_t liar[] = { { "scene.gltf", s_gltf, sizeof s_gltf - 1, FAKE_ZFILE }, { "bomb.bin", zeros, 2u << 20, FAKE_ZFILE } };
    t_fetch_fails (t, sf, 34, liar, 2, t_lie_size);
    fx_assert_says (s_err, "bomb.bin", "past the 100 bytes it declared", "stopped", NULL);
    free (zeros);
    /* the main file: none, or two at the same depth */
    const fake_sf_zent_t none[] = { { "scene.obj", "o", 1, FAKE_ZFILE }, { "scene.bin", fx_bin, fx_bin_len, FAKE_ZFILE } };
    t_fetch_fails (t, sf, 35, none, 2, NULL);
    fx_assert_says (s_err, "no .gltf or .glb file", "expected one", NULL);
    const fake_sf_zent_t two[] = { { "sub/", NULL, 0, FAKE_ZDIR }, { "sub/a.gltf", s_gltf, sizeof s_gltf - 1, FAKE_ZFILE },
                            { "sub/b.gltf", s_gltf, sizeof s_gltf - 1, FAKE_ZFILE } };
    t_fetch_fails (t, sf, 36, two, 3, NULL);
    fx_assert_says (s_err, "same depth", "sub/a.gltf", "sub/b.gltf", "expected one", NULL);
    /* not an archive at all */
    char uid[33];
    t_uid (37, uid);
    t_offer (t, uid, "gltf", "not.zip", "<html>surprise</html>", 21, -1);
    assert_null (bmq_sketchfab_fetch (sf, uid, "gltf", s_err, sizeof s_err));
    fx_assert_says (s_err, uid, "not a ZIP archive", NULL);
    t_assert_token_api_only (t);
    bmq_sketchfab_destroy (&sf);
}

static void test_download_hostile (void **state)
{
    t_t *t = *state;
    bmq_sketchfab_t *sf = t_client (t);
    char uid[33], route[128];
    /* a download host not allowed: nothing fetched from it */
    t_uid (40, uid);
    snprintf (route, sizeof route, "/v3/models/%s/download", uid);
    fake_sf_json (t->sf, route, "{\"glb\": {\"url\": \"https://evil.example.com/m.glb\", \"size\": 10, \"expires\": 300}}");
    assert_null (bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, uid, "evil.example.com", "is not in assets.sketchfab_download_hosts", "refused", NULL);
    assert_int_equal (fake_sf_total (t->sf), 1);
    /* a declared size over the cap: refused before downloading */
    t_uid (41, uid);
    t_offer (t, uid, "glb", "huge.glb", "x", 1, 5u << 20);
    assert_null (bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, uid, "declares 5242880 bytes", "over assets.max_download_mb", "refused before downloading", NULL);
    assert_int_equal (fake_sf_hits (t->sf, "/dl/huge.glb"), 0);
    /* a body longer than declared stops at the declared size */
    t_uid (42, uid);
    t_offer (t, uid, "glb", "long.glb", "0123456789", 10, 4);
    assert_null (bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "sent more than the 4 bytes it declared", NULL);
    /* the download host redirects */
    t_uid (43, uid);
    snprintf (route, sizeof route, "/v3/models/%s/download", uid);
    char doc[512];
    snprintf (doc, sizeof doc, "{\"glb\": {\"url\": \"%s/dl/moved.glb\", \"size\": 1, \"expires\": 300}}", fake_sf_url (t->sf));
    fake_sf_json (t->sf, route, doc);
    fake_sf_route (t->sf, "/dl/moved.glb", &(fake_sf_resp_t) { .status = 302, .header_name = "Location",
                                                                .header_value = "http://127.0.0.1:1/elsewhere.glb" });
    assert_null (bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "302", "127.0.0.1:1", "redirects are not followed", NULL);
    /* the API answers with a web page */
    t_uid (44, uid);
    snprintf (route, sizeof route, "/v3/models/%s/download", uid);
    fake_sf_route (t->sf, route, &(fake_sf_resp_t) { .content_type = "text/html", .body = "<html>login</html>" });
    assert_null (bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "the Sketchfab API", "content type \"text/html\"", "expected application/json", NULL);
    /* the API answers JSON of another shape */
    t_uid (45, uid);
    snprintf (route, sizeof route, "/v3/models/%s/download", uid);
    fake_sf_json (t->sf, route, "{\"glb\": {\"url\": 7, \"size\": 1}}");
    assert_null (bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, uid, "has no URL", NULL);
    /* 429 then 200: retried, with the token each time, and the file downloads */
    t_uid (46, uid);
    snprintf (route, sizeof route, "/v3/models/%s/download", uid);
    fake_sf_route (t->sf, route, &(fake_sf_resp_t) { .status = 429, .body = "{\"detail\": \"slow down\"}",
                                                     .header_name = "Retry-After", .header_value = "0" });
    static const unsigned char glb[] = "glTF\x02\0\0\0 after a 429";
    char url[256];
    snprintf (url, sizeof url, "%s/dl/later.glb", fake_sf_url (t->sf));
    fake_sf_file (t->sf, "/dl/later.glb", glb, sizeof glb);
    snprintf (doc, sizeof doc, "{\"glb\": {\"url\": \"%s\", \"size\": %zu, \"expires\": 300}}", url, sizeof glb);
    fake_sf_json (t->sf, route, doc);
    bmq_asset_bundle_t *b = bmq_sketchfab_fetch (sf, uid, NULL, s_err, sizeof s_err);
    if (!b) fprintf (stderr, "%s\n", s_err);
    assert_non_null (b);
    assert_int_equal (fake_sf_hits (t->sf, route), 2);
    assert_true (fx_in_cache (t->fx, glb, sizeof glb));
    bmq_asset_bundle_destroy (&b);
    t_assert_token_api_only (t);
    bmq_sketchfab_destroy (&sf);
}

static void test_options_from_config (void **state)
{
    setenv ("BLENDMQ_ASSETS_SKETCHFAB_BASE_URL", "http://127.0.0.1:9/v3", 1);
    setenv ("BLENDMQ_ASSETS_MAX_DOWNLOAD_MB", "3", 1);
    setenv ("BLENDMQ_AUDIT_DATABASE", "/var/lib/blendmq/audit.db", 1);
    setenv ("SKETCHFAB_API_TOKEN", "from-env", 1);
    char err[512] = "";
    bmq_config_t *cfg = bmq_config_load (NULL, err, sizeof err);
    assert_non_null (cfg);
    bmq_sketchfab_options_t o;
    assert_int_equal (bmq_sketchfab_options_from_config (&o, cfg, err, sizeof err), 0);
    assert_string_equal (o.base_url, "http://127.0.0.1:9/v3");
    assert_string_equal (o.download_hosts, "sketchfab-prod-media.s3.amazonaws.com");     /* the shipped default */
    assert_string_equal (o.api_token, "from-env");
    assert_string_equal (o.format, "");
    assert_string_equal (o.cache_dir, "/var/lib/blendmq/assets-cache");                   /* shared with Poly Haven */
    assert_int_equal (o.max_download_bytes, 3u << 20);
    assert_int_equal (o.http.timeout_ms, bmq_config_int (cfg, "assets.timeout_ms"));
    assert_int_equal (o.http.retries, bmq_config_int (cfg, "assets.retries"));
    bmq_config_set (cfg, "assets.sketchfab_api_token", "from-config");
    bmq_config_set (cfg, "assets.sketchfab_format", "gltf");
    assert_int_equal (bmq_sketchfab_options_from_config (&o, cfg, err, sizeof err), 0);
    assert_string_equal (o.api_token, "from-config");
    assert_string_equal (o.format, "gltf");
    bmq_config_set (cfg, "assets.sketchfab_format", "fbx");
    assert_int_equal (bmq_sketchfab_options_from_config (&o, cfg, err, sizeof err), -1);
    fx_assert_says (err, "assets.sketchfab_format", NULL);
    bmq_config_set (cfg, "assets.sketchfab_format", "");
    bmq_config_set (cfg, "assets.sketchfab_api_token", "two words");
    assert_int_equal (bmq_sketchfab_options_from_config (&o, cfg, err, sizeof err), -1);
    fx_assert_says (err, "assets.sketchfab_api_token", "space or control", NULL);
    bmq_config_set (cfg, "assets.sketchfab_api_token", "");
    bmq_config_set (cfg, "assets.max_download_mb", "0");
    assert_int_equal (bmq_sketchfab_options_from_config (&o, cfg, err, sizeof err), -1);
    fx_assert_says (err, "assets.max_download_mb", NULL);
    bmq_config_destroy (&cfg);
    unsetenv ("BLENDMQ_ASSETS_SKETCHFAB_BASE_URL");
    unsetenv ("BLENDMQ_ASSETS_MAX_DOWNLOAD_MB");
    unsetenv ("BLENDMQ_AUDIT_DATABASE");
    unsetenv ("SKETCHFAB_API_TOKEN");
}

int main (void)
{
    bmq_assets_http_global_init ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_options_from_config),
        cmocka_unit_test_setup_teardown (test_search, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown (test_glb_then_cache, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown (test_gltf_archive_then_cache, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown (test_bad_arguments_and_token, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown (test_archive_names, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown (test_archive_hostile, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown (test_download_hostile, t_setup, t_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
