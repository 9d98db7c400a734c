/* The live headless Blender's confinement (issue 23): a Blender started the
 * way the supervisor starts it (bmq_blender_confine_argv, then
 * bmq_blender_confine_child in the forked child: the same bwrap command line,
 * seccomp filter and rlimits) runs confine_probe.py, which tries to write
 * canaries everywhere, read a secret of the run dir and connect to a TCP
 * listener of ours on 127.0.0.1. Only its state folder, its private /tmp
 * and HOME take a write (and nothing of those two reaches the host); the
 * listener never sees a connection; PYTHONHASHSEED is 0 and the address
 * space is the sandbox's. Exit 77 without Blender or bubblewrap. */
#include "blender_confine.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char s_run[128], s_state[256], s_name[64];

static void s_write (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
}

static bool s_exists (const char *path)
{
    struct stat st;
    return lstat (path, &st) == 0;
}

static const char *s_get (json_t *doc, const char *key)
{
    const char *v = json_string_value (json_object_get (doc, key));
    return v ? v : "(missing)";
}

static void s_expect_ok (json_t *doc, const char *key)
{
    if (strcmp (s_get (doc, key), "ok")) fail_msg ("%s should have worked: %s", key, s_get (doc, key));
}

static void s_expect_refused (json_t *doc, const char *key)
{
    if (!strcmp (s_get (doc, key), "ok") || !strcmp (s_get (doc, key), "(missing)"))
        fail_msg ("%s should have been refused: %s", key, s_get (doc, key));
    fprintf (stderr, "  %-16s refused: %s\n", key, s_get (doc, key));
}

