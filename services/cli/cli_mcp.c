/* cli_mcp — `blendmq mcp`: an MCP server on stdin/stdout, for AI assistants
 * that start their servers as processes (Claude Desktop, Claude Code, Gemini
 * CLI, Cursor: {"command": "blendmq", "args": ["mcp"]}).
 *
 * A bridge to the gateway's MCP Streamable HTTP endpoint (/mcp), so that a
 * stdio client is exactly as trusted as an HTTP one: every message goes with
 * the `mcp` client's token from the keys dir (<run dir>/keys/mcp.token, role
 * operator), and the gateway applies that role to each tool and asks a person
 * (elicitation) before confirm_script. One JSON-RPC message per line each way;
 * stdout carries nothing else (logs go to stderr). Each message is one POST
 * on a thread of its own, so several tool calls run at once, ping answers
 * while a plan runs, notifications/cancelled reaches the call it names, and
 * the answer to an elicitation/create goes back while its tool call waits.
 * A call's SSE answer (progress, log messages, the server's questions, the
 * result) is written to stdout message by message.
 *
 * BLENDMQ_MCP_URL overrides the endpoint (else the running stack's, as
 * `blendmq status` finds it); BLENDMQ_MCP_TOKEN_NAME the key's name (mcp). */
#include "cli.h"
#include "log.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_INFLIGHT 64

static pthread_mutex_t s_out_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t s_session_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int s_inflight;
static char s_url[600], s_auth[400], s_session[128], s_version[32];

static void s_write_line (const char *text, size_t len)
{
    pthread_mutex_lock (&s_out_lock);
    if (fwrite (text, 1, len, stdout) != len || fputc ('\n', stdout) == EOF || fflush (stdout) == EOF)
        bmq_warn ("stdout closed: %s", strerror (errno));
    pthread_mutex_unlock (&s_out_lock);
}

static void s_write_json (json_t *msg)
{
    char *text = json_dumps (msg, JSON_COMPACT);
    if (text) s_write_line (text, strlen (text));
    free (text);
}

