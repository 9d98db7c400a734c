/* blender_link — framed, authenticated request/reply with the Blender add-on. */
#include "blender_link.h"
#include "blender_link_report.h"
#include "palette.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

struct bmq_blender_link_t {
    char   *host;
    int     port;
    char   *token;
    json_t *operations;     /* palette operation names sent at hello */
    json_t *bounds;         /* the palette's parameter bounds sent at hello, or NULL (none known) */
    json_t *hello;          /* interrupted plans the last hello reported (checked), or NULL */
    int     fd;
    int64_t next_id;
    char   *socket_path;    /* "unix:PATH" hosts: the unix socket (host/port unused) */
    bool    plain_remote;   /* a non-loopback TCP peer is allowed (no encryption: see the header) */
    bool    timed_out;      /* the last connect failed for silence (a hung Blender), not a refusal */
    bool    sealed;         /* after hello: every frame carries its MAC (handshake.session) */
    char    blender[24];    /* the version the last hello reply named ("4.3.2"), or "" (issue 30) */
    unsigned char session[crypto_auth_hmacsha256_KEYBYTES];
    uint64_t sent, received;    /* frame sequence numbers, per direction */
};

/* Link version, nonce size and labels: proto/blender_link.json (bmq_link_proto.h). */
#define LINK_VERSION  BMQ_LINK_VERSION
#define NONCE_BYTES   BMQ_LINK_NONCE_BYTES
#define CLIENT_LABEL  BMQ_LINK_CLIENT_LABEL
#define SERVER_LABEL  BMQ_LINK_SERVER_LABEL

static int64_t s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bmq_blender_link_t *bmq_blender_link_new (const char *host, int port, const char *token)
{
    bmq_blender_link_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    self->host = strdup (host);
    if (!strncmp (host, "unix:", 5)) self->socket_path = strdup (host + 5);
    self->port = port;
    self->token = strdup (token ? token : "");
    self->operations = json_array ();
    self->fd = -1;
    self->next_id = 1;
    return self;
}

void bmq_blender_link_close (bmq_blender_link_t *self)
{
    if (self && self->fd >= 0) { close (self->fd); self->fd = -1; }
    if (self) {
        self->sealed = false;
        self->sent = self->received = 0;
        sodium_memzero (self->session, sizeof self->session);
    }
}

void bmq_blender_link_allow_plain_remote (bmq_blender_link_t *self, bool allow) { self->plain_remote = allow; }

void bmq_blender_link_destroy (bmq_blender_link_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_blender_link_close (*self_p);
    free ((*self_p)->host);
    free ((*self_p)->socket_path);
    if ((*self_p)->token) sodium_memzero ((*self_p)->token, strlen ((*self_p)->token));
    free ((*self_p)->token);
    json_decref ((*self_p)->operations);
    json_decref ((*self_p)->bounds);
    json_decref ((*self_p)->hello);
    free (*self_p);
    *self_p = NULL;
}

bool bmq_blender_link_connected (const bmq_blender_link_t *self) { return self->fd >= 0; }
bool bmq_blender_link_timed_out (const bmq_blender_link_t *self) { return self->timed_out; }
const json_t *bmq_blender_link_hello_report (const bmq_blender_link_t *self) { return self->hello; }
const char *bmq_blender_link_blender_version (const bmq_blender_link_t *self) { return self->blender; }

/* Set once the process is stopping: every wait on any link ends within
 * S_ABORT_SLICE_MS as if the connection had dropped, so a stopping executor
 * never sits out a connect, hello or ping timeout (a Blender that is itself
 * shutting down may accept a connection and never answer). */
static atomic_bool s_aborted;
#define S_ABORT_SLICE_MS 50

void bmq_blender_link_abort_all (void) { atomic_store (&s_aborted, true); }

