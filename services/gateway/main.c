/* blendmq-gateway — the front door clients talk to. */
#include "gateway_service.h"
#include "service.h"

int main (int argc, char **argv)
{
    int code = 0;
    bmq_config_t *cfg = bmq_service_start (argc, argv, "gateway",
        "The front door: takes prompts and plans from clients, sees each through the planner,\n"
        "the validator pool and the executor, and streams progress back.", &code);
    if (!cfg) return code;
    code = bmq_gateway_service_run (cfg);
    bmq_config_destroy (&cfg);
    return code;
}
