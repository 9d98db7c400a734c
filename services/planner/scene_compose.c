/* scene_compose — a whole prompt to one plan; see scene_compose.h. */
#include "scene_compose.h"
#include "plan_assets.h"
#include "plan_validator.h"
#include "recipe_bounds.h"
#include "recipe_params.h"
#include "scene_instance.h"
#include "scene_layout.h"
#include "scene_parse.h"
#include "scene_room.h"
#include "scene_words.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Blender's default camera: 50 mm on a 36 mm sensor, 1920 × 1080, seen from where its default camera stands. */
#define S_TAN_HALF_X 0.36
#define S_TAN_HALF_Y (0.36 * 1080.0 / 1920.0)

typedef struct {
    bmq_scene_request_t req;
    json_t        *steps[BMQ_SCENE_MAX_PARTS];      /* each part's steps, sized and coloured */
    bmq_bounds_t  *bounds[BMQ_SCENE_MAX_PARTS];
    bmq_placement_t *place[BMQ_SCENE_MAX_PARTS];
    double         per_copy[BMQ_SCENE_MAX_PARTS];   /* steps one copy takes: its own, a root, a parent per object */
    bool           tree[BMQ_SCENE_MAX_PARTS];       /* copies 2..n: one object.duplicate_tree step of copy 1 each */
    json_t        *notes;
    bool           in_room;                         /* a room around it all (a room named, a spot, a hung thing) */
    bool           door, window;                    /* the room's usual door and window */
    bmq_layout_room_t room;
    const json_t  *scene_boxes;                     /* what the scene holds (NULL: nothing known) */
    double         shift;                           /* how far along +X the work moved to clear it */
} s_compose_t;

static void s_free (s_compose_t *c)
{
    for (size_t p = 0; p < BMQ_SCENE_MAX_PARTS; p++) {
        json_decref (c->steps[p]);
        bmq_bounds_destroy (&c->bounds[p]);
        free (c->place[p]);
    }
    json_decref (c->notes);
    bmq_scene_request_clear (&c->req);
}

/* ---- words for people ------------------------------------------------------------------ */

static void s_mods_of (const bmq_scene_part_t *part, bmq_recipe_mods_t *m)
{
    memset (m, 0, sizeof *m);
    m->scale = part->scale;
    snprintf (m->scale_word, sizeof m->scale_word, "%s", part->scale_word);
    m->has_color = part->has_color;
    memcpy (m->color, part->color, sizeof m->color);
    snprintf (m->color_word, sizeof m->color_word, "%s", part->color_word);
    m->has_offset = part->has_position;
    memcpy (m->offset, part->position, sizeof m->offset);
}

static json_t *s_part_json (const bmq_scene_request_t *req, size_t p)
{
    const bmq_scene_part_t *part = &req->part[p];
    json_t *j = json_pack ("{s:s, s:f}", "recipe", part->name, "count", part->count);
    if (part->has_color) json_object_set_new (j, "colour", json_string (part->color_word));
    if (part->scale != 1.0) {
        json_object_set_new (j, "size", json_real (part->scale));
        json_object_set_new (j, "size_word", json_string (part->scale_word));
    }
    if (part->count == floor (part->count)) json_object_set_new (j, "count", json_integer ((json_int_t) part->count));
    if (part->arrange != BMQ_ARRANGE_NONE)
        json_object_set_new (j, "arrangement", json_string (part->arrange == BMQ_ARRANGE_ROW ? "row" : "circle"));
    if (part->has_position)
        json_object_set_new (j, "position", json_pack ("[f, f, f]", part->position[0], part->position[1], part->position[2]));
    static const char *spot[] = { "none", "wall", "corner", "on_wall", "center" };
    if (part->spot != BMQ_SPOT_NONE && (size_t) part->spot < sizeof spot / sizeof *spot)
        json_object_set_new (j, "spot", json_string (spot[part->spot]));
    if (part->material >= 0 && bmq_material ((size_t) part->material))
        json_object_set_new (j, "material", json_string (bmq_material ((size_t) part->material)->word));
    if (part->relation != BMQ_REL_NONE) {
        json_t *rel = json_pack ("{s:s, s:s, s:i}", "type", bmq_scene_rel_name (part->relation), "to",
                                 req->part[part->ref[0]].name, "to_part", part->ref[0]);
        if (part->ref[1] >= 0) {
            json_object_set_new (rel, "and", json_string (req->part[part->ref[1]].name));
            json_object_set_new (rel, "and_part", json_integer (part->ref[1]));
        }
        json_object_set_new (j, "relation", rel);
    }
    return j;
}

void bmq_scene_parts_text (const json_t *parts, char *out, size_t outlen)
{
    size_t o = 0, i;
    json_t *p;
    out[0] = 0;
    json_array_foreach (parts, i, p) {
        json_t *rel = json_object_get (p, "relation");
        const char *colour = json_string_value (json_object_get (p, "colour"));
        const char *size = json_string_value (json_object_get (p, "size_word"));
        const char *arr = json_string_value (json_object_get (p, "arrangement"));
        const char *type = json_string_value (json_object_get (rel, "type"));
        char reltext[160] = "";
        if (type) {
            const char *and = json_string_value (json_object_get (rel, "and"));
            snprintf (reltext, sizeof reltext, " %s %s%s%s", !strcmp (type, "next_to") ? "next to" : !strcmp (type, "in_front_of")
                      ? "in front of" : !strcmp (type, "left_of") ? "left of" : !strcmp (type, "right_of") ? "right of" : type,
                      json_string_value (json_object_get (rel, "to")), and ? " and " : "", and ? and : "");
        }
        int n = snprintf (out + o, outlen - o, "%s%s%s%s%s%s ×%.0f%s%s%s", i ? ", " : "", size ? size : "", size ? " " : "",
                          colour ? colour : "", colour ? " " : "", json_string_value (json_object_get (p, "recipe")),
                          json_number_value (json_object_get (p, "count")), arr ? " in a " : "", arr ? arr : "", reltext);
        if (n < 0 || (size_t) n >= outlen - o) break;
        o += (size_t) n;
    }
}

