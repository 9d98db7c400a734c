/* script_jobs — sandbox runs and confirmed live runs of BPY scripts (see script_jobs.h). */
#include "script_jobs.h"
#include "blender_link.h"
#include "blender_rna.h"
#include "bus.h"
#include "log.h"
#include "progress_stamp.h"
#include "sandbox_pool.h"
#include "script_rules.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STORE_MAX 64            /* sandboxed scripts kept for a confirmation */
#define LINK_MARGIN_MS 15000    /* run_script: the add-on's own limit (timeout_ms) answers first */
#define ID_BYTES 16             /* script ids: 128 random bits, 32 lowercase hex chars */
#define PREVIEW_WIDTH 320       /* the sandbox's preview render (Workbench, no AA): ~0.7 s more per sandbox run */
#define PREVIEW_HEIGHT 240
#define PREVIEW_MAX_BYTES (2 << 20)
#define COPY_MAX_BYTES (4LL << 30)      /* a scene copy handed over by path (issue 23): at most 4 GiB */
#define COPY_PREFIX "sandbox-copy-"     /* PNG bytes sent (base64: 4/3 of it), far under security.max_message_bytes */

/* One sandbox run, or one confirmation, in progress (keyed by its story's cid). */
typedef struct {
    char     cid[BMQ_MAX_ID + 1];
    char     script_id[BMQ_MAX_ID + 1];
    char     sender[BMQ_MAX_ID + 1];
    zframe_t *rid;
    char    *script;            /* sandbox: the sealed script */
    size_t   len;
    char     sha[BMQ_HEX_DIGEST];
    json_t  *verdict;
    unsigned char *blend;       /* the live scene's copy, for the worker */
    size_t   blend_len;
    char    *scene_path;        /* the live scene's bpy.data.filepath ("" when never saved), for the worker */
    char    *sidecar;           /* the copy's state.save sidecar ({"fake_users": ...}), for the worker */
    int      timeout_ms;        /* the sandbox's wall-clock limit: the live one, so what passes has room live */
    json_t  *result;            /* set by the worker */
    json_t  *who;               /* confirm: {key, role, channel} for the audit */
    bool     cancelled;         /* confirm: a cancel.request named it (issue 29) */
} s_run_t;

/* A script that went through the sandbox. */
typedef struct {
    char    script_id[BMQ_MAX_ID + 1];
    char   *script;
    size_t  len;
    char    sha[BMQ_HEX_DIGEST];
    char    scene_sha[BMQ_HEX_DIGEST];
    char    fp_before[BMQ_HEX_DIGEST];  /* the sandbox's fingerprints: live must start and end the same (issue 23) */
    char    fp_after[BMQ_HEX_DIGEST];
    json_t *fp_diff;                    /* the sandbox's fingerprint diff: shown again when live diverges */
    json_t *after_ids;                  /* the sandbox's after-state of what it changed: live names what differs */
    bool    ok, applied;
    char    verdict[32];
    char    blender[24];                /* the Blender version it was sandboxed for (issue 30) */
} s_entry_t;

struct bmq_script_jobs_t {
    bmq_seal_key_t key;
    bmq_audit_t *audit;
    zsock_t     *router, *pub;
    zactor_t    *worker;
    zhashx_t    *pending;       /* cid → s_run_t* */
    zlistx_t    *store;         /* s_entry_t*, oldest first */
    json_t      *modules, *builtins;    /* run-time allowlists: the script rules' defaults, as in the sandbox */
    int          timeout_ms;            /* run_script: the add-on's limit for a live run */
    int          sandbox_warm;          /* executor.sandbox_warm: read by the worker when it makes its pool */
    const char  *name;                  /* this executor (executor.name): seals must be for it */
    bmq_seal_guard_t *seals;            /* the executor's replay guard (borrowed) */
    char         blender[24];           /* the live Blender's version, "" while none is connected */
};

/* A fresh script id: 128 random bits as 32 lowercase hex chars. Never taken from a client,
 * so an id names exactly one sandbox run of exactly one script. */
static void s_new_id (char out[BMQ_MAX_ID + 1])
{
    unsigned char bytes[ID_BYTES];
    randombytes_buf (bytes, sizeof bytes);
    sodium_bin2hex (out, BMQ_MAX_ID + 1, bytes, sizeof bytes);
}

/* 64 hex digits? Lowered into out. */
static bool s_sha_arg (const char *text, char out[BMQ_HEX_DIGEST])
{
    if (!text || strlen (text) != BMQ_HEX_DIGEST - 1) return false;
    for (size_t i = 0; i < BMQ_HEX_DIGEST - 1; i++) {
        char c = text[i];
        if (c >= 'A' && c <= 'F') c = (char) (c - 'A' + 'a');
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        out[i] = c;
    }
    out[BMQ_HEX_DIGEST - 1] = 0;
    return true;
}

static void s_sha256_hex (const void *data, size_t len, char out[BMQ_HEX_DIGEST])
{
    unsigned char d[crypto_hash_sha256_BYTES];
    crypto_hash_sha256 (d, data, len);
    sodium_bin2hex (out, BMQ_HEX_DIGEST, d, sizeof d);
}

