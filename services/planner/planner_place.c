/* planner_place — the layout engine behind the model's `place` function; see planner_place.h. */
#include "planner_place.h"
#include "recipe_book.h"
#include "recipe_bounds.h"
#include "scene_layout.h"
#include "scene_words.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NAME_MAX   63
#define S_SIZE_MIN   0.01
#define S_SIZE_MAX   30.0

typedef struct {
    char          name[S_NAME_MAX + 1];
    double        size[3];
    double        height;           /* on_wall: its bottom's height above the floor */
    size_t        count;
    bmq_rel_t     rel;
    int           ref[2];
    bmq_spot_t    spot;
    double        front;
    bmq_bounds_t *bounds;
} s_item_t;

struct bmq_place_t {
    const json_t *described;
    s_item_t      item[BMQ_PLACE_MAX];
    size_t        n;
};

static const struct { const char *word; bmq_rel_t rel; } s_rels[] = {
    { "on", BMQ_REL_ON }, { "next_to", BMQ_REL_NEXT_TO }, { "both_sides", BMQ_REL_NEXT_TO },
    { "in_front_of", BMQ_REL_IN_FRONT }, { "behind", BMQ_REL_BEHIND }, { "left_of", BMQ_REL_LEFT_OF },
    { "right_of", BMQ_REL_RIGHT_OF }, { "between", BMQ_REL_BETWEEN }, { "around", BMQ_REL_AROUND },
    { "under", BMQ_REL_UNDER }, { "above", BMQ_REL_ABOVE }, { "inside", BMQ_REL_INSIDE }, { "facing", BMQ_REL_FACING },
    { "long_side", BMQ_REL_LONG_SIDE }, { "short_side", BMQ_REL_SHORT_SIDE },
};
static const struct { const char *word; bmq_spot_t spot; } s_spots[] = {
    { "wall", BMQ_SPOT_WALL }, { "corner", BMQ_SPOT_CORNER }, { "center", BMQ_SPOT_CENTER }, { "on_wall", BMQ_SPOT_ONWALL },
};

bmq_place_t *bmq_place_new (const json_t *described)
{
    bmq_place_t *self = calloc (1, sizeof *self);
    if (self) self->described = described;
    return self;
}

void bmq_place_destroy (bmq_place_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_place_t *self = *self_p;
    for (size_t i = 0; i < self->n; i++) bmq_bounds_destroy (&self->item[i].bounds);
    free (self);
    *self_p = NULL;
}

json_t *bmq_place_declaration (void)
{
    json_t *rels = json_array (), *spots = json_array ();
    for (size_t i = 0; i < sizeof s_rels / sizeof *s_rels; i++) json_array_append_new (rels, json_string (s_rels[i].word));
    for (size_t i = 0; i < sizeof s_spots / sizeof *s_spots; i++) json_array_append_new (spots, json_string (s_spots[i].word));
    return json_pack ("{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:{s:s}, s:s}, s:{s:s, s:o, s:s}, s:{s:s, s:s},"
                      " s:{s:s, s:s}, s:{s:s, s:o, s:s}, s:{s:s, s:s}, s:{s:s, s:[s, s, s, s, s], s:s}, s:{s:s, s:s}},"
                      " s:[s, s]}}",
        "name", "place",
        "description", "Lay out a room or a group the way the offline planner does, before you write the plan: each call adds "
                       "one object (a box of its size) by a relation to an object placed before and/or a spot in a room, "
                       "and answers where EVERY object placed so far goes (the layout is redone each call: use the latest "
                       "answer). Nothing overlaps; things 'on' stand on the anchor's top; each relation is checked and one "
                       "that cannot be met is a note. Build each copy with its center as the primitive's location and "
                       "rotation_z as its Z rotation.",
        "parameters", "type", "object", "properties",
        "object", "type", "string", "description", "Its name (the same name again replaces it)",
        "size", "type", "array", "items", "type", "number", "description", "[width along X, depth along Y, height] in metres",
        "relation", "type", "string", "enum", rels, "description", "How it stands to the anchor (in the anchor's own frame)",
        "anchor", "type", "string", "description", "An object placed before",
        "anchor2", "type", "string", "description", "between: the second object",
        "spot", "type", "string", "enum", spots, "description", "Where in the room (a spot makes the layout a room's)",
        "count", "type", "integer", "description", "Copies (default 1; both_sides: 2)",
        "front", "type", "string", "enum", "-y", "+y", "-x", "+x", "round", "description", "Where its front looks (default -y)",
        "height", "type", "number", "description", "on_wall: its bottom's height above the floor (default 1.2)",
        "required", "object", "size");
}

