/* bus.event_relay (issue 28): the gateway's hop from the executors' events to
 * its watchers. A lone message goes on as it came (same bytes); a backlog of
 * one story's progress goes on as progress.batch messages (at most 256 events
 * each) with every event, in order; another story's events, or a message that
 * is not progress, end the batch before them and keep their place; frames the
 * side callback consumes are not published; a hostile batch item is dropped
 * and counted; one call takes at most EVENT_RELAY_ROUND messages. Over inproc
 * sockets, in one process. */
#include "bus.h"
#include "codec.h"
#include "event_relay.h"
#include "progress_batch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

static zsock_t *s_exec, *s_sub, *s_pub, *s_watch;
static int s_n;

static int s_setup (void **state)
{
    (void) state;
    char in[64], out[64];
    snprintf (in, sizeof in, "inproc://relay-in-%d", ++s_n);
    snprintf (out, sizeof out, "inproc://relay-out-%d", s_n);
    s_exec = zsock_new_pub (in);
    s_sub = zsock_new_sub (in, "");
    s_pub = zsock_new_pub (out);
    s_watch = zsock_new_sub (out, "");
    assert_non_null (s_exec);
    assert_non_null (s_watch);
    zsock_set_rcvhwm (s_sub, 0);
    zsock_set_sndhwm (s_pub, 0);
    zsock_set_rcvhwm (s_watch, 0);
    zsock_set_sndhwm (s_exec, 0);
    zclock_sleep (50);                      /* the subscriptions reach both publishers */
    return 0;
}

static int s_teardown (void **state)
{
    (void) state;
    zsock_destroy (&s_watch);
    zsock_destroy (&s_pub);
    zsock_destroy (&s_sub);
    zsock_destroy (&s_exec);
    return 0;
}

static json_t *s_event (const char *plan, int step)
{
    return json_pack ("{s:s, s:i, s:i, s:s, s:s}", "plan_id", plan, "step", step, "total", 1000, "status", "ok", "event", "step");
}

static void s_send (bmq_envelope_t *env)
{
    assert_int_equal (bmq_bus_send_and_destroy (s_exec, NULL, &env), 0);
}

static void s_progress (const char *cid, int step)
{
    s_send (bmq_envelope_new (BMQ_MSG_PROGRESS, cid, s_event (cid, step)));
}

/* What a watcher read: each message's type and event count, and every event's (cid, step) in order. */
typedef struct {
    int  types[2048], counts[2048], msgs;
    char cids[4096][BMQ_MAX_ID + 1];
    int  steps[4096], events;
    size_t skipped;
} s_read_t;

static int s_take (const bmq_envelope_t *env, void *arg)
{
    s_read_t *r = arg;
    assert_true (r->events < 4096);
    snprintf (r->cids[r->events], sizeof r->cids[0], "%s", env->cid);
    r->steps[r->events++] = (int) bmq_body_int (env, "step", -1);
    r->counts[r->msgs]++;
    return 0;
}

/* Everything the watcher can read now (the relay ran before: it is all there). */
static void s_read_all (s_read_t *r)
{
    memset (r, 0, sizeof *r);
    zpoller_t *p = zpoller_new (s_watch, NULL);
    while (zpoller_wait (p, 100)) {
        bmq_envelope_t *env = bmq_bus_recv (s_watch, NULL);
        assert_non_null (env);
        r->types[r->msgs] = env->type;
        size_t skipped = 0;
        bmq_progress_each (env, s_take, r, &skipped);
        r->skipped += skipped;
        r->msgs++;
        bmq_envelope_destroy (&env);
    }
    zpoller_destroy (&p);
}

static void s_wait_ready (void)
{
    zpoller_t *p = zpoller_new (s_sub, NULL);
    assert_non_null (zpoller_wait (p, 1000));
    zpoller_destroy (&p);
    zclock_sleep (20);                      /* the rest of what was sent is in the pipe too */
}

