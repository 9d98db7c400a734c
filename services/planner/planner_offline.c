/* planner_offline — the recipe book kept fresh, prompts to scene_compose (and
 * the assets a prompt asks for), save_recipe. */
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

/* ---- assets a prompt asks for (issue 16) -------------------------------------
 * Only when the prompt says so: an import is a download, and the offline demo
 * must run with no network. A recipe's variants (recipe_book.h) add steps to
 * its parts ("a wooden table": a wood texture on every copy's top); the world
 * light is the scene's, one HDRI for the whole plan. Poly Haven ids, checked
 * against the public site (see the report of issue 16). */
static const struct { const char *phrase, *id, *what; } s_world[] = {
    { "studio lighting", "studio_small_08", "studio" }, { "studio light", "studio_small_08", "studio" },
    { "in a studio", "studio_small_08", "studio" }, { "hdri", "studio_small_08", "studio" },
    { "with a sky", "kloppenheim_06_puresky", "sky" }, { "under a sky", "kloppenheim_06_puresky", "sky" },
    { "with sky", "kloppenheim_06_puresky", "sky" }, { "under the sky", "kloppenheim_06_puresky", "sky" },
    { "with the sky", "kloppenheim_06_puresky", "sky" }, { "sky lighting", "kloppenheim_06_puresky", "sky" },
};
/* The world's colour when the HDRI cannot be fetched (issue 26): a soft grey studio, a pale blue sky. */
static const double s_studio_rgb[3] = { 0.6, 0.6, 0.62 }, s_sky_rgb[3] = { 0.45, 0.62, 0.9 };

/* Is `name` the part `part` or one of its copies ("table_top", "table_top.001")? */
static bool s_copy_of (const char *name, const char *part)
{
    size_t n = strlen (part);
    if (!name || strncmp (name, part, n)) return false;
    if (!name[n]) return true;
    if (name[n] != '.' || strlen (name + n + 1) != 3) return false;
    for (const char *c = name + n + 1; *c; c++) if (*c < '0' || *c > '9') return false;
    return true;
}

/* An optional asset's fallback (issue 26): a texture keeps the built-in look
 * its target already has in the plan (the last object.material on it, which
 * carries the material word's look: "wooden" → the built-in wood look); the
 * executor applies it when the source cannot be reached, and says so. */
static void s_fallback (const json_t *plan, json_t *step, const char *target, const char *word)
{
    json_t *p = json_object_get (step, "params");
    if (!json_is_object (p) || strcmp (json_string_value (json_object_get (step, "operation")) ?: "", "asset.import")) return;
    size_t i;
    json_t *s, *look = NULL;
    json_array_foreach (plan, i, s)
        if (!strcmp (json_string_value (json_object_get (s, "operation")) ?: "", "object.material")
            && !strcmp (json_string_value (json_object_get (s, "target")) ?: "", target))
            look = json_object_get (s, "params");
    if (!json_is_array (json_object_get (look, "color"))) return;
    json_object_set (p, "fallback_color", json_object_get (look, "color"));
    json_t *r = json_object_get (look, "roughness"), *m = json_object_get (look, "metallic");
    if (json_is_number (r)) json_object_set (p, "fallback_roughness", r);
    if (json_is_number (m)) json_object_set (p, "fallback_metallic", m);
    char name[80];
    if (word) snprintf (name, sizeof name, "%s: the built-in %s look", word, !strcmp (word, "wooden") ? "wood" : word);
    else snprintf (name, sizeof name, "%.40s: its built-in look", target);
    json_object_set_new (p, "fallback_name", json_string (name));
}

/* Append `step`, once per copy of its target in plan (or once, untargeted),
 * with its fallback look (word: the part's material word, or NULL). */
static void s_add_variant_step (json_t *plan, json_t *added, const json_t *step, const char *word)
{
    const char *target = json_string_value (json_object_get (step, "target"));
    if (!target) { json_array_append_new (added, json_deep_copy (step)); return; }
    size_t i;
    json_t *s;
    json_array_foreach (plan, i, s) {
        const char *name = json_string_value (json_object_get (s, "name"));
        if (!s_copy_of (name, target)) continue;
        json_t *copy = json_deep_copy (step);
        json_object_set_new (copy, "target", json_string (name));
        s_fallback (plan, copy, name, word);
        json_array_append_new (added, copy);
    }
}

/* Drop a not-understood piece the world light used ("with a sky"). */
static void s_understood (json_t *body, const char *phrase)
{
    json_t *missed = json_object_get (body, "not_understood");
    for (size_t i = json_array_size (missed); i-- > 0;) {
        const char *text = json_string_value (json_array_get (missed, i));
        if (text && bmq_recipe_phrase_in (phrase, strlen (phrase), text)) json_array_remove (missed, i);
    }
}

