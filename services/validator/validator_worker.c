/* validator_worker — READY, heartbeats both ways, reconnect with capped
 * exponential back-off when the broker falls silent (zguide ch. 4).
 *
 * Validation starts at once with the curated palette. Meanwhile the worker
 * asks for the RNA of the palette's Blender operators through the gateway's
 * front (common/inspect: the gateway's executor set routes inspect.request to
 * the default executor) and, once every one is answered, swaps in the merged palette
 * (palette_rna): the merge only narrows, so the swap never lets through
 * anything the curated palette refused. */
#include "validator_worker.h"
#include "audit_client.h"
#include "bus.h"
#include "inspect.h"
#include "log.h"
#include "palette.h"
#include "palette_rna.h"
#include "plan_seal.h"
#include "plan_validator.h"
#include "roles.h"
#include "service.h"
#include "worker_scripts.h"
#include "yaml_json.h"

#include <unistd.h>

typedef struct {
    json_t          *doc;           /* the curated palette document */
    bmq_palette_t   *palette;       /* in use: curated, then merged with RNA */
    bmq_inspect_t   *rna;           /* while fetching */
    json_t          *rna_status;    /* published with capabilities: {state, …} */
    bmq_seal_key_t   key;
    bmq_audit_t     *audit;
    bmq_worker_scripts_t *script;          /* script.request: extraction, static checks, seal (issue 8) */
    const char      *broker;
    zsock_t         *sock;
    int64_t          last_heard, last_sent;
    int              interval, liveness;
    int64_t          handled;
    bool             curve;         /* security.curve (roles.h) */
    int64_t          seal_ttl_ms;   /* security.seal_ttl_ms: how long a seal is valid */
    char             target[129];   /* executor.name: the seal's target when the request names none */
} s_worker_t;

static void s_connect (s_worker_t *w)
{
    zsock_destroy (&w->sock);
    w->sock = bmq_bus_connect (ZMQ_DEALER, w->broker, "gateway");
    bmq_envelope_t *ready = bmq_envelope_new (BMQ_MSG_WORKER_READY, NULL,
        json_pack ("{s:s, s:I, s:I}", "service", "validator", "operations", (json_int_t) bmq_palette_count (w->palette),
                   "pid", (json_int_t) getpid ()));
    if (w->sock) bmq_bus_send (w->sock, NULL, ready);
    bmq_envelope_destroy (&ready);
    w->last_heard = w->last_sent = bmq_mono_ms ();
}

/* Validate, seal when accepted, reply, audit. */
static void s_validate (s_worker_t *w, const bmq_envelope_t *req)
{
    json_t *plan = json_object_get (req->body, "plan");
    double t0 = bmq_mono_us ();
    json_t *verdict = bmq_plan_validate_in_scene (w->palette, plan, json_object_get (req->body, "scene_objects"));
    double us = bmq_mono_us () - t0;
    char hash[BMQ_HEX_DIGEST] = "";
    bmq_plan_hash (plan, hash);
    json_object_set_new (verdict, "plan_hash", json_string (hash));
    json_object_set_new (verdict, "validate_us", json_real (us));
    if (json_is_true (json_object_get (verdict, "accepted"))) {
        char seal[BMQ_SEAL_MAX];        /* for the executor the gateway resolved ("target"), expiring, single-use */
        const char *target = bmq_body_str (req, "target") && *bmq_body_str (req, "target") ? bmq_body_str (req, "target") : w->target;
        if (bmq_seal_make (&w->key, hash, target, w->seal_ttl_ms, seal) == 0)
            json_object_set_new (verdict, "seal", json_string (seal));
        else bmq_warn ("plan %s: cannot seal for executor '%.64s' (not a valid executor name)", req->cid, target);
    }
    bmq_audit_record (w->audit, req->cid, "verdict",
        json_pack ("{s:O, s:s, s:O, s:f}", "accepted", json_object_get (verdict, "accepted"),
                   "plan_hash", hash, "errors", json_object_get (verdict, "errors"), "validate_us", us));
    bmq_envelope_t *reply = bmq_envelope_reply (req, BMQ_MSG_VALIDATE_REPLY, verdict);
    bmq_bus_send_and_destroy (w->sock, NULL, &reply);
    w->handled++;
}

