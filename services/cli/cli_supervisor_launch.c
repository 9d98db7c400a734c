/* cli_supervisor_launch — how `up` starts the supervisor: fork, setsid and
 * exec of `blendmq --run-dir RUN supervise ...` (a fresh process: no czmq
 * threads carried over a fork), its log in RUN/logs/supervisor.log, and a
 * pipe on its fd 3 where it reports "ok" or "error: WHY" once it started
 * every Blender and service. */
#include "cli_supervisor.h"
#include "service.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Read the supervisor's one-line report from fd, waiting up to timeout_ms.
 * 0 on "ok"; -1 with err otherwise. */
static int s_read_report (int fd, const char *run_dir, int64_t timeout_ms, char *err, size_t errlen)
{
    char line[1600] = "";
    size_t len = 0;
    int64_t deadline = bmq_mono_ms () + timeout_ms;
    while (len < sizeof line - 1 && !memchr (line, '\n', len)) {
        int64_t left = deadline - bmq_mono_ms ();
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = left > 0 ? poll (&p, 1, (int) left) : 0;
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {
            snprintf (err, errlen, "the supervisor did not report within %lld s (see %s/logs/supervisor.log)",
                      (long long) (timeout_ms / 1000), run_dir);
            return -1;
        }
        ssize_t n = read (fd, line + len, sizeof line - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t) n;
        line[len] = 0;
    }
    line[strcspn (line, "\n")] = 0;
    if (!strcmp (line, "ok")) return 0;
    if (!strncmp (line, "error: ", 7)) snprintf (err, errlen, "%s", line + 7);
    else snprintf (err, errlen, "the supervisor ended before starting the stack (see %s/logs/supervisor.log)", run_dir);
    return -1;
}

pid_t bmq_cli_supervisor_start (const bmq_cli_opts_t *opts, char *err, size_t errlen)
{
    char exe[1024], log[1200], validators[16], blenders[16];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) { snprintf (err, errlen, "cannot find the blendmq binary (/proc/self/exe): %s", strerror (errno)); return -1; }
    exe[n] = 0;
    snprintf (log, sizeof log, "%s/logs/supervisor.log", opts->run_dir);
    snprintf (validators, sizeof validators, "%d", opts->validators);
    snprintf (blenders, sizeof blenders, "%d", opts->blenders);
    char *const argv[] = { exe, "--run-dir", (char *) opts->run_dir, "supervise", "--validators", validators,
                           "--blenders", blenders, opts->no_blender ? "--no-blender" : NULL, NULL };
    int fds[2];
    if (pipe2 (fds, O_CLOEXEC)) { snprintf (err, errlen, "cannot make a pipe for the supervisor: %s", strerror (errno)); return -1; }
    pid_t pid = fork ();
    if (pid == 0) {
        /* a daemon: its own session, no terminal, the report pipe on fd 3 */
        setsid ();
        if (fds[1] == SUPERVISOR_READY_FD) fcntl (SUPERVISOR_READY_FD, F_SETFD, 0);
        else dup2 (fds[1], SUPERVISOR_READY_FD);
        int in = open ("/dev/null", O_RDONLY | O_CLOEXEC);
        int out = open (log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (in >= 0) dup2 (in, 0);
        if (out >= 0) { dup2 (out, 1); dup2 (out, 2); }
        close_range (SUPERVISOR_READY_FD + 1, ~0U, 0);
        execv (exe, argv);
        _exit (127);
    }
    close (fds[1]);
    if (pid < 0) {
        close (fds[0]);
        snprintf (err, errlen, "cannot fork the supervisor: %s", strerror (errno));
        return -1;
    }
    /* it starts every Blender (each may take SUPERVISOR_BLENDER_TIMEOUT_MS) and then the services */
    int64_t timeout = (int64_t) SUPERVISOR_BLENDER_TIMEOUT_MS * (opts->no_blender ? 0 : opts->blenders) + 30000;
    int rc = s_read_report (fds[0], opts->run_dir, timeout, err, errlen);
    close (fds[0]);
    return rc ? -1 : pid;
}
