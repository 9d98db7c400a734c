/* proto.fields — proto/messages.def as the codec enforces it.
 *
 * Walks the declared table: every message names who answers it, every field
 * is declared once with sane limits, and a body built from the declarations
 * alone (every field at the edge of its limits) round-trips through encode
 * and decode. An undeclared field fails encode and decode in strict mode
 * (and the bus answers `bad_message` naming it), passes untouched outside it;
 * a value past its declared limit fails both ways in either mode. */
#include "service_registry.h"
#include "bus.h"
#include "codec.h"
#include "msgpack_json.h"

#include <czmq.h>
#include <msgpack.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#define UNDECLARED "surely_not_declared"


/* A value of `f`'s type holding `n` (string bytes, array items, map keys,
 * integer value); `n` past the limits makes an out-of-range value. */
static json_t *s_value (const bmq_field_t *f, long long n)
{
    switch (f->type) {
    case BMQ_FT_STR:
    case BMQ_FT_ANY: {          /* ANY: a string (the plan as a client may send it) */
        if (f->type == BMQ_FT_ANY && n <= 3) {
            json_t *a = json_array ();
            for (long long i = 0; i < n; i++) json_array_append_new (a, json_pack ("{s:s}", "operation", "bpy.ops.x"));
            return a;
        }
        char *s = malloc ((size_t) n + 1);
        memset (s, 'a', (size_t) n);
        json_t *v = json_stringn (s, (size_t) n);
        free (s);
        return v;
    }
    case BMQ_FT_INT: return json_integer ((json_int_t) n);
    case BMQ_FT_NUM: return f->hi ? json_real ((double) n) : json_real (4.25);
    case BMQ_FT_BOOL: return json_true ();
    case BMQ_FT_ARR: {
        json_t *a = json_array ();
        for (long long i = 0; i < n; i++) json_array_append_new (a, json_integer (i));
        return a;
    }
    case BMQ_FT_MAP: {
        json_t *m = json_object ();
        for (long long i = 0; i < n; i++) {
            char key[32];
            snprintf (key, sizeof key, "k%lld", i);
            json_object_set_new (m, key, json_string ("é ünïcode"));
        }
        return m;
    }
    }
    return json_null ();
}

/* The "edge" a round trip uses: the declared maximum when it is small enough
 * to build, else something inside the limits. */
static long long s_edge (const bmq_field_t *f)
{
    if (f->lo == 0 && f->hi == 0) return f->type == BMQ_FT_INT ? 7 : 2;
    if (f->type == BMQ_FT_INT || f->type == BMQ_FT_NUM) return f->hi;
    return f->hi <= 300 ? f->hi : (f->lo > 3 ? f->lo : 3);
}

/* A body for `type` from its declarations alone: every field (or only the
 * required ones) at its edge. */
static json_t *s_body_for (bmq_msg_type_t type, bool required_only)
{
    size_t n;
    const bmq_field_t *fields = bmq_msg_fields (&n);
    json_t *body = json_object ();
    for (size_t i = 0; i < n; i++)
        if (fields[i].msg == type && (fields[i].required || !required_only))
            json_object_set_new (body, fields[i].name, s_value (&fields[i], s_edge (&fields[i])));
    return body;
}

/* An envelope frame packed by hand (no encode-side checks), for decode tests. */
static void s_pack_raw (bmq_msg_type_t type, const json_t *body, msgpack_sbuffer *sb)
{
    msgpack_sbuffer_init (sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, sb, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 7);
    msgpack_pack_str_with_body (&pk, "v", 1);
    msgpack_pack_int (&pk, 1);
    const char *name = bmq_msg_type_name (type);
    msgpack_pack_str_with_body (&pk, "type", 4);
    msgpack_pack_str_with_body (&pk, name, strlen (name));
    msgpack_pack_str_with_body (&pk, "id", 2);
    msgpack_pack_str_with_body (&pk, "id-1", 4);
    msgpack_pack_str_with_body (&pk, "cid", 3);
    msgpack_pack_str_with_body (&pk, "cid-1", 5);
    msgpack_pack_str_with_body (&pk, "ts", 2);
    msgpack_pack_int64 (&pk, 1700000000000LL);
    msgpack_pack_str_with_body (&pk, "sender", 6);
    msgpack_pack_str_with_body (&pk, "test", 4);
    msgpack_pack_str_with_body (&pk, "body", 4);
    assert_int_equal (bmq_json_pack (&pk, body, BMQ_MAX_DEPTH), 0);
}

