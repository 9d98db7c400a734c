/* executor_plan — a sealed plan's state machine in the executor.
 *
 * With executor.pipeline (the default) the steps go to Blender as run_plan
 * chunks instead (executor_pipeline.c), and only a cancel between chunks uses
 * plan_rollback / plan_commit here. Without it:
 *
 * BEGIN tells Blender the plan's story (cid), then each step waits for
 * Blender's acknowledgement before the next is sent; after the last, COMMIT.
 * The first failing step (or a cancel) leads to ROLLBACK, or to COMMIT when
 * the plan asked to keep partial work; a lost Blender ends the plan as
 * "interrupted" (Blender rolls it back itself). Progress goes to the
 * requester (in order, on its own connection) and to the PUB socket for
 * watchers, every event stamped with seq and instance (progress_stamp.h). */
#include "executor_internal.h"
#include "blender_link.h"
#include "log.h"
#include "progress_stamp.h"
#include "progress_batch.h"

void executor_progress (executor_t *ex, bmq_job_t *job, json_t *body)
{
    json_object_set_new (body, "plan_id", json_string (job->plan_id));
    json_object_set_new (body, "total", json_integer ((json_int_t) job->total));
    bmq_progress_stamp (body);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, job->cid, body);
    bmq_bus_send (ex->router, job->rid, env);
    if (ex->pub_burst && (strcmp (ex->pub_burst_cid, job->cid) || json_array_size (ex->pub_burst) >= BMQ_PROGRESS_BATCH_MAX))
    {
        executor_burst_flush (ex);
        executor_burst_begin (ex);
    }
    if (ex->pub_burst) {                        /* watchers get the burst as one message at its end */
        if (!json_array_size (ex->pub_burst)) snprintf (ex->pub_burst_cid, sizeof ex->pub_burst_cid, "%s", job->cid);
        json_array_append (ex->pub_burst, env->body);
    }
    else bmq_bus_send (ex->pub, NULL, env);
    bmq_envelope_destroy (&env);
}

/* Issue 28: the progress of one burst (the steps of a run_plan chunk, which
 * Blender reports together) goes to the watchers as one progress.batch, in
 * order; the requester still gets each event on its own connection. */
void executor_burst_begin (executor_t *ex)
{
    if (!ex->pub_burst) ex->pub_burst = json_array ();
}

void executor_burst_flush (executor_t *ex)
{
    json_t *events = ex->pub_burst;
    if (!events) return;
    ex->pub_burst = NULL;
    bmq_envelope_t *env = NULL;
    if (json_array_size (events) == 1) env = bmq_envelope_new (BMQ_MSG_PROGRESS, ex->pub_burst_cid, json_incref (json_array_get (events, 0)));
    else if (json_array_size (events) > 1) env = bmq_progress_batch_new (ex->pub_burst_cid, json_incref (events));
    if (env) bmq_bus_send (ex->pub, NULL, env);
    bmq_envelope_destroy (&env);
    json_decref (events);
}

/* The plan is open in Blender and the link is gone (or about to go): the
 * add-on rolls it back itself and reports what it removed at the next
 * connection, recorded then as plan.interrupted in this story. A commit on its
 * way may or may not have arrived. */
static bool s_committing (const bmq_job_t *job)
{
    /* pipelined: the last chunk's steps all reported, only its commit was left */
    return (job->phase == BMQ_PHASE_COMMIT || (job->phase == BMQ_PHASE_RUN && job->final_chunk && job->step >= job->total))
           && !*job->fail_status;
}

static json_t *s_rollback_by_blender (const bmq_job_t *job)
{
    if (s_committing (job))
        return json_pack ("{s:s, s:s, s:s}", "status", "unknown", "by", "blender", "detail",
                          "the link dropped while the plan was being committed: if the commit did not reach Blender, "
                          "Blender rolled the plan back, and plan.interrupted in this story says what it removed");
    return json_pack ("{s:s, s:s, s:s}", "status", "blender rolls back", "by", "blender", "detail",
                      "Blender rolls back a plan whose link drops; what it removed is recorded as plan.interrupted "
                      "in this story when the executor reconnects (a Blender that died lost its scene instead)");
}

static void s_call (executor_t *ex, const char *cmd, json_t *args, int timeout_ms)
{
    char *text = json_dumps (args, JSON_COMPACT);
    char timeout[16];
    snprintf (timeout, sizeof timeout, "%d", timeout_ms);
    zstr_sendx (ex->blender, "CALL", "job", cmd, text ? text : "{}", timeout, NULL);
    free (text);
    ex->waiting = true;
}

/* The steps not yet in the audit trail, as one "steps" record {plan_id,
 * steps: [{event, step}]}: one record per AUDIT_STEPS_BATCH steps and at the
 * plan's end (a record per step cost the executor and the audit service more
 * than most steps cost Blender). Acknowledged and spooled like any record. */
