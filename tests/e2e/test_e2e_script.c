/* BPY scripts end to end (issue 8) on a real stack (`up --ipc`, a headless
 * Blender, the bubblewrap sandbox): seed acceptance A (a cube script is
 * validated, sandboxed on a copy of the live scene, applied after
 * --confirm --sha256, and the cube is live), B (import os: rejected, nothing
 * runs), C (an operator Blender lacks: rejected); a script that raises in
 * Blender (the sandbox reports the traceback, apply is refused, nothing
 * reaches the live scene); apply without --confirm, without --sha256 (shows
 * the entry, applies nothing), with a wrong sha256, of an unknown id, twice,
 * or after the scene changed: refused; a confirmation without sha256 (on the
 * bus): refused; script ids are the executor's (fresh, 32 hex chars: a
 * resubmitted script gets a new id, the first id still confirms the first,
 * a client's script_id is ignored); GET /api/scripts/ID shows the exact text;
 * and the audit story of a script: request and verdict under the request's
 * cid, then sandbox, confirm, live under the script id, all with the
 * script's sha256. */
#include "e2e_util.h"
#include "bus.h"
#include "config.h"

#include <setjmp.h>
#include <sodium.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_dir[256];

static int s_setup (void **state)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-script-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' up --ipc --validators 1 >&2", e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static int s_teardown (void **state)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2 && rm -rf '%s'", e2e_bin ("blendmq"), s_dir, s_dir);
    int rc = system (cmd);
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    return rc == 0 ? 0 : -1;
}

/* `blendmq --json script ACTION ARG [--confirm]` on a script given as text (written to a file). */
static json_t *s_script (const char *action, const char *text_or_id, bool confirm, int *code)
{
    char args[1400], path[400];
    const char *arg = text_or_id;
    if (strcmp (action, "apply")) {
        snprintf (path, sizeof path, "%s/script-%d.py", s_dir, rand ());
        FILE *f = fopen (path, "w");
        assert_non_null (f);
        fputs (text_or_id, f);
        fclose (f);
        arg = path;
    }
    snprintf (args, sizeof args, "script %s '%s'%s", action, arg, confirm ? " --confirm" : "");
    json_t *lines = e2e_blendmq_json (s_dir, args, code);
    json_t *first = json_incref (json_array_get (lines, 0));
    json_decref (lines);
    return first ? first : json_object ();
}

/* `blendmq --json script apply ID --confirm --sha256 SHA`: the script.reply. */
static json_t *s_apply (const char *id, const char *sha, int *code)
{
    char args[400];
    snprintf (args, sizeof args, "script apply '%s' --confirm --sha256 '%s'", id, sha);
    json_t *lines = e2e_blendmq_json (s_dir, args, code);
    json_t *first = json_incref (json_array_get (lines, 0));
    json_decref (lines);
    return first ? first : json_object ();
}

/* A script id as the executor makes them: 32 lowercase hex chars. */
static bool s_is_id (const char *id)
{
    if (!id || strlen (id) != 32) return false;
    for (const char *c = id; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))) return false;
    return true;
}

/* Ask the gateway directly on the bus (what a client other than the CLI may send); the first
 * answer of type `want` (or an error), waiting up to 180 s. */
static bmq_envelope_t *s_bus_ask (bmq_msg_type_t type, const char *cid, json_t *body, bmq_msg_type_t want)
{
    char path[512], err[256];
    snprintf (path, sizeof path, "%s/blendmq.yaml", s_dir);
    bmq_config_t *cfg = bmq_config_load (path, err, sizeof err);
    assert_non_null (cfg);
    assert_int_equal (bmq_bus_security_init (cfg, "cli", err, sizeof err), 0);   /* CURVE: the cli key of the run dir */
    zsock_t *sock = bmq_bus_connect (ZMQ_DEALER, bmq_config_str (cfg, "gateway.endpoint"), "gateway");
    assert_non_null (sock);
    bmq_envelope_t *req = bmq_envelope_new (type, cid, body);
    assert_int_equal (bmq_bus_send_and_destroy (sock, NULL, &req), 0);
    zsock_set_rcvtimeo (sock, 1000);
    bmq_envelope_t *reply = NULL;
    for (int i = 0; i < 180 && !reply; i++) {
        bmq_envelope_t *env;
        while ((env = bmq_bus_recv (sock, NULL))) {
            if (env->type == want || env->type == BMQ_MSG_ERROR) { reply = env; break; }
            bmq_envelope_destroy (&env);
        }
    }
    zsock_destroy (&sock);
    bmq_config_destroy (&cfg);
    assert_non_null (reply);
    return reply;
}

