/* blender_link — client of the blendmq Blender add-on (addon/blendmq_addon.py).
 *
 * TCP; every frame (both ways) is: u32 BE JSON length, u32 BE blob length,
 * the JSON object, the blob. Requests carry an id; replies echo it, so a late
 * reply to a call that timed out is recognised and discarded. The first
 * request on a connection is `hello` with the shared token. Lengths from the
 * peer are bounded before anything is allocated. */
#ifndef BMQ_BLENDER_LINK_H
#define BMQ_BLENDER_LINK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define BMQ_LINK_MAX_JSON (1u << 20)
#define BMQ_LINK_MAX_BLOB (64u << 20)

typedef struct bmq_blender_link_t bmq_blender_link_t;
typedef enum { BMQ_LINK_OK = 0, BMQ_LINK_TIMEOUT = 1, BMQ_LINK_DOWN = 2, BMQ_LINK_PROTOCOL = 3 } bmq_link_status_t;

bmq_blender_link_t *bmq_blender_link_new (const char *host, int port, const char *token);
void bmq_blender_link_destroy (bmq_blender_link_t **self_p);
/* Connect (with a timeout) and authenticate. 0, or -1 with a message in err. */
int  bmq_blender_link_connect (bmq_blender_link_t *self, int timeout_ms, char *err, size_t errlen);
bool bmq_blender_link_connected (const bmq_blender_link_t *self);
void bmq_blender_link_close (bmq_blender_link_t *self);
int  bmq_blender_link_fd (const bmq_blender_link_t *self);
/* Send one command and wait up to timeout_ms for its reply. args is borrowed
 * (may be NULL). On OK *reply_out is the whole reply (caller decrefs; check
 * "ok"), and the blob (malloc'd, or NULL) goes to blob_out if asked. DOWN and
 * PROTOCOL close the connection; TIMEOUT leaves it open. */
bmq_link_status_t bmq_blender_link_call (bmq_blender_link_t *self, const char *cmd, json_t *args, int timeout_ms,
                                         json_t **reply_out, unsigned char **blob_out, size_t *blob_len_out,
                                         char *err, size_t errlen);

#endif
