/* gateway_request — a client request's record at the gateway, and the
 * tables of gateway_request.def that do not need the gateway (names, holders,
 * which messages start a request). */
#include "gateway_request.h"

gw_request_t *gw_request_new (bmq_req_kind_t kind, const bmq_envelope_t *req, zframe_t *rid, int timeout_ms)
{
    gw_request_t *self = calloc (1, sizeof *self);
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

void gw_request_destroy (gw_request_t **self_p)
{
    if (!self_p || !*self_p) return;
    zframe_destroy (&(*self_p)->rid);
    json_decref ((*self_p)->plan);
    json_decref ((*self_p)->prompt);
    bmq_envelope_destroy (&(*self_p)->held);
    free (*self_p);
    *self_p = NULL;
}

void gw_request_free (void **item) { gw_request_destroy ((gw_request_t **) item); }

const char *gw_request_state_name (bmq_req_state_t state)
{
    static const char *names[] = {
#define BMQ_REQ_STATE(id, name, holder) name,
#include "gateway_request.def"
#undef BMQ_REQ_STATE
    };
    return (unsigned) state < BMQ_REQ_STATES ? names[state] : "?";
}

bmq_req_wait_t gw_request_holder (bmq_req_state_t state)
{
    static const bmq_req_wait_t holders[] = {
#define BMQ_REQ_STATE(id, name, holder) BMQ_WAIT_##holder,
#include "gateway_request.def"
#undef BMQ_REQ_STATE
    };
    return (unsigned) state < BMQ_REQ_STATES ? holders[state] : BMQ_WAIT_NONE;
}

bool gw_request_starts (bmq_msg_type_t type, bmq_req_kind_t *kind)
{
    switch (type) {
#define BMQ_REQ_ROUTE(msg, k, start) case BMQ_MSG_##msg: *kind = BMQ_REQ_##k; return true;
#include "gateway_request.def"
#undef BMQ_REQ_ROUTE
    default: return false;
    }
}
