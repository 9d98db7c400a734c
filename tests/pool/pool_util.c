/* pool_util — validator pool harness; see pool_util.h. */
#include "pool_util.h"
#include "bus.h"
#include "config.h"
#include "keys.h"
#include "plan_seal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int s_write_config (pool_t *self, int interval_ms)
{
    char err[512], path[400], value[400];
    bmq_config_t *cfg = bmq_config_load (NULL, err, sizeof err);
    if (!cfg) { fprintf (stderr, "config: %s\n", err); return -1; }
    static const char *keys[][2] = {
        { "gateway.endpoint", "gateway" }, { "gateway.events", "gateway-events" },
        { "gateway.validator_broker", "validators" }, { "planner.endpoint", "planner" },
        { "executor.endpoint", "executor" }, { "executor.events", "executor-events" },
        { "audit.endpoint", "audit" },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        snprintf (value, sizeof value, "ipc://%s/%s.sock", self->dir, keys[i][1]);
        bmq_config_set (cfg, keys[i][0], value);
    }
    snprintf (path, sizeof path, "%s/verdict.key", self->dir);
    if (bmq_seal_key_create (path, err, sizeof err)) { fprintf (stderr, "key: %s\n", err); bmq_config_destroy (&cfg); return -1; }
    bmq_config_set (cfg, "security.verdict_key_file", path);
    snprintf (value, sizeof value, "%s/audit.db", self->dir);
    bmq_config_set (cfg, "audit.database", value);
    snprintf (value, sizeof value, "%d", interval_ms);
    bmq_config_set (cfg, "heartbeat.interval_ms", value);
    bmq_config_set (cfg, "heartbeat.liveness", "3");
    bmq_config_set (cfg, "log.level", "info");
    snprintf (self->config, sizeof self->config, "%s/blendmq.yaml", self->dir);
    int rc = bmq_config_save (cfg, self->config, err, sizeof err);
    if (rc) fprintf (stderr, "config: %s\n", err);
    bmq_config_destroy (&cfg);
    return rc;
}

pid_t pool_spawn (pool_t *self, const char *service)
{
    if (self->nprocs >= POOL_MAX_PROCS) return -1;
    char bin[512], log[400];
    int n = 0;
    for (int i = 0; i < self->nprocs; i++) n += !strncmp (self->names[i], service, strlen (service));
    snprintf (self->names[self->nprocs], sizeof self->names[0], "%s-%d", service, n + 1);
    snprintf (bin, sizeof bin, "%s/blendmq-%s", BMQ_BIN_DIR, service);
    snprintf (log, sizeof log, "%s/%s.log", self->dir, self->names[self->nprocs]);
    pid_t pid = fork ();
    if (pid == 0) {
        int fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) { dup2 (fd, 1); dup2 (fd, 2); close (fd); }
        execl (bin, bin, "--config", self->config, (char *) NULL);
        _exit (127);
    }
    if (pid > 0) self->pids[self->nprocs++] = pid;
    return pid;
}

pool_t *pool_new (int interval_ms, bool with_audit)
{
    pool_t *self = calloc (1, sizeof *self);
    snprintf (self->dir, sizeof self->dir, "/tmp/bmq-pool-XXXXXX");
    self->interval = interval_ms;
    if (!mkdtemp (self->dir)) { free (self); return NULL; }
    /* CURVE: keys for the pool; this process hosts the broker, so it is the gateway */
    char keys[400], err[512];
    snprintf (keys, sizeof keys, "%s/keys", self->dir);
    if (bmq_keys_setup_process (keys, "gateway", err, sizeof err)) { fprintf (stderr, "keys: %s\n", err); free (self); return NULL; }
    if (s_write_config (self, interval_ms)) { free (self); return NULL; }
    char ep[400];
    snprintf (ep, sizeof ep, "ipc://%s/validators.sock", self->dir);
    self->broker = bmq_broker_new (ep, interval_ms, 3);
    if (!self->broker) { free (self); return NULL; }
    if (with_audit) pool_spawn (self, "audit");
    return self;
}

