/* planner_caps — the validator pool's palette for the planner; see planner_caps.h. */
#include "planner_caps.h"
#include "bus.h"
#include "log.h"

#include <stdarg.h>

#define S_CURATED_NOTE "capabilities are the planner's curated palette (proto/palette.yaml), not yet the validator pool's " \
                       "palette merged with Blender's RNA"

struct bmq_planner_caps_t {
    char                   *gateway;
    json_t                 *curated;        /* the document */
    bmq_planner_caps_opts_t opts;
    bmq_caps_snapshot_t    *current;
    zlistx_t               *retired;        /* bmq_caps_snapshot_t * */
    int                     swaps;
    zsock_t                *sock;           /* the exchange in flight, or NULL */
    char                    cid_full[BMQ_MAX_ID + 1], cid_compact[BMQ_MAX_ID + 1];
    json_t                 *got_full, *got_compact;
    int64_t                 due;
    int                     backoff;
    char                    detail[300];    /* why the last exchange failed ("" when it did not) */
    bool                    warned;
};

static void s_snapshot_free (bmq_caps_snapshot_t **snap_p)
{
    if (!snap_p || !*snap_p) return;
    bmq_caps_snapshot_t *snap = *snap_p;
    bmq_palette_destroy (&snap->palette);
    json_decref (snap->full);
    json_decref (snap->compact);
    free (snap);
    *snap_p = NULL;
}

static void s_retired_free (void **item) { s_snapshot_free ((bmq_caps_snapshot_t **) item); }

json_t *bmq_planner_caps_body (const bmq_palette_t *palette, bool compact, json_t *rna)
{
    return json_pack ("{s:o, s:s, s:I, s:{s:i, s:i, s:f}, s:o}", "palette", bmq_palette_capabilities (palette, compact),
                      "form", compact ? "compact" : "full", "operations", (json_int_t) bmq_palette_count (palette),
                      "limits", "max_steps", bmq_palette_max_steps (palette), "max_name_len", bmq_palette_max_name_len (palette),
                      "max_vertices", bmq_palette_max_vertices (palette), "rna", rna ? rna : json_object ());
}

/* ---- rebuilding a palette from its published form -------------------------- */

json_t *bmq_planner_caps_rebuild (const json_t *curated, const json_t *published, char *err, size_t errlen)
{
    const json_t *pal = json_object_get (published, "palette"), *limits = json_object_get (published, "limits");
    const json_t *cur_ops = json_object_get (curated, "operations");
    if (!json_is_object (pal) || !json_is_object (limits) || !json_is_object (cur_ops)) {
        snprintf (err, errlen, "the published palette has no palette or limits object");
        return NULL;
    }
    json_t *ops = json_object ();
    const char *name;
    json_t *op;
    json_object_foreach ((json_t *) pal, name, op) {
        const json_t *cur = json_object_get (cur_ops, name);
        if (!json_is_object (op) || !json_is_object (cur)) {       /* the merge only narrows: never a new operation */
            snprintf (err, errlen, "operation %.120s is %s", name, json_is_object (op) ? "not in the curated palette" : "not an object");
            json_decref (ops);
            return NULL;
        }
        json_t *entry = json_object ();
        const char *key;
        json_t *v;
        json_object_foreach (op, key, v) {
            if (!strcmp (key, "target")) continue;                  /* derived (needs_target) */
            if (!strcmp (key, "creates") || !strcmp (key, "acts_on") || !strcmp (key, "deletes"))
                json_object_set_new (entry, key, json_string ("object"));
            else json_object_set (entry, key, v);
        }
        if (json_object_get (cur, "cost")) json_object_set (entry, "cost", json_object_get (cur, "cost"));
        json_object_set_new (ops, name, entry);
    }
    json_t *lim = json_object ();
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) limits, key, v)
        if (json_is_number (v)) json_object_set_new (lim, key, json_integer ((json_int_t) json_number_value (v)));
    return json_pack ("{s:O, s:o, s:o}", "version", json_object_get (curated, "version"), "limits", lim, "operations", ops);
}

/* A snapshot from the pool's two bodies: NULL with err when the rebuilt
 * palette would not publish exactly what the pool published. */
