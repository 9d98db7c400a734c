/* scene_room — floors, walls and the usual furniture of rooms; see scene_room.h. */
#include "scene_room.h"
#include "scene_instance.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool s_in (const char *word, const char *const *list)
{
    for (; word && *list; list++)
        if (!strcmp (word, *list)) return true;
    return false;
}

bmq_spot_t bmq_room_usual (const json_t *recipe)
{
    static const char *centre[] = { "table", "coffee_table", "round_table", "long_dining_table", "kitchen_island", "rug", "round_rug",
                                    "ottoman", "pet_bed", "cushion_floor", "bean_bag", "yoga_mat", "drum_kit", "exercise_bike",
                                    "treadmill", "easel", "folding_table", "nesting_tables", "high_chair", "rocking_horse", NULL };
    static const char *corner[] = { "potted_plant", "tall_plant", "office_plant", "coat_rack", "floor_lamp", "umbrella_stand",
                                    "cat_tree", "cactus", "trash_can", "speaker", "laundry_basket", "guitar", NULL };
    const char *name = json_string_value (json_object_get (recipe, "name"));
    if (bmq_recipe_place (recipe) == BMQ_PLACE_WALL) return BMQ_SPOT_ONWALL;
    if (s_in (name, centre)) return BMQ_SPOT_CENTER;
    if (s_in (name, corner)) return BMQ_SPOT_CORNER;
    return BMQ_SPOT_WALL;
}

double bmq_room_area (bmq_room_kind_t kind)
{
    static const double area[BMQ_ROOM_COUNT] = { 12, 12, 13, 20, 11, 10, 14, 6, 11, 6, 7, 16, 24 };
    return (size_t) kind < BMQ_ROOM_COUNT ? area[kind] : 12;
}

void bmq_room_defaults (const bmq_recipe_book_t *book, bmq_scene_request_t *req)
{
    static const char *const usual[BMQ_ROOM_COUNT][7] = {
        [BMQ_ROOM_GENERIC] = { "sofa", "coffee_table", "floor_lamp", NULL },
        [BMQ_ROOM_BEDROOM] = { "bed", "nightstand", "wardrobe", "dresser", NULL },
        [BMQ_ROOM_LIVING] = { "sofa", "coffee_table", "tv_stand", "armchair", "rug", NULL },
        [BMQ_ROOM_KITCHEN] = { "fridge", "stove", "kitchen_sink", "counter", "table", NULL },
        [BMQ_ROOM_OFFICE] = { "desk", "office_chair", "bookshelf", "desk_lamp", NULL },
        [BMQ_ROOM_DINING] = { "table", "chair", "sideboard", NULL },
        [BMQ_ROOM_BATHROOM] = { "toilet", "bathroom_sink", "bathtub", "mirror", NULL },
        [BMQ_ROOM_KIDS] = { "single_bed", "toy_box", "desk", "rug", NULL },
        [BMQ_ROOM_LAUNDRY] = { "washing_machine", "dryer", "laundry_basket", NULL },
        [BMQ_ROOM_HALL] = { "console_table", "coat_rack", "shoe_rack", "mirror", NULL },
        [BMQ_ROOM_GYM] = { "treadmill", "exercise_bike", "yoga_mat", NULL },
        [BMQ_ROOM_STUDIO] = { "bed", "sofa", "desk", "table", "fridge", NULL },
    };
    if (req->room.kind <= BMQ_ROOM_NONE || req->room.kind >= BMQ_ROOM_COUNT || req->count) return;
    int bed = -1, table = -1, desk = -1;
    for (size_t i = 0; usual[req->room.kind][i] && req->count < BMQ_SCENE_MAX_PARTS; i++) {
        const json_t *recipe = bmq_recipe_book_get (book, usual[req->room.kind][i]);
        bool no = !recipe;
        for (size_t g = 0; g < req->nnegated && !no; g++) no = req->negated[g] == recipe;
        if (no) continue;
        bmq_scene_part_t *part = &req->part[req->count];
        memset (part, 0, sizeof *part);
        part->recipe = recipe;
        part->score = 1;
        snprintf (part->name, sizeof part->name, "%s", usual[req->room.kind][i]);
        part->count = 1;
        part->scale = 1;
        part->ref[0] = part->ref[1] = -1;
        part->material = -1;
        const char *n = part->name;
        if (!strcmp (n, "bed") || !strcmp (n, "single_bed")) bed = (int) req->count;
        if (!strcmp (n, "table")) table = (int) req->count;
        if (!strcmp (n, "desk")) desk = (int) req->count;
        if (!strcmp (n, "nightstand") && bed >= 0) { part->count = 2; part->relation = BMQ_REL_NEXT_TO; part->ref[0] = bed; }
        if (!strcmp (n, "chair") && table >= 0) { part->count = 4; part->relation = BMQ_REL_AROUND; part->ref[0] = table; }
        if (!strcmp (n, "office_chair") && desk >= 0) { part->relation = BMQ_REL_IN_FRONT; part->ref[0] = desk; }
        if (!strcmp (n, "desk_lamp") && desk >= 0) { part->relation = BMQ_REL_ON; part->ref[0] = desk; }
        req->count++;
    }
}

