/* inspect — Blender's RNA through the gateway, non-blocking; see inspect.h. */
#include "inspect.h"
#include "bus.h"
#include "log.h"

#include <stdatomic.h>

#define S_STORY_MAX 40

struct bmq_inspect_t {
    char                *endpoint;
    bmq_inspect_opts_t   opts;          /* target and story point into the strings below */
    char                 target[65];
    char                 story[S_STORY_MAX + 1];
    json_t              *pending;       /* operation → true, until answered */
    json_t              *result;        /* operation → RNA | null */
    zsock_t             *sock;          /* the current round's, or NULL */
    zhashx_t            *asked;         /* cid → operation (this round) */
    bool                 probing;       /* only the probe is out */
    int                  rounds, backoff;
    int64_t              due;           /* round deadline, or when the next round starts */
    bmq_inspect_state_t  state;
    char                 detail[256];
    char                 code[32];
};

static void s_free_str (void **item) { free (*item); *item = NULL; }

bmq_inspect_t *bmq_inspect_new (const char *gateway, const json_t *operations, const bmq_inspect_opts_t *opts)
{
    if (!gateway || !*gateway || !json_is_array (operations)) return NULL;
    bmq_inspect_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    self->endpoint = strdup (gateway);
    self->opts = (bmq_inspect_opts_t) { 10000, 500, 8000, 40, NULL, NULL };
    if (opts) {
        if (opts->round_ms > 0) self->opts.round_ms = opts->round_ms;
        if (opts->backoff_ms > 0) self->opts.backoff_ms = opts->backoff_ms;
        if (opts->backoff_max_ms > 0) self->opts.backoff_max_ms = opts->backoff_max_ms;
        if (opts->max_rounds > 0) self->opts.max_rounds = opts->max_rounds;
        snprintf (self->target, sizeof self->target, "%s", opts->target ? opts->target : "");
        snprintf (self->story, sizeof self->story, "%s", opts->story ? opts->story : "");
    }
    self->pending = json_object ();
    self->result = json_object ();
    size_t i;
    json_t *op;
    json_array_foreach (operations, i, op)
        if (json_is_string (op) && json_string_length (op)) json_object_set_new (self->pending, json_string_value (op), json_true ());
    self->asked = zhashx_new ();
    if (!self->endpoint || !self->pending || !self->result || !self->asked || !json_object_size (self->pending)) {
        bmq_inspect_destroy (&self);
        return NULL;
    }
    zhashx_set_destructor (self->asked, s_free_str);
    self->backoff = self->opts.backoff_ms;
    self->due = bmq_mono_ms ();       /* first round at once */
    return self;
}

void bmq_inspect_destroy (bmq_inspect_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_inspect_t *self = *self_p;
    zsock_destroy (&self->sock);
    zhashx_destroy (&self->asked);
    json_decref (self->pending);
    json_decref (self->result);
    free (self->endpoint);
    free (self);
    *self_p = NULL;
}

static void s_ask (bmq_inspect_t *self, const char *op)
{
    static atomic_uint s_counter;
    char cid[BMQ_MAX_ID + 1];
    if (self->story[0]) snprintf (cid, sizeof cid, "%s.inspect-%u", self->story, atomic_fetch_add (&s_counter, 1) + 1);
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_INSPECT_REQUEST, self->story[0] ? cid : NULL,
                                            json_pack ("{s:s}", "tool_name", op));
    if (!req) return;
    if (self->target[0]) json_object_set_new (req->body, "target", json_string (self->target));
    zhashx_update (self->asked, req->cid, strdup (op));
    bmq_bus_send (self->sock, NULL, req);
    bmq_envelope_destroy (&req);
}

static bool s_asked (bmq_inspect_t *self, const char *op)
{
    for (const char *o = zhashx_first (self->asked); o; o = zhashx_next (self->asked))
        if (!strcmp (o, op)) return true;
    return false;
}

