/* assets_hyper3d — Hyper3D Rodin: create, status, download, fetch into the cache. */
#include "assets_hyper3d.h"
#include "assets_options.h"
#include "assets_check.h"

#include <ctype.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define S_URL_MAX   2048
#define S_LIST_MAX  64              /* download list entries looked at */
#define S_MAIN      "model.glb"
#define S_AS_MADE   "asis"          /* the cache record's resolution (a record needs one); bundles carry none */

struct bmq_hyper3d_t {
    bmq_hyper3d_options_t opts;
    bmq_assets_cache_t   *cache;
    char                  auth[600];    /* "Authorization: Bearer KEY" */
};

/* ---- options -------------------------------------------------------------- */

static int s_range (const bmq_config_t *cfg, const char *key, int64_t lo, int64_t hi, int64_t dflt, int *out,
                    char *err, size_t errlen)
{
    int64_t v = bmq_config_int (cfg, key);
    if (v == 0) v = dflt;
    if (v < lo || v > hi) { snprintf (err, errlen, "%s must be %lld..%lld, not %lld", key, (long long) lo, (long long) hi, (long long) v); return -1; }
    *out = (int) v;
    return 0;
}

static bool s_word_ok (const char *s, size_t max, const char *extra)
{
    size_t n = s ? strlen (s) : 0;
    if (!n || n > max) return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum ((unsigned char) s[i]) && !strchr (extra, s[i])) return false;
    return true;
}

int bmq_hyper3d_options_from_config (bmq_hyper3d_options_t *o, const bmq_config_t *cfg, char *err, size_t errlen)
{
    memset (o, 0, sizeof *o);
    snprintf (o->base_url, sizeof o->base_url, "%s", bmq_config_str (cfg, "assets.hyper3d_base_url"));
    snprintf (o->download_hosts, sizeof o->download_hosts, "%s", bmq_config_str (cfg, "assets.hyper3d_download_hosts"));
    const char *key = bmq_config_str (cfg, "assets.hyper3d_api_key");
    if (!*key && getenv ("HYPER3D_API_KEY")) key = getenv ("HYPER3D_API_KEY");
    if (strlen (key) >= sizeof o->api_key) { snprintf (err, errlen, "the Hyper3D API key is longer than %zu bytes", sizeof o->api_key - 1); return -1; }
    for (const char *p = key; *p; p++)
        if ((unsigned char) *p < 0x21 || (unsigned char) *p > 0x7e) { snprintf (err, errlen, "the Hyper3D API key holds a space or a control character"); return -1; }
    snprintf (o->api_key, sizeof o->api_key, "%s", key);
    const char *tier = bmq_config_str (cfg, "assets.hyper3d_tier");
    snprintf (o->tier, sizeof o->tier, "%s", *tier ? tier : "Regular");
    if (!s_word_ok (o->tier, 31, "-_")) { snprintf (err, errlen, "assets.hyper3d_tier \"%.40s\" is not a tier name", tier); return -1; }
    bmq_assets_shared_options_t shared;
    if (bmq_assets_shared_options_from_config (&shared, cfg, err, errlen)) return -1;
    snprintf (o->cache_dir, sizeof o->cache_dir, "%s", shared.cache_dir);
    o->max_download_bytes = shared.max_download_bytes;
    o->http = shared.http;
    if (s_range (cfg, "assets.hyper3d_poll_ms", 100, 600000, 3000, &o->poll_ms, err, errlen)) return -1;
    if (s_range (cfg, "assets.hyper3d_deadline_s", 10, 86400, 600, &o->deadline_s, err, errlen)) return -1;
    if (!*o->base_url) { snprintf (err, errlen, "assets.hyper3d_base_url is empty"); return -1; }
    return 0;
}

