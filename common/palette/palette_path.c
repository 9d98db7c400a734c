/* palette_path — property paths as the seeds write them (issue 27):
 *
 *   object[.active].<path>[.<component>][.<verb>]     scene.<path>[.<component>][.<verb>]
 *
 * <path> is a template of the palette (an operation with `path: true`, e.g.
 * object.location, object.data.energy, object.modifiers[].width,
 * scene.render.resolution_x) with each [] written as ["Name"] or [N];
 * <component> is x|y|z|w, r|g|b|a or 0..3 of a vec3 or color; <verb> is set
 * (the default), add or mul. The rules for each form's value are in palette.h.
 *
 * Deny rules (load and resolve alike): a segment that starts with '_' or holds
 * "__", and the names that reach files, code, drivers, handlers or Blender's
 * RNA internals (S_DENIED), are refused with a reason that says so, whatever
 * the palette lists. The add-on restates them (prop_paths.py) against the
 * live RNA. */
#include "palette_internal.h"
#include "verdict_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_PATH      200
#define S_MAX_SEGMENTS  12
#define S_MAX_KEY       63

static const char *S_DENIED[] = {
    "filepath", "filepath_raw", "filepath_python", "directory", "filename", "library", "library_weak_reference",
    "override_library", "bl_rna", "rna_type", "id_data", "driver", "drivers", "driver_add", "driver_remove",
    "handlers", "animation_data", "animation_data_create", "script", "scripts", "text", "texts", "python",
    "original", "evaluated_get", "users", "use_fake_user", "session_uid", "asset_data", "preview",
    "node_tree", "use_autopack", "is_dirty", "use_scripts_auto_execute", "keying_sets", "view_layers",
    NULL
};

static const char *S_COMPONENTS = "xyzw";
static const char *S_CHANNELS = "rgba";

