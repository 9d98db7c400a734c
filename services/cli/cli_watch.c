/* cli_watch — `blendmq watch`: every progress event, as it happens, and a
 * line saying so whenever some may have been missed (issue 17).
 *
 * Events come from the gateway's PUB (gateway.events); a SUB reconnects by
 * itself when the gateway comes back (ZMTP heartbeats make it notice a peer
 * that vanished without closing the connection). Alongside, a heartbeat
 * DEALER (peer.h) pings the gateway: its heartbeats name the process, so a
 * new instance means the gateway restarted and what was published while it
 * was down is lost. A monitor on the SUB sees it reconnect: before the first
 * event of the new connection is printed, the gateway is asked at once who
 * it is, so a restart is said before the events that follow it. Every few seconds a status.request tells which executor
 * process (instance) serves each executor name: a new one is a restart.
 * Progress events carry their executor process's instance and a seq (1, 2,
 * 3…); a seq that skips means events were lost on the way. Events without
 * them pass unchecked. Each finding is one line, before the events that
 * follow it:
 *
 *   gap: missed N event(s) from executor X
 *   executor X restarted: events of plans in flight may be missing
 *   gateway restarted: events published while it was down are missing
 *   gateway unreachable: waiting for it
 *
 * With --json they are JSON lines {"type": "gap", "reason", "message", …}
 * among the events (which have no "type"). watch never exits because a
 * service went away: only Ctrl+C ends it.
 *
 * `watch PLAN_ID` (issue 29) follows one plan (or a live script, by its
 * script id) until its end event, printing only its events (and the gap
 * lines), and exits 0 done (or applied), 1 failed, 130 cancelled. Ctrl-C
 * there means stop, as on `chat`: the first sends cancel.request {plan_id}
 * (the gateway's own rules: the plan's key or a person) and waits for the
 * plan's end; a second leaves at once, saying the plan may still be running
 * and how to cancel it. A cancel that finds nothing in progress ends the
 * watch (exit 1); a refused one is said, and the watch goes on. */
#include "bus.h"
#include "progress_batch.h"
#include "cli.h"
#include "peer.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TRACKED        64           /* executor processes and names followed; the least recent go */
#define STATUS_EVERY_MS 3000        /* how often executors' instances are asked for */
#define STATUS_SOON_MS  500         /* at most this often when an unknown instance shows up */

typedef struct {                    /* the last event seen from one executor process */
    char    instance[BMQ_INSTANCE_LEN + 1];
    int64_t seq;
    int64_t used;
} s_seq_t;

typedef struct {                    /* which process serves an executor name */
    char    name[80];
    char    instance[BMQ_INSTANCE_LEN + 1];
    char    retired[BMQ_INSTANCE_LEN + 1];      /* the one before: a late status still naming it is stale */
    int64_t used;
} s_exec_t;

typedef struct {
    bool        json;
    char        default_name[80];   /* executor.name: status calls it plain "executor" */
    bmq_peer_t *gw;
    int         interval, liveness;
    bool        sub_dropped;        /* the SUB lost its connection (monitor) */
    bool        sub_live;           /* the SUB's last connection completed its handshake */
    int64_t     sub_down_since;     /* when it last lost (or never had) one, monotonic ms */
    char        events_ep[256];     /* gateway.events, to build the SUB again */
    int64_t     max_msg;
    bool        resync;             /* ...and has a new one: confirm the gateway before printing */
    unsigned    generation;
    char        gw_instance[BMQ_INSTANCE_LEN + 1];     /* the gateway process last heard */
    bool        said_unreachable;
    s_seq_t     seqs[TRACKED];
    s_exec_t    execs[TRACKED];
    int64_t     clock;
    int64_t     status_at;          /* when the last status.request went (0: ask now) */
    char        status_cid[BMQ_MAX_ID + 1];
    const char *plan_id;            /* watch PLAN_ID: only its events, until its end (NULL: everything) */
    char        cancel_cid[BMQ_MAX_ID + 1];     /* watch PLAN_ID: the cancel.request sent ("": none) */
} s_watch_t;

static volatile sig_atomic_t s_interrupts;      /* watch PLAN_ID: Ctrl-C presses */

static void s_on_sigint (int sig)
{
    (void) sig;
    s_interrupts++;
}

/* ---- output -------------------------------------------------------------------- */

