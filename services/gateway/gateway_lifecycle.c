/* gateway_lifecycle — a client request's way through planner → validator pool
 * → executor, following gateway_request.def: the start action of each route,
 * the action of each transition, and the dispatch that allows only the
 * transitions the table declares, from the service that holds the request.
 * A chat whose LLM plan ran is reviewed (planner.review_rounds): its result is
 * held, the planner looks at the scene and answers done (the held result
 * answers) or a fix plan (validated and run; its result answers, the first
 * one told as a note); a review cut before its fix runs (planner gone, time-
 * out, cancel, a fix refused) answers the held result with a note. */
#include "gateway_internal.h"
#include "bus.h"
#include "log.h"
#include "roles.h"

/* Enter `state`: the request is now in the hands of the state's holder. */
static void s_enter (gw_t *gw, gw_request_t *r, bmq_req_state_t state)
{
    r->state = state;
    gw_hand_to (gw, r, gw_request_holder (state));
}

static void s_send_executor (gw_t *gw, gw_request_t *r, bmq_envelope_t *env)
{
    bmq_peer_send (bmq_executor_set_peer (gw->executors, (size_t) r->executor), env);
}

static void s_submit_validators (gw_t *gw, gw_request_t *r, bmq_envelope_t **req)
{
    s_enter (gw, r, BMQ_REQ_VALIDATING);
    if (bmq_broker_submit (gw->broker, req))
        gw_fail (gw, r, "busy", "the validator queue is full; try again shortly");
    else if (!bmq_broker_workers (gw->broker))
        bmq_warn ("request %s waits: no validator worker is connected", r->cid);
}

/* ---- validating a plan ----------------------------------------------------- */

/* Does the plan target a name no earlier step creates? Then the validator
 * needs the scene's names, to let it act on existing objects. A plan that only
 * names its own objects and targets them (every recipe) does not: a name the
 * scene already holds is no error (Blender calls the new object "name.001" and
 * the add-on maps the plan's later targets of that name to it), so its verdict
 * is the same with or without the scene, and it skips the lookup. */
static bool s_targets_scene (const json_t *plan)
{
    size_t n = json_array_size (plan);
    for (size_t i = 0; i < n; i++) {
        const char *target = json_string_value (json_object_get (json_array_get (plan, i), "target"));
        if (!target) continue;
        bool made = false;
        for (size_t j = 0; j < i && !made; j++) {
            const char *name = json_string_value (json_object_get (json_array_get (plan, j), "name"));
            made = name && !strcmp (name, target);
        }
        if (!made) return true;
    }
    return false;
}

static void s_validate_with (gw_t *gw, gw_request_t *r, json_t *scene_objects)
{
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_VALIDATE_REQUEST, r->cid, json_pack ("{s:O}", "plan", r->plan));
    /* the seal names the executor it is for (issue 12) */
    json_object_set_new (req->body, "target", json_string (bmq_executor_set_name (gw->executors, (size_t) r->executor)));
    if (scene_objects) json_object_set_new (req->body, "scene_objects", scene_objects);
    gw_for_client (r, req);
    s_submit_validators (gw, r, &req);
}

/* Ask the executor for the scene's names: → LOOKING. */
static void s_look (gw_t *gw, gw_request_t *r)
{
    bmq_envelope_t *look = bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, r->cid,
        json_pack ("{s:s, s:{s:i}}", "command", "scene_info", "args", "limit", 1000));
    gw_for_client (r, look);
    s_enter (gw, r, BMQ_REQ_LOOKING);
    s_send_executor (gw, r, look);
    bmq_envelope_destroy (&look);
}

/* → VALIDATING, or LOOKING when the plan targets objects it does not make and
 * the executor has published no names yet. With the names it published last
 * (scene.names) the plan is validated at once, without waiting behind the
 * executor's queue; they may be a moment old, so a plan they make the
 * validator refuse for a target is looked up afresh once (s_verdict). A target
 * they wrongly let through fails in Blender at run time, rolled back, as a
 * scene changed between a lookup and the run always could. */
static void s_validate (gw_t *gw, gw_request_t *r)
{
    if (!json_is_array (r->plan) || !s_targets_scene (r->plan)) { s_validate_with (gw, r, NULL); return; }
    const json_t *names = bmq_executor_set_scene_names (gw->executors, (size_t) r->executor);
    if (!names || r->looked) { s_look (gw, r); return; }
    r->names_cached = true;
    s_validate_with (gw, r, json_deep_copy (names));
}

