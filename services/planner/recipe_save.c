/* recipe_save — strict names, writes that stay inside the folder. */
#include "recipe_save.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int s_fail (char *err, size_t errlen, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
static int s_fail (char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (err, errlen, fmt, ap);
        va_end (ap);
    }
    return -1;
}

int bmq_recipe_name_check (const char *name, size_t len, char *err, size_t errlen)
{
    static const char *devices[] = { "con", "nul", "aux", "prn", "clock" };
    if (!name || len == 0) return s_fail (err, errlen, "the recipe name is empty");
    if (len > BMQ_RECIPE_NAME_MAX) return s_fail (err, errlen, "the recipe name is longer than %d bytes", BMQ_RECIPE_NAME_MAX);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) name[i];
        bool ok = (c >= 'a' && c <= 'z') || (i > 0 && ((c >= '0' && c <= '9') || c == '_'));
        if (!ok) {
            const char *what = c == 0 ? "a NUL byte" : c == '/' || c == '\\' ? "a path separator"
                             : c == '.' ? "a dot" : c >= 0x80 ? "a non-ASCII byte" : c == ':' ? "a colon" : "a character";
            return s_fail (err, errlen, "the recipe name has %s at byte %zu: use 1 to %d of a-z, 0-9 and '_', "
                           "starting with a letter", what, i, BMQ_RECIPE_NAME_MAX);
        }
    }
    for (size_t d = 0; d < sizeof devices / sizeof *devices; d++)
        if (len == strlen (devices[d]) && !memcmp (name, devices[d], len))
            return s_fail (err, errlen, "'%s' is a reserved device name", devices[d]);
    if (len == 4 && (!memcmp (name, "com", 3) || !memcmp (name, "lpt", 3)) && name[3] >= '0' && name[3] <= '9')
        return s_fail (err, errlen, "'%.4s' is a reserved device name", name);
    return 0;
}

/* The recipe as YAML: block keys, one flow mapping per step (JSON is valid
 * YAML flow syntax, and the built-in recipes read the same way). */
static int s_write (FILE *f, const json_t *doc)
{
    time_t now = time (NULL);
    char when[32];
    strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime (&now));
    char *desc = json_dumps (json_object_get (doc, "description"), JSON_ENCODE_ANY);
    char *kws = json_dumps (json_object_get (doc, "keywords"), JSON_COMPACT);
    int rc = fprintf (f, "# Saved by save_recipe at %s.\nname: %s\ndescription: %s\nkeywords: %s\nsteps:\n", when,
                      json_string_value (json_object_get (doc, "name")), desc ? desc : "\"\"", kws ? kws : "[]") < 0;
    free (desc);
    free (kws);
    size_t i;
    json_t *step;
    json_array_foreach (json_object_get (doc, "steps"), i, step) {
        char *text = json_dumps (step, JSON_COMPACT | JSON_REAL_PRECISION (10));
        rc |= !text || fprintf (f, "  - %s\n", text) < 0;
        free (text);
    }
    return rc ? -1 : 0;
}

static json_t *s_doc (const char *name, size_t len, const char *description, const json_t *keywords,
                      const json_t *plan, char *err, size_t errlen)
{
    char spaced[BMQ_RECIPE_NAME_MAX + 1];
    snprintf (spaced, sizeof spaced, "%.*s", (int) len, name);
    for (char *c = spaced; *c; c++) if (*c == '_') *c = ' ';
    if (description && strlen (description) > BMQ_RECIPE_DESC_MAX) {
        s_fail (err, errlen, "the description is longer than %d bytes", BMQ_RECIPE_DESC_MAX);
        return NULL;
    }
    json_t *kws = json_array ();
    size_t i;
    json_t *k;
    json_array_foreach (keywords, i, k) {
        if (!json_is_string (k) || json_string_length (k) == 0 || json_string_length (k) > 128 || i >= BMQ_RECIPE_MAX_KEYWORDS - 1) {
            s_fail (err, errlen, "keyword %zu must be a string of 1 to 128 bytes (at most %d keywords)", i, BMQ_RECIPE_MAX_KEYWORDS - 1);
            json_decref (kws);
            return NULL;
        }
        json_array_append (kws, k);
    }
    if (json_array_size (kws) == 0) json_array_append_new (kws, json_string (spaced));
    char fallback[128];
    snprintf (fallback, sizeof fallback, "Saved recipe %s", spaced);
    return json_pack ("{s:s#, s:s, s:o, s:O}", "name", name, (int) len, "description", description ? description : fallback,
                      "keywords", kws, "steps", plan);
}

