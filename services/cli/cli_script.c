/* cli_script — `blendmq script validate FILE | sandbox FILE | apply ID --confirm --sha256 HEX` (issue 8).
 *
 * validate: the validator's verdict (script.request with validate_only); exit 0 valid, 1 rejected.
 * sandbox:  validate, then run in the sandbox on a copy of the live scene; prints the
 *           script.reply (script_id — the executor's, fresh for every submission — status,
 *           verdict, sandbox with its script_sha256); exit 0 when the script may be applied
 *           live (status "sandboxed"), 1 rejected statically or by the sandbox.
 * apply:    script.confirm {script_id, sha256}: live only with --confirm and --sha256 (the
 *           sha256 of the script the person reviewed: only exactly that script runs), only the
 *           sandboxed script, only while the live scene is the one it was tested on; exit 0
 *           applied, 1 refused or failed, 130 cancelled (Ctrl-C, or `blendmq cancel ID`: the
 *           running script is interrupted in Blender and rolled back; issue 29). Without --sha256 nothing is confirmed: the entry is
 *           looked up (script.list {script_id}) and its id, sha256, status and line count are
 *           printed with how to apply exactly it (exit 1; 2 when the id is unknown).
 * Exit 2: usage, connection or protocol errors. */
#include "bus.h"
#include "cli.h"
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* One question to the gateway, one answer (cli_client.c). */
static bmq_envelope_t *s_ask (bmq_config_t *cfg, bmq_envelope_t *req)
{
    return bmq_cli_ask (cfg, req, BMQ_MSG_SCRIPT_REPLY);
}

static char *s_read (const char *path, size_t *len)
{
    FILE *f = !strcmp (path, "-") ? stdin : fopen (path, "rb");
    if (!f) return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc (cap + 1);
    for (size_t got; buf && (got = fread (buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            if (cap >= (4u << 20)) { free (buf); buf = NULL; break; }      /* over the bus body limit anyway */
            char *bigger = realloc (buf, cap * 2 + 1);
            if (!bigger) { free (buf); buf = NULL; break; }
            buf = bigger;
            cap *= 2;
        }
    }
    if (f != stdin) fclose (f);
    if (buf) buf[n] = 0;
    *len = n;
    return buf;
}

static void s_print (const json_t *value, bool json)
{
    char *text = json_dumps (value, (json ? JSON_COMPACT : JSON_INDENT (2)) | JSON_REAL_PRECISION (10));
    if (text) printf ("%s\n", text);
    free (text);
}

/* exit code for a script.reply status */
static int s_code (const char *status)
{
    static const char *ok[] = { "validated", "sandboxed", "applied", NULL };
    for (int i = 0; ok[i]; i++)
        if (!strcmp (status, ok[i])) return 0;
    return 1;
}

static int s_finish (bmq_envelope_t *answer, bool json, bool verdict_only)
{
    if (!answer) return 2;
    int code;
    if (answer->type == BMQ_MSG_SCRIPT_REPLY) {
        const char *status = bmq_body_str (answer, "status");
        json_t *verdict = json_object_get (answer->body, "verdict");
        /* for a person, the sandbox's preview PNG is a line, not 60 KB of base64 (--json keeps it) */
        json_t *preview = json_object_get (json_object_get (answer->body, "sandbox"), "preview");
        const char *png = json_string_value (json_object_get (preview, "png_base64"));
        if (!json && png) {
            char note[96];
            snprintf (note, sizeof note, "<PNG, %zu bytes; --json has it in base64>", strlen (png) / 4 * 3);
            json_object_set_new (preview, "png_base64", json_string (note));
        }
        s_print (verdict_only && verdict ? verdict : answer->body, json);
        code = s_code (status);
        if (code && !json && bmq_body_str (answer, "message"))
            fprintf (stderr, "blendmq: %s: %s\n", status, bmq_body_str (answer, "message"));
    }
    else {
        if (json) s_print (answer->body, true);
        else bmq_cli_say_error (answer, "");
        code = 2;
    }
    bmq_envelope_destroy (&answer);
    return code;
}

static const char *s_state (const json_t *e)
{
    return json_is_true (json_object_get (e, "applied")) ? "applied" : json_is_true (json_object_get (e, "ok")) ? "pending" : "refused";
}

/* `script apply ID` without --sha256: what would be confirmed, and how to confirm exactly it. */
static int s_show_entry (const bmq_cli_opts_t *opts, const char *id)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    bmq_envelope_t *answer = bmq_cli_ask (cfg, bmq_envelope_new (BMQ_MSG_SCRIPT_LIST, NULL, json_pack ("{s:s}", "script_id", id)),
                                          BMQ_MSG_SCRIPT_LISTING);
    bmq_config_destroy (&cfg);
    if (!answer) return 2;
    int code = 1;
    json_t *e = NULL;
    size_t i;
    json_t *x;
    json_array_foreach (json_object_get (answer->body, "scripts"), i, x)         /* an older executor lists them all */
        if (!e && !strcmp (json_string_value (json_object_get (x, "script_id")) ?: "", id)) e = x;
    if (answer->type == BMQ_MSG_ERROR) {
        bmq_cli_say_error (answer, "");
        code = 2;
    }
    else if (!e) {
        fprintf (stderr, "blendmq: no sandboxed script %s is known (see `blendmq script list`); nothing was applied\n", id);
        code = 2;
    }
    else {
        const char *sha = json_string_value (json_object_get (e, "sha256")) ?: "";
        if (opts->json) {
            json_t *out = json_deep_copy (e);
            json_object_set_new (out, "status", json_string (s_state (e)));
            s_print (out, true);
            json_decref (out);
        }
        else {
            printf ("script_id  %s\nsha256     %s\nstatus     %s\nlines      %lld\n", id, sha, s_state (e),
                    (long long) json_integer_value (json_object_get (e, "lines")));
        }
        fprintf (stderr, "blendmq: nothing was applied: add --sha256 %s to apply exactly this script "
                         "(blendmq script apply %s --confirm --sha256 %s)\n", sha, id, sha);
    }
    bmq_envelope_destroy (&answer);
    return code;
}

