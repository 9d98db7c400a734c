/* plan_validator — whole-plan checking; see plan_validator.h for the rules. */
#include "verdict_text.h"
#include "plan_validator.h"
#include "plan_assets.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int step;
    size_t seq;             /* keeps errors on one field in the order found */
    char field[80];
    char reason[320];
} s_error_t;

/* The names created so far, as an open-addressing set of (pointer, length)
 * into the plan itself: no copies, no allocation per name. Sized for
 * max_steps names, so it never fills. Each remembers its object's vertex
 * estimate and the step that deleted it (0: alive). An object created
 * without a name lives in s_run_t.anon. */
typedef struct s_name_s s_name_t;
struct s_name_s {
    const char *key;
    size_t len;
    double vertices;
    int deleted_at;
    bool scene, shadowed;
    s_name_t *parent, *child, *sibling;     /* the tree object.parent steps make (issue 26) */
    double adopted;                         /* unnamed objects parented under it: their estimate */
};

typedef struct {
    const bmq_palette_t *palette;
    s_error_t *errors;
    size_t error_count, error_cap, omitted;
    s_name_t *names;
    size_t name_mask;
    bool have_current;      /* an object exists for an acts_on step without target */
    s_name_t *current;      /* that object (a name slot or &anon), NULL when unknown */
    s_name_t anon;          /* the latest object created without a usable name */
    double vertices;
    bool vertices_reported;
} s_run_t;

static const char *s_step_keys[] = { "operation", "params", "name", "target" };

static void s_error (s_run_t *run, int step, const char *field, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
static void s_error (s_run_t *run, int step, const char *field, const char *fmt, ...)
{
    if (run->error_count >= BMQ_PLAN_MAX_ERRORS) { run->omitted++; return; }
    if (run->error_count == run->error_cap) {     /* grown on demand: a valid plan allocates none */
        size_t cap = run->error_cap ? run->error_cap * 2 : 16;
        s_error_t *bigger = realloc (run->errors, cap * sizeof *bigger);
        if (!bigger) { run->omitted++; return; }
        run->errors = bigger;
        run->error_cap = cap;
    }
    s_error_t *e = &run->errors[run->error_count];
    e->step = step;
    e->seq = run->error_count++;
    snprintf (e->field, sizeof e->field, "%s", field);
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (e->reason, sizeof e->reason, fmt, ap);
    va_end (ap);
}


static const char *s_kind (const json_t *v)
{
    switch (json_typeof (v)) {
    case JSON_OBJECT:  return "an object";
    case JSON_ARRAY:   return "a list";
    case JSON_STRING:  return "a string";
    case JSON_INTEGER:
    case JSON_REAL:    return "a number";
    case JSON_TRUE:
    case JSON_FALSE:   return "a boolean";
    default:           return "null";
    }
}

/* ---- the name set --------------------------------------------------------- */

static size_t s_hash (const char *key, size_t len)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char) key[i]) * 1099511628211ull;
    return (size_t) (h ^ (h >> 29));
}

static s_name_t *s_name_slot (s_run_t *run, const char *key, size_t len)
{
    size_t i = s_hash (key, len) & run->name_mask;
    while (run->names[i].key && !(run->names[i].len == len && !memcmp (run->names[i].key, key, len)))
        i = (i + 1) & run->name_mask;
    return &run->names[i];
}

/* ^[A-Za-z0-9_][A-Za-z0-9_. -]{0,max-1}$ — safe as a Blender ID name, in a log
 * line and in a shell-free command line. */
static bool s_name_ok (const char *s, size_t len, size_t max)
{
    if (len == 0 || len > max) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!word && (i == 0 || (c != '.' && c != ' ' && c != '-'))) return false;
    }
    return true;
}

/* ---- the tree object.parent steps make ------------------------------------- */

static void s_unlink (s_name_t *n)
{
    if (!n->parent) return;
    s_name_t **at = &n->parent->child;
    while (*at && *at != n) at = &(*at)->sibling;
    if (*at) *at = n->sibling;
    n->parent = n->sibling = NULL;
}

/* n's children lose their parent (its name now means a new object). */
static void s_detach (s_name_t *n)
{
    s_unlink (n);
    for (s_name_t *k = n->child, *next; k; k = next) {
        next = k->sibling;
        k->parent = k->sibling = NULL;
    }
    n->child = NULL;
    n->adopted = 0;
}

static void s_link (s_name_t *n, s_name_t *parent)
{
    s_unlink (n);
    n->parent = parent;
    n->sibling = parent->child;
    parent->child = n;
}

