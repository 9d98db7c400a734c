/* executor_generate — Hyper3D Rodin generation jobs in the executor (issue 16).
 *
 * asset.generate {source: hyper3d, prompt?, images?, tier?, deadline_s?}
 * starts a job; refusals (another source, no API key, neither a prompt nor
 * images, an image that is not what it says — bmq_hyper3d_images_decode:
 * 1..5 of {type: image/png | image/jpeg, data: base64}, each at most 8 MiB
 * decoded with its type's magic bytes —, the same cid twice, more than
 * GEN_MAX jobs at once) are answered at once with an error, before any HTTP. Each job is an
 * actor of its own (a thread with its own Hyper3D client on the shared
 * cache), so neither the executor's loop nor the plan assets actor ever
 * waits on a poll:
 *
 *   create (never retried) → status every assets.hyper3d_poll_ms → on Done,
 *   the model fetched into the cache → asset.generated {status: done, id}
 *
 * A status call that fails (after its own retries) is asked again at the
 * next poll; GEN_MISSES in a row fail the job. Failed → failed with the
 * source's reason; asset.cancel (by the job's cid,
 * or by its task uuid in `job`), or its requester falling silent (the
 * requesters it heartbeats, executor_requesters.c) → cancelled; no model
 * by the deadline (the request's deadline_s, else assets.hyper3d_deadline_s)
 * → deadline. Rodin has no cancel call: a job stopped here may still finish
 * there, and its id stays importable once it does.
 *
 * Jobs report to the loop over one inproc PUSH/PULL pair: [cid, kind, json]
 * with kind "progress" {status, step, object, id?} or "end" {status, id?,
 * error?}. The loop publishes each progress on the PUB (and to the
 * requester) as a `progress` event {event: "generate", plan_id: cid, step:
 * 0..100, total: 100, status, operation: "hyper3d", object}; Rodin gives no
 * percent, so it is estimated from the state (submitted 5, waiting 10,
 * generating 20→90 by time, downloading 95, done 100) and the object line
 * says "(estimated)". The end answers the requester (and any other asker
 * that cancelled it) with asset.generated and writes one audit record
 * "asset.generate" {prompt, images (how many), job, status, duration_ms, error?}. Stopping the
 * executor stops every job (the HTTP abort is pulled first; waits wake on
 * the actor's $TERM) and answers them "cancelled". */
#include "executor_internal.h"
#include "assets_hyper3d.h"
#include "log.h"
#include "progress_stamp.h"

#define GEN_MAX        4
#define GEN_CANCELLERS 4
#define GEN_MISSES     3            /* status calls failing in a row (each after its retries) before a job fails */

typedef struct {
    char     cid[BMQ_MAX_ID + 1];
    zframe_t *rid;
} s_asker_t;

typedef struct {
    char         cid[BMQ_MAX_ID + 1];
    char         prompt[BMQ_HYPER3D_PROMPT_MAX + 1];
    char         tier[32];
    bmq_hyper3d_image_t images[BMQ_HYPER3D_IMAGES_MAX];    /* decoded and checked by the loop; owned */
    size_t       nimages;
    char         uuid[65];                  /* known once created */
    char         endpoint[80];
    int          deadline_s;
    zframe_t    *rid;
    s_asker_t    cancellers[GEN_CANCELLERS];
    size_t       ncancellers;
    atomic_bool  stop;
    bool         term;                      /* the job thread read $TERM */
    bmq_hyper3d_options_t opts;             /* read once by the loop: the job's thread never reads the configuration */
    int64_t      started_ms;
    zactor_t    *actor;
} s_job_t;

struct executor_gen_t {
    zsock_t  *events;                       /* PULL: the jobs' reports */
    char      endpoint[64];
    zlistx_t *jobs;                         /* s_job_t */
    bool      usable;
    char      why[512];                     /* why generations are refused (no key, bad settings) */
    bmq_hyper3d_options_t opts;
};

/* ---- a job (its own thread) --------------------------------------------------- */

static void s_report (zsock_t *push, const char *cid, const char *kind, json_t *body)
{
    char *text = json_dumps (body, JSON_COMPACT);
    zstr_sendx (push, cid, kind, text ? text : "{}", NULL);
    free (text);
    json_decref (body);
}

static void s_progress (zsock_t *push, s_job_t *job, const char *status, int pct, const char *what)
{
    char line[160];
    snprintf (line, sizeof line, "%s %d%% (estimated)", what, pct);
    s_report (push, job->cid, "progress", json_pack ("{s:s, s:i, s:s, s:s?}", "status", status, "step", pct, "object", line,
                                                     "id", *job->uuid ? job->uuid : NULL));
}