int bmq_cli_script (const bmq_cli_opts_t *opts, const char *action, const char *arg)
{
    const char *sha256 = opts->sha256;
    bool apply = !strcmp (action, "apply");
    if (!apply && sha256) {
        fprintf (stderr, "blendmq: --sha256 goes with script apply ID --confirm\n");
        return 2;
    }
    if (apply && !sha256) return s_show_entry (opts, arg);
    if (apply && !opts->confirm) {
        fprintf (stderr, "blendmq: script apply changes the live scene: add --confirm to apply script %s "
                         "(exactly the script with sha256 %s, on the scene it was tested on)\n", arg, sha256);
        return 1;
    }
    json_t *body;
    if (apply) body = json_pack ("{s:s, s:s, s:s}", "script_id", arg, "sha256", sha256, "channel", "cli");     /* audited */
    else {
        size_t len;
        char *text = s_read (arg, &len);
        if (!text) { fprintf (stderr, "blendmq: cannot read %s (or it is over 4 MiB)\n", arg); return 2; }
        body = json_pack ("{s:s%, s:s}", "script", text, len, "mode", "format-to-bpy");
        free (text);
        if (!body) { fprintf (stderr, "blendmq: %s is not UTF-8 text\n", arg); return 2; }
        if (!strcmp (action, "validate")) json_object_set_new (body, "validate_only", json_true ());
    }
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) { json_decref (body); return 2; }
    bmq_envelope_t *req = bmq_envelope_new (apply ? BMQ_MSG_SCRIPT_CONFIRM : BMQ_MSG_SCRIPT_REQUEST, NULL, body);
    int rc = 0;
    bmq_envelope_t *answer = apply ? bmq_cli_ask_cancellable (cfg, req, BMQ_MSG_SCRIPT_REPLY, "script", &rc) : s_ask (cfg, req);
    /* Ctrl-C (issue 29): the script was interrupted in Blender and rolled back, as the answer says */
    bool cancelled = apply && answer && answer->type == BMQ_MSG_SCRIPT_REPLY && !strcmp (bmq_body_str (answer, "status") ?: "", "cancelled");
    int code = !answer && rc == 130 ? 130 : s_finish (answer, opts->json, !strcmp (action, "validate"));
    if (cancelled && rc == 130) {      /* stopped by this Ctrl-C (a cancel from elsewhere: exit 1, as a plan run) */
        fprintf (stderr, "blendmq: script %s cancelled\n", arg);
        code = 130;
    }
    bmq_config_destroy (&cfg);
    return code;
}

/* `script list`: what the sandbox has seen, newest first: ID, state, lines, hash. */
int bmq_cli_script_list (const bmq_cli_opts_t *opts)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    bmq_envelope_t *answer = bmq_cli_ask (cfg, bmq_envelope_new (BMQ_MSG_SCRIPT_LIST, NULL, NULL), BMQ_MSG_SCRIPT_LISTING);
    bmq_config_destroy (&cfg);
    if (!answer) return 2;
    int code = 0;
    if (answer->type == BMQ_MSG_ERROR) {
        bmq_cli_say_error (answer, "");
        code = 1;
    }
    else if (opts->json) {
        char *text = json_dumps (answer->body, JSON_COMPACT);
        printf ("%s\n", text);
        free (text);
    }
    else {
        size_t i;
        json_t *e;
        json_array_foreach (json_object_get (answer->body, "scripts"), i, e)
            printf ("%s  %-10s  %4lld lines  %s\n", json_string_value (json_object_get (e, "script_id")), s_state (e),
                    (long long) json_integer_value (json_object_get (e, "lines")), json_string_value (json_object_get (e, "sha256")));
    }
    bmq_envelope_destroy (&answer);
    return code;
}
