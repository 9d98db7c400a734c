/* rna_fetch — a validator asks the executor for the RNA of the palette's
 * Blender operators (inspect.request → inspect.reply, which the executor
 * answers through the add-on's rna_info), without ever blocking validation:
 * the owner polls bmq_rna_fetch_sock beside its other sockets and calls
 * bmq_rna_fetch_tick when bmq_rna_fetch_due says so.
 *
 * Lazy Pirate rounds: each round opens a fresh DEALER (so nothing queued for a
 * dead executor is delivered twice later) and sends one probe; once the probe
 * is answered by Blender (its RNA, or "unknown_tool"), the rest follow,
 * pipelined. A transient error (executor not there, Blender not connected,
 * busy) or a round deadline ends the round; the next starts after a back-off
 * doubling up to a cap, for a bounded number of rounds, after which the
 * fetch gives up (the curated palette then stays in use). */
#ifndef BMQ_RNA_FETCH_H
#define BMQ_RNA_FETCH_H

#include <czmq.h>
#include <jansson.h>

typedef enum { BMQ_RNA_FETCHING, BMQ_RNA_DONE, BMQ_RNA_GAVE_UP } bmq_rna_state_t;

typedef struct {
    int round_ms;           /* a round's deadline (default 10000) */
    int backoff_ms;         /* first pause between rounds (default 500) */
    int backoff_max_ms;     /* cap (default 8000) */
    int max_rounds;         /* then give up (default 40: about five minutes) */
} bmq_rna_fetch_opts_t;

typedef struct bmq_rna_fetch_t bmq_rna_fetch_t;

/* Fetch the RNA of `operations` (an array of bpy.ops names) from the executor
 * at `endpoint`. opts NULL: defaults. NULL if there is nothing to fetch. */
bmq_rna_fetch_t *bmq_rna_fetch_new (const char *endpoint, const json_t *operations, const bmq_rna_fetch_opts_t *opts);
void bmq_rna_fetch_destroy (bmq_rna_fetch_t **self_p);

/* The socket of the current round, or NULL between rounds. */
zsock_t *bmq_rna_fetch_sock (bmq_rna_fetch_t *self);
/* The socket is readable: take one message. */
void bmq_rna_fetch_on_message (bmq_rna_fetch_t *self);
/* Start rounds, expire them. Call when bmq_rna_fetch_due (monotonic ms) has passed. */
void bmq_rna_fetch_tick (bmq_rna_fetch_t *self);
int64_t bmq_rna_fetch_due (const bmq_rna_fetch_t *self);

bmq_rna_state_t bmq_rna_fetch_state (const bmq_rna_fetch_t *self);
/* operation → rna_info result, or null when Blender lacks it. Borrowed. */
const json_t *bmq_rna_fetch_result (const bmq_rna_fetch_t *self);
/* Why the last round ended early ("" if none did). */
const char *bmq_rna_fetch_detail (const bmq_rna_fetch_t *self);
int bmq_rna_fetch_rounds (const bmq_rna_fetch_t *self);

#endif