static void s_run_free (void **item)
{
    s_run_t *run = *item;
    if (!run) return;
    zframe_destroy (&run->rid);
    free (run->script);
    free (run->blend);
    free (run->scene_path);
    free (run->sidecar);
    json_decref (run->verdict);
    json_decref (run->who);
    json_decref (run->result);
    free (run);
    *item = NULL;
}

static void s_entry_free (void **item)
{
    s_entry_t *e = *item;
    if (!e) return;
    free (e->script);
    json_decref (e->fp_diff);
    json_decref (e->after_ids);
    free (e);
    *item = NULL;
}

/* The sandbox's copy of a scene too big for the link (issue 23): the add-on left it in its state
 * folder on this host and named it in copy_path. Only a plain file named sandbox-copy-<32 hex>.blend
 * is read (no link followed, at most COPY_MAX_BYTES), then removed. 0, or -1 with why. */
static int s_read_copy (const char *path, unsigned char **data, size_t *len, char *why, size_t whylen)
{
    const char *base = path ? strrchr (path, '/') : NULL;
    size_t pl = strlen (COPY_PREFIX);
    bool named = base && path[0] == '/' && !strstr (path, "/../") && strlen (base + 1) == pl + 32 + 6
                 && !strncmp (base + 1, COPY_PREFIX, pl) && !strcmp (base + 1 + pl + 32, ".blend");
    for (size_t i = 0; named && i < 32; i++) {
        char c = base[1 + pl + i];
        named = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    }
    if (!named) {
        snprintf (why, whylen, "the scene copy's path is not one the add-on makes: %.200s", path ? path : "(none)");
        return -1;
    }
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size <= 0 || st.st_size > COPY_MAX_BYTES) {
        snprintf (why, whylen, "cannot read the scene copy %.200s: %s", path,
                  fd < 0 ? strerror (errno) : "not a plain file of 1 byte .. 4 GiB");
        if (fd >= 0) close (fd);
        return -1;
    }
    *data = malloc ((size_t) st.st_size);
    size_t got = 0;
    while (*data && got < (size_t) st.st_size) {
        ssize_t n = read (fd, *data + got, (size_t) st.st_size - got);
        if (n <= 0) break;
        got += (size_t) n;
    }
    close (fd);
    unlink (path);
    if (!*data || got != (size_t) st.st_size) {
        free (*data);
        *data = NULL;
        snprintf (why, whylen, "cannot read the scene copy %.200s (%zu of %lld bytes)", path, got, (long long) st.st_size);
        return -1;
    }
    *len = got;
    return 0;
}

/* ---- the sandbox worker thread ---------------------------------------------------- */

/* The sandbox's preview into result.preview.png_base64 (what the web page shows), or the reason
 * why not in result.preview_error (as the runner reports a failed render). The bytes come from
 * the sandbox: checked and capped before they go on the bus. Nothing when no preview was made. */
static void s_attach_preview (json_t *result, const unsigned char *png, size_t len)
{
    json_t *preview = json_object_get (result, "preview");
    if (!json_is_object (preview)) return;
    char why[160] = "";
    if (!png || !len)
        snprintf (why, sizeof why, "the sandbox rendered no preview image");
    else if (len < 8 || memcmp (png, "\x89PNG\r\n\x1a\n", 8))
        snprintf (why, sizeof why, "the sandbox's preview is not a PNG: not sent");
    else if (len > PREVIEW_MAX_BYTES)
        snprintf (why, sizeof why, "the preview is %zu bytes, over the %d byte limit: not sent", len, PREVIEW_MAX_BYTES);
    size_t b64_len = why[0] ? 0 : sodium_base64_ENCODED_LEN (len, sodium_base64_VARIANT_ORIGINAL);
    char *b64 = b64_len ? malloc (b64_len) : NULL;
    if (b64_len && !b64) snprintf (why, sizeof why, "out of memory encoding the preview");
    if (why[0]) {
        json_object_set_new (result, "preview_error", json_string (why));
        return;
    }
    sodium_bin2base64 (b64, b64_len, png, len, sodium_base64_VARIANT_ORIGINAL);
    json_object_set_new (preview, "png_base64", json_stringn (b64, b64_len - 1));
    free (b64);
}