bmq_hyper3d_t *bmq_hyper3d_new (const bmq_hyper3d_options_t *opts, char *err, size_t errlen)
{
    bmq_hyper3d_t *self = calloc (1, sizeof *self);
    if (!self) { snprintf (err, errlen, "out of memory"); return NULL; }
    self->opts = *opts;
    for (size_t n = strlen (self->opts.base_url); n && self->opts.base_url[n - 1] == '/'; n--) self->opts.base_url[n - 1] = 0;
    if (!self->opts.max_json_bytes) self->opts.max_json_bytes = 1u << 20;
    if (!self->opts.max_download_bytes) self->opts.max_download_bytes = 512ull << 20;
    if (!*self->opts.tier) snprintf (self->opts.tier, sizeof self->opts.tier, "Regular");
    if (self->opts.poll_ms <= 0) self->opts.poll_ms = 3000;
    if (self->opts.deadline_s <= 0) self->opts.deadline_s = 600;
    snprintf (self->auth, sizeof self->auth, "Authorization: Bearer %s", self->opts.api_key);
    self->cache = bmq_assets_cache_open (self->opts.cache_dir, err, errlen);
    if (!self->cache) { free (self); return NULL; }
    return self;
}

void bmq_hyper3d_destroy (bmq_hyper3d_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_assets_cache_close (&(*self_p)->cache);
    free (*self_p);
    *self_p = NULL;
}

bmq_assets_cache_t *bmq_hyper3d_cache (bmq_hyper3d_t *self) { return self->cache; }
const bmq_hyper3d_options_t *bmq_hyper3d_options (const bmq_hyper3d_t *self) { return &self->opts; }

/* ---- the API -------------------------------------------------------------- */

static int s_need_key (bmq_hyper3d_t *self, char *err, size_t errlen)
{
    if (*self->opts.api_key) return 0;
    snprintf (err, errlen, "Hyper3D needs an API key: set assets.hyper3d_api_key in the configuration or HYPER3D_API_KEY "
              "in the executor's environment");
    return -1;
}

/* Printable ASCII of an API text, clipped, for messages. */
static void s_quote (char *out, size_t outlen, const char *text, size_t max)
{
    size_t o = 0;
    for (size_t i = 0; text && text[i] && i < max && o + 1 < outlen; i++) {
        unsigned char c = (unsigned char) text[i];
        out[o++] = (c >= 0x20 && c < 0x7f) ? (char) c : ' ';
    }
    out[o] = 0;
}

/* POST base + path (a form, or a JSON body) → a JSON object (new reference);
 * NULL with err. retries: the policy's, or 0 for a call that creates. */
static json_t *s_api (bmq_hyper3d_t *self, const char *path, const char *const *form, const bmq_assets_http_file_t *files,
                      size_t nfiles, const json_t *body, bool creates, char *err, size_t errlen)
{
    if (s_need_key (self, err, errlen)) return NULL;
    char url[S_URL_MAX];
    snprintf (url, sizeof url, "%s%s", self->opts.base_url, path);
    char *text = body ? json_dumps (body, JSON_COMPACT) : NULL;
    const char *headers[] = { self->auth, NULL };
    bmq_assets_http_request_t req = {
        .url = url, .max_bytes = self->opts.max_json_bytes, .expect_type = "application/json", .what = "the Hyper3D API",
        .headers = headers, .form = form, .files = files, .nfiles = nfiles,
        .post_body = text, .post_len = text ? strlen (text) : 0, .post_type = text ? "application/json" : NULL,
    };
    bmq_assets_http_policy_t policy = self->opts.http;
    if (creates) policy.retries = -1;           /* negative: 0 (a 0 would mean the default) */
    char shown[S_URL_MAX + 8];
    snprintf (shown, sizeof shown, "POST %s", path);
    int status = 0;
    json_t *doc = bmq_assets_http_json (&req, &policy, shown, &status, err, errlen);
    free (text);
    if (!doc) {
        if (status == 401 || status == 403) {
            size_t n = strlen (err);
            snprintf (err + n, errlen - n, ": the API key was refused (assets.hyper3d_api_key / HYPER3D_API_KEY)");
        }
        return NULL;
    }
    const char *refusal = json_string_value (json_object_get (doc, "error"));
    if (refusal && *refusal) {
        char q[300];
        s_quote (q, sizeof q, refusal, 240);
        snprintf (err, errlen, "the Hyper3D API refused POST %s: %s", path, q);
        json_decref (doc);
        return NULL;
    }
    return doc;
}

