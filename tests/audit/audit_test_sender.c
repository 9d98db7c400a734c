/* audit_test_sender — a stand-in for a blendmq service that emits audit
 * records through bmq_audit_t, for the restart, spool and CLI tests and the
 * ingest benchmark.
 *
 *   audit_test_sender --name NAME --plans N [--per-plan K] [--rate PLANS_PER_S]
 *                     [--wait-ms T] [--data-bytes B] [--exit-after-emit]
 *
 * Configuration comes from the environment (BLENDMQ_AUDIT_ENDPOINT,
 * BLENDMQ_AUDIT_SPOOL_DIR, BLENDMQ_HEARTBEAT_*), through bmq_audit_new_from_config
 * like a service. Plan i is story "story-NNNN" with plan_id "p-NNNN"; its
 * records are kinds request, verdict, plan.start, step..., plan.end cycling.
 * Prints JSON lines: start {origin, loaded, spool}, emitted {records}, and
 * done {origin, emitted, pending, dropped, ms}. After emitting it waits up to
 * --wait-ms for every record to be acknowledged (unless --exit-after-emit).
 * Exit 0 when nothing is pending, 3 otherwise. SIGTERM stops it cleanly. */
#include "audit_client.h"
#include "bus.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_kinds[] = { "request", "verdict", "plan.start", "step", "step", "step", "plan.end" };

typedef struct {
    const char *name;
    int         plans, per_plan, wait_ms, data_bytes;
    double      rate;
    bool        exit_after_emit;
} s_args_t;

static int s_parse (int argc, char **argv, s_args_t *a)
{
    *a = (s_args_t) { .name = "sender", .plans = 10, .per_plan = 5, .wait_ms = 60000 };
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp (k, "--exit-after-emit")) { a->exit_after_emit = true; continue; }
        if (!v) return -1;
        if (!strcmp (k, "--name")) a->name = v;
        else if (!strcmp (k, "--plans")) a->plans = atoi (v);
        else if (!strcmp (k, "--per-plan")) a->per_plan = atoi (v);
        else if (!strcmp (k, "--rate")) a->rate = atof (v);
        else if (!strcmp (k, "--wait-ms")) a->wait_ms = atoi (v);
        else if (!strcmp (k, "--data-bytes")) a->data_bytes = atoi (v);
        else return -1;
        i++;
    }
    return a->plans >= 0 && a->per_plan > 0 ? 0 : -1;
}

static void s_emit_plan (bmq_audit_t *audit, const s_args_t *a, int plan, char *pad)
{
    char cid[32], plan_id[32];
    snprintf (cid, sizeof cid, "story-%04d", plan);
    snprintf (plan_id, sizeof plan_id, "p-%04d", plan);
    for (int j = 0; j < a->per_plan; j++) {
        json_t *data = json_pack ("{s:s, s:i, s:s}", "plan_id", plan_id, "n", j, "by", a->name);
        if (pad) json_object_set_new (data, "pad", json_string (pad));
        bmq_audit_record (audit, cid, s_kinds[j % 7], data);
    }
}

/* Serve the audit socket until `until_ms` (monotonic). */
static void s_serve (bmq_audit_t *audit, zpoller_t *poller, int64_t until_ms)
{
    do {
        int64_t left = until_ms - bmq_mono_ms ();
        zsock_t *which = zpoller_wait (poller, left > 100 ? 100 : left > 0 ? (int) left : 0);
        while (which && (zsock_events (which) & ZMQ_POLLIN)) {
            bmq_envelope_t *env = bmq_bus_recv (which, NULL);
            if (env) bmq_audit_handle (audit, env);
            bmq_envelope_destroy (&env);
        }
        bmq_audit_tick (audit);
    } while (bmq_mono_ms () < until_ms && !zsys_interrupted);
}

int main (int argc, char **argv)
{
    s_args_t a;
    if (s_parse (argc, argv, &a)) { fprintf (stderr, "usage: see the header of audit_test_sender.c\n"); return 2; }
    char err[256];
    bmq_config_t *cfg = bmq_config_load (NULL, err, sizeof err);
    if (!cfg) { fprintf (stderr, "%s\n", err); return 2; }
    bmq_log_init (a.name, false, bmq_log_level_parse (bmq_config_str (cfg, "log.level")));
    bmq_envelope_set_sender (a.name);
    zsys_init ();
    zsys_set_logstream (NULL);
    /* CURVE: the key named like the sender when there is one (a service), else the planner's */
    const char *key = getenv ("BLENDMQ_TEST_KEY");
    if (!key) {
        char path[1200];
        snprintf (path, sizeof path, "%s/%s.cert_secret", bmq_config_str (cfg, "security.keys_dir"), a.name);
        key = zsys_file_exists (path) ? a.name : "planner";
    }
    if (bmq_bus_security_init (cfg, key, err, sizeof err)) { fprintf (stderr, "security: %s\n", err); bmq_config_destroy (&cfg); return 2; }
    bmq_audit_t *audit = bmq_audit_new_from_config (cfg);
    bmq_config_destroy (&cfg);
    if (!audit) return 2;
    char *pad = NULL;
    if (a.data_bytes > 0) { pad = malloc ((size_t) a.data_bytes + 1); memset (pad, 'x', (size_t) a.data_bytes); pad[a.data_bytes] = 0; }
    printf ("{\"event\":\"start\",\"origin\":\"%s\",\"loaded\":%zu,\"spool\":\"%s\"}\n", bmq_audit_origin (audit),
            bmq_audit_pending (audit), bmq_audit_spool_path (audit) ? bmq_audit_spool_path (audit) : "");
    fflush (stdout);

    zpoller_t *poller = zpoller_new (bmq_audit_sock (audit), NULL);
    int64_t start = bmq_mono_ms ();
    int emitted_plans = 0;
    for (; emitted_plans < a.plans && !zsys_interrupted; emitted_plans++) {
        s_emit_plan (audit, &a, emitted_plans, pad);
        int64_t due = a.rate > 0 ? start + (int64_t) ((emitted_plans + 1) * 1000.0 / a.rate) : bmq_mono_ms ();
        s_serve (audit, poller, due);
    }
    long emitted = (long) emitted_plans * a.per_plan;
    printf ("{\"event\":\"emitted\",\"records\":%ld,\"ms\":%lld}\n", emitted, (long long) (bmq_mono_ms () - start));
    fflush (stdout);
    if (!a.exit_after_emit) {
        int64_t end = bmq_mono_ms () + a.wait_ms;
        while (bmq_audit_pending (audit) && bmq_mono_ms () < end && !zsys_interrupted)
            s_serve (audit, poller, bmq_mono_ms () + 100);
    }
    size_t pending = bmq_audit_pending (audit);
    printf ("{\"event\":\"done\",\"origin\":\"%s\",\"emitted\":%ld,\"pending\":%zu,\"dropped\":%zu,\"ms\":%lld}\n",
            bmq_audit_origin (audit), emitted, pending, bmq_audit_dropped (audit),
            (long long) (bmq_mono_ms () - start));
    fflush (stdout);
    zpoller_destroy (&poller);
    bmq_audit_destroy (&audit);
    free (pad);
    return pending ? 3 : 0;
}
