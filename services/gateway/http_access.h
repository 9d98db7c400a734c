/* http_access — who may talk to the gateway's HTTP server.
 *
 * Three checks, in order, on every request:
 * 1. Host (DNS rebinding): when the server listens on a loopback address, the
 *    Host header must name a loopback host (localhost, 127.0.0.0/8, [::1],
 *    any port); a browser tricked into sending a request for evil.example to
 *    127.0.0.1 gets 403.
 * 2. Origin: a request from a browser page carries Origin; it must be this
 *    server's own origin (http://<the Host it was sent to>: scheme, host and
 *    port) or one listed in http.allowed_origins (and the older
 *    gateway.http_allowed_origins), else 403. Another loopback port is
 *    another site. A refused preflight gets no CORS grant.
 * 3. Bearer token: when a token is set (always when the server listens on a
 *    non-loopback address), "Authorization: Bearer <token>" must match it
 *    (compared in constant time), else 401. /healthz needs no token.
 * The token itself is never logged. Immutable after construction. */
#ifndef BMQ_HTTP_ACCESS_H
#define BMQ_HTTP_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct bmq_http_access_t bmq_http_access_t;

/* `bind` is the listening address; `token` may be empty; `origins` is a
 * comma-separated list (may be empty). */
bmq_http_access_t *bmq_http_access_new (const char *bind, const char *token, const char *origins);
void bmq_http_access_destroy (bmq_http_access_t **self_p);

/* 0 when the request may proceed; else the HTTP status (401 or 403) with a
 * stable code and a message. `need_token` false skips check 3. */
int bmq_http_access_check (const bmq_http_access_t *self, const char *host, const char *origin,
                           const char *authorization, bool need_token, const char **code, const char **message);
/* Origin may read our answers (CORS): the server's own (http://host, as in
 * the request's Host) or listed. */
bool bmq_http_access_origin_ok (const bmq_http_access_t *self, const char *origin, const char *host);

/* "localhost", "127.x.y.z", "::1" / "[::1]", with or without ":port". */
bool bmq_http_host_is_loopback (const char *host);

#endif
