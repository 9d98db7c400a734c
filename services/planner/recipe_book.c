/* recipe_book — load recipes and match prompts to them.
 *
 * Matching, kept simple enough to explain in a sentence per rule:
 *  1. Normalise prompt and keywords the same way: lower case, Latin accents
 *     folded (é→e, ñ→n, ß→ss, œ→oe), anything not a letter or digit splits
 *     words, and each word is made singular (chairs→chair, snowmen→snowman,
 *     puppies→puppy, boxes→box).
 *  2. A keyword phrase is compared without its spaces ("snow man" → "snowman")
 *     against every run of 1 to 4 consecutive prompt words, also joined
 *     without spaces. So "snow man", "snowman" and "snow-man" all meet.
 *  3. Score of a run: 1.0 when equal. Otherwise a typo is forgiven when the
 *     Damerau distance (one swap of neighbours = one edit) is 1 and the
 *     keyword has 6 letters or more, or the edit is a swap in a 4–5 letter
 *     keyword ("chiar"), or the distance is 2 from 9 letters up; the score is
 *     then 1 - distance / keyword length. Short words are strict so that
 *     "horse" stays away from "house", "three" from "tree", "cart" from "car".
 *  4. A recipe's score is its best run. The winner has the highest score,
 *     then the longest keyword (the most specific), then the earliest
 *     position in the prompt ("a table with chairs" is a table), then the
 *     first file name. Anything forgiven by rule 3 matches (score ≥ 0.75).
 *  5. Suggestions rank every recipe by a softer likeness, 1 - distance /
 *     longer length, over the same runs, with no typo rule. */
#include "recipe_book.h"
#include "recipe_words.h"
#include "yaml_json.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define S_RUN_WORDS    4
#define S_MAX_STEPS    1000

typedef struct {
    json_t *doc;                        /* {name, description, keywords, steps, color_parts?} */
    char (*phrases)[BMQ_PHRASE_LEN];    /* keywords normalised, spaces removed */
    size_t phrase_count;
    bool saved;                         /* from the saved-recipes folder */
    char *origin;                       /* its file name, for messages */
} s_recipe_t;

struct bmq_recipe_book_t {
    s_recipe_t *recipes;
    size_t count, cap;
};

typedef struct {
    double strict;          /* rules 3–4; 0 when nothing is forgiven */
    size_t keyword_len;
    size_t position;
    double soft;            /* rule 5 */
} s_score_t;

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

/* ---- scoring a recipe ----------------------------------------------------- */

static void s_score (const s_recipe_t *r, const bmq_words_t *w, s_score_t *out)
{
    memset (out, 0, sizeof *out);
    char run[BMQ_PHRASE_LEN];
    for (size_t start = 0; start < w->count; start++) {
        size_t lr = 0;
        for (size_t k = 0; k < S_RUN_WORDS && start + k < w->count; k++) {
            size_t lt = strlen (w->tok[start + k]);
            if (lr + lt >= sizeof run) break;
            memcpy (run + lr, w->tok[start + k], lt);
            lr += lt;
            for (size_t p = 0; p < r->phrase_count; p++) {
                const char *kw = r->phrases[p];
                size_t lk = strlen (kw), longer = lk > lr ? lk : lr;
                if ((lk > lr ? lk - lr : lr - lk) > 3) continue;    /* too far apart to matter */
                size_t d = bmq_recipe_distance (kw, lk, run, lr);
                double soft = 1.0 - (double) d / (double) longer;
                if (soft > out->soft) out->soft = soft;
                double strict = bmq_recipe_strict (kw, lk, run, lr, d);
                if (strict > out->strict || (strict > 0 && strict == out->strict && lk > out->keyword_len)) {
                    out->strict = strict;
                    out->keyword_len = lk;
                    out->position = start;
                }
            }
        }
    }
}

static bool s_better (const s_score_t *a, const s_score_t *b)
{
    if (a->strict != b->strict) return a->strict > b->strict;
    if (a->keyword_len != b->keyword_len) return a->keyword_len > b->keyword_len;
    return a->position < b->position;
}

