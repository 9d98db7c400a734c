/* executor_service — the executor's loop and request intake.
 *
 * Only sealed plans run: the seal (HMAC by a validator) must match the hash
 * of exactly the plan received; they run one at a time in arrival order
 * (executor_plan.c). Scene commands, inspect requests and BPY scripts queue
 * beside them as single commands. The loop polls the ROUTER (requests), the
 * Blender actor's pipe (results, link state, hello reports: see
 * executor_interrupted.c), the script worker, the XPUB and the audit client,
 * and judges silent requesters (executor_requesters.c). On SIGTERM the
 * running plan ends as "interrupted" (Blender rolls it back when the link
 * closes), queued plans are cancelled, and the audit client is flushed. */
#include "executor_service.h"
#include "executor_internal.h"
#include "assets_http.h"
#include "blender_actor.h"
#include "blender_link.h"
#include "blender_rna.h"
#include "log.h"
#include "peer.h"
#include "progress_stamp.h"
#include "roles.h"
#include "service.h"

static const char *s_state (const executor_t *ex)
{
    if (ex->busy) return "blender busy";
    if (ex->blender_up) return "blender connected";
    /* a new executor's first connection is not a lost Blender: the gateway lets work through
     * (the call connects, or answers why not) instead of refusing it as blender_unavailable */
    return ex->blender_state_known ? "blender disconnected (reconnecting)" : "blender connecting";
}

/* Busy (issue 23): a call outstanding with nothing from Blender (no answer,
 * no progress) for more than two heartbeats, or a Blender that accepted a
 * connection or a ping and then said nothing (a call the executor gave up on
 * still runs there). `status` says "blender busy", never "ok"; the file
 * blender.busy_file holds the wall-clock ms since when, for the supervisor,
 * which kills a Blender busy for longer than blender.hang_kill_ms. */
static void s_watch_busy (executor_t *ex)
{
    int64_t now = bmq_mono_ms ();
    if (ex->waiting && !ex->was_waiting) ex->heard_ms = now;        /* a call starts: the clock starts */
    ex->was_waiting = ex->waiting;
    bool busy = (ex->waiting || ex->blender_hung) && now - ex->heard_ms > 2 * (int64_t) ex->interval;
    if (busy == ex->busy) return;
    ex->busy = busy;
    const char *file = bmq_config_str (ex->cfg, "blender.busy_file");
    if (busy) {
        ex->busy_since_wall = bmq_now_ms () - (now - ex->heard_ms);
        bmq_warn ("Blender busy: nothing from it for %lld ms (more than two heartbeats)%s", (long long) (now - ex->heard_ms),
                  ex->current ? "; the running job's outcome is not known yet" : "");
        if (*file) {
            char text[32], tmp[1300], err[600];
            int len = snprintf (text, sizeof text, "%lld\n", (long long) ex->busy_since_wall);
            snprintf (tmp, sizeof tmp, "%s.tmp", file);
            remove (tmp);
            if (bmq_secret_file_write (tmp, text, (size_t) len, true, err, sizeof err) || rename (tmp, file))
                bmq_error ("cannot write %s: the supervisor cannot see a hang (%s)", file, *err ? err : strerror (errno));
        }
    }
    else {
        bmq_info ("Blender answers again (busy for %lld ms)", (long long) (bmq_now_ms () - ex->busy_since_wall));
        if (*file) remove (file);
    }
    bmq_audit_record (ex->audit, NULL, "blender.state", json_pack ("{s:s, s:I}", "state", busy ? "busy" : "answering",
                                                                   "since", (json_int_t) ex->busy_since_wall));
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

/* A forwarded command that changed the scene (neither read_only nor keeps_names
 * in proto/blender_link.json: reset_scene, bench_direct) is told to whoever
 * watches, as an applied live script is: a progress event "scene", status
 * "changed", operation the command (and the new fingerprint when the add-on
 * gave one). MCP subscriptions, the page and `blendmq watch` hear of it. Only
 * the watchers: the asker gets its scene.reply. */
static void s_scene_changed (executor_t *ex, const bmq_job_t *job, const json_t *result)
{
    const bmq_link_command_t *c = bmq_link_command (job->command);
    if (!c || c->read_only || c->keeps_names) return;
    json_t *body = json_pack ("{s:s, s:s, s:s, s:i, s:i, s:s}", "event", "scene", "status", "changed", "plan_id", job->cid,
                              "step", 0, "total", 0, "operation", job->command);
    const char *fingerprint = json_string_value (json_object_get (result, "fingerprint"));
    if (fingerprint && strlen (fingerprint) <= 64) json_object_set_new (body, "fingerprint", json_string (fingerprint));
    bmq_progress_stamp (body);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, job->cid, body);
    bmq_bus_send (ex->pub, NULL, env);
    bmq_envelope_destroy (&env);
}

