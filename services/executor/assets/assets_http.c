/* assets_http — GET (or POST) with timeouts, a byte cap, no redirects, retries, abort. */
#include "assets_http.h"
#include "retry.h"
#include "codec.h"

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifndef BMQ_VERSION
#error "BMQ_VERSION must be defined (the project's version, from CMake)"
#endif

#define S_SLICE_MS 20

static atomic_bool s_abort;

void bmq_assets_http_abort_all (void) { atomic_store (&s_abort, true); }
bool bmq_assets_http_aborted (void) { return atomic_load (&s_abort); }

/* libcurl calls this often during a transfer (and at least once a second
 * while idle): nonzero stops it. */
static int s_on_progress (void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void) arg; (void) dt; (void) dn; (void) ut; (void) un;
    return atomic_load (&s_abort) ? 1 : 0;
}

typedef struct {
    const bmq_assets_http_request_t *req;
    CURL    *curl;
    char    *body;              /* collected when there is no sink */
    size_t   cap;
    uint64_t len;
    bool     over_cap, sink_stopped, wrong_type, checked;
    long     status;
    int      retry_after_ms;
    char     ctype[96];
} s_xfer_t;

const char *bmq_assets_http_user_agent (void)
{
    return "blendmq/" BMQ_VERSION;
}

void bmq_assets_http_global_init (void)
{
    curl_global_init (CURL_GLOBAL_DEFAULT);
}

void bmq_assets_http_host (const char *url, char *out, size_t outlen)
{
    snprintf (out, outlen, "?");
    CURLU *u = curl_url ();
    if (!u) return;
    char *host = NULL, *port = NULL;
    if (url && curl_url_set (u, CURLUPART_URL, url, 0) == CURLUE_OK
        && curl_url_get (u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        if (curl_url_get (u, CURLUPART_PORT, &port, 0) == CURLUE_OK && port) snprintf (out, outlen, "%s:%s", host, port);
        else snprintf (out, outlen, "%s", host);
    }
    curl_free (host);
    curl_free (port);
    curl_url_cleanup (u);
}

bmq_assets_http_policy_t bmq_assets_http_policy_defaults (const bmq_assets_http_policy_t *in)
{
    bmq_assets_http_policy_t p = in ? *in : (bmq_assets_http_policy_t) { 0 };
    if (p.connect_timeout_ms <= 0) p.connect_timeout_ms = 10000;
    if (p.timeout_ms <= 0) p.timeout_ms = 120000;
    if (p.low_speed_bytes <= 0) p.low_speed_bytes = 1024;
    if (p.low_speed_secs <= 0) p.low_speed_secs = 30;
    if (p.retries < 0) p.retries = 0;
    if (p.retry_base_ms <= 0) p.retry_base_ms = 500;
    if (p.retry_max_ms <= 0) p.retry_max_ms = 8000;
    if (p.retry_after_max_ms <= 0) p.retry_after_max_ms = 30000;
    return p;
}

/* The media type of a Content-Type, without parameters, matches `want`. */
static bool s_type_is (const char *ctype, const char *want)
{
    size_t n = strlen (want);
    if (strncasecmp (ctype, want, n)) return false;
    char c = ctype[n];
    return c == 0 || c == ';' || c == ' ' || c == '\t';
}

static size_t s_on_write (char *p, size_t size, size_t nmemb, void *arg)
{
    s_xfer_t *x = arg;
    size_t n = size * nmemb;
    if (!x->checked) {
        x->checked = true;
        char *ctype = NULL;
        curl_easy_getinfo (x->curl, CURLINFO_RESPONSE_CODE, &x->status);
        curl_easy_getinfo (x->curl, CURLINFO_CONTENT_TYPE, &ctype);
        snprintf (x->ctype, sizeof x->ctype, "%s", ctype ? ctype : "");
        bool ok = x->status >= 200 && x->status < 300;
        if (ok && x->req->expect_type && !s_type_is (x->ctype, x->req->expect_type)) { x->wrong_type = true; return 0; }
        if (!ok) {              /* an error body: keep a little of it for the message, nothing more */
            if (x->len < 512 && !x->body) x->body = calloc (1, 513);
            if (x->body && x->len < 512) {
                size_t k = n < 512 - x->len ? n : 512 - x->len;
                memcpy (x->body + x->len, p, k);
                x->len += k;
            }
            return n;
        }
    }
    else if (x->status < 200 || x->status >= 300) {
        if (x->body && x->len < 512) {
            size_t k = n < 512 - x->len ? n : 512 - x->len;
            memcpy (x->body + x->len, p, k);
            x->len += k;
        }
        return n;
    }
    if (x->len + n > x->req->max_bytes) { x->over_cap = true; return 0; }
    if (x->req->sink) {
        if (x->req->sink (x->req->ctx, p, n)) { x->sink_stopped = true; return 0; }
        x->len += n;
        return n;
    }
    if (x->len + n + 1 > x->cap) {
        size_t c = x->cap ? x->cap : 4096;
        while (c < x->len + n + 1) c *= 2;
        char *grown = realloc (x->body, c);
        if (!grown) { x->over_cap = true; return 0; }
        x->body = grown;
        x->cap = c;
    }
    memcpy (x->body + x->len, p, n);
    x->len += n;
    x->body[x->len] = 0;
    return n;
}

static size_t s_on_header (char *p, size_t size, size_t nmemb, void *arg)
{
    s_xfer_t *x = arg;
    size_t n = size * nmemb;
    int ms = bmq_retry_after_header (p, n);
    if (ms >= 0) x->retry_after_ms = ms;
    return n;
}

static bool s_curl_retryable (CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT: case CURLE_COULDNT_RESOLVE_HOST: case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING: case CURLE_SEND_ERROR: case CURLE_RECV_ERROR: case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2: case CURLE_HTTP2_STREAM: case CURLE_SSL_CONNECT_ERROR:
        return true;
    default:
        return false;
    }
}

