/* bus — envelopes over czmq sockets. */
#include "bus.h"
#include "log.h"

static int s_send_bytes (zsock_t *sock, zframe_t *routing_id, unsigned char *buf, size_t len)
{
    zmsg_t *msg = zmsg_new ();
    if (zsock_type (sock) == ZMQ_ROUTER) {
        if (!routing_id) { zmsg_destroy (&msg); free (buf); return -1; }
        zmsg_append (msg, &(zframe_t *) { zframe_dup (routing_id) });
    }
    zmsg_addmem (msg, buf, len);
    free (buf);
    return zmsg_send (&msg, sock);
}

int bmq_bus_send (zsock_t *sock, zframe_t *routing_id, const bmq_envelope_t *env)
{
    unsigned char *buf;
    size_t len;
    char err[256];
    if (bmq_envelope_encode (env, &buf, &len, err, sizeof err)) {
        bmq_error ("cannot encode %s: %s", bmq_msg_type_name (env->type), err);
        return -1;
    }
    return s_send_bytes (sock, routing_id, buf, len);
}

int bmq_bus_send_and_destroy (zsock_t *sock, zframe_t *routing_id, bmq_envelope_t **env_p)
{
    int rc = bmq_bus_send (sock, routing_id, *env_p);
    bmq_envelope_destroy (env_p);
    return rc;
}

bmq_envelope_t *bmq_bus_recv (zsock_t *sock, zframe_t **routing_id_out)
{
    zmsg_t *msg = zmsg_recv (sock);
    if (!msg) return NULL;
    zframe_t *rid = NULL;
    int type = zsock_type (sock);
    if (type == ZMQ_ROUTER) rid = zmsg_pop (msg);
    bmq_envelope_t *env = NULL;
    char err[512] = "";
    if (zmsg_size (msg) != 1)
        snprintf (err, sizeof err, "expected one frame, got %zu", zmsg_size (msg));
    else {
        zframe_t *f = zmsg_first (msg);
        env = bmq_envelope_decode (zframe_data (f), zframe_size (f), err, sizeof err);
    }
    zmsg_destroy (&msg);
    if (!env) {
        bmq_warn ("rejected a malformed message: %s", err);
        if (type == ZMQ_ROUTER || type == ZMQ_DEALER) {
            bmq_envelope_t *reply = bmq_envelope_error (NULL, "bad_message", "%s", err);
            bmq_bus_send_and_destroy (sock, rid, &reply);
        }
        zframe_destroy (&rid);
        return NULL;
    }
    if (routing_id_out) *routing_id_out = rid;
    else zframe_destroy (&rid);
    return env;
}

static zsock_t *s_socket (int type, const char *endpoint, bool bind)
{
    if (!endpoint || !*endpoint) {
        bmq_error ("empty endpoint for a %s socket", zsys_sockname (type));
        return NULL;
    }
    zsock_t *sock = zsock_new (type);
    if (!sock) return NULL;
    zsock_set_linger (sock, 500);
    zsock_set_sndhwm (sock, 10000);
    zsock_set_rcvhwm (sock, 10000);
    if (type == ZMQ_ROUTER) zsock_set_router_mandatory (sock, 0);
    if (type == ZMQ_SUB) zsock_set_subscribe (sock, "");
    int rc = bind ? zsock_bind (sock, "%s", endpoint) : zsock_connect (sock, "%s", endpoint);
    if (rc == -1) {
        bmq_error ("cannot %s %s socket to %s: %s", bind ? "bind" : "connect",
                   zsys_sockname (type), endpoint, zmq_strerror (zmq_errno ()));
        zsock_destroy (&sock);
    }
    return sock;
}

zsock_t *bmq_bus_bind (int type, const char *endpoint) { return s_socket (type, endpoint, true); }
zsock_t *bmq_bus_connect (int type, const char *endpoint) { return s_socket (type, endpoint, false); }
