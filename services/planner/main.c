/* blendmq-planner — turns a prompt into an action plan. */
#include "planner_service.h"
#include "service.h"

int main (int argc, char **argv)
{
    int code = 0;
    bmq_config_t *cfg = bmq_service_start (argc, argv, "planner",
        "Turns a prompt (\"build a snowman\") into a multi-step action plan. The offline\n"
        "backend matches the prompt against the recipe knowledge base.", &code);
    if (!cfg) return code;
    code = bmq_planner_service_run (cfg);
    bmq_config_destroy (&cfg);
    return code;
}