/* Wait until fd is ready for `events` or the deadline passes: 1 ready, 0 timeout, -1 error (or aborted). */
static int s_wait (int fd, short events, int64_t deadline)
{
    for (;;) {
        if (atomic_load (&s_aborted)) return -1;
        int64_t left = deadline - s_now_ms ();
        if (left < 0) left = 0;
        struct pollfd p = { .fd = fd, .events = events };
        int rc = poll (&p, 1, (int) (left < S_ABORT_SLICE_MS ? left : S_ABORT_SLICE_MS));
        if (rc > 0) return (p.revents & (POLLERR | POLLNVAL)) && !(p.revents & (POLLIN | POLLOUT)) ? -1 : 1;
        if (rc == 0 && left <= S_ABORT_SLICE_MS) return 0;
        if (rc < 0 && errno != EINTR) return -1;
    }
}

/* Write all of buf before the deadline. 0, or BMQ_LINK_TIMEOUT / BMQ_LINK_DOWN. */
static int s_write_all (int fd, const void *buf, size_t len, int64_t deadline)
{
    const unsigned char *p = buf;
    while (len) {
        ssize_t n = send (fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) { p += n; len -= (size_t) n; continue; }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int w = s_wait (fd, POLLOUT, deadline);
            if (w == 0) return BMQ_LINK_TIMEOUT;
            if (w < 0) return BMQ_LINK_DOWN;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return BMQ_LINK_DOWN;
    }
    return 0;
}

/* Read exactly len bytes before the deadline. 0, or TIMEOUT / DOWN. A timeout
 * after part of the bytes arrived is DOWN: the stream is no longer aligned on
 * a frame, and only a new connection can be trusted. */
static int s_read_all (int fd, void *buf, size_t len, int64_t deadline)
{
    unsigned char *p = buf;
    bool partial = false;
    while (len) {
        ssize_t n = recv (fd, p, len, MSG_DONTWAIT);
        if (n > 0) { p += n; len -= (size_t) n; partial = true; continue; }
        if (n == 0) return BMQ_LINK_DOWN;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int w = s_wait (fd, POLLIN, deadline);
            if (w == 0) return partial ? BMQ_LINK_DOWN : BMQ_LINK_TIMEOUT;
            if (w < 0) return BMQ_LINK_DOWN;
            continue;
        }
        if (errno == EINTR) continue;
        return BMQ_LINK_DOWN;
    }
    return 0;
}

/* The MAC of a frame (handshake.session): HMAC-SHA256(session key, label ||
 * u64 BE seq || header || JSON || blob). */
static void s_frame_mac (const bmq_blender_link_t *self, const char *label, uint64_t seq, const unsigned char head[8],
                         const void *json, size_t json_len, const void *blob, size_t blob_len,
                         unsigned char out[crypto_auth_hmacsha256_BYTES])
{
    unsigned char be[8];
    for (int i = 0; i < 8; i++) be[i] = (unsigned char) (seq >> (56 - 8 * i));
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init (&st, self->session, sizeof self->session);
    crypto_auth_hmacsha256_update (&st, (const unsigned char *) label, strlen (label));
    crypto_auth_hmacsha256_update (&st, be, 8);
    crypto_auth_hmacsha256_update (&st, head, 8);
    crypto_auth_hmacsha256_update (&st, json, json_len);
    if (blob_len) crypto_auth_hmacsha256_update (&st, blob, blob_len);
    crypto_auth_hmacsha256_final (&st, out);
    sodium_memzero (&st, sizeof st);
}

/* One frame: the JSON object, then `blob` (blob_len bytes, may be 0), then
 * its MAC once the link is sealed. */
static int s_send_frame_blob (bmq_blender_link_t *self, const json_t *msg, const void *blob, size_t blob_len, int64_t deadline)
{
    int fd = self->fd;
    char *text = json_dumps (msg, JSON_COMPACT);
    if (!text) return BMQ_LINK_PROTOCOL;
    size_t len = strlen (text);
    if (len > BMQ_LINK_MAX_JSON || blob_len > BMQ_LINK_MAX_BLOB) { free (text); return BMQ_LINK_PROTOCOL; }
    unsigned char head[8];
    uint32_t h = htonl ((uint32_t) len), b = htonl ((uint32_t) blob_len);
    memcpy (head, &h, 4);
    memcpy (head + 4, &b, 4);
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    if (self->sealed) s_frame_mac (self, BMQ_LINK_FRAME_CLIENT_LABEL, self->sent++, head, text, len, blob, blob_len, mac);
    int rc = s_write_all (fd, head, 8, deadline);
    if (!rc) rc = s_write_all (fd, text, len, deadline);
    if (!rc && blob_len) rc = s_write_all (fd, blob, blob_len, deadline);
    if (!rc && self->sealed) rc = s_write_all (fd, mac, sizeof mac, deadline);
    free (text);
    return rc;
}

