/* The Blender link under attack (issue 24), against a real headless Blender:
 *   - the slot hog: a local process connects first and holds the connection
 *     (silent, or having read the challenge); the executor's authenticated
 *     hello still gets through within about a second, the hog is dropped, and
 *     both are in Blender's log; a crowd of hogs changes nothing; a silent
 *     hog alone is dropped after the ~1 s pre-auth timeout;
 *   - frames after hello: one with a forged MAC, and one replayed byte for
 *     byte, are refused and the connection dropped;
 *   - the unix socket is 0600 and serves the same link.
 * Exit 77 when Blender is missing. */
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
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char s_dir[128], s_log[256], s_sock[256];
static int s_port;
static pid_t s_pid;
static const char *TOKEN = "attack-token-0123456789abcdef";

static long long s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int s_setup (void **state)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-attack-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char token_file[256], port_file[256], addon[512];
    snprintf (token_file, sizeof token_file, "%s/token", s_dir);
    snprintf (port_file, sizeof port_file, "%s/port", s_dir);
    snprintf (s_log, sizeof s_log, "%s/blender.log", s_dir);
    snprintf (s_sock, sizeof s_sock, "%s/link.sock", s_dir);
    snprintf (addon, sizeof addon, "%s/services/executor/addon/blendmq_addon.py", BMQ_SOURCE_DIR);
    FILE *f = fopen (token_file, "w");
    fputs (TOKEN, f);
    fclose (f);
    s_pid = fork ();
    if (s_pid == 0) {
        if (!freopen (s_log, "w", stdout) || !freopen (s_log, "a", stderr)) _exit (126);
        setvbuf (stdout, NULL, _IONBF, 0);
        const char *blender = getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender";
        execlp (blender, blender, "-b", "--factory-startup", "--python", addon, "--", "--port", "0",
                "--port-file", port_file, "--token-file", token_file, (char *) NULL);
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

static bool s_log_has (const char *text, int wait_ms)
{
    long long deadline = s_now_ms () + wait_ms;
    do {
        FILE *f = fopen (s_log, "r");
        char line[1024];
        bool found = false;
        while (f && !found && fgets (line, sizeof line, f)) found = strstr (line, text) != NULL;
        if (f) fclose (f);
        if (found) return true;
        usleep (50000);
    } while (s_now_ms () < deadline);
    return false;
}

static int s_tcp (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (s_port), .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    if (connect (fd, (struct sockaddr *) &a, sizeof a)) { close (fd); return -1; }
    return fd;
}

/* Read (and drop) whatever arrives until the peer closes: true when it closed within wait_ms. */
static bool s_closed_within (int fd, int wait_ms)
{
    long long deadline = s_now_ms () + wait_ms;
    char buf[4096];
    while (s_now_ms () < deadline) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll (&p, 1, 50) <= 0) continue;
        ssize_t n = recv (fd, buf, sizeof buf, 0);
        if (n <= 0) return true;
    }
    return false;
}

static bmq_blender_link_t *s_link (const char *host)
{
    bmq_blender_link_t *link = bmq_blender_link_new (host, s_port, TOKEN);
    char err[256];
    if (bmq_blender_link_load_palette (link, BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err)) fail_msg ("palette: %s", err);
    return link;
}

/* ---- the slot hog ----------------------------------------------------------- */

static void test_hog_cannot_hold_the_slot (void **state)
{
    int hog = s_tcp ();                 /* first, and never says hello */
    assert_true (hog >= 0);
    usleep (200000);                    /* it holds the connection; the challenge waits in its buffer */
    bmq_blender_link_t *link = s_link ("127.0.0.1");
    char err[256] = "";
    long long t0 = s_now_ms ();
    if (bmq_blender_link_connect (link, 5000, err, sizeof err)) fail_msg ("the executor's hello did not get through: %s", err);
    long long took = s_now_ms () - t0;
    fprintf (stderr, "authenticated hello through with a hog holding a connection: %lld ms\n", took);
    assert_true (took < 1000);
    assert_true (s_closed_within (hog, 2000));              /* the hog is dropped at once */
    close (hog);
    assert_true (s_log_has ("link taken by", 2000));
    assert_true (s_log_has ("dropping 1 unauthenticated connection", 2000));
    json_t *reply = NULL;
    assert_int_equal (bmq_blender_link_call (link, "ping", NULL, 5000, &reply, NULL, NULL, err, sizeof err), BMQ_LINK_OK);
    json_decref (reply);
    /* while it holds the slot, a newcomer is refused busy, and that is logged */
    int late = s_tcp ();
    assert_true (late >= 0);
    assert_true (s_closed_within (late, 2000));
    close (late);
    assert_true (s_log_has ("busy, the link is held by", 2000));
    bmq_blender_link_destroy (&link);
}

