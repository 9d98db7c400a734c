/* bench_gui — a GUI Blender under xvfb-run for the benchmarks (bench_gui.h). */
#include "bench_gui.h"
#include "bus.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define GUI_START_MS 120000
#define PROBE_REPLY_MAX 512

const char *BENCH_GUI_TOKEN = "bench-gui-token-0123456789abcdef";

bool bench_gui_available (void)
{
    return system ("command -v xvfb-run >/dev/null 2>&1") == 0;
}

static int s_read_port (const char *path)
{
    int port = 0;
    FILE *f = fopen (path, "r");
    if (f) { if (fscanf (f, "%d", &port) != 1 || port <= 0 || port > 65535) port = 0; fclose (f); }
    return port;
}

int bench_gui_start (bench_gui_t *g, bool probe)
{
    memset (g, 0, sizeof *g);
    snprintf (g->dir, sizeof g->dir, "/tmp/bmq-bench-gui-XXXXXX");
    if (!mkdtemp (g->dir)) { perror ("bench: mkdtemp"); return -1; }
    char addon[1024], probe_py[1024], port_file[128], probe_file[128], log[128];
    snprintf (addon, sizeof addon, "%s/services/executor/addon/blendmq_addon.py", BMQ_SOURCE_DIR);
    snprintf (probe_py, sizeof probe_py, "%s/tests/bench/gui_probe.py", BMQ_SOURCE_DIR);
    snprintf (port_file, sizeof port_file, "%s/port", g->dir);
    snprintf (probe_file, sizeof probe_file, "%s/probe_port", g->dir);
    snprintf (g->token_file, sizeof g->token_file, "%s/token", g->dir);
    snprintf (log, sizeof log, "%s/blender.log", g->dir);
    FILE *f = fopen (g->token_file, "w");
    if (!f) { perror ("bench: token file"); return -1; }
    fputs (BENCH_GUI_TOKEN, f);
    fclose (f);
    const char *blender = getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender";
    pid_t pid = fork ();
    if (pid == 0) {
        setsid ();
        if (!freopen (log, "w", stdout) || !freopen (log, "a", stderr)) _exit (126);
        if (probe) setenv ("BMQ_BENCH_PROBE_PORT_FILE", probe_file, 1);
        /* the probe runs after the launcher (both before "--", whose arguments are the launcher's) */
        const char *argv[24];
        int n = 0;
        const char *head[] = { "xvfb-run", "-a", "-s", "-screen 0 1280x800x24", blender, "--factory-startup",
                               "--python-expr", "import bpy; bpy.context.preferences.view.show_splash = False",
                               "--python", addon };
        for (size_t i = 0; i < sizeof head / sizeof *head; i++) argv[n++] = head[i];
        if (probe) { argv[n++] = "--python"; argv[n++] = probe_py; }
        const char *tail[] = { "--", "--port", "0", "--port-file", port_file, "--token-file", g->token_file };
        for (size_t i = 0; i < sizeof tail / sizeof *tail; i++) argv[n++] = tail[i];
        argv[n] = NULL;
        execvp (argv[0], (char *const *) argv);
        _exit (127);
    }
    if (pid < 0) { perror ("bench: fork"); return -1; }
    g->pid = pid;
    for (int64_t until = bmq_mono_ms () + GUI_START_MS; bmq_mono_ms () < until; ) {
        zclock_sleep (100);
        if (!g->port) g->port = s_read_port (port_file);
        if (probe && !g->probe_port) g->probe_port = s_read_port (probe_file);
        if (g->port && (!probe || g->probe_port)) return 0;
        if (waitpid (pid, NULL, WNOHANG) == pid) { g->pid = 0; break; }
    }
    fprintf (stderr, "bench: the GUI Blender did not start (add-on port %d, probe port %d); see %s\n",
             g->port, g->probe_port, log);
    return -1;
}

void bench_gui_stop (bench_gui_t *g, bool keep_dir)
{
    if (g->pid > 0) {
        kill (-g->pid, SIGTERM);
        for (int i = 0; i < 100 && waitpid (g->pid, NULL, WNOHANG) == 0; i++) zclock_sleep (100);
        kill (-g->pid, SIGKILL);
        waitpid (g->pid, NULL, 0);
        g->pid = 0;
    }
    if (!g->dir[0]) return;
    if (keep_dir) { fprintf (stderr, "bench: kept %s\n", g->dir); return; }
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", g->dir);
    if (system (cmd) != 0) fprintf (stderr, "bench: could not remove %s\n", g->dir);
}

json_t *bench_gui_counters (const bench_gui_t *g)
{
    if (g->probe_port <= 0) return NULL;
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return NULL;
    struct timeval tv = { 5, 0 };
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) g->probe_port) };
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    char buf[PROBE_REPLY_MAX + 1];
    size_t len = 0;
    if (connect (fd, (struct sockaddr *) &addr, sizeof addr) == 0)
        for (ssize_t got; len < PROBE_REPLY_MAX && (got = recv (fd, buf + len, PROBE_REPLY_MAX - len, 0)) > 0; )
            len += (size_t) got;
    close (fd);
    buf[len] = 0;
    json_t *j = json_loads (buf, 0, NULL);
    /* hostile input all the same: an object of three integers, or nothing */
    if (!json_is_object (j) || !json_is_integer (json_object_get (j, "ticks"))
        || !json_is_integer (json_object_get (j, "busy_ticks")) || !json_is_integer (json_object_get (j, "redraws"))) {
        json_decref (j);
        return NULL;
    }
    return j;
}