/* Encode `body` as `type`: 0 / -1 with err. */
static int s_encode (bmq_msg_type_t type, json_t *body, char *err, size_t errlen)
{
    bmq_envelope_t *env = bmq_envelope_new (type, "story-1", body);
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc = bmq_envelope_encode (env, &buf, &len, err, errlen);
    free (buf);
    bmq_envelope_destroy (&env);
    return rc;
}

/* Decode a hand-packed frame of `body` as `type`: the envelope or NULL with err. */
static bmq_envelope_t *s_decode_raw (bmq_msg_type_t type, const json_t *body, char *err, size_t errlen)
{
    msgpack_sbuffer sb;
    s_pack_raw (type, body, &sb);
    bmq_envelope_t *env = bmq_envelope_decode (sb.data, sb.size, err, errlen);
    msgpack_sbuffer_destroy (&sb);
    return env;
}

/* A service with a process of its own (common/service_registry.def). */
static bool s_is_service (const char *s, size_t n)
{
    size_t count;
    const bmq_service_t *svc = bmq_services (&count);
    for (size_t i = 0; i < count; i++)
        if (svc[i].instances != BMQ_SVC_KEY_ONLY && strlen (svc[i].name) == n && !strncmp (svc[i].name, s, n)) return true;
    return false;
}

static void test_strict_in_test_builds (void **state)
{
#ifdef EXPECT_STRICT
    assert_true (bmq_codec_strict ());
#else
    assert_false (bmq_codec_strict ());
#endif
}

static void test_every_message_names_who_answers (void **state)
{
    for (int t = 1; t < BMQ_MSG__COUNT; t++) {
        const char *who = bmq_msg_answered_by ((bmq_msg_type_t) t), *name = bmq_msg_type_name ((bmq_msg_type_t) t);
        if (!who || !*who) fail_msg ("%s: no service answers it", name);
        if (!strcmp (who, "client") || !strcmp (who, "any")) continue;
        /* a comma list of services, the route the message travels */
        for (const char *p = who; *p; ) {
            size_t n = strcspn (p, ",");
            if (!s_is_service (p, n)) fail_msg ("%s: answered by '%s': '%.*s' is not a service", name, who, (int) n, p);
            p += n;
            if (*p == ',') { p++; if (!*p) fail_msg ("%s: answered by '%s' ends with a comma", name, who); }
        }
        /* a request is answered by a service, never by "client" */
        if (strstr (name, ".request")) assert_true (strcmp (who, "client"));
    }
    assert_string_equal (bmq_msg_answered_by (BMQ_MSG_VALIDATE_REQUEST), "gateway,validator");
    assert_string_equal (bmq_msg_answered_by (BMQ_MSG_PROGRESS), "client");
    assert_string_equal (bmq_msg_answered_by (BMQ_MSG_UNKNOWN), "");
}

static void test_table_is_consistent (void **state)
{
    size_t n;
    const bmq_field_t *f = bmq_msg_fields (&n);
    assert_true (n > 100);
    for (size_t i = 0; i < n; i++) {
        const char *msg = bmq_msg_type_name (f[i].msg);
        assert_true (f[i].msg > BMQ_MSG_UNKNOWN && f[i].msg < BMQ_MSG__COUNT);
        assert_true (f[i].name && *f[i].name && strlen (f[i].name) < 64);
        if (f[i].lo > f[i].hi) fail_msg ("%s.%s: limits %lld..%lld", msg, f[i].name, (long long) f[i].lo, (long long) f[i].hi);
        if ((f[i].type == BMQ_FT_STR || f[i].type == BMQ_FT_ARR || f[i].type == BMQ_FT_MAP) && f[i].lo < 0)
            fail_msg ("%s.%s: a size cannot be negative", msg, f[i].name);
        if (f[i].type == BMQ_FT_BOOL && (f[i].lo || f[i].hi)) fail_msg ("%s.%s: a boolean has no limits", msg, f[i].name);
        for (size_t j = 0; j < i; j++)
            if (f[j].msg == f[i].msg && !strcmp (f[j].name, f[i].name)) fail_msg ("%s.%s declared twice", msg, f[i].name);
    }
    /* the fields the issue named, declared where they travel */
    const struct { bmq_msg_type_t t; const char *name; } named[] = {
        { BMQ_MSG_CHAT_REQUEST, "target" }, { BMQ_MSG_CHAT_REQUEST, "keep_partial" }, { BMQ_MSG_EXECUTE_REQUEST, "keep_partial" },
        { BMQ_MSG_VALIDATE_REQUEST, "scene_objects" }, { BMQ_MSG_CAPABILITIES_REQUEST, "form" },
        { BMQ_MSG_SCRIPT_REPLY, "seal" }, { BMQ_MSG_PROGRESS, "event" }, { BMQ_MSG_PROGRESS, "ts_us" },
    };
    for (size_t k = 0; k < sizeof named / sizeof *named; k++) {
        bool found = false;
        for (size_t i = 0; i < n && !found; i++) found = f[i].msg == named[k].t && !strcmp (f[i].name, named[k].name);
        if (!found) fail_msg ("%s.%s is not declared", bmq_msg_type_name (named[k].t), named[k].name);
    }
}

