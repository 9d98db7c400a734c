/* cli_web — `blendmq web [--open]`: the address of the web page, with a token.
 *
 * Jupyter's convention: the URL carries the `web` client's token from the keys
 * dir (<run dir>/keys/web.token); the page exchanges it for an HttpOnly,
 * SameSite=Strict session cookie and drops it from the address bar. The port
 * is the running stack's, as `blendmq status` finds it. --open hands the URL
 * to xdg-open when there is one. */
#include "cli.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

int bmq_cli_read_token (const bmq_cli_opts_t *opts, const bmq_config_t *cfg, const char *name, char *token, size_t len)
{
    char dir[1100], path[1300];
    snprintf (path, sizeof path, "%s/%s.token", bmq_cli_keys_dir (opts, cfg, dir, sizeof dir), name);
    FILE *f = fopen (path, "r");
    token[0] = 0;
    if (!f) {
        fprintf (stderr, "blendmq: no token for '%s' in %s (make the keys with `blendmq keys init`, or `blendmq up`)\n", name, dir);
        return -1;
    }
    size_t n = fread (token, 1, len - 1, f);
    fclose (f);
    token[n] = 0;
    while (n && (token[n - 1] == '\n' || token[n - 1] == '\r' || token[n - 1] == ' ')) token[--n] = 0;
    return n ? 0 : -1;
}

/* The stack's HTTP base URL (http://host:port), reachable from this machine. */
int bmq_cli_http_base (bmq_config_t *cfg, char *url, size_t len)
{
    json_t *st = bmq_cli_fetch_status (cfg);
    const char *http = json_string_value (json_object_get (json_object_get (st, "endpoints"), "http"));
    if (!http) {
        json_decref (st);
        fprintf (stderr, "blendmq: the gateway does not answer or serves no HTTP (start the stack with `blendmq up`; "
                         "gateway.http_enabled)\n");
        return -1;
    }
    const char *port = strrchr (http, ':');
    /* a wildcard bind is reached on loopback from here */
    if (strstr (http, "//0.0.0.0:") || strstr (http, "//[::]:")) snprintf (url, len, "http://127.0.0.1%s", port);
    else snprintf (url, len, "%s", http);
    json_decref (st);
    return 0;
}

int bmq_cli_web (const bmq_cli_opts_t *opts)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    char base[400], token[300];
    int rc = 2;
    if (bmq_cli_read_token (opts, cfg, "web", token, sizeof token) == 0 && bmq_cli_http_base (cfg, base, sizeof base) == 0) {
        char url[800];
        snprintf (url, sizeof url, "%s/?token=%s", base, token);
        printf ("%s\n", url);
        fflush (stdout);
        rc = 0;
        if (opts->open_browser) {
            pid_t pid;
            posix_spawn_file_actions_t fa;
            posix_spawn_file_actions_init (&fa);
            posix_spawn_file_actions_addopen (&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
            posix_spawn_file_actions_addopen (&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
            char *argv[] = { "xdg-open", url, NULL };
            if (posix_spawnp (&pid, "xdg-open", &fa, NULL, argv, environ))
                fprintf (stderr, "blendmq: xdg-open is not available here: open the address above in a browser\n");
            posix_spawn_file_actions_destroy (&fa);
        }
        memset (url, 0, sizeof url);
    }
    memset (token, 0, sizeof token);
    bmq_config_destroy (&cfg);
    return rc;
}
