/* The Blender add-on and its C client, against a real headless Blender:
 * mutual challenge-response (a wrong token is refused both ways, the token
 * never crosses the wire), palette operations checked by the add-on, framing
 * bounded, errors reported without killing the server, commands run, a plan
 * whose link drops rolled back by the add-on and reported at the next hello
 * until acknowledged (issue 17; hostile report fields checked against a
 * fake), and a killed Blender reported as DOWN at once. */
#include "blender_link.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <poll.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char s_dir[128];
static int s_port;
static pid_t s_pid;
static const char *TOKEN = "test-token-0123456789";

static int s_setup (void **state)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-link-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char token_file[256], port_file[256], addon[512], log[256];
    snprintf (token_file, sizeof token_file, "%s/token", s_dir);
    snprintf (port_file, sizeof port_file, "%s/port", s_dir);
    snprintf (log, sizeof log, "%s/blender.log", s_dir);
    snprintf (addon, sizeof addon, "%s/services/executor/addon/blendmq_addon.py", BMQ_SOURCE_DIR);
    FILE *f = fopen (token_file, "w");
    fputs (TOKEN, f);
    fclose (f);
    s_pid = fork ();
    if (s_pid == 0) {
        if (!freopen (log, "w", stdout) || !freopen (log, "a", stderr)) _exit (126);
        const char *blender = getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender";
        execlp (blender, blender, "-b", "--factory-startup", "--python", addon, "--", "--port", "0",
                "--port-file", port_file, "--token-file", token_file, "--reset-scene", (char *) NULL);
        _exit (127);
    }
    for (int i = 0; i < 1200 && !s_port; i++) {
        f = fopen (port_file, "r");
        if (f) { if (fscanf (f, "%d", &s_port) != 1) s_port = 0; fclose (f); }
        if (!s_port) usleep (50000);
    }
    return s_port ? 0 : -1;
}

