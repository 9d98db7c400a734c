/* progress_batch — several progress events of one story as one bus message
 * (issue 28: one message per burst on the watchers' hop).
 *
 * The executor publishes a burst (the steps of one run_plan chunk, which
 * Blender reports together) as one `progress.batch` envelope {events: [...]}
 * whose items are `progress` bodies in order; a lone event still goes as a
 * plain `progress`. Everyone who reads the PUB streams (the gateway, `blendmq
 * watch`, tests and benches) hands what it received to bmq_progress_each and
 * gets plain progress envelopes back, one per event, in order: so a batch is
 * a transport detail and every watcher still sees every step.
 *
 * Items are hostile input: each must be an object that passes the codec's
 * checks for a `progress` body (messages.def); one that does not is skipped
 * and counted, never handed on. */
#ifndef BMQ_PROGRESS_BATCH_H
#define BMQ_PROGRESS_BATCH_H

#include "codec.h"

#define BMQ_PROGRESS_BATCH_MAX 256      /* events per batch (messages.def: progress.batch events) */

/* A batch envelope for `events` (stolen; 1..BMQ_PROGRESS_BATCH_MAX progress bodies). */
bmq_envelope_t *bmq_progress_batch_new (const char *cid, json_t *events);

/* Calls fn once per progress event `env` carries: itself when it is a
 * `progress`, each valid item (as a `progress` envelope with the batch's cid,
 * id, ts and sender) when it is a `progress.batch`; stops early when fn
 * returns non-zero and returns that value. Anything else: fn is not called.
 * `skipped` (may be NULL) counts the items refused. */
typedef int (bmq_progress_fn) (const bmq_envelope_t *event, void *arg);
int bmq_progress_each (const bmq_envelope_t *env, bmq_progress_fn *fn, void *arg, size_t *skipped);

/* True for `progress` and `progress.batch`. */
bool bmq_progress_is (const bmq_envelope_t *env);

#endif
