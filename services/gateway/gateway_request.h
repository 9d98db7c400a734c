/* gateway_request — one client request the gateway is seeing through
 * (chat: plan → validate → execute; run: validate → execute; validate; scene). */
#ifndef BMQ_GATEWAY_REQUEST_H
#define BMQ_GATEWAY_REQUEST_H

#include "codec.h"
#include <czmq.h>
#include <stdbool.h>

typedef enum { BMQ_REQ_CHAT, BMQ_REQ_RUN, BMQ_REQ_VALIDATE, BMQ_REQ_SCENE, BMQ_REQ_AUDIT } bmq_req_kind_t;
typedef enum { BMQ_REQ_PLANNING, BMQ_REQ_VALIDATING, BMQ_REQ_EXECUTING, BMQ_REQ_FORWARDED, BMQ_REQ_LOOKING } bmq_req_state_t;

/* The service a request waits on now: when its heartbeats declare it dead, or
 * a new process of it answers (the old one took the request with it), the
 * request is answered at once (gateway_service.c s_check_waiting). */
typedef enum { BMQ_WAIT_NONE, BMQ_WAIT_PLANNER, BMQ_WAIT_VALIDATORS, BMQ_WAIT_EXECUTOR, BMQ_WAIT_AUDIT,
               BMQ_WAIT_BLENDER /* only at intake: the executor is up, its Blender is not */ } bmq_req_wait_t;

typedef struct {
    bmq_req_kind_t  kind;
    bmq_req_state_t state;
    zframe_t *rid;                       /* the client */
    char      cid[BMQ_MAX_ID + 1];
    char      plan_id[BMQ_MAX_ID + 1];
    json_t   *plan;
    int       executor;                  /* index in the gateway's executor set ("target") */
    bool      keep_partial;              /* the client asked to keep a failed plan's work */
    int64_t   deadline;                  /* monotonic ms */
    double    accepted_us;               /* when the gateway received it */
    char      client_name[64];           /* the client's authenticated identity (roles.h): */
    char      client_role[16];           /* forwarded downstream in body.on_behalf_of ("" with CURVE off) */
    bmq_req_wait_t waits;                /* who holds it now */
    unsigned  generation;                /* that service's process generation when it got it (peer.h) */
    int64_t   handed_ms;                 /* when (monotonic ms) */
    long long steps_done, steps_total;   /* a plan's progress as the executor reported it */
    bool      plan_started;              /* the executor opened the plan in Blender */
} bmq_gw_request_t;

bmq_gw_request_t *bmq_gw_request_new (bmq_req_kind_t kind, const bmq_envelope_t *req, zframe_t *rid, int timeout_ms);
void bmq_gw_request_destroy (bmq_gw_request_t **self_p);
void bmq_gw_request_free (void **item);
const char *bmq_gw_request_state_name (bmq_req_state_t state);

#endif
