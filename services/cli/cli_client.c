/* cli_client — conversations with the gateway: chat, plan, scene, status, watch. */
#include "bus.h"
#include "cli.h"
#include "peer.h"
#include "yaml_json.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MAX_PLAN_FILE (4u << 20)

#define CONTINUE BMQ_CLI_CONTINUE
typedef bmq_cli_handler_fn s_handler_fn;

/* Does anything listen at a local ZeroMQ endpoint? A loopback tcp:// port
 * refuses at once, an ipc:// path is missing or refuses: false. Any other
 * host, or an endpoint we cannot read: true (no guessing). */
static bool s_listening (const char *endpoint)
{
    int fd = -1, rc = 0;
    if (!strncmp (endpoint, "ipc://", 6)) {
        struct sockaddr_un un = { .sun_family = AF_UNIX };
        if (strlen (endpoint + 6) >= sizeof un.sun_path) return true;
        snprintf (un.sun_path, sizeof un.sun_path, "%s", endpoint + 6);
        if ((fd = socket (AF_UNIX, SOCK_STREAM, 0)) < 0) return true;
        rc = connect (fd, (struct sockaddr *) &un, sizeof un);
    }
    else if (!strncmp (endpoint, "tcp://127.0.0.1:", 16) || !strncmp (endpoint, "tcp://localhost:", 16)) {
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
        int port = atoi (endpoint + 16);
        if (port <= 0 || port > 65535) return true;
        in.sin_port = htons ((uint16_t) port);
        if ((fd = socket (AF_INET, SOCK_STREAM, 0)) < 0) return true;
        rc = connect (fd, (struct sockaddr *) &in, sizeof in);
    }
    else return true;
    bool refused = rc != 0 && (errno == ECONNREFUSED || errno == ENOENT);
    close (fd);
    return !refused;
}

static bool s_pid_alive (const char *run_dir, const char *name)
{
    char path[1200];
    snprintf (path, sizeof path, "%s/pids/%s.pid", run_dir, name);
    FILE *f = fopen (path, "r");
    int pid = 0;
    if (f) { if (fscanf (f, "%d", &pid) != 1) pid = 0; fclose (f); }
    return pid > 1 && (kill (pid, 0) == 0 || errno == EPERM);
}

/* Before talking to the run dir's stack: is there one, and does it run?
 * Said at once, from its files, pid files and sockets (issue 29). Not when
 * --config, --keys-dir or the environment (BLENDMQ_*_ENDPOINT,
 * BLENDMQ_SECURITY_KEYS_DIR) names another stack. 0 / -1 (said why). */
/* Does the environment name a stack (an endpoint, a keys dir: BLENDMQ_AUDIT_ENDPOINT...)? */
static bool s_env_names_stack (void)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++) {
        if (strncmp (*e, "BLENDMQ_", 8)) continue;
        const char *eq = strchr (*e, '=');
        size_t n = eq ? (size_t) (eq - *e) : strlen (*e);
        if ((n > 9 && !strncmp (*e + n - 9, "_ENDPOINT", 9)) || !strncmp (*e, "BLENDMQ_SECURITY_KEYS_DIR=", 26)) return true;
    }
    return false;
}

static int s_stack_here (const bmq_cli_opts_t *opts, const bmq_config_t *cfg, const char *config_file)
{
    if (opts->config_path || opts->keys_dir || s_env_names_stack ()) return 0;
    if (!config_file) {
        fprintf (stderr, "blendmq: no blendmq stack in %s: start one with `blendmq up`\n", opts->run_dir);
        return -1;
    }
    const char *endpoint = bmq_config_str (cfg, "gateway.endpoint");
    if (!s_listening (endpoint) && !s_pid_alive (opts->run_dir, "supervisor")) {
        fprintf (stderr, "blendmq: the blendmq stack in %s is stopped (no gateway at %s): start it with `blendmq up`\n",
                 opts->run_dir, endpoint);
        return -1;
    }
    return 0;
}

/* A key that `keys revoke` took away is said by name (its files are gone). */
static int s_key_revoked (const char *keys_dir, const char *name)
{
    char cert[1300], revoked[1300];
    snprintf (cert, sizeof cert, "%s/%s.cert", keys_dir, name);
    snprintf (revoked, sizeof revoked, "%s/revoked/%s.cert", keys_dir, name);
    if (zsys_file_exists (cert) || !zsys_file_exists (revoked)) return 0;
    fprintf (stderr, "blendmq: key %s was revoked (`blendmq keys list` shows the keys; a new one:"
                     " `blendmq keys add-client NAME --role ROLE`)\n", name);
    return -1;
}

