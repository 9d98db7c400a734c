/* planner_dialogue — the model ↔ planner loop. */
#include "planner_dialogue.h"
#include "codec.h"
#include "planner_eyes.h"
#include "planner_prompts.h"
#include "planner_tools.h"
#include "plan_validator.h"

#include <czmq.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NOTE_MAX      300         /* bytes of model text in one note */
#define S_AUDIT_TEXT    4000        /* bytes of model text in an audit record */
#define S_WORD_NOTES    4           /* notes of model words per turn at most (a plan pasted as prose is not news) */

typedef struct {
    const bmq_dialogue_opts_t *opts;
    const bmq_plan_sink_t     *sink;
    const char                *title;     /* "Gemini" */
    char                       line[S_NOTE_MAX + 8];
    size_t                     line_len;
    int                        word_notes;    /* this turn */
    bmq_eyes_t                 eyes;          /* search_assets, look */
    json_t                    *scene_names;   /* review mode: names a fix plan may target */
} s_dialogue_t;

const char *bmq_dialogue_backend_title (const char *backend)
{
    return backend && !strcmp (backend, "gemini") ? "Gemini" : "the OpenAI-compatible model";
}

void bmq_dialogue_result_clear (bmq_dialogue_result_t *out)
{
    json_decref (out->plan);
    json_decref (out->errors);
    free (out->script);
    memset (out, 0, sizeof *out);
}

/* ---- notes ----------------------------------------------------------------- */

/* Notes end up on a terminal and in JSON: control characters (C0, DEL and
 * C1, which some terminals obey even UTF-8 encoded) become spaces, and bytes
 * that are not valid UTF-8 (a multi-byte character cut by a clip) become '?'. */
static void s_clean (char *t)
{
    unsigned char *s = (unsigned char *) t;
    for (size_t i = 0; s[i]; ) {
        size_t n = s[i] < 0x80 ? 1 : (s[i] >> 5) == 6 ? 2 : (s[i] >> 4) == 14 ? 3 : (s[i] >> 3) == 30 ? 4 : 0;
        bool ok = n > 0;
        for (size_t k = 1; ok && k < n; k++) ok = (s[i + k] & 0xC0) == 0x80;
        if (ok && n == 2 && s[i] < 0xC2) ok = false;                     /* overlong */
        if (!ok) { s[i++] = '?'; continue; }
        if (n == 1 && (s[i] < 0x20 || s[i] == 0x7f)) s[i] = ' ';
        if (n == 2 && s[i] == 0xC2 && s[i + 1] < 0xA0) { s[i] = ' '; s[i + 1] = ' '; }
        i += n;
    }
}

static void s_note (s_dialogue_t *d, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static void s_note (s_dialogue_t *d, const char *fmt, ...)
{
    if (!d->sink || !d->sink->note) return;
    char text[512];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    s_clean (text);
    d->sink->note (d->sink->ctx, text);
}

/* Model words as a note: controls become spaces (they would drive a terminal),
 * runs of blanks shrink to one, long text is clipped at a word. */
static void s_note_words (s_dialogue_t *d, const char *text, size_t len)
{
    char clean[S_NOTE_MAX + 8];
    size_t o = 0;
    bool space = true;
    for (size_t i = 0; i < len && o < S_NOTE_MAX; i++) {
        unsigned char c = (unsigned char) text[i];
        bool blank = c < 0x20 || c == 0x7f || c == ' ';
        if (blank) { if (!space) clean[o++] = ' '; space = true; }
        else { clean[o++] = (char) c; space = false; }
    }
    while (o && clean[o - 1] == ' ') o--;
    while (o && ((unsigned char) clean[o - 1] & 0xC0) == 0x80) o--;     /* a cut UTF-8 sequence */
    if (o && (unsigned char) clean[o - 1] >= 0xC0) o--;
    clean[o] = 0;
    if (!o || d->word_notes >= S_WORD_NOTES) return;
    bool last = ++d->word_notes == S_WORD_NOTES;
    s_note (d, "%s: %s%s", d->opts->backend, clean, len > S_NOTE_MAX || last ? "…" : "");
}

/* Streamed words: a note per line (or per S_NOTE_MAX bytes). */
static void s_on_text (void *ctx, const char *text, size_t len)
{
    s_dialogue_t *d = ctx;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n' || d->line_len >= S_NOTE_MAX) {
            s_note_words (d, d->line, d->line_len);
            d->line_len = 0;
            if (text[i] == '\n') continue;
        }
        d->line[d->line_len++] = text[i];
    }
}

