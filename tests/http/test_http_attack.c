/* Issue 24's attacks on the gateway's HTTP face, each of which worked on a
 * default `blendmq up` before, against the real HTTP server and a fake gateway
 * loop (fake_gateway.c), with the default flood settings:
 *   slow_loris      600 half-sent connections (and 100 trickling a body after
 *                   their 401): /healthz and an authenticated request still
 *                   answer within 1 s; every one of them is cut
 *   stream_flood    515 event streams from one viewer: 16 live, the rest 429;
 *                   /healthz and another token within 1 s
 *   mcp_sessions    1,000 MCP sessions by a viewer do not evict an operator's
 *   self_elicit     an MCP client that declares elicitation and would answer
 *                   it itself (security.mcp_confirm: person, the default): it is
 *                   never asked, nothing is confirmed, the script waits for a
 *                   person; with elicitation opted into, an operator token is
 *                   still refused (a confirmation keeps the token's own role)
 *   cross_site      the page's session cookie (__Host-, Secure) from another
 *                   origin, without JSON, without the nonce: refused, nothing
 *                   confirmed; with the page's own nonce: confirmed, channel page
 *   login_code      `web --open`'s one-time code: good once, for a bearer only
 * Figures (latencies under flood) are printed. */
#include "config.h"
#include "fake_gateway.h"
#include "http_auth.h"
#include "http_server.h"
#include "mcp_call.h"
#include "peer.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define GW "inproc://test-http-attack-gateway"

enum { VIEWER, OPERATOR, REVIEWER, MCP, WEB, NKEYS };
static const char *s_names[] = { "viewer1", "operator1", "reviewer1", "mcp", "web" };
static const char *s_roles[] = { "viewer", "operator", "reviewer", "operator", "admin" };       /* web: an old keys dir's */
static char s_tok[NKEYS][80];
static char s_keys[64];
static fake_gateway_t *s_gw;

static void s_add_key (const char *name, const char *role, char *token, size_t len)
{
    unsigned char bytes[32];
    randombytes_buf (bytes, sizeof bytes);
    sodium_bin2hex (token, len, bytes, sizeof bytes);
    char path[256];
    snprintf (path, sizeof path, "%s/%s.token", s_keys, name);
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    assert_true (fd >= 0);
    assert_int_equal (write (fd, token, strlen (token)), (ssize_t) strlen (token));
    close (fd);
    zcert_t *cert = zcert_new ();
    zcert_set_meta (cert, "name", "%s", name);
    zcert_set_meta (cert, "role", "%s", role);
    snprintf (path, sizeof path, "%s/%s.cert", s_keys, name);
    assert_int_equal (zcert_save_public (cert, path), 0);
    chmod (path, 0600);
    zcert_destroy (&cert);
}

/* A server with the defaults of deploy/blendmq.yaml's http: section (zeros). */
static bmq_http_server_t *s_server (bool elicitation)
{
    bmq_http_options_t o = { .bind = "127.0.0.1", .port = 0, .token = "", .keys_dir = s_keys, .allowed_origins = "",
                             .max_body = 1u << 20, .max_connections = 512, .event_buffer = 64, .request_timeout_ms = 3000,
                             .capabilities_cache_ms = 60000, .gateway_endpoint = GW, .mcp_confirm_elicitation = elicitation };
    char err[256];
    bmq_http_server_t *srv = bmq_http_server_new (&o, err, sizeof err);
    if (!srv) fprintf (stderr, "%s\n", err);
    assert_non_null (srv);
    fake_gateway_attach (s_gw, srv);
    bmq_http_server_tick (srv);
    return srv;
}

static int s_setup (void **state)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    zsys_set_max_sockets (0);
    snprintf (s_keys, sizeof s_keys, "/tmp/bmq-http-attack-XXXXXX");
    if (!mkdtemp (s_keys)) return -1;
    for (int i = 0; i < NKEYS; i++) s_add_key (s_names[i], s_roles[i], s_tok[i], sizeof s_tok[i]);
    s_gw = fake_gateway_new (GW, NULL);
    return s_gw ? 0 : -1;
}

static int s_teardown (void **state)
{
    fake_gateway_destroy (&s_gw);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_keys);
    return system (cmd) == 0 ? 0 : -1;
}

