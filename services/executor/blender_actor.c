/* blender_actor — connection owner thread; see blender_actor.h. */
#include "blender_actor.h"
#include "blender_link.h"
#include "codec.h"
#include "log.h"

#include <sodium.h>

typedef struct {
    bmq_blender_actor_args_t args;
    bmq_blender_link_t *link;
    zsock_t *pipe;
    bool     connected;
    bool     hung;           /* the last failure was silence (STATE "hung"), not a refusal */
    char     where[300];     /* "unix:PATH" or "host:port", for messages */
    char     last_err[256];  /* the connect failure last logged, and when */
    int64_t  last_err_at;
    int      backoff_ms;
    int64_t  next_attempt;
    int64_t  last_ping;
    int64_t  rev;            /* the add-on's scene revision, as its last reply said (-1: unknown) */
    bool     names_dirty;    /* fetch scene_names when the pipe is quiet (connect, rev moved) */
} s_actor_t;

static void s_state (s_actor_t *self, bool connected, const char *detail)
{
    bool hung = !connected && bmq_blender_link_timed_out (self->link);
    if (self->connected == connected && self->hung == hung) return;
    self->connected = connected;
    self->hung = hung;
    zstr_sendx (self->pipe, "STATE", connected ? "connected" : hung ? "hung" : "disconnected", detail,
                connected ? bmq_blender_link_blender_version (self->link) : "", NULL);     /* + its version */
}

static void s_lost (s_actor_t *self, const char *why);

static int s_command_timeout (const s_actor_t *self)
{
    return self->args.command_timeout_ms > 0 ? self->args.command_timeout_ms : 30000;
}

/* A reply's rev moved: the scene's names may have changed. */
static void s_note_rev (s_actor_t *self, const json_t *reply)
{
    json_t *rev = json_object_get (reply, "rev");
    if (!json_is_integer (rev) || json_integer_value (rev) == self->rev) return;
    self->rev = json_integer_value (rev);
    self->names_dirty = true;
}

/* "NAMES" names_json to main, when they may have changed and nothing waits on
 * the pipe (a queued command goes first; the names come at the next quiet
 * moment). */
static void s_fetch_names (s_actor_t *self)
{
    if (!self->names_dirty || !bmq_blender_link_connected (self->link)) return;
    if (zsock_events (self->pipe) & ZMQ_POLLIN) return;
    json_t *reply = NULL;
    char err[256] = "";
    int status = bmq_blender_link_call (self->link, "scene_names", NULL, s_command_timeout (self), &reply, NULL, NULL,
                                        err, sizeof err);
    if (status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"))) {
        self->names_dirty = false;
        char *text = json_dumps (json_object_get (reply, "result"), JSON_COMPACT);
        if (text) zstr_sendx (self->pipe, "NAMES", text, NULL);
        free (text);
    }
    else if (status == BMQ_LINK_OK)
        self->names_dirty = false;      /* an add-on without scene_names: do not ask again and again */
    json_decref (reply);
    if (status == BMQ_LINK_DOWN || status == BMQ_LINK_PROTOCOL) s_lost (self, err);
}

/* Right after a hello that reported interrupted plans: a plan the add-on still
 * holds open is rolled back before any other command; then main hears of it
 * all ("HELLO"). false when the link was lost on the way. */
