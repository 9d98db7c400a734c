/* sse_ring — the most recent progress events, numbered, for Server-Sent
 * Events subscribers (GET /api/events).
 *
 * The gateway's loop pushes every progress event it re-publishes; each gets
 * the next id. Ids start at the gateway's boot time in microseconds, so ids
 * from a restarted gateway are always above those a client saw before, and a
 * client resuming with Last-Event-ID is never mistaken for being up to date.
 * The ring keeps the last `capacity` events: a subscriber that fell further
 * behind is told so (a gap) and continues with what is left.
 *
 * Thread-safe: one writer (the gateway loop) and any number of readers (one
 * per SSE connection thread), which block on a condition variable. */
#ifndef BMQ_SSE_RING_H
#define BMQ_SSE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bmq_sse_ring_t bmq_sse_ring_t;

bmq_sse_ring_t *bmq_sse_ring_new (size_t capacity);
void bmq_sse_ring_destroy (bmq_sse_ring_t **self_p);

/* Add an event named `event` about `plan_id` (may be NULL), with `data` one
 * line of JSON (copied). Returns its id and wakes the readers. */
uint64_t bmq_sse_ring_push (bmq_sse_ring_t *self, const char *event, const char *plan_id, const char *data);
/* The events after id *after (of plan `plan_id` only, when not NULL), as SSE
 * text ("id: …\nevent: …\ndata: …\n\n", at most about max_bytes), waiting up
 * to timeout_ms for one when there is none yet. Returns a malloc'd string or
 * NULL when nothing came (timeout, or the ring was closed); *after moves past
 * what was read. *gap is set when events after *after were already dropped. */
char *bmq_sse_ring_read (bmq_sse_ring_t *self, uint64_t *after, const char *plan_id, size_t max_bytes,
                         int timeout_ms, bool *gap);
/* Id of the newest event (the first id - 1 when empty). */
uint64_t bmq_sse_ring_last (bmq_sse_ring_t *self);
/* Wake every reader for good: the server is stopping. */
void bmq_sse_ring_close (bmq_sse_ring_t *self);
bool bmq_sse_ring_closed (bmq_sse_ring_t *self);

#endif
