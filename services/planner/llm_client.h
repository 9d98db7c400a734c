/* llm_client — one conversation with a function-calling chat model, whatever
 * its wire format. The planner's dialogue (planner_dialogue.c) is written once
 * against this interface; each backend only translates:
 *
 *   llm_gemini.c  Gemini generateContent / streamGenerateContent?alt=sse:
 *                 systemInstruction, contents[] of user/model turns,
 *                 tools[].functionDeclarations, functionCall parts answered by
 *                 functionResponse parts; every part the model sent (with its
 *                 thoughtSignature) is sent back exactly as received.
 *   llm_openai.c  OpenAI-compatible chat completions (Ollama, llama.cpp, vLLM):
 *                 messages[], tools[] of type function, tool_calls whose
 *                 arguments are a JSON string, answered by role "tool" messages.
 *
 * A conversation keeps its own history. One turn sends it and appends what the
 * model answered; the caller then appends the answers to the model's function
 * calls (add_results) or a plain user message (add_user_text) before the next
 * turn. Function declarations are given in one neutral shape,
 *   [{name, description, parameters: JSON Schema subset (type, description,
 *     properties, required, items, enum)}],
 * which each backend converts. */
#ifndef BMQ_LLM_CLIENT_H
#define BMQ_LLM_CLIENT_H

#include "llm_http.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char   *id;                 /* the call's id when the API gives one (OpenAI always), else NULL */
    char   *name;
    json_t *args;               /* a JSON object; NULL when the model's arguments were not one */
    char    args_error[160];    /* why args is NULL */
} bmq_llm_call_t;

typedef enum {
    BMQ_LLM_FINISH_STOP,        /* a natural end: function calls, or words */
    BMQ_LLM_FINISH_MAX_TOKENS,  /* cut off (MAX_TOKENS, "length") */
    BMQ_LLM_FINISH_BLOCKED,     /* refused: SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII,
                                   a blocked prompt, "content_filter" */
    BMQ_LLM_FINISH_MALFORMED,   /* MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL */
    BMQ_LLM_FINISH_OTHER        /* anything else the API may add */
} bmq_llm_finish_t;

typedef struct {
    char            *text;          /* the model's words this turn, thoughts left out; never NULL after a turn */
    bmq_llm_call_t  *calls;
    size_t           call_count;
    bmq_llm_finish_t finish;
    char             finish_raw[48];/* as the API said it */
    char             detail[256];   /* finishMessage, blockReason … */
    json_t          *usage;         /* token counts when given, else NULL */
    bool             streamed;      /* the words already went to on_text as they came */
} bmq_llm_reply_t;

typedef struct {
    const char       *base_url;     /* without a trailing path: https://generativelanguage.googleapis.com, http://127.0.0.1:11434/v1 */
    const char       *model;
    const char       *api_key;      /* may be NULL or "" (a local server) */
    bool              stream;       /* Gemini: streamGenerateContent?alt=sse */
    bmq_llm_http_policy_t policy;
    bmq_llm_http_hooks_t  hooks;
    /* Streamed words as they arrive (may be NULL). */
    void            (*on_text) (void *ctx, const char *text, size_t len);
    void             *text_ctx;
    const char       *system;       /* system prompt */
    const json_t     *tools;        /* neutral function declarations */
} bmq_llm_config_t;

typedef struct bmq_llm_t bmq_llm_t;

#define BMQ_LLM_IMAGE_KEY "_image"

typedef struct {
    /* Send the history, parse the answer into reply, append the model's turn.
     * 0, or -1 with err (HTTP failures after retries, or an answer that is not
     * the API's shape: code bad_response). */
    int  (*turn) (bmq_llm_t *self, bmq_llm_reply_t *reply, bmq_llm_http_error_t *err);
    /* Answer every call of the last reply: results[i] (an object, borrowed) answers calls[i].
     * A result may carry a picture under BMQ_LLM_IMAGE_KEY ({mime_type, data: base64}): it is
     * taken out of the answer and sent as the wire format's image part (Gemini: an inlineData
     * part in the same user turn; OpenAI: a user message with an image_url data URL). */
    void (*add_results) (bmq_llm_t *self, const bmq_llm_reply_t *reply, json_t *const *results);
    /* A plain user message (merged into the previous one when the API wants turns to alternate). */
    void (*add_user_text) (bmq_llm_t *self, const char *text);
    void (*destroy) (bmq_llm_t *self);
    json_t *(*history) (bmq_llm_t *self);     /* borrowed, for tests and audit */
} bmq_llm_ops_t;

struct bmq_llm_t {
    const bmq_llm_ops_t *ops;
    const char          *backend;           /* "gemini", "openai" */
};

/* A new conversation whose first user message is `prompt`. backend is
 * "gemini" or "openai"; NULL for anything else. The config's strings are
 * copied. */
bmq_llm_t *bmq_llm_new (const char *backend, const bmq_llm_config_t *cfg, const char *prompt);
bmq_llm_t *bmq_llm_gemini_new (const bmq_llm_config_t *cfg, const char *prompt);
bmq_llm_t *bmq_llm_openai_new (const bmq_llm_config_t *cfg, const char *prompt);
void bmq_llm_destroy (bmq_llm_t **self_p);

void bmq_llm_reply_clear (bmq_llm_reply_t *reply);
/* Append a call to reply (helpers for the backends). */
bmq_llm_call_t *bmq_llm_reply_add_call (bmq_llm_reply_t *reply, const char *id, const char *name);
/* Append text to reply->text. */
void bmq_llm_reply_add_text (bmq_llm_reply_t *reply, const char *text, size_t len);

#endif