/* ---- camera and light -------------------------------------------------------------- */

/* A camera looking from Blender's default camera direction, far enough that all 8 corners of the box are in frame. */
static void s_camera (json_t *plan, json_t *used, int max_len, const bmq_box_t *b, bool room)
{
    double c[3], d[3] = { 7.36, -6.93, 4.96 };
    if (room) { d[0] = 4.5; d[1] = -8.0; d[2] = 8.0; }  /* a room: steeper, over its low front and right walls */
    double len = sqrt (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (int a = 0; a < 3; a++) { c[a] = (b->min[a] + b->max[a]) / 2; d[a] /= len; }
    double f[3] = { -d[0], -d[1], -d[2] };
    double h = hypot (f[0], f[1]);
    double r[3] = { f[1] / h, -f[0] / h, 0 };                      /* f × up, normalised */
    double u[3] = { r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0] };
    double dist = 0.5;
    for (int k = 0; k < 8; k++) {
        double p[3];
        for (int a = 0; a < 3; a++) p[a] = ((k >> a) & 1 ? b->max[a] : b->min[a]) - c[a];
        double pf = p[0] * f[0] + p[1] * f[1] + p[2] * f[2];
        double pr = fabs (p[0] * r[0] + p[1] * r[1] + p[2] * r[2]), pu = fabs (p[0] * u[0] + p[1] * u[1] + p[2] * u[2]);
        dist = fmax (dist, fmax (pr / S_TAN_HALF_X, pu / S_TAN_HALF_Y) - pf);
    }
    dist *= 1.1;
    char name[80];
    bmq_instance_name (used, "camera", max_len, name, sizeof name);
    json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:[f, f, f], s:[f, f, f]}}", "operation", "bpy.ops.object.camera_add",
                                            "name", name, "params", "location", round ((c[0] + d[0] * dist) * 1e4) / 1e4,
                                            round ((c[1] + d[1] * dist) * 1e4) / 1e4, round ((c[2] + d[2] * dist) * 1e4) / 1e4,
                                            "rotation", round (atan2 (h, -f[2]) * 1e4) / 1e4, 0.0,
                                            round (atan2 (-f[0], f[1]) * 1e4) / 1e4));
    bmq_instance_name (used, "sun", max_len, name, sizeof name);
    json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:s, s:f, s:[f, f, f], s:[f, f, f]}}", "operation",
                                            "bpy.ops.object.light_add", "name", name, "params", "type", "SUN", "radius", 0.5,
                                            "location", round (c[0] * 1e4) / 1e4, round (c[1] * 1e4) / 1e4,
                                            round ((b->max[2] + 3) * 1e4) / 1e4, "rotation", 0.6, 0.15, 0.8));
}

/* ---- the parts --------------------------------------------------------------------- */

static bool s_kind_is (const json_t *recipe, const char *kind)
{
    const char *k = json_string_value (json_object_get (recipe, "kind"));
    return k && !strcmp (k, kind);
}

/* In a room, "an easel by the window", "a water cooler by the door", "a desk facing the window": the room's own
 * window (left wall) and door (back wall), not a second one standing in the room: what relates to it goes
 * against that wall ("facing the window" with its back to the other wall, but a desk
 * or table right at the window). The window or door part goes when nothing else needs it (curtains hung on
 * it, a row of things by it). */
static void s_use_openings (bmq_scene_request_t *req)
{
    for (size_t o = 0; o < req->count; o++) {
        bmq_scene_part_t *op = &req->part[o];
        bool window = !strcmp (op->name, "window"), door = !strcmp (op->name, "door");
        if ((!window && !door) || op->count != 1 || op->has_color || op->relation != BMQ_REL_NONE || op->spot != BMQ_SPOT_NONE
            || op->has_position || op->material >= 0 || op->scale != 1.0)
            continue;
        bool used = false, other = false;
        for (size_t p = 0; p < req->count; p++) {
            const bmq_scene_part_t *part = &req->part[p];
            if (part->ref[1] == (int) o) other = true;
            if (part->ref[0] != (int) o || part->relation == BMQ_REL_NONE) continue;
            used = true;
            if (part->spot != BMQ_SPOT_NONE || part->has_position || part->relation == BMQ_REL_BETWEEN || part->count > 1
                || part->relation == BMQ_REL_UNDER || part->relation == BMQ_REL_ON || part->relation == BMQ_REL_ABOVE
                || bmq_recipe_place (part->recipe) == BMQ_PLACE_WALL)
                other = true;       /* curtains on it, a desk under it, a row of plants by it: the opening stays a thing */
        }
        if (!used || other) continue;
        for (size_t p = 0; p < req->count; p++) {
            bmq_scene_part_t *part = &req->part[p];
            if (part->ref[0] != (int) o || part->relation == BMQ_REL_NONE) continue;
            const char *kind = json_string_value (json_object_get (part->recipe, "kind"));
            bool at_it = part->relation != BMQ_REL_FACING || (kind && !strcmp (kind, "table"));
            part->spot = BMQ_SPOT_WALL;
            part->wall = window ? (at_it ? 2 : 3) : (at_it ? 1 : 4);
            part->relation = BMQ_REL_NONE;
            part->ref[0] = part->ref[1] = -1;
        }
        for (size_t p = 0; p < req->count; p++)         /* the opening's part goes: later indices move down one */
            for (int r = 0; r < 2; r++)
                if (req->part[p].ref[r] > (int) o) req->part[p].ref[r]--;
        memmove (&req->part[o], &req->part[o + 1], (req->count - o - 1) * sizeof *req->part);
        req->count--;
        o--;
    }
}

