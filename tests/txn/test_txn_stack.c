/* No half-built scenes (issue 17), through a whole stack (`blendmq up --ipc`)
 * with a real headless Blender:
 *
 *   - the executor killed (SIGKILL) in the middle of a 200-step plan: the
 *     add-on rolls the plan back as the link drops; the next executor (the
 *     supervisor's restart, or one started here when there is no supervisor)
 *     hears of it at hello, so the scene holds none of the plan's objects and
 *     the plan's story ends with plan.interrupted carrying what was removed,
 *     and watchers get a plan "interrupted" event from the new instance;
 *   - the executor stopped (SIGTERM) mid-plan: it exits cleanly (code 0), ends
 *     the plan as "interrupted" saying Blender rolls it back (execute.result
 *     and plan.end, flushed to the audit trail), and the same rollback and
 *     plan.interrupted follow;
 *   - the link cut (a TCP proxy between executor and Blender drops its
 *     connections) while the executor lives: the plan ends "interrupted"
 *     saying Blender rolls it back; the executor reconnects and the same story
 *     gets plan.interrupted with what was removed, after its plan.end;
 *   - every progress event carries seq (1, 2, 3… per executor process, no
 *     gaps) and instance (16 hex, new after a restart). */
#include "e2e_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PLAN_STEPS 200

static char s_dir[256];

static int64_t s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Dead means gone or a zombie. */
static bool s_alive (int pid)
{
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    char path[64], state = 0;
    snprintf (path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen (path, "r");
    if (!f) return false;
    if (fscanf (f, "%*d %*s %c", &state) != 1) state = 0;
    fclose (f);
    return state && state != 'Z';
}

/* ---- a child whose stdout we read line by line, with timeouts ---------------- */

typedef struct {
    pid_t  pid;
    int    fd;
    char  *buf;
    size_t len, cap;
} s_child_t;

static void s_child_start (s_child_t *c, const char *cmd)
{
    int fds[2];
    assert_int_equal (pipe (fds), 0);
    c->pid = fork ();
    assert_true (c->pid >= 0);
    if (c->pid == 0) {
        setpgid (0, 0);
        dup2 (fds[1], 1);
        close (fds[0]);
        close (fds[1]);
        execl ("/bin/sh", "sh", "-c", cmd, (char *) NULL);
        _exit (127);
    }
    close (fds[1]);
    c->fd = fds[0];
    c->cap = 1 << 16;
    c->len = 0;
    c->buf = malloc (c->cap);
}

/* The next JSON line, or NULL at EOF or after timeout_ms. */
static json_t *s_child_line (s_child_t *c, int timeout_ms)
{
    int64_t deadline = s_now_ms () + timeout_ms;
    for (;;) {
        char *nl = memchr (c->buf, '\n', c->len);
        if (nl) {
            size_t n = (size_t) (nl - c->buf);
            json_t *line = *c->buf == '{' ? json_loadb (c->buf, n, 0, NULL) : NULL;
            memmove (c->buf, nl + 1, c->len - n - 1);
            c->len -= n + 1;
            if (line) return line;
            continue;
        }
        int64_t left = deadline - s_now_ms ();
        if (left <= 0) return NULL;
        struct pollfd p = { .fd = c->fd, .events = POLLIN };
        if (poll (&p, 1, (int) left) <= 0) continue;
        if (c->cap - c->len < 4096) c->buf = realloc (c->buf, c->cap *= 2);
        ssize_t got = read (c->fd, c->buf + c->len, c->cap - c->len);
        if (got <= 0) return NULL;
        c->len += (size_t) got;
    }
}

/* Stop it (its whole process group) and return its exit code (-1: killed). */
static int s_child_stop (s_child_t *c, bool kill_it)
{
    if (kill_it) kill (-c->pid, SIGTERM);
    int status = 0;
    waitpid (c->pid, &status, 0);
    close (c->fd);
    free (c->buf);
    c->buf = NULL;
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* ---- the stack ----------------------------------------------------------------- */

static int s_setup (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-txn-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc --validators 1 >&2", e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static int s_teardown (void **state)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2", e2e_bin ("blendmq"), s_dir);
    int rc = system (cmd);
    snprintf (cmd, sizeof cmd, "grep -H -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '%s'/logs/*.log >&2", s_dir);
    if (system (cmd) == 0) { fprintf (stderr, "sanitizer reports in the services' logs (kept in %s)\n", s_dir); return -1; }
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (getenv ("BMQ_KEEP_RUN_DIR")) fprintf (stderr, "run dir kept: %s\n", s_dir);
    else if (rc == 0 && system (cmd) != 0) return -1;
    return rc == 0 ? 0 : -1;
}

static const char *s_write_plan (const char *prefix)
{
    static char path[512];
    json_t *plan = json_array ();
    for (int i = 0; i < PLAN_STEPS; i++) {
        char name[64];
        snprintf (name, sizeof name, "%s%03d", prefix, i);
        json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:i, s:i, s:[f,f,f]}}", "operation",
                                                "bpy.ops.mesh.primitive_uv_sphere_add", "name", name, "params",
                                                "segments", 64, "ring_count", 32, "location", (double) (i % 20), (double) (i / 20), 0.0));
    }
    snprintf (path, sizeof path, "%s/%s.json", s_dir, prefix);
    assert_int_equal (json_dump_file (plan, path, 0), 0);
    json_decref (plan);
    return path;
}