static int s_send_frame (bmq_blender_link_t *self, const json_t *msg, int64_t deadline)
{
    return s_send_frame_blob (self, msg, NULL, 0, deadline);
}

/* Read one frame. The reply is parsed; the blob (if any) is returned malloc'd.
 * A frame that started arriving is read to its end even past the deadline
 * would be cut: a partial read leaves the stream unusable, so it is DOWN. */
static int s_recv_frame (bmq_blender_link_t *self, int64_t deadline, json_t **msg_out, unsigned char **blob_out,
                         size_t *blob_len, char *err, size_t errlen)
{
    int fd = self->fd;
    unsigned char head[8];
    int rc = s_read_all (fd, head, 8, deadline);
    if (rc == BMQ_LINK_DOWN) ERR ("connection to Blender lost (or cut inside a frame header)");
    if (rc) return rc;
    uint32_t h, b;
    memcpy (&h, head, 4);
    memcpy (&b, head + 4, 4);
    h = ntohl (h);
    b = ntohl (b);
    if (h == 0 || h > BMQ_LINK_MAX_JSON || b > BMQ_LINK_MAX_BLOB) {
        ERR ("Blender sent a frame of %u + %u bytes (over the limits)", h, b);
        return BMQ_LINK_PROTOCOL;
    }
    /* the header arrived: give the body a fresh, generous window so a large
     * blob on a slow machine does not desynchronise the stream */
    int64_t body_deadline = deadline > s_now_ms () + 30000 ? deadline : s_now_ms () + 30000;
    char *text = malloc (h);
    unsigned char *blob = b ? malloc (b) : NULL;
    if (!text || (b && !blob)) { free (text); free (blob); ERR ("out of memory"); return BMQ_LINK_PROTOCOL; }
    rc = s_read_all (fd, text, h, body_deadline);
    if (!rc && b) rc = s_read_all (fd, blob, b, body_deadline);
    unsigned char mac[crypto_auth_hmacsha256_BYTES], expect[crypto_auth_hmacsha256_BYTES];
    if (!rc && self->sealed) rc = s_read_all (fd, mac, sizeof mac, body_deadline);
    if (rc) { free (text); free (blob); ERR ("connection lost inside a frame"); return BMQ_LINK_DOWN; }
    if (self->sealed) {
        /* checked before the JSON is parsed: a forged, replayed or reordered frame is refused */
        s_frame_mac (self, BMQ_LINK_FRAME_SERVER_LABEL, self->received, head, text, h, blob, b, expect);
        if (sodium_memcmp (mac, expect, sizeof mac) != 0) {
            free (text);
            free (blob);
            ERR ("Blender's frame %llu failed its MAC (forged, replayed or out of order): the link is dropped",
                 (unsigned long long) self->received);
            return BMQ_LINK_PROTOCOL;
        }
        self->received++;
    }
    json_error_t jerr;
    json_t *msg = json_loadb (text, h, 0, &jerr);
    free (text);
    if (!json_is_object (msg)) {
        json_decref (msg);
        free (blob);
        ERR ("Blender sent a frame that is not a JSON object");
        return BMQ_LINK_PROTOCOL;
    }
    *msg_out = msg;
    if (blob_out) { *blob_out = blob; *blob_len = b; }
    else free (blob);
    return 0;
}

/* A unix socket at path (blender.socket). */
static int s_open_unix (const char *path, char *err, size_t errlen)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen (path) >= sizeof a.sun_path) { ERR ("the Blender socket path is longer than %zu bytes: %s", sizeof a.sun_path - 1, path); return -1; }
    memcpy (a.sun_path, path, strlen (path) + 1);
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) { ERR ("cannot make a socket: %s", strerror (errno)); return -1; }
    if (connect (fd, (struct sockaddr *) &a, sizeof a) == 0) return fd;
    ERR ("cannot connect to Blender at unix:%s: %s", path, strerror (errno));
    close (fd);
    return -1;
}

