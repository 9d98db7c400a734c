/* executor_service — the executor's loop and plan state machine.
 *
 * Only sealed plans run: the seal (HMAC by a validator) must match the hash
 * of exactly the plan received. Each step waits for Blender's acknowledgement
 * before the next is sent; the first failing step ends the plan, and a lost
 * Blender ends it as "interrupted". Progress goes to the requester (in order,
 * on its own connection) and to the PUB socket for watchers, every event
 * stamped with seq and instance (progress_stamp.h).
 *
 * No half-built scenes (issue 17): plan_begin tells Blender the plan's story
 * (cid). When the link drops with a plan open, the add-on rolls it back itself
 * and reports it at the next hello; the actor passes that on ("HELLO") and
 * this loop writes plan.interrupted into the plan's story, publishes it, and
 * acknowledges the reports (ACK → interrupted_ack) once they are recorded:
 * the audit client spools a record before it returns, so a report is never
 * forgotten by Blender before it is safe here. A report seen again (an ack
 * lost with the link) is acknowledged, not recorded twice. On SIGTERM the
 * running plan ends as "interrupted" (Blender rolls it back when the link
 * closes), queued plans are cancelled, and the audit client is flushed. */
#include "executor_service.h"
#include "audit_client.h"
#include "blender_actor.h"
#include "blender_link.h"
#include "bus.h"
#include "executor_job.h"
#include "log.h"
#include "peer.h"
#include "plan_seal.h"
#include "progress_stamp.h"
#include "script_jobs.h"
#include "roles.h"
#include "service.h"

#define QUEUE_MAX 1000
#define RECORDED_MAX 64             /* interrupted-plan report ids remembered (a lost ack repeats them) */
#define REPORT_ID_LEN 16
#define HELD_MAX 64                 /* interrupted-plan events kept for a subscriber that is not there yet */

typedef struct {
    bmq_config_t  *cfg;
    zsock_t       *router, *pub;
    zactor_t      *blender;
    bmq_audit_t   *audit;
    bmq_script_jobs_t *scripts;       /* BPY scripts: sandbox runs, confirmed live runs (issue 8) */
    bmq_seal_key_t key;
    bmq_seal_guard_t *seals;          /* nonces of accepted seals, until they expire (issue 12) */
    const char    *name;              /* executor.name: seals must be made for it */
    zlistx_t      *queue;
    bmq_job_t     *current;
    bool           waiting;           /* a CALL is outstanding */
    bool           blender_up;
    char           blender_detail[256];
    int            step_timeout, command_timeout;
    int64_t        plans_run;
    char           recorded[RECORDED_MAX][REPORT_ID_LEN + 1];   /* report ids already in the audit trail */
    size_t         recorded_next;
    bool           subscribed;        /* the XPUB saw a subscriber (the gateway) */
    zhashx_t      *requesters;        /* routing id (hex) → int64_t* last heard (ms), for those that heartbeat */
    int            interval, liveness;
    int64_t        last_watch;
    int64_t        watch_grace;       /* after a stall of our own: no requester judged before then */
    json_t        *held;              /* [{cid, body}]: interrupted-plan events waiting for one */
} s_exec_t;

static const char *s_state (const s_exec_t *ex)
{
    return ex->blender_up ? "blender connected" : "blender disconnected (reconnecting)";
}

static void s_reply (s_exec_t *ex, bmq_job_t *job, bmq_envelope_t *env)
{
    bmq_bus_send_and_destroy (ex->router, job->rid, &env);
}

static void s_progress (s_exec_t *ex, bmq_job_t *job, json_t *body)
{
    json_object_set_new (body, "plan_id", json_string (job->plan_id));
    json_object_set_new (body, "total", json_integer ((json_int_t) job->total));
    bmq_progress_stamp (body);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, job->cid, body);
    bmq_bus_send (ex->router, job->rid, env);
    bmq_bus_send (ex->pub, NULL, env);
    bmq_envelope_destroy (&env);
}

/* A progress event with no requester (watchers only). `body` is stolen. */
static void s_publish (s_exec_t *ex, const char *cid, json_t *body)
{
    bmq_progress_stamp (body);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, cid, body);
    bmq_bus_send (ex->pub, NULL, env);
    bmq_envelope_destroy (&env);
}

/* Reports of interrupted plans arrive right after the executor (re)starts,
 * before the gateway's SUB has (re)connected, and a PUB drops what nobody
 * subscribes to yet. The events socket is an XPUB so the executor knows when
 * a subscriber is there: until then these events are held (bounded). */
static void s_publish_late (s_exec_t *ex, const char *cid, json_t *body)
{
    if (ex->subscribed) { s_publish (ex, cid, body); return; }
    if (json_array_size (ex->held) >= HELD_MAX) {
        bmq_warn ("no watcher yet: an interrupted-plan event is dropped (its audit record stays)");
        json_decref (body);
        return;
    }
    json_array_append_new (ex->held, json_pack ("{s:s?, s:o}", "cid", cid, "body", body));
}

