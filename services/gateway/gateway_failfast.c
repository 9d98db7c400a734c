/* gateway_failfast — who holds each request, and answering it at once when
 * that service is dead (heartbeats) or was replaced (a new instance id, and
 * the transport saw the old connection drop before the hand-over); see
 * gateway_internal.h. */
#include "gateway_internal.h"
#include "log.h"
#include "roles.h"

/* ---- fail fast: who holds a request, and is it still there? ---------------- */

static bmq_peer_t *s_peer_of (gw_t *gw, bmq_req_wait_t waits, int executor)
{
    switch (waits) {
    case BMQ_WAIT_PLANNER: return gw->planner;
    case BMQ_WAIT_EXECUTOR: return bmq_executor_set_peer (gw->executors, (size_t) executor);
    case BMQ_WAIT_AUDIT: return bmq_audit_peer (gw->audit);
    default: return NULL;
    }
}

/* The request is now in `waits`'s hands: note which process of it has it. */
void gw_hand_to (gw_t *gw, gw_request_t *r, bmq_req_wait_t waits)
{
    r->waits = waits;
    bmq_peer_t *peer = s_peer_of (gw, waits, r->executor);
    r->generation = peer ? bmq_peer_generation (peer) : 0;
    if (peer) bmq_peer_disconnected_at (peer);       /* see any drop that happened before this hand-over */
    r->handed_ms = bmq_mono_ms ();
}

/* The service a request waits on, by its registry name (service_registry.def's WAIT column;
 * the error code is NAME_unavailable). Blender is no service: its executor's link. */
static const char *s_wait_name (bmq_req_wait_t waits)
{
    static const struct { bmq_req_wait_t waits; const char *name; } names[] = {
#define WAITS(X) BMQ_WAIT_##X
#define NOWAIT   BMQ_WAIT_NONE
#define BMQ_SERVICE(NAME, ORDER, INSTANCES, ENDPOINTS, WAIT, HEALTH, DOC) { WAIT, NAME },
#include "service_registry.def"
#undef BMQ_SERVICE
#undef WAITS
#undef NOWAIT
        { BMQ_WAIT_BLENDER, "blender" },
    };
    for (size_t i = 0; waits != BMQ_WAIT_NONE && i < sizeof names / sizeof names[0]; i++)
        if (names[i].waits == waits) return names[i].name;
    return "?";
}

/* Is `waits` there to serve a request now? NULL, or why not ("restarted",
 * "no heartbeat for 3000 ms", …) in why. */
static const char *s_unavailable (gw_t *gw, bmq_req_wait_t waits, int executor, unsigned generation, int64_t handed_ms,
                                  bool held, char *why, size_t len)
{
    if (waits == BMQ_WAIT_VALIDATORS) {
        int64_t empty = bmq_broker_empty_ms (gw->broker);
        if (empty < gw->interval || bmq_mono_ms () < gw->grace_until) return NULL;
        snprintf (why, len, "no validator worker connected for %lld ms", (long long) empty);
        return why;
    }
    bmq_peer_t *peer = s_peer_of (gw, waits, executor);
    if (!peer) return NULL;
    if (held && bmq_peer_generation (peer) != generation && handed_ms <= bmq_peer_disconnected_at (peer)) {
        snprintf (why, len, "restarted: a new %s process took over and the one holding this request is gone", s_wait_name (waits));
        return why;
    }
    int64_t down = bmq_peer_down_ms (peer);
    if (!down || bmq_mono_ms () < gw->grace_until) return NULL;
    snprintf (why, len, "no heartbeat for %lld ms", (long long) (down + (int64_t) gw->interval * 3));
    return why;
}

