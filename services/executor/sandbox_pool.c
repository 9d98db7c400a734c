/* sandbox_pool — warm pool of sandboxed Blenders, one script each: taking an
 * instance, one run (job files, the job line, the report, the kill, the host
 * check: sandbox_files.c), the verdict, and a replacement. An instance's
 * folders, process and fd-3 protocol are in sandbox_instance.c.
 *
 * Replacements are started by the pool's refill thread, never by a run: a
 * run wakes it when it takes an instance, so a verdict never waits on a
 * start-up or on another run's refill. A used instance is killed, checked
 * and removed by its run before the verdict returns, as before. */
#include "sandbox_pool.h"
#include "bmq_sandbox_proto.h"
#include "sandbox_files.h"
#include "sandbox_instance.h"

#include "sandbox_seccomp.h"
#include "script_rules.h"

#include <errno.h>
#include <fcntl.h>
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
#define S_REPORT_GRACE_MS 30000 /* the runner's own timeout reports first; then the kill (the copy's load, the fingerprints and the preview of a big scene are outside the script's time, issue 23) */

#define S_RETRY_MS 1000         /* after a failed start, the refill thread tries again this much later */

struct bmq_sandbox_pool_t {
    bmq_sandbox_opts_t opts;
    bool drop_root;
    char work[256];
    char scene_path[SANDBOX_MAX_SCENE_PATH];  /* what new warm instances bind the scene at */
    json_t *modules, *builtins;
    pthread_mutex_t mutex;
    pthread_cond_t wake;        /* the refill thread: something to start or replace, or stop */
    pthread_t refiller;
    bool refilling, stop;
    sandbox_inst_t *idle[S_MAX_INSTANCES];
    int nidle;
    unsigned seq;
};

/* ---------------------------------------------------------------- pool */

/* The refill thread: keeps opts.warm instances, all bound for the latest
 * scene path (the live scene's path rarely changes: warm instances are
 * started for it). Starts and removals of instances bound for an old path
 * run outside the lock, so runs take instances meanwhile. */
static void *s_refill (void *arg)
{
    bmq_sandbox_pool_t *self = arg;
    char err[256], scene[SANDBOX_MAX_SCENE_PATH];
    pthread_mutex_lock (&self->mutex);
    while (!self->stop) {
        sandbox_inst_t *gone[S_MAX_INSTANCES];
        int ngone = 0;
        for (int i = 0; i < self->nidle;) {
            if (strcmp (self->idle[i]->scene_path, self->scene_path) != 0) {
                gone[ngone++] = self->idle[i];
                memmove (&self->idle[i], &self->idle[i + 1], (size_t) (self->nidle - i - 1) * sizeof self->idle[0]);
                self->nidle--;
            }
            else
                i++;
        }
        bool start = self->nidle < self->opts.warm;
        unsigned seq = self->seq;
        if (start)
            self->seq++;
        snprintf (scene, sizeof scene, "%s", self->scene_path);
        if (ngone == 0 && !start) {
            pthread_cond_wait (&self->wake, &self->mutex);
            continue;
        }
        pthread_mutex_unlock (&self->mutex);
        for (int i = 0; i < ngone; i++)
            sandbox_inst_destroy (&gone[i]);
        sandbox_inst_t *inst = start ? sandbox_inst_start (&self->opts.limits, self->drop_root, self->work, seq, scene,
                                                           err, sizeof err) : NULL;
        bool failed = start && !inst;
        pthread_mutex_lock (&self->mutex);
        if (inst && !self->stop && self->nidle < self->opts.warm && strcmp (scene, self->scene_path) == 0) {
            self->idle[self->nidle++] = inst;
            inst = NULL;
        }
        if (inst) {             /* not wanted any more (the scene path moved, or stopping) */
            pthread_mutex_unlock (&self->mutex);
            sandbox_inst_destroy (&inst);
            pthread_mutex_lock (&self->mutex);
        }
        else if (failed && !self->stop) {
            /* runs start cold (and say why) until a retry works; a run's wake-up retries sooner */
            struct timespec until;
            clock_gettime (CLOCK_REALTIME, &until);
            until.tv_sec += S_RETRY_MS / 1000;
            pthread_cond_timedwait (&self->wake, &self->mutex, &until);
        }
    }
    pthread_mutex_unlock (&self->mutex);
    return NULL;
}

