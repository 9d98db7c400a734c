/* bench_compose_holdout — `deploy/bench.sh compose_holdout`: the 150 held-out
 * room descriptions of tests/planner/holdout_prompts.json (written apart from
 * the offline planner's parser, as people type them: typos, synonyms, objects
 * with no recipe) planned offline by compose_tool and built in a real Blender,
 * scored by room_bench.py exactly as `compose` is; prints the figures as bench
 * JSON lines of bench compose_holdout and the table and the failing prompts on
 * stderr. `bench_compose_holdout [N]` scores a sample of about N (ctest's
 * bench.compose_holdout smoke run). Exit 77 (skipped) without Blender.
 *
 * Built twice: bench_compose_holdout2 (`deploy/bench.sh compose_holdout2`)
 * scores tests/planner/holdout2_prompts.json, a second set of 160 written
 * later by another engineer who read neither the parser nor the first set
 * (BMQ_HOLDOUT_FILE, BMQ_BENCH_NAME). */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main (int argc, char **argv)
{
    char self[PATH_MAX], tool[PATH_MAX + 32];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) { fprintf (stderr, "bench_compose_holdout: cannot find its own folder\n"); return 2; }
    self[n] = 0;
    snprintf (tool, sizeof tool, "%s/compose_tool", dirname (self));
    if (argc > 1 && (strspn (argv[1], "0123456789") != strlen (argv[1]) || atoi (argv[1]) <= 0)) {
        fprintf (stderr, "usage: bench_%s [SAMPLE]  (SAMPLE: a positive number of rooms)\n", BMQ_BENCH_NAME);
        return 2;
    }
    char *args[] = { (char *) BMQ_PYTHON, (char *) BMQ_ROOMS_DIR "/room_bench.py", (char *) "--compose-tool", tool,
                     (char *) "--prompts", (char *) BMQ_ROOMS_DIR "/" BMQ_HOLDOUT_FILE, (char *) "--bench",
                     (char *) BMQ_BENCH_NAME, (char *) "--json", (char *) "--show", (char *) "200",
                     argc > 1 ? (char *) "--sample" : NULL, argc > 1 ? argv[1] : NULL, NULL };
    execv (BMQ_PYTHON, args);
    perror ("bench_compose_holdout: python3");
    return 2;
}