/* ---- raw HTTP, to hold sockets open and time answers ------------------------------ */

static int s_connect (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    inet_pton (AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect (fd, (struct sockaddr *) &a, sizeof a)) { close (fd); return -1; }
    return fd;
}

typedef struct {
    long   status;
    char   text[16384];          /* head and body */
    double ms;                   /* until the whole answer came */
} s_answer_t;

/* Send `request` on a new connection ("Connection: close" is the caller's) and
 * read the answer to the end, or for timeout_ms. */
static s_answer_t s_ask (int port, const char *request, int timeout_ms)
{
    s_answer_t a = { 0 };
    int64_t t0 = bmq_mono_us ();
    int fd = s_connect (port);
    if (fd < 0) { a.ms = -1; return a; }
    assert_int_equal (write (fd, request, strlen (request)), (ssize_t) strlen (request));
    size_t len = 0;
    int64_t until = bmq_mono_ms () + timeout_ms;
    while (len < sizeof a.text - 1 && bmq_mono_ms () < until) {
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll (&p, 1, 50) <= 0) continue;
        ssize_t n = read (fd, a.text + len, sizeof a.text - 1 - len);
        if (n <= 0) break;
        len += (size_t) n;
    }
    a.text[len] = 0;
    close (fd);
    a.ms = (bmq_mono_us () - t0) / 1000.0;
    if (!strncmp (a.text, "HTTP/1.", 7)) a.status = strtol (a.text + 9, NULL, 10);
    return a;
}

static s_answer_t s_get (int port, const char *path, int who)
{
    char req[512];
    snprintf (req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s%s%sConnection: close\r\n\r\n", path, port,
              who >= 0 ? "Authorization: Bearer " : "", who >= 0 ? s_tok[who] : "", who >= 0 ? "\r\n" : "");
    return s_ask (port, req, 5000);
}

/* ---- slow-loris ------------------------------------------------------------------------ */

static void test_slow_loris (void **state)
{
    enum { N = 600 };
    bmq_http_server_t *srv = s_server (false);
    int port = bmq_http_server_port (srv);
    static int fds[N];
    int opened = 0;
    for (int i = 0; i < N; i++) {
        fds[i] = s_connect (port);
        if (fds[i] < 0) continue;
        opened++;
        const char *half = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
        if (write (fds[i], half, strlen (half)) < 0) { }
    }
    assert_int_equal (opened, N);
    /* and 100 that send whole headers (no token: 401 at once) and then trickle a long body: libmicrohttpd
     * closes a connection whose request was answered before its body came, so these go at once */
    enum { B = 100 };
    static int bodies[B];
    for (int i = 0; i < B; i++) {
        bodies[i] = s_connect (port);
        assert_true (bodies[i] >= 0);
        const char *head = "POST /api/scripts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{";
        if (write (bodies[i], head, strlen (head)) < 0) { }
    }
    zclock_sleep (300);                     /* every one of them is in */
    double worst = 0;
    for (int round = 0; round < 4; round++) {
        s_answer_t h = s_get (port, "/healthz", -1);
        s_answer_t w = s_get (port, "/api/whoami", VIEWER);
        printf ("slow-loris (%d half-sent): /healthz %ld in %.1f ms, authenticated /api/whoami %ld in %.1f ms\n", N, h.status, h.ms,
                w.status, w.ms);
        assert_int_equal (h.status, 200);
        assert_int_equal (w.status, 200);
        assert_true (h.ms < 1000 && w.ms < 1000);
        if (h.ms > worst) worst = h.ms;
        if (w.ms > worst) worst = w.ms;
        /* the attacker goes on trickling a byte now and then: still cut at the header deadline */
        for (int i = 0; i < N; i += 7) if (write (fds[i], "a", 1) < 0) { }
        for (int i = 0; i < B; i++) if (write (bodies[i], " ", 1) < 0) { }
        zclock_sleep (500);
    }
    /* past http.header_timeout_ms (3 s) every half-sent connection has been shut */
    zclock_sleep (3500);
    int cut = 0;
    for (int i = 0; i < N; i++) {
        struct pollfd p = { fds[i], POLLIN, 0 };
        char c;
        if (poll (&p, 1, 0) == 1 && read (fds[i], &c, 1) <= 0) cut++;
        close (fds[i]);
    }
    int bodies_cut = 0;
    for (int i = 0; i < B; i++) {
        char buf[4096];
        ssize_t n;
        struct pollfd p = { bodies[i], POLLIN, 0 };
        while (poll (&p, 1, 0) == 1 && (n = read (bodies[i], buf, sizeof buf)) > 0) { }      /* the 401, then the end */
        if (poll (&p, 1, 0) == 1 && read (bodies[i], buf, 1) <= 0) bodies_cut++;
        close (bodies[i]);
    }
    printf ("slow-loris: worst answer %.1f ms; %d of %d half-sent connections and %d of %d trickled bodies cut by the server\n",
            worst, cut, N, bodies_cut, B);
    assert_int_equal (cut, N);
    assert_int_equal (bodies_cut, B);
    bmq_http_server_destroy (&srv);
}

