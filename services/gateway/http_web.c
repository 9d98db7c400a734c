/* http_web — the page, its bundle, and the routes only the page needs; see http_web.h. */
#include "http_web.h"
#include "http_bus.h"
#include "mcp_tools.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SLICE_MS        250         /* waits are cut in slices to notice shutdown */
#define FIRST_ANSWER_MS 200         /* an early refusal is answered as a JSON error */
#define KEEPALIVE_MS    15000
#define MAX_PROMPT      4096

/* The page runs only code and styles it was served with, talks only to this
 * origin, and is never framed. Blob images: previews are fetched, then shown. */
#define PAGE_CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; " \
                 "manifest-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* ---- the bundle -------------------------------------------------------------------------- */

static const bmq_web_asset_t *s_asset (const char *path)
{
    for (size_t i = 0; i < bmq_web_assets_count; i++)
        if (!strcmp (bmq_web_assets[i].path, path)) return &bmq_web_assets[i];
    return NULL;
}

static enum MHD_Result s_serve (bmq_http_req_t *req, const bmq_web_asset_t *a)
{
    const char *match = bmq_http_req_header (req, "If-None-Match");
    const char *accept = bmq_http_req_header (req, "Accept-Encoding");
    struct MHD_Response *resp;
    int status = 200;
    if (match && !strcmp (match, a->etag)) {
        resp = MHD_create_response_from_buffer (0, "", MHD_RESPMEM_PERSISTENT);
        status = 304;
    }
    else if (a->gz && accept && strstr (accept, "gzip")) {
        resp = MHD_create_response_from_buffer (a->gz_len, (void *) a->gz, MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header (resp, "Content-Encoding", "gzip");
    }
    else resp = MHD_create_response_from_buffer (a->len, (void *) a->data, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header (resp, "Content-Type", a->type);
    MHD_add_response_header (resp, "ETag", a->etag);
    MHD_add_response_header (resp, "Vary", "Accept-Encoding");
    MHD_add_response_header (resp, "Cache-Control", "no-cache");       /* revalidated: a new gateway may serve a new page */
    MHD_add_response_header (resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header (resp, "Referrer-Policy", "no-referrer");
    if (!strcmp (a->path, "/")) {
        MHD_add_response_header (resp, "Content-Security-Policy", PAGE_CSP);
        MHD_add_response_header (resp, "X-Frame-Options", "DENY");
        MHD_add_response_header (resp, "Cross-Origin-Opener-Policy", "same-origin");
    }
    return bmq_http_reply (req, status, resp);
}

enum MHD_Result bmq_http_web_index (bmq_http_req_t *req)
{
    const bmq_web_asset_t *a = s_asset ("/");
    if (!a) return bmq_http_reply_error (req, 500, "no_page", "this gateway was built without its page");
    return s_serve (req, a);
}

/* ---- talking to the gateway (as http_api does: the connection's own DEALER) --------------- */

static int s_timeout (bmq_http_req_t *req) { return bmq_http_ctx_options (req->ctx)->request_timeout_ms + 5000; }

/* Send `env` (taken) for the requester; its cid in cid. -1 when the bus is unusable. */
static int s_send (bmq_http_req_t *req, bmq_envelope_t **env_p, char *cid, size_t cidlen)
{
    bmq_envelope_t *env = *env_p;
    *env_p = NULL;
    snprintf (env->sender, sizeof env->sender, "http");
    if (!env->body) env->body = json_object ();
    json_object_set_new (env->body, "on_behalf_of", json_pack ("{s:s, s:s}", "name", req->who.name, "role", bmq_role_name (req->who.role)));
    snprintf (cid, cidlen, "%s", env->cid);
    bmq_http_bus_t *bus = bmq_http_req_bus (req);
    int rc = bus ? bmq_http_bus_send (bus, env) : -1;
    bmq_envelope_destroy (&env);
    return rc;
}

/* The first answer of story `cid` of one of the types `a`/`b` (or an error), waiting up to timeout_ms. */
static bmq_envelope_t *s_wait (bmq_http_req_t *req, const char *cid, bmq_msg_type_t a, bmq_msg_type_t b, int timeout_ms)
{
    bmq_http_bus_t *bus = bmq_http_req_bus (req);
    int64_t until = bmq_mono_ms () + timeout_ms;
    while (bus && bmq_mono_ms () < until && !bmq_http_ctx_stopping (req->ctx)) {
        bmq_envelope_t *env = bmq_http_bus_recv (bus, cid, SLICE_MS);
        if (env && (env->type == a || env->type == b || env->type == BMQ_MSG_ERROR)) return env;
        bmq_envelope_destroy (&env);
    }
    return NULL;
}

/* A gateway error as HTTP: the same codes as http_api (503 for a service that is down). */
static enum MHD_Result s_error (bmq_http_req_t *req, const bmq_envelope_t *env)
{
    if (!env) return bmq_http_reply_error (req, 504, "gateway_timeout", "no answer from the gateway in time");
    const char *code = bmq_body_str (env, "code") ? bmq_body_str (env, "code") : "gateway_error";
    const char *message = bmq_body_str (env, "message") ? bmq_body_str (env, "message") : "error";
    size_t n = strlen (code);
    int status = 502;
    if (!strcmp (code, "interrupted")) code = "blender_unavailable";
    if (!strcmp (code, "busy") || (n > 12 && !strcmp (code + n - 12, "_unavailable")) || !strcmp (code, "blender_unavailable")) status = 503;
    else if (!strcmp (code, "timeout")) status = 504;
    else if (!strcmp (code, "forbidden")) status = 403;
    else if (!strcmp (code, "bad_request") || !strcmp (code, "bad_message")) status = 400;
    else if (!strcmp (code, "unsupported")) status = 501;
    else if (!strcmp (code, "no_match")) status = 422;         /* the planner understood nothing: the prompt's, not the gateway's (issue 29) */
    return bmq_http_reply_error (req, status, code, "%s", message);
}

/* ---- GET /api/web/status, GET /api/web/preview.png ---------------------------------------- */

enum MHD_Result bmq_http_web_status (bmq_http_req_t *req)
{
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_STATUS_REQUEST, NULL, NULL);
    char cid[BMQ_MAX_ID + 1];
    if (s_send (req, &env, cid, sizeof cid)) return bmq_http_reply_error (req, 502, "gateway_error", "the gateway is not reachable");
    bmq_envelope_t *answer = s_wait (req, cid, BMQ_MSG_STATUS_REPLY, BMQ_MSG_STATUS_REPLY, s_timeout (req));
    enum MHD_Result rc = answer && answer->type == BMQ_MSG_STATUS_REPLY ? bmq_http_reply_json (req, 200, json_incref (answer->body))
                                                                       : s_error (req, answer);
    bmq_envelope_destroy (&answer);
    return rc;
}

static int s_query_int (bmq_http_req_t *req, const char *name, int fallback, int lo, int hi)
{
    const char *v = bmq_http_req_query (req, name);
    char *end = NULL;
    long n = v ? strtol (v, &end, 10) : fallback;
    return v && (*end || n < lo || n > hi) ? -1 : (int) n;
}

enum MHD_Result bmq_http_web_preview (bmq_http_req_t *req)
{
    int w = s_query_int (req, "width", 640, 16, 1920), h = s_query_int (req, "height", 480, 16, 1080);
    if (w < 0 || h < 0) return bmq_http_reply_error (req, 400, "bad_request", "width is 16..1920 and height 16..1080");
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL,
                                            json_pack ("{s:s, s:{s:i, s:i}}", "command", "render_preview", "args", "width", w, "height", h));
    char cid[BMQ_MAX_ID + 1];
    if (s_send (req, &env, cid, sizeof cid)) return bmq_http_reply_error (req, 502, "gateway_error", "the gateway is not reachable");
    bmq_envelope_t *answer = s_wait (req, cid, BMQ_MSG_SCENE_REPLY, BMQ_MSG_SCENE_REPLY, s_timeout (req));
    enum MHD_Result rc;
    if (!answer || answer->type != BMQ_MSG_SCENE_REPLY) rc = s_error (req, answer);
    else if (!answer->blob_len) rc = bmq_http_reply_error (req, 502, "no_image", "Blender returned no image");
    else {
        struct MHD_Response *resp = MHD_create_response_from_buffer (answer->blob_len, answer->blob, MHD_RESPMEM_MUST_COPY);
        MHD_add_response_header (resp, "Content-Type", "image/png");
        MHD_add_response_header (resp, "X-Content-Type-Options", "nosniff");
        rc = bmq_http_reply (req, 200, resp);
    }
    bmq_envelope_destroy (&answer);
    return rc;
}

/* ---- POST /api/web/chat: the request's story as Server-Sent Events ------------------------- */

typedef struct {
    bmq_http_ctx_t    *ctx;
    bmq_http_bus_t    *bus;             /* the connection's: outlives the response */
    char               cid[BMQ_MAX_ID + 1];
    bmq_http_pending_t out;             /* made, not yet read */
    int64_t            last_heard, last_write;
    int                idle_ms;
    bool               ended;
    char               who[64];         /* http.streams_per_token */
} s_story_t;

/* "event: TYPE\ndata: BODY\n\n" for an answer of the story (NULL for none);
 * *ended when it is the story's last. */
static char *s_story_event (const bmq_envelope_t *env, bool *ended)
{
    if (env->type == BMQ_MSG_HEARTBEAT) return NULL;
    if (env->type == BMQ_MSG_ERROR || env->type == BMQ_MSG_EXECUTE_RESULT
        || (env->type == BMQ_MSG_VALIDATE_REPLY && !json_is_true (json_object_get (env->body, "accepted"))))
        *ended = true;
    char *data = json_dumps (env->body, BMQ_MCP_JSON_FLAGS), *out = NULL;
    if (!data || asprintf (&out, "event: %s\ndata: %s\n\n", bmq_msg_type_name (env->type), data) < 0) out = NULL;
    free (data);
    return out;
}

static ssize_t s_story_read (void *cls, uint64_t pos, char *buf, size_t max)
{
    s_story_t *s = cls;
    while (bmq_http_pending_done (&s->out)) {
        if (s->ended || bmq_http_ctx_stopping (s->ctx)) return MHD_CONTENT_READER_END_OF_STREAM;
        char *text = NULL;
        bmq_envelope_t *env = bmq_http_bus_recv (s->bus, s->cid, SLICE_MS);
        int64_t now = bmq_mono_ms ();
        if (env) {
            text = s_story_event (env, &s->ended);
            s->last_heard = now;
            bmq_envelope_destroy (&env);
        }
        else if (now - s->last_heard > s->idle_ms) {
            s->ended = true;
            if (asprintf (&text, "event: error\ndata: {\"code\":\"gateway_timeout\",\"message\":\"nothing was heard of this "
                          "request for %d ms: its story is in the audit (cid %s)\"}\n\n", s->idle_ms, s->cid) < 0) text = NULL;
        }
        else if (now - s->last_write >= KEEPALIVE_MS) text = strdup (": keepalive\n\n");
        if (bmq_http_pending_set (&s->out, text)) s->last_write = now;
    }
    return bmq_http_pending_read (&s->out, buf, max);
}

static void s_story_free (void *cls)
{
    s_story_t *s = cls;
    bmq_http_ctx_stream_close (s->ctx, s->who);
    bmq_http_pending_free (&s->out);
    free (s);
}

/* The same shape as the gateway's own plan ids (http_api). */
static void s_new_plan_id (char *buf, size_t len)
{
    zuuid_t *uuid = zuuid_new ();
    snprintf (buf, len, "p-%.12s", zuuid_str (uuid));
    zuuid_destroy (&uuid);
}

enum MHD_Result bmq_http_web_chat (bmq_http_req_t *req)
{
    /* its Content-Type: checked by the router (BMQ_BODY_JSON) */
    if (!bmq_http_ctx_stream_open (req->ctx, req->who.name))
        return bmq_http_reply_error (req, 429, "too_many_streams", "the token %s has as many event streams open as it may "
                                     "(http.streams_per_token): wait for one to end", req->who.name);
    json_error_t jerr;
    json_t *body = json_loadb (req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
    json_t *prompt = json_object_get (body, "prompt"), *keep = json_object_get (body, "keep_partial");
    if (!json_is_object (body) || !json_is_string (prompt) || !json_string_length (prompt) || json_string_length (prompt) > MAX_PROMPT
        || (keep && !json_is_boolean (keep))) {
        json_decref (body);
        bmq_http_ctx_stream_close (req->ctx, req->who.name);
        return bmq_http_reply_error (req, 400, "bad_request", "expected {\"prompt\": \"build a snowman\"} (at most %d bytes; "
                                     "optionally \"keep_partial\": true)", MAX_PROMPT);
    }
    char plan_id[32], cid[BMQ_MAX_ID + 1];
    s_new_plan_id (plan_id, sizeof plan_id);
    json_t *msg = json_pack ("{s:O, s:s}", "prompt", prompt, "plan_id", plan_id);
    if (keep) json_object_set (msg, "keep_partial", keep);
    json_decref (body);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_CHAT_REQUEST, NULL, msg);
    if (s_send (req, &env, cid, sizeof cid)) {
        bmq_http_ctx_stream_close (req->ctx, req->who.name);
        return bmq_http_reply_error (req, 502, "gateway_error", "the gateway is not reachable");
    }
    /* an early refusal keeps its HTTP status; anything else starts the stream */
    bmq_http_bus_t *bus = bmq_http_req_bus (req);
    bmq_envelope_t *first = bmq_http_bus_recv (bus, cid, FIRST_ANSWER_MS);
    if (first && first->type == BMQ_MSG_ERROR) {
        enum MHD_Result rc = s_error (req, first);
        bmq_envelope_destroy (&first);
        bmq_http_ctx_stream_close (req->ctx, req->who.name);
        return rc;
    }
    s_story_t *s = calloc (1, sizeof *s);
    snprintf (s->who, sizeof s->who, "%s", req->who.name);
    s->ctx = req->ctx;
    s->bus = bus;
    snprintf (s->cid, sizeof s->cid, "%s", cid);
    s->idle_ms = s_timeout (req);
    s->last_heard = s->last_write = bmq_mono_ms ();
    char *head = NULL, *more = first ? s_story_event (first, &s->ended) : NULL;
    if (asprintf (&head, "event: accepted\ndata: {\"plan_id\":\"%s\",\"cid\":\"%s\"}\n\n%s", plan_id, cid, more ? more : "") < 0)
        head = NULL;
    free (more);
    bmq_envelope_destroy (&first);
    bmq_http_pending_set (&s->out, head);
    struct MHD_Response *resp = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 16 * 1024, s_story_read, s, s_story_free);
    MHD_add_response_header (resp, "Content-Type", "text/event-stream");
    MHD_add_response_header (resp, "Cache-Control", "no-cache");
    MHD_add_response_header (resp, "X-Accel-Buffering", "no");
    return bmq_http_reply (req, 200, resp);
}

