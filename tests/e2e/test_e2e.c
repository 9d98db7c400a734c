/* End to end, with five real services and a real headless Blender:
 * the snowman with progress in order and the saved scene and audit checked;
 * a plan outside the palette rejected with the scene unchanged; an unsealed
 * plan refused by the executor; Blender killed mid-plan ("interrupted",
 * services stay up, the next plan runs once Blender is back); and `down`
 * leaving no process behind. */
#include "bus.h"
#include "config.h"
#include "e2e_util.h"
#include "plan_seal.h"
#include "roles.h"

#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_dir[256];

/* Dead means gone or a zombie: the stack's processes outlive the `blendmq up`
 * that started them, and we are their subreaper. */
static bool s_alive (int pid)
{
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    char path[64], state = 0;
    snprintf (path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen (path, "r");
    if (!f) return false;
    if (fscanf (f, "%*d %*s %c", &state) != 1) state = 0;
    fclose (f);
    return state && state != 'Z';
}

static int s_setup (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-e2e-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc --validators 2 >&2", e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static int s_teardown (void **state)
{
    int pids[16], n = 0;
    const char *names[] = { "gateway", "planner", "executor", "audit", "validator-1", "validator-2", "blender" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        int pid = e2e_pid (s_dir, names[i]);
        if (pid > 0) pids[n++] = pid;
    }
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2", e2e_bin ("blendmq"), s_dir);
    int rc = system (cmd);
    int alive = 0;
    for (int i = 0; i < n; i++)
        if (s_alive (pids[i])) { fprintf (stderr, "process %d still running after down\n", pids[i]); alive++; }
    /* services built with sanitizers report into their logs: any report fails the suite */
    snprintf (cmd, sizeof cmd, "grep -H -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '%s'/logs/*.log >&2", s_dir);
    if (system (cmd) == 0) { fprintf (stderr, "sanitizer reports in the services' logs (kept in %s)\n", s_dir); return -1; }
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (!alive && rc == 0 && system (cmd) != 0) return -1;
    return rc == 0 && alive == 0 && n >= 6 ? 0 : -1;
}

static json_t *s_find (json_t *lines, const char *type)
{
    size_t i;
    json_t *l;
    json_array_foreach (lines, i, l)
        if (!strcmp (json_string_value (json_object_get (l, "type")), type)) return json_object_get (l, "body");
    return NULL;
}

static json_t *s_scene_objects (void)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene", &code);
    assert_int_equal (code, 0);
    json_t *objects = json_incref (json_object_get (json_array_get (lines, 0), "objects"));
    json_decref (lines);
    assert_non_null (objects);
    return objects;
}

/* Objects and locations in a saved .blend, read back by a fresh Blender. */
static json_t *s_blend_objects (const char *blend)
{
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "blender -b '%s' --factory-startup --python-expr \"import bpy, json; "
              "print('OBJECTS ' + json.dumps({o.name: list(o.location) for o in bpy.data.objects}))\" 2>/dev/null", blend);
    int code;
    char *out = e2e_run (cmd, &code);
    char *line = strstr (out, "OBJECTS ");
    json_t *objects = line ? json_loadb (line + 8, strcspn (line + 8, "\n"), 0, NULL) : NULL;
    free (out);
    return objects;
}

