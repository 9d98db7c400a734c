/* generate_3d and `blendmq assets generate` through the whole stack (issue 16;
 * ctest assets.generate): `blendmq up` with a real headless Blender, the
 * executor's Hyper3D client pointed at fake_hyper3d by the environment
 * (BLENDMQ_ASSETS_HYPER3D_BASE_URL, …_DOWNLOAD_HOSTS, …_API_KEY, …_POLL_MS),
 * the model a real GLB (a triangle):
 *
 *   - MCP (the gateway's Streamable HTTP endpoint, the mcp token): generate_3d
 *     with a progress token streams notifications/progress with rising
 *     progress of 100, then its result carries the job id and the import's
 *     objects; the model is in the scene under the asked name;
 *   - MCP notifications/cancelled mid-generation: the executor's job ends
 *     cancelled (its audit record), no download, nothing imported;
 *   - a job Rodin fails: an isError result quoting the reason, nothing imported;
 *   - the CLI prints a line per progress step, "generated", then the import's
 *     lines, exit 0, the model in the scene;
 *   - the CLI's Ctrl-C (SIGINT) cancels the job and waits for "cancelled":
 *     exit 130, nothing imported.
 * (The executor's jobs alone are test_assets_generate.c, in assets.hyper3d.) */
#include "e2e_util.h"
#include "fake_hyper3d.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UUID_PREFIX "5e1f2a9e-0b3d-4e5f-9a6b-1c2d3e4f5a"

static char s_dir[256], s_http[256];
static fake_h3_t *s_h3;
static unsigned char s_glb[1024];
static size_t s_glb_len;
static int s_jobs;

/* A binary glTF: one triangle (0,0,0) (1,0,0) (0,1,0), its node "gen_part". */
static void s_make_glb (void)
{
    static const char json[] =
        "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"mesh\":0,\"name\":\"gen_part\"}],"
        "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0}}]}],\"buffers\":[{\"byteLength\":36}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":36}],\"accessors\":[{\"bufferView\":0,"
        "\"componentType\":5126,\"count\":3,\"type\":\"VEC3\",\"max\":[1,1,0],\"min\":[0,0,0]}]}";
    static const float tri[9] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
    uint32_t jlen = (uint32_t) ((sizeof json - 1 + 3) & ~3u), blen = sizeof tri, total = 12 + 8 + jlen + 8 + blen;
    unsigned char *p = s_glb;
    uint32_t head[3] = { 0x46546C67u, 2, total }, jh[2] = { jlen, 0x4E4F534Au }, bh[2] = { blen, 0x004E4942u };
    memcpy (p, head, 12); p += 12;
    memcpy (p, jh, 8); p += 8;
    memset (p, ' ', jlen);
    memcpy (p, json, sizeof json - 1); p += jlen;
    memcpy (p, bh, 8); p += 8;
    memcpy (p, tri, blen); p += blen;
    s_glb_len = (size_t) (p - s_glb);
}

/* Script the next job: created, then these status answers in order (the last repeats), then the download. */
static void s_job (const char *const *states, size_t n, char *uuid, size_t len)
{
    fake_h3_reset (s_h3);
    snprintf (uuid, len, UUID_PREFIX "%02d", ++s_jobs);
    char doc[1024];
    snprintf (doc, sizeof doc, "{\"uuid\": \"%s\", \"jobs\": {\"uuids\": [\"j1\"], \"subscription_key\": \"sub-%d\"}}", uuid, s_jobs);
    fake_h3_json (s_h3, "/api/v2/rodin", doc);
    for (size_t i = 0; i < n; i++) {
        snprintf (doc, sizeof doc, "{\"jobs\": [{\"uuid\": \"j1\", \"status\": \"%s\"%s}]}", states[i],
                  !strcmp (states[i], "Failed") ? ", \"message\": \"the prompt was refused by moderation\"" : "");
        fake_h3_json (s_h3, "/api/v2/status", doc);
    }
    snprintf (doc, sizeof doc, "{\"list\": [{\"url\": \"%s/dl/model.glb\", \"name\": \"base_basic_pbr.glb\"}]}", fake_h3_url (s_h3));
    fake_h3_json (s_h3, "/api/v2/download", doc);
    fake_h3_route (s_h3, "/dl/model.glb", &(fake_resp_t) { .body = s_glb, .len = s_glb_len, .content_type = "model/gltf-binary" });
}

