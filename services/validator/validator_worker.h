/* validator_worker — one validator process: a Paranoid Pirate worker that
 * checks plans for the gateway's broker and seals the ones it accepts. */
#ifndef BMQ_VALIDATOR_WORKER_H
#define BMQ_VALIDATOR_WORKER_H
#include "config.h"
int bmq_validator_worker_run (bmq_config_t *cfg);
#endif
