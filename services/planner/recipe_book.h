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
 * The book checks the shape of each file; whether the steps pass the
 * capability palette is the validator's job (tests check every recipe). */
#ifndef BMQ_RECIPE_BOOK_H
#define BMQ_RECIPE_BOOK_H

#include <jansson.h>
#include <stddef.h>

typedef struct bmq_recipe_book_t bmq_recipe_book_t;

#define BMQ_RECIPE_MAX_FILES     1024
#define BMQ_RECIPE_MAX_KEYWORDS  64
#define BMQ_RECIPE_MAX_PROMPT    2048    /* bytes of a prompt looked at */

/* Load every *.yaml in dir, sorted by file name. NULL on error, with a
 * message in err naming the file at fault. */
bmq_recipe_book_t *bmq_recipe_book_load (const char *dir, char *err, size_t errlen);
/* The same, then the recipes saved with save_recipe in saved_dir (NULL or a
 * missing folder: none). Names are unique across both. */
bmq_recipe_book_t *bmq_recipe_book_load_dirs (const char *dir, const char *saved_dir, char *err, size_t errlen);
/* Add one recipe document (stolen), checked like a file; origin names it in
 * messages. Matching sees it at once. 0 / -1 with err. */
int bmq_recipe_book_add (bmq_recipe_book_t *self, json_t *doc, const char *origin, char *err, size_t errlen);
/* The recipe called exactly `name`, or NULL (borrowed). */
const json_t *bmq_recipe_book_get (const bmq_recipe_book_t *self, const char *name);
/* Text as matching sees it: lower case, Latin accents folded (é→e, ß→ss),
 * control characters as spaces, everything else kept. */
void bmq_recipe_fold (const char *text, char *out, size_t outlen);
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

#endif