static int s_setup (void **state)
{
    (void) state;
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-generate-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    s_make_glb ();
    if (!(s_h3 = fake_h3_new ())) return -1;
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "BLENDMQ_ASSETS_HYPER3D_BASE_URL='%s/api' BLENDMQ_ASSETS_HYPER3D_DOWNLOAD_HOSTS='%s' "
              "BLENDMQ_ASSETS_HYPER3D_API_KEY=test-key BLENDMQ_ASSETS_HYPER3D_POLL_MS=150 "
              "BLENDMQ_ASSETS_CACHE_DIR='%s/assets-cache' '%s' --run-dir '%s' up --ipc --validators 1 >&2",
              fake_h3_url (s_h3), fake_h3_hostport (s_h3), s_dir, e2e_bin ("blendmq"), s_dir);
    if (system (cmd) != 0) return -1;
    int code;
    json_t *st = e2e_blendmq_json (s_dir, "status", &code);
    const char *http = json_string_value (json_object_get (json_object_get (json_array_get (st, 0), "endpoints"), "http"));
    snprintf (s_http, sizeof s_http, "%s", http ? http : "");
    json_decref (st);
    curl_global_init (CURL_GLOBAL_DEFAULT);
    return *s_http ? 0 : -1;
}

static int s_teardown (void **state)
{
    (void) state;
    char cmd[1024];
    /* what the services said went wrong, for the failure's story */
    snprintf (cmd, sizeof cmd, "grep -iHE 'error|warn|restart|signal|generat|cancel' '%s'/logs/*.log | cut -c1-400 | tail -80 >&2", s_dir);
    if (system (cmd)) { }
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2 && rm -rf '%s'", e2e_bin ("blendmq"), s_dir, s_dir);
    int rc = system (cmd);
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    fake_h3_destroy (&s_h3);
    curl_global_cleanup ();
    return rc == 0 ? 0 : -1;
}

static bool s_in_scene (const char *name)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene info", &code);
    size_t i;
    json_t *o;
    bool found = false;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "objects"), i, o)
        found |= !strcmp (json_string_value (json_object_get (o, "name")) ?: "", name);
    json_decref (lines);
    return found;
}

/* The status in the executor's audit record of the job with this uuid ("asset.generate"),
 * waiting up to 10 s for it; "" when there is none. */
static void s_job_status (const char *uuid, char *status, size_t len)
{
    status[0] = 0;
    for (int i = 0; i < 50 && !status[0]; i++) {
        int code;
        json_t *lines = e2e_blendmq_json (s_dir, "audit list --kind asset.generate --since 1h", &code);
        size_t k;
        json_t *r;
        json_array_foreach (lines, k, r) {
            json_t *data = json_object_get (r, "data");
            if (!strcmp (json_string_value (json_object_get (data, "job")) ?: "", uuid))
                snprintf (status, len, "%s", json_string_value (json_object_get (data, "status")) ?: "?");
        }
        json_decref (lines);
        if (!status[0]) usleep (200 * 1000);
    }
}

/* ---- MCP over HTTP ----------------------------------------------------------- */

typedef struct {
    char  *data;
    size_t len;
    char   session[128];
    const char *cancel_on;      /* when this text first shows in the stream, cancel request id 7 */
    bool   cancelled;
} s_buf_t;

static long s_post (const char *body, const char *session, s_buf_t *out);

static size_t s_collect (char *p, size_t size, size_t n, void *arg)
{
    s_buf_t *b = arg;
    b->data = realloc (b->data, b->len + size * n + 1);
    memcpy (b->data + b->len, p, size * n);
    b->len += size * n;
    b->data[b->len] = 0;
    if (b->cancel_on && !b->cancelled && strstr (b->data, b->cancel_on)) {
        b->cancelled = true;            /* on another connection, as a client cancels */
        s_buf_t note = { 0 };
        s_post ("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7,\"reason\":\"test\"}}",
                b->session, &note);
        free (note.data);
    }
    return size * n;
}

static size_t s_header (char *p, size_t size, size_t n, void *arg)
{
    s_buf_t *b = arg;
    if (!strncasecmp (p, "Mcp-Session-Id:", 15)) {
        const char *v = p + 15;
        while (*v == ' ') v++;
        snprintf (b->session, sizeof b->session, "%.*s", (int) strcspn (v, "\r\n"), v);
    }
    return size * n;
}