static int s_count_kind (const char *db, const char *cid, const char *kind)
{
    sqlite3 *h;
    int n = -1;
    if (sqlite3_open_v2 (db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        sqlite3_busy_timeout (h, 2000);
        if (sqlite3_prepare_v2 (h, "SELECT count(*) FROM records WHERE cid = ? AND kind = ?", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_text (st, 1, cid, -1, SQLITE_STATIC);
            sqlite3_bind_text (st, 2, kind, -1, SQLITE_STATIC);
            if (sqlite3_step (st) == SQLITE_ROW) n = sqlite3_column_int (st, 0);
            sqlite3_finalize (st);
        }
    }
    sqlite3_close (h);
    return n;
}

/* Steps recorded for the story: the executor records them in batches, one
 * "steps" record {plan_id, steps: [{event, step}]} per AUDIT_STEPS_BATCH. */
static int s_count_steps (const char *db, const char *cid)
{
    sqlite3 *h;
    int n = -1;
    if (sqlite3_open_v2 (db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        sqlite3_busy_timeout (h, 2000);
        if (sqlite3_prepare_v2 (h, "SELECT data FROM records WHERE cid = ? AND kind = 'steps'", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_text (st, 1, cid, -1, SQLITE_STATIC);
            n = 0;
            while (sqlite3_step (st) == SQLITE_ROW) {
                json_t *data = json_loads ((const char *) sqlite3_column_text (st, 0), 0, NULL);
                n += (int) json_array_size (json_object_get (data, "steps"));
                json_decref (data);
            }
            sqlite3_finalize (st);
        }
    }
    sqlite3_close (h);
    return n;
}

static size_t s_collect (char *data, size_t size, size_t n, void *arg)
{
    json_t *buf = arg;                          /* a JSON string used as a growing buffer */
    char *joined = NULL;
    if (asprintf (&joined, "%s%.*s", json_string_value (buf), (int) (size * n), data) < 0) return 0;
    json_string_set (buf, joined);
    free (joined);
    return size * n;
}

/* GET a gateway HTTP route; returns the parsed JSON body and the status. */
static json_t *s_http_get (const char *route, long *status)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "status", &code);
    const char *base = json_string_value (json_object_get (json_object_get (json_array_get (lines, 0), "endpoints"), "http"));
    assert_non_null (base);
    char url[1024];
    snprintf (url, sizeof url, "%s%s", base, route);
    json_decref (lines);
    CURL *c = curl_easy_init ();
    json_t *buf = json_string ("");
    char auth[400];
    snprintf (auth, sizeof auth, "Authorization: Bearer %s", e2e_token (s_dir, "cli"));
    struct curl_slist *headers = curl_slist_append (NULL, auth);
    curl_easy_setopt (c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt (c, CURLOPT_URL, url);
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, s_collect);
    curl_easy_setopt (c, CURLOPT_WRITEDATA, buf);
    curl_easy_setopt (c, CURLOPT_TIMEOUT, 20L);
    assert_int_equal (curl_easy_perform (c), CURLE_OK);
    curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup (c);
    curl_slist_free_all (headers);
    json_t *body = json_loads (json_string_value (buf), 0, NULL);
    json_decref (buf);
    return body;
}

static void test_snowman (void **state)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "chat 'build a snowman'", &code);
    assert_int_equal (code, 0);
    json_t *planned = s_find (lines, "chat.planned");
    assert_non_null (planned);
    json_t *plan = json_object_get (planned, "plan");
    size_t total = json_array_size (plan);
    assert_true (total >= 3);                                  /* SC-001 */
    assert_true (json_is_true (json_object_get (s_find (lines, "validate.reply"), "accepted")));
    /* one progress event per step, in order, all ok */
    size_t i, seen = 0;
    json_t *l;
    const char *cid = NULL;
    json_array_foreach (lines, i, l) {
        cid = json_string_value (json_object_get (l, "cid"));
        json_t *b = json_object_get (l, "body");
        if (strcmp (json_string_value (json_object_get (l, "type")), "progress")) continue;
        if (strcmp (json_string_value (json_object_get (b, "event")), "step")) continue;
        seen++;
        assert_int_equal (json_integer_value (json_object_get (b, "step")), seen);
        assert_int_equal (json_integer_value (json_object_get (b, "total")), total);
        assert_string_equal (json_string_value (json_object_get (b, "status")), "ok");
        assert_string_equal (json_string_value (json_object_get (b, "operation")),
                             json_string_value (json_object_get (json_array_get (plan, seen - 1), "operation")));
    }
    assert_int_equal (seen, total);
    json_t *result = s_find (lines, "execute.result");
    assert_string_equal (json_string_value (json_object_get (result, "status")), "done");
    assert_int_equal (json_integer_value (json_object_get (result, "steps_done")), total);

    /* the saved scene holds the named objects where the plan put them */
    char blend[512];
    snprintf (blend, sizeof blend, "%s/snowman.blend", s_dir);
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' scene save '%s'", e2e_bin ("blendmq"), s_dir, blend);
    assert_int_equal (system (cmd), 0);
    json_t *objects = s_blend_objects (blend);
    assert_non_null (objects);
    json_t *step;
    size_t checked = 0;
    json_array_foreach (plan, i, step) {
        const char *name = json_string_value (json_object_get (step, "name"));
        json_t *loc = json_object_get (json_object_get (step, "params"), "location");
        if (!name) continue;
        json_t *got = json_object_get (objects, name);
        if (!got) fail_msg ("object %s is missing from the saved scene", name);
        bool moved = false;                  /* a later step may move it on purpose */
        for (size_t j = i + 1; j < total; j++) {
            json_t *later = json_array_get (plan, j);
            const char *t = json_string_value (json_object_get (later, "target"));
            const char *op = json_string_value (json_object_get (later, "operation"));
            if (t && !strcmp (t, name) && (strstr (op, "translate") || strstr (op, "object.location"))) moved = true;
        }
        if (!loc || moved) continue;
        for (int k = 0; k < 3; k++)
            assert_true (fabs (json_number_value (json_array_get (got, k)) - json_number_value (json_array_get (loc, k))) < 1e-4);
        checked++;
    }
    assert_true (checked >= 3);
    json_decref (objects);

    /* the audit database holds the story (records arrive asynchronously) */
    char db[512], cfgpath[512];
    snprintf (cfgpath, sizeof cfgpath, "%s/blendmq.yaml", s_dir);
    bmq_config_t *cfg = bmq_config_load (cfgpath, NULL, 0);
    assert_non_null (cfg);
    snprintf (db, sizeof db, "%s", bmq_config_str (cfg, "audit.database"));
    bmq_config_destroy (&cfg);
    int steps = 0;
    for (int t = 0; t < 50 && steps != (int) total; t++) {
        steps = s_count_steps (db, cid);
        if (steps != (int) total) usleep (100000);
    }
    assert_int_equal (steps, total);
    assert_int_equal (s_count_kind (db, cid, "request"), 1);
    assert_int_equal (s_count_kind (db, cid, "prompt"), 1);
    assert_int_equal (s_count_kind (db, cid, "plan.proposed"), 1);
    assert_int_equal (s_count_kind (db, cid, "verdict"), 1);
    assert_int_equal (s_count_kind (db, cid, "plan.start"), 1);
    assert_int_equal (s_count_kind (db, cid, "plan.end"), 1);

    /* the same story through the gateway's HTTP API, in order */
    char route[256];
    snprintf (route, sizeof route, "/api/audit?cid=%s&limit=500", cid);
    long status = 0;
    json_t *page = s_http_get (route, &status);
    assert_int_equal (status, 200);
    json_t *records = json_object_get (page, "records");
    size_t http_steps = 0;
    json_t *rec;
    json_array_foreach (records, i, rec) {
        const char *k = json_string_value (json_object_get (rec, "kind"));
        if (k && !strcmp (k, "steps")) http_steps += json_array_size (json_object_get (json_object_get (rec, "data"), "steps"));
        assert_string_equal (json_string_value (json_object_get (rec, "cid")), cid);
    }
    assert_int_equal (http_steps, total);
    json_decref (page);
    page = s_http_get ("/api/audit?limit=9999", &status);
    assert_int_equal (status, 400);
    json_decref (page);
    json_decref (lines);
}