/* One finding: `fields` (stolen) gets type and message in --json mode. */
static void s_say (s_watch_t *w, const char *type, json_t *fields, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
static void s_say (s_watch_t *w, const char *type, json_t *fields, const char *fmt, ...)
{
    char message[400];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    if (w->json) {
        json_object_set_new (fields, "type", json_string (type));
        json_object_set_new (fields, "message", json_string (message));
        char *text = json_dumps (fields, JSON_COMPACT | JSON_SORT_KEYS);
        if (text) printf ("%s\n", text);
        free (text);
    }
    else printf ("%s\n", message);
    json_decref (fields);
    fflush (stdout);
}

static void s_print_event (s_watch_t *w, const bmq_envelope_t *env)
{
    if (w->json) {
        char *text = json_dumps (env->body, JSON_COMPACT);
        printf ("%s\n", text);
        free (text);
    }
    else if (env->type == BMQ_MSG_PROGRESS) {
        const char *event = bmq_body_str (env, "event");
        const char *error = bmq_body_str (env, "error");
        if (event && !strcmp (event, "step"))
            printf ("%s  step %lld/%lld  %s  %s  %.1f ms%s%s\n", bmq_body_str (env, "plan_id"),
                    (long long) bmq_body_int (env, "step", 0), (long long) bmq_body_int (env, "total", 0),
                    bmq_body_str (env, "operation") ? bmq_body_str (env, "operation") : "?", bmq_body_str (env, "status"),
                    json_number_value (json_object_get (env->body, "duration_ms")), error ? "  " : "", error ? error : "");
        else if (event && !strcmp (event, "scene"))       /* a scene command changed it (reset_scene, …) */
            printf ("%s  scene %s by %s\n", bmq_body_str (env, "plan_id"), bmq_body_str (env, "status"),
                    bmq_body_str (env, "operation") ? bmq_body_str (env, "operation") : "?");
        else
            printf ("%s  plan %s (%lld/%lld steps)%s%s\n", bmq_body_str (env, "plan_id"), bmq_body_str (env, "status"),
                    (long long) bmq_body_int (env, "step", 0), (long long) bmq_body_int (env, "total", 0),
                    error ? "  " : "", error ? error : "");
    }
    fflush (stdout);
}

/* ---- executors ----------------------------------------------------------------- */

static s_exec_t *s_exec_by_instance (s_watch_t *w, const char *instance)
{
    for (int i = 0; i < TRACKED; i++)
        if (w->execs[i].name[0] && !strcmp (w->execs[i].instance, instance)) return &w->execs[i];
    return NULL;
}

/* What to call the executor of `instance`: its name when known. */
static const char *s_exec_label (s_watch_t *w, const char *instance)
{
    s_exec_t *e = s_exec_by_instance (w, instance);
    return e ? e->name : instance;
}

/* Executor `name` is served by process `instance` (from a status reply, or an
 * event naming its executor): a different one than before is a restart. */
static void s_exec_seen (s_watch_t *w, const char *name, const char *instance)
{
    if (!name || !*name || !instance || strlen (instance) != BMQ_INSTANCE_LEN) return;
    s_exec_t *e = NULL, *oldest = NULL;
    for (int i = 0; i < TRACKED && !e; i++) {
        if (w->execs[i].name[0] && !strcmp (w->execs[i].name, name)) e = &w->execs[i];
        else if (!oldest || w->execs[i].used < oldest->used) oldest = &w->execs[i];
    }
    if (!e) {
        e = oldest;
        memset (e, 0, sizeof *e);
        snprintf (e->name, sizeof e->name, "%s", name);
    }
    e->used = ++w->clock;
    if (!strcmp (e->instance, instance) || !strcmp (e->retired, instance)) return;
    if (e->instance[0]) {
        s_say (w, "gap", json_pack ("{s:s, s:s, s:s, s:s}", "reason", "executor restarted", "executor", name,
                                    "instance", instance, "previous_instance", e->instance),
               "executor %s restarted: events of plans in flight may be missing", name);
        memcpy (e->retired, e->instance, sizeof e->retired);
    }
    memcpy (e->instance, instance, sizeof e->instance);
}

/* The slot of an executor process; a new one (seq 0) replaces the least recently heard. */
static s_seq_t *s_seq_slot (s_watch_t *w, const char *instance)
{
    s_seq_t *oldest = NULL;
    for (int i = 0; i < TRACKED; i++) {
        if (!strcmp (w->seqs[i].instance, instance)) return &w->seqs[i];
        if (!oldest || w->seqs[i].used < oldest->used) oldest = &w->seqs[i];
    }
    memset (oldest, 0, sizeof *oldest);
    memcpy (oldest->instance, instance, sizeof oldest->instance);
    return oldest;
}

/* Before printing an event: was anything of its executor missed? */
static void s_follow_seq (s_watch_t *w, const bmq_envelope_t *env)
{
    const char *instance = bmq_body_str (env, "instance");
    json_t *seq_v = json_object_get (env->body, "seq");
    if (!instance || strlen (instance) != BMQ_INSTANCE_LEN || !json_is_integer (seq_v) || json_integer_value (seq_v) < 1) return;
    int64_t seq = (int64_t) json_integer_value (seq_v);
    s_exec_seen (w, bmq_body_str (env, "executor"), instance);
    if (!s_exec_by_instance (w, instance) && bmq_mono_ms () - w->status_at > STATUS_SOON_MS) w->status_at = 0;  /* whose is it? */
    s_seq_t *t = s_seq_slot (w, instance);
    if (t->seq && seq > t->seq + 1) {
        const char *label = s_exec_label (w, instance);
        s_say (w, "gap", json_pack ("{s:s, s:s, s:s, s:I, s:I, s:I}", "reason", "executor events lost", "executor", label,
                                    "instance", instance, "missed", (json_int_t) (seq - t->seq - 1),
                                    "last_seq", (json_int_t) t->seq, "seq", (json_int_t) seq),
               "gap: missed %lld event(s) from executor %s", (long long) (seq - t->seq - 1), label);
    }
    if (seq > t->seq) t->seq = seq;
    t->used = ++w->clock;
}

/* A status reply: each executor's process, as the gateway hears it. */
static void s_on_status (s_watch_t *w, const bmq_envelope_t *env)
{
    size_t i;
    json_t *s;
    json_array_foreach (json_object_get (env->body, "services"), i, s) {
        const char *label = json_string_value (json_object_get (s, "name"));
        const char *instance = json_string_value (json_object_get (s, "instance"));
        if (!label || strncmp (label, "executor", 8) || (label[8] && label[8] != ':')) continue;
        s_exec_seen (w, label[8] ? label + 9 : w->default_name, instance);
    }
}

static void s_ask_status (s_watch_t *w)
{
    if (!bmq_peer_alive (w->gw) || (w->status_at && bmq_mono_ms () - w->status_at < STATUS_EVERY_MS)) return;
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_STATUS_REQUEST, NULL, NULL);
    snprintf (w->status_cid, sizeof w->status_cid, "%s", req->cid);
    bmq_peer_send (w->gw, req);
    bmq_envelope_destroy (&req);
    w->status_at = bmq_mono_ms ();
}

