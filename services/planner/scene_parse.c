/* scene_parse — prompt → parts, relations, what was not understood; see scene_parse.h. */
#include "scene_parse.h"
#include "scene_mentions.h"
#include "recipe_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_PEND_TOKENS  24
#define S_MAX_PHRASES  16
#define S_MAX_OFFSET   1000.0

typedef struct {
    size_t toks[S_PEND_TOKENS], n;
    double count;
    bool   count_given, definite, has_color;
    double rgb[3];
    char   color_word[24];
    double scale;
    char   scale_word[24];
    bmq_arrange_t arrange;
    bmq_spot_t spot;
    int    wall, material;
    bool   negated;
} s_pending_t;

typedef struct {
    bool      active;
    bmq_rel_t kind;
    int       subject, obj[2], nobj;
    int       stage;                /* 0 wants an object, 1 wants "and" (between), 2 a second object, 3 a subject */
    size_t    toks[8], n;
    bool      each;                 /* "a lamp on each nightstand": one per copy of the object */
    bool      pronoun;              /* its object was "them" ("a table between them and a lamp on it": complete) */
    int       group[BMQ_SCENE_MAX_PARTS];   /* "X and Y on Z": the subject's partners, who get it too */
    size_t    ngroup;
} s_relation_t;

typedef struct {
    bmq_tokens_t         k;
    bmq_scene_request_t *req;
    bmq_mention_t        mention[BMQ_TOKENS_MAX];                    /* the object named from each token */
    bool                 used[BMQ_TOKENS_MAX], weak[BMQ_TOKENS_MAX];
    bool                 inherited[BMQ_SCENE_MAX_PARTS];            /* its relation came from "with" */
    bool                 via_it[BMQ_SCENE_MAX_PARTS];               /* its relation's object was "it" */
    bool                 flanks[BMQ_SCENE_MAX_PARTS];               /* "X flanked by Y": Y; "it" after it is X */
    int                  of_holder;                                 /* "a basket of blankets": the basket, what follows is its */
    size_t               pos_tok[BMQ_SCENE_MAX_PARTS][2];           /* first token of its position, count */
    int                  order[BMQ_TOKENS_MAX];                      /* parts in the order named */
    size_t               norder;
    s_pending_t          pend;
    s_relation_t         rel;
    int                  last;                                       /* the phrase a relation would start from */
    bool                 post;                                       /* right after that phrase's object word */
    int                  with_anchor;
    int                  with_members[BMQ_SCENE_MAX_PARTS];          /* what that "with" hung on it, in order */
    size_t               nwith;
    size_t               with_toks[4], with_n;
    bool                 with_applied;
    bool                 with_each;                                  /* "each with a lamp": one per copy of the anchor */
    bool                 side_total;
    int                  colon_anchor;                               /* "a cluttered desk: a monitor, a mug": the desk */
    size_t               colon_from;                                 /* order[] index after that colon */                                 /* "two nightstands on either side": two in all */
    int                  group[BMQ_SCENE_MAX_PARTS];                 /* phrases joined by "and" since the last break */
    size_t               ngroup;
    bool                 room_just;                                  /* a room word was the last thing named */
    size_t               sent_start;                                 /* order[] index where this sentence began */
    bool                 neg_more;                                   /* "no desk or chair": the negation goes on */
    double               clamped_value;                              /* a coordinate past S_MAX_OFFSET (0: none) */
} s_parse_t;

/* ---- pieces of a phrase --------------------------------------------------------------- */

static void s_use (s_parse_t *p, size_t from, size_t n)
{
    for (size_t i = from; i < from + n && i < p->k.n; i++) p->used[i] = true;
}

static void s_pend_take (s_parse_t *p, size_t from, size_t n)
{
    for (size_t i = from; i < from + n && p->pend.n < S_PEND_TOKENS; i++) p->pend.toks[p->pend.n++] = i;
}

static void s_pend_reset (s_parse_t *p)
{
    memset (&p->pend, 0, sizeof p->pend);
    p->pend.scale = 1.0;
    p->pend.material = -1;
}

static bool s_word (const s_parse_t *p, size_t i, const char *w)
{
    return i < p->k.n && p->k.t[i].kind == BMQ_TOK_WORD && !strcmp (p->k.t[i].text, w);
}

static bool s_number (const s_parse_t *p, size_t i)
{
    return i < p->k.n && p->k.t[i].kind == BMQ_TOK_NUMBER;
}

/* A number, or x/y/z then a number. */
static bool s_coordinate (const s_parse_t *p, size_t j)
{
    const char *t = j < p->k.n ? p->k.t[j].text : "";
    return s_number (p, j) || (p->k.t[j].kind == BMQ_TOK_WORD && t[1] == 0 && t[0] >= 'x' && t[0] <= 'z' && s_number (p, j + 1));
}

/* "at 3 0 0", "at (3, 0, -2)", "at x=3 y=2", "à 1 2 0", "en 1 2 3": tokens used, 0 if none. */
static size_t s_position (s_parse_t *p, size_t i, double v[3])
{
    static const char *lead[] = { "at", "a", "en", "em", "position", "located", "placed", "positioned" };
    bool is_lead = false;
    for (size_t w = 0; w < sizeof lead / sizeof *lead; w++) is_lead = is_lead || s_word (p, i, lead[w]);
    if (!is_lead) return 0;
    size_t j = i + 1 + (s_word (p, i + 1, "at") ? 1 : 0);
    int got = 0, labelled = 0;
    v[0] = v[1] = v[2] = 0;
    while (got < 3 && j < p->k.n) {
        int slot = got;
        if (got > 0 && p->k.t[j].kind == BMQ_TOK_BREAK && p->k.t[j].text[0] == ',' && s_coordinate (p, j + 1)) j++;
        const char *t = p->k.t[j].text;
        if (p->k.t[j].kind == BMQ_TOK_WORD && t[1] == 0 && t[0] >= 'x' && t[0] <= 'z' && s_number (p, j + 1)) {
            slot = t[0] - 'x';
            labelled++;
            j++;
        }
        if (!s_number (p, j)) break;
        double x = p->k.t[j].value;
        v[slot] = x < -S_MAX_OFFSET ? -S_MAX_OFFSET : x > S_MAX_OFFSET ? S_MAX_OFFSET : x;
        if (v[slot] != x) p->clamped_value = x;
        got++;
        j++;
    }
    return got >= 2 || labelled >= 1 ? j - i : 0;
}

/* A size for the phrase just named (true), else for the one that follows (false; false too when both have one). */
static bool s_set_scale (s_parse_t *p, double f, const char *word, bool *taken)
{
    f = f < 0.05 ? 0.05 : f > 20 ? 20 : f;
    *taken = true;
    if (p->post && p->last >= 0 && p->req->part[p->last].scale == 1.0) {
        p->req->part[p->last].scale = f;
        snprintf (p->req->part[p->last].scale_word, sizeof p->req->part[p->last].scale_word, "%s", word);
        return true;
    }
    if (p->pend.scale == 1.0) {
        p->pend.scale = f;
        snprintf (p->pend.scale_word, sizeof p->pend.scale_word, "%s", word);
    }
    else *taken = false;
    return false;
}