static long s_post (const char *body, const char *session, s_buf_t *out)
{
    char url[512], auth[600], sid[200];
    snprintf (url, sizeof url, "%s/mcp", s_http);
    snprintf (auth, sizeof auth, "Authorization: Bearer %s", e2e_token (s_dir, "mcp"));
    struct curl_slist *h = curl_slist_append (NULL, auth);
    h = curl_slist_append (h, "Content-Type: application/json");
    h = curl_slist_append (h, "Accept: application/json, text/event-stream");
    h = curl_slist_append (h, "MCP-Protocol-Version: 2025-06-18");
    if (session && *session) {
        snprintf (sid, sizeof sid, "Mcp-Session-Id: %s", session);
        h = curl_slist_append (h, sid);
    }
    CURL *c = curl_easy_init ();
    curl_easy_setopt (c, CURLOPT_URL, url);
    curl_easy_setopt (c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt (c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, s_collect);
    curl_easy_setopt (c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt (c, CURLOPT_HEADERFUNCTION, s_header);
    curl_easy_setopt (c, CURLOPT_HEADERDATA, out);
    curl_easy_setopt (c, CURLOPT_TIMEOUT, 120L);
    long status = 0;
    if (curl_easy_perform (c) == CURLE_OK) curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup (c);
    curl_slist_free_all (h);
    return status;
}

/* A session: initialize, then notifications/initialized. */
static void s_session (char *session, size_t len)
{
    s_buf_t init = { 0 }, note = { 0 };
    assert_int_equal (s_post ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                              "\"capabilities\":{},\"clientInfo\":{\"name\":\"generate-test\",\"version\":\"1\"}}}", NULL, &init), 200);
    assert_true (init.session[0]);
    snprintf (session, len, "%s", init.session);
    s_post ("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", session, &note);
    free (init.data);
    free (note.data);
}

/* The JSON-RPC messages of an SSE (or JSON) answer. */
static json_t *s_messages (const char *text)
{
    json_t *all = json_array ();
    for (const char *p = text ? text : ""; (p = strstr (p, "data: ")); ) {
        p += 6;
        size_t n = strcspn (p, "\n");
        json_t *m = json_loadb (p, n, 0, NULL);
        if (m) json_array_append_new (all, m);
        p += n;
    }
    if (!json_array_size (all) && text && *text == '{') json_array_append_new (all, json_loads (text, 0, NULL));
    return all;
}

/* tools/call generate_3d (request id 7, progress token "gen"); the stream's messages. */
static json_t *s_generate (const char *args, const char *cancel_on)
{
    char session[128], body[1024];
    s_session (session, sizeof session);
    snprintf (body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"generate_3d\","
              "\"arguments\":%s,\"_meta\":{\"progressToken\":\"gen\"}}}", args);
    s_buf_t call = { .cancel_on = cancel_on };
    snprintf (call.session, sizeof call.session, "%s", session);
    long st = s_post (body, session, &call);
    fprintf (stderr, "generate_3d: HTTP %ld: %.3000s\n", st, call.data ? call.data : "");
    assert_int_equal (st, 200);
    json_t *msgs = s_messages (call.data);
    free (call.data);
    return msgs;
}

static json_t *s_response (json_t *msgs)
{
    size_t i;
    json_t *m;
    json_array_foreach (msgs, i, m)
        if (json_integer_value (json_object_get (m, "id")) == 7 && json_object_get (m, "result")) return json_object_get (m, "result");
    return NULL;
}

static void test_mcp_generate_imports (void **state)
{
    (void) state;
    char uuid[80];
    const char *states[] = { "Waiting", "Generating", "Generating", "Generating", "Done" };
    s_job (states, 5, uuid, sizeof uuid);
    json_t *msgs = s_generate ("{\"prompt\":\"a small triangle\",\"name\":\"gen_mcp\",\"tier\":\"Sketch\"}", NULL);
    size_t i, n = 0;
    json_t *m;
    double last = -1;
    bool generating = false;
    json_array_foreach (msgs, i, m) {
        if (strcmp (json_string_value (json_object_get (m, "method")) ?: "", "notifications/progress")) continue;
        json_t *p = json_object_get (m, "params");
        assert_string_equal (json_string_value (json_object_get (p, "progressToken")), "gen");
        double v = json_number_value (json_object_get (p, "progress"));
        assert_true (v > last);                                         /* in order, rising */
        assert_true (json_number_value (json_object_get (p, "total")) == 100);
        generating |= strstr (json_string_value (json_object_get (p, "message")) ?: "", "generating") != NULL;
        last = v;
        n++;
    }
    assert_true (n >= 3);                                               /* submitted, waiting, generating …, done */
    assert_true (last == 100);
    assert_true (generating);
    json_t *result = s_response (msgs);
    assert_non_null (result);
    assert_false (json_is_true (json_object_get (result, "isError")));
    json_t *sc = json_object_get (result, "structuredContent");
    assert_string_equal (json_string_value (json_object_get (sc, "job")), uuid);
    assert_string_equal (json_string_value (json_object_get (sc, "status")), "done");
    assert_non_null (strstr (json_string_value (json_object_get (json_array_get (json_object_get (result, "content"), 0), "text")), uuid));
    json_decref (msgs);
    assert_non_null (strstr (fake_h3_body (s_h3, "/api/v2/download"), uuid));     /* the model of this job */
    assert_int_equal (fake_h3_hits (s_h3, "/dl/model.glb"), 1);
    assert_true (s_in_scene ("gen_mcp"));
    assert_true (s_in_scene ("gen_part"));
}

static void test_mcp_cancel (void **state)
{
    (void) state;
    char uuid[80];
    const char *states[] = { "Waiting", "Generating" };                /* generating until stopped */
    s_job (states, 2, uuid, sizeof uuid);
    json_t *msgs = s_generate ("{\"prompt\":\"a triangle never finished\",\"name\":\"gen_cancelled\"}", "generating");
    assert_null (s_response (msgs));                                    /* a cancelled request gets no response */
    json_decref (msgs);
    char status[64];
    s_job_status (uuid, status, sizeof status);
    assert_string_equal (status, "cancelled");                         /* the executor stopped the job */
    assert_int_equal (fake_h3_hits (s_h3, "/api/v2/download"), 0);
    assert_int_equal (fake_h3_hits (s_h3, "/dl/model.glb"), 0);
    assert_false (s_in_scene ("gen_cancelled"));
}

static void test_mcp_failed_job (void **state)
{
    (void) state;
    char uuid[80];
    const char *states[] = { "Waiting", "Failed" };
    s_job (states, 2, uuid, sizeof uuid);
    json_t *msgs = s_generate ("{\"prompt\":\"something refused\",\"name\":\"gen_failed\"}", NULL);
    json_t *result = s_response (msgs);
    assert_non_null (result);
    assert_true (json_is_true (json_object_get (result, "isError")));
    const char *text = json_string_value (json_object_get (json_array_get (json_object_get (result, "content"), 0), "text"));
    assert_non_null (strstr (text, "failed"));
    assert_non_null (strstr (text, "refused by moderation"));
    assert_non_null (strstr (text, "nothing was imported"));
    json_decref (msgs);
    assert_int_equal (fake_h3_hits (s_h3, "/dl/model.glb"), 0);
    assert_false (s_in_scene ("gen_failed"));
}

/* ---- the CLI ---------------------------------------------------------------- */

static void test_cli_generate_imports (void **state)
{
    (void) state;
    char uuid[80], cmd[1024];
    const char *states[] = { "Waiting", "Generating", "Generating", "Done" };
    s_job (states, 4, uuid, sizeof uuid);
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' assets generate 'a small triangle' --name gen_cli --tier Sketch --deadline 60 2>&1",
              e2e_bin ("blendmq"), s_dir);
    int code;
    char *out = e2e_run (cmd, &code);
    fprintf (stderr, "%s", out);
    assert_int_equal (code, 0);
    assert_non_null (strstr (out, "generate   5%"));
    assert_non_null (strstr (out, "generating"));
    assert_non_null (strstr (out, "generate 100%"));
    char line[200];
    snprintf (line, sizeof line, "generated: job %s", uuid);
    assert_non_null (strstr (out, line));
    assert_non_null (strstr (out, "asset.import"));
    assert_non_null (strstr (out, "done: 1/1 steps"));
    assert_true (strstr (out, "generate   5%") < strstr (out, "generated: job"));     /* progress first, as it came */
    free (out);
    assert_non_null (strstr (fake_h3_body (s_h3, "/api/v2/rodin"), "Sketch"));
    assert_true (s_in_scene ("gen_cli"));
}

