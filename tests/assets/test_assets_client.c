/* test_assets_client — the Poly Haven client against a local fake speaking
 * the documented shapes (swagger.yml of Poly-Haven/Public-API): HDRI,
 * texture and model fetches (files in the cache by sha256, md5 checked, the
 * second fetch served from the cache with no HTTP, the link blob and
 * manifest) and search. Every case ends with the fixture's scan: nothing
 * outside the cache. */
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
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "codec.h"

static char s_err[2048];

/* ---- normal fetches ------------------------------------------------------- */

static void test_hdri (void **state)
{
    fx_t *fx = *state;
    json_t *hdr = fx_serve (fx, "sky_1k.hdr", fx_hdr, fx_hdr_len);
    json_t *exr = fx_serve (fx, "sky_1k.exr", "EXR?", 4);
    json_t *hdr2 = fx_serve (fx, "sky_2k.hdr", "2k", 2);
    fx_json (fx, "/files/sky_01", json_pack ("{s:{s:{s:o, s:o}, s:{s:o}}, s:o}", "hdri", "1k", "hdr", hdr, "exr", exr,
                                             "2k", "hdr", hdr2, "tonemapped", fx_serve (fx, "sky_tm.jpg", fx_jpg, fx_jpg_len)));
    bmq_polyhaven_t *ph = fx_client (fx);
    bmq_asset_bundle_t *b = bmq_polyhaven_fetch (ph, "sky_01", "hdri", "1k", NULL, s_err, sizeof s_err);
    if (!b) fprintf (stderr, "%s\n", s_err);
    assert_non_null (b);
    assert_false (b->from_cache);
    assert_string_equal (b->kind, "hdri");
    assert_string_equal (b->format, "hdr");
    assert_int_equal (b->nfiles, 1);
    assert_string_equal (b->main, "sky_01_1k.hdr");
    assert_string_equal (b->files[0].path, b->main);
    char sha[65];
    fx_sha256 (fx_hdr, fx_hdr_len, sha);
    assert_string_equal (b->files[0].sha256, sha);
    assert_int_equal (b->files[0].size, fx_hdr_len);
    assert_true (fx_in_cache (fx, fx_hdr, fx_hdr_len));
    assert_int_equal (fx_cached_files (fx), 1);                  /* neither the exr nor the 2k */
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/sky_1k.exr") + fake_ph_hits (fx->fake, "/dl/sky_2k.hdr"), 0);
    assert_string_equal (fake_ph_user_agent (fx->fake), bmq_assets_http_user_agent ());
    assert_int_equal (strncmp (bmq_assets_http_user_agent (), "blendmq/", 8), 0);
    assert_true (strlen (bmq_assets_http_user_agent ()) > 8);

    uint8_t *blob;
    size_t len;
    json_t *manifest;
    assert_int_equal (bmq_asset_bundle_blob (b, bmq_polyhaven_cache (ph), 1 << 20, &blob, &len, &manifest, s_err, sizeof s_err), 0);
    assert_int_equal (len, fx_hdr_len);
    assert_memory_equal (blob, fx_hdr, fx_hdr_len);
    assert_string_equal (json_string_value (json_object_get (manifest, "main")), "sky_01_1k.hdr");
    json_t *f0 = json_array_get (json_object_get (manifest, "files"), 0);
    assert_string_equal (json_string_value (json_object_get (f0, "sha256")), sha);
    assert_int_equal (json_integer_value (json_object_get (f0, "size")), fx_hdr_len);
    assert_null (json_object_get (f0, "map"));
    free (blob);
    json_decref (manifest);
    bmq_asset_bundle_destroy (&b);

    /* the second import: the cache alone, no request at all (a new client: nothing kept in memory) */
    bmq_polyhaven_destroy (&ph);
    ph = fx_client (fx);
    size_t before = fake_ph_total (fx->fake);
    b = bmq_polyhaven_fetch (ph, "sky_01", "hdri", "1k", "hdr", s_err, sizeof s_err);
    assert_non_null (b);
    assert_true (b->from_cache);
    assert_string_equal (b->files[0].sha256, sha);
    assert_int_equal (fake_ph_total (fx->fake), before);
    bmq_asset_bundle_destroy (&b);

    /* another format is another asset: downloaded */
    b = bmq_polyhaven_fetch (ph, "sky_01", "hdri", "1k", "exr", s_err, sizeof s_err);
    assert_non_null (b);
    assert_false (b->from_cache);
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/sky_1k.exr"), 1);
    bmq_asset_bundle_destroy (&b);
    bmq_polyhaven_destroy (&ph);
}