/* ---- the gateway ------------------------------------------------------------------ */

static void s_check_gateway (s_watch_t *w)
{
    unsigned generation = bmq_peer_generation (w->gw);
    if (generation != w->generation) {
        w->generation = generation;
        w->said_unreachable = false;
        w->status_at = 0;                       /* and the executors? */
        s_say (w, "gap", json_pack ("{s:s, s:s, s:s}", "reason", "gateway restarted", "instance", bmq_peer_instance (w->gw),
                                    "previous_instance", w->gw_instance),
               "gateway restarted: events published while it was down are missing");
    }
    else if (bmq_peer_alive (w->gw) && w->said_unreachable) {
        w->said_unreachable = false;
        s_say (w, "status", json_pack ("{s:s}", "gateway", "reachable"), "gateway reachable again");
    }
    else if (!w->said_unreachable && bmq_peer_down_ms (w->gw) > 0) {
        w->said_unreachable = true;
        s_say (w, "gap", json_pack ("{s:s, s:I}", "reason", "gateway unreachable", "silent_ms",
                                    (json_int_t) (bmq_peer_down_ms (w->gw) + (int64_t) bmq_peer_interval (w->gw) * w->liveness)),
               "gateway unreachable: waiting for it");
    }
    snprintf (w->gw_instance, sizeof w->gw_instance, "%s", bmq_peer_instance (w->gw));
}

/* A heartbeat now (not at the next tick), and its answer waited for (at
 * most two intervals): a restart shows in bmq_peer_generation. */