/* ---- event-stream flood ----------------------------------------------------------------- */

static void test_stream_flood (void **state)
{
    enum { N = 515 };
    bmq_http_server_t *srv = s_server (false);
    int port = bmq_http_server_port (srv);
    static int fds[N];
    char req[512];
    snprintf (req, sizeof req, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n\r\n", port, s_tok[VIEWER]);
    for (int i = 0; i < N; i++) {
        fds[i] = s_connect (port);
        assert_true (fds[i] >= 0);
        assert_int_equal (write (fds[i], req, strlen (req)), (ssize_t) strlen (req));
    }
    int live = 0, refused = 0;
    for (int i = 0; i < N; i++) {
        char buf[512] = "";
        struct pollfd p = { fds[i], POLLIN, 0 };
        if (poll (&p, 1, 3000) == 1 && read (fds[i], buf, sizeof buf - 1) > 0) {
            if (!strncmp (buf, "HTTP/1.1 200", 12)) live++;
            else if (!strncmp (buf, "HTTP/1.1 429", 12)) refused++;
        }
    }
    s_answer_t h = s_get (port, "/healthz", -1);
    s_answer_t w = s_get (port, "/api/whoami", OPERATOR);
    s_answer_t v = s_get (port, "/api/events", VIEWER);      /* the viewer's own next stream: refused at once */
    printf ("stream flood (%d from one viewer): %d live, %d refused 429; /healthz %.1f ms, another token %.1f ms\n", N, live, refused,
            h.ms, w.ms);
    assert_int_equal (live, 16);                 /* http.streams_per_token */
    assert_int_equal (refused, N - 16);
    assert_int_equal (h.status, 200);
    assert_int_equal (w.status, 200);
    assert_true (h.ms < 1000 && w.ms < 1000);
    assert_int_equal (v.status, 429);
    assert_non_null (strstr (v.text, "too_many_streams"));
    for (int i = 0; i < N; i++) close (fds[i]);
    /* closed streams give their room back (each notices its reader left within a second) */
    zclock_sleep (2500);
    bmq_http_server_catch_up (srv);
    int fd = s_connect (port);
    assert_int_equal (write (fd, req, strlen (req)), (ssize_t) strlen (req));
    char buf[64] = "";
    struct pollfd p = { fd, POLLIN, 0 };
    assert_int_equal (poll (&p, 1, 3000), 1);
    assert_true (read (fd, buf, sizeof buf - 1) > 0);
    assert_int_equal (strncmp (buf, "HTTP/1.1 200", 12), 0);
    close (fd);
    bmq_http_server_destroy (&srv);
}

/* ---- MCP sessions ------------------------------------------------------------------------- */

static char *s_mcp_init (int port, int who, bool elicitation, long *status)
{
    char body[400], req[1200];
    snprintf (body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
              "\"capabilities\":%s,\"clientInfo\":{\"name\":\"attack-test\",\"version\":\"1\"}}}", elicitation ? "{\"elicitation\":{}}" : "{}");
    snprintf (req, sizeof req, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
              "Accept: application/json, text/event-stream\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s", port, s_tok[who],
              strlen (body), body);
    s_answer_t a = s_ask (port, req, 5000);
    *status = a.status;
    const char *h = strcasestr (a.text, "\r\nMcp-Session-Id: ");
    if (!h) return NULL;
    h += 18;
    return strndup (h, strcspn (h, "\r\n"));
}

static long s_mcp_ping (int port, int who, const char *sid)
{
    const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    char req[1200];
    snprintf (req, sizeof req, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
              "Accept: application/json\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: %zu\r\n"
              "Connection: close\r\n\r\n%s", port, s_tok[who], sid, strlen (body), body);
    return s_ask (port, req, 5000).status;
}

static void test_mcp_session_flood (void **state)
{
    bmq_http_server_t *srv = s_server (false);
    int port = bmq_http_server_port (srv);
    long status;
    char *mine = s_mcp_init (port, OPERATOR, false, &status);
    assert_non_null (mine);
    assert_int_equal (s_mcp_ping (port, OPERATOR, mine), 200);
    char *first = s_mcp_init (port, VIEWER, false, &status);
    assert_non_null (first);
    int64_t t0 = bmq_mono_ms ();
    int opened = 1;
    for (int i = 1; i < 1000; i++) {
        char *sid = s_mcp_init (port, VIEWER, false, &status);
        if (sid) opened++;
        free (sid);
    }
    printf ("MCP session flood: a viewer opened %d sessions in %lld ms\n", opened, (long long) (bmq_mono_ms () - t0));
    assert_int_equal (opened, 1000);
    /* the operator's session lives; the viewer lost its own oldest (http.mcp_sessions_per_token) */
    assert_int_equal (s_mcp_ping (port, OPERATOR, mine), 200);
    assert_int_equal (s_mcp_ping (port, VIEWER, first), 404);
    free (first);
    free (mine);
    bmq_http_server_destroy (&srv);
}

/* ---- confirm_script: a person confirms, not the client ------------------------------------- */

static void test_self_answered_elicitation (void **state)
{
    bmq_http_server_t *srv = s_server (false);              /* security.mcp_confirm: person (the default) */
    int port = bmq_http_server_port (srv);
    long status;
    char *sid = s_mcp_init (port, MCP, true, &status);
    assert_non_null (sid);
    json_decref (fake_gateway_last (s_gw));
    char body[600], req[2000];
    snprintf (body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"confirm_script\","
              "\"arguments\":{\"script_id\":\"s-ok\",\"sha256\":\"%s\",\"wait_s\":2}}}", FAKE_SCRIPT_SHA);
    snprintf (req, sizeof req, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
              "Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
              port, s_tok[MCP], sid, strlen (body), body);
    /* the client is ready to answer any question itself: it sends "accept, confirm" for every id it could guess */
    int fd = s_connect (port);
    assert_int_equal (write (fd, req, strlen (req)), (ssize_t) strlen (req));
    char stream[16384] = "";
    size_t len = 0;
    int64_t until = bmq_mono_ms () + 8000;
    bool asked_pending = false;
    while (bmq_mono_ms () < until && len < sizeof stream - 1) {
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll (&p, 1, 100) <= 0) continue;
        ssize_t n = read (fd, stream + len, sizeof stream - 1 - len);
        if (n <= 0) break;
        len += (size_t) n;
        stream[len] = 0;
        if (!asked_pending) {
            json_t *pending = bmq_mcp_pending_confirmations ();
            asked_pending = json_array_size (pending) > 0;
            json_decref (pending);
        }
    }
    close (fd);
    char answer[400];
    snprintf (answer, sizeof answer, "{\"jsonrpc\":\"2.0\",\"id\":\"elicit-x\",\"result\":{\"action\":\"accept\",\"content\":{\"confirm\":true}}}");
    snprintf (req, sizeof req, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
              "Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
              port, s_tok[MCP], sid, strlen (answer), answer);
    s_ask (port, req, 3000);
    assert_null (strstr (stream, "elicitation/create"));             /* never asked the client */
    assert_non_null (strstr (stream, "\"status\":\"pending\""));
    assert_non_null (strstr (stream, "blendmq script apply s-ok --confirm --sha256"));
    assert_true (asked_pending);                                      /* the page lists it for a person */
    json_t *last = fake_gateway_last (s_gw);
    assert_string_equal (json_string_value (json_object_get (last, "type")), "script.list");     /* no script.confirm went out */
    json_decref (last);
    s_answer_t c = s_get (port, "/api/confirmations", VIEWER);
    assert_non_null (strstr (c.text, "\"script_id\":\"s-ok\""));
    assert_non_null (strstr (c.text, "\"name\":\"mcp\""));
    free (sid);
    bmq_http_server_destroy (&srv);
    /* elicitation opted into: an operator token still may not confirm (its own role, never an elevated one) */
    srv = s_server (true);
    port = bmq_http_server_port (srv);
    sid = s_mcp_init (port, MCP, true, &status);
    snprintf (req, sizeof req, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
              "Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
              port, s_tok[MCP], sid, strlen (body), body);
    json_decref (fake_gateway_last (s_gw));
    s_answer_t r = s_ask (port, req, 5000);
    assert_non_null (strstr (r.text, "a confirmation needs reviewer"));
    assert_null (strstr (r.text, "elicitation/create"));
    last = fake_gateway_last (s_gw);
    assert_true (!last || strcmp (json_string_value (json_object_get (last, "type")), "script.confirm"));
    json_decref (last);
    free (sid);
    bmq_http_server_destroy (&srv);
}

