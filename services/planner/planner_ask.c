/* planner_ask — one blocking question to the gateway; see planner_ask.h. */
#include "planner_ask.h"
#include "bus.h"

#include <czmq.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define S_SLICE_MS 50

int bmq_planner_ask (const char *gateway, const char *story, const char *what, bmq_envelope_t **req, int timeout_ms,
                     bool (*cancelled) (void *ctx), void *ctx, bmq_envelope_t **reply, char *why, size_t whylen)
{
    static atomic_uint s_counter;
    *reply = NULL;
    if (!req || !*req) { snprintf (why, whylen, "nothing to ask"); return -1; }
    if (!gateway || !*gateway) {
        bmq_envelope_destroy (req);
        snprintf (why, whylen, "no gateway endpoint is configured");
        return -1;
    }
    if (story && *story)            /* at most 40 bytes of the story: the cid stays within BMQ_MAX_ID */
        snprintf ((*req)->cid, sizeof (*req)->cid, "%.40s.%.12s-%u", story, what, atomic_fetch_add (&s_counter, 1) + 1);
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", (*req)->cid);
    zsock_t *sock = bmq_bus_connect (ZMQ_DEALER, gateway, "gateway");
    if (!sock) {
        bmq_envelope_destroy (req);
        snprintf (why, whylen, "cannot connect to the gateway at %.200s", gateway);
        return -1;
    }
    bmq_bus_send (sock, NULL, *req);
    bmq_envelope_destroy (req);
    int64_t deadline = bmq_mono_ms () + (timeout_ms > 0 ? timeout_ms : 5000);
    int rc = -1;
    snprintf (why, whylen, "no answer within %d ms (is the gateway running, with an executor and Blender?)", timeout_ms);
    while (true) {
        if (cancelled && cancelled (ctx)) { snprintf (why, whylen, "cancelled"); break; }
        int64_t wait = deadline - bmq_mono_ms ();
        if (wait <= 0) break;
        zmq_pollitem_t item = { zsock_resolve (sock), 0, ZMQ_POLLIN, 0 };
        int n = zmq_poll (&item, 1, wait > S_SLICE_MS ? S_SLICE_MS : (long) wait);
        if (n < 0 && zsys_interrupted) { snprintf (why, whylen, "interrupted"); break; }
        if (n <= 0) continue;
        bmq_envelope_t *env = bmq_bus_recv (sock, NULL);
        if (env && !strcmp (env->cid, cid)) { *reply = env; rc = 0; break; }
        bmq_envelope_destroy (&env);            /* stray or late */
    }
    zsock_destroy (&sock);
    return rc;
}