/* The gateway's HTTP base URL (from `blendmq status`). */
static char *s_http_base (void)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "status", &code);
    const char *base = json_string_value (json_object_get (json_object_get (json_array_get (lines, 0), "endpoints"), "http"));
    assert_non_null (base);
    char *out = strdup (base);
    json_decref (lines);
    return out;
}

/* curl METHOD ROUTE [BODY]: the parsed body, HTTP status in *status. */
static json_t *s_http (const char *method, const char *route, const char *body, long *status)
{
    char *base = s_http_base ();
    char cmd[2048], file[400];
    snprintf (file, sizeof file, "%s/http-%d.json", s_dir, rand ());
    snprintf (cmd, sizeof cmd, "curl -s -o '%s' -w '%%{http_code}' -X %s -H 'Content-Type: application/json' "
              "-H 'Authorization: Bearer %s' %s%s%s '%s%s'", file, method, e2e_token (s_dir, "cli"),
              body ? "--data '" : "", body ? body : "", body ? "'" : "", base, route);
    free (base);
    int code;
    char *out = e2e_run (cmd, &code);
    assert_int_equal (code, 0);
    *status = strtol (out, NULL, 10);
    free (out);
    json_t *j = json_load_file (file, 0, NULL);
    unlink (file);
    return j ? j : json_object ();
}

static const char *s_str (const json_t *o, const char *key) { return json_string_value (json_object_get (o, key)); }

/* Names of the live scene's objects. */
static json_t *s_scene_names (void)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene info", &code);
    assert_int_equal (code, 0);
    json_t *names = json_array ();
    size_t i;
    json_t *o;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "objects"), i, o)
        json_array_append (names, json_object_get (o, "name"));
    json_decref (lines);
    return names;
}

static bool s_has (const json_t *names, const char *name)
{
    size_t i;
    json_t *n;
    json_array_foreach (names, i, n)
        if (!strcmp (json_string_value (n), name)) return true;
    return false;
}

/* Sandbox `text`; expect `status` (and exit code); returns the reply. */
static json_t *s_sandbox (const char *text, const char *status, int expect_code)
{
    int code;
    json_t *r = s_script ("sandbox", text, false, &code);
    if (code != expect_code || !s_str (r, "status") || strcmp (s_str (r, "status"), status)) {
        char *dump = json_dumps (r, JSON_INDENT (1));
        fprintf (stderr, "sandbox reply (exit %d): %s\n", code, dump);
        free (dump);
    }
    assert_int_equal (code, expect_code);
    assert_string_equal (s_str (r, "status"), status);
    return r;
}

/* `blendmq --json script list`: the entry for `id`, or NULL. */
static json_t *s_list_entry (const char *id)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "script list", &code);
    assert_int_equal (code, 0);
    json_t *found = NULL;
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "scripts"), i, e)
        if (!strcmp (json_string_value (json_object_get (e, "script_id")), id)) found = json_incref (e);
    json_decref (lines);
    return found;
}

/* `flip` the last hex digit of a sha256: a different script's. */
static void s_other_sha (const char *sha, char out[65])
{
    snprintf (out, 65, "%s", sha);
    out[63] = out[63] == '0' ? '1' : '0';
}

/* The audit records of one cid (`audit show CID`). */
static json_t *s_audit (const char *cid)
{
    char args[200];
    int code;
    snprintf (args, sizeof args, "audit show %s", cid);
    return e2e_blendmq_json (s_dir, args, &code);
}