static bool s_hello (s_actor_t *self)
{
    const json_t *hello = bmq_blender_link_hello_report (self->link);
    if (!hello) return true;
    json_t *report = json_deep_copy (hello);
    json_t *open = json_object_get (report, "open_plan");
    bool up = true;
    if (open) {
        json_t *args = json_pack ("{s:O}", "plan_id", json_object_get (open, "plan_id")), *reply = NULL;
        char err[512] = "";
        int status = bmq_blender_link_call (self->link, "plan_rollback", args, s_command_timeout (self), &reply, NULL, NULL,
                                            err, sizeof err);
        json_decref (args);
        json_t *result = json_object_get (reply, "result");
        const char *why = status == BMQ_LINK_OK ? json_string_value (json_object_get (reply, "error")) : err;
        if (status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok")) && json_is_object (result)) {
            json_t *rb = json_pack ("{s:s}", "status", "rolled back");
            const char *lists[] = { "removed", "restored" }, *counts[] = { "removed_count", "restored_count" };
            for (int i = 0; i < 2; i++) {       /* the shape of the add-on's own reports */
                json_t *names = json_object_get (result, lists[i]);
                json_object_set_new (rb, lists[i], json_is_array (names) ? json_incref (names) : json_array ());
                json_object_set_new (rb, counts[i], json_integer ((json_int_t) json_array_size (json_object_get (rb, lists[i]))));
            }
            json_object_set_new (open, "rollback", rb);
        }
        else
            json_object_set_new (open, "rollback", json_pack ("{s:s, s:s}", "status", "rollback failed",
                                                              "error", why && *why ? why : "no answer"));
        bmq_warn ("Blender held plan %s open: %s", json_string_value (json_object_get (open, "plan_id")),
                  json_string_value (json_object_get (json_object_get (open, "rollback"), "status")));
        json_decref (reply);
        if (status == BMQ_LINK_DOWN || status == BMQ_LINK_PROTOCOL) { s_lost (self, err); up = false; }
    }
    char *text = json_dumps (report, JSON_COMPACT);
    if (text) zstr_sendx (self->pipe, "HELLO", text, NULL);
    free (text);
    json_decref (report);
    return up;
}

static bool s_try_connect (s_actor_t *self)
{
    char err[256];
    if (bmq_blender_link_connected (self->link)) return true;
    if (bmq_blender_link_connect (self->link, self->args.connect_timeout_ms, err, sizeof err) == 0) {
        self->backoff_ms = 250;
        self->last_ping = bmq_mono_ms ();
        self->last_err[0] = 0;
        self->names_dirty = true;       /* a new Blender, or one that changed meanwhile */
        bmq_info ("connected to Blender at %s", self->where);
        s_state (self, true, "");
        return s_hello (self);
    }
    self->next_attempt = bmq_mono_ms () + self->backoff_ms;
    /* say why, once per reason and at least every 10 s while it lasts (issue 24:
     * a slot held by someone else was silent) */
    if (strcmp (err, self->last_err) || bmq_mono_ms () - self->last_err_at >= 10000) {
        bmq_warn ("cannot connect to Blender at %s: %s", self->where, err);
        snprintf (self->last_err, sizeof self->last_err, "%s", err);
        self->last_err_at = bmq_mono_ms ();
    }
    if (self->backoff_ms < self->args.reconnect_max_ms) self->backoff_ms *= 2;
    if (self->backoff_ms > self->args.reconnect_max_ms) self->backoff_ms = self->args.reconnect_max_ms;
    s_state (self, false, err);
    return false;
}

static void s_lost (s_actor_t *self, const char *why)
{
    bmq_blender_link_close (self->link);
    bmq_warn ("lost Blender at %s: %s", self->where, why);
    self->backoff_ms = 250;
    self->next_attempt = bmq_mono_ms ();
    s_state (self, false, why);
}

typedef struct {
    s_actor_t  *self;
    const char *job;
    json_t     *batch;      /* progress frames not yet handed to main */
} s_stream_ctx_t;

/* Progress goes to main in batches, one per burst of frames (a message and a
 * wake-up per step cost the executor more than many steps cost Blender). */
static void s_on_quiet (void *arg)
{
    s_stream_ctx_t *ctx = arg;
    if (!json_array_size (ctx->batch)) return;
    char *text = json_dumps (ctx->batch, JSON_COMPACT);
    if (text) zstr_sendx (ctx->self->pipe, "PROGRESS", ctx->job, text, NULL);
    free (text);
    json_array_clear (ctx->batch);
}

static void s_on_progress (void *arg, const json_t *progress)
{
    s_stream_ctx_t *ctx = arg;
    json_array_append (ctx->batch, (json_t *) progress);
    if (json_array_size (ctx->batch) >= 64) s_on_quiet (ctx);
}

static bool s_cancelled (void *arg)
{
    s_stream_ctx_t *ctx = arg;
    return ctx->self->args.cancel && atomic_load (ctx->self->args.cancel);
}

/* "CALL" job cmd args timeout, or "STREAM" job cmd args timeout plan_id (a
 * run_plan: progress goes to main as "PROGRESS" job progress_json meanwhile). */
