/* executor_requesters — a requester that goes silent.
 *
 * The gateway heartbeats us; when it falls silent for liveness × interval it
 * has also stopped hearing us (dead, restarted, or cut off by a partition),
 * and its client was told the plan was interrupted and rolled back
 * (gateway_service.c s_fail_unavailable). So the plan stops and is rolled
 * back here too: the scene then says what the client was told. Requesters
 * that never heartbeat are never judged. */
#include "executor_internal.h"
#include "log.h"

static void s_free_int (void **item) { free (*item); *item = NULL; }

zhashx_t *executor_requesters_new (void)
{
    zhashx_t *requesters = zhashx_new ();
    zhashx_set_destructor (requesters, s_free_int);
    return requesters;
}

void executor_heard (executor_t *ex, zframe_t *rid, bool heartbeat)
{
    char *key = zframe_strhex (rid);
    int64_t *last = zhashx_lookup (ex->requesters, key);
    if (!last && heartbeat && zhashx_size (ex->requesters) < 4096) {
        last = malloc (sizeof *last);
        zhashx_insert (ex->requesters, key, last);
    }
    if (last) *last = bmq_mono_ms ();
    free (key);
}

static bool s_requester_silent (executor_t *ex, zframe_t *rid, int64_t now)
{
    char *key = zframe_strhex (rid);
    int64_t *last = zhashx_lookup (ex->requesters, key);
    free (key);
    return last && now - *last > (int64_t) ex->interval * ex->liveness;
}

void executor_watch_requesters (executor_t *ex)
{
    int64_t now = bmq_mono_ms ();
    if (now - ex->last_watch < ex->interval / 4) return;
    if (ex->last_watch && now - ex->last_watch > 2 * (int64_t) ex->interval) {
        /* we were the silent one (stopped, starved): what our requesters sent meanwhile
         * waits unread; read it for an interval before judging anyone's silence */
        ex->watch_grace = now + ex->interval;
    }
    ex->last_watch = now;
    if (now < ex->watch_grace) return;
    bmq_job_t *job = ex->current;
    if (job && job->kind == BMQ_JOB_PLAN && !job->cancel && s_requester_silent (ex, job->rid, now)) {
        bmq_warn ("plan %s: its gateway has been silent for %d ms: stopping it after the current step",
                  job->plan_id, ex->interval * ex->liveness);
        job->orphaned = job->cancel = true;
    }
    for (bmq_job_t *q = zlistx_first (ex->queue); q; ) {
        bmq_job_t *next = zlistx_next (ex->queue);
        if (q->kind == BMQ_JOB_PLAN && s_requester_silent (ex, q->rid, now)) {
            zlistx_detach_cur (ex->queue);       /* never started: nothing to roll back */
            bmq_job_t *saved = ex->current;
            ex->current = q;
            q->started_us = bmq_mono_us ();
            executor_finish_plan (ex, "interrupted", "its gateway went silent before it started; nothing was run", 0,
                           json_pack ("{s:s}", "status", "not started"));
            ex->current = saved;
        }
        q = next;
    }
    /* forget requesters long gone */
    zlistx_t *old = zlistx_new ();
    for (int64_t *last = zhashx_first (ex->requesters); last; last = zhashx_next (ex->requesters))
        if (now - *last > 600000) zlistx_add_end (old, (void *) zhashx_cursor (ex->requesters));
    for (const char *key = zlistx_first (old); key; key = zlistx_next (old)) zhashx_delete (ex->requesters, key);
    zlistx_destroy (&old);
}
