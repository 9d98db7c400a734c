/* Config: built-in defaults, file overrides, environment overrides, and
 * clear errors for unknown keys, wrong types and bad YAML. Also the bounded
 * YAML reader's refusals (aliases, depth). */
#include "config.h"
#include "yaml_json.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char s_path[64];

static const char *s_write (const char *text)
{
    snprintf (s_path, sizeof s_path, "/tmp/bmq-test-config-%d.yaml", (int) getpid ());
    FILE *f = fopen (s_path, "w");
    fputs (text, f);
    fclose (f);
    return s_path;
}

static void test_defaults (void **state)
{
    unsetenv ("BLENDMQ_EXECUTOR_ENDPOINT");
    bmq_config_t *cfg = bmq_config_load (NULL, NULL, 0);
    assert_non_null (cfg);
    assert_string_equal (bmq_config_str (cfg, "executor.endpoint"), "tcp://127.0.0.1:7704");
    assert_int_equal (bmq_config_int (cfg, "heartbeat.interval_ms"), 1000);
    assert_null (bmq_config_json (cfg, "no.such"));      /* a typed read of it aborts in test builds (tests/cli) */
    bmq_config_destroy (&cfg);
    assert_null (cfg);
}

static void test_file_and_env_override (void **state)
{
    const char *path = s_write ("executor:\n  endpoint: ipc:///tmp/x.sock\nheartbeat:\n  liveness: 5\n");
    setenv ("BLENDMQ_HEARTBEAT_INTERVAL_MS", "250", 1);
    setenv ("BLENDMQ_BLENDER_HOST", "10.1.2.3", 1);
    bmq_config_t *cfg = bmq_config_load (path, NULL, 0);
    assert_non_null (cfg);
    assert_string_equal (bmq_config_str (cfg, "executor.endpoint"), "ipc:///tmp/x.sock");
    assert_int_equal (bmq_config_int (cfg, "heartbeat.liveness"), 5);
    assert_int_equal (bmq_config_int (cfg, "heartbeat.interval_ms"), 250);
    assert_string_equal (bmq_config_str (cfg, "blender.host"), "10.1.2.3");
    /* save and load again: same values */
    char saved[80];
    snprintf (saved, sizeof saved, "%s.saved", path);
    assert_int_equal (bmq_config_save (cfg, saved, NULL, 0), 0);
    unsetenv ("BLENDMQ_HEARTBEAT_INTERVAL_MS");
    bmq_config_t *again = bmq_config_load (saved, NULL, 0);
    assert_non_null (again);
    assert_int_equal (bmq_config_int (again, "heartbeat.interval_ms"), 250);
    assert_string_equal (bmq_config_str (again, "executor.endpoint"), "ipc:///tmp/x.sock");
    bmq_config_destroy (&again);
    bmq_config_destroy (&cfg);
    unsetenv ("BLENDMQ_BLENDER_HOST");
    remove (saved);
    remove (path);
}

static void test_errors (void **state)
{
    char err[512];
    assert_null (bmq_config_load (s_write ("executr:\n  endpoint: x\n"), err, sizeof err));
    assert_non_null (strstr (err, "unknown key 'executr'"));
    assert_null (bmq_config_load (s_write ("heartbeat:\n  interval_ms: [1, 2]\n"), err, sizeof err));
    assert_non_null (strstr (err, "wrong type"));
    assert_null (bmq_config_load (s_write ("heartbeat: {interval_ms: 1\n"), err, sizeof err));
    assert_non_null (strstr (err, "line"));
    assert_null (bmq_config_load ("/nonexistent/blendmq.yaml", err, sizeof err));
    assert_non_null (strstr (err, "cannot open"));
    remove (s_path);
}

/* Issue 29/31: a typed read of a key config_keys.def does not declare is a
 * bug in the code; in test builds it aborts with the key's name. */
static void test_undeclared_read_aborts (void **state)
{
    (void) state;
    bmq_config_t *cfg = bmq_config_load (NULL, NULL, 0);
    assert_non_null (cfg);
    pid_t pid = fork ();
    if (pid == 0) {
        freopen ("/dev/null", "w", stderr);
        bmq_config_int (cfg, "heartbeat.intervalms");       /* the typo */
        _exit (0);
    }
    int status = 0;
    waitpid (pid, &status, 0);
    assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGABRT);
    assert_int_equal (bmq_config_int (cfg, "heartbeat.interval_ms"), 1000);
    const bmq_config_key_t *k = bmq_config_key ("planner.backend");
    assert_non_null (k);
    assert_int_equal (k->type, BMQ_CONFIG_ENUM);
    assert_string_equal (k->choices, "auto|offline|gemini|openai");
    assert_null (bmq_config_key ("heartbeat.intervalms"));
    bmq_config_destroy (&cfg);
}

static void test_yaml_refusals (void **state)
{
    char err[256];
    const char *bomb = "a: &x [1, 2]\nb: [*x, *x]\n";
    assert_null (bmq_yaml_parse (bomb, strlen (bomb), err, sizeof err));
    assert_non_null (strstr (err, "not allowed"));
    char deep[200] = "";
    for (int i = 0; i < 60; i++) strcat (deep, "[");
    assert_null (bmq_yaml_parse (deep, strlen (deep), err, sizeof err));
    const char *typed = "i: 3\nf: 2.5\nb: true\nn: ~\nq: \"3\"\ns: hello\n";
    json_t *v = bmq_yaml_parse (typed, strlen (typed), err, sizeof err);
    assert_non_null (v);
    assert_true (json_is_integer (json_object_get (v, "i")));
    assert_true (json_is_real (json_object_get (v, "f")));
    assert_true (json_is_true (json_object_get (v, "b")));
    assert_true (json_is_null (json_object_get (v, "n")));
    assert_string_equal (json_string_value (json_object_get (v, "q")), "3");
    assert_string_equal (json_string_value (json_object_get (v, "s")), "hello");
    json_decref (v);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_defaults),
        cmocka_unit_test (test_file_and_env_override),
        cmocka_unit_test (test_errors),
        cmocka_unit_test (test_yaml_refusals),
        cmocka_unit_test (test_undeclared_read_aborts),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