static void s_call (s_actor_t *self, zmsg_t *msg, bool streamed)
{
    char *job = zmsg_popstr (msg), *cmd = zmsg_popstr (msg), *args_text = zmsg_popstr (msg),
         *timeout = zmsg_popstr (msg), *plan_id = streamed ? zmsg_popstr (msg) : NULL;
    zframe_t *req_blob = streamed ? NULL : zmsg_pop (msg);     /* CALL's optional request blob */
    char err[512] = "";
    json_t *reply = NULL;
    unsigned char *blob = NULL;
    size_t blob_len = 0;
    int status = BMQ_LINK_DOWN;
    double t0 = bmq_mono_us ();
    if (!s_try_connect (self))
        snprintf (err, sizeof err, "Blender is not connected (%s)", self->where);
    else {
        json_t *args = args_text && *args_text ? json_loads (args_text, 0, NULL) : NULL;
        s_stream_ctx_t ctx = { self, job ? job : "", json_array () };
        bmq_link_stream_t stream = { .on_progress = s_on_progress, .on_quiet = s_on_quiet, .cancel = s_cancelled,
                                     .cancel_plan_id = plan_id, .ctx = &ctx };
        if (streamed)
            status = bmq_blender_link_call_stream (self->link, cmd ? cmd : "", args, timeout ? atoi (timeout) : 30000,
                                                  &stream, &reply, err, sizeof err);
        else
            status = bmq_blender_link_call_blob (self->link, cmd ? cmd : "", args,
                                                 req_blob ? zframe_data (req_blob) : NULL, req_blob ? zframe_size (req_blob) : 0,
                                                 timeout ? atoi (timeout) : 30000, &reply, &blob, &blob_len, err, sizeof err);
        s_on_quiet (&ctx);              /* what came before the answer goes first */
        json_decref (ctx.batch);
        json_decref (args);
        if (status == BMQ_LINK_DOWN || status == BMQ_LINK_PROTOCOL) s_lost (self, err);
        else self->last_ping = bmq_mono_ms ();
        if (status == BMQ_LINK_OK) s_note_rev (self, reply);
    }
    char elapsed[32], code[8];
    snprintf (elapsed, sizeof elapsed, "%.1f", bmq_mono_us () - t0);
    snprintf (code, sizeof code, "%d", status);
    char *reply_text = reply ? json_dumps (reply, JSON_COMPACT) : NULL;
    zmsg_t *out = zmsg_new ();
    zmsg_addstr (out, "RESULT");
    zmsg_addstr (out, job ? job : "");
    zmsg_addstr (out, code);
    zmsg_addstr (out, reply_text ? reply_text : "");
    zmsg_addmem (out, blob, blob_len);
    zmsg_addstr (out, err);
    zmsg_addstr (out, elapsed);
    zmsg_send (&out, self->pipe);
    free (reply_text);
    free (blob);
    json_decref (reply);
    free (job); free (cmd); free (args_text); free (timeout); free (plan_id);
    zframe_destroy (&req_blob);
    s_fetch_names (self);
}