static void test_hog_crowd (void **state)
{
    int hogs[8];
    for (int i = 0; i < 8; i++) { hogs[i] = s_tcp (); assert_true (hogs[i] >= 0); }
    usleep (200000);
    bmq_blender_link_t *link = s_link ("127.0.0.1");
    char err[256] = "";
    long long t0 = s_now_ms ();
    if (bmq_blender_link_connect (link, 5000, err, sizeof err)) fail_msg ("through 8 hogs: %s", err);
    assert_true (s_now_ms () - t0 < 1000);
    for (int i = 0; i < 8; i++) { assert_true (s_closed_within (hogs[i], 2500)); close (hogs[i]); }
    bmq_blender_link_destroy (&link);
}

static void test_silent_hog_timed_out (void **state)
{
    int hog = s_tcp ();
    assert_true (hog >= 0);
    long long t0 = s_now_ms ();
    assert_true (s_closed_within (hog, 3000));
    long long took = s_now_ms () - t0;
    fprintf (stderr, "a connection that says nothing is dropped after %lld ms\n", took);
    assert_true (took >= 800 && took < 2000);                /* the pre-auth timeout: about 1 s */
    close (hog);
    assert_true (s_log_has ("no hello within", 2000));
}

/* ---- frames after hello ------------------------------------------------------ */

typedef struct {
    int fd;
    unsigned char key[32];
    uint64_t sent, received;
} s_raw_t;

static void s_hmac (const unsigned char *key, size_t key_len, const char *label, const unsigned char *a, size_t a_len,
                    const unsigned char *b, size_t b_len, unsigned char out[32])
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init (&st, key, key_len);
    crypto_auth_hmacsha256_update (&st, (const unsigned char *) label, strlen (label));
    crypto_auth_hmacsha256_update (&st, a, a_len);
    crypto_auth_hmacsha256_update (&st, b, b_len);
    crypto_auth_hmacsha256_final (&st, out);
}

static bool s_recv_exact (int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll (&p, 1, 5000) <= 0) return false;
        ssize_t n = recv (fd, (char *) buf + got, len - got, 0);
        if (n <= 0) return false;
        got += (size_t) n;
    }
    return true;
}

/* One frame's JSON (malloc'd), its MAC checked when sealed; NULL at EOF. */
static json_t *s_raw_read (s_raw_t *r, bool sealed)
{
    unsigned char head[8], mac[32], want[32], seq[8];
    if (!s_recv_exact (r->fd, head, 8)) return NULL;
    uint32_t h, b;
    memcpy (&h, head, 4); memcpy (&b, head + 4, 4);
    h = ntohl (h); b = ntohl (b);
    if (h > 65536 || b) return NULL;
    unsigned char *buf = malloc (8 + h);
    memcpy (buf, head, 8);
    if (!s_recv_exact (r->fd, buf + 8, h) || (sealed && !s_recv_exact (r->fd, mac, 32))) { free (buf); return NULL; }
    if (sealed) {
        for (int i = 0; i < 8; i++) seq[i] = (unsigned char) (r->received >> (56 - 8 * i));
        s_hmac (r->key, 32, "blendmq-frame-server", seq, 8, buf, 8 + h, want);
        if (memcmp (mac, want, 32)) fail_msg ("the add-on's frame %llu failed its MAC", (unsigned long long) r->received);
        r->received++;
    }
    json_t *msg = json_loadb ((char *) buf + 8, h, 0, NULL);
    free (buf);
    return msg;
}