static void s_end_round (bmq_inspect_t *self, bool final)
{
    zsock_destroy (&self->sock);
    zhashx_purge (self->asked);
    if (!json_object_size (self->pending)) { self->state = BMQ_INSPECT_DONE; return; }
    if (final || self->rounds >= self->opts.max_rounds) {
        self->state = BMQ_INSPECT_GAVE_UP;
        return;
    }
    self->due = bmq_mono_ms () + self->backoff;
    bmq_debug ("inspect round %d ended (%s); next in %d ms", self->rounds, self->detail, self->backoff);
    self->backoff = self->backoff * 2 > self->opts.backoff_max_ms ? self->opts.backoff_max_ms : self->backoff * 2;
}

static void s_start_round (bmq_inspect_t *self)
{
    self->rounds++;
    self->sock = bmq_bus_connect (ZMQ_DEALER, self->endpoint, "gateway");
    if (!self->sock) {
        snprintf (self->detail, sizeof self->detail, "cannot connect to the gateway at %s", self->endpoint);
        self->code[0] = 0;
        s_end_round (self, false);
        return;
    }
    self->probing = true;
    self->due = bmq_mono_ms () + self->opts.round_ms;
    void *it = json_object_iter (self->pending);
    s_ask (self, json_object_iter_key (it));
}

/* Answers no later round can change. */
static bool s_final (const char *code)
{
    return code && (!strcmp (code, "forbidden") || !strcmp (code, "unknown_target") || !strcmp (code, "bad_request")
                    || !strcmp (code, "unsupported") || !strcmp (code, "bad_message"));
}

void bmq_inspect_on_message (bmq_inspect_t *self)
{
    if (!self || !self->sock) return;
    bmq_envelope_t *env = bmq_bus_recv (self->sock, NULL);
    char *op = env ? zhashx_lookup (self->asked, env->cid) : NULL;
    if (!op) { bmq_envelope_destroy (&env); return; }              /* not ours, or stale */
    const char *code = env->type == BMQ_MSG_ERROR ? bmq_body_str (env, "code") : NULL;
    if (env->type == BMQ_MSG_INSPECT_REPLY && json_is_object (json_object_get (env->body, "tool")))
        json_object_set (self->result, op, json_object_get (env->body, "tool"));
    else if (code && !strcmp (code, "unknown_tool"))
        json_object_set_new (self->result, op, json_null ());
    else {                          /* gateway, executor or Blender not ready: try again later */
        const char *msg = bmq_body_str (env, "message");
        snprintf (self->detail, sizeof self->detail, "%.40s: %.200s", code ? code : bmq_msg_type_name (env->type), msg ? msg : "");
        snprintf (self->code, sizeof self->code, "%s", code ? code : "");
        bool final = s_final (code);
        bmq_envelope_destroy (&env);
        s_end_round (self, final);
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
    if (!json_object_size (self->pending)) s_end_round (self, false);
}

void bmq_inspect_tick (bmq_inspect_t *self)
{
    if (!self || self->state != BMQ_INSPECT_FETCHING || bmq_mono_ms () < self->due) return;
    if (self->sock) {
        snprintf (self->detail, sizeof self->detail, "no answer from the gateway at %.180s within %d ms", self->endpoint,
                  self->opts.round_ms);
        self->code[0] = 0;
        s_end_round (self, false);
    }
    else s_start_round (self);
}

int64_t bmq_inspect_due (const bmq_inspect_t *self)
{
    return self && self->state == BMQ_INSPECT_FETCHING ? self->due : INT64_MAX;
}

zsock_t *bmq_inspect_sock (bmq_inspect_t *self) { return self ? self->sock : NULL; }
bmq_inspect_state_t bmq_inspect_state (const bmq_inspect_t *self) { return self->state; }
const json_t *bmq_inspect_result (const bmq_inspect_t *self) { return self->result; }
const char *bmq_inspect_detail (const bmq_inspect_t *self) { return self->detail; }
const char *bmq_inspect_code (const bmq_inspect_t *self) { return self->code; }
int bmq_inspect_rounds (const bmq_inspect_t *self) { return self->rounds; }
