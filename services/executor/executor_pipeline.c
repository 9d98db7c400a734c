/* executor_pipeline — a sealed plan sent to Blender as run_plan chunks (issue 14).
 *
 * One round trip per step cost more than most steps (and, in a GUI Blender, one
 * main-loop redraw each). Here the steps go in chunks of at most CHUNK_STEPS
 * steps and CHUNK_BYTES of JSON (the link's frames are bounded); the add-on
 * runs them back to back and writes a progress frame after each, which the
 * Blender actor passes on as it arrives and which becomes the step's progress
 * event and audit record exactly as an answered run_step did. The first chunk
 * opens the plan's transaction, the last commits it; a failed step or a
 * cancel ends it in the add-on (rolled back, or committed with keep_partial),
 * and run_plan's answer says which. A cancel reaches the add-on between steps
 * (the actor sends cancel_plan when ex->link_cancel is set); between chunks it
 * goes the old way (plan_rollback / plan_commit). A link that drops leaves the
 * plan to the add-on, which rolls it back: "interrupted", as before. */
#include "executor_internal.h"
#include "blender_link.h"
#include "log.h"

#define CHUNK_STEPS 2000
#define CHUNK_BYTES (512 * 1024)     /* the link's frames hold 1 MiB of JSON */

void executor_send_chunk (executor_t *ex, bmq_job_t *job)
{
    json_t *steps = json_array ();
    size_t bytes = 0, end = job->step;
    while (end < job->total && end - job->step < CHUNK_STEPS) {
        json_t *step = json_array_get (job->plan, end);
        size_t size = json_dumpb (step, NULL, 0, JSON_COMPACT);
        if (end > job->step && bytes + size > CHUNK_BYTES) break;
        bytes += size;
        json_array_append (steps, step);
        end++;
    }
    json_t *args = json_pack ("{s:s, s:s, s:o, s:I, s:I, s:b, s:b}", "plan_id", job->plan_id, "cid", job->cid,
                              "steps", steps, "offset", (json_int_t) job->step, "total", (json_int_t) job->total,
                              "final", end >= job->total, "keep_partial", job->keep_partial);
    char *text = json_dumps (args, JSON_COMPACT);
    json_decref (args);
    char timeout[16];
    snprintf (timeout, sizeof timeout, "%d", ex->step_timeout);
    atomic_store (&ex->link_cancel, false);
    zstr_sendx (ex->blender, "STREAM", "job", "run_plan", text ? text : "{}", timeout, job->plan_id, NULL);
    free (text);
    job->phase = BMQ_PHASE_RUN;
    job->final_chunk = end >= job->total;
    ex->waiting = true;
}

static void s_one_progress (executor_t *ex, json_t *p, const char *progress_text)
{
    bmq_job_t *job = ex->current;
    json_t *number = json_object_get (p, "step");
    /* frames come in step order; one that does not is not ours to trust */
    if (!job || job->kind != BMQ_JOB_PLAN || job->phase != BMQ_PHASE_RUN || !json_is_integer (number)
        || json_integer_value (number) != (json_int_t) job->step + 1 || job->step >= job->total) {
        bmq_warn ("run_plan progress out of order (expected step %zu): %.200s", job ? job->step + 1 : 0,
                  progress_text ? progress_text : "");
        return;
    }
    bool ok = !strcmp (json_string_value (json_object_get (p, "status")) ?: "", "ok");
    json_t *bpy_ms = json_object_get (p, "bpy_ms");
    /* the same shape as run_step's answer, so the event and the record are as before */
    json_t *reply = json_pack ("{s:b, s:{s:O, s:O}, s:O}", "ok", ok,
                               "result", "objects_created", json_object_get (p, "objects_created") ?: json_null (),
                               "object", json_object_get (p, "object") ?: json_null (),
                               "bpy_ms", json_is_number (bpy_ms) ? bpy_ms : json_null ());
    if (!ok) json_object_set (reply, "error", json_object_get (p, "error") ?: json_string ("Blender reported an error"));
    executor_step_result (ex, BMQ_LINK_OK, reply, NULL, json_is_number (bpy_ms) ? json_number_value (bpy_ms) * 1000.0 : 0,
                          true);
    json_decref (reply);
}

void executor_run_progress (executor_t *ex, const char *batch_text)
{
    json_t *batch = batch_text ? json_loads (batch_text, 0, NULL) : NULL;
    size_t i;
    json_t *p;
    executor_burst_begin (ex);
    json_array_foreach (batch, i, p) {
        if (!ex->current) break;
        s_one_progress (ex, p, batch_text);
    }
    executor_burst_flush (ex);
    json_decref (batch);
}

/* The chunk ended with the plan cut (a failed step, a cancel): the add-on
 * rolled it back (or committed it: keep_partial). */
