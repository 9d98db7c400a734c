/* sandbox_bwrap — start one headless Blender isolated by bubblewrap (issue 8,
 * FR-006), with resource limits, and tell whether that is possible here.
 *
 * Isolation, as bwrap flags (all of them, always; there is no weaker mode):
 *   --unshare-all           new user (when unprivileged), pid, net, ipc, uts and cgroup
 *                           namespaces: no network at all (not even loopback to the host's
 *                           services), no view of host processes;
 *   --die-with-parent       the sandbox dies with the process that started it;
 *   --new-session           no terminal to inject into (TIOCSTI);
 *   --cap-drop ALL          no capabilities inside, even when started as root;
 *   --clearenv + a fixed environment (HOME, PATH, LANG, TMPDIR);
 *   --ro-bind /usr /usr and the merged-/usr symlinks, read-only binds of the few /etc
 *   files Blender needs (no /etc/shadow, no /root, no /home, no /run, no /var, no project
 *   tree: no ipc socket of the stack is reachable);
 *   --proc /proc, --dev /dev, --tmpfs /tmp;
 *   --bind INST/home /home/sb (private $HOME, so a private Blender config dir),
 *   --bind INST/out /out (the only folder a script may leave files in),
 *   --ro-bind INST/job /job (script and scene copy), --ro-bind RUNNER /sandbox/runner.py;
 * then `blender -b --factory-startup --disable-autoexec --python /sandbox/runner.py`.
 *
 * In the child, before exec: its own process group; rlimits CPU seconds, address
 * space, file size, process count, no core dumps, open files; when started as
 * root (and drop_root), the uid/gid become nobody (65534), so the Blender
 * inside is unprivileged on the host too and RLIMIT_NPROC is enforced (the
 * kernel never enforces it for root). fd 3 is the control socket. */
#ifndef BMQ_SANDBOX_BWRAP_H
#define BMQ_SANDBOX_BWRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct {
    const char *bwrap;          /* default "bwrap" (PATH) */
    const char *blender;        /* default "blender" (PATH inside the sandbox: /usr/bin) */
    const char *runner;         /* sandbox_runner.py on the host (default: data dir) */
    int cpu_seconds;            /* RLIMIT_CPU (default 60) */
    int memory_mb;              /* RLIMIT_AS (default 4096) */
    int file_mb;                /* RLIMIT_FSIZE (default 64) */
    int processes;              /* RLIMIT_NPROC (default 512; threads count) */
    bool keep_root;             /* do not drop to nobody when root (default false) */
    char resolved[2][512];      /* set by bmq_sandbox_probe: absolute bwrap and blender */
} bmq_sandbox_limits_t;

/* Fill unset fields with the defaults. */
void bmq_sandbox_limits_defaults (bmq_sandbox_limits_t *l);

/* Start Blender in the sandbox. inst_dir holds home/, out/ and job/ (made by
 * the caller). ctrl_fd becomes fd 3 inside; log_fd receives Blender's stdout
 * and stderr. `uid` is the uid the sandbox runs as (see bmq_sandbox_probe).
 * Returns the child's pid (leader of its own process group), or -1 with err. */
pid_t bmq_sandbox_spawn (const bmq_sandbox_limits_t *l, const char *inst_dir, int ctrl_fd, int log_fd,
                         bool drop_root, char *err, size_t errlen);

/* Can a sandbox start here? Runs bwrap with the same isolation around
 * /usr/bin/true; resolves l->bwrap and l->blender to absolute paths (kept in
 * l->resolved, so l must stay where it is). *drop_root tells whether it works as nobody (preferred when
 * root) or only as the current user. 0, or -1 with a reason fit for the user
 * ("bubblewrap is not installed", "user namespaces are disabled", ...). */
int bmq_sandbox_probe (bmq_sandbox_limits_t *l, bool *drop_root, char *err, size_t errlen);

#endif
