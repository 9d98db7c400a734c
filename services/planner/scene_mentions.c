/* scene_mentions — the objects a prompt names, and the phrases nothing used; see scene_mentions.h. */
#include "scene_mentions.h"
#include "recipe_params.h"

#include <stdio.h>
#include <string.h>

#define S_RUN          4            /* words in one object name, at most */
#define S_PHRASE_BYTES 120

/* ---- objects named ------------------------------------------------------------------ */

/* "the tv stands on a dresser", "the lamp stands next to it": after "the", a last word that is a verb
 * ("stands", "sits", "hangs", "rests") and a place word after it is not part of the name. */
static bool s_verb_after_the (const bmq_tokens_t *k, size_t i, size_t len)
{
    static const char *verb[] = { "stands", "sits", "hangs", "rests", "lies" };
    static const char *next[] = { "on", "in", "against", "next", "beside", "by", "near", "under", "above", "over", "behind",
                                  "inside", "between", "at", "upon", "atop" };
    const bmq_token_t *head = &k->t[i + len - 1];
    bool is_verb = false, placed = false;
    for (size_t v = 0; v < sizeof verb / sizeof *verb; v++) is_verb = is_verb || !strcmp (head->text, verb[v]);
    size_t j = i + len;
    for (size_t v = 0; j < k->n && k->t[j].kind == BMQ_TOK_WORD && v < sizeof next / sizeof *next; v++)
        placed = placed || !strcmp (k->t[j].text, next[v]);
    bool the = i > 0 && k->t[i - 1].kind == BMQ_TOK_WORD && !strcmp (k->t[i - 1].text, "the");
    return is_verb && placed && the;
}

/* A word that describes an object's look and may stand between a shape word and its name ("round oak table"). */
static bool s_describes (const bmq_token_t *t)
{
    double rgb[3], f;
    if (t->kind != BMQ_TOK_WORD) return false;
    if (bmq_recipe_color_word (t->text, rgb, NULL) || bmq_recipe_size_word (t->text, &f)) return true;
    bmq_tokens_t one = { .t = (bmq_token_t *) t, .n = 1 };
    bmq_word_kind_t kind;
    double value;
    return bmq_vocab_match (&one, 0, &kind, &value) == 1 && kind == BMQ_W_MATERIAL;
}

/* "a round oak table", "a long wooden dining table": a shape word a few look words before a name picks the
 * recipe of that shape when the book has one ("round table", "long table"); NULL when not. */
static const json_t *s_shaped (const bmq_recipe_book_t *book, const bmq_tokens_t *k, size_t i, size_t len)
{
    static const char *const shape[][2] = { { "round", "round" }, { "circular", "round" }, { "oval", "round" },
                                            { "long", "long" } };
    size_t j = i, skipped = 0;
    while (j > 0 && skipped < 3 && s_describes (&k->t[j - 1])) { j--; skipped++; }
    if (j == 0 || skipped == 0 || k->t[j - 1].kind != BMQ_TOK_WORD) return NULL;
    for (size_t s = 0; s < sizeof shape / sizeof *shape; s++) {
        if (strcmp (k->t[j - 1].text, shape[s][0])) continue;
        char run[BMQ_PHRASE_LEN];
        size_t lr = (size_t) snprintf (run, sizeof run, "%s", shape[s][1]);
        for (size_t t = i; t < i + len && lr < sizeof run; t++)
            lr += (size_t) snprintf (run + lr, sizeof run - lr, "%s", k->t[t].single);
        if (lr >= sizeof run) return NULL;
        double score;
        size_t kw;
        const json_t *r = bmq_recipe_book_match_run (book, run, &score, &kw);
        return r && score >= 1.0 ? r : NULL;
    }
    return NULL;
}

/* "a teacher's desk", "the cat's bed": an owner word and 's before a name are part of the name. */
static void s_possessives (const bmq_tokens_t *k, bmq_mention_t *mention)
{
    size_t covered = 0;                             /* tokens before this are inside a name */
    for (size_t i = 0; i < k->n; i++) {
        if (!mention[i].recipe) continue;
        bool owner = i >= 2 && i - 2 >= covered && !strcmp (k->t[i - 1].text, "s") && k->t[i - 1].kind == BMQ_TOK_WORD
                     && k->t[i - 2].kind == BMQ_TOK_WORD && k->t[i - 1].start > 0 && k->folded[k->t[i - 1].start - 1] == '\''
                     && !bmq_vocab_reserved (k->t[i - 2].text);
        if (owner) {
            mention[i - 2] = mention[i];
            mention[i - 2].len += 2;
            memset (&mention[i], 0, sizeof mention[i]);
            i -= 2;
        }
        covered = i + mention[i].len;
        i = covered - 1;
    }
}

/* Is `whole` a kind of `head` by its name ("wall_tv" of "tv")? */
static bool s_kind_name (const char *whole, const char *head)
{
    size_t lw = strlen (whole), lh = strlen (head);
    return lw > lh + 1 && whole[lw - lh - 1] == '_' && !strcmp (whole + lw - lh, head);
}

