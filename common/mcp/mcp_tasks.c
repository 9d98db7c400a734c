/* mcp_tasks — the Tasks extension (io.modelcontextprotocol/tasks, SEP-2663)
 * for 2026-07-28 clients that declare it: a tools/call the server runs as a
 * task answers a CreateTaskResult at once; tasks/get tells its status (the
 * result or error inlined when it ended, the pending inputRequests while it
 * waits for the client), tasks/update brings the client's answers, and
 * tasks/cancel stops it. A task is its token's: another token does not find
 * it. Bounded (the oldest ended task goes first) and kept ttlMs.
 *
 * What a task does is described by its tool's "_task" entry (the conformance
 * suite's fixtures): after how long it ends (after_ms, or after_arg seconds),
 * with which result or protocol error, and what it asks the client first. */
#include "mcp_surface.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define TASKS_MAX      256
#define TASK_TTL_MS    (15 * 60 * 1000)
#define TASK_POLL_MS   250

typedef struct {
    char     id[33];
    char     owner[64];
    char     status[16];            /* working, input_required, completed, failed, cancelled */
    int64_t  created, updated;      /* wall clock, ms */
    int64_t  due;                   /* monotonic ms: when a working task ends */
    json_t  *spec, *vars;           /* the tool's _task; what fills its result (arguments, answers) */
    json_t  *pending;               /* inputRequests not answered yet */
    json_t  *result, *error;
    char     message[256];          /* statusMessage: the last step the call reported */
    bool     external;              /* a tool call the transport runs: ends when settled */
} s_task_t;

struct bmq_mcp_tasks_t {
    pthread_mutex_t lock;
    s_task_t       *tasks[TASKS_MAX];
    size_t          count;
};

