/* fake_llm — scripted HTTP server for the planner's LLM tests. */
#include "fake_llm.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_REPLIES  64
#define MAX_REQUESTS 256
#define MAX_UPLOAD   (16u << 20)

typedef struct {
    fake_reply_t r;
    char *body, *ctype, *hname, *hvalue;
} s_reply_t;

typedef struct {
    char   *path;
    json_t *headers;            /* lower-case name → value */
    json_t *body;
} s_request_t;

struct fake_llm_t {
    struct MHD_Daemon *daemon;
    char               url[64];
    pthread_mutex_t    lock;
    s_reply_t          replies[MAX_REPLIES];
    size_t             head, tail;
    s_request_t        requests[MAX_REQUESTS];
    size_t             nreq;
    volatile bool      stopping;
};

typedef struct {
    char  *data;
    size_t len;
} s_upload_t;

typedef struct {
    fake_llm_t *server;
    char       *body;
    size_t      len, chunk;
    int         delay_ms;
} s_stream_t;

static void s_sleep (fake_llm_t *self, int ms)
{
    for (int slept = 0; slept < ms && !self->stopping; slept += 10) usleep (10000);
}

static enum MHD_Result s_header (void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    char lower[128];
    snprintf (lower, sizeof lower, "%s", key);
    for (char *c = lower; *c; c++) *c = (char) tolower ((unsigned char) *c);
    json_object_set_new (cls, lower, json_string (value ? value : ""));
    return MHD_YES;
}

static enum MHD_Result s_query (void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    char *path = cls;
    size_t n = strlen (path);
    snprintf (path + n, 1024 - n, "%s%s%s%s", strchr (path, '?') ? "&" : "?", key, value ? "=" : "", value ? value : "");
    return MHD_YES;
}

static ssize_t s_read_chunk (void *cls, uint64_t pos, char *buf, size_t max)
{
    s_stream_t *st = cls;
    if (pos >= st->len) return MHD_CONTENT_READER_END_OF_STREAM;
    if (pos > 0) s_sleep (st->server, st->delay_ms);
    size_t n = st->len - (size_t) pos;
    if (n > st->chunk) n = st->chunk;
    if (n > max) n = max;
    memcpy (buf, st->body + pos, n);
    return (ssize_t) n;
}

static void s_free_stream (void *cls)
{
    s_stream_t *st = cls;
    free (st->body);
    free (st);
}

static enum MHD_Result s_handle (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    fake_llm_t *self = cls;
    s_upload_t *up = *con_cls;
    if (!up) {
        *con_cls = calloc (1, sizeof (s_upload_t));
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*upload_size) {
        if (up->len + *upload_size > MAX_UPLOAD) return MHD_NO;
        char *grown = realloc (up->data, up->len + *upload_size + 1);
        if (!grown) return MHD_NO;
        up->data = grown;
        memcpy (up->data + up->len, upload, *upload_size);
        up->len += *upload_size;
        up->data[up->len] = 0;
        *upload_size = 0;
        return MHD_YES;
    }
    /* the whole request is in: record it, then answer */
    s_request_t rq = { .headers = json_object () };
    rq.path = calloc (1, 1024);
    snprintf (rq.path, 1024, "%s", url);
    MHD_get_connection_values (conn, MHD_GET_ARGUMENT_KIND, s_query, rq.path);
    MHD_get_connection_values (conn, MHD_HEADER_KIND, s_header, rq.headers);
    rq.body = up->data ? json_loadb (up->data, up->len, 0, NULL) : NULL;
    s_reply_t reply = { .r = { .status = 500 } };
    pthread_mutex_lock (&self->lock);
    if (self->nreq < MAX_REQUESTS) self->requests[self->nreq++] = rq;
    else { free (rq.path); json_decref (rq.headers); json_decref (rq.body); }
    bool scripted = self->head < self->tail;
    if (scripted) reply = self->replies[self->head++ % MAX_REPLIES];
    pthread_mutex_unlock (&self->lock);
    if (!scripted)
        reply.body = strdup ("{\"error\": {\"code\": 500, \"message\": \"fake server: no scripted reply left\", \"status\": \"INTERNAL\"}}");
    s_sleep (self, reply.r.delay_ms);
    const char *body = reply.body ? reply.body : "";
    size_t len = strlen (body);
    struct MHD_Response *resp;
    if (reply.r.chunk > 0) {
        s_stream_t *st = calloc (1, sizeof *st);
        st->server = self;
        st->body = strdup (body);
        st->len = len;
        st->chunk = reply.r.chunk;
        st->delay_ms = reply.r.chunk_delay_ms;
        resp = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 4096, s_read_chunk, st, s_free_stream);
    }
    else resp = MHD_create_response_from_buffer (len, (void *) body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header (resp, "Content-Type", reply.ctype ? reply.ctype : "application/json");
    if (reply.hname) MHD_add_response_header (resp, reply.hname, reply.hvalue ? reply.hvalue : "");
    enum MHD_Result rc = MHD_queue_response (conn, (unsigned) (reply.r.status ? reply.r.status : 200), resp);
    MHD_destroy_response (resp);
    free (reply.body);
    free (reply.ctype);
    free (reply.hname);
    free (reply.hvalue);
    return rc;
}

