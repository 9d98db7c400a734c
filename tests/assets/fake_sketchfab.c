/* fake_sketchfab — scripted Sketchfab API and download host for the assets tests. */
#include "fake_sketchfab.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#define MAX_ROUTES 64
#define MAX_RESPS  4
#define MAX_LOG    1024

typedef struct {
    int    status;
    char  *ctype, *hname, *hvalue, *body;
    size_t len;
} s_resp_t;

typedef struct {
    char    *route;
    s_resp_t resps[MAX_RESPS];
    size_t   nresps, served;
} s_route_t;

struct fake_sf_t {
    struct MHD_Daemon *daemon;
    char               url[96], hostport[64];
    pthread_mutex_t    lock;
    s_route_t          routes[MAX_ROUTES];
    size_t             nroutes, nlog, total;
    fake_sf_req_t     *log;
};

static void s_resp_free (s_resp_t *r)
{
    free (r->ctype); free (r->hname); free (r->hvalue); free (r->body);
    memset (r, 0, sizeof *r);
}

static void s_arg (struct MHD_Connection *conn, const char *name, char *out, size_t outlen)
{
    const char *v = MHD_lookup_connection_value (conn, MHD_GET_ARGUMENT_KIND, name);
    snprintf (out, outlen, "%s", v ? v : "");
}

static enum MHD_Result s_handle (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    fake_sf_t *self = cls;
    if (!*con_cls) { *con_cls = (void *) 1; return MHD_YES; }
    fake_sf_req_t req = { 0 };
    const char *cursor = MHD_lookup_connection_value (conn, MHD_GET_ARGUMENT_KIND, "cursor");
    snprintf (req.route, sizeof req.route, "%s%s%s", url, cursor ? "?cursor=" : "", cursor ? cursor : "");
    s_arg (conn, "q", req.q, sizeof req.q);
    s_arg (conn, "count", req.count, sizeof req.count);
    s_arg (conn, "type", req.type, sizeof req.type);
    s_arg (conn, "downloadable", req.downloadable, sizeof req.downloadable);
    const char *auth = MHD_lookup_connection_value (conn, MHD_HEADER_KIND, "Authorization");
    req.has_auth = auth != NULL;
    snprintf (req.auth, sizeof req.auth, "%s", auth ? auth : "");
    s_resp_t r = { .status = 404 };
    pthread_mutex_lock (&self->lock);
    self->total++;
    if (self->nlog < MAX_LOG) self->log[self->nlog++] = req;
    for (size_t i = 0; i < self->nroutes; i++) {
        s_route_t *rt = &self->routes[i];
        if (strcmp (rt->route, req.route)) continue;
        s_resp_t *k = &rt->resps[rt->served < rt->nresps ? rt->served : rt->nresps - 1];
        rt->served++;
        r.status = k->status;
        r.ctype = strdup (k->ctype);
        r.hname = k->hname ? strdup (k->hname) : NULL;
        r.hvalue = k->hvalue ? strdup (k->hvalue) : NULL;
        r.body = malloc (k->len + 1);
        memcpy (r.body, k->body, k->len);
        r.len = k->len;
        break;
    }
    pthread_mutex_unlock (&self->lock);
    if (!r.body) {
        r.body = strdup ("{\"detail\": \"fake Sketchfab: no such route\"}");
        r.len = strlen (r.body);
    }
    struct MHD_Response *resp = MHD_create_response_from_buffer (r.len, r.body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header (resp, "Content-Type", r.ctype ? r.ctype : "application/json");
    if (r.hname) MHD_add_response_header (resp, r.hname, r.hvalue ? r.hvalue : "");
    enum MHD_Result rc = MHD_queue_response (conn, (unsigned) r.status, resp);
    MHD_destroy_response (resp);
    s_resp_free (&r);
    return rc;
}

static void s_completed (void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    *con_cls = NULL;
}

fake_sf_t *fake_sf_new (void)
{
    fake_sf_t *self = calloc (1, sizeof *self);
    self->log = calloc (MAX_LOG, sizeof *self->log);
    pthread_mutex_init (&self->lock, NULL);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = 0 };
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    self->daemon = MHD_start_daemon (MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                                     s_handle, self, MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
                                     MHD_OPTION_NOTIFY_COMPLETED, s_completed, NULL, MHD_OPTION_END);
    if (!self->daemon) { free (self->log); free (self); return NULL; }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_BIND_PORT);
    snprintf (self->hostport, sizeof self->hostport, "127.0.0.1:%u", info ? info->port : 0);
    snprintf (self->url, sizeof self->url, "http://%s", self->hostport);
    return self;
}

void fake_sf_reset (fake_sf_t *self)
{
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->nroutes; i++) {
        free (self->routes[i].route);
        for (size_t k = 0; k < self->routes[i].nresps; k++) s_resp_free (&self->routes[i].resps[k]);
    }
    memset (self->routes, 0, sizeof self->routes);
    self->nroutes = self->nlog = self->total = 0;
    pthread_mutex_unlock (&self->lock);
}

void fake_sf_destroy (fake_sf_t **self_p)
{
    if (!self_p || !*self_p) return;
    fake_sf_t *self = *self_p;
    MHD_stop_daemon (self->daemon);
    fake_sf_reset (self);
    pthread_mutex_destroy (&self->lock);
    free (self->log);
    free (self);
    *self_p = NULL;
}

