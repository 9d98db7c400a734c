/* fake_gateway — canned gateway answers on an inproc ROUTER, in its own thread. */
#include "fake_gateway.h"
#include "bus.h"

#include <pthread.h>
#include <stdatomic.h>

struct fake_gateway_t {
    zsock_t           *router;
    json_t            *palette;
    pthread_t          thread;
    atomic_bool        stop;
    atomic_int         caps;
    bmq_http_server_t *_Atomic server;
    pthread_mutex_t    lock;
    json_t            *last;            /* the last request's body and type */
};


static void s_send (fake_gateway_t *self, zframe_t *rid, const char *plan_id, bmq_envelope_t *env)
{
    bmq_http_server_apply_answer (atomic_load (&self->server), plan_id, env);
    bmq_bus_send_and_destroy (self->router, rid, &env);
}

static bool s_plan_ok (const json_t *plan)
{
    size_t i;
    json_t *step;
    json_array_foreach (plan, i, step) {
        const char *op = json_string_value (json_object_get (step, "operation"));
        if (!op || strncmp (op, "bpy.ops.mesh.", 13)) return false;
    }
    return true;
}

static void s_answer (fake_gateway_t *self, zframe_t *rid, bmq_envelope_t *req)
{
    char plan_id[80];
    const char *want = bmq_body_str (req, "plan_id");
    snprintf (plan_id, sizeof plan_id, "%s", want ? want : "p-FAKE");
    if (!want) snprintf (plan_id, sizeof plan_id, "p-%.12s", req->id);
    bmq_http_server_t *server = atomic_load (&self->server);
    pthread_mutex_lock (&self->lock);
    json_decref (self->last);
    self->last = json_pack ("{s:s, s:O}", "type", bmq_msg_type_name (req->type), "body", req->body ? req->body : json_null ());
    pthread_mutex_unlock (&self->lock);
    const char *script_id = bmq_body_str (req, "script_id");
    if (req->type == BMQ_MSG_SCRIPT_LIST && script_id && !strcmp (script_id, "s-ok")) {       /* one known sandboxed script */
        s_send (self, rid, NULL, bmq_envelope_reply (req, BMQ_MSG_SCRIPT_LISTING, json_pack (
            "{s:[{s:s, s:s, s:b, s:b, s:s, s:i, s:s}]}", "scripts", "script_id", "s-ok", "sha256", FAKE_SCRIPT_SHA, "ok", 1,
            "applied", 0, "verdict", "valid", "lines", 2, "script", "import bpy\nbpy.ops.mesh.primitive_cube_add(size=2)\n")));
        return;
    }
    if (req->type == BMQ_MSG_SCRIPT_CONFIRM && script_id && !strcmp (script_id, "s-ok")) {
        s_send (self, rid, NULL, bmq_envelope_reply (req, BMQ_MSG_SCRIPT_REPLY, json_pack ("{s:s, s:s}", "script_id", "s-ok",
                                                                                           "status", "applied")));
        return;
    }
    switch (req->type) {
    case BMQ_MSG_CAPABILITIES_REQUEST:
        atomic_fetch_add (&self->caps, 1);
        s_send (self, rid, NULL, bmq_envelope_reply (req, BMQ_MSG_CAPABILITIES_REPLY,
                json_pack ("{s:O, s:s?}", "palette", self->palette, "form", bmq_body_str (req, "form"))));
        break;
    case BMQ_MSG_SCENE_REQUEST:
        s_send (self, rid, NULL, bmq_envelope_reply (req, BMQ_MSG_SCENE_REPLY,
                json_pack ("{s:s, s:{s:i, s:[]}}", "command", "scene_info", "result", "count", 0, "objects")));
        break;
    case BMQ_MSG_CHAT_REQUEST: {
        const char *prompt = bmq_body_str (req, "prompt");
        if (prompt && !strcmp (prompt, "busy")) {
            s_send (self, rid, NULL, bmq_envelope_error (req, "busy", "too many requests in progress"));
            break;
        }
        bmq_http_server_apply_request (server, plan_id, "chat", req);
        s_send (self, rid, plan_id, bmq_envelope_reply (req, BMQ_MSG_CHAT_PLANNED,
                json_pack ("{s:[{s:s}], s:s, s:s}", "plan", "operation", "bpy.ops.mesh.primitive_cube_add",
                           "plan_id", plan_id, "source", "offline")));
        break;
    }
    case BMQ_MSG_VALIDATE_REQUEST:
    case BMQ_MSG_RUN_REQUEST: {
        json_t *plan = json_object_get (req->body, "plan");
        bmq_http_server_apply_request (server, plan_id, req->type == BMQ_MSG_RUN_REQUEST ? "run" : "validate", req);
        bool ok = s_plan_ok (plan);
        json_t *errors = ok ? json_array () : json_pack ("[{s:i, s:s, s:s}]", "step", 0, "field", "operation",
                                                         "reason", "not in the capability palette");
        s_send (self, rid, plan_id, bmq_envelope_reply (req, BMQ_MSG_VALIDATE_REPLY,
                json_pack ("{s:b, s:o, s:s, s:s}", "accepted", ok, "errors", errors, "plan_hash", "00", "plan_id", plan_id)));
        if (ok && req->type == BMQ_MSG_RUN_REQUEST)
            s_send (self, rid, plan_id, bmq_envelope_reply (req, BMQ_MSG_EXECUTE_ACCEPTED,
                    json_pack ("{s:s, s:i}", "plan_id", plan_id, "position", 1)));
        break;
    }
    default:
        bmq_bus_send_and_destroy (self->router, rid, &(bmq_envelope_t *) { bmq_envelope_error (req, "unsupported", "fake") });
    }
}

static void *s_run (void *arg)
{
    fake_gateway_t *self = arg;
    while (!atomic_load (&self->stop)) {
        zmq_pollitem_t item = { zsock_resolve (self->router), 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (&item, 1, 50) <= 0) continue;
        zframe_t *rid = NULL;
        bmq_envelope_t *req = bmq_bus_recv (self->router, &rid);
        if (req) s_answer (self, rid, req);
        bmq_envelope_destroy (&req);
        zframe_destroy (&rid);
    }
    return NULL;
}

fake_gateway_t *fake_gateway_new (const char *endpoint, json_t *palette)
{
    fake_gateway_t *self = calloc (1, sizeof *self);
    self->router = bmq_bus_bind (ZMQ_ROUTER, endpoint);
    pthread_mutex_init (&self->lock, NULL);
    self->palette = palette ? palette : json_pack ("{s:s}", "bpy.ops.mesh.primitive_cube_add", "creates; size float 0.001..1000 =2");
    pthread_create (&self->thread, NULL, s_run, self);
    return self;
}

void fake_gateway_attach (fake_gateway_t *self, bmq_http_server_t *server) { atomic_store (&self->server, server); }
int fake_gateway_capabilities_asked (fake_gateway_t *self) { return atomic_load (&self->caps); }

json_t *fake_gateway_last (fake_gateway_t *self)
{
    pthread_mutex_lock (&self->lock);
    json_t *copy = self->last ? json_deep_copy (self->last) : NULL;
    pthread_mutex_unlock (&self->lock);
    return copy;
}

void fake_gateway_destroy (fake_gateway_t **self_p)
{
    if (!self_p || !*self_p) return;
    fake_gateway_t *self = *self_p;
    atomic_store (&self->stop, true);
    pthread_join (self->thread, NULL);
    zsock_destroy (&self->router);
    json_decref (self->palette);
    json_decref (self->last);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}
