/* mh_intruder — the multihost test's intruder: a process with no trusted key
 * tries one blendmq endpoint and says whether it got anywhere.
 *
 *   mh_intruder dealer ENDPOINT TIMEOUT_MS [SERVER_CERT]
 *   mh_intruder sub    ENDPOINT TIMEOUT_MS [SERVER_CERT]
 *
 * dealer: connects a DEALER and sends a well-formed `status.request` envelope
 * (which every service answers to a peer it accepts), then waits for any reply.
 * sub: connects a SUB to a PUB endpoint, subscribes to everything and counts
 * what arrives. Without SERVER_CERT the socket is plain ZeroMQ (the NULL
 * mechanism: no keys at all); with it the socket is a CURVE client with a
 * keypair made on the spot (not in the server's trusted/) and the server's
 * public key read from SERVER_CERT (public certs are not secret).
 *
 * A socket monitor reports whether the ZMTP handshake completed. Output is
 * one line: "handshake=ok|failed|none replies=N".
 * Exit 0: refused (no handshake completed, nothing received);
 * 1: it got through (handshake completed or something arrived); 2: usage/error. */
#include "codec.h"

#include <czmq.h>

static void s_drain_monitor (zsock_t *mon, bool *ok, bool *failed)
{
    while (zsock_events (mon) & ZMQ_POLLIN) {
        zmsg_t *m = zmsg_recv (mon);
        if (!m) break;
        zframe_t *ev = zmsg_first (m);
        if (ev && zframe_size (ev) == 6) {
            uint16_t event;
            memcpy (&event, zframe_data (ev), 2);
            if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) *ok = true;
            else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH || event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                     || event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) *failed = true;
        }
        zmsg_destroy (&m);
    }
}

int main (int argc, char *argv[])
{
    if (argc < 4 || (strcmp (argv[1], "dealer") && strcmp (argv[1], "sub"))) {
        fprintf (stderr, "usage: mh_intruder dealer|sub ENDPOINT TIMEOUT_MS [SERVER_CERT]\n");
        return 2;
    }
    bool dealer = !strcmp (argv[1], "dealer");
    const char *endpoint = argv[2];
    int timeout_ms = atoi (argv[3]);
    zsys_init ();
    zsys_set_linger (0);
    zsock_t *sock = zsock_new (dealer ? ZMQ_DEALER : ZMQ_SUB);
    zcert_t *mine = NULL, *server = NULL;
    if (argc > 4) {
        server = zcert_load (argv[4]);
        if (!server) { fprintf (stderr, "mh_intruder: cannot read %s\n", argv[4]); return 2; }
        mine = zcert_new ();
        zcert_apply (mine, sock);
        zsock_set_curve_serverkey (sock, zcert_public_txt (server));
    }
    if (!dealer) zsock_set_subscribe (sock, "");
    zsock_t *mon = zsock_new (ZMQ_PAIR);
    char mon_ep[64];
    snprintf (mon_ep, sizeof mon_ep, "inproc://mh-intruder-%d", (int) getpid ());
    zmq_socket_monitor (zsock_resolve (sock), mon_ep,
                        ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                        | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    zsock_connect (mon, "%s", mon_ep);
    if (zsock_connect (sock, "%s", endpoint) != 0) {
        fprintf (stderr, "mh_intruder: cannot connect to %s\n", endpoint);
        return 2;
    }
    if (dealer) {
        /* a request a trusted client would get an answer to */
        bmq_envelope_set_sender ("intruder");
        bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_STATUS_REQUEST, NULL, NULL);
        unsigned char *buf = NULL;
        size_t len = 0;
        char err[256];
        if (bmq_envelope_encode (req, &buf, &len, err, sizeof err)) { fprintf (stderr, "mh_intruder: %s\n", err); return 2; }
        bmq_envelope_destroy (&req);
        zframe_t *f = zframe_new (buf, len);
        free (buf);
        /* queued until a handshake completes; never sent if none does */
        zsock_set_sndtimeo (sock, 0);
        zframe_send (&f, sock, ZFRAME_DONTWAIT);
        zframe_destroy (&f);
    }
    bool ok = false, failed = false;
    int replies = 0;
    zpoller_t *poller = zpoller_new (sock, mon, NULL);
    int64_t deadline = zclock_mono () + timeout_ms;
    while (zclock_mono () < deadline) {
        void *which = zpoller_wait (poller, (int) (deadline - zclock_mono ()));
        if (which == sock) {
            zmsg_t *m = zmsg_recv (sock);
            if (m) replies++;
            zmsg_destroy (&m);
        }
        else if (which == mon) s_drain_monitor (mon, &ok, &failed);
        else if (zpoller_terminated (poller) || !which) break;
    }
    s_drain_monitor (mon, &ok, &failed);
    printf ("handshake=%s replies=%d\n", ok ? "ok" : failed ? "failed" : "none", replies);
    zpoller_destroy (&poller);
    zmq_socket_monitor (zsock_resolve (sock), NULL, 0);
    zsock_destroy (&mon);
    zsock_destroy (&sock);
    zcert_destroy (&mine);
    zcert_destroy (&server);
    return ok || replies ? 1 : 0;
}