/* Wake the refill thread (mutex held). */
static void s_wake (bmq_sandbox_pool_t *self)
{
    pthread_cond_signal (&self->wake);
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
        self->opts.warm = BMQ_SANDBOX_WARM_DEFAULT;
    if (self->opts.warm < 0) self->opts.warm = 0;
    if (self->opts.warm > BMQ_SANDBOX_WARM_MAX) self->opts.warm = BMQ_SANDBOX_WARM_MAX;
    if (self->opts.timeout_ms <= 0) self->opts.timeout_ms = 30000;
    if (self->opts.start_timeout_ms <= 0) self->opts.start_timeout_ms = 30000;
    json_t *rules = bmq_script_rules_default ();
    self->modules = json_incref (self->opts.modules ? (json_t *) self->opts.modules : json_object_get (rules, "modules"));
    self->builtins = json_incref (self->opts.builtins ? (json_t *) self->opts.builtins : json_object_get (rules, "builtins"));
    json_decref (rules);
    pthread_mutex_init (&self->mutex, NULL);
    pthread_cond_init (&self->wake, NULL);
    if (bmq_sandbox_probe (&self->opts.limits, &self->drop_root, err, errlen) < 0)
        goto fail;
    const char *base = self->opts.work_dir ? self->opts.work_dir : getenv ("TMPDIR");
    snprintf (self->work, sizeof self->work, "%s/blendmq-sandbox-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp (self->work) || chmod (self->work, 0711) < 0) {
        snprintf (err, errlen, "sandbox unavailable: cannot create a work folder: %s", strerror (errno));
        self->work[0] = 0;
        goto fail;
    }
    if (pthread_create (&self->refiller, NULL, s_refill, self) != 0) {
        snprintf (err, errlen, "sandbox unavailable: cannot start the refill thread");
        goto fail;
    }
    self->refilling = true;
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
    if (self->refilling) {
        pthread_mutex_lock (&self->mutex);
        self->stop = true;
        s_wake (self);
        pthread_mutex_unlock (&self->mutex);
        pthread_join (self->refiller, NULL);
    }
    for (int i = 0; i < self->nidle; i++)
        sandbox_inst_destroy (&self->idle[i]);
    if (self->work[0])
        sandbox_rm_rf (self->work);
    json_decref (self->modules);
    json_decref (self->builtins);
    pthread_mutex_destroy (&self->mutex);
    pthread_cond_destroy (&self->wake);
    free (self);
    *self_p = NULL;
}

int bmq_sandbox_pool_wait_ready (bmq_sandbox_pool_t *self, int count, int timeout_ms)
{
    double deadline = sandbox_now_ms () + timeout_ms;
    for (;;) {
        int ready = 0;
        pthread_mutex_lock (&self->mutex);
        for (int i = 0; i < self->nidle; i++)
            ready += sandbox_inst_poll_ready (self->idle[i]);
        pthread_mutex_unlock (&self->mutex);
        if (ready >= count)
            return 0;
        if (sandbox_now_ms () > deadline)
            return -1;
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep (&ts, NULL);
    }
}

/* Take an instance whose scene binding is scene_path (NULL: any, the scene is
 * Blender's factory one): a ready one, else the oldest starting one, else a new
 * one (a cold start, here: the refill thread starts only warm ones). A scene
 * path becomes the one new warm instances are started with. The refill thread
 * is woken to replace what was taken. */
static sandbox_inst_t *s_take (bmq_sandbox_pool_t *self, const char *scene_path, bool *warm, char *err, size_t errlen)
{
    sandbox_inst_t *inst = NULL;
    pthread_mutex_lock (&self->mutex);
    if (scene_path)
        snprintf (self->scene_path, sizeof self->scene_path, "%s", scene_path);
    int pick = -1;
    for (int i = 0; i < self->nidle && pick < 0; i++)
        if ((!scene_path || strcmp (self->idle[i]->scene_path, scene_path) == 0) && sandbox_inst_poll_ready (self->idle[i]))
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
        inst = sandbox_inst_start (&self->opts.limits, self->drop_root, self->work, self->seq++, self->scene_path, err,
                                   errlen);
    s_wake (self);
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
    if (p[0] != '/' || strlen (p) >= SANDBOX_MAX_SCENE_PATH || strstr (p, "//") || strstr (p, "/./")
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

/* The runner's report for the job with nonce_hex, checked: a missing or
 * foreign one becomes a timeout, crash or error result; only the fields
 * proto/sandbox.json declares are kept (the runner is untrusted). */
static json_t *s_read_report (sandbox_inst_t *inst, int timeout, const char *nonce_hex)
{
    bool timed_out;
    json_t *result = sandbox_inst_read_line (inst, sandbox_now_ms () + timeout + S_REPORT_GRACE_MS, &timed_out);
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
            char *tail = sandbox_inst_log_tail (inst);
            char both[1400];
            snprintf (both, sizeof both, "%s; %s", detail, tail);
            free (tail);
            result = s_fail ("crashed", "Blender died in the sandbox (a resource limit, or a crash): %s", both);
        }
        return result;
    }
    if (strcmp (json_string_value (json_object_get (result, "nonce")) ?: "", nonce_hex) != 0) {
        json_decref (result);
        result = s_fail ("error", "the sandbox report does not answer this job%s", "");
        return result;
    }
    json_object_del (result, "nonce");
    /* the runner's report is untrusted: only the fields proto/sandbox.json declares go on,
     * and a verdict it does not declare is not one */
    const char *key;
    json_t *value;
    void *tmp;
    json_object_foreach_safe (result, tmp, key, value)
        if (!bmq_sandbox_proto_has (bmq_sandbox_result_fields, key)) json_object_del (result, key);
    if (!bmq_sandbox_proto_has (bmq_sandbox_runner_verdicts, json_string_value (json_object_get (result, "verdict")))) {
        json_decref (result);
        result = s_fail ("error", "the sandbox report has no verdict the protocol knows%s", "");
        return result;
    }
    if (!json_is_string (json_object_get (result, "message")))     /* the runner's own: a refusal */
        json_object_set_new (result, "message", json_string (s_summary (result)));
    return result;
}