const json_t *bmq_recipe_book_match (const bmq_recipe_book_t *self, const char *prompt, double *score_out)
{
    if (score_out) *score_out = 0;
    if (!self || !prompt) return NULL;
    bmq_words_t *w = malloc (sizeof *w);
    if (!w) return NULL;
    bmq_recipe_words (prompt, strnlen (prompt, BMQ_RECIPE_MAX_PROMPT), w);
    const s_recipe_t *best = NULL;
    s_score_t best_score = { 0 }, sc;
    for (size_t i = 0; i < self->count; i++) {
        s_score (&self->recipes[i], w, &sc);
        if (sc.strict > 0 && (!best || s_better (&sc, &best_score))) {
            best = &self->recipes[i];
            best_score = sc;
        }
    }
    free (w);
    if (best && score_out) *score_out = best_score.strict;
    return best ? best->doc : NULL;
}

const json_t *bmq_recipe_book_match_run (const bmq_recipe_book_t *self, const char *run, double *score_out,
                                        size_t *keyword_len_out)
{
    const json_t *best = NULL;
    double best_score = 0;
    size_t best_len = 0, lr = run ? strnlen (run, BMQ_PHRASE_LEN) : 0;
    for (size_t i = 0; self && lr && i < self->count; i++) {
        const s_recipe_t *r = &self->recipes[i];
        for (size_t p = 0; p < r->phrase_count; p++) {
            const char *kw = r->phrases[p];
            size_t lk = strlen (kw);
            if ((lk > lr ? lk - lr : lr - lk) > 2) continue;           /* rule 3 forgives 2 edits at most */
            double s = bmq_recipe_strict (kw, lk, run, lr, bmq_recipe_distance (kw, lk, run, lr));
            if (s > best_score || (s > 0 && s == best_score && lk > best_len)) {
                best = r->doc;
                best_score = s;
                best_len = lk;
            }
        }
    }
    if (score_out) *score_out = best_score;
    if (keyword_len_out) *keyword_len_out = best_len;
    return best;
}

json_t *bmq_recipe_book_suggest (const bmq_recipe_book_t *self, const char *prompt, size_t n)
{
    json_t *names = json_array ();
    if (!self || !names || self->count == 0) return names;
    bmq_words_t *w = malloc (sizeof *w);
    double *soft = calloc (self->count, sizeof *soft);
    bool *taken = calloc (self->count, sizeof *taken);
    if (w && soft && taken) {
        bmq_recipe_words (prompt ? prompt : "", prompt ? strnlen (prompt, BMQ_RECIPE_MAX_PROMPT) : 0, w);
        for (size_t i = 0; i < self->count; i++) {
            s_score_t sc;
            s_score (&self->recipes[i], w, &sc);
            soft[i] = sc.strict > sc.soft ? sc.strict : sc.soft;
        }
        /* selection of the n best; the book is small and n smaller */
        for (size_t k = 0; k < n && k < self->count; k++) {
            size_t pick = self->count;
            for (size_t i = 0; i < self->count; i++)
                if (!taken[i] && (pick == self->count || soft[i] > soft[pick])) pick = i;
            taken[pick] = true;
            json_array_append (names, json_object_get (self->recipes[pick].doc, "name"));
        }
    }
    free (w);
    free (soft);
    free (taken);
    return names;
}

/* ---- loading --------------------------------------------------------------- */

static bool s_name_ok (const char *s)
{
    size_t n = strlen (s);
    if (n == 0 || n > 64) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
    return true;
}

static int s_add_phrase (s_recipe_t *r, const char *text)
{
    bmq_words_t *w = malloc (sizeof *w);
    if (!w) return -1;
    bmq_recipe_words (text, strlen (text), w);
    char *out = r->phrases[r->phrase_count];
    size_t len = 0;
    for (size_t k = 0; k < w->count; k++) {
        size_t lt = strlen (w->tok[k]);
        if (len + lt >= BMQ_PHRASE_LEN) break;
        memcpy (out + len, w->tok[k], lt);
        len += lt;
    }
    out[len] = 0;
    free (w);
    if (len) r->phrase_count++;
    return 0;
}