/* ---- the page's cookie from another origin ------------------------------------------------- */

/* The page's session: GET /?token=T → its cookie value (the Set-Cookie line checked). */
static char *s_session (int port, int who)
{
    char path[200];
    snprintf (path, sizeof path, "/?token=%s", s_tok[who]);
    s_answer_t a = s_get (port, path, -1);
    assert_int_equal (a.status, 303);
    const char *h = strcasestr (a.text, "\r\nSet-Cookie: ");
    assert_non_null (h);
    h += 14;
    char line[400];
    snprintf (line, sizeof line, "%.*s", (int) strcspn (h, "\r\n"), h);
    assert_int_equal (strncmp (line, "__Host-blendmq_session=", 23), 0);
    assert_non_null (strstr (line, "; Secure"));
    assert_non_null (strstr (line, "; Path=/"));
    assert_non_null (strstr (line, "HttpOnly"));
    assert_null (strcasestr (line, "Domain="));
    return strndup (line, strcspn (line, ";"));
}

static s_answer_t s_confirm (int port, const char *cookie, const char *origin, const char *type, const char *csrf)
{
    char body[200], req[1500];
    snprintf (body, sizeof body, "{\"sha256\":\"%s\"}", FAKE_SCRIPT_SHA);
    snprintf (req, sizeof req, "POST /api/scripts/s-ok/confirm HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nCookie: %s\r\n%s%s%s%s%s%s%s%s%s"
              "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", port, cookie, origin ? "Origin: " : "", origin ? origin : "",
              origin ? "\r\n" : "", type ? "Content-Type: " : "", type ? type : "", type ? "\r\n" : "", csrf ? "X-Blendmq-Csrf: " : "",
              csrf ? csrf : "", csrf ? "\r\n" : "", strlen (body), body);
    return s_ask (port, req, 8000);
}

