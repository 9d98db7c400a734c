/* codec — envelope encode/decode, checked against proto/messages.def: each
 * declared field's presence, type and limits, and in strict mode (compiled with
 * BMQ_STRICT_FIELDS, or bmq_codec_set_strict) that no undeclared field is there. */
#include "codec.h"
#include "msgpack_json.h"

#include <czmq.h>
#include <msgpack.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

static const char *s_names[] = {
    "unknown",
#define BMQ_MSG(id, wire, answered_by, doc) wire,
#include "messages.def"
#undef BMQ_MSG
};

static const char *s_answered_by[] = {
    "",
#define BMQ_MSG(id, wire, answered_by, doc) answered_by,
#include "messages.def"
#undef BMQ_MSG
};

static const bmq_field_t s_fields[] = {
#define BMQ_FIELD(id, name, type, req, lo, hi) { BMQ_MSG_##id, name, BMQ_FT_##type, req, lo, hi },
#include "messages.def"
#undef BMQ_FIELD
};
#define S_NFIELDS (sizeof s_fields / sizeof s_fields[0])

#ifdef BMQ_STRICT_FIELDS
static bool s_strict = true;
#else
static bool s_strict = false;
#endif

bool bmq_codec_strict (void) { return s_strict; }
void bmq_codec_set_strict (bool on) { s_strict = on; }

const bmq_field_t *bmq_msg_fields (size_t *count)
{
    if (count) *count = S_NFIELDS;
    return s_fields;
}

const char *bmq_msg_answered_by (bmq_msg_type_t type)
{
    return (type > 0 && type < BMQ_MSG__COUNT) ? s_answered_by[type] : "";
}

static char s_sender[BMQ_MAX_ID + 1] = "blendmq";

void bmq_envelope_set_sender (const char *sender)
{
    snprintf (s_sender, sizeof s_sender, "%s", sender);
}

const char *bmq_msg_type_name (bmq_msg_type_t type)
{
    return (type > 0 && type < BMQ_MSG__COUNT) ? s_names[type] : "unknown";
}

bmq_msg_type_t bmq_msg_type_from_name (const char *name)
{
    for (int t = 1; t < BMQ_MSG__COUNT; t++)
        if (!strcmp (s_names[t], name)) return (bmq_msg_type_t) t;
    return BMQ_MSG_UNKNOWN;
}

int64_t bmq_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t bmq_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double bmq_mono_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

const char *bmq_field_type_name (bmq_field_type_t type)
{
    static const char *names[] = { "string", "integer", "number", "boolean", "array", "map", "any" };
    return type <= BMQ_FT_ANY ? names[type] : "?";
}

static bool s_type_ok (bmq_field_type_t t, const json_t *v)
{
    switch (t) {
    case BMQ_FT_STR: return json_is_string (v);
    case BMQ_FT_INT: return json_is_integer (v);
    case BMQ_FT_NUM: return json_is_number (v);
    case BMQ_FT_BOOL: return json_is_boolean (v);
    case BMQ_FT_ARR: return json_is_array (v);
    case BMQ_FT_MAP: return json_is_object (v);
    default: return true;
    }
}

/* The declared limits of one field's value (its type already checked). An
 * ANY field's limits apply to whatever it holds: a string's bytes, an array's
 * items, a map's keys, a number's value. 0 / -1 with err. */
static int s_limits_ok (bmq_msg_type_t type, const bmq_field_t *f, const json_t *v, char *err, size_t errlen)
{
    if (f->lo == 0 && f->hi == 0) return 0;
    if (json_is_real (v)) {
        double x = json_real_value (v);
        if (x >= (double) f->lo && x <= (double) f->hi) return 0;
        ERR ("%s: field '%s' is %g, outside %lld..%lld", s_names[type], f->name, x, (long long) f->lo, (long long) f->hi);
        return -1;
    }
    const char *unit = NULL;
    long long n;
    if (json_is_integer (v)) n = (long long) json_integer_value (v);
    else if (json_is_string (v)) { n = (long long) json_string_length (v); unit = "bytes"; }
    else if (json_is_array (v)) { n = (long long) json_array_size (v); unit = "items"; }
    else if (json_is_object (v)) { n = (long long) json_object_size (v); unit = "keys"; }
    else return 0;
    if (n >= f->lo && n <= f->hi) return 0;
    if (unit) ERR ("%s: field '%s' has %lld %s, outside %lld..%lld", s_names[type], f->name, n, unit,
                   (long long) f->lo, (long long) f->hi);
    else ERR ("%s: field '%s' is %lld, outside %lld..%lld", s_names[type], f->name, n, (long long) f->lo, (long long) f->hi);
    return -1;
}