/* discover_capabilities: the palette in use, full or compact (body "form"). */
static void s_capabilities (s_worker_t *w, const bmq_envelope_t *req)
{
    const char *form = bmq_body_str (req, "form");
    bmq_envelope_t *reply;
    if (form && strcmp (form, "full") && strcmp (form, "compact"))
        reply = bmq_envelope_error (req, "bad_request", "form must be \"full\" or \"compact\"");
    else {
        bool compact = form && !strcmp (form, "compact");
        reply = bmq_envelope_reply (req, BMQ_MSG_CAPABILITIES_REPLY,
            json_pack ("{s:o, s:s, s:I, s:{s:i, s:i, s:f}, s:O}", "palette", bmq_palette_capabilities (w->palette, compact),
                       "form", compact ? "compact" : "full", "operations", (json_int_t) bmq_palette_count (w->palette),
                       "limits", "max_steps", bmq_palette_max_steps (w->palette),
                       "max_name_len", bmq_palette_max_name_len (w->palette),
                       "max_vertices", bmq_palette_max_vertices (w->palette), "rna", w->rna_status));
    }
    bmq_bus_send_and_destroy (w->sock, NULL, &reply);
    w->handled++;
}

/* ---- RNA ------------------------------------------------------------------ */

static void s_rna_status (s_worker_t *w, const char *state, const char *detail)
{
    json_decref (w->rna_status);
    w->rna_status = json_pack ("{s:s}", "state", state);
    if (detail && *detail) json_object_set_new (w->rna_status, "detail", json_string (detail));
}

static void s_rna_start (s_worker_t *w, bmq_config_t *cfg)
{
    json_t *ops = json_array ();
    const char *name;
    json_t *v;
    char ask[200];
    json_object_foreach (json_object_get (w->doc, "operations"), name, v)      /* operators, and paths' properties */
        if (bmq_palette_rna_ask (name, v, ask, sizeof ask)) json_array_append_new (ops, json_string (ask));
    w->rna = bmq_inspect_new (bmq_config_str (cfg, "gateway.endpoint"), ops, NULL);
    s_rna_status (w, w->rna ? "pending" : "none", w->rna ? "asking Blender's RNA through the gateway" : "nothing to check");
    json_decref (ops);
}

/* Every operator answered: merge, check, swap. */
static void s_rna_merge (s_worker_t *w)
{
    const json_t *result = bmq_inspect_result (w->rna);
    json_t *notes = json_array ();
    json_t *merged = bmq_palette_rna_merge (w->doc, result, notes);
    char err[512] = "the curated palette is not a document";
    bmq_palette_t *palette = merged ? bmq_palette_from_json (merged, err, sizeof err) : NULL;
    json_t *warnings = json_array (), *dropped = json_array ();
    size_t i, info = 0;
    json_t *n;
    json_array_foreach (notes, i, n) {
        const char *op = json_string_value (json_object_get (n, "operation"));
        const char *param = json_string_value (json_object_get (n, "param"));
        const char *note = json_string_value (json_object_get (n, "note"));
        if (strcmp (json_string_value (json_object_get (n, "level")), "warn")) {
            info++;
            bmq_debug ("palette vs Blender: %s%s%s: %s", op, param ? " " : "", param ? param : "", note);
            continue;
        }
        bmq_warn ("palette vs Blender: %s%s%s: %s", op, param ? " " : "", param ? param : "", note);
        json_array_append (warnings, n);
    }
    const char *name, *blender = NULL;
    json_t *v;
    json_object_foreach ((json_t *) result, name, v)
        if (!blender) blender = json_string_value (json_object_get (v, "blender"));
    json_object_foreach (json_object_get (w->doc, "operations"), name, v)    /* operators and paths alike */
        if (palette && !bmq_palette_has (palette, name)) json_array_append_new (dropped, json_string (name));
    if (palette) {
        bmq_info ("palette checked against Blender %s: %zu operations (%zu dropped), %zu warnings, %zu notes",
                  blender ? blender : "?", bmq_palette_count (palette), json_array_size (dropped),
                  json_array_size (warnings), info);
        bmq_palette_destroy (&w->palette);
        w->palette = palette;
        s_rna_status (w, "merged", NULL);
        json_object_set_new (w->rna_status, "blender", json_string (blender ? blender : "?"));
        json_object_set (w->rna_status, "dropped", dropped);
        json_object_set (w->rna_status, "warnings", warnings);
    }
    else {
        bmq_error ("the palette merged with Blender's RNA does not load (%s): keeping the curated palette", err);
        s_rna_status (w, "curated", err);
    }
    bmq_audit_record (w->audit, NULL, "palette.rna", json_pack ("{s:O, s:I, s:O, s:O}", "state",
        json_object_get (w->rna_status, "state"), "operations", (json_int_t) bmq_palette_count (w->palette),
        "dropped", dropped, "warnings", warnings));
    json_decref (warnings);
    json_decref (dropped);
    json_decref (notes);
    json_decref (merged);
}

