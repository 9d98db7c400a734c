/* bus — envelopes over czmq sockets.
 *
 * ROUTER sockets carry [routing id][envelope]; DEALER, PUB and SUB carry
 * [envelope]. bmq_bus_recv decodes and, on a ROUTER, hands back the routing id
 * so the caller can reply. A frame that does not decode is answered with an
 * `error` (code bad_message) when the socket can reply, and reported as NULL. */
#ifndef BMQ_BUS_H
#define BMQ_BUS_H

#include "codec.h"
#include "config.h"
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
 * bind or connect as asked, with sane options (linger 0.5 s, bounded HWM,
 * ZMQ_MAXMSGSIZE = security.max_message_bytes).
 * NULL with a logged error when the endpoint is unusable.
 *
 * CURVE (after bmq_bus_security_init with security.curve true, the default):
 * a bound socket is a CURVE server with this process's own key, and only
 * clients whose public cert is in <keys_dir>/trusted get through (one zauth
 * actor per process is the ZAP handler); a connected socket is a CURVE
 * client with the own key, and `server` names the service that owns the
 * endpoint ("gateway", "planner", "validator", "executor", "audit"): its
 * public cert in <keys_dir>/trusted is the server key expected. Refused
 * handshakes on a bound socket are logged at warn (a socket monitor).
 * Before bmq_bus_security_init, or with curve off, sockets are plain. */
zsock_t *bmq_bus_bind (int type, const char *endpoint);
zsock_t *bmq_bus_connect (int type, const char *endpoint, const char *server);
/* Same, with another key of the keys dir than the process's own (tests that
 * play a service, a process acting for a client). */
zsock_t *bmq_bus_bind_as (int type, const char *endpoint, const char *self_key);
zsock_t *bmq_bus_connect_as (int type, const char *endpoint, const char *server, const char *self_key);
/* A socket with the client options for `server` but not connected yet (a SUB
 * that the caller connects to several publishers with zsock_connect). */
zsock_t *bmq_bus_client_socket (int type, const char *server);

/* Security for the whole process, once, before any socket: reads
 * security.curve, security.keys_dir and security.max_message_bytes from
 * `cfg`, loads the key `self_key` (the service's or client's name) and starts
 * the zauth actor on <keys_dir>/trusted. 0 / -1 with err (no keys dir, no
 * key, bad permissions). Calling it again replaces the settings. */
int  bmq_bus_security_init (const bmq_config_t *cfg, const char *self_key, char *err, size_t errlen);
/* Stop the zauth actor and forget the keys (also run at exit). */
void bmq_bus_security_shutdown (void);
/* True when sockets are made with CURVE. */
bool bmq_bus_curve (void);

#endif