/* Printable ASCII of an error body, clipped. */
static void s_clip (char *out, size_t outlen, const char *text, size_t len, size_t max)
{
    size_t o = 0;
    for (size_t i = 0; text && i < len && i < max && o + 4 < outlen; i++) {
        unsigned char c = (unsigned char) text[i];
        out[o++] = (c >= 0x20 && c < 0x7f) ? (char) c : ' ';
    }
    if (len > max && o + 4 < outlen) { memcpy (out + o, "...", 3); o += 3; }
    out[o] = 0;
}

/* One exchange. 0 ok; -1 failed (*retryable says whether to try again). */
static int s_exchange (const bmq_assets_http_request_t *req, const bmq_assets_http_policy_t *p,
                       s_xfer_t *x, bool *retryable, bmq_assets_http_error_t *err)
{
    const char *what = req->what ? req->what : "the server";
    char host[256];
    bmq_assets_http_host (req->url, host, sizeof host);
    *retryable = false;
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *curl = x->curl = curl_easy_init ();
    if (!curl) { snprintf (err->message, sizeof err->message, "cannot start an HTTP client"); return -1; }
    curl_easy_setopt (curl, CURLOPT_URL, req->url);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt (curl, CURLOPT_USERAGENT, bmq_assets_http_user_agent ());
    curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT_MS, (long) p->connect_timeout_ms);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, (long) p->timeout_ms);
    curl_easy_setopt (curl, CURLOPT_LOW_SPEED_LIMIT, (long) p->low_speed_bytes);
    curl_easy_setopt (curl, CURLOPT_LOW_SPEED_TIME, (long) p->low_speed_secs);
    curl_easy_setopt (curl, CURLOPT_ACCEPT_ENCODING, NULL);      /* bytes as sent: the cap counts what lands */
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_on_write);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, x);
    curl_easy_setopt (curl, CURLOPT_HEADERFUNCTION, s_on_header);
    curl_easy_setopt (curl, CURLOPT_HEADERDATA, x);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, s_on_progress);
    struct curl_slist *headers = NULL;
    for (size_t i = 0; req->headers && req->headers[i]; i++) {
        struct curl_slist *grown = curl_slist_append (headers, req->headers[i]);
        if (grown) headers = grown;
    }
    if (req->post_body) {
        char ctype[160];
        snprintf (ctype, sizeof ctype, "Content-Type: %s", req->post_type ? req->post_type : "application/octet-stream");
        struct curl_slist *grown = curl_slist_append (headers, ctype);
        if (grown) headers = grown;
        curl_easy_setopt (curl, CURLOPT_POSTFIELDS, req->post_body);
        curl_easy_setopt (curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) req->post_len);
    }
    curl_mime *mime = NULL;
    if ((req->form || req->nfiles) && !req->post_body) {
        mime = curl_mime_init (curl);
        for (size_t i = 0; mime && req->form && req->form[i] && req->form[i + 1]; i += 2) {
            curl_mimepart *part = curl_mime_addpart (mime);
            curl_mime_name (part, req->form[i]);
            curl_mime_data (part, req->form[i + 1], CURL_ZERO_TERMINATED);
        }
        for (size_t i = 0; mime && req->files && i < req->nfiles; i++) {
            const bmq_assets_http_file_t *f = &req->files[i];
            curl_mimepart *part = curl_mime_addpart (mime);
            curl_mime_name (part, f->name);
            curl_mime_data (part, f->data, f->len);
            if (f->filename) curl_mime_filename (part, f->filename);
            if (f->type) curl_mime_type (part, f->type);
        }
        curl_easy_setopt (curl, CURLOPT_MIMEPOST, mime);
    }
    if (headers) curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
    CURLcode rc = curl_easy_perform (curl);
    curl_slist_free_all (headers);
    curl_mime_free (mime);
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &x->status);
    char *redirect = NULL;
    curl_easy_getinfo (curl, CURLINFO_REDIRECT_URL, &redirect);
    char target[256] = "";
    if (redirect) bmq_assets_http_host (redirect, target, sizeof target);
    char *ctype = NULL;
    if (!x->checked) {
        curl_easy_getinfo (curl, CURLINFO_CONTENT_TYPE, &ctype);
        snprintf (x->ctype, sizeof x->ctype, "%s", ctype ? ctype : "");
    }
    err->status = (int) x->status;
    int result = -1;
    if (x->over_cap) {
        char cap[128];
        if (req->cap_label) snprintf (cap, sizeof cap, "%s", req->cap_label);
        else snprintf (cap, sizeof cap, "%llu bytes (the cap)", (unsigned long long) req->max_bytes);
        snprintf (err->message, sizeof err->message, "%s at %s sent more than %s: stopped", what, host, cap);
    }
    else if (x->wrong_type)
        snprintf (err->message, sizeof err->message, "%s at %s answered with content type \"%s\", expected %s",
                  what, host, x->ctype, req->expect_type);
    else if (x->sink_stopped)
        snprintf (err->message, sizeof err->message, "%s at %s: %s", what, host,
                  req->sink_err && *req->sink_err ? req->sink_err : "refused by the receiver");
    else if (rc == CURLE_ABORTED_BY_CALLBACK && atomic_load (&s_abort))
        snprintf (err->message, sizeof err->message, "%s at %s: aborted (the service is stopping)", what, host);
    else if (rc != CURLE_OK) {
        *retryable = s_curl_retryable (rc);
        const char *why = rc == CURLE_OPERATION_TIMEDOUT
            ? (strstr (errbuf, "too slow") ? "too slow (below the low-speed floor)" : "timed out")
            : "transfer failed";
        snprintf (err->message, sizeof err->message, "%s at %s: %s: %s", what, host, why, *errbuf ? errbuf : curl_easy_strerror (rc));
    }
    else if (x->status >= 300 && x->status < 400)
        snprintf (err->message, sizeof err->message, "%s at %s answered %ld, a redirect to %s (%s): redirects are not followed",
                  what, host, x->status, *target ? target : "nowhere", redirect ? redirect : "no Location");
    else if (x->status < 200 || x->status >= 300) {
        *retryable = x->status == 429 || x->status >= 500;
        char quote[200];
        s_clip (quote, sizeof quote, x->body, x->len, 160);
        snprintf (err->message, sizeof err->message, "%s at %s answered HTTP %ld%s%s", what, host, x->status,
                  *quote ? ": " : "", quote);
    }
    else if (req->expect_type && !x->checked && !s_type_is (x->ctype, req->expect_type))
        snprintf (err->message, sizeof err->message, "%s at %s answered with content type \"%s\", expected %s",
                  what, host, *x->ctype ? x->ctype : "(none)", req->expect_type);
    else result = 0;
    curl_easy_cleanup (curl);
    x->curl = NULL;
    return result;
}

