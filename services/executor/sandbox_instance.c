/* sandbox_instance — one sandboxed Blender: its folders, its process, and
 * the fd-3 line protocol with sandbox/sandbox_runner.py (sandbox_instance.h). */
#include "sandbox_instance.h"
#include "bmq_sandbox_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_MAX_LINE BMQ_SANDBOX_MAX_LINE    /* proto/sandbox.json */

double sandbox_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int s_rm_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st; (void) flag; (void) ftw;
    remove (path);
    return 0;
}

void sandbox_rm_rf (const char *dir)
{
    nftw (dir, s_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Written in place: the scene copy may be a bind source already, so the inode must stay. */
int sandbox_write_file (const bmq_sandbox_limits_t *limits, bool drop_root, const char *path, const void *data,
                        size_t len)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    if (fchmod (fd, 0600) < 0 || (drop_root && fchown (fd, limits->uid, limits->gid) < 0)) {
        close (fd);
        return -1;
    }
    const char *p = data;
    while (len > 0) {
        ssize_t n = write (fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close (fd);
            return -1;
        }
        p += n;
        len -= (size_t) n;
    }
    return close (fd);
}

void sandbox_inst_kill (sandbox_inst_t *inst)
{
    if (inst->pid > 0) {
        kill (-inst->pid, SIGKILL);     /* bwrap's group; --die-with-parent and the pid */
        kill (inst->pid, SIGKILL);      /* namespace take everything inside with it */
        while (waitpid (inst->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        inst->pid = 0;
    }
}

void sandbox_inst_destroy (sandbox_inst_t **inst_p)
{
    sandbox_inst_t *inst = *inst_p;
    if (!inst)
        return;
    sandbox_inst_kill (inst);
    if (inst->ctrl >= 0)
        close (inst->ctrl);
    sandbox_rm_rf (inst->dir);
    free (inst);
    *inst_p = NULL;
}

/* Instance folders: 0700, owned by the uid the sandbox runs as (when root drops
 * privileges; otherwise ours, which is the sandbox's): nothing else on the host
 * can read a scene copy. */
static int s_mkdir_owned (const bmq_sandbox_limits_t *limits, bool drop_root, const char *path)
{
    if (mkdir (path, 0700) < 0)
        return -1;
    if (chmod (path, 0700) < 0)
        return -1;
    if (drop_root && chown (path, limits->uid, limits->gid) < 0)
        return -1;
    return 0;
}

static const char *s_inst_dirs[] = { "home", "out", "tmp", "shm", "job", NULL };

sandbox_inst_t *sandbox_inst_start (const bmq_sandbox_limits_t *limits, bool drop_root, const char *work, unsigned seq,
                                    const char *scene_path, char *err, size_t errlen)
{
    sandbox_inst_t *inst = calloc (1, sizeof *inst);
    char path[600];
    int sv[2] = { -1, -1 };
    if (!inst) {
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    inst->ctrl = -1;
    snprintf (inst->scene_path, sizeof inst->scene_path, "%s", scene_path);
    snprintf (inst->dir, sizeof inst->dir, "%s/inst-%u", work, seq);
    if (s_mkdir_owned (limits, drop_root, inst->dir) < 0)
        goto fail;
    for (const char **d = s_inst_dirs; *d; d++) {
        snprintf (path, sizeof path, "%s/%s", inst->dir, *d);
        if (s_mkdir_owned (limits, drop_root, path) < 0)
            goto fail;
    }
    /* the scene copy's file exists from the start: it may be a bind source */
    snprintf (path, sizeof path, "%s/job/scene.blend", inst->dir);
    if (sandbox_write_file (limits, drop_root, path, "", 0) < 0)
        goto fail;
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        goto fail;
    snprintf (path, sizeof path, "%s/blender.log", inst->dir);
    int log = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (log >= 0 && drop_root && fchown (log, limits->uid, limits->gid) < 0) {
        close (log);
        goto fail;
    }
    inst->pid = bmq_sandbox_spawn (limits, inst->dir, inst->scene_path, sv[1], log, drop_root,
                                   err, errlen);
    if (log >= 0)
        close (log);
    close (sv[1]);
    inst->ctrl = sv[0];
    if (inst->pid < 0)
        goto fail_quiet;
    return inst;
fail:
    snprintf (err, errlen, "cannot prepare a sandbox folder in %.200s: %s", work, strerror (errno));
    if (sv[0] >= 0) { close (sv[0]); close (sv[1]); }
fail_quiet:
    inst->pid = 0;
    sandbox_inst_destroy (&inst);
    return NULL;
}

json_t *sandbox_inst_read_line (sandbox_inst_t *inst, double deadline, bool *timed_out)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    json_t *out = NULL;
    *timed_out = false;
    for (;;) {
        int wait = (int) (deadline - sandbox_now_ms ());
        if (wait <= 0) {
            *timed_out = true;
            break;
        }
        struct pollfd p = { .fd = inst->ctrl, .events = POLLIN };
        int rc = poll (&p, 1, wait);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0) {
            *timed_out = true;
            break;
        }
        if (rc < 0)
            break;
        if (len + 65536 + 1 > cap) {
            if (cap >= S_MAX_LINE)
                break;                  /* a report this large is not one */
            cap = cap ? cap * 2 : 65536 * 2;
            char *bigger = realloc (buf, cap);
            if (!bigger)
                break;
            buf = bigger;
        }
        ssize_t n = recv (inst->ctrl, buf + len, 65536, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t) n;
        char *nl = memchr (buf, '\n', len);
        if (nl) {
            out = json_loadb (buf, (size_t) (nl - buf), 0, NULL);
            break;
        }
    }
    free (buf);
    return out;
}

int sandbox_inst_wait_ready (sandbox_inst_t *inst, double deadline)
{
    if (inst->ready)
        return 0;
    bool timed_out;
    json_t *hello = sandbox_inst_read_line (inst, deadline, &timed_out);
    if (hello && json_is_true (json_object_get (hello, "ready"))) {
        inst->ready = true;
        snprintf (inst->blender, sizeof inst->blender, "%s",
                  json_string_value (json_object_get (hello, "blender")) ?: "");
    }
    json_decref (hello);
    return inst->ready ? 0 : -1;
}

bool sandbox_inst_poll_ready (sandbox_inst_t *inst)
{
    if (inst->ready)
        return true;
    struct pollfd p = { .fd = inst->ctrl, .events = POLLIN };
    if (poll (&p, 1, 0) <= 0)
        return false;
    return sandbox_inst_wait_ready (inst, sandbox_now_ms () + 1000) == 0;
}

char *sandbox_inst_log_tail (const sandbox_inst_t *inst)
{
    char path[600], buf[1201];
    snprintf (path, sizeof path, "%s/blender.log", inst->dir);
    FILE *f = fopen (path, "rb");
    size_t n = 0;
    if (f) {
        fseek (f, 0, SEEK_END);
        long size = ftell (f);
        fseek (f, size > 1200 ? size - 1200 : 0, SEEK_SET);
        n = fread (buf, 1, 1200, f);
        fclose (f);
    }
    buf[n] = 0;
    return strdup (buf);
}
