/* scene_mentions — the objects a prompt names, and the phrases nothing used; see scene_mentions.h. */
#include "scene_mentions.h"

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
