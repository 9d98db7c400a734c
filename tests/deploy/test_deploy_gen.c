/* deploy.generated (issue 31): the per-service deploy files are what
 * common/deploy_gen.c makes from common/service_registry.def, byte for byte.
 * Usage: test_deploy_gen SOURCE_DIR           check (exit 1 on any problem)
 *        test_deploy_gen --write SOURCE_DIR   write them
 *        test_deploy_gen --list               print the paths it makes */
#include "deploy_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 64
#define MAX_SIZE  (1 << 20)

static int s_problems;

/* The file at path (NUL-terminated, at most MAX_SIZE bytes), or NULL. */
static char *s_read (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f) return NULL;
    char *text = malloc (MAX_SIZE + 1);
    size_t used = text ? fread (text, 1, MAX_SIZE + 1, f) : 0;
    fclose (f);
    if (!text || used > MAX_SIZE) { free (text); return NULL; }
    text[used] = 0;
    return text;
}

static void s_same (const char *src, const bmq_deploy_file_t *file)
{
    char path[1200];
    if ((size_t) snprintf (path, sizeof path, "%s/%s", src, file->path) >= sizeof path) {
        s_problems++;
        fprintf (stderr, "%s: the source directory's path is too long\n", file->path);
        return;
    }
    char *have = s_read (path);
    if (!have) {
        s_problems++;
        fprintf (stderr, "%s: missing (or unreadable, or over %d bytes): run `build/bin/test_deploy_gen --write .`\n", file->path, MAX_SIZE);
        return;
    }
    if (strcmp (have, file->text)) {
        const char *a = have, *b = file->text, *la = have, *lb = file->text;
        size_t line = 1;
        while (*a && *a == *b) { if (*a == '\n') { line++; la = a + 1; lb = b + 1; } a++; b++; }
        fprintf (stderr, "%s:%zu: the file has      \"%.*s\"\n%s:%zu: the registry makes \"%.*s\"\n", file->path, line,
                 (int) strcspn (la, "\n"), la, file->path, line, (int) strcspn (lb, "\n"), lb);
        fprintf (stderr, "%s: differs from what common/service_registry.def makes; after editing the .def, build and run "
                         "`build/bin/test_deploy_gen --write .` in the source tree (never edit it by hand)\n", file->path);
        s_problems++;
    }
    free (have);
}

int main (int argc, char **argv)
{
    bool write = argc == 3 && !strcmp (argv[1], "--write");
    bool list = argc == 2 && !strcmp (argv[1], "--list");
    if (argc != 2 && !write) { fprintf (stderr, "usage: test_deploy_gen [--write] SOURCE_DIR | --list\n"); return 2; }
    const char *why = bmq_deploy_problem ();
    if (why) { fprintf (stderr, "common/service_registry.def: %s\n", why); return 1; }
    bmq_deploy_file_t files[MAX_FILES];
    size_t n = bmq_deploy_files (files, MAX_FILES);
    for (size_t i = 0; i < n; i++)
        if (!files[i].text) { fprintf (stderr, "out of memory\n"); return 1; }
    const char *src = argv[argc - 1];
    for (size_t i = 0; i < n; i++) {
        if (list) printf ("%s\n", files[i].path);
        else if (write) {
            char path[1200];
            if ((size_t) snprintf (path, sizeof path, "%s/%s", src, files[i].path) >= sizeof path) {
                fprintf (stderr, "%s: the source directory's path is too long\n", files[i].path);
                return 1;
            }
            FILE *f = fopen (path, "w");
            if (!f || fputs (files[i].text, f) < 0 || fclose (f)) { fprintf (stderr, "cannot write %s\n", path); return 1; }
            printf ("wrote %s\n", path);
        }
        else s_same (src, &files[i]);
        free (files[i].text);
    }
    if (s_problems) { fprintf (stderr, "%d problem(s)\n", s_problems); return 1; }
    if (!list && !write) printf ("ok: %zu deploy files are the registry's\n", n);
    return 0;
}