/* Wait ms on the pipe: false when the job must stop ($TERM, CANCEL, the flag). */
static bool s_wait (zsock_t *pipe, s_job_t *job, int ms)
{
    zpoller_t *poller = zpoller_new (pipe, NULL);
    int64_t until = bmq_mono_ms () + ms;
    bool go = true;
    while (go && !atomic_load (&job->stop)) {
        int64_t left = until - bmq_mono_ms ();
        if (left <= 0) break;
        if (zpoller_wait (poller, (int) left) != pipe) {
            if (zpoller_terminated (poller)) { atomic_store (&job->stop, true); go = false; }     /* SIGTERM: the loop stops too */
            continue;
        }
        char *cmd = zstr_recv (pipe);
        if (!cmd || !strcmp (cmd, "$TERM")) { atomic_store (&job->stop, true); job->term = true; go = false; }
        else if (!strcmp (cmd, "CANCEL")) atomic_store (&job->stop, true);
        free (cmd);
    }
    zpoller_destroy (&poller);
    return go && !atomic_load (&job->stop);
}

static void s_end (zsock_t *push, s_job_t *job, const char *status, const char *error)
{
    s_report (push, job->cid, "end", json_pack ("{s:s, s:s?, s:s?}", "status", status, "id", *job->uuid ? job->uuid : NULL,
                                                "error", error && *error ? error : NULL));
}

static void s_run (zsock_t *pipe, zsock_t *push, s_job_t *job, bmq_hyper3d_t *h3)
{
    char err[1024] = "", reason[400];
    int64_t deadline = job->started_ms + (int64_t) job->deadline_s * 1000;
    int poll_ms = bmq_hyper3d_options (h3)->poll_ms;
    bmq_hyper3d_task_t task;
    s_progress (push, job, "submitted", 5, "submitting to Hyper3D Rodin");
    if (bmq_hyper3d_create_with (h3, job->prompt, job->tier, job->images, job->nimages, &task, err, sizeof err)) { s_end (push, job, "failed", err); return; }
    snprintf (job->uuid, sizeof job->uuid, "%s", task.uuid);
    s_progress (push, job, "waiting", 10, "waiting for Rodin");
    int64_t gen_since = 0;
    int last_pct = 10, misses = 0;
    for (;;) {
        if (!s_wait (pipe, job, poll_ms)) break;
        if (bmq_mono_ms () >= deadline) {
            snprintf (err, sizeof err, "no model within %d s (Rodin job %s was not done; Rodin has no cancel: it may still "
                      "finish, and asset.import {source: hyper3d, id: %s} takes it then)", job->deadline_s, job->uuid, job->uuid);
            s_end (push, job, "deadline", err);
            return;
        }
        bmq_hyper3d_state_t state;
        if (bmq_hyper3d_status (h3, &task, &state, reason, sizeof reason, err, sizeof err)) {
            if (atomic_load (&job->stop)) break;
            if (++misses < GEN_MISSES) {            /* a paid job outlives a blip: ask again at the next poll */
                bmq_warn ("generation %s: status not read (%d of %d): %s", job->cid, misses, GEN_MISSES, err);
                continue;
            }
            char why[1200];
            snprintf (why, sizeof why, "the status of Rodin job %s could not be read %d times in a row (it may still finish: "
                      "asset.import {source: hyper3d, id: %s} takes it then): %s", job->uuid, GEN_MISSES, job->uuid, err);
            s_end (push, job, "failed", why);
            return;
        }
        misses = 0;
        if (state == BMQ_HYPER3D_FAILED) {
            snprintf (err, sizeof err, "Rodin job %s failed: %s", job->uuid, *reason ? reason : "no reason given");
            s_end (push, job, "failed", err);
            return;
        }
        if (state == BMQ_HYPER3D_DONE) break;
        if (state == BMQ_HYPER3D_GENERATING) {
            int64_t now = bmq_mono_ms ();
            if (!gen_since) gen_since = now;
            int64_t span = deadline - gen_since > 1 ? deadline - gen_since : 1;
            int pct = 20 + (int) (70 * (now - gen_since) / span);
            if (pct > 90) pct = 90;
            if (pct < last_pct) pct = last_pct;
            last_pct = pct;
            s_progress (push, job, "generating", pct, "generating");
        }
        else s_progress (push, job, "waiting", 10, "waiting for Rodin");
    }
    if (atomic_load (&job->stop)) { s_end (push, job, "cancelled", "cancelled before the model was ready"); return; }
    s_progress (push, job, "downloading", 95, "downloading the model");
    bmq_asset_bundle_t *b = bmq_hyper3d_fetch (h3, job->uuid, &job->stop, err, sizeof err);
    if (!b) {
        s_end (push, job, atomic_load (&job->stop) ? "cancelled" : "failed", err);
        return;
    }
    bmq_asset_bundle_destroy (&b);
    s_progress (push, job, "done", 100, "model ready");
    s_end (push, job, "done", NULL);
}