void bmq_cli_say_error (const bmq_envelope_t *env, const char *prefix)
{
    const char *code = bmq_body_str (env, "code"), *message = bmq_body_str (env, "message");
    if (!code) code = "error";
    if (!message) message = "?";
    size_t n = strlen (code);
    if (!strncmp (message, code, n) && message[n] == ':') message += n + 1 + (message[n + 1] == ' ');  /* not "forbidden: forbidden:" */
    fprintf (stderr, "blendmq: %s%s: %s\n", prefix ? prefix : "", code, message);
}

bmq_config_t *bmq_cli_config (const bmq_cli_opts_t *opts)
{
    char path[1200], err[4096];
    const char *use = opts->config_path;
    if (!use) {
        snprintf (path, sizeof path, "%s/blendmq.yaml", opts->run_dir);
        if (zsys_file_exists (path)) use = path;
    }
    bmq_config_t *cfg = bmq_config_load (use, err, sizeof err);
    if (!cfg) { bmq_cli_say_config_problems (err, NULL); return NULL; }
    char keys[1100];
    bmq_config_set (cfg, "security.keys_dir", bmq_cli_keys_dir (opts, cfg, keys, sizeof keys));
    if (s_key_revoked (keys, opts->key_name ? opts->key_name : "cli") || s_stack_here (opts, cfg, use)) {
        bmq_config_destroy (&cfg);
        return NULL;
    }
    if (bmq_bus_security_init (cfg, opts->key_name ? opts->key_name : "cli", err, sizeof err)) {
        fprintf (stderr, "blendmq: %s\n", err);
        bmq_config_destroy (&cfg);
    }
    return cfg;
}

/* Send `req` (taken) to the gateway and feed every answer of its story to
 * `handler` until it returns an exit code. The gateway is pinged meanwhile:
 * if it falls silent for liveness × interval, give up with exit code 2. */
int bmq_cli_converse (bmq_config_t *cfg, bmq_envelope_t *req, s_handler_fn *handler, void *state)
{
    return bmq_cli_converse_ticking (cfg, req, handler, NULL, state);
}

int bmq_cli_converse_ticking (bmq_config_t *cfg, bmq_envelope_t *req, s_handler_fn *handler, bmq_cli_tick_fn *tick,
                              void *state)
{
    const char *endpoint = bmq_config_str (cfg, "gateway.endpoint");
    int interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms");
    bmq_peer_t *gw = bmq_peer_new ("gateway", endpoint, interval, (int) bmq_config_int (cfg, "heartbeat.liveness") + 1);
    if (!gw) { bmq_envelope_destroy (&req); return 2; }
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", req->cid);
    bmq_peer_send (gw, req);
    bmq_envelope_destroy (&req);
    int64_t started = bmq_mono_ms ();
    int code = CONTINUE;
    bool heard_once = false;
    unsigned generation = bmq_peer_generation (gw);
    zpoller_t *poller = zpoller_new (bmq_peer_sock (gw), NULL);
    while (code == CONTINUE) {
        if (tick && (code = tick (gw, cid, state)) != CONTINUE) break;
        bmq_peer_tick (gw);
        zsock_t *which = zpoller_wait (poller, interval / 2);
        if (zpoller_terminated (poller)) {
            if (tick) continue;         /* a signal: the tick decides what it means (its own handler counted it) */
            fprintf (stderr, "blendmq: interrupted\n");
            code = 130;
            break;
        }
        if (which) {
            bmq_envelope_t *env = bmq_bus_recv (which, NULL);
            if (env && !bmq_peer_heard (gw, env) && !strcmp (env->cid, cid)) code = handler (env, state);
            bmq_envelope_destroy (&env);
        }
        else if (!bmq_peer_alive (gw) && bmq_mono_ms () - started > (int64_t) interval * 4) {
            if (heard_once)
                fprintf (stderr, "blendmq: gateway unavailable (silent for %lld ms at %s); request %s may have been cut:"
                         " its story is in `blendmq audit show %s`\n", (long long) (interval * (bmq_config_int (cfg, "heartbeat.liveness") + 1)),
                         endpoint, cid, cid);
            else
                fprintf (stderr, "blendmq: no answer from the gateway at %s (`blendmq up` starts a stack)\n", endpoint);
            code = 2;
        }
        if (bmq_peer_alive (gw)) heard_once = true;
        if (code == CONTINUE && bmq_peer_generation (gw) != generation) {
            /* a new gateway process answers: the one holding our request is gone */
            fprintf (stderr, "blendmq: gateway restarted while request %s was in progress; it was lost with the old"
                     " process: its story is in `blendmq audit show %s`; try again\n", cid, cid);
            code = 2;
        }
    }
    zpoller_destroy (&poller);
    bmq_peer_destroy (&gw);
    return code;
}

