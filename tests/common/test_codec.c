/* Codec: every message type round-trips; hostile input is rejected with a
 * message, never a crash or a leak (run under ASan in CI). */
#include "bus.h"
#include "codec.h"
#include "msgpack_json.h"

#include <msgpack.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

/* A body that satisfies messages.def for `type`: every listed field, typed. */
static json_t *s_body_for (bmq_msg_type_t type)
{
    json_t *body = json_object ();
    const char *strs[] = { "service", "state", "code", "message", "prompt", "plan_id", "source", "plan_hash", "seal",
                           "status", "operation", "command", "kind", "text", "script", "script_id", "executor" };
    const char *ints[] = { "position", "steps_done", "steps_total", "step", "total", "seq" };
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) json_object_set_new (body, strs[i], json_string ("x"));
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) json_object_set_new (body, ints[i], json_integer (3));
    json_object_set_new (body, "plan", json_pack ("[{s:s, s:{s:f, s:[iii]}}]", "operation", "bpy.ops.mesh.primitive_uv_sphere_add",
                                                   "params", "radius", 1.5, "location", 0, 0, 1));
    json_object_set_new (body, "accepted", json_true ());
    json_object_set_new (body, "errors", json_array ());
    json_object_set_new (body, "duration_ms", json_real (4.25));
    json_object_set_new (body, "objects", json_pack ("[s]", "Sphere"));
    json_object_set_new (body, "args", json_object ());
    json_object_set_new (body, "palette", json_pack ("{s:{}}", "bpy.ops.mesh.primitive_cube_add"));
    json_object_set_new (body, "tool", json_pack ("{s:s}", "name", "bpy.ops.mesh.primitive_cube_add"));
    json_object_set_new (body, "tool_name", json_string ("bpy.ops.mesh.primitive_cube_add"));
    json_object_set_new (body, "name", json_string ("my_recipe"));
    json_object_set_new (body, "scripts", json_array ());
    json_object_set_new (body, "names", json_pack ("[s]", "Cube"));
    json_object_set_new (body, "results", json_pack ("[{s:s}]", "id", "sky_01"));
    json_object_set_new (body, "records", json_pack ("[{s:s}]", "kind", "step"));
    json_object_set_new (body, "filter", json_pack ("{s:s}", "kind", "plan.*"));
    json_object_set_new (body, "result", json_pack ("{s:i}", "count", 2));
    json_object_set_new (body, "cancelled", json_pack ("[{s:s, s:s}]", "plan_id", "p-1", "state", "executing"));
    json_object_set_new (body, "events", json_pack ("[{s:s, s:i, s:i, s:s}]", "plan_id", "p-1", "step", 1, "total", 2, "status", "ok"));
    json_object_set_new (body, "data", json_pack ("{s:s, s:n, s:b}", "k", "é ünïcode", "nothing", "flag", 1));
    if (type == BMQ_MSG_STATUS_REPLY) json_object_set_new (body, "records", json_integer (3));    /* the audit's count there */
    char err[256] = "";
    if (bmq_msg_check_body (type, body, err, sizeof err)) fail_msg ("%s", err);
    return body;
}