static void test_seed_a_cube_sandboxed_then_applied (void **state)
{
    const char *src = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=2)\nbpy.context.active_object.name = 'seed_a_cube'\n";
    int code;
    json_t *v = s_script ("validate", src, false, &code);
    assert_int_equal (code, 0);
    assert_true (json_is_true (json_object_get (v, "is_valid")));
    const char *sha = s_str (v, "sha256");
    assert_non_null (sha);

    json_t *r = s_sandbox (src, "sandboxed", 0);
    const char *id = s_str (r, "script_id");
    assert_true (s_is_id (id));                             /* the executor's: 128 random bits */
    json_t *sb = json_object_get (r, "sandbox");
    assert_true (json_is_true (json_object_get (sb, "ok")));
    assert_string_equal (s_str (sb, "script_sha256"), sha);
    json_t *added = json_object_get (json_object_get (sb, "diff"), "added");
    assert_int_equal (json_array_size (added), 1);
    assert_string_equal (s_str (json_array_get (added, 0), "name"), "seed_a_cube");
    /* the preview of the sandbox's scene after the run: a PNG, base64 in the reply (what the web page shows) */
    json_t *preview = json_object_get (sb, "preview");
    const char *b64 = s_str (preview, "png_base64");
    if (!b64) fprintf (stderr, "no preview: %s\n", s_str (sb, "preview_error") ?: "(no preview_error)");
    assert_non_null (b64);
    assert_int_equal (json_integer_value (json_object_get (preview, "width")), 320);
    unsigned char head[16];
    size_t head_len = 0;
    const char *end;
    sodium_base642bin (head, sizeof head, b64, 20, NULL, &head_len, &end, sodium_base64_VARIANT_ORIGINAL);
    assert_true (head_len >= 8 && memcmp (head, "\x89PNG\r\n\x1a\n", 8) == 0);
    json_t *names = s_scene_names ();
    assert_false (s_has (names, "seed_a_cube"));            /* the sandbox ran on a copy */
    json_decref (names);

    /* without --sha256 nothing is confirmed: the entry (id, sha256, status, lines) and how to apply exactly it */
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' script apply '%s' --confirm 2>&1", e2e_bin ("blendmq"), s_dir, id);
    char *out = e2e_run (cmd, &code);
    assert_int_equal (code, 1);
    assert_non_null (strstr (out, sha));
    assert_non_null (strstr (out, "--sha256"));
    assert_non_null (strstr (out, "pending"));
    assert_non_null (strstr (out, "3"));                    /* lines */
    free (out);
    /* no live run without --confirm */
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' script apply '%s' --sha256 '%s' 2>&1", e2e_bin ("blendmq"), s_dir, id, sha);
    out = e2e_run (cmd, &code);
    assert_int_equal (code, 1);
    assert_non_null (strstr (out, "--confirm"));
    free (out);
    names = s_scene_names ();
    assert_false (s_has (names, "seed_a_cube"));
    json_decref (names);

    /* the sandboxed script is listed as pending, with its sha256 (what the panel shows for Apply to live) */
    json_t *listing = s_list_entry (id);
    assert_non_null (listing);
    assert_true (json_is_true (json_object_get (listing, "ok")));
    assert_false (json_is_true (json_object_get (listing, "applied")));
    assert_string_equal (s_str (listing, "sha256"), sha);
    json_decref (listing);

    /* GET /api/scripts/ID: the exact text to review; a confirmation without a sha256 is a 400 */
    long status;
    char route[200];
    snprintf (route, sizeof route, "/api/scripts/%s", id);
    json_t *entry = s_http ("GET", route, NULL, &status);
    assert_int_equal (status, 200);
    assert_string_equal (s_str (entry, "script"), src);
    assert_string_equal (s_str (entry, "sha256"), sha);
    json_decref (entry);
    snprintf (route, sizeof route, "/api/scripts/%s/confirm", id);
    json_decref (s_http ("POST", route, "{}", &status));
    assert_int_equal (status, 400);

    /* a wrong sha256: refused, nothing applied, the entry still pending */
    char wrong[65];
    s_other_sha (sha, wrong);
    json_t *w = s_apply (id, wrong, &code);
    assert_int_equal (code, 1);
    assert_string_equal (s_str (w, "status"), "refused");
    assert_non_null (strstr (s_str (w, "message"), "what you reviewed is not what would run"));
    json_decref (w);
    char body[200];                                         /* the same through HTTP: 409 */
    snprintf (body, sizeof body, "{\"sha256\": \"%s\"}", wrong);
    w = s_http ("POST", route, body, &status);
    assert_int_equal (status, 409);
    assert_string_equal (s_str (w, "status"), "refused");
    json_decref (w);
    names = s_scene_names ();
    assert_false (s_has (names, "seed_a_cube"));
    json_decref (names);
    listing = s_list_entry (id);
    assert_false (json_is_true (json_object_get (listing, "applied")));
    json_decref (listing);

    json_t *a = s_apply (id, sha, &code);
    assert_int_equal (code, 0);
    assert_string_equal (s_str (a, "status"), "applied");
    listing = s_list_entry (id);
    assert_true (json_is_true (json_object_get (listing, "applied")));
    json_decref (listing);
    names = s_scene_names ();
    assert_true (s_has (names, "seed_a_cube"));              /* live */
    json_decref (names);

    /* a second confirmation is refused */
    json_t *again = s_apply (id, sha, &code);
    assert_int_equal (code, 1);
    assert_string_equal (s_str (again, "status"), "refused");

    /* the story in the audit trail: under the script id, sandbox → confirm (the wrong sha256 refused,
     * then confirmed) → live; the sandbox record names the request's cid, under which the validator
     * recorded request → verdict; one script hash throughout */
    const char *want[] = { "script.sandbox", "script.confirm", "script.live" };
    bool seen[3] = { false }, refused_wrong = false;
    char request_cid[128] = "";
    for (int tries = 0; tries < 50; tries++) {
        json_t *recs = s_audit (id);
        size_t i;
        json_t *rec;
        int next = 0;
        memset (seen, 0, sizeof seen);
        json_array_foreach (recs, i, rec) {
            const char *kind = s_str (rec, "kind");
            json_t *data = json_object_get (rec, "data");
            if (kind && !strcmp (kind, "script.confirm") && s_str (data, "confirmed_sha256")
                && !strcmp (s_str (data, "confirmed_sha256"), wrong) && !strcmp (s_str (data, "status"), "refused"))
                refused_wrong = true;
            if (kind && !strcmp (kind, "script.sandbox") && s_str (data, "request_cid"))
                snprintf (request_cid, sizeof request_cid, "%s", s_str (data, "request_cid"));
            for (int k = 0; k < 3; k++) {
                if (!kind || strcmp (kind, want[k]) || seen[k]) continue;
                assert_string_equal (s_str (data, "script_sha256"), sha);
                assert_string_equal (s_str (data, "script_id"), id);
                if (k == next) next++;              /* in story order */
                seen[k] = true;
            }
        }
        json_decref (recs);
        if (next == 3) break;
        usleep (200 * 1000);
    }
    for (int k = 0; k < 3; k++) {
        if (!seen[k]) fprintf (stderr, "missing audit record %s\n", want[k]);
        assert_true (seen[k]);
    }
    assert_true (refused_wrong);
    assert_true (*request_cid);
    assert_string_not_equal (request_cid, id);
    const char *before[] = { "script.request", "script.verdict" };
    bool seen_before[2] = { false };
    for (int tries = 0; tries < 50 && !(seen_before[0] && seen_before[1]); tries++) {
        json_t *recs = s_audit (request_cid);
        size_t i;
        json_t *rec;
        json_array_foreach (recs, i, rec)
            for (int k = 0; k < 2; k++)
                if (s_str (rec, "kind") && !strcmp (s_str (rec, "kind"), before[k])) {
                    assert_string_equal (s_str (json_object_get (rec, "data"), "script_sha256"), sha);
                    seen_before[k] = true;
                }
        json_decref (recs);
        if (!(seen_before[0] && seen_before[1])) usleep (200 * 1000);
    }
    assert_true (seen_before[0]);
    assert_true (seen_before[1]);
    json_decref (again);
    json_decref (a);
    json_decref (r);
    json_decref (v);
}