/* Tokens [i, i + n) said a size: used now, kept for the next phrase, or left unused. */
static void s_scale_words (s_parse_t *p, double f, const char *word, size_t i, size_t n)
{
    bool taken;
    if (s_set_scale (p, f, word, &taken)) s_use (p, i, n);
    else if (taken) s_pend_take (p, i, n);
}

/* ---- relations ---------------------------------------------------------------------- */

/* The object named before `subject` (for "it", "dessus"): the one "with" hung it on, else the previous one. */
static int s_antecedent (const s_parse_t *p, int subject)
{
    if (subject >= 0 && p->inherited[subject]) return p->req->part[subject].ref[0];
    size_t at = p->norder;
    while (at > 0 && p->order[at - 1] != subject) at--;
    for (size_t j = at ? at - 1 : p->norder; j > 0; j--) {
        if (p->order[j - 1] == subject) continue;
        int c = p->order[j - 1];
        /* "an armchair with a lamp behind it and a table beside it": the second "it" is the first one's */
        if (p->flanks[c] && p->req->part[c].ref[0] >= 0 && p->req->part[c].ref[0] != subject) return p->req->part[c].ref[0];
        if (p->via_it[c] && p->req->part[c].relation != BMQ_REL_NONE && p->req->part[c].ref[0] >= 0 && p->req->part[c].ref[0] != subject)
            return p->req->part[c].ref[0];
        /* "an easel by the window, a stool in front of it": the easel, not the window it was placed by */
        if (j >= 2 && p->order[j - 2] != subject && p->order[j - 2] != c) {
            const bmq_scene_part_t *head = &p->req->part[p->order[j - 2]];
            if (head->ref[0] == c && head->ref[1] < 0 && (head->relation == BMQ_REL_NEXT_TO || head->relation == BMQ_REL_FACING
                                                          || head->relation == BMQ_REL_IN_FRONT || head->relation == BMQ_REL_BEHIND
                                                          || head->relation == BMQ_REL_LEFT_OF || head->relation == BMQ_REL_RIGHT_OF)
                && !p->inherited[p->order[j - 2]])
                return p->order[j - 2];
        }
        return c;
    }
    return -1;
}

static bool s_reaches (const s_parse_t *p, int from, int to, int depth)
{
    if (from < 0 || depth > BMQ_SCENE_MAX_PARTS) return false;
    if (from == to) return true;
    const bmq_scene_part_t *part = &p->req->part[from];
    return part->relation != BMQ_REL_NONE && (s_reaches (p, part->ref[0], to, depth + 1) || s_reaches (p, part->ref[1], to, depth + 1));
}

/* Give `subject` a relation; false (and nothing changed) when it cannot take it. */
static bool s_relate (s_parse_t *p, int subject, bmq_rel_t kind, int a, int b, bool inherited)
{
    if (subject < 0 || a < 0) return false;
    bmq_scene_part_t *part = &p->req->part[subject];
    if (part->relation != BMQ_REL_NONE && !p->inherited[subject]) return false;
    if (s_reaches (p, a, subject, 0) || s_reaches (p, b, subject, 0)) return false;     /* no cycles, not on itself */
    if (kind == BMQ_REL_EACH_SIDE) {        /* "two chairs on each side of the table": two a side */
        /* "two nightstands on either side", "two lamps, one on each side": two in all, one a side; a seat
         * ("two chairs on each side of the table") or any other count is per side */
        bool total = p->side_total || (part->count_given && part->count == 2 && !json_is_true (json_object_get (part->recipe, "seat")));
        if (!total || !part->count_given) part->count = fmin ((part->count_given ? part->count : 1) * 2, BMQ_COUNT_MAX);
        part->count_given = true;
        kind = BMQ_REL_NEXT_TO;
    }
    part->relation = kind == BMQ_REL_WITH ? BMQ_REL_NEXT_TO : kind;
    part->ref[0] = a;
    part->ref[1] = b;
    p->inherited[subject] = inherited;
    part->with_given = kind == BMQ_REL_WITH;
    if (part->has_position) {               /* a relation places it: its position words go unused */
        part->has_position = false;
        for (size_t t = 0; t < p->pos_tok[subject][1]; t++) p->used[p->pos_tok[subject][0] + t] = false;
    }
    return true;
}

/* "two chairs and a printer on a cabinet": a thing that stands on surfaces (a printer) does not
 * carry a seat or a piece of furniture up with it: only the printer goes on the cabinet. */
static bool s_not_on_top (const s_parse_t *p, bmq_rel_t kind, int subject, int member)
{
    if (kind != BMQ_REL_ON && kind != BMQ_REL_INSIDE && kind != BMQ_REL_ABOVE) return false;
    const json_t *sub = p->req->part[subject].recipe, *mem = p->req->part[member].recipe;
    const char *sp = json_string_value (json_object_get (sub, "place")), *mp = json_string_value (json_object_get (mem, "place"));
    bool small = sp && !strcmp (sp, "surface");
    return small && (json_is_true (json_object_get (mem, "seat")) || !mp || strcmp (mp, "surface"));
}

static void s_rel_finish (s_parse_t *p, bool ok)
{
    s_relation_t *r = &p->rel;
    int b = r->nobj > 1 ? r->obj[1] : -1;
    if (r->active && ok && (r->kind == BMQ_REL_OF || r->kind == BMQ_REL_WEARING)) {     /* the second goes in / on the first */
        int holder = r->subject;
        /* "a fruit bowl on the table filled with apples": the bowl that stands on it holds them, not the table */
        if (r->kind == BMQ_REL_OF && holder >= 0 && !json_is_true (json_object_get (p->req->part[holder].recipe, "holds")))
            for (int x = (int) p->req->count - 1; x >= 0; x--)
                if (x != holder && x != r->obj[0] && p->req->part[x].ref[0] == holder && p->req->part[x].relation == BMQ_REL_ON
                    && json_is_true (json_object_get (p->req->part[x].recipe, "holds"))) { holder = x; break; }
        if (holder >= 0 && r->obj[0] >= 0 && holder != r->obj[0]
            && s_relate (p, r->obj[0], r->kind == BMQ_REL_OF ? BMQ_REL_INSIDE : BMQ_REL_ON, holder, -1, false)) {
            for (size_t t = 0; t < r->n; t++) p->used[r->toks[t]] = true;
            p->of_holder = holder;                              /* "a basket of blankets next to the sofa": the basket */
        }
        memset (r, 0, sizeof *r);
        return;
    }
    if (r->active && ok && r->kind == BMQ_REL_FLANKED) {   /* "a bed flanked by nightstands": one a side, two in all */
        if (r->subject >= 0 && r->obj[0] >= 0 && r->subject != r->obj[0]
            && s_relate (p, r->obj[0], BMQ_REL_NEXT_TO, r->subject, -1, false)) {
            for (size_t t = 0; t < r->n; t++) p->used[r->toks[t]] = true;
            p->flanks[r->obj[0]] = true;
            bmq_scene_part_t *side = &p->req->part[r->obj[0]];
            if (!side->count_given) { side->count = 2; side->count_given = true; }
        }
        memset (r, 0, sizeof *r);
        return;
    }
    bool related = r->active && ok && s_relate (p, r->subject, r->kind, r->obj[0], b, false);
    p->side_total = false;
    if (related) {
        for (size_t t = 0; t < r->n; t++) p->used[r->toks[t]] = true;
        bmq_scene_part_t *sub = &p->req->part[r->subject];
        if (r->each && (!sub->count_given || sub->count == 1)) sub->count = p->req->part[r->obj[0]].count;
        bool sides = false;                             /* "a bookshelf on either side of the desk": one a side */
        for (size_t t = 0; t < r->n; t++)
            sides = sides || s_word (p, r->toks[t], "either") || s_word (p, r->toks[t], "both") || s_word (p, r->toks[t], "flanking");
        /* "lamps on either side of the sofa", "plants flanking the door": a plural without a number is one a side too */
        if (sides && r->kind == BMQ_REL_NEXT_TO && !sub->count_given) { sub->count = 2; sub->count_given = true; }
        for (size_t g = 0; g < r->ngroup; g++)          /* "two bottles and a cake on a table": the bottles too */
            if (r->group[g] != r->subject && r->group[g] != r->obj[0] && r->group[g] != b
                && p->req->part[r->group[g]].relation == BMQ_REL_NONE && p->req->part[r->group[g]].spot == BMQ_SPOT_NONE
                && !s_not_on_top (p, r->kind, r->subject, r->group[g]))
                s_relate (p, r->group[g], r->kind, r->obj[0], b, false);
    }
    memset (r, 0, sizeof *r);
}

