/* The review turn of a chat (issue 16) on a real stack (`blendmq up --ipc`,
 * a real headless Blender) with a fake Gemini in this process. After the
 * model's plan ran, the gateway holds the result and asks the planner for a
 * review: (a) the model calls look (the request the fake Gemini gets next
 * holds the contact sheet as an inlineData image/png part and each object's
 * topology numbers), then done: the client sees the "reviewing" note and the
 * first plan's result; (b) the model sends a fix plan: it is validated and
 * run, the client sees the first result (as a note) and the fix's; (c)
 * planner.review_rounds 0: no review at all (one planning dialogue); (d) the
 * planner killed during the review: the client still gets the first plan's
 * result, with a note that the review could not run; (e) the model answers
 * the review with the plan that already ran: it is not run twice. Skipped
 * without Blender. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_util.h"
#include "planner_harness.h"

static char s_dir[64];

static char *s_blendmq (const char *env, const char *args, int *code)
{
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "%s timeout 90 '%s/blendmq' --run-dir '%s' %s 2>&1", env, BMQ_BIN_DIR, s_dir, args);
    return e2e_run (cmd, code);
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

static void s_up (fake_llm_t *llm, const char *extra)
{
    int code;
    free (s_blendmq ("", "down", &code));          /* whatever a failed test before left running */
    char env[1024];
    snprintf (env, sizeof env, "GEMINI_API_KEY='%s' GEMINI_BASE_URL='%s' GEMINI_MODEL=gemini-test-flash "
              "BLENDMQ_PLANNER_SAVED_RECIPES_DIR='%s/saved' %s", H_KEY, fake_llm_url (llm), s_dir, extra);
    char *out = s_blendmq (env, "up --ipc", &code);
    if (code) fail_msg ("blendmq up failed (%d):\n%s", code, out);
    free (out);
    /* Blender comes back with the run dir's last committed scene (durable commits): each
     * test starts from an empty one */
    out = s_blendmq ("", "scene reset", &code);
    if (code) fail_msg ("blendmq scene reset failed (%d):\n%s", code, out);
    free (out);
}

static const char *PLAN =
    "{\"title\": \"snowman\", \"plan\": ["
    "{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"base\", \"params\": {\"radius\": 1.0, \"location\": [0, 0, 1]}},"
    "{\"operation\": \"bpy.ops.mesh.primitive_uv_sphere_add\", \"name\": \"head\", \"params\": {\"radius\": 0.5, \"location\": [0, 0, 2.3]}}]}";

/* Does any part of request i carry `key` (a part's own key: inlineData, functionResponse …)? */
static json_t *s_part (fake_llm_t *llm, size_t i, const char *key)
{
    json_t *found = NULL, *content, *part;
    size_t c, k;
    json_array_foreach (json_object_get (fake_llm_body (llm, i), "contents"), c, content)
        json_array_foreach (json_object_get (content, "parts"), k, part)
            if (json_object_get (part, key)) found = json_object_get (part, key);
    return found;
}

/* The text of request i's first user turn. */
static const char *s_first_text (fake_llm_t *llm, size_t i)
{
    json_t *first = json_array_get (json_object_get (fake_llm_body (llm, i), "contents"), 0);
    const char *text = json_string_value (json_object_get (json_array_get (json_object_get (first, "parts"), 0), "text"));
    return text ? text : "";
}

static int s_objects_named (const char *prefix)
{
    int code, n = 0;
    char *out = s_blendmq ("", "scene", &code);
    for (const char *p = out; (p = strstr (p, prefix)); p++) n++;
    free (out);
    return n;
}