static void s_resync (s_watch_t *w)
{
    w->resync = false;
    bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, json_pack ("{s:s}", "service", "gateway"));
    bmq_peer_send (w->gw, hb);
    bmq_envelope_destroy (&hb);
    zmq_pollitem_t item = { zsock_resolve (bmq_peer_sock (w->gw)), 0, ZMQ_POLLIN, 0 };
    for (int64_t until = bmq_mono_ms () + 2 * w->interval; !zsys_interrupted; ) {
        int64_t left = until - bmq_mono_ms ();
        if (left <= 0 || zmq_poll (&item, 1, (long) left) <= 0) break;
        bmq_envelope_t *env = bmq_bus_recv (bmq_peer_sock (w->gw), NULL);
        bool heartbeat = env && bmq_peer_heard (w->gw, env);
        if (env && !heartbeat && env->type == BMQ_MSG_STATUS_REPLY && !strcmp (env->cid, w->status_cid)) s_on_status (w, env);
        bmq_envelope_destroy (&env);
        if (heartbeat) break;
    }
    s_check_gateway (w);
}

/* What the SUB's monitor saw: a lost connection, then a new one. */
static void s_on_monitor (s_watch_t *w, zactor_t *monitor)
{
    zmsg_t *msg = zmsg_recv (monitor);
    char *event = msg ? zmsg_popstr (msg) : NULL;
    if (event && !strcmp (event, "DISCONNECTED")) {
        if (w->sub_live) w->sub_down_since = bmq_mono_ms ();
        w->sub_dropped = true;
        w->sub_live = false;
    }
    else if (event && !strcmp (event, "HANDSHAKE_SUCCEEDED")) {
        w->sub_live = true;
        if (w->sub_dropped) w->resync = true;
    }
    else if (event && !strncmp (event, "HANDSHAKE_FAILED", 16))
        fprintf (stderr, "blendmq: the events connection to the gateway failed its handshake (%s)\n", event);
    free (event);
    zmsg_destroy (&msg);
}

/* The events SUB, with ZMTP heartbeats: a gateway that vanished without
 * closing the connection (its host went down) is dropped and reconnected. */
static zsock_t *s_events_socket (const s_watch_t *w)
{
    zsock_t *sub = bmq_bus_client_socket (ZMQ_SUB, "gateway");
    if (!sub) return NULL;
    if (w->max_msg > 0) zsock_set_maxmsgsize (sub, (int) (w->max_msg > INT32_MAX ? INT32_MAX : w->max_msg));
    zsock_set_heartbeat_ivl (sub, w->interval);
    zsock_set_heartbeat_timeout (sub, w->interval * w->liveness);
    zsock_set_reconnect_ivl_max (sub, w->interval);
    return sub;
}

/* The SUB with its monitor and the poller over both and the heartbeat peer. */
typedef struct { zsock_t *sub; zactor_t *monitor; zpoller_t *poller; } s_events_t;

static void s_events_close (s_events_t *e)
{
    zpoller_destroy (&e->poller);
    zactor_destroy (&e->monitor);
    zsock_destroy (&e->sub);
}

static int s_events_open (s_watch_t *w, s_events_t *e)
{
    if (!(e->sub = s_events_socket (w))) return -1;
    e->monitor = zactor_new (zmonitor, e->sub);          /* before connecting: no handshake goes unseen */
    zstr_sendx (e->monitor, "LISTEN", "DISCONNECTED", "HANDSHAKE_SUCCEEDED", "HANDSHAKE_FAILED_AUTH",
                "HANDSHAKE_FAILED_PROTOCOL", "HANDSHAKE_FAILED_NO_DETAIL", NULL);
    zstr_sendx (e->monitor, "START", NULL);
    zsock_wait (e->monitor);
    if (zsock_connect (e->sub, "%s", w->events_ep) == -1) {
        fprintf (stderr, "blendmq: cannot connect to the gateway's events at %s\n", w->events_ep);
        return -1;
    }
    e->poller = zpoller_new (e->monitor, e->sub, bmq_peer_sock (w->gw), NULL);
    w->sub_live = false;
    w->sub_down_since = bmq_mono_ms ();
    return 0;
}

/* libzmq gives up on an endpoint for good after some handshake failures (a
 * protocol error ends the session instead of reconnecting), and a restarting
 * gateway on a loaded machine can cause one: when the gateway answers
 * heartbeats but the SUB has had no working connection for a few intervals,
 * it is built again. */