static int s_teardown (void **state)
{
    if (s_pid > 0) { kill (s_pid, SIGKILL); waitpid (s_pid, NULL, 0); }
    char cmd[256];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static bmq_blender_link_t *s_connect (void)
{
    bmq_blender_link_t *link = bmq_blender_link_new ("127.0.0.1", s_port, TOKEN);
    char err[256];
    if (bmq_blender_link_load_palette (link, BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err))
        fail_msg ("palette: %s", err);
    if (bmq_blender_link_connect (link, 5000, err, sizeof err)) fail_msg ("connect: %s", err);
    return link;
}

static json_t *s_call_ok (bmq_blender_link_t *link, const char *cmd, const char *args_json)
{
    json_t *args = args_json ? json_loads (args_json, 0, NULL) : NULL;
    json_t *reply = NULL;
    char err[256];
    int rc = bmq_blender_link_call (link, cmd, args, 30000, &reply, NULL, NULL, err, sizeof err);
    json_decref (args);
    if (rc != BMQ_LINK_OK) fail_msg ("%s: status %d: %s", cmd, rc, err);
    return reply;
}

static void test_wrong_token_refused (void **state)
{
    bmq_blender_link_t *link = bmq_blender_link_new ("127.0.0.1", s_port, "wrong");
    char err[256] = "";
    assert_int_equal (bmq_blender_link_connect (link, 5000, err, sizeof err), -1);
    assert_non_null (strstr (err, "unauthorized"));
    assert_false (bmq_blender_link_connected (link));
    bmq_blender_link_destroy (&link);
    assert_null (link);
}

/* ---- the handshake against fakes: a server squatting on a port, a capture */

static int s_listen (int *port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (fd < 0 || bind (fd, (struct sockaddr *) &a, sizeof a) || listen (fd, 4)
        || getsockname (fd, (struct sockaddr *) &a, &len)) return -1;
    *port = ntohs (a.sin_port);
    return fd;
}

/* The fake add-on's session (link 3): after its hello reply every frame both
 * ways carries a MAC (handshake.session); s_fake_forge corrupts the MAC of
 * every reply it seals. */
static bool s_fake_sealed, s_fake_forge;
static unsigned char s_fake_key[32];
static uint64_t s_fake_sent;

static void s_fake_mac (const char *label, uint64_t seq, const void *head, const char *text, unsigned char out[32])
{
    unsigned char be[8];
    for (int i = 0; i < 8; i++) be[i] = (unsigned char) (seq >> (56 - 8 * i));
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init (&st, s_fake_key, sizeof s_fake_key);
    crypto_auth_hmacsha256_update (&st, (const unsigned char *) label, strlen (label));
    crypto_auth_hmacsha256_update (&st, be, 8);
    crypto_auth_hmacsha256_update (&st, head, 8);
    crypto_auth_hmacsha256_update (&st, (const unsigned char *) text, strlen (text));
    crypto_auth_hmacsha256_final (&st, out);
}

static void s_send_json (int fd, const char *text)
{
    uint32_t head[2] = { htonl ((uint32_t) strlen (text)), 0 };
    if (send (fd, head, 8, MSG_NOSIGNAL) != 8 || send (fd, text, strlen (text), MSG_NOSIGNAL) != (ssize_t) strlen (text))
        _exit (3);
    if (s_fake_sealed) {
        unsigned char mac[32];
        s_fake_mac ("blendmq-frame-server", s_fake_sent++, head, text, mac);
        if (s_fake_forge) mac[0] ^= 1;
        if (send (fd, mac, 32, MSG_NOSIGNAL) != 32) _exit (3);
    }
}

/* Read one frame into cap (appending); returns its JSON (malloc'd) or NULL at EOF. */
static char *s_read_frame (int fd, unsigned char *cap, size_t *cap_len, size_t cap_size)
{
    unsigned char head[8];
    size_t got = 0;
    while (got < 8) { ssize_t n = recv (fd, head + got, 8 - got, 0); if (n <= 0) return NULL; got += (size_t) n; }
    uint32_t h, b;
    memcpy (&h, head, 4); memcpy (&b, head + 4, 4);
    h = ntohl (h); b = ntohl (b);
    if (h > 65536 || b) return NULL;
    char *text = calloc (1, h + 1);
    got = 0;
    while (got < h) { ssize_t n = recv (fd, text + got, h - got, 0); if (n <= 0) { free (text); return NULL; } got += (size_t) n; }
    unsigned char mac[32];
    got = 0;
    while (s_fake_sealed && got < 32) { ssize_t n = recv (fd, mac + got, 32 - got, 0); if (n <= 0) { free (text); return NULL; } got += (size_t) n; }
    if (*cap_len + 8 + h <= cap_size) {
        memcpy (cap + *cap_len, head, 8);
        memcpy (cap + *cap_len + 8, text, h);
        *cap_len += 8 + h;
    }
    return text;
}

/* A fake add-on, in a child: sends a challenge, captures every byte the client
 * sends into `capture`, answers hello with the right server proof when it
 * knows `token` (NULL: a squatter, answers with a made-up proof) and the
 * members of the JSON object `extra` (if given) in its result, then answers
 * pings until the client goes away. */
static pid_t s_fake_server_with (int lfd, const char *token, const char *capture, const char *extra)
{
    pid_t pid = fork ();
    if (pid) return pid;
    int fd = accept (lfd, NULL, NULL);
    if (fd < 0) _exit (2);
    unsigned char ns[32], nc[32], mac[32], cap[1 << 16];
    size_t cap_len = 0;
    char ns_hex[65], mac_hex[65], frame[512];
    randombytes_buf (ns, sizeof ns);
    sodium_bin2hex (ns_hex, sizeof ns_hex, ns, sizeof ns);
    snprintf (frame, sizeof frame, "{\"id\":0,\"ok\":true,\"challenge\":{\"link\":3,\"nonce\":\"%s\"}}", ns_hex);
    s_send_json (fd, frame);
    char *text;
    while ((text = s_read_frame (fd, cap, &cap_len, sizeof cap))) {
        json_t *req = json_loads (text, 0, NULL);
        free (text);
        const char *cmd = json_string_value (json_object_get (req, "cmd"));
        json_int_t id = json_integer_value (json_object_get (req, "id"));
        if (cmd && !strcmp (cmd, "hello")) {
            size_t n = 0;
            const char *nc_hex = json_string_value (json_object_get (json_object_get (req, "args"), "nonce"));
            if (!nc_hex || sodium_hex2bin (nc, sizeof nc, nc_hex, strlen (nc_hex), NULL, &n, NULL) || n != 32) _exit (4);
            if (token) {
                crypto_auth_hmacsha256_state st;
                crypto_auth_hmacsha256_init (&st, (const unsigned char *) token, strlen (token));
                crypto_auth_hmacsha256_update (&st, (const unsigned char *) "blendmq-link-server", 19);
                crypto_auth_hmacsha256_update (&st, nc, 32);
                crypto_auth_hmacsha256_update (&st, ns, 32);
                crypto_auth_hmacsha256_final (&st, mac);
            }
            else randombytes_buf (mac, sizeof mac);
            sodium_bin2hex (mac_hex, sizeof mac_hex, mac, sizeof mac);
            json_t *result = extra ? json_loads (extra, 0, NULL) : json_object ();
            if (!result) _exit (6);
            json_object_set_new (result, "mac", json_string (mac_hex));
            json_t *reply = json_pack ("{s:I, s:b, s:o}", "id", id, "ok", 1, "result", result);
            char *text = json_dumps (reply, JSON_COMPACT);
            json_decref (reply);
            json_decref (req);
            s_send_json (fd, text);
            free (text);
            if (token) {            /* the session key: the frames from here on are MAC'd */
                crypto_auth_hmacsha256_state st;
                crypto_auth_hmacsha256_init (&st, (const unsigned char *) token, strlen (token));
                crypto_auth_hmacsha256_update (&st, (const unsigned char *) "blendmq-link-session", 20);
                crypto_auth_hmacsha256_update (&st, ns, 32);
                crypto_auth_hmacsha256_update (&st, nc, 32);
                crypto_auth_hmacsha256_final (&st, s_fake_key);
                s_fake_sealed = true;
            }
            continue;
        }
        else snprintf (frame, sizeof frame, "{\"id\":%lld,\"ok\":true,\"result\":{\"pong\":true}}", (long long) id);
        json_decref (req);
        s_send_json (fd, frame);
    }
    FILE *f = fopen (capture, "wb");
    if (!f || fwrite (cap, 1, cap_len, f) != cap_len) _exit (5);
    fclose (f);
    _exit (0);
}

static pid_t s_fake_server (int lfd, const char *token, const char *capture)
{
    return s_fake_server_with (lfd, token, capture, NULL);
}

static size_t s_read_capture (const char *path, unsigned char *buf, size_t size)
{
    FILE *f = fopen (path, "rb");
    if (!f) return 0;
    size_t n = fread (buf, 1, size, f);
    fclose (f);
    return n;
}

static void test_squatter_refused_by_client (void **state)
{
    assert_true (sodium_init () >= 0);
    int port, lfd = s_listen (&port);
    assert_true (lfd >= 0);
    char capture[256];
    snprintf (capture, sizeof capture, "%s/capture-squatter", s_dir);
    pid_t pid = s_fake_server (lfd, NULL, capture);
    bmq_blender_link_t *link = bmq_blender_link_new ("127.0.0.1", port, TOKEN);
    char err[256] = "";
    assert_int_equal (bmq_blender_link_load_palette (link, BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err), 0);
    assert_int_equal (bmq_blender_link_connect (link, 5000, err, sizeof err), -1);
    assert_non_null (strstr (err, "failed the challenge"));
    assert_false (bmq_blender_link_connected (link));
    bmq_blender_link_destroy (&link);
    int status = -1;
    waitpid (pid, &status, 0);
    close (lfd);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    /* all the squatter got is one hello: no command, and not the token */
    unsigned char cap[1 << 16];
    size_t n = s_read_capture (capture, cap, sizeof cap);
    assert_true (n > 8);
    uint32_t h;
    memcpy (&h, cap, 4);
    assert_int_equal (n, 8 + ntohl (h));
    assert_non_null (memmem (cap, n, "\"hello\"", 7));
    assert_null (memmem (cap, n, TOKEN, strlen (TOKEN)));
}

static void test_token_never_sent (void **state)
{
    /* a server that knows the token: accepted, and still no byte of the token */
    assert_true (sodium_init () >= 0);
    int port, lfd = s_listen (&port);
    assert_true (lfd >= 0);
    char capture[256];
    snprintf (capture, sizeof capture, "%s/capture-good", s_dir);
    pid_t pid = s_fake_server (lfd, TOKEN, capture);
    bmq_blender_link_t *link = bmq_blender_link_new ("127.0.0.1", port, TOKEN);
    char err[256] = "";
    if (bmq_blender_link_connect (link, 5000, err, sizeof err)) fail_msg ("connect to the fake that knows the token: %s", err);
    json_decref (s_call_ok (link, "ping", NULL));
    bmq_blender_link_destroy (&link);
    int status = -1;
    waitpid (pid, &status, 0);
    close (lfd);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    unsigned char cap[1 << 16];
    size_t n = s_read_capture (capture, cap, sizeof cap);
    assert_non_null (memmem (cap, n, "\"ping\"", 6));
    assert_null (memmem (cap, n, TOKEN, strlen (TOKEN)));
    /* nor its hex, nor any long piece of it */
    char hex[128];
    sodium_bin2hex (hex, sizeof hex, (const unsigned char *) TOKEN, strlen (TOKEN));
    assert_null (memmem (cap, n, hex, strlen (hex)));
    assert_null (memmem (cap, n, TOKEN + 4, 12));
}

/* issue 24: after hello, a reply whose MAC is wrong is refused and the link
 * dropped (the fake knows the token, so the handshake passes). */
static void test_forged_reply_refused (void **state)
{
    assert_true (sodium_init () >= 0);
    int port, lfd = s_listen (&port);
    assert_true (lfd >= 0);
    char capture[256];
    snprintf (capture, sizeof capture, "%s/capture-forge", s_dir);
    s_fake_forge = true;
    pid_t pid = s_fake_server (lfd, TOKEN, capture);
    s_fake_forge = false;
    bmq_blender_link_t *link = bmq_blender_link_new ("127.0.0.1", port, TOKEN);
    char err[256] = "";
    if (bmq_blender_link_connect (link, 5000, err, sizeof err)) fail_msg ("connect to the forging fake: %s", err);
    json_t *reply = NULL;
    assert_int_equal (bmq_blender_link_call (link, "ping", NULL, 5000, &reply, NULL, NULL, err, sizeof err), BMQ_LINK_PROTOCOL);
    assert_null (reply);
    assert_non_null (strstr (err, "MAC"));
    assert_false (bmq_blender_link_connected (link));
    bmq_blender_link_destroy (&link);
    waitpid (pid, NULL, 0);
    close (lfd);
}

/* A Blender off loopback is refused before a byte is sent (the link is not
 * encrypted), unless allowed. 192.0.2.1 is TEST-NET-1: never routed. */
static void test_plain_remote_refused (void **state)
{
    bmq_blender_link_t *link = bmq_blender_link_new ("192.0.2.1", 9, TOKEN);
    char err[400] = "";
    assert_int_equal (bmq_blender_link_connect (link, 300, err, sizeof err), -1);
    assert_non_null (strstr (err, "not on loopback"));
    bmq_blender_link_allow_plain_remote (link, true);
    assert_int_equal (bmq_blender_link_connect (link, 300, err, sizeof err), -1);
    assert_null (strstr (err, "not on loopback"));          /* tried: timed out or unreachable */
    bmq_blender_link_destroy (&link);
}

static void test_old_hello_refused (void **state)
{
    /* a client that sends the token itself (link version 1) is refused and closed */
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (s_port), .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    assert_int_equal (connect (fd, (struct sockaddr *) &a, sizeof a), 0);
    unsigned char cap[1 << 16];
    size_t cap_len = 0;
    char *challenge = s_read_frame (fd, cap, &cap_len, sizeof cap);
    assert_non_null (challenge);
    assert_non_null (strstr (challenge, "\"nonce\""));
    free (challenge);
    char frame[256];
    snprintf (frame, sizeof frame, "{\"id\":1,\"cmd\":\"hello\",\"args\":{\"token\":\"%s\"}}", TOKEN);
    s_send_json (fd, frame);
    char *reply = s_read_frame (fd, cap, &cap_len, sizeof cap);
    assert_non_null (reply);
    assert_non_null (strstr (reply, "unauthorized"));
    free (reply);
    assert_null (s_read_frame (fd, cap, &cap_len, sizeof cap));    /* closed */
    close (fd);
}

static void test_palette_operations (void **state)
{
    /* only the operations sent at hello run */
    bmq_blender_link_t *link = bmq_blender_link_new ("127.0.0.1", s_port, TOKEN);
    json_t *ops = json_pack ("[s]", "bpy.ops.mesh.primitive_cube_add");
    assert_int_equal (bmq_blender_link_set_operations (link, ops), 0);
    json_decref (ops);
    char err[256];
    if (bmq_blender_link_connect (link, 5000, err, sizeof err)) fail_msg ("connect: %s", err);
    json_decref (s_call_ok (link, "reset_scene", NULL));
    json_t *r = s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\"}}");
    assert_false (json_is_true (json_object_get (r, "ok")));
    assert_non_null (strstr (json_string_value (json_object_get (r, "error")), "palette"));
    json_decref (r);
    r = s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"object.material\", \"params\": {\"color\": [1, 0, 0]}}}");
    assert_false (json_is_true (json_object_get (r, "ok")));
    assert_non_null (strstr (json_string_value (json_object_get (r, "error")), "palette"));
    json_decref (r);
    r = s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\"}}");
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    bmq_blender_link_destroy (&link);
    /* no list at all: every run_step is refused, and says why */
    link = bmq_blender_link_new ("127.0.0.1", s_port, TOKEN);
    if (bmq_blender_link_connect (link, 5000, err, sizeof err)) fail_msg ("connect: %s", err);
    r = s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\"}}");
    assert_false (json_is_true (json_object_get (r, "ok")));
    assert_non_null (strstr (json_string_value (json_object_get (r, "error")), "sent none"));
    json_decref (r);
    json_decref (s_call_ok (link, "reset_scene", NULL));
    bmq_blender_link_destroy (&link);
}