/* ---- chat and plan run: stream the story ---------------------------------- */

typedef struct {
    bool   json;
    char  *recipe_out;
    size_t recipe_len;
    int    total;
    bool   validate_only;
} s_run_state_t;

static void s_print_errors (const json_t *errors)
{
    size_t i;
    json_t *e;
    json_array_foreach (errors, i, e) {
        json_int_t step = json_integer_value (json_object_get (e, "step"));
        const char *field = json_string_value (json_object_get (e, "field"));
        const char *reason = json_string_value (json_object_get (e, "reason"));
        if (step >= 0) printf ("  step %lld  %s: %s\n", (long long) step + 1, field ? field : "", reason ? reason : "");
        else printf ("  plan  %s: %s\n", field ? field : "", reason ? reason : "");
    }
}

/* Every answer of a chat or plan run, as lines (JSON lines with --json). On a
 * terminal the steps are one live progress bar, redrawn in place, instead of a
 * line each (a failed step still gets its line); anything else printed first
 * clears the bar. Not on a terminal, the lines are exactly as they always were:
 * tests and scripts parse them. */
static int s_on_run (const bmq_envelope_t *env, void *arg)
{
    static bool bar_shown;
    s_run_state_t *st = arg;
    const char *event = env->type == BMQ_MSG_PROGRESS ? bmq_body_str (env, "event") : NULL, *status = bmq_body_str (env, "status");
    bool bar = !st->json && !st->validate_only && event && !strcmp (event, "step") && status && strcmp (status, "failed")
            && isatty (STDOUT_FILENO);
    if (bar_shown && !bar && env->type != BMQ_MSG_HEARTBEAT) {
        printf ("\r\033[K");                /* the bar makes way for whatever comes next */
        bar_shown = false;
    }
    if (bar) {
        long long step = (long long) bmq_body_int (env, "step", 0), total = (long long) bmq_body_int (env, "total", 0);
        struct winsize ws = { 0 };
        int cols = ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
        char bar[41], line[512];
        int width = 24, filled = total > 0 ? (int) (width * (step > total ? total : step) / total) : 0;
        for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '-';
        bar[width] = 0;
        int n = snprintf (line, sizeof line, "[%s] %lld/%lld  %s  %s  %.1f ms", bar, step, total,
                          bmq_body_str (env, "operation") ? bmq_body_str (env, "operation") : "?", status,
                          json_number_value (json_object_get (env->body, "duration_ms")));
        if (n >= cols && cols <= (int) sizeof line) line[cols - 1] = 0;   /* a wrapped line could not be redrawn in place */
        printf ("\r\033[K%s", line);
        fflush (stdout);
        bar_shown = true;
        return CONTINUE;
    }
    if (st->json && !st->validate_only) {
        json_t *line = json_pack ("{s:s, s:s, s:O}", "type", bmq_msg_type_name (env->type), "cid", env->cid, "body", env->body);
        char *text = json_dumps (line, JSON_COMPACT);
        printf ("%s\n", text);
        free (text);
        json_decref (line);
    }
    switch (env->type) {
    case BMQ_MSG_CHAT_PLANNED: {
        const char *recipe = bmq_body_str (env, "recipe") ? bmq_body_str (env, "recipe") : bmq_body_str (env, "title");
        st->total = (int) json_array_size (json_object_get (env->body, "plan"));
        if (st->recipe_out && recipe) snprintf (st->recipe_out, st->recipe_len, "%s", recipe);
        if (!st->json) printf ("plan %s: %s, %d steps (%s planner)\n", bmq_body_str (env, "plan_id"),
                               recipe ? recipe : "?", st->total, bmq_body_str (env, "source") ? bmq_body_str (env, "source") : "?");
        /* the offline planner says what it understood, and what it could not place: nothing is dropped silently */
        json_t *parts = json_object_get (env->body, "parts"), *missed = json_object_get (env->body, "not_understood");
        if (!st->json && json_is_array (parts) && json_array_size (parts)) {
            size_t i;
            json_t *p;
            printf ("understood: ");
            json_array_foreach (parts, i, p) {
                json_t *rel = json_object_get (p, "relation"), *size = json_object_get (p, "size");
                const char *colour = json_string_value (json_object_get (p, "colour"));
                const char *type = json_string_value (json_object_get (rel, "type"));
                const char *arr = json_string_value (json_object_get (p, "arrangement"));
                const char *to = json_string_value (json_object_get (rel, "to")), *and = json_string_value (json_object_get (rel, "and"));
                const char *name = json_string_value (json_object_get (p, "recipe"));
                printf ("%s%.64s ×%.0f", i ? ", " : "", name ? name : "?", json_number_value (json_object_get (p, "count")));
                if (colour) printf (" (%.24s%s", colour, json_is_number (size) ? ", " : ")");
                if (json_is_number (size)) printf ("%s%.3g×)", colour ? "" : " (", json_number_value (size));
                if (arr) printf (" in a %.16s", arr);
                if (type && to) {
                    const char *words = !strcmp (type, "next_to") ? "next to" : !strcmp (type, "in_front_of") ? "in front of"
                                      : !strcmp (type, "left_of") ? "left of" : !strcmp (type, "right_of") ? "right of" : type;
                    printf (" %.16s %.64s%s%.64s", words, to, and ? " and " : !strcmp (type, "between") ? "s" : "", and ? and : "");
                }
            }
            json_array_foreach (missed, i, p)
                if (json_is_string (p)) printf ("%s'%.200s'", i ? ", " : "; not understood: ", json_string_value (p));
            printf ("\n");
        }
        return CONTINUE;
    }
    case BMQ_MSG_PLAN_NOTE:
        if (!st->json) { printf ("planner: %s\n", bmq_body_str (env, "text")); fflush (stdout); }
        return CONTINUE;
    case BMQ_MSG_VALIDATE_REPLY: {
        bool ok = json_is_true (json_object_get (env->body, "accepted"));
        json_t *errors = json_object_get (env->body, "errors");
        if (st->validate_only) {
            /* people count steps from 1, as `plan run`, progress, the page and the panel do; the
             * validator's index (from 0, -1 for the whole plan) stays the wire's: a whole-plan
             * problem has no step at all here (issue 29) */
            json_t *shown = json_deep_copy (env->body), *e;
            size_t i;
            json_array_foreach (json_object_get (shown, "errors"), i, e) {
                json_int_t step = json_integer_value (json_object_get (e, "step"));
                if (!json_is_integer (json_object_get (e, "step")) || step < 0) json_object_del (e, "step");
                else json_object_set_new (e, "step", json_integer (step + 1));
            }
            char *text = json_dumps (shown, JSON_INDENT (2) | JSON_SORT_KEYS);
            json_decref (shown);
            printf ("%s\n", text);
            free (text);
            return ok ? 0 : 1;
        }
        if (!st->json) {
            if (ok) printf ("validated: %lld steps accepted\n", (long long) json_integer_value (json_object_get (env->body, "steps")));
            else { printf ("rejected: %zu problem(s); nothing was run\n", json_array_size (errors)); s_print_errors (errors); }
        }
        return ok ? CONTINUE : 1;
    }
    case BMQ_MSG_PROGRESS: {
        const char *event = bmq_body_str (env, "event");
        if (!st->json && event && !strcmp (event, "rollback")) {
            json_t *rb = json_object_get (env->body, "rollback");
            printf ("%s: removed %zu object(s), restored %zu\n", bmq_body_str (env, "status"),
                    json_array_size (json_object_get (rb, "removed")), json_array_size (json_object_get (rb, "restored")));
            return CONTINUE;
        }
        if (st->json || !event || strcmp (event, "step")) return CONTINUE;
        json_t *d = json_object_get (env->body, "duration_ms");
        const char *error = bmq_body_str (env, "error"), *note = bmq_body_str (env, "note");      /* note: an asset's fallback */
        printf ("step %lld/%lld  %s  %s  %.1f ms%s%s%s%s\n", (long long) bmq_body_int (env, "step", 0),
                (long long) bmq_body_int (env, "total", 0), bmq_body_str (env, "operation") ? bmq_body_str (env, "operation") : "?",
                bmq_body_str (env, "status"), json_number_value (d), error ? "  " : "", error ? error : "", note ? "  note: " : "",
                note ? note : "");
        fflush (stdout);
        return CONTINUE;
    }
    case BMQ_MSG_EXECUTE_RESULT: {
        const char *status = bmq_body_str (env, "status");
        if (!st->json) {
            const char *error = bmq_body_str (env, "error");
            printf ("%s: %lld/%lld steps in %.1f ms%s%s\n", status, (long long) bmq_body_int (env, "steps_done", 0),
                    (long long) bmq_body_int (env, "steps_total", 0), json_number_value (json_object_get (env->body, "duration_ms")),
                    error ? " — " : "", error ? error : "");
            size_t i;
            json_t *n;
            json_array_foreach (json_object_get (env->body, "notes"), i, n)      /* what was done differently (issue 26) */
                if (json_is_string (n)) printf ("note: %s\n", json_string_value (n));
        }
        return status && !strcmp (status, "done") ? 0 : 1;
    }
    case BMQ_MSG_ERROR:
        if (!st->json) bmq_cli_say_error (env, "");
        return 1;
    default:
        return CONTINUE;
    }
}

