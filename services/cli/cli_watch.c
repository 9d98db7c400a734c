/* cli_watch — `blendmq watch`: every progress event, as it happens. */
#include "bus.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* ---- watch ----------------------------------------------------------------- */

int bmq_cli_watch (const bmq_cli_opts_t *opts)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    zsock_t *sub = bmq_bus_connect (ZMQ_SUB, bmq_config_str (cfg, "gateway.events"), "gateway");
    bmq_config_destroy (&cfg);
    if (!sub) return 2;
    fprintf (stderr, "watching progress events (Ctrl+C to stop)\n");
    while (!zsys_interrupted) {
        bmq_envelope_t *env = bmq_bus_recv (sub, NULL);
        if (!env) continue;
        if (opts->json) {
            char *text = json_dumps (env->body, JSON_COMPACT);
            printf ("%s\n", text);
            free (text);
        }
        else if (env->type == BMQ_MSG_PROGRESS) {
            const char *event = bmq_body_str (env, "event");
            const char *error = bmq_body_str (env, "error");
            if (event && !strcmp (event, "step"))
                printf ("%s  step %lld/%lld  %s  %s  %.1f ms%s%s\n", bmq_body_str (env, "plan_id"),
                        (long long) bmq_body_int (env, "step", 0), (long long) bmq_body_int (env, "total", 0),
                        bmq_body_str (env, "operation") ? bmq_body_str (env, "operation") : "?", bmq_body_str (env, "status"),
                        json_number_value (json_object_get (env->body, "duration_ms")), error ? "  " : "", error ? error : "");
            else
                printf ("%s  plan %s (%lld/%lld steps)%s%s\n", bmq_body_str (env, "plan_id"), bmq_body_str (env, "status"),
                        (long long) bmq_body_int (env, "step", 0), (long long) bmq_body_int (env, "total", 0),
                        error ? "  " : "", error ? error : "");
        }
        fflush (stdout);
        bmq_envelope_destroy (&env);
    }
    zsock_destroy (&sub);
    return 0;
}

