/* cli_look — `blendmq scene look [FILE.png] [--out FILE.png] [--angles N] [--json]`
 * (issue 16, "a second pair of eyes").
 *
 * Asks the executor (through the gateway, scene.request) for the add-on's
 * `look`: Workbench views of the whole scene from several sides composed into
 * one contact-sheet PNG, plus each object's topology. Writes the sheet to the
 * path given (--out or the positional argument, like `scene render FILE.png`;
 * default look.png in the current directory), then prints a table of the
 * objects (name, type, vertices, faces, non-manifold edges, loose parts) and
 * the totals; with --json the add-on's reply as one JSON line instead. The
 * reply comes from Blender: every field is type-checked before it is printed,
 * and names are printed with control characters blanked.
 * Exit codes: 0 written, 1 refused or failed, 2 usage or no answer. */
#include "bus.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOK_ANGLES_MAX 8
#define NAME_SHOWN      32      /* columns of an object's name in the table */

static int s_write_file (const char *path, const unsigned char *data, size_t len)
{
    char tmp[1200];
    if (snprintf (tmp, sizeof tmp, "%s.tmp", path) >= (int) sizeof tmp) return -1;
    FILE *f = fopen (tmp, "wb");
    if (!f) return -1;
    size_t w = fwrite (data, 1, len, f);
    if (fclose (f) != 0 || w != len) { remove (tmp); return -1; }
    return rename (tmp, path);
}

/* A name from Blender, cut to fit a column, control characters blanked. */
static void s_clean (const char *in, char *out, size_t len)
{
    size_t i = 0;
    for (; in && in[i] && i + 1 < len; i++)
        out[i] = (unsigned char) in[i] < 0x20 || in[i] == 0x7f ? '?' : in[i];
    out[i] = 0;
}

/* An integer field printed in a column, "-" when null or not an integer. */
static void s_count (const json_t *o, const char *key, char *out, size_t len)
{
    json_t *v = json_object_get (o, key);
    if (json_is_integer (v)) snprintf (out, len, "%lld", (long long) json_integer_value (v));
    else snprintf (out, len, "-");
}

static long long s_int (const json_t *o, const char *key)
{
    json_t *v = json_object_get (o, key);
    return json_is_integer (v) ? (long long) json_integer_value (v) : 0;
}

static void s_print_table (const json_t *result, const char *path, size_t png_bytes)
{
    json_t *angles = json_object_get (result, "angles"), *sheet = json_object_get (result, "sheet");
    char views[256] = "";
    size_t used = 0, i;
    json_t *a;
    json_array_foreach (angles, i, a) {
        if (!json_is_string (a) || i >= LOOK_ANGLES_MAX) continue;
        char name[32];
        s_clean (json_string_value (a), name, sizeof name);
        int n = snprintf (views + used, sizeof views - used, "%s%s", used ? ", " : "", name);
        if (n < 0 || (size_t) n >= sizeof views - used) break;
        used += (size_t) n;
    }
    long long view_w = s_int (result, "width"), cols = view_w > 0 ? s_int (sheet, "width") / view_w : 0;
    printf ("%s: %lldx%lld contact sheet, %zu bytes (%s; %lldx%lld each, %lld column%s, row by row)\n", path,
            s_int (sheet, "width"), s_int (sheet, "height"), png_bytes, views, view_w, s_int (result, "height"), cols,
            cols == 1 ? "" : "s");
    json_t *objects = json_object_get (result, "objects");
    printf ("%-*s %-8s %9s %9s %12s %6s\n", NAME_SHOWN, "NAME", "TYPE", "VERTS", "FACES", "NON-MANIFOLD", "LOOSE");
    json_t *o;
    json_array_foreach (objects, i, o) {
        char name[NAME_SHOWN + 1], type[16], verts[24], faces[24], nm[24], loose[24];
        s_clean (json_string_value (json_object_get (o, "name")), name, sizeof name);
        s_clean (json_string_value (json_object_get (o, "type")), type, sizeof type);
        s_count (o, "vertices", verts, sizeof verts);
        s_count (o, "faces", faces, sizeof faces);
        s_count (o, "non_manifold_edges", nm, sizeof nm);
        s_count (o, "loose_parts", loose, sizeof loose);
        printf ("%-*s %-8s %9s %9s %12s %6s\n", NAME_SHOWN, name, type, verts, faces, nm, loose);
    }
    long long count = s_int (result, "count");
    if (count > (long long) json_array_size (objects))
        printf ("(%zu of %lld objects listed)\n", json_array_size (objects), count);
    json_t *t = json_object_get (result, "totals");
    printf ("total: %lld objects (%lld with geometry), %lld vertices, %lld faces, %lld non-manifold edges, %lld loose parts\n",
            s_int (t, "objects"), s_int (t, "with_geometry"), s_int (t, "vertices"), s_int (t, "faces"),
            s_int (t, "non_manifold_edges"), s_int (t, "loose_parts"));
}

int bmq_cli_scene_look (const bmq_cli_opts_t *opts, const char *path)
{
    if (opts->out_dir && path) { fprintf (stderr, "blendmq: scene look: give the file once (--out or FILE.png)\n"); return 2; }
    if (!path) path = opts->out_dir ? opts->out_dir : "look.png";
    if (!*path) { fprintf (stderr, "blendmq: scene look: the file name is empty\n"); return 2; }
    long angles = 0;
    if (opts->angles) {
        char *end = NULL;
        angles = strtol (opts->angles, &end, 10);
        if (end == opts->angles || *end || angles < 1 || angles > LOOK_ANGLES_MAX) {
            fprintf (stderr, "blendmq: --angles must be 1..%d\n", LOOK_ANGLES_MAX);
            return 2;
        }
    }
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    json_t *args = json_object ();
    if (angles) json_object_set_new (args, "angles", json_integer (angles));
    json_t *body = json_pack ("{s:s, s:o, s:s?}", "command", "look", "args", args, "target", opts->target);
    bmq_envelope_t *answer = bmq_cli_ask (cfg, bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL, body), BMQ_MSG_SCENE_REPLY);
    bmq_config_destroy (&cfg);
    if (!answer) return 2;
    int code = 0;
    json_t *result = json_object_get (answer->body, "result");
    if (answer->type == BMQ_MSG_ERROR) {
        bmq_cli_say_error (answer, "");
        code = 1;
    }
    else if (!json_is_object (result) || answer->blob_len < 8 || memcmp (answer->blob, "\x89PNG\r\n\x1a\n", 8)) {
        fprintf (stderr, "blendmq: scene look: the answer holds no picture (%zu bytes)\n", answer->blob_len);
        code = 1;
    }
    else if (s_write_file (path, answer->blob, answer->blob_len)) {
        fprintf (stderr, "blendmq: cannot write %s (%zu bytes received)\n", path, answer->blob_len);
        code = 1;
    }
    else if (opts->json) {
        char *text = json_dumps (result, JSON_COMPACT | JSON_REAL_PRECISION (10));
        printf ("%s\n", text ? text : "{}");
        free (text);
    }
    else s_print_table (result, path, answer->blob_len);
    bmq_envelope_destroy (&answer);
    return code;
}
