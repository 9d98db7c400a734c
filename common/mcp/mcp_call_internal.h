/* mcp_call_internal — one tools/call's state, shared by its parts:
 * mcp_call.c (arguments → bus request → answers → result),
 * mcp_result.c (responses, results, log and progress notifications) and
 * mcp_confirm.c (confirm_script: listing → elicitation → script.confirm) and
 * mcp_generate.c (generate_3d: asset.generate → progress → the model's import). */
#ifndef BMQ_MCP_CALL_INTERNAL_H
#define BMQ_MCP_CALL_INTERNAL_H

#include "mcp_call.h"

#define ELICIT_MS       (10 * 60 * 1000)    /* a person has this long to answer */
#define BOOK_MAX        64                  /* scripts remembered for confirm_script */
#define SHOWN_SCRIPT    6000                /* bytes of the script text shown to the person */

#define PERSON_WAIT_MS  30000               /* confirm_script waits this long for a person by default (wait_s) */
#define PERSON_POLL_MS  1000                /* …asking the executor whether the script was applied this often */

/* LISTING: what the executor knows of the script; then ASKING (elicitation)
 * and APPLYING, or WAITING for a person to approve it elsewhere (person). */
typedef enum { S_CONFIRM_NONE, S_CONFIRM_LISTING, S_CONFIRM_ASKING, S_CONFIRM_APPLYING, S_CONFIRM_WAITING } s_confirm_phase_t;
/* What the call's tool result becomes: itself (tools/call), resources/read contents, completion values. */
typedef enum { S_AS_TOOL, S_AS_RESOURCE, S_AS_COMPLETION } s_shape_t;
typedef enum { S_GEN_NONE, S_GEN_MAKING, S_GEN_IMPORTING } s_gen_phase_t;

struct bmq_mcp_call_t {
    const bmq_mcp_tool_t *tool;
    json_t  *id;
    json_t  *token;              /* progress token, or NULL */
    char     cid[BMQ_MAX_ID + 1];
    int      log_level;
    int64_t  started, deadline;
    double   last_progress;
    bool     progressed;
    bool     over;
    bool     sent;               /* a bus request went out */
    size_t   script_next;        /* test tools: next scripted notification */
    json_t  *run;                /* execute/chat: what the result will say */
    json_t  *on_behalf_of;       /* {name, role} of the token, or NULL */
    char     client[96];
    /* confirm_script */
    s_confirm_phase_t phase;
    char     script_id[BMQ_MAX_ID + 1];
    char     sha256[65];
    json_t  *elicit_id;          /* id of our elicitation/create */
    bool     by_person;          /* security.mcp_confirm: person (no elicitation; nothing is sent but listings) */
    int64_t  wait_ms, wait_until, next_poll;
    /* generate_3d */
    s_gen_phase_t gen;
    int64_t  quiet_ms;           /* the call's timeout: at most this long without a word from blendmq */
    int64_t  gen_until;          /* the generation's own deadline and the quiet time: never later than this */
    char     gen_name[129];      /* name of the imported model ("" : the add-on names it) */
    bmq_envelope_t *next;        /* a request to send now (bmq_mcp_call_next_request) */
    /* another method served by a tool (bmq_mcp_call_start_as) */
    s_shape_t shape;
    char     shape_uri[1024];
    char     shape_mime[64];
    char     shape_from[16];
    char     shape_prefix[260];
    char     shape_view[16];     /* a resource seen through a view (mcp_audit.c) … */
    int      shape_not_found;    /* … which answers this code when nothing is readable */
    json_t  *notify_uris;        /* the session's subscriptions: resources/updated when a plan commits */
    bool     stateless;          /* 2026-07-28: questions go back as input-required results */
};

/* {jsonrpc, id, result} with result taken. */
json_t *bmq_mcp_response (const json_t *id, json_t *result);
/* A text content block. */
json_t *bmq_mcp_text (const char *text);
/* notifications/progress when the client gave a progress token (rate-limited). */
void bmq_mcp_call_progress (bmq_mcp_call_t *self, json_t *out, double progress, double total, const char *message);
/* The call's result (taken) as its JSON-RPC response, appended to out; the call is over. */
void bmq_mcp_call_finish (bmq_mcp_call_t *self, json_t *result, json_t *out);
/* A notifications/message at `level` (RFC 5424 index) when the client asked for that level. */
void bmq_mcp_call_log (bmq_mcp_call_t *self, json_t *out, int level, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
/* A tool result with isError and one text block. */
json_t *bmq_mcp_result_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
/* A tool result with structuredContent (taken) and a text summary. */
json_t *bmq_mcp_result_structured (json_t *structured, const char *summary, bool is_error);
/* look (mcp_look.c): the scene.request body for the call's arguments, or NULL
 * with err; the result for the add-on's reply: the sheet as image content and
 * the topology as text. */
json_t *bmq_mcp_look_body (const json_t *args, char *err, size_t errlen);
json_t *bmq_mcp_look_result (const bmq_envelope_t *env);
/* execute, chat, import (and generate_3d's import): an answer of the run's story; true when the call is over. */
bool bmq_mcp_call_feed_run (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out);
/* generate_3d (mcp_generate.c): the asset.generate body for the call's arguments (sets the call's run
 * result and deadlines), or NULL with err; an answer of its stories (true when the call is over); the
 * asset.cancel that stops the generation (NULL once it is importing: the caller cancels the plan). */
json_t *bmq_mcp_generate_body (bmq_mcp_call_t *self, const json_t *args, char *err, size_t errlen);
bool bmq_mcp_generate_feed (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out);
bmq_envelope_t *bmq_mcp_generate_cancel (bmq_mcp_call_t *self);
/* confirm_script called again (2026-07-28) with the person's answer to its input-required result
 * (params: inputResponses, requestState): on to script.confirm (*request) when they said yes; -1 when
 * the call is over (its result in out). */
int bmq_mcp_call_confirm_resume (bmq_mcp_call_t *self, const json_t *params, json_t *out, bmq_envelope_t **request);
/* confirm_script: an answer from the bus during the listing or the apply; true when the call is over. */
bool bmq_mcp_call_feed_confirm (bmq_mcp_call_t *self, const bmq_envelope_t *env, json_t *out);
/* confirm_script waiting for a person: time to ask again, or to answer "pending". True when over. */
bool bmq_mcp_call_tick_confirm (bmq_mcp_call_t *self, int64_t now_ms, json_t *out);

#endif