/* Does a step named `name` exist in steps? */
static bool s_names_step (const json_t *steps, const char *name)
{
    size_t j;
    json_t *step;
    json_array_foreach (steps, j, step)
        if (name && json_is_string (json_object_get (step, "name"))
            && !strcmp (name, json_string_value (json_object_get (step, "name")))) return true;
    return false;
}

/* variants: [{when: [phrases], note?, steps: [...]}]: the shape only (the
 * palette's checks are the validator's; tests check every variant). A
 * variant's step may act on a part the recipe names (target), never make an
 * object of its own (name): its copies in a scene could not be told apart. */
static int s_variants_check (const json_t *doc, const char *file, char *err, size_t errlen)
{
    json_t *variants = json_object_get (doc, "variants"), *steps = json_object_get (doc, "steps");
    if (!variants) return 0;
    if (!json_is_array (variants) || json_array_size (variants) == 0 || json_array_size (variants) > BMQ_RECIPE_MAX_VARIANTS)
        return s_fail (err, errlen, "%s: variants must be a list of 1 to %d variants", file, BMQ_RECIPE_MAX_VARIANTS);
    size_t i;
    json_t *v;
    json_array_foreach (variants, i, v) {
        const char *key;
        json_t *x;
        if (!json_is_object (v)) return s_fail (err, errlen, "%s: variants[%zu] must be a mapping", file, i);
        json_object_foreach (v, key, x)
            if (strcmp (key, "when") && strcmp (key, "note") && strcmp (key, "steps"))
                return s_fail (err, errlen, "%s: variants[%zu]: unknown key '%.32s' (known: when, note, steps)", file, i, key);
        json_t *when = json_object_get (v, "when"), *vsteps = json_object_get (v, "steps"), *note = json_object_get (v, "note");
        if (!json_is_array (when) || json_array_size (when) == 0 || json_array_size (when) > BMQ_RECIPE_MAX_KEYWORDS)
            return s_fail (err, errlen, "%s: variants[%zu].when must be a list of 1 to %d phrases", file, i, BMQ_RECIPE_MAX_KEYWORDS);
        size_t k;
        json_t *w;
        json_array_foreach (when, k, w)
            if (!json_is_string (w) || json_string_length (w) == 0 || json_string_length (w) > BMQ_PHRASE_LEN)
                return s_fail (err, errlen, "%s: variants[%zu].when[%zu] must be a string of 1 to %d bytes", file, i, k,
                               BMQ_PHRASE_LEN);
        if (note && (!json_is_string (note) || json_string_length (note) > 200))
            return s_fail (err, errlen, "%s: variants[%zu].note must be a string of at most 200 bytes", file, i);
        if (!json_is_array (vsteps) || json_array_size (vsteps) == 0 || json_array_size (vsteps) > BMQ_RECIPE_MAX_VARIANT_STEPS)
            return s_fail (err, errlen, "%s: variants[%zu].steps must be a list of 1 to %d steps", file, i,
                           BMQ_RECIPE_MAX_VARIANT_STEPS);
        json_array_foreach (vsteps, k, w) {
            json_t *target = json_object_get (w, "target");
            if (!json_is_object (w) || !json_is_string (json_object_get (w, "operation")))
                return s_fail (err, errlen, "%s: variants[%zu].steps[%zu] must be a step with an operation", file, i, k);
            if (json_object_get (w, "name"))
                return s_fail (err, errlen, "%s: variants[%zu].steps[%zu] may not name a new object (only target a part)",
                               file, i, k);
            if (target && !s_names_step (steps, json_string_value (target)))
                return s_fail (err, errlen, "%s: variants[%zu].steps[%zu]: target names no step of the recipe", file, i, k);
        }
    }
    return 0;
}

json_t *bmq_recipe_variants_for (const json_t *recipe, const char *prompt)
{
    json_t *out = json_array ();
    size_t i, k;
    json_t *v, *w;
    size_t len = prompt ? strnlen (prompt, BMQ_RECIPE_MAX_PROMPT) : 0;
    json_array_foreach (json_object_get (recipe, "variants"), i, v)
        json_array_foreach (json_object_get (v, "when"), k, w)
            if (bmq_recipe_phrase_in (prompt, len, json_string_value (w))) {
                json_array_append (out, v);
                break;
            }
    return out;
}