/* A (un)subscription on the XPUB: the first subscriber gets what was held. */
static void s_on_subscription (s_exec_t *ex)
{
    zframe_t *frame = zframe_recv (ex->pub);
    if (frame && zframe_size (frame) >= 1) ex->subscribed = zframe_data (frame)[0] == 1;
    zframe_destroy (&frame);
    if (!ex->subscribed || !json_array_size (ex->held)) return;
    size_t i;
    json_t *item;
    json_array_foreach (ex->held, i, item)
        s_publish (ex, json_string_value (json_object_get (item, "cid")), json_incref (json_object_get (item, "body")));
    json_array_clear (ex->held);
}

/* The plan is open in Blender and the link is gone (or about to go): the
 * add-on rolls it back itself and reports what it removed at the next
 * connection, recorded then as plan.interrupted in this story. A commit on its
 * way may or may not have arrived. */
static json_t *s_rollback_by_blender (const bmq_job_t *job)
{
    if (job->phase == BMQ_PHASE_COMMIT && !*job->fail_status)
        return json_pack ("{s:s, s:s, s:s}", "status", "unknown", "by", "blender", "detail",
                          "the link dropped while the plan was being committed: if the commit did not reach Blender, "
                          "Blender rolled the plan back, and plan.interrupted in this story says what it removed");
    return json_pack ("{s:s, s:s, s:s}", "status", "blender rolls back", "by", "blender", "detail",
                      "Blender rolls back a plan whose link drops; what it removed is recorded as plan.interrupted "
                      "in this story when the executor reconnects (a Blender that died lost its scene instead)");
}

static void s_call (s_exec_t *ex, const char *cmd, json_t *args, int timeout_ms)
{
    char *text = json_dumps (args, JSON_COMPACT);
    char timeout[16];
    snprintf (timeout, sizeof timeout, "%d", timeout_ms);
    zstr_sendx (ex->blender, "CALL", "job", cmd, text ? text : "{}", timeout, NULL);
    free (text);
    ex->waiting = true;
}

static void s_finish_plan (s_exec_t *ex, const char *status, const char *error, json_int_t failed_step,
                           json_t *rollback)
{
    bmq_job_t *job = ex->current;
    double ms = (bmq_mono_us () - job->started_us) / 1000.0;
    char honest[700];
    if (!strcmp (status, "interrupted") && !rollback) {      /* the link is gone with the plan open */
        rollback = s_rollback_by_blender (job);
        snprintf (honest, sizeof honest, "%s; %s", error ? error : "interrupted",
                  job->phase == BMQ_PHASE_COMMIT && !*job->fail_status ? "the commit may not have reached Blender"
                                                                      : "Blender rolls the plan back");
        error = honest;
    }
    json_t *end = json_pack ("{s:s, s:s, s:I, s:f, s:O}", "event", "plan", "status", status,
                             "step", (json_int_t) job->step, "duration_ms", ms, "objects", job->created);
    if (rollback) json_object_set_new (end, "rollback", rollback);
    if (error) json_object_set_new (end, "error", json_string (error));
    if (failed_step > 0) json_object_set_new (end, "failed_step", json_integer (failed_step));
    s_progress (ex, job, json_deep_copy (end));
    json_object_set_new (end, "plan_id", json_string (job->plan_id));
    json_object_set_new (end, "steps_done", json_integer ((json_int_t) job->step));
    json_object_set_new (end, "steps_total", json_integer ((json_int_t) job->total));
    bmq_audit_record (ex->audit, job->cid, "plan.end", json_deep_copy (end));
    s_reply (ex, job, bmq_envelope_new (BMQ_MSG_EXECUTE_RESULT, job->cid, end));
    bmq_info ("plan %s %s after %zu/%zu steps (%.1f ms)%s%s", job->plan_id, status, job->step, job->total, ms,
              error ? ": " : "", error ? error : "");
    ex->plans_run++;
    bmq_job_destroy (&ex->current);
}

