/* The route table (services/gateway/http_routes.c) is the one place a route
 * is named (issue 31). Against the real HTTP server and a fake gateway loop:
 *   table        rows are well formed: a handler, a known role, no two rows
 *                for one method and pattern, every pattern reachable by the
 *                matcher (no row shadowed by an earlier one)
 *   reachable    every row answers its own role's token with something other
 *                than 401/403 (a role nobody can reach fails here), and a
 *                token one role short gets 403 forbidden naming the row's role
 *   metrics      every request is counted under its row's pattern; a path
 *                with no row under "other"
 *   dispatch     a path with rows for other methods: 405 with Allow from the
 *                table; no row: 404; a row's own body cap: 413
 *   docs         docs/http-routes.md is what the table makes
 * `test_http_routes --write-docs FILE` writes the docs page. */
#include "fake_gateway.h"
#include "http_routes.h"
#include "http_server.h"
#include "peer.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <fcntl.h>
#include <poll.h>
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

#define GW "inproc://test-http-routes-gateway"

static const char *s_role_names[] = { "viewer", "operator", "reviewer", "admin", "operator+reviewer" };
#define NROLES 5
static char s_tok[NROLES][80];
static char s_keys[64];
static fake_gateway_t *s_gw;
static bmq_http_server_t *s_srv;

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

static int s_setup (void **state)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    snprintf (s_keys, sizeof s_keys, "/tmp/bmq-http-routes-XXXXXX");
    if (!mkdtemp (s_keys)) return -1;
    for (int i = 0; i < NROLES; i++) {
        char name[32];
        snprintf (name, sizeof name, "key%d", i);
        s_add_key (name, s_role_names[i], s_tok[i], sizeof s_tok[i]);
    }
    s_gw = fake_gateway_new (GW, NULL);
    bmq_http_options_t o = { .bind = "127.0.0.1", .port = 0, .token = "", .keys_dir = s_keys, .allowed_origins = "",
                             .max_body = 1u << 20, .max_connections = 64, .event_buffer = 64, .request_timeout_ms = 2000,
                             .capabilities_cache_ms = 60000, .gateway_endpoint = GW };
    char err[256];
    s_srv = bmq_http_server_new (&o, err, sizeof err);
    if (!s_srv) { fprintf (stderr, "%s\n", err); return -1; }
    fake_gateway_attach (s_gw, s_srv);
    bmq_http_server_tick (s_srv);
    return 0;
}

static int s_teardown (void **state)
{
    bmq_http_server_destroy (&s_srv);
    fake_gateway_destroy (&s_gw);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_keys);
    return system (cmd) == 0 ? 0 : -1;
}

/* ---- raw HTTP: an event stream never ends, so read the head and what comes in a moment ---- */

typedef struct {
    long status;
    char text[65536];
} s_answer_t;

static void s_ask (const char *method, const char *path, const char *body, int role, s_answer_t *a)
{
    int port = bmq_http_server_port (s_srv);
    char req[16384];
    int n = snprintf (req, sizeof req, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n", method, path, port);
    if (role >= 0) n += snprintf (req + n, sizeof req - (size_t) n, "Authorization: Bearer %s\r\n", s_tok[role]);
    if (body) n += snprintf (req + n, sizeof req - (size_t) n, "Content-Type: application/json\r\nContent-Length: %zu\r\n",
                             strlen (body));
    n += snprintf (req + n, sizeof req - (size_t) n, "Connection: close\r\n\r\n%s", body ? body : "");
    assert_true (n < (int) sizeof req);
    a->status = 0;
    a->text[0] = 0;
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    inet_pton (AF_INET, "127.0.0.1", &addr.sin_addr);
    assert_int_equal (connect (fd, (struct sockaddr *) &addr, sizeof addr), 0);
    assert_int_equal (write (fd, req, (size_t) n), n);
    size_t len = 0;
    int64_t until = bmq_mono_ms () + 4000, quiet_until = 0;
    while (len < sizeof a->text - 1 && bmq_mono_ms () < until) {
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll (&p, 1, 20) <= 0) {
            if (quiet_until && bmq_mono_ms () > quiet_until) break;      /* a stream: its head is in */
            continue;
        }
        ssize_t got = read (fd, a->text + len, sizeof a->text - 1 - len);
        if (got <= 0) break;
        len += (size_t) got;
        a->text[len] = 0;
        if (strstr (a->text, "\r\n\r\n")) quiet_until = bmq_mono_ms () + 300;
    }
    close (fd);
    if (!strncmp (a->text, "HTTP/1.", 7)) a->status = strtol (a->text + 9, NULL, 10);
}

