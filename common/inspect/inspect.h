/* inspect — the one client of inspect.request: Blender's RNA of bpy.ops
 * operators, asked of the GATEWAY's front (gateway.endpoint), whose executor
 * set routes each request to the default executor or to the one `target`
 * names. The validators fetch the palette's operators with it (then merge
 * the palette with Blender's RNA); the planner's inspect_tool asks one.
 *
 * Non-blocking: the owner polls bmq_inspect_sock beside its other sockets,
 * calls bmq_inspect_on_message when it is readable and bmq_inspect_tick when
 * bmq_inspect_due (monotonic ms) has passed. bmq_inspect_once is a blocking
 * convenience around the same machinery (one operator, one round).
 *
 * Lazy Pirate rounds: each round opens a fresh DEALER (so nothing queued for
 * a dead gateway is delivered twice later) and sends one probe; once the
 * probe is answered by Blender (its RNA, or "unknown_tool"), the rest follow,
 * pipelined. A transient error (gateway or executor not there, Blender not
 * connected, busy, timeout) or a round deadline ends the round; the next
 * starts after a back-off doubling up to a cap, for a bounded number of
 * rounds, after which the fetch gives up. An answer no retry can change
 * (forbidden, unknown_target, bad_request, unsupported) gives up at once.
 *
 * Every request is its own story at the gateway (a fresh cid, or
 * "<story>.inspect-<n>" when opts.story names the story it serves): the
 * gateway refuses a cid already in progress. Replies are matched by cid;
 * anything else (stray, late, malformed) is dropped. */
#ifndef BMQ_INSPECT_H
#define BMQ_INSPECT_H

#include <czmq.h>
#include <jansson.h>
#include <stdbool.h>

typedef enum { BMQ_INSPECT_FETCHING, BMQ_INSPECT_DONE, BMQ_INSPECT_GAVE_UP } bmq_inspect_state_t;

typedef struct {
    int         round_ms;       /* a round's deadline (default 10000) */
    int         backoff_ms;     /* first pause between rounds (default 500) */
    int         backoff_max_ms; /* cap (default 8000) */
    int         max_rounds;     /* then give up (default 40: about five minutes) */
    const char *target;         /* executor name (body `target`); NULL or "": the gateway's default */
    const char *story;          /* cid prefix (at most 40 bytes are used); NULL: fresh cids */
} bmq_inspect_opts_t;

typedef struct bmq_inspect_t bmq_inspect_t;

/* Fetch the RNA of `operations` (an array of bpy.ops names; non-strings are
 * skipped) through the gateway at `gateway`. opts NULL: defaults. NULL if
 * there is nothing to fetch or no endpoint. */
bmq_inspect_t *bmq_inspect_new (const char *gateway, const json_t *operations, const bmq_inspect_opts_t *opts);
void bmq_inspect_destroy (bmq_inspect_t **self_p);

/* The socket of the current round, or NULL between rounds. */
zsock_t *bmq_inspect_sock (bmq_inspect_t *self);
/* The socket is readable: take one message. */
void bmq_inspect_on_message (bmq_inspect_t *self);
/* Start rounds, expire them. Call when bmq_inspect_due has passed. */
void bmq_inspect_tick (bmq_inspect_t *self);
/* When tick wants to run next (monotonic ms); INT64_MAX once over. */
int64_t bmq_inspect_due (const bmq_inspect_t *self);

bmq_inspect_state_t bmq_inspect_state (const bmq_inspect_t *self);
/* operation → Blender's description (inspect.reply `tool`), or null when
 * Blender lacks it (unknown_tool). Borrowed. */
const json_t *bmq_inspect_result (const bmq_inspect_t *self);
/* Why the last round ended early ("" if none did): "<code>: <message>". */
const char *bmq_inspect_detail (const bmq_inspect_t *self);
/* The error code of that answer ("" when the round timed out or none). */
const char *bmq_inspect_code (const bmq_inspect_t *self);
int bmq_inspect_rounds (const bmq_inspect_t *self);

/* Blocking: ask for one operator, wait at most timeout_ms (one round, no
 * retry), polling `cancelled` (may be NULL) every 50 ms. 0 with *tool (new
 * reference); -1 with why ("Blender has no operator …", "the gateway
 * answered executor_unavailable: …", "no answer within … ms", "cancelled"). */
int bmq_inspect_once (const char *gateway, const char *tool_name, const bmq_inspect_opts_t *opts, int timeout_ms,
                      bool (*cancelled) (void *ctx), void *ctx, json_t **tool, char *why, size_t whylen);

#endif