static void s_worker (zsock_t *pipe, void *args)
{
    bmq_sandbox_pool_t *pool = NULL;
    char err[512] = "";
    zsock_signal (pipe, 0);
    while (true) {
        zmsg_t *msg = zmsg_recv (pipe);
        if (!msg) break;
        char *cmd = zmsg_popstr (msg);
        zframe_t *f = zmsg_pop (msg);
        s_run_t *run = f && zframe_size (f) == sizeof (void *) ? *(s_run_t **) zframe_data (f) : NULL;
        bool term = !cmd || !strcmp (cmd, "$TERM");
        zframe_destroy (&f);
        zmsg_destroy (&msg);
        free (cmd);
        if (term) break;
        if (!run) continue;
        if (!pool) {            /* started on the first script: a stack that runs none keeps no sandbox Blender */
            bmq_sandbox_opts_t opts = { .warm = ((bmq_script_jobs_t *) args)->sandbox_warm };
            pool = bmq_sandbox_pool_new (&opts, err, sizeof err);
            if (!pool) bmq_error ("no sandbox: %s", err);
        }
        bmq_sandbox_job_t job = { .scene_path = run->scene_path, .timeout_ms = run->timeout_ms,
                                  .preview_width = PREVIEW_WIDTH, .preview_height = PREVIEW_HEIGHT,
                                  .sidecar = run->sidecar, .sidecar_len = run->sidecar ? strlen (run->sidecar) : 0 };
        unsigned char *png = NULL;
        size_t png_len = 0;
        run->result = pool ? bmq_sandbox_pool_run (pool, run->script, run->len, run->blend, run->blend_len, &job, &png, &png_len)
                           : json_pack ("{s:b, s:s, s:s}", "ok", 0, "verdict", "unavailable", "message", err);
        s_attach_preview (run->result, png, png_len);
        free (png);
        zsock_send (pipe, "sp", "DONE", run);
    }
    bmq_sandbox_pool_destroy (&pool);
}

bmq_script_jobs_t *bmq_script_jobs_new (const bmq_seal_key_t *key, bmq_audit_t *audit, zsock_t *router, zsock_t *pub)
{
    if (sodium_init () < 0) return NULL;            /* randombytes_buf for the script ids */
    bmq_script_jobs_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    self->timeout_ms = BMQ_SCRIPT_TIMEOUT_MS_DEFAULT;
    self->sandbox_warm = BMQ_SANDBOX_WARM_DEFAULT;
    self->key = *key;
    self->audit = audit;
    self->router = router;
    self->pub = pub;
    self->pending = zhashx_new ();
    zhashx_set_destructor (self->pending, s_run_free);
    self->store = zlistx_new ();
    zlistx_set_destructor (self->store, s_entry_free);
    json_t *rules = bmq_script_rules_default ();
    self->modules = json_incref (json_object_get (rules, "modules"));
    self->builtins = json_incref (json_object_get (rules, "builtins"));
    json_decref (rules);
    self->worker = zactor_new (s_worker, self);
    return self;
}

void bmq_script_jobs_destroy (bmq_script_jobs_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_script_jobs_t *self = *self_p;
    zactor_destroy (&self->worker);         /* first: a run in progress finishes, then nothing touches `pending` */
    zhashx_destroy (&self->pending);
    zlistx_destroy (&self->store);
    json_decref (self->modules);
    json_decref (self->builtins);
    free (self);
    *self_p = NULL;
}

zactor_t *bmq_script_jobs_worker (bmq_script_jobs_t *self) { return self->worker; }

void bmq_script_jobs_set_seals (bmq_script_jobs_t *self, const char *name, bmq_seal_guard_t *guard)
{
    self->name = name;
    self->seals = guard;
}

void bmq_script_jobs_set_blender (bmq_script_jobs_t *self, const char *version)
{
    snprintf (self->blender, sizeof self->blender, "%s", bmq_blender_version_valid (version) ? version : "");
}

void bmq_script_jobs_set_timeout (bmq_script_jobs_t *self, int timeout_ms)
{
    if (timeout_ms > 0) self->timeout_ms = timeout_ms;
}

void bmq_script_jobs_set_sandbox_warm (bmq_script_jobs_t *self, int warm)
{
    self->sandbox_warm = warm < 1 ? 1 : warm > BMQ_SANDBOX_WARM_MAX ? BMQ_SANDBOX_WARM_MAX : warm;
}

int bmq_script_jobs_link_timeout (const bmq_script_jobs_t *self, const bmq_job_t *job)
{
    return bmq_script_jobs_owns (job) && !strcmp (job->command, "run_script") ? self->timeout_ms + LINK_MARGIN_MS : 0;
}

/* ---- answers ------------------------------------------------------------------------ */

static void s_answer (bmq_script_jobs_t *self, zframe_t *rid, const char *cid, const char *script_id, const char *status,
                      const char *message, json_t *verdict, json_t *sandbox)
{
    json_t *body = json_pack ("{s:s, s:s}", "script_id", script_id, "status", status);
    if (message) json_object_set_new (body, "message", json_string (message));
    if (verdict) json_object_set (body, "verdict", verdict);
    if (sandbox) json_object_set (body, "sandbox", sandbox);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_SCRIPT_REPLY, cid, body);
    bmq_bus_send_and_destroy (self->router, rid, &env);
}

static long s_lines (const char *text, size_t len)
{
    long n = len ? 1 : 0;
    for (size_t i = 0; i < len; i++) n += text[i] == '\n' && i + 1 < len;
    return n;
}