static const char *s_write_plan (const char *name, const char *json)
{
    static char path[512];
    snprintf (path, sizeof path, "%s/%s", s_dir, name);
    FILE *f = fopen (path, "w");
    fputs (json, f);
    fclose (f);
    return path;
}

static void test_outside_palette_rejected (void **state)
{
    int code;
    json_t *before = s_scene_objects ();
    const char *path = s_write_plan ("bad.json",
        "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"params\": {\"size\": 1}},"
        " {\"operation\": \"bpy.ops.wm.quit_blender\"},"
        " {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"params\": {\"size\": 2}}]");
    char args[1024];
    snprintf (args, sizeof args, "plan run '%s'", path);
    json_t *lines = e2e_blendmq_json (s_dir, args, &code);
    assert_int_equal (code, 1);
    json_t *verdict = s_find (lines, "validate.reply");
    assert_non_null (verdict);
    assert_false (json_is_true (json_object_get (verdict, "accepted")));
    json_t *e0 = json_array_get (json_object_get (verdict, "errors"), 0);
    assert_int_equal (json_integer_value (json_object_get (e0, "step")), 1);
    assert_string_equal (json_string_value (json_object_get (e0, "field")), "operation");
    assert_null (s_find (lines, "progress"));
    json_decref (lines);
    json_t *after = s_scene_objects ();
    assert_true (json_equal (before, after));
    json_decref (before);
    json_decref (after);

    /* plan validate: 1 for rejected, 0 for accepted, 2 for a file that is not JSON */
    snprintf (args, sizeof args, "plan validate '%s'", path);
    json_decref (e2e_blendmq_json (s_dir, args, &code));
    assert_int_equal (code, 1);
    path = s_write_plan ("good.json", "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"params\": {\"size\": 1}}]");
    snprintf (args, sizeof args, "plan validate '%s'", path);
    json_decref (e2e_blendmq_json (s_dir, args, &code));
    assert_int_equal (code, 0);
    path = s_write_plan ("junk.json", "[{\"operation\": ");
    snprintf (args, sizeof args, "plan validate '%s' 2>/dev/null", path);
    json_decref (e2e_blendmq_json (s_dir, args, &code));
    assert_int_equal (code, 2);
}

/* A later plan may act on what an earlier plan made (the gateway gives the
 * validator the scene's names), but may not reuse such a name. */
