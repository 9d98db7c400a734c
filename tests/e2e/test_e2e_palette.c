/* The palette speaks Blender (issue 27), on a whole stack: the seeds' own
 * plans (User Story 2's object.location.z.add, the data model's
 * object.active.scale) validate and run as written through gateway,
 * validator (merged with the running Blender's RNA, property paths
 * included), executor and a real headless Blender; a hostile path is refused
 * before anything runs; `capabilities --compact` stays under 12,000 bytes. */
#include "e2e_util.h"
#include "yaml_json.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_dir[256];

static int s_setup (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-palette-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc --validators 1 >&2", e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static int s_teardown (void **state)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2 && rm -rf '%s'", e2e_bin ("blendmq"), s_dir, s_dir);
    int rc = system (cmd);
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    return rc == 0 ? 0 : -1;
}

/* `plan ACTION FILE` on a plan given as JSON text: the exit code. */
static int s_plan (const char *action, const char *name, const char *text)
{
    char path[512], args[1024];
    snprintf (path, sizeof path, "%s/%s.json", s_dir, name);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
    snprintf (args, sizeof args, "plan %s '%s' 2>/dev/null", action, path);
    int code;
    json_decref (e2e_blendmq_json (s_dir, args, &code));
    return code;
}

static json_t *s_object (const char *name)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene", &code);
    assert_int_equal (code, 0);
    size_t i;
    json_t *o, *found = NULL;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "objects"), i, o)
        if (!strcmp (json_string_value (json_object_get (o, "name")), name)) found = json_incref (o);
    json_decref (lines);
    if (!found) fail_msg ("no object %s in the scene", name);
    return found;
}

static double s_at (const json_t *o, const char *key, size_t i)
{
    return json_number_value (json_array_get (json_object_get (o, key), i));
}

static void test_capabilities (void **state)
{
    /* the validator merges the running Blender's RNA (operators and path properties) a moment after up;
     * the CLI's summary line says so: "# N operations; B bytes as compact JSON (about T tokens); checked
     * against Blender: STATE" */
    char cmd[1024], state_word[32] = "";
    size_t ops = 0, bytes = 0, tokens = 0;
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' capabilities --compact 2>&1 >/dev/null", e2e_bin ("blendmq"), s_dir);
    for (int tries = 0; tries < 120; tries++) {
        int code;
        char *out = e2e_run (cmd, &code);
        assert_int_equal (code, 0);
        const char *line = out ? strstr (out, "# ") : NULL;
        int n = line ? sscanf (line, "# %zu operations; %zu bytes as compact JSON (about %zu tokens); checked against"
                               " Blender: %31s", &ops, &bytes, &tokens, state_word) : 0;
        free (out);
        assert_int_equal (n, 4);
        if (strcmp (state_word, "pending")) break;
        usleep (500 * 1000);
    }
    printf ("capabilities --compact: %zu operations, %zu bytes (~%zu tokens), RNA %s\n", ops, bytes, tokens, state_word);
    assert_string_equal (state_word, "merged");
    assert_true (bytes < 12000);
    /* nothing dropped: every curated operation and path survived the merge with this Blender */
    char err[256];
    json_t *curated = bmq_yaml_load_file (BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);
    assert_non_null (curated);
    assert_int_equal (ops, json_object_size (json_object_get (curated, "operations")));
    json_decref (curated);
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "capabilities --compact", &code);
    json_t *palette = json_array_get (lines, 0);
    assert_non_null (strstr (json_string_value (json_object_get (palette, "object.data.energy")), "path, target"));
    assert_non_null (json_object_get (palette, "bpy.ops.mesh.spin"));
    assert_non_null (json_object_get (palette, "object.keyframe_insert"));
    json_decref (lines);
}