/* Did the validator refuse a target it did not find among the scene's names? */
static bool s_refused_for_scene (const json_t *body)
{
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get (body, "errors"), i, e) {
        const char *field = json_string_value (json_object_get (e, "field"));
        const char *reason = json_string_value (json_object_get (e, "reason"));
        if (field && !strcmp (field, "target") && reason && strstr (reason, "already in the scene")) return true;
    }
    return false;
}

/* ---- start actions (BMQ_REQ_ROUTE) ------------------------------------------ */

static void s_start_chat (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env)
{
    r->prompt = json_incref (json_object_get (env->body, "prompt"));
    int64_t rounds = bmq_config_int (gw->cfg, "planner.review_rounds");
    r->reviews_left = rounds < 0 ? 0 : rounds > 5 ? 5 : (int) rounds;
    s_enter (gw, r, BMQ_REQ_PLANNING);
    bmq_envelope_t *pr = bmq_envelope_new (BMQ_MSG_PLAN_REQUEST, r->cid,
                                           json_pack ("{s:O}", "prompt", json_object_get (env->body, "prompt")));
    /* what the scene already holds, as its executor last published it: new work is placed
     * clear of it (issue 29; "build a snowman" twice puts the second beside the first) */
    const json_t *boxes = bmq_executor_set_scene_boxes (gw->executors, (size_t) (r->executor < 0 ? 0 : r->executor));
    if (pr && json_array_size (boxes)) json_object_set (pr->body, "scene_boxes", (json_t *) boxes);
    gw_for_client (r, pr);
    bmq_peer_send (gw->planner, pr);
    bmq_envelope_destroy (&pr);
}

static void s_start_plan (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env)
{
    r->plan = json_incref (json_object_get (env->body, "plan"));
    s_validate (gw, r);
}

static void s_start_validator (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env)
{
    bmq_envelope_t *req = bmq_envelope_reply (env, env->type, json_incref (env->body));
    if (env->type == BMQ_MSG_SCRIPT_REQUEST) {
        r->plan = json_incref (env->body);                  /* validate_only, read at the verdict */
        /* the seal names the executor it is for (issue 12) */
        json_object_set_new (req->body, "target", json_string (bmq_executor_set_name (gw->executors, (size_t) r->executor)));
    }
    s_submit_validators (gw, r, &req);
}

static void s_start_executor (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env)
{
    s_enter (gw, r, BMQ_REQ_AT_EXECUTOR);
    s_send_executor (gw, r, (bmq_envelope_t *) env);
}

/* asset.generate: the executor runs the job up to its deadline (the
 * request's deadline_s, else assets.hyper3d_deadline_s), then fetches the
 * model: the request waits that long plus the gateway's own time-out, not
 * just the time-out. */
static void s_start_generate (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env)
{
    json_int_t d = bmq_body_int (env, "deadline_s", 0);
    if (d <= 0) d = bmq_config_int (gw->cfg, "assets.hyper3d_deadline_s");
    if (d <= 0 || d > 86400) d = 600;
    r->deadline = bmq_mono_ms () + d * 1000 + gw->timeout_ms;
    s_start_executor (gw, r, env);
}

static void s_start_planner (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env)
{
    s_enter (gw, r, BMQ_REQ_AT_PLANNER);
    bmq_peer_send (gw->planner, env);
}

static void s_start_audit (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env)
{
    s_enter (gw, r, BMQ_REQ_AT_AUDIT);
    bmq_bus_send (bmq_audit_sock (gw->audit), NULL, env);
}

void gw_start (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env)
{
    switch (env->type) {
#define BMQ_REQ_ROUTE(msg, kind, start) case BMQ_MSG_##msg: s_##start (gw, r, env); return;
#include "gateway_request.def"
#undef BMQ_REQ_ROUTE
    default: gw_fail (gw, r, "unsupported", "the gateway does not route this message");
    }
}

/* ---- transition actions (BMQ_REQ_EVENT) ------------------------------------- */

/* Pass the message on to the client; the request stays where it is. */
static void s_relay (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    gw_to_client (gw, r, *env);
    *env = NULL;
}

/* The answer the client waited for: pass it on, the story ends. */
static void s_answer (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    bmq_msg_type_t type = (*env)->type;
    const char *outcome = type == BMQ_MSG_EXECUTE_RESULT || type == BMQ_MSG_SCRIPT_REPLY ? bmq_body_str (*env, "status")
                        : type == BMQ_MSG_ERROR ? bmq_body_str (*env, "code") : "ok";
    char saved[64];
    snprintf (saved, sizeof saved, "%s", outcome ? outcome : "?");
    s_relay (gw, r, env);
    gw_done (gw, r, saved);
}