void executor_record_steps (executor_t *ex, bmq_job_t *job)
{
    if (!json_array_size (job->audit_steps)) return;
    bmq_audit_record (ex->audit, job->cid, "steps", json_pack ("{s:s, s:O}", "plan_id", job->plan_id, "steps", job->audit_steps));
    json_decref (job->audit_steps);
    job->audit_steps = json_array ();
}

void executor_finish_plan (executor_t *ex, const char *status, const char *error, json_int_t failed_step,
                           json_t *rollback)
{
    bmq_job_t *job = ex->current;
    double ms = (bmq_mono_us () - job->started_us) / 1000.0;
    char honest[700];
    if (!strcmp (status, "interrupted") && !rollback) {      /* the link is gone with the plan open */
        rollback = s_rollback_by_blender (job);
        snprintf (honest, sizeof honest, "%s; %s", error ? error : "interrupted",
                  s_committing (job) ? "the commit may not have reached Blender"
                                                                      : "Blender rolls the plan back");
        error = honest;
    }
    json_t *end = json_pack ("{s:s, s:s, s:I, s:f, s:O}", "event", "plan", "status", status,
                             "step", (json_int_t) job->step, "duration_ms", ms, "objects", job->created);
    if (rollback) json_object_set_new (end, "rollback", rollback);
    if (job->fingerprint[0]) json_object_set_new (end, "fingerprint", json_string (job->fingerprint));
    if (error) json_object_set_new (end, "error", json_string (error));
    if (failed_step > 0) json_object_set_new (end, "failed_step", json_integer (failed_step));
    if (json_array_size (job->notes)) json_object_set (end, "notes", job->notes);     /* e.g. an asset's fallback */
    if (job->bpy_ms >= 0) {         /* pipelined: Blender's own time apart from the add-on's */
        json_object_set_new (end, "bpy_ms", json_real (job->bpy_ms));
        json_object_set_new (end, "addon_ms", json_real (job->addon_ms));
    }
    executor_progress (ex, job, json_deep_copy (end));
    json_object_set_new (end, "plan_id", json_string (job->plan_id));
    json_object_set_new (end, "steps_done", json_integer ((json_int_t) job->step));
    json_object_set_new (end, "steps_total", json_integer ((json_int_t) job->total));
    executor_record_steps (ex, job);
    bmq_audit_record (ex->audit, job->cid, "plan.end", json_deep_copy (end));
    executor_reply (ex, job, bmq_envelope_new (BMQ_MSG_EXECUTE_RESULT, job->cid, end));
    bmq_info ("plan %s %s after %zu/%zu steps (%.1f ms)%s%s", job->plan_id, status, job->step, job->total, ms,
              error ? ": " : "", error ? error : "");
    ex->plans_run++;
    bmq_job_destroy (&ex->current);
}

