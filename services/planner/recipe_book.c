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
#include "yaml_json.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define S_MAX_TOKENS   64
#define S_TOKEN_LEN    64
#define S_PHRASE_LEN   128
#define S_RUN_WORDS    4
#define S_MAX_STEPS    1000

typedef struct {
    json_t *doc;                        /* {name, description, keywords, steps, color_parts?} */
    char (*phrases)[S_PHRASE_LEN];      /* keywords normalised, spaces removed */
    size_t phrase_count;
    bool saved;                         /* from the saved-recipes folder */
    char *origin;                       /* its file name, for messages */
} s_recipe_t;

struct bmq_recipe_book_t {
    s_recipe_t *recipes;
    size_t count, cap;
};

typedef struct {
    char tok[S_MAX_TOKENS][S_TOKEN_LEN];
    size_t count;
} s_words_t;

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

/* ---- normalising ---------------------------------------------------------- */

/* U+00C0..U+00FF (UTF-8 C3 80..C3 BF) folded to ASCII; "" splits words. */
static const char *s_latin1[64] = {
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
    "d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "ss",
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
    "d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "y",
};

static bool s_ends (const char *s, size_t len, const char *tail)
{
    size_t n = strlen (tail);
    return len >= n && !memcmp (s + len - n, tail, n);
}

static void s_singular (char *w)
{
    size_t n = strlen (w);
    if (n > 4 && s_ends (w, n, "ies")) strcpy (w + n - 3, "y");
    else if (n > 4 && s_ends (w, n, "men")) w[n - 2] = 'a';
    else if (n > 4 && (s_ends (w, n, "ches") || s_ends (w, n, "shes") || s_ends (w, n, "xes"))) w[n - 2] = 0;
    else if (n >= 4 && w[n - 1] == 's' && !s_ends (w, n, "ss") && !s_ends (w, n, "us") && !s_ends (w, n, "is"))
        w[n - 1] = 0;
}

static void s_append (s_words_t *words, size_t *len, const char *text)
{
    for (; *text && words->count < S_MAX_TOKENS; text++)
        if (*len < S_TOKEN_LEN - 1) words->tok[words->count][(*len)++] = *text;
}

static void s_end_word (s_words_t *words, size_t *len)
{
    if (*len == 0 || words->count >= S_MAX_TOKENS) return;
    words->tok[words->count][*len] = 0;
    s_singular (words->tok[words->count]);
    words->count++;
    *len = 0;
}

static void s_words (const char *text, size_t textlen, s_words_t *words)
{
    words->count = 0;
    size_t len = 0;
    const unsigned char *s = (const unsigned char *) text;
    for (size_t i = 0; i < textlen && s[i]; i++) {
        unsigned char c = s[i];
        char one[2] = { 0, 0 };
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) { one[0] = (char) c; s_append (words, &len, one); }
        else if (c >= 'A' && c <= 'Z') { one[0] = (char) (c - 'A' + 'a'); s_append (words, &len, one); }
        else if (c == 0xC3 && i + 1 < textlen && s[i + 1] >= 0x80 && s[i + 1] <= 0xBF) {
            const char *folded = s_latin1[s[++i] - 0x80];
            if (*folded) s_append (words, &len, folded);
            else s_end_word (words, &len);
        }
        else if (c == 0xC5 && i + 1 < textlen && (s[i + 1] == 0x92 || s[i + 1] == 0x93)) { i++; s_append (words, &len, "oe"); }
        else if (c == 0xC2 && i + 1 < textlen) { i++; s_end_word (words, &len); }   /* « » ¿ ¡ nbsp … */
        else if (c >= 0x80) { one[0] = (char) c; s_append (words, &len, one); }       /* other scripts stay as letters */
        else s_end_word (words, &len);
    }
    s_end_word (words, &len);
}

void bmq_recipe_fold (const char *text, char *out, size_t outlen)
{
    size_t o = 0;
    const unsigned char *s = (const unsigned char *) (text ? text : "");
    size_t n = strnlen ((const char *) s, BMQ_RECIPE_MAX_PROMPT);
    for (size_t i = 0; i < n && o + 3 < outlen; i++) {
        unsigned char c = s[i];
        const char *add = NULL;
        char one[2] = { (char) c, 0 };
        if (c >= 'A' && c <= 'Z') one[0] = (char) (c - 'A' + 'a');
        else if (c == 0xC3 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0xBF) {
            add = s_latin1[s[++i] - 0x80];
            if (!*add) add = " ";
        }
        else if (c == 0xC5 && i + 1 < n && (s[i + 1] == 0x92 || s[i + 1] == 0x93)) { i++; add = "oe"; }
        else if (c == 0xC2 && i + 1 < n) { i++; add = " "; }
        else if (c < 0x20 || c == 0x7f) one[0] = ' ';
        for (const char *a = add ? add : one; *a && o + 1 < outlen; a++) out[o++] = *a;
    }
    out[o] = 0;
}

