/* blendmq-validator — checks every plan against the capability palette. */
#include "service.h"
#include "validator_worker.h"

int main (int argc, char **argv)
{
    int code = 0;
    bmq_config_t *cfg = bmq_service_start (argc, argv, "validator",
        "Checks whole action plans against the capability palette before anything runs and\n"
        "seals the accepted ones. Run as many as you like: each joins the gateway's pool.", &code);
    if (!cfg) return code;
    code = bmq_validator_worker_run (cfg);
    bmq_config_destroy (&cfg);
    return code;
}