static void test_round_trip_every_type (void **state)
{
    /* every key in every body (undeclared ones too): what strict mode refuses is tests/proto's */
    bool strict = bmq_codec_strict ();
    bmq_codec_set_strict (false);
    for (int t = 1; t < BMQ_MSG__COUNT; t++) {
        bmq_envelope_t *env = bmq_envelope_new ((bmq_msg_type_t) t, "story-1", s_body_for ((bmq_msg_type_t) t));
        if (t == BMQ_MSG_SCENE_REPLY) assert_int_equal (bmq_envelope_set_blob (env, "\x89PNG\r\n\x1a\n\0\1", 10), 0);
        unsigned char *buf;
        size_t len;
        char err[256];
        assert_int_equal (bmq_envelope_encode (env, &buf, &len, err, sizeof err), 0);
        bmq_envelope_t *back = bmq_envelope_decode (buf, len, err, sizeof err);
        assert_non_null (back);
        assert_int_equal (back->type, t);
        assert_string_equal (back->id, env->id);
        assert_string_equal (back->cid, "story-1");
        assert_string_equal (back->sender, env->sender);
        assert_int_equal (back->ts_ms, env->ts_ms);
        assert_true (json_equal (back->body, env->body));
        assert_int_equal (back->blob_len, env->blob_len);
        if (env->blob_len) assert_memory_equal (back->blob, env->blob, env->blob_len);
        /* integers stay integers and reals stay reals */
        assert_true (json_is_integer (json_object_get (back->body, "seq")));
        assert_true (json_is_real (json_object_get (back->body, "duration_ms")));
        free (buf);
        bmq_envelope_destroy (&back);
        bmq_envelope_destroy (&env);
        assert_null (env);
        bmq_envelope_destroy (&env);      /* safe twice */
    }
    bmq_codec_set_strict (strict);
}

static void test_encode_refuses_missing_field (void **state)
{
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, NULL, json_pack ("{s:s}", "plan_id", "p"));
    unsigned char *buf = NULL;
    size_t len;
    char err[256];
    assert_int_equal (bmq_envelope_encode (env, &buf, &len, err, sizeof err), -1);
    assert_non_null (strstr (err, "required field"));
    bmq_envelope_destroy (&env);
}

static void s_encode (const char *type, json_t *body, unsigned char **buf, size_t *len)
{
    bmq_envelope_t *env = bmq_envelope_new (bmq_msg_type_from_name (type), NULL, body);
    assert_int_equal (bmq_envelope_encode (env, buf, len, NULL, 0), 0);
    bmq_envelope_destroy (&env);
}

static void s_expect_reject (const void *buf, size_t len, const char *needle)
{
    char err[256] = "";
    bmq_envelope_t *env = bmq_envelope_decode (buf, len, err, sizeof err);
    if (env) fail_msg ("decoded hostile input (expected: %s)", needle);
    if (needle && !strstr (err, needle)) fail_msg ("error '%s' does not mention '%s'", err, needle);
}

static void test_truncated_everywhere (void **state)
{
    unsigned char *buf;
    size_t len;
    s_encode ("chat.request", json_pack ("{s:s}", "prompt", "build a snowman"), &buf, &len);
    for (size_t cut = 0; cut < len; cut++) s_expect_reject (buf, cut, NULL);
    free (buf);
}

static void test_trailing_bytes (void **state)
{
    unsigned char *buf;
    size_t len;
    s_encode ("chat.request", json_pack ("{s:s}", "prompt", "x"), &buf, &len);
    buf = realloc (buf, len + 1);
    buf[len] = 0xc0;
    s_expect_reject (buf, len + 1, "trailing");
    free (buf);
}

static void test_huge_declared_counts (void **state)
{
    /* array32 declaring 4 billion items in 5 bytes: must not allocate */
    unsigned char arr[] = { 0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0 };
    s_expect_reject (arr, sizeof arr, "declares");
    unsigned char map[] = { 0xdf, 0x7f, 0xff, 0xff, 0xff };
    s_expect_reject (map, sizeof map, "declares");
    unsigned char str[] = { 0xdb, 0xff, 0xff, 0xff, 0xff, 'a' };
    s_expect_reject (str, sizeof str, "declares");
    s_expect_reject ("", 0, "empty");
}

static void test_oversized_frame (void **state)
{
    size_t len = (size_t) BMQ_MAX_FRAME + 1;
    unsigned char *buf = calloc (1, len);
    s_expect_reject (buf, len, "limit");
    free (buf);
}

