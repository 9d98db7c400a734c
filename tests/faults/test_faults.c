/* The fault-injection suite (issue 17): a private stack (`blendmq up --ipc
 * --validators 2`, heartbeat defaults, the planner on a slow fake LLM) under
 * load (3 plan loops, a chat in the planner, 50 SUB watchers, 2 `blendmq
 * watch`, an SSE client) takes one fault at a time: kill -9, then SIGSTOP for
 * 10 s, of the gateway, planner, executor, audit, a validator and Blender; and
 * a full disk under the audit. After each: every client answered within its
 * bound (faults_check.h says which and why), no audit record lost, the scene
 * whole or rolled back, the stack healthy again within 20 s with no manual
 * step, the watchers fed. It prints the fault table and writes it as JSON to
 * faults.json in the working dir.
 *
 * BMQ_FAULTS="kill:planner,stop:blender,disk:audit" runs only those faults.
 * Needs Blender (exit 77, skipped, without it). As root the audit database
 * lives on a tmpfs of its own; otherwise audit.max_size_mb stands in for the
 * full disk. A failing run keeps its run dir (logs, client outputs). */
#include "bus.h"
#include "config.h"
#include "e2e_util.h"
#include "faults_check.h"
#include "faults_load.h"
#include "faults_stack.h"
#include "faults_watch.h"
#include "slow_llm.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define VALIDATORS     2
#define PLAN_LOOPS     3
#define SUBS           50
#define WATCHES        2
#define LLM_DELAY_MS   3000
#define STOP_MS        10000
#define DISK_MS        8000
#define WARMUP_MS      1000
#define POST_HEAL_MS   2000
#define TMPFS_MB       96
#define CAP_MB         64
#define AUDIT_WAIT_MS  20000
#define MAX_FAULTS     16
#define BASELINE_MS    15000

static const char *s_names[] = { "gateway", "planner", "executor", "audit", "validator-1", "validator-2", "blender" };
#define NNAMES (sizeof s_names / sizeof *s_names)

typedef struct {
    char           run_dir[256], work_dir[300], auditfs[300], db[400];
    char           gateway[1100], events[1100], http[128];
    const char    *blendmq;
    int            interval, liveness, cap_mb;
    int64_t        usual[3];    /* fc_usual_baseline of the load with no fault */
    bool           mounted;
    fl_load_t     *load;
    fw_watchers_t *watch;
    slow_llm_t    *llm;
} s_suite_t;

static int s_free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind (fd, (struct sockaddr *) &a, sizeof a) == 0 && getsockname (fd, (struct sockaddr *) &a, &len) == 0)
        port = ntohs (a.sin_port);
    if (fd >= 0) close (fd);
    return port;
}

/* NAME's pid from the run dir's pid file, only if that process is one of this stack's. */
static int s_pid (const s_suite_t *s, const char *name)
{
    int pid = e2e_pid (s->run_dir, name);
    if (pid <= 1) return -1;
    char path[64], cmd[4096] = "";
    snprintf (path, sizeof path, "/proc/%d/cmdline", pid);
    FILE *f = fopen (path, "r");
    size_t n = f ? fread (cmd, 1, sizeof cmd - 1, f) : 0;
    if (f) fclose (f);
    for (size_t i = 0; i < n; i++) if (!cmd[i]) cmd[i] = ' ';
    cmd[n] = 0;
    return strstr (cmd, s->run_dir) ? pid : -1;
}

static int s_blendmq (const s_suite_t *s, const char *args, const char *log)
{
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' %s >>'%s/%s' 2>&1", s->blendmq, s->run_dir, args, s->work_dir, log);
    int rc = system (cmd);
    return WIFEXITED (rc) ? WEXITSTATUS (rc) : -1;
}

