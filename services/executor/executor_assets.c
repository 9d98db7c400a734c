/* executor_assets — asset sources in the executor (issue 16).
 *
 * The executor owns the Blender link, and an asset's bytes reach Blender as
 * blobs on it, so the assets client lives here (a sixth service would add a
 * hop for the bytes). Searches and downloads are slow and blocking (libcurl,
 * retries with back-off), so they run on a thread of their own, an actor that
 * owns the Poly Haven client and its cache; the executor's loop never waits
 * on them:
 *
 *   main → actor  "SEARCH" ptr   an s_search_t: fills result or error
 *   main → actor  "FETCH"  ptr   an s_work_t: fetches the asset (its bundle
 *                                 and asset_stage's args) and reads its first
 *                                 chunk, or fills error
 *   main → actor  "NEXT"   ptr   reads the bundle's next chunk
 *   actor → main  "DONE"   ptr   (main owns ptr again)
 *
 * An asset goes to Blender in chunks of at most assets.stage_chunk_bytes (the
 * link's frames hold 64 MiB; 8k texture sets are larger), read from the cache
 * as they are sent, each file's sha256 checked as its last byte is read, so
 * the executor never holds more than one chunk of an asset.
 *
 * A plan with asset.import steps first goes through BMQ_PHASE_ASSETS: each
 * distinct asset is fetched (from the cache when it is there) and staged in
 * Blender with asset_stage, one after the other; then the plan runs as any
 * other, its import steps reading the staged bytes. A fetch that fails ends
 * the plan "failed" before anything ran, with the client's reason, except
 * (issue 26) an optional asset's: when the source could not be reached
 * (bmq_assets_http_unreachable: no answer, or only "try later", to the last
 * retry; the cache did not have it) and every import of that asset declares
 * fallback_color, each such step becomes its built-in look (a texture:
 * object.material on its target; an HDRI: scene.world.color), its step result
 * carries a note, and the plan's end carries "notes" ("wooden: Poly Haven
 * unreachable, used the built-in wood look"). A refusal (no such asset, a bad
 * answer, a cap) still fails the plan: only a source out of reach is guessed
 * around. */
#include "executor_internal.h"
#include "assets_http.h"
#include "assets_sources.h"
#include "bmq_assets_proto.h"
#include "blender_link.h"
#include "log.h"

typedef enum { S_SEARCH, S_FETCH } s_kind_t;

typedef struct {
    s_kind_t kind;
    char     source[16], id[80], type[16], resolution[8], format[8], query[256];
    zframe_t *rid;                  /* SEARCH: the requester */
    char     cid[BMQ_MAX_ID + 1];
    json_t  *result;                /* SEARCH: the hits; FETCH: asset_stage's args (without offset) */
    bmq_asset_bundle_t        *bundle;      /* FETCH: what is staged … */
    bmq_asset_bundle_reader_t *reader;      /* … read chunk by chunk from the cache */
    bmq_assets_cache_t        *cache;       /* the source's (the actor's; borrowed) */
    uint8_t *blob;                  /* FETCH: the current chunk */
    size_t   blob_len, chunk_max;
    uint64_t offset, total;         /* the chunk's place in the bundle; the bundle's bytes */
    bool     cached;
    bool     unreachable;           /* FETCH failed: the source could not be reached (not a refusal) */
    char     error[600];
    double   started_us;
    double   stage_started_us;      /* FETCH: the first chunk handed to the link (staging's start) */
} s_work_t;

static void s_work_free (s_work_t **w_p);

static void s_work_free_any (void **w_p)
{
    s_work_free ((s_work_t **) w_p);
}

static void s_work_free (s_work_t **w_p)
{
    s_work_t *w = *w_p;
    if (!w) return;
    zframe_destroy (&w->rid);
    json_decref (w->result);
    bmq_asset_bundle_reader_close (&w->reader);
    bmq_asset_bundle_destroy (&w->bundle);
    free (w->blob);
    free (w);
    *w_p = NULL;
}

/* ---- the actor (its own thread) -------------------------------------------- */

/* The bundle's next chunk into w->blob (w->offset is where it starts). */
static void s_read_chunk (s_work_t *w)
{
    w->offset = bmq_asset_bundle_reader_offset (w->reader);
    if (bmq_asset_bundle_reader_next (w->reader, w->blob, w->chunk_max, &w->blob_len, w->error, sizeof w->error) == 0)
        return;
    json_decref (w->result);        /* no result: the answer is the error */
    w->result = NULL;
}