/* A concrete path for a pattern: {name} becomes s-ok (the fake gateway's script). */
static void s_path (const char *pattern, char *buf, size_t len)
{
    size_t o = 0;
    for (const char *p = pattern; *p && o + 8 < len; p++) {
        if (*p == '{') {
            const char *close = strchr (p, '}');
            bool asset = !strncmp (p, "{asset}", 7);
            o += (size_t) snprintf (buf + o, len - o, "%s", asset ? "app.js" : "s-ok");
            p = close;
        }
        else buf[o++] = *p;
    }
    buf[o] = 0;
}

/* The role just short of `need` (-1: none is short of it). */
static int s_short_of (bmq_role_t need)
{
    switch (need) {
        case BMQ_ROLE_OPERATOR: return 2;       /* reviewer */
        case BMQ_ROLE_REVIEWER: return 1;       /* operator */
        case BMQ_ROLE_ADMIN:    return 4;       /* operator+reviewer */
        case BMQ_ROLE_OPERATOR_REVIEWER: return 1;
        default: return -1;
    }
}

static int s_token_for (bmq_role_t role)
{
    for (int i = 0; i < NROLES; i++)
        if (bmq_role_parse (s_role_names[i]) == role) return i;
    return -1;
}

/* ---- the table ----------------------------------------------------------------------- */

static void test_table (void **state)
{
    size_t n;
    const bmq_http_route_t *rows = bmq_http_routes (&n);
    assert_true (n >= 20);
    for (size_t i = 0; i < n; i++) {
        const bmq_http_route_t *r = &rows[i];
        assert_non_null (r->handler);
        assert_true (r->pattern[0] == '/');
        assert_true (!strcmp (r->method, "GET") || !strcmp (r->method, "POST") || !strcmp (r->method, "*"));
        assert_true (r->role == BMQ_ROLE_NONE || strcmp (bmq_role_name (r->role), "none"));
        assert_true (r->doc && *r->doc);
        assert_true (r->body == BMQ_BODY_NONE || r->body == BMQ_BODY_JSON || r->body == BMQ_BODY_OWN);
        if (!strcmp (r->method, "GET")) assert_int_equal (r->body, BMQ_BODY_NONE);
        for (size_t j = 0; j < i; j++)
            assert_false (!strcmp (rows[j].pattern, r->pattern) && !strcmp (rows[j].method, r->method));
        /* the matcher reaches this very row */
        char path[256];
        s_path (r->pattern, path, sizeof path);
        const char *pattern, *param;
        size_t plen;
        const bmq_http_route_t *found = bmq_http_route_find (!strcmp (r->method, "*") ? "DELETE" : r->method, path, &pattern, &param, &plen);
        if (found != r) fprintf (stderr, "row %s %s is shadowed (%s matched)\n", r->method, r->pattern, pattern ? pattern : "nothing");
        assert_ptr_equal (found, r);
        assert_string_equal (pattern, r->pattern);
        if (strchr (r->pattern, '{')) {
            assert_non_null (param);
            assert_true (plen == 4 || plen == 6);
        }
        else assert_null (param);
    }
    /* ids are one segment, bounded */
    const char *pattern, *param;
    size_t plen;
    assert_null (bmq_http_route_find ("GET", "/api/plans/a/b", &pattern, &param, &plen));
    assert_null (pattern);
    assert_null (bmq_http_route_find ("GET", "/api/plans/", &pattern, &param, &plen));
    char long_id[200] = "/api/plans/";
    memset (long_id + 11, 'x', BMQ_MAX_ID + 1);
    assert_null (bmq_http_route_find ("GET", long_id, &pattern, &param, &plen));
    /* a literal row beats a {name} row at the same place: GET /api/plans/validate is 405, not plan "validate" */
    assert_null (bmq_http_route_find ("GET", "/api/plans/validate", &pattern, &param, &plen));
    assert_string_equal (pattern, "/api/plans/validate");
    char allow[64];
    bmq_http_route_allow ("/api/scripts", allow, sizeof allow);
    assert_string_equal (allow, "GET, POST");
    /* roles come from the rows; a path with no row needs a viewer; a preflight nothing */
    assert_int_equal (bmq_http_route_role ("POST", "/api/scripts/s-1/confirm"), BMQ_ROLE_REVIEWER);
    assert_int_equal (bmq_http_route_role ("GET", "/healthz"), BMQ_ROLE_NONE);
    assert_int_equal (bmq_http_route_role ("POST", "/api/scene"), BMQ_ROLE_VIEWER);       /* was admin, and no route */
    assert_int_equal (bmq_http_route_role ("OPTIONS", "/api/chat"), BMQ_ROLE_NONE);
}

