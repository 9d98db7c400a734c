/* bench_util — shared benchmark plumbing. */
#include "bench_util.h"
#include "bus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int bench_stack_up (bench_stack_t *st, int validators)
{
    return bench_stack_up_args (st, validators, "");
}

int bench_stack_up_args (bench_stack_t *st, int validators, const char *up_args)
{
    snprintf (st->dir, sizeof st->dir, "/tmp/bmq-bench-XXXXXX");
    if (!mkdtemp (st->dir)) return -1;
    char cmd[1024], path[512];
    snprintf (cmd, sizeof cmd, "'%s/blendmq' --run-dir '%s' up --ipc --validators %d %s >&2", BMQ_BIN_DIR, st->dir,
              validators, up_args);
    if (system (cmd) != 0) return -1;
    snprintf (path, sizeof path, "%s/blendmq.yaml", st->dir);
    st->cfg = bmq_config_load (path, NULL, 0);
    if (!st->cfg) return -1;
    char err[512];          /* CURVE: `up` made the keys in the run dir; the bench is the cli client */
    if (bmq_bus_security_init (st->cfg, "cli", err, sizeof err)) { fprintf (stderr, "bench: %s\n", err); return -1; }
    return 0;
}

void bench_stack_down (bench_stack_t *st)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s/blendmq' --run-dir '%s' down >&2 && rm -rf '%s'", BMQ_BIN_DIR, st->dir, st->dir);
    if (system (cmd) != 0) fprintf (stderr, "bench: could not stop the stack in %s\n", st->dir);
    bmq_config_destroy (&st->cfg);
}

void bench_emit (const char *bench, const char *metric, double value, const char *unit, json_t *extra)
{
    json_t *line = json_pack ("{s:s, s:s, s:f, s:s}", "bench", bench, "metric", metric, "value", value, "unit", unit);
    if (extra) json_object_update (line, extra);
    json_decref (extra);
    char *text = json_dumps (line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION (6));
    printf ("%s\n", text);
    fflush (stdout);
    free (text);
    json_decref (line);
}

static int s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

double bench_percentile (double *v, size_t n, double p)
{
    if (!n) return 0;
    qsort (v, n, sizeof *v, s_cmp);
    size_t i = (size_t) (p / 100.0 * (double) (n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

double bench_now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

double bench_wall_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void bench_skip (const char *bench, const char *why)
{
    fprintf (stderr, "bench %s: skipped: %s\n", bench, why);
    exit (BENCH_SKIP);
}

int bench_arg_int (int argc, char **argv, int i, int dflt, int min, int max, const char *usage)
{
    if (argc <= i) return dflt;
    char *end = NULL;
    long v = strtol (argv[i], &end, 10);
    if (!*argv[i] || *end || v < min || v > max) {
        fprintf (stderr, "usage: %s (argument %d: %d..%d)\n", usage, i, min, max);
        exit (2);
    }
    return (int) v;
}

json_t *bench_request (zsock_t *gw, bmq_envelope_t *req, double *first_step_us, int timeout_ms)
{
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", req->cid);
    if (first_step_us) *first_step_us = 0;
    bmq_bus_send_and_destroy (gw, NULL, &req);
    zsock_set_rcvtimeo (gw, timeout_ms);
    json_t *answer = NULL;
    while (!answer) {
        bmq_envelope_t *env = bmq_bus_recv (gw, NULL);
        if (!env) return NULL;
        if (!strcmp (env->cid, cid)) {
            if (env->type == BMQ_MSG_PROGRESS && first_step_us && !*first_step_us
                && bmq_body_int (env, "step", 0) == 1 && !strcmp (bmq_body_str (env, "event"), "step"))
                *first_step_us = bench_now_us ();
            else if (env->type == BMQ_MSG_EXECUTE_RESULT || env->type == BMQ_MSG_SCENE_REPLY || env->type == BMQ_MSG_ERROR
                     || (env->type == BMQ_MSG_VALIDATE_REPLY && !json_is_true (json_object_get (env->body, "accepted"))))
                answer = json_incref (env->body);
            if (env->type == BMQ_MSG_ERROR) fprintf (stderr, "bench: %s\n", bmq_body_str (env, "message"));
        }
        bmq_envelope_destroy (&env);
    }
    return answer;
}

json_t *bench_cube_plan (int n)
{
    json_t *plan = json_array ();
    for (int i = 0; i < n; i++)
        json_array_append_new (plan, json_pack ("{s:s, s:{s:[f,f,f]}}", "operation", "bpy.ops.mesh.primitive_cube_add",
                                                "params", "location", (double) i, 0.0, 0.0));
    return plan;
}

json_t *bench_setup_plan (int n, const char *prefix, double y)
{
    json_t *plan = json_array ();
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf (name, sizeof name, "%.40s_%d", prefix, i);
        json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:[f,f,f]}}", "operation", "bpy.ops.mesh.primitive_cube_add",
                                                "name", name, "params", "location", (double) i, y, 0.0));
    }
    return plan;
}

json_t *bench_existing_plan (int n, const char *prefix, int objects)
{
    json_t *plan = json_array ();
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf (name, sizeof name, "%.40s_%d", prefix, i % (objects > 0 ? objects : 1));
        json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:[f,f,f]}}", "operation", "object.location",
                                                "target", name, "params", "value", (double) i, 4.0, 0.0));
    }
    return plan;
}

json_t *bench_mixed_existing_plan (int n, const char *new_prefix, const char *existing_prefix)
{
    json_t *plan = json_array ();
    char name[64];
    for (int i = 0; i < n; i++) {
        if (i % 2 == 0) {
            snprintf (name, sizeof name, "%.40s_%d", new_prefix, i / 2);
            json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:[f,f,f]}}", "operation", "bpy.ops.mesh.primitive_cube_add",
                                                    "name", name, "params", "location", (double) i, 0.0, 0.0));
        } else {
            snprintf (name, sizeof name, "%.40s_%d", existing_prefix, i / 2);
            json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:[f,f,f]}}", "operation", "object.location",
                                                    "target", name, "params", "value", (double) i, 2.0, 0.0));
        }
    }
    return plan;
}

json_t *bench_named_plan (int n, const char *prefix)
{
    json_t *plan = json_array ();
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf (name, sizeof name, "%.40s_%d", prefix, i / 2);
        if (i % 2 == 0)
            json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:[f,f,f]}}", "operation", "bpy.ops.mesh.primitive_cube_add",
                                                    "name", name, "params", "location", (double) i, 0.0, 0.0));
        else
            json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:[f,f,f]}}", "operation", "object.location",
                                                    "target", name, "params", "value", (double) i, 2.0, 0.0));
    }
    return plan;
}
