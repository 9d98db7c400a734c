/* planner_ask — one question to the gateway's front on the planner's own key,
 * blocking, for the dialogue's tools that need the executor: asset.search
 * (search_assets) and scene.request {command: look} (look). The gateway
 * routes both to the executor (roles.def lets the planner's key ask them).
 *
 * Each question is a story of its own at the gateway, "<story>.<what>-<n>"
 * (the gateway refuses a cid already in progress), asked on a fresh DEALER
 * (nothing left queued for a dead gateway is delivered twice later). The
 * answer is matched by cid; anything else is dropped. No answer within
 * timeout_ms is an error, never a hang; `cancelled` (may be NULL) is polled
 * every 50 ms. */
#ifndef BMQ_PLANNER_ASK_H
#define BMQ_PLANNER_ASK_H

#include "codec.h"

#include <stdbool.h>
#include <stddef.h>

/* Send *req (taken, its cid replaced by "<story>.<what>-<n>") to the gateway
 * at `gateway`; 0 with *reply (the gateway's answer: the expected reply or an
 * error envelope, the caller destroys it), -1 with why (no endpoint, cannot
 * connect, no answer in time, cancelled). */
int bmq_planner_ask (const char *gateway, const char *story, const char *what, bmq_envelope_t **req, int timeout_ms,
                     bool (*cancelled) (void *ctx), void *ctx, bmq_envelope_t **reply, char *why, size_t whylen);

#endif