static int s_up (s_suite_t *s)
{
    if (s_blendmq (s, "up --ipc --validators 2", "up.log")) return -1;
    char path[400], err[256];
    snprintf (path, sizeof path, "%s/blendmq.yaml", s->run_dir);
    bmq_config_t *cfg = bmq_config_load (path, err, sizeof err);
    if (!cfg) { fprintf (stderr, "faults: %s\n", err); return -1; }
    snprintf (s->gateway, sizeof s->gateway, "%s", bmq_config_str (cfg, "gateway.endpoint"));
    snprintf (s->events, sizeof s->events, "%s", bmq_config_str (cfg, "gateway.events"));
    snprintf (s->db, sizeof s->db, "%s", bmq_config_str (cfg, "audit.database"));
    s->interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms");
    s->liveness = (int) bmq_config_int (cfg, "heartbeat.liveness");
    int rc = bmq_bus_security_init (cfg, "cli", err, sizeof err);
    if (rc) fprintf (stderr, "faults: %s\n", err);
    bmq_config_destroy (&cfg);
    return rc;
}

/* ---- one fault ---------------------------------------------------------------------- */

/* A one-off client, started by its own thread after a delay. */
typedef struct {
    fl_load_t *load;
    fl_kind_t  kind;
    int        delay_ms;
    pthread_t  thread;
} s_probe_t;

static void *s_probe_main (void *arg)
{
    s_probe_t *p = arg;
    usleep ((useconds_t) p->delay_ms * 1000);
    fl_load_probe (p->load, p->kind);
    return NULL;
}

static void s_probe_start (s_probe_t *p, fl_load_t *load, fl_kind_t kind, int delay_ms)
{
    *p = (s_probe_t) { .load = load, .kind = kind, .delay_ms = delay_ms };
    pthread_create (&p->thread, NULL, s_probe_main, p);
}

static const char *s_instance (const json_t *status, const char *name)
{
    size_t i;
    json_t *svc;
    json_array_foreach (json_object_get (status, "services"), i, svc) {
        const char *n = json_string_value (json_object_get (svc, "name"));
        if (n && !strcmp (n, name)) return json_string_value (json_object_get (svc, "instance"));
    }
    return NULL;
}

/* Is validator pid in the broker's pool (status: services[validator].pool[].pid)? */
static bool s_in_pool (const json_t *status, int pid)
{
    size_t i, k;
    json_t *svc, *w;
    json_array_foreach (json_object_get (status, "services"), i, svc)
        json_array_foreach (json_object_get (svc, "pool"), k, w)
            if (json_integer_value (json_object_get (w, "pid")) == pid) return true;
    return false;
}

/* After a kill: is a new process in the dead one's place, as the status
 * says? (Heartbeat states lag by up to an interval: a fresh instance id, a
 * new pid in the validator pool, rather than "alive".) */
static bool s_replaced (s_suite_t *s, const json_t *st, const char *target, int old_pid, const char *old_instance,
                        char *why, size_t len)
{
    int pid = s_pid (s, target);
    const char *inst = s_instance (st, target);
    if (pid <= 0 || pid == old_pid) { snprintf (why, len, "pids/%s.pid still names the killed process", target); return false; }
    if (old_instance && inst && !strcmp (inst, old_instance)) { snprintf (why, len, "%s: the same instance answers", target); return false; }
    if (!strncmp (target, "validator", 9) && (!s_in_pool (st, pid) || s_in_pool (st, old_pid))) {
        snprintf (why, len, "the validator pool does not hold the new %s (pid %d) alone", target, pid);
        return false;
    }
    return true;
}

/* Healthy: status says so, a killed process is replaced, and the live scene
 * answers through gateway, executor and Blender (a restarted Blender is only
 * known to be back when it answers). */
static void s_wait_heal (s_suite_t *s, fc_row_t *row, int old_pid, const char *old_instance)
{
    bool killed = !strcmp (row->how, "kill");
    char why[300] = "", cmd[1200];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' --json scene info >/dev/null 2>&1", s->blendmq, s->run_dir);
    int64_t give_up = row->t_end + FC_HEAL_MS + 10000;
    while (fl_now_ms () < give_up) {
        json_t *st = fs_status (s->blendmq, s->run_dir);
        bool ok = fs_healthy (st, VALIDATORS, why, sizeof why)
               && (!killed || s_replaced (s, st, row->target, old_pid, old_instance, why, sizeof why));
        json_decref (st);
        if (ok && system (cmd) != 0) { ok = false; snprintf (why, sizeof why, "`blendmq scene info` fails"); }
        if (ok) {
            row->t_heal = fl_now_ms ();
            row->heal_ms = row->t_heal - row->t_end;
            if (row->heal_ms > FC_HEAL_MS) fc_fail (row, "healthy only %lld ms after the fault's end (bound %d ms)", (long long) row->heal_ms, FC_HEAL_MS);
            return;
        }
        usleep (250000);
    }
    fc_fail (row, "not healthy within %d s of the fault's end (%s)", (FC_HEAL_MS + 10000) / 1000, why);
}

