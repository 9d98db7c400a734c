/* recipe_words — folding, singular words and the typo rule; see recipe_words.h. */
#include "recipe_words.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_PROMPT 2048       /* bytes of a text folded (BMQ_RECIPE_MAX_PROMPT) */

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

void bmq_recipe_singular (char *w)
{
    size_t n = strlen (w);
    if (!strcmp (w, "canvases")) { strcpy (w, "canva"); return; }           /* as "canvas" reads (its s dropped) */
    if (n > 5 && s_ends (w, n, "sses")) w[n - 2] = 0;                       /* glasses, dresses, mattresses */
    else if (n > 5 && s_ends (w, n, "lves")) strcpy (w + n - 3, "f");       /* shelves, halves */
    else if (n > 4 && s_ends (w, n, "ies")) strcpy (w + n - 3, "y");
    else if (n > 4 && s_ends (w, n, "men")) w[n - 2] = 'a';
    else if (n > 4 && (s_ends (w, n, "ches") || s_ends (w, n, "shes") || s_ends (w, n, "xes"))) w[n - 2] = 0;
    else if (n >= 4 && w[n - 1] == 's' && !s_ends (w, n, "ss") && !s_ends (w, n, "us") && !s_ends (w, n, "is"))
        w[n - 1] = 0;
}

static void s_append (bmq_words_t *words, size_t *len, const char *text)
{
    for (; *text && words->count < BMQ_WORDS_MAX; text++)
        if (*len < BMQ_WORD_LEN - 1) words->tok[words->count][(*len)++] = *text;
}

static void s_end_word (bmq_words_t *words, size_t *len)
{
    if (*len == 0 || words->count >= BMQ_WORDS_MAX) return;
    words->tok[words->count][*len] = 0;
    bmq_recipe_singular (words->tok[words->count]);
    words->count++;
    *len = 0;
}

void bmq_recipe_words (const char *text, size_t textlen, bmq_words_t *words)
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
    size_t n = strnlen ((const char *) s, S_MAX_PROMPT);
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
size_t bmq_recipe_distance (const char *a, size_t la, const char *b, size_t lb)
{
    size_t rows[3][BMQ_PHRASE_LEN + 1];
    if (la > BMQ_PHRASE_LEN) la = BMQ_PHRASE_LEN;
    if (lb > BMQ_PHRASE_LEN) lb = BMQ_PHRASE_LEN;
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
double bmq_recipe_strict (const char *kw, size_t lk, const char *run, size_t lr, size_t d)
{
    if (d == 0) return 1.0;
    bool ok = (d == 1 && (lk >= 6 || (lk >= 4 && lk == lr && s_swapped (kw, run, lk)))) || (d == 2 && lk >= 9);
    return ok ? 1.0 - (double) d / (double) lk : 0;
}

bool bmq_recipe_phrase_in (const char *text, size_t textlen, const char *phrase)
{
    bmq_words_t *t = malloc (sizeof *t), *p = malloc (sizeof *p);
    bool found = false;
    if (t && p && text && phrase) {
        bmq_recipe_words (text, textlen, t);
        bmq_recipe_words (phrase, strlen (phrase), p);
        for (size_t i = 0; p->count && i + p->count <= t->count && !found; i++) {
            size_t k = 0;
            while (k < p->count && !strcmp (t->tok[i + k], p->tok[k])) k++;
            found = k == p->count;
        }
    }
    free (t);
    free (p);
    return found;
}