/* Tell the client what happened to its request, in words that say what to do. */
void gw_fail_unavailable (gw_t *gw, gw_request_t *r, const char *why)
{
    bool restarted = !strncmp (why, "restarted", 9);
    char msg[900], code[32];
    const char *service = s_wait_name (r->waits);
    snprintf (code, sizeof code, "%s_unavailable", service);
    bool plan = r->waits == BMQ_WAIT_EXECUTOR && r->state == BMQ_REQ_EXECUTING && (r->kind == BMQ_REQ_CHAT || r->kind == BMQ_REQ_RUN);
    if (plan && r->plan_started && restarted)
        /* the process that ran it is gone, so is its link: Blender rolled the plan back when the link dropped */
        snprintf (msg, sizeof msg, "executor unavailable (%s); the plan was interrupted after step %lld of %lld: %s"
                  " (the plan's story in `blendmq audit show %s` says what was removed); run it again once `blendmq status`"
                  " shows the executor", why, r->steps_done, r->steps_total,
                  r->keep_partial ? "what it did so far stays, as asked (keep_partial)" : "Blender rolled it back", r->cid);
    else if (plan && r->plan_started)
        /* stopped or cut off, not gone: it may finish the plan before it notices its gateway fell silent
         * (then it stops and rolls back, executor_requesters.c): whole or rolled back, never half */
        snprintf (msg, sizeof msg, "executor unreachable (%s); the plan was at step %lld of %lld when it was last heard"
                  " from: it ends whole if the executor finished it before losing us, otherwise %s; which one is in"
                  " `blendmq audit show %s` once the executor is back; check the scene before running it again",
                  why, r->steps_done, r->steps_total,
                  r->keep_partial ? "what it did so far stays, as asked (keep_partial)" : "it is rolled back", r->cid);
    else if (plan)
        snprintf (msg, sizeof msg, "executor unavailable (%s); the plan had not started: nothing was changed;"
                  " run it again once `blendmq status` shows the executor", why);
    else if (r->waits == BMQ_WAIT_EXECUTOR && r->state == BMQ_REQ_EXECUTING)
        snprintf (msg, sizeof msg, "executor unavailable (%s); the script's run was lost with it: submit it again"
                  " once `blendmq status` shows the executor", why);
    else if (r->waits == BMQ_WAIT_AUDIT)
        snprintf (msg, sizeof msg, "audit unavailable (%s); the audit trail cannot be read now (every service keeps its"
                  " records until the audit service takes them): try again once `blendmq status` shows it", why);
    else
        snprintf (msg, sizeof msg, "%s unavailable (%s); nothing was run: try again once `blendmq status` shows the %s"
                  " (blendmq up and systemd restart it by themselves)", service, why, service);
    if (plan) {
        /* a stopped executor that comes back must not finish a plan its client was told ended:
         * it finds this cancel first and rolls the plan back (a new process ignores it) */
        /* in the plan's own story: the request ends here, so no answer of it is awaited */
        bmq_envelope_t *stop = bmq_envelope_new (BMQ_MSG_CANCEL_REQUEST, r->cid, json_pack ("{s:s}", "plan_id", r->plan_id));
        bmq_roles_set_on_behalf_of (stop->body, r->client_name, r->client_role);
        bmq_peer_send (bmq_executor_set_peer (gw->executors, (size_t) r->executor), stop);
        bmq_envelope_destroy (&stop);
        bmq_audit_record (gw->audit, r->cid, "plan.cut", json_pack ("{s:s, s:s, s:s, s:I, s:I, s:b}", "plan_id", r->plan_id,
                          "service", service, "why", why, "steps_done", (json_int_t) r->steps_done,
                          "steps_total", (json_int_t) r->steps_total, "started", r->plan_started));
    }
    if (gw_review_cut (gw, r, code, msg)) return;         /* a review's held result answers */
    bmq_warn ("request %s: %s", r->cid, msg);
    bmq_envelope_t tmp = { .type = BMQ_MSG_ERROR };
    snprintf (tmp.cid, sizeof tmp.cid, "%s", r->cid);
    gw_to_client (gw, r, bmq_envelope_error (&tmp, code, "%s", msg));
    gw_done (gw, r, plan && r->plan_started ? "interrupted" : code);
}