/* script.confirm with no sha256 (a client that is not the CLI): refused, audited, nothing applied. */
static void test_confirm_without_sha256_refused (void **state)
{
    json_t *r = s_sandbox ("import bpy\nbpy.ops.mesh.primitive_cube_add()\nbpy.context.active_object.name = 'nosha_cube'\n",
                           "sandboxed", 0);
    const char *id = s_str (r, "script_id");
    bmq_envelope_t *reply = s_bus_ask (BMQ_MSG_SCRIPT_CONFIRM, NULL, json_pack ("{s:s}", "script_id", id), BMQ_MSG_SCRIPT_REPLY);
    assert_int_equal (reply->type, BMQ_MSG_SCRIPT_REPLY);
    assert_string_equal (bmq_body_str (reply, "status"), "refused");
    assert_non_null (strstr (bmq_body_str (reply, "message"), "sha256"));
    bmq_envelope_destroy (&reply);
    json_t *names = s_scene_names ();
    assert_false (s_has (names, "nosha_cube"));
    json_decref (names);
    json_t *listing = s_list_entry (id);
    assert_false (json_is_true (json_object_get (listing, "applied")));
    json_decref (listing);
    bool audited = false;
    for (int tries = 0; tries < 50 && !audited; tries++) {
        json_t *recs = s_audit (id);
        size_t i;
        json_t *rec;
        json_array_foreach (recs, i, rec)
            if (!strcmp (s_str (rec, "kind") ?: "", "script.confirm")
                && !strcmp (s_str (json_object_get (rec, "data"), "status") ?: "", "refused")) audited = true;
        json_decref (recs);
        if (!audited) usleep (200 * 1000);
    }
    assert_true (audited);
    json_decref (r);
}

