/* http_access — Host, Origin and bearer token checks. */
#include "http_access.h"

#include <ctype.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_ORIGINS 32

struct bmq_http_access_t {
    bool   loopback_bind;
    char  *token;
    size_t token_len;
    char  *origins[MAX_ORIGINS];
    size_t norigins;
};

/* The host part of "host[:port]" / "[v6]:port" into buf (lower case). */
static void s_host_part (const char *host, char *buf, size_t len)
{
    buf[0] = 0;
    if (!host) return;
    size_t n = 0;
    if (host[0] == '[') {
        const char *end = strchr (host, ']');
        if (!end) return;
        n = (size_t) (end - host - 1);
        host++;
    }
    else {
        const char *colon = strchr (host, ':');
        n = colon && !strchr (colon + 1, ':') ? (size_t) (colon - host) : strlen (host);
    }
    if (n >= len) n = len - 1;
    for (size_t i = 0; i < n; i++) buf[i] = (char) tolower ((unsigned char) host[i]);
    buf[n] = 0;
}

static bool s_is_loopback_name (const char *h)
{
    if (!strcmp (h, "localhost") || !strcmp (h, "::1")) return true;
    unsigned a, b, c, d;
    char tail;
    return sscanf (h, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 && b < 256 && c < 256 && d < 256;
}

bool bmq_http_host_is_loopback (const char *host)
{
    char h[256];
    s_host_part (host, h, sizeof h);
    return *h && s_is_loopback_name (h);
}

bmq_http_access_t *bmq_http_access_new (const char *bind, const char *token, const char *origins)
{
    bmq_http_access_t *self = calloc (1, sizeof *self);
    self->loopback_bind = bind && s_is_loopback_name (bind);
    self->token = strdup (token ? token : "");
    self->token_len = strlen (self->token);
    char *list = strdup (origins ? origins : "");
    for (char *save = NULL, *o = strtok_r (list, ", ", &save); o && self->norigins < MAX_ORIGINS; o = strtok_r (NULL, ", ", &save)) {
        size_t n = strlen (o);
        while (n && o[n - 1] == '/') o[--n] = 0;
        if (n) self->origins[self->norigins++] = strdup (o);
    }
    free (list);
    return self;
}

void bmq_http_access_destroy (bmq_http_access_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_http_access_t *self = *self_p;
    sodium_memzero (self->token, self->token_len);
    free (self->token);
    for (size_t i = 0; i < self->norigins; i++) free (self->origins[i]);
    free (self);
    *self_p = NULL;
}


/* The server's own origin: the scheme this server speaks (http) and the host
 * and port the browser addressed (Host). Any other loopback port is another
 * site's page, however local (issue 24: a page on 127.0.0.1:8000 confirmed a
 * script through a signed-in person's browser). */
static bool s_own_origin (const char *origin, const char *host)
{
    if (!origin || !host || !*host || strncasecmp (origin, "http://", 7)) return false;
    return !strcasecmp (origin + 7, host);
}

bool bmq_http_access_origin_ok (const bmq_http_access_t *self, const char *origin, const char *host)
{
    if (!origin) return false;
    for (size_t i = 0; i < self->norigins; i++)
        if (!strcasecmp (origin, self->origins[i])) return true;
    return s_own_origin (origin, host);
}

static bool s_token_ok (const bmq_http_access_t *self, const char *authorization)
{
    if (!authorization || strncasecmp (authorization, "Bearer ", 7)) return false;
    const char *given = authorization + 7;
    while (*given == ' ') given++;
    size_t n = strlen (given);
    while (n && given[n - 1] == ' ') n--;
    /* constant time for equal lengths; the length of a token is not the secret */
    return n == self->token_len && sodium_memcmp (given, self->token, n) == 0;
}

int bmq_http_access_check (const bmq_http_access_t *self, const char *host, const char *origin,
                           const char *authorization, bool need_token, const char **code, const char **message)
{
    if (self->loopback_bind && host && !bmq_http_host_is_loopback (host)) {
        *code = "host_not_allowed";
        *message = "this server answers only requests addressed to a loopback host (localhost, 127.0.0.1, [::1])";
        return 403;
    }
    if (origin && !bmq_http_access_origin_ok (self, origin, host)) {
        *code = "origin_not_allowed";
        *message = "requests from this origin are not allowed: only the page this server serves, and http.allowed_origins";
        return 403;
    }
    if (need_token && self->token_len && !s_token_ok (self, authorization)) {
        *code = "unauthorized";
        *message = "a bearer token is required: send \"Authorization: Bearer <token>\" (gateway.http_token)";
        return 401;
    }
    return 0;
}
