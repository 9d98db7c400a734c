/* gateway_internal — the gateway's state and what its parts share: the
 * service loop and request intake (gateway_service.c), a request's life
 * (gateway_lifecycle.c, gateway_request.def), and fail-fast, who
 * holds each request and what to tell its client when that one is gone
 * (gateway_failfast.c). Not for other services. */
#ifndef BMQ_GATEWAY_INTERNAL_H
#define BMQ_GATEWAY_INTERNAL_H

#include "audit_client.h"
#include "executor_set.h"
#include "gateway_request.h"
#include "http_server.h"
#include "peer.h"
#include "validator_broker.h"

typedef struct gw_t gw_t;
struct gw_t {
    bmq_config_t *cfg;
    zsock_t      *front, *pub, *sub;
    zsock_t      *local;              /* inproc ROUTER for this process's HTTP/MCP threads (only it trusts on_behalf_of) */
    bmq_peer_t   *planner;
    bmq_executor_set_t *executors;      /* one per Blender; requests pick one with "target" */
    bmq_broker_t *broker;
    bmq_audit_t  *audit;
    zhashx_t     *requests;           /* cid → gw_request_t* */
    int           timeout_ms;
    bmq_http_server_t *http;          /* REST, SSE, MCP over HTTP; NULL when disabled */
    zsock_t      *stories;            /* what HTTP follows: requests, answers, events (http_feed.h) */
    bool          curve;              /* security.curve: an unauthenticated peer is refused */
    int           interval;           /* heartbeat.interval_ms */
    int64_t       last_check;         /* gw_check_waiting ran (monotonic ms) */
    int64_t       last_loop;          /* the main loop last turned (monotonic ms) */
    int64_t       grace_until;        /* after a stall of our own (SIGSTOP, swap): judge no peer's silence till then */
};

/* ---- answering clients (gateway_service.c) ---- */
/* Stamp who the client is (body.on_behalf_of) on what goes downstream for it. */
void gw_for_client (const gw_request_t *r, bmq_envelope_t *env);
/* Send env (taken) to the request's client, telling the story to HTTP first. */
void gw_to_client (gw_t *gw, gw_request_t *r, bmq_envelope_t *env);
/* The request's story ends (request.end with outcome); r is freed. */
void gw_done (gw_t *gw, gw_request_t *r, const char *outcome);
/* Answer with an error and end the story. */
void gw_fail (gw_t *gw, gw_request_t *r, const char *code, const char *message);

/* ---- a request's life (gateway_lifecycle.c, following gateway_request.def) ---- */
/* Start r, which client message env (borrowed) opened: its route's first hop. */
void gw_start (gw_t *gw, gw_request_t *r, const bmq_envelope_t *env);
/* A message about a request (env->cid) from `from` (the executor's index in
 * the set when it is an executor, else -1). When the request's state has a
 * transition for it and `from` holds the request, the transition runs (it may
 * take *env, setting it NULL) and true is returned; otherwise nothing happens
 * and false (the caller destroys *env either way). */
bool gw_on_message (gw_t *gw, bmq_envelope_t **env, bmq_req_wait_t from, int executor);
/* A chat's review (issue 16) was cut by `code` before its fix ran: the held
 * first result answers, with a note, and r is freed (true); false when r holds
 * no result or a fix is running (the caller answers as usual). */
bool gw_review_cut (gw_t *gw, gw_request_t *r, const char *code, const char *message);

/* ---- fail fast (gateway_failfast.c) ---- */
/* r is now in `waits`'s hands: remember which process of it, and since when. */
void gw_hand_to (gw_t *gw, gw_request_t *r, bmq_req_wait_t waits);
/* Answer r: the service it waits on (r->waits) is gone for `why`. */
void gw_fail_unavailable (gw_t *gw, gw_request_t *r, const char *why);
/* Answer every request whose holder died or restarted (a few times per interval). */
void gw_check_waiting (gw_t *gw);
/* The first service a new request will need that is down, or BMQ_WAIT_NONE; why in `why`. */
bmq_req_wait_t gw_missing (gw_t *gw, const bmq_envelope_t *env, int executor, char *why, size_t len);

#endif
