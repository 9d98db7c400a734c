/* sandbox_bwrap — bubblewrap command line, rlimits, and the availability probe. */
#include "sandbox_bwrap.h"

#include "blender_root.h"
#include "config.h"
#include "sandbox_seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_NOBODY 65534
#define S_MAX_ARGS 160

void bmq_sandbox_limits_defaults (bmq_sandbox_limits_t *l)
{
    static char runner[1024];
    if (!l->bwrap) l->bwrap = "bwrap";
    /* the Blender live runs (the supervisor exports what it started, issue 30) */
    if (!l->blender && getenv ("BLENDMQ_BLENDER_PATH") && *getenv ("BLENDMQ_BLENDER_PATH")) l->blender = getenv ("BLENDMQ_BLENDER_PATH");
    if (!l->blender && getenv ("BLENDMQ_BLENDER") && *getenv ("BLENDMQ_BLENDER")) l->blender = getenv ("BLENDMQ_BLENDER");
    if (!l->blender) l->blender = "blender";
    if (!l->runner) {
        snprintf (runner, sizeof runner, "%s/services/executor/sandbox/sandbox_runner.py", bmq_data_dir ());
        l->runner = runner;
    }
    if (l->cpu_seconds <= 0) l->cpu_seconds = 60;
    if (l->memory_mb <= 0) l->memory_mb = 4096;
    if (l->file_mb <= 0) l->file_mb = 64;
    if (l->processes <= 0) l->processes = 512;
    if (!l->guard) {
        static char guard[1024];
        snprintf (guard, sizeof guard, "%s/services/executor/addon/blendmq/script_exec.py", bmq_data_dir ());
        l->guard = guard;
    }
    if (!l->proto) {
        static char proto[1024];
        snprintf (proto, sizeof proto, "%s/services/executor/addon/blendmq/link_proto.py", bmq_data_dir ());
        l->proto = proto;
    }
    if (l->uid == 0 || l->gid == 0) {
        /* the dedicated id, only while nothing else (no user, no group) has it */
        struct passwd pw, *pwp = NULL;
        struct group gr, *grp = NULL;
        char buf[4096];
        const char *taken = NULL;
        if (getpwuid_r (BMQ_SANDBOX_UID, &pw, buf, sizeof buf, &pwp) == 0 && pwp
            && strcmp (pwp->pw_name, BMQ_SANDBOX_NAME) != 0)
            taken = "user";
        if (!taken && getgrgid_r (BMQ_SANDBOX_UID, &gr, buf, sizeof buf, &grp) == 0 && grp
            && strcmp (grp->gr_name, BMQ_SANDBOX_NAME) != 0)
            taken = "group";
        if (!taken) {
            l->uid = BMQ_SANDBOX_UID;
            l->gid = BMQ_SANDBOX_UID;
            snprintf (l->uid_note, sizeof l->uid_note, "uid/gid %d (dedicated to the sandbox)", BMQ_SANDBOX_UID);
        }
        else {
            l->uid = S_NOBODY;
            l->gid = S_NOBODY;
            snprintf (l->uid_note, sizeof l->uid_note, "uid/gid nobody (fallback: id %d is another %s's)",
                      BMQ_SANDBOX_UID, taken);
        }
    }
    else if (!l->uid_note[0])
        snprintf (l->uid_note, sizeof l->uid_note, "uid %u gid %u (configured)", (unsigned) l->uid, (unsigned) l->gid);
}

typedef struct {
    const char *argv[S_MAX_ARGS];
    int argc;
    char store[8192];
    size_t used;
} s_args_t;

static void s_add (s_args_t *a, const char *s)
{
    if (a->argc < S_MAX_ARGS - 1)
        a->argv[a->argc++] = s;
    a->argv[a->argc] = NULL;
}

static const char *s_keep (s_args_t *a, const char *fmt, const char *x)
{
    char *dst = a->store + a->used;
    int n = snprintf (dst, sizeof a->store - a->used, fmt, x);
    if (n < 0 || (size_t) n >= sizeof a->store - a->used)
        return "/nonexistent";
    a->used += (size_t) n + 1;
    return dst;
}

/* The isolation both Blenders share: the sandbox's and the confined live one
 * (blender_confine.c) are made of the same flags, so they cannot drift apart. */