/* Objects in the live scene whose name starts with prefix. */
static int s_scene_count (const char *prefix)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene", &code);
    if (code != 0) {
        char *text = json_dumps (lines, JSON_COMPACT);
        fprintf (stderr, "blendmq scene exited %d: %s\n", code, text ? text : "?");
        free (text);
    }
    assert_int_equal (code, 0);
    json_t *objects = json_object_get (json_array_get (lines, 0), "objects");
    assert_non_null (objects);
    int n = 0;
    size_t i;
    json_t *o;
    json_array_foreach (objects, i, o)
        if (!strncmp (json_string_value (json_object_get (o, "name")), prefix, strlen (prefix))) n++;
    json_decref (lines);
    return n;
}

/* The story's records (blendmq audit show CID --json), oldest first. */
static json_t *s_story (const char *cid)
{
    char args[256];
    snprintf (args, sizeof args, "audit show '%s'", cid);
    int code;
    return e2e_blendmq_json (s_dir, args, &code);
}

/* A string member, "" when missing. */
static const char *s_str (const json_t *o, const char *key)
{
    const char *v = json_string_value (json_object_get (o, key));
    return v ? v : "";
}

static const char *s_kind (json_t *rec) { return s_str (rec, "kind"); }

/* Wait until the executor's last record in the story is plan.interrupted;
 * return that record's data. (The gateway's own records, plan.cut and
 * request.end, may come after it: the gateway cuts the request when a
 * heartbeat tells it the executor restarted.) */
static json_t *s_wait_interrupted_record (const char *cid, int timeout_ms)
{
    int64_t deadline = s_now_ms () + timeout_ms;
    while (s_now_ms () < deadline) {
        json_t *story = s_story (cid), *last = NULL;
        size_t i;
        json_t *rec;
        json_array_foreach (story, i, rec)
            if (!strcmp (s_str (rec, "sender"), "executor")) last = rec;
        if (last && !strcmp (s_kind (last), "plan.interrupted")) {
            json_t *data = json_incref (json_object_get (last, "data"));
            json_decref (story);
            return data;
        }
        json_decref (story);
        usleep (300000);
    }
    json_t *story = s_story (cid);
    char *text = json_dumps (story, JSON_COMPACT);
    fprintf (stderr, "story %s never ended with plan.interrupted: %.4000s\n", cid, text ? text : "?");
    free (text);
    json_decref (story);
    return NULL;
}

/* Until the gateway has seen the new executor process (its heartbeat): a plan
 * sent before that would be cut as held by the old one. */
static void s_wait_gateway_sees (const char *old_instance)
{
    for (int64_t end = s_now_ms () + 60000; s_now_ms () < end; usleep (250000)) {
        int code;
        json_t *lines = e2e_blendmq_json (s_dir, "status", &code);
        size_t i;
        json_t *svc;
        bool seen = false;
        json_array_foreach (json_object_get (json_array_get (lines, 0), "services"), i, svc)
            if (!strcmp (s_str (svc, "name"), "executor") && *s_str (svc, "instance")
                && strcmp (s_str (svc, "instance"), old_instance) && !strcmp (s_str (svc, "state"), "blender connected"))
                seen = true;
        json_decref (lines);
        if (seen) return;
    }
    fail_msg ("the gateway never saw a new executor process connected to Blender");
}

/* The supervisor starts the executor again; without one (an older `up`), start
 * it here with the same config. Returns the new pid. */