static bool s_uuid_ok (const char *s) { return s_word_ok (s, 64, "-"); }

const char *bmq_hyper3d_image_magic (const void *data, size_t len)
{
    if (data && len >= 8 && !memcmp (data, "\x89PNG\r\n\x1a\n", 8)) return "image/png";
    if (data && len >= 3 && !memcmp (data, "\xff\xd8\xff", 3)) return "image/jpeg";
    return NULL;
}

void bmq_hyper3d_images_free (bmq_hyper3d_image_t *images, size_t n)
{
    for (size_t i = 0; images && i < n; i++) { free (images[i].data); images[i].data = NULL; images[i].len = 0; }
}

int bmq_hyper3d_images_decode (const json_t *images, bmq_hyper3d_image_t *out, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    if (!images || json_is_null (images)) return 0;
    size_t count = json_array_size (images);
    if (!json_is_array (images) || count < 1 || count > BMQ_HYPER3D_IMAGES_MAX) {
        snprintf (err, errlen, "images must be a list of 1..%d images, not %s%zu", BMQ_HYPER3D_IMAGES_MAX,
                  json_is_array (images) ? "" : "a non-list ", count);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *item = json_array_get (images, i);
        const char *type = json_string_value (json_object_get (item, "type"));
        const char *data = json_string_value (json_object_get (item, "data"));
        const char *want = type && !strcmp (type, "image/png") ? "image/png" : type && !strcmp (type, "image/jpeg") ? "image/jpeg" : NULL;
        size_t b64 = data ? strlen (data) : 0, cap = b64 / 4 * 3, len = 0;
        unsigned char *bytes = NULL;
        if (!json_is_object (item)) snprintf (err, errlen, "image %zu is not an object {type, data}", i + 1);
        else if (!want) snprintf (err, errlen, "image %zu has type \"%.40s\": only image/png and image/jpeg are taken", i + 1, type ? type : "");
        else if (!b64) snprintf (err, errlen, "image %zu has no data (base64 of the %s bytes)", i + 1, want);
        else if (b64 % 4 || cap > BMQ_HYPER3D_IMAGE_MAX + 2)
            snprintf (err, errlen, b64 % 4 ? "image %zu's data is not valid base64 (its length is not a multiple of 4)"
                      : "image %zu is larger than %u bytes (8 MiB) decoded", i + 1, BMQ_HYPER3D_IMAGE_MAX);
        else if (!(bytes = malloc (cap ? cap : 1))) snprintf (err, errlen, "out of memory decoding image %zu", i + 1);
        else if (sodium_base642bin (bytes, cap, data, b64, NULL, &len, NULL, sodium_base64_VARIANT_ORIGINAL))
            snprintf (err, errlen, "image %zu's data is not valid base64", i + 1);
        else if (!len || len > BMQ_HYPER3D_IMAGE_MAX) snprintf (err, errlen, "image %zu is larger than %u bytes (8 MiB) decoded", i + 1, BMQ_HYPER3D_IMAGE_MAX);
        else if (bmq_hyper3d_image_magic (bytes, len) != want)
            snprintf (err, errlen, "image %zu says %s but its bytes are %s", i + 1, want,
                      bmq_hyper3d_image_magic (bytes, len) ? bmq_hyper3d_image_magic (bytes, len) : "neither a PNG nor a JPEG");
        else {
            out[i] = (bmq_hyper3d_image_t) { .type = want, .data = bytes, .len = len };
            *n = i + 1;
            continue;
        }
        free (bytes);
        bmq_hyper3d_images_free (out, *n);
        *n = 0;
        return -1;
    }
    return 0;
}

