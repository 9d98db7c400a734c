/* executor_service — owns one Blender; runs sealed plans step by step, one
 * plan at a time in arrival order, publishing a progress event per step. */
#ifndef BMQ_EXECUTOR_SERVICE_H
#define BMQ_EXECUTOR_SERVICE_H
#include "config.h"
int bmq_executor_service_run (bmq_config_t *cfg);
#endif
