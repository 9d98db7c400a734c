/* mcp_call — one MCP tools/call in flight.
 *
 * A call turns its arguments into one bus request to the gateway (the same
 * requests the CLI sends: validate, run, chat, scene, capabilities,
 * inspect…; generate_3d a second one, its import, once the first ended: see
 * bmq_mcp_call_next_request), then turns the gateway's answers in that story (same cid) into
 * MCP messages: notifications/progress for each executed step when the caller
 * gave a progress token, notifications/message for what happens on the way
 * (at the session's log level and above), and finally the CallToolResult,
 * with structuredContent where the tool has an outputSchema and isError with
 * a message a model can act on when the tool failed.
 *
 * The class does no I/O: its owner sends the request, feeds it envelopes and
 * clock ticks, and sends what it appends to `out`. So the same code serves
 * the stdio server (one loop, many calls) and each HTTP stream. */
#ifndef BMQ_MCP_CALL_H
#define BMQ_MCP_CALL_H

#include "codec.h"
#include "mcp_tools.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct bmq_mcp_call_t bmq_mcp_call_t;

/* Who is calling, as the transport knows it. */
typedef struct {
    const char *name;           /* the token's name in the keys dir ("mcp"); NULL: not authenticated (stdio tests) */
    bmq_role_t  role;           /* the token's role; BMQ_ROLE_NONE with name NULL skips role checks */
    const char *client;         /* clientInfo "name version", for the audit */
    bool        elicitation;    /* the client declared the elicitation capability at initialize */
    bool        can_ask;        /* this transport can carry a request to the client now (an SSE answer, stdio) */
    bool        confirm_by_elicitation;     /* security.mcp_confirm: elicitation (else a person approves elsewhere) */
    const json_t *subscriptions;            /* URIs the session subscribed to (resources/subscribe), or NULL */
    bool        stateless;                  /* 2026-07-28: no requests of ours; ask by input-required results */
} bmq_mcp_caller_t;

/* Start tools/call `params` ({name, arguments, _meta}) for request `id`.
 * NULL when the call ended at once: *response holds the JSON-RPC response
 * (an unknown tool is a protocol error; bad arguments or a tool this build
 * cannot serve are isError results). Otherwise the call runs: when *request
 * is set, the owner sends it to the gateway (and destroys it). */
bmq_mcp_call_t *bmq_mcp_call_start (const bmq_mcp_tools_t *tools, const bmq_mcp_caller_t *caller, const json_t *id,
                                    const json_t *params, int log_level, int timeout_ms, json_t **response,
                                    bmq_envelope_t **request);
/* Another method served by calling `tool` with `args` (borrowed): the tool's
 * result becomes resources/read contents of uri (mime), or, with `from` set,
 * completion values (objects, recipes, operations) for prefix. Same contract
 * as bmq_mcp_call_start; a failed tool answers a JSON-RPC error. */
bmq_mcp_call_t *bmq_mcp_call_start_as (const bmq_mcp_tools_t *tools, const bmq_mcp_caller_t *caller, const json_t *id,
                                       const char *tool, const json_t *args, const char *uri, const char *mime,
                                       const char *from, const char *prefix, int timeout_ms, json_t **response,
                                       bmq_envelope_t **request);
/* A resource call's result seen through `view` (bmq_mcp_audit_view: what the
 * caller may read); when nothing is, the answer is `not_found_code`. */
void bmq_mcp_call_view (bmq_mcp_call_t *self, const char *view, int not_found_code);
void bmq_mcp_call_destroy (bmq_mcp_call_t **self_p);

const char   *bmq_mcp_call_cid (const bmq_mcp_call_t *self);    /* its story on the bus */
const json_t *bmq_mcp_call_id (const bmq_mcp_call_t *self);     /* the JSON-RPC request id */
const char   *bmq_mcp_call_tool (const bmq_mcp_call_t *self);
bool          bmq_mcp_call_on_bus (const bmq_mcp_call_t *self);  /* it waits on the gateway */

/* An envelope of this call's story. Appends the messages to send (in order) to
 * the array `out`; returns true when the call is over (its response was
 * appended last). */
bool bmq_mcp_call_feed (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out);
/* After feed: a further request of the call to send to the gateway now (caller
 * destroys), or NULL. generate_3d sends its import (a new story: the call's
 * cid changes to it) once the model is made. */
bmq_envelope_t *bmq_mcp_call_next_request (bmq_mcp_call_t *self);
/* Time passed (monotonic ms): scripted notifications, the deadline. Same contract. */
bool bmq_mcp_call_tick (bmq_mcp_call_t *self, int64_t now_ms, json_t *out);
/* When the next tick is due (monotonic ms). */
int64_t bmq_mcp_call_wakeup (const bmq_mcp_call_t *self);
/* End the call with an isError result saying `why` (e.g. the gateway is gone). */
void bmq_mcp_call_fail (bmq_mcp_call_t *self, const char *why, json_t *out);
/* The client cancelled: no response is due. Returns the cancel.request to
 * send to the gateway (caller destroys), or NULL when there is nothing to stop. */
bmq_envelope_t *bmq_mcp_call_cancel (bmq_mcp_call_t *self);

/* confirm_script asked the client (elicitation/create) and waits for the
 * answer: true when `id` is the id of that request. */
bool bmq_mcp_call_awaits (const bmq_mcp_call_t *self, const json_t *id);
/* The client's JSON-RPC response to our elicitation/create. Appends what to
 * send to `out` like feed; sets *request to the bus request to send now (the
 * script.confirm, only when the person accepted with confirm: true).
 * Returns true when the call is over. */
bool bmq_mcp_call_answer (bmq_mcp_call_t *self, const json_t *response, json_t *out, bmq_envelope_t **request);

/* Remember what a script.reply told (sha256, operators, sandbox diff) so that
 * confirm_script can show it to the person. Any transport may feed it (the
 * REST POST /api/scripts too). Thread-safe, bounded. */
void bmq_mcp_note_script (const json_t *script_reply_body);
/* The confirmations MCP clients asked a person for (security.mcp_confirm:
 * person) and nobody made yet: [{script_id, sha256, requested_by, mcp_client,
 * since_ms}] (new). Thread-safe. */
json_t *bmq_mcp_pending_confirmations (void);

/* Log levels of notifications/message (RFC 5424 order): 0 debug … 7 emergency. */
int         bmq_mcp_log_level (const char *name);      /* -1 when unknown */

#endif