/* (a) look, then done; (b) a fix plan. One stack. */
static void test_review_look_done_and_fix (void **state)
{
    fake_llm_t *llm = fake_llm_new ();
    s_up (llm, "");
    char *submit = h_gemini_call ("submit_plan", PLAN, "sig-1");
    char *look = h_gemini_call ("look", "{}", "sig-2");
    char *done = h_gemini_call ("done", "{\"summary\": \"two spheres stacked on the ground, as asked\"}", "sig-3");
    fake_llm_json (llm, 200, submit);
    fake_llm_json (llm, 200, look);
    fake_llm_json (llm, 200, done);
    int code;
    char *out = s_blendmq ("", "chat 'build a snowman'", &code);
    assert_int_equal (code, 0);
    s_expect (out, ": snowman, 2 steps (gemini planner)");
    s_expect (out, "planner: reviewing the result (round 1 of 1)");
    s_expect (out, "planner: looking at the scene");
    s_expect (out, "review: the model is satisfied with the result");
    s_expect (out, "done: 2/2 steps");
    assert_true (strstr (out, "reviewing the result") < strstr (out, "done: 2/2 steps"));
    free (out);
    assert_int_equal (fake_llm_requests (llm), 3);
    assert_int_equal (fake_llm_unused (llm), 0);
    /* the review's first message carries the prompt, the plan and how it ended */
    s_expect (s_first_text (llm, 1), "build a snowman");
    s_expect (s_first_text (llm, 1), "primitive_uv_sphere_add");
    /* after look: the contact sheet as an image part, the numbers in the function's response */
    json_t *image = s_part (llm, 2, "inlineData");
    assert_non_null (image);
    assert_string_equal (json_string_value (json_object_get (image, "mimeType")), "image/png");
    const char *data = json_string_value (json_object_get (image, "data"));
    assert_non_null (data);
    assert_true (strlen (data) > 100);
    assert_memory_equal (data, "iVBORw0KGgo", 11);         /* base64 of the PNG signature */
    json_t *fr = s_part (llm, 2, "functionResponse");
    assert_string_equal (json_string_value (json_object_get (fr, "name")), "look");
    char *response = json_dumps (json_object_get (fr, "response"), JSON_COMPACT);
    s_expect (response, "\"base\"");
    s_expect (response, "\"head\"");
    s_expect (response, "\"vertices\"");
    s_expect (response, "\"faces\"");
    s_expect (response, "\"non_manifold_edges\"");
    free (response);

    /* (b) the model sends a fix: validated against the scene (it targets "head"), run, both results shown */
    char *look2 = h_gemini_call ("look", "{}", "sig-5");
    char *fix = h_gemini_call ("submit_plan", "{\"title\": \"snowman fix\", \"plan\": ["
        "{\"operation\": \"object.location\", \"target\": \"head\", \"params\": {\"value\": [0, 0, 2.4]}},"
        "{\"operation\": \"bpy.ops.mesh.primitive_cone_add\", \"name\": \"nose\", \"params\": {\"radius1\": 0.1, \"depth\": 0.4, \"location\": [0, -0.5, 2.4]}}]}", "sig-6");
    fake_llm_json (llm, 200, submit);
    fake_llm_json (llm, 200, look2);
    fake_llm_json (llm, 200, fix);
    size_t before = fake_llm_requests (llm);
    out = s_blendmq ("", "chat 'build a snowman'", &code);
    if (code) fail_msg ("chat failed (%d):\n%s", code, out);
    s_expect (out, "planner: reviewing the result (round 1 of 1)");
    s_expect (out, "review: the first plan ended done, 2/2 steps; the model sent a fix of 2 steps");
    s_expect (out, ": snowman fix, 2 steps (gemini planner)");
    s_expect (out, "validated: 2 steps accepted");
    s_expect (out, "done: 2/2 steps");
    assert_true (strstr (out, "reviewing the result") < strstr (out, "snowman fix"));
    free (out);
    assert_int_equal (fake_llm_requests (llm) - before, 3);
    assert_int_equal (s_objects_named ("\"nose"), 1);         /* the fix ran in Blender */

    /* (e) a model that answers the review with the plan that already ran: not run twice */
    fake_llm_json (llm, 200, submit);
    fake_llm_json (llm, 200, submit);
    int bases = s_objects_named ("\"base");
    out = s_blendmq ("", "chat 'build a snowman'", &code);
    if (code) fail_msg ("chat failed (%d):\n%s", code, out);
    s_expect (out, "review: the model sent the plan that already ran; it is not run twice");
    s_expect (out, "done: 2/2 steps");
    free (out);
    assert_int_equal (s_objects_named ("\"base"), bases + 1);  /* the chat's own plan once, no second copy */
    free (submit);
    free (look);
    free (done);
    free (look2);
    free (fix);
    int c;
    free (s_blendmq ("", "down", &c));
    fake_llm_destroy (&llm);
}