static void test_deep_nesting (void **state)
{
    /* 200 nested arrays inside a valid-looking body */
    size_t depth = 200;
    unsigned char *buf = malloc (depth + 1);
    memset (buf, 0x91, depth);
    buf[depth] = 0xc0;
    s_expect_reject (buf, depth + 1, "deeper");
    free (buf);
    /* nesting inside an otherwise valid body: encoder refuses too */
    json_t *deep = json_array (), *cur = deep;
    for (int i = 0; i < 40; i++) { json_t *n = json_array (); json_array_append_new (cur, n); cur = n; }
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_VALIDATE_REQUEST, NULL, json_pack ("{s:o}", "plan", deep));
    unsigned char *out;
    size_t outlen;
    assert_int_equal (bmq_envelope_encode (env, &out, &outlen, NULL, 0), -1);
    bmq_envelope_destroy (&env);
}

/* Hand-built envelopes with one field wrong each. */
static void s_pack_envelope (msgpack_sbuffer *sb, const char *skip, const char *type, int version, bool bin_body,
                             bool int_key)
{
    msgpack_packer pk;
    msgpack_packer_init (&pk, sb, msgpack_sbuffer_write);
    int n = 7 - (skip ? 1 : 0);
    msgpack_pack_map (&pk, n);
#define KEY(k) msgpack_pack_str_with_body (&pk, k, strlen (k))
#define STR(s) msgpack_pack_str_with_body (&pk, s, strlen (s))
    if (!skip || strcmp (skip, "v")) { KEY ("v"); msgpack_pack_int (&pk, version); }
    if (!skip || strcmp (skip, "type")) { KEY ("type"); STR (type); }
    if (!skip || strcmp (skip, "id")) { KEY ("id"); STR ("abc"); }
    if (!skip || strcmp (skip, "cid")) { KEY ("cid"); STR ("abc"); }
    if (!skip || strcmp (skip, "ts")) { KEY ("ts"); msgpack_pack_int64 (&pk, 1); }
    if (!skip || strcmp (skip, "sender")) { KEY ("sender"); STR ("test"); }
    if (!skip || strcmp (skip, "body")) {
        KEY ("body");
        if (bin_body) msgpack_pack_bin_with_body (&pk, "xx", 2);
        else {
            msgpack_pack_map (&pk, 1);
            if (int_key) msgpack_pack_int (&pk, 7); else KEY ("prompt");
            STR ("hello");
        }
    }
}

static void s_expect_envelope_reject (const char *skip, const char *type, int version, bool bin_body, bool int_key,
                                      const char *needle)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    s_pack_envelope (&sb, skip, type, version, bin_body, int_key);
    s_expect_reject (sb.data, sb.size, needle);
    msgpack_sbuffer_destroy (&sb);
}

static void test_wrong_types (void **state)
{
    /* the well-formed one decodes (the helper is right) */
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    s_pack_envelope (&sb, NULL, "chat.request", 1, false, false);
    bmq_envelope_t *ok = bmq_envelope_decode (sb.data, sb.size, NULL, 0);
    assert_non_null (ok);
    bmq_envelope_destroy (&ok);
    msgpack_sbuffer_destroy (&sb);

    s_expect_envelope_reject ("body", "chat.request", 1, false, false, "'body' is missing");
    s_expect_envelope_reject ("id", "chat.request", 1, false, false, "'id' is missing");
    s_expect_envelope_reject (NULL, "chat.nonsense", 1, false, false, "unknown message type");
    s_expect_envelope_reject (NULL, "chat.request", 2, false, false, "version");
    s_expect_envelope_reject (NULL, "chat.request", 1, true, false, "'body' must be a map");
    s_expect_envelope_reject (NULL, "chat.request", 1, false, true, "not a string");
    /* body valid msgpack but the required field has the wrong type */
    s_expect_envelope_reject (NULL, "progress", 1, false, false, "required field");
    unsigned char not_map[] = { 0x93, 0x01, 0x02, 0x03 };
    s_expect_reject (not_map, sizeof not_map, "not a map");
}