/* "ACK" ids_json: main has recorded these interrupted-plan reports. */
static void s_ack (s_actor_t *self, zmsg_t *msg)
{
    char *text = zmsg_popstr (msg);
    json_t *ids = text ? json_loads (text, 0, NULL) : NULL;
    free (text);
    if (json_is_array (ids) && json_array_size (ids) && bmq_blender_link_connected (self->link)) {
        json_t *args = json_pack ("{s:O}", "ids", ids), *reply = NULL;
        char err[512] = "";
        int status = bmq_blender_link_call (self->link, "interrupted_ack", args, s_command_timeout (self), &reply, NULL, NULL,
                                            err, sizeof err);
        if (status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok")))
            bmq_info ("Blender forgot %zu interrupted-plan report(s) the audit trail now holds", json_array_size (ids));
        else
            bmq_warn ("interrupted_ack failed (%s): the reports come again at the next hello",
                      status == BMQ_LINK_OK ? json_string_value (json_object_get (reply, "error")) : err);
        json_decref (args);
        json_decref (reply);
        if (status == BMQ_LINK_DOWN || status == BMQ_LINK_PROTOCOL) s_lost (self, err);
        else self->last_ping = bmq_mono_ms ();
    }
    json_decref (ids);
}

static void s_idle (s_actor_t *self)
{
    int64_t now = bmq_mono_ms ();
    if (!bmq_blender_link_connected (self->link)) {
        if (now >= self->next_attempt) s_try_connect (self);
        return;
    }
    s_fetch_names (self);           /* not fetched after a command (the pipe was busy), or at connect */
    if (now - self->last_ping < self->args.interval_ms) return;
    json_t *reply = NULL;
    char err[256];
    int status = bmq_blender_link_call (self->link, "ping", NULL, self->args.interval_ms, &reply, NULL, NULL,
                                        err, sizeof err);
    if (status == BMQ_LINK_OK) s_note_rev (self, reply);       /* a person changed the scene in a GUI Blender */
    json_decref (reply);
    self->last_ping = bmq_mono_ms ();
    if (status == BMQ_LINK_OK) zstr_send (self->pipe, "ALIVE");     /* main times the heartbeat (busy) */
    if (status == BMQ_LINK_TIMEOUT) {
        /* silence, not a refusal: its main thread is busy (a call the executor gave up on) */
        bmq_blender_link_close (self->link);
        bmq_warn ("Blender at %s did not answer a ping within %d ms: busy or hung", self->where,
                  self->args.interval_ms);
        self->backoff_ms = 250;
        self->next_attempt = bmq_mono_ms ();
        self->connected = false;
        self->hung = true;
        zstr_sendx (self->pipe, "STATE", "hung", "ping timed out", NULL);
    }
    else if (status != BMQ_LINK_OK) s_lost (self, err);
    else s_fetch_names (self);
}

static void s_actor (zsock_t *pipe, void *arg)
{
    s_actor_t self = { .args = *(bmq_blender_actor_args_t *) arg, .pipe = pipe, .backoff_ms = 250, .rev = -1 };
    free (arg);
    if (!strncmp (self.args.host, "unix:", 5)) snprintf (self.where, sizeof self.where, "%s", self.args.host);
    else snprintf (self.where, sizeof self.where, "%s:%d", self.args.host, self.args.port);
    self.link = bmq_blender_link_new (self.args.host, self.args.port, self.args.token);
    bmq_blender_link_allow_plain_remote (self.link, self.args.plain_remote);
    sodium_memzero (self.args.token, sizeof self.args.token);     /* the link holds its own copy */
    char perr[512];
    if (!*self.args.palette)
        bmq_warn ("no palette file given: the add-on will refuse every run_step");
    else if (bmq_blender_link_load_palette (self.link, self.args.palette, perr, sizeof perr))
        bmq_error ("%s; the add-on will refuse every run_step", perr);
    zsock_signal (pipe, 0);
    s_try_connect (&self);       /* the owner starts from "disconnected" */
    while (true) {
        int wait = self.args.interval_ms / 4 > 0 ? self.args.interval_ms / 4 : 50;
        zpoller_t *poller = zpoller_new (pipe, NULL);
        void *which = zpoller_wait (poller, wait);
        bool terminated = zpoller_terminated (poller);
        zpoller_destroy (&poller);
        if (which == pipe) {
            zmsg_t *msg = zmsg_recv (pipe);
            if (!msg) break;
            char *command = zmsg_popstr (msg);
            bool term = command && !strcmp (command, "$TERM");
            if (command && !strcmp (command, "CALL")) s_call (&self, msg, false);
            else if (command && !strcmp (command, "STREAM")) s_call (&self, msg, true);
            else if (command && !strcmp (command, "ACK")) s_ack (&self, msg);
            free (command);
            zmsg_destroy (&msg);
            if (term) break;
        }
        else if (terminated) break;
        else s_idle (&self);
    }
    bmq_blender_link_destroy (&self.link);
}

zactor_t *bmq_blender_actor_new (const bmq_blender_actor_args_t *args)
{
    bmq_blender_actor_args_t *copy = malloc (sizeof *copy);
    *copy = *args;
    return zactor_new (s_actor, copy);
}
