/* bench validate_latency — time from submitting a 50-step plan to the broker
 * until its verdict is back, one request at a time, with the stack's default
 * pool of two validators (real processes, a real audit service).
 * Timed (CLOCK_MONOTONIC): from just before bmq_broker_submit to the arrival
 * of that request's validate.reply; any other answer (an error) fails it.
 *
 *   bench_validate_latency [requests]       (default 3000, after 200 warm-up)
 * Prints JSON lines: p50_ms, p99_ms (and max_ms). */
#include "log.h"
#include "roles.h"
#include "pool_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char cid[BMQ_MAX_ID + 1]; bool done, verdict; } wait_t;

static void s_on_reply (bmq_envelope_t *reply, void *arg)
{
    wait_t *w = arg;
    if (!strcmp (reply->cid, w->cid)) {
        w->done = true;
        w->verdict = reply->type == BMQ_MSG_VALIDATE_REPLY;
        if (!w->verdict) fprintf (stderr, "bench validate_latency: an error, not a verdict: %s\n", bmq_body_str (reply, "message"));
    }
    bmq_envelope_destroy (&reply);
}

static bool s_done (void *arg) { return ((wait_t *) arg)->done; }

static int s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main (int argc, char **argv)
{
    int n = argc > 1 ? atoi (argv[1]) : 3000;
    if (n < 100) n = 100;
    bmq_log_init ("bench", false, BMQ_LOG_WARN);        /* stdout is for the JSON lines */
    zsys_init ();
    zsys_set_logstream (NULL);
    pool_t *pool = pool_new (1000, true);
    if (!pool) return 1;
    pool_spawn (pool, "validator");
    pool_spawn (pool, "validator");
    if (!pool_wait_workers (pool, 2, 20000)) { fprintf (stderr, "validators did not join\n"); return 1; }
    uint64_t rng = 0x853c49e6748fea9bull;
    json_t *plans[16];
    for (int i = 0; i < 16; i++) plans[i] = pool_plan (&rng, 50, true);
    double *ms = calloc ((size_t) n, sizeof *ms);
    for (int i = -200; i < n; i++) {
        bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_VALIDATE_REQUEST, NULL, json_pack ("{s:O}", "plan", plans[(i + 200) % 16]));
        bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* as the gateway forwards a client's request */
        wait_t w = { "", false, false };
        snprintf (w.cid, sizeof w.cid, "%s", req->cid);
        double t0 = bmq_mono_us ();
        bmq_broker_submit (pool->broker, &req);
        pool_drive (pool, 5000, s_on_reply, s_done, &w);
        if (!w.done) { fprintf (stderr, "no verdict within 5 s\n"); return 1; }
        if (!w.verdict) return 1;
        if (i >= 0) ms[i] = (bmq_mono_us () - t0) / 1000.0;
    }
    qsort (ms, (size_t) n, sizeof *ms, s_cmp);
    json_t *extra = json_pack ("{s:i, s:i, s:i}", "steps", 50, "requests", n, "workers", 2);
    pool_bench_line ("validate_latency", "p50_ms", ms[n / 2], "ms", json_deep_copy (extra));
    pool_bench_line ("validate_latency", "p99_ms", ms[(size_t) (n * 0.99)], "ms", json_deep_copy (extra));
    pool_bench_line ("validate_latency", "max_ms", ms[n - 1], "ms", extra);
    free (ms);
    for (int i = 0; i < 16; i++) json_decref (plans[i]);
    return pool_destroy (&pool) ? 1 : 0;
}