/* Every message, built from its declarations alone, round-trips (all fields
 * at the edge of their limits; then the required ones only), strict or not. */
static void test_round_trip_from_declarations (void **state)
{
    for (int strict = 0; strict < 2; strict++) {
        bmq_codec_set_strict (strict);
        for (int t = 1; t < BMQ_MSG__COUNT; t++) {
            for (int req_only = 0; req_only < 2; req_only++) {
                bmq_envelope_t *env = bmq_envelope_new ((bmq_msg_type_t) t, "story-1", s_body_for ((bmq_msg_type_t) t, req_only));
                unsigned char *buf;
                size_t len;
                char err[256] = "";
                if (bmq_envelope_encode (env, &buf, &len, err, sizeof err)) fail_msg ("encode %s: %s", bmq_msg_type_name (t), err);
                bmq_envelope_t *back = bmq_envelope_decode (buf, len, err, sizeof err);
                if (!back) fail_msg ("decode %s: %s", bmq_msg_type_name (t), err);
                assert_int_equal (back->type, t);
                assert_true (json_equal (back->body, env->body));
                free (buf);
                bmq_envelope_destroy (&back);
                bmq_envelope_destroy (&env);
            }
        }
    }
    bmq_codec_set_strict (true);
}

static void test_undeclared_field_strict (void **state)
{
    bmq_codec_set_strict (true);
    for (int t = 1; t < BMQ_MSG__COUNT; t++) {
        const char *name = bmq_msg_type_name ((bmq_msg_type_t) t);
        json_t *body = s_body_for ((bmq_msg_type_t) t, false);
        json_object_set_new (body, UNDECLARED, json_string ("x"));
        char err[256] = "";
        assert_int_equal (s_encode ((bmq_msg_type_t) t, json_incref (body), err, sizeof err), -1);
        assert_non_null (strstr (err, name));
        assert_non_null (strstr (err, "'" UNDECLARED "'"));
        assert_non_null (strstr (err, "not declared"));
        err[0] = 0;
        assert_null (s_decode_raw ((bmq_msg_type_t) t, body, err, sizeof err));
        assert_non_null (strstr (err, name));
        assert_non_null (strstr (err, "'" UNDECLARED "'"));
        json_decref (body);
    }
    /* a declared field of another message is still undeclared here */
    char err[256] = "";
    assert_int_equal (s_encode (BMQ_MSG_PLAN_NOTE, json_pack ("{s:s, s:s}", "text", "hi", "prompt", "x"), err, sizeof err), -1);
    assert_non_null (strstr (err, "plan.note: field 'prompt' is not declared"));
}

static void test_undeclared_field_kept_outside_strict (void **state)
{
    bmq_codec_set_strict (false);
    json_t *body = json_pack ("{s:s, s:{s:i}}", "text", "hi", UNDECLARED, "n", 1);
    char err[256] = "";
    assert_int_equal (s_encode (BMQ_MSG_PLAN_NOTE, json_incref (body), err, sizeof err), 0);
    bmq_envelope_t *back = s_decode_raw (BMQ_MSG_PLAN_NOTE, body, err, sizeof err);
    assert_non_null (back);
    assert_true (json_equal (back->body, body));         /* kept, for forward compatibility */
    bmq_envelope_destroy (&back);
    json_decref (body);
    bmq_codec_set_strict (true);
}

/* One past each declared limit (and one below the lower one) is refused on
 * encode and on decode, with a message naming the message and the field;
 * in both modes. */
