/* retry — Retry-After and back-off with jitter, for every outside-API client. */
#include "retry.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int bmq_retry_after_header (const char *line, size_t len)
{
    static const char name[] = "Retry-After:";
    size_t n = sizeof name - 1;
    if (!line || len <= n || strncasecmp (line, name, n)) return -1;
    char digits[16];
    size_t k = 0;
    for (size_t i = n; i < len && k + 1 < sizeof digits; i++) {
        if (line[i] == ' ' || line[i] == '\t') { if (k) break; continue; }
        if (line[i] < '0' || line[i] > '9') break;
        digits[k++] = line[i];
    }
    digits[k] = 0;
    if (!k) return -1;                          /* an HTTP-date, or nothing: the back-off decides */
    long v = strtol (digits, NULL, 10);
    return v >= 0 && v < 86400 ? (int) (v * 1000) : -1;
}

int bmq_retry_delay_ms (int attempt, int base_ms, int max_ms, int retry_after_ms, int retry_after_max_ms)
{
    if (retry_after_ms >= 0) return retry_after_ms < retry_after_max_ms ? retry_after_ms : retry_after_max_ms;
    int64_t d = base_ms > 0 ? base_ms : 500;
    for (int i = 0; i < attempt && (max_ms <= 0 || d < max_ms); i++) d *= 2;
    if (max_ms > 0 && d > max_ms) d = max_ms;
    return (int) (d / 2 + random () % (d / 2 + 1));     /* equal jitter */
}
