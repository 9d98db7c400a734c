/* faults_load — plan and chat loops against a private stack, every run recorded. */
#include "faults_load.h"
#include "slow_llm.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_LOOPS 8
/* After an answer that is not a success the loop waits this long, so a dead
 * service is asked about five times a second, not thousands. */
#define ERROR_PAUSE_MS 200

typedef struct {
    fl_load_t *load;
    fl_kind_t  kind;
    int        client;
    pthread_t  thread;
} s_loop_t;

struct fl_load_t {
    char            blendmq[1024], run_dir[1024], work_dir[1024], tag[32];
    pthread_mutex_t lock;
    fl_run_t       *runs;
    size_t          nruns, cap;
    atomic_bool     stopping;
    s_loop_t        loops[MAX_LOOPS];
    int             nloops;
    atomic_int      serial;
};

int64_t fl_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t s_add_run (fl_load_t *self, const fl_run_t *run)
{
    pthread_mutex_lock (&self->lock);
    if (self->nruns == self->cap) {
        self->cap = self->cap ? self->cap * 2 : 256;
        self->runs = realloc (self->runs, self->cap * sizeof *self->runs);
    }
    size_t at = self->nruns++;
    self->runs[at] = *run;
    pthread_mutex_unlock (&self->lock);
    return at;
}

static void s_set_run (fl_load_t *self, size_t at, const fl_run_t *run)
{
    pthread_mutex_lock (&self->lock);
    self->runs[at] = *run;
    pthread_mutex_unlock (&self->lock);
}

/* A plan of FAULTS_PLAN_STEPS steps: FAULTS_PLAN_OBJECTS spheres (heavy
 * enough that a plan takes a fraction of a second), then changes to them. */
static int s_write_plan (const char *path, const char *prefix)
{
    json_t *plan = json_array ();
    char name[96];
    for (int i = 0; i < FAULTS_PLAN_OBJECTS; i++) {
        snprintf (name, sizeof name, "%s_o%d", prefix, i);
        json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:i, s:i, s:f, s:[f,f,f]}}",
                                                "operation", "bpy.ops.mesh.primitive_uv_sphere_add", "name", name, "params",
                                                "segments", 64, "ring_count", 32, "radius", 0.4, "location", (double) i, 0.0, 0.0));
    }
    for (int k = 0; json_array_size (plan) < FAULTS_PLAN_STEPS; k++) {
        snprintf (name, sizeof name, "%s_o%d", prefix, k % FAULTS_PLAN_OBJECTS);
        json_t *step = k % 3 == 0 ? json_pack ("{s:s, s:s, s:{s:[f,f,f]}}", "operation", "object.location", "target", name,
                                               "params", "value", (double) (k % FAULTS_PLAN_OBJECTS), k * 0.1, 0.0)
                     : k % 3 == 1 ? json_pack ("{s:s, s:s, s:{s:[f,f,f]}}", "operation", "object.material", "target", name,
                                               "params", "color", 0.1 * (k % 10), 0.5, 0.5)
                     : json_pack ("{s:s, s:s, s:{s:[f,f,f]}}", "operation", "object.scale", "target", name,
                                  "params", "value", 1.0, 1.0, 1.0 + 0.01 * k);
        json_array_append_new (plan, step);
    }
    int rc = json_dump_file (plan, path, JSON_COMPACT);
    json_decref (plan);
    return rc;
}

/* Does the client's message claim the plan was rolled back? "it ends whole if
 * the executor finished it …, otherwise it is rolled back" claims neither (a
 * pipelined plan may finish in Blender while its executor is stopped). */
static bool s_says_rollback (const char *text)
{
    if (text && strstr (text, "ends whole if")) return false;
    return text && (strstr (text, "rolled back") || strstr (text, "rolls it back") || strstr (text, "rolls back")
                    || strstr (text, "rolling back"));
}

static void s_first_line (char *dst, size_t len, const char *code, const char *text)
{
    snprintf (dst, len, "%s%s%.*s", code && *code ? code : "", code && *code ? ": " : "",
              (int) strcspn (text ? text : "", "\n"), text ? text : "");
}

