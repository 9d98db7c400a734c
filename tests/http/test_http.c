/* The gateway's HTTP server against a fake gateway loop (fake_gateway.c):
 * every REST route with good and bad input (malformed JSON, wrong types,
 * oversized bodies, unknown plan ids), access control (Host, Origin, bearer
 * token, a generated token for a non-loopback bind), Server-Sent Events
 * (filter, Last-Event-ID resume, a gap, 100 concurrent subscribers) and MCP
 * Streamable HTTP (sessions, headers, status codes, an SSE tool call). */
#include "bus.h"
#include "config.h"
#include "fake_gateway.h"
#include "http_feed.h"
#include "http_auth.h"
#include "http_server.h"
#include "mcp_call.h"
#include "peer.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sodium.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define GW "inproc://test-http-gateway"

static fake_gateway_t *s_gw;
static bmq_http_server_t *s_srv;
static char s_base[128];
static char s_keys[64];                          /* the keys dir fixture */
static char s_tok[5][80];                        /* tokens of viewer, operator, reviewer, admin, mcp (operator) */
static char s_auth[5][120];                      /* their "Authorization: Bearer …" lines */
static const char *s_default_auth;               /* sent when a request names no Authorization/Cookie of its own */
enum { VIEWER, OPERATOR, REVIEWER, ADMIN, MCP };
static const char *s_names[] = { "viewer1", "operator1", "reviewer1", "admin1", "mcp" };
static const char *s_roles[] = { "viewer", "operator", "reviewer", "admin", "operator" };

/* A client as `blendmq keys init/add-client` makes it: NAME.token (0600, hex) and NAME.cert with metadata role. */
static void s_add_key (const char *dir, const char *name, const char *role, char *token, size_t len)
{
    unsigned char bytes[32];
    randombytes_buf (bytes, sizeof bytes);
    sodium_bin2hex (token, len, bytes, sizeof bytes);
    char path[256];
    snprintf (path, sizeof path, "%s/%s.token", dir, name);
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    assert_true (fd >= 0);
    assert_int_equal (write (fd, token, strlen (token)), (ssize_t) strlen (token));
    assert_int_equal (write (fd, "\n", 1), 1);
    close (fd);
    zcert_t *cert = zcert_new ();
    zcert_set_meta (cert, "name", "%s", name);
    zcert_set_meta (cert, "role", "%s", role);
    snprintf (path, sizeof path, "%s/%s.cert", dir, name);
    assert_int_equal (zcert_save_public (cert, path), 0);
    chmod (path, 0600);
    zcert_destroy (&cert);
}

static void s_remove_key (const char *dir, const char *name)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s.token", dir, name);
    remove (path);
    snprintf (path, sizeof path, "%s/%s.cert", dir, name);
    remove (path);
}

/* ---- a small HTTP client (libcurl) ---------------------------------------------- */

typedef struct { char *data; size_t len; } s_buf_t;
typedef struct { long status; s_buf_t body, headers; } s_resp_t;

static size_t s_collect (char *p, size_t size, size_t n, void *arg)
{
    s_buf_t *b = arg;
    b->data = realloc (b->data, b->len + size * n + 1);
    memcpy (b->data + b->len, p, size * n);
    b->len += size * n;
    b->data[b->len] = 0;
    return size * n;
}

typedef struct { size_t left; } s_upload_t;
static size_t s_produce (char *p, size_t size, size_t n, void *arg)
{
    s_upload_t *u = arg;
    size_t k = size * n < u->left ? size * n : u->left;
    memset (p, ' ', k);
    u->left -= k;
    return k;
}

/* method, path (on s_base unless it starts with http), body (may be NULL), then header lines, NULL. */
static s_resp_t s_http (const char *base, const char *method, const char *path, const char *body, ...)
{
    s_resp_t r = { 0 };
    CURL *c = curl_easy_init ();
    char url[512];
    snprintf (url, sizeof url, "%s%s", base, path);
    struct curl_slist *h = NULL;
    va_list ap;
    va_start (ap, body);
    bool own_auth = false;
    for (const char *line; (line = va_arg (ap, const char *)); ) {
        if (!strncasecmp (line, "Authorization:", 14) || !strncasecmp (line, "Cookie:", 7) || !strcmp (line, "X-No-Auth: 1")) own_auth = true;
        h = curl_slist_append (h, line);
    }
    va_end (ap);
    if (!own_auth && s_default_auth) h = curl_slist_append (h, s_default_auth);
    bool chunked_big = body && !strcmp (body, "@BIG_CHUNKED");
    if (body && !chunked_big && !getenv ("NO_JSON_TYPE")) h = curl_slist_append (h, "Content-Type: application/json");
    s_upload_t up = { 2u << 20 };
    curl_easy_setopt (c, CURLOPT_URL, url);
    curl_easy_setopt (c, CURLOPT_CUSTOMREQUEST, method);
    if (chunked_big) {
        h = curl_slist_append (h, "Transfer-Encoding: chunked");
        h = curl_slist_append (h, "Content-Type: application/json");
        curl_easy_setopt (c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt (c, CURLOPT_READFUNCTION, s_produce);
        curl_easy_setopt (c, CURLOPT_READDATA, &up);
    }
    else if (body) curl_easy_setopt (c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt (c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, s_collect);
    curl_easy_setopt (c, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt (c, CURLOPT_HEADERFUNCTION, s_collect);
    curl_easy_setopt (c, CURLOPT_HEADERDATA, &r.headers);
    curl_easy_setopt (c, CURLOPT_TIMEOUT, 20L);
    curl_easy_perform (c);
    curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all (h);
    curl_easy_cleanup (c);
    if (!r.body.data) r.body.data = strdup ("");
    if (!r.headers.data) r.headers.data = strdup ("");
    return r;
}

static void s_free (s_resp_t *r) { free (r->body.data); free (r->headers.data); }

/* The response's JSON error code, or "". */
static const char *s_code (s_resp_t *r)
{
    static char code[64];
    json_t *j = json_loads (r->body.data, 0, NULL);
    const char *c = json_string_value (json_object_get (json_object_get (j, "error"), "code"));
    snprintf (code, sizeof code, "%s", c ? c : "");
    json_decref (j);
    return code;
}

static void s_expect (const char *method, const char *path, const char *body, long status, const char *code)
{
    s_resp_t r = s_http (s_base, method, path, body, NULL);
    if (r.status != status || (code && strcmp (s_code (&r), code)))
        fprintf (stderr, "%s %s -> %ld %s\n", method, path, r.status, r.body.data);
    assert_int_equal (r.status, status);
    if (code) assert_string_equal (s_code (&r), code);
    s_free (&r);
}

/* ---- setup ---------------------------------------------------------------------- */

static bmq_http_server_t *s_server (const char *token, int buffer)
{
    bmq_http_options_t o = { .bind = "127.0.0.1", .port = 0, .token = token, .keys_dir = s_keys, .allowed_origins = "https://studio.example",
                             .max_body = 1u << 20, .max_connections = 400, .event_buffer = buffer, .request_timeout_ms = 3000,
                             .capabilities_cache_ms = 60000, .mcp_test_tools = true, .gateway_endpoint = GW,
                             .streams_per_token = 200, .mcp_confirm_elicitation = true };     /* floods: test_http_attack.c */
    char err[256];
    bmq_http_server_t *srv = bmq_http_server_new (&o, err, sizeof err);
    if (!srv) fprintf (stderr, "%s\n", err);
    return srv;
}

static int s_setup (void **state)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    curl_global_init (CURL_GLOBAL_DEFAULT);
    snprintf (s_keys, sizeof s_keys, "/tmp/bmq-http-keys-XXXXXX");
    if (!mkdtemp (s_keys)) return -1;
    for (int i = 0; i < 5; i++) {
        s_add_key (s_keys, s_names[i], s_roles[i], s_tok[i], sizeof s_tok[i]);
        snprintf (s_auth[i], sizeof s_auth[i], "Authorization: Bearer %s", s_tok[i]);
    }
    s_default_auth = s_auth[ADMIN];
    s_gw = fake_gateway_new (GW, NULL);
    s_srv = s_server ("", 64);
    if (!s_srv) return -1;
    fake_gateway_attach (s_gw, s_srv);
    bmq_http_server_tick (s_srv);
    snprintf (s_base, sizeof s_base, "%s", bmq_http_server_url (s_srv));
    return 0;
}

static int s_teardown (void **state)
{
    fake_gateway_attach (s_gw, NULL);
    bmq_http_server_destroy (&s_srv);
    fake_gateway_destroy (&s_gw);
    curl_global_cleanup ();
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf %s", s_keys);
    if (system (cmd)) { }
    return 0;
}

/* ---- REST ------------------------------------------------------------------------ */

static void test_health_metrics_and_unknown_routes (void **state)
{
    bmq_http_server_tick (s_srv);
    s_expect ("GET", "/healthz", NULL, 200, NULL);
    s_expect ("POST", "/healthz", "{}", 405, "method_not_allowed");
    s_expect ("GET", "/nope", NULL, 404, "not_found");
    s_expect ("GET", "/api/plans/a/b", NULL, 404, "not_found");
    s_resp_t r = s_http (s_base, "GET", "/metrics", NULL, NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.body.data, "blendmq_http_requests_total{route=\"/healthz\",method=\"GET\",code=\"200\"}"));
    assert_non_null (strstr (r.body.data, "# TYPE blendmq_http_request_duration_seconds histogram"));
    assert_non_null (strstr (r.headers.data, "text/plain; version=0.0.4"));
    s_free (&r);
}

static void test_capabilities (void **state)
{
    int before = fake_gateway_capabilities_asked (s_gw);
    s_resp_t r = s_http (s_base, "GET", "/api/mcp/capabilities", NULL, NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.body.data, "bpy.ops.mesh.primitive_cube_add"));
    s_free (&r);
    s_expect ("GET", "/api/mcp/capabilities", NULL, 200, NULL);         /* from the cache */
    assert_int_equal (fake_gateway_capabilities_asked (s_gw), before + 1);
    s_expect ("GET", "/api/mcp/capabilities?form=compact", NULL, 200, NULL);
    s_expect ("GET", "/api/mcp/capabilities?form=weird", NULL, 400, "bad_request");
    s_expect ("POST", "/api/mcp/capabilities", "{}", 405, "method_not_allowed");
}