static void test_texture (void **state)
{
    fx_t *fx = *state;
    static const char *maps[] = { "Diffuse", "nor_gl", "nor_dx", "Rough", "AO", "Displacement", "arm", NULL };
    json_t *tree = json_object ();
    char name[64], body[64];
    for (int i = 0; maps[i]; i++) {
        snprintf (name, sizeof name, "brick_%s_1k.jpg", maps[i]);
        snprintf (body, sizeof body, "jpg bytes of %s", maps[i]);
        json_t *jpg = fx_serve (fx, name, body, strlen (body));
        snprintf (name, sizeof name, "brick_%s_1k.png", maps[i]);
        json_t *png = fx_serve (fx, name, fx_png, fx_png_len);
        json_object_set_new (tree, maps[i], json_pack ("{s:{s:o, s:o}}", "1k", "jpg", jpg, "png", png));
    }
    json_object_set_new (tree, "blend", json_pack ("{s:{s:o}}", "1k", "blend", fx_leaf ("https://dl.polyhaven.org/x.blend", NULL, 10)));
    fx_json (fx, "/files/brick_floor_003", tree);
    bmq_polyhaven_t *ph = fx_client (fx);
    bmq_asset_bundle_t *b = bmq_polyhaven_fetch (ph, "brick_floor_003", "texture", "1k", "jpg", s_err, sizeof s_err);
    if (!b) fprintf (stderr, "%s\n", s_err);
    assert_non_null (b);
    const char *want_maps[] = { "diffuse", "normal", "roughness", "ao", "displacement" };
    const char *want_src[] = { "Diffuse", "nor_gl", "Rough", "AO", "Displacement" };
    assert_int_equal (b->nfiles, 5);
    size_t total = 0;
    for (int i = 0; i < 5; i++) {
        assert_string_equal (b->files[i].map, want_maps[i]);
        snprintf (body, sizeof body, "jpg bytes of %s", want_src[i]);
        char sha[65];
        fx_sha256 (body, strlen (body), sha);
        assert_string_equal (b->files[i].sha256, sha);
        total += strlen (body);
    }
    assert_string_equal (b->main, b->files[0].path);
    assert_string_equal (b->main, "brick_floor_003_diffuse_1k.jpg");
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/brick_nor_dx_1k.jpg"), 0);
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/brick_arm_1k.jpg"), 0);
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/brick_Diffuse_1k.png"), 0);

    uint8_t *blob;
    size_t len;
    json_t *manifest;
    assert_int_equal (bmq_asset_bundle_blob (b, bmq_polyhaven_cache (ph), 1 << 20, &blob, &len, &manifest, s_err, sizeof s_err), 0);
    assert_int_equal (len, total);
    size_t at = 0;
    for (int i = 0; i < 5; i++) {                   /* the blob is the files in order */
        snprintf (body, sizeof body, "jpg bytes of %s", want_src[i]);
        assert_memory_equal (blob + at, body, strlen (body));
        json_t *f = json_array_get (json_object_get (manifest, "files"), (size_t) i);
        assert_string_equal (json_string_value (json_object_get (f, "map")), want_maps[i]);
        assert_int_equal (json_integer_value (json_object_get (f, "size")), strlen (body));
        at += strlen (body);
    }
    free (blob);
    json_decref (manifest);
    bmq_asset_bundle_destroy (&b);

    /* a texture without a diffuse map at that resolution is refused */
    fx_json (fx, "/files/bare_texture", json_pack ("{s:{s:{s:o}}}", "Rough", "1k", "jpg", fx_serve (fx, "r.jpg", "r", 1)));
    assert_null (bmq_polyhaven_fetch (ph, "bare_texture", "texture", "1k", "jpg", s_err, sizeof s_err));
    fx_assert_says (s_err, "bare_texture", "no diffuse map", "1k jpg", NULL);
    assert_int_equal (fake_ph_hits (fx->fake, "/dl/r.jpg"), 0);

    /* no format (issue 28): what the asset offers, jpg, then png, then exr (proto/assets.json) */
    fx_json (fx, "/files/png_only", json_pack ("{s:{s:{s:o}}, s:{s:{s:o}}, s:{s:{s:o}}}",
             "Diffuse", "1k", "png", fx_serve (fx, "p_diff.png", fx_png, fx_png_len),
             "Rough", "1k", "png", fx_serve (fx, "p_rough.png", "rough png", 9),
             "nor_gl", "1k", "exr", fx_serve (fx, "p_nor.exr", "nor exr", 7)));
    assert_null (bmq_polyhaven_fetch (ph, "png_only", "texture", "1k", "jpg", s_err, sizeof s_err));
    fx_assert_says (s_err, "png_only", "no diffuse map", "1k jpg", NULL);
    b = bmq_polyhaven_fetch (ph, "png_only", "texture", "1k", NULL, s_err, sizeof s_err);
    if (!b) fprintf (stderr, "%s\n", s_err);
    assert_non_null (b);
    assert_string_equal (b->format, "png");
    assert_int_equal (b->nfiles, 2);                 /* the exr normal map is another format's */
    assert_string_equal (b->files[0].map, "diffuse");
    assert_string_equal (b->files[1].map, "roughness");
    assert_string_equal (b->main, "png_only_diffuse_1k.png");
    bmq_asset_bundle_destroy (&b);
    b = bmq_polyhaven_fetch (ph, "png_only", "texture", "1k", "", s_err, sizeof s_err);    /* "" too, now cached */
    assert_non_null (b);
    assert_true (b->from_cache);
    assert_string_equal (b->format, "png");
    bmq_asset_bundle_destroy (&b);
    fx_json (fx, "/files/exr_only", json_pack ("{s:{s:{s:o}}}", "diff", "2k", "exr", fx_serve (fx, "e_diff.exr", "diff exr", 8)));
    b = bmq_polyhaven_fetch (ph, "exr_only", "texture", "2k", NULL, s_err, sizeof s_err);
    assert_non_null (b);
    assert_string_equal (b->format, "exr");
    bmq_asset_bundle_destroy (&b);
    assert_null (bmq_polyhaven_fetch (ph, "exr_only", "texture", "1k", NULL, s_err, sizeof s_err));
    fx_assert_says (s_err, "exr_only", "none of its formats", "1k", "jpg, png, exr", NULL);
    bmq_polyhaven_destroy (&ph);
}

