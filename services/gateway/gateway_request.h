/* gateway_request — one client request the gateway is seeing through. Its
 * kinds, states and transitions are declared in gateway_request.def; the
 * dispatch that follows them is gateway_lifecycle.c. */
#ifndef BMQ_GATEWAY_REQUEST_H
#define BMQ_GATEWAY_REQUEST_H

#include "codec.h"
#include <czmq.h>
#include <stdbool.h>

/* The service a request waits on: when its heartbeats declare it dead, or a
 * new process of it answers (the old one took the request with it), the
 * request is answered at once (gateway_failfast.c). */
typedef enum { BMQ_WAIT_NONE, BMQ_WAIT_PLANNER, BMQ_WAIT_VALIDATORS, BMQ_WAIT_EXECUTOR, BMQ_WAIT_AUDIT,
               BMQ_WAIT_BLENDER /* only at intake: the executor is up, its Blender is not */ } bmq_req_wait_t;

typedef enum {
#define BMQ_REQ_STATE(id, name, holder) BMQ_REQ_##id,
#include "gateway_request.def"
#undef BMQ_REQ_STATE
    BMQ_REQ_STATES
} bmq_req_state_t;
#define BMQ_REQ_END_BIT (1u << BMQ_REQ_STATES)      /* in a transition's NEXT: the story may end */

typedef enum { BMQ_REQ_CHAT, BMQ_REQ_RUN, BMQ_REQ_VALIDATE, BMQ_REQ_CAPABILITIES, BMQ_REQ_SCRIPT, BMQ_REQ_SCENE,
               BMQ_REQ_INSPECT, BMQ_REQ_SCRIPT_LIVE, BMQ_REQ_RECIPE, BMQ_REQ_AUDIT,
               BMQ_REQ_GENERATE /* asset.generate: lives until its deadline, not the gateway's time-out */ } bmq_req_kind_t;

typedef struct {
    bmq_req_kind_t  kind;
    bmq_req_state_t state;
    zframe_t *rid;                       /* the client */
    bool      local;                     /* it came on the in-process socket (HTTP/MCP threads), not the front */
    char      cid[BMQ_MAX_ID + 1];
    char      plan_id[BMQ_MAX_ID + 1];
    json_t   *plan;                      /* a plan (chat, run, validate), or a script request's body */
    int       executor;                  /* index in the gateway's executor set ("target") */
    bool      keep_partial;              /* the client asked to keep a failed plan's work */
    int64_t   deadline;                  /* monotonic ms */
    double    accepted_us;               /* when the gateway received it */
    char      client_name[64];           /* the client's authenticated identity (roles.h): */
    char      client_role[24];           /* forwarded downstream in body.on_behalf_of ("" with CURVE off) */
    bmq_req_wait_t waits;                /* who holds it now (the state's holder, or BLENDER at intake) */
    unsigned  generation;                /* that service's process generation when it got it (peer.h) */
    int64_t   handed_ms;                 /* when (monotonic ms) */
    long long steps_done, steps_total;   /* a plan's progress as the executor reported it */
    bool      plan_started;              /* the executor opened the plan in Blender */
    bool      names_cached;              /* validated against the executor's published scene.names */
    bool      looked;                    /* the executor was asked for the scene's names */
    /* a chat's review (issue 16): after an LLM's plan ran, the planner looks at the scene and may fix it */
    json_t   *prompt;                    /* the chat's prompt */
    bool      llm_plan;                  /* the plan running came from an LLM (not the offline recipes) */
    int       reviews_left;              /* planner.review_rounds at the start, counted down */
    int       review_round;
    bmq_envelope_t *held;                /* the first plan's execute.result, the answer unless a fix plan runs */
} gw_request_t;

gw_request_t *gw_request_new (bmq_req_kind_t kind, const bmq_envelope_t *req, zframe_t *rid, int timeout_ms);
void gw_request_destroy (gw_request_t **self_p);
void gw_request_free (void **item);
/* "planning", "validating", … (gateway_request.def): what clients read in a time-out. */
const char *gw_request_state_name (bmq_req_state_t state);
/* The service that holds a request in `state`. */
bmq_req_wait_t gw_request_holder (bmq_req_state_t state);
/* Does client message `type` start a request? Then its kind in *kind. */
bool gw_request_starts (bmq_msg_type_t type, bmq_req_kind_t *kind);

#endif
