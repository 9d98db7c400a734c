/* blender_link — client of the blendmq Blender add-on (addon/blendmq_addon.py).
 *
 * The protocol (link version, frame limits, commands, hello fields, the hello
 * report tables) is declared in proto/blender_link.json; bmq_link_proto.h is
 * generated from it, as the add-on's blendmq/link_proto.py is.
 *
 * TCP, or a unix socket when the host is "unix:PATH" (blender.socket: what
 * `blendmq up` uses, 0600); every frame (both ways) is: u32 BE JSON length,
 * u32 BE blob length, the JSON object, the blob, and after hello its MAC. Requests carry an id; replies echo it, so a late
 * reply to a call that timed out is recognised and discarded. Lengths from the
 * peer are bounded before anything is allocated.
 *
 * Handshake (link version 3, mutual challenge-response; the shared token never
 * crosses the wire, see addon/blendmq/protocol.py):
 *   add-on → {"id":0, "ok":true, "challenge":{"link":2, "nonce": hex Ns}}
 *   client → hello {"nonce": hex Nc, "operations": [palette names],
 *                   "bounds": {operation: {param: {type, required, default,
 *                              min, max, max_len, items}}},
 *                   "mac": hex HMAC-SHA256(token, "blendmq-link-client"||Ns||Nc)}
 *   add-on → {"ok":true, "result":{..., "mac": hex HMAC-SHA256(token,
 *                   "blendmq-link-server"||Nc||Ns)}}
 * Nonces are 32 random bytes (raw in the HMAC input). The client checks the
 * add-on's mac (constant time) before any command: a process squatting on the
 * port that does not know the token is refused, and learns nothing about it.
 *
 * Session (issue 24; proto/blender_link.json handshake.session): after the
 * hello exchange every frame carries 32 bytes more, after its blob:
 * HMAC-SHA256(K, direction label || u64 BE sequence || header || JSON || blob)
 * with K = HMAC-SHA256(token, "blendmq-link-session" || Ns || Nc) and a
 * sequence per direction from 0. A frame that fails it (forged, replayed,
 * reordered, cut) is PROTOCOL: the connection is closed. The link is not
 * encrypted, so a TCP peer off loopback is refused unless
 * bmq_blender_link_allow_plain_remote (blender.allow_plain_remote).
 *
 * Interrupted plans (issue 17): the hello reply also carries "interrupted"
 * (the add-on's reports of plans it rolled back when their connection
 * dropped) and "open_plan" (a plan still open, its rollback having raised);
 * see addon/blendmq/protocol.py. They are checked field by field against the
 * tables in blender_link.c (the add-on is authenticated, its input is still
 * bounded and type-checked) and kept for bmq_blender_link_hello_report. */
#ifndef BMQ_BLENDER_LINK_H
#define BMQ_BLENDER_LINK_H

#include "bmq_link_proto.h"      /* BMQ_LINK_MAX_JSON, BMQ_LINK_MAX_BLOB, the tables */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct bmq_blender_link_t bmq_blender_link_t;
typedef enum { BMQ_LINK_OK = 0, BMQ_LINK_TIMEOUT = 1, BMQ_LINK_DOWN = 2, BMQ_LINK_PROTOCOL = 3 } bmq_link_status_t;

bmq_blender_link_t *bmq_blender_link_new (const char *host, int port, const char *token);
void bmq_blender_link_destroy (bmq_blender_link_t **self_p);
/* Allow a TCP Blender that is not on loopback (default: refused at connect,
 * since the frames are MAC'd but not encrypted). */
void bmq_blender_link_allow_plain_remote (bmq_blender_link_t *self, bool allow);
/* The palette's operation names sent at hello; the add-on refuses run_step of
 * any other operation (none set: every run_step is refused). `names` is a
 * JSON array of strings, copied. 0, or -1 when it is not such an array. */
int  bmq_blender_link_set_operations (bmq_blender_link_t *self, const json_t *names);
/* The palette's parameter bounds sent at hello ({operation: {param: {type,
 * required, default, min, max, max_len, items}}}, bmq_palette_to_json's shape
 * without descriptions), copied; NULL sends none (the add-on then refuses
 * every step that has parameters or is a builtin). 0, or -1 when malformed. */