static void s_do (bmq_assets_sources_t *sources, s_work_t *w)
{
    if (w->kind == S_SEARCH) {
        w->result = bmq_assets_sources_search (sources, w->source, w->type, w->query, w->error, sizeof w->error);
        return;
    }
    bmq_assets_http_unreachable_clear ();
    w->bundle = bmq_assets_sources_fetch (sources, w->source, w->id, w->type, w->resolution, w->format,
                                          w->error, sizeof w->error);
    if (!w->bundle) { w->unreachable = bmq_assets_http_unreachable (); return; }
    w->total = bmq_asset_bundle_total (w->bundle);
    w->cache = bmq_assets_sources_cache (sources, w->source);
    w->chunk_max = w->total < w->chunk_max ? (size_t) (w->total ? w->total : 1) : w->chunk_max;
    w->blob = malloc (w->chunk_max);
    w->reader = w->blob ? bmq_asset_bundle_reader (w->bundle, w->cache) : NULL;
    if (!w->reader) { snprintf (w->error, sizeof w->error, "out of memory for a %zu-byte chunk", w->chunk_max); return; }
    json_t *manifest = bmq_asset_bundle_manifest (w->bundle);
    w->cached = w->bundle->from_cache;
    const char *res = *w->bundle->resolution ? w->bundle->resolution : NULL;      /* Sketchfab, Hyper3D: none */
    w->result = json_pack ("{s:{s:s, s:s, s:s, s:s?, s:s}, s:s, s:O}", "key", "source", w->source, "id", w->id,
                           "type", w->type, "resolution", res, "format", w->bundle->format,
                           "main", w->bundle->main, "files", json_object_get (manifest, "files"));
    json_decref (manifest);
    s_read_chunk (w);
}

static size_t s_chunk_bytes (const bmq_config_t *cfg);

static void s_actor (zsock_t *pipe, void *args)
{
    size_t chunk = s_chunk_bytes (args);
    bmq_assets_sources_t *sources = bmq_assets_sources_new (args);
    bmq_info ("assets: serving %s", bmq_assets_sources_served (sources));
    zsock_signal (pipe, 0);
    while (true) {
        char *cmd = NULL;
        void *ptr = NULL;
        if (zsock_recv (pipe, "sp", &cmd, &ptr) == -1) break;
        bool term = !cmd || !strcmp (cmd, "$TERM");
        char cmd_name[8];
        snprintf (cmd_name, sizeof cmd_name, "%s", cmd ? cmd : "");
        free (cmd);
        if (term) break;
        if (!ptr) continue;
        if (!strcmp (cmd_name, "NEXT")) s_read_chunk (ptr);
        else {
            ((s_work_t *) ptr)->chunk_max = chunk;
            s_do (sources, ptr);
        }
        zsock_send (pipe, "sp", "DONE", ptr);
    }
    bmq_assets_sources_destroy (&sources);
}

/* Staged in chunks of this many bytes (assets.stage_chunk_bytes; the link's frames hold BMQ_LINK_MAX_BLOB). */
static size_t s_chunk_bytes (const bmq_config_t *cfg)
{
    int64_t n = bmq_config_int (cfg, "assets.stage_chunk_bytes");
    return (size_t) (n <= 0 || n > BMQ_LINK_MAX_BLOB ? BMQ_LINK_MAX_BLOB : n);
}

zactor_t *executor_assets_new (const bmq_config_t *cfg)
{
    bmq_assets_http_global_init ();     /* libcurl, before its thread uses it */
    return zactor_new (s_actor, (void *) cfg);
}

/* ---- searches ---------------------------------------------------------------- */

static void s_copy (char *dst, size_t len, const char *src)
{
    snprintf (dst, len, "%s", src ? src : "");
}

void executor_asset_search (executor_t *ex, const bmq_envelope_t *req, zframe_t *rid)
{
    s_work_t *w = calloc (1, sizeof *w);
    if (!w) return;
    w->kind = S_SEARCH;
    s_copy (w->source, sizeof w->source, bmq_body_str (req, "source"));
    s_copy (w->type, sizeof w->type, bmq_body_str (req, "type"));
    s_copy (w->query, sizeof w->query, bmq_body_str (req, "query"));
    snprintf (w->cid, sizeof w->cid, "%s", req->cid);
    w->rid = zframe_dup (rid);
    w->started_us = bmq_mono_us ();
    zsock_send (ex->assets, "sp", "SEARCH", w);
}

/* ---- a plan's assets ------------------------------------------------------------ */

