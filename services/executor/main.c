/* blendmq-executor — owns the Blender connection and runs sealed plans. */
#include "executor_service.h"
#include "service.h"

int main (int argc, char **argv)
{
    int code = 0;
    bmq_config_t *cfg = bmq_service_start (argc, argv, "executor",
        "Owns the connection to one Blender (the blendmq add-on), runs plans the validator\n"
        "sealed, step by step, and publishes a progress event for every step.", &code);
    if (!cfg) return code;
    code = bmq_executor_service_run (cfg);
    bmq_config_destroy (&cfg);
    return code;
}