/* No more progress events for a second: nothing is still running. */
static void s_quiesce (s_suite_t *s)
{
    fw_snapshot_t a, b;
    fw_snapshot (s->watch, &a);
    for (int64_t until = fl_now_ms () + 15000; fl_now_ms () < until;) {
        usleep (1000000);
        fw_snapshot (s->watch, &b);
        if (b.sub_events[0] == a.sub_events[0] && b.sse_events == a.sse_events) return;
        a = b;
    }
}

/* Lines of the audit's log that report a failed write. */
static int s_audit_write_errors (const s_suite_t *s)
{
    char cmd[600];
    int code;
    snprintf (cmd, sizeof cmd, "grep -c -i -E 'disk is full|write failed|SQLITE_FULL' '%s/logs/audit.log'", s->run_dir);
    char *out = e2e_run (cmd, &code);
    int n = atoi (out);
    free (out);
    return n;
}

static int s_disk_fault (s_suite_t *s, fc_row_t *row)
{
    int errors_before = s_audit_write_errors (s);
    char err[400];
    if (fs_disk_fill (s->auditfs, s->db, s->cap_mb, err, sizeof err)) { fc_fail (row, "full disk: %s", err); return -1; }
    long pending = 0;
    for (int64_t until = fl_now_ms () + DISK_MS; fl_now_ms () < until;) {
        json_t *st = fs_status (s->blendmq, s->run_dir);
        long p = (long) json_integer_value (json_object_get (st, "audit_pending"));
        if (p > pending) pending = p;
        json_decref (st);
        usleep (500000);
    }
    fc_note (row, "full disk (%s): the audit reported failed writes in %d log line(s); the gateway held up to %ld unacknowledged records",
             s->cap_mb ? "audit.max_size_mb" : "tmpfs", s_audit_write_errors (s) - errors_before, pending);
    if (fs_disk_free (s->auditfs, s->db, s->cap_mb, err, sizeof err)) { fc_fail (row, "freeing the disk: %s", err); return -1; }
    return 0;
}

/* Restarts during the fault: pid files that changed, or the supervisor's counters, whichever says more. */
static json_t *s_restarts (s_suite_t *s, const int *pids_before, const json_t *before, const json_t *after)
{
    json_t *out = json_object ();
    for (size_t i = 0; i < NNAMES; i++) {
        int pid = e2e_pid (s->run_dir, s_names[i]);
        int n = pid > 0 && pids_before[i] > 0 && pid != pids_before[i] ? 1 : 0;
        int a = fs_restarts (before, s_names[i]), b = fs_restarts (after, s_names[i]);
        if (a >= 0 && b - a > n) n = b - a;
        if (n) json_object_set_new (out, s_names[i], json_integer (n));
    }
    return out;
}

static void s_check_supervisor (s_suite_t *s, fc_row_t *row, const json_t *before, const json_t *after)
{
    json_t *entry = fs_supervised (after, row->target);
    if (!entry) { fc_fail (row, "status --json shows no supervisor entry for %s", row->target); return; }
    char *text = json_dumps (entry, JSON_COMPACT);
    fc_note (row, "supervisor: %s %s", row->target, text);
    free (text);
    int a = fs_restarts (before, row->target), b = fs_restarts (after, row->target);
    if (!strcmp (row->how, "kill") && !(b > a && a >= 0))
        fc_fail (row, "supervisor: %s restarts went from %d to %d across its kill", row->target, a, b);
    if (!json_object_get (entry, "last_exit") && !json_object_get (entry, "last_exit_reason"))
        fc_fail (row, "supervisor: no last exit reason for %s", row->target);
    if (!json_object_get (entry, "uptime_s") && !json_object_get (entry, "uptime_ms") && !json_object_get (entry, "uptime"))
        fc_fail (row, "supervisor: no uptime for %s", row->target);
}

