/* cli_supervisor — the supervisor's state, shared by the files that make it
 * up (internal to the CLI: not a public API). The supervisor itself is
 * cli_supervise.c; cli_supervisor_status.c writes RUN/supervisor.json; and
 * cli_supervisor_launch.c is the side of `up` that starts it. */
#ifndef BMQ_CLI_SUPERVISOR_H
#define BMQ_CLI_SUPERVISOR_H

#include "audit_client.h"
#include "blender_confine.h"
#include "cli.h"

#include <stdint.h>
#include <sys/types.h>

#define SUPERVISOR_READY_FD           3          /* where the supervisor reports to `up` */
#define SUPERVISOR_BLENDER_TIMEOUT_MS 120000     /* a first Blender start: the add-on loads, picks a port */
#define MAX_CHILDREN       96         /* 64 validators, 8 Blenders and their executors, 4 services */
#define MAX_ARGS           BMQ_CONFINE_MAX_ARGS   /* a wrapper's words (at most 32) and the command's; bwrap's */

typedef enum { SUPERVISOR_RUNNING, SUPERVISOR_RESTARTING, SUPERVISOR_STOPPED } supervisor_state_t;

typedef struct {
    char      name[32];
    char     *argv[MAX_ARGS];      /* owned, NULL-terminated: what is exec'd, wrapper included */
    char     *port_arg;            /* Blender: its --port value in argv ("0" until the first start) */
    int       port;                /* Blender: the port it chose the first time */
    char      socket[128];         /* Blender: its link socket (blender.socket), or "" */
    char      busy_file[1200];     /* Blender: where its executor says since when it is busy, or "" */
    bool      confined;            /* Blender: under bwrap + seccomp, by `blendmq blender-run` (blender.confine) */
    int64_t   hang_kills;          /* Blender: times killed for a hang (blender.hang_kill_ms) */
    pid_t     pid;                 /* 0 while not running */
    pid_t     old_pid;             /* the process before the current one */
    supervisor_state_t state;
    int       restarts;
    int       failures;            /* consecutive exits of short-lived processes: the back-off's exponent */
    int64_t   started_mono;        /* monotonic ms, for uptimes */
    int64_t   started_at;          /* wall ms, for status */
    int64_t   restart_at;          /* monotonic ms, while restarting */
    int64_t   backoff_ms;          /* the delay before the current (or coming) start */
    int64_t   uptime_ms;           /* how long the previous process ran */
    char      last_exit[96];       /* "killed by signal 9 (SIGKILL)", "exited with code 1", "" */
    int64_t   last_exit_at;        /* wall ms */
} supervisor_child_t;

typedef struct {
    const bmq_cli_opts_t *opts;
    supervisor_child_t    children[MAX_CHILDREN];
    size_t       count;
    bmq_audit_t *audit;
    int64_t      base_ms, max_ms, stable_ms;
    int64_t      hang_kill_ms;     /* blender.hang_kill_ms: a busier Blender is killed (0: never) */
    int64_t      started_at;
    const char  *state;            /* starting | running | stopping | stopped */
    char         bindir[1024];
} supervisor_t;

/* RUN/supervisor.json: written to a new 0600 file, then renamed over the old
 * one, so a reader never sees half of it (cli_supervisor_status.c). */
void supervisor_write_status (supervisor_t *sup);

#endif
