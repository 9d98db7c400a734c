/* The mandatory sandbox (FR-006) against a real headless Blender under
 * bubblewrap: seed acceptance A, the benign corpus (validated, then run
 * clean), tracebacks, the corpus scripts only the sandbox can stop, a raw
 * escape that bypasses every static and run-time check (contained: nothing
 * reaches the host's file system, network or process table; every leftover
 * is reported), a copy of a live scene, the preview, and the refusal when no
 * sandbox can run. */
#include "sandbox_pool.h"
#include "script_testutil.h"
#include "script_validator.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

static bmq_sandbox_pool_t *s_pool;
static bmq_script_validator_t *s_v;
static json_t *s_rna;

static int s_setup (void **state)
{
    char err[512];
    bmq_sandbox_opts_t o = { .warm = 2, .timeout_ms = 20000 };
    s_pool = bmq_sandbox_pool_new (&o, err, sizeof err);
    if (!s_pool) {
        fprintf (stderr, "%s\n", err);
        return -1;
    }
    s_rna = bmq_script_rna_load (BMQ_SOURCE_DIR "/" BMQ_SCRIPT_RNA_FIXTURE, err, sizeof err);
    s_v = s_rna ? bmq_script_validator_new (NULL, s_rna, err, sizeof err) : NULL;
    return s_v ? 0 : -1;
}

static int s_teardown (void **state)
{
    bmq_sandbox_pool_destroy (&s_pool);
    bmq_sandbox_pool_destroy (&s_pool);
    bmq_script_validator_destroy (&s_v);
    json_decref (s_rna);
    return 0;
}

static json_t *s_run (const char *src, size_t len, const void *blend, size_t blend_len, int timeout_ms)
{
    bmq_sandbox_pool_wait_ready (s_pool, 1, 60000);
    bmq_sandbox_job_t job = { .timeout_ms = timeout_ms };
    json_t *r = bmq_sandbox_pool_run (s_pool, src, len, blend, blend_len, &job, NULL, NULL);
    assert_non_null (r);
    return r;
}

static void s_dump (const char *what, json_t *r)
{
    char *s = json_dumps (r, JSON_INDENT (1));
    fprintf (stderr, "%s: %s\n", what, s);
    free (s);
}

static const char *s_verdict (json_t *r)
{
    return json_string_value (json_object_get (r, "verdict"));
}

static void test_seed_acceptance_a (void **state)
{
    const char *src = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=2)\n";
    json_t *v = bmq_script_validate (s_v, src, strlen (src));
    assert_true (json_is_true (json_object_get (v, "is_valid")));
    json_t *r = s_run (src, strlen (src), NULL, 0, 0);
    if (!json_is_true (json_object_get (r, "ok")))
        s_dump ("A", r);
    assert_true (json_is_true (json_object_get (r, "ok")));
    assert_string_equal (s_verdict (r), "ok");
    json_t *added = json_object_get (json_object_get (r, "diff"), "added");
    assert_int_equal (json_array_size (added), 1);
    assert_int_equal (json_integer_value (json_object_get (json_array_get (added, 0), "vertices")), 8);
    assert_string_equal (json_string_value (json_object_get (r, "script_sha256")),
                         json_string_value (json_object_get (v, "sha256")));
    json_decref (v);
    json_decref (r);
}

static void test_good_corpus_runs_clean (void **state)
{
    size_t n;
    char **files = stu_corpus ("good", &n);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *src = stu_read (files[i], &len);
        json_t *v = bmq_script_validate (s_v, src, len);
        assert_true (json_is_true (json_object_get (v, "is_valid")));
        json_t *r = s_run (src, len, NULL, 0, 0);
        if (!json_is_true (json_object_get (r, "ok")))
            s_dump (files[i], r);
        assert_true (json_is_true (json_object_get (r, "ok")));
        assert_int_equal (json_array_size (json_object_get (r, "violations")), 0);
        assert_true (json_is_null (json_object_get (r, "traceback")));
        printf ("good %s: %.0f ms, %zu objects added\n", strrchr (files[i], '/') + 1,
                json_number_value (json_object_get (r, "total_ms")),
                json_array_size (json_object_get (json_object_get (r, "diff"), "added")));
        json_decref (v);
        json_decref (r);
        free (src);
    }
    stu_free_list (files, n);
}

static void test_traceback_is_reported (void **state)
{
    const char *src = "import bpy\nbpy.ops.mesh.primitive_cube_add()\n\nitems = [1]\nx = items[5]\n";
    json_t *v = bmq_script_validate (s_v, src, strlen (src));
    assert_true (json_is_true (json_object_get (v, "is_valid")));       /* passes validation ... */
    json_t *r = s_run (src, strlen (src), NULL, 0, 0);
    assert_false (json_is_true (json_object_get (r, "ok")));            /* ... but not the sandbox */
    assert_string_equal (s_verdict (r), "error");
    const char *tb = json_string_value (json_object_get (r, "traceback"));
    assert_non_null (tb);
    assert_non_null (strstr (tb, "IndexError"));
    assert_non_null (strstr (tb, "line 5"));
    json_t *err = json_object_get (r, "error");
    assert_int_equal (json_integer_value (json_object_get (err, "line")), 5);
    json_decref (v);
    json_decref (r);
    /* an operator that fails inside Blender */
    src = "import bpy\nbpy.context.view_layer.objects.active = None\nbpy.ops.object.mode_set(mode='EDIT')\n";
    r = s_run (src, strlen (src), NULL, 0, 0);
    assert_string_equal (s_verdict (r), "error");
    assert_non_null (strstr (json_string_value (json_object_get (r, "traceback")), "RuntimeError"));
    json_decref (r);
}