static void s_error_for (const json_t *id, int code, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
static void s_error_for (const json_t *id, int code, const char *fmt, ...)
{
    if (!id) return;                       /* notifications get no answer */
    char text[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    json_t *err = json_pack ("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code", code, "message", text);
    s_write_json (err);
    json_decref (err);
}

typedef struct {
    char   *body;            /* the message as read */
    json_t *id;              /* its id when it is a request */
    bool    initialize;
    /* the answer */
    bool    sse;
    long    status;
    char   *buf;             /* JSON body, or SSE not yet split */
    size_t  len;
    bool    wrote;           /* a message went to stdout */
    char    session[128], version[32];
} s_post_t;

static size_t s_on_header (char *p, size_t size, size_t n, void *arg)
{
    s_post_t *post = arg;
    size_t len = size * n;
    char line[256];
    snprintf (line, sizeof line, "%.*s", (int) (len < 255 ? len : 255), p);
    line[strcspn (line, "\r\n")] = 0;
    if (!strncasecmp (line, "content-type:", 13) && strcasestr (line, "text/event-stream")) post->sse = true;
    if (!strncasecmp (line, "mcp-session-id:", 15)) snprintf (post->session, sizeof post->session, "%s", line + 15 + strspn (line + 15, " "));
    return len;
}

/* Write each complete SSE event's data as one line. */
static void s_drain_sse (s_post_t *post, bool end)
{
    for (;;) {
        char *sep = post->len ? strstr (post->buf, "\n\n") : NULL;
        if (!sep && !end) return;
        size_t evlen = sep ? (size_t) (sep - post->buf) : post->len;
        if (!evlen && !sep) return;
        char *data = calloc (1, evlen + 1);
        size_t dlen = 0;
        for (char *line = post->buf; line < post->buf + evlen; ) {
            char *nl = memchr (line, '\n', (size_t) (post->buf + evlen - line));
            size_t ll = nl ? (size_t) (nl - line) : (size_t) (post->buf + evlen - line);
            if (ll && line[ll - 1] == '\r') ll--;
            if (ll >= 5 && !strncmp (line, "data:", 5)) {
                size_t skip = 5 + (ll > 5 && line[5] == ' ');
                if (dlen) data[dlen++] = '\n';
                memcpy (data + dlen, line + skip, ll - skip);
                dlen += ll - skip;
            }
            line += (nl ? (size_t) (nl - line) + 1 : ll + 1);
        }
        if (dlen) { s_write_line (data, dlen); post->wrote = true; }
        free (data);
        size_t used = sep ? evlen + 2 : post->len;
        memmove (post->buf, post->buf + used, post->len - used + 1);
        post->len -= used;
        if (!sep) return;
    }
}

static size_t s_on_body (char *p, size_t size, size_t n, void *arg)
{
    s_post_t *post = arg;
    size_t len = size * n;
    post->buf = realloc (post->buf, post->len + len + 1);
    memcpy (post->buf + post->len, p, len);
    post->len += len;
    post->buf[post->len] = 0;
    if (post->sse) s_drain_sse (post, false);
    return len;
}

static void s_post (s_post_t *post)
{
    CURL *c = curl_easy_init ();
    struct curl_slist *h = NULL;
    char line[300];
    h = curl_slist_append (h, "Content-Type: application/json");
    h = curl_slist_append (h, "Accept: application/json, text/event-stream");
    h = curl_slist_append (h, s_auth);
    pthread_mutex_lock (&s_session_lock);
    if (*s_session) { snprintf (line, sizeof line, "Mcp-Session-Id: %s", s_session); h = curl_slist_append (h, line); }
    if (*s_version) { snprintf (line, sizeof line, "MCP-Protocol-Version: %s", s_version); h = curl_slist_append (h, line); }
    pthread_mutex_unlock (&s_session_lock);
    curl_easy_setopt (c, CURLOPT_URL, s_url);
    curl_easy_setopt (c, CURLOPT_POSTFIELDS, post->body);
    curl_easy_setopt (c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt (c, CURLOPT_HEADERFUNCTION, s_on_header);
    curl_easy_setopt (c, CURLOPT_HEADERDATA, post);
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, s_on_body);
    curl_easy_setopt (c, CURLOPT_WRITEDATA, post);
    curl_easy_setopt (c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (c, CURLOPT_CONNECTTIMEOUT, 10L);
    CURLcode rc = curl_easy_perform (c);
    curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &post->status);
    if (post->sse) s_drain_sse (post, true);
    else if (rc == CURLE_OK && post->len) {
        json_t *msg = json_loadb (post->buf, post->len, 0, NULL);
        if (json_object_get (msg, "jsonrpc")) {
            if (json_is_null (json_object_get (msg, "id")) && post->id) json_object_set (msg, "id", post->id);
            s_write_json (msg);
            post->wrote = true;
        }
        else if (post->status >= 400) {          /* 401, 403: {"error": {"code", "message"}} */
            const char *m = json_string_value (json_object_get (json_object_get (msg, "error"), "message"));
            s_error_for (post->id, -32001, "blendmq gateway refused (HTTP %ld): %s", post->status, m ? m : post->buf);
            post->wrote = true;
        }
        json_decref (msg);
    }
    if (rc != CURLE_OK && !post->wrote)
        s_error_for (post->id, -32000, "the blendmq gateway at %s does not answer (%s); start the stack with `blendmq up`",
                     s_url, curl_easy_strerror (rc));
    else if (!post->wrote && post->status >= 400)
        s_error_for (post->id, -32000, "the blendmq gateway answered HTTP %ld", post->status);
    curl_slist_free_all (h);
    curl_easy_cleanup (c);
}

static void s_post_free (s_post_t *post)
{
    free (post->body);
    free (post->buf);
    json_decref (post->id);
    free (post);
}

static void *s_thread (void *arg)
{
    s_post (arg);
    s_post_free (arg);
    atomic_fetch_sub (&s_inflight, 1);
    return NULL;
}

static void s_on_line (char *text, size_t len)
{
    json_error_t jerr;
    json_t *msg = json_loadb (text, len, 0, &jerr);
    if (!msg) {
        json_t *null_id = json_null ();
        s_error_for (null_id, -32700, "Parse error: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
        json_decref (null_id);
        return;
    }
    s_post_t *post = calloc (1, sizeof *post);
    post->body = strndup (text, len);
    json_t *id = json_object_get (msg, "id");
    const char *method = json_string_value (json_object_get (msg, "method"));
    if (method && (json_is_string (id) || json_is_integer (id))) post->id = json_incref (id);
    post->initialize = method && !strcmp (method, "initialize");
    if (post->initialize) {                  /* first, and alone: it opens the session the rest goes to */
        const char *v = json_string_value (json_object_get (json_object_get (msg, "params"), "protocolVersion"));
        pthread_mutex_lock (&s_session_lock);
        s_session[0] = 0;
        s_version[0] = 0;
        pthread_mutex_unlock (&s_session_lock);
        s_post (post);
        pthread_mutex_lock (&s_session_lock);
        snprintf (s_session, sizeof s_session, "%s", post->session);
        snprintf (s_version, sizeof s_version, "%s", v ? v : "");
        pthread_mutex_unlock (&s_session_lock);
        s_post_free (post);
    }
    else if (atomic_load (&s_inflight) >= MAX_INFLIGHT) {
        s_error_for (post->id, -32000, "too many requests in flight");
        s_post_free (post);
    }
    else {
        atomic_fetch_add (&s_inflight, 1);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init (&attr);
        pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create (&t, &attr, s_thread, post)) { atomic_fetch_sub (&s_inflight, 1); s_post (post); s_post_free (post); }
        pthread_attr_destroy (&attr);
    }
    json_decref (msg);
}

int bmq_cli_mcp (const bmq_cli_opts_t *opts)
{
    signal (SIGPIPE, SIG_IGN);
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    const char *name = getenv ("BLENDMQ_MCP_TOKEN_NAME") && *getenv ("BLENDMQ_MCP_TOKEN_NAME") ? getenv ("BLENDMQ_MCP_TOKEN_NAME") : "mcp";
    char token[300], base[500];
    if (bmq_cli_read_token (opts, cfg, name, token, sizeof token)) { bmq_config_destroy (&cfg); return 2; }
    if (getenv ("BLENDMQ_MCP_URL") && *getenv ("BLENDMQ_MCP_URL")) snprintf (s_url, sizeof s_url, "%s", getenv ("BLENDMQ_MCP_URL"));
    else if (bmq_cli_http_base (cfg, base, sizeof base) == 0) snprintf (s_url, sizeof s_url, "%s/mcp", base);
    else { bmq_config_destroy (&cfg); return 2; }
    bmq_config_destroy (&cfg);
    snprintf (s_auth, sizeof s_auth, "Authorization: Bearer %s", token);
    memset (token, 0, sizeof token);
    curl_global_init (CURL_GLOBAL_DEFAULT);
    bmq_info ("MCP on stdio, bridged to %s as client '%s'", s_url, name);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline (&line, &cap, stdin)) >= 0) {
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (n) s_on_line (line, (size_t) n);
    }
    free (line);
    /* The client went away. As over HTTP, a disconnection is not a cancellation:
     * plans already started run to their end. Answers still coming have no reader. */
    pthread_mutex_lock (&s_out_lock);
    memset (s_auth, 0, sizeof s_auth);
    _exit (0);
}