/* An encoded progress event: step `step` of `total` of plan_id, ok (malloc'd, length in *len). */
static unsigned char *s_step_frame (const char *plan_id, int step, int total, size_t *len)
{
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, NULL,
        json_pack ("{s:s, s:i, s:i, s:s, s:s, s:s, s:f}", "plan_id", plan_id, "step", step, "total", total, "status", "ok",
                   "event", "step", "operation", "bpy.ops.mesh.primitive_cube_add", "duration_ms", 1.5));
    unsigned char *buf = NULL;
    assert_int_equal (bmq_envelope_encode (env, &buf, len, NULL, 0), 0);
    bmq_envelope_destroy (&env);
    return buf;
}

/* The gateway's story stream (http_feed.h): a server following a PUB applies
 * requests, answers and events in its own thread, and a read right after
 * (GET /api/plans/{id}, /metrics) already sees every story told before it. */
static void test_story_feed (void **state)
{
    (void) state;
    zsock_t *pub = bmq_story_pub_new ("inproc://test-http-stories");
    assert_non_null (pub);
    bmq_http_options_t o = { .bind = "127.0.0.1", .port = 0, .token = "", .keys_dir = s_keys, .max_body = 1u << 20,
                             .max_connections = 50, .event_buffer = 64, .request_timeout_ms = 3000, .capabilities_cache_ms = 1000,
                             .gateway_endpoint = GW, .stories_endpoint = "inproc://test-http-stories" };
    char err[256], base[400];
    bmq_http_server_t *srv = bmq_http_server_new (&o, err, sizeof err);
    assert_non_null (srv);
    snprintf (base, sizeof base, "%s", bmq_http_server_url (srv));
    for (int i = 0; i < 50; i++) {               /* each read comes right after its stories: no sleep */
        char plan_id[32], path[64];
        snprintf (plan_id, sizeof plan_id, "p-FEED%d", i);
        bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, json_pack ("{s:[{s:s}]}", "plan", "operation",
                                                "bpy.ops.mesh.primitive_cube_add"));
        bmq_story_request (pub, plan_id, "run", req);
        bmq_envelope_t *verdict = bmq_envelope_reply (req, BMQ_MSG_VALIDATE_REPLY, json_pack ("{s:b, s:[], s:s, s:s}",
                                                      "accepted", 1, "errors", "plan_hash", "00", "plan_id", plan_id));
        bmq_story_answer (pub, plan_id, verdict);
        snprintf (path, sizeof path, "/api/plans/%s", plan_id);
        s_resp_t r = s_http (base, "GET", path, NULL, NULL);
        assert_int_equal (r.status, 200);
        json_t *rec = json_loads (r.body.data, 0, NULL);
        assert_string_equal (json_string_value (json_object_get (rec, "kind")), "run");
        assert_non_null (json_object_get (rec, "verdict"));
        json_decref (rec);
        s_free (&r);
        bmq_envelope_destroy (&verdict);
        bmq_envelope_destroy (&req);
    }
    size_t len;
    unsigned char *buf = s_step_frame ("p-FEED0", 1, 1, &len);
    bmq_story_event (pub, buf, len);
    free (buf);
    s_resp_t m = s_http (base, "GET", "/metrics", NULL, NULL);
    assert_int_equal (m.status, 200);
    assert_non_null (strstr (m.body.data, "blendmq_steps_total{status=\"ok\"} 1"));      /* counted before the read */
    s_free (&m);
    bmq_http_server_destroy (&srv);
    zsock_destroy (&pub);
}

static void test_chat_and_plan_records (void **state)
{
    s_resp_t r = s_http (s_base, "POST", "/api/chat", "{\"prompt\": \"build a snowman\"}", NULL);
    assert_int_equal (r.status, 202);
    json_t *j = json_loads (r.body.data, 0, NULL);
    const char *plan_id = json_string_value (json_object_get (j, "plan_id"));
    assert_non_null (plan_id);
    char path[128];
    snprintf (path, sizeof path, "/api/plans/%s", plan_id);
    s_resp_t p = s_http (s_base, "GET", path, NULL, NULL);
    assert_int_equal (p.status, 200);
    json_t *rec = json_loads (p.body.data, 0, NULL);
    assert_string_equal (json_string_value (json_object_get (rec, "kind")), "chat");
    assert_string_equal (json_string_value (json_object_get (rec, "prompt")), "build a snowman");
    assert_true (json_is_array (json_object_get (rec, "plan")));
    json_decref (rec);
    json_decref (j);
    s_free (&p);
    s_free (&r);
    s_expect ("POST", "/api/chat", "{\"prompt\": 42}", 400, "bad_request");
    s_expect ("POST", "/api/chat", "{\"prompt\": \"x\", \"keep_partial\": \"yes\"}", 400, "bad_request");
    s_expect ("POST", "/api/chat", "[\"build\"]", 400, "bad_request");
    s_expect ("POST", "/api/chat", "{\"prompt\": ", 400, "bad_json");
    s_expect ("POST", "/api/chat", "{\"prompt\": \"busy\"}", 503, "busy");
    s_expect ("GET", "/api/chat", NULL, 405, "method_not_allowed");
    setenv ("NO_JSON_TYPE", "1", 1);
    s_resp_t t = s_http (s_base, "POST", "/api/chat", "{\"prompt\": \"x\"}", "Content-Type: text/plain", NULL);
    unsetenv ("NO_JSON_TYPE");
    assert_int_equal (t.status, 415);
    s_free (&t);
}