static void test_invalid_utf8_and_nan (void **state)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 1);
    msgpack_pack_str_with_body (&pk, "s", 1);
    msgpack_pack_str_with_body (&pk, "\xff\xfe", 2);
    msgpack_unpacked up;
    msgpack_unpacked_init (&up);
    size_t off = 0;
    assert_int_equal (msgpack_unpack_next (&up, sb.data, sb.size, &off), MSGPACK_UNPACK_SUCCESS);
    char err[128];
    assert_null (bmq_msgpack_to_json (&up.data, 8, err, sizeof err));
    assert_non_null (strstr (err, "UTF-8"));
    msgpack_unpacked_destroy (&up);
    msgpack_sbuffer_clear (&sb);
    msgpack_pack_double (&pk, 0.0 / 0.0);
    msgpack_unpacked_init (&up);
    off = 0;
    assert_int_equal (msgpack_unpack_next (&up, sb.data, sb.size, &off), MSGPACK_UNPACK_SUCCESS);
    assert_null (bmq_msgpack_to_json (&up.data, 8, err, sizeof err));
    assert_non_null (strstr (err, "non-finite"));
    msgpack_unpacked_destroy (&up);
    msgpack_sbuffer_destroy (&sb);
}

static void test_random_bytes_never_crash (void **state)
{
    /* mutate a valid envelope byte by byte: decode either fails cleanly or
     * yields an envelope that re-encodes */
    unsigned char *buf;
    size_t len;
    s_encode ("validate.request", json_pack ("{s:[{s:s, s:{s:[f,f,f]}}]}", "plan", "operation", "bpy.ops.mesh.primitive_cube_add",
                                              "params", "location", 1.0, 2.0, 3.0), &buf, &len);
    srand (42);
    for (int round = 0; round < 20000; round++) {
        unsigned char *m = malloc (len);
        memcpy (m, buf, len);
        int flips = 1 + rand () % 4;
        for (int f = 0; f < flips; f++) m[rand () % len] = (unsigned char) rand ();
        char err[256];
        bmq_envelope_t *env = bmq_envelope_decode (m, len, err, sizeof err);
        if (env) {
            unsigned char *again;
            size_t again_len;
            if (bmq_envelope_encode (env, &again, &again_len, err, sizeof err) == 0) free (again);
            bmq_envelope_destroy (&env);
        }
        free (m);
    }
    free (buf);
}

/* A message that cannot be encoded (a field messages.def does not declare) is
 * not silently dropped: the peer gets an "internal" error in the same story
 * (a planner's plan.reply with an undeclared field once left chat waiting
 * 120 s for nothing). */
static void test_unencodable_becomes_error (void **state)
{
    (void) state;
    zsock_t *a = zsock_new_pair ("@inproc://bmq-test-unencodable"), *b = zsock_new_pair (">inproc://bmq-test-unencodable");
    assert_non_null (a);
    assert_non_null (b);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PLAN_REPLY, "story-1",
                                            json_pack ("{s:[], s:s, s:{s:f}}", "plan", "source", "offline", "not_declared", "x", 1.0));
    assert_int_equal (bmq_bus_send (a, NULL, env), -1);
    zsock_set_rcvtimeo (b, 2000);
    bmq_envelope_t *got = bmq_bus_recv (b, NULL);
    assert_non_null (got);
    assert_int_equal (got->type, BMQ_MSG_ERROR);
    assert_string_equal (got->cid, "story-1");
    assert_string_equal (bmq_body_str (got, "code"), "internal");
    assert_non_null (strstr (bmq_body_str (got, "message"), "not_declared"));
    bmq_envelope_destroy (&got);
    bmq_envelope_destroy (&env);
    zsock_destroy (&a);
    zsock_destroy (&b);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_round_trip_every_type),
        cmocka_unit_test (test_encode_refuses_missing_field),
        cmocka_unit_test (test_truncated_everywhere),
        cmocka_unit_test (test_trailing_bytes),
        cmocka_unit_test (test_huge_declared_counts),
        cmocka_unit_test (test_oversized_frame),
        cmocka_unit_test (test_deep_nesting),
        cmocka_unit_test (test_wrong_types),
        cmocka_unit_test (test_invalid_utf8_and_nan),
        cmocka_unit_test (test_random_bytes_never_crash),
        cmocka_unit_test (test_unencodable_becomes_error),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