static void s_sleep_ms (int ms)
{
    int64_t until = bmq_mono_ms () + ms;
    for (int64_t now = bmq_mono_ms (); now < until && !atomic_load (&s_abort); now = bmq_mono_ms ()) {
        int64_t left = until - now;
        usleep ((useconds_t) ((left < S_SLICE_MS ? left : S_SLICE_MS) * 1000));
    }
}

/* This thread's last exchange gave up on a source that could not be reached (see the header). */
static _Thread_local bool s_unreachable;

bool bmq_assets_http_unreachable (void)
{
    return s_unreachable;
}

void bmq_assets_http_unreachable_clear (void)
{
    s_unreachable = false;
}

int bmq_assets_http_get (const bmq_assets_http_request_t *req, const bmq_assets_http_policy_t *policy_in,
                         char **body, size_t *len, bmq_assets_http_error_t *err)
{
    s_unreachable = false;
    memset (err, 0, sizeof *err);
    if (body) *body = NULL;
    if (len) *len = 0;
    if (req->sink_err && req->sink_err_len) req->sink_err[0] = 0;
    if (!req->url || (!req->sink && !body)) {
        snprintf (err->message, sizeof err->message, "bad request: a URL and a place for the body are needed");
        return -1;
    }
    bmq_assets_http_policy_t p = bmq_assets_http_policy_defaults (policy_in);
    for (int attempt = 0; ; attempt++) {
        s_xfer_t x = { .req = req, .retry_after_ms = -1 };
        bool retryable = false;
        err->attempts = attempt + 1;
        int rc = s_exchange (req, &p, &x, &retryable, err);
        if (rc == 0) {
            if (!req->sink) {
                if (!x.body) x.body = calloc (1, 1);
                *body = x.body;
                if (len) *len = (size_t) x.len;
                return x.body ? 0 : -1;
            }
            free (x.body);
            return 0;
        }
        free (x.body);
        if (!retryable) return -1;
        if (attempt >= p.retries) {
            s_unreachable = !atomic_load (&s_abort);        /* no answer, or only "try later", to the end */
            size_t l = strlen (err->message);
            snprintf (err->message + l, sizeof err->message - l, " (gave up after %d attempts)", attempt + 1);
            return -1;
        }
        s_sleep_ms (bmq_retry_delay_ms (attempt, p.retry_base_ms, p.retry_max_ms, x.retry_after_ms, p.retry_after_max_ms));
        if (atomic_load (&s_abort)) {
            snprintf (err->message, sizeof err->message, "%s: aborted (the service is stopping)", req->what ? req->what : "the download");
            return -1;
        }
        if (req->reset && req->reset (req->ctx)) {
            snprintf (err->message, sizeof err->message, "%s: cannot start over for a retry: %s",
                      req->what ? req->what : "the download", req->sink_err && *req->sink_err ? req->sink_err : "refused");
            return -1;
        }
    }
}

json_t *bmq_assets_http_json (const bmq_assets_http_request_t *req, const bmq_assets_http_policy_t *policy,
                              const char *shown, int *status, char *err, size_t errlen)
{
    bmq_assets_http_error_t herr;
    char *body = NULL;
    size_t len = 0;
    int rc = bmq_assets_http_get (req, policy, &body, &len, &herr);
    if (status) *status = herr.status;
    if (rc) {
        snprintf (err, errlen, "%s (%.300s)", herr.message, shown);
        return NULL;
    }
    json_error_t jerr;
    json_t *doc = json_loadb (body, len, JSON_REJECT_DUPLICATES, &jerr);
    free (body);
    if (!json_is_object (doc)) {
        snprintf (err, errlen, "%s answered %.300s with %s, expected a JSON object", req->what ? req->what : "the API",
                  shown, doc ? "another JSON type" : "something that is not JSON");
        json_decref (doc);
        return NULL;
    }
    return doc;
}