/* Load in full swing: a chat waiting on the model, plans running. */
/* The same load as each fault's, with no fault: how long its clients usually take. */
static void s_baseline (s_suite_t *s)
{
    fl_load_start (s->load, "b", PLAN_LOOPS, true);
    usleep ((BASELINE_MS) * 1000);
    fl_load_stop (s->load);
    fl_run_t *runs;
    size_t n = fl_load_runs (s->load, &runs);
    fc_usual_baseline (s->usual, runs, n);
    free (runs);
    fprintf (stderr, "== the load with no fault: %zu clients; usual plan %lld ms, chat %lld ms, scene %lld ms\n", n,
             (long long) s->usual[FL_PLAN], (long long) s->usual[FL_CHAT], (long long) s->usual[FL_SCENE]);
    s_blendmq (s, "scene reset", "reset.log");
}

static void s_load_in_swing (s_suite_t *s, fc_row_t *row)
{
    int64_t started = fl_now_ms ();
    while (fl_now_ms () - started < 12000
           && (fl_now_ms () - started < WARMUP_MS || slow_llm_busy (s->llm) < 1 || fl_load_in_flight (s->load, FL_PLAN) < 1))
        usleep (20000);
    if (slow_llm_busy (s->llm) < 1) fc_note (row, "no chat was waiting on the model when the fault hit");
    if (fl_load_in_flight (s->load, FL_PLAN) < 1) fc_note (row, "no plan was running when the fault hit");
}

/* Keep the load on for POST_HEAL_MS after the heal, and until a plan started
 * after the heal ran to the end: the healed stack works. */
static void s_post_heal (s_suite_t *s, fc_row_t *row)
{
    int64_t healed = row->t_heal ? row->t_heal : fl_now_ms (), limit = POST_HEAL_MS + 8000;
    bool worked = false;
    while (fl_now_ms () < healed + limit && (!worked || fl_now_ms () < healed + POST_HEAL_MS)) {
        usleep (200000);
        fl_run_t *runs;
        size_t n = fl_load_runs (s->load, &runs);
        for (size_t i = 0; i < n; i++)
            if (runs[i].kind == FL_PLAN && runs[i].start_ms > healed && !strcmp (runs[i].outcome, "done")) worked = true;
        free (runs);
    }
    if (!worked) fc_fail (row, "no plan started after the heal ran to the end within %lld s", (long long) limit / 1000);
}

