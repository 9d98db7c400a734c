/* cli_status — `blendmq status`: every service's health, as the gateway sees
 * it, and, when `up` supervises the stack, what its supervisor knows
 * (RUN/supervisor.json): uptimes, restarts, the last exit of each process. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* ---- the supervisor's view ----------------------------------------------------- */

/* Is pid still the supervisor of run_dir (not a reused pid)? */
static bool s_supervisor_alive (json_int_t pid, const char *run_dir)
{
    char path[64], cmd[4096];
    snprintf (path, sizeof path, "/proc/%lld/cmdline", (long long) pid);
    FILE *f = pid > 1 ? fopen (path, "r") : NULL;
    if (!f) return false;
    size_t n = fread (cmd, 1, sizeof cmd - 1, f);
    fclose (f);
    cmd[n] = 0;
    bool dir = false, supervise = false;
    for (size_t i = 0; i < n; i += strlen (cmd + i) + 1) {
        dir = dir || !strcmp (cmd + i, run_dir);
        supervise = supervise || !strcmp (cmd + i, "supervise");
    }
    return dir && supervise;
}

/* RUN/supervisor.json with "alive" (is its supervisor still running?) added;
 * NULL when there is none (a stack `up` did not start, or an older one) or
 * when `down` stopped the stack it describes. */
static json_t *s_supervisor_load (const bmq_cli_opts_t *opts)
{
    char path[1200];
    snprintf (path, sizeof path, "%s/supervisor.json", opts->run_dir);
    json_t *doc = json_load_file (path, 0, NULL);
    const char *state = json_string_value (json_object_get (doc, "state"));
    if (!json_is_object (doc) || !state || !strcmp (state, "stopped")) { json_decref (doc); return NULL; }
    bool alive = s_supervisor_alive (json_integer_value (json_object_get (doc, "pid")), opts->run_dir);
    json_object_set_new (doc, "alive", json_boolean (alive));
    /* uptimes as of now (the file changes only when a process does) */
    int64_t now = bmq_now_ms ();
    size_t i;
    json_t *c;
    json_array_foreach (json_object_get (doc, "children"), i, c) {
        const char *cs = json_string_value (json_object_get (c, "state"));
        bool running = alive && cs && !strcmp (cs, "running");
        json_object_set_new (c, "uptime_ms", json_integer (running ? now - json_integer_value (json_object_get (c, "started_at")) : 0));
    }
    return doc;
}

static json_t *s_child (const json_t *sup, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach (json_object_get (sup, "children"), i, c) {
        const char *n = json_string_value (json_object_get (c, "name"));
        if (n && !strcmp (n, name)) return c;
    }
    return NULL;
}

/* 45s, 2m13s, 3h04m, 2d03h */
static void s_duration (int64_t ms, char *buf, size_t len)
{
    int64_t s = ms < 0 ? 0 : ms / 1000;
    if (s < 60) snprintf (buf, len, "%llds", (long long) s);
    else if (s < 3600) snprintf (buf, len, "%lldm%02llds", (long long) (s / 60), (long long) (s % 60));
    else if (s < 86400) snprintf (buf, len, "%lldh%02lldm", (long long) (s / 3600), (long long) (s % 3600 / 60));
    else snprintf (buf, len, "%lldd%02lldh", (long long) (s / 86400), (long long) (s % 86400 / 3600));
}

/* "up 2m13s, 1 restart (last: killed by signal 9 (SIGKILL), 2m ago)" */
static void s_describe (const json_t *c, char *buf, size_t len)
{
    int64_t now = bmq_now_ms ();
    const char *state = json_string_value (json_object_get (c, "state"));
    const char *last = json_string_value (json_object_get (c, "last_exit"));
    json_int_t restarts = json_integer_value (json_object_get (c, "restarts"));
    char d[32], ago[32];
    size_t used = 0;
    if (state && !strcmp (state, "running")) {
        s_duration (now - json_integer_value (json_object_get (c, "started_at")), d, sizeof d);
        used = (size_t) snprintf (buf, len, "up %s", d);
    }
    else if (state && !strcmp (state, "restarting")) {
        json_int_t at = json_integer_value (json_object_get (c, "restart_at"));
        used = (size_t) snprintf (buf, len, "RESTARTING in %.1f s", at > now ? (double) (at - now) / 1000.0 : 0.0);
    }
    else used = (size_t) snprintf (buf, len, "%s", state ? state : "?");
    if (used >= len) return;
    if (restarts)
        used += (size_t) snprintf (buf + used, len - used, ", %lld restart%s", (long long) restarts, restarts == 1 ? "" : "s");
    if (last && used < len) {
        s_duration (now - json_integer_value (json_object_get (c, "last_exit_at")), ago, sizeof ago);
        snprintf (buf + used, len - used, " (last: %s, %s ago)", last, ago);
    }
}