static bool s_word_char (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* NULL when the segment may be walked, else why not. */
static const char *s_denied (const char *seg, size_t len)
{
    if (len == 0) return "an empty segment";
    if (seg[0] == '_' || memmem (seg, len, "__", 2)) return "a name starting with '_' or holding '__' (Python and RNA internals)";
    for (const char **d = S_DENIED; *d; d++)
        if (strlen (*d) == len && !memcmp (*d, seg, len))
            return "a property that reaches files, code, drivers, handlers or Blender's RNA internals";
    if (len >= 8 && memmem (seg, len, "filepath", 8)) return "a file path";
    return NULL;
}

static bool s_reserved (const char *seg, size_t len)
{
    static const char *words[] = { "set", "add", "mul", "active", "x", "y", "z", "w", "r", "g", "b", "a", NULL };
    if (len == 1 && seg[0] >= '0' && seg[0] <= '9') return true;
    for (const char **w = words; *w; w++)
        if (strlen (*w) == len && !memcmp (*w, seg, len)) return true;
    return false;
}

bool palette_path_name_ok (const char *name)
{
    size_t n = strlen (name);
    const char *s;
    if (!strncmp (name, "object.", 7)) s = name + 7;
    else if (!strncmp (name, "scene.", 6)) s = name + 6;
    else return false;
    if (n > S_MAX_PATH) return false;
    size_t segs = 0;
    while (*s) {
        const char *start = s;
        if (!(*s >= 'a' && *s <= 'z') && *s != '_') return false;
        while (s_word_char (*s)) s++;
        size_t len = (size_t) (s - start);
        if (s_denied (start, len) || (segs == 0 && len == 6 && !memcmp (start, "active", 6))) return false;
        if (++segs > S_MAX_SEGMENTS) return false;
        if (s[0] == '[') {
            if (s[1] != ']') return false;
            s += 2;
        }
        if (!*s) return !s_reserved (start, len);
        if (*s != '.' || !s[1]) return false;
        s++;
    }
    return false;
}

/* ---- the forms' values -------------------------------------------------------- */

static int s_derive (bmq_palette_param_t *d, const bmq_palette_param_t *base, palette_type_t type, double lo, double hi)
{
    memset (d, 0, sizeof *d);
    if (!(d->name = strdup ("value"))) return -1;
    d->type = type;
    d->required = true;
    d->min = lo;
    d->max = hi;
    d->imin = (long long) lo;
    d->imax = (long long) hi;
    (void) base;
    return 0;
}

int palette_path_load (bmq_palette_op_t *op, char *err, size_t errlen)
{
    if (!palette_path_name_ok (op->name))
        return palette_fail (err, errlen, "operation '%s': a path must be object.<path> or scene.<path> of lower-case"
                             " segments (each may end in []), none of them denied (files, code, drivers, handlers, RNA"
                             " internals, '_' names) nor a component or verb word", op->name);
    bool object = !strncmp (op->name, "object.", 7);
    if (object != op->acts_on || op->creates || op->deletes)
        return palette_fail (err, errlen, "operation '%s': an object path acts_on object, a scene path on none; a path"
                             " neither creates nor deletes", op->name);
    const bmq_palette_param_t *v = op->param_count == 1 ? &op->params[0] : NULL;
    if (!v || strcmp (v->name, "value") || !v->required)
        return palette_fail (err, errlen, "operation '%s': a path has exactly one parameter, value, required", op->name);
    if (op->cost_len || op->mult_len) return palette_fail (err, errlen, "operation '%s': a path has no cost", op->name);
    op->path = true;
    op->path_array = v->type == PALETTE_VEC3 || v->type == PALETTE_COLOR;
    double span = v->type == PALETTE_INT ? (double) (v->imax - v->imin) : v->max - v->min;
    palette_type_t whole = v->type;
    int rc = 0;
    /* component set; add (whole, component); mul (whole, component) */
    rc |= s_derive (&op->derived[0], v, PALETTE_FLOAT, v->min, v->max);
    rc |= s_derive (&op->derived[1], v, whole, -span, span);
    rc |= s_derive (&op->derived[2], v, PALETTE_FLOAT, -span, span);
    rc |= s_derive (&op->derived[3], v, whole == PALETTE_INT ? PALETTE_FLOAT : whole, -BMQ_PALETTE_PATH_MUL_MAX,
                    BMQ_PALETTE_PATH_MUL_MAX);
    rc |= s_derive (&op->derived[4], v, PALETTE_FLOAT, -BMQ_PALETTE_PATH_MUL_MAX, BMQ_PALETTE_PATH_MUL_MAX);
    if (v->type == PALETTE_INT) {
        op->derived[1].imin = -(long long) span;
        op->derived[1].imax = (long long) span;
    }
    return rc ? palette_fail (err, errlen, "out of memory") : 0;
}

bool bmq_palette_op_is_path (const bmq_palette_op_t *op) { return op && op->path; }

/* ---- resolving a step's operation ------------------------------------------------ */

static int s_component (const char *seg, size_t len)
{
    if (len != 1) return -1;
    const char *p = strchr (S_COMPONENTS, seg[0]);
    if (p && seg[0]) return (int) (p - S_COMPONENTS);
    p = strchr (S_CHANNELS, seg[0]);
    if (p && seg[0]) return (int) (p - S_CHANNELS);
    if (seg[0] >= '0' && seg[0] <= '3') return seg[0] - '0';
    return -1;
}

/* A subscript's content: "Name" / 'Name' (object-name characters) or an index. */
static bool s_key_ok (const char *s, size_t len)
{
    if (len >= 3 && (s[0] == '"' || s[0] == '\'') && s[len - 1] == s[0]) {
        if (len - 2 > S_MAX_KEY) return false;
        for (size_t i = 1; i + 1 < len; i++) {
            char c = s[i];
            bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
            if (!word && (i == 1 || (c != '.' && c != ' ' && c != '-'))) return false;
        }
        return true;
    }
    if (len < 1 || len > 3) return false;
    for (size_t i = 0; i < len; i++) if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

int bmq_palette_path_resolve (const bmq_palette_t *palette, const char *name, size_t len, bmq_palette_path_t *out,
                              char *reason, size_t rlen)
{
    memset (out, 0, sizeof *out);
    out->component = -1;
    size_t root;
    if (len >= 7 && !memcmp (name, "object.", 7)) root = 7;
    else if (len >= 6 && !memcmp (name, "scene.", 6)) root = 6;
    else return 0;
    if (len > S_MAX_PATH) return palette_fail (reason, rlen, "a property path is at most %d bytes", S_MAX_PATH);
    /* the template: the name with object.active. made object., subscripts made [] */
    char tmpl[S_MAX_PATH + 1];
    size_t t = 0;
    memcpy (tmpl, name, root);
    t = root;
    size_t i = root;
    if (root == 7 && len >= 14 && !memcmp (name + 7, "active.", 7)) { out->active = true; i = 14; }
    const char *segs[S_MAX_SEGMENTS + 3];
    size_t seglen[S_MAX_SEGMENTS + 3], nseg = 0;
    while (i < len) {
        size_t start = i;
        while (i < len && s_word_char (name[i])) i++;
        if (i == start || (name[start] >= '0' && name[start] <= '9' && i - start > 1)) {
            char c[48];
            return palette_fail (reason, rlen, "property path '%s' is not object[.active].<path>[.x|y|z|w][.set|add|mul]"
                                 " of lower-case names", bmq_verdict_clip (c, sizeof c, name, len));
        }
        const char *why = s_denied (name + start, i - start);
        if (why) {
            char c[48];
            return palette_fail (reason, rlen, "property path refused at '%s': %s",
                                 bmq_verdict_clip (c, sizeof c, name + start, i - start), why);
        }
        if (nseg == S_MAX_SEGMENTS + 2) return palette_fail (reason, rlen, "a property path has at most %d segments", S_MAX_SEGMENTS);
        segs[nseg] = tmpl + t;
        seglen[nseg++] = i - start;
        memcpy (tmpl + t, name + start, i - start);
        t += i - start;
        if (i < len && name[i] == '[') {
            const char *close = memchr (name + i, ']', len - i);
            if (!close || !s_key_ok (name + i + 1, (size_t) (close - name) - i - 1))
                return palette_fail (reason, rlen, "a subscript is [\"Name\"] (a name of 1 to %d letters, digits, '_',"
                                     " '.', ' ', '-') or [N] (0..999)", S_MAX_KEY);
            tmpl[t++] = '[';
            tmpl[t++] = ']';
            out->subscripts++;
            i = (size_t) (close - name) + 1;
        }
        if (i < len) {
            if (name[i] != '.' || i + 1 == len) {
                char c[48];
                return palette_fail (reason, rlen, "property path '%s' is not object[.active].<path>[.x|y|z|w][.set|add|mul]",
                                     bmq_verdict_clip (c, sizeof c, name, len));
            }
            tmpl[t++] = '.';
            i++;
        }
    }
    tmpl[t] = 0;
    /* peel the verb, then the component, off the end */
    size_t end = t;
    if (nseg > 1) {
        const char *last = segs[nseg - 1];
        size_t l = seglen[nseg - 1];
        bool sub = last + l < tmpl + t;     /* a [] after it: not a verb */
        if (!sub && l == 3 && (!memcmp (last, "set", 3) || !memcmp (last, "add", 3) || !memcmp (last, "mul", 3))) {
            out->verb = last[0] == 's' ? BMQ_PALETTE_PATH_SET : last[0] == 'a' ? BMQ_PALETTE_PATH_ADD : BMQ_PALETTE_PATH_MUL;
            end = (size_t) (last - tmpl) - 1;
            nseg--;
        }
    }
    const bmq_palette_op_t *op = bmq_palette_op (palette, tmpl, end);
    if (!(op && op->path) && nseg > 1) {
        const char *last = segs[nseg - 1];
        int c = s_component (last, seglen[nseg - 1]);
        if (c >= 0 && last + seglen[nseg - 1] == tmpl + end) {
            op = bmq_palette_op (palette, tmpl, (size_t) (last - tmpl) - 1);
            out->component = c;
            end = (size_t) (last - tmpl) - 1;
        }
    }
    char c[96];
    if (!op || !op->path)
        return palette_fail (reason, rlen, "property path %s is not in the capability palette (allowed paths are listed"
                             " with discover_capabilities)", bmq_verdict_clip (c, sizeof c, tmpl, end));
    const bmq_palette_param_t *v = &op->params[0];
    if (out->component >= 0) {
        int arity = v->type == PALETTE_VEC3 ? 3 : v->type == PALETTE_COLOR ? 4 : 0;
        if (out->component >= arity)
            return palette_fail (reason, rlen, "%s has %s", op->name, arity == 3 ? "components x, y, z only"
                                 : arity ? "components r, g, b, a only" : "no components (it is not a vector)");
    }
    if (out->verb != BMQ_PALETTE_PATH_SET && v->type != PALETTE_FLOAT && v->type != PALETTE_INT
        && v->type != PALETTE_VEC3 && v->type != PALETTE_COLOR)
        return palette_fail (reason, rlen, "%s is a %s: only set applies", op->name, palette_type_names[v->type]);
    int form = out->verb == BMQ_PALETTE_PATH_SET ? (out->component >= 0 ? 0 : -1)
             : out->verb == BMQ_PALETTE_PATH_ADD ? (out->component >= 0 ? 2 : 1) : (out->component >= 0 ? 4 : 3);
    out->op = op;
    out->value = form < 0 ? v : &op->derived[form];
    return 1;
}