static void test_steps_and_scene (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call_ok (link, "reset_scene", NULL));
    json_t *r = s_call_ok (link, "run_step",
        "{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"ball\","
        " \"params\": {\"radius\": 0.5, \"location\": [1, 2, 3]}}}");
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_t *created = json_object_get (json_object_get (r, "result"), "objects_created");
    assert_int_equal (json_array_size (created), 1);
    assert_string_equal (json_string_value (json_array_get (created, 0)), "ball");
    json_decref (r);
    /* translate by name, in background mode */
    r = s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"bpy.ops.transform.translate\", \"target\": \"ball\","
                                     " \"params\": {\"value\": [0, 0, 1]}}}");
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    r = s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"object.material\", \"target\": \"ball\","
                                     " \"params\": {\"color\": [1, 0.5, 0]}}}");
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    r = s_call_ok (link, "scene_info", NULL);
    json_t *objects = json_object_get (json_object_get (r, "result"), "objects");
    assert_int_equal (json_array_size (objects), 1);
    json_t *ball = json_array_get (objects, 0);
    json_t *loc = json_object_get (ball, "location");
    assert_true (json_number_value (json_array_get (loc, 0)) == 1.0);
    assert_true (json_number_value (json_array_get (loc, 2)) > 3.99 && json_number_value (json_array_get (loc, 2)) < 4.01);
    assert_int_equal (json_array_size (json_object_get (ball, "materials")), 1);
    json_decref (r);
    bmq_blender_link_destroy (&link);
}