static void test_plans (void **state)
{
    const char *good = "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"box\", \"params\": {\"size\": 1}}]";
    s_resp_t r = s_http (s_base, "POST", "/api/plans", good, NULL);
    assert_int_equal (r.status, 202);
    json_t *j = json_loads (r.body.data, 0, NULL);
    assert_string_equal (json_string_value (json_object_get (j, "state")), "queued");
    char path[128];
    snprintf (path, sizeof path, "/api/plans/%s", json_string_value (json_object_get (j, "plan_id")));
    s_resp_t p = s_http (s_base, "GET", path, NULL, NULL);
    assert_int_equal (p.status, 200);
    assert_non_null (strstr (p.body.data, "\"state\":\"queued\""));
    assert_non_null (strstr (p.body.data, "\"accepted\":true"));
    s_free (&p);
    json_decref (j);
    s_free (&r);
    r = s_http (s_base, "POST", "/api/plans", "{\"plan\": [{\"operation\": \"bpy.ops.wm.quit_blender\"}]}", NULL);
    assert_int_equal (r.status, 422);
    assert_string_equal (s_code (&r), "rejected");
    assert_non_null (strstr (r.body.data, "not in the capability palette"));
    s_free (&r);
    r = s_http (s_base, "POST", "/api/plans/validate", "[{\"operation\": \"bpy.ops.wm.quit_blender\"}]", NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.body.data, "\"accepted\":false"));
    s_free (&r);
    s_expect ("POST", "/api/plans/validate", good, 200, NULL);
    s_expect ("POST", "/api/plans", "{\"plan\": \"x\"}", 400, "bad_request");
    s_expect ("POST", "/api/plans", "[]", 400, "bad_request");
    s_expect ("POST", "/api/plans", "{\"plan\": [{}], \"keep_partial\": 1}", 400, "bad_request");
    s_expect ("POST", "/api/plans", "[{\"operation\": ]", 400, "bad_json");
    s_expect ("POST", "/api/plans", "", 400, "bad_json");
    s_expect ("GET", "/api/plans/p-NOSUCHPLAN", NULL, 404, "unknown_plan");
    s_expect ("DELETE", "/api/plans/p-NOSUCHPLAN", NULL, 405, "method_not_allowed");
}

static void test_oversized_bodies (void **state)
{
    char *big = malloc ((2u << 20) + 16);
    memset (big, ' ', 2u << 20);
    memcpy (big, "[", 1);
    big[2u << 20] = 0;
    s_expect ("POST", "/api/plans", big, 413, "too_large");                 /* Content-Length says so */
    free (big);
    s_expect ("POST", "/api/plans", "@BIG_CHUNKED", 413, "too_large");      /* found while reading */
    s_expect ("GET", "/healthz", NULL, 200, NULL);                          /* and the server goes on */
}

static void test_scene_scripts (void **state)
{
    s_expect ("GET", "/api/scene", NULL, 200, NULL);
    s_expect ("GET", "/api/scene?limit=abc", NULL, 400, "bad_request");
    s_expect ("GET", "/api/scene?limit=5000", NULL, 400, "bad_request");
    /* the fake gateway serves no scripts: its "unsupported" is 501 (tests/e2e/test_e2e_script.c has the real flow) */
    s_expect ("POST", "/api/scripts", "{\"script\": \"import bpy\"}", 501, "not_available");
    /* a confirmation names the sha256 of the script reviewed: 64 hex digits, else 400 before anything is asked */
    s_expect ("POST", "/api/scripts/s-1/confirm", "{\"sha256\": \"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}",
              501, "not_available");
    s_expect ("POST", "/api/scripts/s-1/confirm", "{}", 400, "bad_request");
    s_expect ("POST", "/api/scripts/s-1/confirm", "{\"sha256\": \"abc\"}", 400, "bad_request");
    s_expect ("POST", "/api/scripts/s-1/confirm", "{\"sha256\": 5}", 400, "bad_request");
    s_expect ("POST", "/api/scripts/s-1/confirm", "{\"sha256\": \"00112233445566778899aabbccddeeff00112233445566778899aabbccddeefg\"}",
              400, "bad_request");
    s_expect ("POST", "/api/scripts/s-1/confirm", "[]", 400, "bad_request");
    s_expect ("GET", "/api/scripts/s-1/confirm", NULL, 405, "method_not_allowed");
    s_expect ("GET", "/api/scripts/s-1", NULL, 501, "not_available");          /* one entry, with its text */
    s_expect ("POST", "/api/scripts/s-1", "{}", 405, "method_not_allowed");
    s_expect ("POST", "/api/scripts", "{", 400, "bad_json");
    s_expect ("POST", "/api/scripts", "{\"script\": 5}", 400, "bad_request");
    s_expect ("GET", "/api/scripts", NULL, 501, "not_available");           /* the listing: GET is allowed now */
    s_expect ("DELETE", "/api/scripts", NULL, 405, "method_not_allowed");
}

/* ---- access control ---------------------------------------------------------------- */

static void test_host_and_origin (void **state)
{
    s_resp_t r = s_http (s_base, "GET", "/healthz", NULL, "Host: evil.example:80", NULL);
    assert_int_equal (r.status, 403);
    assert_string_equal (s_code (&r), "host_not_allowed");
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{}", "Origin: http://evil.example", NULL);
    assert_int_equal (r.status, 403);
    assert_string_equal (s_code (&r), "origin_not_allowed");
    s_free (&r);
    /* the server's own origin (the Host the browser addressed) is allowed; another loopback port is another site */
    r = s_http (s_base, "GET", "/healthz", NULL, "Origin: http://localhost:1234", "Host: localhost:1234", NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.headers.data, "Access-Control-Allow-Origin: http://localhost:1234"));
    s_free (&r);
    r = s_http (s_base, "GET", "/healthz", NULL, "Origin: http://localhost:5173", "Host: localhost:1234", NULL);
    assert_int_equal (r.status, 403);
    assert_string_equal (s_code (&r), "origin_not_allowed");
    assert_null (strstr (r.headers.data, "Access-Control-Allow-Origin"));
    s_free (&r);
    r = s_http (s_base, "GET", "/healthz", NULL, "Origin: https://studio.example", NULL);
    assert_int_equal (r.status, 200);
    s_free (&r);
    r = s_http (s_base, "OPTIONS", "/api/plans", NULL, "Origin: http://127.0.0.1:8080", NULL);
    assert_int_equal (r.status, 403);                                   /* a preflight from elsewhere: no grant */
    assert_null (strstr (r.headers.data, "Access-Control-Allow-Methods"));
    assert_null (strstr (r.headers.data, "Access-Control-Allow-Origin"));
    s_free (&r);
    r = s_http (s_base, "OPTIONS", "/api/plans", NULL, "Origin: https://studio.example", NULL);
    assert_int_equal (r.status, 204);
    assert_non_null (strstr (r.headers.data, "Access-Control-Allow-Methods"));
    s_free (&r);
    r = s_http (s_base, "OPTIONS", "/api/plans", NULL, "Origin: http://evil.example", NULL);
    assert_int_equal (r.status, 403);
    s_free (&r);
}

static void test_bearer_token (void **state)
{
    /* every route but /healthz needs a token, loopback included */
    const char *routes[][2] = { { "GET", "/api/plans/p-x" }, { "GET", "/metrics" }, { "GET", "/api/audit" }, { "GET", "/api/scene" },
                                { "GET", "/" }, { "POST", "/mcp" }, { "GET", "/api/scripts" }, { "GET", "/nope" } };
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        s_resp_t r = s_http (s_base, routes[i][0], routes[i][1], NULL, "X-No-Auth: 1", NULL);
        if (r.status != 401) fprintf (stderr, "%s %s -> %ld\n", routes[i][0], routes[i][1], r.status);
        assert_int_equal (r.status, 401);
        assert_string_equal (s_code (&r), "unauthorized");
        assert_non_null (strstr (r.headers.data, "WWW-Authenticate: Bearer"));
        assert_non_null (strstr (r.body.data, "blendmq web"));                  /* the hint */
        s_free (&r);
    }
    s_resp_t r = s_http (s_base, "GET", "/metrics", NULL, "Authorization: Bearer wrong-token-wrong-token!", NULL);
    assert_int_equal (r.status, 401);
    assert_null (strstr (r.body.data, "wrong-token"));
    s_free (&r);
    char basic[200];
    snprintf (basic, sizeof basic, "Authorization: Basic %s", s_tok[ADMIN]);
    r = s_http (s_base, "GET", "/metrics", NULL, basic, NULL);
    assert_int_equal (r.status, 401);
    s_free (&r);
    r = s_http (s_base, "GET", "/healthz", NULL, "X-No-Auth: 1", NULL);      /* health needs no token */
    assert_int_equal (r.status, 200);
    s_free (&r);
    /* gateway.http_token is one more token (role admin) */
    bmq_http_server_t *srv = s_server ("s3cret-token-long-enough", 16);
    assert_non_null (srv);
    bmq_http_server_tick (srv);
    const char *base = bmq_http_server_url (srv);
    r = s_http (base, "GET", "/metrics", NULL, "Authorization: Bearer s3cret-token-long-enough", NULL);
    assert_int_equal (r.status, 200);
    s_free (&r);
    r = s_http (base, "GET", "/metrics", NULL, s_auth[VIEWER], NULL);        /* and the keys dir's still work */
    assert_int_equal (r.status, 200);
    s_free (&r);
    bmq_http_server_destroy (&srv);
    json_decref (bmq_http_server_take_refusals (s_srv));
}