/* The staged key of an asset.import step's params. */
static void s_key_of (const json_t *p, char *key, size_t keylen)
{
    const char *res = json_string_value (json_object_get (p, "resolution"));
    snprintf (key, keylen, "%s/%s/%s/%s/%s", json_string_value (json_object_get (p, "source")) ?: "",
              json_string_value (json_object_get (p, "id")) ?: "", json_string_value (json_object_get (p, "type")) ?: "",
              res ? res : "1k", json_string_value (json_object_get (p, "format")) ?: "");
}

/* Keep a note printable ASCII (a cut may land inside a character; a server's words are hostile). */
static void s_ascii (char *text)
{
    for (unsigned char *c = (unsigned char *) text; *c; c++)
        if (*c < 0x20 || *c > 0x7e) *c = '?';
}

/* A number param, or dflt. */
static double s_num (const json_t *p, const char *name, double dflt)
{
    json_t *v = json_object_get (p, name);
    return json_is_number (v) ? json_number_value (v) : dflt;
}

/* An asset w could not fetch because its source was out of reach: when every
 * import of it in the plan declares a fallback (a texture with a target, an
 * HDRI), each becomes its built-in look, with a note; true then (the plan goes
 * on). False, nothing changed: the plan fails as before. */
static bool s_fall_back (bmq_job_t *job, const s_work_t *w)
{
    char want[200], key[200];
    snprintf (want, sizeof want, "%s/%s/%s/%s/%s", w->source, w->id, w->type, w->resolution, w->format);
    size_t i, uses = 0;
    json_t *step;
    json_array_foreach (job->plan, i, step) {
        json_t *p = json_object_get (step, "params");
        if (strcmp (json_string_value (json_object_get (step, "operation")) ?: "", "asset.import")) continue;
        s_key_of (p, key, sizeof key);
        if (strcmp (key, want)) continue;
        json_t *c = json_object_get (p, "fallback_color");
        bool texture = !strcmp (w->type, "texture"), hdri = !strcmp (w->type, "hdri");
        if (!json_is_array (c) || (!texture && !hdri) || (texture && !json_is_string (json_object_get (step, "target"))))
            return false;           /* asked for by id, or no look to fall back on: the plan fails */
        uses++;
    }
    if (!uses) return false;
    json_t *plan = json_deep_copy (job->plan);        /* the request's plan is shared: the job runs its own copy */
    if (!plan) return false;
    json_decref (job->plan);
    job->plan = plan;
    const char *source = bmq_asset_source_name (w->source);
    char plan_note[400] = "";
    json_array_foreach (job->plan, i, step) {
        json_t *p = json_object_get (step, "params");
        if (strcmp (json_string_value (json_object_get (step, "operation")) ?: "", "asset.import")) continue;
        s_key_of (p, key, sizeof key);
        if (strcmp (key, want)) continue;
        const char *name = json_string_value (json_object_get (p, "fallback_name"));
        const char *colon = name ? strstr (name, ": ") : NULL;
        const char *look = colon ? colon + 2 : name && *name ? name : "the fallback colour";
        const char *target = json_string_value (json_object_get (step, "target"));
        char note[900], idx[24];
        snprintf (note, sizeof note, "%s unreachable (%.500s): used %.80s instead of the %s %.64s%s%.64s", source, w->error,
                  look, w->type, w->id, target ? " on " : "", target ? target : "");
        s_ascii (note);
        if (!*plan_note) {
            if (colon) snprintf (plan_note, sizeof plan_note, "%.*s: %s unreachable, used %.80s", (int) (colon - name), name,
                                 source, look);
            else snprintf (plan_note, sizeof plan_note, "%s:%.64s: %s unreachable, used %.80s", w->source, w->id, source, look);
            s_ascii (plan_note);
        }
        json_t *fallback = !strcmp (w->type, "texture")
            ? json_pack ("{s:s, s:O, s:{s:O, s:f, s:f}}", "operation", "object.material", "target",
                         json_object_get (step, "target"), "params", "color", json_object_get (p, "fallback_color"),
                         "roughness", s_num (p, "fallback_roughness", 0.5), "metallic", s_num (p, "fallback_metallic", 0.0))
            : json_pack ("{s:s, s:{s:O}}", "operation", "scene.world.color", "params", "value",
                         json_object_get (p, "fallback_color"));
        json_array_set_new (job->plan, i, fallback);
        snprintf (idx, sizeof idx, "%zu", i);
        json_object_set_new (job->fallbacks, idx, json_string (note));
    }
    json_array_append_new (job->notes, json_string (plan_note));
    bmq_warn ("plan %s: asset %s:%s: %s unreachable (%s): its %zu import%s use%s the fallback look", job->plan_id, w->source,
              w->id, source, w->error, uses, uses == 1 ? "" : "s", uses == 1 ? "s" : "");
    return true;
}

