/* validator_worker — READY, heartbeats both ways, reconnect with capped
 * exponential back-off when the broker falls silent (zguide ch. 4). */
#include "validator_worker.h"
#include "audit_client.h"
#include "bus.h"
#include "log.h"
#include "palette.h"
#include "plan_seal.h"
#include "plan_validator.h"
#include "service.h"

typedef struct {
    bmq_palette_t *palette;
    bmq_seal_key_t key;
    bmq_audit_t   *audit;
    const char    *broker;
    zsock_t       *sock;
    int64_t        last_heard, last_sent;
    int            interval, liveness;
    int64_t        handled;
} s_worker_t;

static void s_connect (s_worker_t *w)
{
    zsock_destroy (&w->sock);
    w->sock = bmq_bus_connect (ZMQ_DEALER, w->broker);
    bmq_envelope_t *ready = bmq_envelope_new (BMQ_MSG_WORKER_READY, NULL,
        json_pack ("{s:s, s:I}", "service", "validator", "operations", (json_int_t) bmq_palette_count (w->palette)));
    if (w->sock) bmq_bus_send (w->sock, NULL, ready);
    bmq_envelope_destroy (&ready);
    w->last_heard = w->last_sent = bmq_mono_ms ();
}

/* Validate, seal when accepted, reply, audit. */
static void s_validate (s_worker_t *w, const bmq_envelope_t *req)
{
    json_t *plan = json_object_get (req->body, "plan");
    double t0 = bmq_mono_us ();
    json_t *verdict = bmq_plan_validate (w->palette, plan);
    double us = bmq_mono_us () - t0;
    char hash[BMQ_HEX_DIGEST] = "";
    bmq_plan_hash (plan, hash);
    json_object_set_new (verdict, "plan_hash", json_string (hash));
    json_object_set_new (verdict, "validate_us", json_real (us));
    if (json_is_true (json_object_get (verdict, "accepted"))) {
        char seal[BMQ_HEX_DIGEST];
        bmq_seal_sign (&w->key, hash, seal);
        json_object_set_new (verdict, "seal", json_string (seal));
    }
    bmq_audit_record (w->audit, req->cid, "verdict",
        json_pack ("{s:O, s:s, s:O, s:f}", "accepted", json_object_get (verdict, "accepted"),
                   "plan_hash", hash, "errors", json_object_get (verdict, "errors"), "validate_us", us));
    bmq_envelope_t *reply = bmq_envelope_reply (req, BMQ_MSG_VALIDATE_REPLY, verdict);
    bmq_bus_send_and_destroy (w->sock, NULL, &reply);
    w->handled++;
}

int bmq_validator_worker_run (bmq_config_t *cfg)
{
    char err[512], path[1024], keypath[1024];
    s_worker_t w = { 0 };
    w.palette = bmq_palette_load (bmq_service_path (bmq_config_str (cfg, "validator.palette"), "proto/palette.yaml",
                                                    path, sizeof path), err, sizeof err);
    if (!w.palette) { bmq_error ("cannot load the palette: %s", err); return 1; }
    snprintf (keypath, sizeof keypath, "%s", bmq_config_str (cfg, "security.verdict_key_file"));
    if (!*keypath || bmq_seal_key_load (keypath, &w.key, err, sizeof err)) {
        bmq_error ("no verdict key: %s", *keypath ? err : "security.verdict_key_file is not set");
        bmq_palette_destroy (&w.palette);
        return 1;
    }
    w.interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms");
    w.liveness = (int) bmq_config_int (cfg, "heartbeat.liveness");
    w.broker = bmq_config_str (cfg, "gateway.validator_broker");
    w.audit = bmq_audit_new (bmq_config_str (cfg, "audit.endpoint"), w.interval, w.liveness);
    s_connect (&w);
    if (!w.sock || !w.audit) { bmq_palette_destroy (&w.palette); bmq_audit_destroy (&w.audit); zsock_destroy (&w.sock); return 1; }
    bmq_info ("validator ready: %zu operations in the palette, broker %s", bmq_palette_count (w.palette), w.broker);

    int backoff = w.interval;
    while (!zsys_interrupted) {
        zpoller_t *poller = zpoller_new (w.sock, bmq_audit_sock (w.audit), NULL);
        zsock_t *which = zpoller_wait (poller, w.interval / 2);
        zpoller_destroy (&poller);
        if (which == w.sock) {
            bmq_envelope_t *env = bmq_bus_recv (w.sock, NULL);
            w.last_heard = bmq_mono_ms ();
            backoff = w.interval;
            if (env && env->type == BMQ_MSG_VALIDATE_REQUEST) s_validate (&w, env);
            bmq_envelope_destroy (&env);
        }
        else if (which) {
            bmq_envelope_t *env = bmq_bus_recv (which, NULL);
            if (env) bmq_audit_handle (w.audit, env);
            bmq_envelope_destroy (&env);
        }
        int64_t now = bmq_mono_ms ();
        if (now - w.last_heard > (int64_t) w.interval * w.liveness) {
            bmq_warn ("broker silent for %lld ms, reconnecting in %d ms", (long long) (now - w.last_heard), backoff);
            zclock_sleep (backoff);
            if (backoff < 32 * w.interval) backoff *= 2;
            s_connect (&w);
            continue;
        }
        if (now - w.last_sent >= w.interval) {
            bmq_envelope_t *hb = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL,
                json_pack ("{s:s, s:s}", "service", "validator", "state", "ready"));
            bmq_bus_send_and_destroy (w.sock, NULL, &hb);
            w.last_sent = now;
        }
        bmq_audit_tick (w.audit);
    }
    bmq_info ("validator stopping after %lld verdicts", (long long) w.handled);
    bmq_audit_flush (w.audit, 1000);
    bmq_audit_destroy (&w.audit);
    zsock_destroy (&w.sock);
    bmq_palette_destroy (&w.palette);
    return 0;
}
