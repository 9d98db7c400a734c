/* Without libFuzzer: replay every file of a corpus folder through the target,
 * so the corpus stays a regression test in every build. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int main (int argc, char **argv)
{
    int files = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir (argv[a]);
        if (!d) { fprintf (stderr, "cannot open %s\n", argv[a]); return 1; }
        struct dirent *e;
        while ((e = readdir (d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf (path, sizeof path, "%s/%s", argv[a], e->d_name);
            FILE *f = fopen (path, "rb");
            if (!f) continue;
            unsigned char *buf = malloc (1 << 20);
            size_t n = fread (buf, 1, 1 << 20, f);
            fclose (f);
            LLVMFuzzerTestOneInput (buf, n);
            free (buf);
            files++;
        }
        closedir (d);
    }
    printf ("replayed %d inputs\n", files);
    return files > 0 ? 0 : 1;
}
