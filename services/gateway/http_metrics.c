/* http_metrics — counters and histograms in Prometheus text format. */
#include "http_metrics.h"

#include <czmq.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 12
static const double s_bounds[NBUCKETS] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30 };

typedef enum { S_COUNTER, S_GAUGE, S_HISTOGRAM } s_kind_t;

typedef struct {
    s_kind_t kind;
    char    *name;
    char    *labels;                 /* rendered: a="x",b="y" (may be empty) */
    double   value;                  /* counter, gauge */
    uint64_t buckets[NBUCKETS];      /* histogram: cumulative is computed at render */
    uint64_t count;
    double   sum;
} s_series_t;

static const struct { const char *name; const char *type; const char *help; } s_meta[] = {
    { "blendmq_http_requests_total", "counter", "HTTP requests answered, by route, method and status code" },
    { "blendmq_http_request_duration_seconds", "histogram", "HTTP request duration (an SSE stream counts until it closes)" },
    { "blendmq_mcp_tool_calls_total", "counter", "MCP tool calls over HTTP, by tool and outcome" },
    { "blendmq_verdicts_total", "counter", "Validator verdicts seen by the gateway" },
    { "blendmq_steps_total", "counter", "Plan steps executed, by status" },
    { "blendmq_step_duration_seconds", "histogram", "Duration of one executed step (executor round trip)" },
    { "blendmq_plans_total", "counter", "Plans that ended, by status" },
    { "blendmq_plan_duration_seconds", "histogram", "Duration of a plan from its first step to its end" },
    { "blendmq_events_total", "counter", "Progress events re-published by the gateway" },
    { "blendmq_sse_subscribers", "gauge", "Open GET /api/events streams" },
};

struct bmq_http_metrics_t {
    pthread_mutex_t lock;
    zhashx_t       *series;          /* "name{labels}" → s_series_t* */
};

static void s_series_free (void **item)
{
    s_series_t *s = *item;
    if (!s) return;
    free (s->name);
    free (s->labels);
    free (s);
    *item = NULL;
}