static int s_piece (json_t *plan, json_t *used, int max_len, const char *root, const char *base, const double at[3],
                    const double size[3], const double rgb[3], double rough)
{
    char name[80];
    if (!bmq_instance_name (used, base, max_len, name, sizeof name)) return -1;
    json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:f, s:[f, f, f], s:[f, f, f]}}", "operation",
                                            "bpy.ops.mesh.primitive_cube_add", "name", name, "params", "size", 1.0, "location",
                                            round (at[0] * 1e4) / 1e4, round (at[1] * 1e4) / 1e4, round (at[2] * 1e4) / 1e4, "scale",
                                            round (size[0] * 1e4) / 1e4, round (size[1] * 1e4) / 1e4, round (size[2] * 1e4) / 1e4));
    json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:[f, f, f], s:f}}", "operation", "object.material", "target", name,
                                            "params", "color", rgb[0], rgb[1], rgb[2], "roughness", rough));
    json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:s}}", "operation", "object.parent", "target", name, "params",
                                            "parent", root));
    return 3;
}

int bmq_room_append (json_t *plan, json_t *used, int max_len, const bmq_layout_room_t *room, bool door, bool window)
{
    char root[80];
    if (!bmq_instance_name (used, "room", max_len, root, sizeof root)) return -1;
    double W = room->width, D = room->depth, H = BMQ_ROOM_WALL_H, h = BMQ_ROOM_LOW_H, t = 0.1, ox = room->origin_x;
    json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:s, s:f, s:[f, f, f], s:[f, f, f]}}", "operation",
                                            "bpy.ops.object.empty_add", "name", root, "params", "type", "PLAIN_AXES", "radius",
                                            round (fmax (W, D) / 2 * 1e3) / 1e3, "location", ox, 0.0, 0.0, "rotation", 0.0, 0.0, 0.0));
    static const double floor_c[3] = { 0.62, 0.5, 0.36 }, wall_c[3] = { 0.88, 0.86, 0.82 }, door_c[3] = { 0.45, 0.3, 0.18 },
                        glass_c[3] = { 0.65, 0.82, 0.92 };
    int n = 1, rc = 0;
    struct { const char *name; double at[3], size[3]; const double *rgb; double rough; } piece[] = {
        { "room_floor", { 0, 0, -t / 2 }, { W + 2 * t, D + 2 * t, t }, floor_c, 0.6 },
        { "room_wall_back", { 0, D / 2 + t / 2, H / 2 }, { W + 2 * t, t, H }, wall_c, 0.9 },
        { "room_wall_left", { -W / 2 - t / 2, 0, H / 2 }, { t, D, H }, wall_c, 0.9 },
        { "room_wall_right", { W / 2 + t / 2, 0, h / 2 }, { t, D, h }, wall_c, 0.9 },
        { "room_wall_front", { 0, -D / 2 - t / 2, h / 2 }, { W + 2 * t, t, h }, wall_c, 0.9 },
        { "room_door", { room->door_x, D / 2 + t / 2 - 0.02, 1.025 }, { 0.9, t + 0.04, 2.05 }, door_c, 0.6 },
        { "room_window", { -W / 2 - t / 2 + 0.02, room->window_y, 1.55 }, { t + 0.04, 1.2, 1.3 }, glass_c, 0.05 },
    };
    for (size_t i = 0; i < sizeof piece / sizeof *piece && rc >= 0; i++) {
        if ((i == 5 && !door) || (i == 6 && !window)) continue;
        double at[3] = { piece[i].at[0] + ox, piece[i].at[1], piece[i].at[2] };
        rc = s_piece (plan, used, max_len, root, piece[i].name, at, piece[i].size, piece[i].rgb, piece[i].rough);
        n += rc;
    }
    return rc < 0 ? -1 : n;
}

void bmq_room_material (json_t *steps, const json_t *color_parts, const bmq_material_t *m, bool keep_colour)
{
    size_t i, j;
    json_t *step, *part;
    json_array_foreach (steps, i, step) {
        const char *op = json_string_value (json_object_get (step, "operation"));
        const char *target = json_string_value (json_object_get (step, "target"));
        if (!op || strcmp (op, "object.material") || !target) continue;
        bool mine = false;
        json_array_foreach (color_parts, j, part) mine = mine || (json_is_string (part) && !strcmp (json_string_value (part), target));
        if (!mine) continue;
        json_t *params = json_object_get (step, "params");
        json_object_set_new (params, "roughness", json_real (m->roughness));
        json_object_set_new (params, "metallic", json_real (m->metallic));
        if (!keep_colour) json_object_set_new (params, "color", json_pack ("[f, f, f]", m->rgb[0], m->rgb[1], m->rgb[2]));
    }
}
