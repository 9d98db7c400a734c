/* planner_service — the ROUTER loop answering plan.request.
 *
 * Offline prompts are answered at once from the recipe book. A prompt for an
 * LLM backend starts a plan_job (its own thread); while it runs, its notes go
 * to the gateway as plan.note messages in the request's story (same cid) and
 * its audit records to the audit service; when it ends, the loop sends the
 * plan.reply, or an error. When the LLM failed for reasons that say nothing
 * against the prompt (unreachable, rate limited past the deadline, no usable
 * plan in time) and planner.fallback_offline is on, a matching recipe answers
 * instead, and the user is told so.
 *
 * A dialogue plans with the validator pool's palette (planner_caps: asked of
 * the gateway, refreshed when it changes), the one MCP clients get; until the
 * pool has answered, or when it cannot be reached, with the curated palette,
 * and a note tells the user so. The offline recipes need neither.
 *
 * Review (issue 16): after an LLM's plan ran, the gateway sends plan.request
 * {mode: "review", prompt, review: {plan, result, round, rounds}} in the same
 * story. A dialogue in review mode (planner_dialogue.h) looks at the scene and
 * answers plan.reply {mode: "review"} with either a fix plan or an empty plan
 * and notes [what the model saw] (satisfied). The offline planner never
 * reviews, nor does any planner with planner.review_rounds 0: both answer an
 * error `unsupported`, and a failed review never falls back to recipes. */
#include "planner_service.h"
#include "audit_client.h"
#include "bus.h"
#include "log.h"
#include "palette.h"
#include "peer.h"
#include "plan_job.h"
#include "planner_offline.h"
#include "planner_prompts.h"
#include "planner_caps.h"
#include "planner_settings.h"
#include "roles.h"
#include "service.h"
#include "yaml_json.h"

#define MAX_PROMPT 16000        /* as the CLI and MCP take (issue 29); the offline planner reads less and says so */

typedef struct {
    bmq_planner_settings_t set;
    char                   state[200];      /* heartbeat state: the backend */
    bmq_palette_t         *palette;         /* curated: the offline recipes */
    bmq_planner_caps_t    *caps;            /* the pool's palette, for dialogues */
    bmq_prompts_t         *prompts;
    bmq_offline_t         *offline;
    zsock_t               *router;
    bmq_audit_t           *audit;
    zpoller_t             *poller;
    zlistx_t              *jobs;            /* bmq_plan_job_t * */
    bool                   curve;           /* security.curve (roles.h) */
} s_planner_t;

static void s_send (s_planner_t *p, zframe_t *rid, bmq_envelope_t **env)
{
    bmq_bus_send_and_destroy (p->router, rid, env);
}

static void s_note (s_planner_t *p, zframe_t *rid, const char *cid, const char *text)
{
    bmq_envelope_t tmp = { .type = BMQ_MSG_PLAN_REQUEST };
    snprintf (tmp.cid, sizeof tmp.cid, "%s", cid);
    bmq_envelope_t *note = bmq_envelope_reply (&tmp, BMQ_MSG_PLAN_NOTE, json_pack ("{s:s}", "text", text));
    s_send (p, rid, &note);
}

/* An error in story cid (the request is gone by now: build the reply by hand). */
static bmq_envelope_t *s_error (const char *cid, const char *code, const char *message)
{
    bmq_envelope_t tmp = { .type = BMQ_MSG_PLAN_REQUEST };
    snprintf (tmp.cid, sizeof tmp.cid, "%s", cid);
    return bmq_envelope_error (&tmp, code, "%s", message);
}

/* ---- offline ------------------------------------------------------------------- */