/* The estimate of root and everything under it (a deleted object's own
 * vertices are gone, what hung under it is still counted: an upper bound);
 * *scene is set to the first object in it that came from the scene. Each
 * slot is visited once: the tree has no cycles (s_parent refuses them). */
static double s_tree_vertices (const s_run_t *run, s_name_t *root, const s_name_t **scene)
{
    double sum = 0;
    size_t guard = 0, limit = run->name_mask + 2;
    for (s_name_t *n = root; n && guard++ < limit;) {
        if (n->scene && !*scene) *scene = n;
        sum += (n->deleted_at ? 0 : n->vertices) + n->adopted;
        if (n->child) { n = n->child; continue; }
        while (n != root && !n->sibling) n = n->parent;
        if (n == root) break;
        n = n->sibling;
    }
    return sum;
}

/* object.parent: the target goes under params.parent when both are known
 * objects (an unknown parent is left to the add-on, which refuses it). */
static void s_parent (s_run_t *run, int i, s_name_t *acted, const json_t *params)
{
    const json_t *pv = json_object_get (params, "parent");
    if (!acted || !json_is_string (pv)) return;     /* a bad type is reported by s_check_params */
    s_name_t *to = s_name_slot (run, json_string_value (pv), json_string_length (pv));
    if (!to->key || to->deleted_at) return;
    if (acted == &run->anon) { to->adopted += acted->vertices; return; }
    size_t guard = 0, limit = run->name_mask + 2;
    for (s_name_t *w = to; w && guard++ < limit; w = w->parent)
        if (w == acted) {
            char a[80], b[80];
            bmq_verdict_clip (a, sizeof a, acted->key, acted->len);
            bmq_verdict_clip (b, sizeof b, to->key, to->len);
            s_error (run, i, "params.parent", "parenting '%s' to '%s' would make a cycle ('%s' is '%s' or under it)",
                     a, b, b, a);
            return;
        }
    s_link (acted, to);
}

/* ---- one step --------------------------------------------------------------- */

static void s_check_keys (s_run_t *run, int i, const json_t *step)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) step, key, v) {
        size_t len = json_object_iter_key_len (json_object_key_to_iter (key)), k;
        for (k = 0; k < 4; k++)
            if (len == strlen (s_step_keys[k]) && !memcmp (key, s_step_keys[k], len)) break;
        if (k < 4) continue;
        char clipped[48];
        bmq_verdict_clip (clipped, sizeof clipped, key, len);
        s_error (run, i, clipped, "unknown step key '%s'; a step has only operation, params, name and target", clipped);
    }
}

static void s_check_params (s_run_t *run, int i, const bmq_palette_op_t *op, const json_t *params)
{
    const char *opname = bmq_palette_op_name (op);
    if (params && !json_is_object (params)) {
        s_error (run, i, "params", "params must be an object, got %s", s_kind (params));
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) params, key, v) {
        size_t len = json_object_iter_key_len (json_object_key_to_iter (key));
        const bmq_palette_param_t *p = bmq_palette_op_param (op, key, len);
        char reason[256];
        if (p && bmq_palette_param_check (p, v, reason, sizeof reason) == 0)
            continue;                   /* the common case: nothing to format */
        char clipped[48], field[64];
        bmq_verdict_clip (clipped, sizeof clipped, key, len);
        snprintf (field, sizeof field, "params.%s", clipped);
        if (!p)
            s_error (run, i, field, "unknown parameter '%s' for %s (allowed: %s)", clipped, opname,
                     bmq_palette_op_param_list (op));
        else
            s_error (run, i, field, "%s", reason);
    }
    for (size_t k = 0; k < bmq_palette_op_param_count (op); k++) {
        const bmq_palette_param_t *p = bmq_palette_op_param_at (op, k);
        if (bmq_palette_param_required (p) && !json_object_get (params, bmq_palette_param_name (p))) {
            char field[160];
            snprintf (field, sizeof field, "params.%s", bmq_palette_param_name (p));
            s_error (run, i, field, "required parameter '%s' of %s is missing", bmq_palette_param_name (p), opname);
        }
    }
}