/* ---- arguments ---------------------------------------------------------------- */

static int s_find (const bmq_place_t *self, const char *name)
{
    for (size_t i = 0; name && i < self->n; i++)
        if (!strcmp (self->item[i].name, name)) return (int) i;
    return -1;
}

static bool s_reaches (const bmq_place_t *self, const s_item_t *items, int from, int to, int depth)
{
    if (from < 0 || depth > BMQ_PLACE_MAX) return false;
    if (from == to) return true;
    return items[from].rel != BMQ_REL_NONE
        && (s_reaches (self, items, items[from].ref[0], to, depth + 1) || s_reaches (self, items, items[from].ref[1], to, depth + 1));
}

static bool s_name_ok (const char *s)
{
    size_t n = s ? strlen (s) : 0;
    if (n == 0 || n > S_NAME_MAX) return false;
    for (const unsigned char *c = (const unsigned char *) s; *c; c++)
        if (*c < 0x20 || *c == 0x7f) return false;
    return true;
}

static json_t *s_error (const char *fmt, const char *a)
{
    char msg[300];
    snprintf (msg, sizeof msg, fmt, a ? a : "");
    return json_pack ("{s:s}", "error", msg);
}

/* args into *it (index at, so refs to it stay valid); NULL, or the error to answer. */
static json_t *s_read (bmq_place_t *self, const json_t *args, s_item_t *it, int at)
{
    if (!json_is_object (args)) return s_error ("place takes an object of arguments", NULL);
    const char *name = json_string_value (json_object_get (args, "object"));
    if (!s_name_ok (name)) return s_error ("object must be a name of 1 to 63 printable characters", NULL);
    snprintf (it->name, sizeof it->name, "%s", name);
    json_t *size = json_object_get (args, "size");
    if (!json_is_array (size) || json_array_size (size) != 3)
        return s_error ("size must be [width, depth, height] in metres (%s)", name);
    for (size_t a = 0; a < 3; a++) {
        json_t *v = json_array_get (size, a);
        double x = json_is_number (v) ? json_number_value (v) : NAN;
        if (!isfinite (x) || x < S_SIZE_MIN || x > S_SIZE_MAX)
            return s_error ("each of size's numbers must be between 0.01 and 30 metres (%s)", name);
        it->size[a] = x;
    }
    const char *rel = json_string_value (json_object_get (args, "relation"));
    const char *spot = json_string_value (json_object_get (args, "spot"));
    json_t *count = json_object_get (args, "count");
    if (count && !json_is_null (count) && (!json_is_integer (count) || json_integer_value (count) < 1
                                           || json_integer_value (count) > BMQ_PLACE_MAX_COPIES))
        return s_error ("count must be an integer from 1 to 24 (%s)", name);
    it->count = json_is_integer (count) ? (size_t) json_integer_value (count) : rel && !strcmp (rel, "both_sides") ? 2 : 1;
    it->rel = BMQ_REL_NONE;
    it->ref[0] = it->ref[1] = -1;
    if (rel) {
        size_t r = 0;
        while (r < sizeof s_rels / sizeof *s_rels && strcmp (s_rels[r].word, rel)) r++;
        if (r == sizeof s_rels / sizeof *s_rels) return s_error ("relation %.40s is not one place knows", rel);
        it->rel = s_rels[r].rel;
        const char *anchor = json_string_value (json_object_get (args, "anchor"));
        it->ref[0] = s_find (self, anchor);
        if (it->ref[0] < 0 || it->ref[0] == at)
            return s_error ("anchor must name another object placed before (%.64s is not one)", anchor ? anchor : "nothing");
        const char *second = json_string_value (json_object_get (args, "anchor2"));
        if (it->rel == BMQ_REL_BETWEEN && second) {
            it->ref[1] = s_find (self, second);
            if (it->ref[1] < 0 || it->ref[1] == at || it->ref[1] == it->ref[0])
                return s_error ("anchor2 must name a third object placed before (%.64s is not one)", second);
        }
        else if (it->rel == BMQ_REL_BETWEEN && self->item[it->ref[0]].count < 2)
            return s_error ("between needs anchor2, or an anchor with two copies (%s)", name);
    }
    it->spot = BMQ_SPOT_NONE;
    if (spot) {
        size_t s = 0;
        while (s < sizeof s_spots / sizeof *s_spots && strcmp (s_spots[s].word, spot)) s++;
        if (s == sizeof s_spots / sizeof *s_spots) return s_error ("spot %.40s is not one of wall, corner, center, on_wall", spot);
        it->spot = s_spots[s].spot;
    }
    const char *front = json_string_value (json_object_get (args, "front"));
    it->front = !front || !strcmp (front, "-y") ? -M_PI / 2 : !strcmp (front, "+y") ? M_PI / 2 : !strcmp (front, "+x") ? 0
              : !strcmp (front, "-x") ? M_PI : !strcmp (front, "round") ? NAN : 1e9;
    if (it->front == 1e9) return s_error ("front must be -y, +y, -x, +x or round (%s)", name);
    json_t *h = json_object_get (args, "height");
    it->height = json_is_number (h) ? json_number_value (h) : 1.2;
    if (!isfinite (it->height) || it->height < 0 || it->height > 10) return s_error ("height must be 0 to 10 metres (%s)", name);
    if (it->spot != BMQ_SPOT_ONWALL) it->height = 0;
    json_t *steps = json_pack ("[{s:s, s:s, s:{s:f, s:[f, f, f], s:[f, f, f]}}]", "operation", "bpy.ops.mesh.primitive_cube_add",
                               "name", "box", "params", "size", 1.0, "location", 0.0, 0.0, it->height + it->size[2] / 2,
                               "scale", it->size[0], it->size[1], it->size[2]);
    it->bounds = steps ? bmq_bounds_new (steps, self->described) : NULL;
    json_decref (steps);
    if (!it->bounds) return s_error ("out of memory", NULL);
    return NULL;
}

