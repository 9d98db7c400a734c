/* Extraction of the script from a planner's reply (FR-003). */
#include "script_extract.h"
#include "script_intake.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static bmq_script_extracted_t s_ok (const char *mode, const char *text)
{
    bmq_script_extracted_t out;
    int rc = bmq_script_extract (mode, text, strlen (text), NULL, 0, NULL, &out);
    assert_int_equal (rc, 0);
    assert_non_null (out.script);
    return out;
}

static void test_fenced_python (void **state)
{
    bmq_script_extracted_t out = s_ok ("format-to-bpy",
        "Sure! Here is the script:\n\n```python\nimport bpy\nbpy.ops.mesh.primitive_cube_add(size=2)\n```\n\nIt adds a cube.\n");
    assert_string_equal (out.script, "import bpy\nbpy.ops.mesh.primitive_cube_add(size=2)\n");
    assert_string_equal (out.source, "fenced");
    assert_int_equal (out.blocks, 1);
    bmq_script_extracted_clear (&out);
}

static void test_python_block_wins_over_others (void **state)
{
    bmq_script_extracted_t out = s_ok ("format-to-bpy",
        "Install:\n```bash\npip install x\n```\nThen:\n~~~py\nimport bpy\n~~~\nand\n```\nprint(1)\n```\n");
    assert_string_equal (out.script, "import bpy\n");
    bmq_script_extracted_clear (&out);
}

static void test_several_python_blocks_are_joined (void **state)
{
    bmq_script_extracted_t out = s_ok ("format-to-bpy",
        "First:\n```python\nimport bpy\n```\nThen the loop:\n```python\nfor i in range(3):\n    pass\n```\n");
    assert_string_equal (out.script, "import bpy\nfor i in range(3):\n    pass\n");
    assert_int_equal (out.blocks, 2);
    bmq_script_extracted_clear (&out);
}

static void test_untagged_block_and_unclosed_fence (void **state)
{
    bmq_script_extracted_t out = s_ok ("format-to-bpy", "```\nimport bpy\n```\n");
    assert_string_equal (out.script, "import bpy\n");
    bmq_script_extracted_clear (&out);
    out = s_ok ("format-to-bpy", "```python\nimport bpy\nx = 1\n");     /* reply cut short */
    assert_string_equal (out.script, "import bpy\nx = 1\n");
    bmq_script_extracted_clear (&out);
}

static void test_longer_fence_holds_a_shorter_one (void **state)
{
    bmq_script_extracted_t out = s_ok ("format-to-bpy", "````python\ns = '''\n```\n'''\n````\n");
    assert_string_equal (out.script, "s = '''\n```\n'''\n");
    bmq_script_extracted_clear (&out);
}

static void test_plain_text_with_leading_and_trailing_prose (void **state)
{
    bmq_script_extracted_t out = s_ok ("format-to-bpy",
        "Here is the script you asked for:\nimport bpy\n\nfor i in range(2):\n    bpy.ops.mesh.primitive_cube_add()\nHope this helps.\n");
    assert_string_equal (out.script, "import bpy\n\nfor i in range(2):\n    bpy.ops.mesh.primitive_cube_add()\n");
    assert_string_equal (out.source, "plain");
    bmq_script_extracted_clear (&out);
    out = s_ok ("contextual", "import bpy\nbpy.ops.mesh.primitive_cube_add()");
    assert_string_equal (out.script, "import bpy\nbpy.ops.mesh.primitive_cube_add()\n");
    bmq_script_extracted_clear (&out);
}

static void test_prose_only_asks_to_reformat (void **state)
{
    bmq_script_extracted_t out;
    const char *text = "To build a chair, first add a cube for the seat. Then add four legs.\nScale them down.\n";
    assert_int_equal (bmq_script_extract ("format-to-bpy", text, strlen (text), NULL, 0, NULL, &out), -1);
    assert_true (out.reformat);
    assert_non_null (strstr (out.error, "```python"));
    text = "I cannot do that.\n```text\nno code\n```\n";
    assert_int_equal (bmq_script_extract ("format-to-bpy", text, strlen (text), NULL, 0, NULL, &out), -1);
    assert_true (out.reformat);
    text = "import bpy\nThen you should add a cube here.\nAnd after that a sphere is good.\nFinally a light helps.\nbpy.ops.mesh.primitive_cube_add()\n";
    assert_int_equal (bmq_script_extract ("format-to-bpy", text, strlen (text), NULL, 0, NULL, &out), -1);
    assert_true (out.reformat);
    assert_int_equal (bmq_script_extract ("format-to-bpy", "", 0, NULL, 0, NULL, &out), -1);
    assert_true (out.reformat);
}

static void test_attachment (void **state)
{
    bmq_script_extracted_t out;
    const char *file = "import bpy\n";
    assert_int_equal (bmq_script_extract ("format-to-bpy", "see attached", 12, file, strlen (file), "chair.py", &out), 0);
    assert_string_equal (out.script, file);
    assert_string_equal (out.source, "attachment");
    bmq_script_extracted_clear (&out);
    assert_int_equal (bmq_script_extract ("format-to-bpy", NULL, 0, file, strlen (file), "chair.txt", &out), -1);
}

static void test_bad_mode_and_nul (void **state)
{
    bmq_script_extracted_t out;
    assert_int_equal (bmq_script_extract ("raw", "import bpy", 10, NULL, 0, NULL, &out), -1);
    assert_false (out.reformat);
    assert_int_equal (bmq_script_extract ("contextual", "import bpy\0os", 13, NULL, 0, NULL, &out), -1);
}


