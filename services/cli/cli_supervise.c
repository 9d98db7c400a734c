/* cli_supervise — the supervisor `blendmq up` leaves behind.
 *
 * It is the parent of every process of the stack (the headless Blenders,
 * audit, planner, executors, gateway, validators), so it sees each exit at
 * once (waitpid) and starts the process again after a back-off: base delay
 * doubled per consecutive failure, capped; a process that ran long enough
 * starts again from the base (supervisor.* in the config). A stopped
 * (SIGSTOP) process is no exit and is left alone. A restarted Blender gets
 * the port it chose the first time, so its executor reconnects by itself.
 *
 * `up` starts it with bmq_cli_supervisor_start (cli_supervisor_launch.c): a
 * fresh process. It spawns everything, then reports on fd 3: "ok", or
 * "error: WHY" and exits. It keeps RUN/supervisor.json (0600, replaced
 * atomically: cli_supervisor_status.c) for `blendmq status`, audits each
 * restart (kind service.restart) with its own key `supervisor`, and writes
 * its log to RUN/logs/supervisor.log. SIGTERM (`blendmq down`) stops it: children get
 * SIGTERM, then SIGKILL after 10 s; nothing is restarted meanwhile.
 *
 * The headless Blenders (issues 23, 24) serve their link on a unix socket in
 * their state folder (blender.socket, RUN/blender-state/NAME/link.sock) and,
 * with blender.confine (the default), run under bubblewrap with the script
 * sandbox's seccomp filter and rlimits (blender_confine.h), through
 * `blendmq blender-run` (cli_blender_run.c): no network, only their state
 * folder writable. A Blender whose executor has said for longer
 * than blender.hang_kill_ms that it is busy (the file blender.busy_file: a
 * call neither answered nor progressing) is killed and started again; it
 * comes back with its last committed scene (its state folder). Before it
 * starts anything the supervisor clears every BLENDMQ_SECTION_KEY variable
 * (cli_overrides.c): each process reads exactly the files `up` wrote. */
#include "audit_client.h"
#include "service_registry.h"
#include "bus.h"
#include "cli.h"
#include "cli_supervisor.h"
#include "log.h"
#include "service.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define STOP_TIMEOUT_MS    10000      /* SIGTERM, then SIGKILL */
#define TICK_MS            100        /* an exit is noticed within this */

/* ---- children ----------------------------------------------------------------- */

static void s_child_free (supervisor_child_t *c)
{
    for (int i = 0; i < MAX_ARGS && c->argv[i]; i++) free (c->argv[i]);
    memset (c, 0, sizeof *c);
}

/* A child named `name` running `words` (NULL-terminated). Services (blendmq-*)
 * run under BLENDMQ_WRAPPER when it is set (e.g. "valgrind --leak-check=full");
 * Blender never is. NULL when the table is full. */
static supervisor_child_t *s_child_add (supervisor_t *sup, const char *name, const char *const words[])
{
    if (sup->count >= MAX_CHILDREN) { bmq_error ("more than %d processes to supervise: %s left out", MAX_CHILDREN, name); return NULL; }
    supervisor_child_t *c = &sup->children[sup->count++];
    memset (c, 0, sizeof *c);
    snprintf (c->name, sizeof c->name, "%s", name);
    int n = 0;
    const char *wrapper = getenv ("BLENDMQ_WRAPPER");
    if (wrapper && *wrapper && strstr (words[0], "blendmq-")) {
        char *copy = strdup (wrapper), *save = NULL;
        for (char *w = strtok_r (copy, " ", &save); w && n < 32; w = strtok_r (NULL, " ", &save)) c->argv[n++] = strdup (w);
        free (copy);
    }
    for (int i = 0; words[i] && n < MAX_ARGS - 1; i++) {
        /* Blender's port: a buffer of its own, rewritten with the chosen port */
        bool port = i > 0 && !strcmp (words[i - 1], "--port");
        c->argv[n] = port ? calloc (1, 16) : strdup (words[i]);
        if (port) { snprintf (c->argv[n], 16, "%s", words[i]); c->port_arg = c->argv[n]; }
        n++;
    }
    c->argv[n] = NULL;
    return c;
}

static supervisor_child_t *s_child_by_pid (supervisor_t *sup, pid_t pid)
{
    for (size_t i = 0; i < sup->count; i++)
        if (sup->children[i].pid == pid) return &sup->children[i];
    return NULL;
}