static bool s_declared (bmq_msg_type_t type, const char *key)
{
    for (size_t i = 0; i < S_NFIELDS; i++)
        if (s_fields[i].msg == type && !strcmp (s_fields[i].name, key)) return true;
    return false;
}

int bmq_msg_check_body (bmq_msg_type_t type, const json_t *body, char *err, size_t errlen)
{
    if (type <= BMQ_MSG_UNKNOWN || type >= BMQ_MSG__COUNT) { ERR ("unknown message type"); return -1; }
    if (!json_is_object (body)) { ERR ("%s: body is not a map", bmq_msg_type_name (type)); return -1; }
    size_t present = 0;         /* body keys that are declared fields (a null value counts: the key is there) */
    for (size_t i = 0; i < S_NFIELDS; i++) {
        const bmq_field_t *f = &s_fields[i];
        if (f->msg != type) continue;
        json_t *v = json_object_get (body, f->name);
        if (v) present++;
        if (!v || json_is_null (v)) {
            if (f->required) { ERR ("%s: required field '%s' is missing", s_names[type], f->name); return -1; }
            continue;
        }
        if (!s_type_ok (f->type, v)) {
            ERR ("%s: field '%s' must be %s", s_names[type], f->name, bmq_field_type_name (f->type));
            return -1;
        }
        if (s_limits_ok (type, f, v, err, errlen)) return -1;
    }
    /* keys are unique: none is undeclared exactly when every one was counted */
    if (!s_strict || present == json_object_size (body)) return 0;
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) body, key, v)
        if (!s_declared (type, key)) {
            ERR ("%s: field '%s' is not declared for this message (proto/messages.def)", s_names[type], key);
            return -1;
        }
    return 0;
}

bmq_envelope_t *bmq_envelope_new (bmq_msg_type_t type, const char *cid, json_t *body)
{
    bmq_envelope_t *self = calloc (1, sizeof *self);
    if (!self) { json_decref (body); return NULL; }
    self->version = BMQ_PROTO_VERSION;
    self->type = type;
    zuuid_t *uuid = zuuid_new ();
    snprintf (self->id, sizeof self->id, "%s", zuuid_str (uuid));
    zuuid_destroy (&uuid);
    snprintf (self->cid, sizeof self->cid, "%s", cid && *cid ? cid : self->id);
    self->ts_ms = bmq_now_ms ();
    snprintf (self->sender, sizeof self->sender, "%s", s_sender);
    self->body = body ? body : json_object ();
    return self;
}

bmq_envelope_t *bmq_envelope_reply (const bmq_envelope_t *req, bmq_msg_type_t type, json_t *body)
{
    return bmq_envelope_new (type, req ? req->cid : NULL, body);
}

bmq_envelope_t *bmq_envelope_error (const bmq_envelope_t *req, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof msg, fmt, ap);
    va_end (ap);
    json_t *body = json_pack ("{s:s, s:s}", "code", code, "message", msg);
    if (req) json_object_set_new (body, "in_reply_to", json_string (bmq_msg_type_name (req->type)));
    return bmq_envelope_reply (req, BMQ_MSG_ERROR, body);
}

int bmq_envelope_set_blob (bmq_envelope_t *self, const void *data, size_t len)
{
    free (self->blob);
    self->blob = NULL;
    self->blob_len = 0;
    if (!data || !len) return 0;
    if (len > BMQ_MAX_BLOB || !(self->blob = malloc (len))) return -1;
    memcpy (self->blob, data, len);
    self->blob_len = len;
    return 0;
}

void bmq_envelope_destroy (bmq_envelope_t **self_p)
{
    if (!self_p || !*self_p) return;
    json_decref ((*self_p)->body);
    free ((*self_p)->blob);
    free (*self_p);
    *self_p = NULL;
}

