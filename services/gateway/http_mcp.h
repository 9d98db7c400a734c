/* http_mcp — MCP Streamable HTTP at /mcp (revisions 2025-03-26 to 2025-11-25).
 *
 * POST carries one JSON-RPC message. initialize opens a session: the answer
 * carries MCP-Session-Id, which every later request must send (400 without
 * it, 404 once the session is gone: the client then initializes again). A
 * MCP-Protocol-Version header naming a revision we do not speak gets 400.
 * Notifications and responses get 202. Requests get a JSON answer, except
 * tools/call when the client accepts text/event-stream: the answer is then
 * an SSE stream carrying the call's notifications/progress and
 * notifications/message, then its result. notifications/cancelled (another
 * POST) stops the named call; its stream ends without a result. GET opens the
 * session's standalone SSE stream: notifications/resources/updated for what
 * it subscribed to, after every committed plan or script whoever ran it (the
 * executors' events; mcp_watch.h), resumable with Last-Event-ID, one per
 * session; 2026-07-28 clients POST subscriptions/listen instead (GET: 405).
 * DELETE ends the session.
 * Sessions are bounded (the least recently used is dropped) and expire after
 * an hour unused. */
#ifndef BMQ_HTTP_MCP_H
#define BMQ_HTTP_MCP_H

#include "http_req.h"

/* sessions_per_token: a token's own oldest idle session goes for its new one
 * (never another token's); confirm_by_elicitation: security.mcp_confirm. */
bmq_http_mcp_t *bmq_http_mcp_new (bool test_tools, int request_timeout_ms, int sessions_per_token, bool confirm_by_elicitation,
                                  char *err, size_t errlen);
void bmq_http_mcp_destroy (bmq_http_mcp_t **self_p);
/* Serve a request to /mcp whose body is complete. */
enum MHD_Result bmq_http_mcp_handle (bmq_http_mcp_t *self, bmq_http_req_t *req);

#endif