static s_entry_t *s_find (bmq_script_jobs_t *self, const char *script_id)
{
    for (s_entry_t *e = zlistx_first (self->store); e; e = zlistx_next (self->store))
        if (!strcmp (e->script_id, script_id)) return e;
    return NULL;
}

static void s_progress (bmq_script_jobs_t *self, const s_run_t *run, const char *status, const char *error)
{
    json_t *body = json_pack ("{s:s, s:s, s:i, s:i, s:s, s:s}", "event", "script", "plan_id", run->script_id, "step", 1,
                              "total", 1, "status", status, "operation", "script");
    if (error) json_object_set_new (body, "error", json_string (error));
    bmq_progress_stamp (body);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, run->cid, body);
    bmq_bus_send (self->router, run->rid, env);
    bmq_bus_send (self->pub, NULL, env);
    bmq_envelope_destroy (&env);
}

/* A Blender command for a script story: queued like a scene command. */
static bmq_job_t *s_command (const s_run_t *run, bmq_msg_type_t type, const char *command, json_t *args)
{
    bmq_envelope_t *env = bmq_envelope_new (type, run->cid, json_pack ("{s:s, s:o}", "command", command, "args", args));
    bmq_job_t *job = bmq_job_new_command (env, run->rid);
    bmq_envelope_destroy (&env);
    return job;
}

static bmq_envelope_t *s_on_script (bmq_script_jobs_t *self, const bmq_envelope_t *req, zframe_t *rid, zlistx_t *queue)
{
    json_t *script = json_object_get (req->body, "script");
    json_t *verdict = json_object_get (req->body, "verdict");
    char script_id[BMQ_MAX_ID + 1];         /* ours, always: a client's (or the validator's) script_id is ignored */
    s_new_id (script_id);
    const char *seal = bmq_body_str (req, "seal");
    char sha[BMQ_HEX_DIGEST] = "", subject[128];
    if (json_is_string (script)) s_sha256_hex (json_string_value (script), json_string_length (script), sha);
    snprintf (subject, sizeof subject, "script:%s", sha);       /* what worker_scripts.c seals */
    char why[300] = "the script text does not match its verdict";
    bmq_seal_status_t sealed = BMQ_SEAL_INVALID;
    if (json_is_string (script) && !strcmp (sha, json_string_value (json_object_get (verdict, "sha256")) ?: ""))
        sealed = bmq_seal_check (&self->key, subject, seal, self->name ? self->name : "local", bmq_seal_now_ms (), self->seals,
                                 why, sizeof why);
    if (sealed != BMQ_SEAL_OK) {
        bmq_audit_record (self->audit, script_id, "script.sandbox",
                          json_pack ("{s:s, s:s, s:s, s:s, s:s, s:s}", "script_id", script_id, "script_sha256", sha, "status", "unsealed",
                                     "request_cid", req->cid, "seal", bmq_seal_status_name (sealed), "reason", why));
        return bmq_envelope_reply (req, BMQ_MSG_SCRIPT_REPLY, json_pack ("{s:s, s:s, s:s++}", "script_id", script_id,
            "status", "rejected", "message", "the script does not carry a valid validator seal (", why, "); nothing was run"));
    }
    /* the validator's operators against the RNA recorded for this very Blender (issue 30) */
    char rna_why[700];
    if (bmq_blender_rna_check (self->blender, json_object_get (verdict, "operator_list"), rna_why, sizeof rna_why) < 0) {
        bmq_audit_record (self->audit, script_id, "script.sandbox",
                          json_pack ("{s:s, s:s, s:s, s:s, s:s, s:s}", "script_id", script_id, "script_sha256", sha, "status", "refused",
                                     "request_cid", req->cid, "blender", self->blender, "reason", rna_why));
        return bmq_envelope_reply (req, BMQ_MSG_SCRIPT_REPLY, json_pack ("{s:s, s:s, s:s+}", "script_id", script_id,
            "status", "refused", "message", rna_why, "; nothing was run"));
    }
    if (zhashx_lookup (self->pending, req->cid) || zhashx_size (self->pending) >= STORE_MAX)
        return bmq_envelope_error (req, "busy", "too many scripts in progress");
    s_run_t *run = calloc (1, sizeof *run);
    snprintf (run->cid, sizeof run->cid, "%s", req->cid);
    snprintf (run->script_id, sizeof run->script_id, "%s", script_id);
    run->rid = zframe_dup (rid);
    run->len = json_string_length (script);
    run->script = malloc (run->len + 1);
    memcpy (run->script, json_string_value (script), run->len + 1);
    snprintf (run->sha, sizeof run->sha, "%s", sha);
    run->verdict = json_incref (verdict);
    zhashx_insert (self->pending, run->cid, run);
    /* One save, orphans kept (state.save): the sandbox starts from live's fingerprint. The
     * confirmation compares fingerprints, not the sha256 of two saves (issue 23). */
    zlistx_add_end (queue, s_command (run, BMQ_MSG_SCRIPT_REQUEST, "save_blend", json_pack ("{s:b}", "keep_orphans", 1)));
    return NULL;
}

