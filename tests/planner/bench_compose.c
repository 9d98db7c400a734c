/* bench_compose — `deploy/bench.sh compose`: every room description of
 * compose_prompts.json planned offline and built in a real Blender, scored by
 * room_bench.py; prints its figures as bench JSON lines (counts, colours and
 * relations met, collisions, supported, inside the room, chat failures, not
 * understood) and the table on stderr. Exit 77 (skipped) without Blender. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main (int argc, char **argv)
{
    (void) argc;
    char self[PATH_MAX], tool[PATH_MAX + 32];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) { fprintf (stderr, "bench_compose: cannot find its own folder\n"); return 2; }
    self[n] = 0;
    snprintf (tool, sizeof tool, "%s/compose_tool", dirname (self));
    /* bench_compose [N]: a sample of N rooms (ctest's bench.compose smoke run), else all of them */
    char *args[] = { (char *) BMQ_PYTHON, (char *) BMQ_SOURCE_DIR_ROOMS "/room_bench.py", (char *) "--compose-tool", tool, (char *) "--json",
                     argc > 1 ? (char *) "--sample" : NULL, argc > 1 ? argv[1] : NULL, NULL };
    execv (BMQ_PYTHON, args);
    perror ("bench_compose: python3");
    (void) argv;
    return 2;
}