/* route → role: viewer reads, operator submits, reviewer confirms, admin everything; 403 names the role needed */
static void test_roles (void **state)
{
    json_decref (bmq_http_server_take_refusals (s_srv));
    const char *sha = "{\"sha256\": \"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}";
    struct { const char *method, *path, *body; int who; long status; } cases[] = {
        { "GET", "/api/scene", NULL, VIEWER, 200 },
        { "GET", "/api/mcp/capabilities", NULL, VIEWER, 200 },
        { "GET", "/metrics", NULL, VIEWER, 200 },
        { "GET", "/api/whoami", NULL, REVIEWER, 200 },
        { "POST", "/api/chat", "{\"prompt\": \"a cube\"}", VIEWER, 403 },
        { "POST", "/api/chat", "{\"prompt\": \"a cube\"}", OPERATOR, 202 },
        { "POST", "/api/plans/validate", "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\"}]", VIEWER, 403 },
        { "POST", "/api/plans/validate", "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\"}]", REVIEWER, 403 },
        { "POST", "/api/plans/validate", "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\"}]", OPERATOR, 200 },
        { "POST", "/api/scripts", "{\"script\": \"import bpy\"}", VIEWER, 403 },
        { "POST", "/api/scripts", "{\"script\": \"import bpy\"}", OPERATOR, 501 },
        { "POST", "/api/scripts/s-1/confirm", sha, OPERATOR, 403 },
        { "POST", "/api/scripts/s-1/confirm", sha, MCP, 403 },
        { "POST", "/api/scripts/s-1/confirm", sha, REVIEWER, 501 },
        { "POST", "/api/scripts/s-1/confirm", sha, ADMIN, 501 },
        { "POST", "/api/scene", "{}", OPERATOR, 405 },      /* no such route (it once needed admin) */
        { "POST", "/api/scene", "{}", ADMIN, 405 },
        { "POST", "/api/plans/p-nope/cancel", NULL, VIEWER, 403 },
        { "POST", "/api/plans/p-nope/cancel", NULL, OPERATOR, 404 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        s_resp_t r = s_http (s_base, cases[i].method, cases[i].path, cases[i].body, s_auth[cases[i].who], NULL);
        if (r.status != cases[i].status)
            fprintf (stderr, "%s %s as %s -> %ld %s\n", cases[i].method, cases[i].path, s_names[cases[i].who], r.status, r.body.data);
        assert_int_equal (r.status, cases[i].status);
        if (r.status == 403) {
            assert_string_equal (s_code (&r), "forbidden");
            assert_non_null (strstr (r.body.data, "needs role"));
        }
        s_free (&r);
    }
    s_resp_t r = s_http (s_base, "POST", "/api/scripts/s-1/confirm", sha, s_auth[OPERATOR], NULL);
    assert_non_null (strstr (r.body.data, "\"needs_role\":\"reviewer\""));
    s_free (&r);
    /* who asked travels with the request (the services check and audit it) */
    r = s_http (s_base, "POST", "/api/plans/validate", "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\"}]", s_auth[OPERATOR], NULL);
    s_free (&r);
    json_t *last = fake_gateway_last (s_gw);
    json_t *obo = json_object_get (json_object_get (last, "body"), "on_behalf_of");
    assert_string_equal (json_string_value (json_object_get (obo, "name")), "operator1");
    assert_string_equal (json_string_value (json_object_get (obo, "role")), "operator");
    json_decref (last);
    /* refusals are kept for the audit, with who and why */
    json_t *refused = bmq_http_server_take_refusals (s_srv);
    assert_true (json_array_size (refused) >= 7);         /* POST /api/scene is 405 now: no such route */
    json_t *first = json_array_get (refused, 0);
    assert_int_equal (json_integer_value (json_object_get (first, "status")), 403);
    assert_string_equal (json_string_value (json_object_get (json_object_get (first, "who"), "name")), "viewer1");
    json_decref (refused);
}

static char *s_header (const char *headers, const char *name);

/* Jupyter's convention: /?token=T sets an HttpOnly SameSite=Strict session cookie and redirects to / */
/* Sessions are signed, not stored: a second auth over the same keys dir (a
 * restarted gateway) honours them; a changed byte, name or expiry is refused. */
static void test_session_survives_restart (void **state)
{
    bmq_http_auth_t *first = bmq_http_auth_new (s_keys, NULL), *second = bmq_http_auth_new (s_keys, NULL);
    char sid[BMQ_HTTP_SESSION_MAX + 1];
    assert_true (bmq_http_auth_session_new (first, s_tok[OPERATOR], sid, sizeof sid));
    assert_null (strstr (sid, s_tok[OPERATOR]));
    bmq_http_who_t who = { 0 };
    assert_true (bmq_http_auth_session (second, sid, &who));
    assert_string_equal (who.name, "operator1");
    assert_int_equal (who.role, BMQ_ROLE_OPERATOR);
    char bad[sizeof sid];
    snprintf (bad, sizeof bad, "%s", sid);
    bad[strlen (bad) - 1] = bad[strlen (bad) - 1] == '0' ? '1' : '0';          /* the MAC */
    assert_false (bmq_http_auth_session (second, bad, NULL));
    snprintf (bad, sizeof bad, "admin1%s", strchr (sid, '.'));                 /* another name, same MAC */
    assert_false (bmq_http_auth_session (second, bad, NULL));
    snprintf (bad, sizeof bad, "%s", sid);
    char *digit = strchr (bad, '.') + 1;
    *digit = *digit == '9' ? '8' : (char) (*digit + 1);                        /* a later expiry */
    assert_false (bmq_http_auth_session (second, bad, NULL));
    assert_false (bmq_http_auth_session (second, "operator1.1.00", NULL));
    assert_false (bmq_http_auth_session (second, "", NULL));
    bmq_http_auth_destroy (&first);
    bmq_http_auth_destroy (&second);
}

static void test_page_token_and_session_cookie (void **state)
{
    char path[200], cookie[200];
    snprintf (path, sizeof path, "/?token=%s", s_tok[VIEWER]);
    s_resp_t r = s_http (s_base, "GET", path, NULL, "X-No-Auth: 1", NULL);
    assert_int_equal (r.status, 303);
    char *set = s_header (r.headers.data, "Set-Cookie"), *location = s_header (r.headers.data, "Location");
    assert_non_null (set);
    assert_string_equal (location, "/");
    assert_non_null (strstr (set, "HttpOnly"));
    assert_non_null (strstr (set, "SameSite=Strict"));
    assert_non_null (strstr (set, "Path=/"));
    assert_null (strstr (set, s_tok[VIEWER]));                             /* the cookie is a session id, not the token */
    snprintf (cookie, sizeof cookie, "Cookie: %.*s", (int) strcspn (set, ";"), set);
    free (set);
    free (location);
    s_free (&r);
    r = s_http (s_base, "GET", "/", NULL, cookie, NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.headers.data, "text/html"));
    s_free (&r);
    r = s_http (s_base, "GET", "/api/whoami", NULL, cookie, NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.body.data, "\"name\":\"viewer1\""));
    s_free (&r);
    r = s_http (s_base, "POST", "/api/chat", "{\"prompt\": \"x\"}", cookie, NULL);   /* a viewer's session: a viewer */
    assert_int_equal (r.status, 403);
    s_free (&r);
    r = s_http (s_base, "GET", "/api/scene", NULL, "Cookie: blendmq_session=0000000000000000000000000000000000000000000000000000000000000000", NULL);
    assert_int_equal (r.status, 401);
    s_free (&r);
    r = s_http (s_base, "GET", "/?token=not-a-token-at-all", NULL, "X-No-Auth: 1", NULL);
    assert_int_equal (r.status, 401);
    assert_null (strstr (r.headers.data, "Set-Cookie"));
    s_free (&r);
    /* revoke: the token file goes, its session dies with it, without a restart */
    char tok[80];
    snprintf (tok, sizeof tok, "%s", s_tok[VIEWER]);
    s_remove_key (s_keys, s_names[VIEWER]);
    usleep (300 * 1000);
    r = s_http (s_base, "GET", "/api/scene", NULL, cookie, NULL);
    assert_int_equal (r.status, 401);
    s_free (&r);
    r = s_http (s_base, "GET", "/api/scene", NULL, s_auth[VIEWER], NULL);
    assert_int_equal (r.status, 401);
    s_free (&r);
    /* a new client appears without a restart too */
    s_add_key (s_keys, s_names[VIEWER], "viewer", s_tok[VIEWER], sizeof s_tok[VIEWER]);
    snprintf (s_auth[VIEWER], sizeof s_auth[VIEWER], "Authorization: Bearer %s", s_tok[VIEWER]);
    usleep (300 * 1000);
    r = s_http (s_base, "GET", "/api/scene", NULL, s_auth[VIEWER], NULL);
    assert_int_equal (r.status, 200);
    s_free (&r);
    json_decref (bmq_http_server_take_refusals (s_srv));
}