static void s_rna_tick (s_worker_t *w)
{
    if (!w->rna) return;
    bmq_inspect_tick (w->rna);
    bmq_inspect_state_t state = bmq_inspect_state (w->rna);
    if (state == BMQ_INSPECT_FETCHING) return;
    if (state == BMQ_INSPECT_DONE) s_rna_merge (w);
    else {
        bmq_warn ("no RNA through the gateway after %d tries (%s): validating with the curated palette only",
                  bmq_inspect_rounds (w->rna), bmq_inspect_detail (w->rna));
        s_rna_status (w, "unavailable", bmq_inspect_detail (w->rna));
    }
    bmq_inspect_destroy (&w->rna);
}

/* ---- the loop ----------------------------------------------------------------- */

static int s_load (s_worker_t *w, bmq_config_t *cfg)
{
    char err[512], path[1024], inner[512];
    bmq_service_path (bmq_config_str (cfg, "validator.palette"), "proto/palette.yaml", path, sizeof path);
    w->doc = bmq_yaml_load_file (path, inner, sizeof inner);
    w->palette = w->doc ? bmq_palette_from_json (w->doc, inner, sizeof inner) : NULL;
    if (!w->palette) { bmq_error ("cannot load the palette: %s: %s", path, inner); return -1; }
    const char *keypath = bmq_config_str (cfg, "security.verdict_key_file");
    if (!*keypath || bmq_seal_key_load (keypath, &w->key, err, sizeof err)) {
        bmq_error ("no verdict key: %s", *keypath ? err : "security.verdict_key_file is not set");
        return -1;
    }
    w->seal_ttl_ms = bmq_config_int (cfg, "security.seal_ttl_ms") > 0 ? bmq_config_int (cfg, "security.seal_ttl_ms")
                                                                       : BMQ_SEAL_TTL_DEFAULT_MS;
    snprintf (w->target, sizeof w->target, "%s", *bmq_config_str (cfg, "executor.name") ? bmq_config_str (cfg, "executor.name") : "local");
    return 0;
}

static void s_on_broker (s_worker_t *w)
{
    bmq_envelope_t *env = bmq_bus_recv (w->sock, NULL);
    w->last_heard = bmq_mono_ms ();
    /* This DEALER talks to the broker only, whose server key the CURVE
     * handshake pinned: the sender is the gateway's key (a client socket gets
     * no ZAP metadata). What it hands us must be for a client whose role may
     * ask it (roles.def, "validator"). */
    if (env && w->curve && !env->auth_name[0]) {
        snprintf (env->auth_name, sizeof env->auth_name, "gateway");
        snprintf (env->auth_role, sizeof env->auth_role, "service");
    }
    if (env && env->type != BMQ_MSG_HEARTBEAT && bmq_roles_refused (w->sock, NULL, env, "validator", w->curve, 0, w->audit)) { }
    else if (!env || env->type == BMQ_MSG_HEARTBEAT) { }
    else if (env->type == BMQ_MSG_VALIDATE_REQUEST) s_validate (w, env);
    else if (env->type == BMQ_MSG_CAPABILITIES_REQUEST) s_capabilities (w, env);
    else if (env->type == BMQ_MSG_SCRIPT_REQUEST) {
        bmq_envelope_t *reply = bmq_worker_scripts_handle (w->script, &w->key, w->audit, env);
        bmq_bus_send_and_destroy (w->sock, NULL, &reply);
        w->handled++;
    }
    else {
        bmq_envelope_t *reply = bmq_envelope_error (env, "unsupported", "a validator does not handle %s",
                                                    bmq_msg_type_name (env->type));
        bmq_bus_send_and_destroy (w->sock, NULL, &reply);
    }
    bmq_envelope_destroy (&env);
}

