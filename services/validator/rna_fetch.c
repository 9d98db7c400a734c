/* rna_fetch — RNA of the palette's operators from the executor; see rna_fetch.h. */
#include "rna_fetch.h"
#include "bus.h"
#include "log.h"

struct bmq_rna_fetch_t {
    char                *endpoint;
    bmq_rna_fetch_opts_t opts;
    json_t              *pending;       /* operation → true, until answered */
    json_t              *result;        /* operation → RNA | null */
    zsock_t             *sock;          /* the current round's, or NULL */
    zhashx_t            *asked;         /* cid → operation (this round) */
    bool                 probing;       /* only the probe is out */
    int                  rounds, backoff;
    int64_t              due;           /* round deadline, or when the next round starts */
    bmq_rna_state_t      state;
    char                 detail[256];
};

static void s_free_str (void **item) { free (*item); *item = NULL; }

bmq_rna_fetch_t *bmq_rna_fetch_new (const char *endpoint, const json_t *operations, const bmq_rna_fetch_opts_t *opts)
{
    if (!endpoint || !*endpoint || !json_array_size (operations)) return NULL;
    bmq_rna_fetch_t *self = calloc (1, sizeof *self);
    self->endpoint = strdup (endpoint);
    self->opts = (bmq_rna_fetch_opts_t) { 10000, 500, 8000, 40 };
    if (opts) {
        if (opts->round_ms > 0) self->opts.round_ms = opts->round_ms;
        if (opts->backoff_ms > 0) self->opts.backoff_ms = opts->backoff_ms;
        if (opts->backoff_max_ms > 0) self->opts.backoff_max_ms = opts->backoff_max_ms;
        if (opts->max_rounds > 0) self->opts.max_rounds = opts->max_rounds;
    }
    self->pending = json_object ();
    self->result = json_object ();
    size_t i;
    json_t *op;
    json_array_foreach (operations, i, op)
        if (json_is_string (op)) json_object_set_new (self->pending, json_string_value (op), json_true ());
    self->asked = zhashx_new ();
    zhashx_set_destructor (self->asked, s_free_str);
    self->backoff = self->opts.backoff_ms;
    self->due = bmq_mono_ms ();       /* first round at once */
    return self;
}

void bmq_rna_fetch_destroy (bmq_rna_fetch_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_rna_fetch_t *self = *self_p;
    zsock_destroy (&self->sock);
    zhashx_destroy (&self->asked);
    json_decref (self->pending);
    json_decref (self->result);
    free (self->endpoint);
    free (self);
    *self_p = NULL;
}

static void s_ask (bmq_rna_fetch_t *self, const char *op)
{
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_INSPECT_REQUEST, NULL, json_pack ("{s:s}", "tool_name", op));
    zhashx_insert (self->asked, req->cid, strdup (op));
    bmq_bus_send (self->sock, NULL, req);
    bmq_envelope_destroy (&req);
}

static bool s_asked (bmq_rna_fetch_t *self, const char *op)
{
    for (const char *o = zhashx_first (self->asked); o; o = zhashx_next (self->asked))
        if (!strcmp (o, op)) return true;
    return false;
}

static void s_end_round (bmq_rna_fetch_t *self)
{
    zsock_destroy (&self->sock);
    zhashx_purge (self->asked);
    if (!json_object_size (self->pending)) { self->state = BMQ_RNA_DONE; return; }
    if (self->rounds >= self->opts.max_rounds) {
        self->state = BMQ_RNA_GAVE_UP;
        return;
    }
    self->due = bmq_mono_ms () + self->backoff;
    bmq_debug ("RNA fetch round %d ended (%s); next in %d ms", self->rounds, self->detail, self->backoff);
    self->backoff = self->backoff * 2 > self->opts.backoff_max_ms ? self->opts.backoff_max_ms : self->backoff * 2;
}

static void s_start_round (bmq_rna_fetch_t *self)
{
    self->rounds++;
    self->sock = bmq_bus_connect (ZMQ_DEALER, self->endpoint, "executor");
    if (!self->sock) { snprintf (self->detail, sizeof self->detail, "cannot connect to %s", self->endpoint); s_end_round (self); return; }
    self->probing = true;
    self->due = bmq_mono_ms () + self->opts.round_ms;
    void *it = json_object_iter (self->pending);
    s_ask (self, json_object_iter_key (it));
}

void bmq_rna_fetch_on_message (bmq_rna_fetch_t *self)
{
    if (!self->sock) return;
    bmq_envelope_t *env = bmq_bus_recv (self->sock, NULL);
    char *op = env ? zhashx_lookup (self->asked, env->cid) : NULL;
    if (!op) { bmq_envelope_destroy (&env); return; }              /* not ours, or stale */
    const char *code = env->type == BMQ_MSG_ERROR ? bmq_body_str (env, "code") : NULL;
    if (env->type == BMQ_MSG_INSPECT_REPLY && json_is_object (json_object_get (env->body, "tool")))
        json_object_set (self->result, op, json_object_get (env->body, "tool"));
    else if (code && !strcmp (code, "unknown_tool"))
        json_object_set_new (self->result, op, json_null ());
    else {                          /* executor or Blender not ready: try again later */
        snprintf (self->detail, sizeof self->detail, "%s: %s", code ? code : bmq_msg_type_name (env->type),
                  bmq_body_str (env, "message") ? bmq_body_str (env, "message") : "");
        bmq_envelope_destroy (&env);
        s_end_round (self);
        return;
    }
    json_object_del (self->pending, op);
    zhashx_delete (self->asked, env->cid);
    bmq_envelope_destroy (&env);
    if (self->probing) {            /* Blender answers: ask for the rest at once */
        self->probing = false;
        const char *name;
        json_t *v;
        json_object_foreach (self->pending, name, v)
            if (!s_asked (self, name)) s_ask (self, name);
    }
    if (!json_object_size (self->pending)) s_end_round (self);
}

void bmq_rna_fetch_tick (bmq_rna_fetch_t *self)
{
    if (self->state != BMQ_RNA_FETCHING || bmq_mono_ms () < self->due) return;
    if (self->sock) {
        snprintf (self->detail, sizeof self->detail, "no answer from %s within %d ms", self->endpoint, self->opts.round_ms);
        s_end_round (self);
    }
    else s_start_round (self);
}

int64_t bmq_rna_fetch_due (const bmq_rna_fetch_t *self)
{
    return self->state == BMQ_RNA_FETCHING ? self->due : INT64_MAX;
}

zsock_t *bmq_rna_fetch_sock (bmq_rna_fetch_t *self) { return self->sock; }
bmq_rna_state_t bmq_rna_fetch_state (const bmq_rna_fetch_t *self) { return self->state; }
const json_t *bmq_rna_fetch_result (const bmq_rna_fetch_t *self) { return self->result; }
const char *bmq_rna_fetch_detail (const bmq_rna_fetch_t *self) { return self->detail; }
int bmq_rna_fetch_rounds (const bmq_rna_fetch_t *self) { return self->rounds; }
