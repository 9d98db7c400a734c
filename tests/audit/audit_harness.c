/* audit_harness — process and database helpers for the audit tests. */
#include "audit_harness.h"
#include "bus.h"
#include "keys.h"
#include "peer.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void ah_sleep_ms (int ms)
{
    struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
    while (nanosleep (&ts, &ts) != 0) { }
}

void ah_setup (ah_env_t *env)
{
    memset (env, 0, sizeof *env);
    snprintf (env->dir, sizeof env->dir, "/tmp/bmq-audit-test-XXXXXX");
    if (!mkdtemp (env->dir)) { perror ("mkdtemp"); exit (1); }
    snprintf (env->endpoint, sizeof env->endpoint, "ipc://%s/audit.sock", env->dir);
    snprintf (env->database, sizeof env->database, "%s/audit.db", env->dir);
    snprintf (env->spool, sizeof env->spool, "%s/spool", env->dir);
    setenv ("BLENDMQ_AUDIT_ENDPOINT", env->endpoint, 1);
    setenv ("BLENDMQ_AUDIT_DATABASE", env->database, 1);
    setenv ("BLENDMQ_AUDIT_SPOOL_DIR", env->spool, 1);
    setenv ("BLENDMQ_HEARTBEAT_INTERVAL_MS", "250", 1);
    setenv ("BLENDMQ_HEARTBEAT_LIVENESS", "4", 1);
    /* CURVE: keys in the temp dir (children inherit BLENDMQ_SECURITY_KEYS_DIR); the test writes records, as the planner would */
    char keys[400], err[512];
    snprintf (keys, sizeof keys, "%s/keys", env->dir);
    if (bmq_keys_setup_process (keys, "planner", err, sizeof err)) { fprintf (stderr, "keys: %s\n", err); exit (1); }
}

void ah_teardown (ah_env_t *env)
{
    if (!env->dir[0] || getenv ("BMQ_KEEP_TMP")) return;
    char cmd[400];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", env->dir);
    if (system (cmd) != 0) fprintf (stderr, "cannot remove %s\n", env->dir);
}

const char *ah_bin (const char *name)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf (p, 512, "%s/%s", BMQ_BIN_DIR, name);
    return p;
}

pid_t ah_spawn (ah_env_t *env, const char *log, const char *const argv[], const char *const extra_env[])
{
    char out[400], err[400];
    snprintf (out, sizeof out, "%s/%s.out", env->dir, log);
    snprintf (err, sizeof err, "%s/%s.log", env->dir, log);
    fflush (NULL);
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid != 0) return pid;
    /* child: only exec-safe work from here. It dies with the test, so a
     * failed or timed-out test leaves no audit service or sender behind. */
    prctl (PR_SET_PDEATHSIG, SIGTERM);
    if (getppid () != parent) _exit (127);
    int o = open (out, O_WRONLY | O_CREAT | O_APPEND, 0644), e = open (err, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (o >= 0) dup2 (o, 1);
    if (e >= 0) dup2 (e, 2);
    for (int i = 0; extra_env && extra_env[i]; i++) putenv ((char *) extra_env[i]);
    execv (ah_bin (argv[0]), (char *const *) argv);
    _exit (127);
}

int ah_wait (pid_t pid, int timeout_ms)
{
    for (int waited = 0;; waited += 20) {
        int st;
        pid_t r = waitpid (pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
        if (r < 0 || waited >= timeout_ms) return -1;
        ah_sleep_ms (20);
    }
}

int ah_stop (pid_t pid, int sig, int timeout_ms)
{
    if (pid <= 0) return -1;
    kill (pid, sig);
    int code = ah_wait (pid, timeout_ms);
    if (code < 0) { kill (pid, SIGKILL); ah_wait (pid, 5000); }
    return code;
}

json_t *ah_status (ah_env_t *env, int timeout_ms)
{
    zsock_t *sock = bmq_bus_connect (ZMQ_DEALER, env->endpoint, "audit");
    if (!sock) return NULL;
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_STATUS_REQUEST, NULL, NULL);
    bmq_bus_send_and_destroy (sock, NULL, &req);
    json_t *body = NULL;
    zpoller_t *poller = zpoller_new (sock, NULL);
    if (zpoller_wait (poller, timeout_ms)) {
        bmq_envelope_t *env_in = bmq_bus_recv (sock, NULL);
        if (env_in && env_in->type == BMQ_MSG_STATUS_REPLY) body = json_incref (env_in->body);
        bmq_envelope_destroy (&env_in);
    }
    zpoller_destroy (&poller);
    zsock_destroy (&sock);
    return body;
}

