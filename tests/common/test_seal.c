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

int main (void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_seal) };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