/* "a bed against the wall on a grey rug": the rug goes under the bed (the bed keeps its spot, and what was
 * said to stand by the rug stands by the bed) instead of the bed riding on a rug that is placed by itself. */
static void s_on_rug (s_compose_t *c, const json_t *described)
{
    for (size_t p = 0; p < c->req.count; p++) {
        bmq_scene_part_t *part = &c->req.part[p];
        int a = part->ref[0];
        if (part->relation != BMQ_REL_ON || a < 0 || a >= (int) c->req.count || a == (int) p || part->count != 1) continue;
        bmq_scene_part_t *rug = &c->req.part[a];
        if (rug->relation != BMQ_REL_NONE || rug->spot != BMQ_SPOT_NONE || rug->has_position || rug->count != 1) continue;
        bmq_bounds_t *pb = bmq_bounds_new (json_object_get (part->recipe, "steps"), described);
        bmq_bounds_t *ab = bmq_bounds_new (json_object_get (rug->recipe, "steps"), described);
        bmq_box_t pbox, abox;
        bool flip = pb && ab && bmq_bounds_total (pb, &pbox) && bmq_bounds_total (ab, &abox) && abox.max[2] - abox.min[2] <= 0.05
                    && pbox.max[2] - pbox.min[2] > 0.3 && part->spot != BMQ_SPOT_NONE;
        bmq_bounds_destroy (&pb);
        bmq_bounds_destroy (&ab);
        if (!flip) continue;
        rug->relation = BMQ_REL_UNDER;
        rug->ref[0] = (int) p;
        rug->ref[1] = -1;
        part->relation = BMQ_REL_NONE;
        part->ref[0] = part->ref[1] = -1;
        for (size_t o = 0; o < c->req.count; o++)
            if (o != p && (size_t) a != o && c->req.part[o].ref[0] == a && c->req.part[o].relation != BMQ_REL_ON)
                c->req.part[o].ref[0] = (int) p;
    }
}

/* The boxes of part p's recipe and of its anchor a's, and the anchor's top under its centre. */
static bool s_fit_boxes (const s_compose_t *c, size_t p, int a, const json_t *described, bmq_box_t *pbox, bmq_box_t *abox,
                         bmq_box_t *top)
{
    bmq_bounds_t *pb = bmq_bounds_new (json_object_get (c->req.part[p].recipe, "steps"), described);
    bmq_bounds_t *ab = bmq_bounds_new (json_object_get (c->req.part[a].recipe, "steps"), described);
    bool ok = pb && ab && bmq_bounds_total (pb, pbox) && bmq_bounds_total (ab, abox)
              && bmq_bounds_support (ab, (abox->min[0] + abox->max[0]) / 2, (abox->min[1] + abox->max[1]) / 2, top);
    bmq_bounds_destroy (&pb);
    bmq_bounds_destroy (&ab);
    return ok;
}

/* Part p made f times its size when f is in [lo, 1), with a note: "the X made N % smaller <how> the Y". */
static void s_fit_shrink (s_compose_t *c, size_t p, int a, double f, double lo, const char *word, const char *how)
{
    bmq_scene_part_t *part = &c->req.part[p];
    if (!(isfinite (f) && f < 0.995 && f >= lo)) return;      /* never "0 % smaller" */
    part->scale *= f;
    if (!part->scale_word[0]) snprintf (part->scale_word, sizeof part->scale_word, "%s", word);
    char text[200];
    snprintf (text, sizeof text, "the %.60s made %.0f %% smaller %s the %.60s", part->name, (1 - f) * 100, how, c->req.part[a].name);
    json_array_append_new (c->notes, json_string (text));
}

/* "a trash can under the desk": a thing taller than the room under its anchor's top is made a little
 * smaller so that it fits there (down to three quarters of its size, with a note); else it stays as it is. */
static void s_fit_under (s_compose_t *c, const json_t *described)
{
    for (size_t p = 0; p < c->req.count; p++) {
        const bmq_scene_part_t *part = &c->req.part[p];
        int a = part->ref[0];
        bmq_box_t pbox, abox, top;
        if (part->relation != BMQ_REL_UNDER || a < 0 || a >= (int) c->req.count || a == (int) p
            || !s_fit_boxes (c, p, a, described, &pbox, &abox, &top))
            continue;
        double room = (top.min[2] - abox.min[2]) * c->req.part[a].scale, h = (pbox.max[2] - pbox.min[2]) * part->scale;
        if (room >= 0.25 && h > 0.05)           /* a filing cabinet at half its size is no filing cabinet: 3/4 at least */
            s_fit_shrink (c, p, a, 0.95 * room / h, 0.75, "smaller", "to fit under");
    }
}

