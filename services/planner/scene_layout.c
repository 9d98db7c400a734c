/* scene_layout — boxes placed by relations; see scene_layout.h for the rules. */
#include "scene_layout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_EPS 1e-6

typedef struct {
    int    part;
    double pos[3], theta;
} s_inst_t;

typedef struct {
    size_t *m;
    size_t  n, cap;
    double  lo[2], hi[2];           /* the footprint of all members */
    bool    rotatable;
    double  front;                  /* where its first copy looks (radians), NAN: nowhere in particular */
    bool    seat;                   /* its first copy turns to face what it stands beside */
} s_cluster_t;

typedef struct {
    const bmq_layout_part_t *parts;
    size_t     np;
    s_inst_t  *inst;
    size_t    *first;               /* the index of each part's first copy */
    bmq_box_t *box;                 /* each part's box in recipe coordinates */
    bmq_rel_t *rel;                 /* the relation each part gets in the end */
    bool      *grouped;             /* placed inside a "between" row */
    json_t    *notes;
    bool       oom;
} s_layout_t;

/* A part's box in recipe coordinates; a plan with nothing solid stands in as a 10 cm cube on the ground. */
static void s_part_box (const bmq_layout_part_t *part, bmq_box_t *b)
{
    if (bmq_bounds_total (part->bounds, b)) return;
    for (int a = 0; a < 3; a++) {
        b->min[a] = a == 2 ? 0 : -0.05;
        b->max[a] = a == 2 ? 0.1 : 0.05;
    }
}

/* A recipe's name as words ("traffic_cone" → "traffic cone"), plural on request ("benches"). */
static void s_words_of (const char *name, char *out, size_t outlen, bool plural)
{
    size_t n = (size_t) snprintf (out, outlen, "%s", name ? name : "?");
    for (char *c = out; *c; c++) if (*c == '_') *c = ' ';
    if (!plural || n >= outlen) return;
    bool es = n > 0 && (out[n - 1] == 's' || out[n - 1] == 'x' || (n > 1 && out[n - 1] == 'h' && strchr ("cs", out[n - 2])));
    snprintf (out + n, outlen - n, "%s", es ? "es" : "s");
}

/* ---- clusters ---------------------------------------------------------------------- */

static void s_footprint (const bmq_box_t *b, const s_inst_t *in, double lo[2], double hi[2])
{
    double c = cos (in->theta), s = sin (in->theta);
    lo[0] = lo[1] = INFINITY;
    hi[0] = hi[1] = -INFINITY;
    for (int k = 0; k < 4; k++) {
        double x = k & 1 ? b->max[0] : b->min[0], y = k & 2 ? b->max[1] : b->min[1];
        double wx = in->pos[0] + c * x - s * y, wy = in->pos[1] + s * x + c * y;
        lo[0] = fmin (lo[0], wx); hi[0] = fmax (hi[0], wx);
        lo[1] = fmin (lo[1], wy); hi[1] = fmax (hi[1], wy);
    }
}

static void s_rect (s_layout_t *L, s_cluster_t *c)
{
    c->lo[0] = c->lo[1] = INFINITY;
    c->hi[0] = c->hi[1] = -INFINITY;
    for (size_t i = 0; i < c->n; i++) {
        double lo[2], hi[2];
        const s_inst_t *in = &L->inst[c->m[i]];
        s_footprint (&L->box[in->part], in, lo, hi);
        for (int a = 0; a < 2; a++) { c->lo[a] = fmin (c->lo[a], lo[a]); c->hi[a] = fmax (c->hi[a], hi[a]); }
    }
}

static void s_add (s_layout_t *L, s_cluster_t *c, size_t member)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        size_t *m = realloc (c->m, cap * sizeof *m);
        if (!m) { L->oom = true; return; }
        c->m = m;
        c->cap = cap;
    }
    c->m[c->n++] = member;
}

