/* http_routes — every HTTP route of the gateway, once (issue 31).
 *
 * One row a route: method, path pattern, the least role, the body it takes
 * (and its size cap), its handler and one line of doc. From this table and
 * nowhere else come:
 *   - dispatch (http_server.c calls the row's handler; a path with no row for
 *     the method is 405 with Allow made from the rows of that path; no path:
 *     404),
 *   - auth (the row's role; a 405 or 404 needs a viewer's token),
 *   - the CSRF rules of issue 24 (a state-changing request from a page must be
 *     JSON; a row marked BMQ_ROUTE_PERSON also needs the page session's nonce),
 *   - the body cap (Content-Length and the bytes read),
 *   - the metrics label (the pattern: ids are never labels),
 *   - docs/http-routes.md (tests/http/test_http_routes.c checks it is fresh;
 *     `test_http_routes --write-docs FILE` writes it).
 * A pattern's {name} is one non-empty path segment of at most BMQ_MAX_ID
 * bytes; a row with a literal segment comes before a row with {name} in the
 * same place (/api/plans/validate before /api/plans/{id}). */
#ifndef BMQ_HTTP_ROUTES_H
#define BMQ_HTTP_ROUTES_H

#include "http_req.h"

typedef enum {
    BMQ_BODY_NONE,          /* no body is read (one sent is ignored, up to the cap) */
    BMQ_BODY_JSON,          /* application/json (when a Content-Type is given; else 415) */
    BMQ_BODY_OWN            /* the handler checks it (MCP's JSON-RPC) */
} bmq_http_body_t;

#define BMQ_ROUTE_PERSON 1  /* a person's confirmation: from the page's session, it needs the session's nonce */

typedef enum MHD_Result (bmq_http_handler_fn) (bmq_http_req_t *req);

typedef struct {
    const char          *method;        /* "GET" (HEAD too), "POST", or "*" (the handler answers each method) */
    const char          *pattern;       /* "/api/plans/{id}/cancel"; also the metrics label */
    bmq_role_t           role;          /* the least role (roles.h); BMQ_ROLE_NONE: no token */
    bmq_http_body_t      body;
    size_t               max_body_kb;   /* 0: gateway.http_max_body_kb */
    unsigned             flags;         /* BMQ_ROUTE_PERSON */
    bmq_http_handler_fn *handler;
    const char          *handler_name;  /* for the docs */
    const char          *doc;           /* one line */
} bmq_http_route_t;

/* The table, and how many rows. */
const bmq_http_route_t *bmq_http_routes (size_t *count);

/* The row for method and path (`url` without the query), or NULL. *pattern
 * is the pattern the path matched (NULL when none: 404; a row NULL with a
 * pattern: 405), with its {name} segment in *param / *param_len (NULL: none). */
const bmq_http_route_t *bmq_http_route_find (const char *method, const char *url, const char **pattern,
                                             const char **param, size_t *param_len);
/* The methods the rows of `pattern` take, "GET, POST" (for Allow). */
void bmq_http_route_allow (const char *pattern, char *buf, size_t len);
/* The least role a request needs: its row's; a viewer's for a path with no
 * row (404/405 go to token holders only); none for OPTIONS (the preflight). */
bmq_role_t bmq_http_route_role (const char *method, const char *url);
/* The table as Markdown (docs/http-routes.md). Caller frees. */
char *bmq_http_routes_markdown (void);

#endif