/* Something that is not the relation's next word came: finish it if it is complete, else it fails. */
static void s_rel_settle (s_parse_t *p, bool at_break)
{
    s_relation_t *r = &p->rel;
    if (!r->active) return;
    bool pair = r->kind == BMQ_REL_BETWEEN && r->stage == 1 && p->req->part[r->obj[0]].count >= 2;
    if (pair && r->subject >= 0) { s_rel_finish (p, true); return; }
    if (pair) { r->stage = 3; return; }
    if (r->stage == 3 && at_break) return;          /* "on the table, a lamp": the subject may follow */
    s_rel_finish (p, false);
}

static void s_with_end (s_parse_t *p)
{
    if (p->with_applied) for (size_t t = 0; t < p->with_n; t++) p->used[p->with_toks[t]] = true;
    p->with_anchor = -1;
    p->with_n = 0;
    p->nwith = 0;
    p->with_applied = false;
    p->with_each = false;
}

/* Does a recipe hold things on its top (a table, a desk, a dresser, a nightstand, a counter, a shelf)? */
static bool s_holder (const json_t *recipe)
{
    const char *kind = json_string_value (json_object_get (recipe, "kind"));
    const char *name = json_string_value (json_object_get (recipe, "name"));
    return json_is_true (json_object_get (recipe, "holds")) || (kind && !strcmp (kind, "table"))
           || (name && (strstr (name, "nightstand") || strstr (name, "counter") || strstr (name, "table")));
}

/* "two chairs on each long side [of the table] and one at each end": each long / short side gets the count
 * ("each", "both", "either"), "one" is another copy of the thing named before, and with no "of" the sides are
 * the thing it relates to (or the one named before it). True when the words were used. */
static bool s_sides (s_parse_t *p, bmq_rel_t kind, size_t i, size_t n)
{
    bool each = false, total = false;
    for (size_t t = i; t < i + n; t++) {
        each = each || s_word (p, t, "each");
        total = total || s_word (p, t, "both") || s_word (p, t, "either");
    }
    if (!each && !total) return false;
    bool of = s_word (p, i + n - 1, "of") || (s_word (p, i + n - 1, "the") && s_word (p, i + n - 2, "of"));
    int subject = p->last, anchor = -1;
    if (i > 0 && s_word (p, i - 1, "one") && p->norder) {          /* "…, and one at each end": a chair like the ones before */
        int like = p->order[p->norder - 1];
        if (p->req->count >= BMQ_SCENE_MAX_PARTS || p->req->part[like].relation == BMQ_REL_NONE) return false;
        anchor = p->req->part[like].ref[0];
        subject = (int) p->req->count++;
        bmq_scene_part_t *part = &p->req->part[subject];
        *part = p->req->part[like];
        part->relation = BMQ_REL_NONE;
        part->ref[0] = part->ref[1] = -1;
        part->count = 1;
        part->count_given = true;
        part->spot = BMQ_SPOT_NONE;
        p->inherited[subject] = false;
        p->used[i - 1] = true;
        s_pend_reset (p);
        if (p->norder < BMQ_TOKENS_MAX) p->order[p->norder++] = subject;
        p->last = subject;
    }
    if (subject < 0) return false;
    bmq_scene_part_t *part = &p->req->part[subject];
    double before = part->count;
    bool before_given = part->count_given;
    if (!(total && part->count_given && part->count >= 2))      /* "four chairs along both long sides": four in all */
        part->count = fmin ((part->count_given ? part->count : 1) * 2, BMQ_COUNT_MAX);
    part->count_given = true;
    if (of) return false;                       /* the object follows: the relation when it is named */
    if (anchor < 0) anchor = s_antecedent (p, subject);
    if (anchor >= 0 && p->req->part[anchor].recipe == part->recipe && p->req->part[anchor].relation != BMQ_REL_NONE)
        anchor = p->req->part[anchor].ref[0];   /* "three chairs on each long side and one chair at either end": the table */
    if (anchor < 0 || anchor == subject) { part->count = before; part->count_given = before_given; return false; }
    if (!s_relate (p, subject, kind, anchor, -1, false)) { part->count = before; part->count_given = before_given; return false; }
    s_use (p, i, n);
    p->post = false;
    return true;
}