static fc_row_t *s_run_fault (s_suite_t *s, const char *how, const char *target, int index)
{
    fc_row_t *row = fc_row_new (how, target);
    fprintf (stderr, "== fault %d: %s\n", index, row->name);
    bool stop = !strcmp (how, "stop"), disk = !strcmp (how, "disk");
    int64_t two = 2 * (int64_t) s->interval;
    row->bound_ms = stop ? STOP_MS + two + FC_SLACK_MS : (int64_t) s->liveness * s->interval + two + FC_SLACK_MS;
    int64_t mark = fs_audit_max_id (s->db);
    int pids_before[NNAMES];
    for (size_t i = 0; i < NNAMES; i++) pids_before[i] = e2e_pid (s->run_dir, s_names[i]);
    json_t *st_before = fs_status (s->blendmq, s->run_dir);
    char old_instance[64] = "";
    if (s_instance (st_before, target)) snprintf (old_instance, sizeof old_instance, "%s", s_instance (st_before, target));
    fw_snapshot_t w_before, w_heal, w_end;
    fw_snapshot (s->watch, &w_before);

    char tag[16];
    snprintf (tag, sizeof tag, "f%02d", index);
    fl_load_start (s->load, tag, PLAN_LOOPS, true);
    s_load_in_swing (s, row);
    int pid = disk ? 0 : s_pid (s, target);
    if (pid < 0) {
        fc_fail (row, "no process for %s (pids/%s.pid: %d is not this stack's)", target, target, e2e_pid (s->run_dir, target));
        fl_load_stop (s->load);
        json_decref (st_before);
        return row;
    }
    /* probes: the scene asked for just after the fault; during a stop, a plan
     * and a chat sent shortly before SIGCONT (still waiting when it comes) */
    s_probe_t probes[3];
    int nprobes = 0;
    row->t0 = fl_now_ms ();
    if (disk) s_disk_fault (s, row);
    else kill (pid, stop ? SIGSTOP : SIGKILL);
    s_probe_start (&probes[nprobes++], s->load, FL_SCENE, 500);
    if (stop) {
        s_probe_start (&probes[nprobes++], s->load, FL_PLAN, STOP_MS - 1500);
        s_probe_start (&probes[nprobes++], s->load, FL_CHAT, STOP_MS - 1500);
        usleep (STOP_MS * 1000);
        kill (pid, SIGCONT);
    }
    row->t_end = fl_now_ms ();
    s_wait_heal (s, row, pid, *old_instance ? old_instance : NULL);
    fw_snapshot (s->watch, &w_heal);
    s_post_heal (s, row);
    fw_snapshot (s->watch, &w_end);
    fl_load_stop (s->load);
    for (int i = 0; i < nprobes; i++) pthread_join (probes[i].thread, NULL);

    fl_run_t *runs;
    size_t n = fl_load_runs (s->load, &runs);
    fc_check_answers (row, runs, n, s->usual);
    s_quiesce (s);
    json_t *st_after = fs_status (s->blendmq, s->run_dir);
    json_t *restarts = s_restarts (s, pids_before, st_before, st_after);
    if (!disk) s_check_supervisor (s, row, st_before, st_after);
    else if (json_object_size (restarts)) {
        char *t = json_dumps (restarts, JSON_COMPACT);
        fc_note (row, "restarts during the full disk: %s", t);
        free (t);
    }
    fc_check_audit (row, s->db, mark, runs, n, restarts, AUDIT_WAIT_MS);
    json_t *names = fs_scene_names (s->gateway, 20000);
    bool lost_scene = !strcmp (target, "blender") && !stop;
    fc_check_scene (row, names, runs, n, lost_scene ? (row->t_heal ? row->t_heal : INT64_MAX) : 0);
    json_decref (names);
    fc_check_watchers (row, &w_before, &w_heal, &w_end);
    if (s_blendmq (s, "scene reset", "reset.log")) fc_fail (row, "`blendmq scene reset` failed after the fault");
    free (runs);
    json_decref (restarts);
    json_decref (st_before);
    json_decref (st_after);
    if (!row->t_heal) {
        fc_fail (row, "repaired by hand (down, up) so that the next faults have a stack");
        s_blendmq (s, "down", "down.log");
        if (s_up (s)) fc_fail (row, "the repair failed: `blendmq up` (see %s/up.log)", s->work_dir);
    }
    fprintf (stderr, "   %s: %s; answer %lld ms (bound %lld), heal %lld ms, scene %s\n", json_array_size (row->failures) ? "FAILED" : "ok",
             row->saw, (long long) row->answer_ms, (long long) row->bound_ms, (long long) row->heal_ms, row->scene);
    return row;
}

/* ---- the table -------------------------------------------------------------------------- */

static void s_ms (char *buf, size_t len, int64_t ms)
{
    if (ms < 0) snprintf (buf, len, "-");
    else snprintf (buf, len, "%.1f s", ms / 1000.0);
}

static void s_table (FILE *out, fc_row_t **rows, int n)
{
    fprintf (out, "\n%-24s | %-64s | %-8s | %-7s | %-7s | %s\n", "fault", "what the client saw", "answer", "bound", "heal", "scene");
    fprintf (out, "%.*s\n", 150, "------------------------------------------------------------------------------------------------------------------------------------------------------------------");
    for (int i = 0; i < n; i++) {
        char a[16], b[16], h[16];
        s_ms (a, sizeof a, rows[i]->answer_ms);
        s_ms (b, sizeof b, rows[i]->bound_ms);
        s_ms (h, sizeof h, rows[i]->heal_ms);
        fprintf (out, "%-24s | %-64.64s | %-8s | %-7s | %-7s | %s%s\n", rows[i]->name, rows[i]->saw, a, b, h, rows[i]->scene,
                 json_array_size (rows[i]->failures) ? "  FAILED" : "");
    }
    for (int i = 0; i < n; i++) {
        size_t k;
        json_t *f;
        json_array_foreach (rows[i]->failures, k, f) fprintf (out, "  %s: %s\n", rows[i]->name, json_string_value (f));
    }
}