/* "apples in the bowl", "two baskets inside the cabinet", "a basket of blankets": things a little too big to go
 * inside something that holds things (all its copies side by side or in layers, below its rim) are made smaller to fit (down to 0.6 of their size,
 * with a note); else they stay as they are and stand next to it (the layout says so). */
static void s_fit_inside (s_compose_t *c, const json_t *described)
{
    for (size_t p = 0; p < c->req.count; p++) {
        const bmq_scene_part_t *part = &c->req.part[p];
        int a = part->ref[0];
        bmq_box_t pbox, abox, top;
        if (part->relation != BMQ_REL_INSIDE || a < 0 || a >= (int) c->req.count || a == (int) p
            || !json_is_true (json_object_get (c->req.part[a].recipe, "holds")) || !s_fit_boxes (c, p, a, described, &pbox, &abox, &top))
            continue;
        double sa = c->req.part[a].scale, sp = part->scale, n = fmax (1, ceil (part->count / fmax (1, c->req.part[a].count)));
        double pw = (pbox.max[0] - pbox.min[0]) * sp, pd = (pbox.max[1] - pbox.min[1]) * sp, ph = (pbox.max[2] - pbox.min[2]) * sp;
        double aw = (abox.max[0] - abox.min[0]) * sa, ad = (abox.max[1] - abox.min[1]) * sa, ah = (abox.max[2] - abox.min[2]) * sa;
        if (pw <= 0 || pd <= 0 || ph <= 0 || n > 16) continue;
        double f = 0;                                   /* the grid the layout makes: as many a row as fit */
        double m = fmin (0.04, 0.1 * aw), g = fmin (0.02, 0.05 * aw);     /* scene_layout's margins and gaps */
        for (double cols = 1; cols <= n; cols++)              /* and layers, one on another, when its floor is full */
            for (double rows = 1; rows <= ceil (n / cols); rows++) {
                double layers = ceil (n / (cols * rows));
                f = fmax (f, fmin (fmin ((aw - m - g * (cols - 1)) / (cols * pw), (ad - m - g * (rows - 1)) / (rows * pd)),
                                   0.85 * ah / (layers * ph)));
            }
        s_fit_shrink (c, p, a, 0.95 * f, 0.6, "smaller", "to fit inside");
    }
}

/* "a blanket on the armchair", "a pile of clothes on the chair": a soft thing wider than the seat it lies on
 * is folded to the seat's size (down to half, with a note) instead of poking into the arms and back. */
static void s_fit_on (s_compose_t *c, const json_t *described)
{
    for (size_t p = 0; p < c->req.count; p++) {
        const bmq_scene_part_t *part = &c->req.part[p];
        int a = part->ref[0];
        bmq_box_t pbox, abox, top;
        if (part->relation != BMQ_REL_ON || a < 0 || a >= (int) c->req.count || a == (int) p
            || !(s_kind_is (part->recipe, "textile") || strstr (part->name, "clothes"))
            || !s_fit_boxes (c, p, a, described, &pbox, &abox, &top))
            continue;
        double sa = c->req.part[a].scale, sp = part->scale;
        double fx = (top.max[0] - top.min[0]) * sa / ((pbox.max[0] - pbox.min[0]) * sp);
        double fy = (top.max[1] - top.min[1]) * sa / ((pbox.max[1] - pbox.min[1]) * sp);
        s_fit_shrink (c, p, a, 0.95 * fmin (fx, fy), 0.5, "folded", "to lie on");
    }
}

/* Each part's steps with its size and colour (kept as the recipe is when they would break a bound, with a note). */
static int s_prepare (s_compose_t *c, const bmq_palette_t *palette, const json_t *described)
{
    for (size_t p = 0; p < c->req.count; p++) {
        const bmq_scene_part_t *part = &c->req.part[p];
        json_t *steps = json_object_get (part->recipe, "steps");
        bmq_recipe_mods_t m;
        s_mods_of (part, &m);
        m.has_offset = false;                           /* the layout places it */
        if (m.scale != 1.0 || m.has_color) {
            json_t *changed = bmq_recipe_mods_apply (steps, json_object_get (part->recipe, "color_parts"), described, &m);
            json_t *verdict = bmq_plan_validate (palette, changed);
            if (json_is_true (json_object_get (verdict, "accepted"))) c->steps[p] = changed;
            else {
                char what[160], text[300];
                bmq_recipe_mods_describe (&m, what, sizeof what);
                snprintf (text, sizeof text, "the %s as it is: %s would take it past the palette's bounds", part->name, what);
                json_array_append_new (c->notes, json_string (text));
                json_decref (changed);
            }
            json_decref (verdict);
        }
        if (!c->steps[p]) c->steps[p] = json_incref (steps);
        const bmq_material_t *mat = part->material >= 0 ? bmq_material ((size_t) part->material) : NULL;
        if (mat) {                                      /* "a leather sofa": a look of its own, offline */
            json_t *looked = json_deep_copy (c->steps[p]);
            bmq_room_material (looked, json_object_get (part->recipe, "color_parts"), mat, part->has_color);
            json_decref (c->steps[p]);
            c->steps[p] = looked;
        }
        c->bounds[p] = bmq_bounds_new (c->steps[p], described);
        if (!c->bounds[p]) return -1;
        size_t i, made = 0;
        json_t *step;
        json_t *ops = json_object_get (described, "operations");
        c->tree[p] = json_object_get (ops, BMQ_PLAN_TREE_COPY) != NULL;     /* an imported model's parts have names of their own */
        json_array_foreach (c->steps[p], i, step) {
            const char *op = json_string_value (json_object_get (step, "operation"));
            made += json_is_true (json_object_get (json_object_get (ops, op ? op : ""), "creates"));
            if (op && !strcmp (op, BMQ_ASSET_OPERATION)) c->tree[p] = false;
        }
        c->per_copy[p] = (double) json_array_size (c->steps[p]) + 1 + (double) made;
    }
    return 0;
}

