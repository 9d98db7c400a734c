/* service — what every blendmq process does at start: flags, config, logging.
 *
 * Flags understood by every service: --help, --config FILE, --log-json,
 * --log-level LEVEL. SIGINT and SIGTERM set zsys_interrupted (czmq), which
 * every service loop watches, so shutdown is always clean. */
#ifndef BMQ_SERVICE_H
#define BMQ_SERVICE_H

#include "config.h"
#include <stdbool.h>

/* Returns the loaded config, or NULL when the process should exit now with
 * *exit_code (0 after --help, 2 on a usage or config error). */
bmq_config_t *bmq_service_start (int argc, char **argv, const char *name, const char *summary,
                                 int *exit_code);

/* A path setting that may be empty: return `configured` if set, else data_dir/fallback. */
const char *bmq_service_path (const char *configured, const char *fallback, char *buf, size_t len);

#endif
