/* blender_confine — the live headless Blender's bwrap command line and
 * rlimits (see blender_confine.h). */
#include "blender_confine.h"
#include "blender_root.h"

#include "config.h"
#include "sandbox_bwrap.h"
#include "sandbox_seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

void bmq_blender_confine_defaults (bmq_blender_confine_t *c)
{
    bmq_sandbox_limits_t l = { 0 };
    l.uid = l.gid = 1;                  /* the live Blender keeps our uid: skip the sandbox uid lookup */
    bmq_sandbox_limits_defaults (&l);
    if (!c->bwrap) c->bwrap = "bwrap";
    if (!c->blender) c->blender = "blender";
    if (!c->data_dir) c->data_dir = bmq_data_dir ();
    if (c->memory_mb <= 0) c->memory_mb = l.memory_mb;
    if (c->file_mb <= 0) c->file_mb = l.file_mb * 16;
    if (c->processes <= 0) c->processes = l.processes;
}

/* The absolute path of exe (PATH lookup), in out; false when not found. */
static bool s_which (const char *exe, char *out, size_t len)
{
    if (strchr (exe, '/')) { snprintf (out, len, "%s", exe); return access (exe, X_OK) == 0; }
    const char *path = getenv ("PATH");
    for (const char *p = path && *path ? path : "/usr/bin:/bin"; p;) {
        const char *colon = strchr (p, ':');
        size_t n = colon ? (size_t) (colon - p) : strlen (p);
        snprintf (out, len, "%.*s/%s", (int) n, p, exe);
        if (n && access (out, X_OK) == 0) return true;
        p = colon ? colon + 1 : NULL;
    }
    return false;
}

typedef struct {
    char **argv;
    int    argc;
    bool   full;
} s_args_t;

static void s_add (s_args_t *a, const char *s)
{
    if (a->argc >= BMQ_CONFINE_MAX_ARGS - 1) { a->full = true; return; }
    a->argv[a->argc++] = strdup (s);
    a->argv[a->argc] = NULL;
}

static void s_add_copy (void *ctx, const char *arg) { s_add (ctx, arg); }

static void s_add3 (s_args_t *a, const char *flag, const char *x, const char *y)
{
    s_add (a, flag);
    s_add (a, x);
    if (y) s_add (a, y);
}

int bmq_blender_confine_argv (const bmq_blender_confine_t *c, const char *const blender_args[],
                              char *argv[BMQ_CONFINE_MAX_ARGS], char *err, size_t errlen)
{
    char bwrap[1024], blender[1024], real[PATH_MAX], path[1200], fd[16];
    argv[0] = NULL;
    if (!s_which (c->bwrap, bwrap, sizeof bwrap)) {
        snprintf (err, errlen, "bubblewrap (%s) is not installed: Blender cannot be confined "
                  "(install bubblewrap, or set blender.confine: false for development)", c->bwrap);
        return -1;
    }
    if (!s_which (c->blender, blender, sizeof blender) || !realpath (blender, real)) {
        snprintf (err, errlen, "Blender (%s) is not found", c->blender);
        return -1;
    }
    /* a Blender in a root of its own (blender_root.h, issue 30): that root's /usr and /etc */
    char root[512];
    bool rooted = bmq_blender_root (c->blender, root, sizeof root);
    struct stat st;
    if (stat (c->token_file, &st) || stat (c->state_dir, &st) || !S_ISDIR (st.st_mode)) {
        snprintf (err, errlen, "cannot confine Blender: its token file %s or state folder %s is missing", c->token_file,
                  c->state_dir);
        return -1;
    }
    s_args_t a = { .argv = argv };
    s_add (&a, bwrap);
    bmq_bwrap_common_flags (s_add_copy, &a, rooted ? root : NULL, "/home/blender");
    s_add3 (&a, "--tmpfs", "/tmp", NULL);
    s_add3 (&a, "--tmpfs", "/home", NULL);
    s_add3 (&a, "--dir", "/home/blender", NULL);
    if (!rooted && strncmp (real, "/usr/", 5)) {          /* a Blender of its own (e.g. /opt/blender-3.4): its folder */
        char *slash = strrchr (real, '/');
        if (slash) *slash = 0;
        s_add3 (&a, "--ro-bind", real, real);
    }
    snprintf (path, sizeof path, "%s/services/executor/addon", c->data_dir);
    s_add3 (&a, "--ro-bind", path, path);
    snprintf (path, sizeof path, "%s/proto", c->data_dir);
    s_add3 (&a, "--ro-bind-try", path, path);
    s_add3 (&a, "--ro-bind", c->token_file, c->token_file);
    s_add3 (&a, "--bind", c->state_dir, c->state_dir);
    s_add3 (&a, "--remount-ro", "/", NULL);
    snprintf (fd, sizeof fd, "%d", c->seccomp_fd);
    s_add3 (&a, "--seccomp", fd, NULL);
    s_add3 (&a, "--chdir", "/home/blender", NULL);
    s_add (&a, "--");
    s_add (&a, rooted ? BMQ_BLENDER_ROOT_EXE : blender);
    for (int i = 0; blender_args && blender_args[i]; i++) s_add (&a, blender_args[i]);
    if (a.full) {
        bmq_blender_confine_free (argv);
        snprintf (err, errlen, "cannot confine Blender: more than %d arguments", BMQ_CONFINE_MAX_ARGS - 1);
        return -1;
    }
    return 0;
}

void bmq_blender_confine_free (char *argv[BMQ_CONFINE_MAX_ARGS])
{
    for (int i = 0; i < BMQ_CONFINE_MAX_ARGS && argv[i]; i++) { free (argv[i]); argv[i] = NULL; }
}

int bmq_blender_confine_seccomp_fd (char *err, size_t errlen)
{
    return bmq_sandbox_seccomp_fd (err, errlen);
}

void bmq_blender_confine_limits (const bmq_blender_confine_t *c)
{
    bmq_sandbox_set_rlimits (c->memory_mb, c->file_mb, c->processes);
}

int bmq_blender_confine_child (const bmq_blender_confine_t *c, int seccomp)
{
    if (seccomp < 0 || c->seccomp_fd < 3) return -1;
    if (seccomp != c->seccomp_fd && dup2 (seccomp, c->seccomp_fd) != c->seccomp_fd) return -1;
    if (seccomp == c->seccomp_fd && fcntl (seccomp, F_SETFD, 0) < 0) return -1;     /* dup2 clears close-on-exec; keep it cleared */
    for (int fd = 3; fd < c->seccomp_fd; fd++) close (fd);
    close_range ((unsigned) c->seccomp_fd + 1, ~0U, 0);
    bmq_blender_confine_limits (c);
    return 0;
}