static void test_plans_act_on_existing_objects (void **state)
{
    int code;
    char args[1024];
    const char *make = s_write_plan ("make.json",
        "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"existing_box\", \"params\": {\"location\": [5, 5, 0]}}]");
    snprintf (args, sizeof args, "plan run '%s'", make);
    json_decref (e2e_blendmq_json (s_dir, args, &code));
    assert_int_equal (code, 0);
    const char *move = s_write_plan ("move.json",
        "[{\"operation\": \"object.location\", \"target\": \"existing_box\", \"params\": {\"value\": [6, 6, 1]}}]");
    snprintf (args, sizeof args, "plan run '%s'", move);
    json_t *lines = e2e_blendmq_json (s_dir, args, &code);
    assert_int_equal (code, 0);
    json_decref (lines);
    json_t *objects = s_scene_objects ();
    size_t i;
    json_t *o;
    bool moved = false;
    json_array_foreach (objects, i, o)
        if (!strcmp (json_string_value (json_object_get (o, "name")), "existing_box"))
            moved = json_number_value (json_array_get (json_object_get (o, "location"), 2)) == 1.0;
    assert_true (moved);
    json_decref (objects);
    /* the same name again, then targeted: within the plan the name means the new
     * object (Blender calls it existing_box.001), and the old one is untouched */
    const char *again = s_write_plan ("again.json",
        "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"existing_box\", \"params\": {\"location\": [9, 0, 0]}},"
        " {\"operation\": \"object.location\", \"target\": \"existing_box\", \"params\": {\"value\": [9, 9, 9]}}]");
    snprintf (args, sizeof args, "plan run '%s'", again);
    json_decref (e2e_blendmq_json (s_dir, args, &code));
    assert_int_equal (code, 0);
    objects = s_scene_objects ();
    int checked = 0;
    json_array_foreach (objects, i, o) {
        const char *n = json_string_value (json_object_get (o, "name"));
        double z = json_number_value (json_array_get (json_object_get (o, "location"), 2));
        if (!strcmp (n, "existing_box")) { assert_true (z == 1.0); checked++; }
        if (!strcmp (n, "existing_box.001")) { assert_true (z == 9.0); checked++; }
    }
    assert_int_equal (checked, 2);
    json_decref (objects);
    /* a name in neither the plan nor the scene */
    const char *ghost = s_write_plan ("ghost.json",
        "[{\"operation\": \"object.location\", \"target\": \"no_such_object\", \"params\": {\"value\": [0, 0, 0]}}]");
    snprintf (args, sizeof args, "plan run '%s'", ghost);
    json_decref (e2e_blendmq_json (s_dir, args, &code));
    assert_int_equal (code, 1);
}

