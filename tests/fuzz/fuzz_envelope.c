/* Fuzz the bus decoder: any bytes must decode cleanly or fail with a message,
 * and what decodes must encode again; a progress.batch that decodes is taken
 * apart as every watcher does (bmq_progress_each): each item a progress body
 * or skipped, never more than it holds. */
#include "codec.h"
#include "progress_batch.h"
#include <stdint.h>
#include <stdlib.h>

static int s_one (const bmq_envelope_t *event, void *arg)
{
    if (event->type != BMQ_MSG_PROGRESS || !json_is_object (event->body)) abort ();
    (*(size_t *) arg)++;
    return 0;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char err[256];
    bmq_envelope_t *env = bmq_envelope_decode (data, size, err, sizeof err);
    if (env) {
        unsigned char *buf;
        size_t len;
        if (bmq_envelope_encode (env, &buf, &len, err, sizeof err) == 0) {
            bmq_envelope_t *again = bmq_envelope_decode (buf, len, err, sizeof err);
            if (!again || !json_equal (again->body, env->body)) abort ();
            bmq_envelope_destroy (&again);
            free (buf);
        }
        size_t events = 0, skipped = 0;
        bmq_progress_each (env, s_one, &events, &skipped);
        size_t held = env->type == BMQ_MSG_PROGRESS_BATCH ? json_array_size (json_object_get (env->body, "events"))
                    : env->type == BMQ_MSG_PROGRESS;
        if (events + skipped != held) abort ();
        bmq_envelope_destroy (&env);
    }
    return 0;
}
