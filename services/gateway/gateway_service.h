/* gateway_service — the front door's loop. Returns the exit code. */
#ifndef BMQ_GATEWAY_SERVICE_H
#define BMQ_GATEWAY_SERVICE_H
#include "config.h"
int bmq_gateway_service_run (bmq_config_t *cfg);
#endif