static void s_flush_words (s_dialogue_t *d)
{
    s_note_words (d, d->line, d->line_len);
    d->line_len = 0;
}

static void s_audit (s_dialogue_t *d, const char *kind, json_t *data)
{
    if (d->sink && d->sink->audit && data) d->sink->audit (d->sink->ctx, kind, data);
    else json_decref (data);
}

static bool s_cancelled (void *ctx)
{
    s_dialogue_t *d = ctx;
    return (d->sink && d->sink->cancelled && d->sink->cancelled (d->sink->ctx)) || zsys_interrupted;
}

static void s_retrying (void *ctx, const bmq_llm_http_error_t *err, int retry, int delay_ms)
{
    s_dialogue_t *d = ctx;
    if (err->status)
        s_note (d, "%s answered %d%s%s; retrying in %.1f s (%d of %d)", d->title, err->status, *err->code ? " " : "",
                err->code, delay_ms / 1000.0, retry, d->opts->llm.policy.max_retries);
    else
        s_note (d, "%s: %s (%s); retrying in %.1f s (%d of %d)", d->title, !strcmp (err->code, "timeout")
                ? "no answer in time" : "cannot reach it", err->code, delay_ms / 1000.0, retry, d->opts->llm.policy.max_retries);
    s_audit (d, "llm.retry", json_pack ("{s:s, s:i, s:s, s:s, s:i, s:i}", "backend", d->opts->backend,
                                        "status", err->status, "code", err->code, "message", err->message,
                                        "retry", retry, "delay_ms", delay_ms));
}

