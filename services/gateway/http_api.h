/* http_api — the REST routes of the gateway's HTTP server.
 *
 *   GET  /healthz                      {"status": "ok"} while the gateway loop runs (503 when stuck)
 *   GET  /metrics                      Prometheus text (http_metrics)
 *   GET  /api/mcp/capabilities         the palette (seed 001 shape; ?form=compact for one line per operation)
 *   POST /api/chat                     {"prompt"} → 202 {"plan_id", …} at once; the plan is planned,
 *                                      validated and run in the background (follow /api/events?plan_id=…)
 *   POST /api/plans                    an action plan (seed 001 array, or {"plan": [...], "keep_partial"})
 *                                      → 202 {"plan_id", "verdict"} once validated and queued; 422 when rejected
 *   POST /api/plans/validate           the verdict, 200 {accepted, errors, plan_hash, …}
 *   GET  /api/plans/{id}               what is known of a plan (http_plans); 404 for an unknown id
 *   POST /api/plans/{id}/cancel        stop that plan (cancel.request for its story) → 202
 *   GET  /                             the page (http_web.h: it and its own routes /web/…, /api/web/…);
 *                                      GET /?token=T sets the session cookie → 303 /
 *   POST /api/scripts, POST /api/scripts/{id}/confirm, GET /api/scripts[/{id}]
 *                                      submit, confirm (sha256), list scripts
 *   GET  /api/scene                    objects in the live scene (?limit, ?offset)
 *   GET  /api/events                   Server-Sent Events of every progress event (?plan_id= filters;
 *                                      Last-Event-ID header or ?last_event_id= resumes)
 * Requests go to the gateway as the bus requests the CLI sends. */
#ifndef BMQ_HTTP_API_H
#define BMQ_HTTP_API_H

#include "http_server.h"

/* The least role a request needs (http_auth.h), BMQ_ROLE_NONE for none:
 *   GET /healthz, OPTIONS                                   none
 *   GET anything else (/, /metrics, /api/scene, /api/audit, /api/events,
 *       /api/mcp/capabilities, /api/scripts[/{id}], /api/plans/{id}), /mcp   viewer
 *   POST /api/chat, /api/plans, /api/plans/validate, /api/scripts,
 *        /api/plans/{id}/cancel                             operator
 *   POST /api/scripts/{id}/confirm                          reviewer (a person; + the sha256)
 *   anything else that changes the scene (POST /api/scene…) admin
 * /mcp: each tool then needs its own role (mcp_tools.json "_role"). */
bmq_role_t bmq_http_api_role (const char *method, const char *url);
/* The metrics label of a path (a fixed set: ids are not labels). */
const char *bmq_http_api_route (const char *method, const char *url);
/* Serve a request whose body is complete. */
enum MHD_Result bmq_http_api_handle (bmq_http_req_t *req);

#endif
