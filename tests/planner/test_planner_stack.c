/* A whole stack (`blendmq up --ipc`, with its own headless Blender: the
 * gateway refuses a chat while no Blender is connected) planning with
 * "Gemini" (a fake one in this process): `blendmq chat` shows the planner's
 * notes as they come ("planner: …", relayed by the gateway as plan.note),
 * then the plan, and the validator pool accepts it. Also the offline
 * planner: its no-match answer, what it understood of a scene and what it
 * did not, and a request too big for one plan. And one source of
 * capabilities: once the validators have merged the palette with the real
 * Blender's RNA, the LLM's discover_capabilities (the planner's answer, read
 * from what it sent the fake Gemini) is exactly MCP's discover_capabilities
 * (`blendmq mcp` on stdio), in both forms. Skipped without Blender. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "planner_harness.h"

static char s_dir[64];

static char *s_run (const char *cmd, int *code)
{
    FILE *f = popen (cmd, "r");
    size_t cap = 1 << 16, len = 0, n;
    char *buf = calloc (1, cap);
    /* grows: discover_capabilities' full form, as text and as structured content, is over 64 KiB */
    while (f && (n = fread (buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            buf = realloc (buf, cap * 2);
            memset (buf + cap, 0, cap);
            cap *= 2;
        }
    }
    int st = f ? pclose (f) : -1;
    *code = WIFEXITED (st) ? WEXITSTATUS (st) : -1;
    return buf;
}

static char *s_blendmq (const char *env, const char *args, int *code)
{
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "%s timeout 90 '%s/blendmq' --run-dir '%s' %s 2>&1", env, BMQ_BIN_DIR, s_dir, args);
    return s_run (cmd, code);
}

static bool s_have_blender (void)
{
    const char *b = getenv ("BLENDMQ_BLENDER");
    return (b && *b) || system ("command -v blender > /dev/null 2>&1") == 0;
}

static void s_expect (const char *out, const char *needle)
{
    if (!strstr (out, needle)) fail_msg ("no '%s' in:\n%s", needle, out);
}

static void test_chat_shows_planner_notes (void **state)
{
    fake_llm_t *llm = fake_llm_new ();
    char env[512];
    snprintf (env, sizeof env, "GEMINI_API_KEY='%s' GEMINI_BASE_URL='%s' GEMINI_MODEL=gemini-test-flash "
              "BLENDMQ_PLANNER_SAVED_RECIPES_DIR='%s/saved'", H_KEY, fake_llm_url (llm), s_dir);
    int code;
    char *out = s_blendmq (env, "up --ipc", &code);
    if (code) fail_msg ("blendmq up failed (%d):\n%s", code, out);
    free (out);

    char *c1 = h_gemini_call ("discover_capabilities", "{}", "sig-1");
    char *c2 = h_gemini_call ("submit_plan", "{\"title\": \"snowman\", \"plan\": "
        "[{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"base\", \"params\": {\"radius\": 1.0, \"location\": [0, 0, 1]}},"
        " {\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"head\", \"params\": {\"radius\": 0.5, \"location\": [0, 0, 2.3]}}]}", "sig-2");
    fake_llm_json (llm, 200, c1);
    fake_llm_json (llm, 200, c2);
    out = s_blendmq ("", "chat 'build a snowman'", &code);
    s_expect (out, "planner: asking Gemini (gemini-test-flash)");
    s_expect (out, "planner: asking for capabilities");
    s_expect (out, "planner: plan of 2 steps ready");
    s_expect (out, ": snowman, 2 steps (gemini planner)");
    s_expect (out, "validated: 2 steps accepted");
    assert_true (strstr (out, "planner: asking for capabilities") < strstr (out, "validated:"));     /* in order */
    assert_null (strstr (out, H_KEY));
    free (out);
    /* the same story as JSON lines */
    fake_llm_json (llm, 200, c2);
    out = s_blendmq ("", "--json chat 'build a snowman'", &code);
    s_expect (out, "\"type\":\"plan.note\"");
    s_expect (out, "\"type\":\"chat.planned\"");
    free (out);
    free (c1);
    free (c2);
    /* no log holds the key, nor a sanitizer report (under BMQ_SANITIZE) */
    char path[256];
    snprintf (path, sizeof path, "grep -r -l -e '%s' -e 'Sanitizer' '%s/logs'", H_KEY, s_dir);
    out = s_run (path, &code);
    if (code == 0) fail_msg ("found in %s", out);
    free (out);
    out = s_blendmq ("", "down", &code);
    free (out);
    fake_llm_destroy (&llm);
}

