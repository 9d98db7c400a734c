/* Fuzz the plan validator with arbitrary JSON: it must always produce a
 * verdict, and a verdict that accepts must only name palette operations. */
#include "palette.h"
#include "plan_validator.h"
#include <stdint.h>
#include <stdlib.h>

static bmq_palette_t *s_palette;

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (!s_palette) {
        s_palette = bmq_palette_load (BMQ_SOURCE_DIR "/proto/palette.yaml", NULL, 0);
        if (!s_palette) abort ();
    }
    json_t *plan = json_loadb ((const char *) data, size, JSON_DECODE_ANY, NULL);
    if (!plan) return 0;
    json_t *verdict = bmq_plan_validate (s_palette, plan);
    if (!verdict) abort ();
    if (json_is_true (json_object_get (verdict, "accepted"))) {
        size_t i;
        json_t *step;
        json_array_foreach (plan, i, step)
            if (!bmq_palette_has (s_palette, json_string_value (json_object_get (step, "operation")))) abort ();
    }
    json_decref (verdict);
    json_decref (plan);
    return 0;
}
