/* fake_llm — a local HTTP server (libmicrohttpd) that stands in for Gemini or
 * an OpenAI-compatible server in tests. It binds 127.0.0.1 on a port the OS
 * picks, answers each POST with the next scripted reply (status, headers,
 * body, delays, a body sent in timed chunks for streaming), and keeps every
 * request (path with query, headers, parsed JSON body) for the test to check.
 * With no scripted reply left it answers 500, so a runaway client shows. */
#ifndef BMQ_FAKE_LLM_H
#define BMQ_FAKE_LLM_H

#include <jansson.h>
#include <stddef.h>

typedef struct {
    int         status;
    const char *content_type;       /* default application/json */
    const char *body;
    int         delay_ms;           /* before the headers */
    size_t      chunk;              /* > 0: send the body this many bytes at a time… */
    int         chunk_delay_ms;     /* …this far apart */
    const char *header_name;        /* one extra header (Retry-After …) */
    const char *header_value;
} fake_reply_t;

typedef struct fake_llm_t fake_llm_t;

fake_llm_t *fake_llm_new (void);
void        fake_llm_destroy (fake_llm_t **self_p);
const char *fake_llm_url (const fake_llm_t *self);              /* http://127.0.0.1:PORT */
void        fake_llm_push (fake_llm_t *self, const fake_reply_t *reply);
/* Shorthand: status, JSON body. */
void        fake_llm_json (fake_llm_t *self, int status, const char *body);
size_t      fake_llm_requests (fake_llm_t *self);
size_t      fake_llm_unused (fake_llm_t *self);                 /* scripted replies not served */
/* Request i (0-based): borrowed; NULL when there is no such request. */
json_t     *fake_llm_body (fake_llm_t *self, size_t i);         /* NULL also when it was not JSON */
const char *fake_llm_path (fake_llm_t *self, size_t i);         /* "/v1beta/models/m:generateContent" */
const char *fake_llm_header (fake_llm_t *self, size_t i, const char *name);   /* case-insensitive */
/* Every header of every request, as one text (for "the key never leaks" checks). */
char       *fake_llm_all_headers (fake_llm_t *self);

#endif
