/* cli_status — `blendmq status`: every service's health, as the gateway sees it. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* ---- status ---------------------------------------------------------------- */

static int s_on_status (const bmq_envelope_t *env, void *arg)
{
    bool json = *(bool *) arg;
    if (env->type != BMQ_MSG_STATUS_REPLY) return BMQ_CLI_CONTINUE;
    if (json) {
        char *text = json_dumps (env->body, JSON_COMPACT);
        printf ("%s\n", text);
        free (text);
    }
    bool all = true;
    printf ("%s", json ? "" : "gateway    ok\n");
    size_t i;
    json_t *s;
    json_array_foreach (json_object_get (env->body, "services"), i, s) {
        bool alive = json_is_true (json_object_get (s, "alive"));
        all = all && alive;
        if (json) continue;
        const char *name = json_string_value (json_object_get (s, "name"));
        const char *state = json_string_value (json_object_get (s, "state"));
        if (!strcmp (name, "validator"))
            printf ("%-10s %s  (%lld workers, %lld busy)\n", name, alive ? "ok" : "DOWN",
                    (long long) json_integer_value (json_object_get (s, "workers")),
                    (long long) json_integer_value (json_object_get (s, "busy")));
        else
            printf ("%-10s %s  (%s)\n", name, alive ? "ok" : "DOWN", state ? state : "");
    }
    if (!json) printf ("endpoint   %s\nevents     %s\n", json_string_value (json_object_get (json_object_get (env->body, "endpoints"), "gateway")),
                       json_string_value (json_object_get (json_object_get (env->body, "endpoints"), "events")));
    const char *http = json_string_value (json_object_get (json_object_get (env->body, "endpoints"), "http"));
    if (!json && http)
        printf ("http       %s  (REST /api, live progress /api/events)\nmcp        %s\n", http,
                json_string_value (json_object_get (json_object_get (env->body, "endpoints"), "mcp")));
    return all ? 0 : 1;
}

int bmq_cli_status (const bmq_cli_opts_t *opts)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    bool json = opts->json;
    int code = bmq_cli_converse (cfg, bmq_envelope_new (BMQ_MSG_STATUS_REQUEST, NULL, NULL), s_on_status, &json);
    bmq_config_destroy (&cfg);
    return code;
}