static void s_merge (s_layout_t *L, s_cluster_t *dst, s_cluster_t *src)
{
    for (size_t i = 0; i < src->n; i++) s_add (L, dst, src->m[i]);
    dst->rotatable = dst->rotatable && src->rotatable;
    free (src->m);
    memset (src, 0, sizeof *src);
    s_rect (L, dst);
}

static void s_move (s_layout_t *L, s_cluster_t *c, double dx, double dy, double dz)
{
    for (size_t i = 0; i < c->n; i++) {
        s_inst_t *in = &L->inst[c->m[i]];
        in->pos[0] += dx; in->pos[1] += dy; in->pos[2] += dz;
    }
    c->lo[0] += dx; c->hi[0] += dx; c->lo[1] += dy; c->hi[1] += dy;
}

/* Turn about the cluster's origin (a turnable cluster only). */
static void s_turn (s_layout_t *L, s_cluster_t *c, double th)
{
    if (!c->rotatable || fabs (th) < S_EPS) return;
    double cs = cos (th), sn = sin (th);
    for (size_t i = 0; i < c->n; i++) {
        s_inst_t *in = &L->inst[c->m[i]];
        double x = in->pos[0], y = in->pos[1];
        in->pos[0] = cs * x - sn * y;
        in->pos[1] = sn * x + cs * y;
        in->theta += th;
    }
    s_rect (L, c);
}

static void s_centre_on (s_layout_t *L, s_cluster_t *c, double x, double y)
{
    s_move (L, c, x - (c->lo[0] + c->hi[0]) / 2, y - (c->lo[1] + c->hi[1]) / 2, 0);
}

static double s_size (const s_cluster_t *c)
{
    return fmax (c->hi[0] - c->lo[0], c->hi[1] - c->lo[1]);
}

static double s_gap (double a, double b)
{
    return fmin (1.0, 0.1 + 0.1 * fmin (a, b));
}

static bool s_overlap (const s_cluster_t *a, const s_cluster_t *b)
{
    return a->lo[0] < b->hi[0] - S_EPS && b->lo[0] < a->hi[0] - S_EPS && a->lo[1] < b->hi[1] - S_EPS && b->lo[1] < a->hi[1] - S_EPS;
}

/* Turn a cluster standing in direction u from something so that its front looks back at it. */
static void s_face (s_layout_t *L, s_cluster_t *c, double ux, double uy)
{
    if (!isnan (c->front)) s_turn (L, c, atan2 (-uy, -ux) - c->front);
}

/* ---- the relations ----------------------------------------------------------------- */

static int s_build (s_layout_t *L, int p, size_t k, s_cluster_t *out, int depth);

/* Clusters side by side along one side of out (0 right +X, 1 left -X, 2 front -Y, 3 back +Y); in front and
 * behind they face it, beside it only seats do (a chair at a table, not a bookshelf by a sofa). */
static void s_side (s_layout_t *L, s_cluster_t *out, s_cluster_t *cs, size_t n, int side)
{
    static const double dir[4][2] = { { 1, 0 }, { -1, 0 }, { 0, -1 }, { 0, 1 } };
    double ux = dir[side][0], uy = dir[side][1], len = 0, g = 1.0;
    int along = side < 2 ? 1 : 0;               /* the axis of the line */
    for (size_t i = 0; i < n; i++) {
        if (side >= 2 || cs[i].seat) s_face (L, &cs[i], ux, uy);
        len = fmax (len, cs[i].hi[along] - cs[i].lo[along]);
        g = fmin (g, s_gap (s_size (out), s_size (&cs[i])));
    }
    double edge = side == 0 ? out->hi[0] : side == 1 ? -out->lo[0] : side == 2 ? -out->lo[1] : out->hi[1];
    for (size_t i = 0; i < n; i++) {
        double t = ((double) i - (double) (n - 1) / 2) * (len + g);
        double near = side == 0 ? cs[i].lo[0] : side == 1 ? -cs[i].hi[0] : side == 2 ? -cs[i].hi[1] : cs[i].lo[1];
        double shift = edge + g - near;         /* along u */
        double mid = (cs[i].lo[along] + cs[i].hi[along]) / 2;
        s_move (L, &cs[i], ux * shift + (along == 0 ? t - mid : 0), uy * shift + (along == 1 ? t - mid : 0), 0);
    }
    for (size_t i = 0; i < n; i++) s_merge (L, out, &cs[i]);
}

