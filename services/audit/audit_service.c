/* audit_service — receive audit records, store them in batches, acknowledge.
 *
 * A record is acknowledged only after the transaction holding it committed;
 * when a write fails nothing is acknowledged, the error is logged loudly, and
 * the senders keep the records and send them again. */
#include "audit_service.h"
#include "audit_store.h"
#include "bus.h"
#include "log.h"
#include "peer.h"

#define BATCH_MAX 512

typedef struct { zframe_t *rid; bmq_envelope_t *env; } s_item_t;

static void s_reply_batch (zsock_t *router, s_item_t *items, int n, bool stored)
{
    for (int i = 0; i < n; i++) {
        if (stored) {
            bmq_envelope_t *ack = bmq_envelope_reply (items[i].env, BMQ_MSG_AUDIT_ACK,
                json_pack ("{s:I, s:s}", "seq", (json_int_t) bmq_body_int (items[i].env, "seq", 0),
                           "origin", bmq_body_str (items[i].env, "origin") ? bmq_body_str (items[i].env, "origin") : ""));
            bmq_bus_send_and_destroy (router, items[i].rid, &ack);
        }
        zframe_destroy (&items[i].rid);
        bmq_envelope_destroy (&items[i].env);
    }
}

/* Store a batch in one transaction. true when committed. */
static bool s_store_batch (bmq_audit_store_t *store, s_item_t *items, int n, int64_t *stored_total)
{
    char err[512];
    if (bmq_audit_store_begin (store)) { bmq_error ("AUDIT WRITE FAILED: cannot begin a transaction"); return false; }
    int added = 0;
    for (int i = 0; i < n; i++) {
        const bmq_envelope_t *e = items[i].env;
        const char *origin = bmq_body_str (e, "origin");
        bmq_audit_row_t row = {
            .ts_ms = e->ts_ms, .cid = e->cid, .kind = bmq_body_str (e, "kind"), .sender = e->sender,
            .origin = origin ? origin : e->sender, .seq = bmq_body_int (e, "seq", 0),
            .data = json_object_get (e->body, "data"),
        };
        int rc = bmq_audit_store_put (store, &row, err, sizeof err);
        if (rc < 0) {
            bmq_error ("AUDIT WRITE FAILED: %s (records kept by their senders)", err);
            bmq_audit_store_rollback (store);
            return false;
        }
        added += rc;
    }
    if (bmq_audit_store_commit (store)) {
        bmq_error ("AUDIT WRITE FAILED: commit failed (disk full?); records kept by their senders");
        bmq_audit_store_rollback (store);
        return false;
    }
    *stored_total += added;
    return true;
}

int bmq_audit_service_run (bmq_config_t *cfg)
{
    char err[512];
    const char *path = bmq_config_str (cfg, "audit.database");
    bmq_audit_store_t *store = bmq_audit_store_open (path, err, sizeof err);
    if (!store) { bmq_error ("%s", err); return 1; }
    zsock_t *router = bmq_bus_bind (ZMQ_ROUTER, bmq_config_str (cfg, "audit.endpoint"));
    if (!router) { bmq_audit_store_close (&store); return 1; }
    int64_t stored = bmq_audit_store_count (store);
    bmq_info ("audit ready on %s, database %s (%lld records)", bmq_config_str (cfg, "audit.endpoint"),
              path, (long long) stored);

    zpoller_t *poller = zpoller_new (router, NULL);
    s_item_t batch[BATCH_MAX];
    while (!zsys_interrupted) {
        if (!zpoller_wait (poller, 1000)) continue;
        int n = 0;
        /* drain what is there, up to a batch: one fsync for many records */
        while (n < BATCH_MAX && (zsock_events (router) & ZMQ_POLLIN)) {
            zframe_t *rid = NULL;
            bmq_envelope_t *env = bmq_bus_recv (router, &rid);
            if (!env) continue;
            if (bmq_answer_heartbeat (router, rid, env, "audit", "ok")) { }
            else if (env->type == BMQ_MSG_STATUS_REQUEST) {
                bmq_envelope_t *r = bmq_envelope_reply (env, BMQ_MSG_STATUS_REPLY,
                    json_pack ("{s:s, s:s, s:I, s:s}", "service", "audit", "state", "ok",
                               "records", (json_int_t) stored, "database", path));
                bmq_bus_send_and_destroy (router, rid, &r);
            }
            else if (env->type == BMQ_MSG_AUDIT_RECORD) {
                batch[n].rid = rid;
                batch[n].env = env;
                n++;
                continue;
            }
            else {
                bmq_envelope_t *r = bmq_envelope_error (env, "unsupported", "audit does not handle %s",
                                                        bmq_msg_type_name (env->type));
                bmq_bus_send_and_destroy (router, rid, &r);
            }
            zframe_destroy (&rid);
            bmq_envelope_destroy (&env);
        }
        if (n) s_reply_batch (router, batch, n, s_store_batch (store, batch, n, &stored));
    }
    bmq_info ("audit stopping (%lld records stored)", (long long) stored);
    zpoller_destroy (&poller);
    zsock_destroy (&router);
    bmq_audit_store_close (&store);
    return 0;
}
