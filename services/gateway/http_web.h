/* http_web — the page for people (issue 15) and the few routes only it needs.
 *
 *   GET  /                      the page (index.html); GET /?token=T is the login (http_server)
 *   GET  /web/app.js, /web/app.css, /web/icon.svg
 *                               the bundle (services/gateway/web, built by esbuild at build time and
 *                               embedded into this binary: web_assets.c); ETag, gzip when accepted
 *   POST /api/web/chat          {"prompt", "keep_partial"?}: like POST /api/chat, but the answer is
 *                               the request's whole story as Server-Sent Events while it lasts:
 *                               `accepted` {plan_id, cid}, then every bus answer under its type name
 *                               (plan.note: the planner's notes as they come, chat.planned,
 *                               validate.reply, execute.accepted, progress, execute.result, error).
 *                               An early refusal (planner_unavailable, forbidden…) is a JSON error
 *                               with its HTTP status, as on /api/chat.                    operator
 *   GET  /api/web/status        the gateway's status.reply (services, validator pool, executors and
 *                               their Blender link, requests in flight)                     viewer
 *   GET  /api/web/preview.png   ?width=&height= (16..1920 × 16..1080, default 640×480): the
 *                               executor's render_preview of the live scene, image/png      viewer
 *
 * Why these three: plan.note reaches only the requester (it is not a progress event, so
 * /api/events never carries it), and HTTP had no status and no preview route. */
#ifndef BMQ_HTTP_WEB_H
#define BMQ_HTTP_WEB_H

#include "http_req.h"

/* The bundle, embedded at build time (web_assets.c, made by embed_web.cmake
 * from the output of services/gateway/web/build.mjs). */
typedef struct {
    const char          *path;           /* "/web/app.js"; "/" is index.html */
    const char          *type;           /* Content-Type */
    const char          *etag;           /* "\"<sha256 prefix>\"" */
    const unsigned char *data, *gz;      /* gz: the same, gzipped (NULL when none) */
    size_t               len, gz_len;
} bmq_web_asset_t;
extern const bmq_web_asset_t bmq_web_assets[];
extern const size_t bmq_web_assets_count;

/* The handlers (named in the route table, http_routes.c). */
enum MHD_Result bmq_http_web_asset (bmq_http_req_t *req);         /* GET /web/{asset} */
enum MHD_Result bmq_http_web_chat (bmq_http_req_t *req);          /* POST /api/web/chat */
enum MHD_Result bmq_http_web_status (bmq_http_req_t *req);        /* GET /api/web/status */
enum MHD_Result bmq_http_web_preview (bmq_http_req_t *req);       /* GET /api/web/preview.png */
enum MHD_Result bmq_http_web_login_code (bmq_http_req_t *req);    /* POST /api/web/login-code */
/* Serve the page itself (GET /), with its Content-Security-Policy. */
enum MHD_Result bmq_http_web_index (bmq_http_req_t *req);

#endif
