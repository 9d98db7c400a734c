/* gateway_service — the front door. Clients talk to it only; it sees each
 * request through planner → validator pool → executor, forwarding every
 * answer and progress event to the client in order, and audits the story. */
#include "gateway_service.h"
#include "gateway_internal.h"
#include "audit_client.h"
#include "bus.h"
#include "gateway_request.h"
#include "http_feed.h"
#include "http_server.h"
#include "log.h"
#include "peer.h"
#include "roles.h"
#include "validator_broker.h"
#include "executor_set.h"
#include "event_relay.h"

#include <ctype.h>

#define MAX_REQUESTS 1000
/* HTTP connection threads (http_bus) come on an inproc ROUTER of their own:
 * they authenticated the request by token and say who in on_behalf_of, which
 * only this socket believes. The CURVE front never does (roles.h). */
#define FRONT_INPROC "inproc://blendmq-gateway-front"

/* Everything the gateway sends downstream for a client carries who the client
 * is (body.on_behalf_of), replacing anything the client put there itself. A
 * service key's own look-up (planner, validators: roles.def) is no client's:
 * it goes on without on_behalf_of, as the gateway's own request. */
void gw_for_client (const gw_request_t *r, bmq_envelope_t *env)
{
    bool client = bmq_roles_client_role (r->client_role);
    bmq_roles_set_on_behalf_of (env->body, client ? r->client_name : NULL, client ? r->client_role : NULL);
}

void gw_to_client (gw_t *gw, gw_request_t *r, bmq_envelope_t *env)
{
    bmq_story_answer (gw->stories, r->plan_id, env);             /* HTTP: GET /api/plans/{id}, metrics */
    bmq_bus_send_and_destroy (r->local ? gw->local : gw->front, r->rid, &env);
}

void gw_done (gw_t *gw, gw_request_t *r, const char *outcome)
{
    /* a plan id only where there is a plan: a look-up (inspect, capabilities, scene...) has none (issue 29) */
    bool plan = r->kind == BMQ_REQ_CHAT || r->kind == BMQ_REQ_RUN || r->kind == BMQ_REQ_VALIDATE || r->kind == BMQ_REQ_SCRIPT_LIVE;
    bmq_audit_record (gw->audit, r->cid, "request.end",
                      json_pack ("{s:s, s:s?, s:f}", "outcome", outcome, "plan_id", plan ? r->plan_id : NULL,
                                 "duration_ms", (bmq_mono_us () - r->accepted_us) / 1000.0));
    zhashx_delete (gw->requests, r->cid);
}

void gw_fail (gw_t *gw, gw_request_t *r, const char *code, const char *message)
{
    if (gw_review_cut (gw, r, code, message)) return;        /* a review's held result answers */
    bmq_envelope_t tmp = { .type = BMQ_MSG_ERROR };
    snprintf (tmp.cid, sizeof tmp.cid, "%s", r->cid);
    gw_to_client (gw, r, bmq_envelope_error (&tmp, code, "%s", message));
    gw_done (gw, r, code);
}


/* A message from a downstream service about request cid: the request's
 * transition table decides (gateway_lifecycle.c). */
static void s_on_downstream (gw_t *gw, bmq_peer_t *peer, bmq_req_wait_t from, int executor)
{
    bmq_envelope_t *env = bmq_bus_recv (bmq_peer_sock (peer), NULL);
    if (!env) return;
    if (!bmq_peer_heard (peer, env)) gw_on_message (gw, &env, from, executor);
    bmq_envelope_destroy (&env);
}