/* Who confirmed, for the audit: the key (the client the gateway vouches for in on_behalf_of: this
 * executor takes script.confirm through the gateway only, roles.def), its own role, and the channel
 * the client named (page, http, cli, panel, mcp-elicitation; anything else is "unspecified"). */
static json_t *s_confirmer (const bmq_envelope_t *req)
{
    json_t *obo = json_object_get (req->body, "on_behalf_of");
    const char *key = json_string_value (json_object_get (obo, "name"));
    const char *role = json_string_value (json_object_get (obo, "role"));
    const char *channel = bmq_body_str (req, "channel");
    static const char *known[] = { "page", "http", "cli", "panel", "mcp-elicitation", NULL };
    int i = 0;
    while (channel && known[i] && strcmp (channel, known[i])) i++;
    return json_pack ("{s:s, s:s, s:s}", "key", key ? key : req->auth_name[0] ? req->auth_name : "?",
                      "role", role ? role : req->auth_role[0] ? req->auth_role : "?",
                      "channel", channel && known[i] ? known[i] : "unspecified");
}

/* script.confirm {script_id, sha256}: the sha256 is the script the person reviewed; only exactly
 * that script may run. */
static bmq_envelope_t *s_on_confirm (bmq_script_jobs_t *self, const bmq_envelope_t *req, zframe_t *rid, zlistx_t *queue)
{
    const char *script_id = bmq_body_str (req, "script_id");
    const char *given = bmq_body_str (req, "sha256");
    char sha[BMQ_HEX_DIGEST] = "";
    bool id_ok = script_id && *script_id && strlen (script_id) <= BMQ_MAX_ID;
    s_entry_t *e = id_ok ? s_find (self, script_id) : NULL;
    const char *why = !id_ok ? "script.confirm needs the script_id of a sandboxed script"
                    : !e ? "no sandbox run is known for this script id (run `script sandbox` first)"
                    : !given ? "script.confirm needs the sha256 of the script you reviewed (see `script list`); nothing was run"
                    : !s_sha_arg (given, sha) ? "sha256 must be 64 hexadecimal digits (the script's sha256); nothing was run"
                    : strcmp (sha, e->sha) ? "the script's sha256 differs from the one confirmed: what you reviewed is not what would run"
                    : !e->ok ? "the script did not run clean in the sandbox; it cannot be applied"
                    : e->applied ? "the script was already applied; sandbox it again to apply it again"
                    : strcmp (e->blender, self->blender) ? "the script was sandboxed on another Blender than the one now "
                      "connected (or none is): sandbox it again on this one; nothing was run" : NULL;
    if (!why && zhashx_lookup (self->pending, req->cid)) why = "this confirmation is already in progress";
    if (why) {
        const char *id = id_ok ? script_id : req->cid;
        bmq_audit_record (self->audit, id, "script.confirm",
            json_pack ("{s:s, s:s?, s:s?, s:s, s:s, s:s, s:s, s:o}", "script_id", id, "script_sha256", e ? e->sha : NULL,
                       "confirmed_sha256", given, "status", "refused", "reason", why, "client", req->sender,
                       "confirm_cid", req->cid, "confirmed_by", s_confirmer (req)));
        bmq_info ("script %s: confirmation refused: %s", id, why);
        return bmq_envelope_reply (req, BMQ_MSG_SCRIPT_REPLY,
                                   json_pack ("{s:s, s:s, s:s}", "script_id", id, "status", "refused", "message", why));
    }
    s_run_t *run = calloc (1, sizeof *run);
    snprintf (run->cid, sizeof run->cid, "%s", req->cid);
    snprintf (run->script_id, sizeof run->script_id, "%s", script_id);
    snprintf (run->sender, sizeof run->sender, "%s", req->sender);
    snprintf (run->sha, sizeof run->sha, "%s", e->sha);
    run->who = s_confirmer (req);
    run->rid = zframe_dup (rid);
    zhashx_insert (self->pending, run->cid, run);
    bmq_audit_record (self->audit, script_id, "script.confirm",
        json_pack ("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:O*}", "script_id", script_id, "script_sha256", e->sha,
                   "expect_before", e->fp_before, "expect_after", e->fp_after, "status", "confirmed", "client", req->sender,
                   "confirm_cid", req->cid, "confirmed_by", run->who));
    e->applied = true;          /* one confirmation, one live run */
    /* Issue 23: no save and sha of the live scene (not byte-stable): the add-on compares the live
     * fingerprint with the sandbox's before it runs (expect_before) and after, before it commits
     * (expect_after); a difference rolls back and answers `diverged:`. sha256: the add-on checks
     * it is the script it is given; timeout_ms: its own limit (the link waits LINK_MARGIN_MS
     * longer, bmq_script_jobs_link_timeout, so that limit answers first). */
    json_t *args = json_pack ("{s:s%, s:s, s:s, s:i, s:O, s:O, s:s, s:s}", "script", e->script, e->len, "plan_id",
                              script_id, "sha256", e->sha, "timeout_ms", self->timeout_ms, "modules", self->modules,
                              "builtins", self->builtins, "expect_before", e->fp_before, "expect_after", e->fp_after);
    if (e->after_ids) json_object_set (args, "expect_ids", e->after_ids);
    zlistx_add_end (queue, s_command (run, BMQ_MSG_SCRIPT_CONFIRM, "run_script", args));
    return NULL;
}

