/* sandbox_pool — the mandatory sandbox run of a validated BPY script (seed 003
 * FR-006, issue 8): a warm pool of isolated headless Blenders (sandbox_bwrap),
 * each started in advance, used for exactly one script, then killed and
 * replaced in the background.
 *
 *   bmq_sandbox_pool_t *pool = bmq_sandbox_pool_new (&opts, err, sizeof err);
 *   if (!pool) → refuse live execution, tell the user err (never run unsandboxed)
 *   json_t *result = bmq_sandbox_pool_run (pool, script, len, blend, blend_len, &job, &png, &png_len);
 *
 * The pool keeps opts.warm instances started (Blender up, waiting for a job);
 * a background thread starts the replacement of each one a run takes, so
 * scripts submitted back to back find one ready as long as they come no
 * faster than opts.warm per Blender start-up (about a second here). A run
 * never waits on a refill: with no ready instance it takes the one closest
 * to ready, or starts one itself (a cold start).
 *
 * A run: take a ready instance (or start one: a cold start), put the script
 * and the scene copy (a .blend, e.g. the executor's save_blend bytes) in its
 * job folder (0700 folders, 0600 files, owned by the sandbox's uid), note what
 * is in every folder the sandbox can write (INST/tmp, shm, home, out), send the
 * job (with the script's sha256 and the time limit, which the runner enforces
 * through script_exec.run; the pool kills S_REPORT_GRACE_MS later), wait for
 * the runner's report, kill the instance's whole process group, list those
 * folders again from the host: anything new, changed or removed other than the
 * declared outputs (out/preview.png when a preview was asked for) is a
 * violation {"check": "files", "detail": "wrote <paths relative to the instance>"}
 * and the verdict "rejected"; remove them, and start a replacement. Warm
 * instances are started for the latest live scene path (the scene copy is
 * bound there), a different path means a cold start. The result:
 *   {"ok": bool           true only when the script ran to the end with no violation:
 *                         the script may be proposed for live execution,
 *    "verdict": "ok" | "error" (the script raised) | "rejected" (violations)
 *               | "timeout" | "crashed" (Blender died: a limit, a signal) | "unavailable",
 *    "message": human-readable summary,
 *    "error": {"type", "message", "line"} | null, "traceback": str | null,
 *    "output": the script's prints (tail), "diff": {"added", "removed", "changed", "objects"},
 *    "violations": [{"check", "detail"}], "preview": {"width", "height", "bytes"} | null,
 *    "script_sha256", "scene_sha256" (bind a confirmation to exactly these),
 *    "duration_ms" (the script, inside Blender), "total_ms" (the whole verdict),
 *    "start": "warm" | "cold", "isolation": [the bwrap flags, seccomp filter and uid in force],
 *    "blend_filepath": bpy.data.filepath as the script saw it (the live path, or "")}
 * Thread-safe: several threads may run scripts at once (one instance each). */
#ifndef BMQ_SANDBOX_POOL_H
#define BMQ_SANDBOX_POOL_H

#include "sandbox_bwrap.h"

#include <jansson.h>
#include <stddef.h>

#define BMQ_SANDBOX_WARM_DEFAULT 2  /* executor.sandbox_warm */
#define BMQ_SANDBOX_WARM_MAX 8

typedef struct {
    bmq_sandbox_limits_t limits;
    int warm;                   /* instances kept ready, 0..BMQ_SANDBOX_WARM_MAX (NULL opts:
                                 * BMQ_SANDBOX_WARM_DEFAULT; 0 = every run is cold). Each is a
                                 * headless Blender: some 200 MB resident, little CPU while idle */
    int timeout_ms;             /* wall clock per script (default 30000) */
    int start_timeout_ms;       /* Blender start-up (default 30000) */
    const char *work_dir;       /* parent of the instance folders (default $TMPDIR or /tmp) */
    const json_t *modules;      /* run-time allowlists (default: the script rules' defaults) */
    const json_t *builtins;
} bmq_sandbox_opts_t;

typedef struct {
    int preview_width, preview_height;  /* 0: no preview */
    int timeout_ms;                     /* 0: the pool's */
    const char *scene_path;             /* the live scene's bpy.data.filepath; "" or NULL when the
                                         * live scene was never saved. When absolute, the scene copy
                                         * is bound read-only at exactly this path inside the sandbox,
                                         * so bpy.data.filepath is the same as live. */
    const char *sidecar;                /* the copy's state.save sidecar (JSON: fake_users), written
                                         * next to it as job/scene.blend.json; NULL: none (issue 23) */
    size_t sidecar_len;
} bmq_sandbox_job_t;

typedef struct bmq_sandbox_pool_t bmq_sandbox_pool_t;

/* Probe (bmq_sandbox_probe) and start the refill thread, which starts the
 * warm instances. NULL with a reason
 * in err when no sandbox can run here: the caller must then refuse live
 * execution with that message. */
bmq_sandbox_pool_t *bmq_sandbox_pool_new (const bmq_sandbox_opts_t *opts, char *err, size_t errlen);
/* Stop the refill thread, kill every instance and remove the work folder. */
void bmq_sandbox_pool_destroy (bmq_sandbox_pool_t **self_p);

/* Run one script (len bytes) on a copy of the scene (blend bytes, or NULL for
 * Blender's factory scene). job may be NULL. The preview PNG, if asked for and
 * rendered, goes to *png (malloc'd; caller frees). Never NULL. */
json_t *bmq_sandbox_pool_run (bmq_sandbox_pool_t *self, const char *script, size_t len, const void *blend,
                              size_t blend_len, const bmq_sandbox_job_t *job, unsigned char **png, size_t *png_len);

/* Wait until `count` instances are ready (benchmarks, tests). 0 / -1 on timeout. */
int bmq_sandbox_pool_wait_ready (bmq_sandbox_pool_t *self, int count, int timeout_ms);

#endif