static void test_offline_no_match (void **state)
{
    int code;
    free (s_blendmq ("", "down", &code));          /* whatever a failed test before left running */
    char *out = s_blendmq ("env -u GEMINI_API_KEY BLENDMQ_PLANNER_BACKEND=offline", "up --ipc", &code);
    if (code) fail_msg ("blendmq up failed (%d):\n%s", code, out);
    free (out);
    out = s_blendmq ("", "chat 'a quantum flux capacitor'", &code);
    assert_int_not_equal (code, 0);
    s_expect (out, "no_match");
    s_expect (out, "closest:");
    s_expect (out, "GEMINI_API_KEY");
    free (out);
    out = s_blendmq ("", "chat 'a big red chair at 3 0 0'", &code);
    s_expect (out, "planner: offline recipe 'chair': red, 1.5× (big), at (3, 0, 0)");
    s_expect (out, ": chair, 13 steps (offline planner)");       /* the recipe's 8 (two side frames), a root and 4 parented to it */
    s_expect (out, "validated: 13 steps accepted");
    s_expect (out, "understood: chair ×1 (red, 1.5×)");
    free (out);
    /* a scene: what was understood and what was not, in words and in --json */
    out = s_blendmq ("", "chat 'a table with two chairs and a castle with towers'", &code);
    s_expect (out, ": table + chair, 32 steps (offline planner)");    /* the second chair: one object.duplicate_tree step */
    s_expect (out, "understood: table ×1, chair ×2 next to table; not understood: 'a castle with towers'");
    s_expect (out, "validated: 32 steps accepted");
    s_expect (out, "object.duplicate_tree  ok");
    free (out);
    out = s_blendmq ("", "chat 'a red car next to a big house and a tiny blue mug'", &code);
    s_expect (out, "understood: car ×1 (red) next to house, house ×1 (1.5×), mug ×1 (blue, 0.35×)");
    free (out);
    out = s_blendmq ("", "--json chat 'five trees in a row and a dragon'", &code);
    s_expect (out, "\"parts\":[{");
    s_expect (out, "\"recipe\":\"tree\"");
    s_expect (out, "\"count\":5");
    s_expect (out, "\"arrangement\":\"row\"");
    s_expect (out, "\"not_understood\":[\"a dragon\"]");
    free (out);
    out = s_blendmq ("", "chat 'twenty thousand trees'", &code);
    assert_int_not_equal (code, 0);
    s_expect (out, "too_big");
    s_expect (out, "at most 64 of them fit");
    free (out);
    out = s_blendmq ("", "down", &code);
    free (out);
}

/* MCP's discover_capabilities over `blendmq mcp` (stdio): the tool result's
 * structuredContent, or NULL. */
static json_t *s_mcp_discover (const char *form)
{
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "(printf '%%s\\n' "
              "'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}' "
              "'{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}' "
              "'{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"discover_capabilities\",\"arguments\":{\"form\":\"%s\"}}}'; "
              "sleep 4) | timeout 20 '%s/blendmq' --run-dir '%s' mcp 2>/dev/null", form, BMQ_BIN_DIR, s_dir);
    int code;
    char *out = s_run (cmd, &code);
    json_t *found = NULL;
    for (char *save = NULL, *line = strtok_r (out, "\n", &save); line && !found; line = strtok_r (NULL, "\n", &save)) {
        json_t *msg = json_loads (line, 0, NULL);
        if (json_integer_value (json_object_get (msg, "id")) == 2)
            found = json_incref (json_object_get (json_object_get (msg, "result"), "structuredContent"));
        json_decref (msg);
    }
    free (out);
    return found;
}

/* The planner's last answer to discover_capabilities, as sent to the fake Gemini. */
static json_t *s_planner_discover (fake_llm_t *llm)
{
    json_t *found = NULL;
    for (size_t i = 0; i < fake_llm_requests (llm); i++) {
        size_t c, k;
        json_t *content, *part;
        json_array_foreach (json_object_get (fake_llm_body (llm, i), "contents"), c, content)
            json_array_foreach (json_object_get (content, "parts"), k, part) {
                json_t *fr = json_object_get (part, "functionResponse");
                if (fr && !strcmp (json_string_value (json_object_get (fr, "name")), "discover_capabilities"))
                    found = json_object_get (fr, "response");
            }
    }
    return found ? json_deep_copy (found) : NULL;
}

static const char *s_rna_state (const json_t *body)
{
    const char *state = json_string_value (json_object_get (json_object_get (body, "rna"), "state"));
    return state ? state : "";
}

