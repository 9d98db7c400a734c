/* msgpack_json — bounded msgpack ⇄ jansson conversion. */
#include "msgpack_json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

static uint64_t s_be (const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

/* Header of the value at buf[*pos]: how many bytes of payload to skip and how
 * many child values follow. -1 on an unusable header. */
static int s_header (const unsigned char *buf, size_t len, size_t *pos,
                     uint64_t *skip, uint64_t *children)
{
    unsigned char b = buf[(*pos)++];
    size_t left = len - *pos;
    *skip = 0;
    *children = 0;
    int n = 0;                            /* width of a length field */
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) return 0;
    if ((b & 0xf0) == 0x80) { *children = 2u * (b & 0x0f); return 0; }
    if ((b & 0xf0) == 0x90) { *children = b & 0x0f; return 0; }
    if ((b & 0xe0) == 0xa0) { *skip = b & 0x1f; return 0; }
    switch (b) {
    case 0xca: *skip = 4; return 0;
    case 0xcb: *skip = 8; return 0;
    case 0xcc: case 0xd0: *skip = 1; return 0;
    case 0xcd: case 0xd1: *skip = 2; return 0;
    case 0xce: case 0xd2: *skip = 4; return 0;
    case 0xcf: case 0xd3: *skip = 8; return 0;
    case 0xc4: case 0xd9: n = 1; break;
    case 0xc5: case 0xda: case 0xdc: case 0xde: n = 2; break;
    case 0xc6: case 0xdb: case 0xdd: case 0xdf: n = 4; break;
    default: return -1;                   /* 0xc1, ext and fixext */
    }
    if (left < (size_t) n) return -1;
    uint64_t count = s_be (buf + *pos, n);
    *pos += n;
    if (b == 0xdc || b == 0xdd) *children = count;
    else if (b == 0xde || b == 0xdf) *children = 2 * count;
    else *skip = count;
    return 0;
}

int bmq_msgpack_prescan (const unsigned char *buf, size_t len, int max_depth, size_t max_items,
                         char *err, size_t errlen)
{
    uint64_t stack[64];
    if (max_depth > 62) max_depth = 62;
    int depth = 0;
    size_t pos = 0, items = 0;
    stack[0] = 1;                          /* the root value */
    while (depth >= 0) {
        if (stack[depth] == 0) { depth--; continue; }
        stack[depth]--;
        if (pos >= len) { ERR ("truncated msgpack: input ends inside a value"); return -1; }
        uint64_t skip, children;
        if (s_header (buf, len, &pos, &skip, &children) != 0) {
            ERR ("unsupported or truncated msgpack header at byte %zu", pos - 1);
            return -1;
        }
        if (skip > len - pos) { ERR ("truncated msgpack: a value declares %llu bytes, %zu remain",
                                     (unsigned long long) skip, len - pos); return -1; }
        pos += skip;
        if (children) {
            /* every child needs at least one byte */
            if (children > len - pos) { ERR ("msgpack container declares %llu items, only %zu bytes remain",
                                             (unsigned long long) children, len - pos); return -1; }
            items += children;
            if (items > max_items) { ERR ("msgpack value has more than %zu items", max_items); return -1; }
            if (depth + 1 > max_depth) { ERR ("msgpack nested deeper than %d", max_depth); return -1; }
            stack[++depth] = children;
        }
    }
    if (pos != len) { ERR ("%zu trailing bytes after the msgpack value", len - pos); return -1; }
    return 0;
}

json_t *bmq_msgpack_to_json (const msgpack_object *o, int max_depth, char *err, size_t errlen)
{
    if (max_depth < 0) { ERR ("value nested too deeply"); return NULL; }
    json_t *v = NULL;
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: return json_null ();
    case MSGPACK_OBJECT_BOOLEAN: return json_boolean (o->via.boolean);
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        if (o->via.u64 > INT64_MAX) { ERR ("integer %llu is too large", (unsigned long long) o->via.u64); return NULL; }
        return json_integer ((json_int_t) o->via.u64);
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return json_integer (o->via.i64);
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        if (!isfinite (o->via.f64)) { ERR ("non-finite number"); return NULL; }
        return json_real (o->via.f64);
    case MSGPACK_OBJECT_STR:
        v = json_stringn (o->via.str.ptr, o->via.str.size);
        if (!v) ERR ("string is not valid UTF-8");
        return v;
    case MSGPACK_OBJECT_ARRAY:
        v = json_array ();
        for (uint32_t i = 0; v && i < o->via.array.size; i++) {
            json_t *item = bmq_msgpack_to_json (&o->via.array.ptr[i], max_depth - 1, err, errlen);
            if (!item || json_array_append_new (v, item)) { json_decref (v); return NULL; }
        }
        return v;
    case MSGPACK_OBJECT_MAP:
        v = json_object ();
        for (uint32_t i = 0; v && i < o->via.map.size; i++) {
            const msgpack_object_kv *kv = &o->via.map.ptr[i];
            if (kv->key.type != MSGPACK_OBJECT_STR) { ERR ("map key is not a string"); json_decref (v); return NULL; }
            if (memchr (kv->key.via.str.ptr, 0, kv->key.via.str.size)) { ERR ("map key holds a NUL byte"); json_decref (v); return NULL; }
            json_t *item = bmq_msgpack_to_json (&kv->val, max_depth - 1, err, errlen);
            if (!item) { json_decref (v); return NULL; }
            if (json_object_setn_new (v, kv->key.via.str.ptr, kv->key.via.str.size, item)) {
                ERR ("map key is not valid UTF-8");
                json_decref (v);
                return NULL;
            }
        }
        return v;
    case MSGPACK_OBJECT_BIN: ERR ("binary value where a body value was expected"); return NULL;
    default: ERR ("unsupported msgpack type %d", (int) o->type); return NULL;
    }
}

int bmq_json_pack (msgpack_packer *pk, const json_t *v, int max_depth)
{
    if (max_depth < 0) return -1;
    switch (json_typeof (v)) {
    case JSON_OBJECT: {
        const char *k;
        size_t klen;
        json_t *item;
        msgpack_pack_map (pk, json_object_size (v));
        json_object_keylen_foreach ((json_t *) v, k, klen, item) {
            msgpack_pack_str_with_body (pk, k, klen);
            if (bmq_json_pack (pk, item, max_depth - 1)) return -1;
        }
        return 0;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *item;
        msgpack_pack_array (pk, json_array_size (v));
        json_array_foreach (v, i, item)
            if (bmq_json_pack (pk, item, max_depth - 1)) return -1;
        return 0;
    }
    case JSON_STRING:
        return msgpack_pack_str_with_body (pk, json_string_value (v), json_string_length (v));
    case JSON_INTEGER: return msgpack_pack_int64 (pk, json_integer_value (v));
    case JSON_REAL: return msgpack_pack_double (pk, json_real_value (v));
    case JSON_TRUE: return msgpack_pack_true (pk);
    case JSON_FALSE: return msgpack_pack_false (pk);
    default: return msgpack_pack_nil (pk);
    }
}