static void test_unsealed_plan_refused (void **state)
{
    char path[512], err[256];
    snprintf (path, sizeof path, "%s/blendmq.yaml", s_dir);
    bmq_config_t *cfg = bmq_config_load (path, err, sizeof err);
    assert_non_null (cfg);
    json_t *before = s_scene_objects ();
    assert_int_equal (bmq_bus_security_init (cfg, "cli", err, sizeof err), 0);   /* CURVE: the cli key of the run dir */
    zsock_t *sock = bmq_bus_connect_as (ZMQ_DEALER, bmq_config_str (cfg, "executor.endpoint"), "executor", "gateway");   /* as the gateway */
    json_t *plan = json_loads ("[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\"}]", 0, NULL);
    const char *fake = "0000000000000000000000000000000000000000000000000000000000000000";
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_EXECUTE_REQUEST, NULL,
        json_pack ("{s:s, s:o, s:s, s:s}", "plan_id", "p-forged", "plan", plan, "plan_hash", fake, "seal", fake));
    bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* the gateway forwards for a client */
    assert_int_equal (bmq_bus_send_and_destroy (sock, NULL, &req), 0);
    zsock_set_rcvtimeo (sock, 5000);
    bmq_envelope_t *reply = NULL;
    while ((reply = bmq_bus_recv (sock, NULL)) && reply->type == BMQ_MSG_HEARTBEAT) bmq_envelope_destroy (&reply);
    assert_non_null (reply);
    assert_int_equal (reply->type, BMQ_MSG_ERROR);
    assert_string_equal (bmq_body_str (reply, "code"), "unsealed");
    bmq_envelope_destroy (&reply);
    /* nor can a client slip a step past validation as a "scene command" */
    req = bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL, json_pack ("{s:s, s:{s:{s:s}}}", "command", "run_step",
                            "args", "step", "operation", "bpy.ops.mesh.primitive_cube_add"));
    bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* the gateway forwards for a client */
    assert_int_equal (bmq_bus_send_and_destroy (sock, NULL, &req), 0);
    while ((reply = bmq_bus_recv (sock, NULL)) && reply->type == BMQ_MSG_HEARTBEAT) bmq_envelope_destroy (&reply);
    assert_non_null (reply);
    assert_int_equal (reply->type, BMQ_MSG_ERROR);
    assert_string_equal (bmq_body_str (reply, "code"), "bad_request");
    bmq_envelope_destroy (&reply);
    /* seals (issue 12): one for another executor, an expired one, a version 1 one
     * and a replay are refused, each saying why */
    bmq_seal_key_t key;
    assert_int_equal (bmq_seal_key_load (bmq_config_str (cfg, "security.verdict_key_file"), &key, err, sizeof err), 0);
    const char *me = *bmq_config_str (cfg, "executor.name") ? bmq_config_str (cfg, "executor.name") : "local";
    json_t *ghost = json_loads ("[{\"operation\": \"object.location\", \"target\": \"no_such_replay_target\","
                                " \"params\": {\"value\": [0, 0, 0]}}]", 0, NULL);
    char hash[BMQ_HEX_DIGEST], seal[BMQ_SEAL_MAX], v1[BMQ_HEX_DIGEST];
    bmq_plan_hash (ghost, hash);
    struct { const char *what, *expect; } cases[] = {
        { "other", "not for this one" }, { "expired", "expired" }, { "v1", "version 2" }, { "good", NULL }, { "replay", "replay" } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!strcmp (cases[i].what, "other")) assert_int_equal (bmq_seal_make (&key, hash, "elsewhere", 300000, seal), 0);
        else if (!strcmp (cases[i].what, "expired")) { assert_int_equal (bmq_seal_make (&key, hash, me, 1, seal), 0); zclock_sleep (20); }
        else if (!strcmp (cases[i].what, "v1")) { bmq_seal_sign (&key, hash, v1); snprintf (seal, sizeof seal, "%s", v1); }
        else if (!strcmp (cases[i].what, "good")) assert_int_equal (bmq_seal_make (&key, hash, me, 300000, seal), 0);
        /* "replay": the good seal again */
        req = bmq_envelope_new (BMQ_MSG_EXECUTE_REQUEST, NULL, json_pack ("{s:s, s:O, s:s, s:s}", "plan_id", "p-seal",
                                "plan", ghost, "plan_hash", hash, "seal", seal));
        bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* the gateway forwards for a client */
        assert_int_equal (bmq_bus_send_and_destroy (sock, NULL, &req), 0);
        bool done = false;
        while (!done && (reply = bmq_bus_recv (sock, NULL))) {
            if (cases[i].expect && reply->type == BMQ_MSG_ERROR) {
                assert_string_equal (bmq_body_str (reply, "code"), "unsealed");
                if (!strstr (bmq_body_str (reply, "message"), cases[i].expect))
                    fail_msg ("%s: %s", cases[i].what, bmq_body_str (reply, "message"));
                done = true;
            }
            else if (!cases[i].expect && reply->type == BMQ_MSG_ERROR)
                fail_msg ("a good seal was refused: %s", bmq_body_str (reply, "message"));
            else if (!cases[i].expect && reply->type == BMQ_MSG_EXECUTE_RESULT) done = true;     /* ran (the step fails) */
            bmq_envelope_destroy (&reply);
        }
        assert_true (done);
    }
    json_decref (ghost);
    zsock_destroy (&sock);
    bmq_config_destroy (&cfg);
    json_t *after = s_scene_objects ();
    assert_true (json_equal (before, after));
    json_decref (before);
    json_decref (after);
}

/* Seal a plan with the stack's own key (as a validator would) and send it
 * straight to the executor; collect progress events until the result. */
static json_t *s_run_sealed (const char *plan_json, bool keep_partial, json_t **events_out)
{
    char path[512], err[256];
    snprintf (path, sizeof path, "%s/blendmq.yaml", s_dir);
    bmq_config_t *cfg = bmq_config_load (path, err, sizeof err);
    assert_non_null (cfg);
    bmq_seal_key_t key;
    assert_int_equal (bmq_seal_key_load (bmq_config_str (cfg, "security.verdict_key_file"), &key, err, sizeof err), 0);
    json_t *plan = json_loads (plan_json, 0, NULL);
    char hash[BMQ_HEX_DIGEST], seal[BMQ_SEAL_MAX];
    bmq_plan_hash (plan, hash);
    assert_int_equal (bmq_seal_make (&key, hash, *bmq_config_str (cfg, "executor.name") ? bmq_config_str (cfg, "executor.name") : "local",
                                     300000, seal), 0);
    assert_int_equal (bmq_bus_security_init (cfg, "cli", err, sizeof err), 0);   /* CURVE: the cli key of the run dir */
    zsock_t *sock = bmq_bus_connect_as (ZMQ_DEALER, bmq_config_str (cfg, "executor.endpoint"), "executor", "gateway");   /* as the gateway */
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_EXECUTE_REQUEST, NULL,
        json_pack ("{s:s, s:o, s:s, s:s, s:b}", "plan_id", "p-sealed", "plan", plan, "plan_hash", hash, "seal", seal,
                   "keep_partial", keep_partial));
    bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* the gateway forwards for a client */
    bmq_bus_send_and_destroy (sock, NULL, &req);
    zsock_set_rcvtimeo (sock, 20000);
    json_t *events = json_array (), *result = NULL;
    bmq_envelope_t *env;
    while (!result && (env = bmq_bus_recv (sock, NULL))) {
        if (env->type == BMQ_MSG_PROGRESS) json_array_append (events, env->body);
        else if (env->type == BMQ_MSG_EXECUTE_RESULT) result = json_incref (env->body);
        else if (env->type == BMQ_MSG_ERROR) fail_msg ("executor: %s", bmq_body_str (env, "message"));
        bmq_envelope_destroy (&env);
    }
    zsock_destroy (&sock);
    bmq_config_destroy (&cfg);
    assert_non_null (result);
    *events_out = events;
    return result;
}