static void s_pack_str (msgpack_packer *pk, const char *key, const char *value)
{
    msgpack_pack_str_with_body (pk, key, strlen (key));
    msgpack_pack_str_with_body (pk, value, strlen (value));
}

int bmq_envelope_encode (const bmq_envelope_t *self, unsigned char **buf_out, size_t *len_out,
                         char *err, size_t errlen)
{
    if (self->type <= BMQ_MSG_UNKNOWN || self->type >= BMQ_MSG__COUNT) { ERR ("unknown message type"); return -1; }
    if (bmq_msg_check_body (self->type, self->body, err, errlen)) return -1;
    if (self->blob_len > BMQ_MAX_BLOB) { ERR ("blob larger than %u bytes", BMQ_MAX_BLOB); return -1; }
    msgpack_sbuffer sb;
    msgpack_sbuffer_init (&sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, self->blob ? 8 : 7);
    msgpack_pack_str_with_body (&pk, "v", 1);
    msgpack_pack_int (&pk, self->version);
    s_pack_str (&pk, "type", s_names[self->type]);
    s_pack_str (&pk, "id", self->id);
    s_pack_str (&pk, "cid", self->cid);
    msgpack_pack_str_with_body (&pk, "ts", 2);
    msgpack_pack_int64 (&pk, self->ts_ms);
    s_pack_str (&pk, "sender", self->sender);
    msgpack_pack_str_with_body (&pk, "body", 4);
    if (bmq_json_pack (&pk, self->body, BMQ_MAX_DEPTH)) {
        msgpack_sbuffer_destroy (&sb);
        ERR ("body nested deeper than %d", BMQ_MAX_DEPTH);
        return -1;
    }
    if (sb.size > BMQ_MAX_BODY + 1024) {
        msgpack_sbuffer_destroy (&sb);
        ERR ("body larger than %u bytes", BMQ_MAX_BODY);
        return -1;
    }
    if (self->blob) {
        msgpack_pack_str_with_body (&pk, "blob", 4);
        msgpack_pack_bin_with_body (&pk, self->blob, self->blob_len);
    }
    *buf_out = (unsigned char *) sb.data;     /* sbuffer memory is malloc'd: caller frees */
    *len_out = sb.size;
    return 0;
}

static int s_copy_id (char *dst, const msgpack_object *o, const char *what, char *err, size_t errlen)
{
    if (o->type != MSGPACK_OBJECT_STR || o->via.str.size == 0 || o->via.str.size > BMQ_MAX_ID) {
        ERR ("envelope field '%s' must be a string of 1..%d characters", what, BMQ_MAX_ID);
        return -1;
    }
    for (uint32_t i = 0; i < o->via.str.size; i++) {
        unsigned char c = (unsigned char) o->via.str.ptr[i];
        if (c < 0x21 || c > 0x7e) { ERR ("envelope field '%s' holds a non-printable character", what); return -1; }
    }
    memcpy (dst, o->via.str.ptr, o->via.str.size);
    dst[o->via.str.size] = 0;
    return 0;
}

static bool s_key_is (const msgpack_object *k, const char *name)
{
    size_t n = strlen (name);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n && !memcmp (k->via.str.ptr, name, n);
}

