/* planner_settings — the planner's configuration resolved once at start.
 *
 * Backend: planner.backend is auto (the default), offline, gemini or openai.
 * auto means Gemini when GEMINI_API_KEY is set, else offline.
 *
 * Precedence for the Gemini model and base URL: GEMINI_MODEL / GEMINI_BASE_URL
 * from the environment, then planner.gemini_model / planner.gemini_base_url
 * (file or BLENDMQ_PLANNER_* variables), then the built-in defaults
 * (gemini-flash-latest, Google's alias that follows the current Flash model;
 * https://generativelanguage.googleapis.com).
 *
 * API keys come from the environment only (GEMINI_API_KEY, OPENAI_API_KEY),
 * never from the configuration: `blendmq up` writes the effective
 * configuration to its run folder, and a key must never land in a file. A key
 * is refused over plain http:// to anything but this machine. */
#ifndef BMQ_PLANNER_SETTINGS_H
#define BMQ_PLANNER_SETTINGS_H

#include "config.h"
#include "llm_http.h"

#include <stdbool.h>
#include <stddef.h>

#define BMQ_GEMINI_DEFAULT_MODEL "gemini-flash-latest"
#define BMQ_GEMINI_DEFAULT_URL   "https://generativelanguage.googleapis.com"

typedef struct {
    char              backend[16];          /* offline, gemini, openai */
    char              model[160];
    char              base_url[512];
    char             *api_key;              /* owned; wiped on clear */
    bool              stream;
    bmq_llm_http_policy_t policy;               /* deadline set per dialogue */
    int               timeout_ms, max_turns, max_fix_rounds, max_concurrent, inspect_timeout_ms;
    int               review_rounds;        /* looks at a plan that ran, then fixes (issue 16); 0: never */
    int               look_timeout_ms;      /* look and search_assets through the gateway */

    bool              fallback_offline;
    char              recipes_dir[1024], saved_dir[1024], prompts_dir[1024], palette[1024];
    char              gateway[512];         /* gateway.endpoint: inspect.request, capabilities.request */
} bmq_planner_settings_t;

/* 0, or -1 with err (an unknown backend, gemini without a key, a key over
 * cleartext to another host, a bad URL or model name). */
int  bmq_planner_settings_load (bmq_planner_settings_t *s, const bmq_config_t *cfg, char *err, size_t errlen);
void bmq_planner_settings_clear (bmq_planner_settings_t *s);
/* "offline", "gemini (gemini-flash-latest)" — for logs and heartbeats. */
const char *bmq_planner_settings_describe (const bmq_planner_settings_t *s, char *buf, size_t len);

#endif
