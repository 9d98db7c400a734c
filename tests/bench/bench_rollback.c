/* bench_rollback (issue 23): exact rollback and durable commits measured in a real headless
 * Blender (tests/bench/bench_rollback.py prints the JSON lines): restore time and per-plan
 * snapshot and commit cost for scenes of 10, 1,000 and 10,000 objects.
 * `deploy/bench.sh rollback`; BLENDMQ_BLENDER names the Blender (default: blender on PATH);
 * an argument "10,1000" picks the sizes. Exit 77 when there is no Blender.
 * Timed inside that Blender (bench_rollback.py, time.perf_counter: monotonic) around
 * each call it names: fingerprint, snapshot, plan begin, commit, restore; nothing here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

int main (int argc, char **argv)
{
    const char *blender = getenv ("BLENDMQ_BLENDER") && *getenv ("BLENDMQ_BLENDER") ? getenv ("BLENDMQ_BLENDER") : "blender";
    const char *sizes = argc > 1 ? argv[1] : "10,1000,10000";
    char script[1024], addon[1024];
    snprintf (script, sizeof script, "%s/tests/bench/bench_rollback.py", BMQ_SOURCE_DIR);
    snprintf (addon, sizeof addon, "%s/services/executor/addon", BMQ_SOURCE_DIR);
    pid_t pid = fork ();
    if (pid < 0) { perror ("fork"); return 1; }
    if (pid == 0) {
        /* Blender's own chatter goes to stderr; the JSON lines stay alone on stdout (fd 3 there) */
        if (dup2 (1, 3) < 0 || dup2 (2, 1) < 0) _exit (1);
        setenv ("BENCH_OUT_FD", "3", 1);
        char *const args[] = { (char *) blender, "-b", "--factory-startup", "--python-exit-code", "1", "--python", script,
                               "--", addon, (char *) sizes, NULL };
        execvp (blender, args);
        fprintf (stderr, "bench_rollback: cannot run %s\n", blender);
        _exit (77);
    }
    int st = 0;
    if (waitpid (pid, &st, 0) < 0) { perror ("waitpid"); return 1; }
    return WIFEXITED (st) ? WEXITSTATUS (st) : 1;
}
