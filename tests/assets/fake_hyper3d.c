/* fake_hyper3d — scripted Hyper3D Rodin API and download host for the assets tests. */
#include "fake_hyper3d.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ROUTES 32
#define MAX_RESPS  16
#define BODY_MAX   65536

typedef struct {
    int    status;
    char  *ctype, *hname, *hvalue, *body;
    size_t len;
    fake_mode_t mode;
} s_resp_t;

typedef struct {
    char    *path;
    s_resp_t resps[MAX_RESPS];
    size_t   nresps, served, hits;
    char     auth[512];
    char     body[BODY_MAX + 1];
    size_t   body_len;
} s_route_t;

struct fake_h3_t {
    struct MHD_Daemon *daemon;
    char               url[96], hostport[64];
    pthread_mutex_t    lock;
    s_route_t          routes[MAX_ROUTES];
    size_t             nroutes, total;
    volatile bool      stopping;
};

typedef struct {                /* one request being read */
    char   body[BODY_MAX + 1];
    size_t len;
} s_conn_t;

typedef struct {
    fake_h3_t *server;
    s_resp_t   r;
} s_stream_t;

static void s_resp_free (s_resp_t *r)
{
    free (r->ctype); free (r->hname); free (r->hvalue); free (r->body);
    memset (r, 0, sizeof *r);
}

static s_resp_t s_resp_copy (const s_resp_t *r)
{
    s_resp_t c = *r;
    c.ctype = r->ctype ? strdup (r->ctype) : NULL;
    c.hname = r->hname ? strdup (r->hname) : NULL;
    c.hvalue = r->hvalue ? strdup (r->hvalue) : NULL;
    c.body = malloc (r->len + 1);
    if (r->len) memcpy (c.body, r->body, r->len);
    c.body[r->len] = 0;
    return c;
}

static ssize_t s_read (void *cls, uint64_t pos, char *buf, size_t max)
{
    s_stream_t *st = cls;
    if (st->server->stopping) return MHD_CONTENT_READER_END_WITH_ERROR;
    if (st->r.mode == FAKE_ENDLESS) {
        size_t n = max < 4096 ? max : 4096;
        for (size_t i = 0; i < n; i++) buf[i] = st->r.len ? st->r.body[(pos + i) % st->r.len] : 'x';
        return (ssize_t) n;
    }
    if (pos >= st->r.len) return MHD_CONTENT_READER_END_OF_STREAM;   /* drip: a byte a second */
    for (int slept = 0; pos > 0 && slept < 1000 && !st->server->stopping; slept += 10) usleep (10000);
    if (st->server->stopping) return MHD_CONTENT_READER_END_WITH_ERROR;
    buf[0] = st->r.body[pos];
    return 1;
}

static void s_stream_free (void *cls)
{
    s_stream_t *st = cls;
    s_resp_free (&st->r);
    free (st);
}

static enum MHD_Result s_handle (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    fake_h3_t *self = cls;
    (void) method; (void) version;
    if (!*con_cls) { *con_cls = calloc (1, sizeof (s_conn_t)); return *con_cls ? MHD_YES : MHD_NO; }
    s_conn_t *c = *con_cls;
    if (*upload_size) {
        size_t room = BODY_MAX - c->len, n = *upload_size < room ? *upload_size : room;
        memcpy (c->body + c->len, upload, n);
        c->len += n;
        *upload_size = 0;
        return MHD_YES;
    }
    const char *auth = MHD_lookup_connection_value (conn, MHD_HEADER_KIND, "Authorization");
    s_resp_t r = { .status = 404 };
    bool found = false;
    pthread_mutex_lock (&self->lock);
    self->total++;
    for (size_t i = 0; i < self->nroutes && !found; i++) {
        s_route_t *rt = &self->routes[i];
        if (strcmp (rt->path, url)) continue;
        found = true;
        rt->hits++;
        snprintf (rt->auth, sizeof rt->auth, "%s", auth ? auth : "(none)");
        memcpy (rt->body, c->body, c->len);
        rt->body[c->len] = 0;
        rt->body_len = c->len;
        size_t k = rt->served < rt->nresps ? rt->served : rt->nresps - 1;
        rt->served++;
        r = s_resp_copy (&rt->resps[k]);
    }
    pthread_mutex_unlock (&self->lock);
    if (!found) {
        r.body = strdup ("{\"error\": \"fake Hyper3D: no such path\"}");
        r.len = strlen (r.body);
    }
    struct MHD_Response *resp;
    if (r.mode == FAKE_WHOLE) resp = MHD_create_response_from_buffer (r.len, r.body, MHD_RESPMEM_MUST_COPY);
    else {
        s_stream_t *st = calloc (1, sizeof *st);
        st->server = self;
        st->r = r;
        r = (s_resp_t) { .status = st->r.status, .ctype = st->r.ctype ? strdup (st->r.ctype) : NULL,
                         .hname = st->r.hname ? strdup (st->r.hname) : NULL, .hvalue = st->r.hvalue ? strdup (st->r.hvalue) : NULL };
        resp = MHD_create_response_from_callback (st->r.mode == FAKE_ENDLESS ? MHD_SIZE_UNKNOWN : st->r.len, 4096,
                                                  s_read, st, s_stream_free);
    }
    MHD_add_response_header (resp, "Content-Type", r.ctype ? r.ctype : "application/json");
    if (r.hname) MHD_add_response_header (resp, r.hname, r.hvalue ? r.hvalue : "");
    enum MHD_Result rc = MHD_queue_response (conn, (unsigned) (r.status ? r.status : 200), resp);
    MHD_destroy_response (resp);
    s_resp_free (&r);
    return rc;
}

