/* bench validate_throughput — steps validated per second through the broker,
 * on a mixed corpus (5..100-step plans, a quarter of them broken), with one
 * worker and with two: the gateway's broker in this process, real
 * blendmq-validator processes, a real blendmq-audit taking their records.
 *
 * Timed (CLOCK_MONOTONIC): a fixed window after a warm-up; the figure counts
 * the steps of the plans whose validate.reply (a verdict, accepted or
 * rejected) came back in it. Any other reply (the broker's own
 * validator_unavailable / validator_failed, forbidden, any error) is not a
 * verdict: it is counted apart and fails the bench.
 *
 *   bench_validate_throughput [seconds per run]     (default 3, 0.2..60)
 * Prints JSON lines: steps_per_s_1_worker, steps_per_s_2_workers, and
 * steps_per_s_in_process (bmq_plan_validate alone, same corpus, no bus). */
#include "plan_validator.h"
#include "roles.h"
#include "log.h"
#include "pool_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORPUS 2000

typedef struct {
    json_t  *corpus;
    size_t   next, in_flight, steps_done, plans_done, rejected, errors;
    char     last_error[160];
    pool_t  *pool;
    zhashx_t *steps_of;           /* cid → steps */
} run_t;

static void s_submit (run_t *r)
{
    json_t *plan = json_array_get (r->corpus, r->next++ % CORPUS);
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_VALIDATE_REQUEST, NULL, json_pack ("{s:O}", "plan", plan));
    bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* as the gateway forwards a client's request */
    zhashx_insert (r->steps_of, req->cid, (void *) (uintptr_t) json_array_size (plan));
    if (bmq_broker_submit (r->pool->broker, &req) == 0) r->in_flight++;
}

static void s_on_reply (bmq_envelope_t *reply, void *arg)
{
    run_t *r = arg;
    size_t steps = (size_t) (uintptr_t) zhashx_lookup (r->steps_of, reply->cid);
    if (steps) {
        zhashx_delete (r->steps_of, reply->cid);
        r->in_flight--;
        if (reply->type == BMQ_MSG_VALIDATE_REPLY) {
            r->steps_done += steps;
            r->plans_done++;
            r->rejected += !json_is_true (json_object_get (reply->body, "accepted"));
        }
        else {
            r->errors++;
            snprintf (r->last_error, sizeof r->last_error, "%s: %s", bmq_body_str (reply, "code"), bmq_body_str (reply, "message"));
        }
    }
    bmq_envelope_destroy (&reply);
}

/* Keep the broker's queue topped up: enough that no worker ever waits. */
static bool s_top_up (void *arg)
{
    run_t *r = arg;
    while (r->in_flight < 64) s_submit (r);
    return false;
}

static double s_run (json_t *corpus, int workers, double seconds, json_t **extra)
{
    pool_t *pool = pool_new (1000, true);
    if (!pool) exit (1);
    for (int i = 0; i < workers; i++) pool_spawn (pool, "validator");
    if (!pool_wait_workers (pool, (size_t) workers, 20000)) { fprintf (stderr, "validators did not join\n"); exit (1); }
    run_t r = { .corpus = corpus, .pool = pool, .steps_of = zhashx_new () };
    pool_drive (pool, 500, s_on_reply, s_top_up, &r);                 /* warm up */
    size_t steps0 = r.steps_done, plans0 = r.plans_done;
    int64_t t0 = bmq_mono_ms ();
    pool_drive (pool, (int) (seconds * 1000), s_on_reply, s_top_up, &r);
    double elapsed = (bmq_mono_ms () - t0) / 1000.0;
    double rate = (r.steps_done - steps0) / elapsed;
    *extra = json_pack ("{s:i, s:f, s:f, s:I}", "workers", workers, "plans_per_s", (r.plans_done - plans0) / elapsed,
                        "seconds", elapsed, "rejected", (json_int_t) r.rejected);
    pool_drive (pool, 2000, s_on_reply, NULL, &r);                    /* let the last ones in */
    zhashx_destroy (&r.steps_of);
    if (pool_destroy (&pool)) exit (1);
    if (r.errors) {
        fprintf (stderr, "bench validate_throughput: %zu replies with %d worker(s) were errors, not verdicts (last: %s)\n",
                 r.errors, workers, r.last_error);
        exit (1);
    }
    return rate;
}

int main (int argc, char **argv)
{
    double seconds = argc > 1 ? atof (argv[1]) : 3.0;
    if (!(seconds >= 0.2 && seconds <= 60)) { fprintf (stderr, "usage: bench_validate_throughput [seconds 0.2..60]\n"); return 2; }
    bmq_log_init ("bench", false, BMQ_LOG_WARN);        /* stdout is for the JSON lines */
    zsys_init ();
    zsys_set_logstream (NULL);
    uint64_t rng = 0x2545f4914f6cdd1dull;
    json_t *corpus = json_array ();
    size_t total_steps = 0;
    for (int i = 0; i < CORPUS; i++) {
        int steps = 5 + (int) (rng % 96);
        json_array_append_new (corpus, pool_plan (&rng, steps, i % 4 != 3));
        total_steps += (size_t) steps;
    }
    /* in-process baseline: the validator alone */
    char err[512];
    bmq_palette_t *palette = bmq_palette_load (BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);
    if (!palette) { fprintf (stderr, "%s\n", err); return 1; }
    int64_t t0 = bmq_mono_ms ();
    size_t steps = 0;
    while (bmq_mono_ms () - t0 < 1000)
        for (size_t i = 0; i < CORPUS; i++, steps += json_array_size (json_array_get (corpus, i)))
            json_decref (bmq_plan_validate (palette, json_array_get (corpus, i)));
    pool_bench_line ("validate_throughput", "steps_per_s_in_process", steps / ((bmq_mono_ms () - t0) / 1000.0), "steps/s",
                     json_pack ("{s:I, s:f}", "corpus_plans", (json_int_t) CORPUS, "mean_steps", (double) total_steps / CORPUS));
    bmq_palette_destroy (&palette);

    json_t *extra;
    double one = s_run (corpus, 1, seconds, &extra);
    pool_bench_line ("validate_throughput", "steps_per_s_1_worker", one, "steps/s", extra);
    double two = s_run (corpus, 2, seconds, &extra);
    pool_bench_line ("validate_throughput", "steps_per_s_2_workers", two, "steps/s", extra);
    json_decref (corpus);
    return 0;
}