static void test_limits_enforced (void **state)
{
    size_t n, tried = 0;
    const bmq_field_t *f = bmq_msg_fields (&n);
    for (int strict = 0; strict < 2; strict++) {
        bmq_codec_set_strict (strict);
        for (size_t i = 0; i < n; i++) {
            if (f[i].lo == 0 && f[i].hi == 0) continue;
            long long bad[2];
            int nbad = 0;
            if (f[i].hi < INT64_MAX && f[i].hi < (long long) BMQ_MAX_ITEMS) bad[nbad++] = f[i].hi + 1;
            if (f[i].type == BMQ_FT_INT && f[i].lo > INT64_MIN) bad[nbad++] = f[i].lo - 1;
            else if (f[i].lo > 0) bad[nbad++] = f[i].lo - 1;
            if ((f[i].type == BMQ_FT_STR || f[i].type == BMQ_FT_ANY) && f[i].hi >= (long long) BMQ_MAX_BODY) nbad = 0;
            for (int b = 0; b < nbad; b++) {
                const char *msg = bmq_msg_type_name (f[i].msg);
                json_t *body = s_body_for (f[i].msg, false);
                json_object_set_new (body, f[i].name, s_value (&f[i], bad[b]));
                char err[256] = "", where[160];
                snprintf (where, sizeof where, "%s: field '%s'", msg, f[i].name);
                if (s_encode (f[i].msg, json_incref (body), err, sizeof err) != -1)
                    fail_msg ("%s = %lld encoded", where, bad[b]);
                if (!strstr (err, where) || !strstr (err, "outside")) fail_msg ("encode %s: %s", where, err);
                err[0] = 0;
                bmq_envelope_t *env = s_decode_raw (f[i].msg, body, err, sizeof err);
                if (env) fail_msg ("%s = %lld decoded", where, bad[b]);
                if (!strstr (err, where) || !strstr (err, "outside")) fail_msg ("decode %s: %s", where, err);
                json_decref (body);
                tried++;
            }
        }
    }
    assert_true (tried > 100);
    bmq_codec_set_strict (true);
    /* the words of the error, for one of each kind */
    char err[256];
    assert_int_equal (s_encode (BMQ_MSG_HEARTBEAT, json_pack ("{s:s, s:I}", "service", "x", "pid", (json_int_t) -1), err, sizeof err), -1);
    assert_string_equal (err, "heartbeat: field 'pid' is -1, outside 0..2147483647");
    json_t *big = json_pack ("{s:s}", "service", "x");
    json_object_set_new (big, "state", s_value (&(bmq_field_t) { .type = BMQ_FT_STR }, 257));
    assert_int_equal (s_encode (BMQ_MSG_HEARTBEAT, big, err, sizeof err), -1);
    assert_string_equal (err, "heartbeat: field 'state' has 257 bytes, outside 0..256");
}

/* Over a real socket pair: the receiver of an undeclared field answers
 * bad_message naming it, and the encode side refuses to send one. */
static void test_bus_answers_bad_message (void **state)
{
    bmq_codec_set_strict (true);
    zsock_t *server = zsock_new_router ("inproc://proto-fields");
    zsock_t *client = zsock_new_dealer ("inproc://proto-fields");
    assert_non_null (server);
    assert_non_null (client);
    json_t *body = json_pack ("{s:s, s:b}", "prompt", "build a snowman", "sudo", 1);
    msgpack_sbuffer sb;
    s_pack_raw (BMQ_MSG_CHAT_REQUEST, body, &sb);
    assert_int_equal (zsock_send (client, "b", sb.data, sb.size), 0);
    msgpack_sbuffer_destroy (&sb);
    zsock_set_rcvtimeo (server, 2000);
    zsock_set_rcvtimeo (client, 2000);
    assert_null (bmq_bus_recv (server, NULL));
    bmq_envelope_t *reply = bmq_bus_recv (client, NULL);
    assert_non_null (reply);
    assert_int_equal (reply->type, BMQ_MSG_ERROR);
    assert_string_equal (bmq_body_str (reply, "code"), "bad_message");
    assert_non_null (strstr (bmq_body_str (reply, "message"), "chat.request: field 'sudo' is not declared"));
    bmq_envelope_destroy (&reply);
    /* and a service cannot send one */
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_CHAT_REQUEST, NULL, json_incref (body));
    assert_int_equal (bmq_bus_send (client, NULL, env), -1);
    bmq_envelope_destroy (&env);
    json_decref (body);
    zsock_destroy (&client);
    zsock_destroy (&server);
}

int main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_strict_in_test_builds),
        cmocka_unit_test (test_every_message_names_who_answers),
        cmocka_unit_test (test_table_is_consistent),
        cmocka_unit_test (test_round_trip_from_declarations),
        cmocka_unit_test (test_undeclared_field_strict),
        cmocka_unit_test (test_undeclared_field_kept_outside_strict),
        cmocka_unit_test (test_limits_enforced),
        cmocka_unit_test (test_bus_answers_bad_message),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