void bmq_bwrap_common_flags (bmq_bwrap_add_fn add, void *ctx, const char *root, const char *home)
{
    static const char *etc[] = { "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                                 "/etc/fonts", "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
                                 "/etc/mime.types", "/etc/OpenCL", "/etc/glvnd", NULL };
    static const char *flags[] = {
        "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
        "--setenv", "PATH", "/usr/bin", "--setenv", "LANG", "C.UTF-8", "--setenv", "TMPDIR", "/tmp",
        /* str hashes the same in every run: the order of a set of strings is no coin (issue 23) */
        "--setenv", "PYTHONHASHSEED", "0",
        /* Mesa would keep a shader cache in $HOME: a file the script did not write (issue 30) */
        "--setenv", "MESA_SHADER_CACHE_DISABLE", "true", "--setenv", "MESA_GLSL_CACHE_DISABLE", "true", NULL };
    char from[1100];
    for (const char **f = flags; *f; f++) add (ctx, *f);
    add (ctx, "--setenv"); add (ctx, "HOME"); add (ctx, home);
    /* /usr and /etc: the Blender's own root when it has one (blender_root.h), else the host's */
    snprintf (from, sizeof from, "%s/usr", root ? root : "");
    add (ctx, "--ro-bind"); add (ctx, from); add (ctx, "/usr");
    static const char *links[] = { "usr/bin", "/bin", "usr/sbin", "/sbin", "usr/lib", "/lib", "usr/lib64", "/lib64", NULL };
    for (const char **l = links; *l; l += 2) { add (ctx, "--symlink"); add (ctx, l[0]); add (ctx, l[1]); }
    for (const char **e = etc; *e; e++) {
        snprintf (from, sizeof from, "%s%s", root ? root : "", *e);
        add (ctx, "--ro-bind-try"); add (ctx, from); add (ctx, *e);
    }
    add (ctx, "--proc"); add (ctx, "/proc");
    add (ctx, "--dev"); add (ctx, "/dev");
}

static void s_add_kept (void *ctx, const char *arg)
{
    s_args_t *a = ctx;
    s_add (a, s_keep (a, "%s", arg));
}

/* The isolation flags shared by the real run and the probe. */
static void s_isolation (s_args_t *a, const bmq_sandbox_limits_t *l)
{
    s_add (a, l->bwrap);
    bmq_bwrap_common_flags (s_add_kept, a, l->root, "/home/sb");
    s_add (a, "--tmpfs"); s_add (a, "/home");
    s_add (a, "--seccomp"); s_add (a, "4");         /* s_spawn puts the filter there */
}

/* Last: nothing bwrap made may stay writable (the instance folders are binds). */
static void s_read_only_tree (s_args_t *a)
{
    s_add (a, "--remount-ro"); s_add (a, "/home");
    s_add (a, "--remount-ro"); s_add (a, "/dev");
    s_add (a, "--remount-ro"); s_add (a, "/");
}

void bmq_sandbox_set_rlimits (int memory_mb, int file_mb, int processes)
{
    struct rlimit r;
    r.rlim_cur = r.rlim_max = (rlim_t) memory_mb << 20;
    setrlimit (RLIMIT_AS, &r);
    r.rlim_cur = r.rlim_max = (rlim_t) file_mb << 20;
    setrlimit (RLIMIT_FSIZE, &r);
    r.rlim_cur = r.rlim_max = (rlim_t) processes;
    setrlimit (RLIMIT_NPROC, &r);
    r.rlim_cur = r.rlim_max = 0;
    setrlimit (RLIMIT_CORE, &r);
    r.rlim_cur = r.rlim_max = 1024;
    setrlimit (RLIMIT_NOFILE, &r);
}

static void s_child_limits (const bmq_sandbox_limits_t *l, bool drop_root)
{
    struct rlimit r;
    setpgid (0, 0);
    r.rlim_cur = r.rlim_max = (rlim_t) l->cpu_seconds;
    setrlimit (RLIMIT_CPU, &r);
    bmq_sandbox_set_rlimits (l->memory_mb, l->file_mb, l->processes);
    if (drop_root && geteuid () == 0) {
        if (setgroups (0, NULL) < 0 || setgid (l->gid) < 0 || setuid (l->uid) < 0 || l->uid == 0
            || geteuid () == 0)
            _exit (126);                /* never run as root by accident */
    }
}

/* fork + exec with fds 0/1/2/3 set up and the seccomp program on fd 4;
 * everything else closed. */
