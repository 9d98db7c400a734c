/* http_auth — who is asking: tokens from the keys dir, and browser sessions.
 *
 * Every HTTP route but /healthz needs a token, loopback included (Jupyter's
 * convention). Tokens come from the keys dir (security.keys_dir, made by
 * `blendmq keys init`): for each client NAME, NAME.token holds its token (hex,
 * a 0600 file) and NAME.cert is its czmq certificate, whose metadata "role"
 * (viewer | operator | reviewer | admin) is the token's role. The table is read
 * at start and again whenever the dir changes (checked on use, at most every
 * 200 ms, and in any case every 5 s), so `blendmq keys revoke NAME` takes effect
 * without a restart. gateway.http_token, when set, is one more token, with
 * role admin (name "http_token").
 *
 * A page URL carrying ?token=T, or ?code=C (a one-time code minted by POST
 * /api/web/login-code, good for http.login_code_ttl_ms), is exchanged for a
 * session in a __Host- cookie (Secure, HttpOnly, SameSite=Strict, Path=/): "NAME.EXPIRES.HMAC", signed with a key derived from
 * T and kept nowhere, so it outlives a gateway restart; it expires after 12 h,
 * or at once when T is revoked or replaced (a session is only as good as its token).
 * Tokens are compared in constant time and never logged. Thread-safe. */
#ifndef BMQ_HTTP_AUTH_H
#define BMQ_HTTP_AUTH_H

#include "mcp_tools.h"
#include <stdbool.h>
#include <stddef.h>

/* __Host-: Secure, Path=/, no Domain; browsers accept Secure cookies from
 * http://localhost and 127.0.0.1 (potentially trustworthy origins). */
#define BMQ_HTTP_SESSION_COOKIE "__Host-blendmq_session"
#define BMQ_HTTP_CSRF_HEADER    "X-Blendmq-Csrf"
#define BMQ_HTTP_CSRF_LEN       64
#define BMQ_HTTP_SESSION_MAX    128        /* longest session value: name (≤ 63) . expiry . 64 hex */

typedef struct bmq_http_auth_t bmq_http_auth_t;

typedef struct {
    char       name[64];            /* the client's name in the keys dir */
    bmq_role_t role;
} bmq_http_who_t;

/* `keys_dir` may be NULL or "" (then only `static_token` works, if any). */
bmq_http_auth_t *bmq_http_auth_new (const char *keys_dir, const char *static_token);
void bmq_http_auth_destroy (bmq_http_auth_t **self_p);

/* A token (as sent: surrounding blanks ignored): true with *who when known. */
bool bmq_http_auth_token (bmq_http_auth_t *self, const char *token, bmq_http_who_t *who);
/* A new browser session for a valid token: its value in sid (BMQ_HTTP_SESSION_MAX + 1 bytes). */
bool bmq_http_auth_session_new (bmq_http_auth_t *self, const char *token, char *sid, size_t sidlen);
/* A session from the cookie: true with *who while it lives and its token is valid. */
bool bmq_http_auth_session (bmq_http_auth_t *self, const char *sid, bmq_http_who_t *who);
/* The session's anti-CSRF nonce (BMQ_HTTP_CSRF_LEN hex + NUL), for the page
 * only; false when the session is not valid. */
bool bmq_http_auth_csrf (bmq_http_auth_t *self, const char *sid, char *nonce, size_t len);
/* `given` is that session's nonce. */
bool bmq_http_auth_csrf_ok (bmq_http_auth_t *self, const char *sid, const char *given);
/* A one-time sign-in code for token `name`, living ttl_ms. */
bool bmq_http_auth_code_new (bmq_http_auth_t *self, const char *name, int ttl_ms, char *code, size_t len);
/* Trade a code (once; expired or unknown: false) for a session of its token. */
bool bmq_http_auth_code_take (bmq_http_auth_t *self, const char *code, char *sid, size_t sidlen);
/* Number of tokens known now (after a reload if the dir changed). */
size_t bmq_http_auth_tokens (bmq_http_auth_t *self);

#endif
