/* mcp_confirm — confirm_script over MCP: the executor's listing of the
 * script, an elicitation that shows a person exactly what will run (and its
 * sha256), then script.confirm in the person's name; see mcp_call_internal.h. */
#include "mcp_call_internal.h"
#include "mcp_surface.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what script.reply told, for confirm_script -------------------------------- */

static pthread_mutex_t s_book_lock = PTHREAD_MUTEX_INITIALIZER;
static json_t *s_book;           /* script_id → {sha256, operators, diff}; insertion order */

void bmq_mcp_note_script (const json_t *body)
{
    const char *id = json_string_value (json_object_get (body, "script_id"));
    json_t *verdict = json_object_get (body, "verdict"), *sandbox = json_object_get (body, "sandbox");
    if (!id || (!verdict && !sandbox)) return;
    json_t *entry = json_object ();
    json_t *sha = json_object_get (verdict, "script_sha256"), *ops = json_object_get (verdict, "operator_list");
    json_t *diff = json_object_get (sandbox, "diff");
    if (json_is_string (sha)) json_object_set (entry, "sha256", sha);
    if (json_is_array (ops)) json_object_set (entry, "operators", ops);
    if (json_is_object (diff)) json_object_set (entry, "diff", diff);
    pthread_mutex_lock (&s_book_lock);
    if (!s_book) s_book = json_object ();
    json_t *old = json_object_get (s_book, id);
    if (old) json_object_update (old, entry);        /* validate_only, then the sandbox run: both count */
    else {
        while (json_object_size (s_book) >= BOOK_MAX) {
            void *it = json_object_iter (s_book);
            json_object_del (s_book, json_object_iter_key (it));
        }
        json_object_set (s_book, id, entry);
    }
    pthread_mutex_unlock (&s_book_lock);
    json_decref (entry);
}

static json_t *s_book_get (const char *id)
{
    pthread_mutex_lock (&s_book_lock);
    json_t *e = s_book ? json_deep_copy (json_object_get (s_book, id)) : NULL;
    pthread_mutex_unlock (&s_book_lock);
    return e;
}

/* ---- confirmations a person is asked for (security.mcp_confirm: person) -------------------
 * script_id → {script_id, sha256, requested_by {name, role}, mcp_client, since}: what the page
 * shows under "waiting for a person"; gone once the script is seen applied, or after ELICIT_MS. */

static pthread_mutex_t s_pending_lock = PTHREAD_MUTEX_INITIALIZER;
static json_t *s_pending;

static void s_pending_add (const bmq_mcp_call_t *self)
{
    json_t *e = json_pack ("{s:s, s:s, s:O?, s:s, s:I}", "script_id", self->script_id, "sha256", self->sha256,
                           "requested_by", self->on_behalf_of, "mcp_client", self->client, "since_ms", (json_int_t) bmq_now_ms ());
    pthread_mutex_lock (&s_pending_lock);
    if (!s_pending) s_pending = json_object ();
    while (json_object_size (s_pending) >= BOOK_MAX && !json_object_get (s_pending, self->script_id))
        json_object_del (s_pending, json_object_iter_key (json_object_iter (s_pending)));
    json_object_set_new (s_pending, self->script_id, e);
    pthread_mutex_unlock (&s_pending_lock);
}

static void s_pending_drop (const char *script_id)
{
    pthread_mutex_lock (&s_pending_lock);
    if (s_pending) json_object_del (s_pending, script_id);
    pthread_mutex_unlock (&s_pending_lock);
}

json_t *bmq_mcp_pending_confirmations (void)
{
    json_t *list = json_array ();
    int64_t now = (int64_t) bmq_now_ms ();
    pthread_mutex_lock (&s_pending_lock);
    const char *key;
    json_t *e;
    void *t;
    if (s_pending)
        json_object_foreach_safe (s_pending, t, key, e) {
            if (now - json_integer_value (json_object_get (e, "since_ms")) > ELICIT_MS) json_object_del (s_pending, key);
            else json_array_append (list, e);
        }
    pthread_mutex_unlock (&s_pending_lock);
    return list;
}