/* "a flat-screen TV", "a wall-mounted flat screen television": names of one thing, or of a thing and its
 * kind, side by side with nothing between them are one object (the more particular one), never two. */
static void s_compounds (const bmq_tokens_t *k, bmq_mention_t *mention)
{
    for (size_t i = 0; i < k->n; i++) {
        if (!mention[i].recipe) continue;
        for (;;) {
            size_t j = i + mention[i].len;
            if (j >= k->n || !mention[j].recipe) break;
            const char *a = json_string_value (json_object_get (mention[i].recipe, "name"));
            const char *b = json_string_value (json_object_get (mention[j].recipe, "name"));
            bool same = mention[i].recipe == mention[j].recipe;
            if (!same && (!a || !b || (!s_kind_name (a, b) && !s_kind_name (b, a)))) break;
            if (!same && s_kind_name (b, a)) mention[i].recipe = mention[j].recipe;
            mention[i].score = mention[i].score > mention[j].score ? mention[i].score : mention[j].score;
            mention[i].len += mention[j].len;
            mention[i].plural = mention[j].plural;
            memset (&mention[j], 0, sizeof mention[j]);
        }
        i += mention[i].len - 1;
    }
}

void bmq_scene_find_mentions (const bmq_recipe_book_t *book, const bmq_tokens_t *k, bmq_mention_t *mention)
{
    memset (mention, 0, k->n * sizeof *mention);
    for (size_t i = 0; i < k->n; i++) {
        if (k->t[i].kind != BMQ_TOK_WORD) continue;
        size_t limit = S_RUN;
    again:;
        const json_t *best = NULL;
        double best_score = 0;
        size_t best_kw = 0, best_len = 0;
        char run[BMQ_PHRASE_LEN] = "";
        size_t lr = 0;
        bool reserved = false;
        for (size_t len = 1; len <= limit && i + len <= k->n && k->t[i + len - 1].kind == BMQ_TOK_WORD; len++) {
            const bmq_token_t *t = &k->t[i + len - 1];
            size_t lt = strlen (t->single);
            if (lr + lt >= sizeof run) break;
            memcpy (run + lr, t->single, lt + 1);
            lr += lt;
            reserved = reserved || bmq_vocab_reserved (t->text);
            char variants[3][BMQ_PHRASE_LEN];
            size_t nv = 1;
            snprintf (variants[0], sizeof variants[0], "%s", run);
            size_t tl = strlen (t->text);
            if (len == 1) {                 /* "flores" → flor, "árboles" → arbol: plurals in -es */
                snprintf (variants[nv++], sizeof variants[0], "%s", t->text);
                if (tl > 4 && !strcmp (t->text + tl - 2, "es")) snprintf (variants[nv++], sizeof variants[0], "%.*s", (int) (tl - 2), t->text);
            }
            for (size_t v = 0; v < nv; v++) {
                double score;
                size_t kw;
                const json_t *r = bmq_recipe_book_match_run (book, variants[v], &score, &kw);
                if (!r || (reserved && score < 1.0)) continue;
                if (score > best_score || (score == best_score && (kw > best_kw || (kw == best_kw && len > best_len)))) {
                    best = r;
                    best_score = score;
                    best_kw = kw;
                    best_len = len;
                }
            }
        }
        if (!best) continue;
        const bmq_token_t *head = &k->t[i + best_len - 1];
        if (best_len >= 2 && limit == S_RUN && s_verb_after_the (k, i, best_len)) {
            limit = best_len - 1;                       /* "the tv stands on a dresser": a tv that stands */
            goto again;
        }
        const json_t *shaped = s_shaped (book, k, i, best_len);
        if (shaped) best = shaped;
        bool plural = strcmp (head->text, head->single) != 0;
        size_t j;
        json_t *kw;
        json_array_foreach (json_object_get (best, "keywords"), j, kw) {     /* "chest of drawers", "curtains": one thing */
            const char *w = json_string_value (kw), *sp = w ? strrchr (w, ' ') : NULL;
            if (w && !strcmp (sp ? sp + 1 : w, head->text)) plural = false;
        }
        mention[i] = (bmq_mention_t) { best, best_score, best_len, plural };
        i += best_len - 1;
    }
    s_compounds (k, mention);
    s_possessives (k, mention);
}

/* ---- names that depend on the room and on relations ------------------------------------ */

static bool s_named (const bmq_scene_part_t *part, const char *const *names)
{
    for (; *names; names++)
        if (!strcmp (part->name, *names)) return true;
    return false;
}

static void s_rename (const bmq_recipe_book_t *book, bmq_scene_part_t *part, const char *name)
{
    const json_t *r = bmq_recipe_book_get (book, name);
    if (!r) return;
    part->recipe = r;
    snprintf (part->name, sizeof part->name, "%s", name);
}