static json_t *s_status (gw_t *gw)
{
    json_t *services = json_array ();
    json_array_append_new (services, bmq_peer_status (gw->planner));
    for (size_t i = 0; i < bmq_executor_set_size (gw->executors); i++)
        json_array_append_new (services, bmq_peer_status (bmq_executor_set_peer (gw->executors, i)));
    json_array_append_new (services, bmq_peer_status (bmq_audit_peer (gw->audit)));
    json_t *validators = bmq_broker_status (gw->broker);
    json_object_set_new (validators, "name", json_string ("validator"));
    json_object_set_new (validators, "alive", json_boolean (bmq_broker_workers (gw->broker) > 0));
    json_array_append_new (services, validators);
    json_t *status = json_pack ("{s:s, s:s, s:o, s:I, s:I, s:{s:s, s:s}}", "service", "gateway", "state", "ok",
                      "services", services, "requests", (json_int_t) zhashx_size (gw->requests),
                      "audit_pending", (json_int_t) bmq_audit_pending (gw->audit),
                      "endpoints", "gateway", bmq_config_str (gw->cfg, "gateway.endpoint"),
                      "events", bmq_config_str (gw->cfg, "gateway.events"));
    if (gw->http) {
        char mcp[400];
        snprintf (mcp, sizeof mcp, "%s/mcp", bmq_http_server_url (gw->http));
        json_t *endpoints = json_object_get (status, "endpoints");
        json_object_set_new (endpoints, "http", json_string (bmq_http_server_url (gw->http)));
        json_object_set_new (endpoints, "mcp", json_string (mcp));
    }
    return status;
}

/* cancel.request (MCP notifications/cancelled): the story env->cid stops. A
 * plan being run is the executor's to stop (after its current step, rolled
 * back); the gateway asks it in a story of its own, so an executor that
 * cannot cancel answers nothing this request would take for its end. */
static void s_cancel_one (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env, const bmq_principal_t *who);

/* cancel.request on a story of its own (`blendmq cancel PLAN_ID | --all-mine`):
 * the plans it names are stopped as their own story's cancel would, and
 * cancel.reply says which (issue 29). */
/* May `who` stop request r? Its own key may, and so may a person (a reviewer or an admin
 * key): a person can stop an agent's run, but an agent (an operator key, such as mcp's)
 * cannot stop a person's or another agent's. */
static bool s_may_cancel (const gw_request_t *r, const bmq_principal_t *who)
{
    return !strcmp (r->client_name, who->name) || (bmq_roles_bit (who->role) & BMQ_NEEDS_REVIEWER);
}

static bmq_envelope_t *s_cancel_named (gw_t *gw, const bmq_envelope_t *env, const bmq_principal_t *who)
{
    const char *plan_id = bmq_body_str (env, "plan_id");
    bool mine = json_is_true (json_object_get (env->body, "all_mine"));
    json_t *cancelled = json_array ();
    zlistx_t *hits = zlistx_new ();
    const gw_request_t *refused = NULL;
    for (gw_request_t *r = zhashx_first (gw->requests); r; r = zhashx_next (gw->requests))
        if ((r->kind == BMQ_REQ_CHAT || r->kind == BMQ_REQ_RUN || r->kind == BMQ_REQ_SCRIPT_LIVE || r->kind == BMQ_REQ_GENERATE)
            && ((plan_id && r->plan_id[0] && !strcmp (r->plan_id, plan_id)) || (mine && !strcmp (r->client_name, who->name)))) {
            if (s_may_cancel (r, who)) zlistx_add_end (hits, r);
            else refused = r;
        }
    if (refused && !zlistx_size (hits)) {
        bmq_envelope_t *no = bmq_envelope_error (env, "forbidden", "%s %s was started by key '%s': only that key or a person "
                                                 "(a reviewer or admin key) may cancel it",
                                                 refused->kind == BMQ_REQ_SCRIPT_LIVE ? "script" : "plan", refused->plan_id,
                                                 refused->client_name);
        bmq_audit_record (gw->audit, refused->cid, "request.cancel_refused", json_pack ("{s:s, s:s, s:s}", "plan_id",
                          refused->plan_id, "name", who->name, "role", who->role));
        zlistx_destroy (&hits);
        json_decref (cancelled);
        return no;
    }
    for (gw_request_t *r = zlistx_first (hits); r; r = zlistx_next (hits)) {
        json_array_append_new (cancelled, json_pack ("{s:s, s:s, s:s}", "plan_id", r->plan_id[0] ? r->plan_id : r->cid,
                                                     "state", gw_request_state_name (r->state),
                                                     "kind", r->kind == BMQ_REQ_SCRIPT_LIVE ? "script" : "plan"));
        s_cancel_one (gw, r, env, who);     /* may end (and free) r: the list is walked no further than it */
    }
    zlistx_destroy (&hits);
    return bmq_envelope_reply (env, BMQ_MSG_CANCEL_REPLY, json_pack ("{s:o}", "cancelled", cancelled));
}