/* Start or continue work when nothing is outstanding. */
void executor_pump (executor_t *ex)
{
    while (!ex->waiting) {
        if (!ex->current) {
            ex->current = zlistx_first (ex->queue) ? zlistx_detach (ex->queue, NULL) : NULL;
            if (!ex->current) return;
            ex->current->started_us = bmq_mono_us ();
            if (ex->current->kind == BMQ_JOB_PLAN) {
                executor_progress (ex, ex->current, json_pack ("{s:s, s:s, s:i}", "event", "plan", "status", "started", "step", 0));
                bmq_audit_record (ex->audit, ex->current->cid, "plan.start",
                                  json_pack ("{s:s, s:I}", "plan_id", ex->current->plan_id, "steps", (json_int_t) ex->current->total));
            }
        }
        bmq_job_t *job = ex->current;
        if (job->kind == BMQ_JOB_COMMAND) {
            int script_ms = ex->scripts ? bmq_script_jobs_link_timeout (ex->scripts, job) : 0;     /* run_script: its own */
            if (script_ms > 0) {        /* streamed: a cancel reaches the running script (issue 29) */
                atomic_store (&ex->link_cancel, job->cancel);
                bmq_script_jobs_send (ex->blender, job, script_ms);
                ex->waiting = true;
                return;
            }
            s_call (ex, job->command, job->args, ex->command_timeout);
            return;
        }
        const char *cmd = "run_step";
        json_t *args;
        if (job->phase == BMQ_PHASE_STEPS && job->cancel && !*job->fail_status) {
            /* cancelled: stop here, and undo what was done unless asked to keep it */
            snprintf (job->fail_status, sizeof job->fail_status, job->orphaned ? "interrupted" : "cancelled");
            if (job->orphaned)
                snprintf (job->fail_error, sizeof job->fail_error, "the gateway that asked for it went silent after step %zu"
                          " of %zu (it told its client the plan was cut)", job->step, job->total);
            else
                snprintf (job->fail_error, sizeof job->fail_error, "cancelled by the client after step %zu of %zu",
                          job->step, job->total);
            job->failed_step = 0;
            job->phase = job->keep_partial ? BMQ_PHASE_COMMIT : BMQ_PHASE_ROLLBACK;
        }
        if (job->phase == BMQ_PHASE_BEGIN && !job->assets_checked) {
            job->assets_checked = true;
            if (executor_plan_assets (ex, job)) return;     /* its assets are fetched and staged first */
        }
        if (job->phase == BMQ_PHASE_BEGIN && job->cancel) {
            executor_finish_plan (ex, job->orphaned ? "interrupted" : "cancelled", "cancelled before the plan started", 0, NULL);
            continue;
        }
        if (ex->pipeline && (job->phase == BMQ_PHASE_BEGIN || job->phase == BMQ_PHASE_STEPS)) {
            executor_send_chunk (ex, job);      /* plan_begin and plan_commit fold into run_plan */
            return;
        }
        if (job->phase == BMQ_PHASE_STEPS && job->step >= job->total) job->phase = BMQ_PHASE_COMMIT;
        switch (job->phase) {
        case BMQ_PHASE_BEGIN:       /* the story goes with the plan: Blender reports it if the link drops */
            cmd = "plan_begin";
            args = json_pack ("{s:s, s:s, s:I}", "plan_id", job->plan_id, "cid", job->cid, "steps", (json_int_t) job->total);
            break;
        case BMQ_PHASE_COMMIT: cmd = "plan_commit"; args = json_pack ("{s:s}", "plan_id", job->plan_id); break;
        case BMQ_PHASE_ROLLBACK: cmd = "plan_rollback"; args = json_pack ("{s:s}", "plan_id", job->plan_id); break;
        default: {
            /* a target the plan named earlier means that step's object, whatever Blender called it */
            json_t *step = json_array_get (job->plan, job->step);
            const char *target = json_string_value (json_object_get (step, "target"));
            const char *parent = json_string_value (json_object_get (json_object_get (step, "params"), "parent"));
            json_t *actual = target ? json_object_get (job->names, target) : NULL;
            json_t *actual_parent = parent ? json_object_get (job->names, parent) : NULL;
            step = actual || actual_parent ? json_deep_copy (step) : json_incref (step);
            if (actual) json_object_set (step, "target", actual);
            if (actual_parent) json_object_set (json_object_get (step, "params"), "parent", actual_parent);
            args = json_pack ("{s:o, s:s}", "step", step, "plan_id", job->plan_id);
        }
        }
        s_call (ex, cmd, args, ex->step_timeout);
        json_decref (args);
    }
}

/* The answer to plan_begin, plan_commit or plan_rollback. */
void executor_phase_result (executor_t *ex, int status, json_t *reply, const char *err)
{
    bmq_job_t *job = ex->current;
    bool ok = status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"));
    const char *why = status == BMQ_LINK_OK ? json_string_value (json_object_get (reply, "error")) : err;
    if (status == BMQ_LINK_DOWN || status == BMQ_LINK_PROTOCOL) {
        executor_finish_plan (ex, "interrupted", *job->fail_error ? job->fail_error : (err && *err ? err : "connection to Blender lost"),
                       job->failed_step, NULL);
        return;
    }
    if (job->phase == BMQ_PHASE_BEGIN) {
        if (ok) { job->phase = BMQ_PHASE_STEPS; return; }
        char msg[600];
        snprintf (msg, sizeof msg, "Blender could not open the plan: %s", why ? why : "timed out");
        executor_finish_plan (ex, "failed", msg, 0, NULL);
    }
    else if (job->phase == BMQ_PHASE_COMMIT) {
        if (ok) executor_note_fingerprint (job, json_object_get (reply, "result"));
        if (*job->fail_status) executor_finish_plan (ex, job->fail_status, job->fail_error, job->failed_step, NULL);
        else executor_finish_plan (ex, "done", NULL, 0, NULL);
    }
    else
        executor_finish_plan (ex, job->fail_status, job->fail_error, job->failed_step,
                              executor_rolled_back (ex, job, ok, json_object_get (reply, "result"), why));
}

/* Issue 23: the add-on's results carry the scene's fingerprint (hostile input: only
 * exactly 64 hex digits are kept). */
void executor_note_fingerprint (bmq_job_t *job, const json_t *result)
{
    const char *fp = json_string_value (json_object_get (result, "fingerprint"));
    if (!fp || strlen (fp) != 64 || strspn (fp, "0123456789abcdef") != 64) return;
    memcpy (job->fingerprint, fp, 65);
}