static void s_command_result (executor_t *ex, int status, json_t *reply, zframe_t *blob, const char *err)
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
        executor_reply (ex, job, s_inspect_reply (&env0, status, reply, err));
        bmq_job_destroy (&ex->current);
        return;
    }
    if (status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"))) {
        json_t *result = json_object_get (reply, "result");
        s_scene_changed (ex, job, result);
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
    executor_reply (ex, job, out);
    bmq_job_destroy (&ex->current);
}

static void s_on_actor (executor_t *ex)
{
    zmsg_t *msg = zmsg_recv (ex->blender);
    if (!msg) return;
    char *kind = zmsg_popstr (msg);
    if (kind && (!strcmp (kind, "ALIVE") || !strcmp (kind, "PROGRESS") || !strcmp (kind, "RESULT")))
        ex->heard_ms = bmq_mono_ms ();          /* Blender spoke: not busy */
    if (kind && !strcmp (kind, "STATE")) {
        char *state = zmsg_popstr (msg), *detail = zmsg_popstr (msg), *version = zmsg_popstr (msg);
        ex->blender_up = state && !strcmp (state, "connected");
        ex->blender_state_known = true;
        /* which Blender (issue 30): status shows it, scripts are checked against its recorded RNA */
        snprintf (ex->blender_version, sizeof ex->blender_version, "%s",
                  ex->blender_up && bmq_blender_version_valid (version) ? version : "");
        if (ex->scripts) bmq_script_jobs_set_blender (ex->scripts, ex->blender_version);
        free (version);
        bool hung = state && !strcmp (state, "hung");
        if (hung && !ex->blender_hung && !ex->waiting) ex->heard_ms = bmq_mono_ms () - ex->interval;   /* the ping's wait */
        if (ex->blender_up) ex->heard_ms = bmq_mono_ms ();
        ex->blender_hung = hung;
        snprintf (ex->blender_detail, sizeof ex->blender_detail, "%s", detail ? detail : "");
        if (ex->blender_up) bmq_info ("Blender %s connected", *ex->blender_version ? ex->blender_version : "(version unknown)");
        else bmq_warn ("Blender disconnected: %s", ex->blender_detail);
        bmq_audit_record (ex->audit, NULL, "blender.state", json_pack ("{s:s, s:s}", "state", state ? state : "?",
                                                                       "detail", ex->blender_detail));
        free (state);
        free (detail);
    }
    else if (kind && !strcmp (kind, "HELLO")) {
        char *text = zmsg_popstr (msg);
        executor_on_hello (ex, text);
        free (text);
    }
    else if (kind && !strcmp (kind, "NAMES")) {
        char *text = zmsg_popstr (msg);
        executor_on_names (ex, text);
        free (text);
    }
    else if (kind && !strcmp (kind, "PROGRESS") && ex->current) {
        char *job = zmsg_popstr (msg), *text = zmsg_popstr (msg);
        executor_run_progress (ex, text);
        free (job);
        free (text);
    }
    else if (kind && !strcmp (kind, "RESULT") && ex->current) {
        char *job = zmsg_popstr (msg), *code = zmsg_popstr (msg), *reply_text = zmsg_popstr (msg);
        zframe_t *blob = zmsg_pop (msg);
        char *err = zmsg_popstr (msg), *elapsed = zmsg_popstr (msg);
        json_t *reply = reply_text && *reply_text ? json_loads (reply_text, 0, NULL) : NULL;
        int status = code ? atoi (code) : BMQ_LINK_DOWN;
        ex->waiting = false;
        if (ex->current->kind == BMQ_JOB_PLAN && ex->current->phase == BMQ_PHASE_RUN) executor_run_result (ex, status, reply, err);
        else if (ex->current->kind == BMQ_JOB_PLAN && ex->current->phase == BMQ_PHASE_ASSETS) executor_staged (ex, status, reply, err);
        else if (ex->current->kind == BMQ_JOB_PLAN && ex->current->phase != BMQ_PHASE_STEPS) executor_phase_result (ex, status, reply, err);
        else if (ex->current->kind == BMQ_JOB_PLAN) executor_step_result (ex, status, reply, err, elapsed ? atof (elapsed) : 0, false);
        else s_command_result (ex, status, reply, blob, err);
        json_decref (reply);
        zframe_destroy (&blob);
        free (job); free (code); free (reply_text); free (err); free (elapsed);
    }
    free (kind);
    zmsg_destroy (&msg);
}

