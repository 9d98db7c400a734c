/* e2e_util — helpers for end-to-end tests. */
#include "e2e_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *e2e_bin (const char *name)
{
    static char path[4][1024];
    static int next;
    char *p = path[next++ % 4];
    snprintf (p, 1024, "%s/%s", BMQ_BIN_DIR, name);
    return p;
}

char *e2e_run (const char *cmd, int *code)
{
    FILE *f = popen (cmd, "r");
    if (!f) { *code = -1; return strdup (""); }
    size_t cap = 4096, len = 0;
    char *buf = malloc (cap);
    size_t n;
    while ((n = fread (buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 1024) buf = realloc (buf, cap *= 2);
    }
    buf[len] = 0;
    int st = pclose (f);
    *code = WIFEXITED (st) ? WEXITSTATUS (st) : -1;
    return buf;
}

json_t *e2e_json_lines (const char *text)
{
    json_t *out = json_array ();
    const char *p = text;
    while (*p) {
        const char *nl = strchr (p, '\n');
        size_t len = nl ? (size_t) (nl - p) : strlen (p);
        if (len && *p == '{') {
            json_t *v = json_loadb (p, len, 0, NULL);
            if (v) json_array_append_new (out, v);
        }
        p += len + (nl ? 1 : 0);
    }
    return out;
}

json_t *e2e_blendmq_json (const char *run_dir, const char *args, int *code)
{
    char cmd[4096];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' --json %s", e2e_bin ("blendmq"), run_dir, args);
    char *out = e2e_run (cmd, code);
    json_t *lines = e2e_json_lines (out);
    free (out);
    return lines;
}

int e2e_pid (const char *run_dir, const char *name)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/pids/%s.pid", run_dir, name);
    FILE *f = fopen (path, "r");
    int pid = -1;
    if (f) { if (fscanf (f, "%d", &pid) != 1) pid = -1; fclose (f); }
    return pid;
}

bool e2e_wait_healthy (const char *run_dir, bool blender, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 250) {
        int code;
        json_t *lines = e2e_blendmq_json (run_dir, "status", &code);
        json_t *st = json_array_get (lines, 0);
        bool ok = code == 0 && st;
        size_t i;
        json_t *s;
        json_array_foreach (json_object_get (st, "services"), i, s) {
            const char *name = json_string_value (json_object_get (s, "name"));
            const char *state = json_string_value (json_object_get (s, "state"));
            if (blender && name && !strcmp (name, "executor") && (!state || strcmp (state, "blender connected"))) ok = false;
        }
        json_decref (lines);
        if (ok) return true;
        usleep (250000);
    }
    return false;
}

const char *e2e_token (const char *run_dir, const char *name)
{
    static char token[256];
    char path[1024];
    snprintf (path, sizeof path, "%s/keys/%s.token", run_dir, name);
    token[0] = 0;
    FILE *f = fopen (path, "r");
    if (f) {
        if (!fgets (token, sizeof token, f)) token[0] = 0;
        fclose (f);
    }
    token[strcspn (token, "\r\n")] = 0;
    return token;
}