const char *fake_sf_url (const fake_sf_t *self) { return self->url; }
const char *fake_sf_hostport (const fake_sf_t *self) { return self->hostport; }

void fake_sf_route (fake_sf_t *self, const char *route, const fake_sf_resp_t *resp)
{
    pthread_mutex_lock (&self->lock);
    s_route_t *rt = NULL;
    for (size_t i = 0; i < self->nroutes && !rt; i++)
        if (!strcmp (self->routes[i].route, route)) rt = &self->routes[i];
    if (!rt && self->nroutes < MAX_ROUTES) {
        rt = &self->routes[self->nroutes++];
        rt->route = strdup (route);
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
    }
    pthread_mutex_unlock (&self->lock);
}

void fake_sf_json (fake_sf_t *self, const char *route, const char *json)
{
    fake_sf_route (self, route, &(fake_sf_resp_t) { .body = json });
}

void fake_sf_file (fake_sf_t *self, const char *route, const void *bytes, size_t len)
{
    fake_sf_route (self, route, &(fake_sf_resp_t) { .body = bytes, .len = len, .content_type = "application/zip" });
}

size_t fake_sf_total (fake_sf_t *self)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->total;
    pthread_mutex_unlock (&self->lock);
    return n;
}

size_t fake_sf_hits (fake_sf_t *self, const char *route)
{
    size_t n = 0;
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->nlog; i++) n += !strcmp (self->log[i].route, route);
    pthread_mutex_unlock (&self->lock);
    return n;
}

bool fake_sf_request (fake_sf_t *self, size_t i, fake_sf_req_t *out)
{
    pthread_mutex_lock (&self->lock);
    bool ok = i < self->nlog;
    if (ok) *out = self->log[i];
    pthread_mutex_unlock (&self->lock);
    return ok;
}

/* ---- archives ------------------------------------------------------------- */

unsigned char *fake_sf_zip (const fake_sf_zent_t *e, size_t n, size_t *len)
{
    zip_error_t ze;
    zip_error_init (&ze);
    zip_source_t *src = zip_source_buffer_create (NULL, 0, 0, &ze);
    if (!src) return NULL;
    zip_source_keep (src);
    zip_t *za = zip_open_from_source (src, ZIP_TRUNCATE, &ze);
    bool ok = za != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        if (e[i].kind == FAKE_ZDIR) { ok = zip_dir_add (za, e[i].name, ZIP_FL_ENC_UTF_8) >= 0; continue; }
        zip_source_t *s = zip_source_buffer (za, e[i].data, e[i].len, 0);
        zip_int64_t idx = s ? zip_file_add (za, e[i].name, s, ZIP_FL_ENC_UTF_8) : -1;
        if (idx < 0) { fprintf (stderr, "zip_file_add %s: %s\n", e[i].name, zip_strerror (za)); zip_source_free (s); ok = false; }
        if (ok && e[i].kind == FAKE_ZLINK)
            ok = zip_file_set_external_attributes (za, (zip_uint64_t) idx, 0, ZIP_OPSYS_UNIX, (zip_uint32_t) (S_IFLNK | 0777) << 16) == 0;
    }
    if (za && !ok) zip_discard (za);
    if (ok && zip_close (za)) { fprintf (stderr, "zip_close: %s\n", zip_strerror (za)); zip_discard (za); ok = false; }
    unsigned char *buf = NULL;
    zip_stat_t st;
    if (ok && zip_source_open (src) == 0) {
        if (zip_source_stat (src, &st) == 0 && (buf = malloc (st.size ? st.size : 1))
            && zip_source_read (src, buf, st.size) != (zip_int64_t) st.size) { free (buf); buf = NULL; }
        zip_source_close (src);
    }
    zip_source_free (src);
    if (buf) *len = (size_t) st.size;
    return buf;
}

static uint32_t s_le32 (const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t) p[3] << 24; }
static uint16_t s_le16 (const unsigned char *p) { return (uint16_t) (p[0] | p[1] << 8); }
static void s_put32 (unsigned char *p, uint32_t v) { p[0] = v & 0xff; p[1] = v >> 8 & 0xff; p[2] = v >> 16 & 0xff; p[3] = v >> 24; }

int fake_sf_zip_patch (unsigned char *zip, size_t len, const char *name, fake_sf_zpatch_t what, uint32_t value)
{
    int patched = 0;
    size_t nlen = strlen (name);
    for (size_t i = 0; i + 46 < len; i++) {
        uint32_t sig = s_le32 (zip + i);
        size_t flags, crc, usize, fname;
        if (sig == 0x04034b50) { flags = 6; crc = 14; usize = 22; fname = 30; if (s_le16 (zip + i + 26) != nlen) continue; }
        else if (sig == 0x02014b50) { flags = 8; crc = 16; usize = 24; fname = 46; if (s_le16 (zip + i + 28) != nlen) continue; }
        else continue;
        if (i + fname + nlen > len || memcmp (zip + i + fname, name, nlen)) continue;
        if (what == FAKE_ZUSIZE) s_put32 (zip + i + usize, value);
        if (what == FAKE_ZCRC) s_put32 (zip + i + crc, s_le32 (zip + i + crc) ^ value);
        if (what == FAKE_ZENCRYPTED) zip[i + flags] |= 1;
        patched++;
    }
    return patched;
}