/* The listing of the script again: was it applied? */
static void s_poll (bmq_mcp_call_t *self)
{
    json_t *body = json_pack ("{s:s}", "script_id", self->script_id);
    if (self->on_behalf_of) json_object_set (body, "on_behalf_of", self->on_behalf_of);
    bmq_envelope_t *env = bmq_envelope_new (bmq_msg_type_from_name ("script.list"), NULL, body);
    snprintf (env->sender, sizeof env->sender, "mcp");
    snprintf (self->cid, sizeof self->cid, "%s", env->cid);
    bmq_envelope_destroy (&self->next);
    self->next = env;
}

static void s_applied (bmq_mcp_call_t *self, json_t *out)
{
    s_pending_drop (self->script_id);
    char summary[600];
    snprintf (summary, sizeof summary, "applied: a person confirmed script %s (sha256 %.12s…) and it ran in the live scene; "
              "`blendmq audit show` names who and through which channel", self->script_id, self->sha256);
    bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_pack ("{s:s, s:s, s:s}", "script_id", self->script_id, "sha256",
                                                                     self->sha256, "status", "applied"), summary, false), out);
}

bool bmq_mcp_call_tick_confirm (bmq_mcp_call_t *self, int64_t now_ms, json_t *out)
{
    if (now_ms >= self->wait_until) {
        char summary[1024];
        snprintf (summary, sizeof summary, "not applied yet: script %s waits for a person to approve it. " "A person can confirm it on "
                  "the blendmq web page (Scripts; `blendmq web --open`), with `blendmq script apply %s --confirm --sha256 %s`, or "
                  "with Apply to live in the Blender panel. Call confirm_script again later to learn the outcome.",
                  self->script_id, self->script_id, self->sha256);
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_pack ("{s:s, s:s, s:s, s:[s,s,s]}", "script_id", self->script_id,
                             "sha256", self->sha256, "status", "pending", "approve_with", "page", "cli", "panel"), summary, false), out);
        return true;
    }
    if (now_ms >= self->next_poll && !self->next) {
        s_poll (self);
        self->next_poll = now_ms + PERSON_POLL_MS;
        double waited = (double) (now_ms - (self->wait_until - self->wait_ms));
        bmq_mcp_call_progress (self, out, waited, (double) self->wait_ms, "waiting for a person to approve the script");
    }
    return false;
}

/* ---- confirm_script: the executor's listing → elicitation → script.confirm ------------- */

static void s_names (json_t *list, const char *key, char *buf, size_t len)
{
    size_t used = 0, i;
    json_t *v;
    buf[0] = 0;
    json_array_foreach (list, i, v) {
        const char *name = json_is_string (v) ? json_string_value (v) : json_string_value (json_object_get (v, key));
        if (i == 40) { snprintf (buf + used, len - used, ", … %zu more", json_array_size (list) - i); return; }
        int n = snprintf (buf + used, len - used, "%s%s", i ? ", " : "", name ? name : "?");
        if (n < 0 || (size_t) n >= len - used) return;
        used += (size_t) n;
    }
    if (!used) snprintf (buf, len, "none");
}