static void s_cut (executor_t *ex, bmq_job_t *job, const char *status, const json_t *result)
{
    if (!strcmp (status, "cancelled")) {
        size_t done = (size_t) json_integer_value (json_object_get (result, "steps_done"));
        snprintf (job->fail_status, sizeof job->fail_status, job->orphaned || job->stopping ? "interrupted" : "cancelled");
        if (job->stopping)
            snprintf (job->fail_error, sizeof job->fail_error, "the executor was stopped (SIGTERM or SIGINT) after step %zu"
                      " of %zu; %s", done, job->total, job->keep_partial ? "Blender kept what was done (keep_partial)"
                                                                         : "Blender rolled the plan back");
        else if (job->orphaned)
            snprintf (job->fail_error, sizeof job->fail_error, "the gateway that asked for it went silent after step %zu"
                      " of %zu (it told its client the plan was cut)", done, job->total);
        else
            snprintf (job->fail_error, sizeof job->fail_error, "cancelled by the client after step %zu of %zu",
                      done, job->total);
        job->failed_step = 0;
    }
    else if (!*job->fail_status) {     /* failed without a failed step's frame: say what Blender said */
        snprintf (job->fail_status, sizeof job->fail_status, "failed");
        snprintf (job->fail_error, sizeof job->fail_error, "%s",
                  json_string_value (json_object_get (result, "error")) ?: "Blender stopped the plan");
        job->failed_step = json_integer_value (json_object_get (result, "failed_step"));
    }
    const json_t *rb = json_object_get (result, "rollback");
    json_t *rollback = NULL;
    if (json_is_object (rb)) {
        const char *why = json_string_value (json_object_get (rb, "error"));
        rollback = executor_rolled_back (ex, job, !why, rb, why);
        json_object_set_new (rollback, "by", json_string ("blender"));     /* in the add-on, in-process */
    }
    executor_finish_plan (ex, job->fail_status, job->fail_error, job->failed_step, rollback);
}

void executor_run_result (executor_t *ex, int status, json_t *reply, const char *err)
{
    bmq_job_t *job = ex->current;
    atomic_store (&ex->link_cancel, false);
    if (status != BMQ_LINK_OK && ex->busy) {
        /* closed for silence while Blender was busy (issue 23): its step is still
         * running there, so the outcome is not known; not "failed" */
        char why[700];
        snprintf (why, sizeof why, "still running in Blender (busy for %lld s, no answer within the step timeout): the "
                  "outcome is not known yet; the link was closed, so Blender rolls the plan back when its step returns "
                  "(reported as plan.interrupted then; past blender.hang_kill_ms it is restarted from its last commit)",
                  (long long) ((bmq_now_ms () - ex->busy_since_wall) / 1000));
        executor_finish_plan (ex, "interrupted", why, 0, NULL);
        return;
    }
    if (status != BMQ_LINK_OK) {       /* the link dropped (or was closed): the add-on rolls the plan back */
        executor_finish_plan (ex, "interrupted", err && *err ? err : "connection to Blender lost", 0, NULL);
        return;
    }
    json_t *result = json_object_get (reply, "result");
    const char *outcome = json_string_value (json_object_get (result, "status"));
    if (!json_is_true (json_object_get (reply, "ok")) || !outcome) {
        char msg[sizeof job->fail_error];
        snprintf (msg, sizeof msg, "Blender refused the plan: %.500s",
                  json_string_value (json_object_get (reply, "error")) ?: "no reason given");
        if (job->step == 0) { executor_finish_plan (ex, "failed", msg, 0, NULL); return; }
        /* a later chunk refused: the plan is open in Blender; undo it the old way */
        snprintf (job->fail_status, sizeof job->fail_status, "failed");
        snprintf (job->fail_error, sizeof job->fail_error, "%s", msg);
        job->phase = job->keep_partial ? BMQ_PHASE_COMMIT : BMQ_PHASE_ROLLBACK;
        return;
    }
    json_t *bpy = json_object_get (result, "bpy_ms"), *addon = json_object_get (result, "addon_ms");
    if (json_is_number (bpy) && json_is_number (addon)) {      /* summed over the plan's chunks */
        job->bpy_ms = (job->bpy_ms < 0 ? 0 : job->bpy_ms) + json_number_value (bpy);
        job->addon_ms = (job->addon_ms < 0 ? 0 : job->addon_ms) + json_number_value (addon);
    }
    executor_note_fingerprint (job, result);
    if (!strcmp (outcome, "continue")) job->phase = BMQ_PHASE_STEPS;      /* the next chunk (or a cancel) */
    else if (!strcmp (outcome, "done")) executor_finish_plan (ex, "done", NULL, 0, NULL);
    else s_cut (ex, job, outcome, result);
}

void executor_stop_run (executor_t *ex)
{
    if (!ex->current || ex->current->kind != BMQ_JOB_PLAN || ex->current->phase != BMQ_PHASE_RUN) return;
    ex->current->stopping = true;
    atomic_store (&ex->link_cancel, true);      /* the add-on stops after its current step and rolls back */
}
