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
 * *exit_code (0 after --help, 2 on a usage error, BMQ_EXIT_CONFIG (78) on a configuration one). */
bmq_config_t *bmq_service_start (int argc, char **argv, const char *name, const char *summary,
                                 int *exit_code);

/* The run dir (issue 12): created 0700 when missing (parents too); refused with
 * a clear message in err when it is a symlink (checked with lstat), not a
 * directory, not owned by this user, or open to group/others. 0 / -1. */
int bmq_run_dir_check (const char *dir, char *err, size_t errlen);
/* Write a secret file: O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600. With `replace`,
 * an existing file (or symlink) at path is unlinked first (the directory is
 * the caller's own 0700 run dir). 0 / -1 with err. */
int bmq_secret_file_write (const char *path, const void *data, size_t len, bool replace, char *err, size_t errlen);

/* A path setting that may be empty: return `configured` if set, else data_dir/fallback. */
const char *bmq_service_path (const char *configured, const char *fallback, char *buf, size_t len);

#endif
