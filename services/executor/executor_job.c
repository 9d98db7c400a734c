/* executor_job — constructors for executor work items. */
#include "executor_job.h"

static bmq_job_t *s_new (bmq_job_kind_t kind, const bmq_envelope_t *req, zframe_t *rid)
{
    bmq_job_t *self = calloc (1, sizeof *self);
    self->kind = kind;
    self->rid = zframe_dup (rid);
    snprintf (self->cid, sizeof self->cid, "%s", req->cid);
    snprintf (self->req_type, sizeof self->req_type, "%s", bmq_msg_type_name (req->type));
    return self;
}

bmq_job_t *bmq_job_new_plan (const bmq_envelope_t *req, zframe_t *rid)
{
    bmq_job_t *self = s_new (BMQ_JOB_PLAN, req, rid);
    snprintf (self->plan_id, sizeof self->plan_id, "%s", bmq_body_str (req, "plan_id"));
    self->plan = json_incref (json_object_get (req->body, "plan"));
    self->total = json_array_size (self->plan);
    self->created = json_array ();
    self->audit_steps = json_array ();
    self->bpy_ms = self->addon_ms = -1;
    self->assets_staged = json_object ();
    self->fallbacks = json_object ();
    self->notes = json_array ();
    self->names = json_object ();
    self->keep_partial = json_is_true (json_object_get (req->body, "keep_partial"));
    return self;
}

bmq_job_t *bmq_job_new_command (const bmq_envelope_t *req, zframe_t *rid)
{
    bmq_job_t *self = s_new (BMQ_JOB_COMMAND, req, rid);
    snprintf (self->command, sizeof self->command, "%s", bmq_body_str (req, "command"));
    json_t *args = json_object_get (req->body, "args");
    self->args = args ? json_incref (args) : json_object ();
    return self;
}

void bmq_job_destroy (bmq_job_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_job_t *self = *self_p;
    zframe_destroy (&self->rid);
    json_decref (self->plan);
    json_decref (self->created);
    json_decref (self->audit_steps);
    json_decref (self->assets_staged);
    json_decref (self->fallbacks);
    json_decref (self->notes);
    if (self->asset_work && self->asset_work_free) self->asset_work_free (&self->asset_work);
    json_decref (self->names);
    json_decref (self->args);
    free (self);
    *self_p = NULL;
}

void bmq_job_free (void **item) { bmq_job_destroy ((bmq_job_t **) item); }