/* A ring around out, from the front, each as close as it may be, facing the centre. */
static void s_around (s_layout_t *L, s_cluster_t *out, s_cluster_t *cs, size_t n)
{
    double rx = fmax (fabs (out->lo[0]), fabs (out->hi[0])), ry = fmax (fabs (out->lo[1]), fabs (out->hi[1]));
    double *d = calloc (n, sizeof *d), *ang = calloc (n, sizeof *ang);
    if (!d || !ang) { free (d); free (ang); L->oom = true; return; }
    for (size_t j = 0; j < n; j++) {
        ang[j] = -M_PI / 2 + 2 * M_PI * (double) j / (double) n;
        double ux = cos (ang[j]), uy = sin (ang[j]);
        s_face (L, &cs[j], ux, uy);
        s_centre_on (L, &cs[j], 0, 0);
        double hx = (cs[j].hi[0] - cs[j].lo[0]) / 2, hy = (cs[j].hi[1] - cs[j].lo[1]) / 2, g = s_gap (s_size (out), s_size (&cs[j]));
        double dx = fabs (ux) > S_EPS ? (rx + hx + g) / fabs (ux) : INFINITY;
        double dy = fabs (uy) > S_EPS ? (ry + hy + g) / fabs (uy) : INFINITY;
        d[j] = fmin (dx, dy);
    }
    for (int round = 0; round < 80; round++) {
        for (size_t j = 0; j < n; j++) s_centre_on (L, &cs[j], d[j] * cos (ang[j]), d[j] * sin (ang[j]));
        bool clash = false;
        for (size_t a = 0; a < n && !clash; a++)
            for (size_t b = a + 1; b < n && !clash; b++) clash = s_overlap (&cs[a], &cs[b]);
        if (!clash) break;
        for (size_t j = 0; j < n; j++) d[j] *= 1.1;
    }
    for (size_t j = 0; j < n; j++) s_merge (L, out, &cs[j]);
    free (d);
    free (ang);
}

/* The copies of part c that go with copy k of part p (dealt out in turn). */
static size_t s_children (const s_layout_t *L, int c, int p, size_t k, size_t *out)
{
    size_t n = 0, np = L->parts[p].count;
    for (size_t j = 0; j < L->parts[c].count; j++)
        if (j % np == k) out[n++] = j;
    return n;
}