bmq_envelope_t *bmq_script_jobs_on_request (bmq_script_jobs_t *self, const bmq_envelope_t *req, zframe_t *rid,
                                            zlistx_t *queue)
{
    return req->type == BMQ_MSG_SCRIPT_REQUEST ? s_on_script (self, req, rid, queue) : s_on_confirm (self, req, rid, queue);
}

bool bmq_script_jobs_owns (const bmq_job_t *job)
{
    return job->kind == BMQ_JOB_COMMAND && !strncmp (job->req_type, "script.", 7);
}

/* A live run's run_script job, and its script id (its transaction's plan_id). */
static const char *s_live_id (const bmq_job_t *job)
{
    if (!job || !bmq_script_jobs_owns (job) || strcmp (job->req_type, "script.confirm") || strcmp (job->command, "run_script"))
        return NULL;
    return json_string_value (json_object_get (job->args, "plan_id"));
}

void bmq_script_jobs_send (zactor_t *blender, const bmq_job_t *job, int timeout_ms)
{
    const char *id = s_live_id (job);
    char *text = json_dumps (job->args, JSON_COMPACT);
    char timeout[16];
    snprintf (timeout, sizeof timeout, "%d", timeout_ms);
    zstr_sendx (blender, "STREAM", "job", job->command, text ? text : "{}", timeout, id ? id : "", NULL);
    free (text);
}

/* Who asked for a cancel (the gateway vouches for it in on_behalf_of), for the audit. */
static json_t *s_canceller (const bmq_envelope_t *req)
{
    json_t *obo = json_object_get (req->body, "on_behalf_of");
    const char *key = json_string_value (json_object_get (obo, "name"));
    const char *role = json_string_value (json_object_get (obo, "role"));
    return json_pack ("{s:s, s:s}", "key", key ? key : req->auth_name[0] ? req->auth_name : "?",
                      "role", role ? role : req->auth_role[0] ? req->auth_role : "?");
}

int bmq_script_jobs_cancel (bmq_script_jobs_t *self, const bmq_envelope_t *req, bmq_job_t *current, zlistx_t *queue)
{
    const char *script_id = bmq_body_str (req, "plan_id");
    if (!script_id || !*script_id || strlen (script_id) > BMQ_MAX_ID) return 0;
    bmq_job_t *job = NULL;
    bool running = false;
    const char *id = s_live_id (current);
    if (id && !strcmp (id, script_id)) job = current, running = true;
    for (bmq_job_t *j = running ? NULL : zlistx_first (queue); j; j = zlistx_next (queue)) {
        id = s_live_id (j);
        if (id && !strcmp (id, script_id)) { job = j; break; }     /* the cursor stays on it */
    }
    s_run_t *run = job ? zhashx_lookup (self->pending, job->cid) : NULL;
    if (!run) return 0;
    bmq_audit_record (self->audit, run->script_id, "script.cancel",
        json_pack ("{s:s, s:s, s:s, s:s, s:o}", "script_id", run->script_id, "script_sha256", run->sha,
                   "state", running ? "running" : "queued", "cancel_cid", req->cid, "cancelled_by", s_canceller (req)));
    if (running) {
        bmq_info ("script %s: cancel asked while it runs live: interrupting it in Blender", run->script_id);
        run->cancelled = job->cancel = true;
        return 1;
    }
    /* queued: nothing ran, so the script may be confirmed again */
    s_entry_t *e = s_find (self, run->script_id);
    if (e) e->applied = false;
    const char *why = "cancelled before it started; nothing ran";
    bmq_audit_record (self->audit, run->script_id, "script.live",
        json_pack ("{s:s, s:s, s:s, s:s}", "script_id", run->script_id, "script_sha256", run->sha, "status", "cancelled",
                   "error", why));
    s_progress (self, run, "cancelled", why);
    s_answer (self, run->rid, run->cid, run->script_id, "cancelled", why, NULL, NULL);
    bmq_info ("script %s: cancelled before it started", run->script_id);
    zlistx_delete (queue, zlistx_cursor (queue));       /* the job (the cursor is on it) */
    zhashx_delete (self->pending, run->cid);
    return 2;
}

/* ---- Blender's answers ---------------------------------------------------------------- */

static const char *s_link_error (int status, json_t *reply, const char *err)
{
    if (status == BMQ_LINK_OK) return json_string_value (json_object_get (reply, "error")) ?: "Blender reported an error";
    return err && *err ? err : status == BMQ_LINK_TIMEOUT ? "Blender did not answer in time" : "Blender is not reachable";
}