/* 0 with a reply sent; -1 when there is no recipe (code, message set). */
static int s_offline (s_planner_t *p, zframe_t *rid, const char *cid, const char *prompt, const char *fallback_from,
                      const json_t *scene_boxes, char *code, size_t codelen, char *message, size_t msglen)
{
    char err[512];
    int r = bmq_offline_refresh (p->offline, err, sizeof err);
    if (r > 0) bmq_info ("recipes reloaded: %zu", bmq_offline_count (p->offline));
    else if (r < 0) bmq_warn ("recipes not reloaded, keeping the previous ones: %s", err);
    json_t *body = NULL;
    char *note = NULL;
    if (bmq_offline_plan_in (p->offline, prompt, scene_boxes, &body, &note, code, codelen, message, msglen)) {
        bmq_audit_record (p->audit, cid, "plan.none", json_pack ("{s:s, s:s}", "prompt", prompt, "message", message));
        return -1;
    }
    if (note) s_note (p, rid, cid, note);
    if (fallback_from) json_object_set_new (body, "fallback_from", json_string (fallback_from));
    bmq_audit_record (p->audit, cid, "plan.proposed",
                      json_pack ("{s:O, s:O, s:s, s:O?, s:s?}", "recipe", json_object_get (body, "recipe"),
                                 "plan", json_object_get (body, "plan"), "source", "offline",
                                 "modifiers", json_object_get (body, "modifiers"), "fallback_from", fallback_from));
    bmq_envelope_t tmp = { .type = BMQ_MSG_PLAN_REQUEST };
    snprintf (tmp.cid, sizeof tmp.cid, "%s", cid);
    bmq_envelope_t *reply = bmq_envelope_reply (&tmp, BMQ_MSG_PLAN_REPLY, body);
    s_send (p, rid, &reply);
    free (note);
    return 0;
}

/* ---- LLM jobs ------------------------------------------------------------------ */

static void s_job_note (void *ctx, bmq_plan_job_t *job, const char *text)
{
    s_planner_t *p = ctx;
    s_note (p, bmq_plan_job_rid (job), bmq_plan_job_cid (job), text);
}

static void s_job_audit (void *ctx, bmq_plan_job_t *job, const char *kind, json_t *data)
{
    bmq_audit_record (((s_planner_t *) ctx)->audit, bmq_plan_job_cid (job), kind, data);
}

