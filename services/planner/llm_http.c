/* llm_http — JSON POST with retries, server-sent events, API error shapes. */
#include "llm_http.h"
#include "retry.h"
#include "codec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S_MAX_EVENT   (4u << 20)
#define S_SLICE_MS    20

/* ---- server-sent events ---------------------------------------------------- */

typedef struct {
    char  *line;
    size_t line_len, line_cap;
    char  *data;
    size_t data_len, data_cap;
    bool   has_data, after_cr;
} s_sse_t;

static int s_grow (char **buf, size_t *cap, size_t need, size_t limit)
{
    if (need <= *cap) return 0;
    if (need > limit) return -1;
    size_t n = *cap ? *cap : 1024;
    while (n < need) n *= 2;
    if (n > limit) n = limit;
    char *p = realloc (*buf, n);
    if (!p) return -1;
    *buf = p;
    *cap = n;
    return 0;
}

typedef struct {
    const bmq_llm_http_request_t *req;
    const bmq_llm_http_hooks_t   *hooks;
    char   *body;
    size_t  len, cap;
    s_sse_t sse;
    int     mode;                   /* 0 undecided, 1 events, 2 raw */
    bool    stopped, too_large;
    int     retry_after_ms;         /* Retry-After header */
    long    status;
    CURL   *curl;
} s_xfer_t;

static int s_dispatch (s_xfer_t *x)
{
    s_sse_t *s = &x->sse;
    if (!s->has_data) return 0;
    if (s->data_len && s->data[s->data_len - 1] == '\n') s->data_len--;     /* the last data line's newline */
    s->data[s->data_len] = 0;
    int rc = x->req->on_event (x->req->event_ctx, s->data, s->data_len);
    s->data_len = 0;
    s->has_data = false;
    if (rc) x->stopped = true;
    return rc;
}

static int s_sse_line (s_xfer_t *x)
{
    s_sse_t *s = &x->sse;
    if (s->line_len == 0) return s_dispatch (x);
    s->line[s->line_len] = 0;
    if (s->line[0] == ':') return 0;                          /* a comment */
    char *colon = strchr (s->line, ':');
    size_t flen = colon ? (size_t) (colon - s->line) : s->line_len;
    if (flen != 4 || memcmp (s->line, "data", 4)) return 0;  /* event, id, retry: not used */
    const char *value = colon ? colon + 1 : "";
    if (*value == ' ') value++;
    size_t vlen = strlen (value);
    if (s_grow (&s->data, &s->data_cap, s->data_len + vlen + 2, S_MAX_EVENT + 2)) { x->too_large = true; return -1; }
    memcpy (s->data + s->data_len, value, vlen);
    s->data_len += vlen;
    s->data[s->data_len++] = '\n';
    s->has_data = true;
    return 0;
}

static int s_sse_feed (s_xfer_t *x, const char *p, size_t n)
{
    s_sse_t *s = &x->sse;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (s->after_cr && c == '\n') { s->after_cr = false; continue; }
        s->after_cr = false;
        if (c == '\r' || c == '\n') {
            s->after_cr = c == '\r';
            if (s_sse_line (x)) return -1;
            s->line_len = 0;
            continue;
        }
        if (s_grow (&s->line, &s->line_cap, s->line_len + 2, S_MAX_EVENT + 2)) { x->too_large = true; return -1; }
        s->line[s->line_len++] = c;
    }
    return 0;
}

static int s_sse_end (s_xfer_t *x)
{
    if (x->sse.line_len && s_sse_line (x)) return -1;
    x->sse.line_len = 0;
    return s_dispatch (x);
}

/* ---- curl callbacks ------------------------------------------------------- */

