/* audit_service — the audit process's loop. Returns the exit code. */
#ifndef BMQ_AUDIT_SERVICE_H
#define BMQ_AUDIT_SERVICE_H
#include "config.h"
int bmq_audit_service_run (bmq_config_t *cfg);
#endif
