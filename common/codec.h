/* codec — the blendmq envelope and its msgpack encoding, driven by
 * proto/messages.def. Bodies are jansson trees; blobs are raw bytes.
 *
 * Decoding treats input as hostile: sizes, depth and item counts are bounded,
 * every type is checked, and a failure returns NULL with a message in `err`.
 * It never asserts and never leaks on bad input.
 *
 * Every top-level body field is declared in messages.def with its type,
 * whether it is required and its limits; encode and decode both check a body
 * against them (a string over its length, an array over its items, an
 * integer out of range is refused). In strict mode (BMQ_STRICT_FIELDS, on in
 * test builds) a body holding a field its message does not declare is
 * refused too, on encode and on decode; otherwise such a field is kept, for
 * forward compatibility, and nothing is logged. */
#ifndef BMQ_CODEC_H
#define BMQ_CODEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BMQ_PROTO_VERSION   1
#define BMQ_MAX_FRAME       (80u << 20)
#define BMQ_MAX_BODY        (4u << 20)
#define BMQ_MAX_BLOB        (64u << 20)
#define BMQ_MAX_DEPTH       32
#define BMQ_MAX_ITEMS       100000
#define BMQ_MAX_ID          64

typedef enum {
    BMQ_MSG_UNKNOWN = 0,
#define BMQ_MSG(id, wire, answered_by, doc) BMQ_MSG_##id,
#include "messages.def"
#undef BMQ_MSG
    BMQ_MSG__COUNT
} bmq_msg_type_t;

typedef struct {
    int            version;
    bmq_msg_type_t type;
    char           id[BMQ_MAX_ID + 1];
    char           cid[BMQ_MAX_ID + 1];
    int64_t        ts_ms;
    char           sender[BMQ_MAX_ID + 1];
    json_t        *body;          /* always an object */
    unsigned char *blob;          /* may be NULL */
    size_t         blob_len;
    /* Who sent it, as authenticated by CURVE (the ZAP metadata of the key that
     * connected: its cert's `name` and `role`), set by bmq_bus_recv and never
     * taken from the wire body. Empty when the socket has no CURVE
     * (security.curve false) or the envelope was made locally. See auth.h. */
    char           auth_name[64];
    char           auth_role[24];
} bmq_envelope_t;

/* Name this process once; every envelope it creates carries it. */
void bmq_envelope_set_sender (const char *sender);

/* New envelope with a fresh id. `cid` NULL means "start a new story": cid = id.
 * `body` is stolen (NULL gives an empty object). */
bmq_envelope_t *bmq_envelope_new (bmq_msg_type_t type, const char *cid, json_t *body);
/* A reply in the same story as `req`. */
bmq_envelope_t *bmq_envelope_reply (const bmq_envelope_t *req, bmq_msg_type_t type, json_t *body);
/* An `error` reply: {code, message}. */
bmq_envelope_t *bmq_envelope_error (const bmq_envelope_t *req, const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* Attach a copy of `len` bytes as the blob. 0 / -1. */
int  bmq_envelope_set_blob (bmq_envelope_t *self, const void *data, size_t len);
void bmq_envelope_destroy (bmq_envelope_t **self_p);

/* Encode to a malloc'd buffer. Checks the body against messages.def first
 * (a service bug, not input: returns -1 with err). */
int bmq_envelope_encode (const bmq_envelope_t *self, unsigned char **buf_out, size_t *len_out,
                         char *err, size_t errlen);
bmq_envelope_t *bmq_envelope_decode (const void *buf, size_t len, char *err, size_t errlen);

const char    *bmq_msg_type_name (bmq_msg_type_t type);
bmq_msg_type_t bmq_msg_type_from_name (const char *name);
/* Check `body` against the fields messages.def lists for `type`: required
 * fields present, types, limits and, in strict mode, no undeclared field.
 * 0 / -1 with err naming the message type and the field. */
int bmq_msg_check_body (bmq_msg_type_t type, const json_t *body, char *err, size_t errlen);
/* Who answers or consumes `type` (messages.def's third column): a comma list
 * of gateway, planner, validator, executor, audit, any, client. */
const char *bmq_msg_answered_by (bmq_msg_type_t type);

/* The field table, as declared in messages.def (for tests and tools). */
typedef enum { BMQ_FT_STR, BMQ_FT_INT, BMQ_FT_NUM, BMQ_FT_BOOL, BMQ_FT_ARR, BMQ_FT_MAP, BMQ_FT_ANY } bmq_field_type_t;
typedef struct {
    bmq_msg_type_t   msg;
    const char      *name;
    bmq_field_type_t type;
    bool             required;
    int64_t          lo, hi;     /* STR bytes, ARR items, MAP keys, INT/NUM value; 0, 0: codec default */
} bmq_field_t;
const bmq_field_t *bmq_msg_fields (size_t *count);
const char *bmq_field_type_name (bmq_field_type_t type);

/* Strict mode: compiled in with BMQ_STRICT_FIELDS; tests may switch it. */
bool bmq_codec_strict (void);
void bmq_codec_set_strict (bool on);

/* Convenience readers for bodies (NULL / fallback when absent or mistyped). */
const char *bmq_body_str (const bmq_envelope_t *self, const char *key);
int64_t     bmq_body_int (const bmq_envelope_t *self, const char *key, int64_t fallback);

int64_t bmq_now_ms (void);       /* wall clock, ms since epoch */
int64_t bmq_mono_ms (void);      /* monotonic clock, ms */
double  bmq_mono_us (void);      /* monotonic clock, µs */

#endif
