/* audit_service — receive audit records, store them in batches, acknowledge;
 * answer queries; prune old records on a schedule.
 *
 * A record is acknowledged only after the transaction holding it committed.
 * When a write fails nothing is acknowledged, the error is logged loudly, the
 * service reports "degraded: <why>" in its heartbeats and status (so
 * `blendmq status` shows it), and the senders keep their records and send
 * them again until a write succeeds. A record that can never be stored (too
 * big, malformed) is answered with an `error` and dropped by its sender. */
#include "audit_service.h"
#include "audit_chain.h"
#include "audit_intake.h"
#include "audit_query.h"
#include "audit_retention.h"
#include "audit_store.h"
#include "bus.h"
#include "log.h"
#include "peer.h"
#include "roles.h"

#include <unistd.h>

#define BATCH_MAX         512
#define FAIL_LOG_EVERY_MS 10000
#define VERIFY_EVERY_MS   1000     /* incremental verification of the chain (status shows it) */
#define VERIFY_STEP_ROWS  5000     /* rows per step of the rolling sweep: 1,000,000 records in about 200 s */
#define CAP_HIGH          90       /* % of audit.max_db_mb: prune the oldest… */
#define CAP_LOW           80       /* …down to this */

typedef struct {
    zframe_t       *rid;
    bmq_envelope_t *env;
    bmq_audit_row_t row;
    char           *data;
    char           *flag;
} s_item_t;

typedef struct {
    const char            *path;
    bmq_audit_store_t     *store;
    bmq_audit_chain_t     *chain;
    json_t                *chain_state;        /* the last verification (audit_chain.h) */
    char                   tamper[220];        /* "" while the chain verifies (a heartbeat state is at most 256 bytes) */
    int64_t                last_verify;
    int64_t                max_db_bytes;       /* audit.max_db_mb (0: no cap) */
    int                    prune_batch;
    int64_t                dropped;            /* records senders said they dropped */
    zhashx_t              *refusals;           /* "key|type|second" -> s_refusal_t, stored when the second is over */
    int64_t                refusals_dropped;   /* refusals beyond 4096 keys in a second: counted only */
    bmq_audit_retention_t *retention;
    zsock_t               *router;
    int64_t                stored, duplicates, rejected, commits, conflicts, refused, forged;
    bool                   curve;              /* security.curve (roles.h) */
    char                   instance[96];       /* this process, for its own records (alerts, refusals) */
    int64_t                own_seq;
    char                   write_error[256];   /* "" while writes succeed */
    int64_t                failed_batches;
    int64_t                last_fail_log;
    char                   state[500];
    int64_t                window_ms;          /* gather records this long into one commit */
} s_audit_t;

static const char *s_state (s_audit_t *self)
{
    if (self->tamper[0]) {
        snprintf (self->state, sizeof self->state, "tampered: %s", self->tamper);
        return self->state;
    }
    if (!self->write_error[0]) return "ok";
    snprintf (self->state, sizeof self->state, "degraded: %s", self->write_error);
    return self->state;
}

static void s_write_failed (s_audit_t *self, const char *why, int n)
{
    bool first = !self->write_error[0];
    snprintf (self->write_error, sizeof self->write_error, "%s", why);
    self->failed_batches++;
    int64_t now = bmq_mono_ms ();
    if (first || now - self->last_fail_log >= FAIL_LOG_EVERY_MS) {
        self->last_fail_log = now;
        bmq_error ("AUDIT WRITE FAILED: %s — %d record(s) not stored and not acknowledged; their senders keep "
                   "them and resend (%lld failed batches so far, database %s)",
                   why, n, (long long) self->failed_batches, self->path);
    }
}

static void s_write_succeeded (s_audit_t *self)
{
    if (!self->write_error[0]) return;
    bmq_warn ("audit writes recovered after %lld failed batches (last error: %s)",
              (long long) self->failed_batches, self->write_error);
    self->write_error[0] = 0;
    self->failed_batches = 0;
}

/* A record the audit service writes itself (origin "audit"): an alert or a
 * refusal. Inside the caller's transaction. 1 / -1 with err. */