int pool_destroy (pool_t **self_p)
{
    pool_t *self = *self_p;
    if (!self) return 0;
    for (int i = 0; i < self->nprocs; i++) if (self->pids[i] > 0) kill (self->pids[i], SIGCONT), kill (self->pids[i], SIGTERM);
    int64_t end = bmq_mono_ms () + 10000;
    for (int i = 0; i < self->nprocs; i++) {
        if (self->pids[i] <= 0) continue;
        while (waitpid (self->pids[i], NULL, WNOHANG) == 0) {
            if (bmq_mono_ms () > end) { kill (self->pids[i], SIGKILL); waitpid (self->pids[i], NULL, 0); break; }
            usleep (10000);
        }
    }
    bmq_broker_destroy (&self->broker);
    char cmd[700];
    snprintf (cmd, sizeof cmd, "grep -s -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '%s'/*.log >&2", self->dir);
    int reports = system (cmd) == 0;
    if (reports) fprintf (stderr, "sanitizer reports in %s\n", self->dir);
    else {
        snprintf (cmd, sizeof cmd, "rm -rf '%s'", self->dir);
        if (system (cmd) != 0) fprintf (stderr, "could not remove %s\n", self->dir);
    }
    free (self);
    *self_p = NULL;
    return reports;
}

void pool_drive (pool_t *self, int timeout_ms, pool_reply_fn *on_reply, bool (*done) (void *arg), void *arg)
{
    int64_t end = bmq_mono_ms () + timeout_ms;
    zsock_t *sock = bmq_broker_sock (self->broker);
    while (bmq_mono_ms () < end && !(done && done (arg))) {
        zmq_pollitem_t item = { zsock_resolve (sock), 0, ZMQ_POLLIN, 0 };
        zmq_poll (&item, 1, self->interval / 4 > 0 ? self->interval / 4 : 1);
        /* drain what is there before ticking: the gateway does the same per wake-up */
        for (int k = 0; k < 256 && (zsock_events (sock) & ZMQ_POLLIN); k++) {
            bmq_envelope_t *reply = bmq_broker_on_message (self->broker);
            if (reply && on_reply) on_reply (reply, arg);
            else bmq_envelope_destroy (&reply);
        }
        bmq_broker_tick (self->broker);
        for (bmq_envelope_t *failed; (failed = bmq_broker_take_failed (self->broker)); ) {
            if (on_reply) on_reply (failed, arg);
            else bmq_envelope_destroy (&failed);
        }
    }
}

static bool s_enough (void *arg)
{
    pool_t *self = ((void **) arg)[0];
    return bmq_broker_workers (self->broker) >= *(size_t *) ((void **) arg)[1];
}

bool pool_wait_workers (pool_t *self, size_t n, int timeout_ms)
{
    void *args[2] = { self, &n };
    pool_drive (self, timeout_ms, NULL, s_enough, args);
    return bmq_broker_workers (self->broker) >= n;
}

/* ---- the corpus ---------------------------------------------------------------- */

static uint32_t s_rand (uint64_t *rng)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return (uint32_t) (*rng >> 32);
}

static double s_in (uint64_t *rng, double lo, double hi) { return lo + (hi - lo) * ((s_rand (rng) >> 8) / 16777216.0); }

