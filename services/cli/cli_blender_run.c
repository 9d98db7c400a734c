/* cli_blender_run — `blendmq blender-run`: the live headless Blender,
 * confined (blender_confine.h), as one process that a supervisor (ours, or
 * systemd, or a container's init) can start, stop and watch like any other:
 *
 *   blendmq blender-run --token-file T --state-dir D [--blender B] -- ADD-ON ARGS…
 *
 * runs `bwrap … -- B ADD-ON ARGS…` with the sandbox's seccomp filter and
 * rlimits as its child, passes SIGTERM, SIGINT and SIGHUP on to it, and exits
 * with its status (128 + signal when it was killed). bwrap runs with
 * --die-with-parent: when this process dies, even by SIGKILL, Blender dies
 * with it; when the process that started this one dies (a supervisor killed
 * with -9), Blender does not, like every other process of the stack (`down`
 * still finds it by its pid file). */
#include "blender_confine.h"
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int bmq_cli_blender_run (int argc, char **argv)
{
    bmq_blender_confine_t c = { .seccomp_fd = 3 };
    int i = 0;
    for (; i < argc && strcmp (argv[i], "--"); i++) {
        if (!strcmp (argv[i], "--token-file") && i + 1 < argc) c.token_file = argv[++i];
        else if (!strcmp (argv[i], "--state-dir") && i + 1 < argc) c.state_dir = argv[++i];
        else if (!strcmp (argv[i], "--blender") && i + 1 < argc) c.blender = argv[++i];
        else { fprintf (stderr, "blendmq blender-run: unknown argument %s\n", argv[i]); return 2; }
    }
    if (!c.token_file || !c.state_dir || i >= argc) {
        fprintf (stderr, "usage: blendmq blender-run --token-file T --state-dir D [--blender B] -- ADD-ON ARGS...\n");
        return 2;
    }
    bmq_blender_confine_defaults (&c);
    char *bwrap_argv[BMQ_CONFINE_MAX_ARGS] = { 0 }, err[600];
    int seccomp = -1;
    if (bmq_blender_confine_argv (&c, (const char *const *) argv + i + 1, bwrap_argv, err, sizeof err)
        || (seccomp = bmq_blender_confine_seccomp_fd (err, sizeof err)) < 0) {
        fprintf (stderr, "blendmq blender-run: %s\n", err);
        bmq_blender_confine_free (bwrap_argv);
        return 1;
    }
    sigset_t wanted, old;
    sigemptyset (&wanted);
    sigaddset (&wanted, SIGTERM);
    sigaddset (&wanted, SIGINT);
    sigaddset (&wanted, SIGHUP);
    sigaddset (&wanted, SIGCHLD);
    sigprocmask (SIG_BLOCK, &wanted, &old);
    pid_t pid = fork ();
    if (pid == 0) {
        sigprocmask (SIG_SETMASK, &old, NULL);
        if (bmq_blender_confine_child (&c, seccomp)) _exit (126);
        execvp (bwrap_argv[0], bwrap_argv);
        _exit (127);
    }
    close (seccomp);
    bmq_blender_confine_free (bwrap_argv);
    if (pid < 0) { fprintf (stderr, "blendmq blender-run: cannot fork: %s\n", strerror (errno)); return 1; }
    for (;;) {
        struct timespec tick = { 1, 0 };
        int sig = sigtimedwait (&wanted, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) kill (pid, sig);    /* bwrap ends; Blender with it */
        int status;
        pid_t r = waitpid (pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + (WIFSIGNALED (status) ? WTERMSIG (status) : 0);
        if (r < 0 && errno != EINTR) return 1;
    }
}
