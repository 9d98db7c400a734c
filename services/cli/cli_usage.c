/* cli_usage — a mistake on the command line gets one exact line, not the
 * whole help (issue 29): an unknown command or subcommand names itself and
 * the closest one ("unknown command 'chta' (did you mean 'chat'?)"), then
 * the short usage of what was meant; an empty prompt is "say what to build". */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#define MAX_PROMPT_BYTES 16000      /* as MCP's chat tool (common/mcp/mcp_call.c) */

static const char *const s_commands[] = {
    "up", "down", "status", "chat", "demo", "plan", "script", "scene", "watch", "web", "mcp", "capabilities", "inspect",
    "assets", "audit", "keys", "cancel", "config", "supervise", "blender-run", NULL
};

/* Each command's words; NULL: it takes no subcommand word of its own. */
static const char *const *s_subcommands (const char *cmd)
{
    static const char *const plan[] = { "validate", "run", NULL };
    static const char *const script[] = { "validate", "sandbox", "apply", "list", NULL };
    static const char *const scene[] = { "info", "save", "render", "reset", "fingerprint", "look", NULL };
    static const char *const audit[] = { "list", "show", "export", "verify", NULL };
    static const char *const assets[] = { "search", "import", "generate", NULL };
    static const char *const keys[] = { "init", "add-client", "revoke", "list", NULL };
    static const char *const config[] = { "check", "keys", NULL };
    return !strcmp (cmd, "plan") ? plan : !strcmp (cmd, "script") ? script : !strcmp (cmd, "scene") ? scene
         : !strcmp (cmd, "audit") ? audit : !strcmp (cmd, "assets") ? assets : !strcmp (cmd, "keys") ? keys
         : !strcmp (cmd, "config") ? config : NULL;
}

bool bmq_cli_command_known (const char *cmd)
{
    for (int i = 0; s_commands[i]; i++)
        if (!strcmp (s_commands[i], cmd)) return true;
    return false;
}

/* Optimal string alignment distance (a swap of two neighbours costs 1: "chta"). */
static int s_distance (const char *a, const char *b)
{
    size_t n = strlen (a), m = strlen (b);
    if (n > 40 || m > 40) return 99;
    int d[41][41];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int) i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int) j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

/* The closest of `words` to `word`, when close enough to be a typo (or a prefix). */
static const char *s_closest (const char *word, const char *const *words)
{
    const char *best = NULL;
    int best_d = 99;
    for (int i = 0; words[i]; i++) {
        int d = s_distance (word, words[i]);
        if (strlen (word) >= 2 && !strncmp (words[i], word, strlen (word))) d = 1;
        if (d < best_d) { best_d = d; best = words[i]; }
    }
    size_t len = strlen (word);
    return best && best_d <= (len <= 3 ? 1 : 2) && best_d < (int) len ? best : NULL;
}

/* The lines of the full usage that describe `cmd` (its own, and their
 * continuation lines), or the command list when cmd is NULL. */
static void s_short_usage (const char *cmd)
{
    if (!cmd) {
        fprintf (stderr, "usage: blendmq [--run-dir DIR] [--config FILE] [--json] COMMAND ...\n  commands:");
        for (int i = 0; s_commands[i]; i++)
            if (strcmp (s_commands[i], "supervise") && strcmp (s_commands[i], "blender-run")) fprintf (stderr, " %s", s_commands[i]);
        fprintf (stderr, "\n  (blendmq --help: what each does)\n");
        return;
    }
    const char *text = bmq_cli_usage_text ();
    size_t len = strlen (cmd);
    bool inside = false, any = false;
    for (const char *line = text; *line; ) {
        const char *end = strchr (line, '\n');
        size_t n = end ? (size_t) (end - line) : strlen (line);
        bool mine = n > len + 2 && !strncmp (line, "  ", 2) && !strncmp (line + 2, cmd, len) && (line[2 + len] == ' ' || line[2 + len] == '\n');
        bool continued = n > 20 && !strncmp (line, "                    ", 20);
        if (mine) inside = true;
        else if (!continued) inside = false;
        if (inside) {
            if (!any) fprintf (stderr, "usage: blendmq [--run-dir DIR] ...\n");
            fprintf (stderr, "%.*s\n", (int) n, line);
            any = true;
        }
        line = end ? end + 1 : line + n;
    }
    if (!any) s_short_usage (NULL);
}

int bmq_cli_unknown_command (const char *cmd, const char *sub)
{
    if (!cmd) {                             /* the first word is no command */
        const char *near = s_closest (sub, s_commands);
        if (near) fprintf (stderr, "blendmq: unknown command '%.80s' (did you mean '%s'?)\n", sub, near);
        else fprintf (stderr, "blendmq: unknown command '%.80s'\n", sub);
        s_short_usage (near);
        return 2;
    }
    const char *const *subs = s_subcommands (cmd);
    bool sub_known = false;
    for (int i = 0; subs && sub && subs[i]; i++) sub_known |= !strcmp (subs[i], sub);
    if (subs && sub && !sub_known) {
        const char *near = s_closest (sub, subs);
        if (near) fprintf (stderr, "blendmq: unknown command '%s %.80s' (did you mean '%s %s'?)\n", cmd, sub, cmd, near);
        else fprintf (stderr, "blendmq: unknown command '%s %.80s'\n", cmd, sub);
    }
    else if (subs && !sub) {
        fprintf (stderr, "blendmq: '%s' needs one of:", cmd);
        for (int i = 0; subs[i]; i++) fprintf (stderr, " %s", subs[i]);
        fprintf (stderr, "\n");
    }
    else fprintf (stderr, "blendmq: wrong arguments for '%s%s%s'\n", cmd, sub_known ? " " : "", sub_known ? sub : "");
    s_short_usage (cmd);
    return 2;
}

int bmq_cli_prompt_refused (const char *prompt, const char *cmd)
{
    const char *p = prompt ? prompt : "";
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) {
        fprintf (stderr, "blendmq: say what to build, e.g. blendmq %s \"a red chair\"\n", cmd);
        return 2;
    }
    if (strlen (prompt) > MAX_PROMPT_BYTES) {
        fprintf (stderr, "blendmq: the prompt is %zu bytes; at most %d\n", strlen (prompt), MAX_PROMPT_BYTES);
        return 2;
    }
    return 0;
}
