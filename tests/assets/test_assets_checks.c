/* test_assets_checks — the assets client's rules on their own: MD5 known answers,
 * include paths, download URLs against the host allowlist, ids, the
 * options from the configuration's assets section, and a
 * fetch's arguments (refused before any request). */
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
#include <unistd.h>
#include <cmocka.h>

#include "codec.h"

static char s_err[2048];

/* ---- the checks on their own ---------------------------------------------- */

static void test_md5_known_answers (void **state)
{
    static const struct { const char *in, *md5; } kat[] = {
        { "", "d41d8cd98f00b204e9800998ecf8427e" },
        { "abc", "900150983cd24fb0d6963f7d28e17f72" },
        { "The quick brown fox jumps over the lazy dog", "9e107d9d372bb6826bd81d3542a419d6" },
        { "12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a" },
    };
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        bmq_assets_md5_t m;
        char out[33];
        bmq_assets_md5_init (&m);
        for (const char *p = kat[i].in; *p; p++) bmq_assets_md5_update (&m, p, 1);   /* byte by byte: the block seams */
        bmq_assets_md5_hex (&m, out);
        assert_string_equal (out, kat[i].md5);
    }
}

static void test_paths_and_urls (void **state)
{
    const char *good[] = { "a.bin", "textures/a_diff_1k.jpg", "a/b/c.png", "x..y", "..a", NULL };
    for (int i = 0; good[i]; i++) assert_int_equal (bmq_assets_check_path (good[i], strlen (good[i]), s_err, sizeof s_err), 0);
    const struct { const char *path; size_t len; const char *says; } bad[] = {
        { "../escape", 9, "climbs out" }, { "/etc/passwd", 11, "absolute" }, { "a/../../b", 9, "climbs out" },
        { "a\\b.png", 7, "backslash" }, { "a//b", 4, "empty component" }, { "./a", 3, "\".\" component" },
        { "a/", 2, "empty component" }, { "", 0, "empty" }, { "a\0b", 3, "NUL" }, { "a\nb", 3, "control" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal (bmq_assets_check_path (bad[i].path, bad[i].len, s_err, sizeof s_err), -1);
        fx_assert_says (s_err, bad[i].says, NULL);
    }
    char longp[300];
    memset (longp, 'a', sizeof longp - 1);
    longp[sizeof longp - 1] = 0;
    assert_int_equal (bmq_assets_check_path (longp, strlen (longp), s_err, sizeof s_err), -1);
    fx_assert_says (s_err, "longer than", NULL);

    const char *hosts = "dl.polyhaven.org,127.0.0.1:8080";
    assert_int_equal (bmq_assets_check_url ("https://dl.polyhaven.org/file/x.hdr", hosts, "assets.polyhaven_download_hosts", s_err, sizeof s_err), 0);
    assert_int_equal (bmq_assets_check_url ("http://127.0.0.1:8080/dl/x", hosts, "assets.polyhaven_download_hosts", s_err, sizeof s_err), 0);
    assert_int_equal (bmq_assets_check_url ("https://DL.PolyHaven.org/x", hosts, "assets.polyhaven_download_hosts", s_err, sizeof s_err), 0);
    const struct { const char *url, *says; } refused[] = {
        { "http://dl.polyhaven.org/x", "not https" },
        { "https://evil.example/x", "evil.example is not in" },
        { "https://dl.polyhaven.org.evil.example/x", "is not in" },
        { "https://dl.polyhaven.org:8443/x", "dl.polyhaven.org:8443 is not in" },
        { "http://127.0.0.1:9999/x", "127.0.0.1:9999 is not in" },
        { "https://user:pw@dl.polyhaven.org/x", "user info" },
        { "ftp://dl.polyhaven.org/x", "not https" },
        { "not a url", "not a URL" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal (bmq_assets_check_url (refused[i].url, hosts, "assets.polyhaven_download_hosts", s_err, sizeof s_err), -1);
        fx_assert_says (s_err, refused[i].says, NULL);
    }
    assert_true (bmq_assets_id_valid ("abandoned_factory_canteen_01"));
    assert_true (bmq_assets_id_valid ("ArmChair_01"));           /* Poly Haven's rule allows capitals and - */
    assert_false (bmq_assets_id_valid ("sky.hdr"));
    assert_false (bmq_assets_id_valid ("../x"));
    assert_false (bmq_assets_id_valid (""));
    char id[70];
    memset (id, 'a', 65);
    id[65] = 0;
    assert_false (bmq_assets_id_valid (id));
}

static void test_options_from_config (void **state)
{
    setenv ("BLENDMQ_ASSETS_POLYHAVEN_BASE_URL", "http://127.0.0.1:9/api", 1);
    setenv ("BLENDMQ_ASSETS_POLYHAVEN_DOWNLOAD_HOSTS", "dl.polyhaven.org,127.0.0.1:9", 1);
    setenv ("BLENDMQ_ASSETS_MAX_DOWNLOAD_MB", "3", 1);
    setenv ("BLENDMQ_AUDIT_DATABASE", "/var/lib/blendmq/audit.db", 1);
    char err[512] = "";
    bmq_config_t *cfg = bmq_config_load (NULL, err, sizeof err);
    assert_non_null (cfg);
    bmq_polyhaven_options_t o;
    assert_int_equal (bmq_polyhaven_options_from_config (&o, cfg, err, sizeof err), 0);
    assert_string_equal (o.base_url, "http://127.0.0.1:9/api");
    assert_string_equal (o.download_hosts, "dl.polyhaven.org,127.0.0.1:9");
    assert_string_equal (o.cache_dir, "/var/lib/blendmq/assets-cache");      /* next to audit.database */
    assert_int_equal (o.max_download_bytes, 3u << 20);
    assert_int_equal (o.http.timeout_ms, bmq_config_int (cfg, "assets.timeout_ms"));
    assert_int_equal (o.http.retries, bmq_config_int (cfg, "assets.retries"));
    bmq_config_set (cfg, "assets.cache_dir", "/srv/cache");
    bmq_config_set (cfg, "assets.max_download_mb", "0");
    assert_int_equal (bmq_polyhaven_options_from_config (&o, cfg, err, sizeof err), -1);
    fx_assert_says (err, "assets.max_download_mb", NULL);
    bmq_config_set (cfg, "assets.max_download_mb", "512");
    assert_int_equal (bmq_polyhaven_options_from_config (&o, cfg, err, sizeof err), 0);
    assert_string_equal (o.cache_dir, "/srv/cache");
    bmq_config_destroy (&cfg);
    unsetenv ("BLENDMQ_ASSETS_POLYHAVEN_BASE_URL");
    unsetenv ("BLENDMQ_ASSETS_POLYHAVEN_DOWNLOAD_HOSTS");
    unsetenv ("BLENDMQ_ASSETS_MAX_DOWNLOAD_MB");
    unsetenv ("BLENDMQ_AUDIT_DATABASE");
}

static void test_bad_arguments (void **state)
{
    fx_t *fx = *state;
    bmq_polyhaven_t *ph = fx_client (fx);
    const struct { const char *id, *type, *res, *fmt, *says; } bad[] = {
        { "../x", "hdri", "1k", NULL, "not a Poly Haven id" },
        { "sky.hdr", "hdri", "1k", NULL, "not a Poly Haven id" },
        { "sky", "mesh", "1k", NULL, "not one of hdri, texture, model" },
        { "sky", "hdri", "16k", NULL, "not one of 1k, 2k, 4k, 8k" },
        { "sky", "hdri", "1k", "png", "not one for a hdri" },
        { "sky", "texture", "1k", "tif", "not one for a texture" },    /* exr is one (proto/assets.json) */
        { "sky", "model", "1k", "blend", "not one for a model" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null (bmq_polyhaven_fetch (ph, bad[i].id, bad[i].type, bad[i].res, bad[i].fmt, s_err, sizeof s_err));
        fx_assert_says (s_err, bad[i].says, NULL);
    }
    assert_int_equal (fake_ph_total (fx->fake), 0);
    bmq_polyhaven_destroy (&ph);
}

int main (void)
{
    bmq_assets_http_global_init ();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_md5_known_answers),
        cmocka_unit_test (test_paths_and_urls),
        cmocka_unit_test (test_options_from_config),
        cmocka_unit_test_setup_teardown (test_bad_arguments, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