/* ---- every row, reached by its role -------------------------------------------------------- */

static void test_reachable_and_counted (void **state)
{
    size_t n;
    const bmq_http_route_t *rows = bmq_http_routes (&n);
    s_answer_t *a = malloc (sizeof *a);
    for (size_t i = 0; i < n; i++) {
        const bmq_http_route_t *r = &rows[i];
        const char *method = !strcmp (r->method, "*") ? "POST" : r->method;
        const char *body = !strcmp (method, "POST") ? "{}" : NULL;
        char path[256];
        s_path (r->pattern, path, sizeof path);
        int who = r->role == BMQ_ROLE_NONE ? -1 : s_token_for (r->role);
        assert_true (r->role == BMQ_ROLE_NONE || who >= 0);
        s_ask (method, path, body, who, a);
        if (!a->status || a->status == 401 || a->status == 403 || a->status == 404 || a->status == 405)
            fprintf (stderr, "%s %s as %s: %.300s\n", method, path, who >= 0 ? s_role_names[who] : "-", a->text);
        assert_true (a->status >= 200);
        assert_true (a->status != 401 && a->status != 403 && a->status != 405);
        /* a 404 only from the handler itself (an unknown id), never "no such route" */
        assert_null (strstr (a->text, "\"not_found\""));
        int short_of = s_short_of (r->role);
        if (short_of >= 0) {
            s_ask (method, path, body, short_of, a);
            assert_int_equal (a->status, 403);
            assert_non_null (strstr (a->text, "\"forbidden\""));
            char needs[64];
            snprintf (needs, sizeof needs, "\"needs_role\":\"%s\"", bmq_role_name (r->role));
            assert_non_null (strstr (a->text, needs));
        }
        if (r->role != BMQ_ROLE_NONE) {            /* no token: 401 */
            s_ask (method, path, body, -1, a);
            assert_int_equal (a->status, 401);
        }
    }
    s_ask ("GET", "/no/such/route", NULL, 0, a);
    assert_int_equal (a->status, 404);
    /* every row's pattern, and only patterns, label the requests */
    s_ask ("GET", "/metrics", NULL, 0, a);
    assert_int_equal (a->status, 200);
    for (size_t i = 0; i < n; i++) {
        char label[160];
        snprintf (label, sizeof label, "blendmq_http_requests_total{route=\"%s\"", rows[i].pattern);
        if (!strstr (a->text, label)) fprintf (stderr, "no metrics for %s\n", rows[i].pattern);
        assert_non_null (strstr (a->text, label));
    }
    assert_non_null (strstr (a->text, "blendmq_http_requests_total{route=\"other\",method=\"GET\",code=\"404\"}"));
    assert_null (strstr (a->text, "route=\"/api/plans/s-ok"));
    assert_null (strstr (a->text, "route=\"/no/such"));
    free (a);
}