/* "a desk with a lamp", "nightstands with lamps", "a sofa with two cushions": what "with" hung on a thing
 * that has a top it fits on goes on that top (one per copy when the thing comes in numbers and the
 * count was not said); furniture, seats and hung things stay beside it. */
static void s_with_on (s_compose_t *c)
{
    for (size_t p = 0; p < c->req.count; p++) {
        bmq_scene_part_t *part = &c->req.part[p];
        int a = part->ref[0];
        if (!part->with_given || part->relation != BMQ_REL_NEXT_TO || a < 0 || a >= (int) c->req.count || a == (int) p) continue;
        const json_t *mr = part->recipe, *ar = c->req.part[a].recipe;
        if (json_is_true (json_object_get (mr, "seat")) || json_is_true (json_object_get (mr, "holds"))
            || bmq_recipe_place (mr) == BMQ_PLACE_WALL || s_kind_is (mr, "table") || s_kind_is (mr, "storage")
            || s_kind_is (mr, "seating") || s_kind_is (mr, "bed") || strstr (part->name, "stool") || strstr (part->name, "chair")
            || strstr (part->name, "bench"))
            continue;
        bool soft = s_kind_is (mr, "textile") || s_kind_is (mr, "toy");
        bool lounge = json_is_true (json_object_get (ar, "seat")) || s_kind_is (ar, "seating") || s_kind_is (ar, "bed");
        if (lounge && !soft) continue;                 /* a sofa with a lamp: beside it; with cushions: on it */
        bmq_box_t ab, mb, top;
        if (!bmq_bounds_total (c->bounds[a], &ab) || !bmq_bounds_total (c->bounds[p], &mb)) continue;
        if (!bmq_bounds_support (c->bounds[a], (ab.min[0] + ab.max[0]) / 2, (ab.min[1] + ab.max[1]) / 2, &top)) continue;
        double tw = top.max[0] - top.min[0], td = top.max[1] - top.min[1];
        double mw = mb.max[0] - mb.min[0], md = mb.max[1] - mb.min[1], mh = mb.max[2] - mb.min[2];
        if (top.max[2] < 0.2 || top.max[2] > 1.4 || mh > 1.2) continue;
        if (fmax (mw, md) > 1.3 * fmax (tw, td) || mw * md > 1.5 * tw * td) continue;     /* a lamp's shade may overhang */
        part->relation = BMQ_REL_ON;
        if (!part->count_given && c->req.part[a].count >= 2) part->count = c->req.part[a].count;
    }
}

/* "a tv stand with a tv, a sofa facing it": a piece of furniture placed by something that stands on a top
 * (the tv) is placed by what holds it up (the stand), on the floor, not lifted with the tv. */
static void s_ground (s_compose_t *c)
{
    for (size_t p = 0; p < c->req.count; p++) {
        bmq_scene_part_t *part = &c->req.part[p];
        int y = part->ref[0];
        bmq_rel_t r = part->relation;
        if (y < 0 || y >= (int) c->req.count || part->ref[1] >= 0 || r == BMQ_REL_NONE || r == BMQ_REL_ON || r == BMQ_REL_INSIDE
            || r == BMQ_REL_UNDER || r == BMQ_REL_ABOVE || r == BMQ_REL_BETWEEN)
            continue;
        int place = bmq_recipe_place (part->recipe);
        const json_t *rx = part->recipe;
        bool furniture = json_is_true (json_object_get (rx, "seat")) || s_kind_is (rx, "seating") || s_kind_is (rx, "table")
                         || s_kind_is (rx, "storage") || s_kind_is (rx, "bed");
        if (!furniture) continue;                       /* a mug next to the lamp on the desk stays up there */
        const bmq_scene_part_t *held = &c->req.part[y];
        int z = held->ref[0];
        if (place == BMQ_PLACE_SURFACE || place == BMQ_PLACE_WALL || (held->relation != BMQ_REL_ON && held->relation != BMQ_REL_INSIDE)
            || z < 0 || z == (int) p)
            continue;
        part->ref[0] = z;
    }
}