/* What the person reads before deciding. */
static char *s_elicit_message (bmq_mcp_call_t *self, const json_t *entry)
{
    json_t *known = s_book_get (self->script_id);
    json_t *ops = json_object_get (known, "operators"), *diff = json_object_get (known, "diff");
    char op_text[2048], added[1024], removed[1024], changed[1024];
    if (json_is_array (ops)) s_names (ops, "name", op_text, sizeof op_text);
    else snprintf (op_text, sizeof op_text, "(not known to this gateway: review the script on the blendmq web page)");
    s_names (json_object_get (diff, "added"), "name", added, sizeof added);
    s_names (json_object_get (diff, "removed"), "name", removed, sizeof removed);
    s_names (json_object_get (diff, "changed"), "name", changed, sizeof changed);
    const char *script = json_string_value (json_object_get (entry, "script"));
    size_t slen = script ? strlen (script) : 0;
    char *text = NULL;
    if (asprintf (&text,
                  "An AI assistant (MCP client %s, token %s) asks to apply a script to the LIVE Blender scene.\n\n"
                  "script_id: %s\nsha256: %s\nlines: %lld\n"
                  "Blender operators it calls: %s\n"
                  "Sandbox run on a copy of the scene: %s%s%s%s%s%s%s\n\n"
                  "The script%s:\n%.*s%s\n\n"
                  "Apply it only if this is what you want done.",
                  self->client, self->on_behalf_of ? json_string_value (json_object_get (self->on_behalf_of, "name")) : "-",
                  self->script_id, self->sha256, (long long) json_integer_value (json_object_get (entry, "lines")), op_text,
                  json_is_object (diff) ? "added: " : "(its changes are not known to this gateway)",
                  json_is_object (diff) ? added : "", json_is_object (diff) ? "; removed: " : "",
                  json_is_object (diff) ? removed : "", json_is_object (diff) ? "; changed: " : "",
                  json_is_object (diff) ? changed : "", "",
                  slen > SHOWN_SCRIPT ? " (the beginning)" : "", (int) (slen > SHOWN_SCRIPT ? SHOWN_SCRIPT : slen),
                  script ? script : "", slen > SHOWN_SCRIPT ? "\n…" : "") < 0)
        text = NULL;
    json_decref (known);
    return text;
}

/* The person's question (the sha256, the operators, the sandbox diff, the
 * text): elicitation/create's params. */
static json_t *s_question (const char *message)
{
    return json_pack ("{s:s, s:{s:s, s:{s:{s:s, s:s, s:s, s:b}}, s:[s]}}", "message", message ? message : "apply the script?",
                      "requestedSchema", "type", "object", "properties", "confirm", "type", "boolean", "title", "Apply to the live scene",
                      "description", "Yes: run this exact script (this sha256) in the live Blender scene.", "default", 0,
                      "required", "confirm");
}

/* 2026-07-28: no request of ours on a response stream; the call ends with an
 * input-required result asking the same question, the script's id and sha256
 * signed into its requestState. The client asks its user and calls again. */
static void s_ask_by_result (bmq_mcp_call_t *self, const char *message, json_t *out)
{
    json_t *rounds = json_pack ("[{s:{s:{s:s, s:o}}}]", "inputRequests", "confirm", "method", "elicitation/create", "params", s_question (message));
    json_t *extra = json_pack ("{s:s, s:s}", "script_id", self->script_id, "sha256", self->sha256);
    json_t *none = json_object (), *result = NULL;
    char err[256];
    bmq_mcp_client_caps_t caps = { .elicitation = true };
    if (bmq_mcp_mrtr ("confirm_script", rounds, extra, none, caps, &result, err, sizeof err) != 1)
        result = bmq_mcp_result_error ("%s: %s", self->tool->name, err);
    bmq_mcp_call_log (self, out, 1, "asking the user to confirm script %s (sha256 %.12s…) by an input-required result", self->script_id, self->sha256);
    bmq_mcp_call_finish (self, result, out);
    json_decref (rounds);
    json_decref (extra);
    json_decref (none);
}

int bmq_mcp_call_confirm_resume (bmq_mcp_call_t *self, const json_t *params, json_t *out, bmq_envelope_t **request)
{
    json_t *rounds = json_pack ("[{s:{s:{s:s}}}]", "inputRequests", "confirm", "method", "elicitation/create");
    json_t *step = NULL;
    char err[256];
    bmq_mcp_client_caps_t caps = { .elicitation = true };
    int rc = bmq_mcp_mrtr ("confirm_script", rounds, NULL, params, caps, &step, err, sizeof err);
    json_decref (rounds);
    json_t *extra = json_object_get (step, "extra");
    if (rc == 0 && (strcmp (json_string_value (json_object_get (extra, "script_id")) ? json_string_value (json_object_get (extra, "script_id")) : "", self->script_id)
                    || strcmp (json_string_value (json_object_get (extra, "sha256")) ? json_string_value (json_object_get (extra, "sha256")) : "", self->sha256))) {
        snprintf (err, sizeof err, "requestState was made for another script or sha256 than these arguments name");
        rc = -1;
    }
    if (rc != 0) {
        json_decref (step);
        if (rc > 0) snprintf (err, sizeof err, "inputResponses.confirm (the user's answer to the question) is required with this requestState");
        bmq_mcp_call_finish (self, bmq_mcp_result_error ("%s: nothing was applied: %s", self->tool->name, err), out);
        return -1;
    }
    /* the person's answer, as if it had come back to our elicitation/create */
    json_t *response = json_pack ("{s:O}", "result", json_object_get (json_object_get (step, "answers"), "confirm"));
    self->phase = S_CONFIRM_ASKING;
    bmq_mcp_call_answer (self, response, out, request);
    json_decref (response);
    json_decref (step);
    return 0;
}