static void test_errors_keep_server_alive (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_t *r = s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"bpy.ops.mesh.no_such_thing\"}}");
    assert_false (json_is_true (json_object_get (r, "ok")));
    assert_non_null (json_string_value (json_object_get (r, "error")));
    json_decref (r);
    r = s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"params\": {\"bogus\": 1}}}");
    assert_false (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    r = s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"import os\"}}");
    assert_false (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    r = s_call_ok (link, "no_such_command", NULL);
    assert_false (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    r = s_call_ok (link, "ping", NULL);
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    bmq_blender_link_destroy (&link);
}

static json_t *s_find_object (bmq_blender_link_t *link, const char *name)
{
    json_t *r = s_call_ok (link, "scene_info", NULL);
    json_t *found = NULL;
    size_t i;
    json_t *o;
    json_array_foreach (json_object_get (json_object_get (r, "result"), "objects"), i, o)
        if (!strcmp (json_string_value (json_object_get (o, "name")), name)) found = json_incref (o);
    json_decref (r);
    return found;
}

static void test_transaction_rollback (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call_ok (link, "reset_scene", NULL));
    json_decref (s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"keep\","
                                              " \"params\": {\"location\": [1, 1, 1]}}}"));
    json_t *before = s_call_ok (link, "scene_info", NULL);
    json_decref (s_call_ok (link, "plan_begin", "{\"plan_id\": \"p1\"}"));
    json_decref (s_call_ok (link, "run_step", "{\"plan_id\": \"p1\", \"step\": {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"new\"}}"));
    json_decref (s_call_ok (link, "run_step", "{\"plan_id\": \"p1\", \"step\": {\"operation\": \"bpy.ops.transform.translate\", \"target\": \"keep\","
                                              " \"params\": {\"value\": [0, 0, 5]}}}"));
    json_decref (s_call_ok (link, "run_step", "{\"plan_id\": \"p1\", \"step\": {\"operation\": \"object.material\", \"target\": \"keep\","
                                              " \"params\": {\"color\": [1, 0, 0]}}}"));
    json_decref (s_call_ok (link, "run_step", "{\"plan_id\": \"p1\", \"step\": {\"operation\": \"bpy.ops.object.shade_smooth\", \"target\": \"keep\"}}"));
    json_t *moved = s_find_object (link, "keep");
    assert_true (json_number_value (json_array_get (json_object_get (moved, "location"), 2)) > 5.9);
    json_decref (moved);
    json_t *r = s_call_ok (link, "plan_rollback", "{\"plan_id\": \"p1\"}");
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_t *result = json_object_get (r, "result");
    assert_int_equal (json_array_size (json_object_get (result, "removed")), 1);
    assert_string_equal (json_string_value (json_array_get (json_object_get (result, "removed"), 0)), "new");
    assert_string_equal (json_string_value (json_array_get (json_object_get (result, "restored"), 0)), "keep");
    json_decref (r);
    json_t *after = s_call_ok (link, "scene_info", NULL);
    assert_true (json_equal (json_object_get (before, "result"), json_object_get (after, "result")));
    json_decref (before);
    json_decref (after);
    /* a second rollback of the same plan is refused; a committed plan keeps its work */
    r = s_call_ok (link, "plan_rollback", "{\"plan_id\": \"p1\"}");
    assert_false (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    json_decref (s_call_ok (link, "plan_begin", "{\"plan_id\": \"p2\"}"));
    json_decref (s_call_ok (link, "run_step", "{\"plan_id\": \"p2\", \"step\": {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"stays\"}}"));
    json_decref (s_call_ok (link, "plan_commit", "{\"plan_id\": \"p2\"}"));
    json_t *stays = s_find_object (link, "stays");
    assert_non_null (stays);
    json_decref (stays);
    bmq_blender_link_destroy (&link);
}