static void test_generated_token_for_a_non_loopback_bind (void **state)
{
    char err[256], file[] = "/tmp/bmq-http-token-XXXXXX";
    int fd = mkstemp (file);
    close (fd);
    remove (file);
    bmq_config_t *cfg = bmq_config_load (NULL, err, sizeof err);
    bmq_config_set (cfg, "gateway.http_bind", "0.0.0.0");
    bmq_config_set (cfg, "gateway.http_port", "0");
    bmq_config_set (cfg, "gateway.http_token_file", file);
    bmq_http_server_t *srv = NULL;
    assert_int_equal (bmq_http_server_start (cfg, GW, NULL, &srv), 0);
    assert_non_null (srv);
    struct stat st;
    assert_int_equal (stat (file, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0600);
    char token[128] = "", auth[200], base[128];
    FILE *f = fopen (file, "r");
    assert_non_null (fgets (token, sizeof token, f));
    fclose (f);
    assert_int_equal (strlen (token), 48);
    snprintf (base, sizeof base, "http://127.0.0.1:%d", bmq_http_server_port (srv));
    s_resp_t r = s_http (base, "GET", "/metrics", NULL, NULL);
    assert_int_equal (r.status, 401);
    s_free (&r);
    snprintf (auth, sizeof auth, "Authorization: Bearer %s", token);
    r = s_http (base, "GET", "/metrics", NULL, auth, NULL);
    assert_int_equal (r.status, 200);
    s_free (&r);
    bmq_http_server_destroy (&srv);
    bmq_config_destroy (&cfg);
    remove (file);
}

/* ---- Server-Sent Events --------------------------------------------------------------- */

typedef struct { int fd; char *buf; size_t len; } s_sub_t;

static s_sub_t s_subscribe (int port, const char *query, const char *last_id)
{
    s_sub_t s = { socket (AF_INET, SOCK_STREAM, 0), calloc (1, 1), 0 };
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    inet_pton (AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal (connect (s.fd, (struct sockaddr *) &a, sizeof a), 0);
    char req[512];
    int n = snprintf (req, sizeof req, "GET /api/events%s HTTP/1.0\r\nHost: 127.0.0.1\r\n%s\r\n%s%s%s\r\n", query ? query : "",
                      s_auth[VIEWER], last_id ? "Last-Event-ID: " : "", last_id ? last_id : "", last_id ? "\r\n" : "");
    assert_int_equal (write (s.fd, req, (size_t) n), n);
    return s;
}

static int s_count (const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr (p, needle)); p += strlen (needle)) n++;
    return n;
}

/* Read until `needle` appears `count` times or timeout; returns the count seen. */
static int s_sub_wait (s_sub_t *s, const char *needle, int count, int timeout_ms)
{
    int64_t until = bmq_mono_ms () + timeout_ms;
    while (s_count (s->buf, needle) < count && bmq_mono_ms () < until) {
        struct pollfd p = { s->fd, POLLIN, 0 };
        if (poll (&p, 1, 50) <= 0) continue;
        char chunk[8192];
        ssize_t n = read (s->fd, chunk, sizeof chunk);
        if (n <= 0) break;
        s->buf = realloc (s->buf, s->len + (size_t) n + 1);
        memcpy (s->buf + s->len, chunk, (size_t) n);
        s->len += (size_t) n;
        s->buf[s->len] = 0;
    }
    return s_count (s->buf, needle);
}

static void s_sub_close (s_sub_t *s) { close (s->fd); free (s->buf); }

static void s_publish (bmq_http_server_t *srv, const char *plan_id, int step)
{
    size_t len;
    unsigned char *buf = s_step_frame (plan_id, step, 100, &len);
    bmq_http_server_apply_event (srv, buf, len);
    free (buf);
}

/* The number of the n-th event (1-based) in an SSE text: ids are "<instance>-<n>"
 * (an id line followed by an event line: the stream's position markers have none). */
static unsigned long long s_event_id (const char *text, int n)
{
    const char *p = text;
    for (int i = 0; i < n && p; i++) {
        do p = strstr (p + (p == text && !i ? 0 : 1), "id: ");
        while (p && strncmp (p + strcspn (p, "\n"), "\nevent: ", 8));
    }
    const char *dash = p ? strchr (p + 4, '-') : NULL;
    return dash ? strtoull (dash + 1, NULL, 10) : 0;
}

static void test_sse_filter_and_resume (void **state)
{
    int port = bmq_http_server_port (s_srv);
    s_sub_t all = s_subscribe (port, NULL, NULL), one = s_subscribe (port, "?plan_id=p-A", NULL);
    assert_int_equal (s_sub_wait (&all, ": connected", 1, 3000), 1);
    assert_int_equal (s_sub_wait (&one, ": connected", 1, 3000), 1);
    assert_non_null (strstr (all.buf, "Content-Type: text/event-stream"));
    s_publish (s_srv, "p-A", 1);
    s_publish (s_srv, "p-B", 1);
    s_publish (s_srv, "p-A", 2);
    assert_int_equal (s_sub_wait (&all, "event: progress", 3, 3000), 3);
    assert_int_equal (s_sub_wait (&one, "event: progress", 2, 3000), 2);
    assert_null (strstr (one.buf, "p-B"));
    unsigned long long first = s_event_id (all.buf, 1), third = s_event_id (all.buf, 3);
    assert_int_equal (third, first + 2);
    char last[64];
    snprintf (last, sizeof last, "%s-%llu", bmq_instance_id (), first);      /* resume after the first */
    s_sub_t again = s_subscribe (port, NULL, last);
    assert_int_equal (s_sub_wait (&again, "event: progress", 2, 3000), 2);
    assert_int_equal (s_event_id (again.buf, 1), first + 1);
    assert_null (strstr (again.buf, "event: gap"));
    s_sub_close (&again);
    for (int i = 0; i < 100; i++) s_publish (s_srv, "p-C", i + 1);   /* the ring holds 64: the first is gone */
    again = s_subscribe (port, NULL, last);
    assert_true (s_sub_wait (&again, "event: progress", 64, 3000) >= 64);
    assert_non_null (strstr (again.buf, "event: gap"));
    s_sub_close (&again);
    s_sub_close (&all);
    s_sub_close (&one);
}

static void test_sse_100_subscribers (void **state)
{
    enum { SUBS = 100, EVENTS = 20 };
    int port = bmq_http_server_port (s_srv);
    static s_sub_t subs[SUBS];
    for (int i = 0; i < SUBS; i++) subs[i] = s_subscribe (port, "?plan_id=p-FAN", NULL);
    for (int i = 0; i < SUBS; i++) assert_int_equal (s_sub_wait (&subs[i], ": connected", 1, 5000), 1);
    int64_t t0 = bmq_mono_ms ();
    for (int e = 0; e < EVENTS; e++) s_publish (s_srv, "p-FAN", e + 1);
    int complete = 0;
    for (int i = 0; i < SUBS; i++) complete += s_sub_wait (&subs[i], "event: progress", EVENTS, 5000) == EVENTS;
    fprintf (stderr, "100 subscribers got %d events each in %lld ms\n", EVENTS, (long long) (bmq_mono_ms () - t0));
    assert_int_equal (complete, SUBS);
    for (int i = 0; i < SUBS; i++) s_sub_close (&subs[i]);
}

/* ---- SSE gaps (issue 17) ------------------------------------------------------------------ */

/* The data of the first `event: gap` in an SSE text (parsed), and its id in *id (64 bytes). */
static json_t *s_gap (const char *text, char *id)
{
    const char *ev = strstr (text, "event: gap\ndata: ");
    if (!ev) return NULL;
    if (id) {
        const char *line = ev;
        while (line > text && line[-1] != '\n') line--;            /* the event's own id line precedes it */
        const char *idl = line >= text + 4 ? line - 1 : NULL;
        while (idl && idl > text && idl[-1] != '\n') idl--;
        id[0] = 0;
        if (idl && !strncmp (idl, "id: ", 4)) snprintf (id, 64, "%.*s", (int) strcspn (idl + 4, "\n"), idl + 4);
    }
    const char *data = ev + strlen ("event: gap\ndata: ");
    return json_loadb (data, strcspn (data, "\n"), 0, NULL);
}

