/* blendmq-planner — turns a prompt into an action plan. */
#include "planner_service.h"
#include "service.h"

int main (int argc, char **argv)
{
    int code = 0;
    bmq_config_t *cfg = bmq_service_start (argc, argv, "planner",
        "Turns a prompt (\"build a snowman\") into a multi-step action plan. Backends\n"
        "(planner.backend): offline matches the recipe knowledge base; gemini talks to\n"
        "Gemini (GEMINI_API_KEY, GEMINI_MODEL, GEMINI_BASE_URL); openai to any\n"
        "OpenAI-compatible server (planner.openai_base_url, OPENAI_API_KEY). auto, the\n"
        "default, is gemini when GEMINI_API_KEY is set, else offline.", &code);
    if (!cfg) return code;
    code = bmq_planner_service_run (cfg);
    bmq_config_destroy (&cfg);
    return code;
}