static void test_failed_step_rolls_back (void **state)
{
    int code;
    json_decref (e2e_blendmq_json (s_dir, "scene reset", &code));
    assert_int_equal (code, 0);
    const char *plan = "[{\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"a\"},"
                       " {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"b\", \"params\": {\"location\": [3, 0, 0]}},"
                       " {\"operation\": \"bpy.ops.mesh.no_such_operator\"},"
                       " {\"operation\": \"bpy.ops.mesh.primitive_cube_add\", \"name\": \"never\"}]";
    json_t *events, *result = s_run_sealed (plan, false, &events);
    assert_string_equal (json_string_value (json_object_get (result, "status")), "failed");
    assert_int_equal (json_integer_value (json_object_get (result, "failed_step")), 3);
    assert_int_equal (json_integer_value (json_object_get (result, "steps_done")), 2);
    json_t *rb = json_object_get (result, "rollback");
    assert_string_equal (json_string_value (json_object_get (rb, "status")), "rolled back");
    assert_int_equal (json_array_size (json_object_get (rb, "removed")), 2);
    bool saw_failed = false, saw_rollback = false;
    size_t i;
    json_t *e;
    json_array_foreach (events, i, e) {
        const char *status = json_string_value (json_object_get (e, "status"));
        const char *event = json_string_value (json_object_get (e, "event"));
        if (!strcmp (event, "step") && !strcmp (status, "failed")) {
            saw_failed = true;
            assert_int_equal (json_integer_value (json_object_get (e, "step")), 3);
            assert_non_null (json_string_value (json_object_get (e, "error")));
        }
        if (!strcmp (event, "rollback")) saw_rollback = true;
        assert_false (!strcmp (event, "step") && json_integer_value (json_object_get (e, "step")) == 4);
    }
    assert_true (saw_failed && saw_rollback);
    json_decref (events);
    json_decref (result);
    json_t *objects = s_scene_objects ();
    assert_int_equal (json_array_size (objects), 0);
    json_decref (objects);

    /* keep_partial: the two cubes stay */
    result = s_run_sealed (plan, true, &events);
    assert_string_equal (json_string_value (json_object_get (result, "status")), "failed");
    assert_null (json_object_get (result, "rollback"));
    json_decref (events);
    json_decref (result);
    objects = s_scene_objects ();
    assert_int_equal (json_array_size (objects), 2);
    json_decref (objects);
}