/* Do the copies fit in one plan? 0, or -1 with the message. */
static int s_limits (s_compose_t *c, const bmq_palette_t *palette, const char *prompt, char *message, size_t msglen)
{
    double total = 0, copies = 0, biggest = 0;
    size_t big = 0;
    for (size_t p = 0; p < c->req.count; p++) {         /* copy 1 from scratch, each further copy one step when copied whole */
        double n = c->req.part[p].count, steps = n < 1 ? n * c->per_copy[p] : c->per_copy[p] + (n - 1) * (c->tree[p] ? 1 : c->per_copy[p]);
        total += steps;
        copies += n;
        if (steps > biggest) { biggest = steps; big = p; }
    }
    double extra = (copies >= 2 || c->in_room ? 2 : 0) + (c->in_room ? BMQ_ROOM_STEPS : 0), max = bmq_palette_max_steps (palette);
    if (total + extra <= max && copies <= BMQ_INSTANCE_MAX_COPIES) return 0;
    const bmq_scene_part_t *part = &c->req.part[big];
    double others = total - biggest + 2;                /* the rest of the scene, a camera and a sun */
    double each = c->tree[big] ? 1 : c->per_copy[big];
    double fit = floor ((max - others - c->per_copy[big]) / each) + 1;
    fit = fmin (fit, BMQ_INSTANCE_MAX_COPIES - (copies - part->count));
    if (copies > BMQ_INSTANCE_MAX_COPIES)
        snprintf (message, msglen, "\"%.120s\" asks for too much for one plan: %.0f objects in all (%s ×%.0f), over the planner's "
                  "limit of %d copies per plan; at most %.0f of them fit%s. Ask for fewer, or build it in several prompts.", prompt,
                  copies, part->name, part->count, BMQ_INSTANCE_MAX_COPIES, fit > 0 ? fit : 0,
                  c->req.count > 1 ? " with the rest of the scene" : "");
    else
        snprintf (message, msglen, "\"%.120s\" asks for too much for one plan: %s ×%.0f takes %.0f steps (%.0f for the first, %.0f "
                  "each after it) and the whole scene %.0f, over the palette's limit of %.0f steps per plan; at most %.0f of them "
                  "fit%s. Ask for fewer, or build it in several prompts.", prompt, part->name, part->count, biggest,
                  c->per_copy[big], each, total + extra, max, fit > 0 ? fit : 0, c->req.count > 1 ? " with the rest of the scene" : "");
    bmq_utf8_fix (message);
    return -1;
}

/* Move the whole composition along +X until its footprint is clear of what the scene holds (issue 29). */
static void s_clear_of_scene (s_compose_t *c, bmq_box_t *scene)
{
    size_t n = json_array_size (c->scene_boxes), used = 0;
    for (size_t p = 0; p < c->req.count; p++)
        if (c->req.part[p].has_position) return;        /* placed where asked: not moved */
    double shift = 0;
    for (int round = 0; round < 64; round++) {          /* each clash pushes it past that box */
        bool clash = false;
        used = 0;
        for (size_t i = 0; i < n && i < 4096; i++) {
            json_t *b = json_array_get (c->scene_boxes, i), *lo = json_object_get (b, "min"), *hi = json_object_get (b, "max");
            if (!json_is_array (lo) || !json_is_array (hi) || json_array_size (lo) != 3 || json_array_size (hi) != 3) continue;
            double l[2], h[2];
            bool ok = true;
            for (int a = 0; a < 2; a++) {
                ok = ok && json_is_number (json_array_get (lo, (size_t) a)) && json_is_number (json_array_get (hi, (size_t) a));
                l[a] = json_number_value (json_array_get (lo, (size_t) a));
                h[a] = json_number_value (json_array_get (hi, (size_t) a));
                ok = ok && isfinite (l[a]) && isfinite (h[a]) && fabs (l[a]) < 1e5 && fabs (h[a]) < 1e5 && l[a] <= h[a];
            }
            if (!ok) continue;
            used++;
            if (scene->min[0] + shift < h[0] + 0.5 && l[0] < scene->max[0] + shift + 0.5 && scene->min[1] < h[1] + 0.5 && l[1] < scene->max[1] + 0.5) {
                shift = h[0] + 0.5 - scene->min[0];
                clash = true;
            }
        }
        if (!clash) break;
    }
    if (shift <= 0) return;
    shift = ceil (shift * 100) / 100;
    for (size_t p = 0; p < c->req.count; p++)
        for (size_t k = 0; k < (size_t) c->req.part[p].count; k++) c->place[p][k].pos[0] += shift;
    c->room.origin_x = shift;
    scene->min[0] += shift;
    scene->max[0] += shift;
    c->shift = shift;
    char text[240];
    snprintf (text, sizeof text, "placed beside what the scene already holds (%zu object%s): moved %.2f m along +X, from x = %.2f to %.2f m",
              used, used == 1 ? "" : "s", shift, scene->min[0], scene->max[0]);
    json_array_append_new (c->notes, json_string (text));
}

