/* audit_harness — run real blendmq-audit processes and test senders from
 * tests: a private temp dir with ipc endpoints, spawn and stop, status, and
 * direct reads of the database to count what arrived. */
#ifndef BMQ_AUDIT_HARNESS_H
#define BMQ_AUDIT_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    char dir[256];             /* private temp dir */
    char endpoint[320];        /* ipc://dir/audit.sock */
    char database[320];        /* dir/audit.db */
    char spool[320];           /* dir/spool */
} ah_env_t;

/* Make the temp dir and export BLENDMQ_AUDIT_* and a fast heartbeat into
 * this process's environment: children inherit it. */
void ah_setup (ah_env_t *env);
/* Remove the temp dir (unless BMQ_KEEP_TMP is set). */
void ah_teardown (ah_env_t *env);
/* Absolute path of a built binary. */
const char *ah_bin (const char *name);
/* Start argv[0] (a binary name in the bin dir) with its output in dir/LOG.out
 * and dir/LOG.log. `extra_env` is NULL or "KEY=VALUE" strings, NULL-ended. */
pid_t ah_spawn (ah_env_t *env, const char *log, const char *const argv[], const char *const extra_env[]);
/* Start blendmq-audit and wait until it answers. -1 on failure. */
pid_t ah_start_audit (ah_env_t *env, const char *const extra_env[]);
/* Signal and reap; returns the exit status (-1 if it had to be killed). */
int  ah_stop (pid_t pid, int sig, int timeout_ms);
/* Wait for exit up to timeout_ms; the exit code, or -1 on timeout. */
int  ah_wait (pid_t pid, int timeout_ms);
/* One status.request to the audit service; NULL when it does not answer in timeout_ms. */
json_t *ah_status (ah_env_t *env, int timeout_ms);
/* The JSON lines a spawned program printed to dir/LOG.out, as an array. */
json_t *ah_output (ah_env_t *env, const char *log);
/* Run a shell command, capture stdout (malloc'd), exit code in *code. */
char *ah_run (const char *cmd, int *code);
/* SELECT one integer from the database (-1 on error). */
int64_t ah_db_int (ah_env_t *env, const char *sql);
/* Check every origin holds seq 1..N exactly once for the N it emitted:
 * returns false (and prints why) on a gap or a count mismatch. */
bool ah_db_exactly_once (ah_env_t *env, const char *origin, int64_t emitted);
void ah_sleep_ms (int ms);

#endif
