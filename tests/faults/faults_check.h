/* faults_check — what must hold after each fault, and the fault table's row.
 *
 * Bounds (heartbeat.interval_ms I, heartbeat.liveness L, FC_SLACK_MS S), on
 * the time from the fault (or the client's start, if later) to its answer.
 * An error must come within the bound; a client that succeeds may take its
 * usual time on top (the median of its kind away from the fault, and never
 * less than under the same load with no fault at all): a plan
 * queued behind a stopped Blender runs when Blender resumes.
 *
 *   kill -9   every client answered within L×I + 2×I + S of the kill (or of
 *             its own start, if later): the dead service is declared dead
 *             after L×I, and whoever waits on it is answered within 2×I more
 *             (a client of a killed gateway gives up on its own after
 *             (L+1)×I of silence, or at once when a new gateway answers).
 *   SIGSTOP   within the stop (10 s) + 2×I + S: a stopped service is declared
 *             dead like a killed one, and its waiting clients may be answered
 *             then (an "unavailable" error); but one that the link cannot see
 *             stopped (Blender, mid-step) resumes at SIGCONT and may finish
 *             the work; either way no client waits past SIGCONT + 2×I.
 *   full disk the audit is on no client's path: like a kill's bound, and
 *             every client must succeed.
 * A client must also succeed when the fault is off its path (a plan run
 * needs gateway, a validator, executor and Blender; a chat the planner too;
 * one of two validators dying leaves the pool serving). An error that says
 * "S unavailable" must name the faulted process (a gateway just restarted
 * may say so of validators not yet connected to it): a gateway that was
 * itself stopped must not blame the services it could not hear meanwhile.
 * A chat waiting on a killed or stopped planner is told planner_unavailable,
 * a client waiting on the executor executor_unavailable; a request held by a
 * killed gateway ends its client at once with exit 2, naming its story.
 * Heal: healthy (fs_healthy, and a killed process replaced) within
 * FC_HEAL_MS of the fault's end (the kill, the SIGCONT, the freed space). */
#ifndef BMQ_FAULTS_CHECK_H
#define BMQ_FAULTS_CHECK_H

#include "faults_load.h"
#include "faults_watch.h"

#include <jansson.h>
#include <stdarg.h>

#define FC_SLACK_MS 2000
#define FC_HEAL_MS  20000

typedef struct {
    char     name[48];          /* "kill -9 planner" */
    char     how[8];            /* kill, stop, disk */
    char     target[32];        /* gateway, planner, executor, audit, validator-1, blender */
    int64_t  t0, t_end, t_heal; /* monotonic ms: injected; over (kill: t0, stop: SIGCONT, disk: freed); healthy (0: never) */
    int64_t  bound_ms;
    int64_t  usual_ms[3];       /* a successful client's usual time, by fl_kind_t (median outside the fault) */
    int64_t  answer_ms;         /* slowest answer of the clients in flight at t0, from t0 (-1: none in flight) */
    int      in_flight;         /* clients in flight at t0 */
    int64_t  heal_ms;           /* t_heal - t_end, -1 when not healthy within the time allowed */
    char     saw[600];          /* what a client in flight was told, first line */
    char     scene[200];
    json_t  *answers;           /* {answer's first line: how many clients} */
    json_t  *failures;          /* [text] */
    json_t  *notes;             /* [text] */
} fc_row_t;

fc_row_t *fc_row_new (const char *how, const char *target);
void      fc_row_destroy (fc_row_t **self_p);
void      fc_fail (fc_row_t *row, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
void      fc_note (fc_row_t *row, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* The row as JSON (for the artifact). */
json_t   *fc_row_json (const fc_row_t *row);

/* Times, bounds and what clients were told. */
/* The median time of each kind's successful clients in a run with no fault
 * (the same load): the floor of a row's usual time. */
void fc_usual_baseline (int64_t usual[3], const fl_run_t *runs, size_t n);
void fc_check_answers (fc_row_t *row, const fl_run_t *runs, size_t n, const int64_t baseline[3]);
/* No audit record lost: every request after `mark` ended, every plan.start
 * has its plan.end or plan.interrupted, every process restart (`restarts`:
 * name → count) has its service.restart, every client the gateway answered
 * has its request record. Waits up to wait_ms for records still on their way. */
void fc_check_audit (fc_row_t *row, const char *db, int64_t mark, const fl_run_t *runs, size_t n,
                     const json_t *restarts, int wait_ms);
/* Each plan whole or rolled back, and as its client was told. `names`: the
 * scene's object names (NULL: the scene could not be read). scene_lost_before:
 * plans answered before this time may have lost their objects with Blender. */
void fc_check_scene (fc_row_t *row, const json_t *names, const fl_run_t *runs, size_t n, int64_t scene_lost_before);
/* Watchers still there and fed after the heal; gap markers where due. */
void fc_check_watchers (fc_row_t *row, const fw_snapshot_t *before, const fw_snapshot_t *heal, const fw_snapshot_t *end);

#endif