/* The supervisor's words for status line `name`, or "". The gateway's names
 * are the children's but for the executors of more Blenders: its
 * executor:blender-K is child executor-K (written to `child`). */
static void s_supervised (const json_t *sup, const char *name, char *child, size_t child_len, char *buf, size_t len)
{
    if (!strncmp (name, "executor:blender-", 17)) snprintf (child, child_len, "executor-%s", name + 17);
    else snprintf (child, child_len, "%s", name);
    const json_t *c = sup ? s_child (sup, child) : NULL;
    buf[0] = 0;
    if (c) s_describe (c, buf, len);
}

/* The gateway counts validator workers; the supervisor knows each process:
 * one line each under the validator line. */
static void s_print_validators (const json_t *sup, json_t *shown)
{
    size_t i;
    json_t *c;
    char line[512];
    json_array_foreach (json_object_get (sup, "children"), i, c) {
        const char *name = json_string_value (json_object_get (c, "name"));
        if (!name || strncmp (name, "validator-", 10)) continue;
        s_describe (c, line, sizeof line);
        printf ("  %-12s %s\n", name, line);
        json_object_set_new (shown, name, json_true ());
    }
}

/* Processes the gateway does not list (the Blenders; everything when the
 * gateway does not answer), and the supervisor itself. */
static void s_print_rest (const json_t *sup, const json_t *shown)
{
    size_t i;
    json_t *c;
    char line[512], d[32];
    json_array_foreach (json_object_get (sup, "children"), i, c) {
        const char *name = json_string_value (json_object_get (c, "name"));
        const char *state = json_string_value (json_object_get (c, "state"));
        if (!name || json_object_get (shown, name)) continue;
        s_describe (c, line, sizeof line);
        bool running = state && !strcmp (state, "running");
        json_int_t port = json_integer_value (json_object_get (c, "port"));
        char key[96];
        snprintf (key, sizeof key, "busy:%s", name);
        if (running && json_object_get (shown, key))       /* its executor hears nothing from it (issue 23) */
            printf ("%-10s busy  (its main thread has not answered for more than two heartbeats)  %s\n", name, line);
        else if (json_object_get (c, "socket"))
            printf ("%-10s %s  (%s)  %s\n", name, running ? "ok" : "DOWN",
                    json_is_true (json_object_get (c, "confined")) ? "confined" : "NOT confined", line);
        else if (port) printf ("%-10s %s  (port %lld)  %s\n", name, running ? "ok" : "DOWN", (long long) port, line);
        else printf ("%-10s %s  %s\n", name, running ? "running" : "DOWN", line);
    }
    s_duration (bmq_now_ms () - json_integer_value (json_object_get (sup, "started_at")), d, sizeof d);
    if (json_is_true (json_object_get (sup, "alive")))
        printf ("supervisor pid %lld, up %s: restarts what exits\n", (long long) json_integer_value (json_object_get (sup, "pid")), d);
    else
        printf ("supervisor NOT RUNNING (pid %lld): nothing is restarted; blendmq down, then blendmq up, to supervise again\n",
                (long long) json_integer_value (json_object_get (sup, "pid")));
}

/* ---- status ---------------------------------------------------------------- */

typedef struct {
    bool    json;
    json_t *sup;                 /* the supervisor's view, or NULL */
} s_status_t;