static bmq_envelope_t *s_cancel (gw_t *gw, const bmq_envelope_t *env, const bmq_principal_t *who)
{
    gw_request_t *r = zhashx_lookup (gw->requests, env->cid);
    if (r && !s_may_cancel (r, who)) {
        /* never answered in the story itself: its own client waits on that cid for its end */
        bmq_warn ("refused a cancel of request %s (key '%s') from key '%s' (%s)", r->cid, r->client_name, who->name, who->role);
        bmq_audit_record (gw->audit, r->cid, "request.cancel_refused", json_pack ("{s:s, s:s, s:s}", "plan_id", r->plan_id,
                          "name", who->name, "role", who->role));
        return NULL;
    }
    if (r) s_cancel_one (gw, r, env, who);
    return NULL;
}

static void s_cancel_one (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env, const bmq_principal_t *who)
{
    bmq_audit_record (gw->audit, r->cid, "request.cancel", json_pack ("{s:s, s:s, s:s, s:s, s:s}", "plan_id", r->plan_id,
                      "state", gw_request_state_name (r->state), "client", env->sender, "name", who->name, "role", who->role));
    if (r->kind == BMQ_REQ_GENERATE) {         /* a generation: the executor stops it and answers asset.generated */
        bmq_envelope_t *stop = bmq_envelope_new (BMQ_MSG_ASSET_CANCEL, r->cid, json_object ());
        bmq_roles_set_on_behalf_of (stop->body, who->name, who->role);
        bmq_peer_send (bmq_executor_set_peer (gw->executors, (size_t) r->executor), stop);
        bmq_envelope_destroy (&stop);
    }
    else if (r->state == BMQ_REQ_EXECUTING || (r->kind == BMQ_REQ_SCRIPT_LIVE && r->state == BMQ_REQ_AT_EXECUTOR)) {
        /* a live script is named by its script id (issue 29): the executor interrupts it in Blender */
        bmq_envelope_t *stop = bmq_envelope_new (BMQ_MSG_CANCEL_REQUEST, NULL, json_pack ("{s:s}", "plan_id", r->plan_id));
        bmq_roles_set_on_behalf_of (stop->body, who->name, who->role);
        bmq_peer_send (bmq_executor_set_peer (gw->executors, (size_t) r->executor), stop);
        bmq_envelope_destroy (&stop);
    }
    else if (r->state == BMQ_REQ_PLANNING || r->state == BMQ_REQ_LOOKING || r->state == BMQ_REQ_VALIDATING)
        gw_fail (gw, r, "cancelled", "cancelled by the client before anything ran");
}

/* asset.cancel carrying a generation's own cid: the executor that runs it
 * stops it, and the generation's asset.generated (status cancelled) is the
 * answer; the cancel starts no story of its own. */
static bmq_envelope_t *s_asset_cancel (gw_t *gw, const bmq_envelope_t *env, const bmq_principal_t *who)
{
    gw_request_t *r = zhashx_lookup (gw->requests, env->cid);
    if (r->kind != BMQ_REQ_GENERATE)
        return bmq_envelope_error (env, "bad_request", "request %s is not a generation (asset.cancel stops generations)", env->cid);
    bmq_audit_record (gw->audit, r->cid, "request.cancel", json_pack ("{s:s, s:s, s:s, s:s}", "state",
                      gw_request_state_name (r->state), "client", env->sender, "name", who->name, "role", who->role));
    bmq_envelope_t *stop = bmq_envelope_new (BMQ_MSG_ASSET_CANCEL, r->cid, json_object ());
    bmq_roles_set_on_behalf_of (stop->body, who->name, who->role);
    bmq_peer_send (bmq_executor_set_peer (gw->executors, (size_t) r->executor), stop);
    bmq_envelope_destroy (&stop);
    return NULL;
}

