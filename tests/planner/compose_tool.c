/* compose_tool PROMPT... — print the offline planner's reply body for each
 * prompt as JSON (one line each), or its error; for people trying prompts
 * and for the Blender composition test. BLENDMQ_COMPOSE_PRETTY=1 indents. */
#include "palette.h"
#include "recipe_book.h"
#include "scene_compose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main (int argc, char **argv)
{
    char err[512];
    bmq_recipe_book_t *book = bmq_recipe_book_load (BMQ_SOURCE_DIR "/services/planner/recipes", err, sizeof err);
    bmq_palette_t *palette = bmq_palette_load (BMQ_SOURCE_DIR "/proto/palette.yaml", err, sizeof err);
    if (!book || !palette) { fprintf (stderr, "compose_tool: %s\n", err); return 2; }
    json_t *described = bmq_palette_describe (palette);
    const char *pretty = getenv ("BLENDMQ_COMPOSE_PRETTY");
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        json_t *body = NULL;
        char *note = NULL, code[64], message[1024];
        int rc = bmq_scene_compose (book, palette, described, argv[i], &body, &note, code, sizeof code, message, sizeof message);
        json_t *line = rc == 0 ? json_pack ("{s:s, s:o, s:s?}", "prompt", argv[i], "body", body, "note", note)
                     : rc == 1 ? json_pack ("{s:s, s:s}", "prompt", argv[i], "code", "no_match")
                     : json_pack ("{s:s, s:s, s:s}", "prompt", argv[i], "code", code, "message", message);
        char *text = json_dumps (line, pretty && *pretty == '1' ? JSON_INDENT (1) : JSON_COMPACT);
        printf ("%s\n", text);
        free (text);
        free (note);
        json_decref (line);
        failed += rc != 0;
    }
    json_decref (described);
    bmq_palette_destroy (&palette);
    bmq_recipe_book_destroy (&book);
    return failed ? 1 : 0;
}
