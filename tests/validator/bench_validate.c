/* bench_validate — validation throughput on a 200-step valid plan.
 *
 *   bench_validate [seconds]       (default 2)
 * Prints steps/s for bmq_plan_validate alone, and for JSON text → verdict
 * (parse + validate + free), which is what a worker really does per request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_validator.h"

static double s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 100 objects, each created with a few parameters then given a material by
 * target: every step has to be looked up, typed, bounded and name-checked. */
static json_t *s_plan (void)
{
    static const char *ops[] = {
        "bpy.ops.mesh.primitive_uv_sphere_add", "bpy.ops.mesh.primitive_cube_add",
        "bpy.ops.mesh.primitive_cylinder_add", "bpy.ops.mesh.primitive_cone_add",
    };
    json_t *plan = json_array ();
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf (name, sizeof name, "part_%03d", i);
        json_t *params = json_pack ("{s:[f, f, f], s:[f, f, f]}", "location", i * 0.1, 0.0, 1.0,
                                    "rotation", 0.0, 0.0, 1.5708);
        if (i % 4 == 0) json_object_set_new (params, "radius", json_real (0.5));
        json_array_append_new (plan, json_pack ("{s:s, s:s, s:o}", "operation", ops[i % 4], "name", name, "params", params));
        json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:[f, f, f], s:f}}", "operation", "object.material",
                                                "target", name, "params", "color", 0.8, 0.1, 0.1, "roughness", 0.4));
    }
    return plan;
}

int main (int argc, char **argv)
{
    double seconds = argc > 1 ? atof (argv[1]) : 2.0;
    char err[512];
    bmq_palette_t *palette = bmq_palette_load (BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);
    if (!palette) { fprintf (stderr, "%s\n", err); return 1; }
    json_t *plan = s_plan ();
    json_t *verdict = bmq_plan_validate (palette, plan);
    if (!json_is_true (json_object_get (verdict, "accepted"))) {
        char *text = json_dumps (verdict, JSON_INDENT (1));
        fprintf (stderr, "benchmark plan rejected:\n%s\n", text);
        return 1;
    }
    json_decref (verdict);
    size_t steps = json_array_size (plan);

    long runs = 0;
    double start = s_now (), elapsed;
    do {
        for (int k = 0; k < 100; k++, runs++) json_decref (bmq_plan_validate (palette, plan));
        elapsed = s_now () - start;
    } while (elapsed < seconds);
    printf ("validate only:      %ld plans of %zu steps in %.2f s = %.0f steps/s (%.1f us/plan)\n", runs, steps,
            elapsed, runs * steps / elapsed, elapsed / runs * 1e6);

    char *text = json_dumps (plan, JSON_COMPACT);
    runs = 0;
    start = s_now ();
    do {
        for (int k = 0; k < 100; k++, runs++) {
            json_t *parsed = json_loads (text, 0, NULL);
            json_t *v = bmq_plan_validate (palette, parsed);
            char *out = json_dumps (v, JSON_COMPACT);
            free (out);
            json_decref (v);
            json_decref (parsed);
        }
        elapsed = s_now () - start;
    } while (elapsed < seconds);
    printf ("parse+validate+out: %ld plans of %zu steps (%zu bytes) in %.2f s = %.0f steps/s\n", runs, steps,
            strlen (text), elapsed, runs * steps / elapsed);
    free (text);
    json_decref (plan);
    bmq_palette_destroy (&palette);
    return 0;
}