static void s_publish_seq (bmq_http_server_t *srv, const char *plan_id, const char *instance, const char *name, int seq)
{
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, NULL,
        json_pack ("{s:s, s:i, s:i, s:s, s:s, s:s, s:i, s:s?}", "plan_id", plan_id, "step", seq, "total", 100, "status", "ok",
                   "event", "step", "instance", instance, "seq", seq, "executor", name));
    unsigned char *buf;
    size_t len;
    assert_int_equal (bmq_envelope_encode (env, &buf, &len, NULL, 0), 0);
    bmq_http_server_apply_event (srv, buf, len);
    free (buf);
    bmq_envelope_destroy (&env);
}

/* Ids are "<this gateway's instance>-<n>"; an id the ring dropped gets a gap
 * with the exact count before the rest; "0" replays what is held, no gap. */
static void test_sse_ids_and_evicted_gap (void **state)
{
    bmq_http_server_t *srv = s_server ("", 8);
    fake_gateway_attach (s_gw, srv);
    int port = bmq_http_server_port (srv);
    for (int i = 0; i < 3; i++) s_publish (srv, "p-EV", i + 1);
    s_sub_t all = s_subscribe (port, NULL, "0");
    assert_int_equal (s_sub_wait (&all, "event: progress", 3, 3000), 3);
    assert_null (strstr (all.buf, "event: gap"));
    char want[64];
    snprintf (want, sizeof want, "id: %s-1\n", bmq_instance_id ());
    assert_non_null (strstr (all.buf, want));
    s_sub_close (&all);
    char last[64];
    snprintf (last, sizeof last, "%s-2", bmq_instance_id ());
    for (int i = 3; i < 20; i++) s_publish (srv, "p-EV", i + 1);    /* 20 events, 8 held: 13..20; after 2, 10 dropped */
    s_sub_t again = s_subscribe (port, NULL, last);
    assert_int_equal (s_sub_wait (&again, "event: progress", 8, 3000), 8);
    char gap_id[64];
    json_t *gap = s_gap (again.buf, gap_id);
    assert_non_null (gap);
    assert_string_equal (json_string_value (json_object_get (gap, "reason")), "evicted");
    assert_string_equal (json_string_value (json_object_get (gap, "last_event_id")), last);
    assert_int_equal (json_integer_value (json_object_get (gap, "missed")), 10);
    snprintf (want, sizeof want, "%s-12", bmq_instance_id ());
    assert_string_equal (gap_id, want);                              /* resuming from the gap's id misses nothing more */
    assert_true (strstr (again.buf, "event: gap") < strstr (again.buf, "event: progress"));
    assert_int_equal (s_event_id (strstr (again.buf, "event: gap"), 1), 13);
    json_decref (gap);
    s_sub_close (&again);
    s_sub_t filtered = s_subscribe (port, "?plan_id=p-EV", last);    /* a plan's stream: the count is not this plan's */
    assert_int_equal (s_sub_wait (&filtered, "event: progress", 8, 3000), 8);
    gap = s_gap (filtered.buf, NULL);
    assert_non_null (gap);
    assert_true (json_is_null (json_object_get (gap, "missed")));
    assert_int_equal (json_integer_value (json_object_get (gap, "dropped")), 10);
    json_decref (gap);
    s_sub_close (&filtered);
    s_sub_t resumed = s_subscribe (port, NULL, want);
    assert_int_equal (s_sub_wait (&resumed, "event: progress", 8, 3000), 8);
    assert_null (strstr (resumed.buf, "event: gap"));
    s_sub_close (&resumed);
    /* a new stream starts with its position (an id without data), so even a
     * client that gets no event before a restart can say where it was */
    s_sub_t fresh = s_subscribe (port, "?plan_id=p-NONE", NULL);
    snprintf (want, sizeof want, "id: %s-20\n: connected\n\n", bmq_instance_id ());
    assert_int_equal (s_sub_wait (&fresh, want, 1, 3000), 1);
    s_sub_close (&fresh);
    fake_gateway_attach (s_gw, s_srv);
    bmq_http_server_destroy (&srv);
}

/* A Last-Event-ID of another gateway process (or of the time before ids
 * named one): "gateway restarted" first, then everything this one holds. */
static void test_sse_gap_after_gateway_restart (void **state)
{
    bmq_http_server_t *srv = s_server ("", 64);
    fake_gateway_attach (s_gw, srv);
    int port = bmq_http_server_port (srv);
    s_publish (srv, "p-RS", 1);
    s_publish (srv, "p-RS", 2);
    const char *others[] = { "0123456789abcdef-41", "1700000000123456" };
    for (int i = 0; i < 2; i++) {
        if (!strncmp (others[i], bmq_instance_id (), 16)) continue;      /* 1 in 2^64 */
        s_sub_t sub = s_subscribe (port, "?plan_id=p-RS", others[i]);
        assert_int_equal (s_sub_wait (&sub, "event: progress", 2 + i, 3000), 2 + i);       /* all held */
        json_t *gap = s_gap (sub.buf, NULL);
        assert_non_null (gap);
        assert_string_equal (json_string_value (json_object_get (gap, "reason")), "gateway restarted");
        assert_string_equal (json_string_value (json_object_get (gap, "last_event_id")), others[i]);
        assert_true (json_is_null (json_object_get (gap, "missed")));
        assert_true (strstr (sub.buf, "event: gap") < strstr (sub.buf, "event: progress"));
        assert_int_equal (s_event_id (strstr (sub.buf, "event: gap"), 1), 1);        /* the id after the gap's: event 1 */
        s_publish (srv, "p-RS", 3 + i);                                     /* then live */
        assert_int_equal (s_sub_wait (&sub, "event: progress", 3 + i, 3000), 3 + i);
        json_decref (gap);
        s_sub_close (&sub);
    }
    fake_gateway_attach (s_gw, s_srv);
    bmq_http_server_destroy (&srv);
}

/* Last-Event-ID is hostile input: anything but a well-formed id is 400. */
static void test_sse_bad_last_event_id (void **state)
{
    char future[64], padded[64], upper[64], longer[200];
    snprintf (future, sizeof future, "%s-99999", bmq_instance_id ());
    snprintf (padded, sizeof padded, "%s-01", bmq_instance_id ());
    snprintf (upper, sizeof upper, "ABCDEF0123456789-1");
    memset (longer, '1', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    const char *bad[] = { "abc", "-5", "12x", "0123456789abcdef-", "0123456789abcde-1", "0123456789abcdef--1",
                          "18446744073709551616", "0123456789abcdef-18446744073709551616", future, padded, upper, longer };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char header[300];
        snprintf (header, sizeof header, "Last-Event-ID: %s", bad[i]);
        s_resp_t r = s_http (s_base, "GET", "/api/events", NULL, header, NULL);
        if (r.status != 400) fprintf (stderr, "Last-Event-ID '%s' -> %ld\n", bad[i], r.status);
        assert_int_equal (r.status, 400);
        s_free (&r);
    }
}

/* An executor's seq that skips is a `gap` event for readers of the plans
 * before and after it (and of every plan), not for other plans' readers;
 * a named executor's new process is a restart. */