static void s_print_json (const bmq_envelope_t *env, const json_t *sup)
{
    json_t *out = json_copy (env->body);
    if (sup) json_object_set (out, "supervisor", (json_t *) sup);
    char *text = json_dumps (out, JSON_COMPACT);
    printf ("%s\n", text);
    free (text);
    json_decref (out);
}

static int s_on_status (const bmq_envelope_t *env, void *arg)
{
    s_status_t *st = arg;
    if (env->type != BMQ_MSG_STATUS_REPLY) return BMQ_CLI_CONTINUE;
    if (st->json) s_print_json (env, st->sup);
    bool all = true;
    char extra[512];
    json_t *shown = json_object ();           /* supervised names already on a line */
    char child[64];
    s_supervised (st->sup, "gateway", child, sizeof child, extra, sizeof extra);
    json_object_set_new (shown, child, json_true ());
    if (!st->json) printf ("gateway    ok%s%s\n", *extra ? "  " : "", extra);
    size_t i;
    json_t *s;
    json_array_foreach (json_object_get (env->body, "services"), i, s) {
        bool alive = json_is_true (json_object_get (s, "alive"));
        all = all && alive;
        if (st->json) continue;
        const char *name = json_string_value (json_object_get (s, "name"));
        const char *state = json_string_value (json_object_get (s, "state"));
        s_supervised (st->sup, name, child, sizeof child, extra, sizeof extra);
        json_object_set_new (shown, child, json_true ());
        if (state && !strcmp (state, "blender busy")) {     /* executor → its Blender: blender, blender-K */
            char key[96];
            snprintf (key, sizeof key, "busy:%s", !strncmp (name, "executor:", 9) ? name + 9 : "blender");
            json_object_set_new (shown, key, json_true ());
        }
        if (!strcmp (name, "validator")) {
            printf ("%-10s %s  (%lld workers, %lld busy)\n", name, alive ? "ok" : "DOWN",
                    (long long) json_integer_value (json_object_get (s, "workers")),
                    (long long) json_integer_value (json_object_get (s, "busy")));
            s_print_validators (st->sup, shown);
        }
        else if (!strcmp (name, "audit") && state && !strncmp (state, "tampered", 8)) {
            /* the audit's chain failed its incremental verification: never "ok" */
            printf ("%-10s TAMPERED  (%s; blendmq audit verify)%s%s\n", name, state, *extra ? "  " : "", extra);
            all = false;
        }
        else {      /* an executor names its Blender's version (issue 30; --json: blender_version) */
            const char *bv = json_string_value (json_object_get (s, "blender_version"));
            printf ("%-10s %s  (%s%s%s)%s%s\n", name, alive ? "ok" : "DOWN", state ? state : "", bv ? ", Blender " : "",
                    bv ? bv : "", *extra ? "  " : "", extra);
        }
    }
    if (!st->json && st->sup) s_print_rest (st->sup, shown);
    json_decref (shown);
    if (!st->json) printf ("endpoint   %s\nevents     %s\n", json_string_value (json_object_get (json_object_get (env->body, "endpoints"), "gateway")),
                           json_string_value (json_object_get (json_object_get (env->body, "endpoints"), "events")));
    const char *http = json_string_value (json_object_get (json_object_get (env->body, "endpoints"), "http"));
    if (!st->json && http)
        printf ("http       %s  (REST /api, live progress /api/events)\nmcp        %s\n", http,
                json_string_value (json_object_get (json_object_get (env->body, "endpoints"), "mcp")));
    return all ? 0 : 1;
}

int bmq_cli_status (const bmq_cli_opts_t *opts)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    s_status_t st = { .json = opts->json, .sup = s_supervisor_load (opts) };
    int code = bmq_cli_converse (cfg, bmq_envelope_new (BMQ_MSG_STATUS_REQUEST, NULL, NULL), s_on_status, &st);
    /* no gateway to ask (it may be restarting): say what the supervisor knows */
    if (code == 2 && st.sup && !st.json) s_print_rest (st.sup, NULL);
    /* a process the supervisor stopped for its configuration: its own words, not a silent "down" (issue 29) */
    if (!st.json && bmq_cli_config_refusal (opts->run_dir) && code == 0) code = 1;
    json_decref (st.sup);
    bmq_config_destroy (&cfg);
    return code;
}