static bmq_envelope_t *s_accept_plan (executor_t *ex, const bmq_envelope_t *req, zframe_t *rid)
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

/* Scene commands a client may ask for directly: the commands proto/blender_link.json
 * marks "forward". Everything that changes the scene step by step goes through
 * sealed plans instead; run_step and the plan transaction commands are never
 * forwarded from a client. */
static bool s_scene_command_allowed (const char *command)
{
    const bmq_link_command_t *c = bmq_link_command (command);
    return c && c->forward;
}

/* inspect.request: queued like a scene command, running the add-on's rna_info. */
static bmq_envelope_t *s_accept_inspect (executor_t *ex, const bmq_envelope_t *req, zframe_t *rid)
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
 * queued one never starts; a live script (plan_id: its script id) is
 * interrupted in Blender (script_jobs.h). Unknown ids are ignored (the plan
 * already ended). */
static void s_cancel (executor_t *ex, const bmq_envelope_t *env)
{
    const char *plan_id = bmq_body_str (env, "plan_id");
    if (!plan_id) return;
    int script = ex->scripts ? bmq_script_jobs_cancel (ex->scripts, env, ex->current, ex->queue) : 0;
    if (script == 1) atomic_store (&ex->link_cancel, true);     /* a live script: the actor sends cancel_plan (issue 29) */
    if (script) return;
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
        executor_finish_plan (ex, "cancelled", "cancelled by the client before it started", 0, NULL);
        ex->current = saved;
        return;
    }
    /* an ended plan, or one another process of this executor had (the gateway
     * cancels what it cut, whoever gets it): nothing to stop, nothing to record */
    bmq_debug ("cancel for plan %s, which is not here", plan_id);
}

