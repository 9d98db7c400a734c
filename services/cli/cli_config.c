/* cli_config — `blendmq config check [FILE]` (issue 29): the verdicts `up`
 * and every service give a configuration before anything starts, without
 * starting anything: every key, type, choice and range, and YAML syntax, each
 * problem at its line and column ("FILE:LINE:COL: section.key: why").
 * FILE: the argument, else --config, else RUN_DIR/blendmq.yaml, else the
 * built-in defaults. Exit 0 valid, 1 not, 2 usage. `config keys`: every key as
 * common/config_keys.def declares it (a Markdown table; --json: a line each). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROBLEMS_TEXT 16384

/* A Markdown table cell: its own '|' escaped. */
static void s_cell (const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '|') putchar ('\\');
        putchar (*p);
    }
}

/* `config keys`: the declaration as a Markdown table (--json: one object a line). */
static int s_keys (const bmq_cli_opts_t *opts)
{
    static const char *const types[] = { "string", "integer", "bool", "choice", "mapping" };   /* bmq_config_type_t */
    size_t count;
    const bmq_config_key_t *keys = bmq_config_keys (&count);
    if (!opts->json) printf ("| key | type | default | allowed | what it is |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < count; i++) {
        const bmq_config_key_t *k = &keys[i];
        char allowed[300] = "";
        if (k->type == BMQ_CONFIG_INT) snprintf (allowed, sizeof allowed, "%lld..%lld", (long long) k->min, (long long) k->max);
        else if (k->type == BMQ_CONFIG_ENUM) snprintf (allowed, sizeof allowed, "%s", k->choices);
        if (opts->json) {
            json_t *line = json_pack ("{s:s, s:s, s:s, s:s, s:s}", "key", k->name, "type", types[k->type], "default", k->def,
                                      "allowed", allowed, "doc", k->doc);
            char *text = line ? json_dumps (line, JSON_COMPACT) : NULL;
            printf ("%s\n", text ? text : "{}");
            free (text);
            json_decref (line);
        }
        else {
            printf ("| `%s` | %s | `%s` | ", k->name, types[k->type], k->def);
            s_cell (allowed);
            printf (" | ");
            s_cell (k->doc);
            printf (" |\n");
        }
    }
    return 0;
}

int bmq_cli_config_command (const bmq_cli_opts_t *opts, int nwords, const char **words)
{
    if (nwords == 1 && !strcmp (words[0], "keys")) return s_keys (opts);
    if (nwords < 1 || strcmp (words[0], "check") || nwords > 2)
        return bmq_cli_unknown_command ("config", nwords ? words[0] : NULL);
    char path[1200];
    const char *file = nwords == 2 ? words[1] : opts->config_path;
    if (!file) {
        snprintf (path, sizeof path, "%s/blendmq.yaml", opts->run_dir);
        if (zsys_file_exists (path)) file = path;
    }
    static char err[MAX_PROBLEMS_TEXT];
    err[0] = 0;
    bmq_config_t *cfg = bmq_config_load (file, err, sizeof err);
    if (cfg) {
        size_t count;
        bmq_config_keys (&count);
        printf ("%s: valid (%zu keys declared)\n", file ? file : "built-in defaults", count);
        bmq_config_destroy (&cfg);
        return 0;
    }
    bmq_cli_say_config_problems (err, NULL);
    return 1;
}

void bmq_cli_say_config_problems (const char *err, const char *after)
{
    int n = 1;
    for (const char *p = err; *p; p++) n += *p == '\n';
    fprintf (stderr, "blendmq: %d configuration problem%s%s%s:\n", n, n == 1 ? "" : "s", after ? "; " : "", after ? after : "");
    for (const char *line = err; *line; ) {
        const char *end = strchr (line, '\n');
        int len = end ? (int) (end - line) : (int) strlen (line);
        fprintf (stderr, "  %.*s\n", len, line);
        line += len + (end ? 1 : 0);
    }
}

/* The last "configuration problem" report in a log, with its lines, to stderr. */
static void s_print_refusal (const char *log)
{
    FILE *f = fopen (log, "r");
    if (!f) return;
    static char text[65536];
    size_t n = 0;
    if (fseek (f, 0, SEEK_END) == 0) {
        long size = ftell (f);
        fseek (f, size > (long) sizeof text - 1 ? size - (long) sizeof text + 1 : 0, SEEK_SET);
    }
    n = fread (text, 1, sizeof text - 1, f);
    fclose (f);
    text[n] = 0;
    char *at = NULL;
    for (char *p = strstr (text, "configuration problem"); p; p = strstr (p + 1, "configuration problem")) at = p;
    if (!at) return;
    while (at > text && at[-1] != '\n') at--;
    for (char *line = strchr (at, '\n'); line && line[1] && strncmp (line + 1, "blendmq-", 8); line = strchr (line + 1, '\n')) {
        char *end = strchr (line + 1, '\n');
        fprintf (stderr, "  %.*s\n", end ? (int) (end - line - 1) : (int) strlen (line + 1), line + 1);
        if (!end) break;
    }
}

int bmq_cli_config_refusal (const char *run_dir)
{
    char path[1200];
    snprintf (path, sizeof path, "%s/supervisor.json", run_dir);
    json_t *doc = json_load_file (path, 0, NULL);
    size_t i;
    json_t *c;
    int refused = 0;
    json_array_foreach (json_object_get (doc, "children"), i, c) {
        const char *name = json_string_value (json_object_get (c, "name"));
        const char *state = json_string_value (json_object_get (c, "state"));
        const char *last = json_string_value (json_object_get (c, "last_exit"));
        char want[64];
        snprintf (want, sizeof want, "exited with code %d", BMQ_EXIT_CONFIG);
        if (!name || !state || !last || strcmp (state, "stopped") || strcmp (last, want)) continue;
        fprintf (stderr, "blendmq: %s cannot start: its configuration is not valid (not started again):\n", name);
        snprintf (path, sizeof path, "%s/logs/%s.log", run_dir, name);
        s_print_refusal (path);
        refused++;
    }
    json_decref (doc);
    return refused;
}