static void s_progress (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    const char *event = (*env)->type == BMQ_MSG_PROGRESS ? bmq_body_str (*env, "event") : NULL;
    if (event && !strcmp (event, "plan")) r->plan_started = true;
    if (event && !strcmp (event, "step")) {
        r->plan_started = true;
        const char *status = bmq_body_str (*env, "status");
        if (status && !strcmp (status, "ok")) r->steps_done = (long long) bmq_body_int (*env, "step", r->steps_done);
        r->steps_total = (long long) bmq_body_int (*env, "total", r->steps_total);
    }
    s_relay (gw, r, env);
}

/* ---- a chat's review (issue 16) ------------------------------------------- */

static void s_tell (gw_t *gw, gw_request_t *r, const char *text)
{
    gw_to_client (gw, r, bmq_envelope_new (BMQ_MSG_PLAN_NOTE, r->cid, json_pack ("{s:s}", "text", text)));
}

/* The review ends without a fix that ran: the first plan's result is the answer. */
static void s_answer_held (gw_t *gw, gw_request_t *r)
{
    bmq_envelope_t *held = r->held;
    r->held = NULL;
    const char *status = bmq_body_str (held, "status");
    char saved[64];
    snprintf (saved, sizeof saved, "%s", status ? status : "?");
    gw_to_client (gw, r, held);
    gw_done (gw, r, saved);
}

/* A chat's plan from an LLM ran to the end: instead of answering at once,
 * hold the result and ask the planner to look at the scene (plan.request
 * mode review, same story). The answer comes after its verdict. */
static bool s_review (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    const char *status = bmq_body_str (*env, "status");
    if (r->kind != BMQ_REQ_CHAT || !r->llm_plan || r->reviews_left <= 0 || !status || strcmp (status, "done")) return false;
    r->reviews_left--;
    r->review_round++;
    bmq_envelope_destroy (&r->held);
    r->held = *env;
    *env = NULL;
    json_t *result = json_pack ("{s:s, s:O?, s:O?, s:O?}", "status", status,
                                "steps_done", json_object_get (r->held->body, "steps_done"),
                                "steps_total", json_object_get (r->held->body, "steps_total"),
                                "error", json_object_get (r->held->body, "error"));
    bmq_envelope_t *pr = bmq_envelope_new (BMQ_MSG_PLAN_REQUEST, r->cid,
        json_pack ("{s:O, s:s, s:{s:O, s:o, s:i, s:i}}", "prompt", r->prompt, "mode", "review", "review", "plan", r->plan,
                   "result", result, "round", r->review_round, "rounds", r->review_round + r->reviews_left));
    gw_for_client (r, pr);
    char note[160];
    snprintf (note, sizeof note, "reviewing the result (round %d of %d)…", r->review_round, r->review_round + r->reviews_left);
    s_tell (gw, r, note);
    r->deadline = bmq_mono_ms () + gw->timeout_ms;       /* one more dialogue, then maybe one more plan */
    /* r->plan stays the plan that ran until a fix replaces it: the same plan sent back is not run twice */
    r->names_cached = r->looked = false;
    r->steps_done = r->steps_total = 0;
    r->plan_started = false;
    s_enter (gw, r, BMQ_REQ_PLANNING);
    bmq_peer_send (gw->planner, pr);
    bmq_envelope_destroy (&pr);
    return true;
}

static void s_executed (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    if (!s_review (gw, r, env)) s_answer (gw, r, env);
}

/* A review that holds the first plan's result was cut (its planner gone or
 * restarted, the gateway's time-out, a full validator queue, a cancel)
 * before a fix started to run: that result answers, with a note saying why
 * there is no verdict. False when r holds no result, or a fix is running
 * (then the executor's own failure is the answer: it says what was rolled
 * back). */
bool gw_review_cut (gw_t *gw, gw_request_t *r, const char *code, const char *message)
{
    if (!r->held || r->state == BMQ_REQ_EXECUTING) return false;
    char note[700];
    snprintf (note, sizeof note, "review: the review could not run (%.40s: %.500s); the first plan's result stands as it is",
              code ? code : "?", message ? message : "");
    bmq_warn ("request %s: %s", r->cid, note);
    s_tell (gw, r, note);
    s_answer_held (gw, r);
    return true;
}