/* The plan's next asset.import step (from index *from) whose asset is not
 * staged yet: its key in w, or false when all are. */
static bool s_next_asset (bmq_job_t *job, s_work_t *w)
{
    for (; job->asset_next < job->total; job->asset_next++) {
        json_t *step = json_array_get (job->plan, job->asset_next);
        if (strcmp (json_string_value (json_object_get (step, "operation")) ?: "", "asset.import")) continue;
        json_t *p = json_object_get (step, "params");
        s_copy (w->source, sizeof w->source, json_string_value (json_object_get (p, "source")));
        s_copy (w->id, sizeof w->id, json_string_value (json_object_get (p, "id")));
        s_copy (w->type, sizeof w->type, json_string_value (json_object_get (p, "type")));
        s_copy (w->resolution, sizeof w->resolution, json_string_value (json_object_get (p, "resolution")) ?: "1k");
        s_copy (w->format, sizeof w->format, json_string_value (json_object_get (p, "format")));
        char key[200];
        snprintf (key, sizeof key, "%s/%s/%s/%s/%s", w->source, w->id, w->type, w->resolution, w->format);
        job->asset_next++;
        if (json_object_get (job->assets_staged, key)) continue;     /* the same asset twice: staged once */
        json_object_set_new (job->assets_staged, key, json_true ());
        return true;
    }
    return false;
}

bool executor_plan_assets (executor_t *ex, bmq_job_t *job)
{
    s_work_t *w = calloc (1, sizeof *w);
    if (!w) return false;
    w->kind = S_FETCH;
    if (!s_next_asset (job, w)) { free (w); return false; }
    snprintf (w->cid, sizeof w->cid, "%s", job->cid);
    w->started_us = bmq_mono_us ();
    char what[200];
    snprintf (what, sizeof what, "%s:%s (%s %s%s%s)", w->source, w->id, w->type, w->resolution, *w->format ? " " : "", w->format);
    executor_progress (ex, job, json_pack ("{s:s, s:i, s:s, s:s, s:s}", "event", "asset", "step", 0, "status", "fetching",
                                           "operation", "asset.import", "object", what));
    job->phase = BMQ_PHASE_ASSETS;
    ex->waiting = true;
    zsock_send (ex->assets, "sp", "FETCH", w);
    return true;
}

/* Send the chunk w holds (asset_stage with its offset and the bundle's total);
 * w waits on the job for the answer. */
static void s_send_chunk (executor_t *ex, bmq_job_t *job, s_work_t *w)
{
    json_t *args = json_deep_copy (w->result);
    json_object_set_new (args, "offset", json_integer ((json_int_t) w->offset));
    json_object_set_new (args, "total", json_integer ((json_int_t) w->total));
    char *text = json_dumps (args, JSON_COMPACT);
    json_decref (args);
    char timeout[16];
    snprintf (timeout, sizeof timeout, "%d", ex->command_timeout);
    zmsg_t *msg = zmsg_new ();
    zmsg_addstr (msg, "CALL");
    zmsg_addstr (msg, "job");
    zmsg_addstr (msg, "asset_stage");
    zmsg_addstr (msg, text ? text : "{}");
    zmsg_addstr (msg, timeout);
    zmsg_addmem (msg, w->blob, w->blob_len);
    zmsg_send (&msg, ex->blender);
    free (text);
    job->asset_work = w;
    job->asset_work_free = s_work_free_any;
    ex->waiting = true;             /* the answer comes as a RESULT in BMQ_PHASE_ASSETS */
}

/* A fetch (or a next chunk) came back: send it to Blender, or end the plan,
 * nothing run, with the reason. False: w is not kept (the caller frees it). */
static bool s_fetched (executor_t *ex, s_work_t *w)
{
    bmq_job_t *job = ex->current;
    if (!job || job->kind != BMQ_JOB_PLAN || job->phase != BMQ_PHASE_ASSETS || strcmp (job->cid, w->cid)) return false;
    ex->waiting = false;
    if (!w->result && !w->bundle && w->unreachable && s_fall_back (job, w)) {
        executor_progress (ex, job, json_pack ("{s:s, s:i, s:s, s:s, s:o}", "event", "asset", "step", 0, "status", "fallback",
                                               "operation", "asset.import", "note",
                                               json_deep_copy (json_array_get (job->notes, json_array_size (job->notes) - 1))));
        job->phase = BMQ_PHASE_BEGIN;
        executor_plan_assets (ex, job);     /* the next asset, or the plan runs (executor_pump) */
        return false;
    }
    if (!w->result) {
        char msg[700];
        snprintf (msg, sizeof msg, "asset %s:%.64s could not be %s: %.500s; nothing was run", w->source, w->id,
                  w->bundle ? "read from the cache" : "fetched", w->error);
        executor_finish_plan (ex, "failed", msg, 0, NULL);
        return false;
    }
    if (w->offset == 0)
        bmq_info ("asset %s:%s %s (%llu bytes, %.1f ms): staging it in Blender%s", w->source, w->id,
                  w->cached ? "from the cache" : "downloaded", (unsigned long long) w->total,
                  (bmq_mono_us () - w->started_us) / 1000.0, w->blob_len < w->total ? " in chunks" : "");
    if (w->offset == 0) w->stage_started_us = bmq_mono_us ();
    s_send_chunk (ex, job, w);
    return true;
}

