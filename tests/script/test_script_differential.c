/* One program, decoded once (issue 11): for every script of the corpora and a
 * set of hand-made encoding traps, the three places that read a script agree
 * on the program:
 *   - the validator (C, the embedded libpython3.11 parse it walks),
 *   - the sandbox runner (the file's bytes decoded as UTF-8, then
 *     script_exec's compile, inside a real Blender),
 *   - the live add-on (the same str after crossing the link as JSON, then
 *     script_exec's compile);
 * and, as a fourth view, a bare compile() of that str with no refusal first
 * (what any str-compiling consumer would run: cookies ignored).
 * Wherever two of them produce a program, ast.dump must be identical; a
 * script the validator accepts must produce that same program in both the
 * sandbox and live. Any difference fails. */
#include "script_testutil.h"
#include "script_validator.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct { const char *name; const char *text; } s_traps[] = {
    { "utf7_cookie", "# -*- coding: utf-7 -*-\nimport bpy\nx = 1 +AAo-import os\n" },
    { "two_codings", "# vim: coding: utf-8 coding: utf-7\nimport bpy\nx = 1 +AAo-import os\n" },
    { "cookie_line2", "#!/usr/bin/env python\n# coding=latin-1\nimport bpy\nx = '\xc3\xa9'\n" },
    { "utf8_cookie", "# -*- coding: utf-8 -*-\nimport bpy\nx = '\xc3\xa9'\n" },
    { "crlf", "import bpy\r\nx = 1\r\nif x:\r\n    y = 2\r\n" },
    { "lone_cr", "import bpy\rx = 1\ry = 'a'\r" },
    { "form_feed", "\fimport bpy\n\fx = 1\n" },
    { "nfkc_names", "import bpy\n\xef\xbd\x98 = 1\ny = x + 1\n" },
    { "non_bmp", "import bpy\ns = '\xf0\x9d\x94\x98'\n" },
    { "continuation", "import bpy\nx = 1 \\\n    + 2\n" },
    { "no_final_newline", "import bpy\nbpy.data.filepath" },
    { "tabs", "import bpy\nif True:\n\tx = 1\n\tif x:\n\t\ty = 2\n" },
    { "bom", "\xef\xbb\xbfimport bpy\nx = 1\n" },
    { "nul", "import bpy\nx = '\0'\n" },
    { "latin1_bytes", "import bpy\nx = '\xe9'\n" },
    { "zero_width", "import bpy\nx\xe2\x80\x8b = 1\n" },
    { "unicode_escape", "import bpy\nx = '\\N{LATIN SMALL LETTER A}'\n" },
};
#define S_TRAPS (sizeof s_traps / sizeof s_traps[0])

static char s_dir[64];

static int s_setup (void **state)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-diff-XXXXXX");
    return mkdtemp (s_dir) ? 0 : -1;
}