static int s_recipe_fill (s_recipe_t *r, const char *file, char *err, size_t errlen)
{
    const json_t *doc = r->doc;
    if (!json_is_object (doc)) return s_fail (err, errlen, "%s: a recipe must be a mapping", file);
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) doc, key, v)
        if (strcmp (key, "name") && strcmp (key, "description") && strcmp (key, "keywords") && strcmp (key, "steps")
            && strcmp (key, "color_parts") && strcmp (key, "front") && strcmp (key, "seat") && strcmp (key, "variants")
            && strcmp (key, "place") && strcmp (key, "kind") && strcmp (key, "holds"))
            return s_fail (err, errlen, "%s: unknown key '%.32s' (known: name, description, keywords, steps, color_parts, "
                           "front, seat, variants, place, kind, holds)", file, key);
    if (json_object_get (doc, "seat") && !json_is_boolean (json_object_get (doc, "seat")))
        return s_fail (err, errlen, "%s: seat must be true or false", file);
    if (json_object_get (doc, "holds") && !json_is_boolean (json_object_get (doc, "holds")))
        return s_fail (err, errlen, "%s: holds must be true or false", file);
    json_t *place = json_object_get (doc, "place");
    if (place && (!json_is_string (place) || bmq_recipe_place (doc) < 0))
        return s_fail (err, errlen, "%s: place must be one of floor, wall, surface", file);
    json_t *kind = json_object_get (doc, "kind");
    if (kind && (!json_is_string (kind) || json_string_length (kind) == 0 || json_string_length (kind) > 32))
        return s_fail (err, errlen, "%s: kind must be a word of 1 to 32 bytes", file);
    json_t *front = json_object_get (doc, "front");
    if (front && (!json_is_string (front) || bmq_recipe_front (doc, NULL)))
        return s_fail (err, errlen, "%s: front must be one of -y, +y, -x, +x, none", file);
    const char *name = json_string_value (json_object_get (doc, "name"));
    if (!name || !s_name_ok (name))
        return s_fail (err, errlen, "%s: name must be 1 to 64 of a-z, 0-9, '_'", file);
    if (!json_is_string (json_object_get (doc, "description")))
        return s_fail (err, errlen, "%s: description must be a string", file);
    json_t *kws = json_object_get (doc, "keywords");
    if (!json_is_array (kws) || json_array_size (kws) == 0 || json_array_size (kws) > BMQ_RECIPE_MAX_KEYWORDS)
        return s_fail (err, errlen, "%s: keywords must be a list of 1 to %d phrases", file, BMQ_RECIPE_MAX_KEYWORDS);
    json_t *steps = json_object_get (doc, "steps");
    if (!json_is_array (steps) || json_array_size (steps) == 0 || json_array_size (steps) > S_MAX_STEPS)
        return s_fail (err, errlen, "%s: steps must be a list of 1 to %d steps", file, S_MAX_STEPS);
    json_t *parts = json_object_get (doc, "color_parts");
    size_t i;
    if (parts) {
        json_t *part;
        if (!json_is_array (parts)) return s_fail (err, errlen, "%s: color_parts must be a list of step names", file);
        json_array_foreach (parts, i, part) {
            bool found = false;
            size_t j;
            json_t *step;
            json_array_foreach (steps, j, step)
                found = found || (json_is_string (part) && json_equal (part, json_object_get (step, "name")));
            if (!found) return s_fail (err, errlen, "%s: color_parts[%zu] names no step", file, i);
        }
    }
    if (s_variants_check (doc, file, err, errlen)) return -1;
    r->phrases = calloc (json_array_size (kws) + 1, sizeof *r->phrases);
    if (!r->phrases) return s_fail (err, errlen, "out of memory");
    char spaced[80];            /* the name is a keyword too: "coffee_mug" → "coffee mug" */
    snprintf (spaced, sizeof spaced, "%s", name);
    for (char *c = spaced; *c; c++) if (*c == '_') *c = ' ';
    if (s_add_phrase (r, spaced)) return s_fail (err, errlen, "out of memory");
    json_array_foreach (kws, i, v) {
        if (!json_is_string (v) || json_string_length (v) == 0 || json_string_length (v) > BMQ_PHRASE_LEN)
            return s_fail (err, errlen, "%s: keyword %zu must be a string of 1 to %d bytes", file, i, BMQ_PHRASE_LEN);
        if (s_add_phrase (r, json_string_value (v))) return s_fail (err, errlen, "out of memory");
    }
    return 0;
}