/* In the forked child: its own session, output appended to its log, no
 * descriptor of ours, default signal handling; then exec. Only
 * async-signal-safe calls here (the supervisor has threads). */
static void s_exec_child (const char *log, char *const argv[]) __attribute__ ((noreturn));
static void s_exec_child (const char *log, char *const argv[])
{
    setsid ();
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    signal (SIGPIPE, SIG_DFL);              /* an ignored signal stays ignored across exec */
    int in = open ("/dev/null", O_RDONLY);
    int out = open (log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
    if (in >= 0) dup2 (in, 0);
    if (out >= 0) { dup2 (out, 1); dup2 (out, 2); }
    close_range (3, ~0U, 0);
    execvp (argv[0], argv);
    static const char head[] = "blendmq supervisor: cannot exec ";
    static const char tail[] = " (missing or not executable: rebuild, or check BLENDMQ_BLENDER and BLENDMQ_WRAPPER)\n";
    if (write (2, head, sizeof head - 1) < 0 || write (2, argv[0], strlen (argv[0])) < 0 || write (2, tail, sizeof tail - 1) < 0) _exit (127);
    _exit (127);
}

/* Start (or start again) child `c`: RUN/logs/NAME.log appended to,
 * RUN/pids/NAME.pid rewritten. 0 / -1 (logged). */
static int s_spawn (supervisor_t *sup, supervisor_child_t *c)
{
    char log[1200], pidfile[1200], err[600];
    snprintf (log, sizeof log, "%s/logs/%s.log", sup->opts->run_dir, c->name);
    snprintf (pidfile, sizeof pidfile, "%s/pids/%s.pid", sup->opts->run_dir, c->name);
    pid_t pid = fork ();
    if (pid == 0) s_exec_child (log, c->argv);
    if (pid < 0) { bmq_error ("cannot fork for %s: %s", c->name, strerror (errno)); return -1; }
    c->pid = pid;
    c->state = SUPERVISOR_RUNNING;
    c->started_mono = bmq_mono_ms ();
    c->started_at = bmq_now_ms ();
    char text[32];
    int len = snprintf (text, sizeof text, "%d\n", (int) pid);
    if (bmq_secret_file_write (pidfile, text, (size_t) len, true, err, sizeof err))
        bmq_error ("%s: `blendmq down` will not find %s without it", err, c->name);
    return 0;
}

/* "exited with code 1", "killed by signal 9 (SIGKILL)" */
static void s_exit_reason (int status, char *buf, size_t len)
{
    if (WIFEXITED (status)) snprintf (buf, len, "exited with code %d", WEXITSTATUS (status));
    else if (WIFSIGNALED (status)) {
        const char *abbrev = sigabbrev_np (WTERMSIG (status));
        snprintf (buf, len, "killed by signal %d (SIG%s)%s", WTERMSIG (status), abbrev ? abbrev : "?",
                  WCOREDUMP (status) ? ", core dumped" : "");
    }
    else snprintf (buf, len, "ended with wait status %d", status);
}


/* ---- restarts -------------------------------------------------------------------- */

/* base × 2^failures, at most max */
static int64_t s_backoff (const supervisor_t *sup, int failures)
{
    int64_t ms = sup->base_ms;
    for (int i = 0; i < failures && ms < sup->max_ms; i++) ms *= 2;
    return ms < sup->max_ms ? ms : sup->max_ms;
}

/* Child `c` ended with `status`: note why, and schedule its next start. */
static void s_on_exit (supervisor_t *sup, supervisor_child_t *c, int status)
{
    int64_t now = bmq_mono_ms ();
    s_exit_reason (status, c->last_exit, sizeof c->last_exit);
    c->last_exit_at = bmq_now_ms ();
    c->uptime_ms = now - c->started_mono;
    c->old_pid = c->pid;
    c->pid = 0;
    if (c->uptime_ms >= sup->stable_ms) c->failures = 0;     /* it had settled: this is a new incident */
    c->backoff_ms = s_backoff (sup, c->failures);
    c->failures++;
    if (WIFEXITED (status) && WEXITSTATUS (status) == BMQ_EXIT_CONFIG) {   /* the same file fails the same way: no loop */
        c->state = SUPERVISOR_STOPPED;
        bmq_error ("%s (pid %d) cannot start: its configuration is not valid (logs/%s.log says why); not started again",
                   c->name, (int) c->old_pid, c->name);
        return;
    }
    c->state = SUPERVISOR_RESTARTING;
    c->restart_at = now + c->backoff_ms;
    bmq_warn ("%s (pid %d) %s after %lld ms: starting it again in %lld ms", c->name, (int) c->old_pid, c->last_exit,
              (long long) c->uptime_ms, (long long) c->backoff_ms);
}

static void s_restart (supervisor_t *sup, supervisor_child_t *c)
{
    if (s_spawn (sup, c)) {          /* no fork: try again later, backing off further */
        c->backoff_ms = s_backoff (sup, c->failures++);
        c->restart_at = bmq_mono_ms () + c->backoff_ms;
        return;
    }
    c->restarts++;
    bmq_info ("%s started again as pid %d (restart %d)", c->name, (int) c->pid, c->restarts);
    bmq_audit_record (sup->audit, NULL, "service.restart",
                      json_pack ("{s:s, s:i, s:i, s:s, s:i, s:I, s:I}", "service", c->name, "pid", (int) c->pid,
                                 "old_pid", (int) c->old_pid, "exit", c->last_exit, "restarts", c->restarts,
                                 "backoff_ms", (json_int_t) c->backoff_ms, "uptime_ms", (json_int_t) c->uptime_ms));
}

/* Collect every child that ended. waitpid without WUNTRACED: a stopped
 * child is not reported, so it is left alone. true when one ended. */
static bool s_reap (supervisor_t *sup)
{
    bool any = false;
    int status;
    pid_t pid;
    while ((pid = waitpid (-1, &status, WNOHANG)) > 0) {
        supervisor_child_t *c = s_child_by_pid (sup, pid);
        if (!c) continue;
        any = true;
        if (strcmp (sup->state, "stopping")) s_on_exit (sup, c, status);
        else {                       /* stopping: nothing is restarted */
            s_exit_reason (status, c->last_exit, sizeof c->last_exit);
            c->last_exit_at = bmq_now_ms ();
            c->old_pid = c->pid;
            c->pid = 0;
            c->state = SUPERVISOR_STOPPED;
        }
    }
    return any;
}

/* How long the loop may sleep: until the next restart is due, at most a tick. */
static int s_wait_ms (const supervisor_t *sup)
{
    int64_t now = bmq_mono_ms (), wait = TICK_MS;
    for (size_t i = 0; i < sup->count; i++)
        if (sup->children[i].state == SUPERVISOR_RESTARTING && sup->children[i].restart_at - now < wait)
            wait = sup->children[i].restart_at - now;
    return wait < 0 ? 0 : (int) wait;
}

/* A Blender its executor has said is busy for longer than hang_kill_ms (the
 * busy file holds the wall-clock ms since when): killed; s_reap then starts it
 * again like any exit. The file is the executor's (the Blender cannot write
 * the run dir); a malformed one is ignored. */
static void s_watch_hangs (supervisor_t *sup)
{
    if (sup->hang_kill_ms <= 0) return;
    for (size_t i = 0; i < sup->count; i++) {
        supervisor_child_t *c = &sup->children[i];
        if (!*c->busy_file || !c->pid || c->state != SUPERVISOR_RUNNING) continue;
        FILE *f = fopen (c->busy_file, "r");
        if (!f) continue;
        long long since = 0;
        if (fscanf (f, "%lld", &since) != 1) since = 0;
        fclose (f);
        int64_t busy = since > 0 ? bmq_now_ms () - since : 0;
        if (busy <= sup->hang_kill_ms || c->started_at > since) continue;   /* a busy file from before this start is stale */
        c->hang_kills++;
        bmq_warn ("%s (pid %d) has been busy for %lld ms, more than blender.hang_kill_ms %lld: killed, it starts again "
                  "with its last committed scene", c->name, (int) c->pid, (long long) busy, (long long) sup->hang_kill_ms);
        bmq_audit_record (sup->audit, NULL, "service.hang_kill",
                          json_pack ("{s:s, s:i, s:I, s:I}", "service", c->name, "pid", (int) c->pid,
                                     "busy_ms", (json_int_t) busy, "hang_kill_ms", (json_int_t) sup->hang_kill_ms));
        kill (c->pid, SIGKILL);
        remove (c->busy_file);
    }
}

/* Until SIGTERM: restart what ends, serve the audit client. */
static void s_run (supervisor_t *sup)
{
    zpoller_t *poller = zpoller_new (bmq_audit_sock (sup->audit), NULL);
    while (!zsys_interrupted) {
        zsock_t *which = zpoller_wait (poller, s_wait_ms (sup));
        if (which) {
            bmq_envelope_t *env = bmq_bus_recv (which, NULL);
            if (env) bmq_audit_handle (sup->audit, env);       /* acks and heartbeats */
            bmq_envelope_destroy (&env);
        }
        bmq_audit_tick (sup->audit);
        s_watch_hangs (sup);
        bool changed = s_reap (sup);
        int64_t now = bmq_mono_ms ();
        for (size_t i = 0; i < sup->count && !zsys_interrupted; i++) {
            supervisor_child_t *c = &sup->children[i];
            if (c->state == SUPERVISOR_RESTARTING && c->restart_at <= now) { s_restart (sup, c); changed = true; }
        }
        if (changed) supervisor_write_status (sup);
    }
    zpoller_destroy (&poller);
}

/* SIGTERM to every child (SIGCONT too, so a stopped one can act on it); after
 * STOP_TIMEOUT_MS, SIGKILL to what is left. */
static void s_stop_children (supervisor_t *sup)
{
    sup->state = "stopping";
    for (size_t i = 0; i < sup->count; i++) {
        supervisor_child_t *c = &sup->children[i];
        if (c->state == SUPERVISOR_RESTARTING) c->state = SUPERVISOR_STOPPED;
        if (!c->pid) continue;
        kill (c->pid, SIGTERM);
        kill (c->pid, SIGCONT);
    }
    supervisor_write_status (sup);
    int64_t deadline = bmq_mono_ms () + STOP_TIMEOUT_MS;
    for (;;) {
        s_reap (sup);
        size_t left = 0;
        for (size_t i = 0; i < sup->count; i++) left += sup->children[i].pid != 0;
        if (!left || bmq_mono_ms () >= deadline) break;
        zclock_sleep (50);
    }
    for (size_t i = 0; i < sup->count; i++) {
        supervisor_child_t *c = &sup->children[i];
        if (!c->pid) continue;
        bmq_warn ("%s (pid %d) did not stop within %d s: killed", c->name, (int) c->pid, STOP_TIMEOUT_MS / 1000);
        kill (c->pid, SIGKILL);
        int status;
        if (waitpid (c->pid, &status, 0) == c->pid) s_exit_reason (status, c->last_exit, sizeof c->last_exit);
        c->old_pid = c->pid;
        c->pid = 0;
        c->state = SUPERVISOR_STOPPED;
    }
}

/* ---- start-up ---------------------------------------------------------------------- */

/* Start Blender child `c` and wait until the add-on listens on its socket.
 * 0 / -1 with err. */
static int s_blender_first_start (supervisor_t *sup, supervisor_child_t *c, char *err, size_t errlen)
{
    if (s_spawn (sup, c)) { snprintf (err, errlen, "cannot start %s (see %s/logs/supervisor.log)", c->name, sup->opts->run_dir); return -1; }
    int64_t deadline = bmq_mono_ms () + SUPERVISOR_BLENDER_TIMEOUT_MS;
    while (bmq_mono_ms () < deadline && !zsys_interrupted) {
        struct stat st;
        if (lstat (c->socket, &st) == 0 && S_ISSOCK (st.st_mode) && st.st_mtime >= c->started_at / 1000 - 1)
            return 0;
        s_reap (sup);
        if (!c->pid) {
            snprintf (err, errlen, "%s did not start: it %s (see %s/logs/%s.log)", c->name, c->last_exit, sup->opts->run_dir, c->name);
            return -1;
        }
        zclock_sleep (50);
    }
    if (zsys_interrupted) snprintf (err, errlen, "stopped while %s was starting", c->name);
    else snprintf (err, errlen, "%s did not listen on %s within %d s (see %s/logs/%s.log)", c->name, c->socket, SUPERVISOR_BLENDER_TIMEOUT_MS / 1000,
                   sup->opts->run_dir, c->name);
    return -1;
}

/* Child `c` runs `words` (NULL-terminated) as Blender: confined, through
 * `blendmq blender-run` (cli_blender_run.c: bwrap, seccomp, rlimits, signals
 * passed on), when asked; else as is. 0 / -1 with err (confinement checked
 * here first, so that `up` says why it cannot be had). */
static int s_blender_argv (supervisor_t *sup, supervisor_child_t *c, const bmq_config_t *ecfg, const char *state_dir,
                           const char *const words[], char *err, size_t errlen)
{
    int n = 0;
    if (c->confined) {
        bmq_blender_confine_t check = { .blender = words[0], .token_file = bmq_config_str (ecfg, "blender.token_file"),
                                        .state_dir = state_dir, .seccomp_fd = 3 };
        bmq_blender_confine_defaults (&check);
        char *probe[BMQ_CONFINE_MAX_ARGS] = { 0 };
        int rc = bmq_blender_confine_argv (&check, words + 1, probe, err, errlen);
        bmq_blender_confine_free (probe);
        if (rc) return -1;
        char exe[1100];
        snprintf (exe, sizeof exe, "%s/blendmq", sup->bindir);
        const char *head[] = { exe, "blender-run", "--token-file", check.token_file, "--state-dir", state_dir,
                               "--blender", words[0], "--", NULL };
        for (int i = 0; head[i]; i++) c->argv[n++] = strdup (head[i]);
        words++;            /* the binary went to --blender */
    }
    for (int i = 0; words[i] && n < MAX_ARGS - 1; i++) c->argv[n++] = strdup (words[i]);
    c->argv[n] = NULL;
    return 0;
}

/* The Blenders (unless --no-blender): blender, blender-2 ... each on the socket
 * `up` set in blendmq.yaml or executor-K.yaml (blender.socket), in its state
 * folder. */
static int s_start_blenders (supervisor_t *sup, char *err, size_t errlen)
{
    const char *run = sup->opts->run_dir;
    char addon[1200], cfgpath[1200], name[32], state_dir[1300];
    snprintf (addon, sizeof addon, "%s/services/executor/addon/blendmq_addon.py", bmq_data_dir ());
    const char *blender = getenv ("BLENDMQ_BLENDER") && *getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender";
    for (int k = 1; !sup->opts->no_blender && k <= sup->opts->blenders; k++) {
        if (k == 1) snprintf (name, sizeof name, "blender");
        else snprintf (name, sizeof name, "blender-%d", k);
        if (k == 1) snprintf (cfgpath, sizeof cfgpath, "%s/blendmq.yaml", run);
        else snprintf (cfgpath, sizeof cfgpath, "%s/executor-%d.yaml", run, k);
        bmq_config_t *ecfg = bmq_config_load (cfgpath, err, errlen);
        if (!ecfg) return -1;
        const char *sock = bmq_config_str (ecfg, "blender.socket");
        snprintf (state_dir, sizeof state_dir, "%s/blender-state/%s", run, name);
        const char *const argv[] = { blender, "-b", "--factory-startup", "--python", addon, "--", "--socket", sock,
                                     "--token-file", bmq_config_str (ecfg, "blender.token_file"), "--reset-scene",
                                     "--state-dir", state_dir, NULL };      /* durable commits (issue 23) */
        supervisor_child_t *c = sup->count < MAX_CHILDREN ? &sup->children[sup->count] : NULL;
        int rc = -1;
        if (!c) snprintf (err, errlen, "too many processes");
        else if (!*sock) snprintf (err, errlen, "%s has no blender.socket (`blendmq up` sets it)", cfgpath);
        else {
            memset (c, 0, sizeof *c);
            snprintf (c->name, sizeof c->name, "%s", name);
            snprintf (c->socket, sizeof c->socket, "%s", sock);
            snprintf (c->busy_file, sizeof c->busy_file, "%s", bmq_config_str (ecfg, "blender.busy_file"));
            c->confined = bmq_config_bool (ecfg, "blender.confine");
            rc = s_blender_argv (sup, c, ecfg, state_dir, argv, err, errlen);
            if (!rc) sup->count++;
        }
        if (!rc) { remove (c->busy_file); remove (sock); }
        if (!rc) rc = s_blender_first_start (sup, c, err, errlen);
        if (!rc) bmq_info ("%s (pid %d) listens on %s%s", name, (int) c->pid, sock, c->confined ? " (confined: bwrap, seccomp, rlimits)"
                                                                                                : " (NOT confined: blender.confine is false)");
        bmq_config_destroy (&ecfg);
        if (rc) return -1;
    }
    return 0;
}

static int s_start_service (supervisor_t *sup, const char *name, const char *binary, const char *cfgpath, char *err, size_t errlen)
{
    char bin[1200];
    snprintf (bin, sizeof bin, "%s/blendmq-%s", sup->bindir, binary);
    const char *const argv[] = { bin, "--config", cfgpath, NULL };
    supervisor_child_t *c = s_child_add (sup, name, argv);
    if (c && !s_spawn (sup, c)) return 0;
    snprintf (err, errlen, "cannot start %s (see %s/logs/supervisor.log)", name, sup->opts->run_dir);
    return -1;
}

/* The services of the registry (service_registry.def), in its order: each ONE and
 * the first of each PER_BLENDER (audit, planner, executor, gateway), then the
 * PER_BLENDER ones of more Blenders (executor-K.yaml), then the POOLs (validator-N). */
static int s_start_services (supervisor_t *sup, char *err, size_t errlen)
{
    const bmq_cli_opts_t *opts = sup->opts;
    char cfgpath[1200], path[1200], name[32];
    snprintf (cfgpath, sizeof cfgpath, "%s/blendmq.yaml", opts->run_dir);
    size_t n;
    const bmq_service_t *svc = bmq_services (&n);
    for (size_t i = 0; i < n; i++)
        if ((svc[i].instances == BMQ_SVC_ONE || svc[i].instances == BMQ_SVC_PER_BLENDER)
            && s_start_service (sup, svc[i].name, svc[i].name, cfgpath, err, errlen)) return -1;
    for (size_t i = 0; i < n; i++)
        for (int k = 2; svc[i].instances == BMQ_SVC_PER_BLENDER && !opts->no_blender && k <= opts->blenders; k++) {
            snprintf (name, sizeof name, "%s-%d", svc[i].name, k);
            snprintf (path, sizeof path, "%s/%s-%d.yaml", opts->run_dir, svc[i].name, k);
            if (s_start_service (sup, name, svc[i].name, path, err, errlen)) return -1;
        }
    for (size_t i = 0; i < n; i++)
        for (int k = 1; svc[i].instances == BMQ_SVC_POOL && k <= opts->validators; k++) {
            snprintf (name, sizeof name, "%s-%d", svc[i].name, k);
            if (s_start_service (sup, name, svc[i].name, cfgpath, err, errlen)) return -1;
        }
    return 0;
}

/* The supervisor's own settings and identity on the bus. 0 / -1 with err. */
static int s_setup (supervisor_t *sup, bmq_config_t **cfg_out, char *err, size_t errlen)
{
    char cfgpath[1200];
    snprintf (cfgpath, sizeof cfgpath, "%s/blendmq.yaml", sup->opts->run_dir);
    bmq_config_t *cfg = bmq_config_load (cfgpath, err, errlen);
    if (!cfg) return -1;
    sup->base_ms = bmq_config_int (cfg, "supervisor.restart_base_ms");
    sup->max_ms = bmq_config_int (cfg, "supervisor.restart_max_ms");
    sup->stable_ms = bmq_config_int (cfg, "supervisor.stable_after_ms");
    sup->hang_kill_ms = bmq_config_int (cfg, "blender.hang_kill_ms");
    if (sup->base_ms < 1) { bmq_warn ("supervisor.restart_base_ms %lld is below 1: using 1", (long long) sup->base_ms); sup->base_ms = 1; }
    if (sup->max_ms < sup->base_ms) {
        bmq_warn ("supervisor.restart_max_ms %lld is below restart_base_ms: using %lld", (long long) sup->max_ms, (long long) sup->base_ms);
        sup->max_ms = sup->base_ms;
    }
    /* service.restart records go out under the key `supervisor` (roles.def) */
    if (bmq_bus_security_init (cfg, "supervisor", err, errlen)) {
        size_t used = strlen (err);
        snprintf (err + used, errlen - used, " (`blendmq up` makes the supervisor key; or blendmq keys init --keys-dir DIR)");
        bmq_config_destroy (&cfg);
        return -1;
    }
    sup->audit = bmq_audit_new_from_config (cfg);
    if (!sup->audit) { snprintf (err, errlen, "cannot connect to audit.endpoint %s", bmq_config_str (cfg, "audit.endpoint")); bmq_config_destroy (&cfg); return -1; }
    *cfg_out = cfg;
    return 0;
}

static void s_report (int fd, const char *text)
{
    if (fd < 0) return;
    if (write (fd, text, strlen (text)) < 0 || write (fd, "\n", 1) < 0)
        bmq_warn ("cannot tell `up` '%s': %s", text, strerror (errno));
}

/* The ready pipe from `up`, when there is one (fd 3, a pipe). */
static int s_ready_fd (void)
{
    struct stat st;
    if (fstat (SUPERVISOR_READY_FD, &st) || !S_ISFIFO (st.st_mode)) return -1;
    fcntl (SUPERVISOR_READY_FD, F_SETFD, FD_CLOEXEC);
    return SUPERVISOR_READY_FD;
}

static void s_pidfile (const supervisor_t *sup, bool create)
{
    char path[1200], text[32], err[1400];
    snprintf (path, sizeof path, "%s/pids/supervisor.pid", sup->opts->run_dir);
    if (!create) { remove (path); return; }
    int len = snprintf (text, sizeof text, "%d\n", (int) getpid ());
    if (bmq_secret_file_write (path, text, (size_t) len, true, err, sizeof err)) bmq_error ("%s", err);
}

int bmq_cli_supervise (const bmq_cli_opts_t *opts)
{
    bmq_log_init ("supervisor", false, BMQ_LOG_INFO);
    bmq_envelope_set_sender ("supervisor");       /* the records' origin must match the key */
    int cleared = bmq_cli_overrides_clear ();     /* every process reads the files `up` wrote, nothing else */
    if (cleared) bmq_info ("%d BLENDMQ_* override variable(s) cleared: `up` wrote their effect into the config files", cleared);
    signal (SIGPIPE, SIG_IGN);                     /* `up` may be gone when we report */
    supervisor_t *sup = calloc (1, sizeof *sup);
    if (!sup) return 1;
    sup->opts = opts;
    sup->state = "starting";
    sup->started_at = bmq_now_ms ();
    char exe[1024], err[1400] = "";
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    snprintf (sup->bindir, sizeof sup->bindir, "%s", n > 0 ? dirname (exe) : ".");
    int ready = s_ready_fd ();
    s_pidfile (sup, true);
    bmq_config_t *cfg = NULL;
    int rc = s_setup (sup, &cfg, err, sizeof err);
    /* blender.path (BLENDMQ_BLENDER_PATH) names the Blender to start, else BLENDMQ_BLENDER, else
     * `blender`; exported, so that the executors' sandboxes run that same Blender; no Mesa
     * shader cache in its HOME (issue 30) */
    if (!rc && *bmq_config_str (cfg, "blender.path")) setenv ("BLENDMQ_BLENDER", bmq_config_str (cfg, "blender.path"), 1);
    setenv ("MESA_SHADER_CACHE_DISABLE", "true", 0);
    setenv ("MESA_GLSL_CACHE_DISABLE", "true", 0);
    if (!rc) rc = s_start_blenders (sup, err, sizeof err);
    if (!rc) rc = s_start_services (sup, err, sizeof err);
    if (!rc && zsys_interrupted) { rc = -1; snprintf (err, sizeof err, "stopped while starting the stack"); }
    if (rc) {
        bmq_error ("%s", err);
        char line[1500];
        snprintf (line, sizeof line, "error: %s", err);
        s_report (ready, line);
    }
    else {
        sup->state = "running";
        supervisor_write_status (sup);
        bmq_info ("supervising %zu processes in %s (restart back-off %lld..%lld ms, stable after %lld ms)", sup->count,
                  opts->run_dir, (long long) sup->base_ms, (long long) sup->max_ms, (long long) sup->stable_ms);
        s_report (ready, "ok");
    }
    if (ready >= 0) close (ready);
    if (!rc) {
        s_run (sup);
        bmq_info ("stopping: SIGTERM to %zu processes", sup->count);
        bmq_audit_flush (sup->audit, 1000);        /* while the audit service still runs */
    }
    s_stop_children (sup);
    sup->state = "stopped";
    supervisor_write_status (sup);
    bmq_audit_destroy (&sup->audit);              /* what is unacknowledged stays in the spool */
    bmq_config_destroy (&cfg);
    s_pidfile (sup, false);
    for (size_t i = 0; i < sup->count; i++) s_child_free (&sup->children[i]);
    free (sup);
    return rc ? 1 : 0;
}