/* object.parent keeps the child where it is; object.modifier adds bounded
 * modifiers; a rollback takes both away again from an existing object. */
static void test_parent_and_modifiers (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call_ok (link, "reset_scene", NULL));
    json_decref (s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"body\","
                                              " \"params\": {\"location\": [2, 0, 0]}}}"));
    json_decref (s_call_ok (link, "plan_begin", "{\"plan_id\": \"pm\"}"));
    json_decref (s_call_ok (link, "run_step", "{\"plan_id\": \"pm\", \"step\": {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\","
                                              " \"name\": \"head\", \"params\": {\"location\": [2, 0, 2]}}}"));
    json_t *r = s_call_ok (link, "run_step", "{\"plan_id\": \"pm\", \"step\": {\"operation\": \"object.parent\", \"target\": \"head\","
                                             " \"params\": {\"parent\": \"body\"}}}");
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    json_t *head = s_find_object (link, "head");          /* still where it was, in the world */
    assert_true (json_number_value (json_array_get (json_object_get (head, "location"), 2)) > 1.99);
    json_decref (head);
    r = s_call_ok (link, "run_step", "{\"plan_id\": \"pm\", \"step\": {\"operation\": \"object.parent\", \"target\": \"body\","
                                     " \"params\": {\"parent\": \"head\"}}}");
    assert_false (json_is_true (json_object_get (r, "ok")));   /* a cycle */
    json_decref (r);
    r = s_call_ok (link, "run_step", "{\"plan_id\": \"pm\", \"step\": {\"operation\": \"object.modifier\", \"target\": \"body\","
                                     " \"params\": {\"type\": \"ARRAY\", \"count\": 3}}}");
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    r = s_call_ok (link, "object_info", "{\"name\": \"body\"}");
    double width = json_number_value (json_array_get (json_object_get (json_object_get (r, "result"), "dimensions"), 0));
    assert_true (width > 5.9);                              /* three cubes of 2 in a row */
    json_decref (r);
    r = s_call_ok (link, "run_step", "{\"plan_id\": \"pm\", \"step\": {\"operation\": \"object.modifier\", \"target\": \"body\","
                                     " \"params\": {\"type\": \"SUBSURF\", \"levels\": 11}}}");
    assert_false (json_is_true (json_object_get (r, "ok")));   /* bounded even here */
    json_decref (r);
    json_decref (s_call_ok (link, "plan_rollback", "{\"plan_id\": \"pm\"}"));
    r = s_call_ok (link, "object_info", "{\"name\": \"body\"}");
    width = json_number_value (json_array_get (json_object_get (json_object_get (r, "result"), "dimensions"), 0));
    assert_true (width < 2.01);                             /* the array modifier went with the rollback */
    json_decref (r);
    assert_null (s_find_object (link, "head"));
    bmq_blender_link_destroy (&link);
}

