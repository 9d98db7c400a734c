/* compose_check — what the composition tests share: the planner's parts as
 * one line each ("chair x2 red size=1.5 row at=3,0,0 next_to table&car"),
 * the prompt file, and composing with the built-in recipes. */
#ifndef BMQ_COMPOSE_CHECK_H
#define BMQ_COMPOSE_CHECK_H

#include "palette.h"
#include "recipe_book.h"

#include <jansson.h>
#include <stddef.h>

typedef struct {
    bmq_recipe_book_t *book;
    bmq_palette_t     *palette;
    json_t            *described;
} compose_env_t;

/* Load the built-in recipes and the palette; 0 or -1 (message on stderr). */
int compose_env_open (compose_env_t *env);
void compose_env_close (compose_env_t *env);
/* bmq_scene_compose on env; its return code. body is NULL unless 0. */
int compose_run (compose_env_t *env, const char *prompt, json_t **body, char *code, size_t codelen, char *message, size_t msglen);
/* One body part as the prompt file writes it. */
void compose_part_line (const json_t *part, char *out, size_t outlen);
/* tests/planner/compose_prompts.json. */
json_t *compose_prompts (void);

#endif