static int s_executor_back (int old_pid)
{
    for (int64_t end = s_now_ms () + 10000; s_now_ms () < end; usleep (100000)) {
        int pid = e2e_pid (s_dir, "executor");
        if (pid > 0 && pid != old_pid && s_alive (pid)) return pid;
    }
    fprintf (stderr, "no supervisor restarted the executor: starting it here\n");
    char cfg[512], log[512], pidfile[512];
    snprintf (cfg, sizeof cfg, "%s/blendmq.yaml", s_dir);
    snprintf (log, sizeof log, "%s/logs/executor.log", s_dir);
    snprintf (pidfile, sizeof pidfile, "%s/pids/executor.pid", s_dir);
    pid_t pid = fork ();
    if (pid == 0) {
        setsid ();
        int out = open (log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (out >= 0) { dup2 (out, 1); dup2 (out, 2); }
        execl (e2e_bin ("blendmq-executor"), "blendmq-executor", "--config", cfg, (char *) NULL);
        _exit (127);
    }
    FILE *f = fopen (pidfile, "w");
    fprintf (f, "%d\n", (int) pid);
    fclose (f);
    return pid;
}

/* Events of one plan run: its story id, the step events seen, and seq checked. */
typedef struct {
    char    cid[128];
    char    plan_id[128];
    int     ok_steps;
    int64_t last_seq;
    char    instance[32];
    json_t *result;         /* execute.result, if it came */
} s_run_t;

static void s_note_event (s_run_t *run, json_t *line)
{
    const char *type = json_string_value (json_object_get (line, "type"));
    json_t *body = json_object_get (line, "body");
    if (!*run->cid && json_string_value (json_object_get (line, "cid")))
        snprintf (run->cid, sizeof run->cid, "%s", json_string_value (json_object_get (line, "cid")));
    if (type && !strcmp (type, "execute.result")) run->result = json_incref (body);
    if (!type || strcmp (type, "progress")) return;
    if (!*run->plan_id) snprintf (run->plan_id, sizeof run->plan_id, "%s", s_str (body, "plan_id"));
    /* seq: 1, 2, 3… per process, no gap inside one run; instance: 16 hex */
    json_t *seq = json_object_get (body, "seq");
    const char *instance = json_string_value (json_object_get (body, "instance"));
    assert_true (json_is_integer (seq) && json_integer_value (seq) >= 1);
    assert_non_null (instance);
    assert_int_equal (strlen (instance), 16);
    assert_int_equal (strspn (instance, "0123456789abcdef"), 16);
    if (!*run->instance) snprintf (run->instance, sizeof run->instance, "%s", instance);
    assert_string_equal (instance, run->instance);
    if (run->last_seq) assert_int_equal (json_integer_value (seq), run->last_seq + 1);
    run->last_seq = json_integer_value (seq);
    const char *event = json_string_value (json_object_get (body, "event"));
    const char *status = json_string_value (json_object_get (body, "status"));
    if (event && status && !strcmp (event, "step") && !strcmp (status, "ok")) run->ok_steps++;
}

/* `plan run` of a fresh 200-step plan; returns when `after` steps are done. */
static void s_start_plan (s_child_t *client, s_run_t *run, const char *prefix, int after)
{
    const char *path = s_write_plan (prefix);
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "exec '%s' --run-dir '%s' --json plan run '%s'", e2e_bin ("blendmq"), s_dir, path);
    s_child_start (client, cmd);
    while (run->ok_steps < after) {
        json_t *line = s_child_line (client, 60000);
        if (!line) fail_msg ("plan run ended or went quiet after %d steps", run->ok_steps);
        s_note_event (run, line);
        json_decref (line);
        assert_null (run->result);                  /* the plan must still be running */
    }
    assert_true (*run->cid);
}

/* The rollback of a plan.interrupted record or event: everything the plan made. */
static void s_check_rollback (json_t *data, const char *prefix, int at_least)
{
    assert_non_null (data);
    assert_string_equal (json_string_value (json_object_get (data, "by")), "blender");
    json_int_t steps_run = json_integer_value (json_object_get (data, "steps_run"));
    assert_true (steps_run >= at_least && steps_run < PLAN_STEPS);
    json_t *rb = json_object_get (data, "rollback");
    assert_true (json_is_object (rb));
    assert_int_equal (json_integer_value (json_object_get (rb, "removed_count")), steps_run);   /* one object a step */
    json_t *removed = json_object_get (rb, "removed");
    assert_int_equal (json_array_size (removed), steps_run < 256 ? (size_t) steps_run : 256);
    size_t i;
    json_t *name;
    json_array_foreach (removed, i, name) assert_int_equal (strncmp (json_string_value (name), prefix, strlen (prefix)), 0);
}

