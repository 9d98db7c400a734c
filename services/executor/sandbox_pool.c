/* sandbox_pool — warm pool of sandboxed Blenders, one script each. */
#include "sandbox_pool.h"

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
#define S_NOBODY 65534

typedef struct {
    pid_t pid;
    int ctrl;                   /* our end of the control socket (fd 3 inside) */
    bool ready;
    char dir[512];
    char blender[32];
} s_inst_t;

struct bmq_sandbox_pool_t {
    bmq_sandbox_opts_t opts;
    bool drop_root;
    char work[256];
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

static int s_write_file (const char *path, const void *data, size_t len)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
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

static int s_mkdir_owned (const char *path, mode_t mode, bool nobody)
{
    if (mkdir (path, mode) < 0)
        return -1;
    if (chmod (path, mode) < 0)
        return -1;
    if (nobody && chown (path, S_NOBODY, S_NOBODY) < 0)
        return -1;
    return 0;
}

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
    snprintf (inst->dir, sizeof inst->dir, "%s/inst-%u", self->work, self->seq++);
    if (s_mkdir_owned (inst->dir, 0755, false) < 0)
        goto fail;
    snprintf (path, sizeof path, "%s/home", inst->dir);
    if (s_mkdir_owned (path, 0700, self->drop_root) < 0)
        goto fail;
    snprintf (path, sizeof path, "%s/out", inst->dir);
    if (s_mkdir_owned (path, 0700, self->drop_root) < 0)
        goto fail;
    snprintf (path, sizeof path, "%s/job", inst->dir);
    if (s_mkdir_owned (path, 0755, false) < 0)
        goto fail;
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        goto fail;
    snprintf (path, sizeof path, "%s/blender.log", inst->dir);
    int log = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    inst->pid = bmq_sandbox_spawn (&self->opts.limits, inst->dir, sv[1], log, self->drop_root, err, errlen);
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

typedef struct { char path[512]; off_t size; struct timespec mtime; } s_file_t;

typedef struct { s_file_t *files; size_t count, cap; } s_listing_t;

static void s_list (const char *dir, s_listing_t *l, int depth)
{
    DIR *d = opendir (dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir (d)) && l->count < 10000) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        char path[512];
        struct stat st;
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat (path, &st) < 0)
            continue;
        if (l->count == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 64;
            s_file_t *bigger = realloc (l->files, cap * sizeof *bigger);
            if (!bigger)
                break;
            l->files = bigger;
            l->cap = cap;
        }
        s_file_t *f = &l->files[l->count++];
        snprintf (f->path, sizeof f->path, "%s", path);
        f->size = st.st_size;
        f->mtime = st.st_mtim;
        if (S_ISDIR (st.st_mode) && depth < 16)
            s_list (path, l, depth + 1);
    }
    closedir (d);
}

static const s_file_t *s_find (const s_listing_t *l, const char *path)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp (l->files[i].path, path) == 0)
            return &l->files[i];
    return NULL;
}

/* What changed in the instance's home, and what is in out/ besides the preview. */
static void s_host_checks (const s_inst_t *inst, const s_listing_t *home_before, json_t *violations)
{
    char dir[600];
    s_listing_t home = { 0 }, out = { 0 };
    snprintf (dir, sizeof dir, "%s/home", inst->dir);
    s_list (dir, &home, 0);
    snprintf (dir, sizeof dir, "%s/out", inst->dir);
    s_list (dir, &out, 0);
    for (size_t i = 0; i < home.count; i++) {
        const s_file_t *was = s_find (home_before, home.files[i].path);
        if (!was || was->size != home.files[i].size || was->mtime.tv_sec != home.files[i].mtime.tv_sec
            || was->mtime.tv_nsec != home.files[i].mtime.tv_nsec)
            json_array_append_new (violations, json_pack ("{s:s, s:s+}", "check", "files", "detail",
                                   "written in the sandbox's home: ", home.files[i].path + strlen (inst->dir) + 1));
    }
    for (size_t i = 0; i < out.count; i++) {
        const char *name = out.files[i].path + strlen (dir) + 1;
        if (strcmp (name, "preview.png") != 0)
            json_array_append_new (violations, json_pack ("{s:s, s:s+}", "check", "files", "detail",
                                                          "unexpected file in the output folder: ", name));
    }
    free (home.files);
    free (out.files);
}