static int s_cmp_names (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The *.yaml names in dir, sorted; NULL on error. */
static char **s_list (const char *dir, size_t *count, char *err, size_t errlen)
{
    DIR *d = opendir (dir);
    if (!d) {
        s_fail (err, errlen, "cannot open recipe folder %s: %s", dir, strerror (errno));
        return NULL;
    }
    char **names = calloc (BMQ_RECIPE_MAX_FILES, sizeof *names);
    int rc = names ? 0 : s_fail (err, errlen, "out of memory");
    struct dirent *e;
    *count = 0;
    while (rc == 0 && (e = readdir (d))) {
        size_t n = strlen (e->d_name);
        if (e->d_name[0] == '.' || n < 6 || strcmp (e->d_name + n - 5, ".yaml")) continue;
        if (*count == BMQ_RECIPE_MAX_FILES)
            rc = s_fail (err, errlen, "%s holds more than %d recipes", dir, BMQ_RECIPE_MAX_FILES);
        else if (!(names[*count] = strdup (e->d_name)))
            rc = s_fail (err, errlen, "out of memory");
        else
            (*count)++;
    }
    closedir (d);
    if (rc) {
        for (size_t i = 0; i < *count; i++) free (names[i]);
        free (names);
        return NULL;
    }
    qsort (names, *count, sizeof *names, s_cmp_names);
    return names;
}

/* Make room for one more recipe; NULL when out of memory (or full). */
static s_recipe_t *s_slot (bmq_recipe_book_t *self)
{
    if (self->count == self->cap) {
        if (self->cap >= 2 * BMQ_RECIPE_MAX_FILES) return NULL;
        size_t cap = self->cap ? self->cap * 2 : 32;
        s_recipe_t *grown = realloc (self->recipes, cap * sizeof *grown);
        if (!grown) return NULL;
        self->recipes = grown;
        self->cap = cap;
    }
    s_recipe_t *r = &self->recipes[self->count];
    memset (r, 0, sizeof *r);
    return r;
}

static void s_recipe_free (s_recipe_t *r)
{
    json_decref (r->doc);
    free (r->phrases);
    free (r->origin);
    memset (r, 0, sizeof *r);
}

/* Check doc (stolen) and add it as the book's last recipe; origin names it in messages. */
static int s_add (bmq_recipe_book_t *self, json_t *doc, const char *origin, bool saved, char *err, size_t errlen)
{
    s_recipe_t *r = s_slot (self);
    if (!r) { json_decref (doc); return s_fail (err, errlen, "out of memory or too many recipes"); }
    r->doc = doc;
    r->saved = saved;
    r->origin = strdup (origin);
    if (!r->origin || s_recipe_fill (r, origin, err, errlen)) {
        if (!r->origin) s_fail (err, errlen, "out of memory");
        s_recipe_free (r);
        return -1;
    }
    const char *name = json_string_value (json_object_get (doc, "name"));
    for (size_t j = 0; j < self->count; j++)
        if (!strcmp (name, json_string_value (json_object_get (self->recipes[j].doc, "name")))) {
            s_fail (err, errlen, "%s: recipe name '%s' is also used by %s", origin, name, self->recipes[j].origin);
            s_recipe_free (r);
            return -1;
        }
    self->count++;
    return 0;
}

static int s_add_dir (bmq_recipe_book_t *self, const char *dir, bool saved, char *err, size_t errlen)
{
    size_t count = 0;
    char **files = s_list (dir, &count, err, errlen);
    if (!files) return -1;
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        char path[4096], inner[512];
        snprintf (path, sizeof path, "%s/%s", dir, files[i]);
        json_t *doc = bmq_yaml_load_file (path, inner, sizeof inner);
        rc = doc ? s_add (self, doc, files[i], saved, err, errlen) : s_fail (err, errlen, "%s", inner);
    }
    for (size_t i = 0; i < count; i++) free (files[i]);
    free (files);
    return rc;
}