static size_t s_on_write (char *p, size_t size, size_t nmemb, void *arg)
{
    s_xfer_t *x = arg;
    size_t n = size * nmemb;
    if (x->mode == 0) {
        char *ctype = NULL;
        curl_easy_getinfo (x->curl, CURLINFO_RESPONSE_CODE, &x->status);
        curl_easy_getinfo (x->curl, CURLINFO_CONTENT_TYPE, &ctype);
        bool sse = ctype && !strncasecmp (ctype, "text/event-stream", 17);
        x->mode = (x->req->on_event && sse && x->status >= 200 && x->status < 300) ? 1 : 2;
    }
    if (x->mode == 1) return s_sse_feed (x, p, n) ? 0 : n;
    if (x->len + n > BMQ_HTTP_MAX_BODY) { x->too_large = true; return 0; }
    if (s_grow (&x->body, &x->cap, x->len + n + 1, BMQ_HTTP_MAX_BODY + 1)) { x->too_large = true; return 0; }
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

static int s_on_progress (void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    s_xfer_t *x = arg;
    return x->hooks && x->hooks->cancelled && x->hooks->cancelled (x->hooks->ctx) ? 1 : 0;
}

/* ---- errors --------------------------------------------------------------- */

void bmq_llm_http_redact (char *text, size_t size, const char *secret)
{
    static const char mark[] = "[redacted]";
    size_t ls = secret ? strlen (secret) : 0;
    if (!text || !ls) return;
    char *hit;
    char *from = text;
    while ((hit = strstr (from, secret))) {
        size_t tail = strlen (hit + ls);
        size_t ml = sizeof mark - 1;
        if ((size_t) (hit - text) + ml + tail + 1 > size) {   /* no room: blank in place */
            memset (hit, '*', ls);
            from = hit + ls;
            continue;
        }
        memmove (hit + ml, hit + ls, tail + 1);
        memcpy (hit, mark, ml);
        from = hit + ml;
    }
}

char *bmq_llm_http_utf8_fix (char *text)
{
    unsigned char *s = (unsigned char *) text;
    for (size_t i = 0; s && s[i]; ) {
        size_t n = s[i] < 0x80 ? 1 : (s[i] >> 5) == 6 ? 2 : (s[i] >> 4) == 14 ? 3 : (s[i] >> 3) == 30 ? 4 : 0;
        bool ok = n > 0 && !(n == 2 && s[i] < 0xC2);
        for (size_t k = 1; ok && k < n; k++) ok = (s[i + k] & 0xC0) == 0x80;
        if (!ok) { s[i++] = '?'; continue; }
        i += n;
    }
    return text;
}

int bmq_llm_http_duration_ms (const char *text)
{
    if (!text) return -1;
    char *end;
    double s = strtod (text, &end);
    if (end == text || strcmp (end, "s") || !(s >= 0) || s > 86400) return -1;
    return (int) (s * 1000 + 0.5);
}

/* Printable ASCII of at most `max` bytes of text, for quoting a body. */
static void s_clip (char *out, size_t outlen, const char *text, size_t len, size_t max)
{
    size_t o = 0;
    for (size_t i = 0; i < len && i < max && o + 4 < outlen; i++) {
        unsigned char c = (unsigned char) text[i];
        out[o++] = (c >= 0x20 && c < 0x7f) ? (char) c : ' ';
    }
    if (len > max && o + 4 < outlen) { memcpy (out + o, "...", 3); o += 3; }
    out[o] = 0;
}

int bmq_llm_http_parse_error (const char *body, size_t len, bmq_llm_http_error_t *err)
{
    json_t *doc = body ? json_loadb (body, len, 0, NULL) : NULL;
    json_t *top = json_is_array (doc) ? json_array_get (doc, 0) : doc;
    json_t *e = json_object_get (top, "error");
    int rc = -1;
    if (json_is_string (e)) {                       /* Ollama: {"error": "model not found"} */
        snprintf (err->message, sizeof err->message, "%s", json_string_value (e));
        rc = 0;
    }
    else if (json_is_object (e)) {
        const char *msg = json_string_value (json_object_get (e, "message"));
        snprintf (err->message, sizeof err->message, "%s", msg ? msg : "(no message)");
        json_t *code = json_object_get (e, "status");
        if (!json_is_string (code)) code = json_object_get (e, "type");
        if (!json_is_string (code)) code = json_object_get (e, "code");
        if (json_is_string (code)) snprintf (err->code, sizeof err->code, "%s", json_string_value (code));
        else if (json_is_integer (code)) snprintf (err->code, sizeof err->code, "%lld", (long long) json_integer_value (code));
        size_t i;
        json_t *d;
        json_array_foreach (json_object_get (e, "details"), i, d) {
            const char *type = json_string_value (json_object_get (d, "@type"));
            size_t tl = type ? strlen (type) : 0;
            if (tl >= 9 && !strcmp (type + tl - 9, "RetryInfo")) {
                int ms = bmq_llm_http_duration_ms (json_string_value (json_object_get (d, "retryDelay")));
                if (ms >= 0) err->retry_after_ms = ms;
            }
        }
        rc = 0;
    }
    json_decref (doc);
    return rc;
}

static bool s_status_retryable (long status)
{
    return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

static bool s_curl_retryable (CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT: case CURLE_COULDNT_RESOLVE_HOST: case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING: case CURLE_SEND_ERROR: case CURLE_RECV_ERROR: case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

/* ---- one exchange ----------------------------------------------------------- */

static void s_xfer_free (s_xfer_t *x)
{
    free (x->body);
    free (x->sse.line);
    free (x->sse.data);
}

/* Hand a plain-JSON 2xx answer to the event callback (a server that ignored alt=sse). */
static int s_events_from_json (s_xfer_t *x, const json_t *doc)
{
    size_t n = json_is_array (doc) ? json_array_size (doc) : 1;
    for (size_t i = 0; i < n; i++) {
        char *text = json_dumps (json_is_array (doc) ? json_array_get (doc, i) : doc, JSON_COMPACT);
        int rc = text ? x->req->on_event (x->req->event_ctx, text, strlen (text)) : -1;
        free (text);
        if (rc) { x->stopped = true; return -1; }
    }
    return 0;
}

static int s_exchange (const bmq_llm_http_request_t *req, const char *payload, struct curl_slist *headers,
                       long timeout_ms, const bmq_llm_http_policy_t *policy, const bmq_llm_http_hooks_t *hooks,
                       json_t **out, bmq_llm_http_error_t *err)
{
    const char *api = req->api_name ? req->api_name : "the API";
    s_xfer_t x = { .req = req, .hooks = hooks, .retry_after_ms = -1 };
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *curl = x.curl = curl_easy_init ();
    if (!curl) { snprintf (err->message, sizeof err->message, "cannot start an HTTP client"); return -1; }
    curl_easy_setopt (curl, CURLOPT_URL, req->url);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 0L);      /* never carry the key to another host */
    curl_easy_setopt (curl, CURLOPT_POST, 1L);
    curl_easy_setopt (curl, CURLOPT_POSTFIELDS, payload);
    curl_easy_setopt (curl, CURLOPT_POSTFIELDSIZE, (long) strlen (payload));
    curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt (curl, CURLOPT_USERAGENT, "blendmq-planner/0.1");
    curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT_MS, (long) (policy->connect_timeout_ms > 0 ? policy->connect_timeout_ms : 10000));
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_on_write);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt (curl, CURLOPT_HEADERFUNCTION, s_on_header);
    curl_easy_setopt (curl, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, s_on_progress);
    curl_easy_setopt (curl, CURLOPT_XFERINFODATA, &x);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode rc = curl_easy_perform (curl);
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &x.status);
    char *ctype_raw = NULL;
    curl_easy_getinfo (curl, CURLINFO_CONTENT_TYPE, &ctype_raw);
    char ctype[64];
    snprintf (ctype, sizeof ctype, "%s", ctype_raw ? ctype_raw : "no content type");
    curl_easy_cleanup (curl);

    err->status = (int) x.status;
    err->retryable = false;
    err->retry_after_ms = -1;
    err->code[0] = 0;
    int result = -1;
    if (rc == CURLE_OK && x.mode == 1 && s_sse_end (&x) == 0) result = 0;
    if (rc != CURLE_OK || x.stopped || x.too_large) {
        if (x.too_large) {
            snprintf (err->code, sizeof err->code, "too_large");
            snprintf (err->message, sizeof err->message, "%s sent more than %u bytes", api, BMQ_HTTP_MAX_BODY);
        }
        else if (x.stopped) {
            snprintf (err->code, sizeof err->code, "bad_response");
            snprintf (err->message, sizeof err->message, "%s sent an event that makes no sense: %s", api,
                      req->event_err && *req->event_err ? req->event_err : "(no detail)");
        }
        else if (rc == CURLE_ABORTED_BY_CALLBACK) {
            snprintf (err->code, sizeof err->code, "cancelled");
            snprintf (err->message, sizeof err->message, "cancelled");
        }
        else {
            err->retryable = s_curl_retryable (rc);
            snprintf (err->code, sizeof err->code, rc == CURLE_OPERATION_TIMEDOUT ? "timeout" : "network");
            snprintf (err->message, sizeof err->message, "%s: %s", rc == CURLE_OPERATION_TIMEDOUT
                      ? "no complete answer in time" : "cannot reach the server", *errbuf ? errbuf : curl_easy_strerror (rc));
        }
        result = -1;
    }
    else if (x.status >= 200 && x.status < 300 && x.mode != 1) {
        json_t *doc = x.body ? json_loadb (x.body, x.len, 0, NULL) : NULL;
        if (!json_is_object (doc) && !json_is_array (doc)) {
            char quote[160];
            s_clip (quote, sizeof quote, x.body ? x.body : "", x.len, 120);
            snprintf (err->code, sizeof err->code, "bad_response");
            snprintf (err->message, sizeof err->message, "%s answered %ld with something that is not JSON (%s, %zu bytes): %s",
                      api, x.status, ctype, x.len, quote);
        }
        else if (req->on_event) {
            if (s_events_from_json (&x, doc) == 0) result = 0;
            else {
                snprintf (err->code, sizeof err->code, "bad_response");
                snprintf (err->message, sizeof err->message, "%s sent an answer that makes no sense: %s", api,
                          req->event_err && *req->event_err ? req->event_err : "(no detail)");
            }
        }
        else { *out = doc; doc = NULL; result = 0; }
        json_decref (doc);
    }
    else if (x.status < 200 || x.status >= 300) {
        bmq_llm_http_error_t parsed = { .retry_after_ms = -1 };
        err->retryable = s_status_retryable (x.status);
        if (bmq_llm_http_parse_error (x.body, x.len, &parsed) == 0) {
            snprintf (err->code, sizeof err->code, "%s", parsed.code);
            snprintf (err->message, sizeof err->message, "%s answered %ld%s%s: %.500s", api, x.status,
                      *parsed.code ? " " : "", parsed.code, parsed.message);
            err->retry_after_ms = parsed.retry_after_ms;
        }
        else {
            char quote[160];
            s_clip (quote, sizeof quote, x.body ? x.body : "", x.len, 120);
            snprintf (err->code, sizeof err->code, "http_%ld", x.status);
            snprintf (err->message, sizeof err->message, "%s answered %ld (%s, %zu bytes)%s%s", api, x.status,
                      ctype, x.len, *quote ? ": " : "", quote);
        }
        if (err->retry_after_ms < 0) err->retry_after_ms = x.retry_after_ms;
    }
    s_xfer_free (&x);
    bmq_llm_http_redact (err->message, sizeof err->message, req->secret);      /* before anyone sees it */
    bmq_llm_http_redact (err->code, sizeof err->code, req->secret);
    bmq_llm_http_utf8_fix (err->message);                                       /* clips may cut a character */
    bmq_llm_http_utf8_fix (err->code);
    return result;
}