pid_t ah_start_audit (ah_env_t *env, const char *const extra_env[])
{
    const char *argv[] = { "blendmq-audit", NULL };
    pid_t pid = ah_spawn (env, "audit", argv, extra_env);
    for (int i = 0; i < 100; i++) {
        json_t *st = ah_status (env, 200);
        if (st) { json_decref (st); return pid; }
        if (ah_wait (pid, 0) >= 0) return -1;      /* it exited */
    }
    ah_stop (pid, SIGKILL, 2000);
    return -1;
}

char *ah_run (const char *cmd, int *code)
{
    fflush (NULL);
    FILE *f = popen (cmd, "r");
    if (!f) { *code = -1; return strdup (""); }
    size_t cap = 4096, len = 0, n;
    char *buf = malloc (cap);
    while ((n = fread (buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 1024) buf = realloc (buf, cap *= 2);
    }
    buf[len] = 0;
    int st = pclose (f);
    *code = WIFEXITED (st) ? WEXITSTATUS (st) : -1;
    return buf;
}

json_t *ah_output (ah_env_t *env, const char *log)
{
    char path[400];
    snprintf (path, sizeof path, "%s/%s.out", env->dir, log);
    json_t *lines = json_array ();
    FILE *f = fopen (path, "r");
    if (!f) return lines;
    char line[8192];
    while (fgets (line, sizeof line, f)) {
        json_t *v = line[0] == '{' ? json_loads (line, 0, NULL) : NULL;
        if (v) json_array_append_new (lines, v);
    }
    fclose (f);
    return lines;
}

static int64_t s_db_int (sqlite3 *db, const char *sql, const char *arg)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (arg) sqlite3_bind_text (st, 1, arg, -1, SQLITE_STATIC);
        if (sqlite3_step (st) == SQLITE_ROW) v = sqlite3_column_int64 (st, 0);
    }
    else fprintf (stderr, "sql: %s\n", sqlite3_errmsg (db));
    sqlite3_finalize (st);
    return v;
}

int64_t ah_db_int (ah_env_t *env, const char *sql)
{
    sqlite3 *db;
    if (sqlite3_open_v2 (env->database, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) { sqlite3_close (db); return -1; }
    sqlite3_busy_timeout (db, 5000);
    int64_t v = s_db_int (db, sql, NULL);
    sqlite3_close (db);
    return v;
}

bool ah_db_exactly_once (ah_env_t *env, const char *origin, int64_t emitted)
{
    sqlite3 *db;
    if (sqlite3_open_v2 (env->database, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) { sqlite3_close (db); return false; }
    sqlite3_busy_timeout (db, 5000);
    int64_t count = s_db_int (db, "SELECT count(*) FROM records WHERE instance = ?", origin);
    int64_t distinct = s_db_int (db, "SELECT count(DISTINCT seq) FROM records WHERE instance = ?", origin);
    int64_t lo = s_db_int (db, "SELECT min(seq) FROM records WHERE instance = ?", origin);
    int64_t hi = s_db_int (db, "SELECT max(seq) FROM records WHERE instance = ?", origin);
    sqlite3_close (db);
    bool ok = count == emitted && distinct == emitted && (emitted == 0 || (lo == 1 && hi == emitted));
    if (!ok)
        fprintf (stderr, "origin %s: emitted %lld, stored %lld (%lld distinct seq, %lld..%lld)\n", origin,
                 (long long) emitted, (long long) count, (long long) distinct, (long long) lo, (long long) hi);
    return ok;
}