bmq_recipe_book_t *bmq_recipe_book_load_dirs (const char *dir, const char *saved_dir, char *err, size_t errlen)
{
    if (err && errlen) *err = 0;
    if (!dir) { s_fail (err, errlen, "no recipe folder given"); return NULL; }
    bmq_recipe_book_t *self = calloc (1, sizeof *self);
    if (!self) { s_fail (err, errlen, "out of memory"); return NULL; }
    struct stat st;
    if (s_add_dir (self, dir, false, err, errlen)
        || (saved_dir && *saved_dir && stat (saved_dir, &st) == 0 && s_add_dir (self, saved_dir, true, err, errlen)))
        bmq_recipe_book_destroy (&self);
    return self;
}

bmq_recipe_book_t *bmq_recipe_book_load (const char *dir, char *err, size_t errlen)
{
    return bmq_recipe_book_load_dirs (dir, NULL, err, errlen);
}

int bmq_recipe_book_add (bmq_recipe_book_t *self, json_t *doc, const char *origin, char *err, size_t errlen)
{
    if (!self || !doc) { json_decref (doc); return s_fail (err, errlen, "no book or no recipe"); }
    return s_add (self, doc, origin ? origin : "(added)", true, err, errlen);
}

const json_t *bmq_recipe_book_get (const bmq_recipe_book_t *self, const char *name)
{
    for (size_t i = 0; self && name && i < self->count; i++)
        if (!strcmp (name, json_string_value (json_object_get (self->recipes[i].doc, "name")))) return self->recipes[i].doc;
    return NULL;
}

int bmq_recipe_front (const json_t *recipe, double *angle)
{
    static const struct { const char *word; double angle; } fronts[] = {
        { "-y", -M_PI / 2 }, { "+y", M_PI / 2 }, { "-x", M_PI }, { "+x", 0 }, { "none", NAN } };
    const char *word = json_string_value (json_object_get (recipe, "front"));
    for (size_t i = 0; i < sizeof fronts / sizeof *fronts; i++)
        if (!strcmp (word ? word : "-y", fronts[i].word)) {
            if (angle) *angle = fronts[i].angle;
            return 0;
        }
    return -1;
}

void bmq_recipe_book_destroy (bmq_recipe_book_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_recipe_book_t *self = *self_p;
    for (size_t i = 0; i < self->count; i++) s_recipe_free (&self->recipes[i]);
    free (self->recipes);
    free (self);
    *self_p = NULL;
}

size_t bmq_recipe_book_count (const bmq_recipe_book_t *self)
{
    return self ? self->count : 0;
}

json_t *bmq_recipe_book_list (const bmq_recipe_book_t *self)
{
    json_t *out = json_array ();
    for (size_t i = 0; i < self->count; i++) {
        const json_t *doc = self->recipes[i].doc;
        json_array_append_new (out, json_pack ("{s:O, s:O, s:I, s:b}", "name", json_object_get (doc, "name"),
                                               "description", json_object_get (doc, "description"),
                                               "steps", (json_int_t) json_array_size (json_object_get (doc, "steps")),
                                               "saved", self->recipes[i].saved));
    }
    return out;
}

int bmq_recipe_place (const json_t *recipe)
{
    const char *word = json_string_value (json_object_get (recipe, "place"));
    if (!word || !strcmp (word, "floor")) return BMQ_PLACE_FLOOR;
    if (!strcmp (word, "wall")) return BMQ_PLACE_WALL;
    if (!strcmp (word, "surface")) return BMQ_PLACE_SURFACE;
    return -1;
}