static void test_render_and_save (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_t *args = json_pack ("{s:i, s:i}", "width", 160, "height", 120), *reply = NULL;
    unsigned char *blob = NULL;
    size_t len = 0;
    char err[256];
    assert_int_equal (bmq_blender_link_call (link, "render_preview", args, 60000, &reply, &blob, &len, err, sizeof err), BMQ_LINK_OK);
    assert_true (json_is_true (json_object_get (reply, "ok")));
    assert_true (len > 8);
    assert_memory_equal (blob, "\x89PNG\r\n\x1a\n", 8);
    json_decref (args);
    json_decref (reply);
    free (blob);
    assert_int_equal (bmq_blender_link_call (link, "save_blend", NULL, 60000, &reply, &blob, &len, err, sizeof err), BMQ_LINK_OK);
    assert_true (len > 7);
    assert_memory_equal (blob, "BLENDER", 7);
    json_decref (reply);
    free (blob);
    bmq_blender_link_destroy (&link);
}

static int s_raw_connect (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) s_port) };
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    if (connect (fd, (struct sockaddr *) &a, sizeof a)) fail_msg ("raw connect failed");
    struct timeval tv = { .tv_sec = 10 };
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Read until EOF; true when the peer closed the connection. */
static bool s_closed_by_peer (int fd)
{
    char buf[4096];
    for (;;) {
        ssize_t n = recv (fd, buf, sizeof buf, 0);
        if (n == 0) return true;
        if (n < 0) return false;
    }
}

static void test_hostile_frames (void **state)
{
    /* a 2 MiB header: refused and closed, nothing buffered */
    int fd = s_raw_connect ();
    uint32_t head[2] = { htonl (2u << 20), 0 };
    assert_int_equal (send (fd, head, 8, 0), 8);
    assert_true (s_closed_by_peer (fd));
    close (fd);
    /* invalid JSON */
    fd = s_raw_connect ();
    const char *junk = "{not json";
    uint32_t h2[2] = { htonl ((uint32_t) strlen (junk)), 0 };
    send (fd, h2, 8, 0);
    send (fd, junk, strlen (junk), 0);
    assert_true (s_closed_by_peer (fd));
    close (fd);
    /* the server still serves */
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call_ok (link, "ping", NULL));
    bmq_blender_link_destroy (&link);
}

/* ---- issue 17: no half-built scenes ---------------------------------------- */

static json_t *s_names_of (json_t *array)
{
    json_t *out = json_array ();
    size_t i;
    json_t *v;
    json_array_foreach (array, i, v) json_array_append (out, v);
    return out;
}

static bool s_same_names (json_t *array, const char *expect_json)
{
    json_t *expect = json_loads (expect_json, 0, NULL);
    json_t *got = s_names_of (array);
    bool same = json_equal (got, expect);
    if (!same) {
        char *text = json_dumps (got, JSON_COMPACT);
        fprintf (stderr, "names: got %s, expected %s\n", text, expect_json);
        free (text);
    }
    json_decref (got);
    json_decref (expect);
    return same;
}

static void s_ack (bmq_blender_link_t *link, const char *id)
{
    char args[128];
    snprintf (args, sizeof args, "{\"ids\": [\"%s\"]}", id);
    json_t *r = s_call_ok (link, "interrupted_ack", args);
    assert_true (json_is_true (json_object_get (r, "ok")));
    assert_int_equal (json_integer_value (json_object_get (json_object_get (r, "result"), "acked")), 1);
    json_decref (r);
}

/* The connection that opened a plan drops: the add-on rolls the plan back at
 * once, and every hello reports it (removed, restored, the story) until an
 * interrupted_ack; the scene is as before the plan. */
