/* recipe_book — the offline planner's knowledge base: ready-made action plans
 * ("recipes") for common objects, picked by matching a free-text prompt.
 *
 * A recipe is one YAML file in services/planner/recipes/:
 *   name: snowman                      (letters, digits, '_'; unique)
 *   description: A classic three-ball snowman ...
 *   keywords: [snowman, snow man, bonhomme de neige, ...]
 *   steps: [ {operation, params, name, target}, ... ]   (an action plan)
 *   color_parts: [snowman_base, ...]   (optional: the named parts that take
 *                                      a colour asked for, "a red snowman")
 *   front: -y                          (optional: where the recipe's front
 *                                      looks, -y (the default), +y, -x, +x,
 *                                      or none for round things; a scene
 *                                      turns it to face what it stands in
 *                                      front of, behind or around)
 *   place: wall                        (optional: floor (default), wall, surface;
 *                                      see bmq_recipe_place)
 *   kind: seating                      (optional: a word for the vocabulary report)
 *   holds: true                        (optional: things can go inside it: a shelf, a cabinet)
 *   seat: true                         (optional: beside something too it
 *                                      turns to face it: a chair at a table)
 *   variants:                          (optional: steps added only when the
 *     - when: [wooden table, ...]       prompt holds one of the phrases as
 *       note: a wood texture ...        words; they target the recipe's parts
 *       steps: [ {operation, target,    and name nothing new. Used for assets
 *                 params}, ... ]        (asset.import), never by default: an
 *                                      offline demo must not need the net)
 * The book checks the shape of each file; whether the steps pass the
 * capability palette is the validator's job (tests check every recipe). */
#ifndef BMQ_RECIPE_BOOK_H
#define BMQ_RECIPE_BOOK_H

#include "recipe_words.h"         /* bmq_recipe_fold, the words and the typo rule */

#include <jansson.h>
#include <stddef.h>

typedef struct bmq_recipe_book_t bmq_recipe_book_t;

#define BMQ_RECIPE_MAX_FILES     1024
#define BMQ_RECIPE_MAX_KEYWORDS  64
#define BMQ_RECIPE_MAX_PROMPT    2048    /* bytes of a prompt looked at */
#define BMQ_RECIPE_MAX_VARIANTS  8
#define BMQ_RECIPE_MAX_VARIANT_STEPS 16

/* Load every *.yaml in dir, sorted by file name. NULL on error, with a
 * message in err naming the file at fault. */
bmq_recipe_book_t *bmq_recipe_book_load (const char *dir, char *err, size_t errlen);
/* The same, then the recipes saved with save_recipe in saved_dir (NULL or a
 * missing folder: none). Names are unique across both. */
bmq_recipe_book_t *bmq_recipe_book_load_dirs (const char *dir, const char *saved_dir, char *err, size_t errlen);
/* Add one recipe document (stolen), checked like a file; origin names it in
 * messages. Matching sees it at once. 0 / -1 with err. */
int bmq_recipe_book_add (bmq_recipe_book_t *self, json_t *doc, const char *origin, char *err, size_t errlen);
/* The angle (radians about Z, from +X) a recipe's front looks along, or NAN
 * for "none". 0, or -1 when its front key is not one of the five. */
int bmq_recipe_front (const json_t *recipe, double *angle);
/* Where a recipe usually goes (its optional `place` key): on the floor (the
 * default), hung on a wall (a painting, a mirror: its back against the
 * wall, its bottom at the height its steps give), or on a surface (a lamp,
 * a mug: on a table when the prompt names one). -1 for another word. */
enum { BMQ_PLACE_FLOOR, BMQ_PLACE_WALL, BMQ_PLACE_SURFACE };
int bmq_recipe_place (const json_t *recipe);
/* The variants of a recipe whose `when` phrases the prompt holds (each
 * variant once, in the recipe's order). New array of borrowed-and-increfed
 * variants; empty when none. */
json_t *bmq_recipe_variants_for (const json_t *recipe, const char *prompt);
/* The recipe called exactly `name`, or NULL (borrowed). */
const json_t *bmq_recipe_book_get (const bmq_recipe_book_t *self, const char *name);
/* Destroy; safe to call twice, nulls the caller's pointer. */
void bmq_recipe_book_destroy (bmq_recipe_book_t **self_p);
size_t bmq_recipe_book_count (const bmq_recipe_book_t *self);
/* Every recipe, in book order: [{name, description, steps (count), saved}]. New array. */
json_t *bmq_recipe_book_list (const bmq_recipe_book_t *self);

/* The best recipe for a free-text prompt, or NULL when nothing matches well
 * enough. Tolerant of case, punctuation, accents (é→e), plurals ("snowmen"),
 * split words ("snow man") and small typos ("chiar"), with any words around
 * ("please build me a snowman!"). Returns a borrowed recipe
 * {name, description, keywords, steps}; score_out (if not NULL) gets the
 * score in [0, 1] (0 when NULL is returned). */
const json_t *bmq_recipe_book_match (const bmq_recipe_book_t *self, const char *prompt, double *score_out);

/* Up to n recipe names closest to the prompt, best first (for "no match"
 * answers); always n names when the book has them. New array. */
json_t *bmq_recipe_book_suggest (const bmq_recipe_book_t *self, const char *prompt, size_t n);

/* The recipe one run of words names, for a parser that finds every object
 * of a prompt: run is folded singular words joined without spaces
 * ("diningchair", see recipe_words.h); the typo rule decides. NULL when no
 * keyword forgives it; else score_out and keyword_len_out (each may be
 * NULL) get the best score and that keyword's length (ties go to the longer
 * keyword, then to the first recipe). Borrowed. */
const json_t *bmq_recipe_book_match_run (const bmq_recipe_book_t *self, const char *run, double *score_out,
                                        size_t *keyword_len_out);

#endif
