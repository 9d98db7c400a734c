/* mcp_generate — generate_3d over MCP (issue 16): a model made from text
 * and/or images by Hyper3D Rodin, then imported into the live scene.
 *
 *   1. asset.generate {source: hyper3d, prompt?, images?, tier?, deadline_s?}
 *      (one story; prompt or images or both; images [{type: image/png |
 *      image/jpeg, data: base64}] 1..5 are passed through after a shape
 *      check — the executor decodes and checks their bytes);
 *      each progress event of it (event "generate": step = percent, total 100,
 *      status, object "generating 40%") becomes a notifications/progress when
 *      the client gave a progress token (rising only) and a debug log line;
 *   2. asset.generated ends it: done with the job id → step 3; failed,
 *      cancelled or deadline → an isError result that says so, nothing imported;
 *   3. the job is imported exactly as import_asset does: a one-step plan
 *      asset.import {source: hyper3d, id: job, type: model, format: glb}, named
 *      `name`, in a new story (run.request) the owner sends
 *      (bmq_mcp_call_next_request); its answers go through the run's feed, and
 *      the result is the run result with the job id (and the generation's time).
 *
 * MCP cancellation while the model is made sends asset.cancel on the
 * generation's story (the executor stops polling, its asset.generated says
 * cancelled); once importing, the plan is cancelled as execute_plan's is.
 *
 * Every field of the bus answers is checked before use: a wrong type reads as
 * absent, the job id must be the plan id the validator accepts (1..128
 * bytes; the validator checks its characters), percentages are clamped. */
#include "mcp_call_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GEN_PROMPT   4000       /* asset.generate's prompt bound (proto/messages.def) */
#define MAX_GEN_DEADLINE 7200       /* seconds: the asset.generate bound */
#define MAX_JOB          128
#define MAX_GEN_IMAGES   5
#define MAX_IMAGE_B64    ((8u << 20) / 3 * 4 + 4)    /* base64 of the executor's 8 MiB bound */

/* images: absent/null (NULL, no error) or a checked deep copy; *bad on a wrong shape. */
static json_t *s_images (const json_t *args, bool *bad, char *err, size_t errlen)
{
    json_t *v = json_object_get (args, "images");
    if (!v || json_is_null (v)) return NULL;
    size_t n = json_array_size (v);
    bool ok = json_is_array (v) && n >= 1 && n <= MAX_GEN_IMAGES;
    for (size_t i = 0; ok && i < n; i++) {
        json_t *item = json_array_get (v, i);
        const char *type = json_string_value (json_object_get (item, "type"));
        const char *data = json_string_value (json_object_get (item, "data"));
        ok = json_is_object (item) && type && (!strcmp (type, "image/png") || !strcmp (type, "image/jpeg")) && data && *data
             && strlen (data) <= MAX_IMAGE_B64;
    }
    if (!ok) {
        snprintf (err, errlen, "images must be 1..%d of {type: \"image/png\" | \"image/jpeg\", data: base64 of at most 8 MiB}",
                  MAX_GEN_IMAGES);
        *bad = true;
        return NULL;
    }
    json_t *copy = json_array ();
    for (size_t i = 0; i < n; i++) {
        json_t *item = json_array_get (v, i);
        json_array_append_new (copy, json_pack ("{s:O, s:O}", "type", json_object_get (item, "type"), "data", json_object_get (item, "data")));
    }
    return copy;
}

static const char *s_opt_str (const json_t *args, const char *key, size_t max, bool *bad, char *err, size_t errlen)
{
    json_t *v = json_object_get (args, key);
    if (!v || json_is_null (v)) return NULL;
    const char *s = json_string_value (v);
    if (!s || !*s || strlen (s) > max) {
        snprintf (err, errlen, "%s must be a non-empty string of at most %zu bytes", key, max);
        *bad = true;
        return NULL;
    }
    return s;
}

