/* assets_http — one GET over libcurl under the assets client's policy.
 *
 * Contract:
 *  - Timeouts: connect_timeout_ms to connect, timeout_ms for one exchange
 *    start to end, and a low-speed floor (fewer than low_speed_bytes per
 *    second for low_speed_secs seconds fails), so a slow drip cannot hold a
 *    download open.
 *  - A byte cap (max_bytes) enforced as bytes arrive: a body that never ends
 *    fails at the cap, never later.
 *  - Redirects are never followed: a 3xx is an error that names where it
 *    pointed. Only http and https are spoken.
 *  - Retries: 429, 5xx and transport errors (refused, reset, timed out, cut
 *    short) are tried again up to `retries` times, waiting base × 2^n (capped
 *    at retry_max_ms) or the server's Retry-After (capped at
 *    retry_after_max_ms). Before each retry the sink's reset is called. Other
 *    statuses, the cap, a wrong content type and a sink refusal fail at once.
 *  - expect_type (e.g. "application/json"): a 2xx answer of another media
 *    type fails (parameters such as "; charset=utf-8" are allowed).
 *  - The User-Agent is "blendmq/<version>".
 *  - A request may carry extra headers, and be a POST (a body of a given
 *    type, or a multipart form whose parts may be files with a filename and
 *    a content type). A POST is retried like a GET: a caller whose
 *    POST must not be repeated (it creates something) sets retries to 0.
 *  - bmq_assets_http_abort_all () makes every exchange in the process, and
 *    every back-off wait, end with "aborted" (libcurl checks at least once a second) (a service
 *    that stops does not wait for a download).
 * Every failure fills err with a message naming the URL's host and what was
 * expected. */
#ifndef BMQ_ASSETS_HTTP_H
#define BMQ_ASSETS_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int connect_timeout_ms;     /* default 10000 */
    int timeout_ms;             /* one exchange; default 120000 */
    int low_speed_bytes;        /* default 1024 (bytes/s) */
    int low_speed_secs;         /* default 30 */
    int retries;                /* default 3 (negative: 0) */
    int retry_base_ms;          /* default 500 */
    int retry_max_ms;           /* default 8000 */
    int retry_after_max_ms;     /* default 30000 */
} bmq_assets_http_policy_t;

/* Receives the body as it arrives: 0 to go on, -1 to stop (the call fails
 * with the sink's message, see sink_err). */
typedef int (bmq_assets_http_sink_fn) (void *ctx, const void *data, size_t len);
/* Called before a retry: forget what the sink got. 0 / -1 (stop). */
typedef int (bmq_assets_http_reset_fn) (void *ctx);

/* A multipart file part: bytes (len of them, any value) named `name`, sent
 * with a filename and a content type. */
typedef struct {
    const char *name;
    const char *filename;
    const char *type;
    const void *data;
    size_t      len;
} bmq_assets_http_file_t;

typedef struct {
    const char *url;
    uint64_t    max_bytes;          /* the body may have this many bytes (0: none) */
    const char *cap_label;          /* what the cap is, for messages ("the 100 bytes it declared"); NULL: "N bytes (the cap)" */
    const char *expect_type;        /* NULL: any */
    const char *what;               /* "the Poly Haven API", "file x.hdr": for messages */
    bmq_assets_http_sink_fn  *sink; /* NULL: the body is collected in memory */
    bmq_assets_http_reset_fn *reset;
    void       *ctx;
    char       *sink_err;           /* where the sink may say why it stopped */
    size_t      sink_err_len;
    /* Optional, for APIs that need more than a GET (NULL / 0: a plain GET). */
    const char *const *headers;     /* extra request headers ("Authorization: Token …"), NULL-terminated */
    const char *post_body;          /* a POST with these bytes … */
    size_t      post_len;
    const char *post_type;          /* … of this Content-Type ("application/json") */
    const char *const *form;        /* a multipart/form-data POST: name, value, name, value, …, NULL */
    const bmq_assets_http_file_t *files;    /* … with these file parts after the form's (nfiles of them) */
    size_t      nfiles;
} bmq_assets_http_request_t;

typedef struct {
    int  status;                    /* last HTTP status; 0 when no answer came */
    int  attempts;                  /* exchanges made */
    char message[768];
} bmq_assets_http_error_t;

/* GET req->url. Without a sink, *body gets the bytes (NUL-terminated, malloc'd;
 * len in *len). 0 on success; -1 with err filled. */
int bmq_assets_http_get (const bmq_assets_http_request_t *req, const bmq_assets_http_policy_t *policy,
                         char **body, size_t *len, bmq_assets_http_error_t *err);

/* req as a JSON object (new reference), for the sources' APIs: req's what
 * names the API ("the Sketchfab API"), shown the call ("GET /files/x").
 * NULL with err: the HTTP failure followed by " (shown)", or "<what>
 * answered <shown> with …, expected a JSON object"; *status (when not NULL)
 * gets the last HTTP status, 0 when none came. Duplicate keys are refused. */
json_t *bmq_assets_http_json (const bmq_assets_http_request_t *req, const bmq_assets_http_policy_t *policy,
                              const char *shown, int *status, char *err, size_t errlen);

/* The policy with every unset (0) field at its default. */
bmq_assets_http_policy_t bmq_assets_http_policy_defaults (const bmq_assets_http_policy_t *in);

/* "blendmq/0.1.0". */
const char *bmq_assets_http_user_agent (void);

/* The host (and ":port" when the URL names one) of url, for messages; "?" when it has none. */
void bmq_assets_http_host (const char *url, char *out, size_t outlen);

/* Whether this thread's last bmq_assets_http_get gave up because the source
 * could not be reached: every attempt ended in a network failure (no host, no
 * connection, timed out, cut off) or a "try later" answer (408, 429, 5xx) until
 * the retries ran out. A refusal (404, a bad answer, a cap) is not. Cleared by
 * each bmq_assets_http_get and by _clear (before a fetch, so a fetch that
 * failed without asking anything does not read an older answer). The executor
 * applies an optional asset's fallback only then (executor_assets.c). */
bool bmq_assets_http_unreachable (void);
void bmq_assets_http_unreachable_clear (void);

/* From then on every exchange and retry wait fails at once ("aborted"). */
void bmq_assets_http_abort_all (void);
bool bmq_assets_http_aborted (void);

/* Once per process before threads use libcurl (curl_global_init). */
void bmq_assets_http_global_init (void);

#endif
