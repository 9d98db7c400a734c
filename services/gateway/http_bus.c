/* http_bus — a DEALER per HTTP connection thread. */
#include "http_bus.h"
#include "bus.h"

struct bmq_http_bus_t {
    zsock_t *sock;
};

bmq_http_bus_t *bmq_http_bus_new (const char *endpoint)
{
    zsock_t *sock = bmq_bus_connect (ZMQ_DEALER, endpoint, "gateway");
    if (!sock) return NULL;
    bmq_http_bus_t *self = calloc (1, sizeof *self);
    self->sock = sock;
    return self;
}

void bmq_http_bus_destroy (bmq_http_bus_t **self_p)
{
    if (!self_p || !*self_p) return;
    zsock_set_linger ((*self_p)->sock, 0);
    zsock_destroy (&(*self_p)->sock);
    free (*self_p);
    *self_p = NULL;
}

int bmq_http_bus_send (bmq_http_bus_t *self, const bmq_envelope_t *env) { return bmq_bus_send (self->sock, NULL, env); }

bmq_envelope_t *bmq_http_bus_recv (bmq_http_bus_t *self, const char *cid, int timeout_ms)
{
    int64_t until = bmq_mono_ms () + timeout_ms;
    for (;;) {
        int64_t left = until - bmq_mono_ms ();
        zmq_pollitem_t item = { zsock_resolve (self->sock), 0, ZMQ_POLLIN, 0 };
        if (left < 0 || zmq_poll (&item, 1, (long) left) <= 0) return NULL;
        bmq_envelope_t *env = bmq_bus_recv (self->sock, NULL);
        if (env && !strcmp (env->cid, cid)) return env;
        bmq_envelope_destroy (&env);
    }
}
