/* executor_set — the executors a gateway routes to, by name.
 *
 * Each executor owns one Blender. The first is the `executor:` section's
 * (name executor.name); more come from gateway.executors {name: {endpoint,
 * events}}. A request picks one with its "target" field. */
#ifndef BMQ_EXECUTOR_SET_H
#define BMQ_EXECUTOR_SET_H

#include "config.h"
#include "peer.h"

#define BMQ_MAX_EXECUTORS 16

typedef struct bmq_executor_set_t bmq_executor_set_t;

/* Connects a heartbeated peer to each executor and `sub` to each one's events.
 * NULL with err on a bad entry. */
bmq_executor_set_t *bmq_executor_set_new (const bmq_config_t *cfg, zsock_t *sub, char *err, size_t errlen);
void   bmq_executor_set_destroy (bmq_executor_set_t **self_p);
size_t bmq_executor_set_size (const bmq_executor_set_t *self);
bmq_peer_t *bmq_executor_set_peer (bmq_executor_set_t *self, size_t index);
const char *bmq_executor_set_name (const bmq_executor_set_t *self, size_t index);
/* Index of the executor called `target` (NULL or "": the default, 0); -1 when unknown. */
int    bmq_executor_set_find (const bmq_executor_set_t *self, const char *target);
/* The index whose socket is `sock`, or -1. */
int    bmq_executor_set_by_sock (bmq_executor_set_t *self, void *sock);
/* The latest scene.names the executor called `name` published (issue 14):
 * `names` (an array of strings) and `boxes` (its things' world boxes, issue
 * 29; NULL or not an array: none) are stolen. -1 (and freed) for an unknown
 * executor. */
int    bmq_executor_set_keep_names (bmq_executor_set_t *self, const char *name, json_t *names, json_t *boxes);
/* Those names (borrowed), or NULL when none came yet. */
const json_t *bmq_executor_set_scene_names (const bmq_executor_set_t *self, size_t index);
/* Those boxes (borrowed), or NULL when none came. */
const json_t *bmq_executor_set_scene_boxes (const bmq_executor_set_t *self, size_t index);
/* "local, gui" for messages. */
void   bmq_executor_set_names (const bmq_executor_set_t *self, char *out, size_t len);

#endif
