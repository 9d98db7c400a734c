/* mcp_watch — which subscribed resources a change to the live scene touched,
 * told from the executors' progress events (the gateway's /api/events data),
 * whoever made the change: the CLI, the page, any MCP session or key.
 *
 * A plan's step events name the objects it made or changed ("object",
 * "objects"); its end event ("event": "plan", any status but "started") says
 * whether the change stays: "done" does, a plan rolled back does not (a
 * "rollback" event or "rollback" with status "rolled back", or a retold end
 * with "by"), a plan that failed with its steps kept does. A live script that
 * was applied ("event": "script", "applied") touched the scene and, as far as
 * anyone knows here, any object; so did a scene command that changed it
 * ("event": "scene", "changed": `blendmq scene reset`, …). Lost events (a `gap`, a reader that fell
 * behind) are a change of unknown extent: every subscription hears of it.
 *
 * A change is {"objects": [names], "all": bool}. Subscriptions hear:
 * blendmq://scene, blendmq://preview and blendmq://look of every change,
 * blendmq://objects/{name} (percent-encoded or not) of a change naming that
 * object (or of one with "all"). At most WATCH_PLANS plans are followed at
 * once and WATCH_OBJECTS objects each (beyond: "all"). Not thread-safe: one
 * per reader. */
#ifndef BMQ_MCP_WATCH_H
#define BMQ_MCP_WATCH_H

#include <jansson.h>
#include <stdbool.h>

typedef struct bmq_mcp_watch_t bmq_mcp_watch_t;

bmq_mcp_watch_t *bmq_mcp_watch_new (void);
void bmq_mcp_watch_destroy (bmq_mcp_watch_t **self_p);
/* One progress event's body (hostile: anything not of the expected shape is
 * ignored). The change it completes (new), or NULL when it completes none. */
json_t *bmq_mcp_watch_feed (bmq_mcp_watch_t *self, const json_t *event);
/* A change of unknown extent (events were lost): touches every resource (new). */
json_t *bmq_mcp_watch_unknown (void);
/* Does `change` touch the resource `uri`? */
bool bmq_mcp_watch_touches (const json_t *change, const char *uri);
/* Append to `out` one notifications/resources/updated for each URI of
 * `uris` (an array of strings) that `change` touches; with subscription_id
 * (2026-07-28 subscriptions/listen) in params._meta. Returns how many. */
size_t bmq_mcp_watch_notify (const json_t *change, const json_t *uris, const json_t *subscription_id, json_t *out);

#endif
