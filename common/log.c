/* log — text or JSON-lines logging to stderr. */
#include "log.h"

#include <jansson.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static char s_service[48] = "blendmq";
static bool s_json;
static bmq_log_level_t s_min = BMQ_LOG_INFO;

void bmq_log_init (const char *service, bool json, bmq_log_level_t min_level)
{
    snprintf (s_service, sizeof s_service, "%s", service ? service : "blendmq");
    s_json = json;
    s_min = min_level;
}

bmq_log_level_t bmq_log_level_parse (const char *name)
{
    if (!name) return BMQ_LOG_INFO;
    if (!strcasecmp (name, "debug")) return BMQ_LOG_DEBUG;
    if (!strcasecmp (name, "warn") || !strcasecmp (name, "warning")) return BMQ_LOG_WARN;
    if (!strcasecmp (name, "error")) return BMQ_LOG_ERROR;
    return BMQ_LOG_INFO;
}

void bmq_log (bmq_log_level_t level, const char *fmt, ...)
{
    static const char *names[] = { "debug", "info", "warn", "error" };
    static const char *upper[] = { "DEBUG", "INFO ", "WARN ", "ERROR" };
    if (level < s_min) return;
    char msg[2048];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof msg, fmt, ap);
    va_end (ap);

    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r (&ts.tv_sec, &tm);
    char when[40];
    size_t n = strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf (when + n, sizeof when - n, ".%03ldZ", ts.tv_nsec / 1000000);

    if (s_json) {
        json_t *o = json_pack ("{s:s, s:s, s:s, s:s}", "ts", when, "level", names[level],
                               "service", s_service, "msg", msg);
        char *line = o ? json_dumps (o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        if (line) fprintf (stderr, "%s\n", line);
        free (line);
        json_decref (o);
    }
    else
        fprintf (stderr, "%s %s %s: %s\n", when, upper[level], s_service, msg);
}