/* Fill `self` from the unpacked root map. 0 / -1 with err. */
static int s_from_object (bmq_envelope_t *self, const msgpack_object *root, char *err, size_t errlen)
{
    enum { HAVE_V = 1, HAVE_TYPE = 2, HAVE_ID = 4, HAVE_CID = 8, HAVE_TS = 16, HAVE_SENDER = 32, HAVE_BODY = 64 };
    unsigned have = 0;
    if (root->type != MSGPACK_OBJECT_MAP) { ERR ("envelope is not a map"); return -1; }
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object *k = &root->via.map.ptr[i].key, *v = &root->via.map.ptr[i].val;
        if (s_key_is (k, "v")) {
            if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER) { ERR ("envelope field 'v' must be an unsigned integer"); return -1; }
            if (v->via.u64 != BMQ_PROTO_VERSION) { ERR ("unsupported protocol version %llu (this side speaks %d)", (unsigned long long) v->via.u64, BMQ_PROTO_VERSION); return -1; }
            self->version = BMQ_PROTO_VERSION;
            have |= HAVE_V;
        }
        else if (s_key_is (k, "type")) {
            char name[BMQ_MAX_ID + 1];
            if (s_copy_id (name, v, "type", err, errlen)) return -1;
            self->type = bmq_msg_type_from_name (name);
            if (!self->type) { ERR ("unknown message type '%s'", name); return -1; }
            have |= HAVE_TYPE;
        }
        else if (s_key_is (k, "id")) { if (s_copy_id (self->id, v, "id", err, errlen)) return -1; have |= HAVE_ID; }
        else if (s_key_is (k, "cid")) { if (s_copy_id (self->cid, v, "cid", err, errlen)) return -1; have |= HAVE_CID; }
        else if (s_key_is (k, "sender")) { if (s_copy_id (self->sender, v, "sender", err, errlen)) return -1; have |= HAVE_SENDER; }
        else if (s_key_is (k, "ts")) {
            if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER && v->via.u64 <= INT64_MAX) self->ts_ms = (int64_t) v->via.u64;
            else if (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) self->ts_ms = v->via.i64;
            else { ERR ("envelope field 'ts' must be an integer"); return -1; }
            have |= HAVE_TS;
        }
        else if (s_key_is (k, "body")) {
            if (v->type != MSGPACK_OBJECT_MAP) { ERR ("envelope field 'body' must be a map"); return -1; }
            json_decref (self->body);
            self->body = bmq_msgpack_to_json (v, BMQ_MAX_DEPTH, err, errlen);
            if (!self->body) return -1;
            have |= HAVE_BODY;
        }
        else if (s_key_is (k, "blob")) {
            if (v->type != MSGPACK_OBJECT_BIN) { ERR ("envelope field 'blob' must be binary"); return -1; }
            if (v->via.bin.size > BMQ_MAX_BLOB) { ERR ("blob larger than %u bytes", BMQ_MAX_BLOB); return -1; }
            if (bmq_envelope_set_blob (self, v->via.bin.ptr, v->via.bin.size)) { ERR ("out of memory for blob"); return -1; }
        }
        /* other keys: ignored, for forward compatibility */
    }
    static const char *names[] = { "v", "type", "id", "cid", "ts", "sender", "body" };
    for (int b = 0; b < 7; b++)
        if (!(have & (1u << b))) { ERR ("envelope field '%s' is missing", names[b]); return -1; }
    return bmq_msg_check_body (self->type, self->body, err, errlen);
}

bmq_envelope_t *bmq_envelope_decode (const void *buf, size_t len, char *err, size_t errlen)
{
    if (!buf || len == 0) { ERR ("empty message"); return NULL; }
    if (len > BMQ_MAX_FRAME) { ERR ("message of %zu bytes exceeds the %u byte limit", len, BMQ_MAX_FRAME); return NULL; }
    if (bmq_msgpack_prescan (buf, len, BMQ_MAX_DEPTH + 1, BMQ_MAX_ITEMS, err, errlen)) return NULL;

    msgpack_unpacked up;
    msgpack_unpacked_init (&up);
    size_t off = 0;
    bmq_envelope_t *self = NULL;
    msgpack_unpack_return rc = msgpack_unpack_next (&up, buf, len, &off);
    if (rc != MSGPACK_UNPACK_SUCCESS || off != len)
        ERR ("malformed msgpack (code %d)", (int) rc);
    else if ((self = calloc (1, sizeof *self))) {
        if (s_from_object (self, &up.data, err, errlen) != 0)
            bmq_envelope_destroy (&self);
        else if (len - self->blob_len > BMQ_MAX_BODY + 1024) {
            ERR ("body larger than %u bytes", BMQ_MAX_BODY);
            bmq_envelope_destroy (&self);
        }
    }
    msgpack_unpacked_destroy (&up);
    return self;
}

const char *bmq_body_str (const bmq_envelope_t *self, const char *key)
{
    return json_string_value (json_object_get (self->body, key));
}

int64_t bmq_body_int (const bmq_envelope_t *self, const char *key, int64_t fallback)
{
    json_t *v = json_object_get (self->body, key);
    return json_is_integer (v) ? json_integer_value (v) : fallback;
}
