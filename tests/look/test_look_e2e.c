/* `blendmq scene look` end to end (issue 16, "a second pair of eyes"): a real
 * stack (`blendmq up --ipc`) with a real headless Blender builds a snowman
 * (`chat "build a snowman"`), then `scene look` writes the contact sheet
 * (a PNG of the size the views add up to) and lists every part the plan
 * named with its topology; --json gives the add-on's reply; --angles is
 * checked before anything is sent; the scene's objects are the same after a
 * look; a viewer's key may look (roles.def) but not save the scene. */
#include "e2e_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static char s_dir[256];
static json_t *s_names;          /* the names the snowman plan gave its objects */

static int s_setup (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-look-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc --validators 1 >&2", e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 && e2e_wait_healthy (s_dir, true, 60000) ? 0 : -1;
}

static int s_teardown (void **state)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2", e2e_bin ("blendmq"), s_dir);
    int rc = system (cmd);
    json_decref (s_names);
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (rc == 0 && system (cmd) != 0) return -1;
    return rc == 0 ? 0 : -1;
}

/* `blendmq --run-dir DIR ARGS`: its stdout (malloc'd), exit code in *code. */
static char *s_blendmq (const char *args, int *code)
{
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' %s", e2e_bin ("blendmq"), s_dir, args);
    return e2e_run (cmd, code);
}

/* Width and height from a PNG file's IHDR; false unless it is a PNG. */
static bool s_png_size (const char *path, unsigned *w, unsigned *h, long *bytes)
{
    unsigned char b[24];
    FILE *f = fopen (path, "rb");
    if (!f) return false;
    bool ok = fread (b, 1, sizeof b, f) == sizeof b && !memcmp (b, "\x89PNG\r\n\x1a\n", 8) && !memcmp (b + 12, "IHDR", 4);
    fseek (f, 0, SEEK_END);
    *bytes = ftell (f);
    fclose (f);
    *w = (unsigned) b[16] << 24 | (unsigned) b[17] << 16 | (unsigned) b[18] << 8 | b[19];
    *h = (unsigned) b[20] << 24 | (unsigned) b[21] << 16 | (unsigned) b[22] << 8 | b[23];
    return ok;
}

/* The scene's object names, sorted as the add-on lists them (scene info). */
static json_t *s_scene_names (void)
{
    int code;
    char *out = s_blendmq ("scene info", &code);
    assert_int_equal (code, 0);
    json_t *info = json_loads (out, 0, NULL);
    free (out);
    assert_non_null (info);
    json_t *names = json_array (), *o;
    size_t i;
    json_array_foreach (json_object_get (info, "objects"), i, o) json_array_append (names, json_object_get (o, "name"));
    json_decref (info);
    return names;
}

static void test_snowman_then_look (void **state)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "chat 'build a snowman'", &code);
    assert_int_equal (code, 0);
    json_t *plan = NULL, *l;
    size_t i;
    json_array_foreach (lines, i, l)
        if (!strcmp (json_string_value (json_object_get (l, "type")), "chat.planned"))
            plan = json_object_get (json_object_get (l, "body"), "plan");
    assert_non_null (plan);
    s_names = json_array ();
    json_t *step;
    json_array_foreach (plan, i, step)
        if (json_is_string (json_object_get (step, "name"))) json_array_append (s_names, json_object_get (step, "name"));
    json_decref (lines);
    assert_true (json_array_size (s_names) >= 3);

    json_t *before = s_scene_names ();
    char args[1024], png[512];
    snprintf (png, sizeof png, "%s/look.png", s_dir);
    snprintf (args, sizeof args, "scene look --out '%s'", png);
    char *out = s_blendmq (args, &code);
    fprintf (stderr, "%s", out);
    assert_int_equal (code, 0);
    unsigned w, h;
    long bytes;
    assert_true (s_png_size (png, &w, &h, &bytes));
    assert_int_equal (w, 640);                      /* 4 views of 320x240, 2 columns */
    assert_int_equal (h, 480);
    assert_true (bytes > 2000);
    assert_non_null (strstr (out, "front, right, top, perspective"));
    json_t *name;
    json_array_foreach (s_names, i, name) {
        char row[256];
        snprintf (row, sizeof row, "\n%s ", json_string_value (name));
        if (!strstr (out, row)) fail_msg ("the table does not list %s", json_string_value (name));
    }
    assert_non_null (strstr (out, "\ntotal: "));
    free (out);

    json_t *after = s_scene_names ();               /* the look left no camera, nothing renamed */
    assert_true (json_equal (before, after));
    json_decref (before);
    json_decref (after);
}

