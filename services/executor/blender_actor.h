/* blender_actor — a thread that owns the connection to one Blender.
 *
 * The executor's main loop stays responsive (heartbeats, new requests) while
 * a step runs in Blender: it talks to this actor over its pipe.
 *
 *   main → actor:  "CALL" job_id cmd args_json timeout_ms
 *   actor → main:  "RESULT" job_id status reply_json blob error elapsed_us
 *                  (status: the bmq_link_status_t number; reply_json "" unless OK)
 *   actor → main:  "STATE" "connected"|"disconnected" detail
 *
 * While idle the actor pings Blender every interval, so a dead Blender is
 * noticed within a heartbeat even with no plan running, and reconnects with
 * capped exponential back-off. */
#ifndef BMQ_BLENDER_ACTOR_H
#define BMQ_BLENDER_ACTOR_H

#include <czmq.h>

typedef struct {
    char host[256];
    int  port;
    char token[256];
    char palette[1024];      /* palette file: its operation names go to the add-on at hello */
    int  interval_ms;        /* idle ping period */
    int  connect_timeout_ms;
    int  reconnect_max_ms;
} bmq_blender_actor_args_t;

/* Start the actor; `args` is copied. */
zactor_t *bmq_blender_actor_new (const bmq_blender_actor_args_t *args);

#endif