static void s_completed (void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void) cls; (void) conn; (void) toe;
    free (*con_cls);
    *con_cls = NULL;
}

fake_h3_t *fake_h3_new (void)
{
    fake_h3_t *self = calloc (1, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = 0 };
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    self->daemon = MHD_start_daemon (MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                                     s_handle, self, MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
                                     MHD_OPTION_NOTIFY_COMPLETED, s_completed, NULL, MHD_OPTION_END);
    if (!self->daemon) { free (self); return NULL; }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_BIND_PORT);
    snprintf (self->hostport, sizeof self->hostport, "127.0.0.1:%u", info ? info->port : 0);
    snprintf (self->url, sizeof self->url, "http://%s", self->hostport);
    return self;
}

void fake_h3_reset (fake_h3_t *self)
{
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->nroutes; i++) {
        free (self->routes[i].path);
        for (size_t k = 0; k < self->routes[i].nresps; k++) s_resp_free (&self->routes[i].resps[k]);
    }
    memset (self->routes, 0, sizeof self->routes);
    self->nroutes = self->total = 0;
    pthread_mutex_unlock (&self->lock);
}

void fake_h3_destroy (fake_h3_t **self_p)
{
    if (!self_p || !*self_p) return;
    fake_h3_t *self = *self_p;
    self->stopping = true;
    MHD_stop_daemon (self->daemon);
    fake_h3_reset (self);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

const char *fake_h3_url (const fake_h3_t *self) { return self->url; }
const char *fake_h3_hostport (const fake_h3_t *self) { return self->hostport; }

void fake_h3_route (fake_h3_t *self, const char *path, const fake_resp_t *resp)
{
    pthread_mutex_lock (&self->lock);
    s_route_t *rt = NULL;
    for (size_t i = 0; i < self->nroutes && !rt; i++)
        if (!strcmp (self->routes[i].path, path)) rt = &self->routes[i];
    if (!rt && self->nroutes < MAX_ROUTES) {
        rt = &self->routes[self->nroutes++];
        rt->path = strdup (path);
    }
    if (rt && rt->nresps < MAX_RESPS) {
        s_resp_t *r = &rt->resps[rt->nresps++];
        r->status = resp->status ? resp->status : 200;
        r->ctype = strdup (resp->content_type ? resp->content_type : "application/json");
        r->hname = resp->header_name ? strdup (resp->header_name) : NULL;
        r->hvalue = resp->header_value ? strdup (resp->header_value) : NULL;
        r->len = resp->len ? resp->len : resp->body ? strlen (resp->body) : 0;
        r->body = malloc (r->len + 1);
        if (r->len) memcpy (r->body, resp->body, r->len);
        r->mode = resp->mode;
    }
    pthread_mutex_unlock (&self->lock);
}

void fake_h3_json (fake_h3_t *self, const char *path, const char *json)
{
    fake_h3_route (self, path, &(fake_resp_t) { .body = json });
}

static s_route_t *s_route (fake_h3_t *self, const char *path)
{
    for (size_t i = 0; i < self->nroutes; i++)
        if (!strcmp (self->routes[i].path, path)) return &self->routes[i];
    return NULL;
}

size_t fake_h3_hits (fake_h3_t *self, const char *path)
{
    pthread_mutex_lock (&self->lock);
    s_route_t *rt = s_route (self, path);
    size_t n = rt ? rt->hits : 0;
    pthread_mutex_unlock (&self->lock);
    return n;
}

size_t fake_h3_total (fake_h3_t *self)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->total;
    pthread_mutex_unlock (&self->lock);
    return n;
}

const char *fake_h3_auth (fake_h3_t *self, const char *path)
{
    static char copy[512];
    pthread_mutex_lock (&self->lock);
    s_route_t *rt = s_route (self, path);
    snprintf (copy, sizeof copy, "%s", rt ? rt->auth : "");
    pthread_mutex_unlock (&self->lock);
    return copy;
}

const char *fake_h3_body (fake_h3_t *self, const char *path)
{
    static char copy[BODY_MAX + 1];
    pthread_mutex_lock (&self->lock);
    s_route_t *rt = s_route (self, path);
    snprintf (copy, sizeof copy, "%s", rt ? rt->body : "");
    pthread_mutex_unlock (&self->lock);
    return copy;
}

const char *fake_h3_body_bytes (fake_h3_t *self, const char *path, size_t *len)
{
    static char copy[BODY_MAX + 1];
    pthread_mutex_lock (&self->lock);
    s_route_t *rt = s_route (self, path);
    *len = rt ? rt->body_len : 0;
    if (*len) memcpy (copy, rt->body, *len);
    copy[*len] = 0;
    pthread_mutex_unlock (&self->lock);
    return copy;
}
