/* e2e_util — drive a real blendmq stack (the `blendmq` binary) from tests. */
#ifndef BMQ_E2E_UTIL_H
#define BMQ_E2E_UTIL_H

#include <jansson.h>
#include <stdbool.h>

/* Absolute path of a built binary (build/bin/NAME). */
const char *e2e_bin (const char *name);
/* Run a shell command; its stdout is returned (malloc'd), exit code in *code. */
char *e2e_run (const char *cmd, int *code);
/* Parse JSON lines; returns an array of the parsed objects. */
json_t *e2e_json_lines (const char *text);
/* `blendmq --run-dir DIR --json ARGS...`: JSON lines out, exit code. */
json_t *e2e_blendmq_json (const char *run_dir, const char *args, int *code);
/* The pid written in DIR/pids/NAME.pid, or -1. */
int e2e_pid (const char *run_dir, const char *name);
/* Wait until `blendmq status` says everything is alive (and Blender connected if asked). */
bool e2e_wait_healthy (const char *run_dir, bool blender, int timeout_ms);

/* The HTTP bearer token of client key NAME in DIR/keys (`blendmq up` makes cli, web,
 * panel, mcp): a static buffer, "" when missing. */
const char *e2e_token (const char *run_dir, const char *name);

#endif