/* From an image alone (image-to-3D): the CLI sends the PNG's exact bytes through
 * the gateway and the executor, which hands them to Rodin as an `images` part. */
static void test_cli_generate_from_image (void **state)
{
    (void) state;
    char uuid[80], cmd[1024], png[300];
    const char *states[] = { "Generating", "Done" };
    s_job (states, 2, uuid, sizeof uuid);
    static const unsigned char bytes[] = "\x89PNG\r\n\x1a\n" "\0\0\0\rIHDR a tiny test picture \r\n\0 with NULs";
    snprintf (png, sizeof png, "%s/front.png", s_dir);
    FILE *f = fopen (png, "wb");
    assert_non_null (f);
    assert_int_equal (fwrite (bytes, 1, sizeof bytes - 1, f), sizeof bytes - 1);
    fclose (f);
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' assets generate --image '%s' --name gen_img --deadline 60 2>&1",
              e2e_bin ("blendmq"), s_dir, png);
    int code;
    char *out = e2e_run (cmd, &code);
    fprintf (stderr, "%s", out);
    assert_int_equal (code, 0);
    assert_non_null (strstr (out, "done: 1/1 steps"));
    free (out);
    size_t len = 0;
    const char *body = fake_h3_body_bytes (s_h3, "/api/v2/rodin", &len);
    assert_non_null (body);
    assert_non_null (memmem (body, len, bytes, sizeof bytes - 1));            /* the picture, byte for byte */
    assert_non_null (memmem (body, len, "name=\"images\"", strlen ("name=\"images\"")));
    assert_non_null (memmem (body, len, "image/png", 9));
    assert_null (memmem (body, len, "name=\"prompt\"", strlen ("name=\"prompt\"")));                  /* no prompt given: none sent */
    assert_true (s_in_scene ("gen_img"));
}