/* A property path in one of its forms: params is {"value": …} as the form wants. */
static void s_check_path_params (s_run_t *run, int i, const bmq_palette_op_t *op, const bmq_palette_param_t *value,
                                 const json_t *params)
{
    if (params && !json_is_object (params)) {
        s_error (run, i, "params", "params must be an object, got %s", s_kind (params));
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) params, key, v) {
        size_t len = json_object_iter_key_len (json_object_key_to_iter (key));
        if (len == 5 && !memcmp (key, "value", 5)) continue;
        char clipped[48], field[64];
        bmq_verdict_clip (clipped, sizeof clipped, key, len);
        snprintf (field, sizeof field, "params.%s", clipped);
        s_error (run, i, field, "unknown parameter '%s' for property path %s (allowed: value)", clipped, bmq_palette_op_name (op));
    }
    json_t *given = json_object_get (params, "value");
    char reason[256];
    if (!given)
        s_error (run, i, "params.value", "required parameter 'value' of property path %s is missing", bmq_palette_op_name (op));
    else if (bmq_palette_param_check (value, given, reason, sizeof reason))
        s_error (run, i, "params.value", "%s", reason);
}

/* A name is remembered when the step creates an object (or when its operation
 * is unknown, so one bad step does not make every later target fail too). */
static s_name_t *s_check_name (s_run_t *run, int i, const bmq_palette_op_t *op, bool op_known, const json_t *name)
{
    if (!name) return NULL;
    if (!json_is_string (name)) {
        s_error (run, i, "name", "name must be a string, got %s", s_kind (name));
        return NULL;
    }
    const char *s = json_string_value (name);
    size_t len = json_string_length (name);
    char clipped[80];
    bmq_verdict_clip (clipped, sizeof clipped, s, len);
    int max = bmq_palette_max_name_len (run->palette);
    if (op_known && !bmq_palette_op_creates (op)) {
        s_error (run, i, "name", "%s creates no object, so it cannot name one; use target to act on '%s'",
                 bmq_palette_op_name (op), clipped);
        return NULL;
    }
    if (!s_name_ok (s, len, (size_t) max)) {
        s_error (run, i, "name", "name '%s' is not valid: 1 to %d characters, letters, digits, '_', then also"
                 " '.', ' ' or '-'", clipped, max);
        return NULL;
    }
    s_name_t *slot = s_name_slot (run, s, len);
    if (slot->key && slot->scene && !slot->shadowed) {
        /* Blender will call the new object "name.001"; the executor maps the
         * plan's later targets of this name to it, so within the plan the name
         * means the new object */
        slot->shadowed = true;
        slot->scene = false;
        slot->vertices = 0;
        s_detach (slot);
        return slot;
    }
    if (slot->key) {
        s_error (run, i, "name", "name '%s' is already used by an earlier step", clipped);
        return NULL;
    }
    *slot = (s_name_t) { .key = s, .len = len };
    return slot;
}

/* The object the step acts on (a name slot, &anon), or NULL. */
static s_name_t *s_check_target (s_run_t *run, int i, const bmq_palette_op_t *op, const json_t *target)
{
    bool acts = bmq_palette_op_acts_on (op);
    if (!target) {
        if (acts && bmq_palette_op_needs_target (op))
            s_error (run, i, "target", "%s needs a target: the name of the object it acts on, given by an earlier step",
                     bmq_palette_op_name (op));
        else if (acts && !run->have_current)
            s_error (run, i, "target", "%s acts on an object: give a target, or create an object in an earlier step",
                     bmq_palette_op_name (op));
        return acts && !bmq_palette_op_needs_target (op) && run->have_current ? run->current : NULL;
    }
    if (!json_is_string (target)) {
        s_error (run, i, "target", "target must be a string, got %s", s_kind (target));
        return NULL;
    }
    char clipped[80];
    size_t len = json_string_length (target);
    bmq_verdict_clip (clipped, sizeof clipped, json_string_value (target), len);
    s_name_t *slot = acts ? s_name_slot (run, json_string_value (target), len) : NULL;
    if (!acts)
        s_error (run, i, "target", "%s %s", bmq_palette_op_name (op), bmq_palette_op_creates (op)
                 ? "creates a new object and takes no target" : "acts on the scene and takes no target");
    else if (!slot->key)
        s_error (run, i, "target", "target '%s' is not the name of an object created by an earlier step or already in the scene", clipped);
    else if (slot->deleted_at)
        s_error (run, i, "target", "target '%s' was deleted by step %d", clipped, slot->deleted_at - 1);
    else {
        run->have_current = true;
        run->current = slot;
        return slot;
    }
    return NULL;
}

