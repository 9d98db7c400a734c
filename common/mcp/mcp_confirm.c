/* mcp_confirm — confirm_script over MCP: the executor's listing of the
 * script, an elicitation that shows a person exactly what will run (and its
 * sha256), then script.confirm in the person's name; see mcp_call_internal.h. */
#include "mcp_call_internal.h"

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

bool bmq_mcp_call_feed_confirm (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out)
{
    if (self->phase == S_CONFIRM_LISTING && env->type == bmq_msg_type_from_name ("script.listing")) {
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
        if (json_is_true (json_object_get (entry, "applied")) || !json_is_true (json_object_get (entry, "ok"))) {
            bmq_mcp_call_finish (self, bmq_mcp_result_error ("%s: script %s %s", self->tool->name, self->script_id,
                                            json_is_true (json_object_get (entry, "applied")) ? "was already applied"
                                            : "did not pass its sandbox run, so it cannot be applied"), out);
            return true;
        }
        char *message = s_elicit_message (self, entry);
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
    /* A person said yes through this MCP client: the gateway vouches for that, and says so. */
    json_t *body = json_pack ("{s:s, s:s}", "script_id", self->script_id, "sha256", self->sha256);
    json_t *who = self->on_behalf_of ? json_deep_copy (self->on_behalf_of) : json_object ();
    json_object_set_new (who, "token_role", json_incref (json_object_get (who, "role") ? json_object_get (who, "role") : json_null ()));
    json_object_set_new (who, "role", json_string ("reviewer"));
    json_object_set_new (who, "confirmed_by", json_string ("person"));
    json_object_set_new (who, "via", json_string ("mcp-elicitation"));
    json_object_set_new (who, "mcp_client", json_string (self->client));
    json_object_set_new (body, "on_behalf_of", who);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_SCRIPT_CONFIRM, NULL, body);
    snprintf (env->sender, sizeof env->sender, "mcp");
    snprintf (self->cid, sizeof self->cid, "%s", env->cid);      /* a new story: the listing's has ended */
    self->phase = S_CONFIRM_APPLYING;
    self->deadline = bmq_mono_ms () + 130000;                     /* the gateway's own timeout, and a little more */
    bmq_mcp_call_log (self, out, 1, "the user confirmed script %s: applying it", self->script_id);
    *request = env;
    return false;
}