int bmq_cli_chat (const bmq_cli_opts_t *opts, const char *prompt, char *recipe_out, size_t recipe_len)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    s_run_state_t st = { .json = opts->json, .recipe_out = recipe_out, .recipe_len = recipe_len };
    int code = bmq_cli_converse_cancellable (cfg, bmq_envelope_new (BMQ_MSG_CHAT_REQUEST, NULL,
                                                  json_pack ("{s:s, s:b, s:s?}", "prompt", prompt, "keep_partial", opts->keep_partial,
                                                             "target", opts->target)),
                           s_on_run, &st, "plan");
    bmq_config_destroy (&cfg);
    return code;
}

int bmq_cli_plan (const bmq_cli_opts_t *opts, const char *action, const char *file)
{
    json_error_t jerr;
    FILE *f = !strcmp (file, "-") ? stdin : fopen (file, "rb");
    if (!f) { fprintf (stderr, "blendmq: cannot read %s: %s\n", file, strerror (errno)); return 2; }
    char *buf = malloc (MAX_PLAN_FILE + 1);
    size_t n = fread (buf, 1, MAX_PLAN_FILE + 1, f);
    if (f != stdin) fclose (f);
    if (n > MAX_PLAN_FILE) { fprintf (stderr, "blendmq: %s is larger than %u bytes\n", file, MAX_PLAN_FILE); free (buf); return 2; }
    json_t *plan = json_loadb (buf, n, JSON_REJECT_DUPLICATES, &jerr);
    free (buf);
    if (!plan) { fprintf (stderr, "blendmq: %s:%d:%d: %s\n", file, jerr.line, jerr.column, jerr.text); return 2; }
    return bmq_cli_run (opts, plan, !strcmp (action, "validate"));
}