static void s_completed (void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    s_upload_t *up = *con_cls;
    if (up) { free (up->data); free (up); }
    *con_cls = NULL;
}

fake_llm_t *fake_llm_new (void)
{
    fake_llm_t *self = calloc (1, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = 0 };
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    self->daemon = MHD_start_daemon (MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                                     s_handle, self, MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
                                     MHD_OPTION_NOTIFY_COMPLETED, s_completed, NULL, MHD_OPTION_END);
    if (!self->daemon) { free (self); return NULL; }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_BIND_PORT);
    snprintf (self->url, sizeof self->url, "http://127.0.0.1:%u", info ? info->port : 0);
    return self;
}

void fake_llm_destroy (fake_llm_t **self_p)
{
    if (!self_p || !*self_p) return;
    fake_llm_t *self = *self_p;
    self->stopping = true;
    MHD_stop_daemon (self->daemon);
    for (size_t i = self->head; i < self->tail; i++) {
        s_reply_t *r = &self->replies[i % MAX_REPLIES];
        free (r->body); free (r->ctype); free (r->hname); free (r->hvalue);
    }
    for (size_t i = 0; i < self->nreq; i++) {
        free (self->requests[i].path);
        json_decref (self->requests[i].headers);
        json_decref (self->requests[i].body);
    }
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

const char *fake_llm_url (const fake_llm_t *self)
{
    return self->url;
}

void fake_llm_push (fake_llm_t *self, const fake_reply_t *reply)
{
    s_reply_t r = { .r = *reply };
    r.body = reply->body ? strdup (reply->body) : NULL;
    r.ctype = reply->content_type ? strdup (reply->content_type) : NULL;
    r.hname = reply->header_name ? strdup (reply->header_name) : NULL;
    r.hvalue = reply->header_value ? strdup (reply->header_value) : NULL;
    pthread_mutex_lock (&self->lock);
    if (self->tail - self->head < MAX_REPLIES) self->replies[self->tail++ % MAX_REPLIES] = r;
    pthread_mutex_unlock (&self->lock);
}

void fake_llm_json (fake_llm_t *self, int status, const char *body)
{
    fake_reply_t r = { .status = status, .body = body };
    fake_llm_push (self, &r);
}

size_t fake_llm_requests (fake_llm_t *self)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->nreq;
    pthread_mutex_unlock (&self->lock);
    return n;
}

size_t fake_llm_unused (fake_llm_t *self)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->tail - self->head;
    pthread_mutex_unlock (&self->lock);
    return n;
}

json_t *fake_llm_body (fake_llm_t *self, size_t i)
{
    return i < fake_llm_requests (self) ? self->requests[i].body : NULL;
}

const char *fake_llm_path (fake_llm_t *self, size_t i)
{
    return i < fake_llm_requests (self) ? self->requests[i].path : NULL;
}

const char *fake_llm_header (fake_llm_t *self, size_t i, const char *name)
{
    if (i >= fake_llm_requests (self)) return NULL;
    char lower[128];
    snprintf (lower, sizeof lower, "%s", name);
    for (char *c = lower; *c; c++) *c = (char) tolower ((unsigned char) *c);
    return json_string_value (json_object_get (self->requests[i].headers, lower));
}

char *fake_llm_all_headers (fake_llm_t *self)
{
    json_t *all = json_array ();
    for (size_t i = 0; i < fake_llm_requests (self); i++) json_array_append (all, self->requests[i].headers);
    char *text = json_dumps (all, JSON_COMPACT);
    json_decref (all);
    return text;
}
