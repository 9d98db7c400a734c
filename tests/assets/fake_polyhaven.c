/* fake_polyhaven — scripted Poly Haven API and download host for the assets tests. */
#include "fake_polyhaven.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ROUTES 128
#define MAX_RESPS  4

typedef struct {
    int    status;
    char  *ctype, *hname, *hvalue;
    char  *body;
    size_t len;
    fake_mode_t mode;
} s_resp_t;

typedef struct {
    char    *path;
    s_resp_t resps[MAX_RESPS];
    size_t   nresps, served, hits;
} s_route_t;

struct fake_ph_t {
    struct MHD_Daemon *daemon;
    char               url[96], hostport[64];
    pthread_mutex_t    lock;
    s_route_t          routes[MAX_ROUTES];
    size_t             nroutes, total, unknown;
    char               ua[256];
    volatile bool      stopping;
};

typedef struct {
    fake_ph_t  *server;
    s_resp_t    r;              /* a copy: the route may be reset meanwhile */
} s_stream_t;

static void s_sleep (fake_ph_t *self, int ms)
{
    for (int slept = 0; slept < ms && !self->stopping; slept += 10) usleep (10000);
}

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
    if (pos >= st->r.len) return MHD_CONTENT_READER_END_OF_STREAM;   /* drip */
    if (pos > 0) s_sleep (st->server, 1000);
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
    fake_ph_t *self = cls;
    if (!*con_cls) { *con_cls = (void *) 1; return MHD_YES; }
    char path[1024];
    const char *t = MHD_lookup_connection_value (conn, MHD_GET_ARGUMENT_KIND, "t");
    snprintf (path, sizeof path, "%s%s%s", url, t ? "?t=" : "", t ? t : "");
    const char *ua = MHD_lookup_connection_value (conn, MHD_HEADER_KIND, "User-Agent");
    s_resp_t r = { .status = 404 };
    bool found = false;
    pthread_mutex_lock (&self->lock);
    self->total++;
    snprintf (self->ua, sizeof self->ua, "%s", ua ? ua : "");
    for (size_t i = 0; i < self->nroutes && !found; i++) {
        s_route_t *rt = &self->routes[i];
        if (strcmp (rt->path, path)) continue;
        found = true;
        rt->hits++;
        size_t k = rt->served < rt->nresps ? rt->served : rt->nresps - 1;
        rt->served++;
        r = s_resp_copy (&rt->resps[k]);
    }
    if (!found) self->unknown++;
    pthread_mutex_unlock (&self->lock);
    if (!found) {
        r.body = strdup ("{\"error\": \"fake Poly Haven: no such path\"}");
        r.len = strlen (r.body);
    }
    struct MHD_Response *resp;
    if (r.mode == FAKE_WHOLE) {
        resp = MHD_create_response_from_buffer (r.len, r.body, MHD_RESPMEM_MUST_COPY);
    }
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
    *con_cls = NULL;
}

fake_ph_t *fake_ph_new (void)
{
    fake_ph_t *self = calloc (1, sizeof *self);
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

void fake_ph_reset (fake_ph_t *self)
{
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->nroutes; i++) {
        free (self->routes[i].path);
        for (size_t k = 0; k < self->routes[i].nresps; k++) s_resp_free (&self->routes[i].resps[k]);
    }
    memset (self->routes, 0, sizeof self->routes);
    self->nroutes = self->total = self->unknown = 0;
    self->ua[0] = 0;
    pthread_mutex_unlock (&self->lock);
}

void fake_ph_destroy (fake_ph_t **self_p)
{
    if (!self_p || !*self_p) return;
    fake_ph_t *self = *self_p;
    self->stopping = true;
    MHD_stop_daemon (self->daemon);
    fake_ph_reset (self);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

const char *fake_ph_url (const fake_ph_t *self) { return self->url; }
const char *fake_ph_hostport (const fake_ph_t *self) { return self->hostport; }

void fake_ph_route (fake_ph_t *self, const char *path, const fake_resp_t *resp)
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

void fake_ph_json (fake_ph_t *self, const char *path, const char *json)
{
    fake_ph_route (self, path, &(fake_resp_t) { .body = json });
}

void fake_ph_file (fake_ph_t *self, const char *path, const void *bytes, size_t len)
{
    fake_ph_route (self, path, &(fake_resp_t) { .body = bytes, .len = len, .content_type = "application/octet-stream" });
}

size_t fake_ph_hits (fake_ph_t *self, const char *path)
{
    size_t n = 0;
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->nroutes; i++)
        if (!strcmp (self->routes[i].path, path)) n = self->routes[i].hits;
    pthread_mutex_unlock (&self->lock);
    return n;
}

size_t fake_ph_hits_prefix (fake_ph_t *self, const char *prefix)
{
    size_t n = 0;
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->nroutes; i++)
        if (!strncmp (self->routes[i].path, prefix, strlen (prefix))) n += self->routes[i].hits;
    pthread_mutex_unlock (&self->lock);
    return n;
}

size_t fake_ph_total (fake_ph_t *self)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->total;
    pthread_mutex_unlock (&self->lock);
    return n;
}

const char *fake_ph_user_agent (fake_ph_t *self)
{
    static char copy[256];
    pthread_mutex_lock (&self->lock);
    snprintf (copy, sizeof copy, "%s", self->ua);
    pthread_mutex_unlock (&self->lock);
    return copy;
}