/* The planner failed: during a review the first plan's result still stands. */
static void s_plan_error (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    if (!r->held) { s_answer (gw, r, env); return; }
    char note[400];
    snprintf (note, sizeof note, "review: no verdict (%.40s: %.250s); the result stands as it is", bmq_body_str (*env, "code"),
              bmq_body_str (*env, "message") ? bmq_body_str (*env, "message") : "");
    s_tell (gw, r, note);
    s_answer_held (gw, r);
}

static void s_planned (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    const char *mode = bmq_body_str (*env, "mode"), *source = bmq_body_str (*env, "source");
    json_t *plan = json_object_get ((*env)->body, "plan");
    if (r->held && mode && !strcmp (mode, "review") && json_array_size (plan) == 0) {
        s_tell (gw, r, "review: the model is satisfied with the result");
        s_answer_held (gw, r);
        return;
    }
    if (r->held && mode && !strcmp (mode, "review") && json_equal (plan, r->plan)) {
        /* the plan that already ran, sent again: run twice it would build everything a second time */
        s_tell (gw, r, "review: the model sent the plan that already ran; it is not run twice; the result stands as it is");
        s_answer_held (gw, r);
        return;
    }
    r->llm_plan = source && strcmp (source, "offline") && !json_object_get ((*env)->body, "fallback_from");
    if (r->held) {          /* the client hears how the first plan ended: the fix's result will be the answer */
        char note[300];
        snprintf (note, sizeof note, "review: the first plan ended %.32s, %lld/%lld steps; the model sent a fix of %zu steps;"
                  " validating and running it", bmq_body_str (r->held, "status") ? bmq_body_str (r->held, "status") : "?",
                  (long long) bmq_body_int (r->held, "steps_done", 0), (long long) bmq_body_int (r->held, "steps_total", 0),
                  json_array_size (plan));
        s_tell (gw, r, note);
    }
    json_decref (r->plan);
    r->plan = json_incref (json_object_get ((*env)->body, "plan"));
    json_t *body = json_deep_copy ((*env)->body);
    json_object_set_new (body, "plan_id", json_string (r->plan_id));
    gw_to_client (gw, r, bmq_envelope_reply (*env, BMQ_MSG_CHAT_PLANNED, body));
    s_validate (gw, r);
}

/* The scene's object names arrived (or could not be had: then the plan is
 * checked without them, and its targets fail with a clear reason). */
static void s_scene_names (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    json_t *names = NULL;
    r->looked = true;
    if ((*env)->type == BMQ_MSG_SCENE_REPLY) {
        names = json_array ();
        size_t i;
        json_t *o;
        json_array_foreach (json_object_get (json_object_get ((*env)->body, "result"), "objects"), i, o)
            if (json_is_string (json_object_get (o, "name"))) json_array_append (names, json_object_get (o, "name"));
    }
    else bmq_warn ("request %s: cannot read the scene (%s); validating without it", r->cid, bmq_body_str (*env, "message"));
    s_validate_with (gw, r, names);
}

/* A plan's verdict (or the pool's error): told to the client without the
 * seal, which is for the executor only; an accepted plan of a chat or run
 * goes to the executor. */
static void s_verdict (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    const bmq_envelope_t *verdict = *env;
    bool accepted = json_is_true (json_object_get (verdict->body, "accepted"));
    if (!accepted && verdict->type == BMQ_MSG_VALIDATE_REPLY && r->names_cached && !r->looked
        && s_refused_for_scene (verdict->body)) {
        s_look (gw, r);             /* the published names may be a moment old: ask the executor itself */
        return;
    }
    if (r->held && (verdict->type == BMQ_MSG_ERROR || !accepted)) {
        s_tell (gw, r, verdict->type == BMQ_MSG_ERROR ? "review: the fix could not be validated; the result stands as it is"
                                                      : "review: the fix was rejected by the validator; the result stands as it is");
        s_answer_held (gw, r);
        return;
    }
    bmq_envelope_t *copy = bmq_envelope_reply (verdict, verdict->type, json_deep_copy (verdict->body));
    json_object_del (copy->body, "seal");
    json_object_set_new (copy->body, "plan_id", json_string (r->plan_id));
    gw_to_client (gw, r, copy);
    if (verdict->type == BMQ_MSG_ERROR || r->kind == BMQ_REQ_VALIDATE || !accepted) {
        gw_done (gw, r, verdict->type == BMQ_MSG_ERROR ? "error" : accepted ? "accepted" : "rejected");
        return;
    }
    bmq_envelope_t *exec = bmq_envelope_new (BMQ_MSG_EXECUTE_REQUEST, r->cid,
        json_pack ("{s:s, s:O, s:O, s:O, s:b}", "plan_id", r->plan_id, "plan", r->plan,
                   "plan_hash", json_object_get (verdict->body, "plan_hash"),
                   "seal", json_object_get (verdict->body, "seal"), "keep_partial", r->keep_partial));
    gw_for_client (r, exec);
    r->steps_total = (long long) json_array_size (r->plan);
    s_enter (gw, r, BMQ_REQ_EXECUTING);
    s_send_executor (gw, r, exec);
    bmq_envelope_destroy (&exec);
}