/* Everything that stands on copy k of part p, whatever its part: on its surface in one even grid; what does not fit goes next to it. */
static void s_on (s_layout_t *L, s_cluster_t *out, int p, size_t k, const s_inst_t *base, int depth)
{
    const bmq_box_t *b = &L->box[p];
    bmq_box_t s;
    bool surface = bmq_bounds_support (L->parts[p].bounds, (b->min[0] + b->max[0]) / 2, (b->min[1] + b->max[1]) / 2, &s);
    size_t total = 0;
    for (size_t c = 0; c < L->np; c++)
        if (L->rel[c] == BMQ_REL_ON && L->parts[c].ref[0] == p) total += L->parts[c].count;
    if (total == 0) return;
    size_t *js = calloc (total, sizeof *js), n = 0;
    int *of = calloc (total, sizeof *of);
    s_cluster_t *cs = calloc (total, sizeof *cs);
    if (!js || !of || !cs) { free (js); free (of); free (cs); L->oom = true; return; }
    for (size_t c = 0; c < L->np; c++) {
        if (L->rel[c] != BMQ_REL_ON || L->parts[c].ref[0] != p) continue;
        size_t m = s_children (L, (int) c, p, k, js + n);
        for (size_t i = n; i < n + m; i++) { of[i] = (int) c; s_build (L, (int) c, js[i], &cs[i], depth + 1); }
        n += m;
    }
    double cw = 0, cd = 0, g = 1.0;
    for (size_t i = 0; i < n; i++) {                    /* on a surface things stand closer: 2 cm + 5 % */
        cw = fmax (cw, cs[i].hi[0] - cs[i].lo[0]);
        cd = fmax (cd, cs[i].hi[1] - cs[i].lo[1]);
        g = fmin (g, fmin (s_gap (s_size (&cs[i]), s_size (&cs[i])), 0.02 + 0.05 * s_size (&cs[i])));
    }
    double sw = surface ? s.max[0] - s.min[0] : 0, sd = surface ? s.max[1] - s.min[1] : 0;
    size_t cols = (size_t) fmax (0, floor ((sw + g) / (cw + g))), rows = (size_t) fmax (0, floor ((sd + g) / (cd + g)));
    size_t fit = !surface ? 0 : cols * rows > 0 ? cols * rows : 1;        /* one too big for it still stands on it */
    size_t on = n < fit ? n : fit, use_cols = cols ? (cols < on ? cols : on) : 1;
    size_t use_rows = on ? (on + use_cols - 1) / use_cols : 0;
    for (size_t i = 0; i < on; i++) {
        double x = s.min[0] + ((double) (i % use_cols) + 0.5) * sw / (double) use_cols;     /* recipe coordinates */
        double y = s.max[1] - ((double) (i / use_cols) + 0.5) * sd / (double) use_rows;
        s_centre_on (L, &cs[i], x + base->pos[0], y + base->pos[1]);
        s_move (L, &cs[i], 0, 0, s.max[2] + base->pos[2]);
        s_merge (L, out, &cs[i]);
    }
    for (size_t i = on; i < n; i++) cs[i].seat = false;        /* what did not fit is just set down beside it */
    if (on < n) {
        char text[320], many[80], one[72];
        s_words_of (L->parts[p].name, one, sizeof one, false);
        if (of[on] == of[n - 1]) s_words_of (L->parts[of[on]].name, many, sizeof many, true);
        else snprintf (many, sizeof many, "things on it");
        snprintf (text, sizeof text, "the %s holds %zu of the %zu %s; the %zu other%s next to it", one, on, n, many,
                  n - on, n - on > 1 ? "s stand" : " stands");
        json_array_append_new (L->notes, json_string (text));
        for (size_t i = on; i < n; i++) s_side (L, out, &cs[i], 1, (int) ((i - on) % 2));
    }
    free (js);
    free (of);
    free (cs);
}

/* Copy k of part p with everything that relates to it, its footprint centred on the origin, its base at z = 0. */
static int s_build (s_layout_t *L, int p, size_t k, s_cluster_t *out, int depth)
{
    memset (out, 0, sizeof *out);
    size_t me = L->first[p] + k;
    s_inst_t *in = &L->inst[me];
    const bmq_box_t *b = &L->box[p];
    in->part = p;
    in->pos[0] = -(b->min[0] + b->max[0]) / 2;
    in->pos[1] = -(b->min[1] + b->max[1]) / 2;
    in->pos[2] = -b->min[2];
    in->theta = 0;
    out->rotatable = bmq_bounds_rotatable (L->parts[p].bounds);
    out->front = L->parts[p].front;
    out->seat = L->parts[p].seat;
    s_add (L, out, me);
    s_rect (L, out);
    if (depth > (int) L->np) return 0;                  /* no deeper than there are parts (no cycles reach here) */
    s_on (L, out, p, k, in, depth);
    for (size_t c = 0; c < L->np && !L->oom; c++) {
        bmq_rel_t r = L->rel[c];
        if (r == BMQ_REL_NONE || r == BMQ_REL_ON || r == BMQ_REL_BETWEEN || L->parts[c].ref[0] != p) continue;
        size_t *js = calloc (L->parts[c].count, sizeof *js);
        s_cluster_t *cs = calloc (L->parts[c].count, sizeof *cs);
        if (!js || !cs) { free (js); free (cs); L->oom = true; return -1; }
        size_t n = s_children (L, (int) c, p, k, js);
        for (size_t i = 0; i < n; i++) s_build (L, (int) c, js[i], &cs[i], depth + 1);
        if (r == BMQ_REL_AROUND) s_around (L, out, cs, n);
        else if (r == BMQ_REL_NEXT_TO) {            /* right and left in turn, the freer side first */
            size_t nr = 0, nl = 0;
            int first = -out->lo[0] < out->hi[0] - S_EPS ? 1 : 0;
            s_cluster_t *other = calloc (n + 1, sizeof *other);
            if (!other) { free (js); free (cs); L->oom = true; return -1; }
            for (size_t i = 0; i < n; i++) {
                if (i % 2) other[nl++] = cs[i];
                else cs[nr++] = cs[i];
            }
            s_side (L, out, cs, nr, first);
            s_side (L, out, other, nl, 1 - first);
            free (other);
        }
        else s_side (L, out, cs, n, r == BMQ_REL_RIGHT_OF ? 0 : r == BMQ_REL_LEFT_OF ? 1 : r == BMQ_REL_IN_FRONT ? 2 : 3);
        free (js);
        free (cs);
    }
    return L->oom ? -1 : 0;
}