/* The bytes of one sealed frame carrying `text` (as the client sends it), in out; its length. */
static size_t s_raw_frame (s_raw_t *r, const char *text, unsigned char *out, bool forge)
{
    uint32_t h = htonl ((uint32_t) strlen (text)), b = 0;
    memcpy (out, &h, 4); memcpy (out + 4, &b, 4);
    memcpy (out + 8, text, strlen (text));
    size_t n = 8 + strlen (text);
    unsigned char seq[8];
    for (int i = 0; i < 8; i++) seq[i] = (unsigned char) (r->sent >> (56 - 8 * i));
    s_hmac (r->key, 32, "blendmq-frame-client", seq, 8, out, n, out + n);
    if (forge) out[n] ^= 0x80;
    else r->sent++;
    return n + 32;
}

/* A client by hand: challenge, hello with the right proof, the session key. */
static void s_raw_hello (s_raw_t *r)
{
    r->fd = s_tcp ();
    assert_true (r->fd >= 0);
    r->sent = r->received = 0;
    json_t *ch = s_raw_read (r, false);
    assert_non_null (ch);
    unsigned char ns[32], nc[32], mac[32];
    size_t n = 0;
    const char *ns_hex = json_string_value (json_object_get (json_object_get (ch, "challenge"), "nonce"));
    assert_int_equal (sodium_hex2bin (ns, 32, ns_hex, strlen (ns_hex), NULL, &n, NULL), 0);
    json_decref (ch);
    randombytes_buf (nc, 32);
    s_hmac ((const unsigned char *) TOKEN, strlen (TOKEN), "blendmq-link-client", ns, 32, nc, 32, mac);
    char nc_hex[65], mac_hex[65], text[512];
    sodium_bin2hex (nc_hex, sizeof nc_hex, nc, 32);
    sodium_bin2hex (mac_hex, sizeof mac_hex, mac, 32);
    snprintf (text, sizeof text, "{\"id\":1,\"cmd\":\"hello\",\"args\":{\"nonce\":\"%s\",\"mac\":\"%s\",\"operations\":[]}}",
              nc_hex, mac_hex);
    uint32_t head[2] = { htonl ((uint32_t) strlen (text)), 0 };
    assert_int_equal (send (r->fd, head, 8, MSG_NOSIGNAL), 8);
    assert_int_equal (send (r->fd, text, strlen (text), MSG_NOSIGNAL), (ssize_t) strlen (text));
    json_t *reply = s_raw_read (r, false);
    assert_non_null (reply);
    assert_true (json_is_true (json_object_get (reply, "ok")));
    json_decref (reply);
    s_hmac ((const unsigned char *) TOKEN, strlen (TOKEN), "blendmq-link-session", ns, 32, nc, 32, r->key);
}

static void test_forged_frame_refused (void **state)
{
    s_raw_t r;
    s_raw_hello (&r);
    unsigned char frame[256];
    size_t n = s_raw_frame (&r, "{\"id\":2,\"cmd\":\"ping\",\"args\":{}}", frame, false);
    assert_int_equal (send (r.fd, frame, n, MSG_NOSIGNAL), (ssize_t) n);
    json_t *reply = s_raw_read (&r, true);              /* a good frame: answered, sealed */
    assert_non_null (reply);
    assert_true (json_is_true (json_object_get (reply, "ok")));
    json_decref (reply);
    n = s_raw_frame (&r, "{\"id\":3,\"cmd\":\"reset_scene\",\"args\":{}}", frame, true);
    assert_int_equal (send (r.fd, frame, n, MSG_NOSIGNAL), (ssize_t) n);
    reply = s_raw_read (&r, true);                      /* the refusal, then the close */
    assert_non_null (reply);
    assert_false (json_is_true (json_object_get (reply, "ok")));
    assert_non_null (strstr (json_string_value (json_object_get (reply, "error")), "MAC"));
    json_decref (reply);
    assert_true (s_closed_within (r.fd, 2000));
    close (r.fd);
    assert_true (s_log_has ("frame MAC does not match", 2000));
}

