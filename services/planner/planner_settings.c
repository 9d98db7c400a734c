/* planner_settings — configuration and environment, resolved once. */
#include "planner_settings.h"
#include "service.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_env (const char *name)
{
    const char *v = getenv (name);
    return v && *v ? v : NULL;
}

static int s_int (const bmq_config_t *cfg, const char *key, int lo, int hi, int fallback)
{
    int64_t v = bmq_config_int (cfg, key);
    return v < lo || v > hi ? fallback : (int) v;
}

/* http(s)://host[:port][/path]; a key may travel over http:// only to this machine. */
static int s_url_ok (const char *url, bool with_key, char *err, size_t errlen)
{
    bool https = !strncmp (url, "https://", 8), http = !strncmp (url, "http://", 7);
    if (!https && !http) {
        snprintf (err, errlen, "base URL '%.200s' must start with https:// or http://", url);
        return -1;
    }
    for (const char *c = url; *c; c++)
        if ((unsigned char) *c <= ' ' || *c == '"' || *c == '\\') {
            snprintf (err, errlen, "base URL '%.200s' holds a space or control character", url);
            return -1;
        }
    if (http && with_key) {
        const char *host = url + 7;
        size_t hl = strcspn (host, ":/?#");
        if (!strncmp (host, "[::1]", 5)) hl = 5;
        bool local = (hl == 9 && !strncmp (host, "localhost", 9)) || (hl == 5 && !strncmp (host, "[::1]", 5));
        if (hl > 4 && !strncmp (host, "127.", 4)) {
            local = true;
            for (size_t i = 4; i < hl; i++) local = local && (isdigit ((unsigned char) host[i]) || host[i] == '.');
        }
        if (!local) {
            snprintf (err, errlen, "refusing to send an API key over plain http:// to %.200s (use https://, or a server on this machine)", host);
            return -1;
        }
    }
    return 0;
}