static void test_dropped_link_rolls_back (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call_ok (link, "reset_scene", NULL));
    json_decref (s_call_ok (link, "run_step", "{\"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"keep\","
                                              " \"params\": {\"location\": [1, 1, 1]}}}"));
    json_t *before = s_call_ok (link, "scene_info", NULL);
    json_t *r = s_call_ok (link, "plan_begin", "{\"plan_id\": \"pdrop\", \"cid\": \"story-drop-1\", \"steps\": 6}");
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_decref (r);
    const char *names[] = { "d1", "d2", "d3" };
    for (int i = 0; i < 3; i++) {
        char step[256];
        snprintf (step, sizeof step, "{\"plan_id\": \"pdrop\", \"step\": {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\","
                  " \"name\": \"%s\", \"params\": {\"location\": [%d, 0, 0]}}}", names[i], i * 3);
        r = s_call_ok (link, "run_step", step);
        assert_true (json_is_true (json_object_get (r, "ok")));
        json_decref (r);
    }
    json_decref (s_call_ok (link, "run_step", "{\"plan_id\": \"pdrop\", \"step\": {\"operation\": \"bpy.ops.transform.translate\","
                                              " \"target\": \"keep\", \"params\": {\"value\": [0, 0, 5]}}}"));
    r = s_call_ok (link, "scene_info", NULL);
    assert_int_equal (json_integer_value (json_object_get (json_object_get (r, "result"), "count")), 4);
    json_decref (r);
    assert_null (bmq_blender_link_hello_report (link));        /* nothing was interrupted before */
    bmq_blender_link_destroy (&link);                           /* the link drops mid-plan */

    link = s_connect ();
    const json_t *hello = bmq_blender_link_hello_report (link);
    assert_non_null (hello);
    json_t *reports = json_object_get (hello, "interrupted");
    assert_int_equal (json_array_size (reports), 1);
    assert_null (json_object_get (hello, "open_plan"));
    json_t *rep = json_array_get (reports, 0);
    assert_string_equal (json_string_value (json_object_get (rep, "plan_id")), "pdrop");
    assert_string_equal (json_string_value (json_object_get (rep, "cid")), "story-drop-1");
    assert_int_equal (json_integer_value (json_object_get (rep, "steps_run")), 4);
    assert_int_equal (json_integer_value (json_object_get (rep, "steps_total")), 6);
    assert_non_null (strstr (json_string_value (json_object_get (rep, "reason")), "closed"));
    assert_true (json_integer_value (json_object_get (rep, "at")) > 1600000000000LL);
    json_t *rb = json_object_get (rep, "rollback");
    assert_true (s_same_names (json_object_get (rb, "removed"), "[\"d1\", \"d2\", \"d3\"]"));
    assert_true (s_same_names (json_object_get (rb, "restored"), "[\"keep\"]"));
    assert_int_equal (json_integer_value (json_object_get (rb, "removed_count")), 3);
    char id[17];
    snprintf (id, sizeof id, "%s", json_string_value (json_object_get (rep, "id")));
    assert_int_equal (strlen (id), 16);
    /* the scene is as before the plan: none of its objects, "keep" back where it was */
    json_t *after = s_call_ok (link, "scene_info", NULL);
    assert_true (json_equal (json_object_get (before, "result"), json_object_get (after, "result")));
    json_decref (before);
    json_decref (after);
    /* not acknowledged: the next hello says it again; acknowledged: never again */
    bmq_blender_link_destroy (&link);
    link = s_connect ();
    hello = bmq_blender_link_hello_report (link);
    assert_non_null (hello);
    assert_string_equal (json_string_value (json_object_get (json_array_get (json_object_get (hello, "interrupted"), 0), "id")), id);
    s_ack (link, id);
    bmq_blender_link_destroy (&link);
    link = s_connect ();
    assert_null (bmq_blender_link_hello_report (link));
    bmq_blender_link_destroy (&link);
}

/* A plan_begin that finds another plan open rolls that one back and reports
 * it; a committed plan is never touched by a later drop. */
static void test_superseded_plan_rolled_back (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    json_decref (s_call_ok (link, "reset_scene", NULL));
    json_decref (s_call_ok (link, "plan_begin", "{\"plan_id\": \"pa\", \"cid\": \"story-a\"}"));
    json_decref (s_call_ok (link, "run_step", "{\"plan_id\": \"pa\", \"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"a1\"}}"));
    json_decref (s_call_ok (link, "plan_begin", "{\"plan_id\": \"pb\", \"cid\": \"story-b\"}"));
    json_decref (s_call_ok (link, "run_step", "{\"plan_id\": \"pb\", \"step\": {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"b1\"}}"));
    json_decref (s_call_ok (link, "plan_commit", "{\"plan_id\": \"pb\"}"));
    assert_null (s_find_object (link, "a1"));
    json_t *b1 = s_find_object (link, "b1");
    assert_non_null (b1);
    json_decref (b1);
    bmq_blender_link_destroy (&link);           /* after the commit: nothing to roll back */
    link = s_connect ();
    const json_t *hello = bmq_blender_link_hello_report (link);
    assert_non_null (hello);
    json_t *reports = json_object_get (hello, "interrupted");
    assert_int_equal (json_array_size (reports), 1);
    json_t *rep = json_array_get (reports, 0);
    assert_string_equal (json_string_value (json_object_get (rep, "plan_id")), "pa");
    assert_string_equal (json_string_value (json_object_get (rep, "cid")), "story-a");
    assert_non_null (strstr (json_string_value (json_object_get (rep, "reason")), "superseded"));
    assert_true (s_same_names (json_object_get (json_object_get (rep, "rollback"), "removed"), "[\"a1\"]"));
    b1 = s_find_object (link, "b1");
    assert_non_null (b1);
    json_decref (b1);
    s_ack (link, json_string_value (json_object_get (rep, "id")));
    json_decref (s_call_ok (link, "reset_scene", NULL));
    bmq_blender_link_destroy (&link);
}

