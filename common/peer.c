/* peer — heartbeated DEALER connection to one service. */
#include "peer.h"
#include "bus.h"

#include <sodium.h>
#include <stdint.h>
#include <unistd.h>

struct bmq_peer_t {
    char    *name;
    char    *endpoint;
    zsock_t *sock;
    int      interval_ms;
    int      liveness;
    int64_t  last_sent;
    int64_t  last_heard;       /* 0: never */
    int64_t  created;
    char    *state;
    char     blender[33];      /* an executor's Blender version, from its heartbeats ("" when none) */
    char     instance[BMQ_INSTANCE_LEN + 1];   /* the process answering, from its heartbeats */
    unsigned generation;       /* times the instance changed: the peer restarted */
    zsock_t *monitor;          /* the socket's DISCONNECTED events (NULL when they cannot be had) */
    int64_t  disconnected_at;  /* monotonic ms of the last one; 0: never */
};

/* Watch the connection itself: when the process at the other end dies, the
 * transport says so at once, well before heartbeats would. */
static void s_monitor_start (bmq_peer_t *self)
{
    static int seq;
    char ep[96];
    snprintf (ep, sizeof ep, "inproc://bmq-peer-%d-%d", (int) getpid (), __atomic_add_fetch (&seq, 1, __ATOMIC_RELAXED));
    if (zmq_socket_monitor (zsock_resolve (self->sock), ep, ZMQ_EVENT_DISCONNECTED) != 0) return;
    self->monitor = zsock_new_pair (ep);      /* '>' is implied for PAIR: connect */
    if (!self->monitor) zmq_socket_monitor (zsock_resolve (self->sock), NULL, 0);
}

static void s_monitor_drain (bmq_peer_t *self)
{
    while (self->monitor && (zsock_events (self->monitor) & ZMQ_POLLIN)) {
        zmsg_t *event = zmsg_recv (self->monitor);
        zframe_t *head = event ? zmsg_first (event) : NULL;
        if (head && zframe_size (head) >= 2) {
            uint16_t id;
            memcpy (&id, zframe_data (head), sizeof id);
            if (id == ZMQ_EVENT_DISCONNECTED) self->disconnected_at = bmq_mono_ms ();
        }
        zmsg_destroy (&event);
    }
}

const char *bmq_instance_id (void)
{
    static char id[BMQ_INSTANCE_LEN + 1];
    if (!id[0]) {
        unsigned char bytes[BMQ_INSTANCE_LEN / 2];
        if (sodium_init () < 0) abort ();
        randombytes_buf (bytes, sizeof bytes);
        sodium_bin2hex (id, sizeof id, bytes, sizeof bytes);
    }
    return id;
}

bmq_peer_t *bmq_peer_new (const char *name, const char *endpoint, int interval_ms, int liveness)
{
    /* the server's key is the service's: "executor:gui" is an executor */
    char server[64];
    snprintf (server, sizeof server, "%.*s", (int) strcspn (name, ":"), name);
    zsock_t *sock = bmq_bus_connect (ZMQ_DEALER, endpoint, server);
    if (!sock) return NULL;
    bmq_peer_t *self = calloc (1, sizeof *self);
    self->name = strdup (name);
    self->endpoint = strdup (endpoint);
    self->sock = sock;
    self->interval_ms = interval_ms > 0 ? interval_ms : 1000;
    self->liveness = liveness > 0 ? liveness : 3;
    self->state = strdup ("unknown");
    self->created = bmq_mono_ms ();
    s_monitor_start (self);
    return self;
}

void bmq_peer_destroy (bmq_peer_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_peer_t *self = *self_p;
    if (self->monitor) zmq_socket_monitor (zsock_resolve (self->sock), NULL, 0);
    zsock_destroy (&self->monitor);
    zsock_destroy (&self->sock);
    free (self->name);
    free (self->endpoint);
    free (self->state);
    free (self);
    *self_p = NULL;
}

zsock_t *bmq_peer_sock (bmq_peer_t *self) { return self->sock; }

int64_t bmq_peer_disconnected_at (bmq_peer_t *self)
{
    if (!self->monitor) return INT64_MAX;
    s_monitor_drain (self);
    return self->disconnected_at;
}

