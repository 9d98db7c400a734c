/* BPY scripts end to end (issue 8) on a real stack (`up --ipc`, a headless
 * Blender, the bubblewrap sandbox): seed acceptance A (a cube script is
 * validated, sandboxed on a copy of the live scene, applied after --confirm,
 * and the cube is live), B (import os: rejected, nothing runs), C (an
 * operator Blender lacks: rejected); a script that raises in Blender
 * (the sandbox reports the traceback, apply is refused, nothing reaches the
 * live scene); apply without --confirm, of an unknown id, twice, or after the
 * scene changed: refused; and the audit story of a script: request, verdict,
 * sandbox, confirm, live, all under the script id and the script's sha256. */
#include "e2e_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
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
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-script-XXXXXX");
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

/* `blendmq --json script ACTION ARG [--confirm]` on a script given as text (written to a file). */
static json_t *s_script (const char *action, const char *text_or_id, bool confirm, int *code)
{
    char args[1200], path[400];
    const char *arg = text_or_id;
    if (strcmp (action, "apply")) {
        snprintf (path, sizeof path, "%s/script-%d.py", s_dir, rand ());
        FILE *f = fopen (path, "w");
        assert_non_null (f);
        fputs (text_or_id, f);
        fclose (f);
        arg = path;
    }
    snprintf (args, sizeof args, "script %s '%s'%s", action, arg, confirm ? " --confirm" : "");
    json_t *lines = e2e_blendmq_json (s_dir, args, code);
    json_t *first = json_incref (json_array_get (lines, 0));
    json_decref (lines);
    return first ? first : json_object ();
}

static const char *s_str (const json_t *o, const char *key) { return json_string_value (json_object_get (o, key)); }

/* Names of the live scene's objects. */
static json_t *s_scene_names (void)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene info", &code);
    assert_int_equal (code, 0);
    json_t *names = json_array ();
    size_t i;
    json_t *o;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "objects"), i, o)
        json_array_append (names, json_object_get (o, "name"));
    json_decref (lines);
    return names;
}

static bool s_has (const json_t *names, const char *name)
{
    size_t i;
    json_t *n;
    json_array_foreach (names, i, n)
        if (!strcmp (json_string_value (n), name)) return true;
    return false;
}

/* Sandbox `text`; expect `status` (and exit code); returns the reply. */
static json_t *s_sandbox (const char *text, const char *status, int expect_code)
{
    int code;
    json_t *r = s_script ("sandbox", text, false, &code);
    if (code != expect_code || !s_str (r, "status") || strcmp (s_str (r, "status"), status)) {
        char *dump = json_dumps (r, JSON_INDENT (1));
        fprintf (stderr, "sandbox reply (exit %d): %s\n", code, dump);
        free (dump);
    }
    assert_int_equal (code, expect_code);
    assert_string_equal (s_str (r, "status"), status);
    return r;
}

/* `blendmq --json script list`: the entry for `id`, or NULL. */
static json_t *s_list_entry (const char *id)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "script list", &code);
    assert_int_equal (code, 0);
    json_t *found = NULL;
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "scripts"), i, e)
        if (!strcmp (json_string_value (json_object_get (e, "script_id")), id)) found = json_incref (e);
    json_decref (lines);
    return found;
}

static void test_seed_a_cube_sandboxed_then_applied (void **state)
{
    const char *src = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=2)\nbpy.context.active_object.name = 'seed_a_cube'\n";
    int code;
    json_t *v = s_script ("validate", src, false, &code);
    assert_int_equal (code, 0);
    assert_true (json_is_true (json_object_get (v, "is_valid")));
    const char *sha = s_str (v, "sha256");
    assert_non_null (sha);

    json_t *r = s_sandbox (src, "sandboxed", 0);
    const char *id = s_str (r, "script_id");
    assert_non_null (id);
    json_t *sb = json_object_get (r, "sandbox");
    assert_true (json_is_true (json_object_get (sb, "ok")));
    assert_string_equal (s_str (sb, "script_sha256"), sha);
    json_t *added = json_object_get (json_object_get (sb, "diff"), "added");
    assert_int_equal (json_array_size (added), 1);
    assert_string_equal (s_str (json_array_get (added, 0), "name"), "seed_a_cube");
    json_t *names = s_scene_names ();
    assert_false (s_has (names, "seed_a_cube"));            /* the sandbox ran on a copy */
    json_decref (names);

    /* no live run without --confirm */
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' script apply '%s' 2>&1", e2e_bin ("blendmq"), s_dir, id);
    char *out = e2e_run (cmd, &code);
    assert_int_equal (code, 1);
    assert_non_null (strstr (out, "--confirm"));
    free (out);
    names = s_scene_names ();
    assert_false (s_has (names, "seed_a_cube"));
    json_decref (names);

    /* the sandboxed script is listed as pending (what the panel shows for Apply to live) */
    json_t *listing = s_list_entry (id);
    assert_non_null (listing);
    assert_true (json_is_true (json_object_get (listing, "ok")));
    assert_false (json_is_true (json_object_get (listing, "applied")));
    json_decref (listing);

    json_t *a = s_script ("apply", id, true, &code);
    assert_int_equal (code, 0);
    assert_string_equal (s_str (a, "status"), "applied");
    listing = s_list_entry (id);
    assert_true (json_is_true (json_object_get (listing, "applied")));
    json_decref (listing);
    names = s_scene_names ();
    assert_true (s_has (names, "seed_a_cube"));              /* live */
    json_decref (names);

    /* a second confirmation is refused */
    json_t *again = s_script ("apply", id, true, &code);
    assert_int_equal (code, 1);
    assert_string_equal (s_str (again, "status"), "refused");

    /* the story in the audit trail: request → verdict → sandbox → confirm → live, one script hash */
    const char *want[] = { "script.request", "script.verdict", "script.sandbox", "script.confirm", "script.live" };
    bool seen[5] = { false };
    for (int tries = 0; tries < 50; tries++) {
        char args[200];
        snprintf (args, sizeof args, "audit show %s", id);
        json_t *recs = e2e_blendmq_json (s_dir, args, &code);
        size_t i;
        json_t *rec;
        int next = 0;
        memset (seen, 0, sizeof seen);
        json_array_foreach (recs, i, rec) {
            const char *kind = s_str (rec, "kind");
            json_t *data = json_object_get (rec, "data");
            for (int k = 0; k < 5; k++) {
                if (!kind || strcmp (kind, want[k]) || seen[k]) continue;
                assert_string_equal (s_str (data, "script_sha256"), sha);
                assert_string_equal (s_str (data, "script_id"), id);
                if (k == next) next++;              /* in story order */
                seen[k] = true;
            }
        }
        json_decref (recs);
        if (next == 5) break;
        usleep (200 * 1000);
    }
    for (int k = 0; k < 5; k++) {
        if (!seen[k]) fprintf (stderr, "missing audit record %s\n", want[k]);
        assert_true (seen[k]);
    }
    json_decref (again);
    json_decref (a);
    json_decref (r);
    json_decref (v);
}