static void test_a_lone_message_goes_on_as_it_came (void **state)
{
    (void) state;
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, "alone", s_event ("alone", 1));
    unsigned char *sent = NULL;
    size_t sent_len = 0;
    char err[200];
    assert_int_equal (bmq_envelope_encode (env, &sent, &sent_len, err, sizeof err), 0);
    s_send (env);
    s_wait_ready ();
    bmq_event_relay_stats_t st = { 0 };
    assert_int_equal (bmq_event_relay (s_sub, s_pub, NULL, NULL, &st), 1);
    zframe_t *got = zframe_recv (s_watch);
    assert_non_null (got);
    assert_int_equal (zframe_size (got), sent_len);        /* the same bytes: not decoded, not re-encoded */
    assert_memory_equal (zframe_data (got), sent, sent_len);
    assert_int_equal (st.batched_events, 0);
    zframe_destroy (&got);
    free (sent);
}

static void test_backlog_contents (void **state)
{
    (void) state;
    for (int k = 1; k <= 10; k++) s_progress ("story-a", k);
    s_send (bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "executor")));
    for (int k = 1; k <= 5; k++) s_progress ("story-b", k);
    s_send (bmq_progress_batch_new ("story-b", json_pack ("[ooo]", s_event ("story-b", 6), s_event ("story-b", 7),
                                                          s_event ("story-b", 8))));
    s_progress ("story-a", 11);
    s_wait_ready ();
    bmq_event_relay_stats_t st = { 0 };
    assert_int_equal (bmq_event_relay (s_sub, s_pub, NULL, NULL, &st), 18);
    static s_read_t r;
    s_read_all (&r);
    /* a batch of story-a's 10, the heartbeat, a batch of story-b's 8, story-a's 11 alone */
    assert_int_equal (r.msgs, 4);
    assert_int_equal (r.types[0], BMQ_MSG_PROGRESS_BATCH);
    assert_int_equal (r.counts[0], 10);
    assert_int_equal (r.types[1], BMQ_MSG_HEARTBEAT);
    assert_int_equal (r.counts[1], 0);
    assert_int_equal (r.types[2], BMQ_MSG_PROGRESS_BATCH);
    assert_int_equal (r.counts[2], 8);
    assert_int_equal (r.types[3], BMQ_MSG_PROGRESS);
    assert_int_equal (r.events, 19);
    for (int i = 0; i < 10; i++) { assert_string_equal (r.cids[i], "story-a"); assert_int_equal (r.steps[i], i + 1); }
    for (int i = 0; i < 8; i++) { assert_string_equal (r.cids[10 + i], "story-b"); assert_int_equal (r.steps[10 + i], i + 1); }
    assert_string_equal (r.cids[18], "story-a");
    assert_int_equal (r.steps[18], 11);
    assert_int_equal (st.received, 18);
    assert_int_equal (st.published, 4);
    assert_int_equal (st.batched_events, 18);
    assert_int_equal (r.skipped, 0);
}

static void test_batches_are_bounded_and_a_round_too (void **state)
{
    (void) state;
    int total = EVENT_RELAY_ROUND + 88;
    for (int k = 1; k <= total; k++) s_progress ("long", k);
    s_wait_ready ();
    bmq_event_relay_stats_t st = { 0 };
    assert_int_equal (bmq_event_relay (s_sub, s_pub, NULL, NULL, &st), EVENT_RELAY_ROUND);
    assert_int_equal (bmq_event_relay (s_sub, s_pub, NULL, NULL, &st), 88);
    static s_read_t r;
    s_read_all (&r);
    assert_int_equal (r.events, total);
    for (int i = 0; i < total; i++) assert_int_equal (r.steps[i], i + 1);
    for (int m = 0; m < r.msgs; m++) assert_true (r.counts[m] >= 1 && r.counts[m] <= BMQ_PROGRESS_BATCH_MAX);
    assert_int_equal (r.msgs, 3);                   /* 256 + 256, then 88 */
    assert_int_equal (st.received, (size_t) total);
}

