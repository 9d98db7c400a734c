/* event_relay — the executors' events to the gateway's watchers, one message
 * per burst on this hop too (issue 28).
 *
 * Every message the gateway's SUB holds is shown to `side` first (the HTTP
 * story, scene.names: it returns true for a frame it consumed, which is not
 * published). Then: when only one message is ready it is published as it came,
 * not decoded. When several are ready (the gateway fell behind: a busy
 * machine, a burst of steps), consecutive progress events of one story are
 * published as one progress.batch, in order, at most BMQ_PROGRESS_BATCH_MAX
 * events each: 100 watchers then cost 100 sends per burst instead of 100 per
 * event, just when the machine is short of time. Anything else (another
 * story's events, a message that is not progress, one that does not decode)
 * ends the batch before it and goes on as it came, so the order of all
 * messages is kept. Items of a batch that are not valid progress bodies are
 * dropped and counted (hostile input; bmq_progress_each).
 *
 * At most EVENT_RELAY_ROUND messages are taken per call, so the gateway's
 * other sockets wait at most one round. */
#ifndef BMQ_EVENT_RELAY_H
#define BMQ_EVENT_RELAY_H

#include <czmq.h>
#include <stdbool.h>

#define EVENT_RELAY_ROUND 512

typedef bool (bmq_event_side_fn) (void *arg, zframe_t *frame);

typedef struct {
    size_t received, published, batched_events, dropped_items;
} bmq_event_relay_stats_t;

/* One round: the messages ready on `sub` (the first may block as zmsg_recv
 * does; call when the poller says sub is readable) to `pub`. Adds to *stats
 * when not NULL. Returns how many messages were received. */
size_t bmq_event_relay (zsock_t *sub, zsock_t *pub, bmq_event_side_fn *side, void *arg, bmq_event_relay_stats_t *stats);

#endif