static void s_relation_word (s_parse_t *p, bmq_rel_t kind, size_t i, size_t n)
{
    if (kind == BMQ_REL_OF && !(p->post && p->last >= 0)) { p->weak[i] = n == 1; p->post = false; return; }
    if (p->pend.count_given && i > 0 && p->k.t[i - 1].kind == BMQ_TOK_WORD && !p->used[i - 1] && !p->mention[i - 1].recipe) {
        /* "a pair of slippers under the bed": the count was a thing's without a recipe; it is not the bed's */
        bool own = false;
        for (size_t t = 0; t < p->pend.n; t++) own = own || p->pend.toks[t] == i - 1;
        if (!own) s_pend_reset (p);
    }
    bool was_post = p->post;
    s_rel_settle (p, false);
    int with_anchor = p->with_anchor, with_members[BMQ_SCENE_MAX_PARTS];      /* "with A and B on it": both */
    size_t nwith = p->nwith;
    memcpy (with_members, p->with_members, sizeof with_members);
    s_with_end (p);
    p->post = false;
    int group[BMQ_SCENE_MAX_PARTS];
    size_t ngroup = p->ngroup;
    memcpy (group, p->group, sizeof group);
    p->ngroup = 0;
    if (kind == BMQ_REL_WITH && p->room_just) {     /* "a bedroom with a bed": what follows is in the room */
        s_use (p, i, n);
        return;
    }
    if (kind == BMQ_REL_WITH && i > 0 && s_word (p, i - 1, "each") && p->norder) {
        /* "two desks against the wall, each with a lamp": the last thing named in numbers, one per copy */
        int to = -1;
        for (size_t j = p->norder; j > 0 && to < 0; j--)
            if (p->req->part[p->order[j - 1]].count >= 2) to = p->order[j - 1];
        if (to >= 0) {
            p->with_anchor = to;
            p->with_each = true;
            p->with_toks[p->with_n++] = i - 1;
            for (size_t t = 0; t < n && p->with_n < 4; t++) p->with_toks[p->with_n++] = i + t;
            return;
        }
    }
    if (kind == BMQ_REL_WITH) {
        p->with_anchor = p->last;
        if (p->last < 0 && i > 0 && p->k.t[i - 1].kind == BMQ_TOK_BREAK && p->k.t[i - 1].text[0] == ',' && p->norder)
            p->with_anchor = p->order[p->norder - 1];        /* "three chairs around a table, with a vase …": the table */
        if (p->last >= 0 && was_post && p->norder >= 2 && p->order[p->norder - 1] == p->last) {
            /* "a dresser facing the bed with a TV on top", "a nightstand on the right of the bed with a clock":
             * the one the relation placed, when it holds things and the one it was placed by is not such */
            int prev = p->order[p->norder - 2];
            const bmq_scene_part_t *pp = &p->req->part[prev];
            /* "a shelf on the wall above the desk with a few books on it": the shelf */
            bool above = pp->relation == BMQ_REL_ABOVE;
            if (pp->relation != BMQ_REL_NONE && pp->relation != BMQ_REL_ON && pp->relation != BMQ_REL_INSIDE
                && pp->relation != BMQ_REL_UNDER && pp->ref[0] == p->last
                && s_holder (pp->recipe) && (above || !s_holder (p->req->part[p->last].recipe)))
                p->with_anchor = prev;
        }
        for (size_t t = 0; t < n && p->with_n < 4; t++) p->with_toks[p->with_n++] = i + t;
        return;
    }
    if (kind == BMQ_REL_EACH_SIDE) {
        p->side_total = false;
        for (size_t t = i; t < i + n; t++) p->side_total = p->side_total || s_word (p, t, "either") || s_word (p, t, "both");
        if (p->last < 0 && i > 0 && s_word (p, i - 1, "one") && p->norder && p->req->part[p->order[p->norder - 1]].count >= 2) {
            p->last = p->order[p->norder - 1];          /* "two floor lamps, one on each side of the sofa": the lamps */
            p->side_total = true;
            p->used[i - 1] = true;
            s_pend_reset (p);
        }
    }
    if ((kind == BMQ_REL_LONG_SIDE || kind == BMQ_REL_SHORT_SIDE) && s_sides (p, kind, i, n)) return;
    bool of_the = s_word (p, i + n - 1, "the") && s_word (p, i + n - 2, "of");     /* "on each side of the sofa" */
    if (of_the) p->pend.definite = true;
    if (kind == BMQ_REL_EACH_SIDE && !s_word (p, i + n - 1, "of") && !of_the) {  /* "a bed with a nightstand on each side": of the bed */
        if (s_relate (p, p->last, BMQ_REL_EACH_SIDE, s_antecedent (p, p->last), -1, false)) s_use (p, i, n);
        p->side_total = false;
        return;
    }
    if (kind == BMQ_REL_BETWEEN && s_word (p, i, "in") && p->last >= 0 && !(i + n < p->k.n && p->mention[i + n].recipe)) {
        /* "a sofa facing the TV and a coffee table in between": between the two named before it */
        int a = -1, b = -1;
        for (size_t j = p->norder; j > 0; j--) {
            int o = p->order[j - 1];
            if (o == p->last || o == a) continue;
            if (a < 0) a = o;
            else if (b < 0) { b = o; break; }
        }
        bmq_word_kind_t next;
        double unused;
        bool object_follows = bmq_vocab_match (&p->k, i + n, &next, &unused) && (next == BMQ_W_DEF || next == BMQ_W_INDEF
                                                                                  || next == BMQ_W_PRONOUN);
        if (!object_follows && a >= 0 && b >= 0 && s_relate (p, p->last, BMQ_REL_BETWEEN, b, a, false)) { s_use (p, i, n); return; }
    }
    bool each = false;
    if (kind == BMQ_REL_ON_EACH && i + n < p->k.n && p->mention[i + n].recipe) {
        kind = BMQ_REL_ON;                  /* "a lamp on each nightstand": the nightstands named before, one lamp each */
        each = true;
        p->pend.definite = true;
    }
    if (kind == BMQ_REL_ON_EACH) {          /* "with a lamp on each": one on each copy of the last thing named in numbers */
        int to = -1;
        for (size_t j = p->norder; j > 0 && to < 0; j--)
            if (p->order[j - 1] != p->last && p->req->part[p->order[j - 1]].count >= 2) to = p->order[j - 1];
        if (to < 0) to = s_antecedent (p, p->last);
        if (p->last >= 0 && to >= 0 && s_relate (p, p->last, BMQ_REL_ON, to, -1, false)) {
            if (!p->req->part[p->last].count_given || p->req->part[p->last].count == 1) p->req->part[p->last].count = p->req->part[to].count;
            s_use (p, i, n);
            if (p->with_n) { p->with_applied = true; s_with_end (p); }      /* "…, with a lamp on each": the "with" too */
        }
        return;
    }
    if (kind == BMQ_REL_ON_IT) {
        int to = s_antecedent (p, p->last);
        if (!s_relate (p, p->last, BMQ_REL_ON, to, -1, false)) return;
        s_use (p, i, n);
        /* "a desk with two monitors and a keyboard on it": everything that "with" listed goes on it */
        bool listed = false;
        for (size_t m = 0; m < nwith; m++) listed = listed || with_members[m] == p->last;
        for (size_t m = 0; listed && to == with_anchor && m < nwith; m++)
            if (with_members[m] != p->last && p->inherited[with_members[m]] && p->req->part[with_members[m]].ref[0] == to)
                s_relate (p, with_members[m], BMQ_REL_ON, to, -1, false);
        return;
    }
    s_relation_t *r = &p->rel;
    memset (r, 0, sizeof *r);
    r->active = true;
    r->kind = kind;
    r->each = each;
    r->subject = p->last;
    r->obj[0] = r->obj[1] = -1;
    for (size_t t = 0; t < n && r->n < 8; t++) r->toks[r->n++] = i + t;
    memcpy (r->group, group, sizeof group);
    r->ngroup = ngroup;
}