/* The add-on treats the link as hostile even after authentication. */
static void test_transaction_args_checked (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    const char *bad[][2] = {
        { "plan_begin", "{\"plan_id\": \"px\", \"cid\": \"has space\"}" },
        { "plan_begin", "{\"plan_id\": \"px\", \"cid\": \"0123456789012345678901234567890123456789012345678901234567890123456789\"}" },
        { "plan_begin", "{\"plan_id\": \"px\", \"cid\": 7}" },
        { "plan_begin", "{\"plan_id\": \"px\", \"cid\": \"caf\\u00e9\"}" },
        { "plan_begin", "{\"plan_id\": \"px\", \"steps\": -1}" },
        { "plan_begin", "{\"plan_id\": \"px\", \"steps\": true}" },
        { "interrupted_ack", "{\"ids\": \"0123456789abcdef\"}" },
        { "interrupted_ack", "{\"ids\": [\"zz\"]}" },
        { "interrupted_ack", "{}" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *r = s_call_ok (link, bad[i][0], bad[i][1]);
        if (json_is_true (json_object_get (r, "ok"))) fail_msg ("%s %s was accepted", bad[i][0], bad[i][1]);
        json_decref (r);
    }
    /* none of them opened a plan: a drop now reports nothing */
    bmq_blender_link_destroy (&link);
    link = s_connect ();
    assert_null (bmq_blender_link_hello_report (link));
    json_t *r = s_call_ok (link, "interrupted_ack", "{\"ids\": [\"0123456789abcdef\"]}");   /* unknown id: nothing to forget */
    assert_true (json_is_true (json_object_get (r, "ok")));
    assert_int_equal (json_integer_value (json_object_get (json_object_get (r, "result"), "acked")), 0);
    json_decref (r);
    bmq_blender_link_destroy (&link);
}

/* Hostile report fields from an authenticated peer: malformed reports left
 * out, unknown fields dropped, lists and text bounded. */
static void test_hello_report_checked (void **state)
{
    assert_true (sodium_init () >= 0);
    json_t *many = json_array ();
    for (int i = 0; i < 300; i++) json_array_append_new (many, json_sprintf ("obj%d", i));
    json_array_append_new (many, json_integer (5));
    char long_reason[2000];
    memset (long_reason, 'r', sizeof long_reason - 1);
    long_reason[sizeof long_reason - 1] = 0;
    json_t *extra = json_pack ("{s:[{s:s, s:s, s:s, s:i, s:{s:o, s:[], s:i}, s:s, s:s}, {s:s, s:s}, {s:s, s:s, s:s}, i, {s:s}],"
                               " s:{s:i}}",
        "interrupted",
            "id", "0123456789abcdef", "plan_id", "p-ok", "cid", "has space", "steps_run", 7,
            "rollback", "removed", many, "restored", "removed_count", 2, "reason", long_reason, "evil", "x",
            "id", "NOT-HEX-ID-00000", "plan_id", "p-badid",
            "id", "fedcba9876543210", "plan_id", "p-two", "cid", "story-2",
            3,
            "plan_id", "no-id",
        "open_plan", "plan_id", 5);
    char *extra_text = json_dumps (extra, JSON_COMPACT);
    json_decref (extra);
    int port, lfd = s_listen (&port);
    assert_true (lfd >= 0);
    char capture[256];
    snprintf (capture, sizeof capture, "%s/capture-report", s_dir);
    pid_t pid = s_fake_server_with (lfd, TOKEN, capture, extra_text);
    free (extra_text);
    bmq_blender_link_t *link = bmq_blender_link_new ("127.0.0.1", port, TOKEN);
    char err[256] = "";
    if (bmq_blender_link_connect (link, 5000, err, sizeof err)) fail_msg ("connect to the fake: %s", err);
    const json_t *hello = bmq_blender_link_hello_report (link);
    assert_non_null (hello);
    assert_null (json_object_get (hello, "open_plan"));             /* plan_id 5: not a plan */
    json_t *reports = json_object_get (hello, "interrupted");
    assert_int_equal (json_array_size (reports), 2);
    json_t *first = json_array_get (reports, 0);
    assert_string_equal (json_string_value (json_object_get (first, "plan_id")), "p-ok");
    assert_null (json_object_get (first, "cid"));                   /* not an id the bus would carry */
    assert_null (json_object_get (first, "evil"));
    assert_true (strlen (json_string_value (json_object_get (first, "reason"))) <= 300);
    json_t *rb = json_object_get (first, "rollback");
    assert_int_equal (json_array_size (json_object_get (rb, "removed")), 256);
    assert_int_equal (json_integer_value (json_object_get (rb, "removed_count")), 256);   /* never below the list */
    assert_string_equal (json_string_value (json_object_get (json_array_get (reports, 1), "cid")), "story-2");
    bmq_blender_link_destroy (&link);
    waitpid (pid, NULL, 0);
    close (lfd);
}

static void test_killed_blender_is_down (void **state)
{
    bmq_blender_link_t *link = s_connect ();
    kill (s_pid, SIGKILL);
    waitpid (s_pid, NULL, 0);
    s_pid = 0;
    json_t *reply = NULL;
    char err[256];
    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    assert_int_equal (bmq_blender_link_call (link, "ping", NULL, 5000, &reply, NULL, NULL, err, sizeof err), BMQ_LINK_DOWN);
    clock_gettime (CLOCK_MONOTONIC, &t1);
    assert_true ((t1.tv_sec - t0.tv_sec) < 2);
    assert_false (bmq_blender_link_connected (link));
    assert_int_equal (bmq_blender_link_connect (link, 1000, err, sizeof err), -1);
    bmq_blender_link_destroy (&link);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_wrong_token_refused),
        cmocka_unit_test (test_squatter_refused_by_client),
        cmocka_unit_test (test_token_never_sent),
        cmocka_unit_test (test_forged_reply_refused),
        cmocka_unit_test (test_plain_remote_refused),
        cmocka_unit_test (test_old_hello_refused),
        cmocka_unit_test (test_palette_operations),
        cmocka_unit_test (test_steps_and_scene),
        cmocka_unit_test (test_errors_keep_server_alive),
        cmocka_unit_test (test_transaction_rollback),
        cmocka_unit_test (test_parent_and_modifiers),
        cmocka_unit_test (test_render_and_save),
        cmocka_unit_test (test_hostile_frames),
        cmocka_unit_test (test_dropped_link_rolls_back),
        cmocka_unit_test (test_superseded_plan_rolled_back),
        cmocka_unit_test (test_transaction_args_checked),
        cmocka_unit_test (test_hello_report_checked),
        cmocka_unit_test (test_killed_blender_is_down),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