static char *s_slurp (const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen (path, "r");
    if (f) { buf[fread (buf, 1, len - 1, f)] = 0; fclose (f); }
    return buf;
}

static void test_cli_ctrl_c_cancels (void **state)
{
    (void) state;
    char uuid[80], path[512], buf[16384];
    const char *states[] = { "Waiting", "Generating" };
    s_job (states, 2, uuid, sizeof uuid);
    snprintf (path, sizeof path, "%s/generate-cli.out", s_dir);
    pid_t pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
        int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2 (fd, 1);
        dup2 (fd, 2);
        execl (e2e_bin ("blendmq"), "blendmq", "--run-dir", s_dir, "assets", "generate", "a triangle never finished",
               "--name", "gen_ctrl_c", (char *) NULL);
        _exit (127);
    }
    bool seen = false;
    for (int i = 0; i < 300 && !seen; i++) {           /* until it prints a generating line (30 s at most) */
        usleep (100 * 1000);
        seen = strstr (s_slurp (path, buf, sizeof buf), "generating") != NULL;
    }
    assert_true (seen);
    kill (pid, SIGINT);
    int status = 0;
    assert_int_equal (waitpid (pid, &status, 0), pid);
    fprintf (stderr, "%s", s_slurp (path, buf, sizeof buf));
    assert_true (WIFEXITED (status));
    assert_int_equal (WEXITSTATUS (status), 130);
    assert_non_null (strstr (buf, "cancelling the generation"));
    assert_non_null (strstr (buf, "generate cancelled"));
    assert_non_null (strstr (buf, "nothing was imported"));
    char st[64];
    s_job_status (uuid, st, sizeof st);
    assert_string_equal (st, "cancelled");
    assert_int_equal (fake_h3_hits (s_h3, "/dl/model.glb"), 0);
    assert_false (s_in_scene ("gen_ctrl_c"));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_mcp_generate_imports),
        cmocka_unit_test (test_mcp_cancel),
        cmocka_unit_test (test_mcp_failed_job),
        cmocka_unit_test (test_cli_generate_imports),
        cmocka_unit_test (test_cli_generate_from_image),
        cmocka_unit_test (test_cli_ctrl_c_cancels),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