static void test_confined_blender (void **state)
{
    (void) state;
    char token[300], secret[300], probe[300], log[300], path[600], port_text[16];
    snprintf (token, sizeof token, "%s/blender.token", s_run);
    snprintf (secret, sizeof secret, "%s/secret.key", s_run);
    snprintf (probe, sizeof probe, "%s/confine_probe.py", s_state);
    snprintf (log, sizeof log, "%s/blender.log", s_run);
    s_write (token, "t0ken");
    chmod (token, 0600);
    s_write (secret, "the run dir's secret");
    /* the probe goes where the confined Blender can read it: its state folder */
    char cmd[800];
    snprintf (cmd, sizeof cmd, "cp '%s/tests/blender_link/confine_probe.py' '%s'", BMQ_SOURCE_DIR, probe);
    assert_int_equal (system (cmd), 0);

    int lfd = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    assert_int_equal (bind (lfd, (struct sockaddr *) &a, sizeof a), 0);
    assert_int_equal (listen (lfd, 4), 0);
    assert_int_equal (getsockname (lfd, (struct sockaddr *) &a, &alen), 0);
    snprintf (port_text, sizeof port_text, "%d", ntohs (a.sin_port));

    bmq_blender_confine_t c = { .blender = getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender",
                                .data_dir = BMQ_SOURCE_DIR, .token_file = token, .state_dir = s_state, .seccomp_fd = 3 };
    bmq_blender_confine_defaults (&c);
    const char *const args[] = { "-b", "--factory-startup", "--python", probe, "--", s_state, s_run, BMQ_SOURCE_DIR,
                                 token, port_text, s_name, NULL };
    char *argv[BMQ_CONFINE_MAX_ARGS] = { 0 };
    char err[400] = "";
    if (bmq_blender_confine_argv (&c, args, argv, err, sizeof err)) fail_msg ("%s", err);
    int seccomp = bmq_blender_confine_seccomp_fd (err, sizeof err);
    if (seccomp < 0) fail_msg ("%s", err);
    pid_t pid = fork ();
    if (pid == 0) {
        int out = open (log, O_WRONLY | O_CREAT | O_TRUNC, 0600), in = open ("/dev/null", O_RDONLY);
        dup2 (in, 0);
        dup2 (out, 1);
        dup2 (out, 2);
        setsid ();
        if (bmq_blender_confine_child (&c, seccomp)) _exit (126);
        execvp (argv[0], argv);
        _exit (127);
    }
    close (seccomp);
    bmq_blender_confine_free (argv);
    int status = 0;
    for (int i = 0; i < 1800 && waitpid (pid, &status, WNOHANG) == 0; i++) usleep (100000);
    if (kill (pid, 0) == 0) { kill (pid, SIGKILL); waitpid (pid, &status, 0); fail_msg ("the confined Blender did not end"); }

    snprintf (path, sizeof path, "%s/probe.json", s_state);
    json_t *doc = json_load_file (path, 0, NULL);
    if (!doc) {
        snprintf (cmd, sizeof cmd, "tail -20 '%s' >&2", log);
        if (system (cmd)) { }
        fail_msg ("the probe wrote no result (Blender exit status %d)", status);
    }
    s_expect_ok (doc, "write_state");
    s_expect_ok (doc, "write_tmp");
    s_expect_ok (doc, "write_home");
    s_expect_ok (doc, "read_token");
    /* the run dir: refused, or (a run dir under /tmp) written into the private /tmp; never on the host (below) */
    fprintf (stderr, "  %-16s %s\n", "write_run", s_get (doc, "write_run"));
    s_expect_refused (doc, "write_addon");
    s_expect_refused (doc, "write_usr");
    s_expect_refused (doc, "write_token");
    s_expect_refused (doc, "write_root_home");
    s_expect_refused (doc, "read_secret");
    s_expect_refused (doc, "tcp_local");
    assert_string_equal (s_get (doc, "pythonhashseed"), "0");
    assert_int_equal (json_integer_value (json_object_get (doc, "rlimit_as_mb")), c.memory_mb);
    assert_int_equal (json_integer_value (json_object_get (doc, "rlimit_core")), 0);
    /* the environment is the one bwrap set, nothing of ours (BLENDMQ_*, tokens) */
    size_t i;
    json_t *v;
    json_array_foreach (json_object_get (doc, "env"), i, v)
        if (!strncmp (json_string_value (v), "BLENDMQ", 7)) fail_msg ("%s leaked into the confined Blender", json_string_value (v));
    json_decref (doc);

    /* on the host: the state folder's canary is there, nothing else is */
    snprintf (path, sizeof path, "%s/canary", s_state);
    assert_true (s_exists (path));
    snprintf (path, sizeof path, "/tmp/%s", s_name);
    assert_false (s_exists (path));
    snprintf (path, sizeof path, "%s/%s", s_run, s_name);
    assert_false (s_exists (path));
    snprintf (path, sizeof path, "%s/services/executor/addon/%s", BMQ_SOURCE_DIR, s_name);
    assert_false (s_exists (path));
    const char *home = getenv ("HOME");
    snprintf (path, sizeof path, "%s/%s", home ? home : "/root", s_name);
    assert_false (s_exists (path));
    /* and our listener never saw a connection */
    int got = accept (lfd, NULL, NULL);
    assert_int_equal (got, -1);
    assert_true (errno == EAGAIN || errno == EWOULDBLOCK);
    close (lfd);
}

int main (void)
{
    if (system ("command -v \"${BLENDMQ_BLENDER:-blender}\" >/dev/null 2>&1") != 0) {
        fprintf (stderr, "skipped: no Blender\n");
        return 77;
    }
    if (system ("bwrap --unshare-all --die-with-parent --ro-bind / / /bin/true >/dev/null 2>&1") != 0) {
        fprintf (stderr, "skipped: bubblewrap is missing or cannot make its namespaces here\n");
        return 77;
    }
    snprintf (s_run, sizeof s_run, "/tmp/bmq-confine-XXXXXX");
    if (!mkdtemp (s_run)) return 1;
    snprintf (s_state, sizeof s_state, "%s/blender-state", s_run);
    mkdir (s_state, 0700);
    snprintf (s_name, sizeof s_name, "bmq-canary-%d", (int) getpid ());
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_confined_blender) };
    int rc = cmocka_run_group_tests (tests, NULL, NULL);
    char cmd[300];
    snprintf (cmd, sizeof cmd, "rm -rf '%s' /tmp/%s", s_run, s_name);
    if (system (cmd)) { }
    return rc;
}