/* Start or continue work when nothing is outstanding. */
static void s_pump (s_exec_t *ex)
{
    while (!ex->waiting) {
        if (!ex->current) {
            ex->current = zlistx_first (ex->queue) ? zlistx_detach (ex->queue, NULL) : NULL;
            if (!ex->current) return;
            ex->current->started_us = bmq_mono_us ();
            if (ex->current->kind == BMQ_JOB_PLAN) {
                s_progress (ex, ex->current, json_pack ("{s:s, s:s, s:i}", "event", "plan", "status", "started", "step", 0));
                bmq_audit_record (ex->audit, ex->current->cid, "plan.start",
                                  json_pack ("{s:s, s:I}", "plan_id", ex->current->plan_id, "steps", (json_int_t) ex->current->total));
            }
        }
        bmq_job_t *job = ex->current;
        if (job->kind == BMQ_JOB_COMMAND) {
            int script_ms = ex->scripts ? bmq_script_jobs_link_timeout (ex->scripts, job) : 0;     /* run_script: its own */
            s_call (ex, job->command, job->args, script_ms > 0 ? script_ms : ex->command_timeout);
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
static void s_phase_result (s_exec_t *ex, int status, json_t *reply, const char *err)
{
    bmq_job_t *job = ex->current;
    bool ok = status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"));
    const char *why = status == BMQ_LINK_OK ? json_string_value (json_object_get (reply, "error")) : err;
    if (status == BMQ_LINK_DOWN || status == BMQ_LINK_PROTOCOL) {
        s_finish_plan (ex, "interrupted", *job->fail_error ? job->fail_error : (err && *err ? err : "connection to Blender lost"),
                       job->failed_step, NULL);
        return;
    }
    if (job->phase == BMQ_PHASE_BEGIN) {
        if (ok) { job->phase = BMQ_PHASE_STEPS; return; }
        char msg[600];
        snprintf (msg, sizeof msg, "Blender could not open the plan: %s", why ? why : "timed out");
        s_finish_plan (ex, "failed", msg, 0, NULL);
    }
    else if (job->phase == BMQ_PHASE_COMMIT) {
        if (*job->fail_status) s_finish_plan (ex, job->fail_status, job->fail_error, job->failed_step, NULL);
        else s_finish_plan (ex, "done", NULL, 0, NULL);
    }
    else {
        json_t *result = json_object_get (reply, "result");
        json_t *rb = ok ? json_pack ("{s:s, s:O, s:O}", "status", "rolled back",
                                     "removed", json_object_get (result, "removed"), "restored", json_object_get (result, "restored"))
                        : json_pack ("{s:s, s:s}", "status", "rollback failed", "error", why ? why : "timed out");
        json_t *ev = json_pack ("{s:s, s:I, s:s, s:O}", "event", "rollback", "step", (json_int_t) job->step,
                                "status", ok ? "rolled back" : "rollback failed", "rollback", rb);
        s_progress (ex, job, ev);
        bmq_audit_record (ex->audit, job->cid, "rollback", json_pack ("{s:s, s:O}", "plan_id", job->plan_id, "rollback", rb));
        s_finish_plan (ex, job->fail_status, job->fail_error, job->failed_step, rb);
    }
}

static void s_step_result (s_exec_t *ex, int status, json_t *reply, const char *err, double elapsed_us)
{
    bmq_job_t *job = ex->current;
    json_t *step = json_array_get (job->plan, job->step);
    const char *op = json_string_value (json_object_get (step, "operation"));
    json_int_t k = (json_int_t) job->step + 1;
    json_t *ev = json_pack ("{s:s, s:I, s:s, s:f}", "event", "step", "step", k, "operation", op ? op : "?",
                            "duration_ms", elapsed_us / 1000.0);
    json_t *bpy_ms = json_object_get (reply, "bpy_ms");
    if (json_is_number (bpy_ms)) json_object_set (ev, "bpy_ms", bpy_ms);
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
    bmq_audit_record (ex->audit, job->cid, "step", json_pack ("{s:s, s:O, s:O}", "plan_id", job->plan_id,
                                                              "event", ev, "step", step ? step : json_null ()));
    char error_text[600];
    snprintf (error_text, sizeof error_text, "step %lld (%s): %s", (long long) k, op ? op : "?",
              json_string_value (json_object_get (ev, "error")) ? json_string_value (json_object_get (ev, "error")) : "");
    s_progress (ex, job, ev);
    if (!fail) { job->step++; return; }
    if (!strcmp (fail, "interrupted")) { s_finish_plan (ex, fail, error_text, k, NULL); return; }
    /* a failed step: stop, then roll back (or keep what was done, if asked) */
    snprintf (job->fail_status, sizeof job->fail_status, "%s", fail);
    snprintf (job->fail_error, sizeof job->fail_error, "%s", error_text);
    job->failed_step = k;
    job->phase = job->keep_partial ? BMQ_PHASE_COMMIT : BMQ_PHASE_ROLLBACK;
}

/* inspect.request: the add-on's rna_info answer becomes inspect.reply {tool};
 * an error from the add-on means Blender has no such operator (unknown_tool),
 * a link failure is reported as such (the asker may retry). */
static bmq_envelope_t *s_inspect_reply (const bmq_envelope_t *req, int status, json_t *reply, const char *err)
{
    json_t *result = json_object_get (reply, "result");
    if (status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok")) && json_is_object (result))
        return bmq_envelope_reply (req, BMQ_MSG_INSPECT_REPLY, json_pack ("{s:O}", "tool", result));
    if (status == BMQ_LINK_OK) {
        const char *msg = json_string_value (json_object_get (reply, "error"));
        return bmq_envelope_error (req, "unknown_tool", "%s", msg ? msg : "Blender has no such operator");
    }
    return bmq_envelope_error (req, status == BMQ_LINK_TIMEOUT ? "timeout" : "interrupted", "inspect: %s",
                               err && *err ? err : "Blender is not reachable");
}

static void s_command_result (s_exec_t *ex, int status, json_t *reply, zframe_t *blob, const char *err)
{
    bmq_job_t *job = ex->current;
    bmq_envelope_t env0 = { .type = bmq_msg_type_from_name (job->req_type) };
    snprintf (env0.cid, sizeof env0.cid, "%s", job->cid);
    bmq_envelope_t *out;
    if (bmq_script_jobs_owns (job)) {
        bmq_script_jobs_on_command (ex->scripts, job, status, reply, blob, err, ex->queue);
        bmq_job_destroy (&ex->current);
        return;
    }
    if (env0.type == BMQ_MSG_INSPECT_REQUEST) {
        s_reply (ex, job, s_inspect_reply (&env0, status, reply, err));
        bmq_job_destroy (&ex->current);
        return;
    }
    if (status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"))) {
        json_t *result = json_object_get (reply, "result");
        out = bmq_envelope_reply (&env0, BMQ_MSG_SCENE_REPLY,
            json_pack ("{s:s, s:O}", "command", job->command, "result", json_is_object (result) ? result : json_object ()));
        if (zframe_size (blob) && bmq_envelope_set_blob (out, zframe_data (blob), zframe_size (blob))) {
            bmq_envelope_destroy (&out);
            out = bmq_envelope_error (&env0, "too_large", "%s returned more than %u bytes", job->command, BMQ_MAX_BLOB);
        }
    }
    else if (status == BMQ_LINK_OK) {
        const char *msg = json_string_value (json_object_get (reply, "error"));
        out = bmq_envelope_error (&env0, "blender_error", "%s", msg ? msg : "Blender reported an error");
    }
    else
        out = bmq_envelope_error (&env0, status == BMQ_LINK_TIMEOUT ? "timeout" : "interrupted", "%s: %s",
                                  job->command, err && *err ? err : "Blender is not reachable");
    s_reply (ex, job, out);
    bmq_job_destroy (&ex->current);
}

static bool s_recorded (const s_exec_t *ex, const char *id)
{
    for (size_t i = 0; i < RECORDED_MAX; i++)
        if (!strcmp (ex->recorded[i], id)) return true;
    return false;
}

/* One plan Blender rolled back (by "blender": on a dropped link; by
 * "executor": held open, rolled back at reconnect): a plan.interrupted record
 * in its story and a progress event for watchers. */
static void s_plan_interrupted (s_exec_t *ex, const json_t *report, const char *by)
{
    const char *cid = json_string_value (json_object_get (report, "cid"));
    const char *plan_id = json_string_value (json_object_get (report, "plan_id"));
    json_t *rollback = json_object_get (report, "rollback");
    json_int_t steps_run = json_integer_value (json_object_get (report, "steps_run"));
    json_int_t steps_total = json_integer_value (json_object_get (report, "steps_total"));
    json_t *rec = json_pack ("{s:s, s:I, s:I, s:O, s:s, s:s}", "plan_id", plan_id ? plan_id : "?", "steps_run", steps_run,
                             "steps_total", steps_total, "rollback", rollback ? rollback : json_null (), "by", by,
                             "reason", json_string_value (json_object_get (report, "reason")) ?
                                       json_string_value (json_object_get (report, "reason")) : "?");
    const char *extra[] = { "id", "at", "error", NULL };
    const char *as[] = { "report_id", "at", "error", NULL };
    for (int i = 0; extra[i]; i++)
        if (json_object_get (report, extra[i])) json_object_set (rec, as[i], json_object_get (report, extra[i]));
    bmq_warn ("plan %s (story %s) was interrupted after %lld step(s); rolled back by Blender: %s", plan_id ? plan_id : "?",
              cid ? cid : "?", (long long) steps_run, json_string_value (json_object_get (report, "reason")) ?
              json_string_value (json_object_get (report, "reason")) : "?");
    json_t *ev = json_pack ("{s:s, s:s, s:s, s:I, s:I, s:O, s:s}", "event", "plan", "status", "interrupted",
                            "plan_id", plan_id ? plan_id : "?", "step", steps_run, "total", steps_total,
                            "rollback", rollback ? rollback : json_null (), "by", by);
    bmq_audit_record (ex->audit, cid, "plan.interrupted", rec);
    s_publish_late (ex, cid, ev);
}

/* "HELLO": what Blender said about plans interrupted before this connection.
 * Each new report is recorded, then all are acknowledged so Blender forgets them. */
static void s_on_hello (s_exec_t *ex, const char *text)
{
    json_t *hello = text ? json_loads (text, 0, NULL) : NULL;
    json_t *ids = json_array ();
    size_t i;
    json_t *report;
    json_array_foreach (json_object_get (hello, "interrupted"), i, report) {
        const char *id = json_string_value (json_object_get (report, "id"));
        if (!id || strlen (id) != REPORT_ID_LEN) continue;      /* the link checked it; belt and braces */
        if (!s_recorded (ex, id)) {
            s_plan_interrupted (ex, report, "blender");
            snprintf (ex->recorded[ex->recorded_next++ % RECORDED_MAX], REPORT_ID_LEN + 1, "%s", id);
        }
        json_array_append_new (ids, json_string (id));
    }
    json_t *open = json_object_get (hello, "open_plan");
    if (json_is_object (open)) {
        if (!json_object_get (open, "reason"))
            json_object_set_new (open, "reason", json_string ("held open by Blender; rolled back at reconnect"));
        s_plan_interrupted (ex, open, "executor");
    }
    if (json_array_size (ids)) {
        char *list = json_dumps (ids, JSON_COMPACT);
        if (list) zstr_sendx (ex->blender, "ACK", list, NULL);
        free (list);
    }
    json_decref (ids);
    json_decref (hello);
}

static void s_on_actor (s_exec_t *ex)
{
    zmsg_t *msg = zmsg_recv (ex->blender);
    if (!msg) return;
    char *kind = zmsg_popstr (msg);
    if (kind && !strcmp (kind, "STATE")) {
        char *state = zmsg_popstr (msg), *detail = zmsg_popstr (msg);
        ex->blender_up = state && !strcmp (state, "connected");
        snprintf (ex->blender_detail, sizeof ex->blender_detail, "%s", detail ? detail : "");
        if (ex->blender_up) bmq_info ("Blender connected");
        else bmq_warn ("Blender disconnected: %s", ex->blender_detail);
        bmq_audit_record (ex->audit, NULL, "blender.state", json_pack ("{s:s, s:s}", "state", state ? state : "?",
                                                                       "detail", ex->blender_detail));
        free (state);
        free (detail);
    }
    else if (kind && !strcmp (kind, "HELLO")) {
        char *text = zmsg_popstr (msg);
        s_on_hello (ex, text);
        free (text);
    }
    else if (kind && !strcmp (kind, "RESULT") && ex->current) {
        char *job = zmsg_popstr (msg), *code = zmsg_popstr (msg), *reply_text = zmsg_popstr (msg);
        zframe_t *blob = zmsg_pop (msg);
        char *err = zmsg_popstr (msg), *elapsed = zmsg_popstr (msg);
        json_t *reply = reply_text && *reply_text ? json_loads (reply_text, 0, NULL) : NULL;
        int status = code ? atoi (code) : BMQ_LINK_DOWN;
        ex->waiting = false;
        if (ex->current->kind == BMQ_JOB_PLAN && ex->current->phase != BMQ_PHASE_STEPS) s_phase_result (ex, status, reply, err);
        else if (ex->current->kind == BMQ_JOB_PLAN) s_step_result (ex, status, reply, err, elapsed ? atof (elapsed) : 0);
        else s_command_result (ex, status, reply, blob, err);
        json_decref (reply);
        zframe_destroy (&blob);
        free (job); free (code); free (reply_text); free (err); free (elapsed);
    }
    free (kind);
    zmsg_destroy (&msg);
}

static bmq_envelope_t *s_accept_plan (s_exec_t *ex, const bmq_envelope_t *req, zframe_t *rid)
{
    json_t *plan = json_object_get (req->body, "plan");
    char hash[BMQ_HEX_DIGEST], why[300] = "the plan does not match its hash";
    bmq_seal_status_t sealed = BMQ_SEAL_INVALID;
    if (!bmq_plan_hash (plan, hash) && !strcmp (hash, bmq_body_str (req, "plan_hash")))
        sealed = bmq_seal_check (&ex->key, hash, bmq_body_str (req, "seal"), ex->name, bmq_seal_now_ms (), ex->seals,
                                 why, sizeof why);
    if (sealed != BMQ_SEAL_OK) {
        bmq_audit_record (ex->audit, req->cid, "plan.refused",
                          json_pack ("{s:s, s:s, s:s, s:s}", "plan_id", bmq_body_str (req, "plan_id"), "reason", "seal",
                                     "seal", bmq_seal_status_name (sealed), "detail", why));
        return bmq_envelope_error (req, "unsealed", "the plan does not carry a valid validator seal (%s); nothing was run", why);
    }
    if (zlistx_size (ex->queue) >= QUEUE_MAX)
        return bmq_envelope_error (req, "busy", "the executor queue is full (%d plans)", QUEUE_MAX);
    zlistx_add_end (ex->queue, bmq_job_new_plan (req, rid));
    return bmq_envelope_reply (req, BMQ_MSG_EXECUTE_ACCEPTED,
        json_pack ("{s:s, s:I, s:s}", "plan_id", bmq_body_str (req, "plan_id"),
                   "position", (json_int_t) (zlistx_size (ex->queue) + (ex->current ? 1 : 0)), "blender", s_state (ex)));
}

/* Scene commands a client may ask for directly. Everything that changes the
 * scene step by step goes through sealed plans instead; run_step and the plan
 * transaction commands are never forwarded from a client. */
static const char *s_scene_commands[] = {
    "scene_info", "object_info", "render_preview", "save_blend", "reset_scene", "bench_direct", "viewport_screenshot", NULL
};
#define SCENE_COMMANDS_TEXT "scene_info, object_info, render_preview, save_blend, reset_scene, bench_direct, viewport_screenshot"

static bool s_scene_command_allowed (const char *command)
{
    for (int i = 0; command && s_scene_commands[i]; i++)
        if (!strcmp (command, s_scene_commands[i])) return true;
    return false;
}

/* inspect.request: queued like a scene command, running the add-on's rna_info. */
static bmq_envelope_t *s_accept_inspect (s_exec_t *ex, const bmq_envelope_t *req, zframe_t *rid)
{
    const char *name = bmq_body_str (req, "tool_name");
    if (strlen (name) > 200)            /* no operator name is that long: do not ship it to Blender */
        return bmq_envelope_error (req, "unknown_tool", "unknown operator: the name is %zu bytes long", strlen (name));
    if (zlistx_size (ex->queue) >= QUEUE_MAX) return bmq_envelope_error (req, "busy", "the executor queue is full");
    bmq_envelope_t *cmd = bmq_envelope_reply (req, BMQ_MSG_INSPECT_REQUEST, json_pack ("{s:s, s:{s:s}}",
        "command", "rna_info", "args", "operation", name));
    zlistx_add_end (ex->queue, bmq_job_new_command (cmd, rid));
    bmq_envelope_destroy (&cmd);
    return NULL;
}

/* cancel.request {plan_id}: the running plan stops after its current step; a
 * queued one never starts. Unknown ids are ignored (the plan already ended). */
static void s_cancel (s_exec_t *ex, const bmq_envelope_t *env)
{
    const char *plan_id = bmq_body_str (env, "plan_id");
    if (!plan_id) return;
    if (ex->current && ex->current->kind == BMQ_JOB_PLAN && !strcmp (ex->current->plan_id, plan_id)) {
        bmq_audit_record (ex->audit, env->cid, "plan.cancel", json_pack ("{s:s}", "plan_id", plan_id));
        ex->current->cancel = true;
        return;
    }
    for (bmq_job_t *job = zlistx_first (ex->queue); job; job = zlistx_next (ex->queue)) {
        if (job->kind != BMQ_JOB_PLAN || strcmp (job->plan_id, plan_id)) continue;
        bmq_audit_record (ex->audit, env->cid, "plan.cancel", json_pack ("{s:s}", "plan_id", plan_id));
        zlistx_detach_cur (ex->queue);
        bmq_job_t *saved = ex->current;
        ex->current = job;
        job->started_us = bmq_mono_us ();
        s_finish_plan (ex, "cancelled", "cancelled by the client before it started", 0, NULL);
        ex->current = saved;
        return;
    }
    /* an ended plan, or one another process of this executor had (the gateway
     * cancels what it cut, whoever gets it): nothing to stop, nothing to record */
    bmq_debug ("cancel for plan %s, which is not here", plan_id);
}

/* ---- a requester that goes silent ---------------------------------------------
 * The gateway heartbeats us; when it falls silent for liveness × interval it
 * has also stopped hearing us (dead, restarted, or cut off by a partition),
 * and its client was told the plan was interrupted and rolled back
 * (gateway_service.c s_fail_unavailable). So the plan stops and is rolled
 * back here too: the scene then says what the client was told. Requesters
 * that never heartbeat are never judged. */

static void s_free_int (void **item) { free (*item); *item = NULL; }

static void s_heard (s_exec_t *ex, zframe_t *rid, bool heartbeat)
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

static bool s_requester_silent (s_exec_t *ex, zframe_t *rid, int64_t now)
{
    char *key = zframe_strhex (rid);
    int64_t *last = zhashx_lookup (ex->requesters, key);
    free (key);
    return last && now - *last > (int64_t) ex->interval * ex->liveness;
}

static void s_watch_requesters (s_exec_t *ex)
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
            s_finish_plan (ex, "interrupted", "its gateway went silent before it started; nothing was run", 0,
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

static void s_on_request (s_exec_t *ex)
{
    zframe_t *rid = NULL;
    bmq_envelope_t *env = bmq_bus_recv (ex->router, &rid);
    if (!env) { zframe_destroy (&rid); return; }
    bmq_envelope_t *reply = NULL;
    s_heard (ex, rid, env->type == BMQ_MSG_HEARTBEAT);
    /* the gateway for a client of the right role; planner and validators for RNA (roles.def) */
    if (bmq_roles_refused (ex->router, rid, env, "executor", bmq_roles_curve (ex->cfg), 0, ex->audit)) { }
    else if (bmq_answer_heartbeat (ex->router, rid, env, "executor", s_state (ex))) { }
    else if (env->type == BMQ_MSG_EXECUTE_REQUEST) reply = s_accept_plan (ex, env, rid);
    else if (env->type == BMQ_MSG_CANCEL_REQUEST) s_cancel (ex, env);
    else if (env->type == BMQ_MSG_INSPECT_REQUEST) reply = s_accept_inspect (ex, env, rid);
    else if (env->type == BMQ_MSG_SCRIPT_LIST) reply = bmq_script_jobs_list (ex->scripts, env);
    else if (env->type == BMQ_MSG_SCRIPT_REQUEST || env->type == BMQ_MSG_SCRIPT_CONFIRM) {
        if (zlistx_size (ex->queue) >= QUEUE_MAX) reply = bmq_envelope_error (env, "busy", "the executor queue is full");
        else reply = bmq_script_jobs_on_request (ex->scripts, env, rid, ex->queue);
    }
    else if (env->type == BMQ_MSG_SCENE_REQUEST) {
        const char *command = bmq_body_str (env, "command");
        if (!s_scene_command_allowed (command))
            reply = bmq_envelope_error (env, "bad_request", "'%.64s' is not a scene command (allowed: %s)", command,
                                        SCENE_COMMANDS_TEXT);
        else if (zlistx_size (ex->queue) >= QUEUE_MAX) reply = bmq_envelope_error (env, "busy", "the executor queue is full");
        else {
            bmq_audit_record (ex->audit, env->cid, "scene", json_pack ("{s:s}", "command", command));
            zlistx_add_end (ex->queue, bmq_job_new_command (env, rid));
        }
    }
    else if (env->type == BMQ_MSG_STATUS_REQUEST)
        reply = bmq_envelope_reply (env, BMQ_MSG_STATUS_REPLY,
            json_pack ("{s:s, s:s, s:{s:b, s:s, s:s, s:I}, s:I, s:s?, s:I}", "service", "executor", "state", s_state (ex),
                       "blender", "connected", ex->blender_up, "detail", ex->blender_detail,
                       "host", bmq_config_str (ex->cfg, "blender.host"), "port", (json_int_t) bmq_config_int (ex->cfg, "blender.port"),
                       "queued", (json_int_t) zlistx_size (ex->queue),
                       "running", ex->current && ex->current->kind == BMQ_JOB_PLAN ? ex->current->plan_id : NULL,
                       "plans_run", (json_int_t) ex->plans_run));
    else reply = bmq_envelope_error (env, "unsupported", "executor does not handle %s", bmq_msg_type_name (env->type));
    if (reply) bmq_bus_send_and_destroy (ex->router, rid, &reply);
    zframe_destroy (&rid);
    bmq_envelope_destroy (&env);
}

/* SIGTERM (or SIGINT): let the call Blender is running answer (bounded), so a
 * commit that went through is reported as done; then the running plan ends as
 * "interrupted" (the link closes next and Blender rolls it back), a running
 * command gets an error, and queued plans are cancelled. */
static void s_stop (s_exec_t *ex)
{
    if (ex->waiting) {
        zpoller_t *poller = zpoller_new (ex->blender, NULL);
        zpoller_set_nonstop (poller, true);           /* zsys_interrupted is set: wait anyway */
        int64_t deadline = bmq_mono_ms () + (ex->step_timeout < 5000 ? ex->step_timeout : 5000);
        while (ex->waiting && bmq_mono_ms () < deadline) {
            if (zpoller_wait (poller, 100) == ex->blender) s_on_actor (ex);
        }
        zpoller_destroy (&poller);
    }
    if (ex->current && ex->current->kind == BMQ_JOB_PLAN)
        s_finish_plan (ex, "interrupted", "the executor was stopped (SIGTERM or SIGINT) before the plan ended", 0, NULL);
    else if (ex->current) {
        bmq_envelope_t env0 = { .type = bmq_msg_type_from_name (ex->current->req_type) };
        snprintf (env0.cid, sizeof env0.cid, "%s", ex->current->cid);
        if (ex->current->rid && !bmq_script_jobs_owns (ex->current))     /* a script run's owner is stopping too */
            s_reply (ex, ex->current, bmq_envelope_error (&env0, "interrupted", "the executor stopped before %s answered",
                                                          ex->current->command));
        bmq_job_destroy (&ex->current);
    }
    for (bmq_job_t *job = zlistx_first (ex->queue); job; job = zlistx_next (ex->queue)) {
        if (job->kind != BMQ_JOB_PLAN) continue;
        zlistx_detach_cur (ex->queue);          /* the cursor steps back: iterating on is safe */
        ex->current = job;
        job->started_us = bmq_mono_us ();
        s_finish_plan (ex, "cancelled", "the executor stopped before the plan started", 0, NULL);
    }
}

static int s_read_token (const char *path, char *out, size_t len)
{
    FILE *f = path && *path ? fopen (path, "r") : NULL;
    if (!f) return -1;
    size_t n = fread (out, 1, len - 1, f);
    fclose (f);
    out[n] = 0;
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' ')) out[--n] = 0;
    return n ? 0 : -1;
}

int bmq_executor_service_run (bmq_config_t *cfg)
{
    char err[512];
    s_exec_t ex = { .cfg = cfg };
    ex.step_timeout = (int) bmq_config_int (cfg, "executor.step_timeout_ms");
    ex.interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms") > 0 ? (int) bmq_config_int (cfg, "heartbeat.interval_ms") : 1000;
    ex.liveness = (int) bmq_config_int (cfg, "heartbeat.liveness") > 0 ? (int) bmq_config_int (cfg, "heartbeat.liveness") : 3;
    ex.requesters = zhashx_new ();
    zhashx_set_destructor (ex.requesters, s_free_int);
    ex.command_timeout = (int) bmq_config_int (cfg, "executor.command_timeout_ms");
    const char *keypath = bmq_config_str (cfg, "security.verdict_key_file");
    if (!*keypath || bmq_seal_key_load (keypath, &ex.key, err, sizeof err)) {
        bmq_error ("no verdict key: %s", *keypath ? err : "security.verdict_key_file is not set");
        return 1;
    }
    bmq_blender_actor_args_t args = {
        .port = (int) bmq_config_int (cfg, "blender.port"),
        .interval_ms = (int) bmq_config_int (cfg, "heartbeat.interval_ms"),
        .connect_timeout_ms = (int) bmq_config_int (cfg, "blender.connect_timeout_ms"),
        .reconnect_max_ms = (int) bmq_config_int (cfg, "blender.reconnect_max_ms"),
        .command_timeout_ms = (int) bmq_config_int (cfg, "executor.command_timeout_ms"),
    };
    snprintf (args.host, sizeof args.host, "%s", bmq_config_str (cfg, "blender.host"));
    bmq_service_path (bmq_config_str (cfg, "validator.palette"), "proto/palette.yaml", args.palette, sizeof args.palette);
    if (s_read_token (bmq_config_str (cfg, "blender.token_file"), args.token, sizeof args.token)) {
        bmq_error ("cannot read the Blender token from blender.token_file '%s'", bmq_config_str (cfg, "blender.token_file"));
        return 1;
    }
    ex.router = bmq_bus_bind (ZMQ_ROUTER, bmq_config_str (cfg, "executor.endpoint"));
    ex.pub = bmq_bus_bind (ZMQ_XPUB, bmq_config_str (cfg, "executor.events"));    /* knows its subscribers */
    ex.held = json_array ();
    ex.audit = bmq_audit_new_from_config (cfg);
    ex.queue = zlistx_new ();
    zlistx_set_destructor (ex.queue, bmq_job_free);
    int code = 1;
    ex.scripts = ex.router && ex.pub && ex.audit ? bmq_script_jobs_new (&ex.key, ex.audit, ex.router, ex.pub) : NULL;
    ex.name = *bmq_config_str (cfg, "executor.name") ? bmq_config_str (cfg, "executor.name") : "local";
    bmq_progress_stamp_name (ex.name);
    int64_t seal_ttl = bmq_config_int (cfg, "security.seal_ttl_ms") > 0 ? bmq_config_int (cfg, "security.seal_ttl_ms")
                                                                         : BMQ_SEAL_TTL_DEFAULT_MS;
    ex.seals = bmq_seal_guard_new (100000, seal_ttl);
    if (ex.scripts) bmq_script_jobs_set_timeout (ex.scripts, (int) bmq_config_int (cfg, "executor.script_timeout_ms"));
    if (ex.scripts) bmq_script_jobs_set_seals (ex.scripts, ex.name, ex.seals);
    if (ex.router && ex.pub && ex.audit && ex.scripts) {
        ex.blender = bmq_blender_actor_new (&args);
        bmq_info ("executor ready on %s (events %s), Blender at %s:%d", bmq_config_str (cfg, "executor.endpoint"),
                  bmq_config_str (cfg, "executor.events"), args.host, args.port);
        zpoller_t *poller = zpoller_new (ex.router, ex.blender, bmq_audit_sock (ex.audit),
                                         bmq_script_jobs_worker (ex.scripts), ex.pub, NULL);
        while (!zsys_interrupted) {
            zsock_t *which = zpoller_wait (poller, 250);
            if (which == ex.router) s_on_request (&ex);
            else if (which == (void *) ex.blender) s_on_actor (&ex);
            else if (which == (void *) bmq_script_jobs_worker (ex.scripts)) bmq_script_jobs_on_worker (ex.scripts);
            else if (which == ex.pub) s_on_subscription (&ex);
            else if (which) {
                bmq_envelope_t *env = bmq_bus_recv (which, NULL);
                if (env) bmq_audit_handle (ex.audit, env);
                bmq_envelope_destroy (&env);
            }
            s_watch_requesters (&ex);
            s_pump (&ex);
            bmq_audit_tick (ex.audit);
        }
        bmq_info ("executor stopping (%lld plans run)", (long long) ex.plans_run);
        zpoller_destroy (&poller);
        s_stop (&ex);
        zactor_destroy (&ex.blender);
        bmq_script_jobs_destroy (&ex.scripts);
        bmq_audit_flush (ex.audit, 1000);
        code = 0;
    }
    bmq_script_jobs_destroy (&ex.scripts);
    bmq_seal_guard_destroy (&ex.seals);
    bmq_job_destroy (&ex.current);
    zlistx_destroy (&ex.queue);
    zhashx_destroy (&ex.requesters);
    bmq_audit_destroy (&ex.audit);
    zsock_destroy (&ex.pub);
    json_decref (ex.held);
    zsock_destroy (&ex.router);
    return code;
}
