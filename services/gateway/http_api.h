/* http_api — the REST routes' handlers (the table that names them, their
 * roles and bodies: http_routes.c; the list: docs/http-routes.md).
 * Requests go to the gateway as the bus requests the CLI sends; every
 * handler is called with a complete body that passed the route's checks. */
#ifndef BMQ_HTTP_API_H
#define BMQ_HTTP_API_H

#include "http_req.h"

enum MHD_Result bmq_http_api_health (bmq_http_req_t *req);          /* GET /healthz */
enum MHD_Result bmq_http_api_metrics (bmq_http_req_t *req);         /* GET /metrics */
enum MHD_Result bmq_http_api_whoami (bmq_http_req_t *req);          /* GET /api/whoami */
enum MHD_Result bmq_http_api_confirmations (bmq_http_req_t *req);   /* GET /api/confirmations */
enum MHD_Result bmq_http_api_capabilities (bmq_http_req_t *req);    /* GET /api/mcp/capabilities */
enum MHD_Result bmq_http_api_chat (bmq_http_req_t *req);            /* POST /api/chat */
enum MHD_Result bmq_http_api_plans_run (bmq_http_req_t *req);       /* POST /api/plans */
enum MHD_Result bmq_http_api_plans_validate (bmq_http_req_t *req);  /* POST /api/plans/validate */
enum MHD_Result bmq_http_api_plan_get (bmq_http_req_t *req);        /* GET /api/plans/{id} */
enum MHD_Result bmq_http_api_plan_cancel (bmq_http_req_t *req);     /* POST /api/plans/{id}/cancel */
enum MHD_Result bmq_http_api_scene (bmq_http_req_t *req);           /* GET /api/scene */
enum MHD_Result bmq_http_api_audit (bmq_http_req_t *req);           /* GET /api/audit */
enum MHD_Result bmq_http_api_script_list (bmq_http_req_t *req);     /* GET /api/scripts */
enum MHD_Result bmq_http_api_script_get (bmq_http_req_t *req);      /* GET /api/scripts/{id} */
enum MHD_Result bmq_http_api_script_submit (bmq_http_req_t *req);   /* POST /api/scripts */
enum MHD_Result bmq_http_api_script_confirm (bmq_http_req_t *req);  /* POST /api/scripts/{id}/confirm */

#endif
