/* recipe_params — the words of a prompt that change a recipe: its size, its
 * colour and its position ("a big red chair at 3 0 0").
 *
 *   size      big/large ×1.5, huge ×2, giant/enormous ×2.5, small/little ×0.6,
 *             tiny/mini ×0.35 (and fr/es/de/it equivalents), spacious/roomy
 *             ×1.5, compact/low/short ×0.75, cramped ×0.7; or a number:
 *             "scale 2", "2x", "x2", "3 times", "twice", "double", "half"
 *   colour    a colour word (English, French, Spanish, German, Italian): the
 *             recipe's color_parts get it
 *   position  "at 3 0 0", "at (3, 0, -2)", "at x=3 y=2", "at 3 2" (z 0)
 *
 * Everything scales about the origin (sizes, radii, depths, locations and
 * translations), then moves by the position; rotations, scale factors and
 * segment counts stay. Factors are kept within [0.05, 20]. */
#ifndef BMQ_RECIPE_PARAMS_H
#define BMQ_RECIPE_PARAMS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    double scale;               /* 1 when the prompt does not ask */
    char   scale_word[24];      /* what asked for it ("big", "2x") */
    bool   has_color;
    double color[3];
    char   color_word[24];
    bool   has_offset;
    double offset[3];
} bmq_recipe_mods_t;

/* Read the modifiers in a prompt. */
void bmq_recipe_mods_parse (const char *prompt, bmq_recipe_mods_t *mods);
/* True when the prompt asked for anything. */
bool bmq_recipe_mods_any (const bmq_recipe_mods_t *mods);
/* The steps with the modifiers applied (a new array). `described` is
 * bmq_palette_describe's output, for the defaults of parameters a step leaves
 * out; color_parts may be NULL (then no part takes a colour). */
json_t *bmq_recipe_mods_apply (const json_t *steps, const json_t *color_parts, const json_t *described,
                               const bmq_recipe_mods_t *mods);
/* "red, 1.5× (big), at (3, 0, 0)"; "" when nothing was asked. */
void bmq_recipe_mods_describe (const bmq_recipe_mods_t *mods, char *out, size_t outlen);
/* The colour a folded word names, in any language of the table, plural
 * forms too ("rouges", "azules"): true with rgb (linear) and *canonical
 * (the table's word; canonical may be NULL). */
bool bmq_recipe_color_word (const char *word, double rgb[3], const char **canonical);
/* The size factor a folded word names ("big" 1.5, "petites" 0.6). */
bool bmq_recipe_size_word (const char *word, double *factor);
/* {scale, color, position} for a plan.reply. New reference. */
json_t *bmq_recipe_mods_json (const bmq_recipe_mods_t *mods);

#endif