static void test_replayed_frame_refused (void **state)
{
    s_raw_t r;
    s_raw_hello (&r);
    unsigned char frame[256];
    size_t n = s_raw_frame (&r, "{\"id\":2,\"cmd\":\"ping\",\"args\":{}}", frame, false);
    assert_int_equal (send (r.fd, frame, n, MSG_NOSIGNAL), (ssize_t) n);
    json_t *reply = s_raw_read (&r, true);
    assert_true (json_is_true (json_object_get (reply, "ok")));
    json_decref (reply);
    assert_int_equal (send (r.fd, frame, n, MSG_NOSIGNAL), (ssize_t) n);      /* the same bytes again */
    reply = s_raw_read (&r, true);
    assert_non_null (reply);
    assert_false (json_is_true (json_object_get (reply, "ok")));
    assert_non_null (strstr (json_string_value (json_object_get (reply, "error")), "MAC"));
    json_decref (reply);
    assert_true (s_closed_within (r.fd, 2000));
    close (r.fd);
    /* a frame of the previous connection replayed on a new one: another session key */
    s_raw_t r2;
    s_raw_hello (&r2);
    assert_int_equal (send (r2.fd, frame, n, MSG_NOSIGNAL), (ssize_t) n);
    reply = s_raw_read (&r2, true);
    assert_non_null (reply);
    assert_false (json_is_true (json_object_get (reply, "ok")));
    json_decref (reply);
    assert_true (s_closed_within (r2.fd, 2000));
    close (r2.fd);
}

/* ---- the unix socket ----------------------------------------------------------- */

static void test_unix_socket_0600 (void **state)
{
    char token_file[256], addon[512], log[300];
    snprintf (token_file, sizeof token_file, "%s/token", s_dir);
    snprintf (addon, sizeof addon, "%s/services/executor/addon/blendmq_addon.py", BMQ_SOURCE_DIR);
    snprintf (log, sizeof log, "%s/blender-unix.log", s_dir);
    pid_t pid = fork ();
    if (pid == 0) {
        if (!freopen (log, "w", stdout) || !freopen (log, "a", stderr)) _exit (126);
        const char *blender = getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender";
        execlp (blender, blender, "-b", "--factory-startup", "--python", addon, "--", "--socket", s_sock,
                "--token-file", token_file, (char *) NULL);
        _exit (127);
    }
    struct stat st;
    bool up = false;
    for (int i = 0; i < 1200 && !up; i++) { up = stat (s_sock, &st) == 0 && S_ISSOCK (st.st_mode); if (!up) usleep (50000); }
    assert_true (up);
    assert_int_equal (st.st_mode & 0777, 0600);
    char host[300];
    snprintf (host, sizeof host, "unix:%s", s_sock);
    bmq_blender_link_t *link = s_link (host);
    char err[256] = "";
    int rc = -1;
    for (int i = 0; i < 50 && rc; i++) { rc = bmq_blender_link_connect (link, 5000, err, sizeof err); if (rc) usleep (100000); }
    if (rc) fail_msg ("connect over the unix socket: %s", err);
    json_t *reply = NULL;
    assert_int_equal (bmq_blender_link_call (link, "ping", NULL, 5000, &reply, NULL, NULL, err, sizeof err), BMQ_LINK_OK);
    json_decref (reply);
    bmq_blender_link_destroy (&link);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
}

int main (void)
{
    if (system ("command -v \"${BLENDMQ_BLENDER:-blender}\" >/dev/null 2>&1") != 0) {
        fprintf (stderr, "skipped: no Blender (blender on PATH, or BLENDMQ_BLENDER)\n");
        return 77;
    }
    if (sodium_init () < 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_hog_cannot_hold_the_slot),
        cmocka_unit_test (test_hog_crowd),
        cmocka_unit_test (test_silent_hog_timed_out),
        cmocka_unit_test (test_forged_frame_refused),
        cmocka_unit_test (test_replayed_frame_refused),
        cmocka_unit_test (test_unix_socket_0600),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
