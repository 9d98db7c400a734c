/* llm_client — what the backends share. */
#include "llm_client.h"

#include <stdlib.h>
#include <string.h>

bmq_llm_t *bmq_llm_new (const char *backend, const bmq_llm_config_t *cfg, const char *prompt)
{
    if (!backend || !cfg || !prompt) return NULL;
    if (!strcmp (backend, "gemini")) return bmq_llm_gemini_new (cfg, prompt);
    if (!strcmp (backend, "openai")) return bmq_llm_openai_new (cfg, prompt);
    return NULL;
}

void bmq_llm_destroy (bmq_llm_t **self_p)
{
    if (!self_p || !*self_p) return;
    (*self_p)->ops->destroy (*self_p);
    *self_p = NULL;
}

void bmq_llm_reply_clear (bmq_llm_reply_t *reply)
{
    for (size_t i = 0; i < reply->call_count; i++) {
        free (reply->calls[i].id);
        free (reply->calls[i].name);
        json_decref (reply->calls[i].args);
    }
    free (reply->calls);
    free (reply->text);
    json_decref (reply->usage);
    memset (reply, 0, sizeof *reply);
}

bmq_llm_call_t *bmq_llm_reply_add_call (bmq_llm_reply_t *reply, const char *id, const char *name)
{
    bmq_llm_call_t *calls = realloc (reply->calls, (reply->call_count + 1) * sizeof *calls);
    if (!calls) return NULL;
    reply->calls = calls;
    bmq_llm_call_t *c = &calls[reply->call_count++];
    memset (c, 0, sizeof *c);
    c->id = id ? strdup (id) : NULL;
    c->name = strdup (name ? name : "");
    return c;
}

void bmq_llm_reply_add_text (bmq_llm_reply_t *reply, const char *text, size_t len)
{
    size_t have = reply->text ? strlen (reply->text) : 0;
    char *t = realloc (reply->text, have + len + 1);
    if (!t) return;
    memcpy (t + have, text, len);
    t[have + len] = 0;
    reply->text = t;
}