static int s_events_heal (s_watch_t *w, s_events_t *e)
{
    if (w->sub_live || !bmq_peer_alive (w->gw) || bmq_mono_ms () - w->sub_down_since < 3 * (int64_t) w->interval) return 0;
    fprintf (stderr, "blendmq: the events connection did not come back; connecting again to %s\n", w->events_ep);
    s_events_close (e);
    if (s_events_open (w, e)) return -1;
    w->sub_dropped = true;               /* its first handshake is a new connection: resync */
    return 0;
}

/* watch PLAN_ID: is this the end of the plan watched? Its exit code (0 done or applied, 130
 * cancelled, 1 anything else), or BMQ_CLI_CONTINUE. */
static int s_plan_end (const bmq_envelope_t *env)
{
    const char *event = bmq_body_str (env, "event"), *status = bmq_body_str (env, "status");
    if (!event || !status) return BMQ_CLI_CONTINUE;
    if (!strcmp (event, "plan") && (!strcmp (status, "started") || !strcmp (status, "continue"))) return BMQ_CLI_CONTINUE;
    if (strcmp (event, "plan") && strcmp (event, "script")) return BMQ_CLI_CONTINUE;
    return !strcmp (status, "done") || !strcmp (status, "applied") ? 0 : !strcmp (status, "cancelled") ? 130 : 1;
}

/* watch PLAN_ID: Ctrl-C. The first asks the gateway to cancel the plan; a second leaves. */
static int s_plan_interrupts (s_watch_t *w)
{
    if (s_interrupts && !w->cancel_cid[0]) {
        bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_CANCEL_REQUEST, NULL, json_pack ("{s:s}", "plan_id", w->plan_id));
        snprintf (w->cancel_cid, sizeof w->cancel_cid, "%s", req->cid);
        bmq_peer_send (w->gw, req);
        bmq_envelope_destroy (&req);
        fprintf (stderr, "\nblendmq: cancelling plan %s: it stops after its current step and what it did is rolled back"
                         " (Ctrl-C again: leave without waiting)\n", w->plan_id);
        fflush (stderr);
    }
    else if (s_interrupts > 1) {
        fprintf (stderr, "blendmq: left without waiting: plan %s may still be running; cancel it with `blendmq cancel %s`\n",
                 w->plan_id, w->plan_id);
        return 130;
    }
    return BMQ_CLI_CONTINUE;
}

/* watch PLAN_ID: the gateway's answer to our cancel.request. */
static int s_plan_cancel_reply (s_watch_t *w, const bmq_envelope_t *env)
{
    if (env->type == BMQ_MSG_ERROR) {       /* e.g. forbidden: another key's plan, and ours is not a person's */
        fprintf (stderr, "blendmq: %s (Ctrl-C again: stop watching)\n", bmq_body_str (env, "message") ?: "the cancel was refused");
        return BMQ_CLI_CONTINUE;
    }
    if (!json_array_size (json_object_get (env->body, "cancelled"))) {
        fprintf (stderr, "blendmq: no plan %s is in progress (it ended, or never started)\n", w->plan_id);
        return 1;
    }
    return BMQ_CLI_CONTINUE;
}


/* One event from the gateway's stream (a progress.batch's, one at a time). */
typedef struct { s_watch_t *w; const char *plan_id; int end; } s_event_t;

static int s_on_event (const bmq_envelope_t *env, void *arg)
{
    s_event_t *one = arg;
    if (env->type == BMQ_MSG_PROGRESS) s_follow_seq (one->w, env);
    bool ours = !one->plan_id || !strcmp (bmq_body_str (env, "plan_id") ?: "", one->plan_id);
    if (ours) s_print_event (one->w, env);
    int end = one->plan_id && ours && env->type == BMQ_MSG_PROGRESS ? s_plan_end (env) : BMQ_CLI_CONTINUE;
    if (end == BMQ_CLI_CONTINUE) return 0;
    if (end == 130) fprintf (stderr, "blendmq: plan %s cancelled\n", one->plan_id);
    else if (end) fprintf (stderr, "blendmq: plan %s %s\n", one->plan_id, bmq_body_str (env, "status"));
    one->end = end;
    return 1;
}