/* The same script twice: two entries, two ids, neither replaces the other; the first id still
 * confirms the first. */
static void test_resubmitted_script_new_id (void **state)
{
    const char *src = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=0.5)\nbpy.context.active_object.name = 'twice_cube'\n";
    json_t *r1 = s_sandbox (src, "sandboxed", 0);
    json_t *r2 = s_sandbox (src, "sandboxed", 0);
    const char *id1 = s_str (r1, "script_id"), *id2 = s_str (r2, "script_id");
    assert_true (s_is_id (id1));
    assert_true (s_is_id (id2));
    assert_string_not_equal (id1, id2);
    const char *sha = s_str (json_object_get (r1, "sandbox"), "script_sha256");
    assert_string_equal (s_str (json_object_get (r2, "sandbox"), "script_sha256"), sha);
    json_t *e1 = s_list_entry (id1), *e2 = s_list_entry (id2);
    assert_non_null (e1);
    assert_non_null (e2);
    json_decref (e1);
    json_decref (e2);
    int code;
    json_t *a = s_apply (id1, sha, &code);
    assert_int_equal (code, 0);
    assert_string_equal (s_str (a, "status"), "applied");
    assert_string_equal (s_str (a, "script_id"), id1);
    e1 = s_list_entry (id1);
    e2 = s_list_entry (id2);
    assert_true (json_is_true (json_object_get (e1, "applied")));
    assert_non_null (e2);
    assert_false (json_is_true (json_object_get (e2, "applied")));     /* a separate entry, untouched */
    json_decref (e1);
    json_decref (e2);
    json_t *names = s_scene_names ();
    assert_true (s_has (names, "twice_cube"));
    json_decref (names);
    json_decref (a);
    json_decref (r2);
    json_decref (r1);
}

/* A client's script_id (in the body, or as the request's cid) never becomes the id. */
static void test_client_script_id_ignored (void **state)
{
    const char *src = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=0.25)\nbpy.context.active_object.name = 'client_id_cube'\n";
    const char *chosen = "0123456789abcdef0123456789abcdef", *cid = "fedcba9876543210fedcba9876543210";
    bmq_envelope_t *reply = s_bus_ask (BMQ_MSG_SCRIPT_REQUEST, cid,
                                       json_pack ("{s:s, s:s, s:s}", "script", src, "mode", "format-to-bpy", "script_id", chosen),
                                       BMQ_MSG_SCRIPT_REPLY);
    if (strcmp (bmq_body_str (reply, "status") ?: "", "sandboxed")) {
        char *dump = json_dumps (reply->body, JSON_INDENT (1));
        fprintf (stderr, "script.reply: %s\n", dump);
        free (dump);
    }
    assert_string_equal (bmq_body_str (reply, "status"), "sandboxed");
    const char *id = bmq_body_str (reply, "script_id");
    assert_true (s_is_id (id));
    assert_string_not_equal (id, chosen);
    assert_string_not_equal (id, cid);
    json_t *listing = s_list_entry (chosen);
    assert_null (listing);
    listing = s_list_entry (cid);
    assert_null (listing);
    listing = s_list_entry (id);
    assert_non_null (listing);
    const char *sha = s_str (listing, "sha256");
    int code;
    json_t *a = s_apply (chosen, sha, &code);               /* the client's id names nothing */
    assert_int_equal (code, 1);
    assert_string_equal (s_str (a, "status"), "refused");
    json_decref (a);
    json_t *names = s_scene_names ();
    assert_false (s_has (names, "client_id_cube"));
    json_decref (names);
    json_decref (listing);
    bmq_envelope_destroy (&reply);
}

