/* cli_generate — `blendmq assets generate [PROMPT] [--image FILE]... [--name NAME]
 * [--tier T] [--deadline S] [--json]` (issue 16): a model made from text
 * and/or images by Hyper3D Rodin, then imported like `assets import`.
 *
 * --image (repeatable, 1..5): each file is read (at most 8 MiB), typed by its
 * magic bytes (PNG or JPEG; anything else is refused before anything is
 * sent) and sent base64 as asset.generate's images [{type, data}].
 *
 * asset.generate {source: hyper3d, prompt?, images?, tier?, deadline_s?, target?} goes to
 * the gateway; each progress event of its story (event "generate") prints a
 * line when its percent, status or text changed ("generate  40%  generating
 * 40%"; with --json every answer is a JSON line {type, cid, body}); the
 * asset.generated that ends it prints how it ended. Once done, the job is
 * imported as a one-step plan (asset.import {source: hyper3d, id: job, type:
 * model, format: glb}, named NAME) printed as `plan run` prints it.
 *
 * Ctrl-C (SIGINT) while the model is made sends asset.cancel on the same story
 * and waits for its asset.generated (cancelled); a second Ctrl-C stops waiting.
 * The gateway is pinged meanwhile: silent, or restarted, the command gives up
 * as every conversation does (cli_client.c).
 *
 * Exit codes: 0 made and imported; 1 refused, failed, past its deadline, or the
 * import failed; 2 usage or connection error; 130 cancelled with Ctrl-C. */
#include "bus.h"
#include "cli.h"
#include "peer.h"

#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROMPT 4000             /* asset.generate's prompt bound (proto/messages.def) */
#define MAX_IMAGES 5                /* asset.generate's images bound */
#define MAX_IMAGE  (8u << 20)       /* bytes of one image (the executor's bound) */

/* FILE as {type, data: base64}; NULL with a message on stderr. */
static json_t *s_image (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f) { fprintf (stderr, "blendmq: --image %s: cannot read it\n", path); return NULL; }
    unsigned char *bytes = malloc (MAX_IMAGE + 1);
    size_t len = bytes ? fread (bytes, 1, MAX_IMAGE + 1, f) : 0;
    fclose (f);
    const char *type = len >= 8 && !memcmp (bytes, "\x89PNG\r\n\x1a\n", 8) ? "image/png"
                     : len >= 3 && !memcmp (bytes, "\xff\xd8\xff", 3) ? "image/jpeg" : NULL;
    json_t *image = NULL;
    if (!bytes) fprintf (stderr, "blendmq: --image %s: out of memory\n", path);
    else if (len > MAX_IMAGE) fprintf (stderr, "blendmq: --image %s: larger than 8 MiB (%u bytes)\n", path, MAX_IMAGE);
    else if (!type) fprintf (stderr, "blendmq: --image %s: neither a PNG nor a JPEG (by its first bytes)\n", path);
    else {
        size_t b64len = sodium_base64_ENCODED_LEN (len, sodium_base64_VARIANT_ORIGINAL);
        char *b64 = malloc (b64len);
        if (b64) {
            sodium_bin2base64 (b64, b64len, bytes, len, sodium_base64_VARIANT_ORIGINAL);
            image = json_pack ("{s:s, s:s}", "type", type, "data", b64);
        }
        else fprintf (stderr, "blendmq: --image %s: out of memory\n", path);
        free (b64);
    }
    free (bytes);
    return image;
}

static volatile sig_atomic_t s_interrupts;

static void s_on_sigint (int sig)
{
    (void) sig;
    s_interrupts++;
}

typedef struct {
    bool   json;
    char   job[129];
    char   status[33];
    int    code;                    /* BMQ_CLI_CONTINUE until the story ends */
    long long last_step;
    char   last_line[256];
    bool   cancel_sent;
} s_gen_t;

static void s_json_line (const bmq_envelope_t *env)
{
    json_t *line = json_pack ("{s:s, s:s, s:O}", "type", bmq_msg_type_name (env->type), "cid", env->cid, "body", env->body);
    char *text = json_dumps (line, JSON_COMPACT);
    printf ("%s\n", text ? text : "{}");
    fflush (stdout);
    free (text);
    json_decref (line);
}

static void s_on_progress (s_gen_t *st, const bmq_envelope_t *env)
{
    const char *event = bmq_body_str (env, "event");
    if (!event || strcmp (event, "generate")) return;
    long long total = (long long) bmq_body_int (env, "total", 100), step = (long long) bmq_body_int (env, "step", 0);
    if (total <= 0) total = 100;
    if (step < 0) step = 0;
    if (step > total) step = total;
    const char *status = bmq_body_str (env, "status"), *object = bmq_body_str (env, "object");
    char line[256];
    snprintf (line, sizeof line, "%.32s  %.160s", status ? status : "?", object ? object : "");
    if (step == st->last_step && !strcmp (line, st->last_line)) return;     /* polls that changed nothing */
    st->last_step = step;
    snprintf (st->last_line, sizeof st->last_line, "%s", line);
    if (!st->json) {
        printf ("generate %3lld%%  %.200s\n", step * 100 / total, object && *object ? object : status ? status : "?");
        fflush (stdout);
    }
}