/* A phrase `idx` was just named: it may be the object (or subject) a relation waits for. True when it was an object. */
static bool s_rel_feed (s_parse_t *p, int idx, bool fresh)
{
    s_relation_t *r = &p->rel;
    if (r->active && r->stage == 1) s_rel_settle (p, false);
    bool object = r->active && (r->stage == 0 || r->stage == 2);
    if (r->active && r->stage == 0) {
        r->obj[0] = idx;
        r->nobj = 1;
        r->stage = r->kind == BMQ_REL_BETWEEN ? 1 : r->subject >= 0 ? -1 : 3;
        if (r->stage == -1) s_rel_finish (p, true);
    }
    else if (r->active && r->stage == 2) {
        r->obj[1] = idx;
        r->nobj = 2;
        if (r->subject >= 0) s_rel_finish (p, true);
        else r->stage = 3;
    }
    else if (r->active && r->stage == 3 && fresh && idx != r->obj[0] && idx != r->obj[1]) {
        r->subject = idx;
        s_rel_finish (p, true);
    }
    else if (p->with_anchor >= 0 && idx != p->with_anchor && p->req->part[idx].relation == BMQ_REL_NONE
             && s_relate (p, idx, BMQ_REL_WITH, p->with_anchor, -1, true)) {
        p->with_applied = true;
        bmq_scene_part_t *m = &p->req->part[idx];
        if (p->with_each && (!m->count_given || m->count == 1)) { m->count = p->req->part[p->with_anchor].count; m->count_given = true; }
        if (p->nwith < BMQ_SCENE_MAX_PARTS) p->with_members[p->nwith++] = idx;
    }
    return object;
}

/* ---- the walk ----------------------------------------------------------------------- */

/* Is a `whole` a kind of `head` by its name ("l_shaped_desk", "coffee_table" of "desk", "table")? */
static bool s_kind_of (const char *whole, const char *head)
{
    size_t lw = strlen (whole), lh = strlen (head);
    return lw > lh + 1 && whole[lw - lh - 1] == '_' && !strcmp (whole + lw - lh, head);
}

static void s_mention (s_parse_t *p, size_t i)
{
    bmq_scene_request_t *req = p->req;
    const json_t *recipe = p->mention[i].recipe;
    const char *name = json_string_value (json_object_get (recipe, "name"));
    s_pending_t *pd = &p->pend;
    int idx = -1;
    bool fresh = false;
    p->room_just = false;
    if (pd->negated || p->neg_more) {       /* "no wardrobe": not built, and no room adds one */
        if (req->nnegated < BMQ_SCENE_MAX_NEGATED) req->negated[req->nnegated++] = recipe;
        for (size_t t = 0; t < pd->n; t++) p->used[pd->toks[t]] = true;
        s_use (p, i, p->mention[i].len);
        s_pend_reset (p);
        p->neg_more = s_word (p, i + p->mention[i].len, "or") || s_word (p, i + p->mention[i].len, "nor")
                      || (s_word (p, i + p->mention[i].len, "and") && (s_word (p, i + p->mention[i].len + 1, "no")));
        p->last = -1;
        p->post = false;
        return;
    }
    if (pd->definite && !pd->count_given && !pd->has_color && pd->scale == 1.0) {
        for (int j = (int) req->count - 1; j >= 0 && idx < 0; j--)
            if (req->part[j].recipe == recipe) idx = j;            /* "the table": the one named before */
        for (int j = (int) req->count - 1; j >= 0 && idx < 0 && name; j--)
            if (s_kind_of (req->part[j].name, name)) idx = j;     /* "an L-shaped desk … the desk": that desk */
        const char *head = p->k.t[i + p->mention[i].len - 1].single;
        for (int j = (int) req->count - 1; j >= 0 && idx < 0 && p->mention[i].len == 1; j--)
            if (s_kind_of (req->part[j].name, head)) idx = j;     /* "a wall shelf … the shelf" (a bookshelf's word): that shelf */
    }
    if (idx < 0) {
        if (req->count >= BMQ_SCENE_MAX_PARTS) { s_pend_reset (p); p->post = false; return; }    /* reported, unused */
        idx = (int) req->count++;
        fresh = true;
        bmq_scene_part_t *part = &req->part[idx];
        memset (part, 0, sizeof *part);
        part->recipe = recipe;
        part->score = p->mention[i].score;
        snprintf (part->name, sizeof part->name, "%s", name ? name : "?");
        part->count = pd->count_given ? pd->count : p->mention[i].plural ? 3 : 1;
        part->count_given = pd->count_given;
        part->has_color = pd->has_color;
        memcpy (part->color, pd->rgb, sizeof part->color);
        memcpy (part->color_word, pd->color_word, sizeof part->color_word);
        part->scale = pd->scale;
        memcpy (part->scale_word, pd->scale_word, sizeof part->scale_word);
        part->ref[0] = part->ref[1] = -1;
        part->arrange = pd->arrange;
        part->spot = pd->spot;
        part->wall = pd->wall;
        part->material = pd->material;
    }
    else {
        if (pd->spot != BMQ_SPOT_NONE && req->part[idx].spot == BMQ_SPOT_NONE) { req->part[idx].spot = pd->spot; req->part[idx].wall = pd->wall; }
        if (pd->material >= 0 && req->part[idx].material < 0) req->part[idx].material = pd->material;
    }
    for (size_t t = 0; t < pd->n; t++) p->used[pd->toks[t]] = true;
    s_use (p, i, p->mention[i].len);
    s_pend_reset (p);
    if (p->norder < BMQ_TOKENS_MAX) p->order[p->norder++] = idx;
    if (!s_rel_feed (p, idx, fresh) && fresh && p->ngroup < BMQ_SCENE_MAX_PARTS) p->group[p->ngroup++] = idx;
    p->last = idx;
    if (p->of_holder >= 0) p->last = p->of_holder;        /* the container is the phrase, its contents are in it */
    p->of_holder = -1;
    p->post = true;
}

static void s_end_clause (s_parse_t *p, bool at_break)
{
    s_rel_settle (p, at_break);
    if (at_break) { s_with_end (p); p->ngroup = 0; }
    s_pend_reset (p);
    p->last = -1;
    p->post = false;
}

/* Does a recipe hang on a wall (place: wall: paintings, posters, mirrors)? */
static bool s_hung (const json_t *recipe)
{
    const char *place = json_string_value (json_object_get (recipe, "place"));
    return place && !strcmp (place, "wall");
}

/* A colour or size word: the phrase just named takes it, else the one that follows. */
static bool s_modifier (s_parse_t *p, size_t i)
{
    const char *w = p->k.t[i].text, *canonical = NULL;
    double rgb[3], f;
    bmq_scene_part_t *last = p->post && p->last >= 0 ? &p->req->part[p->last] : NULL;
    if (bmq_recipe_color_word (w, rgb, &canonical)) {
        if (last && !last->has_color) {
            last->has_color = true;
            memcpy (last->color, rgb, sizeof rgb);
            snprintf (last->color_word, sizeof last->color_word, "%s", canonical);
            p->used[i] = true;
        }
        else if (!p->pend.has_color) {
            p->pend.has_color = true;
            memcpy (p->pend.rgb, rgb, sizeof rgb);
            snprintf (p->pend.color_word, sizeof p->pend.color_word, "%s", canonical);
            s_pend_take (p, i, 1);
        }
        return true;
    }
    if (bmq_recipe_size_word (w, &f) && p->k.t[i + 1 < p->k.n ? i + 1 : i].kind == BMQ_TOK_WORD && i + 1 < p->k.n) {
        bmq_word_kind_t kind;
        double room;
        if (bmq_vocab_match (&p->k, i + 1, &kind, &room) && kind == BMQ_W_ROOM) {       /* "a small bedroom": the room's size */
            p->req->room.scale = f > 1 ? fmin (f, 1.6) : fmax (f, 0.7);
            p->used[i] = true;
            return true;
        }
    }
    if (bmq_recipe_size_word (w, &f)) {
        if (!last || last->scale == 1.0) s_scale_words (p, f, w, i, 1);
        else if (p->pend.scale == 1.0) {
            bool post = p->post;
            p->post = false;                /* "a big chair small": the second size is for what follows */
            s_scale_words (p, f, w, i, 1);
            p->post = post;
        }
        return true;
    }
    return false;
}