int  bmq_blender_link_set_bounds (bmq_blender_link_t *self, const json_t *bounds);
/* Both from a palette file (proto/palette.yaml, loaded and checked as the
 * validator does: bmq_palette_load). 0, or -1 with a message in err. */
int  bmq_blender_link_load_palette (bmq_blender_link_t *self, const char *path, char *err, size_t errlen);
/* Connect (with a timeout) and authenticate both ways. 0, or -1 with a
 * message in err. */
/* The process is stopping: from now on every link's blocking wait (connect,
 * hello, a call) returns at once as a dropped connection. Irreversible. */
void bmq_blender_link_abort_all (void);
int  bmq_blender_link_connect (bmq_blender_link_t *self, int timeout_ms, char *err, size_t errlen);
bool bmq_blender_link_connected (const bmq_blender_link_t *self);
/* The last connect failed because Blender accepted and then said nothing in
 * time (a busy or hung main thread), not because it refused or was gone. */
bool bmq_blender_link_timed_out (const bmq_blender_link_t *self);
/* What the last hello reply said about interrupted plans, checked and
 * bounded: {"interrupted": [report...], "open_plan"?: {...}}, each report
 * {id, plan_id, cid?, steps_run?, steps_total?, rollback?: {removed, restored,
 * removed_count, restored_count}, at?, reason?, error?}. Malformed reports are
 * left out, unknown fields dropped. Borrowed; NULL when the last connect did
 * not succeed or the reply had nothing to report. */
const json_t *bmq_blender_link_hello_report (const bmq_blender_link_t *self);

/* The Blender version the last hello reply named ("4.3.2": digits and dots only), or "" when it
 * named none (issue 30: status shows it; scripts are checked against that version's RNA). */
const char *bmq_blender_link_blender_version (const bmq_blender_link_t *self);
void bmq_blender_link_close (bmq_blender_link_t *self);
/* Send one command and wait up to timeout_ms for its reply. args is borrowed
 * (may be NULL). On OK *reply_out is the whole reply (caller decrefs; check
 * "ok"), and the blob (malloc'd, or NULL) goes to blob_out if asked. DOWN and
 * PROTOCOL close the connection; TIMEOUT leaves it open. */
bmq_link_status_t bmq_blender_link_call (bmq_blender_link_t *self, const char *cmd, json_t *args, int timeout_ms,
                                         json_t **reply_out, unsigned char **blob_out, size_t *blob_len_out,
                                         char *err, size_t errlen);
/* The same with a request blob (req_blob_len ≤ BMQ_LINK_MAX_BLOB, else
 * PROTOCOL without sending): asset_stage's files (issue 16). */
bmq_link_status_t bmq_blender_link_call_blob (bmq_blender_link_t *self, const char *cmd, json_t *args,
                                              const void *req_blob, size_t req_blob_len, int timeout_ms,
                                              json_t **reply_out, unsigned char **blob_out, size_t *blob_len_out,
                                              char *err, size_t errlen);

/* A command whose answer streams (run_plan): frames {id, progress: {...}} with
 * the request's id and no "ok" go to on_progress (the object is borrowed) as
 * they arrive, each restarting the timeout_ms window; the frame with "ok" ends
 * the call, as in bmq_blender_link_call. While waiting, cancel() is asked every
 * BMQ_LINK_CANCEL_POLL_MS; the first true sends cancel_plan {plan_id:
 * cancel_plan_id} once (its answer is skipped). on_quiet (optional) is called
 * whenever no further frame is waiting, so a caller may hand on progress in
 * batches: one per burst of frames. No progress for timeout_ms
 * leaves the stream misaligned: the connection is closed and the call is DOWN
 * (the add-on rolls an open plan back when its link drops). */
#define BMQ_LINK_CANCEL_POLL_MS 20
typedef struct {
    void (*on_progress) (void *ctx, const json_t *progress);
    void (*on_quiet) (void *ctx);       /* no further frame is waiting: progress so far may be passed on */
    bool (*cancel) (void *ctx);
    const char *cancel_plan_id;
    void *ctx;
} bmq_link_stream_t;
bmq_link_status_t bmq_blender_link_call_stream (bmq_blender_link_t *self, const char *cmd, json_t *args, int timeout_ms,
                                                const bmq_link_stream_t *stream, json_t **reply_out,
                                                char *err, size_t errlen);

#endif