static int s_write_json (fc_row_t **rows, int n, double seconds)
{
    json_t *list = json_array ();
    int failed = 0;
    for (int i = 0; i < n; i++) {
        json_array_append_new (list, fc_row_json (rows[i]));
        failed += json_array_size (rows[i]->failures) > 0;
    }
    json_t *doc = json_pack ("{s:o, s:i, s:f, s:{s:i, s:i, s:i, s:i, s:i}}", "faults", list, "failed", failed, "seconds", seconds,
                             "load", "plan_loops", PLAN_LOOPS, "plan_steps", FAULTS_PLAN_STEPS, "chats", 1, "sub_watchers", SUBS,
                             "watch_processes", WATCHES);
    int rc = json_dump_file (doc, "faults.json", JSON_INDENT (2));
    json_decref (doc);
    return rc;
}

/* ---- setup ---------------------------------------------------------------------------------- */

static int s_setup (s_suite_t *s)
{
    snprintf (s->run_dir, sizeof s->run_dir, "/tmp/bmq-faults-XXXXXX");
    if (!mkdtemp (s->run_dir)) return -1;
    snprintf (s->work_dir, sizeof s->work_dir, "%s/clients", s->run_dir);
    snprintf (s->auditfs, sizeof s->auditfs, "%s/auditfs", s->run_dir);
    mkdir (s->work_dir, 0700);
    mkdir (s->auditfs, 0700);
    char opts[64], v[600];
    snprintf (opts, sizeof opts, "size=%dm,mode=0700", TMPFS_MB);
    s->mounted = !getenv ("BMQ_FAULTS_NO_TMPFS") && mount ("tmpfs", s->auditfs, "tmpfs", 0, opts) == 0;
    if (!s->mounted) {
        fprintf (stderr, "faults: no tmpfs for the audit (%s): audit.max_size_mb=%d stands in for the full disk\n",
                 getenv ("BMQ_FAULTS_NO_TMPFS") ? "BMQ_FAULTS_NO_TMPFS" : strerror (errno), CAP_MB);
        s->cap_mb = CAP_MB;
        snprintf (v, sizeof v, "%d", CAP_MB);
        setenv ("BLENDMQ_AUDIT_MAX_SIZE_MB", v, 1);
    }
    snprintf (v, sizeof v, "%s/blendmq-audit.db", s->auditfs);
    setenv ("BLENDMQ_AUDIT_DATABASE", v, 1);
    snprintf (v, sizeof v, "%s/spool", s->run_dir);         /* the senders' spools are not on the audit's disk */
    setenv ("BLENDMQ_AUDIT_SPOOL_DIR", v, 1);
    s->llm = slow_llm_new (LLM_DELAY_MS);
    if (!s->llm) return -1;
    snprintf (v, sizeof v, "%s/v1", slow_llm_url (s->llm));
    setenv ("BLENDMQ_PLANNER_BACKEND", "openai", 1);
    setenv ("BLENDMQ_PLANNER_OPENAI_BASE_URL", v, 1);
    setenv ("BLENDMQ_PLANNER_OPENAI_MODEL", "fault-llm", 1);
    /* The fake model answers every dialogue with a plan: a review round (issue 16) would run each chat's plan
     * twice. The faults are measured on one planning dialogue per chat; faults during a review: e2e.review. */
    setenv ("BLENDMQ_PLANNER_REVIEW_ROUNDS", "0", 1);
    unsetenv ("OPENAI_API_KEY");
    unsetenv ("GEMINI_API_KEY");
    int port = s_free_port ();              /* a fixed HTTP port: the SSE client reconnects to the same URL */
    snprintf (v, sizeof v, "%d", port);
    setenv ("BLENDMQ_GATEWAY_HTTP_PORT", v, 1);
    snprintf (s->http, sizeof s->http, "http://127.0.0.1:%d", port);
    s->blendmq = e2e_bin ("blendmq");
    return 0;
}