static void s_wait_dead (int pid)
{
    for (int i = 0; i < 100 && s_alive (pid); i++) usleep (100000);
    assert_false (s_alive (pid));
}

static void test_executor_killed_mid_plan (void **state)
{
    assert_true (e2e_wait_healthy (s_dir, true, 60000));
    s_child_t watch;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "exec '%s' --run-dir '%s' --json watch", e2e_bin ("blendmq"), s_dir);
    s_child_start (&watch, cmd);
    s_child_t client;
    s_run_t run = { .last_seq = 0 };
    s_start_plan (&client, &run, "txnk", 50);
    int old = e2e_pid (s_dir, "executor");
    assert_true (old > 0);
    assert_int_equal (kill (old, SIGKILL), 0);
    s_wait_dead (old);
    s_child_stop (&client, true);               /* its answer died with the executor */
    json_decref (run.result);
    s_executor_back (old);
    s_wait_gateway_sees (run.instance);

    json_t *data = s_wait_interrupted_record (run.cid, 30000);
    s_check_rollback (data, "txnk", 50);
    assert_string_equal (s_str (data, "plan_id"), run.plan_id);
    assert_true (*s_str (data, "reason"));
    assert_int_equal (s_scene_count ("txnk"), 0);

    /* watchers: a plan "interrupted" event, from the new executor instance */
    json_t *event = NULL;
    for (int64_t end = s_now_ms () + 20000; !event && s_now_ms () < end;) {
        json_t *body = s_child_line (&watch, 1000);
        if (body && !strcmp (s_str (body, "event"), "plan") && !strcmp (s_str (body, "status"), "interrupted")
            && !strcmp (s_str (body, "plan_id"), run.plan_id))
            event = json_incref (body);
        json_decref (body);
    }
    s_child_stop (&watch, true);
    assert_non_null (event);
    assert_true (json_integer_value (json_object_get (event, "seq")) >= 1);
    assert_string_not_equal (json_string_value (json_object_get (event, "instance")), run.instance);
    assert_true (json_is_object (json_object_get (event, "rollback")));
    json_decref (event);
    json_decref (data);
}

/* "exited with code 0" from the supervisor's status file, or our own waitpid
 * (we are the subreaper when there is no supervisor). */
static void s_check_clean_exit (int pid)
{
    char path[512];
    snprintf (path, sizeof path, "%s/supervisor.json", s_dir);
    json_t *doc = json_load_file (path, 0, NULL);
    if (!doc) {
        int status = 0;
        assert_int_equal (waitpid (pid, &status, 0), pid);
        assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
        return;
    }
    const char *exit_text = NULL;
    for (int tries = 0; tries < 50 && !exit_text; tries++) {
        json_decref (doc);
        doc = json_load_file (path, 0, NULL);
        size_t i;
        json_t *c;
        json_array_foreach (json_object_get (doc, "children"), i, c)
            if (!strcmp (s_str (c, "name"), "executor")
                && (json_integer_value (json_object_get (c, "old_pid")) == pid || json_integer_value (json_object_get (c, "pid")) != pid))
                exit_text = json_string_value (json_object_get (c, "last_exit"));
        if (!exit_text) usleep (100000);
    }
    assert_non_null (exit_text);
    assert_string_equal (exit_text, "exited with code 0");
    json_decref (doc);
}

