/* planner_caps — the capability palette the planner plans with: one source
 * with the validators and MCP clients.
 *
 * The validator pool publishes the curated palette merged with Blender's RNA
 * (capabilities.reply). The planner asks the gateway for it (capabilities.request,
 * both forms, as its own service key: roles.def), keeps the bodies exactly as
 * they came (discover_capabilities answers the LLM with them: what an MCP
 * client gets), and rebuilds a palette from the full form for its own
 * pre-checks of drafts and its function declarations (costs, which the
 * published form leaves out, come from the curated entry of the same name;
 * the rebuilt palette must publish exactly the same bodies, or it is not used).
 *
 * Until the pool has answered, and whenever it cannot be reached, the
 * planner's own curated palette (proto/palette.yaml) serves, in the same
 * shape, with `rna.state` "curated" and a note saying so. It asks again every
 * few seconds while the pool's palette is not final (validators still
 * fetching the RNA, or no answer), then every 30 s; a palette whose published
 * form changed replaces the one in use.
 *
 * Non-blocking: poll bmq_planner_caps_sock beside the other sockets, call
 * bmq_planner_caps_on_message when readable and bmq_planner_caps_tick when
 * bmq_planner_caps_due has passed. Snapshots are immutable; one replaced
 * stays alive (dialogues on other threads may hold it) until
 * bmq_planner_caps_collect is called with no dialogue running. */
#ifndef BMQ_PLANNER_CAPS_H
#define BMQ_PLANNER_CAPS_H

#include "palette.h"

#include <czmq.h>
#include <jansson.h>
#include <stdbool.h>

typedef struct {
    bmq_palette_t *palette;     /* drafts and declarations */
    json_t        *full;        /* capabilities.reply body, form "full" */
    json_t        *compact;     /* form "compact" */
    bool           pool;        /* from the validator pool (else the planner's curated palette) */
    bool           merged;      /* the pool's, merged with Blender's RNA (rna.state "merged") */
    char           note[400];   /* what is in use and why, for planner notes and logs */
} bmq_caps_snapshot_t;

typedef struct {
    int round_ms;               /* an exchange's deadline (default 5000) */
    int retry_ms;               /* while not final (default 2000) */
    int refresh_ms;             /* once final (default 30000) */
} bmq_planner_caps_opts_t;

typedef struct bmq_planner_caps_t bmq_planner_caps_t;

/* `curated`: the palette document (proto/palette.yaml parsed); `gateway`:
 * gateway.endpoint ("" or NULL: never asks, the curated palette serves).
 * NULL with err when the curated palette does not load. */
bmq_planner_caps_t *bmq_planner_caps_new (const char *gateway, const json_t *curated, const bmq_planner_caps_opts_t *opts,
                                          char *err, size_t errlen);
void bmq_planner_caps_destroy (bmq_planner_caps_t **self_p);

zsock_t *bmq_planner_caps_sock (bmq_planner_caps_t *self);
void     bmq_planner_caps_on_message (bmq_planner_caps_t *self);
void     bmq_planner_caps_tick (bmq_planner_caps_t *self);
int64_t  bmq_planner_caps_due (const bmq_planner_caps_t *self);

/* The snapshot in use (never NULL). Valid until collected after a swap. */
const bmq_caps_snapshot_t *bmq_planner_caps_current (const bmq_planner_caps_t *self);
/* How many times the snapshot in use was replaced. */
int bmq_planner_caps_swaps (const bmq_planner_caps_t *self);
/* Why the last exchange with the gateway failed ("" when it did not). */
const char *bmq_planner_caps_detail (const bmq_planner_caps_t *self);
/* Free replaced snapshots: call only when no dialogue holds one. */
void bmq_planner_caps_collect (bmq_planner_caps_t *self);

/* A palette document rebuilt from a published full palette (`published`:
 * capabilities.reply body) with the costs of `curated`; NULL with err when
 * it does not rebuild. New reference (exposed for tests). */
json_t *bmq_planner_caps_rebuild (const json_t *curated, const json_t *published, char *err, size_t errlen);
/* A capabilities.reply body for `palette`, as a validator makes it (form
 * full or compact), with `rna` (stolen). New reference. */
json_t *bmq_planner_caps_body (const bmq_palette_t *palette, bool compact, json_t *rna);

#endif
