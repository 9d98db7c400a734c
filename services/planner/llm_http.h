/* llm_http — one JSON POST to an LLM API over libcurl, with the retry policy
 * every backend shares.
 *
 * Retries: 408, 429, 500, 502, 503 and 504, and network failures (refused,
 * reset, timed out), up to max_retries times. The wait before retry n
 * (0-based) is base × 2^n capped at max_ms, with equal jitter (a random point
 * in its upper half), unless the server asked for a delay (a Gemini
 * RetryInfo.retryDelay or a Retry-After header): that delay is honoured,
 * capped at retry_after_max_ms. Nothing waits or starts past the deadline:
 * an exchange gets min(request timeout, time left), and a wait that would end
 * past it ends the call with the last error instead. Other statuses (400, 401,
 * 403, 404 …) fail at once with the API's own message.
 *
 * The API key travels in a header the caller builds; it is never logged, and
 * every message this module produces has it blanked out ("[redacted]"), in
 * case a server or proxy echoes it.
 *
 * Streaming: with an event callback, a text/event-stream answer is cut into
 * server-sent events as bytes arrive and each event's data is handed over at
 * once. A 2xx answer that is plain JSON instead (a server that ignored
 * alt=sse) is handed over as events too: the object, or each element of an
 * array. Before a retry the callback gets (NULL, 0): "forget what you got". */
#ifndef BMQ_LLM_HTTP_H
#define BMQ_LLM_HTTP_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define BMQ_HTTP_MAX_BODY   (8u << 20)      /* bytes of an answer kept at most */

typedef struct {
    int     connect_timeout_ms;
    int     request_timeout_ms;     /* one exchange */
    int     max_retries;
    int     retry_base_ms;
    int     retry_max_ms;
    int     retry_after_max_ms;
    int64_t deadline_ms;            /* monotonic (bmq_mono_ms); 0: none */
} bmq_llm_http_policy_t;

typedef struct {
    int  status;                    /* HTTP status; 0 when no answer came */
    bool retryable;
    int  retry_after_ms;            /* what the server asked for; -1 when it did not */
    int  attempts;                  /* exchanges made */
    char code[48];                  /* API status ("RESOURCE_EXHAUSTED"), or timeout, network, bad_response, cancelled, too_large */
    char message[640];              /* for people, key blanked */
} bmq_llm_http_error_t;

typedef struct {
    /* Polled during transfers and waits; true stops the call (code "cancelled"). */
    bool (*cancelled) (void *ctx);
    /* Told before each wait: which error, the retry number (1-based), the delay. */
    void (*retrying) (void *ctx, const bmq_llm_http_error_t *err, int retry, int delay_ms);
    void *ctx;
} bmq_llm_http_hooks_t;

/* One server-sent event's data (NULL, 0: start over). 0 to go on, -1 to stop
 * (the call then fails with code bad_response and the message set by the callback
 * through bmq_llm_http_error_t, see event_err below). */
typedef int (bmq_llm_http_event_fn) (void *ctx, const char *data, size_t len);

typedef struct {
    const char              *url;
    const struct curl_slist *headers;     /* Content-Type is added */
    const json_t            *body;
    const char              *secret;      /* blanked from every message; may be NULL */
    const char              *api_name;    /* "Gemini", "the OpenAI-compatible server": for messages */
    bmq_llm_http_event_fn       *on_event;    /* NULL: not streaming */
    void                    *event_ctx;
    char                    *event_err;   /* where on_event may write why it stopped (event_err_len bytes) */
    size_t                   event_err_len;
} bmq_llm_http_request_t;

/* POST the request under the policy. Non-streaming: *out gets the JSON answer
 * (an object or array; new reference). Streaming: *out stays NULL. 0 on
 * success; -1 with err filled. */
int bmq_llm_http_post (const bmq_llm_http_request_t *req, const bmq_llm_http_policy_t *policy,
                   const bmq_llm_http_hooks_t *hooks, json_t **out, bmq_llm_http_error_t *err);

/* Parse an API error body (Gemini's {"error": {code, message, status,
 * details: [{"@type": "…RetryInfo", "retryDelay": "59s"}]}} or OpenAI's
 * {"error": {message, type, code}}, possibly inside an array) into err:
 * code, message, retry_after_ms. Returns 0 when the body had that shape. */
int bmq_llm_http_parse_error (const char *body, size_t len, bmq_llm_http_error_t *err);

/* A protobuf Duration as JSON ("59s", "1.5s", "0.250s") in ms; -1 if not one. */
int bmq_llm_http_duration_ms (const char *text);

/* Replace every occurrence of secret in text (NUL-terminated, size bytes) by "[redacted]". */
void bmq_llm_http_redact (char *text, size_t size, const char *secret);

/* Make text valid UTF-8 in place: a byte that does not belong to a well-formed
 * sequence (a character cut by a clip) becomes '?'. Returns text. */
char *bmq_llm_http_utf8_fix (char *text);

/* Call once per process before any thread uses libcurl. */
void bmq_llm_http_global_init (void);

#endif