static void test_model (void **state)
{
    fx_t *fx = *state;
    json_t *inc = json_pack ("{s:o, s:o}", "chair.bin", fx_serve (fx, "chair.bin", fx_bin, fx_bin_len),
                             "textures/chair_diff_1k.jpg", fx_serve (fx, "chair_diff_1k.jpg", fx_jpg, fx_jpg_len));
    fx_json (fx, "/files/arm_chair_01", fx_model_tree (fx, inc));
    bmq_polyhaven_t *ph = fx_client (fx);
    bmq_asset_bundle_t *b = bmq_polyhaven_fetch (ph, "arm_chair_01", "model", "1k", NULL, s_err, sizeof s_err);
    if (!b) fprintf (stderr, "%s\n", s_err);
    assert_non_null (b);
    assert_string_equal (b->format, "gltf");
    assert_int_equal (b->nfiles, 3);
    assert_string_equal (b->main, "arm_chair_01_1k.gltf");
    assert_string_equal (b->files[1].path, "chair.bin");
    assert_string_equal (b->files[2].path, "textures/chair_diff_1k.jpg");
    assert_true (fx_in_cache (fx, fx_gltf, strlen (fx_gltf)));
    assert_true (fx_in_cache (fx, fx_bin, fx_bin_len));
    assert_true (fx_in_cache (fx, fx_jpg, fx_jpg_len));
    uint8_t *blob;
    size_t len;
    json_t *manifest;
    assert_int_equal (bmq_asset_bundle_blob (b, bmq_polyhaven_cache (ph), 1 << 20, &blob, &len, &manifest, s_err, sizeof s_err), 0);
    assert_int_equal (len, strlen (fx_gltf) + fx_bin_len + fx_jpg_len);
    assert_memory_equal (blob, fx_gltf, strlen (fx_gltf));
    assert_memory_equal (blob + strlen (fx_gltf), fx_bin, fx_bin_len);
    assert_memory_equal (blob + strlen (fx_gltf) + fx_bin_len, fx_jpg, fx_jpg_len);
    assert_string_equal (json_string_value (json_object_get (manifest, "kind")), "model");
    /* in pieces (how large assets are staged): 7 bytes at a time, across file ends, the same bytes */
    bmq_asset_bundle_reader_t *r = bmq_asset_bundle_reader (b, bmq_polyhaven_cache (ph));
    uint8_t piece[7], *joined = malloc (len);
    size_t got, at = 0;
    do {
        assert_int_equal (bmq_asset_bundle_reader_next (r, piece, sizeof piece, &got, s_err, sizeof s_err), 0);
        assert_true (at + got <= len);
        memcpy (joined + at, piece, got);
        at += got;
        assert_int_equal (bmq_asset_bundle_reader_offset (r), at);
    } while (got == sizeof piece);
    assert_int_equal (at, len);
    assert_memory_equal (joined, blob, len);
    bmq_asset_bundle_reader_close (&r);
    free (joined);
    free (blob);
    json_decref (manifest);
    bmq_asset_bundle_destroy (&b);

    size_t before = fake_ph_total (fx->fake);
    b = bmq_polyhaven_fetch (ph, "arm_chair_01", "model", "1k", "gltf", s_err, sizeof s_err);
    assert_non_null (b);
    assert_true (b->from_cache);
    assert_int_equal (b->nfiles, 3);
    assert_int_equal (fake_ph_total (fx->fake), before);

    /* a cached file changed behind our back: the blob refuses it */
    char sha[65], path[512];
    fx_sha256 (fx_bin, fx_bin_len, sha);
    snprintf (path, sizeof path, "%s/%.2s/%s", fx->cache, sha, sha);
    FILE *f = fopen (path, "r+b");
    assert_non_null (f);
    fputc ('!', f);
    fclose (f);
    assert_int_equal (bmq_asset_bundle_blob (b, bmq_polyhaven_cache (ph), 1 << 20, &blob, &len, &manifest, s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "chair.bin", "the cache was changed", NULL);
    /* and so does a reader, when the changed file's last byte is read (its size is right, its sha256 not) */
    r = bmq_asset_bundle_reader (b, bmq_polyhaven_cache (ph));
    int rc = 0;
    s_err[0] = 0;
    while (rc == 0) {
        rc = bmq_asset_bundle_reader_next (r, piece, sizeof piece, &got, s_err, sizeof s_err);
        if (rc == 0 && got < sizeof piece) break;
    }
    assert_int_equal (rc, -1);
    fx_assert_says (s_err, "chair.bin", "the cache was changed", NULL);
    assert_true (bmq_asset_bundle_reader_offset (r) < strlen (fx_gltf) + fx_bin_len);   /* before the texture */
    bmq_asset_bundle_reader_close (&r);
    bmq_asset_bundle_destroy (&b);

    /* fbx is not offered: a clear error */
    assert_null (bmq_polyhaven_fetch (ph, "arm_chair_01", "model", "1k", "fbx", s_err, sizeof s_err));
    fx_assert_says (s_err, "arm_chair_01", "no fbx file at 1k", NULL);
    bmq_polyhaven_destroy (&ph);
}

static void test_search (void **state)
{
    fx_t *fx = *state;
    fx_json (fx, "/assets?t=hdris", json_pack (
        "{s:{s:s, s:i, s:i, s:[s,s], s:[s,s]}, s:{s:s, s:i, s:i, s:[s], s:[s,s]}, s:{s:s, s:i, s:i, s:[], s:[s]}, s:{s:s, s:i}}",
        "sunny_field", "name", "Sunny Field", "type", 0, "download_count", 10, "categories", "outdoor", "skies", "tags", "grass", "SUN",
        "night_city", "name", "Night City", "type", 0, "download_count", 99, "categories", "urban", "tags", "city", "sunset glow",
        "studio_small", "name", "Studio Small", "type", 0, "download_count", 50, "categories", "tags", "studio",
        "../escape", "name", "Sun Trap", "type", 0));
    bmq_polyhaven_t *ph = fx_client (fx);
    json_t *hits = bmq_polyhaven_search (ph, "hdri", "sun", s_err, sizeof s_err);
    if (!hits) fprintf (stderr, "%s\n", s_err);
    assert_non_null (hits);
    assert_int_equal (json_array_size (hits), 2);          /* a tag, then a tag; never the bad id */
    json_t *first = json_array_get (hits, 0);
    assert_string_equal (json_string_value (json_object_get (first, "id")), "night_city");   /* most downloaded first */
    assert_string_equal (json_string_value (json_object_get (first, "type")), "hdri");
    assert_string_equal (json_string_value (json_object_get (json_array_get (hits, 1), "id")), "sunny_field");
    assert_string_equal (json_string_value (json_array_get (json_object_get (json_array_get (hits, 1), "categories"), 1)), "skies");
    json_decref (hits);
    hits = bmq_polyhaven_search (ph, "hdri", "STUDIO", s_err, sizeof s_err);
    assert_int_equal (json_array_size (hits), 1);
    json_decref (hits);
    fx->opts.max_results = 2;
    bmq_polyhaven_destroy (&ph);
    ph = fx_client (fx);
    hits = bmq_polyhaven_search (ph, "hdri", NULL, s_err, sizeof s_err);
    assert_int_equal (json_array_size (hits), 2);          /* bounded */
    json_decref (hits);
    assert_null (bmq_polyhaven_search (ph, "vehicles", "x", s_err, sizeof s_err));
    fx_assert_says (s_err, "vehicles", "not one of", NULL);
    bmq_polyhaven_destroy (&ph);
}

static void test_stale_temp_files (void **state)
{
    fx_t *fx = *state;
    bmq_polyhaven_t *ph = fx_client (fx);          /* creates the cache */
    bmq_polyhaven_destroy (&ph);
    char old_tmp[400], new_tmp[400];
    snprintf (old_tmp, sizeof old_tmp, "%s/.tmp-000000000000000000000000", fx->cache);
    snprintf (new_tmp, sizeof new_tmp, "%s/.tmp-111111111111111111111111", fx->cache);
    FILE *f = fopen (old_tmp, "w");
    fputs ("half a download", f);
    fclose (f);
    f = fopen (new_tmp, "w");
    fputs ("another process is writing this", f);
    fclose (f);
    struct timespec two_hours_ago[2] = { { .tv_sec = time (NULL) - 7200 }, { .tv_sec = time (NULL) - 7200 } };
    assert_int_equal (utimensat (AT_FDCWD, old_tmp, two_hours_ago, 0), 0);
    fx->planted[0] = "t/cache/.tmp-111111111111111111111111";
    ph = fx_client (fx);
    struct stat st;
    assert_int_equal (lstat (old_tmp, &st), -1);    /* a dead process's leftover: swept */
    assert_int_equal (lstat (new_tmp, &st), 0);     /* a live one's: kept */
    bmq_polyhaven_destroy (&ph);
}

int main (void)
{
    bmq_assets_http_global_init ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_hdri, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_texture, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_model, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_search, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown (test_stale_temp_files, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