json_t *bmq_mcp_generate_body (bmq_mcp_call_t *self, const json_t *args, char *err, size_t errlen)
{
    bool bad = false;
    json_t *images = s_images (args, &bad, err, errlen);
    if (bad) return NULL;
    json_t *p = json_object_get (args, "prompt");
    const char *prompt = json_string_value (p);
    if ((p && !json_is_null (p) && (!prompt || !*prompt || strlen (prompt) > MAX_GEN_PROMPT)) || (!prompt && !images)) {
        snprintf (err, errlen, "prompt must say what to make (\"a wooden chair\"), at most %d bytes (or give images)", MAX_GEN_PROMPT);
        json_decref (images);
        return NULL;
    }
    const char *name = s_opt_str (args, "name", MAX_JOB, &bad, err, errlen);
    const char *tier = bad ? NULL : s_opt_str (args, "tier", 32, &bad, err, errlen);
    if (bad) { json_decref (images); return NULL; }
    json_t *d = json_object_get (args, "deadline_s");
    if (d && !json_is_null (d) && (!json_is_integer (d) || json_integer_value (d) < 10 || json_integer_value (d) > MAX_GEN_DEADLINE)) {
        snprintf (err, errlen, "deadline_s must be an integer in 10..%d (seconds)", MAX_GEN_DEADLINE);
        json_decref (images);
        return NULL;
    }
    json_int_t deadline_s = json_is_integer (d) ? json_integer_value (d) : 0;
    json_t *body = json_pack ("{s:s, s:s*, s:o*}", "source", "hyper3d", "prompt", prompt, "images", images);
    if (tier) json_object_set_new (body, "tier", json_string (tier));
    if (deadline_s) json_object_set_new (body, "deadline_s", json_integer (deadline_s));
    snprintf (self->gen_name, sizeof self->gen_name, "%s", name ? name : "");
    self->gen = S_GEN_MAKING;
    /* the executor ends the job at its deadline (default assets.hyper3d_deadline_s); this call waits
     * while blendmq speaks (each progress event), never past the longest deadline a job may have */
    self->gen_until = self->started + (deadline_s ? deadline_s : MAX_GEN_DEADLINE) * 1000 + self->quiet_ms;
    self->run = json_pack ("{s:s, s:s, s:s, s:i, s:i}", "job", "", "plan_id", "", "status", "error", "steps_done", 0, "steps_total", 1);
    return body;
}

/* The quiet-time deadline moves on with every word of the story, never past gen_until. */
static void s_heard (bmq_mcp_call_t *self)
{
    int64_t next = bmq_mono_ms () + self->quiet_ms;
    self->deadline = next < self->gen_until ? next : self->gen_until;
}

static void s_on_progress (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out)
{
    const char *event = bmq_body_str (env, "event");
    if (!event || strcmp (event, "generate")) return;
    int64_t total = bmq_body_int (env, "total", 100), step = bmq_body_int (env, "step", 0);
    if (total <= 0 || total > 1000000) total = 100;
    if (step < 0) step = 0;
    if (step > total) step = total;
    const char *status = bmq_body_str (env, "status"), *object = bmq_body_str (env, "object");
    char msg[256];
    if (object && *object) snprintf (msg, sizeof msg, "%.200s", object);
    else snprintf (msg, sizeof msg, "%.32s %lld%%", status ? status : "generating", (long long) (step * 100 / total));
    bmq_mcp_call_progress (self, out, (double) step, (double) total, msg);
    bmq_mcp_call_log (self, out, 0, "generate_3d: %s", msg);
}