static void test_executor_sigterm_mid_plan (void **state)
{
    assert_true (e2e_wait_healthy (s_dir, true, 60000));
    s_child_t client;
    s_run_t run = { .last_seq = 0 };
    s_start_plan (&client, &run, "txnt", 30);
    int old = e2e_pid (s_dir, "executor");
    assert_int_equal (kill (old, SIGTERM), 0);
    /* the executor ends the plan itself before it exits */
    for (json_t *line; !run.result && (line = s_child_line (&client, 30000));) {
        s_note_event (&run, line);
        json_decref (line);
    }
    assert_int_equal (s_child_stop (&client, false), 1);
    assert_non_null (run.result);
    assert_string_equal (json_string_value (json_object_get (run.result, "status")), "interrupted");
    /* a pipelined plan is cancelled in Blender and rolled back there before the
     * executor exits ("rolled back", with what it removed); a step that outlasts
     * the executor's wait leaves it to Blender when the link closes ("blender
     * rolls back", then a plan.interrupted record says what it removed) */
    json_t *rb = json_object_get (run.result, "rollback");
    const char *rbs = json_string_value (json_object_get (rb, "status"));
    assert_string_equal (json_string_value (json_object_get (rb, "by")), "blender");
    bool in_process = rbs && !strcmp (rbs, "rolled back");
    if (in_process) {
        assert_non_null (strstr (json_string_value (json_object_get (run.result, "error")), "Blender rolled the plan back"));
        json_int_t done = json_integer_value (json_object_get (run.result, "step"));
        assert_true (done >= 30 && done < PLAN_STEPS);
        assert_int_equal ((json_int_t) json_array_size (json_object_get (rb, "removed")), done);
    }
    else assert_non_null (strstr (json_string_value (json_object_get (run.result, "error")), "Blender rolls the plan back"));
    json_decref (run.result);
    s_wait_dead (old);
    s_check_clean_exit (old);
    /* its plan.end reached the audit trail (flushed at exit) */
    s_executor_back (old);
    s_wait_gateway_sees (run.instance);
    if (!in_process) {
        json_t *data = s_wait_interrupted_record (run.cid, 30000);
        s_check_rollback (data, "txnt", 30);
        json_decref (data);
    }
    json_t *story = s_story (run.cid);
    json_t *end = NULL;
    size_t i;
    json_t *rec;
    json_array_foreach (story, i, rec)
        if (!strcmp (s_kind (rec), "plan.end")) end = json_object_get (rec, "data");
    assert_non_null (end);
    assert_string_equal (json_string_value (json_object_get (end, "status")), "interrupted");
    assert_string_equal (json_string_value (json_object_get (json_object_get (end, "rollback"), "by")), "blender");
    json_decref (story);
    assert_int_equal (s_scene_count ("txnt"), 0);
}

/* ---- the link cut while the executor lives ----------------------------------- */

static pid_t s_blender_pid, s_proxy_pid;
static volatile sig_atomic_t s_cut;

static void s_on_cut (int sig) { (void) sig; s_cut = 1; }

static int s_listen_any (int *port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (fd < 0 || bind (fd, (struct sockaddr *) &a, sizeof a) || listen (fd, 8)
        || getsockname (fd, (struct sockaddr *) &a, &len)) return -1;
    *port = ntohs (a.sin_port);
    return fd;
}

/* A TCP proxy in a child: each connection to lfd is forwarded to `port`; on
 * SIGUSR1 every open connection is closed at once (the network cut), new
 * ones are accepted again. */
static pid_t s_proxy (int lfd, int port)
{
    pid_t pid = fork ();
    if (pid) return pid;
    signal (SIGUSR1, s_on_cut);
    int a = -1, b = -1;
    char buf[1 << 16];
    for (;;) {
        if (s_cut) {
            if (a >= 0) close (a);
            if (b >= 0) close (b);
            a = b = -1;
            s_cut = 0;
        }
        struct pollfd p[3] = { { .fd = lfd, .events = POLLIN }, { .fd = a, .events = POLLIN }, { .fd = b, .events = POLLIN } };
        if (poll (p, 3, 100) <= 0) continue;
        if (p[0].revents & POLLIN) {
            int c = accept (lfd, NULL, NULL);
            if (c >= 0 && a >= 0) close (c);                /* one link at a time, like the add-on */
            else if (c >= 0) {
                struct sockaddr_in t = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port),
                                         .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
                b = socket (AF_INET, SOCK_STREAM, 0);
                if (connect (b, (struct sockaddr *) &t, sizeof t)) { close (b); close (c); b = -1; }
                else a = c;
            }
        }
        for (int i = 1; i < 3 && a >= 0; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = recv (p[i].fd, buf, sizeof buf, 0);
            int to = p[i].fd == a ? b : a;
            if (n <= 0 || send (to, buf, (size_t) n, MSG_NOSIGNAL) != n) { close (a); close (b); a = b = -1; }
        }
    }
}

/* Blender (headless, the add-on) and a proxy in front of it; the stack's
 * executor connects through the proxy (`up --no-blender`). */