/* ---- dispatch: 405 and 404 from the table, a row's own cap ------------------------------ */

static void test_dispatch (void **state)
{
    s_answer_t *a = malloc (sizeof *a);
    s_ask ("DELETE", "/api/scripts", NULL, 3, a);
    assert_int_equal (a->status, 405);
    assert_non_null (strstr (a->text, "Allow: GET, POST"));
    assert_non_null (strstr (a->text, "\"method_not_allowed\""));
    /* the old /api/scene admin rule: no such route, so a viewer learns 405, not "needs admin" */
    s_ask ("POST", "/api/scene", "{}", 0, a);
    assert_int_equal (a->status, 405);
    assert_non_null (strstr (a->text, "Allow: GET"));
    s_ask ("GET", "/api/plans/validate", NULL, 0, a);
    assert_int_equal (a->status, 405);
    s_ask ("POST", "/api/nothing", "{}", 3, a);
    assert_int_equal (a->status, 404);
    /* the confirm row takes 4 KiB; the server takes 1 MiB elsewhere */
    char *big = malloc (6000);
    snprintf (big, 6000, "{\"sha256\": \"%0*d\"}", 5000, 0);
    s_ask ("POST", "/api/scripts/s-ok/confirm", big, 2, a);
    assert_int_equal (a->status, 413);
    assert_non_null (strstr (a->text, "4096 bytes"));
    s_ask ("POST", "/api/scripts", big, 1, a);
    assert_int_not_equal (a->status, 413);
    free (big);
    /* a JSON row refuses another Content-Type (bearer or not) */
    int port = bmq_http_server_port (s_srv);
    char req[512];
    snprintf (req, sizeof req, "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
             "Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi", port, s_tok[1]);
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    inet_pton (AF_INET, "127.0.0.1", &addr.sin_addr);
    assert_int_equal (connect (fd, (struct sockaddr *) &addr, sizeof addr), 0);
    assert_int_equal (write (fd, req, strlen (req)), (ssize_t) strlen (req));
    ssize_t got = read (fd, a->text, 200);
    close (fd);
    assert_true (got > 12);
    a->text[got] = 0;
    assert_int_equal (strtol (a->text + 9, NULL, 10), 415);
    free (a);
}

/* ---- the docs page --------------------------------------------------------------------- */

static void test_docs_fresh (void **state)
{
    char *want = bmq_http_routes_markdown ();
    assert_non_null (want);
    char path[512];
    snprintf (path, sizeof path, "%s/docs/http-routes.md", BMQ_SOURCE_DIR);
    FILE *f = fopen (path, "r");
    char *have = calloc (1, 1 << 20);
    size_t len = f ? fread (have, 1, (1 << 20) - 1, f) : 0;
    if (f) fclose (f);
    if (strcmp (have, want))
        fprintf (stderr, "docs/http-routes.md is stale: run build/bin/test_http_routes --write-docs %s\n", path);
    assert_true (len > 0);
    assert_string_equal (have, want);
    /* every row is on the page */
    size_t n;
    const bmq_http_route_t *rows = bmq_http_routes (&n);
    for (size_t i = 0; i < n; i++) {
        char cell[160];
        snprintf (cell, sizeof cell, "| `%s` |", rows[i].pattern);
        assert_non_null (strstr (have, cell));
    }
    free (have);
    free (want);
}

int main (int argc, char **argv)
{
    if (argc == 3 && !strcmp (argv[1], "--write-docs")) {
        char *text = bmq_http_routes_markdown ();
        FILE *f = fopen (argv[2], "w");
        if (!f || !text || fputs (text, f) < 0) return 1;
        fclose (f);
        free (text);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_table),
        cmocka_unit_test (test_reachable_and_counted),
        cmocka_unit_test (test_dispatch),
        cmocka_unit_test (test_docs_fresh),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