static void s_on_request (executor_t *ex)
{
    zframe_t *rid = NULL;
    bmq_envelope_t *env = bmq_bus_recv (ex->router, &rid);
    if (!env) { zframe_destroy (&rid); return; }
    bmq_envelope_t *reply = NULL;
    executor_heard (ex, rid, env->type == BMQ_MSG_HEARTBEAT);
    /* the gateway for a client of the right role; planner and validators for RNA (roles.def) */
    if (bmq_roles_refused (ex->router, rid, env, "executor", bmq_roles_curve (ex->cfg), 0, ex->audit)) { }
    else if (env->type == BMQ_MSG_HEARTBEAT) {     /* bmq_answer_heartbeat's, with its Blender's version */
        bmq_envelope_t *hb = bmq_envelope_reply (env, BMQ_MSG_HEARTBEAT,
            json_pack ("{s:s, s:s, s:s}", "service", "executor", "state", s_state (ex), "instance", bmq_instance_id ()));
        if (*ex->blender_version) json_object_set_new (hb->body, "blender", json_string (ex->blender_version));
        bmq_bus_send_and_destroy (ex->router, rid, &hb);
    }
    else if (env->type == BMQ_MSG_EXECUTE_REQUEST) reply = s_accept_plan (ex, env, rid);
    else if (env->type == BMQ_MSG_CANCEL_REQUEST) s_cancel (ex, env);
    else if (env->type == BMQ_MSG_INSPECT_REQUEST) reply = s_accept_inspect (ex, env, rid);
    else if (env->type == BMQ_MSG_ASSET_SEARCH) executor_asset_search (ex, env, rid);
    else if (env->type == BMQ_MSG_ASSET_GENERATE) executor_generate_request (ex, env, rid);
    else if (env->type == BMQ_MSG_ASSET_CANCEL) executor_generate_cancel (ex, env, rid);
    else if (env->type == BMQ_MSG_SCRIPT_LIST) reply = bmq_script_jobs_list (ex->scripts, env);
    else if (env->type == BMQ_MSG_SCRIPT_REQUEST || env->type == BMQ_MSG_SCRIPT_CONFIRM) {
        if (zlistx_size (ex->queue) >= QUEUE_MAX) reply = bmq_envelope_error (env, "busy", "the executor queue is full");
        else reply = bmq_script_jobs_on_request (ex->scripts, env, rid, ex->queue);
    }
    else if (env->type == BMQ_MSG_SCENE_REQUEST) {
        const char *command = bmq_body_str (env, "command");
        if (!s_scene_command_allowed (command))
            reply = bmq_envelope_error (env, "bad_request", "'%.64s' is not a scene command (allowed: %s)", command,
                                        BMQ_LINK_FORWARD_TEXT);
        else if (zlistx_size (ex->queue) >= QUEUE_MAX) reply = bmq_envelope_error (env, "busy", "the executor queue is full");
        else {
            bmq_audit_record (ex->audit, env->cid, "scene", json_pack ("{s:s}", "command", command));
            zlistx_add_end (ex->queue, bmq_job_new_command (env, rid));
        }
    }
    else if (env->type == BMQ_MSG_STATUS_REQUEST)
        reply = bmq_envelope_reply (env, BMQ_MSG_STATUS_REPLY,
            json_pack ("{s:s, s:s, s:{s:b, s:b, s:s, s:I, s:s, s:s, s:I, s:s}, s:I, s:s?, s:I}", "service", "executor", "state", s_state (ex),
                       "blender", "connected", ex->blender_up, "busy", ex->busy, "version", ex->blender_version,
                       "busy_ms", (json_int_t) (ex->busy ? bmq_now_ms () - ex->busy_since_wall : 0), "detail", ex->blender_detail,
                       "host", bmq_config_str (ex->cfg, "blender.host"), "port", (json_int_t) bmq_config_int (ex->cfg, "blender.port"),
                       "socket", bmq_config_str (ex->cfg, "blender.socket"),
                       "queued", (json_int_t) zlistx_size (ex->queue),
                       "running", ex->current && ex->current->kind == BMQ_JOB_PLAN ? ex->current->plan_id : NULL,
                       "plans_run", (json_int_t) ex->plans_run));
    else reply = bmq_envelope_error (env, "unsupported", "executor does not handle %s", bmq_msg_type_name (env->type));
    if (reply) bmq_bus_send_and_destroy (ex->router, rid, &reply);
    zframe_destroy (&rid);
    bmq_envelope_destroy (&env);
}

/* SIGTERM (or SIGINT): let the call Blender is running answer (bounded), so a
 * commit that went through is reported as done; a pipelined plan is cancelled
 * in Blender first, which rolls it back and says what it removed. A plan
 * still running then ends as "interrupted" (the link closes next and Blender
 * rolls it back), a running command gets an error, and queued plans are
 * cancelled. */