/* (c) planner.review_rounds 0: the plan's result answers at once. */
static void test_review_off (void **state)
{
    fake_llm_t *llm = fake_llm_new ();
    s_up (llm, "BLENDMQ_PLANNER_REVIEW_ROUNDS=0");
    char *submit = h_gemini_call ("submit_plan", PLAN, "sig-1");
    char *look = h_gemini_call ("look", "{}", "sig-2");
    fake_llm_json (llm, 200, submit);
    fake_llm_json (llm, 200, look);               /* would be served to a review: it must stay unused */
    int code;
    char *out = s_blendmq ("", "chat 'build a snowman'", &code);
    assert_int_equal (code, 0);
    s_expect (out, "done: 2/2 steps");
    assert_null (strstr (out, "review"));
    free (out);
    sleep (1);                                     /* a review request would reach the model by now */
    assert_int_equal (fake_llm_requests (llm), 1);
    assert_int_equal (fake_llm_unused (llm), 1);
    free (submit);
    free (look);
    free (s_blendmq ("", "down", &code));
    fake_llm_destroy (&llm);
}

/* (d) the planner dies while the model reviews: the first result answers, with a note. */
static void test_review_planner_killed (void **state)
{
    fake_llm_t *llm = fake_llm_new ();
    s_up (llm, "");
    char *submit = h_gemini_call ("submit_plan", PLAN, "sig-1");
    char *done = h_gemini_call ("done", "{\"summary\": \"fine\"}", "sig-2");
    fake_llm_json (llm, 200, submit);
    fake_reply_t slow = { .status = 200, .body = done, .delay_ms = 20000 };   /* the review hangs on the model */
    fake_llm_push (llm, &slow);
    int pid = e2e_pid (s_dir, "planner");
    assert_true (pid > 1);
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "(for i in $(seq 100); do grep -q 'reviewing' '%s/chat.out' 2>/dev/null && break; sleep 0.1; done;"
              " kill -9 %d) & timeout 60 '%s/blendmq' --run-dir '%s' chat 'build a snowman' > '%s/chat.out' 2>&1;"
              " echo \"rc=$?\" >> '%s/chat.out'; wait; cat '%s/chat.out'", s_dir, pid, BMQ_BIN_DIR, s_dir, s_dir, s_dir, s_dir);
    int code;
    int64_t t0 = zclock_mono ();
    char *out = e2e_run (cmd, &code);
    int64_t took = zclock_mono () - t0;
    s_expect (out, "planner: reviewing the result (round 1 of 1)");
    s_expect (out, "the review could not run (planner_unavailable");
    s_expect (out, "done: 2/2 steps");
    s_expect (out, "rc=0");
    assert_null (strstr (out, "blendmq: planner_unavailable"));      /* no error answer */
    assert_true (took < 15000);                                       /* fail fast, not the model's 20 s */
    free (out);
    assert_int_equal (s_objects_named ("\"head"), 1);                /* the first plan's work stands */
    free (submit);
    free (done);
    free (s_blendmq ("", "down", &code));
    fake_llm_destroy (&llm);
}

int main (void)
{
    /* 77: ctest's SKIP_RETURN_CODE (cmocka's skip() would exit 0 and read as passed) */
    if (!s_have_blender ()) { printf ("SKIPPED: no Blender (blender not on PATH, BLENDMQ_BLENDER unset)\n"); return 77; }
    signal (SIGPIPE, SIG_IGN);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq_e2e_review_XXXXXX");
    if (!mkdtemp (s_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_review_look_done_and_fix),
        cmocka_unit_test (test_review_off),
        cmocka_unit_test (test_review_planner_killed),
    };
    int rc = cmocka_run_group_tests (tests, NULL, NULL);
    int code;
    char cmd[256];
    snprintf (cmd, sizeof cmd, "'%s/blendmq' --run-dir '%s' down > /dev/null 2>&1; rm -rf '%s'", BMQ_BIN_DIR, s_dir, s_dir);
    free (e2e_run (cmd, &code));
    return rc;
}