static json_t *s_create (uint64_t *rng, const char *name)
{
    json_t *loc = json_pack ("[f, f, f]", s_in (rng, -5, 5), s_in (rng, -5, 5), s_in (rng, 0, 5));
    switch (s_rand (rng) % 5) {
    case 0: return json_pack ("{s:s, s:s, s:{s:f, s:i, s:i, s:o}}", "operation", "bpy.ops.mesh.primitive_uv_sphere_add",
                              "name", name, "params", "radius", s_in (rng, 0.1, 3), "segments", 8 + (int) (s_rand (rng) % 56),
                              "ring_count", 4 + (int) (s_rand (rng) % 28), "location", loc);
    case 1: return json_pack ("{s:s, s:s, s:{s:f, s:o, s:[f, f, f]}}", "operation", "bpy.ops.mesh.primitive_cube_add",
                              "name", name, "params", "size", s_in (rng, 0.1, 4), "location", loc, "rotation", 0.0, 0.0,
                              s_in (rng, -3, 3));
    case 2: return json_pack ("{s:s, s:s, s:{s:f, s:f, s:i, s:o}}", "operation", "bpy.ops.mesh.primitive_cylinder_add",
                              "name", name, "params", "radius", s_in (rng, 0.1, 2), "depth", s_in (rng, 0.1, 4),
                              "vertices", 8 + (int) (s_rand (rng) % 56), "location", loc);
    case 3: return json_pack ("{s:s, s:s, s:{s:f, s:f, s:f, s:i, s:o}}", "operation", "bpy.ops.mesh.primitive_cone_add",
                              "name", name, "params", "radius1", s_in (rng, 0.1, 2), "radius2", 0.0, "depth", s_in (rng, 0.1, 3),
                              "vertices", 8 + (int) (s_rand (rng) % 56), "location", loc);
    default: return json_pack ("{s:s, s:s, s:{s:f, s:f, s:o}}", "operation", "bpy.ops.mesh.primitive_torus_add",
                               "name", name, "params", "major_radius", s_in (rng, 0.5, 2), "minor_radius", s_in (rng, 0.05, 0.4),
                               "location", loc);
    }
}

static json_t *s_act (uint64_t *rng, const char *target)
{
    switch (s_rand (rng) % 3) {
    case 0: return json_pack ("{s:s, s:s, s:{s:[f, f, f], s:f}}", "operation", "object.material", "target", target,
                              "params", "color", s_in (rng, 0, 1), s_in (rng, 0, 1), s_in (rng, 0, 1), "roughness", s_in (rng, 0, 1));
    case 1: return json_pack ("{s:s, s:s, s:{s:[f, f, f]}}", "operation", "bpy.ops.transform.translate", "target", target,
                              "params", "value", s_in (rng, -2, 2), s_in (rng, -2, 2), s_in (rng, -2, 2));
    default: return json_pack ("{s:s, s:s}", "operation", "bpy.ops.object.shade_smooth", "target", target);
    }
}

json_t *pool_plan (uint64_t *rng, int steps, bool valid)
{
    json_t *plan = json_array ();
    char name[32] = "";
    for (int i = 0; i < steps; i++) {
        if (i % 3 == 0) {
            snprintf (name, sizeof name, "part_%03d", i / 3);
            json_array_append_new (plan, s_create (rng, name));
        }
        else json_array_append_new (plan, s_act (rng, name));
    }
    if (!valid && steps) {
        json_t *step = json_array_get (plan, s_rand (rng) % (size_t) steps);
        switch (s_rand (rng) % 3) {
        case 0: json_object_set_new (step, "operation", json_string ("bpy.ops.wm.quit_blender")); break;
        case 1: json_object_set_new (step, "params", json_pack ("{s:i}", "segments", 100000)); break;
        default: json_object_set_new (step, "target", json_string ("nowhere")); break;
        }
    }
    return plan;
}

long pool_peak_rss_kb (pid_t pid)
{
    char path[64], line[256];
    snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
    FILE *f = fopen (path, "r");
    long kb = -1;
    while (f && fgets (line, sizeof line, f))
        if (!strncmp (line, "VmHWM:", 6)) kb = strtol (line + 6, NULL, 10);
    if (f) fclose (f);
    return kb;
}

void pool_bench_line (const char *bench, const char *metric, double value, const char *unit, json_t *extra)
{
    json_t *line = json_pack ("{s:s, s:s, s:f, s:s}", "bench", bench, "metric", metric, "value", value, "unit", unit);
    if (extra) json_object_update (line, extra);
    json_decref (extra);
    char *text = json_dumps (line, JSON_COMPACT | JSON_REAL_PRECISION (6));
    printf ("%s\n", text);
    fflush (stdout);
    free (text);
    json_decref (line);
}
