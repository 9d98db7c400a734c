/* sse_ring — the most recent progress events, numbered, for Server-Sent
 * Events subscribers (GET /api/events).
 *
 * The gateway's loop pushes every progress event it re-publishes; each gets
 * the next number, from 1, and goes out with the SSE id "<instance>-<n>":
 * the gateway process's instance id (bmq_instance_id, 16 hex chars) and the
 * number. Ids grow within one gateway process; a Last-Event-ID naming another
 * instance comes from a gateway that is gone, so its client missed whatever
 * was published while no gateway ran (a gap, said by the stream: http_events).
 * The ring keeps the last `capacity` events: a subscriber that fell further
 * behind is told how many it missed and continues with what is left.
 *
 * An event may concern one or two plans (a gap between two events of an
 * executor concerns the plans of both); a reader following one plan gets the
 * events that concern it.
 *
 * Thread-safe: one writer (the gateway loop) and any number of readers (one
 * per SSE connection thread), which block on a condition variable. */
#ifndef BMQ_SSE_RING_H
#define BMQ_SSE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bmq_sse_ring_t bmq_sse_ring_t;

#define BMQ_SSE_INSTANCE_LEN 16
#define BMQ_SSE_ID_MAX       64      /* longest Last-Event-ID looked at (an id is 16 + 1 + up to 20) */

/* `instance`: 16 lowercase hex chars naming this process (bmq_instance_id);
 * anything else is replaced by 16 zeros (tests). */
bmq_sse_ring_t *bmq_sse_ring_new (size_t capacity, const char *instance);
void bmq_sse_ring_destroy (bmq_sse_ring_t **self_p);
const char *bmq_sse_ring_instance (const bmq_sse_ring_t *self);

/* Add an event named `event` about `plan_id` (may be NULL), with `data` one
 * line of JSON (copied). Returns its number and wakes the readers. */
uint64_t bmq_sse_ring_push (bmq_sse_ring_t *self, const char *event, const char *plan_id, const char *data);
/* Same, for an event about two plans (either may be NULL or equal). */
uint64_t bmq_sse_ring_push2 (bmq_sse_ring_t *self, const char *event, const char *plan_id, const char *plan_id2,
                             const char *data);

/* Where a client's Last-Event-ID puts it (the text is hostile: parsed
 * strictly, at most BMQ_SSE_ID_MAX chars):
 *   SAME     "<our instance>-<n>" with n no newer than our newest: *after = n
 *            ("0" too: the client saw nothing yet, it gets what is held)
 *   OTHER    "<another instance>-<n>", or a bare number above 0 (ids of
 *            gateways before ids named their instance): *after = 0
 *   BAD      anything else, or one of our numbers not sent yet */
typedef enum { BMQ_SSE_RESUME_SAME, BMQ_SSE_RESUME_OTHER, BMQ_SSE_RESUME_BAD } bmq_sse_resume_t;
bmq_sse_resume_t bmq_sse_ring_resume (bmq_sse_ring_t *self, const char *last_event_id, uint64_t *after);

/* The events after number *after (those concerning plan `plan_id` only, when
 * not NULL), as SSE text ("id: …\nevent: …\ndata: …\n\n", at most about
 * max_bytes), waiting up to timeout_ms for one when there is none yet.
 * Returns a malloc'd string or NULL when nothing came (timeout, the ring was
 * closed, or only a drop); *after moves past what was read. When events after
 * *after were already dropped, *dropped is set to how many (else 0), *after
 * first moves to the one before the oldest held, and the call returns at once. */
char *bmq_sse_ring_next (bmq_sse_ring_t *self, uint64_t *after, const char *plan_id, size_t max_bytes,
                         int timeout_ms, uint64_t *dropped);
/* Number of the newest event (0 when none yet). */
uint64_t bmq_sse_ring_last (bmq_sse_ring_t *self);
/* Number of the oldest event held (1 + how many were dropped). */
uint64_t bmq_sse_ring_first (bmq_sse_ring_t *self);
/* Write the SSE id of event number n into buf ("<instance>-<n>"). */
void bmq_sse_ring_id (const bmq_sse_ring_t *self, uint64_t n, char *buf, size_t len);
/* Wake every reader for good: the server is stopping. */
void bmq_sse_ring_close (bmq_sse_ring_t *self);
bool bmq_sse_ring_closed (bmq_sse_ring_t *self);

#endif