int bmq_hyper3d_create (bmq_hyper3d_t *self, const char *prompt, const char *tier, bmq_hyper3d_task_t *task,
                        char *err, size_t errlen)
{
    return bmq_hyper3d_create_with (self, prompt, tier, NULL, 0, task, err, errlen);
}

int bmq_hyper3d_create_with (bmq_hyper3d_t *self, const char *prompt, const char *tier, const bmq_hyper3d_image_t *images,
                             size_t nimages, bmq_hyper3d_task_t *task, char *err, size_t errlen)
{
    memset (task, 0, sizeof *task);
    size_t n = prompt ? strlen (prompt) : 0;
    if (nimages > BMQ_HYPER3D_IMAGES_MAX) { snprintf (err, errlen, "at most %d images, not %zu", BMQ_HYPER3D_IMAGES_MAX, nimages); return -1; }
    if ((!n && !nimages) || n > BMQ_HYPER3D_PROMPT_MAX) {
        snprintf (err, errlen, "the prompt must be 1..%d bytes, not %zu%s", BMQ_HYPER3D_PROMPT_MAX, n, nimages ? "" : " (or give images)");
        return -1;
    }
    const char *t = tier && *tier ? tier : self->opts.tier;
    if (!s_word_ok (t, 31, "-_")) { snprintf (err, errlen, "tier \"%.40s\" is not a Hyper3D tier name (e.g. Regular, Sketch)", t); return -1; }
    bmq_assets_http_file_t files[BMQ_HYPER3D_IMAGES_MAX];
    char names[BMQ_HYPER3D_IMAGES_MAX][32];
    for (size_t i = 0; i < nimages; i++) {
        const char *type = bmq_hyper3d_image_magic (images[i].data, images[i].len);
        if (!type || images[i].len > BMQ_HYPER3D_IMAGE_MAX || !images[i].type || strcmp (type, images[i].type)) {
            snprintf (err, errlen, "image %zu is not a PNG or JPEG of at most %u bytes matching its type", i + 1, BMQ_HYPER3D_IMAGE_MAX);
            return -1;
        }
        snprintf (names[i], sizeof names[i], "image_%zu.%s", i + 1, strcmp (type, "image/png") ? "jpg" : "png");
        files[i] = (bmq_assets_http_file_t) { .name = "images", .filename = names[i], .type = type, .data = images[i].data, .len = images[i].len };
    }
    const char *form_text[] = { "prompt", prompt, "tier", t, "geometry_file_format", "glb", NULL };
    const char *const *form = n ? form_text : form_text + 2;
    json_t *doc = s_api (self, "/v2/rodin", form, files, nimages, NULL, true, err, errlen);
    if (!doc) return -1;
    const char *uuid = json_string_value (json_object_get (doc, "uuid"));
    json_t *jobs = json_object_get (doc, "jobs");
    const char *key = json_string_value (json_object_get (jobs, "subscription_key"));
    int rc = -1;
    if (!s_uuid_ok (uuid)) snprintf (err, errlen, "the Hyper3D API's answer to POST /v2/rodin has no task uuid ([A-Za-z0-9-], 1..64)");
    else if (!key || !*key || strlen (key) > BMQ_HYPER3D_KEY_MAX || !s_word_ok (key, BMQ_HYPER3D_KEY_MAX, "-_.+/=:"))
        snprintf (err, errlen, "the Hyper3D API's answer to POST /v2/rodin has no usable jobs.subscription_key (task %s)", uuid);
    else {
        snprintf (task->uuid, sizeof task->uuid, "%s", uuid);
        snprintf (task->subscription_key, sizeof task->subscription_key, "%s", key);
        rc = 0;
    }
    json_decref (doc);
    return rc;
}

