/* http_events — GET /api/events: progress events as Server-Sent Events,
 * resumable, and saying what a client missed.
 *
 *   ?plan_id=ID         only the events concerning that plan
 *   Last-Event-ID: ID   (or ?last_event_id=ID) resume after that event; "0"
 *                       replays what the gateway holds; without it the stream
 *                       starts with the next event
 *
 * Ids are "<gateway instance>-<n>" (sse_ring.h). Before anything else a
 * resuming client that missed events gets an SSE event `gap`, data
 *   {"reason", "last_event_id", "missed", "message"}
 * with reason
 *   "evicted"            its id is older than the buffer holds: missed is the
 *                        number of events dropped (on a ?plan_id= stream the
 *                        drop counts every plan's events: missed is null and
 *                        "dropped" has the count); the stream goes on with the
 *                        oldest event held. A reader that falls that far
 *                        behind mid-stream is told the same way.
 *   "gateway restarted"  its id is another gateway process's: what was
 *                        published while none ran is lost (missed null); the
 *                        stream replays all the new process holds.
 * A gap event carries the id the stream continues from, so a client that
 * reconnects right after is not told twice. The stream's first block and its
 * keepalives (every 15 s) are an id without data ("id: …\n: connected"): a
 * client that saw no event yet has a position too, and a reconnection after
 * a restart is recognised as such. Gaps between an executor's
 * events (its `seq` jumped) are events of the buffer itself, with reason
 * "executor events lost" (bmq_http_server_apply_event).
 *
 * A malformed or too long Last-Event-ID, or one of this gateway's ids not
 * sent yet, gets 400. */
#ifndef BMQ_HTTP_EVENTS_H
#define BMQ_HTTP_EVENTS_H

#include "http_req.h"

/* Serve GET (or HEAD) /api/events. */
enum MHD_Result bmq_http_events_handle (bmq_http_req_t *req);

/* Executors' event sequences. Progress events carry their executor
 * process's instance and a seq (1, 2, 3…): a seq that skips means events
 * were lost between the executor and us (a gateway restart, a full queue),
 * and a named executor ("executor" in its events) under a new instance
 * restarted. Either becomes a `gap` event in the ring, ahead of the event
 * that showed it, for readers of the plans before and after it and of every
 * plan. Events without instance and seq pass unchecked. Up to 64 executor
 * processes are followed (the least recently heard is forgotten). Not
 * thread-safe: the story feed thread's own (bmq_http_server_apply_event). */
typedef struct bmq_http_seqs_t bmq_http_seqs_t;
typedef struct bmq_sse_ring_t bmq_sse_ring_t;
bmq_http_seqs_t *bmq_http_seqs_new (void);
void bmq_http_seqs_destroy (bmq_http_seqs_t **self_p);
/* Before `env` (a progress envelope) is pushed to `ring`. */
void bmq_http_seqs_follow (bmq_http_seqs_t *self, bmq_sse_ring_t *ring, const bmq_envelope_t *env);

#endif