bmq_http_metrics_t *bmq_http_metrics_new (void)
{
    bmq_http_metrics_t *self = calloc (1, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    self->series = zhashx_new ();
    zhashx_set_destructor (self->series, s_series_free);
    return self;
}

void bmq_http_metrics_destroy (bmq_http_metrics_t **self_p)
{
    if (!self_p || !*self_p) return;
    zhashx_destroy (&(*self_p)->series);
    pthread_mutex_destroy (&(*self_p)->lock);
    free (*self_p);
    *self_p = NULL;
}

/* name="value" with the value escaped as the format requires. */
static void s_label (char *buf, size_t len, const char *name, const char *value)
{
    size_t used = strlen (buf);
    used += (size_t) snprintf (buf + used, len - used, "%s%s=\"", used ? "," : "", name);
    for (const char *p = value ? value : ""; *p && used + 3 < len; p++) {
        if (*p == '"' || *p == '\\') buf[used++] = '\\';
        if (*p == '\n') { buf[used++] = '\\'; buf[used++] = 'n'; continue; }
        buf[used++] = *p;
    }
    snprintf (buf + used, len - used, "\"");
}

/* Under the lock. */
static s_series_t *s_get (bmq_http_metrics_t *self, s_kind_t kind, const char *name, const char *labels)
{
    char key[512];
    snprintf (key, sizeof key, "%s{%s}", name, labels);
    s_series_t *s = zhashx_lookup (self->series, key);
    if (!s && zhashx_size (self->series) < 10000) {
        s = calloc (1, sizeof *s);
        s->kind = kind;
        s->name = strdup (name);
        s->labels = strdup (labels);
        zhashx_insert (self->series, key, s);
    }
    return s;
}

static void s_add (bmq_http_metrics_t *self, s_kind_t kind, const char *name, const char *labels, double v)
{
    pthread_mutex_lock (&self->lock);
    s_series_t *s = s_get (self, kind, name, labels);
    if (s) s->value += v;
    pthread_mutex_unlock (&self->lock);
}

static void s_observe (bmq_http_metrics_t *self, const char *name, const char *labels, double seconds)
{
    pthread_mutex_lock (&self->lock);
    s_series_t *s = s_get (self, S_HISTOGRAM, name, labels);
    if (s) {
        for (int i = 0; i < NBUCKETS; i++)
            if (seconds <= s_bounds[i]) { s->buckets[i]++; break; }
        s->count++;
        s->sum += seconds;
    }
    pthread_mutex_unlock (&self->lock);
}

void bmq_http_metrics_request (bmq_http_metrics_t *self, const char *route, const char *method, int code, double seconds)
{
    char labels[256] = "", codes[8];
    snprintf (codes, sizeof codes, "%d", code);
    s_label (labels, sizeof labels, "route", route);
    s_observe (self, "blendmq_http_request_duration_seconds", labels, seconds);
    s_label (labels, sizeof labels, "method", method);
    s_label (labels, sizeof labels, "code", codes);
    s_add (self, S_COUNTER, "blendmq_http_requests_total", labels, 1);
}

void bmq_http_metrics_tool (bmq_http_metrics_t *self, const char *tool, const char *outcome)
{
    char labels[256] = "";
    s_label (labels, sizeof labels, "tool", tool);
    s_label (labels, sizeof labels, "outcome", outcome);
    s_add (self, S_COUNTER, "blendmq_mcp_tool_calls_total", labels, 1);
}

void bmq_http_metrics_verdict (bmq_http_metrics_t *self, bool accepted)
{
    char labels[64] = "";
    s_label (labels, sizeof labels, "verdict", accepted ? "accepted" : "rejected");
    s_add (self, S_COUNTER, "blendmq_verdicts_total", labels, 1);
}

void bmq_http_metrics_step (bmq_http_metrics_t *self, const char *status, double ms)
{
    char labels[128] = "";
    s_label (labels, sizeof labels, "status", status);
    s_add (self, S_COUNTER, "blendmq_steps_total", labels, 1);
    s_observe (self, "blendmq_step_duration_seconds", "", ms / 1000.0);
}

void bmq_http_metrics_plan (bmq_http_metrics_t *self, const char *status, double ms)
{
    char labels[128] = "";
    s_label (labels, sizeof labels, "status", status);
    s_add (self, S_COUNTER, "blendmq_plans_total", labels, 1);
    s_observe (self, "blendmq_plan_duration_seconds", "", ms / 1000.0);
}

void bmq_http_metrics_event (bmq_http_metrics_t *self) { s_add (self, S_COUNTER, "blendmq_events_total", "", 1); }
void bmq_http_metrics_subscribers (bmq_http_metrics_t *self, int delta) { s_add (self, S_GAUGE, "blendmq_sse_subscribers", "", delta); }

static int s_compare (const void *a, const void *b) { return strcmp ((const char *) a, (const char *) b); }

static void s_printf (char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
static void s_printf (char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start (ap, fmt);
        int n = vsnprintf (*buf + *len, *cap - *len, fmt, ap);
        va_end (ap);
        if (n >= 0 && (size_t) n < *cap - *len) { *len += (size_t) n; return; }
        *cap = *cap * 2 + (n > 0 ? (size_t) n : 0);
        *buf = realloc (*buf, *cap);
    }
}

static void s_render_series (const s_series_t *s, char **buf, size_t *len, size_t *cap)
{
    const char *sep = *s->labels ? "," : "";
    if (s->kind != S_HISTOGRAM) {
        s_printf (buf, len, cap, "%s%s%s%s %.17g\n", s->name, *s->labels ? "{" : "", s->labels, *s->labels ? "}" : "", s->value);
        return;
    }
    uint64_t cumulative = 0;
    for (int i = 0; i < NBUCKETS; i++) {
        cumulative += s->buckets[i];
        s_printf (buf, len, cap, "%s_bucket{%s%sle=\"%g\"} %llu\n", s->name, s->labels, sep, s_bounds[i], (unsigned long long) cumulative);
    }
    s_printf (buf, len, cap, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", s->name, s->labels, sep, (unsigned long long) s->count);
    s_printf (buf, len, cap, "%s_sum%s%s%s %.17g\n", s->name, *s->labels ? "{" : "", s->labels, *s->labels ? "}" : "", s->sum);
    s_printf (buf, len, cap, "%s_count%s%s%s %llu\n", s->name, *s->labels ? "{" : "", s->labels, *s->labels ? "}" : "",
              (unsigned long long) s->count);
}

char *bmq_http_metrics_render (bmq_http_metrics_t *self)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc (cap);
    buf[0] = 0;
    pthread_mutex_lock (&self->lock);
    zlistx_t *keys = zhashx_keys (self->series);
    zlistx_set_comparator (keys, s_compare);
    zlistx_sort (keys);
    for (size_t m = 0; m < sizeof s_meta / sizeof *s_meta; m++) {
        s_printf (&buf, &len, &cap, "# HELP %s %s\n# TYPE %s %s\n", s_meta[m].name, s_meta[m].help, s_meta[m].name, s_meta[m].type);
        bool any = false;
        for (const char *key = zlistx_first (keys); key; key = zlistx_next (keys)) {
            s_series_t *s = zhashx_lookup (self->series, key);
            if (strcmp (s->name, s_meta[m].name)) continue;
            s_render_series (s, &buf, &len, &cap);
            any = true;
        }
        if (!any && strcmp (s_meta[m].type, "histogram")) s_printf (&buf, &len, &cap, "%s 0\n", s_meta[m].name);
    }
    zlistx_destroy (&keys);
    pthread_mutex_unlock (&self->lock);
    return buf;
}