/* ---- POST /api/web/login-code: a one-time sign-in code ---------------------------------------
 * For `blendmq web --open`: the CLI asks with its token (a header, never an
 * argument), and hands the browser /?code=…, good once and for at most a
 * minute. Only a bearer token mints one; a page's session does not. */
enum MHD_Result bmq_http_web_login_code (bmq_http_req_t *req)
{
    if (req->session || !bmq_http_req_header (req, "Authorization"))
        return bmq_http_reply_error (req, 403, "forbidden", "a sign-in code is minted for a bearer token only (blendmq web --open)");
    int ttl = bmq_http_ctx_options (req->ctx)->login_code_ttl_ms;
    char code[96];
    if (!bmq_http_auth_code_new (bmq_http_ctx_auth (req->ctx), req->who.name, ttl, code, sizeof code))
        return bmq_http_reply_error (req, 500, "no_code", "could not make a sign-in code");
    char path[128];
    snprintf (path, sizeof path, "/?code=%s", code);
    json_t *body = json_pack ("{s:s, s:s, s:i}", "code", code, "path", path, "expires_in_ms", ttl);
    return bmq_http_reply_json (req, 201, body);
}

/* GET /web/{asset}: a file of the bundle. */
enum MHD_Result bmq_http_web_asset (bmq_http_req_t *req)
{
    const bmq_web_asset_t *a = s_asset (req->url);
    if (a) return s_serve (req, a);
    return bmq_http_reply_error (req, 404, "not_found", "no such file of the page: %.200s", req->url);
}