int bmq_planner_settings_load (bmq_planner_settings_t *s, const bmq_config_t *cfg, char *err, size_t errlen)
{
    memset (s, 0, sizeof *s);
    const char *backend = bmq_config_str (cfg, "planner.backend");
    const char *gkey = s_env ("GEMINI_API_KEY");
    if (!*backend || !strcmp (backend, "auto")) backend = gkey ? "gemini" : "offline";
    if (strcmp (backend, "offline") && strcmp (backend, "gemini") && strcmp (backend, "openai")) {
        snprintf (err, errlen, "planner.backend '%.32s' is not one of auto, offline, gemini, openai", backend);
        return -1;
    }
    snprintf (s->backend, sizeof s->backend, "%s", backend);
    if (!strcmp (backend, "gemini")) {
        if (!gkey) { snprintf (err, errlen, "planner.backend is gemini but GEMINI_API_KEY is not set"); return -1; }
        const char *model = s_env ("GEMINI_MODEL");
        if (!model) model = *bmq_config_str (cfg, "planner.gemini_model") ? bmq_config_str (cfg, "planner.gemini_model") : BMQ_GEMINI_DEFAULT_MODEL;
        const char *url = s_env ("GEMINI_BASE_URL");
        if (!url) url = *bmq_config_str (cfg, "planner.gemini_base_url") ? bmq_config_str (cfg, "planner.gemini_base_url") : BMQ_GEMINI_DEFAULT_URL;
        snprintf (s->model, sizeof s->model, "%s", model);
        snprintf (s->base_url, sizeof s->base_url, "%s", url);
        s->api_key = strdup (gkey);
        s->stream = bmq_config_bool (cfg, "planner.gemini_stream");
    }
    else if (!strcmp (backend, "openai")) {
        const char *okey = s_env ("OPENAI_API_KEY");
        snprintf (s->model, sizeof s->model, "%s", bmq_config_str (cfg, "planner.openai_model"));
        snprintf (s->base_url, sizeof s->base_url, "%s", bmq_config_str (cfg, "planner.openai_base_url"));
        s->api_key = strdup (okey ? okey : "");
        if (!*s->model) { snprintf (err, errlen, "planner.openai_model is empty"); return -1; }
    }
    if (strcmp (backend, "offline")) {
        for (const char *c = s->model; *c; c++)
            if ((unsigned char) *c <= ' ' || *c == '/' || *c == '?' || *c == '#') {
                if (!strcmp (backend, "gemini") && !strncmp (s->model, "models/", 7) && c == s->model + 6) continue;
                if (!strcmp (backend, "openai") && *c == '/') continue;          /* "org/model" is common */
                snprintf (err, errlen, "model name '%.100s' has a character it cannot have", s->model);
                bmq_planner_settings_clear (s);
                return -1;
            }
        if (s_url_ok (s->base_url, s->api_key && *s->api_key, err, errlen)) { bmq_planner_settings_clear (s); return -1; }
    }
    s->policy = (bmq_llm_http_policy_t) {
        .connect_timeout_ms = s_int (cfg, "planner.connect_timeout_ms", 100, 120000, 10000),
        .request_timeout_ms = s_int (cfg, "planner.request_timeout_ms", 100, 600000, 60000),
        .max_retries        = s_int (cfg, "planner.max_retries", 0, 10, 4),
        .retry_base_ms      = s_int (cfg, "planner.retry_base_ms", 1, 60000, 500),
        .retry_max_ms       = s_int (cfg, "planner.retry_max_ms", 1, 600000, 8000),
        .retry_after_max_ms = s_int (cfg, "planner.retry_after_max_ms", 0, 600000, 60000),
    };
    s->timeout_ms = s_int (cfg, "planner.dialogue_timeout_ms", 1000, 3600000, 100000);
    s->max_turns = s_int (cfg, "planner.max_turns", 1, 100, 12);
    s->max_fix_rounds = s_int (cfg, "planner.max_fix_rounds", 0, 10, 2);
    s->max_concurrent = s_int (cfg, "planner.max_concurrent", 1, 64, 4);
    s->inspect_timeout_ms = s_int (cfg, "planner.inspect_timeout_ms", 50, 60000, 3000);
    s->review_rounds = s_int (cfg, "planner.review_rounds", 0, 5, 1);
    s->look_timeout_ms = s_int (cfg, "planner.look_timeout_ms", 100, 300000, 30000);
    s->fallback_offline = bmq_config_bool (cfg, "planner.fallback_offline");
    bmq_service_path (bmq_config_str (cfg, "planner.recipes_dir"), "services/planner/recipes", s->recipes_dir, sizeof s->recipes_dir);
    bmq_service_path (bmq_config_str (cfg, "planner.prompts_dir"), "prompts", s->prompts_dir, sizeof s->prompts_dir);
    bmq_service_path (bmq_config_str (cfg, "validator.palette"), "proto/palette.yaml", s->palette, sizeof s->palette);
    const char *saved = bmq_config_str (cfg, "planner.saved_recipes_dir");
    if (*saved) snprintf (s->saved_dir, sizeof s->saved_dir, "%s", saved);
    else {
        const char *xdg = s_env ("XDG_STATE_HOME"), *home = s_env ("HOME");
        if (xdg) snprintf (s->saved_dir, sizeof s->saved_dir, "%s/blendmq/recipes", xdg);
        else snprintf (s->saved_dir, sizeof s->saved_dir, "%s/.local/state/blendmq/recipes", home ? home : "/tmp");
    }
    /* inspect_tool and the validator pool's palette: through the gateway's front */
    snprintf (s->gateway, sizeof s->gateway, "%s", bmq_config_str (cfg, "gateway.endpoint"));
    return 0;
}

void bmq_planner_settings_clear (bmq_planner_settings_t *s)
{
    if (s->api_key) {
        memset (s->api_key, 0, strlen (s->api_key));
        free (s->api_key);
        s->api_key = NULL;
    }
}

const char *bmq_planner_settings_describe (const bmq_planner_settings_t *s, char *buf, size_t len)
{
    if (!strcmp (s->backend, "offline")) snprintf (buf, len, "offline");
    else snprintf (buf, len, "%s (%s)", s->backend, s->model);
    return buf;
}
