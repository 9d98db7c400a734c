/* blender_actor — a thread that owns the connection to one Blender.
 *
 * The executor's main loop stays responsive (heartbeats, new requests) while
 * a step runs in Blender: it talks to this actor over its pipe.
 *
 *   main → actor:  "CALL" job_id cmd args_json timeout_ms [blob]   (blob: the
 *                  request's, e.g. asset_stage's files)
 *   main → actor:  "STREAM" job_id cmd args_json timeout_ms plan_id   (run_plan:
 *                  bmq_blender_link_call_stream; *args.cancel set by main sends
 *                  cancel_plan for plan_id)
 *   actor → main:  "PROGRESS" job_id [progress_json...]   (a STREAM's progress
 *                  frames, a batch per burst, in order, before its RESULT)
 *   actor → main:  "RESULT" job_id status reply_json blob error elapsed_us
 *                  (status: the bmq_link_status_t number; reply_json "" unless OK)
 *   actor → main:  "STATE" "connected"|"disconnected"|"hung" detail   (hung: Blender
 *                  accepted a connection or a ping and said nothing in time: busy)
 *   actor → main:  "ALIVE"   (a ping was answered: main times the heartbeat)
 *   actor → main:  "HELLO" report_json   (after "STATE connected", when the add-on
 *                  reported interrupted plans: bmq_blender_link_hello_report's
 *                  object; an "open_plan" was already rolled back, before any
 *                  other command, and carries "rollback": {status, removed,
 *                  restored} or {status: "rollback failed", error})
 *   actor → main:  "NAMES" result_json   (scene_names' result: {names, count,
 *                  truncated}; after connect, and whenever a reply's rev says the
 *                  scene's names may have changed, once the pipe is quiet)
 *   main → actor:  "ACK" ids_json         (report ids main has recorded: the actor
 *                  sends interrupted_ack; unacknowledged reports come again at
 *                  the next hello)
 *
 * While idle the actor pings Blender every interval, so a dead Blender is
 * noticed within a heartbeat even with no plan running, and reconnects with
 * capped exponential back-off. */
#ifndef BMQ_BLENDER_ACTOR_H
#define BMQ_BLENDER_ACTOR_H

#include <czmq.h>
#include <stdatomic.h>

typedef struct {
    char host[256];          /* or "unix:PATH" (blender.socket) */
    bool plain_remote;       /* blender.allow_plain_remote */
    int  port;
    char token[256];
    char palette[1024];      /* palette file: its operation names go to the add-on at hello */
    int  interval_ms;        /* idle ping period */
    int  connect_timeout_ms;
    int  reconnect_max_ms;
    int  command_timeout_ms; /* plan_rollback of an open plan, interrupted_ack */
    atomic_bool *cancel;     /* owned by main, outlives the actor: true asks a STREAM to cancel (or NULL) */
} bmq_blender_actor_args_t;

/* Start the actor; `args` is copied. */
zactor_t *bmq_blender_actor_new (const bmq_blender_actor_args_t *args);

#endif
