/* faults_load — the clients that keep a stack busy while a fault hits.
 *
 * Plan loops run `blendmq --json plan run FILE` back to back, each plan
 * FAULTS_PLAN_STEPS steps making FAULTS_PLAN_OBJECTS objects named
 * PREFIX_o0 … (PREFIX says fault, client and run, so the scene check can
 * tell plans apart). A chat loop runs `blendmq --json chat` with a prompt the
 * slow fake LLM answers with SLOW_LLM_OBJECTS cubes named after its prefix.
 * Every run is recorded (times, exit code, what the client was told) for the
 * checks. Clients are separate processes, timed by this process's monotonic
 * clock; a client still running after FAULTS_HANG_MS is killed and recorded
 * as "hung". */
#ifndef BMQ_FAULTS_LOAD_H
#define BMQ_FAULTS_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAULTS_PLAN_STEPS   50
#define FAULTS_PLAN_OBJECTS 10
#define FAULTS_HANG_MS      90000

typedef enum { FL_PLAN, FL_CHAT, FL_SCENE } fl_kind_t;

typedef struct {
    fl_kind_t kind;
    int       client;               /* loop index (plans 0.., the chat loop) */
    char      prefix[48];           /* its objects are PREFIX_o0 … */
    int       objects;              /* how many objects the plan makes when it runs whole */
    int64_t   start_ms, end_ms;     /* monotonic; end_ms is 0 while it runs */
    int       exit_code;
    char      cid[80];              /* the request's story, when the client learnt it */
    char      outcome[32];          /* done, failed, cancelled, rejected, error, gateway, ok, hung, unknown */
    char      code[64];             /* an error's code */
    char      message[512];         /* first line of what the client was told when it did not succeed */
    bool      replied;              /* the gateway answered it at least once (so it accepted it) */
    bool      claims_rollback;      /* the answer says the plan was (or will be) rolled back */
    int       steps_seen;           /* step progress events it received */
} fl_run_t;

typedef struct fl_load_t fl_load_t;

/* Clients of the stack in run_dir, using the `blendmq` binary; their plan
 * files and outputs go to work_dir. */
fl_load_t *fl_load_new (const char *blendmq, const char *run_dir, const char *work_dir);
/* Stops every loop first. */
void       fl_load_destroy (fl_load_t **self_p);
/* Forget earlier runs and start `plans` plan loops and, if asked, the chat
 * loop; prefixes carry `tag` (short, [a-z0-9]). */
void       fl_load_start (fl_load_t *self, const char *tag, int plans, bool chat);
/* Let every loop finish its current run, then join them. */
void       fl_load_stop (fl_load_t *self);
/* Run one client of `kind` now, in this thread (FL_SCENE: `scene info`). */
void       fl_load_probe (fl_load_t *self, fl_kind_t kind);
/* A copy of every run so far (caller frees *runs_out); the count. */
size_t     fl_load_runs (fl_load_t *self, fl_run_t **runs_out);
/* Runs of `kind` started and not yet answered. */
int        fl_load_in_flight (fl_load_t *self, fl_kind_t kind);
/* Monotonic ms (the clock every run time is on). */
int64_t    fl_now_ms (void);

#endif