static bmq_caps_snapshot_t *s_pool_snapshot (const json_t *curated, json_t *full, json_t *compact, char *err, size_t errlen)
{
    json_t *doc = bmq_planner_caps_rebuild (curated, full, err, errlen);
    bmq_palette_t *palette = doc ? bmq_palette_from_json (doc, err, errlen) : NULL;
    json_decref (doc);
    if (!palette) return NULL;
    json_t *again_full = bmq_palette_capabilities (palette, false), *again_compact = bmq_palette_capabilities (palette, true);
    bool same = json_equal (again_full, json_object_get (full, "palette")) && json_equal (again_compact, json_object_get (compact, "palette"));
    json_decref (again_full);
    json_decref (again_compact);
    if (!same) {
        snprintf (err, errlen, "the full and compact palettes differ from each other (validators in different states?)");
        bmq_palette_destroy (&palette);
        return NULL;
    }
    bmq_caps_snapshot_t *snap = calloc (1, sizeof *snap);
    snap->palette = palette;
    snap->full = json_incref (full);
    snap->compact = json_incref (compact);
    snap->pool = true;
    const json_t *rna = json_object_get (full, "rna");
    const char *state = json_string_value (json_object_get (rna, "state"));
    const char *blender = json_string_value (json_object_get (rna, "blender"));
    snap->merged = state && !strcmp (state, "merged");
    if (snap->merged)
        snprintf (snap->note, sizeof snap->note, "capabilities are the validator pool's: the curated palette merged with "
                  "Blender %s's RNA, %zu operations", blender ? blender : "?", bmq_palette_count (palette));
    else
        snprintf (snap->note, sizeof snap->note, "capabilities are the validator pool's, not merged with Blender's RNA "
                  "(%s), %zu operations", state ? state : "?", bmq_palette_count (palette));
    return snap;
}

static void s_swap (bmq_planner_caps_t *self, bmq_caps_snapshot_t *snap)
{
    if (self->current) zlistx_add_end (self->retired, self->current);
    self->current = snap;
    self->swaps++;
    bmq_info ("%s", snap->note);
}

/* ---- the exchange ----------------------------------------------------------------- */

static void s_end (bmq_planner_caps_t *self, int next_ms)
{
    zsock_destroy (&self->sock);
    json_decref (self->got_full);
    json_decref (self->got_compact);
    self->got_full = self->got_compact = NULL;
    self->due = bmq_mono_ms () + next_ms;
}

static void s_failed (bmq_planner_caps_t *self, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static void s_failed (bmq_planner_caps_t *self, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (self->detail, sizeof self->detail, fmt, ap);
    va_end (ap);
    if (!self->warned)
        bmq_warn ("capabilities: no palette from the validator pool (%s); %s", self->detail,
                  self->current->pool ? "keeping the pool's last one" : "planning with the curated palette");
    self->warned = true;
    int next = self->backoff;
    self->backoff = self->backoff * 2 > self->opts.refresh_ms ? self->opts.refresh_ms : self->backoff * 2;
    s_end (self, next);
}

static void s_answered (bmq_planner_caps_t *self)
{
    json_t *full = self->got_full, *compact = self->got_compact;
    const char *state = json_string_value (json_object_get (json_object_get (full, "rna"), "state"));
    bool final = state && strcmp (state, "pending");
    self->backoff = self->opts.retry_ms;
    if (self->current->pool && json_equal (full, self->current->full) && json_equal (compact, self->current->compact)) {
        self->detail[0] = 0;
        self->warned = false;
        s_end (self, final ? self->opts.refresh_ms : self->opts.retry_ms);      /* unchanged */
        return;
    }
    char err[400];
    bmq_caps_snapshot_t *snap = s_pool_snapshot (self->curated, full, compact, err, sizeof err);
    if (!snap) {                    /* logged once until an answer is usable */
        snprintf (self->detail, sizeof self->detail, "its palette cannot be used: %.250s", err);
        if (!self->warned) bmq_warn ("capabilities: the validator pool's palette cannot be used (%s); asking again", err);
        self->warned = true;
        s_end (self, self->opts.retry_ms);
        return;
    }
    self->detail[0] = 0;
    self->warned = false;
    s_swap (self, snap);
    s_end (self, final ? self->opts.refresh_ms : self->opts.retry_ms);
}

static void s_ask (bmq_planner_caps_t *self, const char *form, char *cid)
{
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_CAPABILITIES_REQUEST, NULL, json_pack ("{s:s}", "form", form));
    snprintf (cid, BMQ_MAX_ID + 1, "%s", req->cid);
    bmq_bus_send_and_destroy (self->sock, NULL, &req);
}

