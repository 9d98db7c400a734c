/* cli_cancel — Ctrl-C means stop (issue 29), and `blendmq cancel`.
 *
 * bmq_cli_converse_cancellable: a conversation (cli_client.c) during which
 * the first SIGINT sends cancel.request on the request's own story (the
 * gateway stops what it holds; a plan being run is the executor's to stop
 * after its current step, rolled back as any cancel is) and keeps waiting
 * for the story's end; a second SIGINT leaves at once, saying the plan may
 * still be running and how to cancel it. The plan id is taken from the first
 * answer that names one (chat.planned, validate.reply, progress...).
 *
 * `blendmq cancel PLAN_ID | SCRIPT_ID | --all-mine`: cancel.request {plan_id} or
 * {all_mine: true} on a story of its own; the gateway answers cancel.reply
 * {cancelled: [{plan_id, state, kind}]} (kind "script": a live script, named
 * by its script id, interrupted in Blender; an empty list: nothing of that name, or
 * of yours, is in progress). Exit 0 something was cancelled, 1 nothing was
 * in progress, 2 usage or connection error. */
#include "bus.h"
#include "cli.h"
#include "peer.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t s_interrupts;

static void s_on_sigint (int sig)
{
    (void) sig;
    s_interrupts++;
}

typedef struct {
    bmq_cli_handler_fn *handler;
    void               *state;
    const char         *what;               /* "plan", "script" */
    char                plan_id[BMQ_MAX_ID + 1];
    bool                cancel_sent;
} s_cancellable_t;

static int s_handle (const bmq_envelope_t *env, void *arg)
{
    s_cancellable_t *c = arg;
    const char *plan_id = bmq_body_str (env, "plan_id");
    if (!c->plan_id[0] && plan_id && strlen (plan_id) <= BMQ_MAX_ID) snprintf (c->plan_id, sizeof c->plan_id, "%s", plan_id);
    int code = c->handler (env, c->state);
    if (code != BMQ_CLI_CONTINUE && code != 0 && c->cancel_sent) {
        fprintf (stderr, "blendmq: %s %s cancelled\n", c->what, c->plan_id[0] ? c->plan_id : env->cid);
        return 130;
    }
    /* one question, one answer (script apply): the answer is kept for the caller, who says how
     * it ended; 130 tells it that this Ctrl-C's cancel ended it */
    if (code == 0 && c->cancel_sent && !strcmp (bmq_body_str (env, "status") ?: "", "cancelled")) return 130;
    return code;
}

static int s_tick (bmq_peer_t *gw, const char *cid, void *arg)
{
    s_cancellable_t *c = arg;
    if (s_interrupts && !c->cancel_sent) {
        bmq_envelope_t *cancel = bmq_envelope_new (BMQ_MSG_CANCEL_REQUEST, cid, NULL);
        bmq_peer_send (gw, cancel);
        bmq_envelope_destroy (&cancel);
        c->cancel_sent = true;
        if (c->plan_id[0] && !strcmp (c->what, "script"))
            fprintf (stderr, "\nblendmq: cancelling script %s: it is interrupted in Blender and what it did is rolled back"
                             " (Ctrl-C again: leave without waiting)\n", c->plan_id);
        else if (c->plan_id[0])
            fprintf (stderr, "\nblendmq: cancelling %s %s: it stops after its current step and what it did is rolled back"
                             " (Ctrl-C again: leave without waiting)\n", c->what, c->plan_id);
        else
            fprintf (stderr, "\nblendmq: cancelling the request: nothing has run yet (Ctrl-C again: leave without waiting)\n");
        fflush (stderr);
    }
    else if (s_interrupts > 1) {
        if (c->plan_id[0])
            fprintf (stderr, "blendmq: left without waiting: %s %s may still be running; cancel it with `blendmq cancel %s`\n",
                     c->what, c->plan_id, c->plan_id);
        else
            fprintf (stderr, "blendmq: left without waiting: the request may still be running; cancel it with"
                             " `blendmq cancel --all-mine`\n");
        return 130;
    }
    return BMQ_CLI_CONTINUE;
}

int bmq_cli_converse_cancellable (bmq_config_t *cfg, bmq_envelope_t *req, bmq_cli_handler_fn *handler, void *state,
                                  const char *what)
{
    s_cancellable_t c = { .handler = handler, .state = state, .what = what };
    const char *named = bmq_body_str (req, "plan_id");
    if (!named) named = bmq_body_str (req, "script_id");     /* script apply: the gateway names it by its script id */
    if (named && strlen (named) <= BMQ_MAX_ID) snprintf (c.plan_id, sizeof c.plan_id, "%s", named);
    zsys_handler_set (NULL);                /* our handler, not czmq's: the first Ctrl-C is a request, not an exit */
    struct sigaction sa = { .sa_handler = s_on_sigint }, old;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGINT, &sa, &old);
    s_interrupts = 0;
    int code = bmq_cli_converse_ticking (cfg, req, s_handle, s_tick, &c);
    /* once Ctrl-C was pressed the handler stays: a second one that comes after the answer
     * (the cancel was quick) must not kill the process while it says how the plan ended */
    if (!s_interrupts) sigaction (SIGINT, &old, NULL);
    return code;
}

/* ---- blendmq cancel ------------------------------------------------------------- */

static int s_on_cancel_reply (const bmq_envelope_t *env, void *arg)
{
    (void) arg;
    if (env->type == BMQ_MSG_ERROR) {
        fprintf (stderr, "blendmq: %s\n", bmq_body_str (env, "message") ? bmq_body_str (env, "message") : "?");
        return 2;
    }
    if (env->type != BMQ_MSG_CANCEL_REPLY) return BMQ_CLI_CONTINUE;
    json_t *list = json_object_get (env->body, "cancelled");
    if (!json_array_size (list)) return 1;
    size_t i;
    json_t *p;
    json_array_foreach (list, i, p) {
        const char *state = json_string_value (json_object_get (p, "state"));
        const char *id = json_string_value (json_object_get (p, "plan_id")) ?: "?";
        if (!strcmp (json_string_value (json_object_get (p, "kind")) ?: "", "script"))
            printf ("cancelling script %s (running live): it is interrupted in Blender and rolled back\n", id);
        else
            printf ("cancelling plan %s (%s): %s\n", id, state ? state : "?",
                    state && !strcmp (state, "executing") ? "it stops after its current step and is rolled back"
                                                           : "nothing of it has run");
    }
    return 0;
}

int bmq_cli_cancel (const bmq_cli_opts_t *opts, const char *plan_id)
{
    if (!plan_id == !opts->all_mine) {
        fprintf (stderr, "blendmq: cancel needs a plan id or --all-mine (usage: blendmq cancel PLAN_ID | SCRIPT_ID | --all-mine)\n");
        return 2;
    }
    if (plan_id && (!*plan_id || strlen (plan_id) > BMQ_MAX_ID)) {
        fprintf (stderr, "blendmq: '%.80s' is not a plan id\n", plan_id);
        return 2;
    }
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    json_t *body = plan_id ? json_pack ("{s:s}", "plan_id", plan_id) : json_pack ("{s:b}", "all_mine", 1);
    int code = bmq_cli_converse (cfg, bmq_envelope_new (BMQ_MSG_CANCEL_REQUEST, NULL, body), s_on_cancel_reply, NULL);
    bmq_config_destroy (&cfg);
    if (code == 1) {
        if (plan_id) fprintf (stderr, "blendmq: no plan %s is in progress (it ended, or never started)\n", plan_id);
        else fprintf (stderr, "blendmq: none of your plans is in progress\n");
    }
    return code;
}
