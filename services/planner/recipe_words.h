/* recipe_words — how the offline planner reads text, shared by the recipe
 * book (one recipe for a whole prompt) and the scene parser (every object a
 * prompt names):
 *  - folding: lower case, Latin accents folded (é→e, ñ→n, ß→ss, œ→oe);
 *  - words: anything not a letter or digit splits them, and each word is
 *    made singular (chairs→chair, snowmen→snowman, puppies→puppy, boxes→box,
 *    glasses→glass, shelves→shelf);
 *  - the typo rule: a keyword and a run of words (both without spaces) meet
 *    when equal, or when the Damerau distance is 1 and the keyword has 6
 *    letters or more, or the edit is a swap in a 4–5 letter keyword
 *    ("chiar"), or the distance is 2 from 9 letters up. Short words are
 *    strict so that "horse" stays away from "house", "three" from "tree". */
#ifndef BMQ_RECIPE_WORDS_H
#define BMQ_RECIPE_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#define BMQ_WORDS_MAX     64        /* words of a text looked at */
#define BMQ_WORD_LEN      64        /* bytes of one word kept (with its NUL) */
#define BMQ_PHRASE_LEN    128       /* bytes of a keyword or a run compared */

typedef struct {
    char tok[BMQ_WORDS_MAX][BMQ_WORD_LEN];
    size_t count;
} bmq_words_t;

/* Text as matching sees it: lower case, Latin accents folded (é→e, ß→ss),
 * control characters as spaces, everything else kept. */
void bmq_recipe_fold (const char *text, char *out, size_t outlen);
/* The first textlen bytes of text as folded, singular words. */
void bmq_recipe_words (const char *text, size_t textlen, bmq_words_t *words);
/* A folded word made singular, in place ("chaises" → "chaise"). */
void bmq_recipe_singular (char *word);
/* The optimal-string-alignment distance (Levenshtein plus swaps of
 * neighbours) of the first BMQ_PHRASE_LEN bytes of a and b. */
size_t bmq_recipe_distance (const char *a, size_t la, const char *b, size_t lb);
/* The typo rule: the score in [0.75, 1] of a run against a keyword at
 * distance d, or 0 when the difference is not forgiven. */
double bmq_recipe_strict (const char *kw, size_t lk, const char *run, size_t lr, size_t d);

/* Does text hold phrase as consecutive words, both read as above ("a
 * wooden tables" holds "wooden table")? Exact words: no typo rule. */
bool bmq_recipe_phrase_in (const char *text, size_t textlen, const char *phrase);

#endif
