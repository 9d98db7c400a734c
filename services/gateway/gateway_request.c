/* gateway_request — lifecycle of a client request at the gateway. */
#include "gateway_request.h"

bmq_gw_request_t *bmq_gw_request_new (bmq_req_kind_t kind, const bmq_envelope_t *req, zframe_t *rid, int timeout_ms)
{
    bmq_gw_request_t *self = calloc (1, sizeof *self);
    self->kind = kind;
    self->rid = zframe_dup (rid);
    snprintf (self->cid, sizeof self->cid, "%s", req->cid);
    zuuid_t *uuid = zuuid_new ();
    snprintf (self->plan_id, sizeof self->plan_id, "p-%.12s", zuuid_str (uuid));
    zuuid_destroy (&uuid);
    self->deadline = bmq_mono_ms () + timeout_ms;
    self->keep_partial = json_is_true (json_object_get (req->body, "keep_partial"));
    self->accepted_us = bmq_mono_us ();
    return self;
}

void bmq_gw_request_destroy (bmq_gw_request_t **self_p)
{
    if (!self_p || !*self_p) return;
    zframe_destroy (&(*self_p)->rid);
    json_decref ((*self_p)->plan);
    free (*self_p);
    *self_p = NULL;
}

void bmq_gw_request_free (void **item) { bmq_gw_request_destroy ((bmq_gw_request_t **) item); }

const char *bmq_gw_request_state_name (bmq_req_state_t state)
{
    static const char *names[] = { "planning", "validating", "executing", "forwarded", "reading the scene" };
    return names[state];
}