/* A unit after a room's dimension: metres (1) or feet (0.3048) and the tokens it took. */
static size_t s_unit (const s_parse_t *p, size_t i, double *factor)
{
    static const char *m[] = { "m", "meter", "meters", "metre", "metres", "metros", "metres", "mts" };
    static const char *ft[] = { "ft", "feet", "foot" };
    *factor = 1;
    for (size_t w = 0; w < sizeof m / sizeof *m; w++) if (s_word (p, i, m[w])) return 1;
    for (size_t w = 0; w < sizeof ft / sizeof *ft; w++) if (s_word (p, i, ft[w])) { *factor = 0.3048; return 1; }
    return 0;
}

/* "4 by 5 m", "4 x 5 meters", "12 by 15 feet", "4m x 5m": a room's floor; tokens used, 0 if none. */
static size_t s_dims (s_parse_t *p, size_t i)
{
    if (!s_number (p, i)) return 0;
    double f1 = 1, f2 = 1;
    size_t j = i + 1 + s_unit (p, i + 1, &f1);
    if (!(s_word (p, j, "by") || s_word (p, j, "x") || s_word (p, j, "times") || s_word (p, j, "per"))) return 0;
    if (!s_number (p, j + 1)) return 0;
    size_t e = j + 2 + s_unit (p, j + 2, &f2);
    if (f2 != 1 && f1 == 1) f1 = f2;
    if (s_word (p, e, "square") || s_word (p, e, "sq")) return 0;
    double w = p->k.t[i].value * f1, d = p->k.t[j + 1].value * (f2 != 1 ? f2 : f1);
    if (w < 1.5 || d < 1.5 || w > 30 || d > 30) return 0;
    p->req->room.sized = true;
    p->req->room.width = fmax (w, d);
    p->req->room.depth = fmin (w, d);
    if (p->req->room.kind == BMQ_ROOM_NONE) p->req->room.kind = BMQ_ROOM_GENERIC;
    s_use (p, i, e - i);
    for (size_t t = 0; t < p->pend.n; t++) p->used[p->pend.toks[t]] = true;     /* "a 4 by 5": the article too */
    s_pend_reset (p);
    return e - i;
}

/* "a cluttered desk: a monitor, a keyboard and a mug": what the list after the colon names with no
 * place of its own is with the desk (on it when it fits there, see scene_compose). */
static void s_colon_end (s_parse_t *p)
{
    int a = p->colon_anchor;
    p->colon_anchor = -1;
    if (a < 0) return;
    for (size_t j = p->colon_from; j < p->norder; j++) {
        int o = p->order[j];
        bmq_scene_part_t *part = &p->req->part[o];
        if (o != a && part->relation == BMQ_REL_NONE && part->spot == BMQ_SPOT_NONE && !part->has_position)
            s_relate (p, o, BMQ_REL_WITH, a, -1, true);
    }
}

/* "a dining room with a table and six chairs", "an office with a conference table, 6 office chairs": in a
 * room, chairs (two or more) named with a table to eat or meet at, and given no place of their own, are
 * around it (two: next to it). */
static void s_chairs_at_table (s_parse_t *p)
{
    static const char *tables[] = { "table", "round_table", "long_dining_table", "folding_table", "dining_table", "conference_table",
                                    "kitchen_table" };
    int t = -1;
    for (size_t j = 0; j < p->req->count && t < 0; j++)
        for (size_t w = 0; w < sizeof tables / sizeof *tables; w++)
            if (!strcmp (p->req->part[j].name, tables[w]) && p->req->part[j].count == 1) t = (int) j;
    if (t < 0 || p->req->room.kind == BMQ_ROOM_NONE) return;     /* in a room, set for use; "a chair and a table" alone: as asked */
    for (size_t j = 0; j < p->req->count; j++) {
        bmq_scene_part_t *part = &p->req->part[j];
        const char *n = part->name;
        bool chair = (strstr (n, "chair") || strstr (n, "stool")) && !strstr (n, "armchair") && !strstr (n, "rocking")
                     && !strstr (n, "high") && !strstr (n, "lounge");
        if ((int) j == t || !chair || part->count < 2 || part->relation != BMQ_REL_NONE || part->spot != BMQ_SPOT_NONE
            || part->has_position)
            continue;
        s_relate (p, (int) j, part->count >= 3 ? BMQ_REL_AROUND : BMQ_REL_NEXT_TO, t, -1, false);
    }
}