/* ---- groups on the ground ----------------------------------------------------------- */

/* cs[0..n) (one part's copies, or a "between" row's pieces) arranged, merged into out. */
static void s_arrange (s_layout_t *L, s_cluster_t *out, s_cluster_t *cs, size_t n, bmq_arrange_t how)
{
    double w = 0, d = 0, diag = 0, g = 1.0;
    for (size_t i = 0; i < n; i++) {
        w = fmax (w, cs[i].hi[0] - cs[i].lo[0]);
        d = fmax (d, cs[i].hi[1] - cs[i].lo[1]);
        diag = fmax (diag, hypot (cs[i].hi[0] - cs[i].lo[0], cs[i].hi[1] - cs[i].lo[1]));
        g = fmin (g, s_gap (s_size (&cs[i]), s_size (&cs[i])));
    }
    if (how == BMQ_ARRANGE_NONE) how = n <= 6 ? BMQ_ARRANGE_ROW : (bmq_arrange_t) -1;       /* -1: a grid */
    size_t cols = how == BMQ_ARRANGE_ROW ? n : (size_t) ceil (sqrt ((double) n));
    double r = n > 1 ? (diag + g) / (2 * sin (M_PI / (double) n)) : 0;
    for (size_t i = 0; i < n; i++) {
        if (how == BMQ_ARRANGE_CIRCLE && n > 1) {
            double a = -M_PI / 2 + 2 * M_PI * (double) i / (double) n;
            s_face (L, &cs[i], cos (a), sin (a));
            s_centre_on (L, &cs[i], r * cos (a), r * sin (a));
        }
        else {
            size_t rows = (n + cols - 1) / cols, col = i % cols, row = i / cols;
            s_centre_on (L, &cs[i], ((double) col - (double) (cols - 1) / 2) * (w + g),
                         ((double) (rows - 1) / 2 - (double) row) * (d + g));
        }
    }
    for (size_t i = 0; i < n; i++) s_merge (L, out, &cs[i]);
}

/* Part p's copies as one group. */
static void s_group (s_layout_t *L, int p, s_cluster_t *out)
{
    size_t n = L->parts[p].count;
    s_cluster_t *cs = calloc (n, sizeof *cs);
    memset (out, 0, sizeof *out);
    out->rotatable = true;
    out->front = L->parts[p].front;
    if (!cs) { L->oom = true; return; }
    for (size_t k = 0; k < n; k++) s_build (L, p, k, &cs[k], 0);
    s_arrange (L, out, cs, n, L->parts[p].arrange);
    free (cs);
}