static void test_cancel_stops_and_rolls_back (void **state)
{
    int code;
    json_decref (e2e_blendmq_json (s_dir, "scene reset", &code));
    char path[512], err[256];
    snprintf (path, sizeof path, "%s/blendmq.yaml", s_dir);
    bmq_config_t *cfg = bmq_config_load (path, err, sizeof err);
    bmq_seal_key_t key;
    assert_int_equal (bmq_seal_key_load (bmq_config_str (cfg, "security.verdict_key_file"), &key, err, sizeof err), 0);
    json_t *plan = json_array ();
    for (int i = 0; i < 120; i++)
        json_array_append_new (plan, json_pack ("{s:s, s:{s:i, s:i, s:[f,f,f]}}", "operation", "bpy.ops.mesh.primitive_uv_sphere_add",
                                                "params", "segments", 128, "ring_count", 64, "location", (double) i, 0.0, 0.0));
    char hash[BMQ_HEX_DIGEST], seal[BMQ_SEAL_MAX];
    bmq_plan_hash (plan, hash);
    assert_int_equal (bmq_seal_make (&key, hash, *bmq_config_str (cfg, "executor.name") ? bmq_config_str (cfg, "executor.name") : "local",
                                     300000, seal), 0);
    assert_int_equal (bmq_bus_security_init (cfg, "cli", err, sizeof err), 0);   /* CURVE: the cli key of the run dir */
    zsock_t *sock = bmq_bus_connect_as (ZMQ_DEALER, bmq_config_str (cfg, "executor.endpoint"), "executor", "gateway");   /* as the gateway */
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_EXECUTE_REQUEST, NULL,
        json_pack ("{s:s, s:o, s:s, s:s}", "plan_id", "p-cancel", "plan", plan, "plan_hash", hash, "seal", seal));
    bmq_roles_set_on_behalf_of (req->body, "cli", "admin");   /* the gateway forwards for a client */
    bmq_bus_send_and_destroy (sock, NULL, &req);
    zsock_set_rcvtimeo (sock, 30000);
    json_t *result = NULL;
    bool cancelled = false;
    int steps_seen = 0;
    bmq_envelope_t *env;
    while (!result && (env = bmq_bus_recv (sock, NULL))) {
        if (env->type == BMQ_MSG_PROGRESS && !strcmp (bmq_body_str (env, "event"), "step")) {
            steps_seen++;
            if (!cancelled && steps_seen == 3) {
                bmq_envelope_t *stop = bmq_envelope_new (BMQ_MSG_CANCEL_REQUEST, NULL, json_pack ("{s:s}", "plan_id", "p-cancel"));
                bmq_roles_set_on_behalf_of (stop->body, "cli", "admin");   /* the gateway forwards for a client */
                bmq_bus_send_and_destroy (sock, NULL, &stop);
                cancelled = true;
            }
        }
        else if (env->type == BMQ_MSG_EXECUTE_RESULT) result = json_incref (env->body);
        bmq_envelope_destroy (&env);
    }
    zsock_destroy (&sock);
    bmq_config_destroy (&cfg);
    assert_non_null (result);
    assert_string_equal (json_string_value (json_object_get (result, "status")), "cancelled");
    json_int_t done = json_integer_value (json_object_get (result, "steps_done"));
    assert_true (done >= 3 && done < 120);
    json_t *rb = json_object_get (result, "rollback");
    assert_int_equal (json_array_size (json_object_get (rb, "removed")), done);
    json_decref (result);
    json_t *objects = s_scene_objects ();
    assert_int_equal (json_array_size (objects), 0);
    json_decref (objects);
}

static void s_blender_back_checked (int killed_pid);
static void s_start_blender_here (void);
static void s_after_blender_restart (void);

static void test_blender_killed_mid_plan (void **state)
{
    /* a plan long enough to be killed in the middle of */
    json_t *plan = json_array ();
    for (int i = 0; i < 150; i++)
        json_array_append_new (plan, json_pack ("{s:s, s:{s:i, s:i, s:[f,f,f]}}", "operation", "bpy.ops.mesh.primitive_uv_sphere_add",
                                                "params", "segments", 128, "ring_count", 64, "location", (double) i, 0.0, 0.0));
    char path[512];
    snprintf (path, sizeof path, "%s/long.json", s_dir);
    json_dump_file (plan, path, 0);
    json_decref (plan);
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' --json plan run '%s'", e2e_bin ("blendmq"), s_dir, path);
    FILE *f = popen (cmd, "r");
    assert_non_null (f);
    char line[65536];
    bool killed = false;
    int killed_pid = -1;
    const char *final_status = NULL;
    json_t *interrupted_event = NULL, *result = NULL;
    while (fgets (line, sizeof line, f)) {
        json_t *l = json_loads (line, 0, NULL);
        if (!l) continue;
        json_t *b = json_object_get (l, "body");
        const char *type = json_string_value (json_object_get (l, "type"));
        if (!killed && !strcmp (type, "progress") && json_integer_value (json_object_get (b, "step")) >= 3) {
            killed_pid = e2e_pid (s_dir, "blender");
            kill (killed_pid, SIGKILL);
            killed = true;
        }
        const char *status = json_string_value (json_object_get (b, "status"));
        if (!strcmp (type, "progress") && status && !strcmp (status, "interrupted") && !interrupted_event)
            interrupted_event = json_incref (b);
        if (!strcmp (type, "execute.result")) result = json_incref (b);
        json_decref (l);
    }
    int st = pclose (f);
    assert_true (killed);
    assert_non_null (result);
    final_status = json_string_value (json_object_get (result, "status"));
    assert_string_equal (final_status, "interrupted");
    assert_true (json_integer_value (json_object_get (result, "steps_done")) < 150);
    assert_non_null (interrupted_event);
    assert_int_equal (WEXITSTATUS (st), 1);
    json_decref (result);
    json_decref (interrupted_event);

    /* services stay up; the executor reports Blender gone (within a heartbeat or two) */
    int code;
    json_t *lines = NULL;
    bool reported = false;
    for (int tries = 0; tries < 20 && !reported; tries++) {
        json_decref (lines);
        lines = e2e_blendmq_json (s_dir, "status", &code);
        json_t *services = json_object_get (json_array_get (lines, 0), "services");
        assert_non_null (services);
        size_t i;
        json_t *s;
        json_array_foreach (services, i, s) {
            assert_true (json_is_true (json_object_get (s, "alive")));
            if (!strcmp (json_string_value (json_object_get (s, "name")), "executor")
                && strstr (json_string_value (json_object_get (s, "state")), "disconnected"))
                reported = true;
        }
        if (!reported) usleep (250000);
    }
    assert_true (reported);
    json_decref (lines);

    /* Blender comes back on the same port: the next plan runs. `up`'s
     * supervisor starts it again (cli_supervise.c); without one, start it here */
    int back = -1;
    for (int tries = 0; tries < 100 && !(back > 0 && back != killed_pid && s_alive (back)); tries++) {
        usleep (100000);
        back = e2e_pid (s_dir, "blender");
    }
    if (back > 0 && back != killed_pid && s_alive (back)) s_blender_back_checked (killed_pid);
    else s_start_blender_here ();
    s_after_blender_restart ();
}