bool bmq_mcp_call_feed_confirm (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out)
{
    if ((self->phase == S_CONFIRM_LISTING || self->phase == S_CONFIRM_WAITING) && env->type == bmq_msg_type_from_name ("script.listing")) {
        json_t *entry = json_array_get (json_object_get (env->body, "scripts"), 0);
        const char *sha = json_string_value (json_object_get (entry, "sha256"));
        if (!json_is_object (entry)) {
            bmq_mcp_call_finish (self, bmq_mcp_result_error ("%s: no sandboxed script %s is known (the executor keeps the 64 most recent; "
                                            "submit it again with inject_bpy_script)", self->tool->name, self->script_id), out);
            return true;
        }
        if (!sha || strcasecmp (sha, self->sha256)) {
            bmq_mcp_call_finish (self, bmq_mcp_result_error ("%s: nothing was applied: sha256 %s is not the sha256 of script %s (%s). Confirm "
                                            "exactly the script that was reviewed.", self->tool->name, self->sha256,
                                            self->script_id, sha ? sha : "?"), out);
            return true;
        }
        if (self->by_person && json_is_true (json_object_get (entry, "applied"))) {
            s_applied (self, out);                       /* nothing but a person can have applied it: say so */
            return true;
        }
        if (self->by_person && self->phase == S_CONFIRM_WAITING) return false;   /* not yet: the tick asks again */
        if (json_is_true (json_object_get (entry, "applied")) || !json_is_true (json_object_get (entry, "ok"))) {
            bmq_mcp_call_finish (self, bmq_mcp_result_error ("%s: script %s %s", self->tool->name, self->script_id,
                                            json_is_true (json_object_get (entry, "applied")) ? "was already applied"
                                            : "did not pass its sandbox run, so it cannot be applied"), out);
            return true;
        }
        if (self->by_person) {
            s_pending_add (self);
            bmq_mcp_call_log (self, out, 1, "script %s waits for a person to approve it (web page, CLI or Blender panel)", self->script_id);
            self->phase = S_CONFIRM_WAITING;
            int64_t now = bmq_mono_ms ();
            self->wait_until = now + self->wait_ms;
            self->next_poll = now + PERSON_POLL_MS;
            self->deadline = self->wait_until + 5000;
            return false;
        }
        char *message = s_elicit_message (self, entry);
        if (self->stateless) {                           /* 2026-07-28: the question is the answer, as an input-required result */
            s_ask_by_result (self, message, out);
            free (message);
            return true;
        }
        char eid[BMQ_MAX_ID + 16];
        snprintf (eid, sizeof eid, "elicit-%s", self->cid);
        self->elicit_id = json_string (eid);
        json_array_append_new (out, json_pack (
            "{s:s, s:O, s:s, s:{s:s, s:{s:s, s:{s:{s:s, s:s, s:s, s:b}}, s:[s]}}}", "jsonrpc", "2.0", "id", self->elicit_id,
            "method", "elicitation/create", "params", "message", message ? message : "apply the script?",
            "requestedSchema", "type", "object", "properties", "confirm", "type", "boolean", "title", "Apply to the live scene",
            "description", "Yes: run this exact script (this sha256) in the live Blender scene.", "default", 0,
            "required", "confirm"));
        free (message);
        bmq_mcp_call_log (self, out, 1, "asking the user to confirm script %s (sha256 %.12s…)", self->script_id, self->sha256);
        self->phase = S_CONFIRM_ASKING;
        self->deadline = bmq_mono_ms () + ELICIT_MS;
        return false;
    }
    if (self->phase == S_CONFIRM_APPLYING && env->type == BMQ_MSG_SCRIPT_REPLY) {
        const char *status = bmq_body_str (env, "status");
        bool applied = status && !strcmp (status, "applied");
        char summary[1024];
        snprintf (summary, sizeof summary, "%s: script %s %s%s%s", applied ? "applied" : "not applied", self->script_id,
                  status ? status : "?", bmq_body_str (env, "message") ? ": " : "",
                  bmq_body_str (env, "message") ? bmq_body_str (env, "message") : "");
        bmq_mcp_call_finish (self, bmq_mcp_result_structured (json_deep_copy (env->body), summary, !applied), out);
        return true;
    }
    return false;
}

