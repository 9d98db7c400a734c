/* blender_root — a Blender installed in a root of its own (see the header). */
#include "blender_root.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* `exe` as a path: itself when it has a '/', else the first PATH entry holding it. */
static bool s_locate (const char *exe, char *out, size_t outlen)
{
    if (strchr (exe, '/')) {
        int n = snprintf (out, outlen, "%s", exe);
        return n > 0 && (size_t) n < outlen && access (out, X_OK) == 0;
    }
    const char *path = getenv ("PATH");
    for (const char *p = path && *path ? path : "/usr/bin:/bin"; p;) {
        const char *colon = strchr (p, ':');
        size_t n = colon ? (size_t) (colon - p) : strlen (p);
        int w = snprintf (out, outlen, "%.*s/%s", (int) n, p, exe);
        if (n > 0 && w > 0 && (size_t) w < outlen && access (out, X_OK) == 0)
            return true;
        p = colon ? colon + 1 : NULL;
    }
    return false;
}

bool bmq_blender_root (const char *blender, char *root, size_t rootlen)
{
    char path[PATH_MAX], real[PATH_MAX], cand[PATH_MAX + 8], inner[PATH_MAX + 32];
    struct stat st;
    if (rootlen) root[0] = 0;
    if (!blender || !*blender || !s_locate (blender, path, sizeof path) || !realpath (path, real))
        return false;
    char *slash = strrchr (real, '/');
    if (!slash) return false;
    *slash = 0;
    if (snprintf (cand, sizeof cand, "%s/root", real[0] ? real : "") >= (int) sizeof cand)
        return false;
    if (!realpath (cand, path) || stat (path, &st) || !S_ISDIR (st.st_mode) || !strcmp (path, "/"))
        return false;
    snprintf (inner, sizeof inner, "%s%s", path, BMQ_BLENDER_ROOT_EXE);
    if (lstat (inner, &st) || !(S_ISLNK (st.st_mode) || (S_ISREG (st.st_mode) && (st.st_mode & 0111))))
        return false;           /* (a link there points into the root, not the host: not followed) */
    if (strlen (path) >= rootlen)
        return false;
    memcpy (root, path, strlen (path) + 1);
    return true;
}
