/* plan_job — a dialogue on an actor thread. */
#include "plan_job.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { S_BACKEND, S_URL, S_MODEL, S_KEY, S_SYSTEM, S_USER, S_REFORMAT, S_FIX, S_EXECUTOR, S_CID, S_PROMPT, S_REVIEW, S_COUNT };

struct bmq_plan_job_t {
    zactor_t             *actor;
    zsock_t              *pipe;         /* the thread's end */
    bmq_dialogue_opts_t   opts;
    char                 *str[S_COUNT];
    zframe_t             *rid;
    int64_t               started;
    atomic_bool           cancel;
    bmq_dialogue_result_t result;
    json_t               *review;       /* review mode: a copy of opts->review */
};

static void s_note (void *ctx, const char *text)
{
    bmq_plan_job_t *job = ctx;
    zstr_sendx (job->pipe, "NOTE", text, NULL);
}

static void s_audit (void *ctx, const char *kind, json_t *data)
{
    bmq_plan_job_t *job = ctx;
    char *text = json_dumps (data, JSON_COMPACT);
    json_decref (data);
    if (text) zstr_sendx (job->pipe, "AUDIT", kind, text, NULL);
    free (text);
}

static bool s_cancelled (void *ctx)
{
    bmq_plan_job_t *job = ctx;
    return atomic_load (&job->cancel);
}

static void s_run (zsock_t *pipe, void *arg)
{
    bmq_plan_job_t *job = arg;
    job->pipe = pipe;
    zsock_signal (pipe, 0);
    bmq_plan_sink_t sink = { .note = s_note, .audit = s_audit, .cancelled = s_cancelled, .ctx = job };
    bmq_dialogue_run (&job->opts, job->str[S_PROMPT], &sink, &job->result);
    zstr_send (pipe, "DONE");
    while (true) {                  /* wait for $TERM, so nothing sent above is lost */
        char *cmd = zstr_recv (pipe);
        bool term = !cmd || !strcmp (cmd, "$TERM");
        free (cmd);
        if (term) break;
    }
}

static char *s_dup (const char *s)
{
    return strdup (s ? s : "");
}

bmq_plan_job_t *bmq_plan_job_new (const bmq_dialogue_opts_t *opts, const char *prompt, const char *cid, zframe_t *rid)
{
    bmq_plan_job_t *job = calloc (1, sizeof *job);
    if (!job) return NULL;
    job->opts = *opts;
    job->str[S_BACKEND] = s_dup (opts->backend);
    job->str[S_URL] = s_dup (opts->llm.base_url);
    job->str[S_MODEL] = s_dup (opts->llm.model);
    job->str[S_KEY] = s_dup (opts->llm.api_key);
    job->str[S_SYSTEM] = s_dup (opts->system_prompt);
    job->str[S_USER] = s_dup (opts->user_template);
    job->str[S_REFORMAT] = s_dup (opts->reformat_template);
    job->str[S_FIX] = s_dup (opts->fix_template);
    job->str[S_EXECUTOR] = s_dup (opts->gateway_endpoint);
    job->str[S_CID] = s_dup (cid);
    job->str[S_PROMPT] = s_dup (prompt);
    job->str[S_REVIEW] = s_dup (opts->review_template);
    for (int i = 0; i < S_COUNT; i++)
        if (!job->str[i]) { bmq_plan_job_destroy (&job); return NULL; }
    job->opts.backend = job->str[S_BACKEND];
    job->opts.llm.base_url = job->str[S_URL];
    job->opts.llm.model = job->str[S_MODEL];
    job->opts.llm.api_key = job->str[S_KEY];
    job->opts.system_prompt = job->str[S_SYSTEM];
    job->opts.user_template = job->str[S_USER];
    job->opts.reformat_template = job->str[S_REFORMAT];
    job->opts.fix_template = job->str[S_FIX];
    job->opts.gateway_endpoint = job->str[S_EXECUTOR];
    job->opts.cid = job->str[S_CID];
    job->opts.review_template = opts->review_template ? job->str[S_REVIEW] : NULL;
    job->review = opts->review ? json_deep_copy (opts->review) : NULL;
    job->opts.review = job->review;
    job->rid = rid ? zframe_dup (rid) : NULL;
    job->started = bmq_mono_ms ();
    atomic_init (&job->cancel, false);
    job->actor = zactor_new (s_run, job);
    if (!job->actor) bmq_plan_job_destroy (&job);
    return job;
}

void bmq_plan_job_destroy (bmq_plan_job_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_plan_job_t *job = *self_p;
    atomic_store (&job->cancel, true);
    zactor_destroy (&job->actor);
    bmq_dialogue_result_clear (&job->result);
    zframe_destroy (&job->rid);
    json_decref (job->review);
    if (job->str[S_KEY]) memset (job->str[S_KEY], 0, strlen (job->str[S_KEY]));
    for (int i = 0; i < S_COUNT; i++) free (job->str[i]);
    free (job);
    *self_p = NULL;
}

void bmq_plan_job_cancel (bmq_plan_job_t *self)
{
    atomic_store (&self->cancel, true);
}

zactor_t *bmq_plan_job_actor (bmq_plan_job_t *self)
{
    return self->actor;
}

bool bmq_plan_job_recv (bmq_plan_job_t *self, const bmq_plan_job_handler_t *h)
{
    zmsg_t *msg = zmsg_recv (self->actor);
    if (!msg) return false;
    char *verb = zmsg_popstr (msg);
    bool done = false;
    if (verb && !strcmp (verb, "NOTE")) {
        char *text = zmsg_popstr (msg);
        if (text && h->note) h->note (h->ctx, self, text);
        free (text);
    }
    else if (verb && !strcmp (verb, "AUDIT")) {
        char *kind = zmsg_popstr (msg), *text = zmsg_popstr (msg);
        json_t *data = text ? json_loads (text, 0, NULL) : NULL;
        if (kind && data && h->audit) h->audit (h->ctx, self, kind, data);
        else json_decref (data);
        free (kind);
        free (text);
    }
    else if (verb && !strcmp (verb, "DONE")) done = true;
    free (verb);
    zmsg_destroy (&msg);
    return done;
}

const bmq_dialogue_result_t *bmq_plan_job_result (const bmq_plan_job_t *self) { return &self->result; }
const char *bmq_plan_job_cid (const bmq_plan_job_t *self) { return self->str[S_CID]; }
const char *bmq_plan_job_prompt (const bmq_plan_job_t *self) { return self->str[S_PROMPT]; }
bool bmq_plan_job_reviewing (const bmq_plan_job_t *self) { return self->review != NULL; }
zframe_t *bmq_plan_job_rid (bmq_plan_job_t *self) { return self->rid; }
int64_t bmq_plan_job_age_ms (const bmq_plan_job_t *self) { return bmq_mono_ms () - self->started; }