static int64_t s_wall_ms (void)
{
    struct timeval tv;
    gettimeofday (&tv, NULL);
    return (int64_t) tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void s_iso (int64_t ms, char *buf, size_t len)
{
    time_t t = (time_t) (ms / 1000);
    struct tm tm;
    gmtime_r (&t, &tm);
    char date[32];
    strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf (buf, len, "%s.%03dZ", date, (int) (ms % 1000));
}

static void s_task_free (s_task_t **t)
{
    if (!*t) return;
    json_decref ((*t)->spec);
    json_decref ((*t)->vars);
    json_decref ((*t)->pending);
    json_decref ((*t)->result);
    json_decref ((*t)->error);
    free (*t);
    *t = NULL;
}

bmq_mcp_tasks_t *bmq_mcp_tasks_new (void)
{
    bmq_mcp_tasks_t *self = calloc (1, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    return self;
}

void bmq_mcp_tasks_destroy (bmq_mcp_tasks_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_mcp_tasks_t *self = *self_p;
    for (size_t i = 0; i < self->count; i++) s_task_free (&self->tasks[i]);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

static bool s_terminal (const s_task_t *t)
{
    return !strcmp (t->status, "completed") || !strcmp (t->status, "failed") || !strcmp (t->status, "cancelled");
}

static void s_set (s_task_t *t, const char *status)
{
    snprintf (t->status, sizeof t->status, "%s", status);
    t->updated = s_wall_ms ();
}

/* Time passed: a working task whose time came ends (under the lock). */
static void s_advance (s_task_t *t)
{
    if (t->external || strcmp (t->status, "working") || bmq_mono_ms () < t->due) return;
    json_t *error = json_object_get (t->spec, "error");
    if (error) {
        t->error = json_deep_copy (error);
        s_set (t, "failed");
    }
    else {
        t->result = bmq_mcp_fill (json_object_get (t->spec, "result"), t->vars, NULL);
        s_set (t, "completed");
    }
}

static json_t *s_envelope (const s_task_t *t, bool detailed)
{
    char created[40], updated[40];
    s_iso (t->created, created, sizeof created);
    s_iso (t->updated, updated, sizeof updated);
    json_t *r = json_pack ("{s:s, s:s, s:s, s:s, s:i, s:i}", "taskId", t->id, "status", t->status, "createdAt", created,
                           "lastUpdatedAt", updated, "ttlMs", TASK_TTL_MS, "pollIntervalMs", TASK_POLL_MS);
    if (t->message[0]) json_object_set_new (r, "statusMessage", json_string (t->message));
    if (!detailed) return r;
    if (t->result) json_object_set (r, "result", t->result);
    if (t->error) json_object_set (r, "error", t->error);
    if (!strcmp (t->status, "input_required")) json_object_set (r, "inputRequests", t->pending);
    return r;
}

/* Under the lock: the task `id` of `owner`, or NULL. Expired ones go. */
static s_task_t *s_find (bmq_mcp_tasks_t *self, const char *owner, const char *id)
{
    int64_t now = s_wall_ms ();
    for (size_t i = 0; i < self->count; i++) {
        s_task_t *t = self->tasks[i];
        if (now - t->updated > TASK_TTL_MS && s_terminal (t)) {
            s_task_free (&self->tasks[i]);
            self->tasks[i--] = self->tasks[--self->count];
            continue;
        }
        if (id && !strcmp (t->id, id) && !strcmp (t->owner, owner)) return t;
    }
    return NULL;
}

json_t *bmq_mcp_tasks_start (bmq_mcp_tasks_t *self, const char *owner, char *id, size_t idlen)
{
    json_t *spec = json_pack ("{s:s}", "support", "optional");
    json_t *r = bmq_mcp_tasks_create (self, owner, spec, NULL);
    json_decref (spec);
    snprintf (id, idlen, "%s", json_string_value (json_object_get (r, "taskId")));
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->count; i++)
        if (!strcmp (self->tasks[i]->id, id)) self->tasks[i]->external = true;
    pthread_mutex_unlock (&self->lock);
    return r;
}

static s_task_t *s_by_id (bmq_mcp_tasks_t *self, const char *id)
{
    for (size_t i = 0; i < self->count; i++)
        if (!strcmp (self->tasks[i]->id, id)) return self->tasks[i];
    return NULL;
}

void bmq_mcp_tasks_note (bmq_mcp_tasks_t *self, const char *id, const char *message)
{
    pthread_mutex_lock (&self->lock);
    s_task_t *t = s_by_id (self, id);
    if (t && !s_terminal (t) && message) {
        snprintf (t->message, sizeof t->message, "%s", message);
        t->updated = s_wall_ms ();
    }
    pthread_mutex_unlock (&self->lock);
}

void bmq_mcp_tasks_settle (bmq_mcp_tasks_t *self, const char *id, const json_t *response)
{
    pthread_mutex_lock (&self->lock);
    s_task_t *t = s_by_id (self, id);
    if (t && !s_terminal (t)) {                     /* a cancelled task stays cancelled */
        json_t *result = json_object_get (response, "result"), *error = json_object_get (response, "error");
        if (result) { t->result = json_deep_copy (result); s_set (t, "completed"); }
        else {
            t->error = error ? json_deep_copy (error) : json_pack ("{s:i, s:s}", "code", -32603, "message", "the call ended without a result");
            s_set (t, "failed");
        }
    }
    pthread_mutex_unlock (&self->lock);
}

bool bmq_mcp_tasks_cancelled (bmq_mcp_tasks_t *self, const char *id)
{
    pthread_mutex_lock (&self->lock);
    s_task_t *t = s_by_id (self, id);
    bool cancelled = !t || !strcmp (t->status, "cancelled");
    pthread_mutex_unlock (&self->lock);
    return cancelled;
}

json_t *bmq_mcp_tasks_create (bmq_mcp_tasks_t *self, const char *owner, const json_t *spec, const json_t *vars)
{
    s_task_t *t = calloc (1, sizeof *t);
    unsigned char bytes[16];
    randombytes_buf (bytes, sizeof bytes);
    sodium_bin2hex (t->id, sizeof t->id, bytes, sizeof bytes);
    snprintf (t->owner, sizeof t->owner, "%s", owner ? owner : "");
    t->created = s_wall_ms ();
    t->spec = json_deep_copy (spec);
    t->vars = vars ? json_deep_copy (vars) : json_object ();
    int64_t after = json_integer_value (json_object_get (spec, "after_ms"));
    const char *arg = json_string_value (json_object_get (spec, "after_arg"));
    json_t *seconds = arg ? json_object_get (vars, arg) : NULL;
    if (json_is_number (seconds) && json_number_value (seconds) >= 0 && json_number_value (seconds) <= 3600)
        after = (int64_t) (json_number_value (seconds) * 1000);
    t->due = bmq_mono_ms () + after;
    t->pending = json_deep_copy (json_object_get (spec, "ask"));
    s_set (t, json_object_size (t->pending) ? "input_required" : "working");
    if (!t->pending) t->pending = json_object ();
    pthread_mutex_lock (&self->lock);
    s_find (self, "", NULL);                               /* expired ones go */
    if (self->count == TASKS_MAX) {                        /* full: the oldest ended one goes, else the oldest */
        size_t victim = 0;
        for (size_t i = 0; i < self->count; i++)
            if (s_terminal (self->tasks[i])) { victim = i; break; }
        s_task_free (&self->tasks[victim]);
        self->tasks[victim] = self->tasks[--self->count];
    }
    self->tasks[self->count++] = t;
    json_t *r = s_envelope (t, false);
    pthread_mutex_unlock (&self->lock);
    json_object_set_new (r, "resultType", json_string ("task"));
    return r;
}

json_t *bmq_mcp_tasks_request (bmq_mcp_tasks_t *self, const char *owner, const char *method, const json_t *params, int *code,
                               char *err, size_t errlen)
{
    *code = 0;
    const char *id = json_string_value (json_object_get (params, "taskId"));
    pthread_mutex_lock (&self->lock);
    s_task_t *t = s_find (self, owner ? owner : "", id);
    json_t *r = NULL;
    if (!t) {
        *code = -32602;
        snprintf (err, errlen, "Unknown task: %.64s", id ? id : "(no params.taskId)");
    }
    else if (!strcmp (method, "tasks/get")) {
        s_advance (t);
        r = s_envelope (t, true);
    }
    else if (!strcmp (method, "tasks/cancel")) {
        if (!s_terminal (t)) {
            s_set (t, "cancelled");
            json_object_clear (t->pending);
        }
        r = json_object ();                                  /* an ack: the status shows on the next tasks/get */
    }
    else if (!strcmp (method, "tasks/update")) {
        json_t *responses = json_object_get (params, "inputResponses");
        if (!json_is_object (responses)) {
            *code = -32602;
            snprintf (err, errlen, "tasks/update needs inputResponses (an object)");
        }
        else {
            const char *key;
            json_t *v;
            json_object_foreach (responses, key, v)
                if (json_object_get (t->pending, key) && json_is_object (v)) {
                    json_t *one = json_pack ("{s:O}", key, v), *vars = bmq_mcp_mrtr_vars (one);
                    json_object_update (t->vars, vars);
                    json_decref (vars);
                    json_decref (one);
                    json_object_del (t->pending, key);
                }
            if (!strcmp (t->status, "input_required") && !json_object_size (t->pending)) {
                s_set (t, "working");
                t->due = bmq_mono_ms () + json_integer_value (json_object_get (t->spec, "after_input_ms"));
            }
            r = json_object ();
        }
    }
    pthread_mutex_unlock (&self->lock);
    return r;
}