static void s_teardown (s_suite_t *s, bool keep)
{
    fl_load_destroy (&s->load);
    fw_destroy (&s->watch);
    s_blendmq (s, "down", "down.log");
    slow_llm_destroy (&s->llm);
    if (s->mounted) umount2 (s->auditfs, MNT_DETACH);
    if (keep) { fprintf (stderr, "faults: run dir kept: %s (logs/, clients/)\n", s->run_dir); return; }
    char cmd[600];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s->run_dir);
    if (system (cmd)) fprintf (stderr, "faults: cannot remove %s\n", s->run_dir);
}

static bool s_selected (const char *how, const char *target)
{
    const char *only = getenv ("BMQ_FAULTS");
    if (!only || !*only) return true;
    char want[64];
    snprintf (want, sizeof want, "%s:%s", how, target);
    for (const char *p = strstr (only, want); p; p = strstr (p + 1, want))
        if ((p == only || p[-1] == ',') && (p[strlen (want)] == ',' || !p[strlen (want)])) return true;
    return false;
}

int main (void)
{
    setvbuf (stdout, NULL, _IOLBF, 0);
    signal (SIGPIPE, SIG_IGN);
    const char *blender = getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender";
    char probe[300];
    snprintf (probe, sizeof probe, "command -v '%s' >/dev/null 2>&1", blender);
    if (system (probe) != 0) { printf ("faults: SKIPPED: no Blender (%s)\n", blender); return 77; }
    int64_t began = fl_now_ms ();
    curl_global_init (CURL_GLOBAL_DEFAULT);
    s_suite_t s = { 0 };
    if (s_setup (&s)) { fprintf (stderr, "faults: setup failed\n"); return 1; }
    if (s_up (&s)) {
        fprintf (stderr, "faults: `blendmq up` failed (see %s/up.log)\n", s.work_dir);
        s_teardown (&s, true);
        return 1;
    }
    s.load = fl_load_new (s.blendmq, s.run_dir, s.work_dir);
    s.watch = fw_new (s.blendmq, s.run_dir, s.work_dir, s.events, SUBS, WATCHES, s.http, e2e_token (s.run_dir, "cli"));

    /* the pipeline works before anything breaks */
    fl_load_start (s.load, "w", 0, false);
    fl_load_probe (s.load, FL_PLAN);
    fl_load_probe (s.load, FL_CHAT);
    fl_run_t *warm;
    size_t nwarm = fl_load_runs (s.load, &warm);
    bool ok = nwarm == 2 && !strcmp (warm[0].outcome, "done") && !strcmp (warm[1].outcome, "done");
    if (!ok) fprintf (stderr, "faults: the stack does not work before any fault: plan %s (%s), chat %s (%s)\n",
                      nwarm > 0 ? warm[0].outcome : "?", nwarm > 0 ? warm[0].message : "", nwarm > 1 ? warm[1].outcome : "?",
                      nwarm > 1 ? warm[1].message : "");
    free (warm);
    if (!ok) { s_teardown (&s, true); return 1; }
    s_blendmq (&s, "scene reset", "reset.log");
    s_baseline (&s);

    static const char *targets[] = { "gateway", "planner", "executor", "audit", "validator-1", "blender" };
    fc_row_t *rows[MAX_FAULTS];
    int nrows = 0, index = 1;
    if (s_selected ("disk", "audit")) rows[nrows++] = s_run_fault (&s, "disk", "audit", index);
    index++;
    for (int how = 0; how < 2; how++)
        for (size_t t = 0; t < sizeof targets / sizeof *targets; t++, index++)
            if (s_selected (how ? "stop" : "kill", targets[t])) rows[nrows++] = s_run_fault (&s, how ? "stop" : "kill", targets[t], index);

    double seconds = (fl_now_ms () - began) / 1000.0;
    s_table (stdout, rows, nrows);
    int failed = 0;
    for (int i = 0; i < nrows; i++) failed += json_array_size (rows[i]->failures) > 0;
    printf ("\n%d of %d faults passed every check; %.0f s; table in faults.json\n", nrows - failed, nrows, seconds);
    if (s_write_json (rows, nrows, seconds)) fprintf (stderr, "faults: cannot write faults.json\n");
    for (int i = 0; i < nrows; i++) fc_row_destroy (&rows[i]);
    s_teardown (&s, failed > 0);
    curl_global_cleanup ();
    return failed ? 1 : 0;
}