/* Vertex estimates and the current object after step i. A creating step adds
 * its object (a copy of its target's vertices too, for a duplicate; of its
 * target's whole tree for BMQ_PLAN_TREE_COPY, refused when the tree holds a
 * scene object, whose size is unknown); a copy stays under its target's
 * parent, as in Blender; a multiplying step scales its object's estimate and
 * the plan's total; a deleting step ends its object (the total keeps it: an
 * upper bound). */
static void s_account (s_run_t *run, int i, const bmq_palette_op_t *op, const json_t *params,
                       s_name_t *acted, s_name_t *named)
{
    bool tree = op && !strcmp (bmq_palette_op_name (op), BMQ_PLAN_TREE_COPY);
    bool copy = op && bmq_palette_op_creates (op) && bmq_palette_op_acts_on (op)
             && strcmp (bmq_palette_op_name (op), BMQ_ASSET_OPERATION);
    if (op && bmq_palette_op_deletes (op)) {
        if (acted) acted->deleted_at = i + 1;
        if (!acted || acted == run->current) { run->have_current = false; run->current = NULL; }
        return;
    }
    if (op && acted && !bmq_palette_op_creates (op)) {
        double f = bmq_palette_op_multiplier (op, params);
        if (f != 1) {
            run->vertices += acted->vertices * (f - 1);
            acted->vertices *= f;
        }
    }
    if (!op || bmq_palette_op_creates (op)) {
        double v = bmq_palette_op_vertices (op, params);
        const s_name_t *scene = NULL;
        if (tree && acted) {
            v += s_tree_vertices (run, acted, &scene);
            if (scene) {
                char a[80], b[80];
                bmq_verdict_clip (a, sizeof a, acted->key, acted->len);
                bmq_verdict_clip (b, sizeof b, scene->key, scene->len);
                if (scene == acted)
                    s_error (run, i, "target", "%s copies only objects this plan built: '%s' was already in the scene,"
                             " so the size of its tree is unknown here", BMQ_PLAN_TREE_COPY, a);
                else
                    s_error (run, i, "target", "%s copies only objects this plan built: '%s' under '%s' was already in"
                             " the scene, so its size is unknown here", BMQ_PLAN_TREE_COPY, b, a);
            }
        }
        else if (op && bmq_palette_op_acts_on (op) && acted) v += acted->vertices;
        run->vertices += v;
        s_name_t *obj = named ? named : &run->anon;
        obj->vertices = v;
        obj->deleted_at = 0;
        if (copy && acted && acted->parent && acted->parent != obj) {
            if (obj == &run->anon) acted->parent->adopted += v;
            else if (!obj->child) s_link (obj, acted->parent);
        }
        run->current = obj;
        run->have_current = true;
    }
}

/* asset.import: plan_assets.h's table */
static void s_check_asset (s_run_t *run, int i, const json_t *step)
{
    json_t *errors = json_array ();
    bmq_plan_check_asset (step, errors);
    size_t k;
    json_t *e;
    json_array_foreach (errors, k, e)
        s_error (run, i, json_string_value (json_object_get (e, "field")), "%s", json_string_value (json_object_get (e, "reason")));
    json_decref (errors);
}

static void s_check_step (s_run_t *run, int i, const json_t *step)
{
    if (!json_is_object (step)) {
        s_error (run, i, "step", "a step must be an object with an operation, got %s", s_kind (step));
        return;
    }
    s_check_keys (run, i, step);
    const json_t *opv = json_object_get (step, "operation");
    const bmq_palette_op_t *op = NULL;
    const bmq_palette_param_t *value = NULL;   /* a property path's form (object.location.z.add) */
    if (!opv)
        s_error (run, i, "operation", "operation is missing");
    else if (!json_is_string (opv))
        s_error (run, i, "operation", "operation must be a string, got %s", s_kind (opv));
    else if (!(op = bmq_palette_op (run->palette, json_string_value (opv), json_string_length (opv)))) {
        char clipped[96], reason[320];
        bmq_palette_path_t path;
        int rc = bmq_palette_path_resolve (run->palette, json_string_value (opv), json_string_length (opv), &path,
                                           reason, sizeof reason);
        bmq_verdict_clip (clipped, sizeof clipped, json_string_value (opv), json_string_length (opv));
        if (rc > 0) { op = path.op; value = path.value; }
        else if (rc < 0) s_error (run, i, "operation", "%s", reason);
        else s_error (run, i, "operation", "operation %s is not in the capability palette", clipped);
    }
    const json_t *params = json_object_get (step, "params");
    if (json_is_null (params)) params = NULL;
    if (value) s_check_path_params (run, i, op, value, params);
    else if (op) s_check_params (run, i, op, params);
    /* target before name: a step must not target the name it gives itself */
    bool asset = op && !strcmp (bmq_palette_op_name (op), BMQ_ASSET_OPERATION);
    if (asset) s_check_asset (run, i, step);
    /* an asset's kind says whether it targets (texture) or names (model): checked above */
    s_name_t *acted = op && (!asset || json_object_get (step, "target"))
                    ? s_check_target (run, i, op, json_object_get (step, "target")) : NULL;
    s_name_t *named = s_check_name (run, i, op, op != NULL, json_object_get (step, "name"));
    s_account (run, i, op, params, acted, named);
    if (op && acted && !strcmp (bmq_palette_op_name (op), "object.parent") && json_is_object (params))
        s_parent (run, i, acted, params);

    if (run->vertices > bmq_palette_max_vertices (run->palette) && !run->vertices_reported) {
        run->vertices_reported = true;
        s_error (run, i, "vertices", "the plan's estimated vertex count reaches %.0f at this step, over the"
                 " limit of %.0f; use fewer segments or subdivisions", run->vertices,
                 bmq_palette_max_vertices (run->palette));
    }
}