static void s_job_actor (zsock_t *pipe, void *arg)
{
    s_job_t *job = arg;
    zsock_signal (pipe, 0);
    zsock_t *push = zsock_new_push (job->endpoint);
    char err[600] = "";
    bmq_hyper3d_t *h3 = bmq_hyper3d_new (&job->opts, err, sizeof err);
    if (push && !h3) s_end (push, job, "failed", err);
    else if (push) s_run (pipe, push, job, h3);
    bmq_hyper3d_destroy (&h3);
    /* wait for $TERM (the loop destroys the actor once it read the end) */
    while (!job->term) {
        char *cmd = zstr_recv (pipe);
        bool term = !cmd || !strcmp (cmd, "$TERM");
        free (cmd);
        if (term) break;
    }
    zsock_destroy (&push);
}

/* ---- the loop's side ------------------------------------------------------------ */

static void s_job_free (s_job_t **job_p)
{
    s_job_t *job = *job_p;
    if (!job) return;
    atomic_store (&job->stop, true);
    zactor_destroy (&job->actor);
    zframe_destroy (&job->rid);
    for (size_t i = 0; i < job->ncancellers; i++) zframe_destroy (&job->cancellers[i].rid);
    bmq_hyper3d_images_free (job->images, job->nimages);
    free (job);
    *job_p = NULL;
}

executor_gen_t *executor_generate_new (const bmq_config_t *cfg)
{
    executor_gen_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    static atomic_int s_made;               /* a fresh name each time: an old one may still be unbinding */
    snprintf (self->endpoint, sizeof self->endpoint, "inproc://bmq-generate-%d", atomic_fetch_add (&s_made, 1));
    char bound[80];
    snprintf (bound, sizeof bound, "@%s", self->endpoint);
    self->events = zsock_new_pull (bound);
    if (!self->events) { free (self); return NULL; }
    self->jobs = zlistx_new ();
    bmq_hyper3d_options_t *opts = &self->opts;
    if (bmq_hyper3d_options_from_config (opts, cfg, self->why, sizeof self->why)) { }
    else if (!*opts->api_key)
        snprintf (self->why, sizeof self->why, "Hyper3D needs an API key: set assets.hyper3d_api_key in the configuration "
                  "or HYPER3D_API_KEY in the executor's environment");
    else self->usable = true;
    if (!self->usable) bmq_info ("asset generation (Hyper3D) is off: %s", self->why);
    return self;
}

zsock_t *executor_generate_sock (executor_gen_t *self) { return self ? self->events : NULL; }

static s_job_t *s_find (executor_gen_t *self, const char *cid, const char *uuid)
{
    for (s_job_t *job = zlistx_first (self->jobs); job; job = zlistx_next (self->jobs))
        if ((cid && !strcmp (job->cid, cid)) || (uuid && *job->uuid && !strcmp (job->uuid, uuid))) return job;
    return NULL;
}

