/* cli_stack — `blendmq up` and `down`: prepare the run dir (config, keys,
 * secrets), start the supervisor (cli_supervise.c), which starts and keeps
 * restarting the five services and the headless Blender(s), and wait until
 * all are healthy; stop the supervisor, then anything a pid file still names,
 * leaving nothing behind. Everything lives in the run dir:
 *   blendmq.yaml  effective configuration   logs/NAME.log  each process's log
 *   pids/NAME.pid  process ids              verdict.key, blender.token  secrets (0600)
 *   supervisor.json  the supervisor's view: restarts, last exits */
#include "bus.h"
#include "cli.h"
#include "keys.h"
#include "plan_seal.h"
#include "service.h"
#include "service_registry.h"

#include <czmq.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEALTH_TIMEOUT_MS  60000
#define SUPERVISOR_STOP_MS 15000      /* it gives its children 10 s, then kills them */

static int s_mkdirs (const char *dir)
{
    char path[1200];
    snprintf (path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') { *p = 0; mkdir (path, 0700); *p = '/'; }
    return mkdir (path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

/* Is pid a process `up` started from this run dir? Ours (same uid), a blendmq
 * service, Blender or the supervisor (`blendmq ... supervise`) (by
 * /proc/PID/exe, else argv[0]), and its command line names the run dir
 * (--config RUN/blendmq.yaml, --port-file RUN/..., --run-dir RUN). A pid
 * file that points anywhere else is never acted on; why says what was wrong. */
static bool s_is_ours (pid_t pid, const char *run_dir, char *why, size_t whylen)
{
    char path[64], cmd[8192] = "", exe[1024] = "", line[256];
    snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
    FILE *f = fopen (path, "r");
    if (!f) { snprintf (why, whylen, "no such process"); return false; }
    int uid = -1;
    while (fgets (line, sizeof line, f)) if (sscanf (line, "Uid: %d", &uid) == 1) break;
    fclose (f);
    if (uid != (int) getuid ()) { snprintf (why, whylen, "it belongs to uid %d, not to you", uid); return false; }
    snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
    f = fopen (path, "r");
    if (!f) { snprintf (why, whylen, "its command line cannot be read"); return false; }
    size_t n = fread (cmd, 1, sizeof cmd - 1, f);
    fclose (f);
    cmd[n] = 0;
    char argv0[1024];
    snprintf (argv0, sizeof argv0, "%s", cmd);            /* up to the first NUL */
    for (size_t i = 0; i < n; i++) if (!cmd[i]) cmd[i] = ' ';
    snprintf (path, sizeof path, "/proc/%d/exe", (int) pid);
    ssize_t el = readlink (path, exe, sizeof exe - 1);
    exe[el > 0 ? el : 0] = 0;
    const char *base = *exe ? strrchr (exe, '/') : strrchr (argv0, '/');
    base = base ? base + 1 : *exe ? exe : argv0;
    bool known = !strncmp (base, "blendmq-", 8) || !strncmp (base, "blender", 7);
    if (!known && *exe) {               /* e.g. a wrapper: judge argv[0] too */
        const char *b0 = strrchr (argv0, '/');
        b0 = b0 ? b0 + 1 : argv0;
        known = !strncmp (b0, "blendmq-", 8) || !strncmp (b0, "blender", 7);
    }
    if (!known) known = strstr (cmd, "/blendmq-") != NULL;     /* under BLENDMQ_WRAPPER (valgrind ...) */
    if (!known) known = (!strcmp (base, "blendmq") || strstr (cmd, "/blendmq ")) && strstr (cmd, " supervise");   /* the supervisor */
    if (!known) known = (!strcmp (base, "blendmq") || strstr (cmd, "/blendmq ")) && strstr (cmd, " blender-run ");  /* a confined Blender */
    if (!known) { snprintf (why, whylen, "it is %.200s, not a blendmq service or Blender", *exe ? exe : argv0); return false; }
    if (!strstr (cmd, run_dir)) { snprintf (why, whylen, "it was not started for %.300s", run_dir); return false; }
    return true;
}

static bool s_running (pid_t pid)
{
    int status;
    if (waitpid (pid, &status, WNOHANG) == pid) return false;     /* our child, reaped */
    if (kill (pid, 0) != 0) return false;
    char path[64], state = 0;
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *f = fopen (path, "r");
    if (f) { if (fscanf (f, "%*d %*s %c", &state) != 1) state = 0; fclose (f); }
    return state != 'Z';
}

/* The supervisor first, so that nothing is restarted while the rest stops; it
 * stops its children itself. One that does not stop in time is killed: the
 * pid files then name what is left. Returns 1 when there was one. */
static int s_stop_supervisor (const bmq_cli_opts_t *opts)
{
    char path[1200], why[400] = "";
    snprintf (path, sizeof path, "%s/pids/supervisor.pid", opts->run_dir);
    FILE *f = fopen (path, "r");
    int pid = 0;
    if (!f) return 0;
    if (fscanf (f, "%d", &pid) != 1) pid = 0;
    fclose (f);
    if (pid > 1 && s_running (pid) && s_is_ours (pid, opts->run_dir, why, sizeof why)) {
        kill (pid, SIGTERM);
        int64_t deadline = bmq_mono_ms () + SUPERVISOR_STOP_MS;
        while (s_running (pid) && bmq_mono_ms () < deadline) zclock_sleep (50);
        if (s_running (pid)) {
            fprintf (stderr, "blendmq: the supervisor (pid %d) did not stop in time: killed; stopping its processes from their pid files\n", pid);
            kill (pid, SIGKILL);
        }
    }
    else if (pid > 1 && *why && s_running (pid))
        fprintf (stderr, "blendmq: not stopping pid %d from %s: %s\n", pid, path, why);
    remove (path);
    return pid > 1;
}

int bmq_cli_down (const bmq_cli_opts_t *opts)
{
    char dir[1200];
    snprintf (dir, sizeof dir, "%s/pids", opts->run_dir);
    char rerr[1400];
    struct stat rst;
    if (lstat (opts->run_dir, &rst) == 0 && bmq_run_dir_check (opts->run_dir, rerr, sizeof rerr)) {
        fprintf (stderr, "blendmq: %s\n", rerr);     /* its pid files cannot be trusted */
        return 2;
    }
    int supervisor = s_stop_supervisor (opts);
    DIR *d = opendir (dir);
    if (!d) { printf ("nothing running in %s\n", opts->run_dir); return 0; }
    pid_t pids[128];
    char files[128][1300];
    int n = 0;
    struct dirent *e;
    while ((e = readdir (d)) && n < 128) {
        if (!strstr (e->d_name, ".pid")) continue;
        snprintf (files[n], sizeof files[n], "%s/%s", dir, e->d_name);
        FILE *f = fopen (files[n], "r");
        int pid = 0;
        if (f) { if (fscanf (f, "%d", &pid) != 1) pid = 0; fclose (f); }
        char why[400] = "";
        if (pid > 1 && s_running (pid) && s_is_ours (pid, opts->run_dir, why, sizeof why)) { pids[n] = pid; kill (pid, SIGTERM); }
        else {
            if (pid > 1 && *why && s_running (pid))
                fprintf (stderr, "blendmq: not stopping pid %d from %s: %s\n", pid, files[n], why);
            pids[n] = 0;
        }
        n++;
    }
    closedir (d);
    int64_t deadline = bmq_mono_ms () + 10000;
    int left;
    do {
        left = 0;
        for (int i = 0; i < n; i++) if (pids[i] && s_running (pids[i])) left++;
        if (left) zclock_sleep (50);
    } while (left && bmq_mono_ms () < deadline);
    for (int i = 0; i < n; i++) {
        if (pids[i] && s_running (pids[i])) {
            fprintf (stderr, "blendmq: pid %d did not stop in time: killed\n", (int) pids[i]);
            kill (pids[i], SIGKILL);
            waitpid (pids[i], NULL, 0);
        }
        remove (files[i]);
    }
    if (!opts->json) printf ("stopped %d process(es) in %s\n", n + supervisor, opts->run_dir);
    return 0;
}

static int s_random_token (const char *path)
{
    unsigned char bytes[24];
    char hex[49], err[600];
    if (sodium_init () < 0) return -1;
    randombytes_buf (bytes, sizeof bytes);
    sodium_bin2hex (hex, sizeof hex, bytes, sizeof bytes);
    sodium_memzero (bytes, sizeof bytes);
    int rc = bmq_secret_file_write (path, hex, strlen (hex), true, err, sizeof err);     /* O_EXCL|O_NOFOLLOW 0600 */
    sodium_memzero (hex, sizeof hex);
    if (rc) fprintf (stderr, "blendmq: %s\n", err);
    return rc;
}

/* A TCP port free on loopback right now (0 when none could be had: the
 * gateway then takes any, as before). */
static int s_free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    int port = bind (fd, (struct sockaddr *) &a, sizeof a) == 0 && getsockname (fd, (struct sockaddr *) &a, &len) == 0
             ? ntohs (a.sin_port) : 0;
    close (fd);
    return port;
}

static void s_ipc_endpoints (bmq_config_t *cfg, const char *run_dir)
{
    size_t n;                   /* what each service binds: the registry's ENDPOINTS (service_registry.def) */
    const bmq_service_t *svc = bmq_services (&n);
    for (size_t i = 0; i < n; i++) {
        char key[128], sock[64], ep[1300];
        for (const char *p = svc[i].endpoints; *p; p += strspn (p, " ")) {
            size_t len = strcspn (p, " ");
            if (sscanf (p, "%127[^= ]=%63[^ ]", key, sock) == 2) {
                snprintf (ep, sizeof ep, "ipc://%s/%s.sock", run_dir, sock);
                bmq_config_set (cfg, key, ep);
            }
            p += len;
        }
    }
    /* a private stack must not collide with another one's HTTP port either */
    if (!getenv ("BLENDMQ_GATEWAY_HTTP_PORT")) {
        /* a free port chosen now rather than port 0 at each start: a gateway the
         * supervisor restarts comes back on the same URL (panel, pages, bridges) */
        char port[16];
        snprintf (port, sizeof port, "%d", s_free_port ());
        bmq_config_set (cfg, "gateway.http_port", port);
    }
}

/* An endpoint for the k-th executor: its own ipc socket, or the tcp port moved by 20 per executor. */
static void s_nth_endpoint (const char *base, int k, const char *run_dir, const char *what, char *out, size_t len)
{
    const char *colon = strrchr (base, ':');
    if (!strncmp (base, "tcp://", 6) && colon) snprintf (out, len, "%.*s:%d", (int) (colon - base), base, atoi (colon + 1) + 20 * (k - 1));
    else snprintf (out, len, "ipc://%s/executor-%d%s.sock", run_dir, k, what);
}

/* Blender NAME's state folder (RUN/blender-state/NAME, 0700: its durable
 * commits, and the only host folder a confined Blender may write), its link
 * socket in it, and the file where its executor says since when Blender is
 * busy: set in cfg. -1 with a message when the socket path is too long. */
static int s_blender_paths (bmq_config_t *cfg, const char *run_dir, const char *name)
{
    char dir[1300], sock[1400], busy[1300];
    snprintf (dir, sizeof dir, "%s/blender-state/%s", run_dir, name);
    snprintf (sock, sizeof sock, "%s/link.sock", dir);
    snprintf (busy, sizeof busy, "%s/%s.busy", run_dir, name);
    if (strlen (sock) > 107) {
        fprintf (stderr, "blendmq: Blender's socket %s would be longer than a unix socket path may be (107 bytes): "
                 "use a shorter --run-dir\n", sock);
        return -1;
    }
    if (s_mkdirs (dir)) { fprintf (stderr, "blendmq: cannot create %s: %s\n", dir, strerror (errno)); return -1; }
    chmod (dir, 0700);
    bmq_config_set (cfg, "blender.socket", sock);
    bmq_config_set (cfg, "blender.busy_file", busy);
    return 0;
}

/* up --blenders N: Blenders 2..N, each with its executor (config executor-K.yaml,
 * named blender-K), listed in gateway.executors so requests can target them.
 * The supervisor writes each Blender's port into its file once it chose one. */
static int s_more_blenders (const bmq_cli_opts_t *opts, bmq_config_t *cfg)
{
    json_t *extra = json_object ();
    for (int k = 2; k <= opts->blenders; k++) {
        char name[32], endpoint[1300], events[1300], path[1300], err[512];
        snprintf (name, sizeof name, "blender-%d", k);
        s_nth_endpoint (bmq_config_str (cfg, "executor.endpoint"), k, opts->run_dir, "", endpoint, sizeof endpoint);
        s_nth_endpoint (bmq_config_str (cfg, "executor.events"), k, opts->run_dir, "-events", events, sizeof events);
        bmq_config_t *ec = bmq_config_dup (cfg);
        bmq_config_set (ec, "executor.name", name);
        bmq_config_set (ec, "executor.endpoint", endpoint);
        bmq_config_set (ec, "executor.events", events);
        snprintf (path, sizeof path, "%s/executor-%d.yaml", opts->run_dir, k);
        int rc = s_blender_paths (ec, opts->run_dir, name) ? -1 : bmq_config_save (ec, path, err, sizeof err);
        bmq_config_destroy (&ec);
        if (rc) { if (*err) fprintf (stderr, "blendmq: %s\n", err); json_decref (extra); return -1; }
        json_object_set_new (extra, name, json_pack ("{s:s, s:s}", "endpoint", endpoint, "events", events));
    }
    return bmq_config_set_json (cfg, "gateway.executors", extra);
}

/* Poll the gateway until every service is alive (and Blender connected). */
static int s_wait_healthy (bmq_config_t *cfg, bool want_blender, const char *run_dir)
{
    int64_t deadline = bmq_mono_ms () + HEALTH_TIMEOUT_MS;
    char last[512] = "no answer from the gateway";
    while (bmq_mono_ms () < deadline && !zsys_interrupted) {
        if (bmq_cli_config_refusal (run_dir)) return -1;       /* not restarted: no use waiting (issue 29) */
        json_t *st = bmq_cli_fetch_status (cfg);
        bool ok = st != NULL;
        size_t i;
        json_t *s;
        json_array_foreach (json_object_get (st, "services"), i, s) {
            const char *name = json_string_value (json_object_get (s, "name"));
            const char *state = json_string_value (json_object_get (s, "state"));
            if (!json_is_true (json_object_get (s, "alive"))) { ok = false; snprintf (last, sizeof last, "%s not ready", name); }
            else if (want_blender && !strncmp (name, "executor", 8) && state && strcmp (state, "blender connected")) {
                ok = false;
                snprintf (last, sizeof last, "executor: %s", state);
            }
        }
        json_decref (st);
        if (ok) return 0;
        zclock_sleep (200);
    }
    fprintf (stderr, "blendmq: the stack did not become healthy: %s\n", last);
    return -1;
}

/* A stack already runs in the run dir when its supervisor or its gateway does. */
static bool s_already_running (const bmq_cli_opts_t *opts)
{
    static const char *const names[] = { "supervisor", "gateway" };
    for (int i = 0; i < 2; i++) {
        char path[1300], why[400];
        snprintf (path, sizeof path, "%s/pids/%s.pid", opts->run_dir, names[i]);
        FILE *f = fopen (path, "r");
        int old = 0;
        if (f) { if (fscanf (f, "%d", &old) != 1) old = 0; fclose (f); }
        if (old > 1 && s_running (old) && s_is_ours (old, opts->run_dir, why, sizeof why)) return true;
    }
    return false;
}

/* The effective configuration for the stack, with its secrets and keys made,
 * saved as RUN/blendmq.yaml (and executor-K.yaml); this process's bus
 * security started. NULL with a message on stderr (*code: the exit code). */
static bmq_config_t *s_prepare (const bmq_cli_opts_t *opts, int *code)
{
    char path[1300], err[8192];
    *code = 2;
    bmq_config_t *cfg = bmq_config_load (opts->config_path, err, sizeof err);
    if (!cfg) { bmq_cli_say_config_problems (err, "nothing was started"); return NULL; }
    if (opts->ipc) {
        /* a private stack keeps everything it writes in its run dir */
        s_ipc_endpoints (cfg, opts->run_dir);
        if (!*bmq_config_str (cfg, "planner.saved_recipes_dir")) {
            char recipes[1300];
            snprintf (recipes, sizeof recipes, "%s/recipes", opts->run_dir);
            bmq_config_set (cfg, "planner.saved_recipes_dir", recipes);
        }
    }
    snprintf (path, sizeof path, "%s/verdict.key", opts->run_dir);
    if (unlink (path) != 0 && errno != ENOENT) { fprintf (stderr, "blendmq: cannot replace %s: %s\n", path, strerror (errno)); goto fail; }
    if (bmq_seal_key_create (path, err, sizeof err)) { fprintf (stderr, "blendmq: %s\n", err); goto fail; }
    bmq_config_set (cfg, "security.verdict_key_file", path);
    {   /* CURVE keys: made on first use (a keys dir from before gets what is
         * new, e.g. the supervisor's), so the demo stays two commands */
        char keys[1100];
        int created = 0;
        bmq_cli_keys_dir (opts, cfg, keys, sizeof keys);
        if (bmq_config_bool (cfg, "security.curve") && bmq_keys_init (keys, &created, err, sizeof err)) {
            fprintf (stderr, "blendmq: %s\n", err);
            goto fail;
        }
        if (created && !opts->json) printf ("made %d key(s) in %s\n", created, keys);
        bmq_config_set (cfg, "security.keys_dir", keys);
        if (bmq_bus_security_init (cfg, opts->key_name ? opts->key_name : "cli", err, sizeof err)) {
            fprintf (stderr, "blendmq: %s\n", err);
            goto fail;
        }
    }
    const char *db = bmq_config_str (cfg, "audit.database");
    if (db[0] != '/') {
        char state_dir[1100], dbpath[1300];
        const char *xdg = getenv ("XDG_STATE_HOME"), *home = getenv ("HOME");
        if (opts->ipc) snprintf (state_dir, sizeof state_dir, "%s", opts->run_dir);
        else if (xdg && *xdg) snprintf (state_dir, sizeof state_dir, "%s/blendmq", xdg);
        else snprintf (state_dir, sizeof state_dir, "%s/.local/state/blendmq", home ? home : "/tmp");
        s_mkdirs (state_dir);
        snprintf (dbpath, sizeof dbpath, "%s/%s", state_dir, db);
        bmq_config_set (cfg, "audit.database", dbpath);
    }
    if (!opts->no_blender) {
        snprintf (path, sizeof path, "%s/blender.token", opts->run_dir);
        if (s_random_token (path)) { fprintf (stderr, "blendmq: cannot write %s\n", path); goto fail; }
        bmq_config_set (cfg, "blender.token_file", path);
        if (s_blender_paths (cfg, opts->run_dir, "blender")) goto fail;
    }
    *code = 1;
    if (!opts->no_blender && opts->blenders > 1 && s_more_blenders (opts, cfg)) goto fail;
    *code = 2;
    snprintf (path, sizeof path, "%s/blendmq.yaml", opts->run_dir);
    if (bmq_config_save (cfg, path, err, sizeof err)) { fprintf (stderr, "blendmq: %s\n", err); goto fail; }
    return cfg;
fail:
    bmq_config_destroy (&cfg);
    return NULL;
}

/* Where the executor finds Blender: "socket PATH" or "port N". */
static void s_blender_where (const bmq_config_t *cfg, char *out, size_t len)
{
    if (*bmq_config_str (cfg, "blender.socket")) snprintf (out, len, "socket %s", bmq_config_str (cfg, "blender.socket"));
    else snprintf (out, len, "port %lld", (long long) bmq_config_int (cfg, "blender.port"));
}

int bmq_cli_up (bmq_cli_opts_t *opts)
{
    char path[1300], err[1600];
    /* the run dir holds secrets and pid files: ours, 0700, not a symlink (issue 12) */
    if (bmq_run_dir_check (opts->run_dir, path, sizeof path)) { fprintf (stderr, "blendmq: %s\n", path); return 2; }
    if (bmq_cli_overrides_refused (opts, path, sizeof path)) { fprintf (stderr, "blendmq: %s\n", path); return 2; }
    if (s_already_running (opts)) {
        fprintf (stderr, "blendmq: a stack is already running in %s (blendmq down first)\n", opts->run_dir);
        return 1;
    }
    snprintf (path, sizeof path, "%s/logs", opts->run_dir);
    if (s_mkdirs (path)) { fprintf (stderr, "blendmq: cannot create %s: %s\n", path, strerror (errno)); return 2; }
    snprintf (path, sizeof path, "%s/pids", opts->run_dir);
    s_mkdirs (path);
    int code;
    bmq_config_t *cfg = s_prepare (opts, &code);
    if (!cfg) return code;
    if (!opts->no_blender && !opts->json) printf ("starting headless Blender...\n");
    /* the supervisor starts everything and restarts what exits (cli_supervise.c) */
    if (bmq_cli_supervisor_start (opts, err, sizeof err) < 0) {
        fprintf (stderr, "blendmq: %s\n", err);
        bmq_config_destroy (&cfg);
        bmq_cli_down (opts);
        return 1;
    }
    int rc = s_wait_healthy (cfg, !opts->no_blender, opts->run_dir);
    if (rc == 0 && !opts->json) {
        char where[1500];
        s_blender_where (cfg, where, sizeof where);
        printf ("blendmq is up: gateway %s, %d validator(s), Blender %s%s\n  run dir %s\n",
                bmq_config_str (cfg, "gateway.endpoint"), opts->validators, where,
                !opts->no_blender && bmq_config_bool (cfg, "blender.confine") ? " (confined)" : "", opts->run_dir);
        json_t *st = bmq_cli_fetch_status (cfg);
        const char *mcp = json_string_value (json_object_get (json_object_get (st, "endpoints"), "mcp"));
        if (mcp) printf ("  MCP (Streamable HTTP) %s\n", mcp);
        json_decref (st);
    }
    bmq_config_destroy (&cfg);
    if (rc) {
        fprintf (stderr, "blendmq: logs are in %s/logs; stopping what started\n", opts->run_dir);
        bmq_cli_down (opts);
        return 1;
    }
    return 0;
}
