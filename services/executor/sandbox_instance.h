/* sandbox_instance — one sandboxed headless Blender of the pool (internal to
 * sandbox_pool: not a public API).
 *
 * An instance is a folder (home, out, tmp, shm, job: 0700, owned by the uid
 * the sandbox runs as), a bwrap process group (sandbox_bwrap) and our end of
 * its control socket, fd 3 inside, where sandbox/sandbox_runner.py speaks one
 * JSON object per line: {"ready": true, "blender": version} once started, then
 * the report of the one job it is sent. */
#ifndef BMQ_SANDBOX_INSTANCE_H
#define BMQ_SANDBOX_INSTANCE_H

#include "sandbox_bwrap.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SANDBOX_MAX_SCENE_PATH 1024

typedef struct {
    pid_t pid;
    int ctrl;                   /* our end of the control socket (fd 3 inside) */
    bool ready;
    char dir[512];
    char blender[32];
    char scene_path[SANDBOX_MAX_SCENE_PATH];  /* where job/scene.blend is bound ("" : nowhere) */
} sandbox_inst_t;

/* Milliseconds on the monotonic clock. */
double sandbox_now_ms (void);
/* Remove a folder and everything in it (links are not followed). */
void sandbox_rm_rf (const char *dir);
/* Write a job file: 0600, owned by the sandbox's uid when root drops
 * privileges; in place, never through a link. 0 / -1 (errno). */
int sandbox_write_file (const bmq_sandbox_limits_t *limits, bool drop_root, const char *path, const void *data,
                        size_t len);

/* Prepare the folder work/inst-<seq> and start Blender in it, bound for
 * scene_path. NULL with a reason in err. */
sandbox_inst_t *sandbox_inst_start (const bmq_sandbox_limits_t *limits, bool drop_root, const char *work, unsigned seq,
                                    const char *scene_path, char *err, size_t errlen);
/* Kill the instance's whole process group and wait for it (pid becomes 0). */
void sandbox_inst_kill (sandbox_inst_t *inst);
/* Kill it, close the socket, remove its folder. Safe on NULL. */
void sandbox_inst_destroy (sandbox_inst_t **inst_p);

/* Read one JSON line before `deadline` (ms, monotonic). NULL on timeout
 * (*timed_out) or when the instance closed the socket. */
json_t *sandbox_inst_read_line (sandbox_inst_t *inst, double deadline, bool *timed_out);
/* Wait for the runner's ready line until `deadline`. 0 / -1. */
int sandbox_inst_wait_ready (sandbox_inst_t *inst, double deadline);
/* Non-blocking: has the instance said it is ready? */
bool sandbox_inst_poll_ready (sandbox_inst_t *inst);
/* The last 1200 bytes of its Blender's log (malloc'd). */
char *sandbox_inst_log_tail (const sandbox_inst_t *inst);

#endif