void bmq_script_jobs_on_command (bmq_script_jobs_t *self, const bmq_job_t *job, int status, json_t *reply,
                                 zframe_t *blob, const char *err, zlistx_t *queue)
{
    s_run_t *run = zhashx_lookup (self->pending, job->cid);
    if (!run) return;
    bool ok = status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"));
    bool confirm = !strcmp (job->req_type, "script.confirm");
    if (!strcmp (job->command, "save_blend") && !confirm) {
        if (!ok) {
            char msg[700];
            snprintf (msg, sizeof msg, "cannot copy the live scene for the sandbox: %s", s_link_error (status, reply, err));
            bmq_audit_record (self->audit, run->script_id, "script.sandbox", json_pack ("{s:s, s:s, s:s, s:s, s:s}", "script_id",
                              run->script_id, "script_sha256", run->sha, "status", "sandbox_failed", "message", msg,
                              "request_cid", run->cid));
            s_answer (self, run->rid, run->cid, run->script_id, "sandbox_failed", msg, run->verdict, NULL);
            zhashx_delete (self->pending, run->cid);
            return;
        }
        const char *path = json_string_value (json_object_get (json_object_get (reply, "result"), "filepath"));
        run->scene_path = strdup (path ? path : "");
        json_t *fakes = json_object_get (json_object_get (reply, "result"), "fake_users");
        if (json_is_array (fakes)) {        /* state.save's sidecar: the sandbox takes these fake users away again */
            json_t *side = json_pack ("{s:i, s:O}", "version", 1, "fake_users", fakes);
            run->sidecar = json_dumps (side, JSON_COMPACT);
            json_decref (side);
        }
        run->timeout_ms = self->timeout_ms;
        const char *copy_path = json_string_value (json_object_get (json_object_get (reply, "result"), "copy_path"));
        char why[400];
        if (copy_path && zframe_size (blob) == 0) {     /* over the link's blob limit: by path (issue 23) */
            if (s_read_copy (copy_path, &run->blend, &run->blend_len, why, sizeof why) < 0) {
                char msg[700];
                snprintf (msg, sizeof msg, "cannot copy the live scene for the sandbox: %s", why);
                bmq_audit_record (self->audit, run->script_id, "script.sandbox", json_pack ("{s:s, s:s, s:s, s:s, s:s}",
                                  "script_id", run->script_id, "script_sha256", run->sha, "status", "sandbox_failed",
                                  "message", msg, "request_cid", run->cid));
                s_answer (self, run->rid, run->cid, run->script_id, "sandbox_failed", msg, run->verdict, NULL);
                zhashx_delete (self->pending, run->cid);
                return;
            }
        }
        else {
            run->blend_len = zframe_size (blob);
            run->blend = malloc (run->blend_len ? run->blend_len : 1);
            memcpy (run->blend, zframe_data (blob), run->blend_len);
        }
        zsock_send (self->worker, "sp", "RUN", run);
        return;
    }
    s_entry_t *e = s_find (self, run->script_id);
    /* run_script: the live result. `diverged:` (issue 23): live ended elsewhere than the sandbox
     * and was rolled back; `refused`: live did not start where the sandbox did, or the script made
     * something refused at the change. */
    json_t *result = json_object_get (reply, "result");
    const char *why = ok ? NULL : s_link_error (status, reply, err);
    bool diverged = !ok && status == BMQ_LINK_OK && why && !strncmp (why, "diverged:", 9);
    bool refused = !ok && status == BMQ_LINK_OK && why && !strncmp (why, "refused", 7);
    /* cancelled (issue 29): the add-on interrupted the script and rolled it back; its answer
     * starts with "cancelled:" and says how. Only after a cancel of ours: nothing else says so. */
    bool cancelled = !ok && status == BMQ_LINK_OK && run->cancelled && why && !strncmp (why, "cancelled:", 10);
    if (cancelled) why += 10 + (why[10] == ' ');
    const char *outcome = ok ? "applied" : cancelled ? "cancelled" : diverged ? "diverged" : refused ? "refused" : "failed";
    json_t *sandbox_diff = e && e->fp_diff ? e->fp_diff : json_null ();
    bmq_audit_record (self->audit, run->script_id, diverged ? "script.diverged" : "script.live",
        json_pack ("{s:s, s:s, s:s, s:s?, s:O*, s:s, s:s, s:O}", "script_id", run->script_id, "script_sha256", run->sha,
                   "status", outcome, "error", why, "result", result, "expect_before", e ? e->fp_before : "",
                   "expect_after", e ? e->fp_after : "", "sandbox_diff", sandbox_diff));
    s_progress (self, run, outcome, why);
    json_t *live = ok && json_is_object (result) ? json_incref (result) : NULL;
    json_t *body = json_pack ("{s:s, s:s}", "script_id", run->script_id, "status", outcome);
    if (why) json_object_set_new (body, "message", json_string (why));
    if (live) json_object_set_new (body, "live", live);
    if (diverged && json_is_object (sandbox_diff)) json_object_set (body, "sandbox_diff", sandbox_diff);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_SCRIPT_REPLY, run->cid, body);
    bmq_bus_send_and_destroy (self->router, run->rid, &env);
    bmq_info ("script %s %s live%s%.200s", run->script_id, outcome, why ? ": " : "", why ? why : "");
    zhashx_delete (self->pending, run->cid);
}