json_t *executor_rolled_back (executor_t *ex, bmq_job_t *job, bool ok, const json_t *result, const char *why)
{
    json_t *rb = ok ? json_pack ("{s:s, s:O, s:O}", "status", "rolled back",
                                 "removed", json_object_get (result, "removed"), "restored", json_object_get (result, "restored"))
                    : json_pack ("{s:s, s:s}", "status", "rollback failed", "error", why ? why : "timed out");
    if (ok) {       /* exact: the scene's fingerprint is the one from before the plan */
        executor_note_fingerprint (job, result);
        if (job->fingerprint[0]) json_object_set_new (rb, "fingerprint", json_string (job->fingerprint));
        if (json_is_boolean (json_object_get (result, "exact")))
            json_object_set_new (rb, "exact", json_boolean (json_is_true (json_object_get (result, "exact"))));
    }
    json_t *ev = json_pack ("{s:s, s:I, s:s, s:O}", "event", "rollback", "step", (json_int_t) job->step,
                            "status", ok ? "rolled back" : "rollback failed", "rollback", rb);
    executor_progress (ex, job, ev);
    executor_record_steps (ex, job);
    bmq_audit_record (ex->audit, job->cid, "rollback", json_pack ("{s:s, s:O}", "plan_id", job->plan_id, "rollback", rb));
    return rb;
}

void executor_step_result (executor_t *ex, int status, json_t *reply, const char *err, double elapsed_us, bool streamed)
{
    bmq_job_t *job = ex->current;
    json_t *step = json_array_get (job->plan, job->step);
    const char *op = json_string_value (json_object_get (step, "operation"));
    json_int_t k = (json_int_t) job->step + 1;
    json_t *ev = json_pack ("{s:s, s:I, s:s, s:f}", "event", "step", "step", k, "operation", op ? op : "?",
                            "duration_ms", elapsed_us / 1000.0);
    json_t *bpy_ms = json_object_get (reply, "bpy_ms");
    if (json_is_number (bpy_ms)) json_object_set (ev, "bpy_ms", bpy_ms);
    char idx[24];
    snprintf (idx, sizeof idx, "%zu", job->step);
    json_t *fell_back = json_object_get (job->fallbacks, idx);     /* an optional asset's built-in look (executor_assets.c) */
    if (json_is_string (fell_back)) json_object_set (ev, "note", fell_back);
    const char *fail = NULL;
    if (status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"))) {
        json_t *created = json_object_get (json_object_get (reply, "result"), "objects_created");
        json_object_set_new (ev, "status", json_string ("ok"));
        json_object_set (ev, "objects", json_is_array (created) ? created : json_array ());
        if (json_is_array (created)) json_array_extend (job->created, created);
        json_t *obj = json_object_get (json_object_get (reply, "result"), "object");
        if (json_is_string (obj)) json_object_set (ev, "object", obj);
        const char *asked = json_string_value (json_object_get (step, "name"));
        if (asked && json_is_string (obj)) json_object_set (job->names, asked, obj);
    }
    else if (status == BMQ_LINK_OK) {
        fail = "failed";
        const char *msg = json_string_value (json_object_get (reply, "error"));
        json_object_set_new (ev, "status", json_string ("failed"));
        json_object_set_new (ev, "error", json_string (msg ? msg : "Blender reported an error"));
    }
    else if (status == BMQ_LINK_TIMEOUT) {
        fail = "failed";
        json_object_set_new (ev, "status", json_string ("timeout"));
        json_object_set_new (ev, "error", json_string ("the step exceeded its deadline"));
    }
    else {
        fail = "interrupted";
        json_object_set_new (ev, "status", json_string ("interrupted"));
        json_object_set_new (ev, "error", json_string (err && *err ? err : "connection to Blender lost"));
    }
    json_array_append_new (job->audit_steps, json_pack ("{s:O, s:O}", "event", ev, "step", step ? step : json_null ()));
    if (json_array_size (job->audit_steps) >= AUDIT_STEPS_BATCH) executor_record_steps (ex, job);
    char error_text[600];
    snprintf (error_text, sizeof error_text, "step %lld (%s): %s", (long long) k, op ? op : "?",
              json_string_value (json_object_get (ev, "error")) ? json_string_value (json_object_get (ev, "error")) : "");
    executor_progress (ex, job, ev);
    if (!fail) { job->step++; return; }
    if (!strcmp (fail, "interrupted")) { executor_finish_plan (ex, fail, error_text, k, NULL); return; }
    /* a failed step: stop, then roll back (or keep what was done, if asked); a
     * streamed plan's add-on does that itself and says so in run_plan's answer */
    snprintf (job->fail_status, sizeof job->fail_status, "%s", fail);
    snprintf (job->fail_error, sizeof job->fail_error, "%s", error_text);
    job->failed_step = k;
    if (!streamed) job->phase = job->keep_partial ? BMQ_PHASE_COMMIT : BMQ_PHASE_ROLLBACK;
}