/* ---- distances ------------------------------------------------------------ */

/* Optimal-string-alignment distance (Levenshtein plus adjacent swaps), with
 * three rolling rows so it stays small on a worker thread's stack. */
static size_t s_distance (const char *a, size_t la, const char *b, size_t lb)
{
    size_t rows[3][S_PHRASE_LEN + 1];
    if (la > S_PHRASE_LEN) la = S_PHRASE_LEN;
    if (lb > S_PHRASE_LEN) lb = S_PHRASE_LEN;
    size_t *two = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++) prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < best) best = prev[j] + 1;
            if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && two[j - 2] + 1 < best)
                best = two[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = two; two = prev; prev = cur; cur = t;
    }
    return prev[lb];
}

/* Two equal-length words that differ by one swap of neighbours ("chiar"). */
static bool s_swapped (const char *a, const char *b, size_t len)
{
    size_t i = 0;
    while (i < len && a[i] == b[i]) i++;
    return i + 1 < len && a[i] == b[i + 1] && a[i + 1] == b[i] && !memcmp (a + i + 2, b + i + 2, len - i - 2);
}

/* Rule 3: the score of one run against one keyword (0 when not forgiven). */
static double s_strict (const char *kw, size_t lk, const char *run, size_t lr, size_t d)
{
    if (d == 0) return 1.0;
    bool ok = (d == 1 && (lk >= 6 || (lk >= 4 && lk == lr && s_swapped (kw, run, lk)))) || (d == 2 && lk >= 9);
    return ok ? 1.0 - (double) d / (double) lk : 0;
}

/* ---- scoring a recipe ----------------------------------------------------- */

static void s_score (const s_recipe_t *r, const s_words_t *w, s_score_t *out)
{
    memset (out, 0, sizeof *out);
    char run[S_PHRASE_LEN];
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
                size_t d = s_distance (kw, lk, run, lr);
                double soft = 1.0 - (double) d / (double) longer;
                if (soft > out->soft) out->soft = soft;
                double strict = s_strict (kw, lk, run, lr, d);
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
    s_words_t *w = malloc (sizeof *w);
    if (!w) return NULL;
    s_words (prompt, strnlen (prompt, BMQ_RECIPE_MAX_PROMPT), w);
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

json_t *bmq_recipe_book_suggest (const bmq_recipe_book_t *self, const char *prompt, size_t n)
{
    json_t *names = json_array ();
    if (!self || !names || self->count == 0) return names;
    s_words_t *w = malloc (sizeof *w);
    double *soft = calloc (self->count, sizeof *soft);
    bool *taken = calloc (self->count, sizeof *taken);
    if (w && soft && taken) {
        s_words (prompt ? prompt : "", prompt ? strnlen (prompt, BMQ_RECIPE_MAX_PROMPT) : 0, w);
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
    s_words_t *w = malloc (sizeof *w);
    if (!w) return -1;
    s_words (text, strlen (text), w);
    char *out = r->phrases[r->phrase_count];
    size_t len = 0;
    for (size_t k = 0; k < w->count; k++) {
        size_t lt = strlen (w->tok[k]);
        if (len + lt >= S_PHRASE_LEN) break;
        memcpy (out + len, w->tok[k], lt);
        len += lt;
    }
    out[len] = 0;
    free (w);
    if (len) r->phrase_count++;
    return 0;
}

static int s_recipe_fill (s_recipe_t *r, const char *file, char *err, size_t errlen)
{
    const json_t *doc = r->doc;
    if (!json_is_object (doc)) return s_fail (err, errlen, "%s: a recipe must be a mapping", file);
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) doc, key, v)
        if (strcmp (key, "name") && strcmp (key, "description") && strcmp (key, "keywords") && strcmp (key, "steps")
            && strcmp (key, "color_parts"))
            return s_fail (err, errlen, "%s: unknown key '%.32s' (known: name, description, keywords, steps, color_parts)",
                           file, key);
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
    r->phrases = calloc (json_array_size (kws) + 1, sizeof *r->phrases);
    if (!r->phrases) return s_fail (err, errlen, "out of memory");
    char spaced[80];            /* the name is a keyword too: "coffee_mug" → "coffee mug" */
    snprintf (spaced, sizeof spaced, "%s", name);
    for (char *c = spaced; *c; c++) if (*c == '_') *c = ' ';
    if (s_add_phrase (r, spaced)) return s_fail (err, errlen, "out of memory");
    json_array_foreach (kws, i, v) {
        if (!json_is_string (v) || json_string_length (v) == 0 || json_string_length (v) > S_PHRASE_LEN)
            return s_fail (err, errlen, "%s: keyword %zu must be a string of 1 to %d bytes", file, i, S_PHRASE_LEN);
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