static void test_sse_executor_seq_gap (void **state)
{
    int port = bmq_http_server_port (s_srv);
    const char *exec_a = "aaaaaaaaaaaaaaaa", *exec_b = "bbbbbbbbbbbbbbbb", *exec_c = "cccccccccccccccc";
    s_sub_t all = s_subscribe (port, NULL, NULL), before = s_subscribe (port, "?plan_id=p-S1", NULL);
    s_sub_t after = s_subscribe (port, "?plan_id=p-S2", NULL), other = s_subscribe (port, "?plan_id=p-S3", NULL);
    s_sub_t *subs[] = { &all, &before, &after, &other };
    for (int i = 0; i < 4; i++) assert_int_equal (s_sub_wait (subs[i], ": connected", 1, 3000), 1);
    s_publish_seq (s_srv, "p-S1", exec_a, NULL, 7);          /* first sight mid-stream: no gap */
    s_publish_seq (s_srv, "p-S1", exec_a, NULL, 8);
    s_publish_seq (s_srv, "p-S3", exec_b, NULL, 1);          /* another executor, its own sequence */
    s_publish_seq (s_srv, "p-S2", exec_a, NULL, 11);         /* 9 and 10 lost */
    s_publish_seq (s_srv, "p-S2", exec_a, NULL, 11);         /* a repeat is no gap */
    s_publish_seq (s_srv, "p-S3", exec_b, NULL, 2);
    assert_int_equal (s_sub_wait (&all, "event: progress", 6, 3000), 6);
    assert_int_equal (s_count (all.buf, "event: gap"), 1);
    json_t *gap = s_gap (all.buf, NULL);
    assert_non_null (gap);
    assert_string_equal (json_string_value (json_object_get (gap, "reason")), "executor events lost");
    assert_string_equal (json_string_value (json_object_get (gap, "instance")), exec_a);
    assert_int_equal (json_integer_value (json_object_get (gap, "missed")), 2);
    assert_non_null (strstr (json_string_value (json_object_get (gap, "message")), "gap: missed 2 event(s) from executor aaaa"));
    json_decref (gap);
    assert_int_equal (s_sub_wait (&before, "event: gap", 1, 3000), 1);
    assert_int_equal (s_sub_wait (&after, "event: gap", 1, 3000), 1);
    assert_true (strstr (after.buf, "event: gap") < strstr (after.buf, "event: progress"));
    assert_int_equal (s_sub_wait (&other, "event: progress", 2, 3000), 2);
    assert_null (strstr (other.buf, "event: gap"));
    /* named executors: a new process under a known name is a restart */
    s_publish_seq (s_srv, "p-S3", exec_b, "blender-2", 3);
    s_publish_seq (s_srv, "p-S2", exec_c, "blender-2", 1);
    assert_int_equal (s_sub_wait (&all, "event: gap", 2, 3000), 2);
    gap = s_gap (strstr (all.buf, "event: gap") + 1, NULL);
    assert_non_null (gap);
    assert_string_equal (json_string_value (json_object_get (gap, "reason")), "executor restarted");
    assert_string_equal (json_string_value (json_object_get (gap, "previous_instance")), exec_b);
    assert_string_equal (json_string_value (json_object_get (gap, "instance")), exec_c);
    json_decref (gap);
    assert_int_equal (s_sub_wait (&other, "event: gap", 1, 3000), 1);      /* p-S3 ran on the old process */
    for (int i = 0; i < 4; i++) s_sub_close (subs[i]);
}

/* ---- MCP Streamable HTTP ---------------------------------------------------------------- */

static char *s_header (const char *headers, const char *name)
{
    const char *p = strcasestr (headers, name);
    if (!p) return NULL;
    p += strlen (name);
    while (*p == ':' || *p == ' ') p++;
    return strndup (p, strcspn (p, "\r\n"));
}

static void test_mcp_http (void **state)
{
    const char *accept = "Accept: application/json, text/event-stream";
    s_resp_t r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                         "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
                         accept, NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.body.data, "\"protocolVersion\":\"2025-06-18\""));
    char *sid = s_header (r.headers.data, "Mcp-Session-Id");
    assert_non_null (sid);
    assert_int_equal (strlen (sid), 32);
    s_free (&r);
    char session[96], version[] = "MCP-Protocol-Version: 2025-06-18";
    snprintf (session, sizeof session, "Mcp-Session-Id: %s", sid);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", accept, session, version, NULL);
    assert_int_equal (r.status, 202);
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", accept, session, version, NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.body.data, "execute_plan"));
    assert_non_null (strstr (r.body.data, "test_tool_with_progress"));
    assert_null (strstr (r.body.data, "_kind"));
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", accept, NULL);
    assert_int_equal (r.status, 400);                                       /* no session */
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", accept,
                "Mcp-Session-Id: 00000000000000000000000000000000", NULL);
    assert_int_equal (r.status, 404);                                       /* unknown session */
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", accept, session,
                "MCP-Protocol-Version: 1999-01-01", NULL);
    assert_int_equal (r.status, 400);                                       /* unsupported revision */
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":", accept, session, NULL);
    assert_int_equal (r.status, 400);
    assert_non_null (strstr (r.body.data, "-32700"));
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]", accept, session, NULL);
    assert_int_equal (r.status, 400);                                       /* no batches */
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"nope\"}", accept, session, NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.body.data, "-32601"));
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"test_tool_with_progress\",\"arguments\":{},\"_meta\":{\"progressToken\":\"tok\"}}}", accept, session, NULL);
    assert_int_equal (r.status, 200);
    assert_non_null (strstr (r.headers.data, "text/event-stream"));
    assert_int_equal (s_count (r.body.data, "notifications/progress"), 3);
    assert_non_null (strstr (r.body.data, "\"id\":5,\"result\""));
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"validate_plan\",\"arguments\":{\"plan\":[{\"operation\":\"bpy.ops.wm.quit_blender\"}]}}}",
                "Accept: application/json", session, NULL);
    assert_int_equal (r.status, 200);                                       /* JSON mode, through the fake gateway */
    assert_non_null (strstr (r.headers.data, "application/json"));
    assert_non_null (strstr (r.body.data, "\"accepted\":false"));
    s_free (&r);
    /* GET /mcp is the session's standalone stream (listen_client.mjs follows one on a real stack):
     * here, what refuses one before it opens */
    r = s_http (s_base, "GET", "/mcp", NULL, "Accept: application/json", session, NULL);
    assert_int_equal (r.status, 406);                                       /* a stream is text/event-stream */
    s_free (&r);
    r = s_http (s_base, "GET", "/mcp", NULL, accept, NULL);
    assert_int_equal (r.status, 400);                                       /* no session: initialize first */
    s_free (&r);
    r = s_http (s_base, "GET", "/mcp", NULL, accept, "Mcp-Session-Id: 00000000000000000000000000000000", NULL);
    assert_int_equal (r.status, 404);                                       /* not a session of this token */
    s_free (&r);
    r = s_http (s_base, "GET", "/mcp", NULL, accept, "MCP-Protocol-Version: 2026-07-28", NULL);
    assert_int_equal (r.status, 405);                                       /* 2026-07-28: subscriptions/listen instead */
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", "Accept: image/png", session, NULL);
    assert_int_equal (r.status, 406);
    s_free (&r);
    r = s_http (s_base, "DELETE", "/mcp", NULL, session, NULL);
    assert_int_equal (r.status, 200);
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}", accept, session, NULL);
    assert_int_equal (r.status, 404);
    s_free (&r);
    free (sid);
}

/* MCP over HTTP with roles and people: a session belongs to its token; each tool needs its role; confirm_script
 * asks a person through elicitation and confirms only on accept with confirm: true. */
static char *s_mcp_init (int who, bool elicitation)
{
    char body[400];
    snprintf (body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
              "\"capabilities\":%s,\"clientInfo\":{\"name\":\"people-test\",\"version\":\"1\"}}}", elicitation ? "{\"elicitation\":{}}" : "{}");
    s_resp_t r = s_http (s_base, "POST", "/mcp", body, "Accept: application/json, text/event-stream", s_auth[who], NULL);
    assert_int_equal (r.status, 200);
    char *sid = s_header (r.headers.data, "Mcp-Session-Id");
    s_free (&r);
    return sid;
}

/* A POST /mcp on a raw socket, to read its SSE answer while we answer the server's question. */
static s_sub_t s_mcp_stream (int who, const char *sid, const char *body)
{
    s_sub_t s = { socket (AF_INET, SOCK_STREAM, 0), calloc (1, 1), 0 };
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) bmq_http_server_port (s_srv)) };
    inet_pton (AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal (connect (s.fd, (struct sockaddr *) &a, sizeof a), 0);
    char req[2048];
    int n = snprintf (req, sizeof req, "POST /mcp HTTP/1.0\r\nHost: 127.0.0.1\r\n%s\r\nMcp-Session-Id: %s\r\nContent-Type: application/json\r\n"
                      "Accept: application/json, text/event-stream\r\nContent-Length: %zu\r\n\r\n%s", s_auth[who], sid, strlen (body), body);
    assert_int_equal (write (s.fd, req, (size_t) n), n);
    return s;
}