static void s_on_generated (s_gen_t *st, const bmq_envelope_t *env)
{
    const char *status = bmq_body_str (env, "status"), *job = bmq_body_str (env, "id"), *error = bmq_body_str (env, "error");
    double ms = json_number_value (json_object_get (env->body, "duration_ms"));
    snprintf (st->job, sizeof st->job, "%s", job && strlen (job) < sizeof st->job ? job : "");
    snprintf (st->status, sizeof st->status, "%s", status && strlen (status) < sizeof st->status ? status : "failed");
    bool done = !strcmp (st->status, "done") && *st->job;
    if (!st->json) {
        if (done) printf ("generated: job %s in %.1f s\n", st->job, ms / 1000.0);
        else printf ("generate %s%s%s (job %s, after %.1f s): nothing was imported\n", st->status, error ? ": " : "",
                     error ? error : "", *st->job ? st->job : "-", ms / 1000.0);
        fflush (stdout);
    }
    st->code = done ? 0 : !strcmp (st->status, "cancelled") && s_interrupts ? 130 : 1;
}

static void s_on_answer (s_gen_t *st, const bmq_envelope_t *env)
{
    if (st->json && env->type != BMQ_MSG_HEARTBEAT) s_json_line (env);
    if (env->type == BMQ_MSG_PROGRESS) s_on_progress (st, env);
    else if (env->type == BMQ_MSG_ASSET_GENERATED) s_on_generated (st, env);
    else if (env->type == BMQ_MSG_ERROR) {
        if (!st->json) fprintf (stderr, "blendmq: %s: %s\n", bmq_body_str (env, "code") ?: "error", bmq_body_str (env, "message") ?: "?");
        st->code = 1;
    }
}

static int s_handle (const bmq_envelope_t *env, void *state)
{
    s_gen_t *st = state;
    s_on_answer (st, env);
    return st->code;
}

/* Before each wait: the first Ctrl-C sends asset.cancel (the same cid), a
 * second one stops waiting for its answer. */
static int s_tick (bmq_peer_t *gw, const char *cid, void *state)
{
    s_gen_t *st = state;
    if (s_interrupts && !st->cancel_sent) {
        bmq_envelope_t *cancel = bmq_envelope_new (BMQ_MSG_ASSET_CANCEL, cid, NULL);
        bmq_peer_send (gw, cancel);
        bmq_envelope_destroy (&cancel);
        st->cancel_sent = true;
        fprintf (stderr, "blendmq: cancelling the generation (Ctrl-C again: stop waiting)\n");
    }
    else if (s_interrupts > 1) {
        fprintf (stderr, "blendmq: interrupted: not waiting for the cancellation; its story is in `blendmq audit show %s`\n", cid);
        return 130;
    }
    return BMQ_CLI_CONTINUE;
}

/* The generation's story, until asset.generated (or an error); SIGINT cancels it. */
static int s_generate (bmq_config_t *cfg, bmq_envelope_t *req, s_gen_t *st)
{
    st->code = BMQ_CLI_CONTINUE;
    return bmq_cli_converse_ticking (cfg, req, s_handle, s_tick, st);
}

int bmq_cli_assets_generate (const bmq_cli_opts_t *opts, const char *prompt)
{
    if ((prompt && (!*prompt || strlen (prompt) > MAX_PROMPT)) || (!prompt && !opts->nimages)) {
        fprintf (stderr, "blendmq: the prompt must say what to make, at most %d bytes (or give --image FILE)\n", MAX_PROMPT);
        return 2;
    }
    if (opts->nimages > MAX_IMAGES) { fprintf (stderr, "blendmq: --image: at most %d images\n", MAX_IMAGES); return 2; }
    if (opts->deadline_s && (opts->deadline_s < 10 || opts->deadline_s > 7200)) {
        fprintf (stderr, "blendmq: --deadline must be 10..7200 seconds\n");
        return 2;
    }
    if (opts->tier && (!*opts->tier || strlen (opts->tier) > 32)) { fprintf (stderr, "blendmq: --tier: at most 32 bytes\n"); return 2; }
    if (opts->asset_name && (!*opts->asset_name || strlen (opts->asset_name) > 128)) {
        fprintf (stderr, "blendmq: --name: 1 to 128 bytes\n");
        return 2;
    }
    json_t *images = opts->nimages ? json_array () : NULL;
    for (int i = 0; i < opts->nimages; i++) {
        json_t *image = s_image (opts->images[i]);
        if (!image) { json_decref (images); return 2; }
        json_array_append_new (images, image);
    }
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) { json_decref (images); return 2; }
    json_t *body = json_pack ("{s:s, s:s*, s:o*, s:s?, s:s?}", "source", "hyper3d", "prompt", prompt, "images", images,
                              "tier", opts->tier, "target", opts->target);
    if (opts->deadline_s) json_object_set_new (body, "deadline_s", json_integer (opts->deadline_s));
    /* Ctrl-C cancels the job instead of leaving it running: our handler, not czmq's */
    zsys_handler_set (NULL);
    struct sigaction sa = { .sa_handler = s_on_sigint }, old;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGINT, &sa, &old);
    s_interrupts = 0;
    s_gen_t st = { .json = opts->json, .last_step = -1 };
    int code = s_generate (cfg, bmq_envelope_new (BMQ_MSG_ASSET_GENERATE, NULL, body), &st);
    bmq_config_destroy (&cfg);
    if (code != 0) {
        sigaction (SIGINT, &old, NULL);
        return code;
    }
    /* the import, as `assets import hyper3d JOB --type model --format glb [--name NAME]` (Ctrl-C now stops waiting) */
    json_t *step = json_pack ("{s:s, s:{s:s, s:s, s:s, s:s}}", "operation", "asset.import", "params", "source", "hyper3d",
                              "id", st.job, "type", "model", "format", "glb");
    if (opts->asset_name) json_object_set_new (step, "name", json_string (opts->asset_name));
    code = bmq_cli_run (opts, json_pack ("[o]", step), false);
    sigaction (SIGINT, &old, NULL);
    return code;
}