/* What the client printed: JSON lines on stdout, messages on stderr. */
static void s_read_outcome (fl_run_t *run, const char *out_path, const char *err_path)
{
    FILE *f = fopen (out_path, "r");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline (&line, &cap, f) > 0) {
        json_t *l = json_loads (line, 0, NULL);
        if (!l) continue;
        const char *type = json_string_value (json_object_get (l, "type"));
        const char *cid = json_string_value (json_object_get (l, "cid"));
        json_t *body = json_object_get (l, "body");
        if (type && cid) { run->replied = true; snprintf (run->cid, sizeof run->cid, "%s", cid); }
        if (run->kind == FL_SCENE && json_is_object (l) && !type) snprintf (run->outcome, sizeof run->outcome, "ok");
        if (!type) { json_decref (l); continue; }
        const char *status = json_string_value (json_object_get (body, "status"));
        const char *event = json_string_value (json_object_get (body, "event"));
        if (!strcmp (type, "progress") && event && !strcmp (event, "step")) run->steps_seen++;
        else if (!strcmp (type, "execute.result")) {
            snprintf (run->outcome, sizeof run->outcome, "%s", status ? status : "unknown");
            json_t *rb = json_object_get (body, "rollback");
            const char *rbs = json_string_value (json_object_get (rb, "status"));
            if (rbs && !strcmp (rbs, "rolled back")) run->claims_rollback = true;
            if (status && strcmp (status, "done"))
                s_first_line (run->message, sizeof run->message, status, json_string_value (json_object_get (body, "error")));
        }
        else if (!strcmp (type, "error")) {
            snprintf (run->outcome, sizeof run->outcome, "error");
            snprintf (run->code, sizeof run->code, "%s", json_string_value (json_object_get (body, "code")) ?: "?");
            const char *msg = json_string_value (json_object_get (body, "message"));
            s_first_line (run->message, sizeof run->message, run->code, msg);
            if (s_says_rollback (msg)) run->claims_rollback = true;
        }
        else if (!strcmp (type, "validate.reply") && !json_is_true (json_object_get (body, "accepted"))) {
            snprintf (run->outcome, sizeof run->outcome, "rejected");
            json_t *e0 = json_array_get (json_object_get (body, "errors"), 0);
            s_first_line (run->message, sizeof run->message, "rejected", json_string_value (json_object_get (e0, "reason")));
        }
        json_decref (l);
    }
    if (f) fclose (f);
    f = fopen (err_path, "r");
    bool said = false;
    while (f && getline (&line, &cap, f) > 0) {
        if (strncmp (line, "blendmq: ", 9) || said) continue;
        said = true;
        /* the CLI's own verdict (the gateway silent or restarted): it names the story */
        const char *req = strstr (line, "request ");
        if (req && !*run->cid) sscanf (req + 8, "%79[0-9A-Za-z-]", run->cid);
        if (!*run->outcome || !strcmp (run->outcome, "unknown")) {
            snprintf (run->outcome, sizeof run->outcome, "%s", strstr (line, "gateway") ? "gateway" : "error");
            s_first_line (run->message, sizeof run->message, NULL, line + 9);
            char code[64];
            int used = 0;
            if (sscanf (line + 9, "%63[a-z_]:%n", code, &used) == 1 && used > 0) snprintf (run->code, sizeof run->code, "%s", code);
        }
        if (s_says_rollback (line)) run->claims_rollback = true;
    }
    if (f) fclose (f);
    free (line);
    if (!*run->outcome) snprintf (run->outcome, sizeof run->outcome, run->exit_code == 0 ? "ok" : "unknown");
}

/* Start argv with stdout and stderr to files; wait (bounded) and time it. */
/* A hung client's threads' stacks, appended to its stderr file (when gdb is
 * installed): what it waited on is the first thing its failure needs. */
static void s_dump_stacks (pid_t pid, const char *err_path)
{
    char cmd[1600];
    snprintf (cmd, sizeof cmd,
              "command -v gdb >/dev/null 2>&1 && timeout 30 gdb -p %d -batch -nx -ex 'thread apply all bt' >>'%s.stacks' 2>&1"
              " && { echo '    hung client %d, its stacks:'; grep -E '^(Thread|#)' '%s.stacks' | cut -c1-160 | head -60; } >&2",
              (int) pid, err_path, (int) pid, err_path);
    if (system (cmd) != 0) return;
}

