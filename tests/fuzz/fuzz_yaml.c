/* Fuzz the bounded YAML reader (config, palette, recipes). */
#include "yaml_json.h"
#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char err[256];
    json_t *v = bmq_yaml_parse ((const char *) data, size, err, sizeof err);
    json_decref (v);
    return 0;
}
