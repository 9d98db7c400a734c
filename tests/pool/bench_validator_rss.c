/* bench validator_rss — peak resident memory of one validator process after
 * a load: 20,000 plans of the mixed corpus (up to the 200-step limit, a
 * quarter broken, so verdicts carry errors), a burst of hostile oversized
 * plans, and capabilities requests; read from /proc/PID/status (VmHWM).
 *
 *   bench_validator_rss [plans]      (default 20000)
 * Prints JSON lines: peak_rss_mb (and idle_rss_mb, before the load).
 * Nothing is timed: memory only (VmHWM after the load, VmRSS before it). */
#include "log.h"
#include "roles.h"
#include "pool_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { size_t in_flight, done; } run_t;

static void s_on_reply (bmq_envelope_t *reply, void *arg)
{
    run_t *r = arg;
    r->in_flight--;
    r->done++;
    bmq_envelope_destroy (&reply);
}

static bool s_drained (void *arg) { return ((run_t *) arg)->in_flight < 32; }

int main (int argc, char **argv)
{
    int n = argc > 1 ? atoi (argv[1]) : 20000;
    bmq_log_init ("bench", false, BMQ_LOG_WARN);        /* stdout is for the JSON lines */
    zsys_init ();
    zsys_set_logstream (NULL);
    pool_t *pool = pool_new (1000, true);
    if (!pool) return 1;
    pid_t pid = pool_spawn (pool, "validator");
    if (!pool_wait_workers (pool, 1, 20000)) { fprintf (stderr, "validator did not join\n"); return 1; }
    pool_drive (pool, 300, NULL, NULL, NULL);
    double idle = pool_peak_rss_kb (pid) / 1024.0;
    uint64_t rng = 0xda3e39cb94b95bdbull;
    run_t r = { 0, 0 };
    for (int i = 0; i < n; i++) {
        json_t *body;
        if (i % 1000 == 999) body = json_pack ("{s:s}", "form", i % 2000 == 999 ? "full" : "compact");
        else if (i % 500 == 250) {          /* hostile: 5,000 steps, far past the limit */
            json_t *plan = json_array ();
            for (int k = 0; k < 5000; k++)
                json_array_append_new (plan, json_pack ("{s:s, s:{s:s}}", "operation", "x.y", "params", "evil", "x"));
            body = json_pack ("{s:o}", "plan", plan);
        }
        else body = json_pack ("{s:o}", "plan", pool_plan (&rng, 5 + (int) (rng % 196), i % 4 != 3));
        bmq_envelope_t *req = bmq_envelope_new (i % 1000 == 999 ? BMQ_MSG_CAPABILITIES_REQUEST : BMQ_MSG_VALIDATE_REQUEST,
                                                NULL, body);
        bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* as the gateway forwards a client's request */
        if (bmq_broker_submit (pool->broker, &req) == 0) r.in_flight++;
        if (r.in_flight >= 64) pool_drive (pool, 10000, s_on_reply, s_drained, &r);
    }
    while (r.in_flight) {
        size_t before = r.done;
        pool_drive (pool, 1000, s_on_reply, NULL, &r);
        if (r.done == before) break;
    }
    long peak = pool_peak_rss_kb (pid);
    json_t *extra = json_pack ("{s:I, s:i}", "requests", (json_int_t) r.done, "pid", (int) pid);
    pool_bench_line ("validator_rss", "peak_rss_mb", peak / 1024.0, "MB", extra);
    pool_bench_line ("validator_rss", "idle_rss_mb", idle, "MB", NULL);
    return pool_destroy (&pool) ? 1 : 0;
}
