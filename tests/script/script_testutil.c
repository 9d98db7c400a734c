/* script_testutil — shared by the script tests and benchmarks. */
#include "script_testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

char *stu_read (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    fseek (f, 0, SEEK_END);
    long size = ftell (f);
    fseek (f, 0, SEEK_SET);
    char *buf = malloc ((size_t) size + 1);
    if (buf && fread (buf, 1, (size_t) size, f) != (size_t) size) {
        free (buf);
        buf = NULL;
    }
    fclose (f);
    if (buf) {
        buf[size] = 0;
        if (len)
            *len = (size_t) size;
    }
    return buf;
}

static int s_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Appends every *.py under `dir`, descending into subfolders (the evil corpus
 * keeps one folder per class of attack). */
static void s_walk (const char *dir, char ***list, size_t *n, int depth)
{
    DIR *d = depth < 8 ? opendir (dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir (d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t l = strlen (e->d_name);
        size_t pl = strlen (dir) + l + 2;
        char *path = malloc (pl);
        snprintf (path, pl, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat (path, &st) == 0 && S_ISDIR (st.st_mode)) {
            s_walk (path, list, n, depth + 1);
            free (path);
            continue;
        }
        if (l < 4 || strcmp (e->d_name + l - 3, ".py") != 0 || !S_ISREG (st.st_mode)) {
            free (path);
            continue;
        }
        *list = realloc (*list, (*n + 1) * sizeof **list);
        (*list)[(*n)++] = path;
    }
    if (d)
        closedir (d);
}

char **stu_corpus (const char *which, size_t *count)
{
    char dir[1024];
    snprintf (dir, sizeof dir, "%s/tests/script/corpus/%s", BMQ_SOURCE_DIR, which);
    char **list = NULL;
    size_t n = 0;
    s_walk (dir, &list, &n, 0);
    if (n)
        qsort (list, n, sizeof *list, s_cmp);
    *count = n;
    return list;
}

const char *stu_corpus_class (const char *path, char *buf, size_t len)
{
    const char *p = strstr (path, "/tests/script/corpus/");
    p = p ? p + strlen ("/tests/script/corpus/") : path;
    const char *slash = strchr (p, '/');            /* past "evil/" or "good/" */
    const char *start = slash ? slash + 1 : p;
    const char *end = strchr (start, '/');
    if (!end) {
        snprintf (buf, len, "-");
        return buf;
    }
    snprintf (buf, len, "%.*s", (int) (end - start), start);
    return buf;
}

void stu_free_list (char **list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (list[i]);
    free (list);
}

void stu_expect_len (const char *text, size_t len, char *kind, size_t kl, char *what, size_t wl)
{
    /* NULs dropped from the head, so a UTF-16/32 file (the encoding class) states its expectation too */
    char head[4096];
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < sizeof head; i++)
        if (text[i])
            head[n++] = text[i];
    head[n] = 0;
    const char *p = strstr (head, "# expect: ");
    char k[32] = "", w[32] = "";
    if (p)
        sscanf (p + 10, "%31s %31s", k, w);
    snprintf (kind, kl, "%s", k);
    snprintf (what, wl, "%s", w);
}

void stu_expect (const char *text, char *kind, size_t kl, char *what, size_t wl)
{
    stu_expect_len (text, strlen (text), kind, kl, what, wl);
}

char *stu_script_of_lines (int lines, size_t *len)
{
    static const char *head = "import bpy\nimport math\nimport random\n\nrandom.seed(7)\n\n\n"
                              "def place(obj, x, y, z):\n    obj.location = (x, y, z)\n    return obj\n\n\n";
    static const char *body[] = {
        "bpy.ops.mesh.primitive_cube_add(size=%d.5, location=(%d, 0, 0))\n",
        "obj = bpy.context.active_object\n",
        "obj.name = f\"Part_{%d}\"\n",
        "place(obj, math.cos(%d * 0.3) * 4, math.sin(0.2) * 4, random.uniform(0, 2))\n",
        "mat = bpy.data.materials.new(name=\"Mat%d\")\n",
        "mat.diffuse_color = (0.%d, 0.5, 0.5, 1.0)\n",
        "obj.data.materials.append(mat)\n",
        "bpy.ops.mesh.primitive_uv_sphere_add(radius=0.%d + 0.5, segments=16, ring_count=8)\n",
        "for k in range(%d %% 5 + 1):\n    obj.scale[k %% 3] *= 1.01\n",
        "mod = obj.modifiers.new(\"Bevel%d\", 'BEVEL')\n",
        "mod.width = 0.0%d + 0.01\n",
        "# part %d done\n",
    };
    size_t cap = (size_t) lines * 96 + 512, n = 0;
    char *buf = malloc (cap);
    n += (size_t) snprintf (buf, cap, "%s", head);
    int l = 12, i = 0;
    while (l < lines) {
        const char *fmt = body[i % (sizeof body / sizeof body[0])];
        n += (size_t) snprintf (buf + n, cap - n, fmt, (i / 12) % 9 + 1, i);
        l += strchr (strchr (fmt, '\n') + 1, '\n') ? 2 : 1;
        i++;
    }
    *len = n;
    return buf;
}

double stu_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int s_dcmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

double stu_percentile (double *v, size_t n, double p)
{
    if (!n)
        return 0;
    qsort (v, n, sizeof *v, s_dcmp);
    size_t k = (size_t) (p / 100.0 * (double) (n - 1) + 0.5);
    return v[k < n ? k : n - 1];
}

void stu_emit (const char *bench, const char *metric, double value, const char *unit)
{
    json_t *o = json_pack ("{s:s, s:s, s:f, s:s}", "bench", bench, "metric", metric, "value", value, "unit", unit);
    char *s = json_dumps (o, JSON_COMPACT);
    printf ("%s\n", s);
    fflush (stdout);
    free (s);
    json_decref (o);
}