int bmq_cli_run (const bmq_cli_opts_t *opts, json_t *plan, bool validate)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) { json_decref (plan); return 2; }
    s_run_state_t st = { .json = opts->json, .validate_only = validate };
    bmq_envelope_t *req = bmq_envelope_new (validate ? BMQ_MSG_VALIDATE_REQUEST : BMQ_MSG_RUN_REQUEST, NULL,
                                            json_pack ("{s:o, s:b, s:s?}", "plan", plan, "keep_partial", opts->keep_partial,
                                                       "target", opts->target));
    int code = validate ? bmq_cli_converse (cfg, req, s_on_run, &st) : bmq_cli_converse_cancellable (cfg, req, s_on_run, &st, "plan");
    bmq_config_destroy (&cfg);
    return code;
}

/* ---- scene commands -------------------------------------------------------- */

typedef struct { const char *path; bool json; bool fingerprint; } s_scene_state_t;

static int s_write_file (const char *path, const unsigned char *data, size_t len)
{
    char tmp[1200];
    snprintf (tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen (tmp, "wb");
    if (!f) return -1;
    size_t w = fwrite (data, 1, len, f);
    if (fclose (f) != 0 || w != len) { remove (tmp); return -1; }
    return rename (tmp, path);
}

static int s_on_scene (const bmq_envelope_t *env, void *arg)
{
    s_scene_state_t *st = arg;
    if (env->type == BMQ_MSG_ERROR) {
        bmq_cli_say_error (env, "");
        return 1;
    }
    if (env->type != BMQ_MSG_SCENE_REPLY) return CONTINUE;
    if (st->path) {
        if (!env->blob_len || s_write_file (st->path, env->blob, env->blob_len)) {
            fprintf (stderr, "blendmq: cannot write %s (%zu bytes received)\n", st->path, env->blob_len);
            return 1;
        }
        if (st->json) {                     /* said, not silent (issue 29) */
            json_t *said = json_pack ("{s:s, s:I}", "path", st->path, "bytes", (json_int_t) env->blob_len);
            char *text = said ? json_dumps (said, JSON_COMPACT) : NULL;
            printf ("%s\n", text ? text : "{}");
            free (text);
            json_decref (said);
        }
        else printf ("wrote %s (%zu bytes)\n", st->path, env->blob_len);
        return 0;
    }
    const json_t *result = json_object_get (env->body, "result");
    const char *digest = json_string_value (json_object_get (result, "digest"));
    if (st->fingerprint && !st->json && digest) {       /* scene fingerprint: the digest, then what it covers */
        printf ("%s\n", digest);
        fprintf (stderr, "blendmq: %lld data blocks, computed in %.1f ms\n",
                 (long long) json_integer_value (json_object_get (result, "count")),
                 json_number_value (json_object_get (result, "ms")));
        return 0;
    }
    char *text = json_dumps (result, st->json ? JSON_COMPACT : JSON_INDENT (2));
    printf ("%s\n", text);
    free (text);
    return 0;
}

int bmq_cli_scene (const bmq_cli_opts_t *opts, const char *command, json_t *args, const char *path)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) { json_decref (args); return 2; }
    s_scene_state_t st = { .path = path, .json = opts->json, .fingerprint = !strcmp (command, "fingerprint") };
    json_t *body = json_pack ("{s:s, s:o, s:s?}", "command", command, "args", args ? args : json_object (), "target", opts->target);
    int code = bmq_cli_converse (cfg, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL, body), s_on_scene, &st);
    bmq_config_destroy (&cfg);
    return code;
}