int bmq_validator_worker_run (bmq_config_t *cfg)
{
    s_worker_t w = { 0 };
    int code = 1;
    if (s_load (&w, cfg)) goto done;
    w.interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms");
    w.liveness = (int) bmq_config_int (cfg, "heartbeat.liveness");
    w.broker = bmq_config_str (cfg, "gateway.validator_broker");
    w.audit = bmq_audit_new_from_config (cfg);
    w.curve = bmq_roles_curve (cfg);
    w.script = bmq_worker_scripts_new (cfg);
    s_connect (&w);
    if (!w.sock || !w.audit) goto done;
    s_rna_start (&w, cfg);
    bmq_info ("validator ready: %zu operations in the palette, broker %s", bmq_palette_count (w.palette), w.broker);

    int backoff = w.interval;
    while (!zsys_interrupted) {
        zsock_t *rna_sock = bmq_inspect_sock (w.rna);
        zmq_pollitem_t items[3] = {
            { zsock_resolve (w.sock), 0, ZMQ_POLLIN, 0 },
            { zsock_resolve (bmq_audit_sock (w.audit)), 0, ZMQ_POLLIN, 0 },
            { rna_sock ? zsock_resolve (rna_sock) : NULL, 0, ZMQ_POLLIN, 0 },
        };
        int64_t now = bmq_mono_ms (), wait = w.interval / 2;
        if (w.rna && bmq_inspect_due (w.rna) - now < wait) wait = bmq_inspect_due (w.rna) - now;
        if (zmq_poll (items, rna_sock ? 3 : 2, wait < 0 ? 0 : (long) wait) < 0 && zsys_interrupted) break;
        if (items[0].revents & ZMQ_POLLIN) { s_on_broker (&w); backoff = w.interval; }
        if (items[1].revents & ZMQ_POLLIN) {
            bmq_envelope_t *env = bmq_bus_recv (bmq_audit_sock (w.audit), NULL);
            if (env) bmq_audit_handle (w.audit, env);
            bmq_envelope_destroy (&env);
        }
        if (rna_sock && (items[2].revents & ZMQ_POLLIN)) bmq_inspect_on_message (w.rna);
        s_rna_tick (&w);
        now = bmq_mono_ms ();
        if (now - w.last_heard > (int64_t) w.interval * w.liveness) {
            bmq_warn ("broker silent for %lld ms, reconnecting in %d ms", (long long) (now - w.last_heard), backoff);
            zclock_sleep (backoff);
            if (backoff < 32 * w.interval) backoff *= 2;
            s_connect (&w);
            continue;
        }
        if (now - w.last_sent >= w.interval) {
            bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL,
                json_pack ("{s:s, s:s, s:I}", "service", "validator", "state", "ready", "pid", (json_int_t) getpid ()));
            bmq_bus_send_and_destroy (w.sock, NULL, &hb);
            w.last_sent = now;
        }
        bmq_audit_tick (w.audit);
    }
    bmq_info ("validator stopping after %lld replies", (long long) w.handled);
    bmq_audit_flush (w.audit, 1000);
    code = 0;
done:
    bmq_inspect_destroy (&w.rna);
    bmq_audit_destroy (&w.audit);
    bmq_worker_scripts_destroy (&w.script);
    zsock_destroy (&w.sock);
    bmq_palette_destroy (&w.palette);
    json_decref (w.doc);
    json_decref (w.rna_status);
    return code;
}