static pid_t s_spawn (const bmq_sandbox_limits_t *l, s_args_t *a, int ctrl_fd, int log_fd, bool drop_root,
                      char *err, size_t errlen)
{
    int filter = bmq_sandbox_seccomp_fd (err, errlen);
    if (filter < 0)
        return -1;                      /* never without the filter */
    int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) {
        snprintf (err, errlen, "cannot start the sandbox: %s", strerror (errno));
        close (filter);
        return -1;
    }
    pid_t pid = fork ();
    if (pid == 0) {
        /* only async-signal-safe calls from here: the parent may have threads */
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        signal (SIGPIPE, SIG_DFL);
        int c = ctrl_fd >= 0 ? fcntl (ctrl_fd, F_DUPFD, 10) : -1;
        int f = fcntl (filter, F_DUPFD, 10);
        if (f < 0)
            _exit (125);
        dup2 (devnull, 0);
        dup2 (log_fd >= 0 ? log_fd : devnull, 1);
        dup2 (log_fd >= 0 ? log_fd : devnull, 2);
        if (c >= 0)
            dup2 (c, 3);
        else
            dup2 (devnull, 3);
        if (dup2 (f, 4) != 4)           /* not close-on-exec: bwrap --seccomp 4 reads it */
            _exit (125);
        for (int fd = 5; fd < 4096; fd++)
            close (fd);
        s_child_limits (l, drop_root);
        execvp (a->argv[0], (char *const *) a->argv);
        _exit (127);
    }
    int saved = errno;
    close (devnull);
    close (filter);
    if (pid < 0)
        snprintf (err, errlen, "cannot start the sandbox: %s", strerror (saved));
    return pid;
}

/* The length of path's folder part (no trailing slash). */
static int s_dir_len (const char *path)
{
    const char *slash = strrchr (path, '/');
    return slash ? (int) (slash - path) : 0;
}

pid_t bmq_sandbox_spawn (const bmq_sandbox_limits_t *l, const char *inst_dir, const char *scene_path, int ctrl_fd,
                         int log_fd, bool drop_root, char *err, size_t errlen)
{
    s_args_t a = { .argc = 0 };
    s_isolation (&a, l);
    s_add (&a, "--bind"); s_add (&a, s_keep (&a, "%s/tmp", inst_dir)); s_add (&a, "/tmp");
    s_add (&a, "--bind"); s_add (&a, s_keep (&a, "%s/shm", inst_dir)); s_add (&a, "/dev/shm");
    s_add (&a, "--bind"); s_add (&a, s_keep (&a, "%s/home", inst_dir)); s_add (&a, "/home/sb");
    s_add (&a, "--bind"); s_add (&a, s_keep (&a, "%s/out", inst_dir)); s_add (&a, "/out");
    s_add (&a, "--ro-bind"); s_add (&a, s_keep (&a, "%s/job", inst_dir)); s_add (&a, "/job");
    s_add (&a, "--ro-bind"); s_add (&a, l->runner); s_add (&a, "/sandbox/runner.py");
    s_add (&a, "--ro-bind"); s_add (&a, l->guard); s_add (&a, "/sandbox/script_exec.py");
    s_add (&a, "--ro-bind"); s_add (&a, l->proto); s_add (&a, "/sandbox/link_proto.py");
    /* the fingerprint and the state file reader, next to the guard (issue 23) */
    char sibling[1100];
    snprintf (sibling, sizeof sibling, "%.*s/fingerprint.py", s_dir_len (l->guard), l->guard);
    s_add (&a, "--ro-bind"); s_add (&a, s_keep (&a, "%s", sibling)); s_add (&a, "/sandbox/fingerprint.py");
    snprintf (sibling, sizeof sibling, "%.*s/state.py", s_dir_len (l->guard), l->guard);
    s_add (&a, "--ro-bind"); s_add (&a, s_keep (&a, "%s", sibling)); s_add (&a, "/sandbox/state.py");
    /* the guard's allowlists, generated from proto/script_rules.json (issue 31) */
    snprintf (sibling, sizeof sibling, "%.*s/script_rules.py", s_dir_len (l->guard), l->guard);
    s_add (&a, "--ro-bind"); s_add (&a, s_keep (&a, "%s", sibling)); s_add (&a, "/sandbox/script_rules.py");
    if (scene_path && scene_path[0] == '/') {
        s_add (&a, "--ro-bind"); s_add (&a, s_keep (&a, "%s/job/scene.blend", inst_dir)); s_add (&a, scene_path);
    }
    s_read_only_tree (&a);
    s_add (&a, "--chdir"); s_add (&a, "/home/sb");
    s_add (&a, "--");
    s_add (&a, l->blender);
    s_add (&a, "-b");
    s_add (&a, "--factory-startup");
    s_add (&a, "--disable-autoexec");
    s_add (&a, "--python-exit-code"); s_add (&a, "1");
    s_add (&a, "--python"); s_add (&a, "/sandbox/runner.py");
    if (a.argc >= S_MAX_ARGS - 1) {
        snprintf (err, errlen, "cannot start the sandbox: too many arguments");
        return -1;
    }
    return s_spawn (l, &a, ctrl_fd, log_fd, drop_root, err, errlen);
}

