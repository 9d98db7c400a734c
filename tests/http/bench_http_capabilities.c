/* bench http_capabilities — requests per second of GET /api/mcp/capabilities
 * on loopback, measured by wrk (a standard HTTP load tool), against the
 * gateway's HTTP server answering from the real palette (proto/palette.yaml,
 * published by the validator's own code) through a gateway stand-in.
 * metric rps: the palette cache on (gateway.capabilities_cache_ms, default);
 * metric rps_uncached: every request goes over the bus to the gateway side.
 *
 * Timed by wrk (its "Requests/sec": completed requests over its run, 2
 * threads, 32 keep-alive connections) with the bearer token every route
 * requires (the server's admin token here). Any non-2xx answer fails the
 * bench: a figure of refusals is no figure. Exit 77 when wrk is missing.
 *
 *   bench_http_capabilities [seconds]     (default 5, or BENCH_SECONDS; 1..60) */
#include "fake_gateway.h"
#include "http_server.h"
#include "palette.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GW "inproc://bench-http-caps"
#define TOKEN "bench-http-capabilities-token-0123456789"

static double s_wrk (const char *url, int connections, int seconds)
{
    char cmd[512];
    snprintf (cmd, sizeof cmd, "wrk -t2 -c%d -d%ds -H 'Authorization: Bearer %s' '%s' 2>&1", connections, seconds, TOKEN, url);
    FILE *p = popen (cmd, "r");
    if (!p) return -1;
    char line[512];
    double rps = -1;
    long non2xx = 0, errors = 0;
    while (fgets (line, sizeof line, p)) {
        if (!strncmp (line, "Requests/sec:", 13)) rps = atof (line + 13);
        if (strstr (line, "Non-2xx")) non2xx = atol (strchr (line, ':') + 1);
        if (strstr (line, "Socket errors")) errors = 1;
    }
    pclose (p);
    if (non2xx || errors) fprintf (stderr, "bench_http_capabilities: %ld non-2xx answers%s\n", non2xx, errors ? ", socket errors" : "");
    return non2xx || errors ? -1 : rps;
}

static int s_run (json_t *palette, int cache_ms, const char *metric, int seconds)
{
    char endpoint[96];          /* one endpoint per run: the last one's may not be released yet */
    snprintf (endpoint, sizeof endpoint, "%s-%s", GW, metric);
    fake_gateway_t *gw = fake_gateway_new (endpoint, json_incref (palette));
    bmq_http_options_t o = { .bind = "127.0.0.1", .port = 0, .token = TOKEN, .max_body = 1u << 20, .max_connections = 512,
                             .event_buffer = 64, .request_timeout_ms = 5000, .capabilities_cache_ms = cache_ms, .gateway_endpoint = endpoint };
    char err[256], url[256];
    bmq_http_server_t *srv = gw ? bmq_http_server_new (&o, err, sizeof err) : NULL;
    if (!srv) { fprintf (stderr, "bench_http_capabilities: %s\n", gw ? err : "no fake gateway"); fake_gateway_destroy (&gw); return 1; }
    fake_gateway_attach (gw, srv);
    snprintf (url, sizeof url, "%s/api/mcp/capabilities", bmq_http_server_url (srv));
    double rps = s_wrk (url, 32, seconds);
    fake_gateway_attach (gw, NULL);
    bmq_http_server_destroy (&srv);
    fake_gateway_destroy (&gw);
    if (rps < 0) { fprintf (stderr, "bench_http_capabilities: wrk failed or saw errors\n"); return 1; }
    printf ("{\"bench\":\"http_capabilities\",\"metric\":\"%s\",\"value\":%.0f,\"unit\":\"req/s\",\"tool\":\"wrk -t2 -c32 -d%ds\","
            "\"timed\":\"wrk: completed 2xx requests / its run\"}\n", metric, rps, seconds);
    fflush (stdout);
    return 0;
}

int main (int argc, char **argv)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    if (system ("command -v wrk >/dev/null 2>&1")) {
        fprintf (stderr, "bench http_capabilities: skipped: wrk is not installed (deploy/install-deps.sh --test; apt-get install wrk)\n");
        return 77;
    }
    char path[1200], err[512];
    snprintf (path, sizeof path, "%s/proto/palette.yaml", bmq_data_dir ());
    bmq_palette_t *pal = bmq_palette_load (path, err, sizeof err);
    if (!pal) { fprintf (stderr, "bench_http_capabilities: %s\n", err); return 1; }
    json_t *palette = bmq_palette_capabilities (pal, false);
    bmq_palette_destroy (&pal);
    const char *arg = argc > 1 ? argv[1] : getenv ("BENCH_SECONDS");
    int seconds = arg && *arg ? atoi (arg) : 5;
    if (seconds < 1 || seconds > 60) { fprintf (stderr, "usage: bench_http_capabilities [seconds 1..60]\n"); return 2; }
    int rc = s_run (palette, 2000, "rps", seconds) || s_run (palette, 0, "rps_uncached", seconds);
    json_decref (palette);
    return rc;
}