/* The preview PNG the runner wrote (out/preview.png), when its report has
 * one: read into *png (malloc'd), never through a link planted there. */
static void s_read_preview (const sandbox_inst_t *inst, json_t *result, unsigned char **png, size_t *png_len)
{
    char path[700];
    json_t *preview = json_object_get (result, "preview");
    if (json_is_object (preview)) {
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
}

json_t *bmq_sandbox_pool_run (bmq_sandbox_pool_t *self, const char *script, size_t len, const void *blend,
                              size_t blend_len, const bmq_sandbox_job_t *job, unsigned char **png, size_t *png_len)
{
    double t0 = sandbox_now_ms ();
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
    sandbox_listing_t before = { 0 };
    bool snapped = false;
    sandbox_inst_t *inst = NULL;
    bool preview = job->preview_width > 0 && job->preview_height > 0;
    /* A live path the sandbox cannot bind (a rollback's snapshot in /dev/shm, issue 23): the copy
     * is read as an unsaved scene. What a script could do differently for it (filepath is denied
     * statically) the live fingerprint check catches: live then rolls back and answers diverged. */
    const char *scene_path = s_scene_path (job->scene_path);
    bool path_moved = !scene_path;
    if (!scene_path)
        scene_path = "";
    inst = s_take (self, blend ? scene_path : NULL, &warm, err, sizeof err);
    if (!inst) {
        result = s_fail ("unavailable", "sandbox unavailable: %s", err);
        goto done;
    }
    if (sandbox_inst_wait_ready (inst, sandbox_now_ms () + self->opts.start_timeout_ms) < 0) {
        char *tail = sandbox_inst_log_tail (inst);
        result = s_fail ("unavailable", "sandbox unavailable: Blender did not start in the sandbox: %s", tail);
        free (tail);
        goto done;
    }
    snprintf (path, sizeof path, "%s/job/script.py", inst->dir);
    int rc = sandbox_write_file (&self->opts.limits, self->drop_root, path, script, len);
    if (rc == 0 && blend) {
        snprintf (path, sizeof path, "%s/job/scene.blend", inst->dir);
        rc = sandbox_write_file (&self->opts.limits, self->drop_root, path, blend, blend_len);
    }
    if (rc == 0 && blend && job->sidecar) {     /* the orphans the live save kept (issue 23) */
        snprintf (path, sizeof path, "%s/job/scene.blend.json", inst->dir);
        rc = sandbox_write_file (&self->opts.limits, self->drop_root, path, job->sidecar, job->sidecar_len);
    }
    if (rc < 0) {
        result = s_fail ("unavailable", "sandbox unavailable: cannot write the job: %s", strerror (errno));
        goto done;
    }
    /* what is in the writable folders now, with Blender up and the job not yet sent */
    sandbox_files_snapshot (inst->dir, &before);
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
    result = s_read_report (inst, timeout, nonce_hex);

done:;
    bool ran = inst && inst->ready && snapped;
    if (inst) {
        /* kill first, then look at what the instance left on the host */
        sandbox_inst_kill (inst);
        json_t *violations = json_object_get (result, "violations");
        if (!json_is_array (violations)) {
            violations = json_array ();
            json_object_set_new (result, "violations", violations);
        }
        if (ran) {
            size_t nviol = json_array_size (violations);
            sandbox_files_check (inst->dir, &before, preview, violations);
            const char *verdict = json_string_value (json_object_get (result, "verdict")) ?: "";
            if (json_array_size (violations) > nviol
                && (json_is_true (json_object_get (result, "ok")) || strcmp (verdict, "error") == 0)) {
                json_object_set_new (result, "ok", json_false ());
                json_object_set_new (result, "verdict", json_string ("rejected"));
                json_object_set_new (result, "message", json_string (s_summary (result)));
            }
        }
        if (png) s_read_preview (inst, result, png, png_len);
        sandbox_inst_destroy (&inst);
    }
    free (before.files);
    if (path_moved)
        json_object_set_new (result, "scene_path_note", json_string ("the live scene's path cannot be reproduced in the "
                                                                    "sandbox: its copy was opened as an unsaved scene"));
    json_object_set_new (result, "script_sha256", json_string (sha));
    json_object_set_new (result, "scene_sha256", scene_sha[0] ? json_string (scene_sha) : json_null ());
    json_object_set_new (result, "start", json_string (warm ? "warm" : "cold"));
    json_object_set_new (result, "total_ms", json_real (sandbox_now_ms () - t0));
    json_object_set_new (result, "isolation", s_isolation_json (self));
    return result;
}