/* ---- one status reply, for `up` waiting on health -------------------------- */

static int s_keep_status (const bmq_envelope_t *env, void *arg)
{
    if (env->type != BMQ_MSG_STATUS_REPLY) return CONTINUE;
    *(json_t **) arg = json_incref (env->body);
    return 0;
}

json_t *bmq_cli_fetch_status (bmq_config_t *cfg)
{
    json_t *status = NULL;
    bmq_cli_converse (cfg, bmq_envelope_new (BMQ_MSG_STATUS_REQUEST, NULL, NULL), s_keep_status, &status);
    return status;
}

/* ---- one question, one answer (inspect, capabilities, script) --------------- */

typedef struct { bmq_msg_type_t want; bmq_envelope_t *answer; } s_ask_state_t;

static int s_keep_answer (const bmq_envelope_t *env, void *arg)
{
    s_ask_state_t *st = arg;
    if (st->want != BMQ_MSG_UNKNOWN && env->type != st->want && env->type != BMQ_MSG_ERROR)
        return CONTINUE;                    /* e.g. progress events: the reply says how it ended */
    st->answer = bmq_envelope_reply (env, env->type, json_deep_copy (env->body));
    snprintf (st->answer->sender, sizeof st->answer->sender, "%s", env->sender);
    if (env->blob_len) bmq_envelope_set_blob (st->answer, env->blob, env->blob_len);
    return 0;
}

bmq_envelope_t *bmq_cli_ask (bmq_config_t *cfg, bmq_envelope_t *req, bmq_msg_type_t want)
{
    s_ask_state_t st = { .want = want };
    bmq_cli_converse (cfg, req, s_keep_answer, &st);
    return st.answer;
}

bmq_envelope_t *bmq_cli_ask_cancellable (bmq_config_t *cfg, bmq_envelope_t *req, bmq_msg_type_t want, const char *what, int *code)
{
    s_ask_state_t st = { .want = want };
    int rc = bmq_cli_converse_cancellable (cfg, req, s_keep_answer, &st, what);
    if (code) *code = rc;
    return st.answer;
}