void executor_generate_request (executor_t *ex, const bmq_envelope_t *req, zframe_t *rid)
{
    executor_gen_t *self = ex->gen;
    const char *source = bmq_body_str (req, "source");
    const char *prompt = bmq_body_str (req, "prompt");
    json_t *images = json_object_get (req->body, "images");
    bmq_hyper3d_image_t decoded[BMQ_HYPER3D_IMAGES_MAX];
    size_t ndecoded = 0;
    char why[300] = "";
    bmq_envelope_t *reply = NULL;
    if (!self) reply = bmq_envelope_error (req, "internal", "asset generation could not start in this executor");
    else if (strcmp (source ? source : "", "hyper3d"))
        reply = bmq_envelope_error (req, "asset_source", "asset source '%.40s' cannot generate models (only hyper3d can)", source ? source : "");
    else if (!self->usable) reply = bmq_envelope_error (req, "asset_source", "asset source 'hyper3d' is not available: %s", self->why);
    else if (prompt && (!*prompt || strlen (prompt) > BMQ_HYPER3D_PROMPT_MAX))
        reply = bmq_envelope_error (req, "bad_request", "the prompt must be 1..%d bytes", BMQ_HYPER3D_PROMPT_MAX);
    else if (!prompt && (!images || json_is_null (images)))
        reply = bmq_envelope_error (req, "bad_request", "asset.generate needs a prompt (what to make) or images (1..%d "
                                    "PNG or JPEG pictures of it), or both", BMQ_HYPER3D_IMAGES_MAX);
    else if (bmq_hyper3d_images_decode (images, decoded, &ndecoded, why, sizeof why))
        reply = bmq_envelope_error (req, "bad_request", "%s", why);
    else if (s_find (self, req->cid, NULL))
        reply = bmq_envelope_error (req, "duplicate", "a generation with cid %s is already running", req->cid);
    else if (zlistx_size (self->jobs) >= GEN_MAX)
        reply = bmq_envelope_error (req, "busy", "%d generations are already running in this executor (the most it runs at once); "
                                    "wait for one to end", GEN_MAX);
    if (reply) { bmq_hyper3d_images_free (decoded, ndecoded); bmq_bus_send_and_destroy (ex->router, rid, &reply); return; }
    s_job_t *job = calloc (1, sizeof *job);
    if (!job) { bmq_hyper3d_images_free (decoded, ndecoded); return; }
    snprintf (job->cid, sizeof job->cid, "%s", req->cid);
    snprintf (job->prompt, sizeof job->prompt, "%s", prompt ? prompt : "");
    memcpy (job->images, decoded, ndecoded * sizeof decoded[0]);
    job->nimages = ndecoded;
    snprintf (job->tier, sizeof job->tier, "%s", bmq_body_str (req, "tier") ? bmq_body_str (req, "tier") : "");
    snprintf (job->endpoint, sizeof job->endpoint, ">%s", self->endpoint);
    json_int_t d = bmq_body_int (req, "deadline_s", 0);
    job->deadline_s = d >= 10 && d <= 7200 ? (int) d : self->opts.deadline_s;
    job->rid = zframe_dup (rid);
    job->opts = self->opts;
    job->started_ms = bmq_mono_ms ();
    atomic_init (&job->stop, false);
    job->actor = zactor_new (s_job_actor, job);
    if (!job->actor) {
        s_job_free (&job);
        reply = bmq_envelope_error (req, "internal", "cannot start a generation job");
        bmq_bus_send_and_destroy (ex->router, rid, &reply);
        return;
    }
    zlistx_add_end (self->jobs, job);
    bmq_info ("generation %s started (%zu images, %d s deadline)", job->cid, job->nimages, job->deadline_s);
}

static void s_stop_job (s_job_t *job)
{
    atomic_store (&job->stop, true);
    zstr_send (job->actor, "CANCEL");
}

void executor_generate_cancel (executor_t *ex, const bmq_envelope_t *req, zframe_t *rid)
{
    executor_gen_t *self = ex->gen;
    const char *uuid = bmq_body_str (req, "job");
    s_job_t *job = !self ? NULL : uuid && *uuid ? s_find (self, NULL, uuid) : s_find (self, req->cid, NULL);
    if (!job) {
        bmq_envelope_t *reply = uuid && *uuid
            ? bmq_envelope_error (req, "not_found", "no generation job '%.64s' is running in this executor", uuid)
            : bmq_envelope_error (req, "not_found", "no generation with cid %s is running in this executor", req->cid);
        bmq_bus_send_and_destroy (ex->router, rid, &reply);
        return;
    }
    if (strcmp (job->cid, req->cid) && job->ncancellers < GEN_CANCELLERS) {       /* another asker: answered at the end too */
        s_asker_t *a = &job->cancellers[job->ncancellers++];
        snprintf (a->cid, sizeof a->cid, "%s", req->cid);
        a->rid = zframe_dup (rid);
    }
    bmq_audit_record (ex->audit, req->cid, "asset.cancel", json_pack ("{s:s, s:s}", "generation", job->cid, "job", job->uuid));
    s_stop_job (job);
}

static void s_publish (executor_t *ex, s_job_t *job, const json_t *report)
{
    json_t *body = json_pack ("{s:s, s:s, s:I, s:i, s:s, s:s, s:s}", "event", "generate", "plan_id", job->cid,
                              "step", (json_int_t) json_integer_value (json_object_get (report, "step")), "total", 100,
                              "status", json_string_value (json_object_get (report, "status")) ?: "?",
                              "operation", "hyper3d", "object", json_string_value (json_object_get (report, "object")) ?: "");
    bmq_progress_stamp (body);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, job->cid, body);
    bmq_bus_send (ex->router, job->rid, env);
    bmq_bus_send (ex->pub, NULL, env);
    bmq_envelope_destroy (&env);
}