static void test_discover_same_as_mcp (void **state)
{
    int code;
    free (s_blendmq ("", "down", &code));
    fake_llm_t *llm = fake_llm_new ();
    char env[512];
    snprintf (env, sizeof env, "GEMINI_API_KEY='%s' GEMINI_BASE_URL='%s' GEMINI_MODEL=gemini-test-flash "
              "BLENDMQ_PLANNER_SAVED_RECIPES_DIR='%s/saved'", H_KEY, fake_llm_url (llm), s_dir);
    char *out = s_blendmq (env, "up --ipc", &code);
    if (code) fail_msg ("blendmq up failed (%d):\n%s", code, out);
    free (out);
    /* the validators merge the palette with Blender's RNA (through the gateway) */
    json_t *mcp_full = NULL;
    for (int i = 0; i < 40; i++) {
        json_decref (mcp_full);
        mcp_full = s_mcp_discover ("full");
        if (!strcmp (s_rna_state (mcp_full), "merged")) break;
    }
    if (strcmp (s_rna_state (mcp_full), "merged")) fail_msg ("the validators never merged Blender's RNA: %s", json_dumps (mcp_full, 0));
    json_t *mcp_compact = s_mcp_discover ("compact");
    assert_string_equal (s_rna_state (mcp_compact), "merged");
    /* the planner picks the pool's palette up within its refresh (2 s while not final) */
    char *submit = h_gemini_call ("submit_plan", "{\"title\": \"ball\", \"plan\": "
        "[{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"ball\", \"params\": {\"radius\": 1.0}}]}", "sig-2");
    json_t *planner_full = NULL;
    for (int i = 0; i < 20; i++) {
        char *c1 = h_gemini_call ("discover_capabilities", "{}", "sig-1");      /* no form: full, with descriptions */
        fake_llm_json (llm, 200, c1);
        fake_llm_json (llm, 200, submit);
        free (c1);
        out = s_blendmq ("", "chat 'a ball'", &code);
        json_decref (planner_full);
        planner_full = s_planner_discover (llm);
        bool merged = !strcmp (s_rna_state (planner_full), "merged");
        if (merged) assert_null (strstr (out, "planner: capabilities are"));     /* no note: it plans with the merged one */
        else s_expect (out, "planner: capabilities are");       /* the curated palette (or the pool's before its merge), said so */
        free (out);
        if (merged) break;
        sleep (1);
    }
    assert_non_null (planner_full);
    assert_string_equal (s_rna_state (planner_full), "merged");
    if (!json_equal (planner_full, mcp_full))
        fail_msg ("planner %s\nMCP %s", json_dumps (planner_full, JSON_SORT_KEYS), json_dumps (mcp_full, JSON_SORT_KEYS));
    assert_true (json_integer_value (json_object_get (mcp_full, "operations")) > 10);
    /* compact: the same as MCP's default */
    char *c1 = h_gemini_call ("discover_capabilities", "{\"form\": \"compact\"}", "sig-1");
    fake_llm_json (llm, 200, c1);
    fake_llm_json (llm, 200, submit);
    free (c1);
    free (s_blendmq ("", "chat 'a ball'", &code));
    json_t *planner_compact = s_planner_discover (llm);
    if (!json_equal (planner_compact, mcp_compact))
        fail_msg ("planner compact %s\nMCP compact %s", json_dumps (planner_compact, JSON_SORT_KEYS),
                  json_dumps (mcp_compact, JSON_SORT_KEYS));
    json_decref (planner_compact);
    json_decref (planner_full);
    json_decref (mcp_full);
    json_decref (mcp_compact);
    free (submit);
    free (s_blendmq ("", "down", &code));
    fake_llm_destroy (&llm);
}

int main (void)
{
    /* 77: ctest's SKIP_RETURN_CODE (cmocka's skip() would exit 0 and read as passed) */
    if (!s_have_blender ()) { printf ("SKIPPED: no Blender (blender not on PATH, BLENDMQ_BLENDER unset)\n"); return 77; }
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq_planner_stack_XXXXXX");
    if (!mkdtemp (s_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_chat_shows_planner_notes),
        cmocka_unit_test (test_offline_no_match),
        cmocka_unit_test (test_discover_same_as_mcp),
    };
    int rc = cmocka_run_group_tests (tests, NULL, NULL);
    int code;
    char cmd[256];
    snprintf (cmd, sizeof cmd, "'%s/blendmq' --run-dir '%s' down > /dev/null 2>&1; rm -rf '%s'", BMQ_BIN_DIR, s_dir, s_dir);
    free (s_run (cmd, &code));
    return rc;
}