static void test_seed_b_import_os_rejected (void **state)
{
    int code;
    json_t *v = s_script ("validate", "import os\nos.remove('/important')\n", false, &code);
    assert_int_equal (code, 1);
    assert_false (json_is_true (json_object_get (v, "is_valid")));
    assert_true (json_array_size (json_object_get (v, "errors")) >= 1);
    json_t *r = s_sandbox ("import os\nos.remove('/important')\n", "rejected", 1);
    assert_null (json_object_get (r, "sandbox"));           /* nothing ran */
    assert_null (json_object_get (r, "seal"));              /* the client never sees a seal */
    json_t *a = s_script ("apply", s_str (r, "script_id"), true, &code);
    assert_int_equal (code, 1);                             /* and it cannot be applied */
    assert_string_equal (s_str (a, "status"), "refused");
    json_decref (a);
    json_decref (r);
    json_decref (v);
}

static void test_seed_c_unknown_operator_rejected (void **state)
{
    int code;
    json_t *v = s_script ("validate", "import bpy\nbpy.ops.mesh.nonexistent()\n", false, &code);
    assert_int_equal (code, 1);
    assert_false (json_is_true (json_object_get (v, "is_valid")));
    json_t *r = s_sandbox ("import bpy\nbpy.ops.nonexistent.op()\n", "rejected", 1);
    assert_null (json_object_get (r, "sandbox"));
    json_decref (r);
    json_decref (v);
}

static void test_script_that_raises (void **state)
{
    const char *src = "import bpy\nbpy.ops.mesh.primitive_cube_add()\nbpy.context.active_object.name = 'raises_cube'\n"
                      "items = [1]\nx = items[5]\n";
    json_t *r = s_sandbox (src, "sandbox_failed", 1);
    json_t *sb = json_object_get (r, "sandbox");
    assert_string_equal (s_str (sb, "verdict"), "error");
    assert_non_null (strstr (s_str (sb, "traceback"), "IndexError"));
    int code;
    json_t *a = s_script ("apply", s_str (r, "script_id"), true, &code);
    assert_int_equal (code, 1);
    assert_string_equal (s_str (a, "status"), "refused");
    json_t *names = s_scene_names ();
    assert_false (s_has (names, "raises_cube"));            /* nothing reached the live scene */
    json_decref (names);
    json_decref (a);
    json_decref (r);
}

static void test_unknown_id_refused (void **state)
{
    int code;
    json_t *a = s_script ("apply", "0123456789ABCDEF0123456789ABCDEF", true, &code);
    assert_int_equal (code, 1);
    assert_string_equal (s_str (a, "status"), "refused");
    json_decref (a);
}

static void test_scene_changed_after_sandbox (void **state)
{
    json_t *y = s_sandbox ("import bpy\nbpy.ops.mesh.primitive_uv_sphere_add(radius=0.5)\n"
                           "bpy.context.active_object.name = 'late_sphere'\n", "sandboxed", 0);
    json_t *x = s_sandbox ("import bpy\nbpy.ops.mesh.primitive_cone_add()\nbpy.context.active_object.name = 'changer'\n",
                           "sandboxed", 0);
    int code;
    json_t *ax = s_script ("apply", s_str (x, "script_id"), true, &code);      /* the scene changes */
    assert_int_equal (code, 0);
    json_t *ay = s_script ("apply", s_str (y, "script_id"), true, &code);      /* y was tested on the old scene */
    assert_int_equal (code, 1);
    assert_string_equal (s_str (ay, "status"), "refused");
    assert_non_null (strstr (s_str (ay, "message"), "changed"));
    json_t *names = s_scene_names ();
    assert_true (s_has (names, "changer"));
    assert_false (s_has (names, "late_sphere"));
    json_decref (names);
    json_decref (ay);
    json_decref (ax);
    json_decref (x);
    json_decref (y);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_seed_a_cube_sandboxed_then_applied),
        cmocka_unit_test (test_seed_b_import_os_rejected),
        cmocka_unit_test (test_seed_c_unknown_operator_rejected),
        cmocka_unit_test (test_script_that_raises),
        cmocka_unit_test (test_unknown_id_refused),
        cmocka_unit_test (test_scene_changed_after_sandbox),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