int bmq_sandbox_run_isolated (const bmq_sandbox_limits_t *l, bool drop_root, const char *const *argv, int log_fd,
                              int *status)
{
    char err[256];
    s_args_t a = { .argc = 0 };
    s_isolation (&a, l);
    s_add (&a, "--tmpfs"); s_add (&a, "/tmp");
    s_read_only_tree (&a);
    s_add (&a, "--");
    for (; *argv; argv++)
        s_add (&a, *argv);
    pid_t pid = s_spawn (l, &a, -1, log_fd, drop_root, err, sizeof err);
    if (pid < 0)
        return -1;
    for (int waited = 0; waited < 10000; waited += 10) {
        pid_t r = waitpid (pid, status, WNOHANG);
        if (r == pid)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep (&ts, NULL);
    }
    kill (-pid, SIGKILL);
    kill (pid, SIGKILL);
    waitpid (pid, status, 0);
    return -1;
}

/* The absolute path of exe (PATH lookup), in out; false when not found. */
static bool s_in_path (const char *exe, char *out, size_t outlen)
{
    if (strchr (exe, '/')) {
        snprintf (out, outlen, "%s", exe);
        return access (exe, X_OK) == 0;
    }
    const char *path = getenv ("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; p && *p;) {
        const char *colon = strchr (p, ':');
        size_t n = colon ? (size_t) (colon - p) : strlen (p);
        snprintf (out, outlen, "%.*s/%s", (int) n, p, exe);
        if (n > 0 && access (out, X_OK) == 0)
            return true;
        p = colon ? colon + 1 : NULL;
    }
    return false;
}

int bmq_sandbox_probe (bmq_sandbox_limits_t *l, bool *drop_root, char *err, size_t errlen)
{
    char *bwrap = l->resolved[0], *blender = l->resolved[1];
    int status = 0;
    if (!s_in_path (l->bwrap, bwrap, sizeof l->resolved[0])) {
        snprintf (err, errlen, "sandbox unavailable: bubblewrap (%s) is not installed; scripts cannot be "
                  "checked in a sandbox, so live execution is refused", l->bwrap);
        return -1;
    }
    if (access (l->runner, R_OK) != 0) {
        snprintf (err, errlen, "sandbox unavailable: the runner %s is missing", l->runner);
        return -1;
    }
    if (access (l->guard, R_OK) != 0) {
        snprintf (err, errlen, "sandbox unavailable: the run-time guard %s is missing", l->guard);
        return -1;
    }
    if (access (l->proto, R_OK) != 0) {
        snprintf (err, errlen, "sandbox unavailable: the protocol module %s is missing", l->proto);
        return -1;
    }
    if (bmq_blender_root (l->blender, l->root, sizeof l->root))
        snprintf (blender, sizeof l->resolved[1], "%s", BMQ_BLENDER_ROOT_EXE);     /* its root's /usr */
    else if (!s_in_path (l->blender, blender, sizeof l->resolved[1]) || strncmp (blender, "/usr/", 5) != 0) {
        snprintf (err, errlen, "sandbox unavailable: Blender (%s) is neither under /usr nor in a root of its own "
                  "(deploy/blender-roots.sh), the system trees the sandbox can show it", l->blender);
        return -1;
    }
    l->bwrap = bwrap;               /* absolute from now on: no PATH search as nobody */
    l->blender = blender;
    bool want_drop = geteuid () == 0 && !l->keep_root;
    const char *const true_argv[] = { "/usr/bin/true", NULL };
    if (bmq_sandbox_run_isolated (l, want_drop, true_argv, -1, &status) == 0 && WIFEXITED (status)
        && WEXITSTATUS (status) == 0) {
        *drop_root = want_drop;
        return 0;
    }
    if (want_drop && bmq_sandbox_run_isolated (l, false, true_argv, -1, &status) == 0 && WIFEXITED (status)
        && WEXITSTATUS (status) == 0) {
        *drop_root = false;         /* no unprivileged user namespaces: bwrap as root, caps dropped */
        return 0;
    }
    snprintf (err, errlen, "sandbox unavailable: bubblewrap cannot create its namespaces here (exit %d; "
              "unprivileged user namespaces disabled, or a container without CAP_SYS_ADMIN); live "
              "execution is refused", WIFEXITED (status) ? WEXITSTATUS (status) : -1);
    return -1;
}
