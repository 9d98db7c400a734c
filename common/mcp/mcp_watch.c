/* mcp_watch — from progress events to resources/updated (see mcp_watch.h). */
#include "mcp_watch.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WATCH_PLANS   32            /* plans followed at once (the least recently heard goes) */
#define WATCH_OBJECTS 256           /* objects named per plan before it counts as touching all */
#define PLAN_ID_MAX   256

typedef struct {
    char    plan_id[PLAN_ID_MAX + 1];   /* "" : free */
    json_t *objects;                    /* names its ok steps made or changed */
    bool    all;                        /* more than WATCH_OBJECTS */
    bool    changed;                    /* an ok step */
    bool    rolled_back;
    int64_t used;
} s_plan_t;

struct bmq_mcp_watch_t {
    s_plan_t plans[WATCH_PLANS];
    int64_t  clock;
};

bmq_mcp_watch_t *bmq_mcp_watch_new (void)
{
    return calloc (1, sizeof (bmq_mcp_watch_t));
}

static void s_forget (s_plan_t *p)
{
    json_decref (p->objects);
    memset (p, 0, sizeof *p);
}

void bmq_mcp_watch_destroy (bmq_mcp_watch_t **self_p)
{
    if (!self_p || !*self_p) return;
    for (int i = 0; i < WATCH_PLANS; i++) s_forget (&(*self_p)->plans[i]);
    free (*self_p);
    *self_p = NULL;
}

/* The plan's slot; `make`: a new one (the least recently heard is reused). */
static s_plan_t *s_plan (bmq_mcp_watch_t *self, const char *plan_id, bool make)
{
    s_plan_t *free_slot = NULL, *oldest = NULL;
    for (int i = 0; i < WATCH_PLANS; i++) {
        s_plan_t *p = &self->plans[i];
        if (p->plan_id[0] && !strcmp (p->plan_id, plan_id)) { p->used = ++self->clock; return p; }
        if (!p->plan_id[0]) { if (!free_slot) free_slot = p; }
        else if (!oldest || p->used < oldest->used) oldest = p;
    }
    if (!make) return NULL;
    s_plan_t *p = free_slot ? free_slot : oldest;
    s_forget (p);
    snprintf (p->plan_id, sizeof p->plan_id, "%s", plan_id);
    p->objects = json_array ();
    p->used = ++self->clock;
    return p;
}

static void s_add_name (s_plan_t *p, const json_t *name)
{
    if (!json_is_string (name) || !json_string_length (name) || p->all) return;
    size_t i;
    json_t *n;
    json_array_foreach (p->objects, i, n) if (json_equal (n, (json_t *) name)) return;
    if (json_array_size (p->objects) >= WATCH_OBJECTS) { p->all = true; return; }
    json_array_append (p->objects, (json_t *) name);
}

static void s_add_names (s_plan_t *p, const json_t *event)
{
    s_add_name (p, json_object_get (event, "object"));
    size_t i;
    json_t *n;
    json_array_foreach (json_object_get (event, "objects"), i, n) s_add_name (p, n);
}

static json_t *s_change (json_t *objects, bool all)
{
    return json_pack ("{s:o, s:b}", "objects", objects ? objects : json_array (), "all", all);
}

json_t *bmq_mcp_watch_unknown (void)
{
    return s_change (NULL, true);
}

static bool s_is (const json_t *event, const char *key, const char *want)
{
    const char *v = json_string_value (json_object_get (event, key));
    return v && !strcmp (v, want);
}

json_t *bmq_mcp_watch_feed (bmq_mcp_watch_t *self, const json_t *event)
{
    const char *kind = json_string_value (json_object_get (event, "event"));
    const char *status = json_string_value (json_object_get (event, "status"));
    const char *plan_id = json_string_value (json_object_get (event, "plan_id"));
    if (!self || !kind || !status) return NULL;
    if (!strcmp (kind, "script")) return !strcmp (status, "applied") ? s_change (NULL, true) : NULL;
    if (!strcmp (kind, "scene")) return !strcmp (status, "changed") ? s_change (NULL, true) : NULL;    /* reset_scene, … */
    if (!plan_id || !*plan_id || strlen (plan_id) > PLAN_ID_MAX) return NULL;
    if (!strcmp (kind, "step")) {
        if (strcmp (status, "ok")) return NULL;
        s_plan_t *p = s_plan (self, plan_id, true);
        p->changed = true;
        s_add_names (p, event);
        return NULL;
    }
    if (!strcmp (kind, "rollback")) {
        s_plan_t *p = s_plan (self, plan_id, true);
        p->rolled_back = !strcmp (status, "rolled back");
        return NULL;
    }
    if (strcmp (kind, "plan")) return NULL;                 /* asset, generate: their import ends as a plan */
    if (!strcmp (status, "started")) {
        s_plan_t *p = s_plan (self, plan_id, false);
        if (p) s_forget (p);
        return NULL;
    }
    s_plan_t *p = s_plan (self, plan_id, false);
    bool undone = json_object_get (event, "by") || (p && p->rolled_back) || s_is (json_object_get (event, "rollback"), "status", "rolled back");
    bool stays = !strcmp (status, "done") || (!undone && ((p && p->changed) || json_array_size (json_object_get (event, "objects"))));
    json_t *change = NULL;
    if (stays) {
        if (!p) p = s_plan (self, plan_id, true);
        s_add_names (p, event);
        change = s_change (json_incref (p->objects), p->all);
    }
    if (p) s_forget (p);
    return change;
}

/* "%XX" decoded into out (at most len - 1 bytes); false when malformed or too long. */
static bool s_decode (const char *in, char *out, size_t len)
{
    size_t n = 0;
    for (const char *c = in; *c; c++) {
        if (n + 1 >= len) return false;
        if (*c != '%') { out[n++] = *c; continue; }
        unsigned v;
        if (!c[1] || !c[2] || sscanf (c + 1, "%2x", &v) != 1) return false;
        out[n++] = (char) v;
        c += 2;
    }
    out[n] = 0;
    return true;
}

bool bmq_mcp_watch_touches (const json_t *change, const char *uri)
{
    if (!change || !uri) return false;
    if (!strcmp (uri, "blendmq://scene") || !strcmp (uri, "blendmq://preview") || !strcmp (uri, "blendmq://look")) return true;
    if (strncmp (uri, "blendmq://objects/", 18)) return false;
    if (json_is_true (json_object_get (change, "all"))) return true;
    char name[1024];
    if (!s_decode (uri + 18, name, sizeof name)) return false;
    size_t i;
    json_t *n;
    json_array_foreach (json_object_get (change, "objects"), i, n)
        if (json_is_string (n) && !strcmp (json_string_value (n), name)) return true;
    return false;
}

size_t bmq_mcp_watch_notify (const json_t *change, const json_t *uris, const json_t *subscription_id, json_t *out)
{
    size_t i, sent = 0;
    json_t *uri;
    json_array_foreach (uris, i, uri) {
        if (!bmq_mcp_watch_touches (change, json_string_value (uri))) continue;
        json_t *params = json_pack ("{s:O}", "uri", uri);
        if (subscription_id)
            json_object_set_new (params, "_meta", json_pack ("{s:O}", "io.modelcontextprotocol/subscriptionId", subscription_id));
        json_array_append_new (out, json_pack ("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", "notifications/resources/updated",
                                               "params", params));
        sent++;
    }
    return sent;
}