/* ---- the answer --------------------------------------------------------------- */

static double s_mm (double x)
{
    return round (x * 1000) / 1000;
}

static json_t *s_layout (bmq_place_t *self)
{
    bmq_layout_part_t parts[BMQ_PLACE_MAX];
    bmq_placement_t *place[BMQ_PLACE_MAX] = { 0 };
    bool in_room = false;
    for (size_t i = 0; i < self->n; i++) {
        s_item_t *it = &self->item[i];
        parts[i] = (bmq_layout_part_t) { .bounds = it->bounds, .count = it->count, .relation = it->rel,
                                         .ref = { it->ref[0], it->ref[1] }, .arrange = BMQ_ARRANGE_NONE,
                                         .front = it->front, .name = it->name,
                                         .place = it->spot == BMQ_SPOT_ONWALL ? BMQ_PLACE_WALL : BMQ_PLACE_FLOOR,
                                         .spot = it->spot, .usual = BMQ_SPOT_NONE };
        in_room = in_room || it->spot != BMQ_SPOT_NONE;
        place[i] = calloc (it->count, sizeof *place[i]);
    }
    json_t *notes = json_array (), *out = NULL;
    bmq_layout_room_t room = { .min_area = 9.0, .scale = 1.0 };
    bmq_box_t scene;
    bool ok = notes != NULL;
    for (size_t i = 0; i < self->n; i++) ok = ok && place[i];
    if (ok && bmq_layout (parts, self->n, place, &scene, notes, in_room ? &room : NULL) == 0) {
        bmq_layout_check (parts, self->n, place, in_room ? &room : NULL, notes);
        json_t *objects = json_array ();
        for (size_t i = 0; i < self->n; i++) {
            bmq_box_t b;
            bmq_bounds_total (self->item[i].bounds, &b);
            json_t *copies = json_array ();
            for (size_t k = 0; k < self->item[i].count; k++) {
                const bmq_placement_t *pl = &place[i][k];
                double c = cos (pl->theta), s = sin (pl->theta), lo[3] = { INFINITY, INFINITY, b.min[2] + pl->pos[2] },
                       hi[3] = { -INFINITY, -INFINITY, b.max[2] + pl->pos[2] };
                for (int corner = 0; corner < 4; corner++) {            /* the footprint's corners, turned and moved */
                    double x = corner & 1 ? b.max[0] : b.min[0], y = corner & 2 ? b.max[1] : b.min[1];
                    double wx = c * x - s * y + pl->pos[0], wy = s * x + c * y + pl->pos[1];
                    lo[0] = fmin (lo[0], wx); hi[0] = fmax (hi[0], wx);
                    lo[1] = fmin (lo[1], wy); hi[1] = fmax (hi[1], wy);
                }
                double cz = (b.min[2] + b.max[2]) / 2 + pl->pos[2];
                json_array_append_new (copies, json_pack ("{s:[f, f, f], s:[f, f, f], s:[f, f, f], s:f}",
                    "center", s_mm (c * (b.min[0] + b.max[0]) / 2 - s * (b.min[1] + b.max[1]) / 2 + pl->pos[0]),
                              s_mm (s * (b.min[0] + b.max[0]) / 2 + c * (b.min[1] + b.max[1]) / 2 + pl->pos[1]), s_mm (cz),
                    "min", s_mm (lo[0]), s_mm (lo[1]), s_mm (lo[2]), "max", s_mm (hi[0]), s_mm (hi[1]), s_mm (hi[2]),
                    "rotation_z", s_mm (remainder (pl->theta, 2 * M_PI))));
            }
            json_array_append_new (objects, json_pack ("{s:s, s:o}", "object", self->item[i].name, "copies", copies));
        }
        out = json_pack ("{s:o, s:O}", "objects", objects, "notes", notes);
        if (in_room)
            json_object_set_new (out, "room", json_pack ("{s:f, s:f, s:s}", "width", s_mm (room.width), "depth", s_mm (room.depth),
                                                         "floor", "x in ±width/2, y in ±depth/2, its top at z = 0; walls are yours to build"));
    }
    for (size_t i = 0; i < self->n; i++) free (place[i]);
    json_decref (notes);
    return out ? out : json_pack ("{s:s}", "error", "the layout could not be made (out of memory)");
}

json_t *bmq_place_call (bmq_place_t *self, const json_t *args)
{
    const char *name = json_string_value (json_object_get (args, "object"));
    int at = s_find (self, name);
    if (at < 0 && self->n >= BMQ_PLACE_MAX) return s_error ("place holds at most 32 objects; %.64s is one too many", name);
    s_item_t fresh = { 0 };
    json_t *err = s_read (self, args, &fresh, at < 0 ? (int) self->n : at);
    if (err) { bmq_bounds_destroy (&fresh.bounds); return err; }
    if (at >= 0) {                          /* the same name again: replaced, where it was */
        s_item_t items[BMQ_PLACE_MAX];
        memcpy (items, self->item, sizeof items);
        items[at] = fresh;
        if (s_reaches (self, items, fresh.ref[0], at, 0) || s_reaches (self, items, fresh.ref[1], at, 0)) {
            bmq_bounds_destroy (&fresh.bounds);
            return s_error ("%.64s would stand on itself through its anchors: pick another anchor", name);
        }
        bmq_bounds_destroy (&self->item[at].bounds);
        self->item[at] = fresh;
    }
    else self->item[self->n++] = fresh;
    return s_layout (self);
}
