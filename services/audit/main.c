/* blendmq-audit — stores every record of what blendmq did, in SQLite. */
#include "audit_service.h"
#include "service.h"

int main (int argc, char **argv)
{
    int code = 0;
    bmq_config_t *cfg = bmq_service_start (argc, argv, "audit",
        "Receives audit records from every blendmq service and stores them in SQLite (WAL),\n"
        "each exactly once, acknowledging only what is committed.", &code);
    if (!cfg) return code;
    code = bmq_audit_service_run (cfg);
    bmq_config_destroy (&cfg);
    return code;
}
