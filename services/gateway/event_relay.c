/* event_relay — see event_relay.h. */
#include "event_relay.h"
#include "progress_batch.h"
#include "bus.h"
#include "log.h"

#include <string.h>

typedef struct {
    zsock_t                 *pub;
    char                     cid[BMQ_MAX_ID + 1];
    json_t                  *events;        /* progress bodies of cid, in order */
    size_t                   msgs;          /* messages whose events are in it */
    zmsg_t                  *only;          /* its message as it came, while it holds exactly one, whole */
    bool                     split;         /* the message being read did not fit: a batch ended in it */
    bmq_event_relay_stats_t *stats;
} s_run_t;

static void s_flush (s_run_t *run)
{
    if (run->only) {
        zmsg_send (&run->only, run->pub);   /* one message: as it came (a plain progress, or the executor's batch) */
        run->stats->published++;
    }
    else if (json_array_size (run->events)) {
        bmq_envelope_t *env = bmq_progress_batch_new (run->cid, json_incref (run->events));
        if (bmq_bus_send (run->pub, NULL, env) == 0) run->stats->published++;
        run->stats->batched_events += json_array_size (run->events);
        bmq_envelope_destroy (&env);
    }
    json_array_clear (run->events);
    run->msgs = 0;
}

static int s_collect (const bmq_envelope_t *event, void *arg)
{
    s_run_t *run = arg;
    if (json_array_size (run->events) >= BMQ_PROGRESS_BATCH_MAX) {
        zmsg_destroy (&run->only);          /* its events go out in two batches */
        s_flush (run);
        run->msgs = 1;
        run->split = true;
    }
    json_array_append (run->events, event->body);
    return 0;
}

/* The progress envelope in `msg`, or NULL when it is something else. */
static bmq_envelope_t *s_progress (zmsg_t *msg)
{
    zframe_t *frame = zmsg_first (msg);
    if (!frame || zmsg_size (msg) != 1) return NULL;
    bmq_envelope_t *env = bmq_envelope_decode (zframe_data (frame), zframe_size (frame), NULL, 0);
    if (!bmq_progress_is (env)) bmq_envelope_destroy (&env);
    return env;
}

size_t bmq_event_relay (zsock_t *sub, zsock_t *pub, bmq_event_side_fn *side, void *arg, bmq_event_relay_stats_t *stats)
{
    bmq_event_relay_stats_t ignored = { 0 };
    s_run_t run = { .pub = pub, .events = json_array (), .stats = stats ? stats : &ignored };
    size_t n = 0;
    zmsg_t *next = zmsg_recv (sub);
    while (next) {
        zmsg_t *msg = next;
        next = NULL;
        n++;
        run.stats->received++;
        bool more = n < EVENT_RELAY_ROUND && (zsock_events (sub) & ZMQ_POLLIN);
        zframe_t *frame = zmsg_first (msg);
        if (frame && side && side (arg, frame)) zmsg_destroy (&msg);
        else if (!more && !run.msgs) {
            zmsg_send (&msg, pub);          /* alone: no decoding, no delay */
            run.stats->published++;
        }
        else {
            bmq_envelope_t *env = s_progress (msg);
            if (!env) {
                s_flush (&run);             /* not progress: what came before it goes first */
                zmsg_send (&msg, pub);
                run.stats->published++;
            }
            else {
                if (run.msgs && strcmp (env->cid, run.cid)) s_flush (&run);
                if (!run.msgs) snprintf (run.cid, sizeof run.cid, "%s", env->cid);
                size_t dropped = 0;
                run.split = false;
                bmq_progress_each (env, s_collect, &run, &dropped);
                run.msgs++;
                if (run.msgs == 1 && !run.split && !dropped) run.only = msg, msg = NULL;
                else zmsg_destroy (&run.only);
                run.stats->dropped_items += dropped;
                if (dropped) bmq_warn ("a progress.batch for %s held %zu item(s) that are not progress events: dropped",
                                       env->cid, dropped);
            }
            bmq_envelope_destroy (&env);
        }
        zmsg_destroy (&msg);
        if (more) next = zmsg_recv (sub);
    }
    s_flush (&run);
    json_decref (run.events);
    return n;
}
