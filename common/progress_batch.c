/* progress_batch — see progress_batch.h. */
#include "progress_batch.h"

#include <string.h>

bmq_envelope_t *bmq_progress_batch_new (const char *cid, json_t *events)
{
    return bmq_envelope_new (BMQ_MSG_PROGRESS_BATCH, cid, json_pack ("{s:o}", "events", events));
}

bool bmq_progress_is (const bmq_envelope_t *env)
{
    return env && (env->type == BMQ_MSG_PROGRESS || env->type == BMQ_MSG_PROGRESS_BATCH);
}

int bmq_progress_each (const bmq_envelope_t *env, bmq_progress_fn *fn, void *arg, size_t *skipped)
{
    if (skipped) *skipped = 0;
    if (!env || !fn) return 0;
    if (env->type == BMQ_MSG_PROGRESS) return fn (env, arg);
    if (env->type != BMQ_MSG_PROGRESS_BATCH) return 0;
    json_t *events = json_object_get (env->body, "events");
    size_t i;
    json_t *item;
    json_array_foreach (events, i, item) {
        if (i >= BMQ_PROGRESS_BATCH_MAX) { if (skipped) *skipped += json_array_size (events) - i; break; }
        char err[200];
        if (!json_is_object (item) || bmq_msg_check_body (BMQ_MSG_PROGRESS, item, err, sizeof err)) {
            if (skipped) (*skipped)++;
            continue;
        }
        /* the batch's own header, so each event reads as if it came alone */
        bmq_envelope_t one = *env;
        one.type = BMQ_MSG_PROGRESS;
        one.body = item;
        one.blob = NULL;
        one.blob_len = 0;
        int rc = fn (&one, arg);
        if (rc) return rc;
    }
    return 0;
}