int bmq_recipe_save (bmq_recipe_book_t *book, const char *dir, const char *name, size_t name_len,
                     const char *description, const json_t *keywords, const json_t *plan,
                     char *path_out, size_t path_len, char *err, size_t errlen)
{
    if (bmq_recipe_name_check (name, name_len, err, errlen)) return -1;
    char fname[BMQ_RECIPE_NAME_MAX + 8], tmp[BMQ_RECIPE_NAME_MAX + 40];
    snprintf (fname, sizeof fname, "%.*s.yaml", (int) name_len, name);
    snprintf (tmp, sizeof tmp, ".%.*s.%ld.tmp", (int) name_len, name, (long) getpid ());
    char plain[BMQ_RECIPE_NAME_MAX + 1];
    snprintf (plain, sizeof plain, "%.*s", (int) name_len, name);
    if (bmq_recipe_book_get (book, plain)) return s_fail (err, errlen, "a recipe named '%s' already exists", plain);
    if (!json_is_array (plan) || json_array_size (plan) == 0)
        return s_fail (err, errlen, "the plan must be a non-empty array of steps");
    if (!dir || !*dir) return s_fail (err, errlen, "no folder for saved recipes is configured (planner.saved_recipes_dir)");
    json_t *doc = s_doc (name, name_len, description, keywords, plan, err, errlen);
    if (!doc) return -1;
    /* create the folder and its parents (the default lives under ~/.local/state) */
    char partial[1024];
    snprintf (partial, sizeof partial, "%s", dir);
    for (char *slash = partial + 1; (slash = strchr (slash, '/')); slash++) {
        *slash = 0;
        mkdir (partial, 0700);
        *slash = '/';
    }
    if (mkdir (dir, 0700) && errno != EEXIST) {
        json_decref (doc);
        return s_fail (err, errlen, "cannot create %s: %s", dir, strerror (errno));
    }
    int dfd = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    int fd = dfd < 0 ? -1 : openat (dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd < 0 ? NULL : fdopen (fd, "w");
    int rc = -1;
    if (!f) s_fail (err, errlen, "cannot write in %s: %s", dir, strerror (errno));
    else if (s_write (f, doc) || fflush (f) || fsync (fileno (f))) s_fail (err, errlen, "cannot write %s/%s: %s", dir, fname, strerror (errno));
    else rc = 0;
    if (f) fclose (f);
    else if (fd >= 0) close (fd);
    if (rc == 0 && renameat2 (dfd, tmp, dfd, fname, RENAME_NOREPLACE)) {
        rc = s_fail (err, errlen, errno == EEXIST ? "%s/%s already exists" : "cannot save %s/%s: %s", dir, fname, strerror (errno));
    }
    if (rc && dfd >= 0) unlinkat (dfd, tmp, 0);
    if (rc == 0) {
        fsync (dfd);
        json_incref (doc);
        if (bmq_recipe_book_add (book, doc, fname, err, errlen)) {      /* cannot happen for a checked plan; undo */
            unlinkat (dfd, fname, 0);
            rc = -1;
        }
        else if (path_out) snprintf (path_out, path_len, "%s/%s", dir, fname);
    }
    if (dfd >= 0) close (dfd);
    json_decref (doc);
    return rc;
}
