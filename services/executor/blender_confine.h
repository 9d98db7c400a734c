/* blender_confine — the live headless Blender (the one `blendmq up`, the
 * systemd unit and the container start) under bubblewrap, with the script
 * sandbox's system-call filter (sandbox_seccomp.h) and its resource limits
 * (sandbox_bwrap.h's defaults). Issue 23: "the headless Blender is confined
 * too".
 *
 * What it sees, as bwrap flags:
 *   --unshare-all            its own user (when unprivileged), pid, ipc, uts, cgroup
 *                            and NETWORK namespaces: no network at all, not even
 *                            loopback to the host's services. It serves its link on
 *                            a unix socket in its state folder, which the executor
 *                            (same host) connects to through the bind mount;
 *   --die-with-parent --new-session --cap-drop ALL;
 *   --clearenv, then HOME=/home/blender, TMPDIR=/tmp, PATH, LANG, PYTHONHASHSEED=0;
 *   read-only: /usr (and the merged-/usr links), the /etc files Blender needs, the
 *   add-on folder and proto/ of the data dir, the token file, the Blender binary's
 *   folder when it is not under /usr;
 *   writable: the state folder (bind, the only host folder it can change), a
 *   private /tmp and /home (tmpfs, gone with the process), /dev/shm;
 *   --remount-ro / last; the seccomp program on fd `seccomp_fd` (--seccomp N).
 * Not visible at all: /root, /home's contents, /run, /var, the run dir (keys,
 * tokens of other services, the audit database, pid files), the project tree
 * beyond the add-on and proto/.
 *
 * Rlimits (bmq_blender_confine_limits, in the forked child before exec):
 * the sandbox's address space (RLIMIT_AS), process count, no core dumps and
 * open files; the file size limit is the sandbox's × 16 (a durable commit
 * writes the whole scene) and there is no CPU-seconds limit: this Blender
 * lives for days (a hang is the supervisor's, blender.hang_kill_ms). */
#ifndef BMQ_BLENDER_CONFINE_H
#define BMQ_BLENDER_CONFINE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *bwrap;          /* default "bwrap" (PATH) */
    const char *blender;        /* the Blender binary (PATH lookup when it has no '/') */
    const char *data_dir;       /* holds services/executor/addon and proto (bmq_data_dir) */
    const char *token_file;     /* bound read-only at its own path */
    const char *state_dir;      /* bound read-write at its own path (made 0700 if missing) */
    int seccomp_fd;             /* the fd number bwrap reads the filter from (in the child) */
    int memory_mb, file_mb, processes;     /* rlimits: bmq_blender_confine_defaults */
} bmq_blender_confine_t;

/* Unset fields: "bwrap", "blender", bmq_data_dir (), and the sandbox's limits
 * (bmq_sandbox_limits_defaults: address space and processes as the sandbox,
 * file size × 16). */
void bmq_blender_confine_defaults (bmq_blender_confine_t *c);

#define BMQ_CONFINE_MAX_ARGS 128

/* argv for bwrap … -- BLENDER blender_args…, NULL-terminated, each string
 * malloc'd (free them with bmq_blender_confine_free). 0, or -1 with err
 * (bwrap or Blender not found, a path missing, too many arguments). */
int  bmq_blender_confine_argv (const bmq_blender_confine_t *c, const char *const blender_args[],
                               char *argv[BMQ_CONFINE_MAX_ARGS], char *err, size_t errlen);
void bmq_blender_confine_free (char *argv[BMQ_CONFINE_MAX_ARGS]);

/* The seccomp program as a readable fd (close-on-exec; a new one for every
 * start: bwrap reads it to its end). -1 with err. */
int  bmq_blender_confine_seccomp_fd (char *err, size_t errlen);

/* In the forked child, before exec: the rlimits above. Async-signal-safe. */
void bmq_blender_confine_limits (const bmq_blender_confine_t *c);
/* In the forked child, once fds 0-2 are set, right before exec: the filter
 * (seccomp, from bmq_blender_confine_seccomp_fd) moved to c->seccomp_fd,
 * every other descriptor above 2 closed, the rlimits. Async-signal-safe.
 * -1 when the filter cannot be put in place (the child must not exec). */
int  bmq_blender_confine_child (const bmq_blender_confine_t *c, int seccomp);

#endif