/* The supervisor's new Blender serves on the killed one's port. */
static void s_blender_back_checked (int killed_pid)
{
    char path[512];
    snprintf (path, sizeof path, "%s/supervisor.json", s_dir);
    json_t *doc = json_load_file (path, 0, NULL);
    size_t i;
    json_t *c;
    bool found = false;
    json_array_foreach (json_object_get (doc, "children"), i, c) {
        if (strcmp (json_string_value (json_object_get (c, "name")), "blender")) continue;
        found = true;
        assert_int_equal (json_integer_value (json_object_get (c, "old_pid")), killed_pid);
        snprintf (path, sizeof path, "%s/blendmq.yaml", s_dir);
        bmq_config_t *cfg = bmq_config_load (path, NULL, 0);
        if (json_object_get (c, "socket"))      /* `up`'s Blender serves a unix socket (issue 24) */
            assert_string_equal (json_string_value (json_object_get (c, "socket")), bmq_config_str (cfg, "blender.socket"));
        else assert_int_equal (json_integer_value (json_object_get (c, "port")), bmq_config_int (cfg, "blender.port"));
        bmq_config_destroy (&cfg);
    }
    assert_true (found);
    json_decref (doc);
}

static void s_start_blender_here (void)
{
    char path[512];
    snprintf (path, sizeof path, "%s/blendmq.yaml", s_dir);
    bmq_config_t *cfg = bmq_config_load (path, NULL, 0);
    char port[16];
    snprintf (port, sizeof port, "%lld", (long long) bmq_config_int (cfg, "blender.port"));
    char addon[512], port_file[512], log[512];
    snprintf (addon, sizeof addon, "%s/services/executor/addon/blendmq_addon.py", BMQ_SOURCE_DIR);
    snprintf (port_file, sizeof port_file, "%s/blender.port2", s_dir);
    snprintf (log, sizeof log, "%s/logs/blender2.log", s_dir);
    pid_t pid = fork ();
    if (pid == 0) {
        setsid ();
        freopen (log, "w", stdout);
        freopen (log, "a", stderr);
        execlp ("blender", "blender", "-b", "--factory-startup", "--python", addon, "--", "--host", "127.0.0.1",
                "--port", port, "--port-file", port_file, "--token-file", bmq_config_str (cfg, "blender.token_file"),
                "--reset-scene", (char *) NULL);
        _exit (127);
    }
    char pidfile[512];
    snprintf (pidfile, sizeof pidfile, "%s/pids/blender.pid", s_dir);
    FILE *pf = fopen (pidfile, "w");
    fprintf (pf, "%d\n", (int) pid);
    fclose (pf);
    bmq_config_destroy (&cfg);
}

static void s_after_blender_restart (void)
{
    int code;
    json_t *lines;
    assert_true (e2e_wait_healthy (s_dir, true, 60000));
    const char *small = s_write_plan ("small.json",
        "[{\"operation\": \"bpy.ops.mesh.primitive_cone_add\", \"name\": \"after_restart\", \"params\": {\"location\": [1, 2, 3]}}]");
    char args[1024];
    snprintf (args, sizeof args, "plan run '%s'", small);
    lines = e2e_blendmq_json (s_dir, args, &code);
    assert_int_equal (code, 0);
    assert_string_equal (json_string_value (json_object_get (s_find (lines, "execute.result"), "status")), "done");
    json_decref (lines);
    json_t *objects = s_scene_objects ();
    assert_int_equal (json_array_size (objects), 1);
    assert_string_equal (json_string_value (json_object_get (json_array_get (objects, 0), "name")), "after_restart");
    json_decref (objects);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_snowman),
        cmocka_unit_test (test_outside_palette_rejected),
        cmocka_unit_test (test_plans_act_on_existing_objects),
        cmocka_unit_test (test_unsealed_plan_refused),
        cmocka_unit_test (test_failed_step_rolls_back),
        cmocka_unit_test (test_cancel_stops_and_rolls_back),
        cmocka_unit_test (test_blender_killed_mid_plan),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