static bool s_confirm_reached_gateway (void)
{
    json_t *last = fake_gateway_last (s_gw);
    bool yes = last && !strcmp (json_string_value (json_object_get (last, "type")), "script.confirm");
    json_decref (last);
    return yes;
}

static void test_cross_site_confirm (void **state)
{
    bmq_http_server_t *srv = s_server (false);
    int port = bmq_http_server_port (srv);
    char *cookie = s_session (port, REVIEWER);
    char own[64];
    snprintf (own, sizeof own, "http://127.0.0.1:%d", port);
    json_decref (fake_gateway_last (s_gw));
    /* the attack as shown: a page on another loopback port, fetch no-cors with a Blob body (no Content-Type) */
    s_answer_t a = s_confirm (port, cookie, "http://127.0.0.1:8000", NULL, NULL);
    assert_int_equal (a.status, 403);
    assert_non_null (strstr (a.text, "origin_not_allowed"));
    assert_null (strstr (a.text, "Access-Control-Allow-Origin"));
    assert_false (s_confirm_reached_gateway ());
    /* text/plain (a form, or a Blob with a type): 415 even without Origin */
    a = s_confirm (port, cookie, NULL, "text/plain", NULL);
    assert_int_equal (a.status, 415);
    assert_false (s_confirm_reached_gateway ());
    /* JSON from the page's own origin, without the nonce */
    a = s_confirm (port, cookie, own, "application/json", NULL);
    assert_int_equal (a.status, 403);
    assert_non_null (strstr (a.text, "\"csrf\""));
    a = s_confirm (port, cookie, own, "application/json", "0000000000000000000000000000000000000000000000000000000000000000");
    assert_int_equal (a.status, 403);
    assert_false (s_confirm_reached_gateway ());
    /* the page reads its nonce (same origin) and confirms: the channel is "page" */
    char req[800];
    snprintf (req, sizeof req, "GET /api/whoami HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nCookie: %s\r\nConnection: close\r\n\r\n", port, cookie);
    s_answer_t me = s_ask (port, req, 5000);
    assert_int_equal (me.status, 200);
    json_t *who = json_loads (strstr (me.text, "\r\n\r\n") + 4, 0, NULL);
    const char *csrf = json_string_value (json_object_get (who, "csrf"));
    assert_non_null (csrf);
    assert_int_equal (strlen (csrf), 64);
    a = s_confirm (port, cookie, own, "application/json", csrf);
    assert_int_equal (a.status, 200);
    json_t *last = fake_gateway_last (s_gw);
    assert_string_equal (json_string_value (json_object_get (last, "type")), "script.confirm");
    assert_string_equal (json_string_value (json_object_get (json_object_get (last, "body"), "channel")), "page");
    json_decref (last);
    /* a bearer token is asked for no nonce (no page sends it unasked), and has no session's */
    snprintf (req, sizeof req, "GET /api/whoami HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n",
              port, s_tok[REVIEWER]);
    me = s_ask (port, req, 5000);
    assert_null (strstr (me.text, "csrf"));
    json_decref (who);
    free (cookie);
    bmq_http_server_destroy (&srv);
}

