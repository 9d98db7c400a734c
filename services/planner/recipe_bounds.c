/* recipe_bounds — boxes of a plan's objects from its steps; see recipe_bounds.h. */
#include "recipe_bounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_OBJECTS 4096          /* a plan holds far fewer (palette max_steps) */

typedef struct {
    double local[2][3];             /* the mesh's box before the object's scale */
    double rot[3][3];
    double loc[3], scale[3];
    bool shape, alive;
} s_object_t;

struct bmq_bounds_t {
    s_object_t *objects;
    size_t count;
    bmq_box_t *boxes;               /* the world boxes of the live objects with a shape */
    size_t box_count;
    bool rotatable;
};

/* ---- small geometry ----------------------------------------------------------------- */

static void s_euler (const double e[3], double r[3][3])
{
    double cx = cos (e[0]), sx = sin (e[0]), cy = cos (e[1]), sy = sin (e[1]), cz = cos (e[2]), sz = sin (e[2]);
    /* Blender's XYZ Euler: X first, then Y, then Z, about the global axes: R = Rz Ry Rx */
    double m[3][3] = { { cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx },
                       { sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx },
                       { -sy, cy * sx, cy * cx } };
    memcpy (r, m, sizeof m);
}

static void s_mul (const double a[3][3], const double b[3][3], double out[3][3])
{
    double m[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) m[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
    memcpy (out, m, sizeof m);
}

static double s_num (const json_t *params, const json_t *pdesc, const char *key, double fallback)
{
    json_t *v = json_object_get (params, key);
    if (!json_is_number (v)) v = json_object_get (json_object_get (pdesc, key), "default");
    return json_is_number (v) ? json_number_value (v) : fallback;
}

static void s_vec (const json_t *params, const json_t *pdesc, const char *key, double fallback, double out[3])
{
    json_t *v = json_object_get (params, key);
    if (!json_is_array (v) || json_array_size (v) != 3) v = json_object_get (json_object_get (pdesc, key), "default");
    for (size_t a = 0; a < 3; a++) {
        json_t *x = json_array_get (v, a);
        out[a] = json_is_number (x) ? json_number_value (x) : fallback;
    }
}

/* ---- objects ------------------------------------------------------------------------ */

/* The local box of a primitive, half extents (x, y, z); false when the operation makes no shape. */
static bool s_primitive (const char *op, const json_t *p, const json_t *pd, double half[3])
{
    if (!strncmp (op, "bpy.ops.mesh.primitive_", 23)) op += 23;
    else return false;
    double s, r, d;
    if (!strcmp (op, "cube_add")) { s = s_num (p, pd, "size", 2) / 2; half[0] = half[1] = half[2] = s; }
    else if (!strcmp (op, "uv_sphere_add") || !strcmp (op, "ico_sphere_add")) { r = s_num (p, pd, "radius", 1); half[0] = half[1] = half[2] = r; }
    else if (!strcmp (op, "cylinder_add")) {
        r = s_num (p, pd, "radius", 1);
        half[0] = half[1] = r;
        half[2] = s_num (p, pd, "depth", 2) / 2;
    }
    else if (!strcmp (op, "cone_add")) {
        r = fmax (s_num (p, pd, "radius1", 1), s_num (p, pd, "radius2", 0));
        half[0] = half[1] = r;
        half[2] = s_num (p, pd, "depth", 2) / 2;
    }
    else if (!strcmp (op, "torus_add")) {
        d = s_num (p, pd, "minor_radius", 0.25);
        half[0] = half[1] = s_num (p, pd, "major_radius", 1) + d;
        half[2] = d;
    }
    else if (!strcmp (op, "plane_add") || !strcmp (op, "grid_add")) { s = s_num (p, pd, "size", 2) / 2; half[0] = half[1] = s; half[2] = 0; }
    else if (!strcmp (op, "circle_add")) { r = s_num (p, pd, "radius", 1); half[0] = half[1] = r; half[2] = 0; }
    else if (!strcmp (op, "monkey_add")) {
        s = s_num (p, pd, "size", 2);
        half[0] = 0.68 * s; half[1] = 0.43 * s; half[2] = 0.49 * s;
    }
    else return false;
    return true;
}

/* Round about its local Z: a turn about that axis leaves its box as it is (a generous box for few-sided ones). */
static bool s_round_about_z (const char *op)
{
    static const char *round[] = { "bpy.ops.mesh.primitive_cylinder_add", "bpy.ops.mesh.primitive_cone_add",
                                   "bpy.ops.mesh.primitive_uv_sphere_add", "bpy.ops.mesh.primitive_ico_sphere_add",
                                   "bpy.ops.mesh.primitive_torus_add", "bpy.ops.mesh.primitive_circle_add" };
    for (size_t i = 0; op && i < sizeof round / sizeof *round; i++)
        if (!strcmp (op, round[i])) return true;
    return false;
}

static s_object_t *s_create (bmq_bounds_t *self, const char *op, const json_t *params, const json_t *pdesc,
                             const s_object_t *copy_of)
{
    if (self->count >= S_MAX_OBJECTS) return NULL;
    s_object_t *o = &self->objects[self->count++];
    memset (o, 0, sizeof *o);
    o->alive = true;
    if (copy_of) { *o = *copy_of; o->alive = true; return o; }
    double half[3], e[3];
    o->shape = s_primitive (op, params, pdesc, half);
    for (int a = 0; o->shape && a < 3; a++) { o->local[0][a] = -half[a]; o->local[1][a] = half[a]; }
    s_vec (params, pdesc, "location", 0, o->loc);
    s_vec (params, pdesc, "rotation", 0, e);
    if (json_object_get (pdesc, "scale") || json_object_get (params, "scale")) s_vec (params, pdesc, "scale", 1, o->scale);
    else o->scale[0] = o->scale[1] = o->scale[2] = 1;
    if (s_round_about_z (op) && fabs (e[0]) < 1e-9 && fabs (e[1]) < 1e-9 && fabs (o->scale[0] - o->scale[1]) < 1e-9)
        e[2] = 0;                                   /* a turn about its own axis changes nothing */
    s_euler (e, o->rot);
    return o;
}

static void s_modifier (s_object_t *o, const char *op, const json_t *p, const json_t *pd)
{
    const char *type = json_string_value (json_object_get (p, "type"));
    bool full = !strcmp (op, "object.modifier");        /* modifier_add uses Blender's defaults */
    if (!type) return;
    if (!strcmp (type, "ARRAY")) {
        double off[3] = { 1, 0, 0 };
        int count = full ? (int) s_num (p, pd, "count", 2) : 2;
        if (full) s_vec (p, pd, "offset", 0, off);
        for (int a = 0; a < 3 && count > 1; a++) {
            double shift = (count - 1) * off[a] * (o->local[1][a] - o->local[0][a]);
            if (shift > 0) o->local[1][a] += shift;
            else o->local[0][a] += shift;
        }
    }
    else if (!strcmp (type, "MIRROR")) {
        const char *axis = full ? json_string_value (json_object_get (p, "axis")) : NULL;
        int a = axis && *axis >= 'X' && *axis <= 'Z' ? *axis - 'X' : 0;
        double lo = fmin (o->local[0][a], -o->local[1][a]), hi = fmax (o->local[1][a], -o->local[0][a]);
        o->local[0][a] = lo;
        o->local[1][a] = hi;
    }
    else if (!strcmp (type, "SOLIDIFY")) {
        double t = fabs (full ? s_num (p, pd, "thickness", 0.05) : 0.01);
        for (int a = 0; a < 3; a++) { o->local[0][a] -= t; o->local[1][a] += t; }
    }
}

/* What one acting step does to its object's transform or shape. */
static void s_act (bmq_bounds_t *self, s_object_t *o, const char *op, const json_t *p, const json_t *pd)
{
    double v[3], r[3][3];
    if (!strcmp (op, "object.location")) s_vec (p, pd, "value", 0, o->loc);
    else if (!strcmp (op, "object.rotation")) { s_vec (p, pd, "value", 0, v); s_euler (v, o->rot); }
    else if (!strcmp (op, "object.scale")) s_vec (p, pd, "value", 1, o->scale);
    else if (!strcmp (op, "bpy.ops.transform.translate")) {
        s_vec (p, pd, "value", 0, v);
        for (int a = 0; a < 3; a++) o->loc[a] += v[a];
    }
    else if (!strcmp (op, "bpy.ops.transform.rotate")) {
        const char *axis = json_string_value (json_object_get (p, "orient_axis"));
        int a = axis && *axis >= 'X' && *axis <= 'Z' ? *axis - 'X' : 2;
        double e[3] = { 0, 0, 0 };
        e[a] = -s_num (p, pd, "value", 0);         /* Blender 3.4 turns by -value (measured, see the add-on) */
        s_euler (e, r);
        s_mul (r, o->rot, o->rot);
        if (a != 2) self->rotatable = false;
    }
    else if (!strcmp (op, "bpy.ops.transform.resize")) {
        s_vec (p, pd, "value", 1, v);
        bool even = fabs (v[0] - v[1]) < 1e-9 && fabs (v[1] - v[2]) < 1e-9;
        double most = fmax (fabs (v[0]), fmax (fabs (v[1]), fabs (v[2])));
        for (int a = 0; a < 3; a++) o->scale[a] *= even ? v[0] : most;     /* uneven on a turned object: generous */
        if (!even) self->rotatable = false;
    }
    else if (!strcmp (op, "object.modifier") || !strcmp (op, "bpy.ops.object.modifier_add")) s_modifier (o, op, p, pd);
}

static void s_world (const s_object_t *o, bmq_box_t *box)
{
    for (int a = 0; a < 3; a++) { box->min[a] = INFINITY; box->max[a] = -INFINITY; }
    for (int c = 0; c < 8; c++) {
        double corner[3], w[3];
        for (int a = 0; a < 3; a++) corner[a] = o->local[(c >> a) & 1][a] * o->scale[a];
        for (int a = 0; a < 3; a++) {
            w[a] = o->loc[a] + o->rot[a][0] * corner[0] + o->rot[a][1] * corner[1] + o->rot[a][2] * corner[2];
            box->min[a] = fmin (box->min[a], w[a]);
            box->max[a] = fmax (box->max[a], w[a]);
        }
    }
}

/* ---- the plan ------------------------------------------------------------------------ */

bmq_bounds_t *bmq_bounds_new (const json_t *steps, const json_t *described)
{
    bmq_bounds_t *self = calloc (1, sizeof *self);
    size_t n = json_array_size (steps);
    json_t *names = json_object ();                     /* name → index into objects */
    if (self) self->objects = calloc (n < S_MAX_OBJECTS ? n + 1 : S_MAX_OBJECTS, sizeof *self->objects);
    if (!self || !self->objects || !names) {
        json_decref (names);
        bmq_bounds_destroy (&self);
        return NULL;
    }
    self->rotatable = true;
    json_t *ops = json_object_get (described, "operations");
    s_object_t *current = NULL;
    size_t i;
    json_t *step;
    json_array_foreach (steps, i, step) {
        const char *op = json_string_value (json_object_get (step, "operation"));
        const char *name = json_string_value (json_object_get (step, "name"));
        const char *target = json_string_value (json_object_get (step, "target"));
        json_t *entry = json_object_get (ops, op ? op : "");
        json_t *pd = json_object_get (entry, "params"), *p = json_object_get (step, "params");
        if (!op || !entry) continue;
        s_object_t *acted = current;
        if (target) {
            json_t *idx = json_object_get (names, target);
            acted = idx ? &self->objects[json_integer_value (idx)] : NULL;
        }
        bool import = !strcmp (op, "asset.import");
        const char *kind = import ? json_string_value (json_object_get (p, "type")) : NULL;
        if (import && (!kind || strcmp (kind, "model"))) continue;     /* a texture paints its target, an hdri the world */
        if (json_is_true (json_object_get (entry, "creates"))) {
            bool copy = !import && json_is_true (json_object_get (entry, "acts_on"));     /* a model is new, of no known size */
            s_object_t *o = s_create (self, op, p, pd, copy ? acted : NULL);
            if (!o) break;
            if (name) json_object_set_new (names, name, json_integer ((json_int_t) (o - self->objects)));
            current = o;
        }
        else if (acted && json_is_true (json_object_get (entry, "deletes"))) {
            acted->alive = false;
            if (acted == current) current = NULL;
        }
        else if (acted) {
            s_act (self, acted, op, p, pd);
            current = acted;
        }
    }
    json_decref (names);
    self->boxes = calloc (self->count + 1, sizeof *self->boxes);
    if (!self->boxes) { bmq_bounds_destroy (&self); return NULL; }
    for (size_t k = 0; k < self->count; k++)
        if (self->objects[k].shape && self->objects[k].alive) s_world (&self->objects[k], &self->boxes[self->box_count++]);
    return self;
}

void bmq_bounds_destroy (bmq_bounds_t **self_p)
{
    if (!self_p || !*self_p) return;
    free ((*self_p)->objects);
    free ((*self_p)->boxes);
    free (*self_p);
    *self_p = NULL;
}

bool bmq_bounds_total (const bmq_bounds_t *self, bmq_box_t *box)
{
    memset (box, 0, sizeof *box);
    if (!self || self->box_count == 0) return false;
    *box = self->boxes[0];
    for (size_t k = 1; k < self->box_count; k++)
        for (int a = 0; a < 3; a++) {
            box->min[a] = fmin (box->min[a], self->boxes[k].min[a]);
            box->max[a] = fmax (box->max[a], self->boxes[k].max[a]);
        }
    return true;
}

size_t bmq_bounds_count (const bmq_bounds_t *self)
{
    return self ? self->box_count : 0;
}

const bmq_box_t *bmq_bounds_box (const bmq_bounds_t *self, size_t i)
{
    return self && i < self->box_count ? &self->boxes[i] : NULL;
}

bool bmq_bounds_rotatable (const bmq_bounds_t *self)
{
    return self && self->rotatable;
}

bool bmq_bounds_support (const bmq_bounds_t *self, double x, double y, bmq_box_t *surface)
{
    const bmq_box_t *best = NULL;
    for (size_t k = 0; self && k < self->box_count; k++) {
        const bmq_box_t *b = &self->boxes[k];
        if (x >= b->min[0] - 1e-9 && x <= b->max[0] + 1e-9 && y >= b->min[1] - 1e-9 && y <= b->max[1] + 1e-9
            && (!best || b->max[2] > best->max[2]))
            best = b;
    }
    if (best) *surface = *best;
    return best != NULL;
}