/* A client may name the plan it starts (POST /api/chat answers with the id at
 * once): a short plain name no request in progress uses. */
static bool s_plan_id_ok (gw_t *gw, const char *id)
{
    size_t n = id ? strlen (id) : 0;
    if (!n || n > 64) return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum ((unsigned char) id[i]) && id[i] != '-' && id[i] != '_' && id[i] != '.') return false;
    for (gw_request_t *r = zhashx_first (gw->requests); r; r = zhashx_next (gw->requests))
        if (!strcmp (r->plan_id, id)) return false;
    return true;
}

static void s_on_client (gw_t *gw, zsock_t *sock)
{
    bool local = sock == gw->local;
    zframe_t *rid = NULL;
    bmq_envelope_t *env = bmq_bus_recv (sock, &rid);
    if (!env) { zframe_destroy (&rid); return; }
    bmq_envelope_t *reply = NULL;
    /* who is asking, from the key (or, from this process's own HTTP/MCP
     * threads, the token they checked), and may they? (roles.def) */
    bmq_principal_t who;
    char why[512];
    if (bmq_roles_check (env, "gateway", gw->curve, local ? BMQ_ROLES_TRUST_LOCAL : 0, &who, why, sizeof why)) {
        char key[200];          /* counted per key (or in-process name) and type per second: floods stay bounded */
        snprintf (key, sizeof key, "%s|gateway|%s", who.name[0] ? who.name : env->auth_name, bmq_msg_type_name (env->type));
        if (bmq_audit_count (gw->audit, env->cid, "auth.refused", key, bmq_roles_refusal_record (env, "gateway", &who, why)))
            bmq_warn ("refused %s from '%s' (%s): %s", bmq_msg_type_name (env->type), who.name[0] ? who.name : env->auth_name,
                      who.role[0] ? who.role : env->auth_role, why);
        reply = bmq_roles_refusal (env, why);
        if (reply) bmq_bus_send_and_destroy (sock, rid, &reply);
        zframe_destroy (&rid);
        bmq_envelope_destroy (&env);
        return;
    }
    bmq_req_kind_t kind = BMQ_REQ_CHAT;
    bool start = gw_request_starts (env->type, &kind);      /* gateway_request.def routes */
    if (bmq_answer_heartbeat (sock, rid, env, "gateway", "ok")) { }
    else if (env->type == BMQ_MSG_STATUS_REQUEST) reply = bmq_envelope_reply (env, BMQ_MSG_STATUS_REPLY, s_status (gw));
    else if (env->type == BMQ_MSG_CANCEL_REQUEST && !zhashx_lookup (gw->requests, env->cid)
             && (bmq_body_str (env, "plan_id") || json_is_true (json_object_get (env->body, "all_mine"))))
        reply = s_cancel_named (gw, env, &who);
    else if (env->type == BMQ_MSG_CANCEL_REQUEST) reply = s_cancel (gw, env, &who);
    else if (!start) reply = bmq_envelope_error (env, "unsupported", "the gateway does not accept %s", bmq_msg_type_name (env->type));
    else if (env->type == BMQ_MSG_ASSET_CANCEL && zhashx_lookup (gw->requests, env->cid))
        reply = s_asset_cancel (gw, env, &who);
    else if (zhashx_lookup (gw->requests, env->cid)) reply = bmq_envelope_error (env, "duplicate", "request %s is already in progress", env->cid);
    else if (zhashx_size (gw->requests) >= MAX_REQUESTS) reply = bmq_envelope_error (env, "busy", "too many requests in progress");
    else if (bmq_executor_set_find (gw->executors, bmq_body_str (env, "target")) < 0) {
        char names[512];
        bmq_executor_set_names (gw->executors, names, sizeof names);
        reply = bmq_envelope_error (env, "unknown_target", "no Blender called '%.64s' (known: %s)", bmq_body_str (env, "target"), names);
    }
    else {
        bool named = s_plan_id_ok (gw, bmq_body_str (env, "plan_id"));
        gw_request_t *r = gw_request_new (kind, env, rid, gw->timeout_ms);
        r->local = local;
        r->executor = bmq_executor_set_find (gw->executors, bmq_body_str (env, "target"));
        snprintf (r->client_name, sizeof r->client_name, "%s", who.name);
        snprintf (r->client_role, sizeof r->client_role, "%s", who.role);
        gw_for_client (r, env);          /* forwarded as is below: the client's own on_behalf_of never passes */
        if (named) snprintf (r->plan_id, sizeof r->plan_id, "%s", bmq_body_str (env, "plan_id"));
        else if (env->type == BMQ_MSG_SCRIPT_CONFIRM && s_plan_id_ok (gw, bmq_body_str (env, "script_id")))
            snprintf (r->plan_id, sizeof r->plan_id, "%s", bmq_body_str (env, "script_id"));   /* `cancel SCRIPT_ID` (issue 29) */
        zhashx_insert (gw->requests, r->cid, r);
        json_t *what = json_deep_copy (env->body);
        json_object_del (what, BMQ_ON_BEHALF_OF);
        if (who.authenticated)
            json_object_set_new (what, "identity", json_pack ("{s:s, s:s, s:s}", "name", who.name, "role", who.role,
                                                              "key", who.transport));
        json_object_set_new (what, "request", json_string (bmq_msg_type_name (env->type)));
        json_object_set_new (what, "client", json_string (env->sender));
        json_object_set_new (what, "transport", json_string (!strcmp (env->sender, "http") ? "http" : !strcmp (env->sender, "mcp") ? "mcp" : "zmq"));
        bmq_audit_record (gw->audit, r->cid, "request", what);
        if (env->type == BMQ_MSG_CHAT_REQUEST || env->type == BMQ_MSG_RUN_REQUEST || env->type == BMQ_MSG_VALIDATE_REQUEST)
            bmq_story_request (gw->stories, r->plan_id, env->type == BMQ_MSG_CHAT_REQUEST ? "chat"
                               : env->type == BMQ_MSG_RUN_REQUEST ? "run" : "validate", env);
        char why[200];
        bmq_req_wait_t missing = gw_missing (gw, env, r->executor, why, sizeof why);
        if (missing != BMQ_WAIT_NONE) {
            r->waits = missing;
            gw_fail_unavailable (gw, r, why);
        }
        else gw_start (gw, r, env);
    }
    if (reply) bmq_bus_send_and_destroy (sock, rid, &reply);
    zframe_destroy (&rid);
    bmq_envelope_destroy (&env);
}

