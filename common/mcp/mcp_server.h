/* mcp_server — blendmq's MCP server logic, whatever the transport.
 *
 * JSON-RPC 2.0 dispatch for the MCP lifecycle and the methods blendmq
 * serves: initialize (protocol revisions 2025-11-25, 2025-06-18 and
 * 2025-03-26, the client's choice when supported, else the newest), ping,
 * logging/setLevel, tools/list, tools/call (started as an mcp_call the
 * transport drives), resources (list, templates, read, subscribe), prompts,
 * completion (mcp_surface.h: what lives in Blender is read through a tool,
 * again as an mcp_call), and the notifications initialized and cancelled.
 * Transports (the stdio loop of `blendmq mcp`, the gateway's /mcp endpoint)
 * own the I/O and the calls in flight; this class owns no sockets and no
 * threads. Immutable after construction: may be shared by threads. */
#ifndef BMQ_MCP_SERVER_H
#define BMQ_MCP_SERVER_H

#include "mcp_call.h"
#include "mcp_tools.h"
#include <jansson.h>
#include <stdbool.h>

#define BMQ_MCP_LATEST_VERSION "2025-11-25"      /* the newest with initialize and sessions */
#define BMQ_MCP_STATELESS_VERSION "2026-07-28"  /* server/discover and per-request _meta */

typedef struct {
    bool test_tools;            /* add the conformance suite's test_* tools */
    int  request_timeout_ms;    /* a tool call with no final answer by then fails */
    bool confirm_by_elicitation;    /* security.mcp_confirm: elicitation; false (person): a person approves elsewhere */
} bmq_mcp_options_t;

#define BMQ_MCP_MAX_SUBSCRIPTIONS 8

/* One client's state: per stdio process, per HTTP MCP-Session-Id. */
typedef struct {
    char version[16];           /* negotiated revision; "" before initialize */
    bool initialized;           /* notifications/initialized seen */
    int  log_level;             /* notifications/message at this level and above */
    char client[96];            /* clientInfo name and version, for logs */
    bool elicitation;           /* the client declared capabilities.elicitation */
    char who[64];               /* the token that opened the session ("" unauthenticated) */
    bmq_role_t role;            /* its role */
    bool can_ask;               /* set by the transport per message: it can carry a request to the client */
    bool stateless;             /* 2026-07-28: this one request, described by its own _meta (no session) */
    bool sampling;              /* the client declared capabilities.sampling */
    bool roots;                 /* … and roots */
    bool tasks;                 /* … and the io.modelcontextprotocol/tasks extension (2026-07-28) */
    char subscribed[BMQ_MCP_MAX_SUBSCRIPTIONS][256];    /* resources/subscribe: URIs told of a committed plan */
    int  subscriptions;
    bool listening;             /* the transport tells the subscriptions of every change (a GET stream, mcp_watch.h):
                                   a tool call does not tell them again */
} bmq_mcp_session_t;

/* What handling one message asks of the transport. */
typedef struct {
    json_t         *response;   /* send now (NULL for notifications or a started call) */
    bmq_mcp_call_t *call;       /* a tools/call now running: drive it (owned by the caller) */
    bmq_envelope_t *request;    /* send this to the gateway for `call` (owned by the caller) */
    json_t         *cancel_id;  /* notifications/cancelled: the request id to stop (owned) */
    bool            as_task;    /* run `call` as a task (bmq_mcp_tasks_start): answer its CreateTaskResult now */
    json_t         *answer;     /* a response from the client to a request of ours (elicitation): route it to
                                   the call that awaits its id (bmq_mcp_call_awaits, _answer) (owned) */
    json_t         *listen;     /* subscriptions/listen (2026-07-28): the notifications/subscriptions/acknowledged
                                   to send first on a stream that stays open; its params.notifications.
                                   resourceSubscriptions are the URIs to tell of each change (mcp_watch.h), its
                                   _meta the subscription id (owned) */
} bmq_mcp_outcome_t;

typedef struct bmq_mcp_t bmq_mcp_t;

bmq_mcp_t *bmq_mcp_new (const bmq_mcp_options_t *opts, char *err, size_t errlen);
void bmq_mcp_destroy (bmq_mcp_t **self_p);
const bmq_mcp_tools_t *bmq_mcp_tools (const bmq_mcp_t *self);
/* The tasks of 2026-07-28 clients that declared the tasks extension (mcp_surface.h). */
struct bmq_mcp_tasks_t *bmq_mcp_tasks (bmq_mcp_t *self);

void bmq_mcp_session_init (bmq_mcp_session_t *session);
/* Handle one parsed JSON-RPC message (a request, notification or response).
 * Invalid messages get a JSON-RPC error response. */
void bmq_mcp_handle (bmq_mcp_t *self, bmq_mcp_session_t *session, const json_t *msg, bmq_mcp_outcome_t *out);
/* A JSON-RPC error response (id may be NULL: answered with null). */
json_t *bmq_mcp_error (const json_t *id, int code, const char *message);

/* 2026-07-28 (SEP-2575): a request without a session carries who asks in
 * params._meta (protocolVersion, clientCapabilities, clientInfo, logLevel).
 * Fills `session` for this one request; header_version is the transport's
 * MCP-Protocol-Version (NULL: none). Returns 0, or the HTTP status (400) with
 * *error the JSON-RPC error to answer (invalid _meta -32602, a header that
 * disagrees -32020, a revision we do not speak -32022). */
int bmq_mcp_stateless_open (bmq_mcp_session_t *session, const json_t *msg, const char *header_version, json_t **error);
/* 2026-07-28: a response's result says what it is (resultType "complete"
 * unless it says otherwise: "input_required", "task"). */
void bmq_mcp_stateless_result (json_t *msg);
/* SEP-2243: each tool parameter marked "x-mcp-header" that the tools/call
 * `msg` carries must be repeated in its Mcp-Param-<Name> header (as is, or
 * =?base64?…?=), as `header` (the transport's lookup) finds it. 0, or -1
 * with err (answer -32020, HTTP 400). (mcp_param_headers.c) */
int bmq_mcp_param_headers_check (const bmq_mcp_t *mcp, const json_t *msg, const char *(*header) (void *ctx, const char *name),
                                 void *ctx, char *err, size_t errlen);
/* The revision a stateless request names (its _meta), or NULL. */
const char *bmq_mcp_request_version (const json_t *msg);

bool bmq_mcp_version_supported (const char *version);
/* A revision with initialize and sessions (2025-11-25 and older). */
bool bmq_mcp_session_version (const char *version);
/* "initialize" request? (it must come first and creates HTTP sessions) */
bool bmq_mcp_is_initialize (const json_t *msg);
/* A request (has an id and a method), not a notification or a response. */
bool bmq_mcp_is_request (const json_t *msg);

#endif