int bmq_hyper3d_status (bmq_hyper3d_t *self, const bmq_hyper3d_task_t *task, bmq_hyper3d_state_t *state,
                        char *reason, size_t reasonlen, char *err, size_t errlen)
{
    if (reasonlen) reason[0] = 0;
    json_t *body = json_pack ("{s:s}", "subscription_key", task->subscription_key);
    json_t *doc = s_api (self, "/v2/status", NULL, NULL, 0, body, false, err, errlen);
    json_decref (body);
    if (!doc) return -1;
    json_t *jobs = json_object_get (doc, "jobs");
    if (!json_is_array (jobs) || json_array_size (jobs) == 0 || json_array_size (jobs) > 64) {
        snprintf (err, errlen, "the Hyper3D API's status for task %s has no jobs list (1..64 entries)", task->uuid);
        json_decref (doc);
        return -1;
    }
    size_t i, done = 0, generating = 0;
    json_t *job;
    bool failed = false;
    json_array_foreach (jobs, i, job) {
        const char *st = json_string_value (json_object_get (job, "status"));
        if (!st) {
            snprintf (err, errlen, "the Hyper3D API's status for task %s: job %zu has no status string", task->uuid, i);
            json_decref (doc);
            return -1;
        }
        if (!strcmp (st, "Done")) done++;
        else if (!strcmp (st, "Generating")) generating++;
        else if (!strcmp (st, "Failed") || !strcmp (st, "Canceled") || !strcmp (st, "Cancelled")) {
            if (!failed) {
                const char *msg = json_string_value (json_object_get (job, "message"));
                char q[300];
                s_quote (q, sizeof q, msg && *msg ? msg : "", 240);
                if (*q) snprintf (reason, reasonlen, "%s", q);
                else if (strcmp (st, "Failed")) snprintf (reason, reasonlen, "the job was %s at Hyper3D", st);
            }
            failed = true;
        }
        /* Waiting, or a state this client does not know yet: still waiting (the deadline bounds it) */
    }
    size_t n = json_array_size (jobs);
    json_decref (doc);
    *state = failed ? BMQ_HYPER3D_FAILED : done == n ? BMQ_HYPER3D_DONE
           : generating ? BMQ_HYPER3D_GENERATING : BMQ_HYPER3D_WAITING;
    return 0;
}

/* ---- fetch ---------------------------------------------------------------- */

typedef struct {
    bmq_assets_cache_writer_t *w;
    const atomic_bool *stop;
    unsigned char head[4];
    size_t nhead;
    char err[512];
} s_sink_t;

static int s_sink (void *ctx, const void *data, size_t len)
{
    s_sink_t *s = ctx;
    if (s->stop && atomic_load (s->stop)) { snprintf (s->err, sizeof s->err, "cancelled"); return -1; }
    for (size_t i = 0; i < len && s->nhead < 4; i++) s->head[s->nhead++] = ((const unsigned char *) data)[i];
    return bmq_assets_cache_write (s->w, data, len, s->err, sizeof s->err);
}

static int s_reset (void *ctx)
{
    s_sink_t *s = ctx;
    s->nhead = 0;
    return bmq_assets_cache_rewind (s->w, s->err, sizeof s->err);
}

static void s_key (char *out, size_t len, const char *uuid)
{
    snprintf (out, len, "hyper3d/%s/model/glb", uuid);
}

