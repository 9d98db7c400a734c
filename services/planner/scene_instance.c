/* scene_instance — one copy of a recipe: root, renamed and placed steps, parenting; see scene_instance.h. */
#include "scene_instance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double s_round (double v)
{
    double r = round (v * 10000.0) / 10000.0;
    return r == 0 ? 0 : r;                  /* no "-0.0" in plans */
}

static double s_wrap (double a)
{
    a = fmod (a, 2 * M_PI);
    if (a > M_PI) a -= 2 * M_PI;
    if (a < -M_PI) a += 2 * M_PI;
    return a;
}

bool bmq_instance_name (json_t *used, const char *base, int max_len, char *out, size_t outlen)
{
    char stem[80];
    int room = max_len - 4 < (int) sizeof stem - 1 ? max_len - 4 : (int) sizeof stem - 1;
    if (room < 1 || outlen < 2) return false;
    snprintf (out, outlen, "%.*s", max_len < (int) outlen - 1 ? max_len : (int) outlen - 1, base);
    if (!json_object_get (used, out)) return json_object_set_new (used, out, json_true ()) == 0;
    snprintf (stem, sizeof stem, "%.*s", room, base);
    for (int i = 1; i < 1000; i++) {
        snprintf (out, outlen, "%s.%03d", stem, i);
        if (!json_object_get (used, out)) return json_object_set_new (used, out, json_true ()) == 0;
    }
    return false;
}

/* v (params[key], else the palette's default, else zeros) turned by theta about Z, then moved by pos (when given). */
static void s_place_vec (json_t *params, const char *key, const json_t *pdesc, double theta, const double *pos)
{
    json_t *v = json_object_get (params, key);
    if (!json_is_array (v) || json_array_size (v) != 3) v = json_object_get (json_object_get (pdesc, key), "default");
    double in[3];
    for (size_t a = 0; a < 3; a++) {
        json_t *x = json_array_get (v, a);
        in[a] = json_is_number (x) ? json_number_value (x) : 0;
    }
    double c = cos (theta), s = sin (theta);
    double out[3] = { c * in[0] - s * in[1], s * in[0] + c * in[1], in[2] };
    for (int a = 0; pos && a < 3; a++) out[a] += pos[a];
    json_object_set_new (params, key, json_pack ("[f, f, f]", s_round (out[0]), s_round (out[1]), s_round (out[2])));
}

static void s_turn_euler (json_t *params, const char *key, const json_t *pdesc, double theta)
{
    json_t *v = json_object_get (params, key);
    if (!json_is_array (v) || json_array_size (v) != 3) v = json_object_get (json_object_get (pdesc, key), "default");
    double e[3];
    for (size_t a = 0; a < 3; a++) {
        json_t *x = json_array_get (v, a);
        e[a] = json_is_number (x) ? json_number_value (x) : 0;
    }
    json_object_set_new (params, key, json_pack ("[f, f, f]", s_round (e[0]), s_round (e[1]), s_round (s_wrap (e[2] + theta))));
}

/* A step's params, made an object when missing. */
static json_t *s_params (json_t *step)
{
    json_t *params = json_object_get (step, "params");
    if (!json_is_object (params)) {
        params = json_object ();
        json_object_set_new (step, "params", params);
    }
    return params;
}

static void s_place_step (json_t *step, const json_t *entry, const double pos[3], double theta)
{
    const char *op = json_string_value (json_object_get (step, "operation"));
    json_t *pdesc = json_object_get (entry, "params");
    bool turn = fabs (theta) > 1e-9;
    if (!op) return;
    if (json_is_true (json_object_get (entry, "creates")) && !json_is_true (json_object_get (entry, "acts_on"))) {
        if (json_object_get (pdesc, "location")) s_place_vec (s_params (step), "location", pdesc, theta, pos);
        if (turn && json_object_get (pdesc, "rotation")) s_turn_euler (s_params (step), "rotation", pdesc, theta);
    }
    else if (!strcmp (op, "object.duplicate_tree")) {          /* a saved recipe's copy: its root's place, when given */
        json_t *params = json_object_get (step, "params");
        if (json_is_object (params) && json_object_get (params, "location")) s_place_vec (params, "location", NULL, theta, pos);
        if (turn && json_is_object (params) && json_object_get (params, "rotation")) s_turn_euler (params, "rotation", NULL, theta);
    }
    else if (!strcmp (op, "object.location")) s_place_vec (s_params (step), "value", NULL, theta, pos);
    else if (turn && !strcmp (op, "object.rotation")) s_turn_euler (s_params (step), "value", NULL, theta);
    else if (turn && !strcmp (op, "bpy.ops.transform.translate")) s_place_vec (s_params (step), "value", NULL, theta, NULL);
    else if (!strcmp (op, "bpy.ops.mesh.spin") || !strcmp (op, "bpy.ops.mesh.screw")) {   /* world centre and axis (issue 27) */
        s_place_vec (s_params (step), "center", pdesc, theta, pos);
        if (turn) s_place_vec (s_params (step), "axis", pdesc, theta, NULL);
    }
}

