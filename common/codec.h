/* codec — the blendmq envelope and its msgpack encoding, driven by
 * proto/messages.def. Bodies are jansson trees; blobs are raw bytes.
 *
 * Decoding treats input as hostile: sizes, depth and item counts are bounded,
 * every type is checked, and a failure returns NULL with a message in `err`.
 * It never asserts and never leaks on bad input. */
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
#define BMQ_MSG(id, wire, doc) BMQ_MSG_##id,
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
    char           auth_role[16];
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
/* Check `body` against the fields messages.def lists for `type`. 0 / -1 with err. */
int bmq_msg_check_body (bmq_msg_type_t type, const json_t *body, char *err, size_t errlen);

/* Convenience readers for bodies (NULL / fallback when absent or mistyped). */
const char *bmq_body_str (const bmq_envelope_t *self, const char *key);
int64_t     bmq_body_int (const bmq_envelope_t *self, const char *key, int64_t fallback);

int64_t bmq_now_ms (void);       /* wall clock, ms since epoch */
int64_t bmq_mono_ms (void);      /* monotonic clock, ms */
double  bmq_mono_us (void);      /* monotonic clock, µs */

#endif