/* ---- the retry loop ------------------------------------------------------- */

static bool s_cancelled (const bmq_llm_http_hooks_t *hooks)
{
    return hooks && hooks->cancelled && hooks->cancelled (hooks->ctx);
}

/* Sleep ms in slices; false when cancelled meanwhile. */
static bool s_wait (int ms, const bmq_llm_http_hooks_t *hooks)
{
    int64_t until = bmq_mono_ms () + ms;
    for (int64_t now = bmq_mono_ms (); now < until; now = bmq_mono_ms ()) {
        if (s_cancelled (hooks)) return false;
        int64_t left = until - now;
        usleep ((useconds_t) ((left < S_SLICE_MS ? left : S_SLICE_MS) * 1000));
    }
    return !s_cancelled (hooks);
}

int bmq_llm_http_post (const bmq_llm_http_request_t *req, const bmq_llm_http_policy_t *policy,
                   const bmq_llm_http_hooks_t *hooks, json_t **out, bmq_llm_http_error_t *err)
{
    memset (err, 0, sizeof *err);
    err->retry_after_ms = -1;
    if (out) *out = NULL;
    char *payload = json_dumps (req->body, JSON_COMPACT);
    struct curl_slist *headers = NULL;
    for (const struct curl_slist *h = req->headers; h; h = h->next) headers = curl_slist_append (headers, h->data);
    headers = curl_slist_append (headers, "Content-Type: application/json");
    headers = curl_slist_append (headers, "Expect:");          /* no 100-continue round trip */
    int rc = -1;
    if (!payload || !headers) snprintf (err->message, sizeof err->message, "out of memory");
    for (int attempt = 0; payload && headers; attempt++) {
        int64_t now = bmq_mono_ms ();
        long timeout = policy->request_timeout_ms > 0 ? policy->request_timeout_ms : 60000;
        if (policy->deadline_ms) {
            if (now >= policy->deadline_ms) {
                if (attempt == 0) {
                    snprintf (err->code, sizeof err->code, "timeout");
                    snprintf (err->message, sizeof err->message, "no time left before the planning deadline");
                }
                break;
            }
            if (policy->deadline_ms - now < timeout) timeout = (long) (policy->deadline_ms - now);
        }
        if (s_cancelled (hooks)) { snprintf (err->code, sizeof err->code, "cancelled"); snprintf (err->message, sizeof err->message, "cancelled"); break; }
        err->attempts = attempt + 1;
        int attempts = err->attempts;
        rc = s_exchange (req, payload, headers, timeout, policy, hooks, out, err);
        err->attempts = attempts;
        if (rc == 0 || !err->retryable) break;
        if (attempt >= policy->max_retries) {
            size_t l = strlen (err->message);
            snprintf (err->message + l, sizeof err->message - l, " (gave up after %d attempts)", attempts);
            break;
        }
        int delay = bmq_retry_delay_ms (attempt, policy->retry_base_ms, policy->retry_max_ms, err->retry_after_ms,
                                        policy->retry_after_max_ms);
        if (policy->deadline_ms && bmq_mono_ms () + delay >= policy->deadline_ms) {
            size_t l = strlen (err->message);
            snprintf (err->message + l, sizeof err->message - l, " (a retry in %.1f s would pass the planning deadline)", delay / 1000.0);
            break;
        }
        if (hooks && hooks->retrying) hooks->retrying (hooks->ctx, err, attempt + 1, delay);
        if (!s_wait (delay, hooks)) { snprintf (err->code, sizeof err->code, "cancelled"); snprintf (err->message, sizeof err->message, "cancelled"); rc = -1; break; }
        if (req->on_event) req->on_event (req->event_ctx, NULL, 0);
    }
    if (rc) {
        bmq_llm_http_redact (err->message, sizeof err->message, req->secret);
        bmq_llm_http_redact (err->code, sizeof err->code, req->secret);
        if (!*err->code) snprintf (err->code, sizeof err->code, "error");
        bmq_llm_http_utf8_fix (err->message);
    }
    curl_slist_free_all (headers);
    free (payload);
    return rc;
}

void bmq_llm_http_global_init (void)
{
    curl_global_init (CURL_GLOBAL_DEFAULT);
    srandom ((unsigned) (bmq_mono_us () + getpid ()));
}
