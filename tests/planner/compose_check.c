/* compose_check — shared by the composition tests; see compose_check.h. */
#include "compose_check.h"
#include "scene_compose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int compose_env_open (compose_env_t *env)
{
    char err[512];
    memset (env, 0, sizeof *env);
    env->book = bmq_recipe_book_load (BMQ_SOURCE_DIR "/services/planner/recipes", err, sizeof err);
    if (env->book) env->palette = bmq_palette_load (BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);
    if (env->palette) env->described = bmq_palette_describe (env->palette);
    if (!env->described) { fprintf (stderr, "compose: %s\n", err); compose_env_close (env); return -1; }
    return 0;
}

void compose_env_close (compose_env_t *env)
{
    json_decref (env->described);
    bmq_palette_destroy (&env->palette);
    bmq_recipe_book_destroy (&env->book);
    memset (env, 0, sizeof *env);
}

int compose_run (compose_env_t *env, const char *prompt, json_t **body, char *code, size_t codelen, char *message, size_t msglen)
{
    char *note = NULL;
    *code = *message = 0;
    int rc = bmq_scene_compose (env->book, env->palette, env->described, prompt, body, &note, code, codelen, message, msglen);
    free (note);
    return rc;
}

void compose_part_line (const json_t *p, char *out, size_t outlen)
{
    size_t o = 0;
    o += (size_t) snprintf (out + o, outlen - o, "%s x%lld", json_string_value (json_object_get (p, "recipe")),
                            (long long) json_integer_value (json_object_get (p, "count")));
    const char *colour = json_string_value (json_object_get (p, "colour"));
    if (colour && o < outlen) o += (size_t) snprintf (out + o, outlen - o, " %s", colour);
    json_t *size = json_object_get (p, "size");
    if (size && o < outlen) o += (size_t) snprintf (out + o, outlen - o, " size=%g", json_number_value (size));
    const char *arr = json_string_value (json_object_get (p, "arrangement"));
    if (arr && o < outlen) o += (size_t) snprintf (out + o, outlen - o, " %s", arr);
    json_t *pos = json_object_get (p, "position");
    if (pos && o < outlen)
        o += (size_t) snprintf (out + o, outlen - o, " at=%g,%g,%g", json_number_value (json_array_get (pos, 0)),
                                json_number_value (json_array_get (pos, 1)), json_number_value (json_array_get (pos, 2)));
    json_t *rel = json_object_get (p, "relation");
    if (rel && o < outlen) {
        const char *and = json_string_value (json_object_get (rel, "and"));
        snprintf (out + o, outlen - o, " %s %s%s%s", json_string_value (json_object_get (rel, "type")),
                  json_string_value (json_object_get (rel, "to")), and ? "&" : "", and ? and : "");
    }
}

json_t *compose_prompts (void)
{
    json_error_t jerr;
    json_t *all = json_load_file (BMQ_SOURCE_DIR "/tests/planner/compose_prompts.json", 0, &jerr);
    if (!all) fprintf (stderr, "compose_prompts.json:%d: %s\n", jerr.line, jerr.text);
    return all;
}