/* Answer every request whose holder died or restarted (a few times per interval). */
void gw_check_waiting (gw_t *gw)
{
    int64_t now = bmq_mono_ms ();
    if (now - gw->last_check < gw->interval / 4) return;
    gw->last_check = now;
    zlistx_t *cut = zlistx_new ();
    for (gw_request_t *r = zhashx_first (gw->requests); r; r = zhashx_next (gw->requests)) {
        char why[200];
        if (r->waits != BMQ_WAIT_VALIDATORS      /* the broker answers its own queue (validator_broker.h) */
            && s_unavailable (gw, r->waits, r->executor, r->generation, r->handed_ms, true, why, sizeof why))
            zlistx_add_end (cut, r);
    }
    for (gw_request_t *r = zlistx_first (cut); r; r = zlistx_next (cut)) {
        char why[200];
        s_unavailable (gw, r->waits, r->executor, r->generation, r->handed_ms, true, why, sizeof why);
        gw_fail_unavailable (gw, r, why);
    }
    zlistx_destroy (&cut);
}

/* Everything a new request will need, in the order it needs it: the first
 * that is down (or, for Blender, not connected to its executor) fails it now
 * rather than when it gets there. */
bmq_req_wait_t gw_missing (gw_t *gw, const bmq_envelope_t *env, int executor, char *why, size_t len)
{
    bmq_req_wait_t needs[4];
    int n = 0;
    bool blender = false;
    switch (env->type) {
    case BMQ_MSG_CHAT_REQUEST: needs[n++] = BMQ_WAIT_PLANNER; /* fall through */
    case BMQ_MSG_RUN_REQUEST: needs[n++] = BMQ_WAIT_VALIDATORS; needs[n++] = BMQ_WAIT_EXECUTOR; blender = true; break;
    case BMQ_MSG_VALIDATE_REQUEST: case BMQ_MSG_CAPABILITIES_REQUEST: needs[n++] = BMQ_WAIT_VALIDATORS; break;
    case BMQ_MSG_SCRIPT_REQUEST:
        needs[n++] = BMQ_WAIT_VALIDATORS;
        if (!json_is_true (json_object_get (env->body, "validate_only"))) needs[n++] = BMQ_WAIT_EXECUTOR;
        break;
    case BMQ_MSG_SCENE_REQUEST: case BMQ_MSG_INSPECT_REQUEST: case BMQ_MSG_SCRIPT_CONFIRM:
        needs[n++] = BMQ_WAIT_EXECUTOR; blender = true; break;
    case BMQ_MSG_SCRIPT_LIST: case BMQ_MSG_ASSET_GENERATE: case BMQ_MSG_ASSET_CANCEL: needs[n++] = BMQ_WAIT_EXECUTOR; break;
    case BMQ_MSG_RECIPE_SAVE: case BMQ_MSG_RECIPE_LIST: needs[n++] = BMQ_WAIT_PLANNER; break;
    case BMQ_MSG_AUDIT_QUERY: needs[n++] = BMQ_WAIT_AUDIT; break;
    default: break;
    }
    for (int i = 0; i < n; i++)
        if (s_unavailable (gw, needs[i], executor, 0, 0, false, why, len)) return needs[i];
    bmq_peer_t *ep = bmq_executor_set_peer (gw->executors, (size_t) executor);
    const char *state = bmq_peer_state (ep);
    /* "blender busy" is connected: a long command (a render, a look) holds its main thread
     * and the executor queues the work behind it; a Blender that stays busy past
     * blender.hang_kill_ms is restarted, and what waited is answered then. */
    if (blender && bmq_peer_alive (ep) && strcmp (state, "blender connected") && strcmp (state, "blender busy")
        && strcmp (state, "blender connecting") && strcmp (state, "unknown")) {
        snprintf (why, len, "Blender is not connected to the executor: %s", state);
        return BMQ_WAIT_BLENDER;
    }
    return BMQ_WAIT_NONE;
}

