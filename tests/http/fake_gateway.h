/* fake_gateway — a stand-in for the gateway loop, for HTTP tests and benches:
 * a ROUTER on an inproc endpoint answering the requests the HTTP server sends
 * (capabilities, validate, run, chat, scene) with canned but well-formed
 * answers, and applying its stories to the attached server as the real
 * gateway's story stream (http_feed.h) does. */
#ifndef BMQ_FAKE_GATEWAY_H
#define BMQ_FAKE_GATEWAY_H

#include "http_server.h"
#include <czmq.h>

typedef struct fake_gateway_t fake_gateway_t;

/* Bind `endpoint`; `palette` (taken, may be NULL) is what capabilities answers. */
fake_gateway_t *fake_gateway_new (const char *endpoint, json_t *palette);
/* The server whose hooks it feeds (may be set after both exist). */
void fake_gateway_attach (fake_gateway_t *self, bmq_http_server_t *server);
void fake_gateway_destroy (fake_gateway_t **self_p);
/* How many capabilities requests reached it. */
int fake_gateway_capabilities_asked (fake_gateway_t *self);
/* The last request it got: {type, body} (a copy; NULL before any). Script
 * "s-ok" exists (script.list answers it, with sha256 FAKE_SCRIPT_SHA;
 * script.confirm applies it); other scripts are "unsupported". */
json_t *fake_gateway_last (fake_gateway_t *self);
#define FAKE_SCRIPT_SHA "5c1f4e2a9b8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e"


#endif