void bmq_planner_caps_tick (bmq_planner_caps_t *self)
{
    if (!self || !self->gateway || bmq_mono_ms () < self->due) return;
    if (self->sock) {
        s_failed (self, "no answer from the gateway within %d ms", self->opts.round_ms);
        return;
    }
    self->sock = bmq_bus_connect (ZMQ_DEALER, self->gateway, "gateway");
    if (!self->sock) { s_failed (self, "cannot connect to the gateway at %.200s", self->gateway); return; }
    s_ask (self, "full", self->cid_full);
    s_ask (self, "compact", self->cid_compact);
    self->due = bmq_mono_ms () + self->opts.round_ms;
}

void bmq_planner_caps_on_message (bmq_planner_caps_t *self)
{
    if (!self || !self->sock) return;
    bmq_envelope_t *env = bmq_bus_recv (self->sock, NULL);
    bool full = env && !strcmp (env->cid, self->cid_full), compact = env && !strcmp (env->cid, self->cid_compact);
    if (!full && !compact) { bmq_envelope_destroy (&env); return; }        /* not ours, or stale */
    if (env->type == BMQ_MSG_ERROR) {
        const char *code = bmq_body_str (env, "code"), *msg = bmq_body_str (env, "message");
        s_failed (self, "%.40s: %.200s", code ? code : "error", msg ? msg : "");
    }
    else if (env->type != BMQ_MSG_CAPABILITIES_REPLY || !json_is_object (json_object_get (env->body, "palette"))
             || !json_is_object (json_object_get (env->body, "limits")))
        s_failed (self, "the gateway answered %s without a palette", bmq_msg_type_name (env->type));
    else {
        json_t **slot = full ? &self->got_full : &self->got_compact;
        json_decref (*slot);
        *slot = json_incref (env->body);
        if (self->got_full && self->got_compact) s_answered (self);
    }
    bmq_envelope_destroy (&env);
}

/* ---- life --------------------------------------------------------------------------- */

bmq_planner_caps_t *bmq_planner_caps_new (const char *gateway, const json_t *curated, const bmq_planner_caps_opts_t *opts,
                                          char *err, size_t errlen)
{
    bmq_palette_t *palette = bmq_palette_from_json (curated, err, errlen);
    if (!palette) return NULL;
    bmq_planner_caps_t *self = calloc (1, sizeof *self);
    bmq_caps_snapshot_t *snap = calloc (1, sizeof *snap);
    if (!self || !snap) { free (self); free (snap); bmq_palette_destroy (&palette); snprintf (err, errlen, "out of memory"); return NULL; }
    self->gateway = gateway && *gateway ? strdup (gateway) : NULL;
    self->curated = json_deep_copy (curated);
    self->opts = (bmq_planner_caps_opts_t) { 5000, 2000, 30000 };
    if (opts && opts->round_ms > 0) self->opts.round_ms = opts->round_ms;
    if (opts && opts->retry_ms > 0) self->opts.retry_ms = opts->retry_ms;
    if (opts && opts->refresh_ms > 0) self->opts.refresh_ms = opts->refresh_ms;
    self->backoff = self->opts.retry_ms;
    self->retired = zlistx_new ();
    zlistx_set_destructor (self->retired, s_retired_free);
    snap->palette = palette;
    snap->full = bmq_planner_caps_body (palette, false, json_pack ("{s:s, s:s}", "state", "curated", "detail", S_CURATED_NOTE));
    snap->compact = bmq_planner_caps_body (palette, true, json_pack ("{s:s, s:s}", "state", "curated", "detail", S_CURATED_NOTE));
    snprintf (snap->note, sizeof snap->note, "%s", S_CURATED_NOTE);
    self->current = snap;
    self->due = bmq_mono_ms ();         /* ask at once */
    return self;
}

void bmq_planner_caps_destroy (bmq_planner_caps_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_planner_caps_t *self = *self_p;
    s_end (self, 0);
    zlistx_destroy (&self->retired);
    s_snapshot_free (&self->current);
    json_decref (self->curated);
    free (self->gateway);
    free (self);
    *self_p = NULL;
}

zsock_t *bmq_planner_caps_sock (bmq_planner_caps_t *self) { return self ? self->sock : NULL; }
int64_t bmq_planner_caps_due (const bmq_planner_caps_t *self) { return self && self->gateway ? self->due : INT64_MAX; }
const bmq_caps_snapshot_t *bmq_planner_caps_current (const bmq_planner_caps_t *self) { return self->current; }
int bmq_planner_caps_swaps (const bmq_planner_caps_t *self) { return self->swaps; }
const char *bmq_planner_caps_detail (const bmq_planner_caps_t *self) { return self->detail; }
void bmq_planner_caps_collect (bmq_planner_caps_t *self) { if (self) zlistx_purge (self->retired); }
