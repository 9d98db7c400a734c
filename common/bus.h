/* bus — envelopes over czmq sockets.
 *
 * ROUTER sockets carry [routing id][envelope]; DEALER, PUB and SUB carry
 * [envelope]. bmq_bus_recv decodes and, on a ROUTER, hands back the routing id
 * so the caller can reply. A frame that does not decode is answered with an
 * `error` (code bad_message) when the socket can reply, and reported as NULL. */
#ifndef BMQ_BUS_H
#define BMQ_BUS_H

#include "codec.h"
#include <czmq.h>

/* Send `env` (not consumed). `routing_id` is required on ROUTER sockets and
 * ignored elsewhere. 0 / -1 (encode failure is logged: it is a service bug). */
int bmq_bus_send (zsock_t *sock, zframe_t *routing_id, const bmq_envelope_t *env);
/* Send and destroy. */
int bmq_bus_send_and_destroy (zsock_t *sock, zframe_t *routing_id, bmq_envelope_t **env_p);

/* Receive one envelope; NULL when the message was malformed (already answered
 * and logged) or interrupted. *routing_id_out is set on ROUTER sockets. */
bmq_envelope_t *bmq_bus_recv (zsock_t *sock, zframe_t **routing_id_out);

/* Create a socket from an endpoint as configured ("tcp://…", "ipc://…"):
 * bind or connect as asked, with sane options (linger 0.5 s, bounded HWM).
 * NULL with a logged error when the endpoint is unusable. */
zsock_t *bmq_bus_bind (int type, const char *endpoint);
zsock_t *bmq_bus_connect (int type, const char *endpoint);

#endif
