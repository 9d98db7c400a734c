/* sandbox_files — what a sandbox run left in its writable folders, seen from
 * the host (sandbox_files.h). */
#include "sandbox_files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every writable place inside the sandbox is one of these host folders. */
static const char *s_writable[] = { "tmp", "shm", "home", "out", NULL };


static void s_list (const char *base, const char *rel, sandbox_listing_t *l, int depth)
{
    char dir[1100];
    snprintf (dir, sizeof dir, "%s/%s", base, rel);
    DIR *d = opendir (dir);
    struct dirent *e;
    if (!d) {
        l->incomplete = true;           /* an unreadable folder hides what is in it */
        return;
    }
    while ((e = readdir (d))) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        char path[1400];
        struct stat st;
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat (path, &st) < 0)
            continue;
        if (l->count >= 20000 || strlen (rel) + strlen (e->d_name) + 2 > sizeof l->files->path) {
            l->incomplete = true;
            break;
        }
        if (l->count == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 64;
            sandbox_file_t *bigger = realloc (l->files, cap * sizeof *bigger);
            if (!bigger) {
                l->incomplete = true;
                break;
            }
            l->files = bigger;
            l->cap = cap;
        }
        sandbox_file_t *f = &l->files[l->count++];
        snprintf (f->path, sizeof f->path, "%s/%s", rel, e->d_name);
        f->size = st.st_size;
        f->mode = st.st_mode;
        f->ino = st.st_ino;
        f->mtime = st.st_mtim;
        f->ctime = st.st_ctim;
        if (S_ISDIR (st.st_mode)) {
            if (depth < 32) {
                char sub[512];
                snprintf (sub, sizeof sub, "%s", f->path);
                s_list (base, sub, l, depth + 1);
            }
            else
                l->incomplete = true;
        }
    }
    closedir (d);
}

void sandbox_files_snapshot (const char *dir, sandbox_listing_t *l)
{
    for (const char **w = s_writable; *w; w++)
        s_list (dir, *w, l, 0);
}

static const sandbox_file_t *s_find (const sandbox_listing_t *l, const char *path)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp (l->files[i].path, path) == 0)
            return &l->files[i];
    return NULL;
}

static bool s_same (const sandbox_file_t *a, const sandbox_file_t *b)
{
    return a->size == b->size && a->mode == b->mode && a->ino == b->ino && a->mtime.tv_sec == b->mtime.tv_sec
           && a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec
           && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static void s_append (char *buf, size_t cap, size_t *used, const char *sep, const char *what)
{
    if (*used >= cap)
        return;
    int n = snprintf (buf + *used, cap - *used, "%s%s", *used ? sep : "", what);
    *used += n > 0 ? (size_t) n : 0;
}

/* Files the runner writes by design: the preview, when one was asked for. */
static bool s_declared (const char *rel, bool preview)
{
    return preview && strcmp (rel, "out/preview.png") == 0;
}

/* After the kill: every new, changed or removed entry in the writable folders,
 * other than the declared outputs, is a violation {"check": "files", "detail":
 * "wrote <relative paths>"}. */
void sandbox_files_check (const char *dir, const sandbox_listing_t *before, bool preview, json_t *violations)
{
    sandbox_listing_t after = { 0 };
    char wrote[1500] = "", removed[600] = "";
    size_t nw = 0, nr = 0, wrote_used = 0, removed_used = 0;
    sandbox_files_snapshot (dir, &after);
    for (size_t i = 0; i < after.count; i++) {
        const sandbox_file_t *was = s_find (before, after.files[i].path);
        if (s_declared (after.files[i].path, preview) || (was && s_same (was, &after.files[i])))
            continue;
        /* a folder whose only change is an entry listed on its own is not news */
        if (was && S_ISDIR (was->mode) && S_ISDIR (after.files[i].mode) && was->ino == after.files[i].ino
            && was->mode == after.files[i].mode)
            continue;
        if (nw++ < 12)
            s_append (wrote, sizeof wrote, &wrote_used, ", ", after.files[i].path);
    }
    for (size_t i = 0; i < before->count; i++)
        if (!s_find (&after, before->files[i].path) && !s_declared (before->files[i].path, preview) && nr++ < 8)
            s_append (removed, sizeof removed, &removed_used, ", ", before->files[i].path);
    if (nw > 12)
        s_append (wrote, sizeof wrote, &wrote_used, ", ", "...");
    if (nw > 0) {
        json_t *v = json_pack ("{s:s, s:s+}", "check", "files", "detail", "wrote ", wrote);
        if (v)
            json_array_append_new (violations, v);
    }
    if (nr > 0)
        json_array_append_new (violations, json_pack ("{s:s, s:s+}", "check", "files", "detail", "removed ", removed));
    if (after.incomplete && !before->incomplete)
        json_array_append_new (violations, json_pack ("{s:s, s:s}", "check", "files", "detail",
                                                      "left folders the host cannot list in full"));
    free (after.files);
}
