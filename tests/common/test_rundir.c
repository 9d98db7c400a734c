/* The run dir (issue 12): owned by the user, 0700, not a symlink, or refused;
 * secret files O_EXCL|O_NOFOLLOW 0600; `blendmq down` kills only what `up`
 * started (a pid file pointing at an unrelated process is left alone). */
#include "service.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_base[128];

static int s_setup (void **state)
{
    snprintf (s_base, sizeof s_base, "/tmp/bmq-rundir-XXXXXX");
    return mkdtemp (s_base) ? 0 : -1;
}

static int s_teardown (void **state)
{
    char cmd[256];
    snprintf (cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", s_base, s_base);
    return system (cmd) == 0 ? 0 : -1;
}

/* Run the CLI; its stderr (and stdout) into out. Returns the exit code. */
static int s_cli (const char *args, char *out, size_t len)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' %s 2>&1", BMQ_CLI, args);
    FILE *p = popen (cmd, "r");
    if (!p) return -1;
    size_t n = fread (out, 1, len - 1, p);
    out[n] = 0;
    int status = pclose (p);
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static void test_run_dir_checks (void **state)
{
    char dir[256], link[256], err[512];
    /* missing: created 0700, parents too */
    snprintf (dir, sizeof dir, "%s/a/b/run", s_base);
    assert_int_equal (bmq_run_dir_check (dir, err, sizeof err), 0);
    struct stat st;
    assert_int_equal (lstat (dir, &st), 0);
    assert_int_equal (st.st_mode & 07777, 0700);
    /* a symlink to a good dir is still refused */
    snprintf (link, sizeof link, "%s/link", s_base);
    assert_int_equal (symlink (dir, link), 0);
    assert_int_equal (bmq_run_dir_check (link, err, sizeof err), -1);
    assert_non_null (strstr (err, "symlink"));
    /* open to others */
    chmod (dir, 0755);
    assert_int_equal (bmq_run_dir_check (dir, err, sizeof err), -1);
    assert_non_null (strstr (err, "0755"));
    assert_non_null (strstr (err, "0700"));
    chmod (dir, 0700);
    /* not a directory */
    char file[300];
    snprintf (file, sizeof file, "%s/file", s_base);
    close (open (file, O_WRONLY | O_CREAT, 0600));
    assert_int_equal (bmq_run_dir_check (file, err, sizeof err), -1);
    assert_non_null (strstr (err, "not a directory"));
    /* not ours (only testable as root: chown to nobody) */
    if (geteuid () == 0) {
        char other[300];
        snprintf (other, sizeof other, "%s/other", s_base);
        mkdir (other, 0700);
        assert_int_equal (chown (other, 65534, 65534), 0);
        assert_int_equal (bmq_run_dir_check (other, err, sizeof err), -1);
        assert_non_null (strstr (err, "owned by uid 65534"));
    }
}

static void test_secret_files (void **state)
{
    char path[300], target[300], err[512];
    snprintf (path, sizeof path, "%s/secret", s_base);
    assert_int_equal (bmq_secret_file_write (path, "abc", 3, false, err, sizeof err), 0);
    struct stat st;
    assert_int_equal (stat (path, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0600);
    /* O_EXCL: an existing file is not overwritten unless asked to replace it */
    assert_int_equal (bmq_secret_file_write (path, "def", 3, false, err, sizeof err), -1);
    assert_int_equal (bmq_secret_file_write (path, "def", 3, true, err, sizeof err), 0);
    /* a planted symlink is never followed: replaced, its target untouched */
    snprintf (target, sizeof target, "%s/victim", s_base);
    close (open (target, O_WRONLY | O_CREAT, 0644));
    snprintf (path, sizeof path, "%s/planted", s_base);
    assert_int_equal (symlink (target, path), 0);
    assert_int_equal (bmq_secret_file_write (path, "xyz", 3, false, err, sizeof err), -1);
    assert_int_equal (stat (target, &st), 0);
    assert_int_equal (st.st_size, 0);
    assert_int_equal (bmq_secret_file_write (path, "xyz", 3, true, err, sizeof err), 0);
    assert_int_equal (lstat (path, &st), 0);
    assert_true (S_ISREG (st.st_mode));
    assert_int_equal (stat (target, &st), 0);
    assert_int_equal (st.st_size, 0);
}

static void test_cli_refuses_bad_run_dirs (void **state)
{
    char dir[256], link[256], args[700], out[4096];
    snprintf (dir, sizeof dir, "%s/open", s_base);
    mkdir (dir, 0700);
    chmod (dir, 0755);
    snprintf (args, sizeof args, "up --run-dir '%s'", dir);
    assert_int_equal (s_cli (args, out, sizeof out), 2);
    assert_non_null (strstr (out, "must be 0700"));
    snprintf (args, sizeof args, "down --run-dir '%s'", dir);
    assert_int_equal (s_cli (args, out, sizeof out), 2);
    chmod (dir, 0700);
    snprintf (link, sizeof link, "%s/open-link", s_base);
    assert_int_equal (symlink (dir, link), 0);
    snprintf (args, sizeof args, "up --run-dir '%s'", link);
    assert_int_equal (s_cli (args, out, sizeof out), 2);
    assert_non_null (strstr (out, "symlink"));
    struct stat st;
    snprintf (args, sizeof args, "%s/verdict.key", dir);
    assert_int_equal (stat (args, &st), -1);            /* nothing was written */
}

static void test_down_leaves_unrelated_pids (void **state)
{
    /* an unrelated process of ours, and a pid file that points at it */
    pid_t victim = fork ();
    if (victim == 0) { execlp ("sleep", "sleep", "60", (char *) NULL); _exit (127); }
    assert_true (victim > 0);
    char dir[256], pids[300], pidfile[400], args[700], out[4096];
    snprintf (dir, sizeof dir, "%s/stack", s_base);
    snprintf (pids, sizeof pids, "%s/pids", dir);
    mkdir (dir, 0700);
    mkdir (pids, 0700);
    snprintf (pidfile, sizeof pidfile, "%s/gateway.pid", pids);
    FILE *f = fopen (pidfile, "w");
    fprintf (f, "%d\n", (int) victim);
    fclose (f);
    /* also one pointing at init, and one at a blendmq-looking process of another run dir */
    snprintf (pidfile, sizeof pidfile, "%s/audit.pid", pids);
    f = fopen (pidfile, "w");
    fprintf (f, "1\n");
    fclose (f);
    snprintf (args, sizeof args, "down --run-dir '%s'", dir);
    assert_int_equal (s_cli (args, out, sizeof out), 0);
    assert_non_null (strstr (out, "not stopping pid"));
    assert_non_null (strstr (out, "not a blendmq service or Blender"));
    usleep (200 * 1000);
    assert_int_equal (waitpid (victim, NULL, WNOHANG), 0);     /* still running */
    assert_int_equal (kill (victim, 0), 0);
    kill (victim, SIGKILL);
    waitpid (victim, NULL, 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_run_dir_checks),
        cmocka_unit_test (test_secret_files),
        cmocka_unit_test (test_cli_refuses_bad_run_dirs),
        cmocka_unit_test (test_down_leaves_unrelated_pids),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