/* ---- intake: the whole reply first, nothing dropped silently, the exact text in the verdict ---- */

static bmq_script_validator_t *s_validator (void)
{
    static bmq_script_validator_t *v;
    static json_t *rna;
    char err[256];
    if (!v) {
        rna = bmq_script_rna_load (BMQ_SOURCE_DIR "/" BMQ_SCRIPT_RNA_FIXTURE, err, sizeof err);
        v = bmq_script_validator_new (NULL, rna, err, sizeof err);
    }
    assert_non_null (v);
    return v;
}

static json_t *s_intake (const char *reply, bmq_script_extracted_t *ex)
{
    json_t *verdict = bmq_script_intake (s_validator (), "format-to-bpy", reply, strlen (reply), NULL, 0, NULL, ex);
    assert_non_null (verdict);
    return verdict;
}

static bool s_warned_line (json_t *verdict, int line)
{
    size_t i;
    json_t *w;
    json_array_foreach (json_object_get (verdict, "warnings"), i, w)
        if (json_integer_value (json_object_get (w, "line")) == line
            && !strcmp (json_string_value (json_object_get (w, "rule")), "extract"))
            return true;
    return false;
}

static void test_whole_script_keeps_a_final_bare_expression (void **state)
{
    /* the heuristic used to cut the last line (a bare expression): the whole text parses, so it is the script */
    const char *text = "import bpy\nbpy.ops.mesh.primitive_cube_add()\nbpy.context.active_object";
    bmq_script_extracted_t ex;
    json_t *v = s_intake (text, &ex);
    assert_string_equal (json_string_value (json_object_get (v, "source")), "whole");
    assert_string_equal (json_string_value (json_object_get (v, "text")), text);
    assert_int_equal (ex.len, strlen (text));
    assert_int_equal (json_array_size (json_object_get (v, "warnings")), 0);
    json_decref (v);
    bmq_script_extracted_clear (&ex);
}

static void test_prose_lines_are_listed (void **state)
{
    const char *text = "Here is your chair:\nimport bpy\nbpy.ops.mesh.primitive_cube_add()\nEnjoy it!\n";
    bmq_script_extracted_t ex;
    json_t *v = s_intake (text, &ex);
    assert_string_equal (json_string_value (json_object_get (v, "source")), "plain");
    assert_true (s_warned_line (v, 1));
    assert_true (s_warned_line (v, 4));
    assert_false (s_warned_line (v, 2));
    assert_string_equal (json_string_value (json_object_get (v, "text")),
                         "import bpy\nbpy.ops.mesh.primitive_cube_add()\n");
    json_decref (v);
    bmq_script_extracted_clear (&ex);
}

static void test_fenced_reply_lists_what_is_outside (void **state)
{
    const char *text = "Sure.\n```python\nimport bpy\n```\nthen run:\n```bash\nrm -rf /\n```\n";
    bmq_script_extracted_t ex;
    json_t *v = s_intake (text, &ex);
    assert_string_equal (json_string_value (json_object_get (v, "source")), "fenced");
    assert_string_equal (json_string_value (json_object_get (v, "text")), "import bpy\n");
    assert_true (s_warned_line (v, 1));
    assert_true (s_warned_line (v, 5));
    assert_true (s_warned_line (v, 7));         /* the bash block's body */
    assert_false (s_warned_line (v, 3));
    json_decref (v);
    bmq_script_extracted_clear (&ex);
}

static void test_bom_is_removed_and_said (void **state)
{
    bmq_script_extracted_t ex;
    json_t *v = s_intake ("\xef\xbb\xbfimport bpy\nbpy.ops.mesh.primitive_cube_add()\n", &ex);
    assert_true (json_is_true (json_object_get (v, "is_valid")));
    assert_string_equal (json_string_value (json_object_get (v, "text")), "import bpy\nbpy.ops.mesh.primitive_cube_add()\n");
    json_t *w = json_array_get (json_object_get (v, "warnings"), 0);
    assert_string_equal (json_string_value (json_object_get (w, "rule")), "encoding");
    json_decref (v);
    bmq_script_extracted_clear (&ex);
    /* the core check never accepts a BOM: what is validated never carries one */
    const char *bom = "\xef\xbb\xbfimport bpy\n";
    v = bmq_script_validate (s_validator (), bom, strlen (bom));
    assert_false (json_is_true (json_object_get (v, "is_valid")));
    json_decref (v);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_fenced_python),
        cmocka_unit_test (test_python_block_wins_over_others),
        cmocka_unit_test (test_several_python_blocks_are_joined),
        cmocka_unit_test (test_untagged_block_and_unclosed_fence),
        cmocka_unit_test (test_longer_fence_holds_a_shorter_one),
        cmocka_unit_test (test_plain_text_with_leading_and_trailing_prose),
        cmocka_unit_test (test_prose_only_asks_to_reformat),
        cmocka_unit_test (test_attachment),
        cmocka_unit_test (test_bad_mode_and_nul),
        cmocka_unit_test (test_whole_script_keeps_a_final_bare_expression),
        cmocka_unit_test (test_prose_lines_are_listed),
        cmocka_unit_test (test_fenced_reply_lists_what_is_outside),
        cmocka_unit_test (test_bom_is_removed_and_said),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
