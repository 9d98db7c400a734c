/* retry — how long an HTTP client waits before trying again, the same rule
 * for every client of an outside API (the planner's LLM, the executor's
 * asset sources).
 *
 *  - A server's Retry-After (delta-seconds form) wins, capped at
 *    retry_after_max_ms.
 *  - Otherwise exponential back-off: base_ms × 2^attempt, capped at max_ms,
 *    with equal jitter (half fixed, half random), so clients that failed
 *    together do not come back together.
 *
 * bmq_retry_after_header reads one raw response header line as libcurl hands
 * it to a header callback ("Retry-After: 3\r\n"): the delay in ms, or -1 when
 * the line is another header or not a number of seconds under a day. */
#ifndef BMQ_RETRY_H
#define BMQ_RETRY_H

#include <stddef.h>

int bmq_retry_after_header (const char *line, size_t len);

/* attempt: 0 for the first retry. retry_after_ms < 0: none was given. */
int bmq_retry_delay_ms (int attempt, int base_ms, int max_ms, int retry_after_ms, int retry_after_max_ms);

#endif