void bmq_scene_context_names (const bmq_recipe_book_t *book, bmq_scene_request_t *req)
{
    static const char *const bar[] = { "kitchen_island", "counter", "bar_counter", "breakfast_bar", NULL };
    static const char *const seat[] = { "sofa", "sectional_sofa", "loveseat", "armchair", "recliner", "bed", "single_bed",
                                        "sofa_bed", "daybed", "chaise_lounge", NULL };
    static const char *const tv[] = { "tv", "television", NULL };
    static const char *const low_case[] = { "cabinet", "kitchen_cabinet", NULL };
    bool kitchen = req->room.kind == BMQ_ROOM_KITCHEN, has_bar = false;
    for (size_t p = 0; p < req->count; p++) has_bar = has_bar || s_named (&req->part[p], bar);
    for (size_t p = 0; p < req->count; p++) {
        bmq_scene_part_t *part = &req->part[p];
        bmq_scene_part_t *ref = part->relation != BMQ_REL_NONE && part->ref[0] >= 0 && (size_t) part->ref[0] < req->count
                                    ? &req->part[part->ref[0]] : NULL;
        const char *kind0 = json_string_value (json_object_get (part->recipe, "kind"));
        if (!strcmp (part->name, "stool") && ((ref && s_named (ref, bar)) || (kitchen && has_bar)))
            s_rename (book, part, "bar_stool");                     /* "stools at the island", "a breakfast bar, 2 stools" */
        else if (!strcmp (part->name, "cabinet") && part->relation == BMQ_REL_ABOVE)
            s_rename (book, part, "wall_cabinet");                  /* "a cabinet above the toilet" */
        else if (!strcmp (part->name, "cabinet") && kitchen)
            s_rename (book, part, "kitchen_cabinet");               /* "white cabinets" in a kitchen */
        else if (!strcmp (part->name, "bookshelf") && (part->relation == BMQ_REL_ABOVE || part->spot == BMQ_SPOT_ONWALL))
            s_rename (book, part, "wall_shelf");                    /* "a bookshelf above the desk": it hangs */
        else if (!strcmp (part->name, "tv") && (part->relation == BMQ_REL_ABOVE || part->spot == BMQ_SPOT_ONWALL))
            s_rename (book, part, "wall_tv");                       /* "a tv above the fireplace": it hangs (h7) */
        else if (!strcmp (part->name, "table") && ref && part->scale <= 1.0 && s_named (ref, seat)
                 && (part->relation == BMQ_REL_NEXT_TO || part->relation == BMQ_REL_LEFT_OF
                     || part->relation == BMQ_REL_RIGHT_OF || part->relation == BMQ_REL_BETWEEN)) {
            s_rename (book, part, "side_table");                    /* "a small table beside the sofa" */
            if (part->scale < 1.0) { part->scale = 1.0; part->scale_word[0] = 0; }   /* a side table is the small one */
        }
        /* "a chair and a shelf above the desk": a seat is never hung above a thing; it is pulled up in front of it */
        if (part->relation == BMQ_REL_ABOVE && ref && (!strcmp (part->name, "chair") || (kind0 && !strcmp (kind0, "seating"))))
            part->relation = BMQ_REL_IN_FRONT;
        /* a style's look is for furniture and lamps ("a rustic table", "an industrial lamp"), not for a fridge or a TV */
        const char *kind = json_string_value (json_object_get (part->recipe, "kind"));
        if (part->material >= 0 && bmq_material_style ((size_t) part->material) && kind && strcmp (kind, "storage")
            && strcmp (kind, "seating") && strcmp (kind, "table") && strcmp (kind, "bed") && strcmp (kind, "lighting")
            && strcmp (kind, "office"))
            part->material = -1;
        /* "a TV on a low cabinet", "a low cabinet under the TV": the cabinet is a TV stand */
        if (ref && part->relation == BMQ_REL_ON && s_named (part, tv) && s_named (ref, low_case) && !kitchen)
            s_rename (book, ref, "tv_stand");
        if (ref && part->relation == BMQ_REL_UNDER && s_named (ref, tv) && s_named (part, low_case))
            s_rename (book, part, "tv_stand");
    }
}

/* ---- what was not understood --------------------------------------------------------- */

void bmq_scene_report (const bmq_tokens_t *k, const bool *used, const bool *weak, json_t *out, size_t max)
{
    for (size_t i = 0; i < k->n && json_array_size (out) < max; ) {
        if (used[i] || k->t[i].kind == BMQ_TOK_BREAK) { i++; continue; }
        size_t end = i;
        while (end < k->n && !used[end] && k->t[end].kind != BMQ_TOK_BREAK) end++;
        size_t first = i, last = end;                   /* [first, last), without trailing "of the" */
        while (last > first && weak[last - 1]) last--;
        bool content = false;
        for (size_t t = first; t < last; t++) content = content || !weak[t];
        if (content) {
            size_t a = k->t[first].start, b = k->t[last - 1].end;
            char text[S_PHRASE_BYTES + 4];
            if (b - a > S_PHRASE_BYTES) snprintf (text, sizeof text, "%.*s…", S_PHRASE_BYTES - 3, k->folded + a);
            else snprintf (text, sizeof text, "%.*s", (int) (b - a), k->folded + a);
            bmq_utf8_fix (text);                        /* a prompt need not be UTF-8; JSON must */
            json_array_append_new (out, json_string (text));
        }
        i = end;
    }
}
