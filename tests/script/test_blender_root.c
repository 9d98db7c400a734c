/* bmq_blender_root (issue 30): which Blender lives in a root of its own, so that the script
 * sandbox and the confined live Blender take /usr and /etc from that root and run its
 * /usr/bin/blender, and which does not (a host Blender, a wrapper with no usable root). */
#include "blender_root.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static char s_dir[64];

static void s_file (const char *rel, mode_t mode)
{
    char path[512];
    snprintf (path, sizeof path, "%s/%s", s_dir, rel);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs ("#!/bin/sh\n", f);
    fclose (f);
    assert_int_equal (chmod (path, mode), 0);
}

static void s_mkdir (const char *rel)
{
    char path[512];
    snprintf (path, sizeof path, "%s/%s", s_dir, rel);
    assert_int_equal (mkdir (path, 0755), 0);
}

static int s_setup (void **state)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-root-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    /* a: a wrapper next to a root with usr/bin/blender; b: a wrapper next to a root without
     * it; c: a plain Blender, no root; d: a wrapper whose `root` is a file */
    const char *dirs[] = { "a", "a/r", "a/r/usr", "a/r/usr/bin", "b", "b/root", "b/root/usr", "c", "d", NULL };
    for (const char **d = dirs; *d; d++) s_mkdir (*d);
    s_file ("a/blender", 0755);
    s_file ("a/r/usr/bin/blender", 0755);
    char path[512], target[512];
    snprintf (path, sizeof path, "%s/a/root", s_dir);
    snprintf (target, sizeof target, "%s/a/r", s_dir);
    if (symlink (target, path)) return -1;          /* root is a link, as blender-roots.sh makes it */
    s_file ("b/blender", 0755);
    s_file ("c/blender", 0755);
    s_file ("d/blender", 0755);
    s_file ("d/root", 0644);
    return 0;
}

static int s_teardown (void **state)
{
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static void test_a_wrapper_next_to_its_root (void **state)
{
    char blender[512], root[512], want[PATH_MAX], target[512];
    snprintf (blender, sizeof blender, "%s/a/blender", s_dir);
    snprintf (target, sizeof target, "%s/a/r", s_dir);
    assert_non_null (realpath (target, want));
    assert_true (bmq_blender_root (blender, root, sizeof root));
    assert_string_equal (root, want);                /* the link resolved: the real folder */
    assert_false (bmq_blender_root (blender, root, 8));     /* too small for the path: no root */
    assert_string_equal (root, "");
}

static void test_found_on_path (void **state)
{
    char path[1024], root[512];
    const char *old = getenv ("PATH");
    char *saved = old ? strdup (old) : NULL;
    snprintf (path, sizeof path, "%s/c:%s/a", s_dir, s_dir);
    setenv ("PATH", path, 1);
    assert_false (bmq_blender_root ("blender", root, sizeof root));      /* c's comes first: no root */
    snprintf (path, sizeof path, "%s/a:%s/c", s_dir, s_dir);
    setenv ("PATH", path, 1);
    assert_true (bmq_blender_root ("blender", root, sizeof root));
    if (saved) setenv ("PATH", saved, 1);
    free (saved);
}

static void test_not_a_root (void **state)
{
    char blender[512], root[512];
    const char *which[] = { "b/blender", "c/blender", "d/blender", "missing/blender" };
    for (size_t i = 0; i < sizeof which / sizeof *which; i++) {
        snprintf (blender, sizeof blender, "%s/%s", s_dir, which[i]);
        strcpy (root, "x");
        assert_false (bmq_blender_root (blender, root, sizeof root));
        assert_string_equal (root, "");
    }
    assert_false (bmq_blender_root ("", root, sizeof root));
    assert_false (bmq_blender_root (NULL, root, sizeof root));
    assert_false (bmq_blender_root ("/usr/bin/blender", root, sizeof root));   /* the host's */
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_a_wrapper_next_to_its_root),
        cmocka_unit_test (test_found_on_path),
        cmocka_unit_test (test_not_a_root),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