static void s_say (char **note, json_t *body, const char *text)
{
    json_t *notes = json_object_get (body, "notes");
    if (!json_is_array (notes)) json_object_set_new (body, "notes", notes = json_array ());
    json_array_append_new (notes, json_string (text));
    size_t old = *note ? strlen (*note) : 0;
    char *grown = realloc (*note, old + strlen (text) + 3);
    if (!grown) return;
    snprintf (grown + old, strlen (text) + 3, "%s%s", old ? "; " : "", text);
    *note = grown;
}

/* The asset steps the prompt asks for, appended to body's plan; a plan they
 * would take past the palette stays as it was, said so. */
static void s_assets (bmq_offline_t *self, const char *prompt, json_t *body, char **note)
{
    json_t *plan = json_object_get (body, "plan"), *added = json_array ();
    char said[600] = "";
    size_t i, k;
    json_t *part, *v, *step;
    json_array_foreach (json_object_get (body, "parts"), i, part) {
        const json_t *recipe = bmq_recipe_book_get (self->book, json_string_value (json_object_get (part, "recipe")));
        json_t *variants = bmq_recipe_variants_for (recipe, prompt);
        json_array_foreach (variants, k, v) {
            size_t j;
            const char *word = json_string_value (json_object_get (part, "material"));
            json_array_foreach (json_object_get (v, "steps"), j, step) s_add_variant_step (plan, added, step, word);
            const char *what = json_string_value (json_object_get (v, "note"));
            size_t o = strlen (said);
            snprintf (said + o, sizeof said - o, "%s%s", o ? ", " : "", what ? what : "a variant");
        }
        json_decref (variants);
    }
    size_t len = strnlen (prompt, BMQ_RECIPE_MAX_PROMPT);
    for (i = 0; i < sizeof s_world / sizeof *s_world; i++)
        if (bmq_recipe_phrase_in (prompt, len, s_world[i].phrase)) {
            const double *rgb = !strcmp (s_world[i].what, "sky") ? s_sky_rgb : s_studio_rgb;
            char look[80];
            snprintf (look, sizeof look, "%s light: a plain %s-coloured world", s_world[i].what, s_world[i].what);
            json_array_append_new (added, json_pack ("{s:s, s:{s:s, s:s, s:s, s:s, s:[f,f,f], s:s}}", "operation", "asset.import",
                                                     "params", "source", "polyhaven", "id", s_world[i].id, "type", "hdri",
                                                     "resolution", "1k", "fallback_color", rgb[0], rgb[1], rgb[2],
                                                     "fallback_name", look));
            s_understood (body, s_world[i].phrase);
            size_t o = strlen (said);
            snprintf (said + o, sizeof said - o, "%s%s light from the HDRI %s", o ? ", " : "", s_world[i].what, s_world[i].id);
            break;
        }
    if (json_array_size (added) == 0) { json_decref (added); return; }
    json_t *grown = json_deep_copy (plan);
    json_array_extend (grown, added);
    json_t *verdict = bmq_plan_validate (self->palette, grown);
    char text[800];
    if (json_is_true (json_object_get (verdict, "accepted"))) {
        json_object_set_new (body, "plan", grown);
        snprintf (text, sizeof text, "with Poly Haven assets as asked: %s (%zu import%s: the executor downloads them; "
                  "if Poly Haven cannot be reached, the built-in look stays and the plan's end says so)",
                  said, json_array_size (added), json_array_size (added) == 1 ? "" : "s");
    }
    else {
        json_decref (grown);
        snprintf (text, sizeof text, "without the assets asked for (%s): the plan would not pass the palette with them", said);
    }
    bmq_utf8_fix (text);
    s_say (note, body, text);
    json_decref (verdict);
    json_decref (added);
}

int bmq_offline_plan (bmq_offline_t *self, const char *prompt, json_t **body, char **note,
                      char *code, size_t codelen, char *message, size_t msglen)
{
    return bmq_offline_plan_in (self, prompt, NULL, body, note, code, codelen, message, msglen);
}

int bmq_offline_plan_in (bmq_offline_t *self, const char *prompt, const json_t *scene_boxes, json_t **body, char **note,
                         char *code, size_t codelen, char *message, size_t msglen)
{
    int rc = bmq_scene_compose_in (self->book, self->palette, self->described, prompt, scene_boxes, body, note, code, codelen,
                                   message, msglen);
    if (rc == 0) s_assets (self, prompt, *body, note);
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