static void s_job_done (s_planner_t *p, bmq_plan_job_t *job)
{
    const bmq_dialogue_result_t *r = bmq_plan_job_result (job);
    const char *cid = bmq_plan_job_cid (job);
    zframe_t *rid = bmq_plan_job_rid (job);
    double secs = bmq_plan_job_age_ms (job) / 1000.0;
    bool review = bmq_plan_job_reviewing (job);
    if (review && r->satisfied && !r->plan) {
        bmq_info ("%s: %s reviewed the result: satisfied (%d turns, %d looks)", cid, p->set.backend, r->turns, r->looks);
        bmq_audit_record (p->audit, cid, "plan.reviewed", json_pack ("{s:s, s:s, s:s, s:i, s:i}", "outcome", "satisfied",
                                                                     "summary", r->summary, "source", p->set.backend,
                                                                     "turns", r->turns, "looks", r->looks));
        json_t *body = json_pack ("{s:[], s:s, s:s, s:s, s:s, s:[s], s:i, s:i, s:f}", "plan", "source", p->set.backend,
                                  "mode", "review", "title", "review", "model", p->set.model, "notes", r->summary,
                                  "turns", r->turns, "tool_calls", r->tool_calls, "seconds", secs);
        bmq_envelope_t tmp = { .type = BMQ_MSG_PLAN_REQUEST };
        snprintf (tmp.cid, sizeof tmp.cid, "%s", cid);
        bmq_envelope_t *reply = bmq_envelope_reply (&tmp, BMQ_MSG_PLAN_REPLY, body);
        s_send (p, rid, &reply);
        return;
    }
    if (r->plan || r->script) {
        json_t *body = json_pack ("{s:o, s:s, s:s, s:s, s:i, s:i, s:i, s:f}", "plan", r->plan ? json_incref (r->plan) : json_array (),
                                  "source", p->set.backend, "title", r->title, "model", p->set.model, "turns", r->turns,
                                  "fix_rounds", r->fix_rounds, "tool_calls", r->tool_calls, "seconds", secs);
        if (r->script) {
            json_object_set_new (body, "script", json_string (r->script));
            json_object_set_new (body, "mode", json_string ("script"));
        }
        if (review) {
            json_object_set_new (body, "mode", json_string ("review"));
            bmq_audit_record (p->audit, cid, "plan.reviewed", json_pack ("{s:s, s:i, s:s, s:i, s:i}", "outcome", "fix",
                                                                         "steps", (int) json_array_size (r->plan), "source",
                                                                         p->set.backend, "turns", r->turns, "looks", r->looks));
        }
        bmq_info ("%s: %s planned \"%s\" in %.1f s, %d turns", cid, p->set.backend, r->title, secs, r->turns);
        bmq_audit_record (p->audit, cid, "plan.proposed",
                          json_pack ("{s:O?, s:s?, s:s, s:s, s:s, s:i, s:i}", "plan", r->plan, "script", r->script,
                                     "source", p->set.backend, "model", p->set.model, "title", r->title,
                                     "turns", r->turns, "fix_rounds", r->fix_rounds));
        bmq_envelope_t tmp = { .type = BMQ_MSG_PLAN_REQUEST };
        snprintf (tmp.cid, sizeof tmp.cid, "%s", cid);
        bmq_envelope_t *reply = bmq_envelope_reply (&tmp, BMQ_MSG_PLAN_REPLY, body);
        s_send (p, rid, &reply);
        return;
    }
    bmq_warn ("%s: %s could not plan (%s): %s", cid, p->set.backend, r->code, r->message);
    bmq_audit_record (p->audit, cid, "plan.failed", json_pack ("{s:s, s:s, s:s, s:O?, s:i}", "source", p->set.backend,
                                                               "code", r->code, "message", r->message, "errors", r->errors,
                                                               "turns", r->turns));
    char code[32], message[1024];
    if (p->set.fallback_offline && r->fallback_ok && !review) {
        char note[1300];
        snprintf (note, sizeof note, "%s could not plan this (%s); trying the offline recipes",
                  bmq_dialogue_backend_title (p->set.backend), r->code);
        s_note (p, rid, cid, note);
        if (s_offline (p, rid, cid, bmq_plan_job_prompt (job), p->set.backend, NULL, code, sizeof code, message, sizeof message) == 0)
            return;
    }
    bmq_envelope_t *err = s_error (cid, r->code, r->message);
    if (r->errors) json_object_set (err->body, "errors", r->errors);
    s_send (p, rid, &err);
}

static void s_on_job (s_planner_t *p, bmq_plan_job_t *job)
{
    bmq_plan_job_handler_t h = { .note = s_job_note, .audit = s_job_audit, .ctx = p };
    if (!bmq_plan_job_recv (job, &h)) return;
    s_job_done (p, job);
    zpoller_remove (p->poller, bmq_plan_job_actor (job));
    void *handle = zlistx_find (p->jobs, job);
    if (handle) zlistx_delete (p->jobs, handle);
    bmq_plan_job_destroy (&job);
}

