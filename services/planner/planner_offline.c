/* planner_offline — the recipe book kept fresh, prompts to scene_compose, save_recipe. */
#include "planner_offline.h"
#include "plan_validator.h"
#include "recipe_book.h"
#include "scene_compose.h"
#include "scene_words.h"
#include "recipe_save.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct bmq_offline_t {
    char                *dir, *saved_dir;
    const bmq_palette_t *palette;
    json_t              *described;
    bmq_recipe_book_t   *book;
    struct timespec      dir_mtime, saved_mtime;
};

static struct timespec s_mtime (const char *dir)
{
    struct stat st;
    struct timespec zero = { 0, 0 };
    return dir && *dir && stat (dir, &st) == 0 ? st.st_mtim : zero;
}

bmq_offline_t *bmq_offline_new (const char *recipes_dir, const char *saved_dir, const bmq_palette_t *palette,
                                char *err, size_t errlen)
{
    bmq_offline_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    self->dir = strdup (recipes_dir ? recipes_dir : "");
    self->saved_dir = strdup (saved_dir ? saved_dir : "");
    self->palette = palette;
    self->described = bmq_palette_describe (palette);
    self->dir_mtime = s_mtime (self->dir);
    self->saved_mtime = s_mtime (self->saved_dir);
    self->book = bmq_recipe_book_load_dirs (self->dir, self->saved_dir, err, errlen);
    if (!self->book || !self->described) bmq_offline_destroy (&self);
    return self;
}

void bmq_offline_destroy (bmq_offline_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_offline_t *self = *self_p;
    bmq_recipe_book_destroy (&self->book);
    json_decref (self->described);
    free (self->dir);
    free (self->saved_dir);
    free (self);
    *self_p = NULL;
}

size_t bmq_offline_count (bmq_offline_t *self)
{
    return bmq_recipe_book_count (self->book);
}

json_t *bmq_offline_list (bmq_offline_t *self)
{
    return bmq_recipe_book_list (self->book);
}

static bool s_same (struct timespec a, struct timespec b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

int bmq_offline_refresh (bmq_offline_t *self, char *err, size_t errlen)
{
    struct timespec d = s_mtime (self->dir), s = s_mtime (self->saved_dir);
    if (s_same (d, self->dir_mtime) && s_same (s, self->saved_mtime)) return 0;
    bmq_recipe_book_t *fresh = bmq_recipe_book_load_dirs (self->dir, self->saved_dir, err, errlen);
    self->dir_mtime = d;                    /* a broken file is reported once, not on every prompt */
    self->saved_mtime = s;
    if (!fresh) return -1;
    bmq_recipe_book_destroy (&self->book);
    self->book = fresh;
    return 1;
}

int bmq_offline_plan (bmq_offline_t *self, const char *prompt, json_t **body, char **note,
                      char *code, size_t codelen, char *message, size_t msglen)
{
    int rc = bmq_scene_compose (self->book, self->palette, self->described, prompt, body, note, code, codelen, message, msglen);
    if (rc <= 0) return rc;
    json_t *near = bmq_recipe_book_suggest (self->book, prompt, 3);         /* no recipe named at all */
    char names[256] = "";
    size_t i;
    json_t *n;
    json_array_foreach (near, i, n) {
        if (i) strncat (names, ", ", sizeof names - strlen (names) - 1);
        strncat (names, json_string_value (n), sizeof names - strlen (names) - 1);
    }
    json_decref (near);
    snprintf (code, codelen, "no_match");
    snprintf (message, msglen,
              "the offline planner has no recipe for \"%.200s\" (closest: %s; %zu recipes in all). Try one of those, "
              "or plan with a language model: export GEMINI_API_KEY=... for Gemini, or set planner.backend: openai "
              "and planner.openai_base_url to a local server (Ollama, llama.cpp) to stay offline.",
              prompt, names, bmq_recipe_book_count (self->book));
    bmq_utf8_fix (message);                 /* the prompt, cut at 200 bytes, may end inside a character */
    return -1;
}

int bmq_offline_save (bmq_offline_t *self, const char *name, size_t name_len, const char *description,
                      const json_t *keywords, const json_t *plan, char *path_out, size_t path_len, char *err, size_t errlen)
{
    json_t *verdict = bmq_plan_validate (self->palette, plan);
    bool ok = json_is_true (json_object_get (verdict, "accepted"));
    if (!ok) {
        json_t *first = json_array_get (json_object_get (verdict, "errors"), 0);
        snprintf (err, errlen, "only a valid plan can be saved: step %lld, %s: %s",
                  (long long) json_integer_value (json_object_get (first, "step")),
                  json_string_value (json_object_get (first, "field")) ? json_string_value (json_object_get (first, "field")) : "?",
                  json_string_value (json_object_get (first, "reason")) ? json_string_value (json_object_get (first, "reason")) : "?");
    }
    json_decref (verdict);
    if (!ok) return -1;
    int rc = bmq_recipe_save (self->book, self->saved_dir, name, name_len, description, keywords, plan, path_out, path_len,
                              err, errlen);
    if (rc == 0) self->saved_mtime = s_mtime (self->saved_dir);      /* our own write: no reload needed */
    return rc;
}