static int s_watch (const bmq_cli_opts_t *opts, const char *plan_id)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    int interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms"), liveness = (int) bmq_config_int (cfg, "heartbeat.liveness");
    if (interval <= 0) interval = 1000;
    if (liveness <= 0) liveness = 3;
    s_watch_t w = { .json = opts->json, .interval = interval, .liveness = liveness,
                    .max_msg = bmq_config_int (cfg, "security.max_message_bytes"), .plan_id = plan_id };
    snprintf (w.default_name, sizeof w.default_name, "%s", bmq_config_str (cfg, "executor.name"));
    snprintf (w.events_ep, sizeof w.events_ep, "%s", bmq_config_str (cfg, "gateway.events"));
    w.gw = bmq_peer_new ("gateway", bmq_config_str (cfg, "gateway.endpoint"), interval, liveness);
    bmq_config_destroy (&cfg);
    s_events_t ev = { 0 };
    if (!w.gw || s_events_open (&w, &ev)) { s_events_close (&ev); bmq_peer_destroy (&w.gw); return 2; }
    struct sigaction old_sa;
    if (plan_id) {
        zsys_handler_set (NULL);            /* ours, not czmq's: the first Ctrl-C is a request, not an exit */
        struct sigaction sa = { .sa_handler = s_on_sigint };
        sigemptyset (&sa.sa_mask);
        sigaction (SIGINT, &sa, &old_sa);
        s_interrupts = 0;
        fprintf (stderr, "watching plan %s until it ends (Ctrl+C cancels it; twice: leave without waiting)\n", plan_id);
    }
    else fprintf (stderr, "watching progress events (Ctrl+C to stop)\n");
    int code = 0;
    while (!zsys_interrupted) {
        if (plan_id && (code = s_plan_interrupts (&w)) != BMQ_CLI_CONTINUE) break;
        code = 0;
        bmq_peer_tick (w.gw);
        s_ask_status (&w);
        if (s_events_heal (&w, &ev)) { code = 2; break; }
        void *which = zpoller_wait (ev.poller, interval / 4);
        if (zpoller_terminated (ev.poller) && (!plan_id || zsys_interrupted)) break;
        if (zpoller_terminated (ev.poller)) continue;          /* watch PLAN_ID: our Ctrl-C (EINTR), seen above */
        if (which == ev.monitor) { s_on_monitor (&w, ev.monitor); continue; }
        bmq_envelope_t *env = which ? bmq_bus_recv (which, NULL) : NULL;
        if (env && which == ev.sub) {
            w.sub_live = true;                  /* an event came: the connection works */
            while (zsock_events (zactor_sock (ev.monitor)) & ZMQ_POLLIN) s_on_monitor (&w, ev.monitor);
            if (w.resync) s_resync (&w);        /* a new connection: a restart is said before its events */
            else s_check_gateway (&w);
            s_event_t one = { &w, plan_id, BMQ_CLI_CONTINUE };
            if (bmq_progress_is (env)) bmq_progress_each (env, s_on_event, &one, NULL);   /* a batch: each event in order */
            else s_on_event (env, &one);
            if (one.end != BMQ_CLI_CONTINUE) {
                bmq_envelope_destroy (&env);
                code = one.end;
                break;
            }
        }
        else if (env && !bmq_peer_heard (w.gw, env) && env->type == BMQ_MSG_STATUS_REPLY && !strcmp (env->cid, w.status_cid))
            s_on_status (&w, env);
        else if (env && plan_id && w.cancel_cid[0] && !strcmp (env->cid, w.cancel_cid)
                 && (env->type == BMQ_MSG_CANCEL_REPLY || env->type == BMQ_MSG_ERROR)) {
            int end = s_plan_cancel_reply (&w, env);
            if (end != BMQ_CLI_CONTINUE) {
                bmq_envelope_destroy (&env);
                code = end;
                break;
            }
        }
        bmq_envelope_destroy (&env);
        s_check_gateway (&w);
    }
    /* once Ctrl-C was pressed the handler stays: a second one while we say how it ended must not kill us */
    if (plan_id && !s_interrupts) sigaction (SIGINT, &old_sa, NULL);
    s_events_close (&ev);
    bmq_peer_destroy (&w.gw);
    return code;
}

int bmq_cli_watch (const bmq_cli_opts_t *opts) { return s_watch (opts, NULL); }

int bmq_cli_watch_plan (const bmq_cli_opts_t *opts, const char *plan_id)
{
    if (!*plan_id || strlen (plan_id) > BMQ_MAX_ID) {
        fprintf (stderr, "blendmq: '%.80s' is not a plan id (usage: blendmq watch [PLAN_ID])\n", plan_id);
        return 2;
    }
    return s_watch (opts, plan_id);
}
