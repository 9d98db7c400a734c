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
 *   --proc /proc, --dev /dev, --tmpfs /home;
 *   every writable place is a host folder under the instance dir, so that the pool can
 *   list from the host, after the kill, everything a script wrote:
 *     --bind INST/tmp /tmp, --bind INST/shm /dev/shm,
 *     --bind INST/home /home/sb (private $HOME, so a private Blender config dir),
 *     --bind INST/out /out (the only folder a script may leave files in);
 *   --ro-bind INST/job /job (script and scene copy), --ro-bind RUNNER /sandbox/runner.py,
 *   --ro-bind GUARD /sandbox/script_exec.py (the run-time guard shared with live),
 *   --ro-bind PROTO /sandbox/link_proto.py (the fd-3 protocol, generated from proto/sandbox.json);
 *   when the live scene has a path, --ro-bind INST/job/scene.blend <that path>, so that
 *   bpy.data.filepath is the same in the sandbox as live;
 *   --remount-ro / /home /dev last: the tmpfs bwrap builds the tree on, /home and /dev
 *   are writable otherwise;
 *   --seccomp 4: the system-call filter of sandbox_seccomp.h, loaded by bwrap right
 *   before it execs Blender;
 * then `blender -b --factory-startup --disable-autoexec --python /sandbox/runner.py`.
 *
 * In the child, before exec: its own process group; rlimits CPU seconds, address
 * space, file size, process count, no core dumps, open files. The uid:
 *   - started as root (and drop_root): the uid/gid become limits.uid/gid, by default the
 *     dedicated 64511:64511 (BMQ_SANDBOX_UID), used only while no user or group other
 *     than "blendmq-sandbox" has that id; otherwise nobody (65534) as a fallback. bwrap
 *     then runs unprivileged and makes a user namespace (--unshare-all). The Blender
 *     inside is unprivileged on the host, and RLIMIT_NPROC counts only sandboxes (the
 *     kernel never enforces it for root; nobody is shared with other daemons);
 *   - not root: the current user, in a user namespace of its own (--unshare-all);
 *   - root without unprivileged user namespaces (probe fallback): root, caps dropped.
 * fd 3 is the control socket, fd 4 the seccomp program (read by bwrap). */
#ifndef BMQ_SANDBOX_BWRAP_H
#define BMQ_SANDBOX_BWRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct {
    const char *bwrap;          /* default "bwrap" (PATH) */
    const char *blender;        /* default $BLENDMQ_BLENDER_PATH, $BLENDMQ_BLENDER (what `up` started), "blender" */
    const char *runner;         /* sandbox_runner.py on the host (default: data dir) */
    int cpu_seconds;            /* RLIMIT_CPU (default 60) */
    int memory_mb;              /* RLIMIT_AS (default 4096) */
    int file_mb;                /* RLIMIT_FSIZE (default 64) */
    int processes;              /* RLIMIT_NPROC (default 512; threads count) */
    const char *guard;          /* script_exec.py on the host (default: data dir's add-on) */
    const char *proto;          /* link_proto.py on the host (default: data dir's add-on) */
    bool keep_root;             /* do not drop privileges when root (default false) */
    uid_t uid;                  /* the uid/gid the sandbox runs as when root drops privileges */
    gid_t gid;                  /* (0: default, BMQ_SANDBOX_UID if unused, else nobody) */
    char resolved[2][512];      /* set by bmq_sandbox_probe: absolute bwrap and blender */
    char root[512];             /* set by bmq_sandbox_probe: the Blender's own root (blender_root.h), whose
                                 * /usr and /etc the sandbox sees; "" for a Blender under the host's /usr */
    char uid_note[128];         /* set by bmq_sandbox_limits_defaults: why this uid */
} bmq_sandbox_limits_t;

#define BMQ_SANDBOX_UID 64511       /* dedicated uid/gid (unassigned in Debian's ranges) */
#define BMQ_SANDBOX_NAME "blendmq-sandbox"

/* Fill unset fields with the defaults. */
void bmq_sandbox_limits_defaults (bmq_sandbox_limits_t *l);

/* Start Blender in the sandbox. inst_dir holds home/, out/, tmp/, shm/ and job/
 * (made by the caller; job/scene.blend must exist when scene_path is set).
 * scene_path: NULL/"" or the absolute path at which job/scene.blend is bound.
 * ctrl_fd becomes fd 3 inside; log_fd receives Blender's stdout and stderr.
 * drop_root: run as l->uid/gid (see bmq_sandbox_probe).
 * Returns the child's pid (leader of its own process group), or -1 with err. */
pid_t bmq_sandbox_spawn (const bmq_sandbox_limits_t *l, const char *inst_dir, const char *scene_path, int ctrl_fd,
                         int log_fd, bool drop_root, char *err, size_t errlen);

/* Run argv (absolute path, under /usr) in the same isolation as Blender (namespaces,
 * seccomp, uid, rlimits; no instance folders), output to log_fd (or /dev/null), and
 * wait up to 10 s: 0 with *status (waitpid's), or -1. For the probe and the tests. */
int bmq_sandbox_run_isolated (const bmq_sandbox_limits_t *l, bool drop_root, const char *const *argv, int log_fd,
                              int *status);

/* Can a sandbox start here? Runs bwrap with the same isolation (seccomp too) around
 * /usr/bin/true; resolves l->bwrap and l->blender to absolute paths (kept in
 * l->resolved, so l must stay where it is). *drop_root tells whether it works as
 * l->uid (preferred when root) or only as the current user. 0, or -1 with a reason fit for the user
 * ("bubblewrap is not installed", "user namespaces are disabled", ...). */
int bmq_sandbox_probe (bmq_sandbox_limits_t *l, bool *drop_root, char *err, size_t errlen);

/* The sandbox's resource limits (address space, file size, processes, no core, 1024 fds) on
 * the calling process: the sandbox's child and the confined live Blender set the same ones. */
void bmq_sandbox_set_rlimits (int memory_mb, int file_mb, int processes);

/* The bubblewrap flags the sandbox and the confined live Blender share: namespaces, no
 * capabilities, a fixed environment (HOME=home), /usr and the few /etc files (from `root`, a
 * Blender's own root, when not NULL or ""), /proc and /dev. `add` gets each argument in order
 * (it copies what it keeps). */
typedef void (*bmq_bwrap_add_fn) (void *ctx, const char *arg);
void bmq_bwrap_common_flags (bmq_bwrap_add_fn add, void *ctx, const char *root, const char *home);

#endif