static int s_put_own (s_audit_t *self, const char *cid, const char *kind, json_t *data, char *err, size_t errlen)
{
    char *text = json_dumps (data, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (data);
    if (!text) { snprintf (err, errlen, "cannot serialise an own record"); return -1; }
    bmq_audit_row_t row = { .ts_ms = bmq_now_ms (), .cid = cid && *cid ? cid : "-", .kind = kind, .sender = "audit",
                            .origin = "audit", .instance = self->instance, .seq = ++self->own_seq, .data = text };
    int rc = bmq_audit_store_put (self->store, &row, err, errlen);
    free (text);
    return rc < 0 ? -1 : 1;
}

/* A gateway (re)started (its "gateway.start" record): the requests an earlier
 * gateway process accepted and never ended died with it. Their stories end
 * here, so none is left open: request.end {outcome: lost}. Returns how many. */
static int s_close_lost (s_audit_t *self, const char *new_instance, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    const char *sql =
        "SELECT r.cid, r.instance FROM records r WHERE r.kind = 'request' AND r.origin = 'gateway' AND r.instance != ?1"
        " AND r.ts > ?2 AND NOT EXISTS (SELECT 1 FROM records e WHERE e.cid = r.cid AND e.kind = 'request.end')"
        " LIMIT 10000";
    if (sqlite3_prepare_v2 (bmq_audit_store_db (self->store), sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf (err, errlen, "cannot look for open requests: %s", sqlite3_errmsg (bmq_audit_store_db (self->store)));
        return -1;
    }
    sqlite3_bind_text (st, 1, new_instance, -1, SQLITE_STATIC);
    sqlite3_bind_int64 (st, 2, bmq_now_ms () - 7LL * 24 * 3600 * 1000);
    json_t *open = json_array ();
    while (sqlite3_step (st) == SQLITE_ROW)
        json_array_append_new (open, json_pack ("[s, s]", (const char *) sqlite3_column_text (st, 0),
                                                (const char *) sqlite3_column_text (st, 1)));
    sqlite3_finalize (st);
    int closed = 0;
    size_t i;
    json_t *o;
    json_array_foreach (open, i, o) {
        const char *cid = json_string_value (json_array_get (o, 0));
        if (s_put_own (self, cid, "request.end", json_pack ("{s:s, s:s, s:s}", "outcome", "lost", "reason",
                       "the gateway process that held this request stopped before answering it; a new one started",
                       "gateway_instance", json_string_value (json_array_get (o, 1))), err, errlen) < 0) {
            json_decref (open);
            return -1;
        }
        closed++;
    }
    json_decref (open);
    if (closed) bmq_warn ("%d request(s) of an earlier gateway process had no end: recorded as lost", closed);
    return closed;
}

/* Two different records under one (origin, instance, seq): somebody reuses a
 * name and numbers, maybe to have the real record ignored. Keep the evidence. */
static json_t *s_conflict_alert (const s_item_t *item)
{
    json_t *received = json_loads (item->row.data, 0, NULL);
    bmq_error ("AUDIT CONFLICT: %s (%s) seq %lld sent a record that differs from the one stored under the same numbers;"
               " stored as an alert", item->row.origin, item->row.instance, (long long) item->row.seq);
    return json_pack ("{s:s, s:s, s:s, s:I, s:s, s:s, s:o?, s:s?}", "alert", "conflicting_duplicate",
                      "origin", item->row.origin, "instance", item->row.instance, "seq", (json_int_t) item->row.seq,
                      "kind", item->row.kind, "cid", item->row.cid, "data", received, "flag", item->row.flag);
}

/* Store a batch in one transaction: one fsync for all. true when committed. */
static bool s_store_batch (s_audit_t *self, s_item_t *items, int n)
{
    char err[512];
    if (bmq_audit_store_begin (self->store)) {
        snprintf (err, sizeof err, "cannot begin a transaction: %s", bmq_audit_store_error (self->store));
        s_write_failed (self, err, n);
        return false;
    }
    int added = 0, conflicts = 0, forged = 0;
    int64_t dropped = 0;
    for (int i = 0; i < n; i++) {
        forged += items[i].row.flag != NULL && strstr (items[i].row.flag, "forged_origin") != NULL;
        if (!strcmp (items[i].row.kind, "audit.dropped")) {
            json_t *d = json_loads (items[i].row.data, 0, NULL);
            dropped += json_integer_value (json_object_get (d, "count"));
            json_decref (d);
        }
        int rc = bmq_audit_store_put (self->store, &items[i].row, err, sizeof err);
        if (rc == 2) {          /* a conflicting duplicate: an alert, never a silent ignore */
            rc = s_put_own (self, items[i].row.cid, "alert", s_conflict_alert (&items[i]), err, sizeof err);
            if (rc > 0) conflicts++;
            rc = rc < 0 ? -1 : 0;
        }
        if (rc == 1 && !items[i].row.flag && !strcmp (items[i].row.kind, "gateway.start")
            && !strcmp (items[i].row.origin, "gateway") && s_close_lost (self, items[i].row.instance, err, sizeof err) < 0)
            rc = -1;
        if (rc < 0) {
            bmq_audit_store_rollback (self->store);
            s_write_failed (self, err, n);
            return false;
        }
        added += rc;
    }
    if (bmq_audit_store_commit (self->store)) {
        snprintf (err, sizeof err, "commit failed: %s", bmq_audit_store_error (self->store));
        bmq_audit_store_rollback (self->store);
        s_write_failed (self, err, n);
        return false;
    }
    self->stored += added + conflicts;
    self->duplicates += n - added - conflicts;
    self->conflicts += conflicts;
    self->forged += forged;
    self->dropped += dropped;
    self->commits++;
    s_write_succeeded (self);
    return true;
}

static void s_finish_batch (s_audit_t *self, s_item_t *items, int n)
{
    bool stored = s_store_batch (self, items, n);
    for (int i = 0; i < n; i++) {
        if (stored) {
            /* acknowledged under the name the sender gave it: its queue's key */
            bmq_envelope_t *ack = bmq_envelope_reply (items[i].env, BMQ_MSG_AUDIT_ACK,
                json_pack ("{s:I, s:s}", "seq", (json_int_t) items[i].row.seq, "origin", items[i].row.instance));
            bmq_bus_send_and_destroy (self->router, items[i].rid, &ack);
        }
        free (items[i].data);
        free (items[i].flag);
        zframe_destroy (&items[i].rid);
        bmq_envelope_destroy (&items[i].env);
    }
}

static void s_reject (s_audit_t *self, zframe_t *rid, const bmq_envelope_t *env, const char *why)
{
    self->rejected++;
    const char *origin = bmq_body_str (env, "origin");
    bmq_warn ("rejected audit record from %s (origin %s, seq %lld): %s", env->sender, origin ? origin : "?",
              (long long) bmq_body_int (env, "seq", 0), why);
    bmq_envelope_t *r = bmq_envelope_error (env, "bad_record", "audit record not stored: %s", why);
    /* (origin, seq) lets the sender drop this record instead of resending it */
    json_object_set_new (r->body, "seq", json_integer (bmq_body_int (env, "seq", 0)));
    if (origin) json_object_set_new (r->body, "origin", json_string (origin));
    bmq_bus_send_and_destroy (self->router, rid, &r);
}

/* A refusal is audited here directly: this is the store. Refusals are
 * counted per key and message type per second and stored once the second is
 * over (s_refusals_flush), one transaction for all: a flood from a refused
 * key costs no fsync per message. For an audit.record the answer names
 * (origin, seq) so the sender drops it rather than resend. */
typedef struct { char *cid; json_t *data; int64_t second, count, first_ms, last_ms; } s_refusal_t;

static void s_refusal_free (void **item)
{
    s_refusal_t *r = *item;
    if (!r) return;
    free (r->cid);
    json_decref (r->data);
    free (r);
    *item = NULL;
}

static void s_refusals_flush (s_audit_t *self, bool all)
{
    if ((!self->refusals || !zhashx_size (self->refusals)) && !self->refusals_dropped) return;
    int64_t now_s = bmq_now_ms () / 1000;
    zlistx_t *done = zlistx_new ();
    for (s_refusal_t *r = self->refusals ? zhashx_first (self->refusals) : NULL; r; r = zhashx_next (self->refusals))
        if (all || r->second < now_s) zlistx_add_end (done, (void *) zhashx_cursor (self->refusals));
    int64_t dropped = self->refusals_dropped;
    if ((!zlistx_size (done) && !dropped) || bmq_audit_store_begin (self->store)) { zlistx_destroy (&done); return; }
    char err[512] = "";
    int rc = 0, n = 0;
    if (dropped) {
        rc = s_put_own (self, NULL, "audit.dropped", json_pack ("{s:I, s:s}", "count", (json_int_t) dropped, "reason",
                        "refusals of more than 4096 keys in one second: counted, not recorded one by one"), err, sizeof err) < 0 ? -1 : 0;
        n++;
    }
    for (const char *key = zlistx_first (done); key && rc == 0; key = zlistx_next (done)) {
        s_refusal_t *r = zhashx_lookup (self->refusals, key);
        json_t *data = json_incref (r->data);
        json_object_set_new (data, "count", json_integer (r->count));
        json_object_set_new (data, "first_ms", json_integer (r->first_ms));
        json_object_set_new (data, "last_ms", json_integer (r->last_ms));
        rc = s_put_own (self, r->cid, "auth.refused", data, err, sizeof err) < 0 ? -1 : 0;
        n++;
    }
    if (rc || bmq_audit_store_commit (self->store)) {
        bmq_audit_store_rollback (self->store);
        bmq_error ("cannot store refusals: %s (kept for the next turn)", err);
    }
    else {
        for (const char *key = zlistx_first (done); key; key = zlistx_next (done)) zhashx_delete (self->refusals, key);
        self->stored += n;
        self->refusals_dropped -= dropped;
    }
    zlistx_destroy (&done);
}

static void s_refuse (s_audit_t *self, zframe_t *rid, const bmq_envelope_t *env, const bmq_principal_t *who, const char *why)
{
    self->refused++;
    int64_t now = bmq_now_ms ();
    char key[300];
    snprintf (key, sizeof key, "%s|%s|%lld", who->name[0] ? who->name : env->auth_name, bmq_msg_type_name (env->type),
              (long long) (now / 1000));
    if (!self->refusals) {
        self->refusals = zhashx_new ();
        zhashx_set_destructor (self->refusals, s_refusal_free);
    }
    s_refusal_t *r = zhashx_lookup (self->refusals, key);
    if (r) { r->count++; r->last_ms = now; }
    else if (zhashx_size (self->refusals) < 4096) {
        bmq_warn ("audit refused %s from '%s' (%s): %s", bmq_msg_type_name (env->type), env->auth_name, env->auth_role, why);
        r = calloc (1, sizeof *r);
        r->cid = strdup (env->cid[0] ? env->cid : "-");
        r->data = bmq_roles_refusal_record (env, "audit", who, why);
        r->second = now / 1000;
        r->count = 1;
        r->first_ms = r->last_ms = now;
        zhashx_insert (self->refusals, key, r);
    }
    else self->refusals_dropped++;      /* in status; and so many keys in one second is itself in the log */
    bmq_envelope_t *reply = bmq_roles_refusal (env, why);
    if (!reply) return;
    if (env->type == BMQ_MSG_AUDIT_RECORD) {
        json_object_set_new (reply->body, "seq", json_integer (bmq_body_int (env, "seq", 0)));
        if (bmq_body_str (env, "origin")) json_object_set_new (reply->body, "origin", json_string (bmq_body_str (env, "origin")));
    }
    bmq_bus_send_and_destroy (self->router, rid, &reply);
}

static void s_answer_query (s_audit_t *self, zframe_t *rid, const bmq_envelope_t *env)
{
    char err[512];
    bool bad_request;
    json_t *body = bmq_audit_query (self->store, env->body, &bad_request, err, sizeof err);
    bmq_envelope_t *r = body ? bmq_envelope_reply (env, BMQ_MSG_AUDIT_RESULT, body)
                             : bmq_envelope_error (env, bad_request ? "bad_query" : "unavailable", "%s", err);
    if (!body && !bad_request) bmq_error ("%s", err);
    bmq_bus_send_and_destroy (self->router, rid, &r);
}

/* Verify the chain: incrementally (from the last record verified) for the
 * service's own state, which heartbeats and `status` show; in full for
 * `blendmq audit verify`. */
static json_t *s_verify (s_audit_t *self, bool incremental)
{
    char err[512];
    json_t *result = bmq_audit_chain_verify (self->chain, bmq_audit_store_db (self->store), incremental,
                                             incremental ? VERIFY_STEP_ROWS : 0, err, sizeof err);
    if (!result) { bmq_error ("cannot verify the audit trail: %s", err); return NULL; }
    json_t *bad = json_object_get (result, "first_bad");
    char was[sizeof self->tamper];
    snprintf (was, sizeof was, "%s", self->tamper);
    /* a finding stands until a whole clean pass (a sweep from the start, or `audit verify`) */
    if (bad) snprintf (self->tamper, sizeof self->tamper, "%s", json_string_value (json_object_get (bad, "reason")));
    else if (json_is_true (json_object_get (result, "pass_clean"))) self->tamper[0] = 0;
    if (self->tamper[0] && strcmp (was, self->tamper))
        bmq_error ("AUDIT TAMPERING: %s (blendmq audit verify)", self->tamper);
    json_decref (self->chain_state);
    self->chain_state = json_incref (result);
    return result;
}

static void s_answer_status (s_audit_t *self, zframe_t *rid, const bmq_envelope_t *env)
{
    json_decref (s_verify (self, true));
    bmq_envelope_t *r = bmq_envelope_reply (env, BMQ_MSG_STATUS_REPLY,
        json_pack ("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:I}", "service", "audit", "state", s_state (self),
                   "records", (json_int_t) self->stored, "duplicates", (json_int_t) self->duplicates,
                   "conflicts", (json_int_t) self->conflicts, "forged_origins", (json_int_t) self->forged,
                   "refused", (json_int_t) self->refused,
                   "rejected", (json_int_t) self->rejected, "commits", (json_int_t) self->commits,
                   "pruned", (json_int_t) bmq_audit_retention_pruned (self->retention), "database", self->path,
                   "dropped", (json_int_t) self->dropped));
    if (self->chain_state) json_object_set (r->body, "chain", self->chain_state);
    bmq_bus_send_and_destroy (self->router, rid, &r);
}

/* audit.query {verify: {incremental?}}: the chain, not a page of records. */
static void s_answer_verify (s_audit_t *self, zframe_t *rid, const bmq_envelope_t *env)
{
    const json_t *v = json_object_get (env->body, "verify");
    json_t *result = s_verify (self, json_is_true (json_object_get (v, "incremental")));
    bmq_envelope_t *r = result ? bmq_envelope_reply (env, BMQ_MSG_AUDIT_RESULT, json_pack ("{s:[], s:o}", "records", "verify", result))
                               : bmq_envelope_error (env, "unavailable", "cannot read the audit trail to verify it");
    bmq_bus_send_and_destroy (self->router, rid, &r);
}

/* audit.max_db_mb: past CAP_HIGH % the oldest records go (a chained
 * audit.pruned record says which), down to CAP_LOW %. */
static void s_enforce_cap (s_audit_t *self)
{
    if (self->max_db_bytes <= 0 || bmq_audit_store_used_bytes (self->store) * 100 < self->max_db_bytes * CAP_HIGH) return;
    char err[512], reason[96];
    snprintf (reason, sizeof reason, "size cap: audit.max_db_mb = %lld", (long long) (self->max_db_bytes >> 20));
    int64_t pruned = 0;
    for (int round = 0; round < 100 && bmq_audit_store_used_bytes (self->store) * 100 >= self->max_db_bytes * CAP_LOW; round++) {
        int n = bmq_audit_store_prune_why (self->store, INT64_MAX, self->prune_batch, reason, err, sizeof err);
        if (n < 0) { bmq_error ("AUDIT SIZE CAP: cannot prune: %s", err); break; }
        if (n == 0) break;
        pruned += n;
        self->stored -= n - 1;          /* the audit.pruned record is one more */
    }
    if (pruned) bmq_warn ("audit database reached %d%% of audit.max_db_mb (%lld MB): the oldest %lld records were pruned"
                          " (an audit.pruned record says which)", CAP_HIGH, (long long) (self->max_db_bytes >> 20), (long long) pruned);
}

/* Handle one message; returns true when it joined the batch (ownership taken). */
static bool s_handle (s_audit_t *self, zframe_t *rid, bmq_envelope_t *env, s_item_t *slot)
{
    char err[512];
    /* services write records, viewers read (roles.def, "audit") */
    bmq_principal_t who;
    if (bmq_roles_check (env, "audit", self->curve, 0, &who, err, sizeof err)) { s_refuse (self, rid, env, &who, err); return false; }
    if (bmq_answer_heartbeat (self->router, rid, env, "audit", s_state (self))) return false;
    switch (env->type) {
    case BMQ_MSG_AUDIT_RECORD:
        if (bmq_audit_intake (env, &slot->row, &slot->data, &slot->flag, err, sizeof err)) { s_reject (self, rid, env, err); return false; }
        slot->rid = rid;
        slot->env = env;
        return true;
    case BMQ_MSG_AUDIT_QUERY:
        if (json_object_get (env->body, "verify")) s_answer_verify (self, rid, env);
        else s_answer_query (self, rid, env);
        return false;
    case BMQ_MSG_STATUS_REQUEST: s_answer_status (self, rid, env); return false;
    default: {
        bmq_envelope_t *r = bmq_envelope_error (env, "unsupported", "audit does not handle %s", bmq_msg_type_name (env->type));
        bmq_bus_send_and_destroy (self->router, rid, &r);
        return false;
    }
    }
}

static void s_prune_step (s_audit_t *self)
{
    char err[512];
    int n = bmq_audit_retention_step (self->retention, self->store, bmq_now_ms (), err, sizeof err);
    if (n < 0) bmq_error ("AUDIT RETENTION FAILED: %s (retrying at the next interval)", err);
    else if (n > 0) self->stored -= n - 1;      /* and one audit.pruned record that says so */
}

static int s_open (s_audit_t *self, bmq_config_t *cfg)
{
    char err[512];
    self->path = bmq_config_str (cfg, "audit.database");
    self->window_ms = bmq_config_int (cfg, "audit.commit_window_ms");
    self->curve = bmq_roles_curve (cfg);
    snprintf (self->instance, sizeof self->instance, "audit-%d-%lld", (int) getpid (), (long long) bmq_now_ms ());
    self->store = bmq_audit_store_open (self->path, err, sizeof err);
    if (!self->store) { bmq_error ("%s", err); return -1; }
    self->chain = bmq_audit_chain_open (self->path, bmq_audit_store_db (self->store), err, sizeof err);
    if (!self->chain) { bmq_error ("%s", err); return -1; }
    bmq_audit_store_set_chain (self->store, self->chain);
    if (bmq_audit_chain_problem (self->chain) && bmq_audit_store_begin (self->store) == 0) {
        if (s_put_own (self, NULL, "alert", json_pack ("{s:s, s:s}", "alert", "audit_tampering", "found",
                       bmq_audit_chain_problem (self->chain)), err, sizeof err) < 0 || bmq_audit_store_commit (self->store)) {
            bmq_audit_store_rollback (self->store);
            bmq_error ("cannot record what the audit found at start: %s", err);
        }
    }
    self->max_db_bytes = bmq_config_int (cfg, "audit.max_db_mb") * 1024 * 1024;
    self->prune_batch = (int) bmq_config_int (cfg, "audit.prune_batch");
    if (self->prune_batch <= 0) self->prune_batch = 500;
    bmq_audit_intake_set_max_skew_ms (bmq_config_int (cfg, "audit.max_skew_s") * 1000);
    int64_t max_mb = bmq_config_int (cfg, "audit.max_size_mb");
    if (bmq_audit_store_set_max_size (self->store, max_mb * 1024 * 1024))
        bmq_warn ("cannot cap the audit database at %lld MB", (long long) max_mb);
    int64_t days = bmq_config_int (cfg, "audit.retention_days");
    self->retention = bmq_audit_retention_new (days * 86400000, bmq_config_int (cfg, "audit.prune_interval_s") * 1000,
                                               (int) bmq_config_int (cfg, "audit.prune_batch"));
    self->router = bmq_bus_bind (ZMQ_ROUTER, bmq_config_str (cfg, "audit.endpoint"));
    if (!self->router || !self->retention) return -1;
    self->stored = bmq_audit_store_count (self->store);
    bmq_info ("audit ready on %s, database %s (%lld records, schema %d); retention %s%lld days; "
              "fsync: WAL, synchronous=FULL, one commit per batch of up to %d records, acknowledged after commit",
              bmq_config_str (cfg, "audit.endpoint"), self->path, (long long) self->stored,
              bmq_audit_store_version (self->store), days > 0 ? "" : "off, ", (long long) days, BATCH_MAX);
    return 0;
}

static void s_close (s_audit_t *self)
{
    zsock_destroy (&self->router);
    bmq_audit_retention_destroy (&self->retention);
    bmq_audit_store_close (&self->store);
    bmq_audit_chain_destroy (&self->chain);
    json_decref (self->chain_state);
}

int bmq_audit_service_run (bmq_config_t *cfg)
{
    s_audit_t self = { 0 };
    if (s_open (&self, cfg)) { s_close (&self); return 1; }
    zpoller_t *poller = zpoller_new (self.router, NULL);
    s_item_t batch[BATCH_MAX];
    while (!zsys_interrupted) {
        int64_t wait = bmq_audit_retention_wait_ms (self.retention, bmq_now_ms ());
        zpoller_wait (poller, wait < 1000 ? (int) wait : 1000);
        if (zpoller_terminated (poller)) break;
        int n = 0;
        int64_t first = 0;
        /* drain what is there, and what comes within the commit window after
         * the first record, up to a batch: one fsync for many records. A plan's
         * steps arrive a few ms apart; committing each alone costs an fsync per
         * step and slows the Blender sharing these cores. Acks wait for the
         * commit; senders never wait for acks. */
        while (n < BATCH_MAX) {
            if (!(zsock_events (self.router) & ZMQ_POLLIN)) {
                int64_t left = n ? first + self.window_ms - bmq_mono_ms () : 0;
                if (left <= 0 || !zpoller_wait (poller, (int) left)) break;
                continue;
            }
            zframe_t *rid = NULL;
            bmq_envelope_t *env = bmq_bus_recv (self.router, &rid);
            if (!env) continue;
            if (s_handle (&self, rid, env, &batch[n])) { if (!n) first = bmq_mono_ms (); n++; continue; }
            zframe_destroy (&rid);
            bmq_envelope_destroy (&env);
        }
        if (n) s_finish_batch (&self, batch, n);
        /* one small prune batch between write batches: writers never wait long */
        s_prune_step (&self);
        if (n) s_enforce_cap (&self);
        s_refusals_flush (&self, false);
        if (bmq_mono_ms () - self.last_verify >= VERIFY_EVERY_MS) {
            self.last_verify = bmq_mono_ms ();
            json_decref (s_verify (&self, true));
        }
    }
    s_refusals_flush (&self, true);
    zhashx_destroy (&self.refusals);
    bmq_info ("audit stopping (%lld records stored, %lld duplicates ignored, %lld rejected)",
              (long long) self.stored, (long long) self.duplicates, (long long) self.rejected);
    zpoller_destroy (&poller);
    s_close (&self);
    return 0;
}