static void test_seed_plans_run (void **state)
{
    static const char *us2 =
        "[{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"params\": {\"radius\": 1}},"
        " {\"operation\": \"object.location.z.add\", \"params\": {\"value\": 1}},"
        " {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"params\": {\"radius\": 0.5}}]";
    assert_int_equal (s_plan ("validate", "us2", us2), 0);
    assert_int_equal (s_plan ("run", "us2", us2), 0);
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene", &code);
    json_t *objects = json_object_get (json_array_get (lines, 0), "objects");
    assert_int_equal (json_array_size (objects), 2);
    size_t i;
    json_t *o;
    int up = 0, down = 0;
    json_array_foreach (objects, i, o) {
        double d = s_at (o, "dimensions", 0), z = s_at (o, "location", 2);
        if (fabs (d - 2) < 1e-3 && fabs (z - 1) < 1e-6) up++;        /* the big one, moved up by 1 */
        if (fabs (d - 1) < 1e-3 && fabs (z) < 1e-6) down++;          /* the small one, made after it */
    }
    assert_int_equal (up, 1);
    assert_int_equal (down, 1);
    json_decref (lines);

    static const char *model =
        "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"box\"},"
        " {\"operation\": \"object.active.scale\", \"params\": {\"value\": [1, 2, 1]}},"
        " {\"operation\": \"object.active.location.x.set\", \"target\": \"box\", \"params\": {\"value\": 3}}]";
    assert_int_equal (s_plan ("run", "model", model), 0);
    json_t *box = s_object ("box");
    assert_true (fabs (s_at (box, "scale", 1) - 2) < 1e-6 && fabs (s_at (box, "location", 0) - 3) < 1e-6);
    json_decref (box);

    /* a hostile path is refused by the validator; one outside the bounds too */
    assert_int_equal (s_plan ("validate", "hostile",
        "[{\"operation\": \"object.data.filepath\", \"target\": \"box\", \"params\": {\"value\": \"/etc/passwd\"}}]"), 1);
    assert_int_equal (s_plan ("run", "hostile",
        "[{\"operation\": \"object.id_data.name\", \"target\": \"box\", \"params\": {\"value\": \"x\"}}]"), 1);
    assert_int_equal (s_plan ("validate", "big", "[{\"operation\": \"object.location.x.add\", \"target\": \"box\","
                              " \"params\": {\"value\": 50000}}]"), 1);

    /* a later failure rolls back an edit-mode plan whole */
    assert_int_equal (s_plan ("run", "edit",
        "[{\"operation\": \"bpy.ops.mesh.select_all\", \"target\": \"box\", \"params\": {\"action\": \"SELECT\"}},"
        " {\"operation\": \"mesh.extrude\", \"target\": \"box\", \"params\": {\"offset\": [0, 0, 1]}},"
        " {\"operation\": \"object.location.x.add\", \"target\": \"box\", \"params\": {\"value\": 9999}},"
        " {\"operation\": \"object.location.x.add\", \"target\": \"box\", \"params\": {\"value\": 9999}}]"), 1);
    box = s_object ("box");
    assert_true (fabs (s_at (box, "location", 0) - 3) < 1e-6 && fabs (s_at (box, "dimensions", 2) - 2) < 1e-4);
    json_decref (box);
}

/* The offline planner's new recipes (issue 27) through chat: each plan uses the new operations, is
 * accepted by the merged palette and runs to its end in Blender. */
static void test_recipes_by_chat (void **state)
{
    static const struct { const char *prompt, *needs; } cases[] = {
        { "a spinning fan", "object.keyframe_insert" },
        { "a chess pawn", "bpy.ops.mesh.spin" },
        { "a shop sign", "object.data.body" },
        { "a ceramic mug", "object.modifier" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int code;
        char args[256];
        json_decref (e2e_blendmq_json (s_dir, "scene reset", &code));
        snprintf (args, sizeof args, "chat '%s'", cases[k].prompt);
        json_t *lines = e2e_blendmq_json (s_dir, args, &code);
        const json_t *plan = NULL, *result = NULL;
        size_t i;
        json_t *l;
        json_array_foreach (lines, i, l) {
            const char *type = json_string_value (json_object_get (l, "type"));
            if (type && !strcmp (type, "chat.planned")) plan = json_object_get (json_object_get (l, "body"), "plan");
            if (type && !strcmp (type, "execute.result")) result = json_object_get (l, "body");
        }
        char *text = plan ? json_dumps (plan, JSON_COMPACT) : NULL;
        if (code != 0 || !text || !strstr (text, cases[k].needs)
            || strcmp (json_string_value (json_object_get (result, "status")), "done"))
            fail_msg ("'%s': exit %d, plan %.300s, result %s", cases[k].prompt, code, text ? text : "none",
                      result ? json_string_value (json_object_get (result, "status")) : "none");
        printf ("'%s': %zu steps, done\n", cases[k].prompt, json_array_size (plan));
        free (text);
        json_decref (lines);
    }
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_capabilities),
        cmocka_unit_test (test_seed_plans_run),
        cmocka_unit_test (test_recipes_by_chat),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