static void s_spawn_and_wait (fl_load_t *self, fl_run_t *run, size_t at, char *const argv[],
                              const char *out_path, const char *err_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen (&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen (&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    run->start_ms = fl_now_ms ();
    s_set_run (self, at, run);
    int rc = posix_spawn (&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy (&fa);
    if (rc) {
        run->end_ms = fl_now_ms ();
        run->exit_code = 127;
        snprintf (run->outcome, sizeof run->outcome, "unknown");
        snprintf (run->message, sizeof run->message, "cannot start %s: %s", argv[0], strerror (rc));
        s_set_run (self, at, run);
        return;
    }
    int status = 0;
    bool hung = false;
    while (waitpid (pid, &status, WNOHANG) == 0) {
        if (fl_now_ms () - run->start_ms > FAULTS_HANG_MS && !hung) {
            s_dump_stacks (pid, err_path);
            kill (pid, SIGKILL);
            hung = true;
        }
        usleep (5000);
    }
    run->end_ms = fl_now_ms ();
    run->exit_code = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
    s_read_outcome (run, out_path, err_path);
    if (hung) {
        snprintf (run->outcome, sizeof run->outcome, "hung");
        snprintf (run->message, sizeof run->message, "no answer within %d ms: killed", FAULTS_HANG_MS);
    }
    s_set_run (self, at, run);
}

static void s_run_one (fl_load_t *self, fl_kind_t kind, int client)
{
    fl_run_t run = { .kind = kind, .client = client };
    int n = atomic_fetch_add (&self->serial, 1);
    const char *what = kind == FL_PLAN ? "p" : kind == FL_CHAT ? "c" : "s";
    snprintf (run.prefix, sizeof run.prefix, "%s%s%dr%03d", self->tag, what, client, n);
    run.objects = kind == FL_PLAN ? FAULTS_PLAN_OBJECTS : kind == FL_CHAT ? SLOW_LLM_OBJECTS : 0;
    char plan[1200], out[1200], err[1200], prompt[200];
    snprintf (plan, sizeof plan, "%s/%s.json", self->work_dir, run.prefix);
    snprintf (out, sizeof out, "%s/%s.out", self->work_dir, run.prefix);
    snprintf (err, sizeof err, "%s/%s.err", self->work_dir, run.prefix);
    snprintf (prompt, sizeof prompt, "build test cubes FAULTPREFIX=%s", run.prefix);
    size_t at = s_add_run (self, &run);
    if (kind == FL_PLAN && s_write_plan (plan, run.prefix)) {
        snprintf (run.outcome, sizeof run.outcome, "unknown");
        snprintf (run.message, sizeof run.message, "cannot write %.400s", plan);
        run.start_ms = run.end_ms = fl_now_ms ();
        s_set_run (self, at, &run);
        return;
    }
    char *plan_argv[] = { self->blendmq, "--run-dir", self->run_dir, "--json", "plan", "run", plan, NULL };
    char *chat_argv[] = { self->blendmq, "--run-dir", self->run_dir, "--json", "chat", prompt, NULL };
    char *scene_argv[] = { self->blendmq, "--run-dir", self->run_dir, "--json", "scene", "info", NULL };
    s_spawn_and_wait (self, &run, at, kind == FL_PLAN ? plan_argv : kind == FL_CHAT ? chat_argv : scene_argv, out, err);
    if (strcmp (run.outcome, "done") && strcmp (run.outcome, "ok")) usleep (ERROR_PAUSE_MS * 1000);
}

static void *s_loop (void *arg)
{
    s_loop_t *loop = arg;
    while (!atomic_load (&loop->load->stopping)) s_run_one (loop->load, loop->kind, loop->client);
    return NULL;
}

fl_load_t *fl_load_new (const char *blendmq, const char *run_dir, const char *work_dir)
{
    fl_load_t *self = calloc (1, sizeof *self);
    snprintf (self->blendmq, sizeof self->blendmq, "%s", blendmq);
    snprintf (self->run_dir, sizeof self->run_dir, "%s", run_dir);
    snprintf (self->work_dir, sizeof self->work_dir, "%s", work_dir);
    pthread_mutex_init (&self->lock, NULL);
    return self;
}

void fl_load_destroy (fl_load_t **self_p)
{
    if (!self_p || !*self_p) return;
    fl_load_t *self = *self_p;
    fl_load_stop (self);
    pthread_mutex_destroy (&self->lock);
    free (self->runs);
    free (self);
    *self_p = NULL;
}

void fl_load_start (fl_load_t *self, const char *tag, int plans, bool chat)
{
    fl_load_stop (self);
    pthread_mutex_lock (&self->lock);
    self->nruns = 0;
    pthread_mutex_unlock (&self->lock);
    snprintf (self->tag, sizeof self->tag, "%s", tag);
    atomic_store (&self->stopping, false);
    for (int i = 0; i < plans + (chat ? 1 : 0) && self->nloops < MAX_LOOPS; i++) {
        s_loop_t *loop = &self->loops[self->nloops++];
        *loop = (s_loop_t) { .load = self, .kind = i < plans ? FL_PLAN : FL_CHAT, .client = i };
        pthread_create (&loop->thread, NULL, s_loop, loop);
    }
}

void fl_load_stop (fl_load_t *self)
{
    atomic_store (&self->stopping, true);
    for (int i = 0; i < self->nloops; i++) pthread_join (self->loops[i].thread, NULL);
    self->nloops = 0;
}

void fl_load_probe (fl_load_t *self, fl_kind_t kind)
{
    s_run_one (self, kind, 9);
}

size_t fl_load_runs (fl_load_t *self, fl_run_t **runs_out)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->nruns;
    *runs_out = malloc ((n ? n : 1) * sizeof **runs_out);
    memcpy (*runs_out, self->runs, n * sizeof **runs_out);
    pthread_mutex_unlock (&self->lock);
    return n;
}

int fl_load_in_flight (fl_load_t *self, fl_kind_t kind)
{
    pthread_mutex_lock (&self->lock);
    int n = 0;
    for (size_t i = 0; i < self->nruns; i++)
        if (self->runs[i].kind == kind && self->runs[i].start_ms && !self->runs[i].end_ms) n++;
    pthread_mutex_unlock (&self->lock);
    return n;
}