static int s_fail (bmq_dialogue_result_t *out, const char *code, bool fallback_ok, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
static int s_fail (bmq_dialogue_result_t *out, const char *code, bool fallback_ok, const char *fmt, ...)
{
    snprintf (out->code, sizeof out->code, "%s", code);
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (out->message, sizeof out->message, fmt, ap);
    va_end (ap);
    out->fallback_ok = fallback_ok;
    s_clean (out->message);
    return -1;
}

/* ---- one turn's calls ------------------------------------------------------ */

static const char *s_str (const json_t *v)
{
    return json_is_string (v) ? json_string_value (v) : "?";
}

typedef enum { S_GO_ON, S_DONE, S_GIVE_UP } s_step_t;

/* A submission that cannot go forward: send it back for fixing, or give up. */
static s_step_t s_rejected (s_dialogue_t *d, bmq_dialogue_result_t *out, json_t *errors, json_t **answer)
{
    const bmq_dialogue_opts_t *o = d->opts;
    json_decref (out->errors);
    out->errors = json_incref (errors);
    if (out->fix_rounds >= o->max_fix_rounds) {
        json_t *first = json_array_get (errors, 0);
        json_int_t step = json_integer_value (json_object_get (first, "step"));
        char where[32] = "the plan";
        if (step >= 0) snprintf (where, sizeof where, "step %lld", (long long) step + 1);
        s_fail (out, "plan_rejected", true, "%s's plan was still rejected after %d fix round%s: %zu problem(s), the first: "
                "%s, %s: %s", d->title, out->fix_rounds, out->fix_rounds == 1 ? "" : "s", json_array_size (errors),
                where, s_str (json_object_get (first, "field")), s_str (json_object_get (first, "reason")));
        return S_GIVE_UP;
    }
    out->fix_rounds++;
    char round[16], rounds[16];
    snprintf (round, sizeof round, "%d", out->fix_rounds);
    snprintf (rounds, sizeof rounds, "%d", o->max_fix_rounds);
    const char *pairs[] = { "round", round, "rounds", rounds, NULL };
    char *hint = bmq_template_fill (o->fix_template ? o->fix_template : "Fix every error and submit again.", pairs);
    s_note (d, "plan rejected (%zu problem%s); asking %s to fix it (round %d of %d)", json_array_size (errors),
            json_array_size (errors) == 1 ? "" : "s", d->title, out->fix_rounds, o->max_fix_rounds);
    *answer = json_pack ("{s:b, s:O, s:s}", "accepted", 0, "errors", errors, "what_to_do", hint ? hint : "");
    free (hint);
    return S_GO_ON;
}

static s_step_t s_submit_plan (s_dialogue_t *d, const bmq_llm_call_t *c, const char *prompt,
                               bmq_dialogue_result_t *out, json_t **answer)
{
    char why[300] = "";
    out->submissions++;
    json_t *plan = bmq_tools_plan_arg (c->args, why, sizeof why);
    if (!plan) {
        json_t *errors = json_pack ("[{s:i, s:s, s:s}]", "step", -1, "field", "plan", "reason", why);
        s_step_t step = s_rejected (d, out, errors, answer);
        json_decref (errors);
        return step;
    }
    json_t *verdict = d->opts->review ? bmq_plan_validate_in_scene (d->opts->palette, plan, d->scene_names)
                                      : bmq_plan_validate (d->opts->palette, plan);
    bool ok = json_is_true (json_object_get (verdict, "accepted"));
    s_audit (d, "plan.check", json_pack ("{s:i, s:b, s:O, s:O}", "submission", out->submissions, "accepted", ok,
                                         "errors", json_object_get (verdict, "errors"), "plan", plan));
    s_step_t step;
    if (ok) {
        out->plan = json_incref (plan);
        bmq_tools_title (c->args, prompt, out->title, sizeof out->title);
        s_note (d, "plan of %zu steps ready", json_array_size (plan));
        step = S_DONE;
    }
    else step = s_rejected (d, out, json_object_get (verdict, "errors"), answer);
    json_decref (verdict);
    json_decref (plan);
    return step;
}

static s_step_t s_submit_script (s_dialogue_t *d, const char *text, const json_t *args, const char *prompt,
                                 bmq_dialogue_result_t *out, json_t **answer)
{
    char why[200] = "";
    out->submissions++;
    char *script = bmq_tools_script_extract (text, why, sizeof why);
    if (!script) {
        json_t *errors = json_pack ("[{s:i, s:s, s:s}]", "step", -1, "field", "script", "reason", why);
        s_step_t step = s_rejected (d, out, errors, answer);
        json_decref (errors);
        return step;
    }
    out->script = script;
    bmq_tools_title (args, prompt, out->title, sizeof out->title);
    s_note (d, "script of %zu bytes ready", strlen (script));
    return S_DONE;
}

static s_step_t s_call (s_dialogue_t *d, bmq_tools_t *tools, const bmq_llm_call_t *c, const char *prompt,
                        bmq_dialogue_result_t *out, json_t **answer)
{
    const bmq_dialogue_opts_t *o = d->opts;
    bool submit = !strcmp (c->name, o->script_mode ? "submit_script" : "submit_plan");
    out->tool_calls++;
    if (!c->args) {
        char msg[400];
        snprintf (msg, sizeof msg, "your call to %.64s could not be read: %s. Call it again with a JSON object of arguments.",
                  c->name, c->args_error);
        if (!submit) { *answer = json_pack ("{s:s}", "error", msg); return S_GO_ON; }
        out->submissions++;
        json_t *errors = json_pack ("[{s:i, s:s, s:s}]", "step", -1, "field", "arguments", "reason", msg);
        s_step_t step = s_rejected (d, out, errors, answer);
        json_decref (errors);
        return step;
    }
    if (!strcmp (c->name, "discover_capabilities")) {
        s_note (d, "asking for capabilities…");
        *answer = bmq_tools_discover (tools, c->args);
        return S_GO_ON;
    }
    if (!strcmp (c->name, "inspect_tool")) {
        const char *tool = json_string_value (json_object_get (c->args, "tool_name"));
        s_note (d, "inspecting %.120s…", tool ? tool : "(nothing)");
        *answer = bmq_tools_inspect (tools, tool);
        return S_GO_ON;
    }
    if (!strcmp (c->name, "place") && !o->script_mode) {
        const char *obj = json_string_value (json_object_get (c->args, "object"));
        const char *rel = json_string_value (json_object_get (c->args, "relation"));
        const char *anchor = json_string_value (json_object_get (c->args, "anchor"));
        s_note (d, "placing %.64s%s%.24s%s%.64s…", obj ? obj : "(nothing)", rel ? " " : "", rel ? rel : "", anchor ? " " : "",
                anchor ? anchor : "");
        *answer = bmq_tools_place (tools, c->args);
        return S_GO_ON;
    }
    if (!strcmp (c->name, "search_assets") && !o->script_mode) {
        const char *q = json_string_value (json_object_get (c->args, "query"));
        s_note (d, "searching %.32s for \"%.80s\"…", s_str (json_object_get (c->args, "source")), q ? q : "");
        *answer = bmq_eyes_search_assets (&d->eyes, c->args);
        return S_GO_ON;
    }
    if (!strcmp (c->name, "look") && !o->script_mode) {
        s_note (d, "looking at the scene…");
        *answer = bmq_eyes_look (&d->eyes, c->args);
        if (json_object_get (*answer, BMQ_LLM_IMAGE_KEY)) out->looks++;
        size_t i;
        json_t *obj;
        json_array_foreach (json_object_get (*answer, "objects"), i, obj)
            if (d->scene_names && json_array_size (d->scene_names) < BMQ_PLAN_MAX_SCENE_OBJECTS)
                json_array_append (d->scene_names, json_object_get (obj, "name"));
        return S_GO_ON;
    }
    if (!strcmp (c->name, "done") && o->review) {
        const char *summary = json_string_value (json_object_get (c->args, "summary"));
        snprintf (out->summary, sizeof out->summary, "%s", summary ? summary : "");
        s_clean (out->summary);
        out->satisfied = true;
        s_note (d, "review: %s is satisfied%s%.300s", d->title, *out->summary ? ": " : "", out->summary);
        return S_DONE;
    }
    if (submit && !o->script_mode) return s_submit_plan (d, c, prompt, out, answer);
    if (submit) return s_submit_script (d, json_string_value (json_object_get (c->args, "script")), c->args, prompt, out, answer);
    char msg[200];
    snprintf (msg, sizeof msg, "there is no function %.64s; use discover_capabilities, inspect_tool%s or %s", c->name,
              o->script_mode ? "" : o->review ? ", place, search_assets, look, done" : ", place, search_assets, look",
              o->script_mode ? "submit_script" : "submit_plan");
    *answer = json_pack ("{s:s}", "error", msg);
    return S_GO_ON;
}

/* ---- the loop ---------------------------------------------------------------- */

/* The length of text's longest prefix of at most max bytes that ends on a character boundary. */
static size_t s_utf8_prefix (const char *text, size_t max)
{
    size_t n = strnlen (text, max);
    if (text[n]) while (n && ((unsigned char) text[n] & 0xC0) == 0x80) n--;
    return n;
}

static json_t *s_turn_record (s_dialogue_t *d, int turn, const bmq_llm_reply_t *r, double ms)
{
    json_t *calls = json_array ();
    for (size_t i = 0; i < r->call_count; i++)
        json_array_append_new (calls, json_pack ("{s:s, s:O?, s:s?}", "name", r->calls[i].name, "args", r->calls[i].args,
                                                 "args_error", r->calls[i].args ? NULL : r->calls[i].args_error));
    json_t *rec = json_pack ("{s:s, s:s, s:i, s:s, s:s#, s:o, s:f, s:O?}", "backend", d->opts->backend,
                             "model", d->opts->llm.model ? d->opts->llm.model : "", "turn", turn,
                             "finish", r->finish_raw, "text", r->text, (int) s_utf8_prefix (r->text, S_AUDIT_TEXT),
                             "calls", calls, "duration_ms", ms, "usage", r->usage);
    if (rec && *r->detail) json_object_set_new (rec, "detail", json_string (r->detail));
    return rec;
}

/* The model answered without calling a function: remind it, or give up. */
static int s_no_call (s_dialogue_t *d, bmq_llm_t *llm, const bmq_llm_reply_t *r, const char *prompt, bmq_dialogue_result_t *out)
{
    const bmq_dialogue_opts_t *o = d->opts;
    if (o->script_mode && r->finish == BMQ_LLM_FINISH_STOP && *r->text) {     /* format-to-bpy: code in words */
        char why[200];
        char *script = bmq_tools_script_extract (r->text, why, sizeof why);
        if (script) {
            out->submissions++;
            out->script = script;
            bmq_tools_title (NULL, prompt, out->title, sizeof out->title);
            s_note (d, "script of %zu bytes ready (taken from %s's words)", strlen (script), d->title);
            return 1;
        }
    }
    if (o->review && r->finish == BMQ_LLM_FINISH_STOP && *r->text) {     /* a plain answer in a review: nothing to fix */
        snprintf (out->summary, sizeof out->summary, "%.*s", (int) s_utf8_prefix (r->text, sizeof out->summary - 1), r->text);
        s_clean (out->summary);
        out->satisfied = true;
        s_note (d, "review: %s found nothing to fix", d->title);
        return 1;
    }
    const char *reason = r->finish == BMQ_LLM_FINISH_MAX_TOKENS ? "your answer was cut off (MAX_TOKENS) before it called a function: keep it shorter"
                       : r->finish == BMQ_LLM_FINISH_MALFORMED ? "your function call was malformed and could not be read"
                       : "you answered in words instead of calling a function";
    if (out->reformats >= o->max_reformats) {
        char said[200] = "";
        if (*r->text) snprintf (said, sizeof said, " It said: \"%.150s\"", r->text);
        return s_fail (out, r->finish == BMQ_LLM_FINISH_MAX_TOKENS ? "truncated" : "no_plan", true,
                       "%s did not submit a %s after %d reminder%s (%s: %s).%s", d->title, o->script_mode ? "script" : "plan",
                       out->reformats, out->reformats == 1 ? "" : "s", *r->finish_raw ? r->finish_raw : "no call",
                       r->finish == BMQ_LLM_FINISH_MAX_TOKENS ? "the answer was cut off"
                       : r->finish == BMQ_LLM_FINISH_MALFORMED ? "malformed function call" : "no function call", said);
    }
    out->reformats++;
    s_note (d, "%s answered without calling a function (%s); reminding it (%d of %d)", d->title,
            *r->finish_raw ? r->finish_raw : "words only", out->reformats, o->max_reformats);
    const char *pairs[] = { "reason", reason, "function", o->script_mode ? "submit_script" : o->review ? "done or submit_plan" : "submit_plan", NULL };
    char *text = bmq_template_fill (o->reformat_template ? o->reformat_template : "{{reason}}. Call {{function}}.", pairs);
    llm->ops->add_user_text (llm, text ? text : reason);
    free (text);
    return 0;
}

/* ---- review mode ---------------------------------------------------------------- */

static void s_declare_done (json_t *decls)
{
    json_array_append_new (decls, json_pack ("{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}}, s:[s]}}",
        "name", "done",
        "description", "Say the result is right as it is: nothing to fix. Call it after look, with what you saw.",
        "parameters", "type", "object", "properties", "summary", "type", "string",
        "description", "One or two sentences: what you saw and why it matches the request",
        "required", "summary"));
}

/* The names the plan that ran gave its objects: a fix plan may target them. */
static json_t *s_plan_names (const json_t *plan)
{
    json_t *names = json_array (), *step;
    size_t i;
    json_array_foreach (plan, i, step) {
        json_t *name = json_object_get (step, "name");
        if (json_is_string (name) && json_array_size (names) < BMQ_PLAN_MAX_SCENE_OBJECTS) json_array_append (names, name);
    }
    return names;
}

#define S_REVIEW_PLAN_MAX (24 * 1024)

/* The first message of a review: the template filled with the prompt, the plan (cut when long) and how it ended. */
static char *s_review_message (const bmq_dialogue_opts_t *o, const char *prompt)
{
    const json_t *rv = o->review, *res = json_object_get (rv, "result");
    char *plan = json_dumps (json_object_get (rv, "plan"), JSON_COMPACT);
    if (plan && strlen (plan) > S_REVIEW_PLAN_MAX) strcpy (plan + S_REVIEW_PLAN_MAX - 32, " … (cut: the plan is longer)");
    const char *status = json_string_value (json_object_get (res, "status")), *error = json_string_value (json_object_get (res, "error"));
    char result[800], round[16], rounds[16];
    snprintf (result, sizeof result, "%s, %lld of %lld steps%s%.600s", status ? status : "unknown",
              (long long) json_integer_value (json_object_get (res, "steps_done")),
              (long long) json_integer_value (json_object_get (res, "steps_total")), error ? ": " : "", error ? error : "");
    snprintf (round, sizeof round, "%lld", (long long) json_integer_value (json_object_get (rv, "round")));
    snprintf (rounds, sizeof rounds, "%lld", (long long) json_integer_value (json_object_get (rv, "rounds")));
    const char *pairs[] = { "prompt", prompt, "plan", plan ? plan : "[]", "result", result, "round", round, "rounds", rounds, NULL };
    char *text = bmq_template_fill (o->review_template ? o->review_template
        : "The request was: {{prompt}}\nThe plan that ran: {{plan}}\nIt ended: {{result}}.\nCall look to see the scene, "
          "then call done if it matches the request, or submit_plan with a plan that fixes what is wrong (review "
          "{{round}} of {{rounds}}).", pairs);
    free (plan);
    return text;
}

int bmq_dialogue_run (const bmq_dialogue_opts_t *opts, const char *prompt, const bmq_plan_sink_t *sink,
                      bmq_dialogue_result_t *out)
{
    memset (out, 0, sizeof *out);
    s_dialogue_t d = { .opts = opts, .sink = sink, .title = bmq_dialogue_backend_title (opts->backend) };
    bmq_llm_config_t cfg = opts->llm;
    json_t *decls = bmq_tools_declarations (opts->palette, opts->script_mode);
    if (decls && !opts->script_mode) bmq_eyes_declare (decls);
    if (decls && opts->review) s_declare_done (decls);
    d.eyes = (bmq_eyes_t) { .gateway = opts->gateway_endpoint, .story = opts->cid,
                            .timeout_ms = opts->look_timeout_ms > 0 ? opts->look_timeout_ms : 30000,
                            .cancelled = s_cancelled, .ctx = &d };
    if (opts->review) d.scene_names = s_plan_names (json_object_get (opts->review, "plan"));
    cfg.system = opts->system_prompt;
    cfg.tools = decls;
    cfg.policy.deadline_ms = bmq_mono_ms () + (opts->timeout_ms > 0 ? opts->timeout_ms : 100000);
    cfg.hooks = (bmq_llm_http_hooks_t) { .cancelled = s_cancelled, .retrying = s_retrying, .ctx = &d };
    cfg.on_text = s_on_text;
    cfg.text_ctx = &d;
    char *first = opts->review ? s_review_message (opts, prompt) : NULL;
    if (!opts->review) {
        const char *pairs[] = { "prompt", prompt, NULL };
        first = bmq_template_fill (opts->user_template ? opts->user_template : "{{prompt}}", pairs);
    }
    bmq_llm_t *llm = first ? bmq_llm_new (opts->backend, &cfg, first) : NULL;
    bmq_tools_t *tools = bmq_tools_new (opts->palette, opts->caps, opts->gateway_endpoint, opts->inspect_timeout_ms, opts->cid,
                                        s_cancelled, &d);
    free (first);
    int rc = -1;
    if (!llm || !tools || !decls) {
        s_fail (out, "config", false, "cannot talk to %s: check the base URL and the model name (\"%s\")", d.title,
                cfg.model ? cfg.model : "");
        goto done;
    }
    if (opts->review) s_note (&d, "reviewing the result: asking %s (%s) to look at it…", d.title, cfg.model);
    else s_note (&d, "asking %s (%s)…", d.title, cfg.model);
    bmq_llm_reply_t reply = { 0 };
    for (int turn = 1; rc && turn <= opts->max_turns; turn++) {
        if (s_cancelled (&d)) { s_fail (out, "cancelled", false, "planning was cancelled"); break; }
        out->turns = turn;
        d.word_notes = 0;
        bmq_llm_http_error_t err;
        double t0 = bmq_mono_us ();
        int trc = llm->ops->turn (llm, &reply, &err);
        s_flush_words (&d);
        if (trc) {
            s_audit (&d, "llm.error", json_pack ("{s:s, s:i, s:i, s:s, s:s, s:i}", "backend", opts->backend, "turn", turn,
                                                 "status", err.status, "code", err.code, "message", err.message,
                                                 "attempts", err.attempts));
            if (!strcmp (err.code, "cancelled")) s_fail (out, "cancelled", false, "planning was cancelled");
            else s_fail (out, "llm_error", true, "%s", err.message);
            break;
        }
        s_audit (&d, "llm.turn", s_turn_record (&d, turn, &reply, (bmq_mono_us () - t0) / 1000.0));
        if (!reply.streamed && *reply.text) s_note_words (&d, reply.text, strlen (reply.text));
        if (reply.finish == BMQ_LLM_FINISH_BLOCKED) {
            s_fail (out, "blocked", false, "%s refused to answer (%s%s%s). Try rephrasing the prompt.", d.title,
                    reply.finish_raw, *reply.detail ? ": " : "", reply.detail);
            break;
        }
        if (reply.call_count == 0) {
            int nc = s_no_call (&d, llm, &reply, prompt, out);
            if (nc < 0) break;
            if (nc > 0) { rc = 0; break; }
            continue;
        }
        json_t **answers = calloc (reply.call_count, sizeof *answers);
        s_step_t step = S_GO_ON;
        for (size_t i = 0; answers && i < reply.call_count && step == S_GO_ON; i++)
            step = s_call (&d, tools, &reply.calls[i], prompt, out, &answers[i]);
        if (step == S_GO_ON && answers) {
            for (size_t i = 0; i < reply.call_count; i++)
                if (!answers[i]) answers[i] = json_pack ("{s:s}", "error", "not answered");
            llm->ops->add_results (llm, &reply, answers);
        }
        for (size_t i = 0; answers && i < reply.call_count; i++) json_decref (answers[i]);
        free (answers);
        if (step == S_DONE) rc = 0;
        else if (step == S_GIVE_UP) break;
    }
    if (rc && !*out->code)
        s_fail (out, "turn_limit", true, "%s did not submit an acceptable %s within %d turns", d.title,
                opts->script_mode ? "script" : "plan", opts->max_turns);
    bmq_llm_reply_clear (&reply);
done:
    bmq_tools_destroy (&tools);
    bmq_llm_destroy (&llm);
    json_decref (decls);
    json_decref (d.scene_names);
    return rc;
}