/* asset.generated: the job is made (import it) or not (say why). */
static bool s_on_generated (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out)
{
    const char *status = bmq_body_str (env, "status"), *job = bmq_body_str (env, "id"), *error = bmq_body_str (env, "error");
    double ms = json_number_value (json_object_get (env->body, "duration_ms"));
    if (job && strlen (job) <= MAX_JOB) json_object_set_new (self->run, "job", json_string (job));
    if (json_is_number (json_object_get (env->body, "duration_ms"))) json_object_set_new (self->run, "generate_ms", json_real (ms));
    bool done = status && !strcmp (status, "done");
    if (!done || !job || !*job || strlen (job) > MAX_JOB) {
        json_object_set_new (self->run, "status", json_string (status && strlen (status) <= 32 ? status : "failed"));
        char why[4300];
        if (done) snprintf (why, sizeof why, "blendmq said the model was made but gave no usable job id");
        else snprintf (why, sizeof why, "%s", error ? error : "");
        json_object_set_new (self->run, "error", json_string (why));
        char summary[4600];
        snprintf (summary, sizeof summary, "generate_3d: no model: %s%s%s (job %s, after %.1f s); nothing was imported%s",
                  status ? status : "failed", *why ? ": " : "", why, job && *job ? job : "-", ms / 1000.0,
                  status && !strcmp (status, "deadline") ? ". Try again with a larger deadline_s or a faster tier"
                  : status && !strcmp (status, "cancelled") ? "" : ". Try another prompt, or again later");
        bmq_mcp_call_log (self, out, 4, "%s", summary);
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_incref (self->run), summary, true), out);
        return true;
    }
    bmq_mcp_call_progress (self, out, 100, 100, "generated; importing");
    bmq_mcp_call_log (self, out, 1, "generate_3d: model %s made in %.1f s; importing it%s%s", job, ms / 1000.0,
                      *self->gen_name ? " as " : "", self->gen_name);
    /* the import, exactly as import_asset sends it: a one-step plan in a story of its own */
    json_t *step = json_pack ("{s:s, s:{s:s, s:s, s:s, s:s}}", "operation", "asset.import", "params", "source", "hyper3d",
                              "id", job, "type", "model", "format", "glb");
    if (*self->gen_name) json_object_set_new (step, "name", json_string (self->gen_name));
    json_t *body = json_pack ("{s:[o]}", "plan", step);
    if (self->on_behalf_of) json_object_set (body, "on_behalf_of", self->on_behalf_of);
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_RUN_REQUEST, NULL, body);
    snprintf (req->sender, sizeof req->sender, "mcp");
    snprintf (self->cid, sizeof self->cid, "%s", req->cid);       /* a new story: the generation's has ended */
    bmq_envelope_destroy (&self->next);
    self->next = req;
    self->gen = S_GEN_IMPORTING;
    s_heard (self);
    return false;
}

/* Say what was generated before what the import did, in the response's text. */
static void s_prefix_summary (bmq_mcp_call_t *self, json_t *out)
{
    json_t *response = json_array_get (out, json_array_size (out) - 1);
    json_t *block = json_array_get (json_object_get (json_object_get (response, "result"), "content"), 0);
    const char *text = json_string_value (json_object_get (block, "text"));
    if (!text) return;
    char *joined = NULL;
    if (asprintf (&joined, "generate_3d: model %s made in %.1f s; its import: %s", json_string_value (json_object_get (self->run, "job")),
                  json_number_value (json_object_get (self->run, "generate_ms")) / 1000.0, text) < 0)
        return;
    json_object_set_new (block, "text", json_string (joined));
    free (joined);
}

bool bmq_mcp_generate_feed (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out)
{
    s_heard (self);
    if (self->gen == S_GEN_IMPORTING) {
        bool over = bmq_mcp_call_feed_run (self, env, out);
        if (over) s_prefix_summary (self, out);
        return over;
    }
    if (env->type == BMQ_MSG_PROGRESS) { s_on_progress (self, env, out); return false; }
    if (env->type == BMQ_MSG_ASSET_GENERATED) return s_on_generated (self, env, out);
    return false;
}

bmq_envelope_t *bmq_mcp_generate_cancel (bmq_mcp_call_t *self)
{
    json_t *body = json_object ();
    if (self->on_behalf_of) json_object_set (body, "on_behalf_of", self->on_behalf_of);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_ASSET_CANCEL, self->cid, body);
    snprintf (env->sender, sizeof env->sender, "mcp");
    return env;
}
