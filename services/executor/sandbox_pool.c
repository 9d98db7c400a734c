/* sandbox_pool — warm pool of sandboxed Blenders, one script each. */
#include "sandbox_pool.h"

#include "sandbox_seccomp.h"
#include "script_rules.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_MAX_INSTANCES 16
#define S_MAX_LINE (4u << 20)
#define S_MAX_SCENE_PATH 1024
#define S_REPORT_GRACE_MS 5000  /* the runner's own timeout reports first; then the kill */

typedef struct {
    pid_t pid;
    int ctrl;                   /* our end of the control socket (fd 3 inside) */
    bool ready;
    char dir[512];
    char blender[32];
    char scene_path[S_MAX_SCENE_PATH];  /* where job/scene.blend is bound ("" : nowhere) */
} s_inst_t;

struct bmq_sandbox_pool_t {
    bmq_sandbox_opts_t opts;
    bool drop_root;
    char work[256];
    char scene_path[S_MAX_SCENE_PATH];  /* what new warm instances bind the scene at */
    json_t *modules, *builtins;
    pthread_mutex_t mutex;
    s_inst_t *idle[S_MAX_INSTANCES];
    int nidle;
    unsigned seq;
};

static double s_now_ms (void)
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

static void s_rm_rf (const char *dir)
{
    nftw (dir, s_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Job files: 0600, owned by the sandbox's uid; written in place (the scene copy
 * may be a bind source already, so the inode must stay), never through a link. */
static int s_write_file (const bmq_sandbox_pool_t *self, const char *path, const void *data, size_t len)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    if (fchmod (fd, 0600) < 0 || (self->drop_root && fchown (fd, self->opts.limits.uid, self->opts.limits.gid) < 0)) {
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

/* ---------------------------------------------------------------- instances */

static void s_inst_destroy (s_inst_t **inst_p)
{
    s_inst_t *inst = *inst_p;
    if (!inst)
        return;
    if (inst->pid > 0) {
        kill (-inst->pid, SIGKILL);     /* bwrap's group; --die-with-parent and the pid */
        kill (inst->pid, SIGKILL);      /* namespace take everything inside with it */
        while (waitpid (inst->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (inst->ctrl >= 0)
        close (inst->ctrl);
    s_rm_rf (inst->dir);
    free (inst);
    *inst_p = NULL;
}

/* Instance folders: 0700, owned by the uid the sandbox runs as (when root drops
 * privileges; otherwise ours, which is the sandbox's): nothing else on the host
 * can read a scene copy. */
static int s_mkdir_owned (const bmq_sandbox_pool_t *self, const char *path)
{
    if (mkdir (path, 0700) < 0)
        return -1;
    if (chmod (path, 0700) < 0)
        return -1;
    if (self->drop_root && chown (path, self->opts.limits.uid, self->opts.limits.gid) < 0)
        return -1;
    return 0;
}

static const char *s_inst_dirs[] = { "home", "out", "tmp", "shm", "job", NULL };

static s_inst_t *s_inst_start (bmq_sandbox_pool_t *self, char *err, size_t errlen)
{
    s_inst_t *inst = calloc (1, sizeof *inst);
    char path[600];
    int sv[2] = { -1, -1 };
    if (!inst) {
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    inst->ctrl = -1;
    snprintf (inst->scene_path, sizeof inst->scene_path, "%s", self->scene_path);
    snprintf (inst->dir, sizeof inst->dir, "%s/inst-%u", self->work, self->seq++);
    if (s_mkdir_owned (self, inst->dir) < 0)
        goto fail;
    for (const char **d = s_inst_dirs; *d; d++) {
        snprintf (path, sizeof path, "%s/%s", inst->dir, *d);
        if (s_mkdir_owned (self, path) < 0)
            goto fail;
    }
    /* the scene copy's file exists from the start: it may be a bind source */
    snprintf (path, sizeof path, "%s/job/scene.blend", inst->dir);
    if (s_write_file (self, path, "", 0) < 0)
        goto fail;
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        goto fail;
    snprintf (path, sizeof path, "%s/blender.log", inst->dir);
    int log = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (log >= 0 && self->drop_root && fchown (log, self->opts.limits.uid, self->opts.limits.gid) < 0) {
        close (log);
        goto fail;
    }
    inst->pid = bmq_sandbox_spawn (&self->opts.limits, inst->dir, inst->scene_path, sv[1], log, self->drop_root,
                                   err, errlen);
    if (log >= 0)
        close (log);
    close (sv[1]);
    inst->ctrl = sv[0];
    if (inst->pid < 0)
        goto fail_quiet;
    return inst;
fail:
    snprintf (err, errlen, "cannot prepare a sandbox folder in %.200s: %s", self->work, strerror (errno));
    if (sv[0] >= 0) { close (sv[0]); close (sv[1]); }
fail_quiet:
    inst->pid = 0;
    s_inst_destroy (&inst);
    return NULL;
}

/* Read one JSON line from the instance before `deadline` (ms, monotonic).
 * NULL on timeout (*timed_out) or when the instance closed the socket. */
static json_t *s_read_line (s_inst_t *inst, double deadline, bool *timed_out)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    json_t *out = NULL;
    *timed_out = false;
    for (;;) {
        int wait = (int) (deadline - s_now_ms ());
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

static int s_wait_ready (s_inst_t *inst, double deadline)
{
    if (inst->ready)
        return 0;
    bool timed_out;
    json_t *hello = s_read_line (inst, deadline, &timed_out);
    if (hello && json_is_true (json_object_get (hello, "ready"))) {
        inst->ready = true;
        snprintf (inst->blender, sizeof inst->blender, "%s",
                  json_string_value (json_object_get (hello, "blender")) ?: "");
    }
    json_decref (hello);
    return inst->ready ? 0 : -1;
}

/* Non-blocking: has the instance said it is ready? */
static bool s_poll_ready (s_inst_t *inst)
{
    if (inst->ready)
        return true;
    struct pollfd p = { .fd = inst->ctrl, .events = POLLIN };
    if (poll (&p, 1, 0) <= 0)
        return false;
    return s_wait_ready (inst, s_now_ms () + 1000) == 0;
}

static char *s_log_tail (const s_inst_t *inst)
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

/* ---------------------------------------------------------------- host-side checks */

/* Every writable place inside the sandbox is one of these host folders. */
static const char *s_writable[] = { "tmp", "shm", "home", "out", NULL };

typedef struct {
    char path[512];             /* relative to the instance dir */
    off_t size;
    mode_t mode;
    ino_t ino;
    struct timespec mtime, ctime;
} s_file_t;

typedef struct { s_file_t *files; size_t count, cap; bool incomplete; } s_listing_t;

static void s_list (const char *base, const char *rel, s_listing_t *l, int depth)
{
    char dir[1100];
    snprintf (dir, sizeof dir, "%s/%s", base, rel);
    DIR *d = opendir (dir);
    struct dirent *e;
    if (!d) {
        l->incomplete = true;           /* an unreadable folder hides what is in it */
        return;
    }
    while ((e = readdir (d))) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        char path[1400];
        struct stat st;
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat (path, &st) < 0)
            continue;
        if (l->count >= 20000 || strlen (rel) + strlen (e->d_name) + 2 > sizeof l->files->path) {
            l->incomplete = true;
            break;
        }
        if (l->count == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 64;
            s_file_t *bigger = realloc (l->files, cap * sizeof *bigger);
            if (!bigger) {
                l->incomplete = true;
                break;
            }
            l->files = bigger;
            l->cap = cap;
        }
        s_file_t *f = &l->files[l->count++];
        snprintf (f->path, sizeof f->path, "%s/%s", rel, e->d_name);
        f->size = st.st_size;
        f->mode = st.st_mode;
        f->ino = st.st_ino;
        f->mtime = st.st_mtim;
        f->ctime = st.st_ctim;
        if (S_ISDIR (st.st_mode)) {
            if (depth < 32) {
                char sub[512];
                snprintf (sub, sizeof sub, "%s", f->path);
                s_list (base, sub, l, depth + 1);
            }
            else
                l->incomplete = true;
        }
    }
    closedir (d);
}

/* Everything in the writable folders, from the host. */
static void s_snapshot (const s_inst_t *inst, s_listing_t *l)
{
    for (const char **w = s_writable; *w; w++)
        s_list (inst->dir, *w, l, 0);
}

static const s_file_t *s_find (const s_listing_t *l, const char *path)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp (l->files[i].path, path) == 0)
            return &l->files[i];
    return NULL;
}

static bool s_same (const s_file_t *a, const s_file_t *b)
{
    return a->size == b->size && a->mode == b->mode && a->ino == b->ino && a->mtime.tv_sec == b->mtime.tv_sec
           && a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec
           && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static void s_append (char *buf, size_t cap, size_t *used, const char *sep, const char *what)
{
    if (*used >= cap)
        return;
    int n = snprintf (buf + *used, cap - *used, "%s%s", *used ? sep : "", what);
    *used += n > 0 ? (size_t) n : 0;
}

/* Files the runner writes by design: the preview, when one was asked for. */
static bool s_declared (const char *rel, bool preview)
{
    return preview && strcmp (rel, "out/preview.png") == 0;
}

/* After the kill: every new, changed or removed entry in the writable folders,
 * other than the declared outputs, is a violation {"check": "files", "detail":
 * "wrote <relative paths>"}. */
static void s_host_checks (const s_inst_t *inst, const s_listing_t *before, bool preview, json_t *violations)
{
    s_listing_t after = { 0 };
    char wrote[1500] = "", removed[600] = "";
    size_t nw = 0, nr = 0, wrote_used = 0, removed_used = 0;
    s_snapshot (inst, &after);
    for (size_t i = 0; i < after.count; i++) {
        const s_file_t *was = s_find (before, after.files[i].path);
        if (s_declared (after.files[i].path, preview) || (was && s_same (was, &after.files[i])))
            continue;
        /* a folder whose only change is an entry listed on its own is not news */
        if (was && S_ISDIR (was->mode) && S_ISDIR (after.files[i].mode) && was->ino == after.files[i].ino
            && was->mode == after.files[i].mode)
            continue;
        if (nw++ < 12)
            s_append (wrote, sizeof wrote, &wrote_used, ", ", after.files[i].path);
    }
    for (size_t i = 0; i < before->count; i++)
        if (!s_find (&after, before->files[i].path) && !s_declared (before->files[i].path, preview) && nr++ < 8)
            s_append (removed, sizeof removed, &removed_used, ", ", before->files[i].path);
    if (nw > 12)
        s_append (wrote, sizeof wrote, &wrote_used, ", ", "...");
    if (nw > 0) {
        json_t *v = json_pack ("{s:s, s:s+}", "check", "files", "detail", "wrote ", wrote);
        if (v)
            json_array_append_new (violations, v);
    }
    if (nr > 0)
        json_array_append_new (violations, json_pack ("{s:s, s:s+}", "check", "files", "detail", "removed ", removed));
    if (after.incomplete && !before->incomplete)
        json_array_append_new (violations, json_pack ("{s:s, s:s}", "check", "files", "detail",
                                                      "left folders the host cannot list in full"));
    free (after.files);
}

/* ---------------------------------------------------------------- pool */

/* Keep opts.warm instances, all bound for the latest scene path (the live
 * scene's path rarely changes: warm instances are started for it). */
static void s_replenish (bmq_sandbox_pool_t *self)
{
    char err[256];
    pthread_mutex_lock (&self->mutex);
    for (int i = 0; i < self->nidle;) {
        if (strcmp (self->idle[i]->scene_path, self->scene_path) != 0) {
            s_inst_destroy (&self->idle[i]);
            memmove (&self->idle[i], &self->idle[i + 1], (size_t) (self->nidle - i - 1) * sizeof self->idle[0]);
            self->nidle--;
        }
        else
            i++;
    }
    while (self->nidle < self->opts.warm && self->nidle < S_MAX_INSTANCES) {
        s_inst_t *inst = s_inst_start (self, err, sizeof err);
        if (!inst)
            break;
        self->idle[self->nidle++] = inst;
    }
    pthread_mutex_unlock (&self->mutex);
}

bmq_sandbox_pool_t *bmq_sandbox_pool_new (const bmq_sandbox_opts_t *opts, char *err, size_t errlen)
{
    bmq_sandbox_pool_t *self = calloc (1, sizeof *self);
    if (!self || sodium_init () < 0) {
        free (self);
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    if (opts)
        self->opts = *opts;
    bmq_sandbox_limits_defaults (&self->opts.limits);
    if (!opts)
        self->opts.warm = 1;
    if (self->opts.warm < 0) self->opts.warm = 0;
    if (self->opts.warm > S_MAX_INSTANCES) self->opts.warm = S_MAX_INSTANCES;
    if (self->opts.timeout_ms <= 0) self->opts.timeout_ms = 30000;
    if (self->opts.start_timeout_ms <= 0) self->opts.start_timeout_ms = 30000;
    json_t *rules = bmq_script_rules_default ();
    self->modules = json_incref (self->opts.modules ? (json_t *) self->opts.modules : json_object_get (rules, "modules"));
    self->builtins = json_incref (self->opts.builtins ? (json_t *) self->opts.builtins : json_object_get (rules, "builtins"));
    json_decref (rules);
    pthread_mutex_init (&self->mutex, NULL);
    if (bmq_sandbox_probe (&self->opts.limits, &self->drop_root, err, errlen) < 0)
        goto fail;
    const char *base = self->opts.work_dir ? self->opts.work_dir : getenv ("TMPDIR");
    snprintf (self->work, sizeof self->work, "%s/blendmq-sandbox-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp (self->work) || chmod (self->work, 0711) < 0) {
        snprintf (err, errlen, "sandbox unavailable: cannot create a work folder: %s", strerror (errno));
        self->work[0] = 0;
        goto fail;
    }
    s_replenish (self);
    return self;
fail:
    bmq_sandbox_pool_destroy (&self);
    return NULL;
}

void bmq_sandbox_pool_destroy (bmq_sandbox_pool_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bmq_sandbox_pool_t *self = *self_p;
    for (int i = 0; i < self->nidle; i++)
        s_inst_destroy (&self->idle[i]);
    if (self->work[0])
        s_rm_rf (self->work);
    json_decref (self->modules);
    json_decref (self->builtins);
    pthread_mutex_destroy (&self->mutex);
    free (self);
    *self_p = NULL;
}

bool bmq_sandbox_pool_unprivileged (const bmq_sandbox_pool_t *self)
{
    return self->drop_root || geteuid () != 0;
}

int bmq_sandbox_pool_wait_ready (bmq_sandbox_pool_t *self, int count, int timeout_ms)
{
    double deadline = s_now_ms () + timeout_ms;
    for (;;) {
        int ready = 0;
        pthread_mutex_lock (&self->mutex);
        for (int i = 0; i < self->nidle; i++)
            ready += s_poll_ready (self->idle[i]);
        pthread_mutex_unlock (&self->mutex);
        if (ready >= count)
            return 0;
        if (s_now_ms () > deadline)
            return -1;
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep (&ts, NULL);
    }
}

/* Take an instance whose scene binding is scene_path (NULL: any, the scene is
 * Blender's factory one): a ready one, else the oldest starting one, else a new
 * one. A scene path becomes the one new warm instances are started with. */
static s_inst_t *s_take (bmq_sandbox_pool_t *self, const char *scene_path, bool *warm, char *err, size_t errlen)
{
    s_inst_t *inst = NULL;
    pthread_mutex_lock (&self->mutex);
    if (scene_path)
        snprintf (self->scene_path, sizeof self->scene_path, "%s", scene_path);
    int pick = -1;
    for (int i = 0; i < self->nidle && pick < 0; i++)
        if ((!scene_path || strcmp (self->idle[i]->scene_path, scene_path) == 0) && s_poll_ready (self->idle[i]))
            pick = i;
    *warm = pick >= 0;
    for (int i = 0; i < self->nidle && pick < 0; i++)
        if (!scene_path || strcmp (self->idle[i]->scene_path, scene_path) == 0)
            pick = i;
    if (pick >= 0) {
        inst = self->idle[pick];
        memmove (&self->idle[pick], &self->idle[pick + 1], (size_t) (self->nidle - pick - 1) * sizeof inst);
        self->nidle--;
    }
    else
        inst = s_inst_start (self, err, errlen);
    pthread_mutex_unlock (&self->mutex);
    return inst;
}

static void s_sha256_hex (const void *data, size_t len, char out[65])
{
    unsigned char d[crypto_hash_sha256_BYTES];
    crypto_hash_sha256 (d, data, len);
    sodium_bin2hex (out, 65, d, sizeof d);
}

static json_t *s_isolation_json (const bmq_sandbox_pool_t *self)
{
    json_t *a = json_pack ("[s,s,s,s,s,s,s,s,s,s,s,s,s,s]", "--unshare-all", "--die-with-parent", "--new-session",
                           "--cap-drop ALL", "--clearenv", "--ro-bind /usr (system read-only)",
                           "--remount-ro / /home /dev", "--bind private tmp, dev/shm, home and out (checked from the host)",
                           "--ro-bind the scene copy at the live scene's path", "--factory-startup",
                           "--disable-autoexec", "rlimits cpu/as/fsize/nproc/core", "run-time guard script_exec.py",
                           bmq_sandbox_seccomp_summary ());
    if (self->drop_root)
        json_array_append_new (a, json_string (self->opts.limits.uid_note));
    else
        json_array_append_new (a, json_string (geteuid () == 0 ? "uid root, capabilities dropped (no unprivileged "
                                                                 "user namespaces)" : "uid of the service, own user namespace"));
    return a;
}

/* The live scene's path, when it can be bound as is: absolute, canonical, not
 * one of the sandbox's own places. NULL when it cannot. */
static const char *s_scene_path (const char *p)
{
    if (!p || !*p)
        return "";
    if (p[0] != '/' || strlen (p) >= S_MAX_SCENE_PATH || strstr (p, "//") || strstr (p, "/./")
        || strstr (p, "/../") || p[strlen (p) - 1] == '/' || strchr (p, '\n'))
        return NULL;
    size_t n = strlen (p);
    if ((n >= 2 && strcmp (p + n - 2, "/.") == 0) || (n >= 3 && strcmp (p + n - 3, "/..") == 0))
        return NULL;
    static const char *reserved[] = { "/proc", "/dev", "/sys", "/job", "/out", "/sandbox", "/usr", NULL };
    for (const char **r = reserved; *r; r++) {
        size_t rl = strlen (*r);
        if (strncmp (p, *r, rl) == 0 && (p[rl] == '/' || p[rl] == 0))
            return NULL;
    }
    if (strcmp (p, "/tmp") == 0 || strcmp (p, "/home/sb") == 0)
        return NULL;
    return p;
}

static json_t *s_fail (const char *verdict, const char *fmt, const char *detail)
{
    char msg[1600];
    snprintf (msg, sizeof msg, fmt, detail ? detail : "");
    return json_pack ("{s:b, s:s, s:s, s:n, s:n, s:[], s:n}", "ok", 0, "verdict", verdict, "message", msg,
                      "error", "traceback", "violations", "diff");
}

static const char *s_summary (json_t *r)
{
    const char *verdict = json_string_value (json_object_get (r, "verdict")) ?: "";
    if (strcmp (verdict, "ok") == 0)
        return "the script ran cleanly in the sandbox: it may be applied live after confirmation";
    if (strcmp (verdict, "error") == 0)
        return "the script raised an error in the sandbox: see traceback; it will not run live";
    if (strcmp (verdict, "rejected") == 0)
        return "the script left something behind in the sandbox (see violations): it will not run live";
    if (strcmp (verdict, "timeout") == 0)
        return "the script did not finish within its time limit in the sandbox: it will not run live";
    return "the sandbox run failed: the script will not run live";
}

json_t *bmq_sandbox_pool_run (bmq_sandbox_pool_t *self, const char *script, size_t len, const void *blend,
                              size_t blend_len, const bmq_sandbox_job_t *job, unsigned char **png, size_t *png_len)
{
    double t0 = s_now_ms ();
    char err[512] = "", path[700], sha[65], scene_sha[65] = "", nonce_hex[33];
    unsigned char nonce[16];
    bool warm = false;
    bmq_sandbox_job_t none = { 0 };
    if (!job)
        job = &none;
    if (png) *png = NULL;
    if (png_len) *png_len = 0;
    s_sha256_hex (script, len, sha);
    if (blend)
        s_sha256_hex (blend, blend_len, scene_sha);
    randombytes_buf (nonce, sizeof nonce);
    sodium_bin2hex (nonce_hex, sizeof nonce_hex, nonce, sizeof nonce);

    json_t *result = NULL;
    s_listing_t before = { 0 };
    bool snapped = false;
    s_inst_t *inst = NULL;
    bool preview = job->preview_width > 0 && job->preview_height > 0;
    const char *scene_path = s_scene_path (job->scene_path);
    if (!scene_path) {
        result = s_fail ("unavailable", "sandbox unavailable: the scene's path cannot be reproduced in the "
                         "sandbox: %.300s", job->scene_path);
        goto done;
    }
    inst = s_take (self, blend ? scene_path : NULL, &warm, err, sizeof err);
    if (!inst) {
        result = s_fail ("unavailable", "sandbox unavailable: %s", err);
        goto done;
    }
    if (s_wait_ready (inst, s_now_ms () + self->opts.start_timeout_ms) < 0) {
        char *tail = s_log_tail (inst);
        result = s_fail ("unavailable", "sandbox unavailable: Blender did not start in the sandbox: %s", tail);
        free (tail);
        goto done;
    }
    snprintf (path, sizeof path, "%s/job/script.py", inst->dir);
    int rc = s_write_file (self, path, script, len);
    if (rc == 0 && blend) {
        snprintf (path, sizeof path, "%s/job/scene.blend", inst->dir);
        rc = s_write_file (self, path, blend, blend_len);
    }
    if (rc < 0) {
        result = s_fail ("unavailable", "sandbox unavailable: cannot write the job: %s", strerror (errno));
        goto done;
    }
    /* what is in the writable folders now, with Blender up and the job not yet sent */
    s_snapshot (inst, &before);
    snapped = true;
    int timeout = job->timeout_ms > 0 ? job->timeout_ms : self->opts.timeout_ms;
    /* blend: where the runner opens the scene copy: at the live path (bpy.data.filepath
     * the same as live), or /job/scene.blend read as an unsaved file (filepath "") */
    json_t *req = json_pack ("{s:s, s:s, s:s, s:s?, s:s, s:s, s:i, s:O, s:O}", "nonce", nonce_hex,
                             "script", "/job/script.py", "sha256", sha,
                             "blend", !blend ? NULL : *scene_path ? scene_path : "/job/scene.blend",
                             "scene_path", blend ? scene_path : "", "out", "/out", "timeout_ms", timeout,
                             "modules", self->modules, "builtins", self->builtins);
    if (preview)
        json_object_set_new (req, "preview", json_pack ("[i,i]", job->preview_width, job->preview_height));
    char *line = json_dumps (req, JSON_COMPACT);
    json_decref (req);
    size_t line_len = line ? strlen (line) : 0;
    bool sent = line && send (inst->ctrl, line, line_len, MSG_NOSIGNAL) == (ssize_t) line_len
                && send (inst->ctrl, "\n", 1, MSG_NOSIGNAL) == 1;
    free (line);
    if (!sent) {
        result = s_fail ("crashed", "the sandboxed Blender went away before the job%s", "");
        goto done;
    }
    bool timed_out;
    result = s_read_line (inst, s_now_ms () + timeout + S_REPORT_GRACE_MS, &timed_out);
    if (!result || !json_is_object (result)) {
        json_decref (result);
        int status = 0;
        char detail[200];
        if (timed_out) {
            snprintf (detail, sizeof detail, "%d ms", timeout);
            result = s_fail ("timeout", "the script did not finish within %s: killed", detail);
        }
        else {
            pid_t r = waitpid (inst->pid, &status, 0);
            inst->pid = r == inst->pid ? 0 : inst->pid;
            if (r > 0 && WIFSIGNALED (status))
                snprintf (detail, sizeof detail, "killed by signal %d (%s)", WTERMSIG (status), strsignal (WTERMSIG (status)));
            else if (r > 0 && WIFEXITED (status))
                snprintf (detail, sizeof detail, "exit status %d", WEXITSTATUS (status));
            else
                snprintf (detail, sizeof detail, "no report");
            char *tail = s_log_tail (inst);
            char both[1400];
            snprintf (both, sizeof both, "%s; %s", detail, tail);
            free (tail);
            result = s_fail ("crashed", "Blender died in the sandbox (a resource limit, or a crash): %s", both);
        }
        goto done;
    }
    if (strcmp (json_string_value (json_object_get (result, "nonce")) ?: "", nonce_hex) != 0) {
        json_decref (result);
        result = s_fail ("error", "the sandbox report does not answer this job%s", "");
        goto done;
    }
    json_object_del (result, "nonce");
    if (!json_is_string (json_object_get (result, "message")))     /* the runner's own: a refusal */
        json_object_set_new (result, "message", json_string (s_summary (result)));

done:;
    bool ran = inst && inst->ready && snapped;
    if (inst) {
        /* kill first, then look at what the instance left on the host */
        if (inst->pid > 0) {
            kill (-inst->pid, SIGKILL);
            kill (inst->pid, SIGKILL);
            while (waitpid (inst->pid, NULL, 0) < 0 && errno == EINTR)
                ;
            inst->pid = 0;
        }
        json_t *violations = json_object_get (result, "violations");
        if (!json_is_array (violations)) {
            violations = json_array ();
            json_object_set_new (result, "violations", violations);
        }
        if (ran) {
            size_t nviol = json_array_size (violations);
            s_host_checks (inst, &before, preview, violations);
            const char *verdict = json_string_value (json_object_get (result, "verdict")) ?: "";
            if (json_array_size (violations) > nviol
                && (json_is_true (json_object_get (result, "ok")) || strcmp (verdict, "error") == 0)) {
                json_object_set_new (result, "ok", json_false ());
                json_object_set_new (result, "verdict", json_string ("rejected"));
                json_object_set_new (result, "message", json_string (s_summary (result)));
            }
        }
        json_t *preview = json_object_get (result, "preview");
        if (json_is_object (preview) && png) {
            snprintf (path, sizeof path, "%s/out/preview.png", inst->dir);
            int pfd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);   /* a link planted there: not read */
            struct stat pst;
            FILE *f = pfd >= 0 && fstat (pfd, &pst) == 0 && S_ISREG (pst.st_mode) ? fdopen (pfd, "rb") : NULL;
            if (!f && pfd >= 0)
                close (pfd);
            if (f) {
                fseek (f, 0, SEEK_END);
                long size = ftell (f);
                fseek (f, 0, SEEK_SET);
                if (size > 0 && size < (64L << 20) && (*png = malloc ((size_t) size))
                    && fread (*png, 1, (size_t) size, f) == (size_t) size) {
                    if (png_len)
                        *png_len = (size_t) size;
                    json_object_set_new (preview, "bytes", json_integer (size));
                }
                fclose (f);
            }
        }
        s_inst_destroy (&inst);
    }
    free (before.files);
    json_object_set_new (result, "script_sha256", json_string (sha));
    json_object_set_new (result, "scene_sha256", scene_sha[0] ? json_string (scene_sha) : json_null ());
    json_object_set_new (result, "start", json_string (warm ? "warm" : "cold"));
    json_object_set_new (result, "total_ms", json_real (s_now_ms () - t0));
    json_object_set_new (result, "isolation", s_isolation_json (self));
    s_replenish (self);
    return result;
}