static void s_expire (gw_t *gw)
{
    int64_t now = bmq_mono_ms ();
    zlistx_t *late = zlistx_new ();
    for (gw_request_t *r = zhashx_first (gw->requests); r; r = zhashx_next (gw->requests))
        if (now > r->deadline) zlistx_add_end (late, r);
    for (gw_request_t *r = zlistx_first (late); r; r = zlistx_next (late)) {
        char msg[256];
        snprintf (msg, sizeof msg, "no answer within %d ms while %s", gw->timeout_ms, gw_request_state_name (r->state));
        gw_fail (gw, r, "timeout", msg);
    }
    zlistx_destroy (&late);
}

/* scene.names: kept per executor (validation reads them instead of asking the
 * executor), not passed on to clients. Only a frame that names the type near
 * its start is decoded (the envelope's type comes third; everything else the
 * SUB carries is progress, passed through as it is). */
static bool s_scene_names (gw_t *gw, zframe_t *frame)
{
    static const char tag[] = "scene.names";
    size_t len = zframe_size (frame);
    if (!memmem (zframe_data (frame), len < 48 ? len : 48, tag, sizeof tag - 1)) return false;
    char err[256];
    bmq_envelope_t *env = bmq_envelope_decode (zframe_data (frame), len, err, sizeof err);
    if (!env || env->type != BMQ_MSG_SCENE_NAMES) { bmq_envelope_destroy (&env); return false; }
    if (bmq_executor_set_keep_names (gw->executors, bmq_body_str (env, "executor"),
                                     json_incref (json_object_get (env->body, "names")),
                                     json_incref (json_object_get (env->body, "boxes"))))
        bmq_warn ("scene.names from an executor this gateway does not know ('%s'): ignored", bmq_body_str (env, "executor"));
    bmq_envelope_destroy (&env);
    return true;
}