static bool s_is_loopback (const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) return (ntohl (((const struct sockaddr_in *) sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *) sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK (a6)) return true;
        return IN6_IS_ADDR_V4MAPPED (a6) && a6->s6_addr[12] == 127;
    }
    return false;
}

static int s_open (const char *host, int port, bool plain_remote, int timeout_ms, char *err, size_t errlen)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    char service[16];
    snprintf (service, sizeof service, "%d", port);
    int gai = getaddrinfo (host, service, &hints, &res);
    if (gai) { ERR ("cannot resolve %s: %s", host, gai_strerror (gai)); return -1; }
    int fd = -1;
    int64_t deadline = s_now_ms () + timeout_ms;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        if (!plain_remote && !s_is_loopback (ai->ai_addr)) {
            ERR ("Blender at %s is not on loopback: the link is authenticated but not encrypted, so it is refused "
                 "(use a unix socket or loopback, or set blender.allow_plain_remote: true on a network you trust)", host);
            continue;
        }
        fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) continue;
        if (connect (fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
        int soerr = errno;
        if (soerr == EINPROGRESS && s_wait (fd, POLLOUT, deadline) == 1) {
            socklen_t sl = sizeof soerr;
            getsockopt (fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
            if (soerr == 0) break;
        }
        ERR ("cannot connect to Blender at %s:%d: %s", host, port, soerr == EINPROGRESS ? "timed out" : strerror (soerr));
        close (fd);
        fd = -1;
    }
    freeaddrinfo (res);
    if (fd >= 0) {
        int one = 1;
        setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

int bmq_blender_link_set_operations (bmq_blender_link_t *self, const json_t *names)
{
    if (!json_is_array (names)) return -1;
    size_t i;
    json_t *v;
    json_array_foreach (names, i, v)
        if (!json_is_string (v)) return -1;
    json_decref (self->operations);
    self->operations = json_deep_copy (names);
    return self->operations ? 0 : -1;
}

/* One palette parameter's bounds as hello carries them: bmq_palette_to_json's
 * entry without its description (the add-on checks values, it shows nothing). */
static json_t *s_bounds_of (const json_t *palette)
{
    json_t *out = json_object ();
    const char *op, *param;
    json_t *params, *spec;
    json_object_foreach ((json_t *) palette, op, params) {
        json_t *clean = json_object ();
        json_object_foreach (params, param, spec) {
            json_t *copy = json_copy (spec);
            json_object_del (copy, "description");
            json_object_set_new (clean, param, copy);
        }
        json_object_set_new (out, op, clean);
    }
    return out;
}

int bmq_blender_link_set_bounds (bmq_blender_link_t *self, const json_t *bounds)
{
    if (bounds && (!json_is_object (bounds) || json_object_size (bounds) > BMQ_LINK_HELLO_MAX_OPERATIONS)) return -1;
    const char *op;
    json_t *params;
    json_object_foreach ((json_t *) bounds, op, params)
        if (!json_is_object (params) || json_object_size (params) > BMQ_LINK_BOUNDS_MAX_PARAMS) return -1;
    json_decref (self->bounds);
    self->bounds = bounds ? json_deep_copy (bounds) : NULL;
    return bounds && !self->bounds ? -1 : 0;
}

int bmq_blender_link_load_palette (bmq_blender_link_t *self, const char *path, char *err, size_t errlen)
{
    char perr[512] = "";
    bmq_palette_t *palette = bmq_palette_load (path, perr, sizeof perr);
    if (!palette) {
        ERR ("cannot read the palette from %s: %s", path, perr);
        return -1;
    }
    json_t *all = bmq_palette_to_json (palette);
    bmq_palette_destroy (&palette);
    json_t *names = json_array (), *bounds = all ? s_bounds_of (all) : NULL;
    const char *name;
    json_t *v;
    json_object_foreach (all, name, v) json_array_append_new (names, json_string (name));
    /* hello goes before authentication, in a frame of at most BMQ_LINK_PREAUTH_MAX_JSON */
    size_t size = json_dumpb (names, NULL, 0, JSON_COMPACT) + json_dumpb (bounds, NULL, 0, JSON_COMPACT);
    int rc = bounds && json_array_size (names) && size < BMQ_LINK_PREAUTH_MAX_JSON - 1024
             ? bmq_blender_link_set_operations (self, names) : -1;
    if (!rc) rc = bmq_blender_link_set_bounds (self, bounds);
    json_decref (names);
    json_decref (bounds);
    json_decref (all);
    if (rc) ERR ("the palette %s has no operations, or more than a hello carries (%d operations, %u bytes)", path,
                 BMQ_LINK_HELLO_MAX_OPERATIONS, BMQ_LINK_PREAUTH_MAX_JSON - 1024);
    return rc;
}

/* HMAC-SHA256(token, label || a || b), both nonces raw bytes. */
static void s_proof (const char *token, const char *label, const unsigned char *a, const unsigned char *b,
                     unsigned char out[crypto_auth_hmacsha256_BYTES])
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init (&st, (const unsigned char *) token, strlen (token));
    crypto_auth_hmacsha256_update (&st, (const unsigned char *) label, strlen (label));
    crypto_auth_hmacsha256_update (&st, a, NONCE_BYTES);
    crypto_auth_hmacsha256_update (&st, b, NONCE_BYTES);
    crypto_auth_hmacsha256_final (&st, out);
    sodium_memzero (&st, sizeof st);
}

static bool s_unhex (const char *hex, unsigned char *out, size_t len)
{
    size_t got = 0;
    return hex && strlen (hex) == 2 * len && sodium_hex2bin (out, len, hex, 2 * len, NULL, &got, NULL) == 0 && got == len;
}

/* The hello reply's result → self->hello (NULL when there is nothing to report). */
static void s_take_hello_report (bmq_blender_link_t *self, json_t *result)
{
    json_decref (self->hello);
    self->hello = bmq_link_hello_report_check (result);
    if (!self->hello) return;
    if (!json_object_get (self->hello, "interrupted")) json_object_set_new (self->hello, "interrupted", json_array ());
    if (!json_array_size (json_object_get (self->hello, "interrupted")) && !json_object_get (self->hello, "open_plan")) {
        json_decref (self->hello);
        self->hello = NULL;
    }
}

/* The challenge-response (see blender_link.h). 0, or -1 with err set. */
static int s_handshake (bmq_blender_link_t *self, int timeout_ms, char *err, size_t errlen)
{
    if (!*self->token) { ERR ("no Blender token: cannot authenticate the link"); return -1; }
    int64_t deadline = s_now_ms () + timeout_ms;
    json_t *msg = NULL;
    char rerr[256] = "";
    int rc = s_recv_frame (self, deadline, &msg, NULL, NULL, rerr, sizeof rerr);
    if (rc == BMQ_LINK_TIMEOUT) {
        self->timed_out = true;         /* it accepted and said nothing: busy or hung, not gone */
        ERR ("Blender at %s:%d sent no challenge within %d ms (busy or hung; or an add-on older than link version %d)",
             self->host, self->port, timeout_ms, LINK_VERSION);
        return -1;
    }
    if (rc) { ERR ("%s", *rerr ? rerr : "connection to Blender lost before the challenge"); json_decref (msg); return -1; }
    json_t *challenge = json_object_get (msg, "challenge");
    unsigned char ns[NONCE_BYTES], nc[NONCE_BYTES];
    if (!json_is_true (json_object_get (msg, "ok")) || !json_is_object (challenge)) {
        const char *e = json_string_value (json_object_get (msg, "error"));
        ERR ("Blender refused the connection: %s", e ? e : "its first frame is not a challenge");
        json_decref (msg);
        return -1;
    }
    if (json_integer_value (json_object_get (challenge, "link")) != LINK_VERSION
        || !s_unhex (json_string_value (json_object_get (challenge, "nonce")), ns, sizeof ns)) {
        ERR ("Blender's challenge is not link version %d with a %d-byte nonce", LINK_VERSION, NONCE_BYTES);
        json_decref (msg);
        return -1;
    }
    json_decref (msg);
    randombytes_buf (nc, sizeof nc);
    unsigned char mac[crypto_auth_hmacsha256_BYTES], expect[crypto_auth_hmacsha256_BYTES], got[crypto_auth_hmacsha256_BYTES];
    char nc_hex[2 * NONCE_BYTES + 1], mac_hex[2 * sizeof mac + 1];
    s_proof (self->token, CLIENT_LABEL, ns, nc, mac);
    sodium_bin2hex (nc_hex, sizeof nc_hex, nc, sizeof nc);
    sodium_bin2hex (mac_hex, sizeof mac_hex, mac, sizeof mac);
    json_t *args = json_pack ("{s:s, s:s, s:O}", "nonce", nc_hex, "mac", mac_hex, "operations", self->operations);
    if (self->bounds) json_object_set (args, "bounds", self->bounds);
    json_t *reply = NULL;
    int64_t left = deadline - s_now_ms ();
    rc = bmq_blender_link_call (self, "hello", args, left > 0 ? (int) left : 1, &reply, NULL, NULL, err, errlen);
    json_decref (args);
    if (rc != BMQ_LINK_OK || !json_is_true (json_object_get (reply, "ok"))) {
        if (rc == BMQ_LINK_OK)
            ERR ("Blender refused the connection: %s", json_string_value (json_object_get (reply, "error")) ?
                 json_string_value (json_object_get (reply, "error")) : "?");
        else if (rc == BMQ_LINK_TIMEOUT) {
            self->timed_out = true;
            ERR ("Blender did not answer hello within %d ms", timeout_ms);
        }
        json_decref (reply);
        return -1;
    }
    s_proof (self->token, SERVER_LABEL, nc, ns, expect);
    bool ok = s_unhex (json_string_value (json_object_get (json_object_get (reply, "result"), "mac")), got, sizeof got)
              && sodium_memcmp (got, expect, sizeof got) == 0;
    if (ok) {
        s_take_hello_report (self, json_object_get (reply, "result"));
        const char *v = json_string_value (json_object_get (json_object_get (reply, "result"), "blender"));
        size_t vlen = v ? strspn (v, "0123456789.") : 0;
        snprintf (self->blender, sizeof self->blender, "%s", v && vlen == strlen (v) && vlen < sizeof self->blender ? v : "");
        /* from here every frame both ways carries a MAC under the session key */
        crypto_auth_hmacsha256_state st;
        crypto_auth_hmacsha256_init (&st, (const unsigned char *) self->token, strlen (self->token));
        crypto_auth_hmacsha256_update (&st, (const unsigned char *) BMQ_LINK_SESSION_KEY_LABEL, strlen (BMQ_LINK_SESSION_KEY_LABEL));
        crypto_auth_hmacsha256_update (&st, ns, NONCE_BYTES);
        crypto_auth_hmacsha256_update (&st, nc, NONCE_BYTES);
        crypto_auth_hmacsha256_final (&st, self->session);
        sodium_memzero (&st, sizeof st);
        self->sealed = true;
        self->sent = self->received = 0;
    }
    json_decref (reply);
    sodium_memzero (expect, sizeof expect);
    if (!ok) {
        ERR ("the server at %s:%d failed the challenge (it does not know the Blender token): refused, nothing sent",
             self->host, self->port);
        return -1;
    }
    return 0;
}

int bmq_blender_link_connect (bmq_blender_link_t *self, int timeout_ms, char *err, size_t errlen)
{
    if (sodium_init () < 0) { ERR ("libsodium failed to initialise"); return -1; }
    bmq_blender_link_close (self);
    json_decref (self->hello);
    self->hello = NULL;
    self->timed_out = false;
    self->fd = self->socket_path ? s_open_unix (self->socket_path, err, errlen)
                                 : s_open (self->host, self->port, self->plain_remote, timeout_ms, err, errlen);
    if (self->fd < 0) return -1;
    if (s_handshake (self, timeout_ms, err, errlen)) { bmq_blender_link_close (self); return -1; }
    return 0;
}

bmq_link_status_t bmq_blender_link_call (bmq_blender_link_t *self, const char *cmd, json_t *args, int timeout_ms,
                                         json_t **reply_out, unsigned char **blob_out, size_t *blob_len_out,
                                         char *err, size_t errlen)
{
    return bmq_blender_link_call_blob (self, cmd, args, NULL, 0, timeout_ms, reply_out, blob_out, blob_len_out, err, errlen);
}

bmq_link_status_t bmq_blender_link_call_blob (bmq_blender_link_t *self, const char *cmd, json_t *args,
                                              const void *req_blob, size_t req_blob_len, int timeout_ms,
                                              json_t **reply_out, unsigned char **blob_out, size_t *blob_len_out,
                                              char *err, size_t errlen)
{
    *reply_out = NULL;
    if (blob_out) { *blob_out = NULL; *blob_len_out = 0; }
    if (self->fd < 0) { ERR ("not connected to Blender"); return BMQ_LINK_DOWN; }
    if (req_blob_len > BMQ_LINK_MAX_BLOB) { ERR ("%s: %zu bytes is more than a frame holds (%u)", cmd, req_blob_len, BMQ_LINK_MAX_BLOB); return BMQ_LINK_PROTOCOL; }
    int64_t id = self->next_id++;
    int64_t deadline = s_now_ms () + timeout_ms;
    json_t *req = json_pack ("{s:I, s:s, s:o, s:i}", "id", (json_int_t) id, "cmd", cmd,
                             "args", args ? json_incref (args) : json_object (), "deadline_ms", timeout_ms);
    int rc = s_send_frame_blob (self, req, req_blob, req_blob_len, deadline);
    json_decref (req);
    if (rc == BMQ_LINK_TIMEOUT) { ERR ("could not send %s within %d ms", cmd, timeout_ms); bmq_blender_link_close (self); return BMQ_LINK_DOWN; }
    if (rc) { ERR ("connection to Blender lost while sending %s", cmd); bmq_blender_link_close (self); return BMQ_LINK_DOWN; }
    for (;;) {
        json_t *msg = NULL;
        unsigned char *blob = NULL;
        size_t blen = 0;
        rc = s_recv_frame (self, deadline, &msg, &blob, &blen, err, errlen);
        if (rc == BMQ_LINK_TIMEOUT) { ERR ("%s: no reply from Blender within %d ms", cmd, timeout_ms); return BMQ_LINK_TIMEOUT; }
        if (rc == BMQ_LINK_DOWN) {
            if (err && !strstr (err, "inside")) ERR ("connection to Blender lost");
            bmq_blender_link_close (self);
            return BMQ_LINK_DOWN;
        }
        if (rc) { bmq_blender_link_close (self); return (bmq_link_status_t) rc; }
        json_t *rid = json_object_get (msg, "id");
        if (json_is_integer (rid) && json_integer_value (rid) == id) {
            *reply_out = msg;
            if (blob_out) { *blob_out = blob; *blob_len_out = blen; }
            else free (blob);
            return BMQ_LINK_OK;
        }
        /* id 0 is the add-on speaking about the connection itself (refused, bad frame) */
        if (json_is_integer (rid) && json_integer_value (rid) == 0 && !json_is_true (json_object_get (msg, "ok"))) {
            ERR ("Blender closed the connection: %s", json_string_value (json_object_get (msg, "error")) ?
                 json_string_value (json_object_get (msg, "error")) : "?");
            json_decref (msg);
            free (blob);
            bmq_blender_link_close (self);
            return BMQ_LINK_DOWN;
        }
        json_decref (msg);        /* a late reply to an earlier, timed-out call */
        free (blob);
    }
}

/* A frame that is the link speaking about itself (id 0, not ok): the add-on closes. */
static bool s_refusal (const json_t *msg)
{
    json_t *rid = json_object_get (msg, "id");
    return json_is_integer (rid) && json_integer_value (rid) == 0 && !json_is_true (json_object_get (msg, "ok"));
}

bmq_link_status_t bmq_blender_link_call_stream (bmq_blender_link_t *self, const char *cmd, json_t *args, int timeout_ms,
                                                const bmq_link_stream_t *stream, json_t **reply_out,
                                                char *err, size_t errlen)
{
    *reply_out = NULL;
    if (self->fd < 0) { ERR ("not connected to Blender"); return BMQ_LINK_DOWN; }
    int64_t id = self->next_id++;
    int64_t deadline = s_now_ms () + timeout_ms;
    json_t *req = json_pack ("{s:I, s:s, s:o, s:i}", "id", (json_int_t) id, "cmd", cmd,
                             "args", args ? json_incref (args) : json_object (), "deadline_ms", timeout_ms);
    int rc = s_send_frame (self, req, deadline);
    json_decref (req);
    if (rc) { ERR ("connection to Blender lost while sending %s", cmd); bmq_blender_link_close (self); return BMQ_LINK_DOWN; }
    bool cancel_sent = false;
    for (;;) {
        if (!cancel_sent && stream->cancel && stream->cancel (stream->ctx)) {
            json_t *c = json_pack ("{s:I, s:s, s:{s:s}}", "id", (json_int_t) self->next_id++, "cmd", "cancel_plan",
                                   "args", "plan_id", stream->cancel_plan_id ? stream->cancel_plan_id : "");
            rc = s_send_frame (self, c, s_now_ms () + timeout_ms);
            json_decref (c);
            if (rc) { ERR ("connection to Blender lost while sending cancel_plan"); bmq_blender_link_close (self); return BMQ_LINK_DOWN; }
            cancel_sent = true;
        }
        int64_t now = s_now_ms ();
        if (now >= deadline) {
            ERR ("%s: nothing from Blender for %d ms: the link was closed (Blender rolls an open plan back)", cmd, timeout_ms);
            bmq_blender_link_close (self);
            return BMQ_LINK_DOWN;
        }
        int64_t slice = cancel_sent || !stream->cancel ? deadline : now + BMQ_LINK_CANCEL_POLL_MS;
        int w = s_wait (self->fd, POLLIN, now);           /* a frame already waiting? */
        if (w == 0) {
            if (stream->on_quiet) stream->on_quiet (stream->ctx);
            w = s_wait (self->fd, POLLIN, slice < deadline ? slice : deadline);
        }
        if (w == 0) continue;
        if (w < 0) { ERR ("connection to Blender lost"); bmq_blender_link_close (self); return BMQ_LINK_DOWN; }
        json_t *msg = NULL;
        unsigned char *blob = NULL;
        size_t blen = 0;
        rc = s_recv_frame (self, deadline, &msg, &blob, &blen, err, errlen);
        free (blob);                    /* run_plan's frames carry none */
        if (rc == BMQ_LINK_TIMEOUT) continue;
        if (rc) {
            if (rc == BMQ_LINK_DOWN && err && !strstr (err, "inside")) ERR ("connection to Blender lost");
            bmq_blender_link_close (self);
            return rc == BMQ_LINK_DOWN ? BMQ_LINK_DOWN : (bmq_link_status_t) rc;
        }
        json_t *rid = json_object_get (msg, "id");
        bool ours = json_is_integer (rid) && json_integer_value (rid) == id;
        json_t *progress = json_object_get (msg, "progress");
        if (ours && json_is_object (progress) && !json_object_get (msg, "ok")) {
            deadline = s_now_ms () + timeout_ms;
            if (stream->on_progress) stream->on_progress (stream->ctx, progress);
            json_decref (msg);
            continue;
        }
        if (ours) { *reply_out = msg; return BMQ_LINK_OK; }
        if (s_refusal (msg)) {
            ERR ("Blender closed the connection: %s", json_string_value (json_object_get (msg, "error")) ?
                 json_string_value (json_object_get (msg, "error")) : "?");
            json_decref (msg);
            bmq_blender_link_close (self);
            return BMQ_LINK_DOWN;
        }
        json_decref (msg);              /* cancel_plan's answer, or a late reply to an earlier call */
    }
}