static bmq_asset_bundle_t *s_from_cache (bmq_hyper3d_t *self, const char *uuid, char *err, size_t errlen)
{
    char key[128];
    s_key (key, sizeof key, uuid);
    json_t *doc = bmq_assets_cache_get_manifest (self->cache, key, err, errlen);
    if (!doc) return NULL;
    char why[512] = "";
    bmq_asset_bundle_t *b = bmq_asset_bundle_from_json (doc, why, sizeof why);
    json_decref (doc);
    if (!b) { snprintf (err, errlen, "cache for %s: %s", key, why); return NULL; }
    if (strcmp (b->source, "hyper3d") || strcmp (b->id, uuid) || strcmp (b->kind, "model") || strcmp (b->format, "glb")
        || strcmp (b->resolution, S_AS_MADE)) {
        snprintf (err, errlen, "cache for %s: its manifest names another asset (%s/%s/%s/%s)", key, b->source, b->id, b->kind, b->format);
        bmq_asset_bundle_destroy (&b);
        return NULL;
    }
    for (size_t i = 0; i < b->nfiles; i++)
        if (!bmq_assets_cache_has (self->cache, b->files[i].sha256, b->files[i].size)) {
            bmq_asset_bundle_destroy (&b);
            err[0] = 0;
            return NULL;
        }
    b->resolution[0] = 0;
    b->from_cache = true;
    return b;
}

static bool s_ends_glb (const char *name)
{
    size_t n = strlen (name);
    return n >= 4 && !strcasecmp (name + n - 4, ".glb");
}

/* The URL of the list's first .glb entry, checked; -1 with err. */
static int s_pick (bmq_hyper3d_t *self, const json_t *doc, const char *uuid, char *url, size_t urllen, char *err, size_t errlen)
{
    json_t *list = json_object_get (doc, "list");
    if (!json_is_array (list)) { snprintf (err, errlen, "the Hyper3D API's download answer for task %s has no list of files", uuid); return -1; }
    size_t i;
    json_t *e;
    json_array_foreach (list, i, e) {
        if (i >= S_LIST_MAX) break;
        json_t *name = json_object_get (e, "name"), *u = json_object_get (e, "url");
        if (!json_is_string (name) || strlen (json_string_value (name)) != json_string_length (name)
            || !s_ends_glb (json_string_value (name)))
            continue;
        if (!json_is_string (u) || json_string_length (u) > S_URL_MAX || strlen (json_string_value (u)) != json_string_length (u)) {
            snprintf (err, errlen, "task %s: the .glb entry's URL is not a string of at most %d bytes", uuid, S_URL_MAX);
            return -1;
        }
        char why[600];
        if (bmq_assets_check_url (json_string_value (u), self->opts.download_hosts, "assets.hyper3d_download_hosts", why, sizeof why)) {
            snprintf (err, errlen, "task %s, file %s: %s", uuid, S_MAIN, why);
            return -1;
        }
        snprintf (url, urllen, "%s", json_string_value (u));
        return 0;
    }
    snprintf (err, errlen, "task %s: the download list names no .glb file (the job may not be done)", uuid);
    return -1;
}

