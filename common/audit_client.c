/* audit_client — at-least-once sending with acknowledgements; the store dedups. */
#include "audit_client.h"
#include "bus.h"
#include "log.h"

#include <unistd.h>

#define RESEND_AFTER_MS 2000

typedef struct {
    int64_t         seq;
    int64_t         sent_at;      /* 0: not sent yet */
    bmq_envelope_t *env;
} s_pending_t;

struct bmq_audit_t {
    bmq_peer_t *peer;
    char        origin[96];
    int64_t     next_seq;
    zlistx_t   *queue;            /* s_pending_t*, in seq order */
    size_t      dropped;
};

static void s_pending_free (void **item)
{
    if (!item || !*item) return;
    s_pending_t *p = *item;
    bmq_envelope_destroy (&p->env);
    free (p);
    *item = NULL;
}

bmq_audit_t *bmq_audit_new (const char *endpoint, int interval_ms, int liveness)
{
    bmq_peer_t *peer = bmq_peer_new ("audit", endpoint, interval_ms, liveness);
    if (!peer) return NULL;
    bmq_audit_t *self = calloc (1, sizeof *self);
    self->peer = peer;
    self->next_seq = 1;
    self->queue = zlistx_new ();
    zlistx_set_destructor (self->queue, s_pending_free);
    /* sender + pid + start time names this instance: seq restarts from 1 with it */
    bmq_envelope_t *probe = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, NULL);
    snprintf (self->origin, sizeof self->origin, "%s-%d-%lld", probe->sender, (int) getpid (),
              (long long) bmq_now_ms ());
    bmq_envelope_destroy (&probe);
    return self;
}

void bmq_audit_destroy (bmq_audit_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_audit_t *self = *self_p;
    if (zlistx_size (self->queue))
        bmq_warn ("%zu audit records were never acknowledged", zlistx_size (self->queue));
    zlistx_destroy (&self->queue);
    bmq_peer_destroy (&self->peer);
    free (self);
    *self_p = NULL;
}

zsock_t *bmq_audit_sock (bmq_audit_t *self) { return bmq_peer_sock (self->peer); }
bmq_peer_t *bmq_audit_peer (bmq_audit_t *self) { return self->peer; }
size_t bmq_audit_pending (const bmq_audit_t *self) { return zlistx_size (self->queue); }

static void s_send (bmq_audit_t *self, s_pending_t *p)
{
    p->sent_at = bmq_mono_ms ();
    bmq_peer_send (self->peer, p->env);
}

void bmq_audit_record (bmq_audit_t *self, const char *cid, const char *kind, json_t *data)
{
    if (!self) { json_decref (data); return; }
    if (zlistx_size (self->queue) >= BMQ_AUDIT_QUEUE_MAX) {
        /* Never grow without bound; say so loudly, it means audit is down for long. */
        if (self->dropped++ % 1000 == 0)
            bmq_error ("audit queue full (%d records): audit service unreachable, dropping records",
                       BMQ_AUDIT_QUEUE_MAX);
        json_decref (data);
        return;
    }
    s_pending_t *p = calloc (1, sizeof *p);
    p->seq = self->next_seq++;
    json_t *body = json_pack ("{s:s, s:o, s:I, s:s}", "kind", kind, "data", data ? data : json_object (),
                              "seq", (json_int_t) p->seq, "origin", self->origin);
    p->env = bmq_envelope_new (BMQ_MSG_AUDIT_RECORD, cid, body);
    zlistx_add_end (self->queue, p);
    s_send (self, p);
}

void bmq_audit_handle (bmq_audit_t *self, const bmq_envelope_t *env)
{
    if (bmq_peer_heard (self->peer, env) || env->type != BMQ_MSG_AUDIT_ACK) return;
    int64_t seq = bmq_body_int (env, "seq", -1);
    const char *origin = bmq_body_str (env, "origin");
    if (origin && strcmp (origin, self->origin)) return;
    for (s_pending_t *p = zlistx_first (self->queue); p; p = zlistx_next (self->queue))
        if (p->seq == seq) { zlistx_delete (self->queue, zlistx_cursor (self->queue)); break; }
        else if (p->seq > seq) break;
}

void bmq_audit_tick (bmq_audit_t *self)
{
    bmq_peer_tick (self->peer);
    int64_t now = bmq_mono_ms ();
    int budget = 500;             /* resend in slices, never flood */
    for (s_pending_t *p = zlistx_first (self->queue); p && budget > 0; p = zlistx_next (self->queue))
        if (now - p->sent_at >= RESEND_AFTER_MS && bmq_peer_alive (self->peer)) { s_send (self, p); budget--; }
}

void bmq_audit_flush (bmq_audit_t *self, int timeout_ms)
{
    int64_t end = bmq_mono_ms () + timeout_ms;
    zsock_t *sock = bmq_audit_sock (self);
    while (zlistx_size (self->queue) && bmq_mono_ms () < end) {
        if (zsock_events (sock) & ZMQ_POLLIN) {
            bmq_envelope_t *env = bmq_bus_recv (sock, NULL);
            if (env) bmq_audit_handle (self, env);
            bmq_envelope_destroy (&env);
            continue;
        }
        zpoller_t *poller = zpoller_new (sock, NULL);
        zpoller_wait (poller, 50);
        zpoller_destroy (&poller);
        bmq_audit_tick (self);
    }
}
