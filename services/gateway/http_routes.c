/* http_routes — the route table (see http_routes.h). The one place a route is named. */
#include "http_routes.h"
#include "http_api.h"
#include "http_events.h"
#include "http_mcp.h"
#include "http_web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum MHD_Result s_mcp (bmq_http_req_t *req) { return bmq_http_mcp_handle (bmq_http_ctx_mcp (req->ctx), req); }

#define V BMQ_ROLE_VIEWER
#define O BMQ_ROLE_OPERATOR
#define R BMQ_ROLE_REVIEWER
#define ROUTE(METHOD, PATTERN, ROLE, BODY, KB, FLAGS, HANDLER, DOC) \
    { METHOD, PATTERN, ROLE, BMQ_BODY_##BODY, KB, FLAGS, HANDLER, #HANDLER, DOC }

static const bmq_http_route_t s_routes[] = {
    ROUTE ("GET",  "/healthz",                  BMQ_ROLE_NONE, NONE, 0, 0, bmq_http_api_health,
           "{\"status\": \"ok\"} while the gateway loop runs (503 when stuck)"),
    ROUTE ("GET",  "/metrics",                  V, NONE, 0, 0, bmq_http_api_metrics, "Prometheus text (http_metrics)"),
    ROUTE ("GET",  "/",                         V, NONE, 0, 0, bmq_http_web_index,
           "the page (GET /?token=T or /?code=C sets the session cookie, then 303 /)"),
    ROUTE ("GET",  "/web/{asset}",              V, NONE, 0, 0, bmq_http_web_asset, "the page's bundle (app.js, app.css, icon.svg)"),
    ROUTE ("GET",  "/api/whoami",               V, NONE, 0, 0, bmq_http_api_whoami,
           "the token's (or session's) name and role, and the page's CSRF nonce"),
    ROUTE ("GET",  "/api/confirmations",        V, NONE, 0, 0, bmq_http_api_confirmations,
           "what MCP clients asked a person to approve"),
    ROUTE ("GET",  "/api/mcp/capabilities",     V, NONE, 0, 0, bmq_http_api_capabilities,
           "the palette (?form=compact: one line per operation)"),
    ROUTE ("POST", "/api/chat",                 O, JSON, 0, 0, bmq_http_api_chat,
           "{\"prompt\"} -> 202 {plan_id}; planned, validated and run in the background"),
    ROUTE ("POST", "/api/plans",                O, JSON, 0, 0, bmq_http_api_plans_run,
           "an action plan -> 202 {plan_id, verdict} once validated and queued; 422 when rejected"),
    ROUTE ("POST", "/api/plans/validate",       O, JSON, 0, 0, bmq_http_api_plans_validate, "the validator's verdict, 200"),
    ROUTE ("GET",  "/api/plans/{id}",           V, NONE, 0, 0, bmq_http_api_plan_get, "what is known of a plan; 404 for an unknown id"),
    ROUTE ("POST", "/api/plans/{id}/cancel",    O, NONE, 1, 0, bmq_http_api_plan_cancel, "stop that plan (cancel.request) -> 202"),
    ROUTE ("GET",  "/api/scene",                V, NONE, 0, 0, bmq_http_api_scene, "objects in the live scene (?limit, ?offset)"),
    ROUTE ("GET",  "/api/events",               V, NONE, 0, 0, bmq_http_events_handle,
           "Server-Sent Events of progress (?plan_id=; Last-Event-ID resumes)"),
    ROUTE ("GET",  "/api/audit",                V, NONE, 0, 0, bmq_http_api_audit, "the audit trail, a page at a time"),
    ROUTE ("GET",  "/api/scripts",              V, NONE, 0, 0, bmq_http_api_script_list, "the scripts the sandbox has seen, newest first"),
    ROUTE ("POST", "/api/scripts",              O, JSON, 0, 0, bmq_http_api_script_submit,
           "{script, mode?, attachment?, validate_only?}: validated, then sandboxed"),
    ROUTE ("GET",  "/api/scripts/{id}",         V, NONE, 0, 0, bmq_http_api_script_get, "one sandboxed script with its exact text"),
    ROUTE ("POST", "/api/scripts/{id}/confirm", R, JSON, 4, BMQ_ROUTE_PERSON, bmq_http_api_script_confirm,
           "{sha256}: a person applies exactly the script reviewed"),
    ROUTE ("POST", "/api/web/chat",             O, JSON, 0, 0, bmq_http_web_chat,
           "like POST /api/chat, the request's whole story as Server-Sent Events"),
    ROUTE ("GET",  "/api/web/status",           V, NONE, 0, 0, bmq_http_web_status, "the gateway's status.reply"),
    ROUTE ("GET",  "/api/web/preview.png",      V, NONE, 0, 0, bmq_http_web_preview, "a render of the live scene (?width=&height=)"),
    ROUTE ("POST", "/api/web/login-code",       V, NONE, 1, 0, bmq_http_web_login_code,
           "a one-time sign-in code for a bearer token (blendmq web --open)"),
    ROUTE ("*",    "/mcp",                      V, OWN,  0, 0, s_mcp, "MCP Streamable HTTP; each tool then needs its own role"),
};

const bmq_http_route_t *bmq_http_routes (size_t *count)
{
    *count = sizeof s_routes / sizeof s_routes[0];
    return s_routes;
}

/* Does `path` match `pattern`? The {name} segment's place in *param. */
static bool s_match (const char *pattern, const char *path, const char **param, size_t *param_len)
{
    *param = NULL;
    *param_len = 0;
    while (*pattern && *path) {
        if (*pattern == '{') {
            const char *close = strchr (pattern, '}');
            size_t n = strcspn (path, "/");
            if (!close || !n || n > BMQ_MAX_ID) return false;
            *param = path;
            *param_len = n;
            pattern = close + 1;
            path += n;
        }
        else if (*pattern++ != *path++) return false;
    }
    return !*pattern && !*path;
}

static bool s_method_ok (const char *row, const char *method)
{
    return !strcmp (row, "*") || !strcmp (row, method) || (!strcmp (row, "GET") && !strcmp (method, "HEAD"));
}

const bmq_http_route_t *bmq_http_route_find (const char *method, const char *url, const char **pattern,
                                             const char **param, size_t *param_len)
{
    size_t n = sizeof s_routes / sizeof s_routes[0];
    *pattern = NULL;
    for (size_t i = 0; i < n && !*pattern; i++)
        if (s_match (s_routes[i].pattern, url, param, param_len)) *pattern = s_routes[i].pattern;
    if (!*pattern) { *param = NULL; *param_len = 0; return NULL; }
    for (size_t i = 0; i < n; i++)
        if (!strcmp (s_routes[i].pattern, *pattern) && s_method_ok (s_routes[i].method, method)) return &s_routes[i];
    return NULL;
}

void bmq_http_route_allow (const char *pattern, char *buf, size_t len)
{
    buf[0] = 0;
    for (size_t i = 0; i < sizeof s_routes / sizeof s_routes[0]; i++)
        if (pattern && !strcmp (s_routes[i].pattern, pattern))
            snprintf (buf + strlen (buf), len - strlen (buf), "%s%s", *buf ? ", " : "", s_routes[i].method);
}

bmq_role_t bmq_http_route_role (const char *method, const char *url)
{
    if (!strcmp (method, "OPTIONS")) return BMQ_ROLE_NONE;
    const char *pattern, *param;
    size_t len;
    const bmq_http_route_t *row = bmq_http_route_find (method, url, &pattern, &param, &len);
    return row ? row->role : BMQ_ROLE_VIEWER;
}

char *bmq_http_routes_markdown (void)
{
    static const char *bodies[] = { "none", "JSON", "its own (JSON-RPC)" };
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f) return NULL;
    fprintf (f, "# HTTP routes\n\n"
                "Generated from the route table in `services/gateway/http_routes.c` (the one place a route is named);\n"
                "`tests/http/test_http_routes.c` fails when this page is stale. Rewrite it with\n"
                "`build/bin/test_http_routes --write-docs docs/http-routes.md`.\n\n"
                "Every route but `/healthz` needs a bearer token (or the page's session) whose role includes the\n"
                "route's role (viewer < operator, reviewer < admin; operator+reviewer has both). A path that exists\n"
                "with another method answers 405 with `Allow`; a path that does not exist, 404 (both for a viewer's\n"
                "token). A state-changing request from a page must be `application/json`; a `person` route also needs\n"
                "the page session's nonce (header `X-Blendmq-Csrf`). The metrics label of a request is its pattern.\n\n"
                "| method | pattern | role | body | cap | handler | what |\n|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof s_routes / sizeof s_routes[0]; i++) {
        const bmq_http_route_t *r = &s_routes[i];
        char cap[48];
        if (r->max_body_kb) snprintf (cap, sizeof cap, "%zu KiB", r->max_body_kb);
        else snprintf (cap, sizeof cap, "http_max_body_kb");
        fprintf (f, "| %s | `%s` | %s%s | %s | %s | `%s` | %s |\n", !strcmp (r->method, "*") ? "any" : r->method, r->pattern,
                 bmq_role_name (r->role), r->flags & BMQ_ROUTE_PERSON ? " (person)" : "", bodies[r->body], cap,
                 r->handler_name, r->doc);
    }
    fclose (f);
    return text;
}