static int s_build (s_compose_t *c, const bmq_palette_t *palette, const json_t *described, json_t *plan, size_t *copies)
{
    bmq_layout_part_t parts[BMQ_SCENE_MAX_PARTS];
    *copies = 0;
    for (size_t p = 0; p < c->req.count; p++) {
        const bmq_scene_part_t *part = &c->req.part[p];
        double front = -M_PI / 2;
        bmq_recipe_front (part->recipe, &front);
        parts[p] = (bmq_layout_part_t) { c->bounds[p], (size_t) part->count, part->relation, { part->ref[0], part->ref[1] },
                                         part->arrange, part->has_position,
                                         { part->position[0], part->position[1], part->position[2] }, front,
                                         json_is_true (json_object_get (part->recipe, "seat")), part->name,
                                         bmq_recipe_place (part->recipe) < 0 ? BMQ_PLACE_FLOOR : bmq_recipe_place (part->recipe),
                                         json_is_true (json_object_get (part->recipe, "holds")), part->spot, part->wall,
                                         bmq_room_usual (part->recipe), part->each_other };
        c->place[p] = calloc ((size_t) part->count, sizeof *c->place[p]);
        if (!c->place[p]) return -1;
        *copies += (size_t) part->count;
    }
    bmq_box_t scene;
    if (bmq_layout (parts, c->req.count, c->place, &scene, c->notes, c->in_room ? &c->room : NULL)) return -1;
    bmq_layout_check (parts, c->req.count, c->place, c->in_room ? &c->room : NULL, c->notes);
    if (c->in_room) {                                   /* the room's walls belong to the footprint */
        scene.min[0] = fmin (scene.min[0], -c->room.width / 2 - 0.1); scene.max[0] = fmax (scene.max[0], c->room.width / 2 + 0.1);
        scene.min[1] = fmin (scene.min[1], -c->room.depth / 2 - 0.1); scene.max[1] = fmax (scene.max[1], c->room.depth / 2 + 0.1);
    }
    s_clear_of_scene (c, &scene);
    json_t *used = json_object ();
    int max_len = bmq_palette_max_name_len (palette);
    char (*roots)[80] = calloc (*copies + 1, sizeof *roots);
    int rc = used && roots ? 0 : -1;
    for (size_t p = 0, r = 0; rc == 0 && p < c->req.count; p++)        /* roots first: chair, chair.001, ... */
        for (size_t k = 0; k < parts[p].count; k++, r++)
            if (!bmq_instance_name (used, c->req.part[p].name, max_len, roots[r], sizeof roots[r])) rc = -1;
    if (rc == 0 && c->in_room) {                        /* the room first: its floor and walls */
        if (bmq_room_append (plan, used, max_len, &c->room, c->door, c->window) < 0) rc = -1;
        scene.min[2] = fmin (scene.min[2], -0.1);
        scene.max[2] = fmax (scene.max[2], BMQ_ROOM_WALL_H);
    }
    for (size_t p = 0, r = 0; rc == 0 && p < c->req.count; p++) {
        bmq_box_t b;
        bmq_bounds_total (c->bounds[p], &b);
        double cx = (b.min[0] + b.max[0]) / 2, cy = (b.min[1] + b.max[1]) / 2;
        double radius = fmax (b.max[0] - b.min[0], b.max[1] - b.min[1]) / 2;
        size_t first = json_array_size (plan), r1 = r;
        for (size_t k = 0; rc == 0 && k < parts[p].count; k++, r++) {
            const bmq_placement_t *at = &c->place[p][k];
            double cs = cos (at->theta), sn = sin (at->theta);
            double root_at[3] = { at->pos[0] + cs * cx - sn * cy, at->pos[1] + sn * cx + cs * cy, at->pos[2] + b.min[2] };
            if (k > 0 && c->tree[p]) {                  /* a copy of copy 1, placed (issue 26) */
                if (bmq_instance_copy (plan, used, max_len, first, roots[r1], roots[r], root_at, at->theta) < 0) rc = -1;
            }
            else if (bmq_instance_append (plan, used, max_len, c->steps[p], described, roots[r], root_at, radius > 0 ? radius : 0.1,
                                          at->pos, at->theta) < 0)
                rc = -1;
        }
    }
    if (rc == 0 && (*copies >= 2 || c->in_room)) s_camera (plan, used, max_len, &scene, c->in_room);
    json_decref (used);
    free (roots);
    return rc;
}

int bmq_scene_compose (const bmq_recipe_book_t *book, const bmq_palette_t *palette, const json_t *described,
                       const char *prompt, json_t **body, char **note, char *code, size_t codelen, char *message,
                       size_t msglen)
{
    return bmq_scene_compose_in (book, palette, described, prompt, NULL, body, note, code, codelen, message, msglen);
}