/* script.request (issue 8): the validator's verdict. Rejected (or the client
 * asked for the verdict only): answer now. Validated: the executor runs it in
 * the sandbox and answers the client (its script.reply carries the verdict). */
static void s_script_verdict (gw_t *gw, gw_request_t *r, bmq_envelope_t **env)
{
    const bmq_envelope_t *verdict = *env;
    bool valid = !strcmp (bmq_body_str (verdict, "status"), "validated") && json_is_string (json_object_get (verdict->body, "seal"));
    if (!valid || json_is_true (json_object_get (r->plan, "validate_only"))) {
        bmq_envelope_t *copy = bmq_envelope_reply (verdict, verdict->type, json_deep_copy (verdict->body));
        json_object_del (copy->body, "seal");
        gw_to_client (gw, r, copy);
        gw_done (gw, r, valid ? "validated" : "rejected");
        return;
    }
    /* no script_id: the executor gives every sandbox run a fresh one (a validator's or client's is never used) */
    bmq_envelope_t *run = bmq_envelope_new (BMQ_MSG_SCRIPT_REQUEST, r->cid,
        json_pack ("{s:O, s:O, s:O}", "script", json_object_get (verdict->body, "script"),
                   "verdict", json_object_get (verdict->body, "verdict"), "seal", json_object_get (verdict->body, "seal")));
    gw_for_client (r, run);
    s_enter (gw, r, BMQ_REQ_EXECUTING);
    s_send_executor (gw, r, run);
    bmq_envelope_destroy (&run);
}

/* ---- dispatch --------------------------------------------------------------- */

typedef void (s_action_fn) (gw_t *gw, gw_request_t *r, bmq_envelope_t **env);
typedef struct {
    bmq_req_state_t state;
    bmq_msg_type_t  msg;
    s_action_fn    *action;
    const char     *name;
    unsigned        next;
} s_event_t;

static const s_event_t s_events[] = {
#define BMQ_REQ_EVENT(state, msg, action, next) { BMQ_REQ_##state, BMQ_MSG_##msg, s_##action, #action, (next) },
#include "gateway_request.def"
#undef BMQ_REQ_EVENT
};

static const char *s_holder_name (bmq_req_wait_t w)
{
    return w == BMQ_WAIT_PLANNER ? "planner" : w == BMQ_WAIT_VALIDATORS ? "validator pool" : w == BMQ_WAIT_EXECUTOR ? "executor"
         : w == BMQ_WAIT_AUDIT ? "audit" : "?";
}

bool gw_on_message (gw_t *gw, bmq_envelope_t **env, bmq_req_wait_t from, int executor)
{
    gw_request_t *r = zhashx_lookup (gw->requests, (*env)->cid);
    if (!r) return false;                                 /* expired, ended, or not a request's */
    const s_event_t *row = NULL;
    for (size_t i = 0; i < sizeof s_events / sizeof s_events[0] && !row; i++)
        if (s_events[i].state == r->state && s_events[i].msg == (*env)->type) row = &s_events[i];
    bmq_req_wait_t holder = gw_request_holder (r->state);
    if (!row || from != holder || (from == BMQ_WAIT_EXECUTOR && executor != r->executor)) {
        if (from != BMQ_WAIT_AUDIT)                       /* the audit socket also carries our own records' acks */
            bmq_warn ("request %s: dropped %s from the %s while %s (held by the %s)", r->cid, bmq_msg_type_name ((*env)->type),
                      s_holder_name (from), gw_request_state_name (r->state), s_holder_name (holder));
        return false;
    }
    char cid[sizeof r->cid];
    snprintf (cid, sizeof cid, "%s", r->cid);
    bmq_req_state_t was = r->state;
    row->action (gw, r, env);
    gw_request_t *now = zhashx_lookup (gw->requests, cid);
    unsigned went = now ? 1u << now->state : BMQ_REQ_END_BIT;
    if (!(went & row->next))
        bmq_error ("request %s: %s in %s went to %s, which gateway_request.def does not allow", cid, row->name,
                   gw_request_state_name (was), now ? gw_request_state_name (now->state) : "the end");
    return true;
}