bool bmq_mcp_call_awaits (const bmq_mcp_call_t *self, const json_t *id)
{
    return self->phase == S_CONFIRM_ASKING && self->elicit_id && id && json_equal (self->elicit_id, (json_t *) id);
}

bool bmq_mcp_call_answer (bmq_mcp_call_t *self, const json_t *response, json_t *out, bmq_envelope_t **request)
{
    *request = NULL;
    if (self->over || self->phase != S_CONFIRM_ASKING) return self->over;
    json_t *result = json_object_get (response, "result");
    if (self->tool->kind == BMQ_TOOL_TEST) {           /* a conformance test tool: the answer is the result */
        char *text = json_dumps (result ? result : json_object_get (response, "error"), BMQ_MCP_JSON_FLAGS);
        json_t *vars = json_pack ("{s:s}", "answer", text ? text : "?");
        json_t *said = bmq_mcp_fill (json_object_get (self->tool->def, "_answer"), vars, NULL);
        bmq_mcp_call_finish (self, result ? json_pack ("{s:[o]}", "content", bmq_mcp_text (json_string_value (said) ? json_string_value (said) : "?"))
                                          : bmq_mcp_result_error ("the client answered an error: %s", text ? text : "?"), out);
        json_decref (said);
        json_decref (vars);
        free (text);
        return true;
    }
    const char *action = json_string_value (json_object_get (result, "action"));
    json_t *confirm = json_object_get (json_object_get (result, "content"), "confirm");
    if (!result || !action || strcmp (action, "accept") || !json_is_true (confirm)) {
        const char *why = json_object_get (response, "error") ? "the client could not ask its user"
                        : !action ? "the client's answer had no action"
                        : !strcmp (action, "accept") ? "the user did not tick confirm"
                        : !strcmp (action, "decline") ? "the user declined" : "the user dismissed the question";
        bmq_mcp_call_log (self, out, 3, "script %s not applied: %s", self->script_id, why);
        bmq_mcp_call_finish (self, bmq_mcp_result_error ("%s: nothing was applied: %s (action %s).", self->tool->name, why, action ? action : "none"), out);
        return true;
    }
    /* The client says its user said yes (security.mcp_confirm: elicitation, opted into). Nobody can
     * tell a person from the client answering itself, so the confirmation goes with the token's OWN
     * role (checked as any: it must be allowed to confirm) and names its channel for the audit. */
    json_t *body = json_pack ("{s:s, s:s, s:s}", "script_id", self->script_id, "sha256", self->sha256, "channel", "mcp-elicitation");
    if (self->on_behalf_of) json_object_set (body, "on_behalf_of", self->on_behalf_of);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_SCRIPT_CONFIRM, NULL, body);
    snprintf (env->sender, sizeof env->sender, "mcp");
    snprintf (self->cid, sizeof self->cid, "%s", env->cid);      /* a new story: the listing's has ended */
    self->phase = S_CONFIRM_APPLYING;
    self->deadline = bmq_mono_ms () + 130000;                     /* the gateway's own timeout, and a little more */
    bmq_mcp_call_log (self, out, 1, "the user confirmed script %s: applying it", self->script_id);
    *request = env;
    return false;
}