int bmq_scene_compose_in (const bmq_recipe_book_t *book, const bmq_palette_t *palette, const json_t *described,
                          const char *prompt, const json_t *scene_boxes, json_t **body, char **note, char *code, size_t codelen,
                          char *message, size_t msglen)
{
    s_compose_t *c = calloc (1, sizeof *c);
    if (c) c->scene_boxes = json_is_array (scene_boxes) ? scene_boxes : NULL;
    *body = NULL;
    *note = NULL;
    if (!c || !(c->notes = json_array ()) || bmq_scene_parse (book, prompt, &c->req)) {
        if (c) s_free (c);
        free (c);
        snprintf (code, codelen, "internal");
        snprintf (message, msglen, "out of memory");
        return -1;
    }
    bmq_room_defaults (book, &c->req);                 /* "a bedroom": its usual furniture */
    for (size_t p = 0; p < c->req.count; p++)
        if (c->req.part[p].clamped != 0) {             /* nothing silent: "a red ball at 1000000 0 0" */
            char text[240];
            const double *at = c->req.part[p].position;
            snprintf (text, sizeof text, "the %s was asked at %g m, past the ±1000 m the planner places things in: it stands at "
                      "(%g, %g, %g)", c->req.part[p].name, c->req.part[p].clamped, at[0], at[1], at[2]);
            json_array_append_new (c->notes, json_string (text));
        }
    if (c->req.count == 0) { s_free (c); free (c); return 1; }
    if (c->req.room.kind != BMQ_ROOM_NONE) s_use_openings (&c->req);
    c->in_room = c->req.room.kind != BMQ_ROOM_NONE;
    c->door = c->window = true;
    for (size_t p = 0; p < c->req.count; p++) {
        const char *name = c->req.part[p].name;
        c->in_room = c->in_room || c->req.part[p].spot != BMQ_SPOT_NONE || bmq_recipe_place (c->req.part[p].recipe) == BMQ_PLACE_WALL;
        if (!strcmp (name, "door")) c->door = false;           /* asked for: the recipe's own */
        if (!strcmp (name, "window")) c->window = false;
    }
    for (size_t g = 0; g < c->req.nnegated; g++) {
        const char *name = json_string_value (json_object_get (c->req.negated[g], "name"));
        if (name && !strcmp (name, "door")) c->door = false;
        if (name && !strcmp (name, "window")) c->window = false;
    }
    c->room = (bmq_layout_room_t) { .sized = c->req.room.sized, .width = c->req.room.width, .depth = c->req.room.depth,
                                    .min_area = bmq_room_area (c->req.room.kind), .scale = c->req.room.scale,
                                    .door = c->door, .window = c->window };
    s_on_rug (c, described);
    s_fit_under (c, described);
    s_fit_inside (c, described);
    s_fit_on (c, described);
    int rc = s_prepare (c, palette, described);
    for (size_t p = 0; rc == 0 && p < c->req.count; p++) {     /* a variant's texture goes on each copy's parts by name */
        json_t *variants = bmq_recipe_variants_for (c->req.part[p].recipe, prompt);
        if (json_array_size (variants)) c->tree[p] = false;
        json_decref (variants);
    }
    if (rc == 0) s_with_on (c);
    if (rc == 0) s_ground (c);
    if (rc == 0 && s_limits (c, palette, prompt, message, msglen)) { snprintf (code, codelen, "too_big"); rc = -2; }
    json_t *plan = json_array ();
    size_t copies = 0;
    if (rc == 0 && (!plan || s_build (c, palette, described, plan, &copies))) rc = -1;
    if (rc == 0) {
        json_t *verdict = bmq_plan_validate (palette, plan);
        if (!json_is_true (json_object_get (verdict, "accepted"))) {
            json_t *first = json_array_get (json_object_get (verdict, "errors"), 0);
            const char *field = json_string_value (json_object_get (first, "field"));
            snprintf (code, codelen, field && !strcmp (field, "vertices") ? "too_big" : "invalid");
            snprintf (message, msglen, "the offline plan for \"%.120s\" does not pass the palette: step %lld, %s: %s", prompt,
                      (long long) json_integer_value (json_object_get (first, "step")), field ? field : "?",
                      json_string_value (json_object_get (first, "reason")) ? json_string_value (json_object_get (first, "reason")) : "?");
            bmq_utf8_fix (message);
            rc = -2;
        }
        json_decref (verdict);
    }
    if (rc == -1) { snprintf (code, codelen, "internal"); snprintf (message, msglen, "out of memory"); }
    if (rc) { json_decref (plan); s_free (c); free (c); return -1; }

    json_t *parts = json_array ();
    double score = 1;
    for (size_t p = 0; p < c->req.count; p++) {
        json_array_append_new (parts, s_part_json (&c->req, p));
        score = fmin (score, c->req.part[p].score);
    }
    char understood[1024], recipe[256] = "";
    bmq_scene_parts_text (parts, understood, sizeof understood);
    const bmq_scene_part_t *one = &c->req.part[0];
    bool single = c->req.count == 1 && copies == 1;
    for (size_t p = 0, o = 0; p < c->req.count && o < sizeof recipe; p++)
        o += (size_t) snprintf (recipe + o, sizeof recipe - o, "%s%s", p ? " + " : "", c->req.part[p].name);
    *body = json_pack ("{s:o, s:s, s:s, s:o, s:f, s:o, s:O}", "plan", plan, "source", "offline", "recipe", recipe,
                       "description", single ? json_incref (json_object_get (one->recipe, "description")) : json_string (understood),
                       "score", score, "parts", parts, "not_understood", c->req.not_understood);
    if (c->in_room)
        json_object_set_new (*body, "room", json_pack ("{s:s, s:f, s:f, s:b, s:b, s:f, s:f}", "kind",
                                                       bmq_room_name (c->req.room.kind ? c->req.room.kind : BMQ_ROOM_GENERIC),
                                                       "width", c->room.width, "depth", c->room.depth, "door", c->door, "window",
                                                       c->window, "door_x", c->room.door_x, "window_y", c->room.window_y));
    if (c->shift > 0) json_object_set_new (*body, "placed_at", json_pack ("{s:f, s:s}", "shift_x", c->shift, "why", "clear of the scene"));
    if (json_array_size (c->notes)) json_object_set (*body, "notes", c->notes);
    char text[1400] = "";
    bmq_recipe_mods_t m;
    s_mods_of (one, &m);
    if (single && bmq_recipe_mods_any (&m)) {
        char what[160];
        bmq_recipe_mods_describe (&m, what, sizeof what);
        json_object_set_new (*body, "modifiers", bmq_recipe_mods_json (&m));
        snprintf (text, sizeof text, "offline recipe '%s': %s", one->name, what);
    }
    size_t i;
    json_t *n;
    json_array_foreach (c->notes, i, n) {
        size_t o = strlen (text);
        snprintf (text + o, sizeof text - o, "%s%s", o ? "; " : "", json_string_value (n));
    }
    if (*text) *note = strdup (text);
    s_free (c);
    free (c);
    return 0;
}
