/* Fuzz the bus decoder: any bytes must decode cleanly or fail with a message,
 * and what decodes must encode again. */
#include "codec.h"
#include <stdint.h>
#include <stdlib.h>

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
        bmq_envelope_destroy (&env);
    }
    return 0;
}