void bmq_peer_tick (bmq_peer_t *self)
{
    s_monitor_drain (self);
    int64_t now = bmq_mono_ms ();
    if (now - self->last_sent < self->interval_ms) return;
    self->last_sent = now;
    /* Heartbeats are droppable: don't let them pile up behind a dead peer. */
    bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL,
                                           json_pack ("{s:s}", "service", self->name));
    unsigned char *buf;
    size_t len;
    if (bmq_envelope_encode (hb, &buf, &len, NULL, 0) == 0) {
        zframe_t *f = zframe_new (buf, len);
        free (buf);
        if (zframe_send (&f, self->sock, ZFRAME_DONTWAIT) != 0) zframe_destroy (&f);
    }
    bmq_envelope_destroy (&hb);
}

bool bmq_peer_heard (bmq_peer_t *self, const bmq_envelope_t *env)
{
    self->last_heard = bmq_mono_ms ();
    if (env->type != BMQ_MSG_HEARTBEAT) return false;
    const char *state = bmq_body_str (env, "state");
    if (state) { free (self->state); self->state = strdup (state); }
    const char *blender = bmq_body_str (env, "blender");       /* declared at most 32 bytes */
    snprintf (self->blender, sizeof self->blender, "%s", blender && strlen (blender) < sizeof self->blender ? blender : "");
    const char *instance = bmq_body_str (env, "instance");
    if (instance && strlen (instance) == BMQ_INSTANCE_LEN && strcmp (instance, self->instance)) {
        if (self->instance[0]) self->generation++;
        memcpy (self->instance, instance, BMQ_INSTANCE_LEN + 1);
    }
    return true;
}

bool bmq_peer_alive (const bmq_peer_t *self)
{
    return self->last_heard
        && bmq_mono_ms () - self->last_heard <= (int64_t) self->interval_ms * self->liveness;
}

int64_t bmq_peer_down_ms (const bmq_peer_t *self)
{
    if (bmq_peer_alive (self)) return 0;
    int64_t since = (self->last_heard ? self->last_heard : self->created) + (int64_t) self->interval_ms * self->liveness;
    int64_t down = bmq_mono_ms () - since;
    return down > 0 ? down : 0;
}

unsigned bmq_peer_generation (const bmq_peer_t *self) { return self->generation; }
const char *bmq_peer_state (const bmq_peer_t *self) { return bmq_peer_alive (self) ? self->state : "unreachable"; }
const char *bmq_peer_instance (const bmq_peer_t *self) { return self->instance; }
int bmq_peer_interval (const bmq_peer_t *self) { return self->interval_ms; }

json_t *bmq_peer_status (const bmq_peer_t *self)
{
    json_t *status = json_pack ("{s:s, s:s, s:b, s:I, s:s, s:s, s:I}", "name", self->name, "endpoint", self->endpoint,
                      "alive", bmq_peer_alive (self),
                      "last_heard_ms", (json_int_t) (self->last_heard ? bmq_mono_ms () - self->last_heard : -1),
                      "state", bmq_peer_alive (self) ? self->state : "unreachable",
                      "instance", self->instance, "restarts_seen", (json_int_t) self->generation);
    if (status && self->blender[0] && bmq_peer_alive (self))      /* an executor's Blender (issue 30) */
        json_object_set_new (status, "blender_version", json_string (self->blender));
    return status;
}

int bmq_peer_send (bmq_peer_t *self, const bmq_envelope_t *env)
{
    return bmq_bus_send (self->sock, NULL, env);
}

bool bmq_answer_heartbeat (zsock_t *router, zframe_t *rid, const bmq_envelope_t *env,
                           const char *service, const char *state)
{
    if (env->type != BMQ_MSG_HEARTBEAT) return false;
    bmq_envelope_t *hb = bmq_envelope_reply (env, BMQ_MSG_HEARTBEAT,
                                             json_pack ("{s:s, s:s, s:s}", "service", service, "state", state,
                                                        "instance", bmq_instance_id ()));
    bmq_bus_send_and_destroy (router, rid, &hb);
    return true;
}
