/* faults_watch — the watchers a stack has while faults hit it: many ZeroMQ
 * SUB connections to gateway.events (CURVE, the cli key) in one thread, a
 * few `blendmq --json watch` processes, and one SSE client on /api/events
 * that reconnects as a browser's EventSource would (with Last-Event-ID).
 * Counters only: the checks compare snapshots taken before and after. */
#ifndef BMQ_FAULTS_WATCH_H
#define BMQ_FAULTS_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#define FW_MAX_SUBS    64
#define FW_MAX_WATCHES 4

typedef struct {
    int    subs;
    size_t sub_events[FW_MAX_SUBS];     /* per SUB connection */
    int    watches;
    bool   watch_alive[FW_MAX_WATCHES];
    long   watch_bytes[FW_MAX_WATCHES]; /* output so far */
    int    watch_gaps[FW_MAX_WATCHES];  /* output lines that mention a gap */
    size_t sse_events;
    int    sse_connects;                /* successful connections (1 + reconnects) */
    int    sse_gaps;                    /* events or data that mention a gap */
    char   gap_sample[300];             /* one gap marker as printed (watch or SSE) */
} fw_snapshot_t;

typedef struct fw_watchers_t fw_watchers_t;

/* `subs` SUB sockets on events_endpoint (after bmq_bus_security_init),
 * `watches` `blendmq --run-dir RUN --json watch` processes writing to
 * work_dir, and an SSE client on http_base/api/events with `token`. */
fw_watchers_t *fw_new (const char *blendmq, const char *run_dir, const char *work_dir, const char *events_endpoint,
                       int subs, int watches, const char *http_base, const char *token);
/* Stops them all (the watch processes with SIGTERM). */
void fw_destroy (fw_watchers_t **self_p);
void fw_snapshot (fw_watchers_t *self, fw_snapshot_t *snap);
/* How many SUB connections received nothing between two snapshots. */
int  fw_silent_subs (const fw_snapshot_t *before, const fw_snapshot_t *after);

#endif
