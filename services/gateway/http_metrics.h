/* http_metrics — the gateway's counters and latency histograms, rendered in
 * the Prometheus text format for GET /metrics.
 *
 *   blendmq_http_requests_total{route,method,code}      counter
 *   blendmq_http_request_duration_seconds{route}        histogram
 *   blendmq_mcp_tool_calls_total{tool,outcome}          counter (ok | error | cancelled)
 *   blendmq_verdicts_total{verdict}                     counter (accepted | rejected)
 *   blendmq_steps_total{status}                         counter (ok | failed | timeout | interrupted…)
 *   blendmq_step_duration_seconds                       histogram
 *   blendmq_plans_total{status}                         counter (done | failed | …)
 *   blendmq_plan_duration_seconds                       histogram
 *   blendmq_events_total                                counter (progress events seen)
 *   blendmq_sse_subscribers                             gauge
 *
 * Thread-safe (one mutex; every update is a few hash probes). */
#ifndef BMQ_HTTP_METRICS_H
#define BMQ_HTTP_METRICS_H

#include <stdbool.h>

typedef struct bmq_http_metrics_t bmq_http_metrics_t;

bmq_http_metrics_t *bmq_http_metrics_new (void);
void bmq_http_metrics_destroy (bmq_http_metrics_t **self_p);

void bmq_http_metrics_request (bmq_http_metrics_t *self, const char *route, const char *method, int code, double seconds);
void bmq_http_metrics_tool (bmq_http_metrics_t *self, const char *tool, const char *outcome);
void bmq_http_metrics_verdict (bmq_http_metrics_t *self, bool accepted);
void bmq_http_metrics_step (bmq_http_metrics_t *self, const char *status, double ms);
void bmq_http_metrics_plan (bmq_http_metrics_t *self, const char *status, double ms);
void bmq_http_metrics_event (bmq_http_metrics_t *self);
void bmq_http_metrics_subscribers (bmq_http_metrics_t *self, int delta);

/* The exposition text (malloc'd). */
char *bmq_http_metrics_render (bmq_http_metrics_t *self);

#endif