static void test_seed_b_import_os_rejected (void **state)
{
    int code;
    json_t *v = s_script ("validate", "import os\nos.remove('/important')\n", false, &code);
    assert_int_equal (code, 1);
    assert_false (json_is_true (json_object_get (v, "is_valid")));
    assert_true (json_array_size (json_object_get (v, "errors")) >= 1);
    json_t *r = s_sandbox ("import os\nos.remove('/important')\n", "rejected", 1);
    assert_null (json_object_get (r, "sandbox"));           /* nothing ran */
    assert_null (json_object_get (r, "seal"));              /* the client never sees a seal */
    const char *sha = s_str (json_object_get (r, "verdict"), "sha256");
    json_t *a = s_apply (s_str (r, "script_id") ?: "none", sha ? sha : "0000000000000000000000000000000000000000000000000000000000000000",
                         &code);
    assert_int_equal (code, 1);                             /* and it cannot be applied */
    assert_string_equal (s_str (a, "status"), "refused");
    json_decref (a);
    json_decref (r);
    json_decref (v);
}

static void test_seed_c_unknown_operator_rejected (void **state)
{
    int code;
    json_t *v = s_script ("validate", "import bpy\nbpy.ops.mesh.nonexistent()\n", false, &code);
    assert_int_equal (code, 1);
    assert_false (json_is_true (json_object_get (v, "is_valid")));
    json_t *r = s_sandbox ("import bpy\nbpy.ops.nonexistent.op()\n", "rejected", 1);
    assert_null (json_object_get (r, "sandbox"));
    json_decref (r);
    json_decref (v);
}

static void test_script_that_raises (void **state)
{
    const char *src = "import bpy\nbpy.ops.mesh.primitive_cube_add()\nbpy.context.active_object.name = 'raises_cube'\n"
                      "items = [1]\nx = items[5]\n";
    json_t *r = s_sandbox (src, "sandbox_failed", 1);
    json_t *sb = json_object_get (r, "sandbox");
    assert_string_equal (s_str (sb, "verdict"), "error");
    assert_non_null (strstr (s_str (sb, "traceback"), "IndexError"));
    int code;
    json_t *a = s_apply (s_str (r, "script_id"), s_str (sb, "script_sha256"), &code);
    assert_int_equal (code, 1);
    assert_string_equal (s_str (a, "status"), "refused");
    json_t *names = s_scene_names ();
    assert_false (s_has (names, "raises_cube"));            /* nothing reached the live scene */
    json_decref (names);
    json_decref (a);
    json_decref (r);
}

static void test_unknown_id_refused (void **state)
{
    int code;
    json_t *a = s_apply ("0123456789ABCDEF0123456789ABCDEF", "0000000000000000000000000000000000000000000000000000000000000000", &code);
    assert_int_equal (code, 1);
    assert_string_equal (s_str (a, "status"), "refused");
    json_decref (a);
}

static void test_scene_changed_after_sandbox (void **state)
{
    json_t *y = s_sandbox ("import bpy\nbpy.ops.mesh.primitive_uv_sphere_add(radius=0.5)\n"
                           "bpy.context.active_object.name = 'late_sphere'\n", "sandboxed", 0);
    json_t *x = s_sandbox ("import bpy\nbpy.ops.mesh.primitive_cone_add()\nbpy.context.active_object.name = 'changer'\n",
                           "sandboxed", 0);
    int code;
    json_t *ax = s_apply (s_str (x, "script_id"), s_str (json_object_get (x, "sandbox"), "script_sha256"), &code);   /* the scene changes */
    assert_int_equal (code, 0);
    json_t *ay = s_apply (s_str (y, "script_id"), s_str (json_object_get (y, "sandbox"), "script_sha256"), &code);   /* y: tested on the old scene */
    assert_int_equal (code, 1);
    assert_string_equal (s_str (ay, "status"), "refused");
    assert_non_null (strstr (s_str (ay, "message"), "changed"));
    json_t *names = s_scene_names ();
    assert_true (s_has (names, "changer"));
    assert_false (s_has (names, "late_sphere"));
    json_decref (names);
    json_decref (ay);
    json_decref (ax);
    json_decref (x);
    json_decref (y);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_seed_a_cube_sandboxed_then_applied),
        cmocka_unit_test (test_confirm_without_sha256_refused),
        cmocka_unit_test (test_resubmitted_script_new_id),
        cmocka_unit_test (test_client_script_id_ignored),
        cmocka_unit_test (test_seed_b_import_os_rejected),
        cmocka_unit_test (test_seed_c_unknown_operator_rejected),
        cmocka_unit_test (test_script_that_raises),
        cmocka_unit_test (test_unknown_id_refused),
        cmocka_unit_test (test_scene_changed_after_sandbox),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