static void test_evil_corpus_left_to_the_sandbox (void **state)
{
    size_t n, contained = 0;
    char **files = stu_corpus ("evil", &n);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char kind[32], what[32];
        char *src = stu_read (files[i], &len);
        stu_expect (src, kind, sizeof kind, what, sizeof what);
        if (strcmp (kind, "sandbox") == 0) {
            json_t *r = s_run (src, len, NULL, 0, 4000);
            if (json_is_true (json_object_get (r, "ok")) || strcmp (s_verdict (r), what) != 0)
                s_dump (files[i], r);
            assert_false (json_is_true (json_object_get (r, "ok")));
            assert_string_equal (s_verdict (r), what);
            contained++;
            json_decref (r);
        }
        free (src);
    }
    printf ("evil corpus: %zu scripts stopped by the sandbox\n", contained);
    assert_true (contained >= 4);
    stu_free_list (files, n);
}

static bool s_process_with (const char *token)
{
    DIR *d = opendir ("/proc");
    struct dirent *e;
    bool found = false;
    while (d && (e = readdir (d)) && !found) {
        char path[300], buf[4096];
        snprintf (path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen (path, "rb");
        if (!f)
            continue;
        size_t n = fread (buf, 1, sizeof buf - 1, f);
        fclose (f);
        for (size_t i = 0; i < n; i++)
            if (!buf[i])
                buf[i] = ' ';
        buf[n] = 0;
        found = strstr (buf, token) != NULL && !strstr (buf, "test_script_sandbox");
    }
    if (d)
        closedir (d);
    return found;
}

/* An escape that has beaten the static checks AND the run-time allowlist
 * (through bpy.utils._sys): everything it tries must stay inside. */
static void test_raw_escape_is_contained (void **state)
{
    int srv = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    assert_int_equal (bind (srv, (struct sockaddr *) &addr, sizeof addr), 0);
    assert_int_equal (listen (srv, 4), 0);
    socklen_t alen = sizeof addr;
    getsockname (srv, (struct sockaddr *) &addr, &alen);
    char canary[128], project[256], token[64], src[6000];
    snprintf (token, sizeof token, "bmqtoken%d", (int) getpid ());
    snprintf (canary, sizeof canary, "/tmp/blendmq-canary-%d", (int) getpid ());
    snprintf (project, sizeof project, "%s/tests/script/blendmq-canary-%d", BMQ_SOURCE_DIR, (int) getpid ());
    unlink (canary);
    snprintf (src, sizeof src,
        "import bpy\n"
        "b = bpy.utils._sys.modules['builtins']\n"
        "imp = b.__import__\n"
        "type = b.type\n"
        "os, socket, threading, subprocess = imp('os'), imp('socket'), imp('threading'), imp('subprocess')\n"
        "report = []\n"
        "def attempt(name, fn):\n"
        "    try:\n"
        "        fn()\n"
        "        report.append(name + ': done')\n"
        "    except b.BaseException as e:\n"
        "        report.append(name + ': blocked ' + type(e).__name__)\n"
        "attempt('host_tmp', lambda: b.open('%s', 'w').write('x'))\n"
        "attempt('project', lambda: b.open('%s', 'w').write('x'))\n"
        "attempt('system', lambda: b.open('/usr/blendmq-evil', 'w').write('x'))\n"
        "attempt('home', lambda: b.open(os.path.expanduser('~/evil.txt'), 'w').write('x'))\n"
        "attempt('network', lambda: socket.create_connection(('127.0.0.1', %d), timeout=2).sendall(b'pwned'))\n"
        "attempt('process', lambda: subprocess.Popen(['sh', '-c', 'sleep 300; : %s']))\n"
        "attempt('handler', lambda: bpy.app.handlers.depsgraph_update_post.append(lambda *a: None))\n"
        "attempt('timer', lambda: bpy.app.timers.register(lambda: 10.0))\n"
        "def driver():\n"
        "    fc = bpy.data.objects['Cube'].driver_add('location', 0)\n"
        "    fc.driver.expression = '1'\n"
        "attempt('driver', driver)\n"
        "def register():\n"
        "    T = imp('types').new_class('EvilOp', (bpy.types.Operator,), {}, lambda ns: ns.update(bl_idname='object.evil_op', bl_label='x'))\n"
        "    bpy.utils.register_class(T)\n"
        "attempt('class', register)\n"
        "def text():\n"
        "    t = bpy.data.texts.new('evil.py')\n"
        "    t.use_module = True\n"
        "attempt('text', text)\n"
        "attempt('thread', lambda: threading.Thread(target=lambda: imp('time').sleep(30), daemon=True).start())\n"
        "def prefs():\n"
        "    bpy.context.preferences.filepaths.texture_directory = '/'\n"
        "attempt('preferences', prefs)\n"
        "print('\\n'.join(report))\n",
        canary, project, ntohs (addr.sin_port), token);
    json_t *r = s_run (src, strlen (src), NULL, 0, 0);
    const char *out = json_string_value (json_object_get (r, "output"));
    printf ("escape attempts inside the sandbox:\n%s", out ? out : "(no output)\n");
    assert_false (json_is_true (json_object_get (r, "ok")));
    assert_string_equal (s_verdict (r), "rejected");
    const char *checks[] = { "handlers", "timers", "drivers", "classes", "texts", "threads", "preferences",
                             "processes", "files" };
    for (size_t c = 0; c < sizeof checks / sizeof *checks; c++) {
        bool found = false;
        size_t i;
        json_t *v;
        json_array_foreach (json_object_get (r, "violations"), i, v)
            found |= strcmp (json_string_value (json_object_get (v, "check")), checks[c]) == 0;
        if (!found)
            s_dump (checks[c], r);
        assert_true (found);
    }
    assert_non_null (out);
    assert_non_null (strstr (out, "network: blocked"));
    assert_non_null (strstr (out, "project: blocked"));
    assert_non_null (strstr (out, "system: blocked"));
    /* the host saw nothing */
    assert_int_equal (access (canary, F_OK), -1);
    assert_int_equal (access (project, F_OK), -1);
    assert_int_equal (access ("/usr/blendmq-evil", F_OK), -1);
    struct pollfd p = { .fd = srv, .events = POLLIN };
    assert_int_equal (poll (&p, 1, 200), 0);                 /* no connection ever arrived */
    assert_false (s_process_with (token));                   /* the sandbox took its processes with it */
    close (srv);
    json_decref (r);
}

static void test_live_scene_copy_and_preview (void **state)
{
    char path[128], cmd[600];
    snprintf (path, sizeof path, "/tmp/blendmq-test-scene-%d.blend", (int) getpid ());
    snprintf (cmd, sizeof cmd, "blender -b --factory-startup --python-expr \"import bpy; "
              "bpy.ops.mesh.primitive_torus_add(location=(3, 0, 0)); bpy.context.object.name = 'LiveThing'; "
              "bpy.ops.wm.save_as_mainfile(filepath='%s')\" > /dev/null 2>&1", path);
    assert_int_equal (system (cmd), 0);
    size_t blen;
    char *blend = stu_read (path, &blen);
    unlink (path);
    assert_non_null (blend);
    const char *src = "import bpy\nthing = bpy.data.objects['LiveThing']\nthing.location.z = 2.0\n"
                      "bpy.data.objects.remove(bpy.data.objects['Light'])\n"
                      "bpy.ops.mesh.primitive_cube_add(size=2, location=(0, 0, 1))\n";
    bmq_sandbox_pool_wait_ready (s_pool, 1, 60000);
    bmq_sandbox_job_t job = { .preview_width = 160, .preview_height = 120 };
    unsigned char *png = NULL;
    size_t png_len = 0;
    json_t *r = bmq_sandbox_pool_run (s_pool, src, strlen (src), blend, blen, &job, &png, &png_len);
    if (!json_is_true (json_object_get (r, "ok")))
        s_dump ("scene", r);
    assert_true (json_is_true (json_object_get (r, "ok")));
    json_t *diff = json_object_get (r, "diff");
    assert_string_equal (json_string_value (json_object_get (json_array_get (json_object_get (diff, "changed"), 0), "name")), "LiveThing");
    assert_string_equal (json_string_value (json_array_get (json_object_get (diff, "removed"), 0)), "Light");
    assert_int_equal (json_array_size (json_object_get (diff, "added")), 1);
    assert_non_null (json_string_value (json_object_get (r, "scene_sha256")));
    assert_non_null (png);
    assert_true (png_len > 8 && memcmp (png, "\x89PNG", 4) == 0);
    free (png);
    free (blend);
    json_decref (r);
}

static void test_no_sandbox_refuses (void **state)
{
    char err[512];
    bmq_sandbox_opts_t o = { .warm = 0, .limits.bwrap = "/nonexistent/bwrap" };
    bmq_sandbox_pool_t *pool = bmq_sandbox_pool_new (&o, err, sizeof err);
    assert_null (pool);
    assert_non_null (strstr (err, "sandbox unavailable"));
    assert_non_null (strstr (err, "refused"));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_no_sandbox_refuses),
        cmocka_unit_test (test_seed_acceptance_a),
        cmocka_unit_test (test_traceback_is_reported),
        cmocka_unit_test (test_raw_escape_is_contained),
        cmocka_unit_test (test_live_scene_copy_and_preview),
        cmocka_unit_test (test_evil_corpus_left_to_the_sandbox),
        cmocka_unit_test (test_good_corpus_runs_clean),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