static void s_stop (executor_t *ex)
{
    if (ex->waiting) {
        executor_stop_run (ex);         /* pipelined: stop after the current step, not at the plan's end */
        zpoller_t *poller = zpoller_new (ex->blender, NULL);
        zpoller_set_nonstop (poller, true);           /* zsys_interrupted is set: wait anyway */
        int64_t deadline = bmq_mono_ms () + (ex->step_timeout < 5000 ? ex->step_timeout : 5000);
        while (ex->waiting && bmq_mono_ms () < deadline) {
            if (zpoller_wait (poller, 100) == ex->blender) s_on_actor (ex);
        }
        zpoller_destroy (&poller);
    }
    if (ex->current && ex->current->kind == BMQ_JOB_PLAN)
        executor_finish_plan (ex, "interrupted", "the executor was stopped (SIGTERM or SIGINT) before the plan ended", 0, NULL);
    else if (ex->current) {
        bmq_envelope_t env0 = { .type = bmq_msg_type_from_name (ex->current->req_type) };
        snprintf (env0.cid, sizeof env0.cid, "%s", ex->current->cid);
        if (ex->current->rid && !bmq_script_jobs_owns (ex->current))     /* a script run's owner is stopping too */
            executor_reply (ex, ex->current, bmq_envelope_error (&env0, "interrupted", "the executor stopped before %s answered",
                                                          ex->current->command));
        bmq_job_destroy (&ex->current);
    }
    for (bmq_job_t *job = zlistx_first (ex->queue); job; job = zlistx_next (ex->queue)) {
        if (job->kind != BMQ_JOB_PLAN) continue;
        zlistx_detach_cur (ex->queue);          /* the cursor steps back: iterating on is safe */
        ex->current = job;
        job->started_us = bmq_mono_us ();
        executor_finish_plan (ex, "cancelled", "the executor stopped before the plan started", 0, NULL);
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

/* The seals' nonces outlive this process (issue 24): kept in the audit spool
 * folder (the executor's own state), else next to the verdict key, until
 * they expire, so a seal used before a restart is a replay after it. */
static void s_seal_nonces (executor_t *ex, const char *keypath)
{
    char dir[1024], path[1200], err[512];
    const char *spool = ex->audit ? bmq_audit_spool_path (ex->audit) : NULL;
    snprintf (dir, sizeof dir, "%s", spool ? spool : keypath);
    char *slash = strrchr (dir, '/');
    if (slash) *slash = 0; else snprintf (dir, sizeof dir, ".");
    snprintf (path, sizeof path, "%s/seal-nonces-%s", dir, ex->name);
    if (ex->seals && bmq_seal_guard_persist (ex->seals, path, bmq_seal_now_ms (), err, sizeof err))
        bmq_error ("SEAL NONCES NOT KEPT: %s: a seal used before a restart of this executor could be used again after it", err);
}

int bmq_executor_service_run (bmq_config_t *cfg)
{
    char err[512];
    executor_t ex = { .cfg = cfg };
    ex.step_timeout = (int) bmq_config_int (cfg, "executor.step_timeout_ms");
    ex.interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms") > 0 ? (int) bmq_config_int (cfg, "heartbeat.interval_ms") : 1000;
    ex.liveness = (int) bmq_config_int (cfg, "heartbeat.liveness") > 0 ? (int) bmq_config_int (cfg, "heartbeat.liveness") : 3;
    ex.requesters = executor_requesters_new ();
    ex.command_timeout = (int) bmq_config_int (cfg, "executor.command_timeout_ms");
    ex.pipeline = bmq_config_bool (cfg, "executor.pipeline");
    atomic_init (&ex.link_cancel, false);
    const char *keypath = bmq_config_str (cfg, "security.verdict_key_file");
    if (!*keypath || bmq_seal_key_load (keypath, &ex.key, err, sizeof err)) {
        bmq_error ("no verdict key: %s", *keypath ? err : "security.verdict_key_file is not set");
        return 1;
    }
    bmq_blender_actor_args_t args = {
        .port = (int) bmq_config_int (cfg, "blender.port"),
        .interval_ms = (int) bmq_config_int (cfg, "heartbeat.interval_ms"),
        .connect_timeout_ms = (int) bmq_config_int (cfg, "blender.connect_timeout_ms"),
        .cancel = &ex.link_cancel,
        .reconnect_max_ms = (int) bmq_config_int (cfg, "blender.reconnect_max_ms"),
        .command_timeout_ms = (int) bmq_config_int (cfg, "executor.command_timeout_ms"),
    };
    if (*bmq_config_str (cfg, "blender.socket"))      /* `up`: the unix socket in Blender's state folder */
        snprintf (args.host, sizeof args.host, "unix:%s", bmq_config_str (cfg, "blender.socket"));
    else snprintf (args.host, sizeof args.host, "%s", bmq_config_str (cfg, "blender.host"));
    args.plain_remote = bmq_config_bool (cfg, "blender.allow_plain_remote");
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
    s_seal_nonces (&ex, keypath);
    if (ex.scripts) bmq_script_jobs_set_timeout (ex.scripts, (int) bmq_config_int (cfg, "executor.script_timeout_ms"));
    if (ex.scripts) bmq_script_jobs_set_sandbox_warm (ex.scripts, (int) bmq_config_int (cfg, "executor.sandbox_warm"));
    if (ex.scripts) bmq_script_jobs_set_seals (ex.scripts, ex.name, ex.seals);
    if (ex.router && ex.pub && ex.audit && ex.scripts) {
        ex.blender = bmq_blender_actor_new (&args);
        ex.assets = executor_assets_new (cfg);
        ex.gen = executor_generate_new (cfg);
        bmq_info ("executor ready on %s (events %s), Blender at %s%s%.0d", bmq_config_str (cfg, "executor.endpoint"),
                  bmq_config_str (cfg, "executor.events"), args.host, strncmp (args.host, "unix:", 5) ? ":" : "",
                  strncmp (args.host, "unix:", 5) ? args.port : 0);
        zpoller_t *poller = zpoller_new (ex.router, ex.blender, bmq_audit_sock (ex.audit),
                                         bmq_script_jobs_worker (ex.scripts), ex.pub, ex.assets, NULL);
        if (ex.gen) zpoller_add (poller, executor_generate_sock (ex.gen));
        while (!zsys_interrupted) {
            zsock_t *which = zpoller_wait (poller, 250);
            if (which == ex.router) s_on_request (&ex);
            else if (which == (void *) ex.blender) s_on_actor (&ex);
            else if (which == (void *) bmq_script_jobs_worker (ex.scripts)) bmq_script_jobs_on_worker (ex.scripts);
            else if (which == ex.pub) executor_on_subscription (&ex);
            else if (which == (void *) ex.assets) executor_on_assets (&ex);
            else if (ex.gen && which == executor_generate_sock (ex.gen)) executor_on_generate (&ex);
            else if (which) {
                bmq_envelope_t *env = bmq_bus_recv (which, NULL);
                if (env) bmq_audit_handle (ex.audit, env);
                bmq_envelope_destroy (&env);
            }
            executor_watch_requesters (&ex);
            executor_watch_generations (&ex);
            if (ex.current && ex.current->phase == BMQ_PHASE_RUN && ex.current->cancel)
                atomic_store (&ex.link_cancel, true);       /* the actor sends cancel_plan between steps */
            executor_pump (&ex);
            s_watch_busy (&ex);
            bmq_audit_tick (ex.audit);
        }
        bmq_info ("executor stopping (%lld plans run)", (long long) ex.plans_run);
        zpoller_destroy (&poller);
        if (*bmq_config_str (cfg, "blender.busy_file")) remove (bmq_config_str (cfg, "blender.busy_file"));
        s_stop (&ex);
        bmq_blender_link_abort_all ();  /* the actor's pending connect or ping ends now */
        bmq_assets_http_abort_all ();   /* and a search or download in flight (within a second) */
        zactor_destroy (&ex.blender);
        zactor_destroy (&ex.assets);
        executor_generate_destroy (&ex.gen, &ex);    /* its jobs answered "cancelled" */
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
    json_decref (ex.scene_names);
    zsock_destroy (&ex.router);
    return code;
}
