/* planner_service — turns prompts into action plans: offline recipes, or a
 * dialogue with Gemini or an OpenAI-compatible model (see planner_dialogue.h). */
#ifndef BMQ_PLANNER_SERVICE_H
#define BMQ_PLANNER_SERVICE_H
#include "config.h"
int bmq_planner_service_run (bmq_config_t *cfg);
#endif
