/* bench_gui — a GUI Blender under xvfb-run for the benchmarks: the add-on started
 * by its launcher on a free port with a fixed bench token, optionally with
 * gui_probe.py (the main loop's counters on a port of its own), in its own
 * process group so stopping it stops Xvfb too. */
#ifndef BMQ_BENCH_GUI_H
#define BMQ_BENCH_GUI_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    char  dir[64];          /* temp dir: port files, token file, blender.log */
    char  token_file[128];
    pid_t pid;              /* xvfb-run's, leader of the process group; 0: not running */
    int   port;             /* the add-on's */
    int   probe_port;       /* gui_probe.py's; 0 without the probe */
} bench_gui_t;

extern const char *BENCH_GUI_TOKEN;

/* true when xvfb-run is installed (else the GUI benches are skipped with a note). */
bool bench_gui_available (void);
/* Start it and wait (up to 2 minutes) for the add-on's port (and the probe's,
 * when asked for). 0, or -1 with a message on stderr (its log is kept in dir). */
int  bench_gui_start (bench_gui_t *g, bool probe);
/* Stop it (SIGTERM to the group, SIGKILL after 10 s) and remove dir unless keep_dir. */
void bench_gui_stop (bench_gui_t *g, bool keep_dir);
/* The probe's counters now: {"ticks", "busy_ticks", "redraws"} (see gui_probe.py),
 * a new reference, or NULL when the probe did not answer. */
json_t *bench_gui_counters (const bench_gui_t *g);

#endif