/* ---- the verdict ------------------------------------------------------------ */

static int s_error_cmp (const void *a, const void *b)
{
    const s_error_t *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    int c = strcmp (x->field, y->field);
    if (c) return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static json_t *s_verdict (s_run_t *run, size_t steps)
{
    if (run->error_count > 1) qsort (run->errors, run->error_count, sizeof *run->errors, s_error_cmp);
    json_t *errors = json_array ();
    for (size_t k = 0; errors && k < run->error_count; k++) {
        const s_error_t *e = &run->errors[k];
        json_array_append_new (errors, json_pack ("{s:i, s:s, s:s}", "step", e->step, "field", e->field,
                                                  "reason", e->reason));
    }
    json_t *verdict = json_pack ("{s:b, s:I, s:o}", "accepted", run->error_count == 0 && run->omitted == 0,
                                 "steps", (json_int_t) steps, "errors", errors);
    if (verdict && run->omitted)
        json_object_set_new (verdict, "errors_omitted", json_integer ((json_int_t) run->omitted));
    return verdict;
}

json_t *bmq_plan_validate (const bmq_palette_t *palette, const json_t *plan)
{
    return bmq_plan_validate_in_scene (palette, plan, NULL);
}

json_t *bmq_plan_validate_in_scene (const bmq_palette_t *palette, const json_t *plan, const json_t *scene_objects)
{
    s_run_t run = { .palette = palette };
    size_t scene = json_is_array (scene_objects) ? json_array_size (scene_objects) : 0;
    if (scene > BMQ_PLAN_MAX_SCENE_OBJECTS) scene = BMQ_PLAN_MAX_SCENE_OBJECTS;
    size_t steps = json_is_array (plan) ? json_array_size (plan) : 0;
    if (!palette)
        s_error (&run, -1, "plan", "no capability palette is loaded");
    else if (!json_is_array (plan))
        s_error (&run, -1, "plan", "a plan must be a list of steps, got %s", plan ? s_kind (plan) : "nothing");
    else {
        size_t max = (size_t) bmq_palette_max_steps (palette), examined = steps < max ? steps : max;
        if (steps == 0)
            s_error (&run, -1, "plan", "the plan has no steps");
        if (steps > max)
            s_error (&run, -1, "plan", "the plan has %zu steps; at most %zu are allowed (only the first %zu were"
                     " checked)", steps, max, max);
        size_t cap = 8;
        while (cap < (examined + scene) * 2) cap <<= 1;
        run.names = calloc (cap, sizeof *run.names);
        run.name_mask = cap - 1;
        if (!run.names) return NULL;
        /* objects already in the scene may be targeted (their vertex count is not
         * known here: counted as 0) and their names may not be given again */
        for (size_t k = 0; k < scene; k++) {
            json_t *n = json_array_get (scene_objects, k);
            if (!json_is_string (n) || !json_string_length (n)) continue;
            s_name_t *slot = s_name_slot (&run, json_string_value (n), json_string_length (n));
            if (!slot->key) *slot = (s_name_t) { .key = json_string_value (n), .len = json_string_length (n), .scene = true };
        }
        for (size_t i = 0; i < examined; i++)
            s_check_step (&run, (int) i, json_array_get (plan, i));
    }
    json_t *verdict = s_verdict (&run, steps);
    free (run.names);
    free (run.errors);
    return verdict;
}