/* "x between a and b": the row a, x, b (a's first copy, x, a's second when b is a itself). */
static void s_between (s_layout_t *L, int x, s_cluster_t *out)
{
    int a = L->parts[x].ref[0], b = L->parts[x].ref[1] >= 0 ? L->parts[x].ref[1] : a;
    s_cluster_t row[3];
    memset (row, 0, sizeof row);
    memset (out, 0, sizeof *out);
    out->rotatable = true;
    out->front = NAN;
    s_group (L, x, &row[1]);
    if (a == b) {
        size_t n = L->parts[a].count;
        s_cluster_t *rest = calloc (n, sizeof *rest);
        if (!rest) { L->oom = true; return; }
        for (size_t k = 0; k < n; k++) s_build (L, a, k, &rest[k], 0);
        row[0] = rest[0];
        row[2] = rest[1];
        s_arrange (L, out, row, 3, BMQ_ARRANGE_ROW);
        if (n > 2) {                                    /* more copies of a: a row of their own behind */
            s_cluster_t more;
            memset (&more, 0, sizeof more);
            more.rotatable = true;
            more.front = NAN;
            s_arrange (L, &more, rest + 2, n - 2, BMQ_ARRANGE_ROW);
            s_side (L, out, &more, 1, 3);
        }
        free (rest);
        return;
    }
    s_group (L, a, &row[0]);
    s_group (L, b, &row[2]);
    s_arrange (L, out, row, 3, BMQ_ARRANGE_ROW);
}

/* Decide each part's final relation: a "between" whose ends are not free on the ground becomes "next to". */
static void s_settle_relations (s_layout_t *L)
{
    for (size_t p = 0; p < L->np; p++) {
        const bmq_layout_part_t *part = &L->parts[p];
        L->rel[p] = part->relation;
        bool refs_ok = part->ref[0] >= 0 && part->ref[0] < (int) L->np && part->ref[0] != (int) p
                       && part->ref[1] < (int) L->np && part->ref[1] != (int) p;
        if (!refs_ok) L->rel[p] = BMQ_REL_NONE;
        int hops = 0;                                   /* a cycle would never reach the ground */
        for (int at = (int) p; at >= 0 && L->parts[at].relation != BMQ_REL_NONE && hops <= (int) L->np; hops++)
            at = L->parts[at].ref[0];
        if (hops > (int) L->np) L->rel[p] = BMQ_REL_NONE;
    }
    for (size_t x = 0; x < L->np; x++) {
        if (L->rel[x] != BMQ_REL_BETWEEN) continue;
        int a = L->parts[x].ref[0], b = L->parts[x].ref[1] == a ? -1 : L->parts[x].ref[1];
        bool free_a = L->rel[a] == BMQ_REL_NONE && !L->grouped[a] && !L->parts[a].has_position;
        bool free_b = b < 0 ? L->parts[a].count >= 2 : L->rel[b] == BMQ_REL_NONE && !L->grouped[b] && !L->parts[b].has_position;
        if (free_a && free_b && b != (int) x) {
            L->grouped[a] = true;
            if (b >= 0) L->grouped[b] = true;
            continue;
        }
        L->rel[x] = BMQ_REL_NEXT_TO;
        char text[200], xs[72], as[72];
        s_words_of (L->parts[x].name, xs, sizeof xs, false);
        s_words_of (L->parts[a].name, as, sizeof as, false);
        snprintf (text, sizeof text, "the %s could not go between: it stands next to the %s", xs, as);
        json_array_append_new (L->notes, json_string (text));
    }
}

/* Where the layout put a part's copy: its box. */
static void s_copy_box (const bmq_layout_part_t *part, const bmq_placement_t *at, bmq_box_t *box)
{
    bmq_box_t b;
    s_part_box (part, &b);
    s_inst_t in = { 0, { at->pos[0], at->pos[1], at->pos[2] }, at->theta };
    s_footprint (&b, &in, box->min, box->max);
    box->min[2] = b.min[2] + at->pos[2];
    box->max[2] = b.max[2] + at->pos[2];
}