static void test_mcp_roles_and_people_confirm (void **state)
{
    const char *accept = "Accept: application/json, text/event-stream";
    char session[96], body[600];
    /* a session is its token's */
    char *sid = s_mcp_init (MCP, false);
    snprintf (session, sizeof session, "Mcp-Session-Id: %s", sid);
    s_resp_t r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", accept, session, s_auth[VIEWER], NULL);
    assert_int_equal (r.status, 404);
    s_free (&r);
    /* tools/list shows every tool; calling one the role cannot use is a tool error naming the role */
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", accept, session, s_auth[MCP], NULL);
    assert_non_null (strstr (r.body.data, "confirm_script"));
    s_free (&r);
    char *vsid = s_mcp_init (VIEWER, true);
    char vsession[96];
    snprintf (vsession, sizeof vsession, "Mcp-Session-Id: %s", vsid);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"chat\","
                "\"arguments\":{\"prompt\":\"a cube\"}}}", "Accept: application/json", vsession, s_auth[VIEWER], NULL);
    assert_non_null (strstr (r.body.data, "\"isError\":true"));
    assert_non_null (strstr (r.body.data, "needs a token with role operator"));
    s_free (&r);
    snprintf (body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"confirm_script\","
              "\"arguments\":{\"script_id\":\"s-ok\",\"sha256\":\"%s\"}}}", FAKE_SCRIPT_SHA);
    r = s_http (s_base, "POST", "/mcp", body, accept, vsession, s_auth[VIEWER], NULL);
    assert_non_null (strstr (r.body.data, "\"isError\":true"));
    s_free (&r);
    r = s_http (s_base, "POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"get_scene_info\","
                "\"arguments\":{}}}", "Accept: application/json", vsession, s_auth[VIEWER], NULL);
    assert_null (strstr (r.body.data, "\"isError\":true"));
    s_free (&r);
    /* a client without elicitation: a tool error that says where a person can confirm; nothing reaches the executor */
    json_decref (fake_gateway_last (s_gw));
    r = s_http (s_base, "POST", "/mcp", body, accept, session, s_auth[MCP], NULL);
    assert_non_null (strstr (r.body.data, "\"isError\":true"));
    assert_non_null (strstr (r.body.data, "blendmq script apply s-ok --confirm --sha256"));
    assert_non_null (strstr (r.body.data, "web page"));
    assert_non_null (strstr (r.body.data, "Blender panel"));
    s_free (&r);
    json_t *last = fake_gateway_last (s_gw);
    assert_string_not_equal (json_string_value (json_object_get (last, "type")), "script.confirm");
    json_decref (last);
    free (sid);
    /* a client with elicitation: the person is asked (sha256, operators, diff), and decides */
    sid = s_mcp_init (REVIEWER, true);
    json_t *noted = json_pack ("{s:s, s:{s:s, s:[s]}, s:{s:{s:[{s:s}], s:[], s:[{s:s}]}}}", "script_id", "s-ok", "verdict",
                               "script_sha256", FAKE_SCRIPT_SHA, "operator_list", "bpy.ops.mesh.primitive_cube_add", "sandbox",
                               "diff", "added", "name", "Cube", "removed", "changed", "name", "Lamp");
    bmq_mcp_note_script (noted);             /* borrowed */
    json_decref (noted);
    for (int round = 0; round < 3; round++) {           /* decline, accept without the box ticked, accept */
        s_sub_t st = s_mcp_stream (REVIEWER, sid, body);
        assert_int_equal (s_sub_wait (&st, "elicitation/create", 1, 5000), 1);
        const char *ev = strstr (st.buf, "data: {");
        json_t *ask = NULL;
        for (; ev && !(ask = json_loadb (ev + 6, strcspn (ev + 6, "\n"), 0, NULL)); ev = strstr (ev + 1, "data: {")) { }
        while (ask && !json_object_get (ask, "method")) { json_decref (ask); ev = strstr (ev + 1, "data: {"); ask = ev ? json_loadb (ev + 6, strcspn (ev + 6, "\n"), 0, NULL) : NULL; }
        while (ask && strcmp (json_string_value (json_object_get (ask, "method")), "elicitation/create")) {
            json_decref (ask);
            ev = strstr (ev + 1, "data: {");
            ask = ev ? json_loadb (ev + 6, strcspn (ev + 6, "\n"), 0, NULL) : NULL;
        }
        assert_non_null (ask);
        const char *message = json_string_value (json_object_get (json_object_get (ask, "params"), "message"));
        assert_non_null (strstr (message, FAKE_SCRIPT_SHA));
        assert_non_null (strstr (message, "bpy.ops.mesh.primitive_cube_add"));
        assert_non_null (strstr (message, "added: Cube"));
        assert_non_null (strstr (message, "changed: Lamp"));
        assert_non_null (strstr (message, "people-test"));
        json_t *schema = json_object_get (json_object_get (ask, "params"), "requestedSchema");
        assert_string_equal (json_string_value (json_object_get (json_object_get (json_object_get (schema, "properties"), "confirm"), "type")), "boolean");
        const char *answers[] = { "{\"action\":\"decline\"}", "{\"action\":\"accept\",\"content\":{\"confirm\":false}}",
                                  "{\"action\":\"accept\",\"content\":{\"confirm\":true}}" };
        json_t *reply = json_pack ("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", json_object_get (ask, "id"), "result", json_loads (answers[round], 0, NULL));
        char *text = json_dumps (reply, JSON_COMPACT);
        snprintf (session, sizeof session, "Mcp-Session-Id: %s", sid);
        r = s_http (s_base, "POST", "/mcp", text, accept, session, s_auth[REVIEWER], NULL);
        assert_int_equal (r.status, 202);
        s_free (&r);
        free (text);
        json_decref (reply);
        json_decref (ask);
        assert_int_equal (s_sub_wait (&st, "\"id\":4,\"result\"", 1, 5000), 1);
        last = fake_gateway_last (s_gw);
        if (round < 2) {
            assert_non_null (strstr (st.buf, "\"isError\":true"));
            assert_non_null (strstr (st.buf, "nothing was applied"));
            assert_string_equal (json_string_value (json_object_get (last, "type")), "script.list");
        }
        else {
            assert_non_null (strstr (st.buf, "applied: script s-ok"));
            assert_string_equal (json_string_value (json_object_get (last, "type")), "script.confirm");
            json_t *b = json_object_get (last, "body"), *obo = json_object_get (b, "on_behalf_of");
            assert_string_equal (json_string_value (json_object_get (b, "sha256")), FAKE_SCRIPT_SHA);
            /* the token's own name and role, never an elevated one, and the channel (issue 24) */
            assert_string_equal (json_string_value (json_object_get (obo, "name")), "reviewer1");
            assert_string_equal (json_string_value (json_object_get (obo, "role")), "reviewer");
            assert_string_equal (json_string_value (json_object_get (b, "channel")), "mcp-elicitation");
        }
        json_decref (last);
        s_sub_close (&st);
    }
    /* a wrong sha256: refused before anyone is asked */
    snprintf (body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"confirm_script\","
              "\"arguments\":{\"script_id\":\"s-ok\",\"sha256\":\"%064d\"}}}", 0);
    snprintf (session, sizeof session, "Mcp-Session-Id: %s", sid);
    r = s_http (s_base, "POST", "/mcp", body, accept, session, s_auth[REVIEWER], NULL);
    assert_non_null (strstr (r.body.data, "is not the sha256"));
    assert_null (strstr (r.body.data, "elicitation/create"));
    s_free (&r);
    free (sid);
    free (vsid);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_health_metrics_and_unknown_routes),
        cmocka_unit_test (test_capabilities),
        cmocka_unit_test (test_chat_and_plan_records),
        cmocka_unit_test (test_plans),
        cmocka_unit_test (test_oversized_bodies),
        cmocka_unit_test (test_scene_scripts),
        cmocka_unit_test (test_host_and_origin),
        cmocka_unit_test (test_bearer_token),
        cmocka_unit_test (test_roles),
        cmocka_unit_test (test_page_token_and_session_cookie),
        cmocka_unit_test (test_session_survives_restart),
        cmocka_unit_test (test_generated_token_for_a_non_loopback_bind),
        cmocka_unit_test (test_story_feed),
        cmocka_unit_test (test_sse_filter_and_resume),
        cmocka_unit_test (test_sse_100_subscribers),
        cmocka_unit_test (test_sse_ids_and_evicted_gap),
        cmocka_unit_test (test_sse_gap_after_gateway_restart),
        cmocka_unit_test (test_sse_bad_last_event_id),
        cmocka_unit_test (test_sse_executor_seq_gap),
        cmocka_unit_test (test_mcp_http),
        cmocka_unit_test (test_mcp_roles_and_people_confirm),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