static int s_teardown (void **state)
{
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

/* All files to compare: both corpora and the traps (written to s_dir). */
static char **s_files (size_t *count)
{
    size_t ng, ne;
    char **good = stu_corpus ("good", &ng), **evil = stu_corpus ("evil", &ne);
    char **all = calloc (ng + ne + S_TRAPS, sizeof *all);
    size_t n = 0;
    for (size_t i = 0; i < ng; i++) all[n++] = good[i];
    for (size_t i = 0; i < ne; i++) all[n++] = evil[i];
    free (good);
    free (evil);
    for (size_t i = 0; i < S_TRAPS; i++) {
        char path[256];
        snprintf (path, sizeof path, "%s/trap_%s.py", s_dir, s_traps[i].name);
        FILE *f = fopen (path, "wb");
        assert_non_null (f);
        size_t len = strlen (s_traps[i].text);
        if (!strcmp (s_traps[i].name, "nul")) len = 19;     /* "import bpy\nx = '\0'\n": the NUL counts */
        fwrite (s_traps[i].text, 1, len, f);
        fclose (f);
        all[n++] = strdup (path);
    }
    *count = n;
    return all;
}

static void test_three_places_agree (void **state)
{
    char err[512];
    json_t *rna = bmq_script_rna_load (BMQ_SOURCE_DIR "/" BMQ_SCRIPT_RNA_FIXTURE, err, sizeof err);
    bmq_script_validator_t *v = bmq_script_validator_new (NULL, rna, err, sizeof err);
    assert_non_null (v);
    size_t n;
    char **files = s_files (&n);
    assert_true (n > 40);

    /* the Python side: one Blender, every file */
    char out[128], cmd_path[128];
    snprintf (out, sizeof out, "%s/python.jsonl", s_dir);
    snprintf (cmd_path, sizeof cmd_path, "%s/files.txt", s_dir);
    size_t cmdlen = 1024 + n * 300;
    char *cmd = malloc (cmdlen);
    size_t used = (size_t) snprintf (cmd, cmdlen, "blender -b --factory-startup --python-exit-code 1 --python "
                                     "'%s/tests/script/differential/dump_python.py' -- '%s/services/executor/addon/blendmq' '%s'",
                                     BMQ_SOURCE_DIR, BMQ_SOURCE_DIR, out);
    for (size_t i = 0; i < n; i++)
        used += (size_t) snprintf (cmd + used, cmdlen - used, " '%s'", files[i]);
    snprintf (cmd + used, cmdlen - used, " > '%s/blender.log' 2>&1", s_dir);
    int rc = system (cmd);
    if (rc != 0) {
        char show[256];
        snprintf (show, sizeof show, "tail -30 '%s/blender.log'", s_dir);
        assert_int_equal (system (show), 0);
    }
    assert_int_equal (rc, 0);
    free (cmd);

    FILE *f = fopen (out, "r");
    assert_non_null (f);
    size_t compared = 0, agreed_programs = 0, refused_everywhere = 0, mismatches = 0;
    char *line = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true (getline (&line, &cap, f) > 0);
        json_t *row = json_loads (line, 0, NULL);
        assert_non_null (row);
        assert_string_equal (json_string_value (json_object_get (row, "file")), files[i]);
        size_t len;
        char *src = stu_read (files[i], &len);
        char msg[256] = "";
        char *c_dump = bmq_script_ast_dump (src, len, msg, sizeof msg);
        json_t *verdict = bmq_script_validate (v, src, len);
        bool valid = json_is_true (json_object_get (verdict, "is_valid"));
        const char *sb = json_string_value (json_object_get (json_object_get (row, "sandbox"), "dump"));
        const char *lv = json_string_value (json_object_get (json_object_get (row, "live"), "dump"));
        const char *st = json_string_value (json_object_get (json_object_get (row, "str"), "dump"));
        const char *views[4] = { c_dump, sb, lv, st };
        const char *names[4] = { "validator", "sandbox", "live", "compile() of the str" };
        bool bad = false;
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++)
                if (views[a] && views[b] && strcmp (views[a], views[b])) {
                    printf ("DIFFERENT PROGRAMS %s: %s vs %s\n", files[i], names[a], names[b]);
                    bad = true;
                }
        if (valid && (!c_dump || !sb || !lv)) {
            printf ("ACCEPTED BUT NOT RUNNABLE THE SAME WAY %s: validator %s, sandbox %s, live %s\n", files[i],
                    c_dump ? "ok" : msg, sb ? "ok" : "refused", lv ? "ok" : "refused");
            bad = true;
        }
        mismatches += bad;
        compared++;
        agreed_programs += (c_dump && sb && lv && !bad);
        refused_everywhere += (!sb && !lv && !valid);
        free (c_dump);
        free (src);
        json_decref (verdict);
        json_decref (row);
    }
    free (line);
    fclose (f);
    printf ("differential: %zu scripts compared, %zu the same program in all three places, %zu refused by all, "
            "%zu differences\n", compared, agreed_programs, refused_everywhere, mismatches);
    assert_int_equal (mismatches, 0);
    assert_true (agreed_programs > 30);
    stu_free_list (files, n);
    bmq_script_validator_destroy (&v);
    json_decref (rna);
}

int main (void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_three_places_agree) };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
