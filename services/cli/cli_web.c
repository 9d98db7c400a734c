/* cli_web — `blendmq web [--open]`: the address of the web page, with a token.
 *
 * Jupyter's convention: the URL carries the `web` client's token from the keys
 * dir (<run dir>/keys/web.token); the page exchanges it for a __Host- session
 * cookie and drops it from the address bar. The port is the running stack's,
 * as `blendmq status` finds it. --open hands $BROWSER (else xdg-open) a
 * one-time code instead (issue 24: a token in argv is readable with ps). */
#include "cli.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* curl's body, bounded */
typedef struct { char data[2048]; size_t len; } s_buf_t;

static size_t s_collect (char *ptr, size_t size, size_t n, void *arg)
{
    s_buf_t *b = arg;
    size_t got = size * n, room = sizeof b->data - 1 - b->len;
    memcpy (b->data + b->len, ptr, got < room ? got : room);
    b->len += got < room ? got : room;
    b->data[b->len] = 0;
    return got;
}

/* A one-time sign-in code for the page (POST /api/web/login-code with the
 * token in a header): its path ("/?code=…") in path. 0 / -1 (said why). */
static int s_login_code (const char *base, const char *token, char *path, size_t len)
{
    CURL *c = curl_easy_init ();
    if (!c) return -1;
    char url[600], auth[400];
    snprintf (url, sizeof url, "%s/api/web/login-code", base);
    snprintf (auth, sizeof auth, "Authorization: Bearer %s", token);
    struct curl_slist *h = curl_slist_append (NULL, "Content-Type: application/json");
    h = curl_slist_append (h, auth);
    s_buf_t body = { .len = 0 };
    curl_easy_setopt (c, CURLOPT_URL, url);
    curl_easy_setopt (c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt (c, CURLOPT_POSTFIELDS, "{}");
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, s_collect);
    curl_easy_setopt (c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt (c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt (c, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform (c);
    long status = 0;
    curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all (h);
    curl_easy_cleanup (c);
    memset (auth, 0, sizeof auth);
    json_t *answer = rc == CURLE_OK ? json_loads (body.data, 0, NULL) : NULL;
    const char *p = json_string_value (json_object_get (answer, "path"));
    bool ok = status == 201 && p && !strncmp (p, "/?code=", 7) && strlen (p) < len;
    if (ok) snprintf (path, len, "%s", p);
    else fprintf (stderr, "blendmq: the gateway gave no sign-in code (%s, HTTP %ld)\n",
                  rc != CURLE_OK ? curl_easy_strerror (rc) : "refused", status);
    json_decref (answer);
    return ok ? 0 : -1;
}

/* Hand `url` to the browser: $BROWSER when set, else xdg-open. 0 when it
 * started and exited 0 (xdg-open's own verdict) or is still running after 5 s
 * (a browser in the foreground), -1 otherwise. */
static int s_open (const char *url)
{
    const char *browser = getenv ("BROWSER") && *getenv ("BROWSER") ? getenv ("BROWSER") : "xdg-open";
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_addopen (&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen (&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char *argv[] = { (char *) browser, (char *) url, NULL };
    int rc = posix_spawnp (&pid, browser, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy (&fa);
    if (rc) {
        fprintf (stderr, "blendmq: %s is not available here: no browser was opened (run `blendmq web` and open the address "
                         "it prints)\n", browser);
        return -1;
    }
    /* xdg-open hands the URL over and exits (its status says whether a browser took it); a $BROWSER
     * that is the browser itself keeps running: still there after a few seconds is "opened" */
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 100 && !(done = waitpid (pid, &status, WNOHANG)); i++) usleep (50 * 1000);
    if (!done) return 0;
    if (done < 0 || !WIFEXITED (status) || WEXITSTATUS (status)) {
        fprintf (stderr, "blendmq: %s could not open a browser (exit %d): run `blendmq web` and open the address it prints\n",
                 browser, WIFEXITED (status) ? WEXITSTATUS (status) : -1);
        return -1;
    }
    return 0;
}

/* `blendmq web` prints the page's address with the `web` token (to this
 * terminal only); `blendmq web --open` never puts the token in any process's
 * arguments (ps shows them to every local user): it opens a one-time code
 * that expires within a minute, and exits non-zero when no browser opened. */
int bmq_cli_web (const bmq_cli_opts_t *opts)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    char base[400], token[300];
    int rc = 2;
    if (bmq_cli_read_token (opts, cfg, "web", token, sizeof token) == 0 && bmq_cli_http_base (cfg, base, sizeof base) == 0) {
        char url[800], path[200];
        if (!opts->open_browser) {
            snprintf (url, sizeof url, "%s/?token=%s", base, token);
            printf ("%s\n", url);
            rc = 0;
        }
        else if (s_login_code (base, token, path, sizeof path) == 0) {
            snprintf (url, sizeof url, "%s%s", base, path);
            printf ("%s/ (opening it with a one-time sign-in code, good for a minute)\n", base);
            fflush (stdout);
            rc = s_open (url) ? 1 : 0;
        }
        else rc = 1;
        fflush (stdout);
        memset (url, 0, sizeof url);
    }
    memset (token, 0, sizeof token);
    bmq_config_destroy (&cfg);
    return rc;
}
