/* Plan seals: a seal verifies only for exactly the plan that was sealed,
 * with the key that sealed it. */
#include "plan_seal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_seal (void **state)
{
    char path[64], path2[64], err[256];
    snprintf (path, sizeof path, "/tmp/bmq-test-key-%d", (int) getpid ());
    snprintf (path2, sizeof path2, "/tmp/bmq-test-key2-%d", (int) getpid ());
    assert_int_equal (bmq_seal_key_create (path, err, sizeof err), 0);
    assert_int_equal (bmq_seal_key_create (path2, err, sizeof err), 0);
    struct stat st;
    assert_int_equal (stat (path, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0600);
    bmq_seal_key_t key, other;
    assert_int_equal (bmq_seal_key_load (path, &key, err, sizeof err), 0);
    assert_int_equal (bmq_seal_key_load (path2, &other, err, sizeof err), 0);

    json_t *plan = json_loads ("[{\"operation\":\"bpy.ops.mesh.primitive_cube_add\",\"params\":{\"size\":2,\"location\":[0,0,1.5]}}]", 0, NULL);
    json_t *same = json_loads ("[{\"params\":{\"location\":[0,0,1.5],\"size\":2},\"operation\":\"bpy.ops.mesh.primitive_cube_add\"}]", 0, NULL);
    json_t *changed = json_loads ("[{\"operation\":\"bpy.ops.mesh.primitive_cube_add\",\"params\":{\"size\":2,\"location\":[0,0,1.50001]}}]", 0, NULL);
    char h1[BMQ_HEX_DIGEST], h2[BMQ_HEX_DIGEST], h3[BMQ_HEX_DIGEST], seal[BMQ_HEX_DIGEST];
    assert_int_equal (bmq_plan_hash (plan, h1), 0);
    assert_int_equal (bmq_plan_hash (same, h2), 0);
    assert_int_equal (bmq_plan_hash (changed, h3), 0);
    assert_string_equal (h1, h2);                 /* key order does not matter */
    assert_string_not_equal (h1, h3);
    bmq_seal_sign (&key, h1, seal);
    assert_true (bmq_seal_verify (&key, h1, seal));
    assert_false (bmq_seal_verify (&key, h3, seal));
    assert_false (bmq_seal_verify (&other, h1, seal));
    assert_false (bmq_seal_verify (&key, h1, "00"));
    assert_false (bmq_seal_verify (&key, h1, NULL));
    seal[0] = seal[0] == 'a' ? 'b' : 'a';
    assert_false (bmq_seal_verify (&key, h1, seal));

    FILE *f = fopen (path, "w");
    fputs ("not hex\n", f);
    fclose (f);
    assert_int_equal (bmq_seal_key_load (path, &key, err, sizeof err), -1);
    assert_non_null (strstr (err, "hex"));
    json_decref (plan);
    json_decref (same);
    json_decref (changed);
    remove (path);
    remove (path2);
}

/* Version 2 (issue 12): the target executor, an expiry and a single-use nonce. */
static void test_seal_v2 (void **state)
{
    bmq_seal_key_t key, other;
    for (size_t i = 0; i < sizeof key.bytes; i++) { key.bytes[i] = (unsigned char) i; other.bytes[i] = (unsigned char) (i + 1); }
    const char *hash = "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4";
    const char *other_hash = "0f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4";
    char seal[BMQ_SEAL_MAX], again[BMQ_SEAL_MAX], why[300];
    int64_t now = bmq_seal_now_ms ();
    assert_int_equal (bmq_seal_make (&key, hash, "local", 300000, seal), 0);
    assert_int_equal (strncmp (seal, "v2:", 3), 0);
    assert_non_null (strstr (seal, ":local:"));
    assert_int_equal (bmq_seal_make (&key, hash, "local", 300000, again), 0);
    assert_string_not_equal (seal, again);                  /* a fresh nonce each time */
    /* bad targets are not sealed for */
    assert_int_equal (bmq_seal_make (&key, hash, "", 1000, again), -1);
    assert_int_equal (bmq_seal_make (&key, hash, "a:b", 1000, again), -1);
    assert_int_equal (bmq_seal_make (&key, hash, "a b", 1000, again), -1);
    assert_int_equal (bmq_seal_make (&key, hash, "local", 0, again), -1);

    /* without a guard: subject, key, target, expiry */
    assert_int_equal (bmq_seal_check (&key, hash, seal, "local", now, NULL, why, sizeof why), BMQ_SEAL_OK);
    assert_int_equal (bmq_seal_check (&key, other_hash, seal, "local", now, NULL, why, sizeof why), BMQ_SEAL_INVALID);
    assert_int_equal (bmq_seal_check (&other, hash, seal, "local", now, NULL, why, sizeof why), BMQ_SEAL_INVALID);
    assert_int_equal (bmq_seal_check (&key, hash, seal, "studio-2", now, NULL, why, sizeof why), BMQ_SEAL_WRONG_TARGET);
    assert_non_null (strstr (why, "'local'"));
    assert_non_null (strstr (why, "studio-2"));
    assert_int_equal (bmq_seal_check (&key, hash, seal, "local", now + 300000 + 60000, NULL, why, sizeof why), BMQ_SEAL_EXPIRED);
    assert_non_null (strstr (why, "expired"));
    /* tampering with any field breaks the mac: the target, the expiry, the nonce */
    char forged[BMQ_SEAL_MAX];
    char *colon = strstr (seal, ":local:");
    snprintf (forged, sizeof forged, "%.*s:other:%s", (int) (colon - seal), seal, colon + 7);
    assert_int_equal (bmq_seal_check (&key, hash, forged, "other", now, NULL, why, sizeof why), BMQ_SEAL_INVALID);
    snprintf (forged, sizeof forged, "%s", seal);
    forged[3] = forged[3] == '9' ? '8' : '9';               /* expiry */
    assert_int_equal (bmq_seal_check (&key, hash, forged, "local", now, NULL, why, sizeof why), BMQ_SEAL_INVALID);
    snprintf (forged, sizeof forged, "%s", seal);
    char *nonce = strchr (forged + 3, ':') + 1;
    nonce[0] = nonce[0] == 'a' ? 'b' : 'a';
    assert_int_equal (bmq_seal_check (&key, hash, forged, "local", now, NULL, why, sizeof why), BMQ_SEAL_INVALID);
    /* malformed and version 1 seals */
    char v1[BMQ_HEX_DIGEST];
    bmq_seal_sign (&key, hash, v1);
    assert_int_equal (bmq_seal_check (&key, hash, v1, "local", now, NULL, why, sizeof why), BMQ_SEAL_INVALID);
    assert_non_null (strstr (why, "version 2"));
    const char *junk[] = { NULL, "", "v2:", "v2:1:2:3:4", "v2:x:00000000000000000000000000000000:local:"
                           "0000000000000000000000000000000000000000000000000000000000000000" };
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        assert_int_equal (bmq_seal_check (&key, hash, junk[i], "local", now, NULL, NULL, 0), BMQ_SEAL_INVALID);

    /* with a guard: single use, bounded, expiry horizon */
    bmq_seal_guard_t *guard = bmq_seal_guard_new (3, 300000);
    assert_int_equal (bmq_seal_check (&key, hash, seal, "local", now, guard, why, sizeof why), BMQ_SEAL_OK);
    assert_int_equal (bmq_seal_check (&key, hash, seal, "local", now, guard, why, sizeof why), BMQ_SEAL_REPLAYED);
    assert_non_null (strstr (why, "replay"));
    assert_int_equal (bmq_seal_check (&key, hash, again, "local", now, guard, why, sizeof why), BMQ_SEAL_INVALID);  /* "again" failed to make */
    char s2[BMQ_SEAL_MAX], s3[BMQ_SEAL_MAX], s4[BMQ_SEAL_MAX], s5[BMQ_SEAL_MAX], far[BMQ_SEAL_MAX];
    assert_int_equal (bmq_seal_make (&key, hash, "local", 300000, s2), 0);
    assert_int_equal (bmq_seal_make (&key, hash, "local", 50, s3), 0);
    assert_int_equal (bmq_seal_make (&key, hash, "local", 300000, s4), 0);
    assert_int_equal (bmq_seal_make (&key, hash, "local", 300000, s5), 0);
    assert_int_equal (bmq_seal_make (&key, hash, "local", 3600000, far), 0);
    assert_int_equal (bmq_seal_check (&key, hash, far, "local", now, guard, why, sizeof why), BMQ_SEAL_TOO_LONG);
    assert_int_equal (bmq_seal_check (&key, hash, s2, "local", now, guard, why, sizeof why), BMQ_SEAL_OK);
    assert_int_equal (bmq_seal_check (&key, hash, s3, "local", now, guard, why, sizeof why), BMQ_SEAL_OK);
    /* full of live nonces: refused rather than forgotten */
    assert_int_equal (bmq_seal_check (&key, hash, s4, "local", now, guard, why, sizeof why), BMQ_SEAL_BUSY);
    assert_int_equal (bmq_seal_guard_size (guard), 3);
    /* s3 expires: its slot frees, s4 gets in; the replays stay refused */
    usleep (100 * 1000);
    assert_int_equal (bmq_seal_check (&key, hash, s4, "local", bmq_seal_now_ms (), guard, why, sizeof why), BMQ_SEAL_OK);
    assert_int_equal (bmq_seal_check (&key, hash, seal, "local", bmq_seal_now_ms (), guard, why, sizeof why), BMQ_SEAL_REPLAYED);
    assert_int_equal (bmq_seal_check (&key, hash, s2, "local", bmq_seal_now_ms (), guard, why, sizeof why), BMQ_SEAL_REPLAYED);
    /* a wrong-target or expired seal does not use up a nonce */
    assert_int_equal (bmq_seal_check (&key, hash, s5, "elsewhere", bmq_seal_now_ms (), guard, why, sizeof why), BMQ_SEAL_WRONG_TARGET);
    assert_string_equal (bmq_seal_status_name (BMQ_SEAL_REPLAYED), "replayed");
    bmq_seal_guard_destroy (&guard);
    assert_null (guard);
}

int main (void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_seal), cmocka_unit_test (test_seal_v2) };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