/* ---- blendmq web --open's one-time code ------------------------------------------------------ */

static void test_login_code (void **state)
{
    bmq_http_server_t *srv = s_server (false);
    int port = bmq_http_server_port (srv);
    char req[800];
    snprintf (req, sizeof req, "POST /api/web/login-code HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
              "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", port, s_tok[REVIEWER]);
    s_answer_t a = s_ask (port, req, 5000);
    assert_int_equal (a.status, 201);
    json_t *body = json_loads (strstr (a.text, "\r\n\r\n") + 4, 0, NULL);
    const char *path = json_string_value (json_object_get (body, "path"));
    assert_non_null (path);
    assert_null (strstr (path, s_tok[REVIEWER]));
    assert_true (json_integer_value (json_object_get (body, "expires_in_ms")) <= 60000);
    s_answer_t once = s_get (port, path, -1);
    assert_int_equal (once.status, 303);
    assert_non_null (strstr (once.text, "__Host-blendmq_session=reviewer1."));
    s_answer_t twice = s_get (port, path, -1);
    assert_int_equal (twice.status, 401);
    json_decref (body);
    /* the page's key is never admin, even from a keys dir made before (its cert says admin) */
    s_answer_t web = s_get (port, "/api/whoami", WEB);
    assert_non_null (strstr (web.text, "\"role\":\"operator+reviewer\""));

    /* a session cannot mint codes (only a bearer token: the CLI) */
    const char *c = strstr (once.text, "__Host-blendmq_session=");
    char cookie[300];
    snprintf (cookie, sizeof cookie, "%.*s", (int) strcspn (c, ";\r\n"), c);
    snprintf (req, sizeof req, "POST /api/web/login-code HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nCookie: %s\r\nOrigin: http://127.0.0.1:%d\r\n"
              "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", port, cookie, port);
    a = s_ask (port, req, 5000);
    assert_int_equal (a.status, 403);
    bmq_http_server_destroy (&srv);
}

int main (void)
{
    setvbuf (stdout, NULL, _IOLBF, 0);
    signal (SIGPIPE, SIG_IGN);             /* the server cuts the flood's connections under our writes */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_cross_site_confirm),
        cmocka_unit_test (test_login_code),
        cmocka_unit_test (test_self_answered_elicitation),
        cmocka_unit_test (test_mcp_session_flood),
        cmocka_unit_test (test_stream_flood),
        cmocka_unit_test (test_slow_loris),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
