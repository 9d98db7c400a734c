/* bench mcp_tools_list_latency — round trip of an MCP tools/list request over
 * Streamable HTTP (one keep-alive connection, an initialized session, the
 * bearer token every route requires), as a client sees it: p50_ms and p99_ms
 * over 2,000 requests after 200 warm-ups.
 *
 * Timed (CLOCK_MONOTONIC): from just before curl_easy_perform sends the POST
 * to its return with the whole answer read. Any request that fails, answers
 * other than 200 or with less than 1,000 bytes fails the bench (reasons on
 * stderr).
 *
 *   bench_mcp_tools_list_latency [requests]     (default 2000, 10..100000) */
#include "fake_gateway.h"
#include "http_server.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GW "inproc://bench-mcp-list"
#define TOKEN "bench-mcp-tools-list-token-0123456789"

static size_t s_sink (char *p, size_t size, size_t n, void *arg)
{
    size_t *bytes = arg;
    *bytes += size * n;
    return size * n;
}

static char s_sid[64];
static size_t s_header (char *p, size_t size, size_t n, void *arg)
{
    if (n * size > 16 && !strncasecmp (p, "Mcp-Session-Id:", 15)) {
        snprintf (s_sid, sizeof s_sid, "%.*s", (int) strcspn (p + 16, "\r\n"), p + 16);
    }
    return size * n;
}

static int s_compare (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main (int argc, char **argv)
{
    int N = argc > 1 ? atoi (argv[1]) : 2000;
    if (N < 10 || N > 100000) { fprintf (stderr, "usage: bench_mcp_tools_list_latency [requests 10..100000]\n"); return 2; }
    zsys_init ();
    zsys_set_logstream (NULL);
    curl_global_init (CURL_GLOBAL_DEFAULT);
    fake_gateway_t *gw = fake_gateway_new (GW, NULL);
    bmq_http_options_t o = { .bind = "127.0.0.1", .port = 0, .token = TOKEN, .max_body = 1u << 20, .max_connections = 64,
                             .event_buffer = 64, .request_timeout_ms = 5000, .capabilities_cache_ms = 2000, .gateway_endpoint = GW };
    char err[256], url[256];
    bmq_http_server_t *srv = bmq_http_server_new (&o, err, sizeof err);
    if (!srv) { fprintf (stderr, "bench: %s\n", err); return 1; }
    snprintf (url, sizeof url, "%s/mcp", bmq_http_server_url (srv));
    CURL *c = curl_easy_init ();
    size_t bytes = 0;
    struct curl_slist *h = curl_slist_append (NULL, "Content-Type: application/json");
    h = curl_slist_append (h, "Accept: application/json, text/event-stream");
    h = curl_slist_append (h, "Authorization: Bearer " TOKEN);
    curl_easy_setopt (c, CURLOPT_URL, url);
    curl_easy_setopt (c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, s_sink);
    curl_easy_setopt (c, CURLOPT_WRITEDATA, &bytes);
    curl_easy_setopt (c, CURLOPT_HEADERFUNCTION, s_header);
    curl_easy_setopt (c, CURLOPT_POSTFIELDS, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                      "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}");
    long init_status = 0;
    CURLcode init = curl_easy_perform (c);
    curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &init_status);
    if (init != CURLE_OK || init_status != 200 || !*s_sid) {
        fprintf (stderr, "bench: initialize failed (%s, HTTP %ld, session id %s)\n", curl_easy_strerror (init), init_status,
                 *s_sid ? s_sid : "none");
        return 1;
    }
    char session[100];
    snprintf (session, sizeof session, "Mcp-Session-Id: %s", s_sid);
    h = curl_slist_append (h, session);
    h = curl_slist_append (h, "MCP-Protocol-Version: 2025-11-25");
    curl_easy_setopt (c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt (c, CURLOPT_POSTFIELDS, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    double *ms = calloc ((size_t) N, sizeof *ms);
    int failures = 0;
    long last_bad = 0;
    for (int i = 0; i < 200 + N; i++) {
        bytes = 0;
        double t0 = bmq_mono_us ();
        long status = 0;
        if (curl_easy_perform (c) != CURLE_OK) failures++;
        curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200 || bytes < 1000) { failures++; last_bad = status; }
        if (i >= 200) ms[i - 200] = (bmq_mono_us () - t0) / 1000.0;
    }
    qsort (ms, N, sizeof *ms, s_compare);
    curl_slist_free_all (h);
    curl_easy_cleanup (c);
    bmq_http_server_destroy (&srv);
    fake_gateway_destroy (&gw);
    curl_global_cleanup ();
    if (failures) { fprintf (stderr, "bench: %d failed requests (last bad answer: HTTP %ld)\n", failures, last_bad); free (ms); return 1; }
    printf ("{\"bench\":\"mcp_tools_list_latency\",\"metric\":\"p50_ms\",\"value\":%.3f,\"unit\":\"ms\",\"transport\":\"streamable-http\",\"requests\":%d,\"response_bytes\":%zu}\n",
            ms[N / 2], N, bytes);
    printf ("{\"bench\":\"mcp_tools_list_latency\",\"metric\":\"p99_ms\",\"value\":%.3f,\"unit\":\"ms\",\"transport\":\"streamable-http\",\"requests\":%d}\n",
            ms[N * 99 / 100], N);
    free (ms);
    return 0;
}