static int s_start_job (s_planner_t *p, const bmq_envelope_t *req, zframe_t *rid, bool script, const json_t *review)
{
    char err[512];
    int r = bmq_prompts_refresh (p->prompts, err, sizeof err);
    if (r > 0) bmq_info ("prompts reloaded (%d file%s changed)", r, r == 1 ? "" : "s");
    else if (r < 0) bmq_warn ("%s", err);
    const bmq_caps_snapshot_t *caps = bmq_planner_caps_current (p->caps);
    bmq_dialogue_opts_t o = {
        .backend = p->set.backend,
        .llm = { .base_url = p->set.base_url, .model = p->set.model, .api_key = p->set.api_key,
                 .stream = p->set.stream, .policy = p->set.policy },
        .timeout_ms = p->set.timeout_ms, .max_turns = p->set.max_turns,
        .max_fix_rounds = p->set.max_fix_rounds, .max_reformats = 2, .script_mode = script,
        .system_prompt = bmq_prompts_get (p->prompts, script ? BMQ_PROMPT_SCRIPT : BMQ_PROMPT_PLANNER),
        .user_template = bmq_prompts_get (p->prompts, BMQ_PROMPT_CONTEXTUAL),
        .reformat_template = bmq_prompts_get (p->prompts, BMQ_PROMPT_REFORMAT),
        .fix_template = bmq_prompts_get (p->prompts, BMQ_PROMPT_FIX),
        .palette = caps->palette, .caps = caps, .gateway_endpoint = p->set.gateway,
        .inspect_timeout_ms = p->set.inspect_timeout_ms, .cid = req->cid,
        .look_timeout_ms = p->set.look_timeout_ms, .review = review,
        .review_template = bmq_prompts_get (p->prompts, BMQ_PROMPT_REVIEW),
    };
    bmq_plan_job_t *job = bmq_plan_job_new (&o, bmq_body_str (req, "prompt"), req->cid, rid);
    if (!job) return -1;
    if (!caps->merged) {            /* the curated palette, or the pool's before its merge with Blender's RNA */
        char note[800];
        const char *why = bmq_planner_caps_detail (p->caps);
        snprintf (note, sizeof note, "%s%s%s%s", caps->note, *why ? " (the gateway's validator pool: " : "", why, *why ? ")" : "");
        s_note (p, rid, req->cid, note);
    }
    zlistx_add_end (p->jobs, job);
    zpoller_add (p->poller, bmq_plan_job_actor (job));
    return 0;
}

/* ---- requests ------------------------------------------------------------------- */

static void s_on_plan_request (s_planner_t *p, const bmq_envelope_t *req, zframe_t *rid)
{
    const char *prompt = bmq_body_str (req, "prompt");
    const char *mode = bmq_body_str (req, "mode");
    bool script = mode && !strcmp (mode, "script");
    bool review = mode && !strcmp (mode, "review");
    const json_t *rv = json_object_get (req->body, "review");
    bmq_envelope_t *reply = NULL;
    if (strlen (prompt) > MAX_PROMPT)
        reply = bmq_envelope_error (req, "bad_request", "prompt longer than %d bytes", MAX_PROMPT);
    else if (mode && strcmp (mode, "plan") && !script && !review)
        reply = bmq_envelope_error (req, "bad_request", "mode must be plan, script or review, not %.32s", mode);
    else if (review && (!json_is_object (rv) || !json_is_array (json_object_get (rv, "plan"))
                        || !json_is_object (json_object_get (rv, "result"))))
        reply = bmq_envelope_error (req, "bad_request", "a review needs review: {plan: [...], result: {...}}");
    else if (review && (!strcmp (p->set.backend, "offline") || p->set.review_rounds == 0))
        reply = bmq_envelope_error (req, "unsupported", "this planner does not review results (%s)",
                                    p->set.review_rounds == 0 ? "planner.review_rounds is 0" : "the offline planner never does");
    if (reply) { s_send (p, rid, &reply); return; }
    bmq_audit_record (p->audit, req->cid, "prompt", json_pack ("{s:s, s:s, s:s, s:s}", "prompt", prompt,
                                                                "backend", p->set.backend, "model", p->set.model,
                                                                "mode", script ? "script" : review ? "review" : "plan"));
    if (!strcmp (p->set.backend, "offline")) {
        char code[32], message[1024];
        if (script) reply = bmq_envelope_error (req, "unsupported", "script mode needs an LLM backend (planner.backend)");
        else if (s_offline (p, rid, req->cid, prompt, NULL, json_object_get (req->body, "scene_boxes"), code, sizeof code, message,
                            sizeof message))
            reply = bmq_envelope_error (req, code, "%s", message);
    }
    else if (zlistx_size (p->jobs) >= (size_t) p->set.max_concurrent)
        reply = bmq_envelope_error (req, "busy", "the planner is already working on %zu prompts; try again shortly",
                                    zlistx_size (p->jobs));
    else if (s_start_job (p, req, rid, script, review ? rv : NULL))
        reply = bmq_envelope_error (req, "internal", "cannot start planning");
    if (reply) s_send (p, rid, &reply);
}

