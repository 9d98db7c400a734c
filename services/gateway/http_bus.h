/* http_bus — one HTTP connection thread's line to the gateway.
 *
 * czmq sockets are not thread-safe, so each HTTP connection thread gets its
 * own DEALER on the gateway's inproc endpoint, where the gateway's front
 * ROUTER is bound besides its TCP/IPC endpoint: HTTP requests go through
 * exactly the request machinery the CLI uses. Answers belonging to other
 * stories (a request the connection gave up on) are dropped. */
#ifndef BMQ_HTTP_BUS_H
#define BMQ_HTTP_BUS_H

#include "codec.h"

typedef struct bmq_http_bus_t bmq_http_bus_t;

bmq_http_bus_t *bmq_http_bus_new (const char *endpoint);
void bmq_http_bus_destroy (bmq_http_bus_t **self_p);
/* Send (not consumed). 0 / -1. */
int bmq_http_bus_send (bmq_http_bus_t *self, const bmq_envelope_t *env);
/* The next envelope of story `cid`, waiting up to timeout_ms; NULL when none came. */
bmq_envelope_t *bmq_http_bus_recv (bmq_http_bus_t *self, const char *cid, int timeout_ms);

#endif