void executor_on_assets (executor_t *ex)
{
    char *cmd = NULL;
    void *ptr = NULL;
    if (zsock_recv (ex->assets, "sp", &cmd, &ptr) == -1) return;
    free (cmd);
    s_work_t *w = ptr;
    if (!w) return;
    if (w->kind == S_SEARCH) {
        bmq_envelope_t env0 = { .type = BMQ_MSG_ASSET_SEARCH };
        snprintf (env0.cid, sizeof env0.cid, "%s", w->cid);
        bmq_envelope_t *reply = w->result
            ? bmq_envelope_new (BMQ_MSG_ASSET_RESULT, w->cid,
                                json_pack ("{s:s, s:O, s:f}", "source", w->source, "results", w->result,
                                           "duration_ms", (bmq_mono_us () - w->started_us) / 1000.0))
            : bmq_envelope_error (&env0, "asset_source", "%s", w->error);
        bmq_bus_send_and_destroy (ex->router, w->rid, &reply);
    }
    else if (s_fetched (ex, w)) return;
    s_work_free (&w);
}

/* asset_stage's answer: the next chunk, the next asset, or the plan itself. */
void executor_staged (executor_t *ex, int status, json_t *reply, const char *err)
{
    bmq_job_t *job = ex->current;
    s_work_t *w = job->asset_work;
    job->asset_work = NULL;
    bool ok = status == BMQ_LINK_OK && json_is_true (json_object_get (reply, "ok"));
    json_t *result = json_object_get (reply, "result");
    if (!ok || !w) {
        char msg[700];
        snprintf (msg, sizeof msg, "Blender could not take the asset: %s; nothing was run",
                  !w ? "no asset was being staged"
                  : status == BMQ_LINK_OK ? json_string_value (json_object_get (reply, "error")) ?: "no reason given"
                  : err && *err ? err : "the link dropped");
        s_work_free (&w);
        executor_finish_plan (ex, "failed", msg, 0, NULL);
        return;
    }
    if (!json_is_true (json_object_get (result, "staged"))) {      /* more chunks to come */
        if (job->cancel) {
            s_work_free (&w);
            executor_finish_plan (ex, job->orphaned ? "interrupted" : "cancelled", "cancelled while its assets were "
                                  "sent to Blender; nothing was run", 0, NULL);
            return;
        }
        uint64_t sent = w->offset + w->blob_len;
        char what[160];
        snprintf (what, sizeof what, "%s:%.64s %llu of %llu MiB sent", w->source, w->id,
                  (unsigned long long) (sent >> 20), (unsigned long long) ((w->total + (1 << 20) - 1) >> 20));
        executor_progress (ex, job, json_pack ("{s:s, s:i, s:s, s:s, s:s}", "event", "asset", "step", 0, "status",
                                               "staging", "operation", "asset.import", "object", what));
        ex->waiting = true;
        zsock_send (ex->assets, "sp", "NEXT", w);
        return;
    }
    /* staging's own time: the first chunk handed to the link -> Blender's reply to the last
     * (every chunk read from the cache, sent, and checked in Blender); bench_asset_stage reads it */
    double stage_ms = (bmq_mono_us () - w->stage_started_us) / 1000.0;
    bmq_info ("asset %s:%s staged in Blender: %llu bytes in %.3f ms", w->source, w->id, (unsigned long long) w->total, stage_ms);
    s_work_free (&w);
    executor_progress (ex, job, json_pack ("{s:s, s:i, s:s, s:s}", "event", "asset", "step", 0, "status", "staged",
                                           "operation", "asset.import"));
    job->phase = BMQ_PHASE_BEGIN;
    if (!executor_plan_assets (ex, job)) job->phase = BMQ_PHASE_BEGIN;     /* all staged: the plan runs */
}