static void test_look_json (void **state)
{
    char args[1024], png[512];
    snprintf (png, sizeof png, "%s/two.png", s_dir);
    snprintf (args, sizeof args, "--json scene look '%s' --angles 2", png);
    int code;
    char *out = s_blendmq (args, &code);
    assert_int_equal (code, 0);
    json_t *r = json_loads (out, 0, NULL);
    free (out);
    assert_non_null (r);
    json_t *angles = json_object_get (r, "angles");
    assert_int_equal (json_array_size (angles), 2);
    assert_string_equal (json_string_value (json_array_get (angles, 0)), "front");
    assert_string_equal (json_string_value (json_array_get (angles, 1)), "right");
    unsigned w, h;
    long bytes;
    assert_true (s_png_size (png, &w, &h, &bytes));
    assert_int_equal (w, json_integer_value (json_object_get (json_object_get (r, "sheet"), "width")));
    assert_int_equal (h, json_integer_value (json_object_get (json_object_get (r, "sheet"), "height")));
    assert_int_equal (w, 640);
    assert_int_equal (h, 240);
    assert_int_equal (bytes, json_integer_value (json_object_get (r, "bytes")));
    /* every part the plan named is there, a closed, whole mesh or at least one piece of one */
    json_t *name, *o;
    size_t i, j;
    long long vertices = 0;
    json_array_foreach (json_object_get (r, "objects"), j, o)
        if (json_is_integer (json_object_get (o, "vertices"))) vertices += json_integer_value (json_object_get (o, "vertices"));
    json_array_foreach (s_names, i, name) {
        json_t *found = NULL;
        json_array_foreach (json_object_get (r, "objects"), j, o)
            if (json_equal (json_object_get (o, "name"), name)) found = o;
        if (!found) fail_msg ("the reply does not list %s", json_string_value (name));
        if (strcmp (json_string_value (json_object_get (found, "type")), "MESH")) continue;
        assert_true (json_integer_value (json_object_get (found, "vertices")) > 0);
        assert_true (json_integer_value (json_object_get (found, "faces")) > 0);
        assert_true (json_integer_value (json_object_get (found, "loose_parts")) >= 1);
        assert_true (json_is_array (json_object_get (json_object_get (found, "bounds"), "min")));
    }
    json_t *totals = json_object_get (r, "totals");
    assert_int_equal (json_integer_value (json_object_get (totals, "vertices")), vertices);
    assert_int_equal (json_integer_value (json_object_get (r, "count")), json_array_size (json_object_get (r, "objects")));
    json_decref (r);
}

static void test_look_refusals (void **state)
{
    int code;
    char args[1024], png[512];
    snprintf (png, sizeof png, "%s/nine.png", s_dir);
    snprintf (args, sizeof args, "scene look --out '%s' --angles 9 2>&1", png);
    char *out = s_blendmq (args, &code);
    assert_int_equal (code, 2);
    assert_non_null (strstr (out, "--angles must be 1..8"));
    assert_true (access (png, F_OK) != 0);
    free (out);
    snprintf (args, sizeof args, "scene look --out '%s' --angles 2x 2>&1", png);
    out = s_blendmq (args, &code);
    assert_int_equal (code, 2);
    assert_non_null (strstr (out, "--angles must be 1..8"));
    free (out);

    /* a viewer may look (roles.def), not save the scene */
    out = s_blendmq ("keys add-client eyes --role viewer >&2", &code);
    free (out);
    assert_int_equal (code, 0);
    snprintf (png, sizeof png, "%s/viewer.png", s_dir);
    snprintf (args, sizeof args, "--key eyes scene look --out '%s' --angles 1 >&2", png);
    out = s_blendmq (args, &code);
    free (out);
    assert_int_equal (code, 0);
    unsigned w, h;
    long bytes;
    assert_true (s_png_size (png, &w, &h, &bytes));
    assert_int_equal (w, 320);
    assert_int_equal (h, 240);
    snprintf (args, sizeof args, "--key eyes scene save '%s/viewer.blend' 2>&1", s_dir);
    out = s_blendmq (args, &code);
    assert_int_equal (code, 1);
    assert_non_null (strstr (out, "forbidden"));
    free (out);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_snowman_then_look),
        cmocka_unit_test (test_look_json),
        cmocka_unit_test (test_look_refusals),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
