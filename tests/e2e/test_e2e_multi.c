/* Several Blenders behind one gateway (`up --blenders 2`): a plan names its
 * Blender with "target" and lands only there; no target means the default;
 * an unknown target is refused before anything runs. */
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
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-multi-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc --validators 1 --blenders 2 >&2", e2e_bin ("blendmq"), s_dir);
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

static json_t *s_names (const char *target)
{
    int code;
    char args[256];
    snprintf (args, sizeof args, "scene%s%s", target ? " --target " : "", target ? target : "");
    json_t *lines = e2e_blendmq_json (s_dir, args, &code);
    assert_int_equal (code, 0);
    json_t *names = json_array ();
    size_t i;
    json_t *o;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "objects"), i, o)
        json_array_append (names, json_object_get (o, "name"));
    json_decref (lines);
    return names;
}

static void s_run (const char *name, const char *target, int expect)
{
    char path[512], args[1024];
    snprintf (path, sizeof path, "%s/%s.json", s_dir, name);
    FILE *f = fopen (path, "w");
    fprintf (f, "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"%s\"}]", name);
    fclose (f);
    snprintf (args, sizeof args, "plan run '%s'%s%s 2>/dev/null", path, target ? " --target " : "", target ? target : "");
    int code;
    json_decref (e2e_blendmq_json (s_dir, args, &code));
    assert_int_equal (code, expect);
}

static void test_targets (void **state)
{
    s_run ("in_default", NULL, 0);
    s_run ("in_second", "blender-2", 0);
    s_run ("in_local", "local", 0);
    s_run ("nowhere", "blender-9", 1);
    json_t *first = s_names (NULL), *second = s_names ("blender-2");
    assert_int_equal (json_array_size (first), 2);
    assert_int_equal (json_array_size (second), 1);
    assert_string_equal (json_string_value (json_array_get (second, 0)), "in_second");
    size_t i;
    json_t *n;
    json_array_foreach (first, i, n) assert_string_not_equal (json_string_value (n), "in_second");
    json_decref (first);
    json_decref (second);
    /* both executors report in status */
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "status", &code);
    assert_int_equal (code, 0);
    int executors = 0;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "services"), i, n)
        if (!strncmp (json_string_value (json_object_get (n, "name")), "executor", 8)) executors++;
    assert_int_equal (executors, 2);
    json_decref (lines);
}

int main (void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_targets) };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