/* save_recipe and list_recipes (MCP tools, seed 002): the plan must pass the
 * palette, and the name is sanitised by bmq_offline_save (no path games). */
static void s_on_recipe (s_planner_t *p, const bmq_envelope_t *req, zframe_t *rid)
{
    char err[512];
    bmq_envelope_t *reply;
    if (bmq_offline_refresh (p->offline, err, sizeof err) < 0) bmq_warn ("recipes: %s", err);
    if (req->type == BMQ_MSG_RECIPE_LIST)
        reply = bmq_envelope_reply (req, BMQ_MSG_RECIPE_REPLY, json_pack ("{s:o}", "recipes", bmq_offline_list (p->offline)));
    else {
        const char *name = bmq_body_str (req, "name");
        const char *description = bmq_body_str (req, "description");
        char path[1024];
        if (bmq_offline_save (p->offline, name, strlen (name), description ? description : "", json_object_get (req->body, "keywords"),
                              json_object_get (req->body, "plan"), path, sizeof path, err, sizeof err))
            reply = bmq_envelope_error (req, "bad_request", "recipe not saved: %s", err);
        else {
            bmq_audit_record (p->audit, req->cid, "recipe.saved", json_pack ("{s:s, s:s, s:O}", "name", name, "path", path,
                                                                              "plan", json_object_get (req->body, "plan")));
            reply = bmq_envelope_reply (req, BMQ_MSG_RECIPE_REPLY, json_pack ("{s:s, s:s}", "name", name, "saved", "ok"));
        }
    }
    s_send (p, rid, &reply);
}

static void s_on_router (s_planner_t *p)
{
    zframe_t *rid = NULL;
    bmq_envelope_t *env = bmq_bus_recv (p->router, &rid);
    /* only the gateway, for a client of the right role (roles.def) */
    if (env && bmq_roles_refused (p->router, rid, env, "planner", p->curve, 0, p->audit)) bmq_envelope_destroy (&env);
    if (env && !bmq_answer_heartbeat (p->router, rid, env, "planner", p->state)) {
        if (env->type == BMQ_MSG_PLAN_REQUEST) s_on_plan_request (p, env, rid);
        else if (env->type == BMQ_MSG_RECIPE_SAVE || env->type == BMQ_MSG_RECIPE_LIST) s_on_recipe (p, env, rid);
        else if (env->type == BMQ_MSG_CANCEL_REQUEST) {
            /* the dialogue of that story stops at its next check and answers "cancelled" itself */
            for (bmq_plan_job_t *job = zlistx_first (p->jobs); job; job = zlistx_next (p->jobs))
                if (!strcmp (bmq_plan_job_cid (job), env->cid)) bmq_plan_job_cancel (job);
        }
        else {
            bmq_envelope_t *reply = bmq_envelope_error (env, "unsupported", "planner does not handle %s", bmq_msg_type_name (env->type));
            s_send (p, rid, &reply);
        }
    }
    zframe_destroy (&rid);
    bmq_envelope_destroy (&env);
}

/* ---- life ------------------------------------------------------------------------- */

static void s_free (s_planner_t *p)
{
    for (bmq_plan_job_t *job = p->jobs ? zlistx_first (p->jobs) : NULL; job; job = zlistx_next (p->jobs)) bmq_plan_job_destroy (&job);
    zlistx_destroy (&p->jobs);
    zpoller_destroy (&p->poller);
    if (p->audit) bmq_audit_flush (p->audit, 1000);
    bmq_audit_destroy (&p->audit);
    zsock_destroy (&p->router);
    bmq_offline_destroy (&p->offline);
    bmq_prompts_destroy (&p->prompts);
    bmq_palette_destroy (&p->palette);
    bmq_planner_caps_destroy (&p->caps);
    bmq_planner_settings_clear (&p->set);
}

