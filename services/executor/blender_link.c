/* blender_link — framed, authenticated request/reply with the Blender add-on. */
#include "blender_link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

struct bmq_blender_link_t {
    char   *host;
    int     port;
    char   *token;
    int     fd;
    int64_t next_id;
};

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
    self->port = port;
    self->token = strdup (token ? token : "");
    self->fd = -1;
    self->next_id = 1;
    return self;
}

void bmq_blender_link_close (bmq_blender_link_t *self)
{
    if (self && self->fd >= 0) { close (self->fd); self->fd = -1; }
}

void bmq_blender_link_destroy (bmq_blender_link_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_blender_link_close (*self_p);
    free ((*self_p)->host);
    free ((*self_p)->token);
    free (*self_p);
    *self_p = NULL;
}

bool bmq_blender_link_connected (const bmq_blender_link_t *self) { return self->fd >= 0; }
int  bmq_blender_link_fd (const bmq_blender_link_t *self) { return self->fd; }

/* Wait until fd is ready for `events` or the deadline passes: 1 ready, 0 timeout, -1 error. */
static int s_wait (int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - s_now_ms ();
        if (left < 0) left = 0;
        struct pollfd p = { .fd = fd, .events = events };
        int rc = poll (&p, 1, (int) left);
        if (rc > 0) return (p.revents & (POLLERR | POLLNVAL)) && !(p.revents & (POLLIN | POLLOUT)) ? -1 : 1;
        if (rc == 0) return 0;
        if (errno != EINTR) return -1;
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

static int s_send_frame (int fd, const json_t *msg, int64_t deadline)
{
    char *text = json_dumps (msg, JSON_COMPACT);
    if (!text) return BMQ_LINK_PROTOCOL;
    size_t len = strlen (text);
    unsigned char head[8];
    uint32_t h = htonl ((uint32_t) len), b = 0;
    memcpy (head, &h, 4);
    memcpy (head + 4, &b, 4);
    int rc = s_write_all (fd, head, 8, deadline);
    if (!rc) rc = s_write_all (fd, text, len, deadline);
    free (text);
    return rc;
}

/* Read one frame. The reply is parsed; the blob (if any) is returned malloc'd.
 * A frame that started arriving is read to its end even past the deadline
 * would be cut: a partial read leaves the stream unusable, so it is DOWN. */
static int s_recv_frame (int fd, int64_t deadline, json_t **msg_out, unsigned char **blob_out, size_t *blob_len,
                         char *err, size_t errlen)
{
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
    if (rc) { free (text); free (blob); ERR ("connection lost inside a frame"); return BMQ_LINK_DOWN; }
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

static int s_open (const char *host, int port, int timeout_ms, char *err, size_t errlen)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    char service[16];
    snprintf (service, sizeof service, "%d", port);
    int gai = getaddrinfo (host, service, &hints, &res);
    if (gai) { ERR ("cannot resolve %s: %s", host, gai_strerror (gai)); return -1; }
    int fd = -1;
    int64_t deadline = s_now_ms () + timeout_ms;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
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

int bmq_blender_link_connect (bmq_blender_link_t *self, int timeout_ms, char *err, size_t errlen)
{
    bmq_blender_link_close (self);
    self->fd = s_open (self->host, self->port, timeout_ms, err, errlen);
    if (self->fd < 0) return -1;
    json_t *args = json_pack ("{s:s}", "token", self->token);
    json_t *reply = NULL;
    int rc = bmq_blender_link_call (self, "hello", args, timeout_ms, &reply, NULL, NULL, err, errlen);
    json_decref (args);
    if (rc != BMQ_LINK_OK || !json_is_true (json_object_get (reply, "ok"))) {
        if (rc == BMQ_LINK_OK)
            ERR ("Blender refused the connection: %s", json_string_value (json_object_get (reply, "error")) ?
                 json_string_value (json_object_get (reply, "error")) : "?");
        else if (rc == BMQ_LINK_TIMEOUT)
            ERR ("Blender did not answer hello within %d ms", timeout_ms);
        json_decref (reply);
        bmq_blender_link_close (self);
        return -1;
    }
    json_decref (reply);
    return 0;
}

bmq_link_status_t bmq_blender_link_call (bmq_blender_link_t *self, const char *cmd, json_t *args, int timeout_ms,
                                         json_t **reply_out, unsigned char **blob_out, size_t *blob_len_out,
                                         char *err, size_t errlen)
{
    *reply_out = NULL;
    if (blob_out) { *blob_out = NULL; *blob_len_out = 0; }
    if (self->fd < 0) { ERR ("not connected to Blender"); return BMQ_LINK_DOWN; }
    int64_t id = self->next_id++;
    int64_t deadline = s_now_ms () + timeout_ms;
    json_t *req = json_pack ("{s:I, s:s, s:o, s:i}", "id", (json_int_t) id, "cmd", cmd,
                             "args", args ? json_incref (args) : json_object (), "deadline_ms", timeout_ms);
    int rc = s_send_frame (self->fd, req, deadline);
    json_decref (req);
    if (rc == BMQ_LINK_TIMEOUT) { ERR ("could not send %s within %d ms", cmd, timeout_ms); bmq_blender_link_close (self); return BMQ_LINK_DOWN; }
    if (rc) { ERR ("connection to Blender lost while sending %s", cmd); bmq_blender_link_close (self); return BMQ_LINK_DOWN; }
    for (;;) {
        json_t *msg = NULL;
        unsigned char *blob = NULL;
        size_t blen = 0;
        rc = s_recv_frame (self->fd, deadline, &msg, &blob, &blen, err, errlen);
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
