/* service — common start-up of a blendmq process. */
#include "service.h"
#include "codec.h"
#include "log.h"

#include <czmq.h>
#include <stdio.h>
#include <string.h>

bmq_config_t *bmq_service_start (int argc, char **argv, const char *name, const char *summary,
                                 int *exit_code)
{
    const char *config_path = NULL, *level = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "--help") || !strcmp (argv[i], "-h")) {
            printf ("usage: blendmq-%s [--config FILE] [--log-json] [--log-level LEVEL]\n\n%s\n\n"
                    "  --config FILE      YAML configuration (defaults: deploy/blendmq.yaml, built in)\n"
                    "  --log-json         log JSON lines instead of text\n"
                    "  --log-level LEVEL  debug, info, warn or error\n\n"
                    "Environment: BLENDMQ_<SECTION>_<KEY> overrides any configuration key.\n",
                    name, summary);
            *exit_code = 0;
            return NULL;
        }
        else if (!strcmp (argv[i], "--config") && i + 1 < argc) config_path = argv[++i];
        else if (!strcmp (argv[i], "--log-level") && i + 1 < argc) level = argv[++i];
        else if (!strcmp (argv[i], "--log-json")) json = true;
        else {
            fprintf (stderr, "blendmq-%s: unknown argument '%s' (try --help)\n", name, argv[i]);
            *exit_code = 2;
            return NULL;
        }
    }
    char err[512];
    bmq_config_t *cfg = bmq_config_load (config_path, err, sizeof err);
    if (!cfg) {
        fprintf (stderr, "blendmq-%s: %s\n", name, err);
        *exit_code = 2;
        return NULL;
    }
    if (!json) json = !strcmp (bmq_config_str (cfg, "log.format"), "json");
    bmq_log_init (name, json, bmq_log_level_parse (level ? level : bmq_config_str (cfg, "log.level")));
    bmq_envelope_set_sender (name);
    zsys_init ();
    zsys_set_logstream (NULL);
    return cfg;
}

const char *bmq_service_path (const char *configured, const char *fallback, char *buf, size_t len)
{
    if (configured && *configured) snprintf (buf, len, "%s", configured);
    else snprintf (buf, len, "%s/%s", bmq_data_dir (), fallback);
    return buf;
}