int bmq_planner_service_run (bmq_config_t *cfg)
{
    s_planner_t p = { 0 };
    char err[512];
    /* a setting that cannot work is the configuration's fault: exit 78, which no supervisor restarts
     * (the same file fails the same way) and `up` prints (issue 29) */
    if (bmq_planner_settings_load (&p.set, cfg, err, sizeof err)) {
        bmq_error ("%s", err);
        fprintf (stderr, "blendmq-planner: configuration problem (not started):\n%s\n", err);   /* what `up` prints */
        return BMQ_EXIT_CONFIG;
    }
    bmq_planner_settings_describe (&p.set, p.state, sizeof p.state);
    json_t *doc = bmq_yaml_load_file (p.set.palette, err, sizeof err);
    p.palette = doc ? bmq_palette_from_json (doc, err, sizeof err) : NULL;
    p.caps = p.palette ? bmq_planner_caps_new (p.set.gateway, doc, NULL, err, sizeof err) : NULL;
    json_decref (doc);
    if (!p.caps) {
        bmq_error ("cannot load the palette: %s: %s", p.set.palette, err);
        s_free (&p);
        return 1;
    }
    if (!(p.prompts = bmq_prompts_load (p.set.prompts_dir, err, sizeof err))
        || !(p.offline = bmq_offline_new (p.set.recipes_dir, p.set.saved_dir, p.palette, err, sizeof err))) {
        bmq_error ("%s", err);
        s_free (&p);
        return 1;
    }
    bmq_llm_http_global_init ();
    p.router = bmq_bus_bind (ZMQ_ROUTER, bmq_config_str (cfg, "planner.endpoint"));
    p.audit = bmq_audit_new_from_config (cfg);
    p.curve = bmq_roles_curve (cfg);
    p.jobs = zlistx_new ();
    if (!p.router || !p.audit || !p.jobs) { s_free (&p); return 1; }
    p.poller = zpoller_new (p.router, bmq_audit_sock (p.audit), NULL);
    bmq_info ("planner ready on %s: %s backend, %zu recipes, prompts from %s", bmq_config_str (cfg, "planner.endpoint"),
              p.state, bmq_offline_count (p.offline), p.set.prompts_dir);
    if (strcmp (p.set.backend, "offline"))
        bmq_info ("%s at %s, streaming %s, fallback to recipes %s", p.set.backend, p.set.base_url,
                  p.set.stream ? "on" : "off", p.set.fallback_offline ? "on" : "off");
    while (!zsys_interrupted) {
        /* the palette exchange's socket is short-lived (one per exchange): looked at, not polled */
        int64_t wait = bmq_planner_caps_sock (p.caps) ? 20 : bmq_planner_caps_due (p.caps) - bmq_mono_ms ();
        void *which = zpoller_wait (p.poller, wait < 0 ? 0 : wait > 500 ? 500 : (int) wait);
        if (which == p.router) s_on_router (&p);
        else if (which == bmq_audit_sock (p.audit)) {
            bmq_envelope_t *env = bmq_bus_recv (bmq_audit_sock (p.audit), NULL);
            if (env) bmq_audit_handle (p.audit, env);
            bmq_envelope_destroy (&env);
        }
        else if (which)
            for (bmq_plan_job_t *job = zlistx_first (p.jobs); job; job = zlistx_next (p.jobs))
                if (which == bmq_plan_job_actor (job)) { s_on_job (&p, job); break; }
        bmq_planner_caps_tick (p.caps);
        while (bmq_planner_caps_sock (p.caps) && (zsock_events (bmq_planner_caps_sock (p.caps)) & ZMQ_POLLIN))
            bmq_planner_caps_on_message (p.caps);
        if (!zlistx_size (p.jobs)) bmq_planner_caps_collect (p.caps);       /* no dialogue holds a replaced palette */
        bmq_audit_tick (p.audit);
    }
    bmq_info ("planner stopping (%zu dialogues cancelled)", zlistx_size (p.jobs));
    s_free (&p);
    curl_global_cleanup ();
    return 0;
}
