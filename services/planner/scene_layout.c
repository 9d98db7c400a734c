/* scene_layout — boxes placed by relations; see scene_layout.h for the rules. */
#include "scene_layout.h"
#include "scene_room.h"

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
    int       *wall_anchor;         /* in a room: the hung part this one stands under (-1: none) */
    int       *face_anchor;         /* in a room: the standing part this hung one faces from the opposite wall (-1: none) */
    json_t    *notes;
    bool       oom;
    double     min_gap;             /* s_side's least gap (facing: 1.2 m) */
    int        back_side;           /* s_side: the anchor's back side, to line backs up (-1: centred) */
    bmq_layout_room_t *room;        /* NULL: no room */
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
    g = fmax (g, L->min_gap);
    double edge = side == 0 ? out->hi[0] : side == 1 ? -out->lo[0] : side == 2 ? -out->lo[1] : out->hi[1];
    int back = L->back_side;                    /* beside something with a back: backs in line (nightstands by a bed's head) */
    bool align = n == 1 && back >= 0 && (back < 2 ? 0 : 1) == along;
    double alo[2], ahi[2];                      /* the anchor's own back, not a rug's under it */
    s_footprint (&L->box[L->inst[out->m[0]].part], &L->inst[out->m[0]], alo, ahi);
    for (size_t i = 0; i < n; i++) {
        double t = ((double) i - (double) (n - 1) / 2) * (len + g);
        double near = side == 0 ? cs[i].lo[0] : side == 1 ? -cs[i].hi[0] : side == 2 ? -cs[i].hi[1] : cs[i].lo[1];
        double shift = edge + g - near;         /* along u */
        double mid = (cs[i].lo[along] + cs[i].hi[along]) / 2;
        double slide = t - mid;
        if (align) slide = back == 0 ? ahi[0] - cs[i].hi[0] : back == 1 ? alo[0] - cs[i].lo[0]
                         : back == 3 ? ahi[1] - cs[i].hi[1] : alo[1] - cs[i].lo[1];
        s_move (L, &cs[i], ux * shift + (along == 0 ? slide : 0), uy * shift + (along == 1 ? slide : 0), 0);
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
    /* when one cell per thing (the biggest's) leaves some off, rows of their own widths may hold more:
     * "a desk: a monitor, a keyboard, a mouse, a mug and a lamp" */
    size_t packed = 0, row_of[64];
    double px[64], rowd[64], used_d = 0, cur_w = 0;
    size_t nrows = 0;
    for (size_t i = 0; surface && on < n && i < n && i < 64; i++) {
        double w = cs[i].hi[0] - cs[i].lo[0], d = cs[i].hi[1] - cs[i].lo[1];
        if (nrows && cur_w + g + w <= sw) { px[i] = cur_w + g; cur_w += g + w; }
        else {
            if (w > sw || used_d + (nrows ? g : 0) + d > sd) break;
            used_d += (nrows ? g : 0);
            rowd[nrows++] = 0;
            px[i] = 0;
            cur_w = w;
        }
        row_of[i] = nrows - 1;
        if (d > rowd[nrows - 1]) { used_d += d - rowd[nrows - 1]; rowd[nrows - 1] = d; }
        if (used_d > sd) break;
        packed = i + 1;
    }
    if (packed > on) {
        double rw[64] = { 0 };
        for (size_t i = 0; i < packed; i++) rw[row_of[i]] = px[i] + cs[i].hi[0] - cs[i].lo[0];
        for (size_t i = 0; i < packed; i++) {
            double y0 = s.max[1] - (sd - used_d) / 2;
            for (size_t r = 0; r < row_of[i]; r++) y0 -= rowd[r] + g;
            double x = s.min[0] + (sw - rw[row_of[i]]) / 2 + px[i] + (cs[i].hi[0] - cs[i].lo[0]) / 2;
            double y = y0 - rowd[row_of[i]] / 2;
            s_centre_on (L, &cs[i], x + base->pos[0], y + base->pos[1]);
            s_move (L, &cs[i], 0, 0, s.max[2] + base->pos[2]);
            s_merge (L, out, &cs[i]);
        }
        on = packed;
    }
    else for (size_t i = 0; i < on; i++) {
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

/* Quarter turns (counterclockwise) from a front of -Y to `front` (NAN: none). */
static int s_quarters (double front)
{
    if (isnan (front)) return 0;
    int q = (int) lround ((front + M_PI / 2) / (M_PI / 2));
    return ((q % 4) + 4) % 4;
}

/* Side index (0 +X, 1 -X, 2 -Y, 3 +Y) turned by q quarter turns counterclockwise. */
static int s_turn_side (int side, int q)
{
    static const int next[4] = { 3, 2, 0, 1 };          /* +X→+Y, -X→-Y, -Y→+X, +Y→-X */
    for (int i = 0; i < q; i++) side = next[side];
    return side;
}

/* The copies of part c (relation r) that go with copy k of part p, built. n out; NULL when none (or out of memory). */
static s_cluster_t *s_kids (s_layout_t *L, int p, size_t k, bmq_rel_t r, int depth, size_t *n_out, int *part_out, size_t *from)
{
    for (size_t c = *from; c < L->np; c++) {
        if (L->rel[c] != r || L->parts[c].ref[0] != p) continue;
        *from = c + 1;
        size_t *js = calloc (L->parts[c].count + 1, sizeof *js);
        s_cluster_t *cs = calloc (L->parts[c].count + 1, sizeof *cs);
        if (!js || !cs) { free (js); free (cs); L->oom = true; return NULL; }
        size_t n = s_children (L, (int) c, p, k, js);
        for (size_t i = 0; i < n; i++) s_build (L, (int) c, js[i], &cs[i], depth + 1);
        free (js);
        *n_out = n;
        *part_out = (int) c;
        return cs;
    }
    *from = L->np;
    return NULL;
}

/* The lowest and highest z of a cluster. */
static void s_zspan (const s_layout_t *L, const s_cluster_t *c, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < c->n; i++) {
        const s_inst_t *in = &L->inst[c->m[i]];
        *lo = fmin (*lo, L->box[in->part].min[2] + in->pos[2]);
        *hi = fmax (*hi, L->box[in->part].max[2] + in->pos[2]);
    }
}

static void s_member_box (const s_layout_t *L, const s_inst_t *in, double lo[3], double hi[3]);

/* Does member box lo..hi overlap a solid member of cluster c (flat things left out)? */
static bool s_hits (const s_layout_t *L, const s_cluster_t *c, const double lo[3], const double hi[3])
{
    for (size_t m = 0; m < c->n; m++) {
        double olo[3], ohi[3];
        s_member_box (L, &L->inst[c->m[m]], olo, ohi);
        if (ohi[2] - olo[2] <= 0.05) continue;
        bool over = true;
        for (int a = 0; a < 3 && over; a++) over = lo[a] < ohi[a] - 0.005 && olo[a] < hi[a] - 0.005;
        if (over) return true;
    }
    return false;
}

/* What came with a thing that goes under another ("a chair at the desk under the loft bed", "a fridge next to
 * it") must not stand in the other's legs, frame or lower bunk: each such member (with what stands on it) slides
 * out, away from the thing it came with, until it is clear of everything in out; the thing under stays. */
static void s_clear_under (s_layout_t *L, const s_cluster_t *out, s_cluster_t *c)
{
    double rlo[3], rhi[3];
    s_member_box (L, &L->inst[c->m[0]], rlo, rhi);
    for (size_t m = 1; m < c->n; m++) {
        double lo[3], hi[3];
        s_member_box (L, &L->inst[c->m[m]], lo, hi);
        if (hi[2] - lo[2] <= 0.05 || !s_hits (L, out, lo, hi)) continue;
        double dx = (lo[0] + hi[0] - rlo[0] - rhi[0]) / 2, dy = (lo[1] + hi[1] - rlo[1] - rhi[1]) / 2;
        int a = fabs (dx) >= fabs (dy) ? 0 : 1;
        double sign = (a ? dy : dx) >= 0 ? 1 : -1;
        size_t riders[64], nr = 0;                      /* it and what stands on it */
        for (size_t o = 1; o < c->n && nr < 64; o++) {
            double olo[3], ohi[3];
            s_member_box (L, &L->inst[c->m[o]], olo, ohi);
            double ox = (olo[0] + ohi[0]) / 2, oy = (olo[1] + ohi[1]) / 2;
            if (o == m || (ox >= lo[0] && ox <= hi[0] && oy >= lo[1] && oy <= hi[1] && olo[2] >= hi[2] - 0.01)) riders[nr++] = c->m[o];
        }
        for (int step = 0; step < 60 && s_hits (L, out, lo, hi); step++) {
            for (size_t r = 0; r < nr; r++) L->inst[riders[r]].pos[a] += sign * 0.05;
            lo[a] += sign * 0.05;
            hi[a] += sign * 0.05;
        }
    }
    s_rect (L, c);
}

/* "a rug under the bed": centred under copy k of p on the ground; a flat thing lifts p (and what is on it) onto its top. */
#define BMQ_SCENE_MAX_PARTS_LAYOUT 64

static void s_under (s_layout_t *L, s_cluster_t *out, int p, size_t k, s_inst_t *base, int depth)
{
    size_t from = 0, n, nsolid = 0, nheld = 0;
    int c;
    s_cluster_t *cs, *held[BMQ_SCENE_MAX_PARTS_LAYOUT], *solid[32];
    double cx = (out->lo[0] + out->hi[0]) / 2, cy = (out->lo[1] + out->hi[1]) / 2, lift = 0, span = 0;
    bool along_x = out->hi[0] - out->lo[0] >= out->hi[1] - out->lo[1];
    while ((cs = s_kids (L, p, k, BMQ_REL_UNDER, depth, &n, &c, &from))) {
        for (size_t i = 0; i < n; i++) {
            double lo, hi;
            s_zspan (L, &cs[i], &lo, &hi);
            s_centre_on (L, &cs[i], cx, cy);
            if (hi - lo <= 0.05) { lift = fmax (lift, hi - lo); s_merge (L, out, &cs[i]); }
            else if (nsolid < sizeof solid / sizeof *solid && nheld < sizeof held / sizeof *held) {
                solid[nsolid++] = &cs[i];
                span += along_x ? cs[i].hi[0] - cs[i].lo[0] : cs[i].hi[1] - cs[i].lo[1];
            }
            else s_merge (L, out, &cs[i]);
        }
        if (nheld < sizeof held / sizeof *held) held[nheld++] = cs;
        else free (cs);                                 /* every copy above was merged already */
    }
    /* "a sink and a washing machine under the counter": side by side along its length, not in one another */
    double gap = 0.03, at = -(span + gap * (double) (nsolid ? nsolid - 1 : 0)) / 2;
    for (size_t i = 0; i < nsolid; i++) {
        double w = along_x ? solid[i]->hi[0] - solid[i]->lo[0] : solid[i]->hi[1] - solid[i]->lo[1];
        if (nsolid > 1) s_centre_on (L, solid[i], along_x ? cx + at + w / 2 : cx, along_x ? cy : cy + at + w / 2);
        at += w + gap;
        s_clear_under (L, out, solid[i]);
        s_merge (L, out, solid[i]);
    }
    for (size_t h = 0; h < nheld; h++) free (held[h]);
    base->pos[2] += lift;
}

/* "books in the bookshelf": on the lowest board inside; "a painting above the bed": over its back edge, above its top. */
static void s_inside_above (s_layout_t *L, s_cluster_t *out, int p, size_t k, const s_inst_t *base, int depth)
{
    const bmq_box_t *b = &L->box[p];
    double cx = (b->min[0] + b->max[0]) / 2 + base->pos[0], cy = (b->min[1] + b->max[1]) / 2 + base->pos[1];
    double h = b->max[2] - b->min[2], floor_z = b->min[2] + base->pos[2] + 0.02 * h;
    for (size_t i = 0; i < bmq_bounds_count (L->parts[p].bounds); i++) {        /* the lowest board under the centre */
        const bmq_box_t *x = bmq_bounds_box (L->parts[p].bounds, i);
        double mx = (b->min[0] + b->max[0]) / 2, my = (b->min[1] + b->max[1]) / 2;
        if (x->min[0] <= mx && x->max[0] >= mx && x->min[1] <= my && x->max[1] >= my && x->max[2] < b->min[2] + 0.45 * h
            && x->max[2] - b->min[2] > 0.002)
            floor_z = fmax (floor_z, x->max[2] + base->pos[2]);
    }
    size_t from = 0, n;
    int c;
    s_cluster_t *cs;
    /* everything inside it, whatever its part, in one grid on that board, centred, 2 cm apart (three apples in a
     * bowl, two baskets in a cabinet: side by side, not in one another), as many a row as its width holds */
    s_cluster_t *in_it[BMQ_SCENE_MAX_PARTS_LAYOUT], *kept[BMQ_SCENE_MAX_PARTS_LAYOUT];
    size_t nin = 0, nkept = 0;
    double cw = 0, cd = 0, g = 0.02;
    while ((cs = s_kids (L, p, k, BMQ_REL_INSIDE, depth, &n, &c, &from))) {
        for (size_t i = 0; i < n; i++) {
            double lo, hi;
            s_zspan (L, &cs[i], &lo, &hi);
            s_move (L, &cs[i], 0, 0, floor_z - lo);
            if (nin < BMQ_SCENE_MAX_PARTS_LAYOUT && nkept < BMQ_SCENE_MAX_PARTS_LAYOUT) {
                in_it[nin++] = &cs[i];
                cw = fmax (cw, cs[i].hi[0] - cs[i].lo[0]);
                cd = fmax (cd, cs[i].hi[1] - cs[i].lo[1]);
            }
            else { s_centre_on (L, &cs[i], cx, cy); s_merge (L, out, &cs[i]); }
        }
        if (nkept < BMQ_SCENE_MAX_PARTS_LAYOUT) kept[nkept++] = cs;
        else free (cs);                                 /* every copy above was merged already */
    }
    double bw = b->max[0] - b->min[0];                  /* a small bowl's margins and gaps are small too */
    g = fmin (0.02, 0.05 * bw);
    double bd = b->max[1] - b->min[1], ch = 0;
    for (size_t i = 0; i < nin; i++) {
        double lo, hi;
        s_zspan (L, in_it[i], &lo, &hi);
        ch = fmax (ch, hi - lo);
    }
    size_t cols = (size_t) fmax (1, floor ((bw - fmin (0.04, 0.1 * bw) + g) / (cw + g)));
    if (cols > nin) cols = nin ? nin : 1;
    /* more than its floor holds (three blankets in a basket): in layers, one on another */
    size_t fit_rows = (size_t) fmax (1, floor ((bd - fmin (0.04, 0.1 * bd) + g) / (cd + g))), per = cols * fit_rows;
    size_t rows = nin > per ? fit_rows : (nin + cols - 1) / cols;
    double tw = (double) cols * cw + (double) (cols - 1) * g, td = (double) rows * cd + (double) (rows ? rows - 1 : 0) * g;
    for (size_t i = 0; i < nin; i++) {
        size_t at = i % per, col = at % cols, row = at / cols, layer = i / per;
        s_centre_on (L, in_it[i], cx - tw / 2 + (double) col * (cw + g) + cw / 2, cy + td / 2 - (double) row * (cd + g) - cd / 2);
        if (layer) s_move (L, in_it[i], 0, 0, (double) layer * (ch + 0.002));
        s_merge (L, out, in_it[i]);
    }
    for (size_t h = 0; h < nkept; h++) free (kept[h]);
    int q = s_quarters (L->parts[p].front), behind = s_turn_side (3, q);
    int axis = behind < 2 ? 1 : 0;                      /* along the wall behind it */
    double top = b->max[2] + base->pos[2];
    /* every hung thing over it, whatever its part, in one line along that wall, a gap apart, centred on it
     * ("a whiteboard and a clock above the desk": side by side, not in one another) */
    s_cluster_t *line[BMQ_SCENE_MAX_PARTS_LAYOUT], *held[BMQ_SCENE_MAX_PARTS_LAYOUT];
    size_t nline = 0, nheld = 0;
    double span = 0, gap = 0.15;
    from = 0;
    while ((cs = s_kids (L, p, k, BMQ_REL_ABOVE, depth, &n, &c, &from))) {
        for (size_t i = 0; i < n; i++) {
            double lo, hi;
            if (!isnan (cs[i].front)) s_turn (L, &cs[i], (isnan (L->parts[p].front) ? -M_PI / 2 : L->parts[p].front) - cs[i].front);
            s_zspan (L, &cs[i], &lo, &hi);
            /* over its back edge; "behind" it (a whiteboard behind the desk): just past that edge, at its own height */
            double out_of = L->parts[c].relation == BMQ_REL_BEHIND ? 1 : -1, e = out_of > 0 ? 0.005 : 0;
            double x = behind == 0 ? b->max[0] + base->pos[0] + out_of * (cs[i].hi[0] - cs[i].lo[0]) / 2 + e
                     : behind == 1 ? b->min[0] + base->pos[0] - out_of * (cs[i].hi[0] - cs[i].lo[0]) / 2 - e : cx;
            double y = behind == 3 ? b->max[1] + base->pos[1] + out_of * (cs[i].hi[1] - cs[i].lo[1]) / 2 + e
                     : behind == 2 ? b->min[1] + base->pos[1] - out_of * (cs[i].hi[1] - cs[i].lo[1]) / 2 - e : cy;
            s_centre_on (L, &cs[i], x, y);
            if (lo < top + 0.1 && out_of < 0) s_move (L, &cs[i], 0, 0, top + 0.1 - lo);
            if (nline < BMQ_SCENE_MAX_PARTS_LAYOUT && nheld < BMQ_SCENE_MAX_PARTS_LAYOUT) {
                span += (nline ? gap : 0) + cs[i].hi[axis] - cs[i].lo[axis];
                line[nline++] = &cs[i];
            }
            else s_merge (L, out, &cs[i]);
        }
        if (nheld < BMQ_SCENE_MAX_PARTS_LAYOUT) held[nheld++] = cs;
        else free (cs);                                 /* every copy above was merged already */
    }
    double at = (axis ? cy : cx) - span / 2;
    for (size_t i = 0; i < nline; i++) {
        double w = line[i]->hi[axis] - line[i]->lo[axis], mid = (line[i]->lo[axis] + line[i]->hi[axis]) / 2;
        s_move (L, line[i], axis ? 0 : at + w / 2 - mid, axis ? at + w / 2 - mid : 0, 0);
        at += w + gap;
        s_merge (L, out, line[i]);
    }
    for (size_t h = 0; h < nheld; h++) free (held[h]);
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
    /* hung things keep their height, unless they stand on something ("a dresser with a mirror on top") */
    in->pos[2] = L->parts[p].place == BMQ_PLACE_WALL && L->rel[p] != BMQ_REL_ON ? 0 : -b->min[2];
    in->theta = 0;
    out->rotatable = bmq_bounds_rotatable (L->parts[p].bounds);
    out->front = L->parts[p].front;
    out->seat = L->parts[p].seat;
    s_add (L, out, me);
    s_rect (L, out);
    if (depth > (int) L->np) return 0;                  /* no deeper than there are parts (no cycles reach here) */
    s_under (L, out, p, k, in, depth);
    s_on (L, out, p, k, in, depth);
    s_inside_above (L, out, p, k, in, depth);
    for (size_t c = 0; c < L->np && !L->oom; c++) {
        bmq_rel_t r = L->rel[c];
        if (r == BMQ_REL_NONE || r == BMQ_REL_ON || r == BMQ_REL_BETWEEN || r == BMQ_REL_UNDER || r == BMQ_REL_INSIDE
            || r == BMQ_REL_ABOVE || L->parts[c].ref[0] != p)
            continue;
        size_t *js = calloc (L->parts[c].count, sizeof *js);
        s_cluster_t *cs = calloc (L->parts[c].count, sizeof *cs);
        if (!js || !cs) { free (js); free (cs); L->oom = true; return -1; }
        size_t n = s_children (L, (int) c, p, k, js);
        for (size_t i = 0; i < n; i++) s_build (L, (int) c, js[i], &cs[i], depth + 1);
        int q = s_quarters (L->parts[p].front);
        if (r == BMQ_REL_AROUND) s_around (L, out, cs, n);
        else if (r == BMQ_REL_NEXT_TO || r == BMQ_REL_LONG_SIDE || r == BMQ_REL_SHORT_SIDE) {
            /* next to: right and left in turn, the freer side first; long / short side: its two long / short edges */
            size_t nr = 0, nl = 0;
            int a = s_turn_side (0, q), o = s_turn_side (1, q);
            if (r != BMQ_REL_NEXT_TO) {
                bool wide = b->max[0] - b->min[0] >= b->max[1] - b->min[1];
                bool fb = (r == BMQ_REL_LONG_SIDE) == wide;         /* the edges along X: front (-Y) and back (+Y) */
                a = fb ? 2 : 0;
                o = fb ? 3 : 1;
                for (size_t i = 0; i < n; i++) cs[i].seat = true;     /* each turns to it */
            }
            double ea = a == 0 ? out->hi[0] : a == 1 ? -out->lo[0] : a == 2 ? -out->lo[1] : out->hi[1];
            double eo = o == 0 ? out->hi[0] : o == 1 ? -out->lo[0] : o == 2 ? -out->lo[1] : out->hi[1];
            if (r == BMQ_REL_NEXT_TO && eo < ea - S_EPS) { int t = a; a = o; o = t; }
            double own_a = a == 0 ? b->max[0] + in->pos[0] : a == 1 ? -(b->min[0] + in->pos[0]) : a == 2 ? -(b->min[1] + in->pos[1]) : b->max[1] + in->pos[1];
            double own_o = o == 0 ? b->max[0] + in->pos[0] : o == 1 ? -(b->min[0] + in->pos[0]) : o == 2 ? -(b->min[1] + in->pos[1]) : b->max[1] + in->pos[1];
            if (r == BMQ_REL_NEXT_TO && fmin (ea - own_a, eo - own_o) > 0.3 && n == 1) {
                /* both sides taken (nightstands by a bed): next to it means at its front, turned to it */
                int front = s_turn_side (2, q);
                double ef = front == 0 ? out->hi[0] : front == 1 ? -out->lo[0] : front == 2 ? -out->lo[1] : out->hi[1];
                double own_f = front == 0 ? b->max[0] + in->pos[0] : front == 1 ? -(b->min[0] + in->pos[0])
                             : front == 2 ? -(b->min[1] + in->pos[1]) : b->max[1] + in->pos[1];
                if (ef - own_f < 0.3) {
                    s_side (L, out, cs, 1, front);
                    free (js);
                    free (cs);
                    continue;
                }
            }
            s_cluster_t *other = calloc (n + 1, sizeof *other);
            if (!other) { free (js); free (cs); L->oom = true; return -1; }
            for (size_t i = 0; i < n; i++) {
                if (i % 2) other[nl++] = cs[i];
                else cs[nr++] = cs[i];
            }
            if (r == BMQ_REL_NEXT_TO && !isnan (L->parts[p].front)) L->back_side = s_turn_side (3, q);
            s_side (L, out, cs, nr, a);
            s_side (L, out, other, nl, o);
            L->back_side = -1;
            free (other);
        }
        else if (r == BMQ_REL_FACING) {
            L->min_gap = 1.2;
            s_side (L, out, cs, n, s_turn_side (2, q));
            L->min_gap = 0;
        }
        else {
            if ((r == BMQ_REL_RIGHT_OF || r == BMQ_REL_LEFT_OF) && !isnan (L->parts[p].front)) L->back_side = s_turn_side (3, q);
            s_side (L, out, cs, n, s_turn_side (r == BMQ_REL_RIGHT_OF ? 0 : r == BMQ_REL_LEFT_OF ? 1 : r == BMQ_REL_IN_FRONT ? 2 : 3, q));
            L->back_side = -1;
        }
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
    bool hung = how == BMQ_ARRANGE_ROW && n > 1;        /* a row of hung things ("a mirror between two sconces"): */
    double back = -INFINITY;                            /* their backs (+Y) in one line, all on the wall */
    for (size_t i = 0; i < n && hung; i++) {
        hung = cs[i].n > 0 && L->parts[L->inst[cs[i].m[0]].part].place == BMQ_PLACE_WALL;
        back = fmax (back, cs[i].hi[1]);
    }
    for (size_t i = 0; i < n && hung; i++) s_move (L, &cs[i], 0, back - cs[i].hi[1], 0);
    for (size_t i = 0; i < n; i++) s_merge (L, out, &cs[i]);
}

/* "two desks facing each other": the first half in a row at +Y looking -Y, the rest at -Y looking +Y;
 * seats (sofas, armchairs) keep 1.2 m between the rows for a table, desks and the like stand close. */
static void s_face_rows (s_layout_t *L, s_cluster_t *out, s_cluster_t *cs, size_t n, bool seat)
{
    size_t half = (n + 1) / 2;
    double w = 0, d = 0, g = 1.0;
    for (size_t i = 0; i < n; i++) {
        s_face (L, &cs[i], 0, i < half ? 1 : -1);
        w = fmax (w, cs[i].hi[0] - cs[i].lo[0]);
        d = fmax (d, cs[i].hi[1] - cs[i].lo[1]);
        g = fmin (g, s_gap (s_size (&cs[i]), s_size (&cs[i])));
    }
    double apart = seat ? 1.2 : 0.05;
    for (size_t i = 0; i < n; i++) {
        size_t cols = i < half ? half : n - half, col = i < half ? i : i - half;
        s_centre_on (L, &cs[i], ((double) col - (double) (cols - 1) / 2) * (w + g), (i < half ? 1 : -1) * (d + apart) / 2);
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
    if (L->parts[p].each_other && n >= 2) s_face_rows (L, out, cs, n, L->parts[p].seat);
    else s_arrange (L, out, cs, n, L->parts[p].arrange);
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
        if (L->parts[a].each_other) {                   /* "two sofas facing each other, a table between them" */
            s_face (L, &row[0], -1, 0);
            s_face (L, &row[2], 1, 0);
        }
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
    for (size_t x = 0; x < L->np; x++) {         /* relations a part cannot take as asked */
        int a = L->parts[x].ref[0];
        if (L->rel[x] == BMQ_REL_NONE || a < 0) continue;
        char text[240], xs[72], as[72];
        s_words_of (L->parts[x].name, xs, sizeof xs, false);
        s_words_of (L->parts[a].name, as, sizeof as, false);
        if (L->rel[x] == BMQ_REL_ABOVE && L->parts[x].place != BMQ_PLACE_WALL) L->rel[x] = BMQ_REL_ON;     /* a lamp over the table: on it */
        else if (L->rel[x] == BMQ_REL_BEHIND && L->parts[x].place == BMQ_PLACE_WALL && L->parts[a].place != BMQ_PLACE_WALL)
            L->rel[x] = BMQ_REL_ABOVE;          /* "a tapestry behind the bed": on the wall behind it, over it */
        else if (L->rel[x] == BMQ_REL_INSIDE && !L->parts[a].holds) {
            bmq_box_t s;
            const bmq_box_t *ab = &L->box[a];
            bool top = bmq_bounds_support (L->parts[a].bounds, (ab->min[0] + ab->max[0]) / 2, (ab->min[1] + ab->max[1]) / 2, &s);
            L->rel[x] = top ? BMQ_REL_ON : BMQ_REL_NEXT_TO;
            snprintf (text, sizeof text, "the %s cannot go inside the %s (nothing can): it stands %s it", xs, as, top ? "on" : "next to");
            json_array_append_new (L->notes, json_string (text));
        }
        else if (L->rel[x] == BMQ_REL_INSIDE) {
            const bmq_box_t *xb = &L->box[x], *ab = &L->box[a];
            if (xb->max[0] - xb->min[0] > ab->max[0] - ab->min[0] || xb->max[1] - xb->min[1] > ab->max[1] - ab->min[1] + 0.02
                || xb->max[2] - xb->min[2] > ab->max[2] - ab->min[2]) {
                L->rel[x] = BMQ_REL_NEXT_TO;
                snprintf (text, sizeof text, "the %s is too big to go inside the %s: it stands next to it", xs, as);
                json_array_append_new (L->notes, json_string (text));
            }
        }
        bmq_box_t shelf;                        /* "books on a wall shelf": on it, up there */
        const bmq_box_t *sb = &L->box[a];
        bool held_up = (L->rel[x] == BMQ_REL_ON || L->rel[x] == BMQ_REL_INSIDE) && L->parts[a].place == BMQ_PLACE_WALL
                       && bmq_bounds_support (L->parts[a].bounds, (sb->min[0] + sb->max[0]) / 2, (sb->min[1] + sb->max[1]) / 2, &shelf)
                       && shelf.max[1] - shelf.min[1] >= 0.1;
        if (held_up && L->rel[x] == BMQ_REL_INSIDE) L->rel[x] = BMQ_REL_ON;
        if (L->room && L->parts[a].place == BMQ_PLACE_WALL && L->parts[x].place != BMQ_PLACE_WALL && L->rel[x] != BMQ_REL_FACING
            && L->rel[x] != BMQ_REL_IN_FRONT && !held_up) {
            L->wall_anchor[x] = a;                  /* "a desk under the window": against that wall, under it */
            L->rel[x] = BMQ_REL_NONE;
        }
        if (L->room && L->parts[x].place == BMQ_PLACE_WALL && L->parts[a].place != BMQ_PLACE_WALL && L->rel[x] == BMQ_REL_FACING) {
            L->face_anchor[x] = a;                  /* "a TV on the wall opposite the bed": on the wall across from it */
            L->rel[x] = BMQ_REL_NONE;
        }
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

/* ---- a room ----------------------------------------------------------------------- */

typedef struct { double lo[3], hi[3]; bool flat; } s_obst_t;

typedef struct {
    s_obst_t *o;
    size_t    n, cap;
    double    W, D;
} s_room_t;

static void s_obst_add (s_layout_t *L, s_room_t *R, const double lo[3], const double hi[3])
{
    if (R->n == R->cap) {
        size_t cap = R->cap ? R->cap * 2 : 16;
        s_obst_t *o = realloc (R->o, cap * sizeof *o);
        if (!o) { L->oom = true; return; }
        R->o = o;
        R->cap = cap;
    }
    s_obst_t *o = &R->o[R->n++];
    memcpy (o->lo, lo, sizeof o->lo);
    memcpy (o->hi, hi, sizeof o->hi);
    o->flat = hi[2] - lo[2] <= 0.05;
}

static void s_box3 (const s_layout_t *L, const s_cluster_t *c, double lo[3], double hi[3])
{
    lo[0] = c->lo[0]; lo[1] = c->lo[1]; hi[0] = c->hi[0]; hi[1] = c->hi[1];
    s_zspan (L, c, &lo[2], &hi[2]);
}

/* One member's box where it stands now. */
static void s_member_box (const s_layout_t *L, const s_inst_t *in, double lo[3], double hi[3])
{
    s_footprint (&L->box[in->part], in, lo, hi);
    lo[2] = L->box[in->part].min[2] + in->pos[2];
    hi[2] = L->box[in->part].max[2] + in->pos[2];
}

/* Is the cluster inside the floor and clear of everything placed, member by member (flat things only block flat things)? */
static bool s_room_free (const s_layout_t *L, const s_room_t *R, const s_cluster_t *c)
{
    if (c->lo[0] < -R->W / 2 - 1e-6 || c->hi[0] > R->W / 2 + 1e-6 || c->lo[1] < -R->D / 2 - 1e-6 || c->hi[1] > R->D / 2 + 1e-6)
        return false;
    for (size_t m = 0; m < c->n; m++) {
        double lo[3], hi[3];
        s_member_box (L, &L->inst[c->m[m]], lo, hi);
        bool flat = hi[2] - lo[2] <= 0.05;
        for (size_t i = 0; i < R->n; i++) {
            const s_obst_t *o = &R->o[i];
            if (o->flat && !flat) continue;
            double g = 0.02;
            if (lo[0] < o->hi[0] + g && o->lo[0] < hi[0] + g && lo[1] < o->hi[1] + g && o->lo[1] < hi[1] + g
                && lo[2] < o->hi[2] - 1e-6 && o->lo[2] < hi[2] - 1e-6)
                return false;
        }
    }
    return true;
}

/* Turn a cluster so its front looks along `angle` (round things and clusters that cannot turn stay). */
static void s_face_to (s_layout_t *L, s_cluster_t *c, double angle)
{
    if (isnan (c->front) || !c->rotatable) return;
    s_turn (L, c, angle - c->front);
    c->front = angle;
}

static const double s_inward[5] = { 0, -M_PI / 2, 0, M_PI, M_PI / 2 };    /* walls 1 back, 2 left, 3 right, 4 front */

/* Against wall w (its back to it), along it at t (x for back/front, y for left/right). */
static void s_at_wall (s_layout_t *L, const s_room_t *R, s_cluster_t *c, int w, double t)
{
    double hx = (c->hi[0] - c->lo[0]) / 2, hy = (c->hi[1] - c->lo[1]) / 2;
    double x = w == 2 ? -R->W / 2 + hx + 0.005 : w == 3 ? R->W / 2 - hx - 0.005 : t;
    double y = w == 1 ? R->D / 2 - hy - 0.005 : w == 4 ? -R->D / 2 + hy + 0.005 : t;
    s_centre_on (L, c, x, y);
    /* a rug under it does not keep it off the wall: what stands touches the wall, the rug slides out into the room */
    double lo[3], hi[3], slo = INFINITY, shi = -INFINITY;
    int a = w == 1 || w == 4 ? 1 : 0;
    s_member_box (L, &L->inst[c->m[0]], lo, hi);
    if (hi[2] - lo[2] <= 0.05) return;
    bool flat = false;
    for (size_t m = 0; m < c->n; m++) {
        s_member_box (L, &L->inst[c->m[m]], lo, hi);
        if (hi[2] - lo[2] <= 0.05) { flat = true; continue; }
        slo = fmin (slo, lo[a]);
        shi = fmax (shi, hi[a]);
    }
    if (!flat) return;
    double lim = a ? R->D / 2 : R->W / 2, d = w == 1 || w == 3 ? lim - 0.005 - shi : -lim + 0.005 - slo;
    if (fabs (d) < 1e-9) return;
    s_move (L, c, a ? 0 : d, a ? d : 0, 0);
    double alo[3], ahi[3];
    s_member_box (L, &L->inst[c->m[0]], alo, ahi);
    for (size_t m = 1; m < c->n; m++) {                 /* its centre no further than 4 cm off what stands on it */
        s_inst_t *in = &L->inst[c->m[m]];
        s_member_box (L, in, lo, hi);
        if (hi[2] - lo[2] > 0.05) continue;
        double over = hi[a] - (lim - 0.005), under = -lim + 0.005 - lo[a], mid = (lo[a] + hi[a]) / 2;
        double was = in->pos[a];
        if (over > 0) in->pos[a] -= fmin (over, fmax (0, mid - (alo[a] - 0.04)));
        if (under > 0) in->pos[a] += fmin (under, fmax (0, ahi[a] + 0.04 - mid));
        s_member_box (L, in, lo, hi);
        for (size_t o = 1; o < c->n && in->pos[a] != was; o++) {    /* not into what stands in front of it */
            double olo[3], ohi[3];
            s_member_box (L, &L->inst[c->m[o]], olo, ohi);
            if (ohi[2] - olo[2] > 0.05 && olo[2] < hi[2] && lo[0] < ohi[0] && olo[0] < hi[0] && lo[1] < ohi[1] && olo[1] < hi[1]) in->pos[a] = was;
        }
    }
    s_rect (L, c);
}

/* Try wall w, from t0 outwards; true when placed. */
static bool s_try_wall (s_layout_t *L, const s_room_t *R, s_cluster_t *c, int w, double t0)
{
    s_face_to (L, c, s_inward[w]);
    double half = (w <= 1 || w == 4 ? (c->hi[0] - c->lo[0]) : (c->hi[1] - c->lo[1])) / 2;
    double span = (w == 1 || w == 4 ? R->W : R->D) / 2 - half - 0.005;
    if (span < 0) return false;
    t0 = fmax (-span, fmin (span, t0));
    for (int i = 0; i <= (int) (4 * span / 0.05) + 2; i++) {
        double t = t0 + (i % 2 ? 1 : -1) * 0.05 * (double) ((i + 1) / 2);
        if (t < -span - 1e-9 || t > span + 1e-9) continue;
        s_at_wall (L, R, c, w, t);
        if (s_room_free (L, R, c)) return true;
    }
    return false;
}

static bool s_try_corner (s_layout_t *L, const s_room_t *R, s_cluster_t *c, int corner)
{
    static const int wall[4] = { 1, 1, 4, 4 };          /* back-right, back-left, front-right, front-left */
    s_face_to (L, c, s_inward[wall[corner]]);
    double hx = (c->hi[0] - c->lo[0]) / 2, hy = (c->hi[1] - c->lo[1]) / 2;
    double x = corner % 2 == 0 ? R->W / 2 - hx - 0.005 : -R->W / 2 + hx + 0.005;
    double y = corner < 2 ? R->D / 2 - hy - 0.005 : -R->D / 2 + hy + 0.005;
    s_centre_on (L, c, x, y);
    return s_room_free (L, R, c);
}

/* Its first member (the thing the prompt put in the corner) touching both walls of the corner, what relates to it
 * on the room's side: its back to the corner's back / front wall, else to its side wall ("an armchair in the corner
 * with a side table beside it", "a toilet in the corner with a holder next to it"). */
static bool s_try_corner_anchor (s_layout_t *L, const s_room_t *R, s_cluster_t *c, int corner, size_t who)
{
    static const int wall[4] = { 1, 1, 4, 4 }, side[4] = { 3, 2, 3, 2 };
    for (size_t m = 0; m < c->n; m++)
        if (m != who && L->inst[c->m[m]].part == L->inst[c->m[who]].part) return false;   /* several copies: the whole group goes in */
    for (int t = 0; t < 2; t++) {
        if (t && (isnan (c->front) || !c->rotatable)) break;
        s_face_to (L, c, s_inward[t ? side[corner] : wall[corner]]);
        double lo[3], hi[3];
        s_member_box (L, &L->inst[c->m[who]], lo, hi);
        double dx = corner % 2 == 0 ? R->W / 2 - 0.005 - hi[0] : -R->W / 2 + 0.005 - lo[0];
        double dy = corner < 2 ? R->D / 2 - 0.005 - hi[1] : -R->D / 2 + 0.005 - lo[1];
        s_move (L, c, dx, dy, 0);
        if (s_room_free (L, R, c)) return true;
    }
    return false;
}

/* The wall the cluster's first member has its back to (touches first: back, front, left, right), 0 when none. */
static int s_wall_touched (const s_layout_t *L, const s_room_t *R, const s_cluster_t *c)
{
    double lo[3], hi[3];
    s_member_box (L, &L->inst[c->m[0]], lo, hi);
    return hi[1] > R->D / 2 - 0.01 ? 1 : lo[1] < -R->D / 2 + 0.01 ? 4 : lo[0] < -R->W / 2 + 0.01 ? 2 : hi[0] > R->W / 2 - 0.01 ? 3 : 0;
}

/* Anywhere on the floor, nearest (cx, cy) first. */
static bool s_try_floor (s_layout_t *L, const s_room_t *R, s_cluster_t *c, double cx, double cy)
{
    double best = INFINITY, bx = 0, by = 0;
    for (double x = -R->W / 2; x <= R->W / 2 + 1e-9; x += 0.1)
        for (double y = -R->D / 2; y <= R->D / 2 + 1e-9; y += 0.1) {
            double d = hypot (x - cx, y - cy);
            if (d >= best) continue;
            s_centre_on (L, c, x, y);
            if (s_room_free (L, R, c)) { best = d; bx = x; by = y; }
        }
    if (!isfinite (best)) return false;
    s_centre_on (L, c, bx, by);
    return true;
}

typedef struct { int prio; double area; size_t g; } s_order_t;

static int s_order_cmp (const void *a, const void *b)
{
    const s_order_t *x = a, *y = b;
    if (x->prio != y->prio) return x->prio - y->prio;
    if (x->area != y->area) return x->area > y->area ? -1 : 1;
    return x->g < y->g ? -1 : x->g > y->g;
}

/* One try at placing every group in a room of R's size: how many copies found no room (their notes in notes). */
static size_t s_room_pass (s_layout_t *L, s_room_t *R, s_cluster_t *groups, const s_order_t *order, size_t ng, int *wall_of,
                           double *along, const int *group_of, const double *base_z, json_t *notes)
{
    bmq_layout_room_t *room = L->room;
    R->n = 0;
    room->outside = 0;
    for (size_t g = 0; g < ng; g++) {                  /* as built: a try before may have lifted some */
        double lo, hi;
        s_zspan (L, &groups[g], &lo, &hi);
        s_move (L, &groups[g], 0, 0, base_z[g] - lo);
        wall_of[g] = 0;
        along[g] = 0;
    }
    room->width = R->W;
    room->depth = R->D;
    room->door_x = R->W / 2 - 0.2 - 0.45;
    room->window_y = 0;
    if (room->door) {
        double lo[3] = { room->door_x - 0.45, R->D / 2 - 0.9, 0 }, hi[3] = { room->door_x + 0.45, R->D / 2, 2.1 };
        s_obst_add (L, R, lo, hi);
    }
    if (room->window) {
        double lo[3] = { -R->W / 2, -0.65, 0.9 }, hi[3] = { -R->W / 2 + 0.3, 0.65, 2.2 };
        s_obst_add (L, R, lo, hi);
    }
    double outside = R->W / 2 + 0.5;
    size_t misplaced = 0;                               /* not where it should go: a bigger room may fix that */
    for (size_t o = 0; o < ng && !L->oom; o++) {
        size_t g = order[o].g;
        s_cluster_t *c = &groups[g];
        int p = L->inst[c->m[0]].part;
        const bmq_layout_part_t *part = &L->parts[p];
        bmq_spot_t spot = part->spot != BMQ_SPOT_NONE ? part->spot : part->usual;
        if (part->place == BMQ_PLACE_WALL) spot = BMQ_SPOT_ONWALL;
        bool ok = false;
        int wa = L->wall_anchor[p] >= 0 ? group_of[L->wall_anchor[p]] : -1;
        if (wa >= 0 && wall_of[wa] > 0) ok = s_try_wall (L, R, c, wall_of[wa], along[wa]), wall_of[g] = ok ? wall_of[wa] : 0;
        static const int opposite[5] = { 0, 4, 3, 2, 1 };
        int fa = L->face_anchor[p] >= 0 ? group_of[L->face_anchor[p]] : -1;
        if (!ok && fa >= 0 && wall_of[fa] > 0 && (ok = s_try_wall (L, R, c, opposite[wall_of[fa]], along[fa]))) wall_of[g] = opposite[wall_of[fa]];
        for (size_t m = 1; m < c->n && !ok && spot != BMQ_SPOT_CENTER; m++) {
            int q = L->inst[c->m[m]].part;          /* "a christmas tree in the corner next to the fireplace": the tree in it */
            bmq_rel_t r = L->rel[q];
            if (L->parts[q].spot != BMQ_SPOT_CORNER || L->parts[q].count != 1 || L->parts[q].ref[0] != p
                || (r != BMQ_REL_NEXT_TO && r != BMQ_REL_LEFT_OF && r != BMQ_REL_RIGHT_OF))
                continue;
            for (int k = 0; k < 4 && !ok; k++)
                if ((ok = s_try_corner_anchor (L, R, c, k, m))) wall_of[g] = s_wall_touched (L, R, c);
        }
        static const int walls[4] = { 1, 2, 3, 4 };
        if (!ok && (spot == BMQ_SPOT_WALL || spot == BMQ_SPOT_ONWALL || spot == BMQ_SPOT_NONE)) {
            int first = part->wall > 0 ? part->wall : 0;
            if (first && (ok = s_try_wall (L, R, c, first, 0))) wall_of[g] = first;
            for (int w = 0; w < 4 && !ok; w++)
                if ((ok = s_try_wall (L, R, c, walls[w], 0))) wall_of[g] = walls[w];
        }
        if (!ok && part->place == BMQ_PLACE_WALL && c->n == 1) {
            /* no wall has room at its own height (a small room, many things on its walls): higher or lower, in
             * the free band of a wall (35 cm up at least, under the ceiling), said */
            static const double shift[] = { 0.3, -0.3, 0.6, -0.6, 0.85, -0.85 };
            double zlo, zhi;
            s_zspan (L, c, &zlo, &zhi);
            for (size_t h = 0; h < sizeof shift / sizeof *shift && !ok; h++) {
                if (zlo + shift[h] < 0.35 || zhi + shift[h] > BMQ_ROOM_WALL_H - 0.05) continue;
                s_move (L, c, 0, 0, shift[h]);
                for (int w = 0; w < 4 && !ok; w++)
                    if ((ok = s_try_wall (L, R, c, walls[w], 0))) wall_of[g] = walls[w];
                if (!ok) s_move (L, c, 0, 0, -shift[h]);
                else {
                    char moved[240], nm[72];
                    s_words_of (part->name, nm, sizeof nm, false);
                    snprintf (moved, sizeof moved, "the walls had no room for the %s at its usual height: it hangs %.0f cm %s",
                              nm, fabs (shift[h]) * 100, shift[h] > 0 ? "higher" : "lower");
                    json_array_append_new (notes, json_string (moved));
                }
            }
        }
        if (!ok && spot == BMQ_SPOT_CORNER && c->n > 1)
            for (int k = 0; k < 4 && !ok; k++) ok = s_try_corner_anchor (L, R, c, k, 0);
        if (!ok && spot == BMQ_SPOT_CORNER)
            for (int k = 0; k < 4 && !ok; k++) ok = s_try_corner (L, R, c, k);
        if (!ok && spot == BMQ_SPOT_CENTER) {
            s_face_to (L, c, -M_PI / 2);
            ok = s_try_floor (L, R, c, 0, 0);
        }
        if (!ok && spot != BMQ_SPOT_ONWALL) {                /* any wall, then anywhere */
            for (int w = 0; w < 4 && !ok; w++)
                if ((ok = s_try_wall (L, R, c, walls[w], 0))) wall_of[g] = walls[w];
            if (!ok) ok = s_try_floor (L, R, c, 0, 0);
            misplaced += ok && spot != BMQ_SPOT_CENTER;
        }
        if (wall_of[g] > 0) along[g] = wall_of[g] == 1 || wall_of[g] == 4 ? (c->lo[0] + c->hi[0]) / 2 : (c->lo[1] + c->hi[1]) / 2;
        char text[300], name[72];
        s_words_of (part->name, name, sizeof name, false);
        if (!ok) {
            s_centre_on (L, c, 0, 0);
            if (part->place == BMQ_PLACE_WALL) {            /* a hung thing with no wall left: on the floor outside */
                double lo, hi;
                s_zspan (L, c, &lo, &hi);
                s_move (L, c, 0, 0, -lo);
            }
            s_move (L, c, outside - c->lo[0], 0, 0);
            outside = c->hi[0] + 0.3;
            room->outside += c->n;
            snprintf (text, sizeof text, "no room left in the %.1f × %.1f m room for the %s: it stands outside, beside the room",
                      R->W, R->D, name);
            json_array_append_new (notes, json_string (text));
            continue;
        }
        double lo[3], hi[3];
        s_box3 (L, c, lo, hi);
        if (hi[2] - lo[2] > 0.05 && lo[2] < 0.01) {           /* standing on a rug: on its top */
            double lift = 0;
            for (size_t i = 0; i < R->n; i++)
                if (R->o[i].flat && lo[0] < R->o[i].hi[0] && R->o[i].lo[0] < hi[0] && lo[1] < R->o[i].hi[1] && R->o[i].lo[1] < hi[1])
                    lift = fmax (lift, R->o[i].hi[2]);
            if (lift > 0) s_move (L, c, 0, 0, lift);
        }
        for (size_t m = 0; m < c->n; m++) {
            s_member_box (L, &L->inst[c->m[m]], lo, hi);
            s_obst_add (L, R, lo, hi);
        }
    }
    return room->outside * 1000 + misplaced;
}

/* Every group into the room; see scene_layout.h. */
static void s_room (s_layout_t *L, s_cluster_t *groups, size_t ng)
{
    bmq_layout_room_t *room = L->room;
    s_room_t R = { 0 };
    int *wall_of = calloc (ng + 1, sizeof *wall_of), *group_of = calloc (L->np + 1, sizeof *group_of);
    double *along = calloc (ng + 1, sizeof *along), *base_z = calloc (ng + 1, sizeof *base_z);
    s_order_t *order = calloc (ng + 1, sizeof *order);
    if (!wall_of || !group_of || !along || !order || !base_z) { L->oom = true; goto done; }
    for (size_t g = 0; g < ng; g++) {
        double hi;
        s_zspan (L, &groups[g], &base_z[g], &hi);
    }
    for (size_t p = 0; p < L->np; p++) group_of[p] = -1;
    double area = 0, biggest = 0;
    for (size_t g = 0; g < ng; g++) {
        for (size_t i = 0; i < groups[g].n; i++) group_of[L->inst[groups[g].m[i]].part] = (int) g;
        double lo[3], hi[3];
        s_box3 (L, &groups[g], lo, hi);
        const bmq_layout_part_t *part = &L->parts[L->inst[groups[g].m[0]].part];
        double a = (hi[0] - lo[0]) * (hi[1] - lo[1]);
        if (part->place != BMQ_PLACE_WALL && hi[2] - lo[2] > 0.05) area += a;
        biggest = fmax (biggest, fmax (hi[0] - lo[0], hi[1] - lo[1]));
        order[g] = (s_order_t) { 4, a, g };
    }
    if (room->sized) { R.W = room->width; R.D = room->depth; }
    else {
        double floor_area = fmax (room->min_area * room->scale * room->scale, 1.8 * area + 1.5);
        R.D = ceil (sqrt (floor_area / 1.25) * 10) / 10;
        R.W = ceil (fmax (floor_area / R.D, biggest + 1.3) * 10) / 10;
        R.D = fmax (R.D, ceil ((fmin (biggest, R.W) + 0.4) * 10) / 10);
    }
    for (size_t g = 0; g < ng; g++) {
        int p = L->inst[groups[g].m[0]].part;
        const bmq_layout_part_t *part = &L->parts[p];
        double lo, hi;
        s_zspan (L, &groups[g], &lo, &hi);
        bool anchor = false;
        for (size_t x = 0; x < L->np; x++) anchor = anchor || L->wall_anchor[x] == p;
        bmq_spot_t spot = part->spot != BMQ_SPOT_NONE ? part->spot : part->usual;
        order[g].prio = anchor && part->place == BMQ_PLACE_WALL ? 0 : L->face_anchor[p] >= 0 ? 5 : spot == BMQ_SPOT_CENTER && hi - lo <= 0.05 ? 1
                      : part->spot != BMQ_SPOT_NONE ? 2 : L->wall_anchor[p] >= 0 ? 3 : part->place == BMQ_PLACE_WALL ? 5 : 4;
    }
    qsort (order, ng, sizeof *order, s_order_cmp);
    for (int attempt = 0; !L->oom; attempt++) {          /* a room that was not sized grows until all fits */
        json_t *notes = json_array ();
        if (!notes) { L->oom = true; break; }
        size_t out = s_room_pass (L, &R, groups, order, ng, wall_of, along, group_of, base_z, notes);
        if (out == 0 || room->sized || attempt >= 6 || (out < 1000 && attempt >= 3)) {
            json_array_extend (L->notes, notes);
            json_decref (notes);
            break;
        }
        json_decref (notes);
        R.W = ceil (R.W * 1.12 * 10) / 10;
        R.D = ceil (R.D * 1.12 * 10) / 10;
    }
done:
    free (R.o);
    free (wall_of);
    free (group_of);
    free (along);
    free (base_z);
    free (order);
}

int bmq_layout (const bmq_layout_part_t *parts, size_t n, bmq_placement_t **place, bmq_box_t *scene, json_t *notes,
                bmq_layout_room_t *room)
{
    s_layout_t L = { .parts = parts, .np = n, .notes = notes ? json_incref (notes) : json_array (), .room = room, .back_side = -1 };
    size_t total = 0;
    for (size_t p = 0; p < n; p++) total += parts[p].count;
    L.inst = calloc (total + 1, sizeof *L.inst);
    L.first = calloc (n + 1, sizeof *L.first);
    L.box = calloc (n + 1, sizeof *L.box);
    L.rel = calloc (n + 1, sizeof *L.rel);
    L.grouped = calloc (n + 1, sizeof *L.grouped);
    L.wall_anchor = calloc (n + 1, sizeof *L.wall_anchor);
    L.face_anchor = calloc (n + 1, sizeof *L.face_anchor);
    for (size_t p = 0; L.wall_anchor && L.face_anchor && p < n; p++) L.wall_anchor[p] = L.face_anchor[p] = -1;
    s_cluster_t *groups = calloc (n + 1, sizeof *groups);
    int rc = -1;
    memset (scene, 0, sizeof *scene);
    if (!L.inst || !L.first || !L.box || !L.rel || !L.grouped || !L.wall_anchor || !L.face_anchor || !groups || !L.notes) goto done;
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
    if (room) s_room (&L, groups, ng);
    if (L.oom) goto done;
    /* the groups without a position in a row along X, centred; the others where they were asked to be */
    double cursor = 0, prev = 0;
    if (room) ng = 0;
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
    free (L.wall_anchor);
    free (L.face_anchor);
    json_decref (L.notes);
    return rc;
}

/* ---- checking what was placed ------------------------------------------------------ */

/* Where b's centre is in a's frame: its front along +f, its right (as seen from the front) along +r. */
static void s_frame (const bmq_layout_part_t *ap, const bmq_placement_t *at, const bmq_box_t *a, const bmq_box_t *b,
                     double *f, double *r)
{
    double front = (isnan (ap->front) ? -M_PI / 2 : ap->front) + at->theta;
    double ux = cos (front), uy = sin (front);
    double dx = (b->min[0] + b->max[0]) / 2 - (a->min[0] + a->max[0]) / 2, dy = (b->min[1] + b->max[1]) / 2 - (a->min[1] + a->max[1]) / 2;
    *f = dx * ux + dy * uy;
    *r = -(dx * uy - dy * ux);      /* facing the front, the viewer's right is the object's left: -(u × d) */
}

static bool s_apart (const bmq_box_t *a, const bmq_box_t *b, double *gap)
{
    double dx = fmax (a->min[0] - b->max[0], b->min[0] - a->max[0]), dy = fmax (a->min[1] - b->max[1], b->min[1] - a->max[1]);
    *gap = fmax (dx, dy);
    return *gap > -1e-3;
}

size_t bmq_layout_check (const bmq_layout_part_t *parts, size_t n, bmq_placement_t *const *place, const bmq_layout_room_t *room,
                         json_t *notes)
{
    size_t failed = 0;
    for (size_t p = 0; p < n; p++) {
        const bmq_layout_part_t *part = &parts[p];
        char name[72], other[72], text[320];
        s_words_of (part->name, name, sizeof name, false);
        bool said = false;
        for (size_t k = 0; k < part->count && !said; k++) {
            bmq_box_t b, a;
            s_copy_box (part, &place[p][k], &b);
            const char *why = NULL;
            int ap = part->ref[0];
            if (part->relation != BMQ_REL_NONE && ap >= 0 && ap < (int) n && parts[ap].count > 0) {
                const bmq_placement_t *at = &place[ap][k % parts[ap].count];
                s_copy_box (&parts[ap], at, &a);
                double f, r, gap, cx = (b.min[0] + b.max[0]) / 2, cy = (b.min[1] + b.max[1]) / 2;
                bool within = cx >= a.min[0] - 1e-3 && cx <= a.max[0] + 1e-3 && cy >= a.min[1] - 1e-3 && cy <= a.max[1] + 1e-3;
                s_frame (&parts[ap], at, &a, &b, &f, &r);
                bool apart = s_apart (&a, &b, &gap);
                if (parts[ap].place == BMQ_PLACE_WALL && parts[p].place != BMQ_PLACE_WALL && part->relation != BMQ_REL_FACING
                    && part->relation != BMQ_REL_IN_FRONT) {    /* under / by a hung thing */
                    bool x_in = cx >= a.min[0] - 0.3 && cx <= a.max[0] + 0.3, y_in = cy >= a.min[1] - 0.3 && cy <= a.max[1] + 0.3;
                    within = (x_in && fabs (cy - (a.min[1] + a.max[1]) / 2) < 1.5) || (y_in && fabs (cx - (a.min[0] + a.max[0]) / 2) < 1.5);
                    if (part->relation == BMQ_REL_UNDER && (!within || b.max[2] > a.min[2] + 0.02)) why = "is not under";
                    else if (part->relation != BMQ_REL_UNDER && !within) why = "is not by";
                    if (why) s_words_of (parts[ap].name, other, sizeof other, false);
                }
                else switch (part->relation) {
                case BMQ_REL_ON: if (!within || b.min[2] < a.min[2] + 1e-3) why = "is not on"; break;
                case BMQ_REL_UNDER:                     /* a rug under a desk against the wall: slid out 4 cm at most */
                    if (!(within || (b.max[2] - b.min[2] <= 0.05 && cx >= a.min[0] - 0.041 && cx <= a.max[0] + 0.041
                                     && cy >= a.min[1] - 0.041 && cy <= a.max[1] + 0.041)) || b.max[2] > a.max[2] + 1e-3)
                        why = "is not under";
                    break;
                case BMQ_REL_INSIDE: if (!within || b.min[2] < a.min[2] - 1e-3 || b.max[2] > a.max[2] + 1e-3) why = "is not inside"; break;
                case BMQ_REL_ABOVE: if (b.min[2] < a.max[2] - 1e-3) why = "is not above"; break;
                case BMQ_REL_NEXT_TO: case BMQ_REL_LONG_SIDE: case BMQ_REL_SHORT_SIDE:
                    if (!apart || gap > 1.0) why = "is not next to";
                    break;
                case BMQ_REL_LEFT_OF: if (!apart || r > -1e-3) why = "is not left of"; break;
                case BMQ_REL_RIGHT_OF: if (!apart || r < 1e-3) why = "is not right of"; break;
                case BMQ_REL_IN_FRONT: case BMQ_REL_FACING: if (!apart || f < 1e-3) why = "is not in front of"; break;
                case BMQ_REL_BEHIND: if (!apart || f > -1e-3) why = "is not behind"; break;
                default: break;
                }
                if (why) s_words_of (parts[ap].name, other, sizeof other, false);
            }
            if (!why && room && part->spot != BMQ_SPOT_NONE) {
                double W = room->width / 2, D = room->depth / 2;
                int touching = (b.min[0] < -W + 0.05) + (b.max[0] > W - 0.05) + (b.min[1] < -D + 0.05) + (b.max[1] > D - 0.05);
                double cx = (b.min[0] + b.max[0]) / 2, cy = (b.min[1] + b.max[1]) / 2;
                if (part->spot == BMQ_SPOT_WALL && touching < 1) why = "is not against a wall";
                if (part->spot == BMQ_SPOT_ONWALL && touching < 1) why = "is not on a wall";
                if (part->spot == BMQ_SPOT_CORNER && touching < 2) why = "is not in a corner";
                if (part->spot == BMQ_SPOT_CENTER && (fabs (cx) > W / 2 || fabs (cy) > D / 2)) why = "is not in the middle";
                if (why) {
                    snprintf (text, sizeof text, "the %s %s: there was no room for it there", name, why);
                    json_array_append_new (notes, json_string (text));
                    failed++;
                    said = true;
                }
                continue;
            }
            if (why) {
                snprintf (text, sizeof text, "the %s %s the %s: the layout could not meet it", name, why, other);
                json_array_append_new (notes, json_string (text));
                failed++;
                said = true;
            }
        }
    }
    return failed;
}
