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
 * The gateway may restart under the bridge (a supervisor brings it back).
 * A tool call whose answer stream is cut that way is answered at once with a
 * tool error (isError): its outcome is unknown, and the text says where to
 * look (the plan id when one was seen, `blendmq audit`). The new gateway
 * knows nothing of the old MCP session: the bridge finds the gateway again
 * (its HTTP port may have changed), repeats the client's initialize and
 * notifications/initialized, and sends on what got "Session not found" or
 * could not connect (neither reached a gateway, so nothing runs twice).
 *
 * With no stack in the run dir (no supervisor, no gateway) it starts one first,
 * as `blendmq up` would (with --ipc and --no-blender when given; its output
 * goes to stderr, stdout stays MCP's), so
 * the one-line config of an MCP client just works; --no-start answers an
 * error instead. Two clients starting at once share one stack (a lock file).
 *
 * BLENDMQ_MCP_URL overrides the endpoint (else the running stack's, as
 * `blendmq status` finds it); BLENDMQ_MCP_TOKEN_NAME the key's name (mcp). */
#include "cli.h"
#include "log.h"

#include <czmq.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_INFLIGHT 64
#define REJOIN_MS    20000          /* how long a restarting gateway is waited for */
#define REJOIN_PAUSE_MS 500

static pthread_mutex_t s_out_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t s_session_lock = PTHREAD_MUTEX_INITIALIZER;     /* s_url, s_session, s_version, s_generation */
static pthread_mutex_t s_rejoin_lock = PTHREAD_MUTEX_INITIALIZER;      /* one re-initialization at a time */
static atomic_int s_inflight;
static char s_url[600], s_auth[400], s_session[128], s_version[32];
static unsigned s_generation;          /* sessions opened so far: who saw which */
static char *s_init_body;              /* the client's initialize, to repeat with a new gateway (under s_rejoin_lock) */
static bool s_client_initialized;      /* it sent notifications/initialized */
static bmq_config_t *s_cfg;            /* to find the gateway again (NULL: BLENDMQ_MCP_URL fixes it) */
static json_t *s_cancelled;            /* ids of requests the client cancelled (under s_session_lock) */

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
    bool    answered;        /* the answer to this request went to stdout */
    bool    tool_call;       /* tools/call: its outcome matters */
    bool    quiet;           /* the bridge's own request: nothing of its answer goes to stdout */
    char    tool[80];
    char    plan_id[80];     /* a plan the call's messages named */
    char    session[128], version[32];
    char    method[64], name[256];      /* a request without a session (2026-07-28) repeats them in Mcp-Method, Mcp-Name */
    bool    get;                        /* the session's GET stream (every change to the scene) */
    char    last_event_id[96];          /* … and the id of its last event, to resume from */
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

/* The first plan id ("plan p-…") a text names. */
static void s_find_plan_id (const char *text, char *out, size_t len)
{
    const char *p = text ? strstr (text, "plan p-") : NULL;
    if (!p || *out) return;
    p += 5;
    size_t n = strspn (p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
    if (n > 2 && n < len) snprintf (out, len, "%.*s", (int) n, p);
}

/* A message of this call's answer: is it the answer itself, does it name the plan? */
static void s_note (s_post_t *post, const char *text, size_t len)
{
    json_t *msg = json_loadb (text, len, 0, NULL);
    if (post->id && json_equal (json_object_get (msg, "id"), post->id)
        && (json_object_get (msg, "result") || json_object_get (msg, "error")))
        post->answered = true;
    json_t *params = json_object_get (msg, "params");
    s_find_plan_id (json_string_value (json_object_get (params, "message")), post->plan_id, sizeof post->plan_id);
    s_find_plan_id (json_string_value (json_object_get (params, "data")), post->plan_id, sizeof post->plan_id);
    const char *plan_id = json_string_value (json_object_get (json_object_get (json_object_get (msg, "result"),
                                                                               "structuredContent"), "plan_id"));
    if (plan_id && !post->plan_id[0]) snprintf (post->plan_id, sizeof post->plan_id, "%s", plan_id);
    json_decref (msg);
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
            if (ll >= 3 && !strncmp (line, "id:", 3) && ll - 3 < sizeof post->last_event_id) {
                size_t skip = 3 + (ll > 3 && line[3] == ' ');
                snprintf (post->last_event_id, sizeof post->last_event_id, "%.*s", (int) (ll - skip), line + skip);
            }
            if (ll >= 5 && !strncmp (line, "data:", 5)) {
                size_t skip = 5 + (ll > 5 && line[5] == ' ');
                if (dlen) data[dlen++] = '\n';
                memcpy (data + dlen, line + skip, ll - skip);
                dlen += ll - skip;
            }
            line += (nl ? (size_t) (nl - line) + 1 : ll + 1);
        }
        if (dlen && !post->quiet) { s_note (post, data, dlen); s_write_line (data, dlen); post->wrote = true; }
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

/* One POST of post->body to `url` with the session's headers (session may be
 * ""); the answer lands in post (an SSE answer is written out as it comes). */
static CURLcode s_perform (s_post_t *post, const char *url, const char *session, const char *version)
{
    CURL *c = curl_easy_init ();
    struct curl_slist *h = NULL;
    char line[300];
    if (!post->get) h = curl_slist_append (h, "Content-Type: application/json");
    h = curl_slist_append (h, post->get ? "Accept: text/event-stream" : "Accept: application/json, text/event-stream");
    h = curl_slist_append (h, s_auth);
    if (*session) { snprintf (line, sizeof line, "Mcp-Session-Id: %s", session); h = curl_slist_append (h, line); }
    else if (post->method[0]) {             /* 2026-07-28: no session, the headers repeat the body (SEP-2243) */
        snprintf (line, sizeof line, "Mcp-Method: %s", post->method);
        h = curl_slist_append (h, line);
        if (post->name[0] && !strpbrk (post->name, "\r\n")) { snprintf (line, sizeof line, "Mcp-Name: %s", post->name); h = curl_slist_append (h, line); }
    }
    if (post->get && post->last_event_id[0]) {
        snprintf (line, sizeof line, "Last-Event-ID: %s", post->last_event_id);
        h = curl_slist_append (h, line);
    }
    if (*version) { snprintf (line, sizeof line, "MCP-Protocol-Version: %s", version); h = curl_slist_append (h, line); }
    free (post->buf);
    post->buf = NULL;
    post->len = 0;
    post->sse = false;
    post->status = 0;
    post->session[0] = 0;
    curl_easy_setopt (c, CURLOPT_URL, url);
    if (post->get) curl_easy_setopt (c, CURLOPT_HTTPGET, 1L);
    else curl_easy_setopt (c, CURLOPT_POSTFIELDS, post->body);
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
    curl_slist_free_all (h);
    curl_easy_cleanup (c);
    return rc;
}

/* A JSON answer saying the session is unknown: the gateway restarted. */
static bool s_session_lost (const s_post_t *post)
{
    if (post->status != 404 || post->sse || !post->len) return false;
    json_t *msg = json_loadb (post->buf, post->len, 0, NULL);
    json_int_t code = json_integer_value (json_object_get (json_object_get (msg, "error"), "code"));
    json_decref (msg);
    return code == -32001;
}

/* Find the gateway again and open a new session for the client, as its own
 * initialize did (under s_rejoin_lock). 0 when one is open. */
static int s_reinitialize (void)
{
    char url[sizeof s_url], version[sizeof s_version];
    if (s_cfg) {                        /* a restarted gateway may listen on another port */
        char base[500];
        if (bmq_cli_http_base (s_cfg, base, sizeof base)) return -1;
        snprintf (url, sizeof url, "%s/mcp", base);
    }
    else {
        pthread_mutex_lock (&s_session_lock);
        snprintf (url, sizeof url, "%s", s_url);
        pthread_mutex_unlock (&s_session_lock);
    }
    pthread_mutex_lock (&s_session_lock);
    snprintf (version, sizeof version, "%s", s_version);
    pthread_mutex_unlock (&s_session_lock);
    s_post_t init = { .body = s_init_body, .quiet = true };
    CURLcode rc = s_perform (&init, url, "", "");
    bool ok = rc == CURLE_OK && init.status == 200 && init.session[0];
    if (ok && s_client_initialized) {
        s_post_t note = { .body = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", .quiet = true };
        ok = s_perform (&note, url, init.session, version) == CURLE_OK && note.status < 300;
        free (note.buf);
    }
    if (ok) {
        pthread_mutex_lock (&s_session_lock);
        snprintf (s_url, sizeof s_url, "%s", url);
        snprintf (s_session, sizeof s_session, "%s", init.session);
        s_generation++;
        pthread_mutex_unlock (&s_session_lock);
        bmq_info ("the gateway restarted: a new MCP session at %s", url);
    }
    free (init.buf);
    return ok ? 0 : -1;
}

/* The session of generation `seen` is void (the gateway went away): get a new
 * one, unless another thread already did. Waits up to REJOIN_MS for the
 * gateway to be back. 0 when a newer session is there to use. */
static int s_rejoin (unsigned seen)
{
    pthread_mutex_lock (&s_rejoin_lock);
    int rc = -1;
    for (int64_t until = bmq_mono_ms () + REJOIN_MS; rc && s_init_body; ) {
        pthread_mutex_lock (&s_session_lock);
        bool newer = s_generation != seen;
        pthread_mutex_unlock (&s_session_lock);
        if (newer || !s_reinitialize ()) rc = 0;
        else if (bmq_mono_ms () >= until) break;
        else zclock_sleep (REJOIN_PAUSE_MS);
    }
    pthread_mutex_unlock (&s_rejoin_lock);
    return rc;
}

/* The answer to a tool call the gateway dropped by going away: a tool error. */
static void s_tool_cut (s_post_t *post, CURLcode rc)
{
    char where[300], text[1400];
    if (post->plan_id[0])
        snprintf (where, sizeof where, "plan %s may have run to its end, failed or stopped: `blendmq audit list --plan %s` "
                  "shows its story", post->plan_id, post->plan_id);
    else snprintf (where, sizeof where, "`blendmq audit list --since 10m` shows what the gateway did meanwhile");
    snprintf (text, sizeof text, "The blendmq gateway restarted (or went away) while %s was running (%s), so its outcome is "
              "unknown: %s; check the scene (get_scene_info) before calling it again. Later calls go to the new gateway.",
              post->tool[0] ? post->tool : "this tool call",
              rc == CURLE_OK ? "its answer stream ended without a result" : curl_easy_strerror (rc), where);
    json_t *msg = json_pack ("{s:s, s:O, s:{s:[{s:s, s:s}], s:b}}", "jsonrpc", "2.0", "id", post->id, "result",
                             "content", "type", "text", "text", text, "isError", 1);
    if (post->plan_id[0]) json_object_set_new (json_object_get (msg, "result"), "structuredContent",
                                               json_pack ("{s:s, s:s, s:s}", "plan_id", post->plan_id, "status", "unknown",
                                                          "error", "the gateway restarted while the call ran"));
    s_write_json (msg);
    json_decref (msg);
    post->wrote = post->answered = true;
}

/* Write a JSON (not SSE) answer: the message itself, or an error for the request. */
static void s_write_answer (s_post_t *post)
{
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

/* Did the client cancel request `id` (notifications/cancelled)? Forgets it. */
static bool s_was_cancelled (const json_t *id)
{
    pthread_mutex_lock (&s_session_lock);
    bool found = false;
    size_t i;
    json_t *v;
    json_array_foreach (s_cancelled, i, v)
        if (json_equal (v, (json_t *) id)) { json_array_remove (s_cancelled, i); found = true; break; }
    pthread_mutex_unlock (&s_session_lock);
    return found;
}

static void s_post (s_post_t *post)
{
    CURLcode rc = CURLE_OK;
    char url[sizeof s_url];
    unsigned seen = 0;
    for (int attempt = 0; ; attempt++) {
        char session[sizeof s_session], version[sizeof s_version];
        pthread_mutex_lock (&s_session_lock);
        snprintf (url, sizeof url, "%s", s_url);
        snprintf (session, sizeof session, "%s", s_session);
        snprintf (version, sizeof version, "%s", s_version);
        seen = s_generation;
        pthread_mutex_unlock (&s_session_lock);
        rc = s_perform (post, url, session, version);
        /* nothing reached a gateway (refused connection, unknown session): safe to send again, once */
        bool unsent = rc == CURLE_COULDNT_CONNECT || (rc == CURLE_OK && s_session_lost (post));
        if (!unsent || attempt || post->initialize || s_rejoin (seen)) break;
    }
    /* A tool call's stream ended without its answer: cut (kill, crash), or
     * closed by a gateway stopping. Unless the client cancelled it, say so. */
    bool gone = rc != CURLE_OK ? rc != CURLE_COULDNT_CONNECT && rc != CURLE_COULDNT_RESOLVE_HOST : post->sse && post->status == 200;
    if (post->tool_call && post->id && gone && !post->answered && !s_was_cancelled (post->id)) {
        s_tool_cut (post, rc);
        s_rejoin (seen);                    /* ready for the next call */
        return;
    }
    if (!post->sse && rc == CURLE_OK && post->len) s_write_answer (post);
    if (rc != CURLE_OK && !post->wrote)
        s_error_for (post->id, -32000, "the blendmq gateway at %s does not answer (%s); start the stack with `blendmq up`",
                     url, curl_easy_strerror (rc));
    else if (!post->wrote && post->status >= 400)
        s_error_for (post->id, -32000, "the blendmq gateway answered HTTP %ld", post->status);
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

/* The session's GET stream, as long as the bridge runs: notifications/resources/updated
 * of every change to the scene (whoever made it) for what the client subscribed to,
 * written to stdout like any message. Reopened after a cut (resuming after its last
 * event), on the new session after a gateway restart; given up on a gateway without
 * one (405). A client of 2026-07-28 has no session: it asks subscriptions/listen. */
static void *s_listen_thread (void *arg)
{
    (void) arg;
    char last_id[96] = "";
    unsigned used = 0;
    for (;;) {
        char url[sizeof s_url], session[sizeof s_session], version[sizeof s_version];
        pthread_mutex_lock (&s_session_lock);
        snprintf (url, sizeof url, "%s", s_url);
        snprintf (session, sizeof session, "%s", s_session);
        snprintf (version, sizeof version, "%s", s_version);
        unsigned generation = s_generation;
        pthread_mutex_unlock (&s_session_lock);
        if (!*session) { zclock_sleep (REJOIN_PAUSE_MS); continue; }
        if (generation != used) { last_id[0] = 0; used = generation; }         /* a new session: nothing to resume */
        s_post_t get = { .get = true };
        snprintf (get.last_event_id, sizeof get.last_event_id, "%s", last_id);
        s_perform (&get, url, session, version);
        snprintf (last_id, sizeof last_id, "%s", get.last_event_id);
        bool lost = s_session_lost (&get);
        long status = get.status;
        free (get.buf);
        if (status == 405) { bmq_info ("the gateway has no GET stream: subscriptions hear of this session's own plans only"); break; }
        if (lost) s_rejoin (generation);
        zclock_sleep (REJOIN_PAUSE_MS * 2);
    }
    return NULL;
}

static void s_start_listening (void)
{
    static bool started;
    if (started) return;
    started = true;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init (&attr);
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create (&t, &attr, s_listen_thread, NULL)) bmq_warn ("no GET stream: cannot start its thread");
    pthread_attr_destroy (&attr);
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
    snprintf (post->method, sizeof post->method, "%s", method && strlen (method) < sizeof post->method ? method : "");
    post->initialize = method && !strcmp (method, "initialize");
    json_t *params = json_object_get (msg, "params");
    const char *name = json_string_value (json_object_get (params, method && !strcmp (method, "resources/read") ? "uri" : "name"));
    if (method && (!strcmp (method, "tools/call") || !strcmp (method, "prompts/get") || !strcmp (method, "resources/read")) && name
        && strlen (name) < sizeof post->name)
        snprintf (post->name, sizeof post->name, "%s", name);
    if (method && !strcmp (method, "tools/call")) {
        post->tool_call = true;
        const char *tool = json_string_value (json_object_get (params, "name"));
        snprintf (post->tool, sizeof post->tool, "%s", tool ? tool : "");
    }
    if (method && !strcmp (method, "notifications/initialized")) {
        pthread_mutex_lock (&s_rejoin_lock);
        s_client_initialized = true;
        pthread_mutex_unlock (&s_rejoin_lock);
        s_start_listening ();
    }
    if (method && !strcmp (method, "notifications/cancelled") && json_object_get (params, "requestId")) {
        pthread_mutex_lock (&s_session_lock);           /* its stream will end without an answer: none is due */
        if (json_array_size (s_cancelled) >= MAX_INFLIGHT * 4) json_array_remove (s_cancelled, 0);      /* long answered */
        json_array_append (s_cancelled, json_object_get (params, "requestId"));
        pthread_mutex_unlock (&s_session_lock);
    }
    if (post->initialize) {                  /* first, and alone: it opens the session the rest goes to */
        const char *v = json_string_value (json_object_get (params, "protocolVersion"));
        pthread_mutex_lock (&s_rejoin_lock);             /* kept, to open the same session with a new gateway */
        free (s_init_body);
        s_init_body = strndup (text, len);
        s_client_initialized = false;
        pthread_mutex_unlock (&s_rejoin_lock);
        pthread_mutex_lock (&s_session_lock);
        s_session[0] = 0;
        s_version[0] = 0;
        pthread_mutex_unlock (&s_session_lock);
        s_post (post);
        pthread_mutex_lock (&s_session_lock);
        snprintf (s_session, sizeof s_session, "%s", post->session);
        snprintf (s_version, sizeof s_version, "%s", v ? v : "");
        s_generation++;
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

static bool s_pid_alive (const char *run_dir, const char *name)
{
    char path[1300];
    snprintf (path, sizeof path, "%s/pids/%s.pid", run_dir, name);
    FILE *f = fopen (path, "r");
    int pid = 0;
    if (f) { if (fscanf (f, "%d", &pid) != 1) pid = 0; fclose (f); }
    return pid > 1 && (kill (pid, 0) == 0 || errno == EPERM);
}

/* No stack runs in the run dir: start one the way `blendmq up` does (a child
 * running `up`, its stdout sent to stderr). One starter at a time: a second
 * client waits on the lock, then finds the stack up. 0, or -1 (said why). */
static int s_start_stack (const bmq_cli_opts_t *opts)
{
    if (opts->no_start || opts->config_path || opts->keys_dir || (getenv ("BLENDMQ_MCP_URL") && *getenv ("BLENDMQ_MCP_URL")))
        return 0;
    if (mkdir (opts->run_dir, 0700) && errno != EEXIST) {
        fprintf (stderr, "blendmq mcp: cannot create the run dir %s: %s\n", opts->run_dir, strerror (errno));
        return -1;
    }
    char lock_path[1300];
    snprintf (lock_path, sizeof lock_path, "%s/mcp-start.lock", opts->run_dir);
    int lock = open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lock >= 0) flock (lock, LOCK_EX);
    int rc = 0;
    if (!s_pid_alive (opts->run_dir, "supervisor") && !s_pid_alive (opts->run_dir, "gateway")) {
        fprintf (stderr, "blendmq mcp: no blendmq stack in %s: starting one (`blendmq up`; `blendmq mcp --no-start` does not)\n",
                 opts->run_dir);
        pid_t pid = fork ();
        if (pid == 0) {
            int null = open ("/dev/null", O_RDONLY);         /* stdin is the client's: not for the stack */
            if (null >= 0) dup2 (null, STDIN_FILENO);
            dup2 (STDERR_FILENO, STDOUT_FILENO);            /* stdout is the MCP channel */
            const char *argv[8] = { "blendmq", "--run-dir", opts->run_dir };
            int n = 3;
            if (opts->ipc) argv[n++] = "--ipc";                 /* `blendmq --ipc mcp`: as `up --ipc` */
            if (opts->no_blender) argv[n++] = "--no-blender";
            argv[n++] = "up";
            argv[n] = NULL;
            execv ("/proc/self/exe", (char *const *) argv);
            _exit (127);
        }
        int status = 0;
        if (pid < 0 || waitpid (pid, &status, 0) < 0 || !WIFEXITED (status) || WEXITSTATUS (status)) {
            fprintf (stderr, "blendmq mcp: `blendmq up` failed (logs in %s/logs)\n", opts->run_dir);
            rc = -1;
        }
        else fprintf (stderr, "blendmq mcp: the stack in %s is up (`blendmq --run-dir %s down` stops it)\n", opts->run_dir, opts->run_dir);
    }
    if (lock >= 0) close (lock);                            /* and its lock */
    return rc;
}

int bmq_cli_mcp (const bmq_cli_opts_t *opts)
{
    signal (SIGPIPE, SIG_IGN);
    if (s_start_stack (opts)) return 1;
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    const char *name = getenv ("BLENDMQ_MCP_TOKEN_NAME") && *getenv ("BLENDMQ_MCP_TOKEN_NAME") ? getenv ("BLENDMQ_MCP_TOKEN_NAME") : "mcp";
    char token[300], base[500];
    if (bmq_cli_read_token (opts, cfg, name, token, sizeof token)) { bmq_config_destroy (&cfg); return 2; }
    if (getenv ("BLENDMQ_MCP_URL") && *getenv ("BLENDMQ_MCP_URL")) snprintf (s_url, sizeof s_url, "%s", getenv ("BLENDMQ_MCP_URL"));
    else if (bmq_cli_http_base (cfg, base, sizeof base) == 0) {
        snprintf (s_url, sizeof s_url, "%s/mcp", base);
        s_cfg = cfg;                    /* kept: a restarted gateway is found again the same way */
    }
    else { bmq_config_destroy (&cfg); return 2; }
    if (!s_cfg) bmq_config_destroy (&cfg);
    s_cancelled = json_array ();
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
