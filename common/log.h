/* log — one line per event on stderr, as text or as JSON lines.
 *
 * Text:  2026-11-22T10:00:00.123Z INFO  executor: step 2/5 ok
 * JSON:  {"ts":"…","level":"info","service":"executor","msg":"step 2/5 ok"}
 * The format is chosen by bmq_log_init (flag --log-json, or BLENDMQ_LOG_FORMAT=json). */
#ifndef BMQ_LOG_H
#define BMQ_LOG_H

#include <stdbool.h>

typedef enum { BMQ_LOG_DEBUG, BMQ_LOG_INFO, BMQ_LOG_WARN, BMQ_LOG_ERROR } bmq_log_level_t;

void bmq_log_init (const char *service, bool json, bmq_log_level_t min_level);
/* Parse "debug" / "info" / "warn" / "error"; unknown gives INFO. */
bmq_log_level_t bmq_log_level_parse (const char *name);
void bmq_log (bmq_log_level_t level, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

#define bmq_debug(...) bmq_log (BMQ_LOG_DEBUG, __VA_ARGS__)
#define bmq_info(...)  bmq_log (BMQ_LOG_INFO, __VA_ARGS__)
#define bmq_warn(...)  bmq_log (BMQ_LOG_WARN, __VA_ARGS__)
#define bmq_error(...) bmq_log (BMQ_LOG_ERROR, __VA_ARGS__)

#endif