/* One token (or phrase) at i that is not an object's name; returns how many tokens it took. */
static size_t s_step (s_parse_t *p, size_t i)
{
    bmq_tokens_t *k = &p->k;
    double v[3], value;
    size_t n;
    if ((n = s_dims (p, i))) return n;
    p->clamped_value = 0;
    if ((n = s_position (p, i, v))) {
        int to = p->last;                   /* the phrase of this clause, even after words in between */
        if (to >= 0 && !p->req->part[to].has_position && p->req->part[to].relation == BMQ_REL_NONE) {
            if (p->clamped_value != 0) p->req->part[to].clamped = p->clamped_value;
            p->req->part[to].has_position = true;
            memcpy (p->req->part[to].position, v, sizeof v);
            p->pos_tok[to][0] = i;
            p->pos_tok[to][1] = n;
            s_use (p, i, n);
        }
        return n;
    }
    if (k->t[i].kind == BMQ_TOK_BREAK) {
        if (k->t[i].text[0] != ',') s_colon_end (p);
        if (k->t[i].text[0] == ':' && p->post && p->last >= 0 && s_holder (p->req->part[p->last].recipe)
            && p->req->part[p->last].relation == BMQ_REL_NONE) {
            p->colon_anchor = p->last;
            p->colon_from = p->norder;
        }
        if (k->t[i].text[0] != ',') p->sent_start = p->norder;      /* a sentence ends */
        s_pending_t spot = p->pend;         /* "in the middle of the room, a round table": the spot waits */
        bool keep = k->t[i].text[0] == ',' && spot.spot != BMQ_SPOT_NONE && !spot.negated;
        s_end_clause (p, true);
        if (keep) p->pend = spot;
        return 1;
    }
    bmq_word_kind_t kind;
    n = bmq_vocab_match (k, i, &kind, &value);
    if (k->t[i].kind == BMQ_TOK_NUMBER) {
        bmq_word_kind_t next;
        double unused;
        if (bmq_vocab_match (k, i + 1, &next, &unused) == 1 && next == BMQ_W_TIMES && k->t[i].value > 0) {
            s_scale_words (p, k->t[i].value, k->t[i].text, i, 2);
            return 2;
        }
        bool hyphen = i + 1 < k->n && k->t[i + 1].kind == BMQ_TOK_WORD && k->t[i + 1].start == k->t[i].end + 1
                      && k->folded[k->t[i].end] == '-';
        if (hyphen) { p->post = false; return 1; }     /* "3-legged": part of a word, not a count */
        if (s_word (p, i + 1, "seater") || s_word (p, i + 1, "seat")) {    /* "a 3 seater sofa": its size, not a count */
            size_t took = p->mention[i + 1].recipe ? 1 : 2;                 /* "seater sofa" may name the sofa itself */
            s_use (p, i, took);
            p->post = false;
            return took;
        }
        if (!p->pend.count_given && k->t[i].value >= 1) {
            p->pend.count = fmin (floor (k->t[i].value), BMQ_COUNT_MAX);
            p->pend.count_given = true;
            s_pend_take (p, i, 1);
        }
        p->post = false;
        return 1;
    }
    size_t nw = bmq_number_words (k, i, &value);
    if (nw && (s_word (p, i + nw, "seater") || s_word (p, i + nw, "seat") || s_word (p, i + nw, "seaters"))) {
        size_t took = nw + (p->mention[i + nw].recipe ? 0 : 1);            /* "a three seater sofa" */
        s_use (p, i, took);
        p->post = false;
        return took;
    }
    if (nw && nw >= n) {
        if (!p->pend.count_given && value >= 1) { p->pend.count = value; p->pend.count_given = true; s_pend_take (p, i, nw); }
        p->post = false;
        return nw;
    }
    switch (n ? kind : BMQ_W_NONE) {
    case BMQ_W_FILLER: s_use (p, i, n); return n;
    case BMQ_W_INDEF:
    case BMQ_W_DEF:
        s_pend_take (p, i, n);
        for (size_t t = 0; t < n; t++) p->weak[i + t] = true;
        if (kind == BMQ_W_DEF) p->pend.definite = true;
        p->post = false;
        return n;
    case BMQ_W_WEAK: p->weak[i] = true; p->post = false; return n;
    case BMQ_W_CONNECT:
        s_use (p, i, n);
        if (p->rel.active && p->rel.kind == BMQ_REL_BETWEEN && p->rel.stage == 1 && !p->rel.pronoun) { p->rel.stage = 2; return n; }
        s_end_clause (p, false);
        return n;
    case BMQ_W_REL:
        if ((bmq_rel_t) value == BMQ_REL_FACING && ((s_word (p, i + n, "each") && s_word (p, i + n + 1, "other"))
                                                    || (s_word (p, i + n, "one") && s_word (p, i + n + 1, "another")))) {
            /* "two desks facing each other": the copies of the phrase before turn to one another */
            int who = p->last >= 0 ? p->last : p->norder ? p->order[p->norder - 1] : -1;
            if (who >= 0 && p->req->part[who].count >= 2 && p->req->part[who].relation == BMQ_REL_NONE) {
                p->req->part[who].each_other = true;
                s_use (p, i, n + 2);
            }
            return n + 2;
        }
        s_relation_word (p, (bmq_rel_t) value, i, n);
        return n;
    case BMQ_W_ARRANGE:
        if (p->post && p->last >= 0 && p->req->part[p->last].arrange == BMQ_ARRANGE_NONE) {
            p->req->part[p->last].arrange = (bmq_arrange_t) value;
            s_use (p, i, n);
        }
        else { p->pend.arrange = (bmq_arrange_t) value; s_pend_take (p, i, n); }
        return n;
    case BMQ_W_QUANT:
        if (!p->pend.count_given) { p->pend.count = value; p->pend.count_given = true; s_pend_take (p, i, n); }
        p->post = false;
        return n;
    case BMQ_W_FACTOR: s_scale_words (p, value, k->t[i].text, i, n); return n;
    case BMQ_W_SPOT: {
        if (s_word (p, i, "on") && n > 1 && p->mention[i + n - 1].len > 1) {      /* "on a wall shelf": on, then a name */
            s_relation_word (p, BMQ_REL_ON, i, 1);
            return 1;
        }
        bmq_spot_t spot = (bmq_spot_t) ((int) value % 8);
        int wall = (int) value / 8;
        if (i > 0 && (s_word (p, i - 1, "all") || s_word (p, i - 1, "both")) && p->norder > p->sent_start) {
            bool any = false;               /* "a fridge, a stove and a sink, all against the back wall": each of them */
            for (size_t j = p->sent_start; j < p->norder; j++) {
                bmq_scene_part_t *part = &p->req->part[p->order[j]];
                if (part->spot != BMQ_SPOT_NONE || part->relation != BMQ_REL_NONE) continue;
                part->spot = spot;
                part->wall = wall;
                any = true;
            }
            if (any) { s_use (p, i - 1, n + 1); return n; }
        }
        bmq_scene_part_t *last = p->post && p->last >= 0 ? &p->req->part[p->last] : NULL;
        if (!last && p->last >= 0 && p->req->part[p->last].spot == BMQ_SPOT_NONE) last = &p->req->part[p->last];  /* "a plant, tall, in the corner" */
        if (last && last->spot == BMQ_SPOT_CENTER && spot == BMQ_SPOT_WALL) last->spot = BMQ_SPOT_NONE;   /* "centred against the wall": along it */
        if (last && last->spot == BMQ_SPOT_NONE) {
            last->spot = spot;
            last->wall = wall;
            for (size_t g = 0; g < p->ngroup; g++)       /* "a desk and a chair against the wall": both */
                if (p->req->part[p->group[g]].spot == BMQ_SPOT_NONE && p->group[g] != p->last
                    && (spot != BMQ_SPOT_ONWALL || s_hung (p->req->part[p->group[g]].recipe))) {   /* "a chair and posters on the wall" */
                    p->req->part[p->group[g]].spot = spot;
                    p->req->part[p->group[g]].wall = wall;
                }
            s_use (p, i, n);
        }
        else if (p->pend.spot == BMQ_SPOT_NONE) { p->pend.spot = spot; p->pend.wall = wall; s_pend_take (p, i, n); }
        return n;
    }
    case BMQ_W_ROOM: {
        bmq_scene_room_t *room = &p->req->room;
        if (room->kind == BMQ_ROOM_NONE || room->kind == BMQ_ROOM_GENERIC) room->kind = (bmq_room_kind_t) value;
        s_use (p, i, n);
        if (p->pend.scale != 1.0) room->scale = p->pend.scale > 1 ? fmin (p->pend.scale, 1.6) : fmax (p->pend.scale, 0.7);
        for (size_t t = 0; t < p->pend.n; t++) p->used[p->pend.toks[t]] = true;     /* "a small bedroom", "the kitchen" */
        s_pend_reset (p);
        if (p->rel.active && p->rel.stage == 0) {       /* "a bed in the bedroom": the room holds everything anyway */
            for (size_t t = 0; t < p->rel.n; t++) p->used[p->rel.toks[t]] = true;
            memset (&p->rel, 0, sizeof p->rel);
        }
        if (i > 0 && (s_word (p, i - 1, "s") || s_word (p, i - 1, "room"))) p->used[i - 1] = true;   /* "the room's" */
        p->room_just = true;
        p->post = false;
        return n;
    }
    case BMQ_W_NEG:
        p->pend.negated = true;
        s_pend_take (p, i, n);
        p->post = false;
        return n;
    case BMQ_W_MATERIAL: {
        if (bmq_material_style ((size_t) value) && !(i + n < k->n && p->mention[i + n].recipe)) { s_use (p, i, n); return n; }
        bmq_scene_part_t *last = p->post && p->last >= 0 ? &p->req->part[p->last] : NULL;
        if (last && last->material < 0) { last->material = (int) value; p->used[i] = true; }
        else if (p->pend.material < 0) { p->pend.material = (int) value; s_pend_take (p, i, n); }
        return n;
    }
    case BMQ_W_SCALE:
    case BMQ_W_TIMES: {
        size_t j = i + n;
        while (kind == BMQ_W_SCALE && (s_word (p, j, "of") || s_word (p, j, "by") || s_word (p, j, "to") || s_word (p, j, "de"))) j++;
        if (!s_number (p, j) || k->t[j].value <= 0) return n;
        s_scale_words (p, k->t[j].value, k->t[j].text, i, j + 1 - i);
        return j + 1 - i;
    }
    case BMQ_W_PRONOUN:
        if (p->rel.active && p->rel.stage == 0) {
            /* "them" is the last thing named in numbers ("two armchairs … a rug between them"); "it" the
             * object before the subject, or, with no subject yet, the last one named ("next to it, a lamp") */
            int to = p->rel.subject >= 0 ? s_antecedent (p, p->rel.subject) : p->norder ? p->order[p->norder - 1] : -1;
            if (s_word (p, i, "them"))
                for (size_t j = p->norder; j > 0; j--)
                    if (p->order[j - 1] != p->rel.subject && p->req->part[p->order[j - 1]].count >= 2) { to = p->order[j - 1]; break; }
            if (to >= 0) {
                p->rel.toks[p->rel.n < 8 ? p->rel.n++ : 7] = i;
                p->rel.pronoun = s_word (p, i, "them");
                int who = p->rel.subject;
                s_rel_feed (p, to, false);
                if (who >= 0 && p->req->part[who].ref[0] == to && s_word (p, i, "it")) p->via_it[who] = true;
            }
        }
        return n;
    default:
        if (s_word (p, i, "at")) {          /* "a chair at the desk": at its front, facing it */
            bmq_word_kind_t art;
            double unused;
            size_t a = bmq_vocab_match (k, i + 1, &art, &unused);
            size_t j = i + 1 + (a && (art == BMQ_W_DEF || art == BMQ_W_INDEF) ? a : 0);
            if (j < k->n && p->mention[j].recipe) { s_relation_word (p, BMQ_REL_IN_FRONT, i, 1); return 1; }
        }
        if (k->t[i].kind == BMQ_TOK_WORD && s_modifier (p, i)) return 1;
        p->post = false;                            /* an unknown word */
        return 1;
    }
}