static void s_rename (json_t *step, const char *key, const json_t *renamed)
{
    const char *name = json_string_value (json_object_get (step, key));
    json_t *to = name ? json_object_get (renamed, name) : NULL;
    if (to) json_object_set (step, key, to);
}

int bmq_instance_append (json_t *plan, json_t *used, int max_len, const json_t *steps, const json_t *described,
                         const char *root, const double root_at[3], double radius, const double pos[3], double theta)
{
    json_t *ops = json_object_get (described, "operations");
    json_t *renamed = json_object (), *made = json_array ();
    size_t before = json_array_size (plan);
    int rc = renamed && made ? 0 : -1;
    radius = fmin (1000, fmax (0.001, radius));
    if (rc == 0)
        rc = json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:s, s:f, s:[f, f, f], s:[f, f, f]}}",
                                                     "operation", "bpy.ops.object.empty_add", "name", root, "params",
                                                     "type", "PLAIN_AXES", "radius", s_round (radius), "location",
                                                     s_round (root_at[0]), s_round (root_at[1]), s_round (root_at[2]),
                                                     "rotation", 0.0, 0.0, s_round (s_wrap (theta))));
    size_t i;
    json_t *src;
    json_array_foreach (steps, i, src) {
        if (rc) break;
        json_t *step = json_deep_copy (src);
        const char *op = json_string_value (json_object_get (step, "operation"));
        json_t *entry = json_object_get (ops, op ? op : "");
        if (!step) { rc = -1; break; }
        s_rename (step, "target", renamed);
        json_t *params = json_object_get (step, "params");
        if (op && !strcmp (op, "object.parent") && json_is_object (params)) s_rename (params, "parent", renamed);
        if (op && !strcmp (op, "object.modifier") && json_is_object (params)) s_rename (params, "object", renamed);
        if (json_is_true (json_object_get (entry, "creates"))) {
            const char *asked = json_string_value (json_object_get (step, "name"));
            char base[96], name[80];
            if (asked) snprintf (base, sizeof base, "%.80s", asked);
            else snprintf (base, sizeof base, "%.60s_part%zu", root, i + 1);
            if (!bmq_instance_name (used, base, max_len, name, sizeof name)) { json_decref (step); rc = -1; break; }
            if (asked) json_object_set_new (renamed, asked, json_string (name));
            json_object_set_new (step, "name", json_string (name));
            json_array_append_new (made, json_string (name));
        }
        if (json_is_true (json_object_get (entry, "deletes"))) {      /* gone: nothing to parent */
            const char *t = json_string_value (json_object_get (step, "target"));
            size_t j;
            json_t *m;
            json_array_foreach (made, j, m)
                if (t && !strcmp (json_string_value (m), t)) { json_array_remove (made, j); break; }
        }
        s_place_step (step, entry, pos, theta);
        rc = json_array_append_new (plan, step);
    }
    json_t *m;
    json_array_foreach (made, i, m) {
        if (rc) break;
        rc = json_array_append_new (plan, json_pack ("{s:s, s:O, s:{s:s}}", "operation", "object.parent", "target", m,
                                                     "params", "parent", root));
    }
    json_decref (renamed);
    json_decref (made);
    return rc ? -1 : (int) (json_array_size (plan) - before);
}

static int s_strcmp (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

int bmq_instance_copy (json_t *plan, json_t *used, int max_len, size_t from, const char *src_root, const char *root,
                       const double root_at[3], double theta)
{
    size_t n = json_array_size (plan), count = 0;
    const char **parts = n > from ? calloc (n - from, sizeof *parts) : NULL;
    if (n > from && !parts) return -1;
    for (size_t i = from; i < n; i++) {                 /* the parts: what the copy's parent steps hung under src_root */
        json_t *step = json_array_get (plan, i);
        const char *op = json_string_value (json_object_get (step, "operation"));
        const char *parent = json_string_value (json_object_get (json_object_get (step, "params"), "parent"));
        const char *target = json_string_value (json_object_get (step, "target"));
        if (!op || strcmp (op, "object.parent") || !parent || strcmp (parent, src_root) || !target) continue;
        size_t k = 0;
        while (k < count && strcmp (parts[k], target)) k++;
        if (k == count) parts[count++] = target;
    }
    if (count > 1) qsort (parts, count, sizeof *parts, s_strcmp);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < count; k++) {
        char name[80];
        if (!bmq_instance_name (used, parts[k], max_len, name, sizeof name)) rc = -1;
    }
    free (parts);
    if (rc) return -1;
    json_t *step = json_pack ("{s:s, s:s, s:s, s:{s:b, s:[f, f, f], s:[f, f, f]}}", "operation", "object.duplicate_tree",
                              "target", src_root, "name", root, "params", "linked", 1, "location", s_round (root_at[0]),
                              s_round (root_at[1]), s_round (root_at[2]), "rotation", 0.0, 0.0, s_round (s_wrap (theta)));
    return step && json_array_append_new (plan, step) == 0 ? 1 : -1;
}