static int s_setup_cut (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-txncut-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char token[512], portfile[512], log[512], addon[512], cmd[2048];
    snprintf (token, sizeof token, "%s/blender.token", s_dir);
    snprintf (portfile, sizeof portfile, "%s/blender.port", s_dir);
    snprintf (log, sizeof log, "%s/blender-own.log", s_dir);
    snprintf (addon, sizeof addon, "%s/services/executor/addon/blendmq_addon.py", BMQ_SOURCE_DIR);
    FILE *f = fopen (token, "w");
    fputs ("txn-cut-token-0123456789abcdef", f);
    fclose (f);
    s_blender_pid = fork ();
    if (s_blender_pid == 0) {
        if (!freopen (log, "w", stdout) || !freopen (log, "a", stderr)) _exit (126);
        execlp ("blender", "blender", "-b", "--factory-startup", "--python", addon, "--", "--port", "0",
                "--port-file", portfile, "--token-file", token, "--reset-scene", (char *) NULL);
        _exit (127);
    }
    int port = 0;
    for (int i = 0; i < 1200 && !port; i++) {
        f = fopen (portfile, "r");
        if (f) { if (fscanf (f, "%d", &port) != 1) port = 0; fclose (f); }
        if (!port) usleep (50000);
    }
    int proxy_port, lfd = s_listen_any (&proxy_port);
    if (!port || lfd < 0) return -1;
    s_proxy_pid = s_proxy (lfd, port);
    close (lfd);
    snprintf (cmd, sizeof cmd, "BLENDMQ_BLENDER_HOST=127.0.0.1 BLENDMQ_BLENDER_PORT=%d BLENDMQ_BLENDER_TOKEN_FILE='%s' "
              "'%s' --run-dir '%s' up --ipc --no-blender --validators 1 >&2", proxy_port, token, e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static int s_teardown_cut (void **state)
{
    int rc = s_teardown (state);
    if (s_proxy_pid > 0) { kill (s_proxy_pid, SIGKILL); waitpid (s_proxy_pid, NULL, 0); }
    if (s_blender_pid > 0) { kill (s_blender_pid, SIGKILL); waitpid (s_blender_pid, NULL, 0); }
    return rc;
}

static void test_link_cut_mid_plan (void **state)
{
    assert_true (e2e_wait_healthy (s_dir, true, 60000));
    s_child_t client;
    s_run_t run = { .last_seq = 0 };
    s_start_plan (&client, &run, "txnc", 40);
    assert_int_equal (kill (s_proxy_pid, SIGUSR1), 0);          /* the network cut */
    for (json_t *line; !run.result && (line = s_child_line (&client, 30000));) {
        s_note_event (&run, line);                              /* same executor: seq goes on */
        json_decref (line);
    }
    assert_int_equal (s_child_stop (&client, false), 1);
    assert_non_null (run.result);
    assert_string_equal (s_str (run.result, "status"), "interrupted");
    assert_non_null (strstr (s_str (run.result, "error"), "Blender rolls the plan back"));
    json_t *rb = json_object_get (run.result, "rollback");
    assert_string_equal (s_str (rb, "by"), "blender");
    assert_string_equal (s_str (rb, "status"), "blender rolls back");
    json_decref (run.result);
    /* the executor reconnects through the proxy; Blender's report follows the plan.end */
    json_t *data = s_wait_interrupted_record (run.cid, 30000);
    s_check_rollback (data, "txnc", 40);
    assert_non_null (strstr (s_str (data, "reason"), "closed"));
    json_decref (data);
    json_t *story = s_story (run.cid);
    int end_at = -1, interrupted_at = -1;
    size_t i;
    json_t *rec;
    json_array_foreach (story, i, rec) {
        if (!strcmp (s_kind (rec), "plan.end")) end_at = (int) i;
        if (!strcmp (s_kind (rec), "plan.interrupted")) interrupted_at = (int) i;
    }
    json_decref (story);
    assert_true (end_at >= 0 && interrupted_at > end_at);
    assert_true (e2e_wait_healthy (s_dir, true, 30000));      /* the gateway hears "connected" with a heartbeat */
    assert_int_equal (s_scene_count ("txnc"), 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_executor_killed_mid_plan),
        cmocka_unit_test (test_executor_sigterm_mid_plan),
    };
    const struct CMUnitTest cut[] = {
        cmocka_unit_test (test_link_cut_mid_plan),
    };
    int failed = cmocka_run_group_tests (tests, s_setup, s_teardown);
    return failed + cmocka_run_group_tests (cut, s_setup_cut, s_teardown_cut);
}