/* ---------------------------------------------------------------- pool */

static void s_replenish (bmq_sandbox_pool_t *self)
{
    char err[256];
    pthread_mutex_lock (&self->mutex);
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

/* Take an instance: a ready one, else the oldest starting one, else a new one. */
static s_inst_t *s_take (bmq_sandbox_pool_t *self, bool *warm, char *err, size_t errlen)
{
    s_inst_t *inst = NULL;
    pthread_mutex_lock (&self->mutex);
    int pick = -1;
    for (int i = 0; i < self->nidle && pick < 0; i++)
        if (s_poll_ready (self->idle[i]))
            pick = i;
    *warm = pick >= 0;
    if (pick < 0 && self->nidle > 0)
        pick = 0;
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

static json_t *s_isolation_json (bool drop_root)
{
    json_t *a = json_pack ("[s,s,s,s,s,s,s,s,s,s,s]", "--unshare-all", "--die-with-parent", "--new-session",
                           "--cap-drop ALL", "--clearenv", "--ro-bind /usr (system read-only)",
                           "--tmpfs /tmp /home", "--bind private home and out", "--factory-startup",
                           "--disable-autoexec", "rlimits cpu/as/fsize/nproc/core");
    if (drop_root)
        json_array_append_new (a, json_string ("uid nobody"));
    return a;
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
    s_listing_t home_before = { 0 };
    s_inst_t *inst = s_take (self, &warm, err, sizeof err);
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
    int rc = s_write_file (path, script, len);
    if (rc == 0 && blend) {
        snprintf (path, sizeof path, "%s/job/scene.blend", inst->dir);
        rc = s_write_file (path, blend, blend_len);
    }
    if (rc < 0) {
        result = s_fail ("unavailable", "sandbox unavailable: cannot write the job: %s", strerror (errno));
        goto done;
    }
    snprintf (path, sizeof path, "%s/home", inst->dir);
    s_list (path, &home_before, 0);
    json_t *req = json_pack ("{s:s, s:s, s:s?, s:s, s:O, s:O}", "nonce", nonce_hex, "script", "/job/script.py",
                             "blend", blend ? "/job/scene.blend" : NULL, "out", "/out",
                             "modules", self->modules, "builtins", self->builtins);
    if (job->preview_width > 0 && job->preview_height > 0)
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
    int timeout = job->timeout_ms > 0 ? job->timeout_ms : self->opts.timeout_ms;
    result = s_read_line (inst, s_now_ms () + timeout, &timed_out);
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
    json_object_set_new (result, "message", json_string (s_summary (result)));

done:;
    bool ran = inst && inst->ready;
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
            size_t before = json_array_size (violations);
            s_host_checks (inst, &home_before, violations);
            if (json_array_size (violations) > before && json_is_true (json_object_get (result, "ok"))) {
                json_object_set_new (result, "ok", json_false ());
                json_object_set_new (result, "verdict", json_string ("rejected"));
                json_object_set_new (result, "message", json_string (s_summary (result)));
            }
        }
        json_t *preview = json_object_get (result, "preview");
        if (json_is_object (preview) && png) {
            snprintf (path, sizeof path, "%s/out/preview.png", inst->dir);
            FILE *f = fopen (path, "rb");
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
    free (home_before.files);
    json_object_set_new (result, "script_sha256", json_string (sha));
    json_object_set_new (result, "scene_sha256", scene_sha[0] ? json_string (scene_sha) : json_null ());
    json_object_set_new (result, "start", json_string (warm ? "warm" : "cold"));
    json_object_set_new (result, "total_ms", json_real (s_now_ms () - t0));
    json_object_set_new (result, "isolation", s_isolation_json (self->drop_root));
    s_replenish (self);
    return result;
}
