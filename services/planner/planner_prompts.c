/* planner_prompts — prompt files, reread when they change. */
#include "planner_prompts.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *s_files[BMQ_PROMPT__COUNT] = {
    "planner_system.md", "format_to_bpy.md", "contextual.md", "reformat.md", "fix_plan.md", "review.md",
};

typedef struct {
    char           *text;
    struct timespec mtime;
    off_t           size;
} s_prompt_t;

struct bmq_prompts_t {
    char      *dir;
    s_prompt_t p[BMQ_PROMPT__COUNT];
};

/* Drop <!-- … --> comments and trailing blank space. */
static void s_strip (char *text)
{
    char *open;
    while ((open = strstr (text, "<!--"))) {
        char *close = strstr (open + 4, "-->");
        char *after = close ? close + 3 : open + strlen (open);
        if (*after == '\n') after++;
        memmove (open, after, strlen (after) + 1);
    }
    size_t n = strlen (text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' ' || text[n - 1] == '\r' || text[n - 1] == '\t')) text[--n] = 0;
}

static int s_read (const char *dir, bmq_prompt_id_t id, s_prompt_t *out, char *err, size_t errlen)
{
    char path[4096];
    snprintf (path, sizeof path, "%s/%s", dir, s_files[id]);
    struct stat st;
    FILE *f = fopen (path, "rb");
    if (!f || fstat (fileno (f), &st)) {
        if (err) snprintf (err, errlen, "cannot read prompt %s: %s", path, strerror (errno));
        if (f) fclose (f);
        return -1;
    }
    if (st.st_size > (off_t) BMQ_PROMPT_MAX_BYTES) {
        if (err) snprintf (err, errlen, "prompt %s is larger than %u bytes", path, BMQ_PROMPT_MAX_BYTES);
        fclose (f);
        return -1;
    }
    char *text = malloc ((size_t) st.st_size + 1);
    size_t n = text ? fread (text, 1, (size_t) st.st_size, f) : 0;
    fclose (f);
    if (!text) { if (err) snprintf (err, errlen, "out of memory"); return -1; }
    text[n] = 0;
    if (strlen (text) != n) {
        if (err) snprintf (err, errlen, "prompt %s holds a NUL byte", path);
        free (text);
        return -1;
    }
    s_strip (text);
    free (out->text);
    out->text = text;
    out->mtime = st.st_mtim;
    out->size = st.st_size;
    return 0;
}

bmq_prompts_t *bmq_prompts_load (const char *dir, char *err, size_t errlen)
{
    bmq_prompts_t *self = calloc (1, sizeof *self);
    if (!self || !(self->dir = strdup (dir ? dir : "."))) { free (self); return NULL; }
    for (int i = 0; i < BMQ_PROMPT__COUNT; i++)
        if (s_read (self->dir, (bmq_prompt_id_t) i, &self->p[i], err, errlen)) {
            bmq_prompts_destroy (&self);
            return NULL;
        }
    return self;
}

void bmq_prompts_destroy (bmq_prompts_t **self_p)
{
    if (!self_p || !*self_p) return;
    for (int i = 0; i < BMQ_PROMPT__COUNT; i++) free ((*self_p)->p[i].text);
    free ((*self_p)->dir);
    free (*self_p);
    *self_p = NULL;
}

int bmq_prompts_refresh (bmq_prompts_t *self, char *err, size_t errlen)
{
    int reread = 0;
    for (int i = 0; i < BMQ_PROMPT__COUNT; i++) {
        char path[4096];
        snprintf (path, sizeof path, "%s/%s", self->dir, s_files[i]);
        struct stat st;
        if (stat (path, &st)) {
            if (err) snprintf (err, errlen, "prompt %s is gone (%s); keeping the text read before", path, strerror (errno));
            return -1;
        }
        if (st.st_size == self->p[i].size && st.st_mtim.tv_sec == self->p[i].mtime.tv_sec
            && st.st_mtim.tv_nsec == self->p[i].mtime.tv_nsec) continue;
        s_prompt_t fresh = { 0 };
        if (s_read (self->dir, (bmq_prompt_id_t) i, &fresh, err, errlen)) return -1;
        free (self->p[i].text);
        self->p[i] = fresh;
        reread++;
    }
    return reread;
}

const char *bmq_prompts_get (const bmq_prompts_t *self, bmq_prompt_id_t id)
{
    return self && id < BMQ_PROMPT__COUNT && self->p[id].text ? self->p[id].text : "";
}

char *bmq_template_fill (const char *tpl, const char *const *pairs)
{
    size_t cap = strlen (tpl) + 1, len = 0;
    for (size_t i = 0; pairs && pairs[i] && pairs[i + 1]; i += 2) cap += strlen (pairs[i + 1]) * 4;
    char *out = malloc (cap);
    if (!out) return NULL;
    for (const char *c = tpl; *c; ) {
        bool done = false;
        if (c[0] == '{' && c[1] == '{') {
            for (size_t i = 0; pairs && pairs[i] && pairs[i + 1] && !done; i += 2) {
                size_t kl = strlen (pairs[i]);
                if (!strncmp (c + 2, pairs[i], kl) && !strncmp (c + 2 + kl, "}}", 2)) {
                    size_t vl = strlen (pairs[i + 1]);
                    if (len + vl + 1 > cap) {
                        char *bigger = realloc (out, cap = len + vl + strlen (c) + 1);
                        if (!bigger) { free (out); return NULL; }
                        out = bigger;
                    }
                    memcpy (out + len, pairs[i + 1], vl);
                    len += vl;
                    c += kl + 4;
                    done = true;
                }
            }
        }
        if (done) continue;
        if (len + 2 > cap) {
            char *bigger = realloc (out, cap = cap * 2 + 2);
            if (!bigger) { free (out); return NULL; }
            out = bigger;
        }
        out[len++] = *c++;
    }
    out[len] = 0;
    return out;
}