/* The worker finished a sandbox run. */
void bmq_script_jobs_on_worker (bmq_script_jobs_t *self)
{
    char *cmd = NULL;
    void *ptr = NULL;
    if (zsock_recv (self->worker, "sp", &cmd, &ptr) == -1) return;
    free (cmd);
    s_run_t *run = ptr;
    if (!run || zhashx_lookup (self->pending, run->cid) != run) return;
    json_t *r = run->result;
    bool ok = json_is_true (json_object_get (r, "ok"));
    const char *verdict = json_string_value (json_object_get (r, "verdict")) ?: "error";
    const char *status = ok ? "sandboxed" : !strcmp (verdict, "rejected") ? "rejected" : "sandbox_failed";
    const char *scene = json_string_value (json_object_get (r, "scene_sha256"));
    /* a new entry every time, never an overwrite: the id is fresh (s_new_id) */
    if (zlistx_size (self->store) >= STORE_MAX) {        /* bounded: the oldest is forgotten */
        zlistx_first (self->store);
        zlistx_delete (self->store, zlistx_cursor (self->store));
    }
    s_entry_t *e = calloc (1, sizeof *e);
    snprintf (e->script_id, sizeof e->script_id, "%s", run->script_id);
    snprintf (e->sha, sizeof e->sha, "%s", run->sha);
    snprintf (e->scene_sha, sizeof e->scene_sha, "%s", scene ? scene : "");
    snprintf (e->verdict, sizeof e->verdict, "%s", verdict);
    snprintf (e->blender, sizeof e->blender, "%s", self->blender);
    const char *fpb = json_string_value (json_object_get (r, "before_fingerprint"));
    const char *fpa = json_string_value (json_object_get (r, "after_fingerprint"));
    if (!fpb || !s_sha_arg (fpb, e->fp_before)) e->fp_before[0] = 0;
    if (!fpa || !s_sha_arg (fpa, e->fp_after)) e->fp_after[0] = 0;
    e->fp_diff = json_incref (json_object_get (r, "fingerprint_diff"));
    json_t *ids = json_object_get (r, "after_ids");
    e->after_ids = json_is_object (ids) ? json_incref (ids) : NULL;
    e->ok = ok && scene && e->fp_before[0] && e->fp_after[0];     /* live is checked against both (issue 23) */
    e->script = run->script;
    e->len = run->len;
    run->script = NULL;
    zlistx_add_end (self->store, e);
    bmq_audit_record (self->audit, run->script_id, "script.sandbox",
        json_pack ("{s:s, s:s, s:s?, s:s, s:s, s:s, s:s, s:O, s:O, s:O, s:O, s:O}", "script_id", run->script_id, "script_sha256",
                   run->sha, "scene_sha256", scene, "scene_path", run->scene_path ? run->scene_path : "", "request_cid", run->cid,
                   "status", status, "verdict", verdict,
                   "message", json_object_get (r, "message") ?: json_null (), "error", json_object_get (r, "error") ?: json_null (),
                   "diff", json_object_get (r, "fingerprint_diff") ?: json_object_get (r, "diff") ?: json_null (),
                   "violations", json_object_get (r, "violations") ?: json_null (),
                   "duration_ms", json_object_get (r, "duration_ms") ?: json_null ()));
    bmq_info ("script %s sandbox: %s (%s)", run->script_id, status, json_string_value (json_object_get (r, "message")) ?: "");
    s_answer (self, run->rid, run->cid, run->script_id, status, json_string_value (json_object_get (r, "message")),
              run->verdict, r);
    zhashx_delete (self->pending, run->cid);
}

static json_t *s_entry_json (const s_entry_t *e)
{
    return json_pack ("{s:s, s:s, s:b, s:b, s:s, s:I}", "script_id", e->script_id, "sha256", e->sha, "ok", e->ok,
                      "applied", e->applied, "verdict", e->verdict, "lines", (json_int_t) s_lines (e->script, e->len));
}

bmq_envelope_t *bmq_script_jobs_list (bmq_script_jobs_t *self, const bmq_envelope_t *req)
{
    json_t *scripts = json_array ();
    const char *one = bmq_body_str (req, "script_id");
    if (one) {                  /* one entry, with its exact text: what a person reviews before confirming */
        s_entry_t *e = s_find (self, one);
        if (e) {
            json_t *entry = s_entry_json (e);
            json_object_set_new (entry, "script", json_stringn (e->script, e->len));
            json_array_append_new (scripts, entry);
        }
    }
    else
        for (s_entry_t *e = zlistx_last (self->store); e; e = zlistx_prev (self->store))
            json_array_append_new (scripts, s_entry_json (e));
    return bmq_envelope_reply (req, BMQ_MSG_SCRIPT_LISTING, json_pack ("{s:o}", "scripts", scripts));
}