/* a batch item split across two batches: an executor's batch of 200 after 100 single events */
static void test_a_batch_split_at_the_bound_keeps_every_event (void **state)
{
    (void) state;
    for (int k = 1; k <= 100; k++) s_progress ("split", k);
    json_t *items = json_array ();
    for (int k = 101; k <= 300; k++) json_array_append_new (items, s_event ("split", k));
    s_send (bmq_progress_batch_new ("split", items));
    s_wait_ready ();
    assert_int_equal (bmq_event_relay (s_sub, s_pub, NULL, NULL, NULL), 101);
    static s_read_t r;
    s_read_all (&r);
    assert_int_equal (r.events, 300);
    for (int i = 0; i < 300; i++) assert_int_equal (r.steps[i], i + 1);
    assert_int_equal (r.msgs, 2);
    assert_int_equal (r.counts[0], 256);
    assert_int_equal (r.counts[1], 44);
}

static bool s_consume_heartbeats (void *arg, zframe_t *frame)
{
    bmq_envelope_t *env = bmq_envelope_decode (zframe_data (frame), zframe_size (frame), NULL, 0);
    bool mine = env && env->type == BMQ_MSG_HEARTBEAT;
    if (mine) (*(int *) arg)++;
    bmq_envelope_destroy (&env);
    return mine;
}

static void test_side_sees_every_frame_and_keeps_what_it_consumes (void **state)
{
    (void) state;
    s_progress ("side", 1);
    s_send (bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "executor")));
    s_progress ("side", 2);
    s_send (bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "executor")));
    s_wait_ready ();
    int consumed = 0;
    assert_int_equal (bmq_event_relay (s_sub, s_pub, s_consume_heartbeats, &consumed, NULL), 4);
    assert_int_equal (consumed, 2);
    static s_read_t r;
    s_read_all (&r);
    assert_int_equal (r.events, 2);
    for (int m = 0; m < r.msgs; m++) assert_int_not_equal (r.types[m], BMQ_MSG_HEARTBEAT);
}

static void test_hostile_items_are_dropped_and_counted (void **state)
{
    (void) state;
    s_progress ("h", 1);
    json_t *items = json_pack ("[o, s, {s:s}, o]", s_event ("h", 2), "not an object", "plan_id", "no step", s_event ("h", 3));
    s_send (bmq_progress_batch_new ("h", items));
    zsock_send (s_exec, "b", "\x93\x01garbage", (size_t) 9);     /* not an envelope: passed on as it came */
    s_wait_ready ();
    bmq_event_relay_stats_t st = { 0 };
    assert_int_equal (bmq_event_relay (s_sub, s_pub, NULL, NULL, &st), 3);
    assert_int_equal (st.dropped_items, 2);
    zframe_t *f = zframe_recv (s_watch);
    bmq_envelope_t *env = bmq_envelope_decode (zframe_data (f), zframe_size (f), NULL, 0);
    s_read_t *r = calloc (1, sizeof *r);
    bmq_progress_each (env, s_take, r, NULL);
    assert_int_equal (r->events, 3);                         /* 1, 2, 3: the two bad items gone */
    assert_int_equal (r->steps[2], 3);
    zframe_t *g = zframe_recv (s_watch);
    assert_int_equal (zframe_size (g), 9);
    free (r);
    bmq_envelope_destroy (&env);
    zframe_destroy (&f);
    zframe_destroy (&g);
}

int main (void)
{
    bmq_envelope_set_sender ("gateway");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_a_lone_message_goes_on_as_it_came, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_backlog_contents, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_batches_are_bounded_and_a_round_too, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_a_batch_split_at_the_bound_keeps_every_event, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_side_sees_every_frame_and_keeps_what_it_consumes, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_hostile_items_are_dropped_and_counted, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