/* Each event frame before it is published: scene.names kept (not published),
 * the rest told to HTTP (SSE, metrics) as it came. */
static bool s_event_side (void *arg, zframe_t *frame)
{
    gw_t *gw = arg;
    if (s_scene_names (gw, frame)) return true;
    bmq_story_event (gw->stories, zframe_data (frame), zframe_size (frame));
    return false;
}

static void s_forward_events (gw_t *gw)
{
    bmq_event_relay (gw->sub, gw->pub, s_event_side, gw, NULL);     /* a backlog goes on as batches (issue 28) */
}

int bmq_gateway_service_run (bmq_config_t *cfg)
{
    gw_t gw = { .cfg = cfg, .timeout_ms = (int) bmq_config_int (cfg, "gateway.request_timeout_ms"),
                  .curve = bmq_config_bool (cfg, "security.curve"),
                  .interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms") };
    int interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms");
    int liveness = (int) bmq_config_int (cfg, "heartbeat.liveness");
    gw.front = bmq_bus_bind (ZMQ_ROUTER, bmq_config_str (cfg, "gateway.endpoint"));
    gw.local = zsock_new (ZMQ_ROUTER);        /* inproc: no handshake, no CURVE; only this process reaches it */
    if (gw.local) {
        zsock_set_router_mandatory (gw.local, 0);
        zsock_set_sndhwm (gw.local, 10000);
        zsock_set_rcvhwm (gw.local, 10000);
        if (zsock_bind (gw.local, "%s", FRONT_INPROC) == -1) zsock_destroy (&gw.local);
    }
    gw.pub = bmq_bus_bind (ZMQ_PUB, bmq_config_str (cfg, "gateway.events"));
    gw.sub = bmq_bus_client_socket (ZMQ_SUB, "executor");   /* connected to every executor's events by the set */
    char err[512] = "";
    gw.executors = bmq_executor_set_new (cfg, gw.sub, err, sizeof err);
    if (!gw.executors) bmq_error ("executors: %s", err);
    gw.broker = bmq_broker_new (bmq_config_str (cfg, "gateway.validator_broker"), interval, liveness);
    gw.planner = bmq_peer_new ("planner", bmq_config_str (cfg, "planner.endpoint"), interval, liveness);
    gw.audit = bmq_audit_new_from_config (cfg);
    if (gw.broker) bmq_broker_set_auth (gw.broker, gw.curve, gw.audit);
    gw.requests = zhashx_new ();
    zhashx_set_destructor (gw.requests, gw_request_free);
    int code = 1;
    if (gw.front && gw.local && gw.pub && gw.sub && gw.broker && gw.planner && gw.executors && gw.audit
        && (gw.stories = bmq_story_pub_new (BMQ_GW_STORIES))
        && bmq_http_server_start (cfg, FRONT_INPROC, BMQ_GW_STORIES, &gw.http) == 0) {
        if (!gw.http) zsock_destroy (&gw.stories);         /* HTTP disabled: no one to tell */
        /* the audit service ends the stories an earlier gateway process left open (they died with it) */
        bmq_audit_record (gw.audit, NULL, "gateway.start", json_pack ("{s:s}", "instance", bmq_instance_id ()));
        bmq_info ("gateway ready on %s (events %s, validator broker %s)", bmq_config_str (cfg, "gateway.endpoint"),
                  bmq_config_str (cfg, "gateway.events"), bmq_config_str (cfg, "gateway.validator_broker"));
        zpoller_t *poller = zpoller_new (gw.front, gw.local, bmq_broker_sock (gw.broker), bmq_peer_sock (gw.planner),
                                         bmq_audit_sock (gw.audit), gw.sub, NULL);
        for (size_t i = 0; i < bmq_executor_set_size (gw.executors); i++)
            zpoller_add (poller, bmq_peer_sock (bmq_executor_set_peer (gw.executors, i)));
        gw.last_loop = bmq_mono_ms ();
        while (!zsys_interrupted) {
            zsock_t *which = zpoller_wait (poller, interval / 4);
            int64_t now = bmq_mono_ms ();
            if (now - gw.last_loop > 2 * (int64_t) interval) {
                /* we were the silent one: the heartbeats that came meanwhile wait unread, so
                 * every peer looks dead; give them an interval to be read before judging */
                bmq_warn ("the gateway itself stalled for %lld ms: judging no service's silence for %d ms",
                          (long long) (now - gw.last_loop), interval);
                gw.grace_until = now + interval;
            }
            gw.last_loop = now;
            if (which == gw.front || which == gw.local) s_on_client (&gw, which);
            else if (which == bmq_broker_sock (gw.broker)) {
                bmq_envelope_t *verdict = bmq_broker_on_message (gw.broker);
                if (verdict) gw_on_message (&gw, &verdict, BMQ_WAIT_VALIDATORS, -1);
                bmq_envelope_destroy (&verdict);
            }
            else if (which == bmq_peer_sock (gw.planner)) s_on_downstream (&gw, gw.planner, BMQ_WAIT_PLANNER, -1);
            else if (which && bmq_executor_set_by_sock (gw.executors, which) >= 0) {
                int i = bmq_executor_set_by_sock (gw.executors, which);
                s_on_downstream (&gw, bmq_executor_set_peer (gw.executors, (size_t) i), BMQ_WAIT_EXECUTOR, i);
            }
            else if (which == gw.sub) s_forward_events (&gw);
            else if (which) {
                /* the audit socket: acknowledgements for our records, and
                 * answers to audit queries clients sent through us */
                bmq_envelope_t *env = bmq_bus_recv (which, NULL);
                if (env && !gw_on_message (&gw, &env, BMQ_WAIT_AUDIT, -1)) bmq_audit_handle (gw.audit, env);
                bmq_envelope_destroy (&env);
            }
            bmq_peer_tick (gw.planner);
            for (size_t i = 0; i < bmq_executor_set_size (gw.executors); i++)
                bmq_peer_tick (bmq_executor_set_peer (gw.executors, i));
            bmq_broker_tick (gw.broker);
            for (bmq_envelope_t *failed; (failed = bmq_broker_take_failed (gw.broker)); bmq_envelope_destroy (&failed))
                gw_on_message (&gw, &failed, BMQ_WAIT_VALIDATORS, -1);
            bmq_audit_tick (gw.audit);
            bmq_http_server_tick (gw.http);
            bmq_http_server_audit (gw.http, gw.audit);     /* refused HTTP requests: "http.refused" records */
            gw_check_waiting (&gw);
            s_expire (&gw);
        }
        bmq_info ("gateway stopping (%zu requests in progress)", zhashx_size (gw.requests));
        zpoller_destroy (&poller);
        bmq_audit_flush (gw.audit, 1000);
        code = 0;
    }
    bmq_http_server_destroy (&gw.http);     /* its connection threads use the front socket's inproc endpoint */
    zsock_destroy (&gw.stories);
    zhashx_destroy (&gw.requests);
    bmq_audit_destroy (&gw.audit);
    bmq_executor_set_destroy (&gw.executors);
    bmq_peer_destroy (&gw.planner);
    bmq_broker_destroy (&gw.broker);
    zsock_destroy (&gw.sub);
    zsock_destroy (&gw.pub);
    zsock_destroy (&gw.front);
    zsock_destroy (&gw.local);
    return code;
}