static void s_finish (executor_t *ex, s_job_t *job, const char *status, const char *error)
{
    double ms = (double) (bmq_mono_ms () - job->started_ms);
    json_t *body = json_pack ("{s:s, s:s, s:f}", "source", "hyper3d", "status", status, "duration_ms", ms);
    if (*job->uuid) json_object_set_new (body, "id", json_string (job->uuid));
    if (error && *error) json_object_set_new (body, "error", json_string (error));
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_ASSET_GENERATED, job->cid, json_incref (body));
    bmq_bus_send_and_destroy (ex->router, job->rid, &env);
    for (size_t i = 0; i < job->ncancellers; i++) {
        env = bmq_envelope_new (BMQ_MSG_ASSET_GENERATED, job->cancellers[i].cid, json_incref (body));
        bmq_bus_send_and_destroy (ex->router, job->cancellers[i].rid, &env);
    }
    json_decref (body);
    bmq_audit_record (ex->audit, job->cid, "asset.generate",
                      json_pack ("{s:s, s:s, s:i, s:s, s:s, s:f, s:s?}", "source", "hyper3d", "prompt", job->prompt,
                                 "images", (int) job->nimages, "job", job->uuid,
                                 "status", status, "duration_ms", ms, "error", error && *error ? error : NULL));
    bmq_info ("generation %s (Rodin job %s): %s%s%s", job->cid, *job->uuid ? job->uuid : "-", status,
              error && *error ? ": " : "", error && *error ? error : "");
}

void executor_on_generate (executor_t *ex)
{
    executor_gen_t *self = ex->gen;
    char *cid = NULL, *kind = NULL, *text = NULL;
    if (zstr_recvx (self->events, &cid, &kind, &text, NULL) < 3) { zstr_free (&cid); zstr_free (&kind); zstr_free (&text); return; }
    s_job_t *job = s_find (self, cid, NULL);
    json_t *report = job ? json_loads (text, 0, NULL) : NULL;
    if (report) {
        const char *id = json_string_value (json_object_get (report, "id"));
        if (id && !*job->uuid) snprintf (job->uuid, sizeof job->uuid, "%s", id);
        if (!strcmp (kind, "progress")) s_publish (ex, job, report);
        else if (!strcmp (kind, "end")) {
            s_finish (ex, job, json_string_value (json_object_get (report, "status")) ?: "failed",
                      json_string_value (json_object_get (report, "error")));
            void *handle = zlistx_find (self->jobs, job);
            if (handle) zlistx_detach (self->jobs, handle);
            s_job_free (&job);
        }
    }
    json_decref (report);
    zstr_free (&cid); zstr_free (&kind); zstr_free (&text);
}

void executor_watch_generations (executor_t *ex)
{
    executor_gen_t *self = ex->gen;
    if (!self || !zlistx_size (self->jobs)) return;
    int64_t now = bmq_mono_ms ();
    for (s_job_t *job = zlistx_first (self->jobs); job; job = zlistx_next (self->jobs)) {
        if (atomic_load (&job->stop)) continue;
        char *key = zframe_strhex (job->rid);
        int64_t *last = zhashx_lookup (ex->requesters, key);
        free (key);
        if (last && now - *last > (int64_t) ex->interval * ex->liveness && now >= ex->watch_grace) {
            bmq_warn ("generation %s: its requester has been silent for %d ms: stopping it", job->cid, ex->interval * ex->liveness);
            s_stop_job (job);
        }
    }
}

void executor_generate_destroy (executor_gen_t **self_p, executor_t *ex)
{
    executor_gen_t *self = self_p ? *self_p : NULL;
    if (!self) return;
    for (s_job_t *job = zlistx_first (self->jobs); job; job = zlistx_next (self->jobs)) atomic_store (&job->stop, true);
    for (s_job_t *job = zlistx_first (self->jobs); job; job = zlistx_next (self->jobs)) {
        zactor_destroy (&job->actor);       /* it wakes on $TERM; an HTTP call in flight ends with the abort */
        s_finish (ex, job, "cancelled", "the executor stopped before the generation ended");
        s_job_free (&job);
    }
    zlistx_destroy (&self->jobs);
    zsock_destroy (&self->events);
    free (self);
    *self_p = NULL;
}