int bmq_layout (const bmq_layout_part_t *parts, size_t n, bmq_placement_t **place, bmq_box_t *scene, json_t *notes)
{
    s_layout_t L = { .parts = parts, .np = n, .notes = notes ? json_incref (notes) : json_array () };
    size_t total = 0;
    for (size_t p = 0; p < n; p++) total += parts[p].count;
    L.inst = calloc (total + 1, sizeof *L.inst);
    L.first = calloc (n + 1, sizeof *L.first);
    L.box = calloc (n + 1, sizeof *L.box);
    L.rel = calloc (n + 1, sizeof *L.rel);
    L.grouped = calloc (n + 1, sizeof *L.grouped);
    s_cluster_t *groups = calloc (n + 1, sizeof *groups);
    int rc = -1;
    memset (scene, 0, sizeof *scene);
    if (!L.inst || !L.first || !L.box || !L.rel || !L.grouped || !groups || !L.notes) goto done;
    for (size_t p = 0, at = 0; p < n; at += parts[p].count, p++) {
        L.first[p] = at;
        s_part_box (&parts[p], &L.box[p]);
    }
    s_settle_relations (&L);
    size_t ng = 0;
    for (size_t p = 0; p < n && !L.oom; p++) {
        if (L.rel[p] == BMQ_REL_BETWEEN) s_between (&L, (int) p, &groups[ng++]);
        else if (L.rel[p] == BMQ_REL_NONE && !L.grouped[p]) s_group (&L, (int) p, &groups[ng++]);
    }
    if (L.oom) goto done;
    /* the groups without a position in a row along X, centred; the others where they were asked to be */
    double cursor = 0, prev = 0;
    size_t in_row = 0;
    for (size_t g = 0; g < ng; g++) {
        int p = L.inst[groups[g].m[0]].part;
        const bmq_layout_part_t *part = &parts[p];
        if (part->has_position && L.rel[p] == BMQ_REL_NONE && !L.grouped[p]) {
            s_centre_on (&L, &groups[g], part->position[0], part->position[1]);
            s_move (&L, &groups[g], 0, 0, part->position[2]);
            continue;
        }
        double gap = in_row ? s_gap (prev, s_size (&groups[g])) : 0;
        s_centre_on (&L, &groups[g], 0, 0);
        s_move (&L, &groups[g], cursor + gap - groups[g].lo[0], 0, 0);
        cursor = groups[g].hi[0];
        prev = s_size (&groups[g]);
        in_row++;
    }
    for (size_t g = 0; g < ng; g++) {
        int p = L.inst[groups[g].m[0]].part;
        if (!(parts[p].has_position && L.rel[p] == BMQ_REL_NONE && !L.grouped[p])) s_move (&L, &groups[g], -cursor / 2, 0, 0);
    }
    bool any = false;
    for (size_t p = 0; p < n; p++)
        for (size_t k = 0; k < parts[p].count; k++) {
            s_inst_t *in = &L.inst[L.first[p] + k];
            double th = fmod (in->theta, 2 * M_PI);
            if (th > M_PI) th -= 2 * M_PI;
            if (th <= -M_PI) th += 2 * M_PI;
            place[p][k] = (bmq_placement_t) { { in->pos[0], in->pos[1], in->pos[2] }, fabs (th) < S_EPS ? 0 : th };
            bmq_box_t b;
            s_copy_box (&parts[p], &place[p][k], &b);
            for (int a = 0; a < 3; a++) {
                scene->min[a] = any ? fmin (scene->min[a], b.min[a]) : b.min[a];
                scene->max[a] = any ? fmax (scene->max[a], b.max[a]) : b.max[a];
            }
            any = true;
        }
    rc = 0;
done:
    for (size_t g = 0; groups && g < n; g++) free (groups[g].m);
    free (groups);
    free (L.inst);
    free (L.first);
    free (L.box);
    free (L.rel);
    free (L.grouped);
    json_decref (L.notes);
    return rc;
}
