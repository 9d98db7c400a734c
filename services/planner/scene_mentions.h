/* scene_mentions — the two ends of reading a scene prompt: which recipe each
 * run of words names (before any grammar), and, once the grammar has used
 * what it could, the phrases left over ("not understood").
 *
 * An object's name is the longest run of 1 to 4 words at a place that
 * recipe_book's typo rule matches; the best score wins, then the longer
 * keyword, then the longer run ("table lamp" is a lamp, not a table and a
 * lamp). A run that holds a vocabulary word (scene_words) must match
 * exactly. A single word is also tried as written and without "-es"
 * ("flores", "árboles"). Names side by side with nothing between them, of
 * one recipe or of a recipe and a kind of it ("a flat-screen TV", "a wall
 * mounted flat screen tv"), are one object, the more particular one. The
 * head word written differently from its
 * singular marks a plural. A shape word a few look words before a name
 * ("a round oak table", "a long wooden table") picks the recipe of that
 * shape when there is one; an owner and 's before a name ("a teacher's
 * desk") belong to the name.
 *
 * Left-over phrases are the runs of unused words between used ones (and
 * breaks), without the articles and prepositions they end with; a run of
 * such small words alone is no phrase. Each is the prompt's folded text,
 * at most 120 bytes. */
#ifndef BMQ_SCENE_MENTIONS_H
#define BMQ_SCENE_MENTIONS_H

#include "recipe_book.h"
#include "scene_parse.h"
#include "scene_words.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const json_t *recipe;           /* borrowed from the book; NULL: no object named from here */
    double score;
    size_t len;                     /* tokens of its name */
    bool   plural;
} bmq_mention_t;

/* mention[i] for every token i (k->n entries). */
void bmq_scene_find_mentions (const bmq_recipe_book_t *book, const bmq_tokens_t *k, bmq_mention_t *mention);
/* Names that depend on the room and on relations, once a prompt is parsed (each only when the book has the
 * recipe): a stool at an island or counter (or in a kitchen that has one) is a bar stool; a cabinet above
 * something a wall cabinet, in a kitchen a kitchen cabinet; a bookshelf above something or on the wall a wall
 * shelf; a plain table beside or between sofas, armchairs or beds a side table (a "small" one at its own
 * size); a chair or seat "above" a thing is put in front of it ("a chair and a shelf above the desk");
 * a cabinet a TV stands on, or under a TV, a TV stand (outside kitchens). A style's look
 * ("a retro fridge") stays only on furniture and lamps (storage, seating, tables, beds, lighting, office). */
void bmq_scene_context_names (const bmq_recipe_book_t *book, bmq_scene_request_t *req);
/* Append to out (at most max strings in all) the phrases of tokens neither
 * used nor breaks; weak marks articles and prepositions. */
void bmq_scene_report (const bmq_tokens_t *k, const bool *used, const bool *weak, json_t *out, size_t max);

#endif