bmq_asset_bundle_t *bmq_hyper3d_fetch (bmq_hyper3d_t *self, const char *uuid, const atomic_bool *stop,
                                       char *err, size_t errlen)
{
    if (!s_uuid_ok (uuid)) { snprintf (err, errlen, "asset id \"%.80s\" is not a Hyper3D task uuid ([A-Za-z0-9-], 1..64)", uuid ? uuid : ""); return NULL; }
    err[0] = 0;
    bmq_asset_bundle_t *b = s_from_cache (self, uuid, err, errlen);
    if (b || *err) return b;
    json_t *body = json_pack ("{s:s}", "task_uuid", uuid);
    json_t *doc = s_api (self, "/v2/download", NULL, NULL, 0, body, false, err, errlen);
    json_decref (body);
    if (!doc) return NULL;
    char url[S_URL_MAX + 1];
    int rc = s_pick (self, doc, uuid, url, sizeof url, err, errlen);
    json_decref (doc);
    if (rc) return NULL;

    s_sink_t s = { .stop = stop };
    s.w = bmq_assets_cache_begin (self->cache, err, errlen);
    if (!s.w) return NULL;
    char what[160], cap[128];
    snprintf (what, sizeof what, "file %s of task %s", S_MAIN, uuid);
    snprintf (cap, sizeof cap, "assets.max_download_mb (%llu bytes)", (unsigned long long) self->opts.max_download_bytes);
    bmq_assets_http_request_t req = {       /* no headers: the key never goes to the download host */
        .url = url, .max_bytes = self->opts.max_download_bytes, .cap_label = cap, .what = what,
        .sink = s_sink, .reset = s_reset, .ctx = &s, .sink_err = s.err, .sink_err_len = sizeof s.err,
    };
    bmq_assets_http_error_t herr;
    if (bmq_assets_http_get (&req, &self->opts.http, NULL, NULL, &herr)) {
        snprintf (err, errlen, "%s", herr.message);
        bmq_assets_cache_abort (&s.w);
        return NULL;
    }
    uint64_t size = bmq_assets_cache_written (s.w);
    if (size < 12 || s.nhead < 4 || memcmp (s.head, "glTF", 4)) {
        char host[256];
        bmq_assets_http_host (url, host, sizeof host);
        snprintf (err, errlen, "%s from %s is not a binary glTF (%llu bytes, no \"glTF\" header): refused", what, host,
                  (unsigned long long) size);
        bmq_assets_cache_abort (&s.w);
        return NULL;
    }
    char sha[65];
    if (bmq_assets_cache_commit (&s.w, sha, err, errlen)) return NULL;
    if (!(b = bmq_asset_bundle_new ())) { snprintf (err, errlen, "out of memory"); return NULL; }
    snprintf (b->source, sizeof b->source, "hyper3d");
    snprintf (b->id, sizeof b->id, "%s", uuid);
    snprintf (b->kind, sizeof b->kind, "model");
    snprintf (b->resolution, sizeof b->resolution, S_AS_MADE);
    snprintf (b->format, sizeof b->format, "glb");
    snprintf (b->main, sizeof b->main, S_MAIN);
    rc = bmq_asset_bundle_add (b, S_MAIN, sha, size, NULL, err, errlen);
    if (rc == 0) {
        char key[128];
        s_key (key, sizeof key, uuid);
        json_t *m = bmq_asset_bundle_to_json (b);
        rc = bmq_assets_cache_put_manifest (self->cache, key, m, err, errlen);
        json_decref (m);
    }
    if (rc) bmq_asset_bundle_destroy (&b);
    else b->resolution[0] = 0;              /* a generated model has one size: no resolution (the link's key carries none) */
    return b;
}

/* ---- the source kind (assets_sources.c) ------------------------------------ */

static void *s_open (const bmq_config_t *cfg, char *err, size_t errlen)
{
    bmq_hyper3d_options_t opts;
    if (bmq_hyper3d_options_from_config (&opts, cfg, err, errlen)) return NULL;
    return bmq_hyper3d_new (&opts, err, errlen);
}

static void s_close (void **client_p) { bmq_hyper3d_destroy ((bmq_hyper3d_t **) client_p); }
static bmq_assets_cache_t *s_cache (void *client) { return bmq_hyper3d_cache (client); }

static json_t *s_search (void *client, const char *type, const char *query, char *err, size_t errlen)
{
    (void) client; (void) type; (void) query;
    snprintf (err, errlen, "Hyper3D generates models; it has no search (use asset.generate)");
    return NULL;
}

static bmq_asset_bundle_t *s_fetch (void *client, const char *id, const char *type, const char *resolution,
                                    const char *format, char *err, size_t errlen)
{
    (void) resolution;          /* a generated model has one size */
    if (type && *type && strcmp (type, "model")) { snprintf (err, errlen, "Hyper3D makes models, not \"%.40s\"", type); return NULL; }
    if (format && *format && strcmp (format, "glb")) { snprintf (err, errlen, "Hyper3D models come as glb, not \"%.40s\"", format); return NULL; }
    return bmq_hyper3d_fetch (client, id, NULL, err, errlen);
}

const bmq_asset_source_kind_t bmq_asset_source_hyper3d = {
    "hyper3d", s_open, s_close, s_cache, s_search, s_fetch
};
