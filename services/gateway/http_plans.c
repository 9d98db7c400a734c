/* http_plans — bounded book of recent plans and their story. */
#include "http_plans.h"

#include <czmq.h>
#include <pthread.h>

#define MAX_STEPS_KEPT 10000

struct bmq_http_plans_t {
    pthread_mutex_t lock;
    zhashx_t       *records;         /* plan_id → json_t* */
    zlistx_t       *order;           /* plan ids, oldest first */
    size_t          capacity;
};

static void s_json_free (void **item)
{
    json_decref (*item);
    *item = NULL;
}

bmq_http_plans_t *bmq_http_plans_new (size_t capacity)
{
    bmq_http_plans_t *self = calloc (1, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    self->records = zhashx_new ();
    zhashx_set_destructor (self->records, s_json_free);
    self->order = zlistx_new ();
    zlistx_set_duplicator (self->order, (zlistx_duplicator_fn *) strdup);
    zlistx_set_destructor (self->order, (zlistx_destructor_fn *) zstr_free);
    self->capacity = capacity ? capacity : 1;
    return self;
}

void bmq_http_plans_destroy (bmq_http_plans_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_http_plans_t *self = *self_p;
    zhashx_destroy (&self->records);
    zlistx_destroy (&self->order);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

static void s_state (json_t *rec, const char *state)
{
    json_object_set_new (rec, "state", json_string (state));
    json_object_set_new (rec, "updated_ms", json_integer (bmq_now_ms ()));
}

void bmq_http_plans_start (bmq_http_plans_t *self, const char *plan_id, const char *kind, const bmq_envelope_t *env)
{
    if (!plan_id || !*plan_id) return;
    json_t *rec = json_pack ("{s:s, s:s, s:s, s:I, s:[]}", "plan_id", plan_id, "kind", kind, "cid", env->cid,
                             "created_ms", (json_int_t) bmq_now_ms (), "steps");
    json_t *prompt = json_object_get (env->body, "prompt"), *plan = json_object_get (env->body, "plan");
    if (json_is_string (prompt)) json_object_set (rec, "prompt", prompt);
    if (plan) json_object_set (rec, "plan", plan);
    s_state (rec, !strcmp (kind, "chat") ? "planning" : "validating");
    pthread_mutex_lock (&self->lock);
    if (!zhashx_lookup (self->records, plan_id)) {
        while (zlistx_size (self->order) >= self->capacity) {
            char *oldest = zlistx_detach (self->order, NULL);
            zhashx_delete (self->records, oldest);
            free (oldest);
        }
        zlistx_add_end (self->order, (void *) plan_id);
    }
    zhashx_update (self->records, plan_id, rec);
    pthread_mutex_unlock (&self->lock);
}

static void s_progress (json_t *rec, const bmq_envelope_t *env)
{
    const char *event = bmq_body_str (env, "event"), *status = bmq_body_str (env, "status");
    if (!event) return;
    if (!strcmp (event, "step")) {
        json_t *steps = json_object_get (rec, "steps");
        if (json_array_size (steps) >= MAX_STEPS_KEPT) return;
        json_t *s = json_pack ("{s:I, s:s, s:s}", "step", (json_int_t) bmq_body_int (env, "step", 0),
                               "operation", bmq_body_str (env, "operation") ? bmq_body_str (env, "operation") : "?",
                               "status", status ? status : "?");
        const char *keys[] = { "duration_ms", "error", "object", "objects", NULL };
        for (int i = 0; keys[i]; i++)
            if (json_object_get (env->body, keys[i])) json_object_set (s, keys[i], json_object_get (env->body, keys[i]));
        json_array_append_new (steps, s);
        s_state (rec, "executing");
    }
    else if (!strcmp (event, "rollback")) json_object_set (rec, "rollback", env->body);
    else if (!strcmp (event, "plan") && status && !strcmp (status, "started")) s_state (rec, "executing");
}

bool bmq_http_plans_note (bmq_http_plans_t *self, const char *plan_id, const bmq_envelope_t *env, bool *accepted)
{
    bool verdict = false;
    pthread_mutex_lock (&self->lock);
    json_t *rec = plan_id ? zhashx_lookup (self->records, plan_id) : NULL;
    if (rec) switch (env->type) {
    case BMQ_MSG_PLAN_NOTE: {          /* "asking Gemini…": kept, so a page opened later shows them (at most 100) */
        json_t *notes = json_object_get (rec, "planner_notes");
        if (!notes) json_object_set_new (rec, "planner_notes", notes = json_array ());
        if (json_array_size (notes) < 100 && bmq_body_str (env, "text"))
            json_array_append_new (notes, json_string (bmq_body_str (env, "text")));
        break;
    }
    case BMQ_MSG_CHAT_PLANNED:
        json_object_set (rec, "plan", json_object_get (env->body, "plan"));
        if (json_object_get (env->body, "source")) json_object_set (rec, "source", json_object_get (env->body, "source"));
        for (const char *const *k = (const char *const[]) { "parts", "not_understood", "notes", NULL }; *k; k++)
            if (json_is_array (json_object_get (env->body, *k))) json_object_set (rec, *k, json_object_get (env->body, *k));
        s_state (rec, "validating");
        break;
    case BMQ_MSG_VALIDATE_REPLY: {
        *accepted = json_is_true (json_object_get (env->body, "accepted"));
        verdict = true;
        json_t *v = json_pack ("{s:b, s:O}", "accepted", *accepted, "errors",
                               json_object_get (env->body, "errors") ? json_object_get (env->body, "errors") : json_array ());
        if (json_object_get (env->body, "plan_hash")) json_object_set (v, "plan_hash", json_object_get (env->body, "plan_hash"));
        json_object_set_new (rec, "verdict", v);
        const char *kind = json_string_value (json_object_get (rec, "kind"));
        s_state (rec, !*accepted ? "rejected" : kind && !strcmp (kind, "validate") ? "accepted" : "queued");
        break;
    }
    case BMQ_MSG_EXECUTE_ACCEPTED:
        json_object_set_new (rec, "position", json_integer (bmq_body_int (env, "position", 0)));
        s_state (rec, "queued");
        break;
    case BMQ_MSG_PROGRESS:
        s_progress (rec, env);
        break;
    case BMQ_MSG_EXECUTE_RESULT:
        json_object_set (rec, "result", env->body);
        s_state (rec, bmq_body_str (env, "status") ? bmq_body_str (env, "status") : "ended");
        break;
    case BMQ_MSG_ERROR: {
        const char *code = bmq_body_str (env, "code");
        json_object_set_new (rec, "error", json_pack ("{s:s, s:s}", "code", code ? code : "error", "message",
                                                      bmq_body_str (env, "message") ? bmq_body_str (env, "message") : ""));
        s_state (rec, code && !strcmp (code, "timeout") ? "timeout" : code && !strcmp (code, "cancelled") ? "cancelled" : "error");
        break;
    }
    default:
        break;
    }
    pthread_mutex_unlock (&self->lock);
    return verdict;
}

json_t *bmq_http_plans_get (bmq_http_plans_t *self, const char *plan_id)
{
    pthread_mutex_lock (&self->lock);
    json_t *rec = plan_id ? zhashx_lookup (self->records, plan_id) : NULL;
    json_t *copy = rec ? json_deep_copy (rec) : NULL;
    pthread_mutex_unlock (&self->lock);
    return copy;
}