/* "a bed and no wardrobe", "a wardrobe ... actually no wardrobe": the parts of a recipe the prompt does not want go;
 * what related to them stands on its own. */
static void s_drop_negated (bmq_scene_request_t *req)
{
    int map[BMQ_SCENE_MAX_PARTS];
    size_t n = 0;
    for (size_t p = 0; p < req->count; p++) {
        bool no = false;
        for (size_t g = 0; g < req->nnegated; g++) no = no || req->part[p].recipe == req->negated[g];
        map[p] = no ? -1 : (int) n;
        if (!no) req->part[n++] = req->part[p];
    }
    if (n == req->count) return;
    for (size_t p = 0; p < n; p++) {
        bmq_scene_part_t *part = &req->part[p];
        for (int r = 0; r < 2; r++) part->ref[r] = part->ref[r] >= 0 ? map[part->ref[r]] : -1;
        if (part->relation != BMQ_REL_NONE && part->ref[0] < 0) { part->relation = BMQ_REL_NONE; part->ref[1] = -1; }
        if (part->relation == BMQ_REL_BETWEEN && part->ref[1] < 0 && req->part[part->ref[0]].count < 2) part->relation = BMQ_REL_NEXT_TO;
    }
    req->count = n;
}

int bmq_scene_parse (const bmq_recipe_book_t *book, const char *prompt, bmq_scene_request_t *req)
{
    memset (req, 0, sizeof *req);
    req->room.scale = 1.0;
    req->not_understood = json_array ();
    s_parse_t *p = calloc (1, sizeof *p);
    if (!p || !req->not_understood || bmq_tokens_read (prompt, &p->k)) {
        free (p);
        bmq_scene_request_clear (req);
        return -1;
    }
    p->req = req;
    p->last = p->with_anchor = p->colon_anchor = p->of_holder = -1;
    s_pend_reset (p);
    bmq_scene_find_mentions (book, &p->k, p->mention);
    for (size_t i = 0; i < p->k.n; ) {
        bmq_word_kind_t kind;
        double value;
        size_t n = p->mention[i].recipe ? bmq_vocab_match (&p->k, i, &kind, &value) : 0;
        bool room_words = n > p->mention[i].len && (kind == BMQ_W_ROOM || kind == BMQ_W_SPOT);     /* "home office" is a room */
        if (p->mention[i].recipe && !room_words) { s_mention (p, i); i += p->mention[i].len; }
        else i += s_step (p, i);
    }
    s_end_clause (p, true);
    s_rel_finish (p, false);                        /* a relation still waiting for its subject */
    s_colon_end (p);
    s_drop_negated (req);
    s_chairs_at_table (p);
    bmq_scene_context_names (book, req);            /* "stools at the island", "a small table beside the sofa" */
    bmq_scene_context_names (book, req);            /* "stools at the island", "a small table beside the sofa" */
    const json_t *basin = bmq_recipe_book_get (book, "bathroom_sink");
    for (size_t j = 0; basin && req->room.kind == BMQ_ROOM_BATHROOM && j < req->count; j++)
        if (!strcmp (req->part[j].name, "kitchen_sink")) {           /* "a bathroom with a sink": a basin */
            req->part[j].recipe = basin;
            snprintf (req->part[j].name, sizeof req->part[j].name, "bathroom_sink");
        }
    bmq_scene_report (&p->k, p->used, p->weak, req->not_understood, S_MAX_PHRASES);
    if (p->k.cut) {
        char text[200];
        snprintf (text, sizeof text, "everything after \"%.40s\" (the offline planner reads the first %d words, %d bytes, of a prompt)",
                  p->k.folded + (p->k.read_to > 40 ? p->k.read_to - 40 : 0), BMQ_TOKENS_MAX, BMQ_RECIPE_MAX_PROMPT);
        bmq_utf8_fix (text);
        json_array_append_new (req->not_understood, json_string (text));
    }
    bmq_tokens_free (&p->k);
    free (p);
    return 0;
}

void bmq_scene_request_clear (bmq_scene_request_t *req)
{
    json_decref (req->not_understood);
    memset (req, 0, sizeof *req);
}

const char *bmq_scene_rel_name (bmq_rel_t rel)
{
    static const char *name[] = { "none", "on", "next_to", "in_front_of", "behind", "left_of", "right_of", "between",
                                  "around", "with", "on", "under", "above", "inside", "facing", "long_side", "short_side",
                                  "next_to", "on", "inside", "on", "next_to" };
    return (size_t) rel < sizeof name / sizeof *name ? name[rel] : "none";
}
