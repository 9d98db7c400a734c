/* recipe_params — size, colour and position words in a prompt. */
#include "recipe_params.h"
#include "recipe_book.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_TOKENS 128
#define S_MIN_SCALE  0.05
#define S_MAX_SCALE  20.0
#define S_MAX_OFFSET 1000.0

typedef struct {
    bool   number;
    double value;
    char   text[32];
    bool   used;
} s_token_t;

typedef struct {
    s_token_t t[S_MAX_TOKENS];
    size_t    n;
} s_tokens_t;

typedef struct { const char *word; double r, g, b; } s_color_t;
typedef struct { const char *word; double factor; } s_size_t;

/* Base colours as Blender wants them (linear, not sRGB). */
static const s_color_t s_colors[] = {
    { "red", 0.8, 0.05, 0.05 }, { "rouge", 0.8, 0.05, 0.05 }, { "rojo", 0.8, 0.05, 0.05 }, { "roja", 0.8, 0.05, 0.05 },
    { "rot", 0.8, 0.05, 0.05 }, { "rote", 0.8, 0.05, 0.05 }, { "roter", 0.8, 0.05, 0.05 }, { "rosso", 0.8, 0.05, 0.05 }, { "rossa", 0.8, 0.05, 0.05 },
    { "green", 0.1, 0.55, 0.12 }, { "vert", 0.1, 0.55, 0.12 }, { "verte", 0.1, 0.55, 0.12 }, { "verde", 0.1, 0.55, 0.12 },
    { "grun", 0.1, 0.55, 0.12 }, { "gruen", 0.1, 0.55, 0.12 }, { "grune", 0.1, 0.55, 0.12 },
    { "blue", 0.08, 0.2, 0.8 }, { "bleu", 0.08, 0.2, 0.8 }, { "bleue", 0.08, 0.2, 0.8 }, { "azul", 0.08, 0.2, 0.8 },
    { "blau", 0.08, 0.2, 0.8 }, { "blaue", 0.08, 0.2, 0.8 }, { "blu", 0.08, 0.2, 0.8 },
    { "yellow", 0.95, 0.75, 0.05 }, { "jaune", 0.95, 0.75, 0.05 }, { "amarillo", 0.95, 0.75, 0.05 }, { "amarilla", 0.95, 0.75, 0.05 },
    { "gelb", 0.95, 0.75, 0.05 }, { "gelbe", 0.95, 0.75, 0.05 }, { "giallo", 0.95, 0.75, 0.05 }, { "gialla", 0.95, 0.75, 0.05 },
    { "orange", 1.0, 0.35, 0.02 }, { "naranja", 1.0, 0.35, 0.02 }, { "arancione", 1.0, 0.35, 0.02 },
    { "purple", 0.35, 0.08, 0.6 }, { "violet", 0.35, 0.08, 0.6 }, { "violette", 0.35, 0.08, 0.6 }, { "morado", 0.35, 0.08, 0.6 },
    { "morada", 0.35, 0.08, 0.6 }, { "lila", 0.35, 0.08, 0.6 }, { "viola", 0.35, 0.08, 0.6 },
    { "pink", 1.0, 0.35, 0.55 }, { "rose", 1.0, 0.35, 0.55 }, { "rosa", 1.0, 0.35, 0.55 },
    { "white", 0.95, 0.95, 0.95 }, { "blanc", 0.95, 0.95, 0.95 }, { "blanche", 0.95, 0.95, 0.95 }, { "blanco", 0.95, 0.95, 0.95 },
    { "blanca", 0.95, 0.95, 0.95 }, { "weiss", 0.95, 0.95, 0.95 }, { "weisse", 0.95, 0.95, 0.95 }, { "bianco", 0.95, 0.95, 0.95 },
    { "black", 0.02, 0.02, 0.02 }, { "noir", 0.02, 0.02, 0.02 }, { "noire", 0.02, 0.02, 0.02 }, { "negro", 0.02, 0.02, 0.02 },
    { "negra", 0.02, 0.02, 0.02 }, { "schwarz", 0.02, 0.02, 0.02 }, { "schwarze", 0.02, 0.02, 0.02 }, { "nero", 0.02, 0.02, 0.02 },
    { "grey", 0.4, 0.4, 0.4 }, { "gray", 0.4, 0.4, 0.4 }, { "gris", 0.4, 0.4, 0.4 }, { "grise", 0.4, 0.4, 0.4 },
    { "grau", 0.4, 0.4, 0.4 }, { "grigio", 0.4, 0.4, 0.4 },
    { "brown", 0.35, 0.18, 0.07 }, { "marron", 0.35, 0.18, 0.07 }, { "brun", 0.35, 0.18, 0.07 }, { "braun", 0.35, 0.18, 0.07 },
    { "gold", 1.0, 0.72, 0.25 }, { "golden", 1.0, 0.72, 0.25 }, { "dore", 1.0, 0.72, 0.25 }, { "dorado", 1.0, 0.72, 0.25 },
    { "silver", 0.8, 0.8, 0.82 }, { "argent", 0.8, 0.8, 0.82 }, { "plateado", 0.8, 0.8, 0.82 }, { "silbern", 0.8, 0.8, 0.82 },
    { "cyan", 0.05, 0.7, 0.8 }, { "turquoise", 0.05, 0.7, 0.8 }, { "turquesa", 0.05, 0.7, 0.8 },
    { "beige", 0.8, 0.7, 0.52 },
    /* interior shades people name (issue 26), linear */
    { "navy", 0.02, 0.04, 0.2 }, { "teal", 0.0, 0.3, 0.3 }, { "mustard", 0.7, 0.5, 0.05 }, { "cream", 0.95, 0.9, 0.75 },
    { "ivory", 0.95, 0.93, 0.82 }, { "charcoal", 0.08, 0.08, 0.09 }, { "olive", 0.3, 0.32, 0.06 }, { "burgundy", 0.35, 0.02, 0.06 },
    { "maroon", 0.3, 0.02, 0.03 }, { "tan", 0.6, 0.45, 0.28 }, { "lavender", 0.6, 0.5, 0.85 }, { "mint", 0.5, 0.9, 0.65 },
    { "coral", 1.0, 0.35, 0.25 }, { "emerald", 0.02, 0.45, 0.2 }, { "sage", 0.45, 0.55, 0.4 }, { "magenta", 0.8, 0.05, 0.6 },
    { "taupe", 0.4, 0.35, 0.3 }, { "indigo", 0.12, 0.05, 0.4 }, { "crimson", 0.7, 0.02, 0.08 }, { "khaki", 0.6, 0.55, 0.35 },
    /* Portuguese, and forms the rows above miss */
    { "vermelho", 0.8, 0.05, 0.05 }, { "vermelha", 0.8, 0.05, 0.05 }, { "amarelo", 0.95, 0.75, 0.05 }, { "amarela", 0.95, 0.75, 0.05 },
    { "branco", 0.95, 0.95, 0.95 }, { "branca", 0.95, 0.95, 0.95 }, { "preto", 0.02, 0.02, 0.02 }, { "preta", 0.02, 0.02, 0.02 },
    { "cinza", 0.4, 0.4, 0.4 }, { "cinzento", 0.4, 0.4, 0.4 }, { "cinzenta", 0.4, 0.4, 0.4 }, { "roxo", 0.35, 0.08, 0.6 },
    { "roxa", 0.35, 0.08, 0.6 }, { "laranja", 1.0, 0.35, 0.02 }, { "marrom", 0.35, 0.18, 0.07 }, { "castanho", 0.35, 0.18, 0.07 },
    { "castanha", 0.35, 0.18, 0.07 }, { "dourado", 1.0, 0.72, 0.25 }, { "dourada", 1.0, 0.72, 0.25 }, { "doree", 1.0, 0.72, 0.25 },
    { "dorada", 1.0, 0.72, 0.25 }, { "prateado", 0.8, 0.8, 0.82 }, { "prateada", 0.8, 0.8, 0.82 }, { "plateada", 0.8, 0.8, 0.82 },
    { "argente", 0.8, 0.8, 0.82 }, { "argentee", 0.8, 0.8, 0.82 },
};

static const s_size_t s_sizes[] = {
    { "big", 1.5 }, { "large", 1.5 }, { "tall", 1.5 }, { "grand", 1.5 }, { "grande", 1.5 }, { "gros", 1.5 }, { "grosse", 1.5 },
    { "gross", 1.5 }, { "grosser", 1.5 }, { "grosses", 1.5 }, { "groot", 1.5 },
    { "huge", 2.0 }, { "enorme", 2.0 }, { "massive", 2.0 }, { "riesig", 2.0 },
    { "giant", 2.5 }, { "gigantic", 2.5 }, { "enormous", 2.5 }, { "geant", 2.5 }, { "geante", 2.5 }, { "gigante", 2.5 },
    { "small", 0.6 }, { "little", 0.6 }, { "petit", 0.6 }, { "petite", 0.6 }, { "pequeno", 0.6 }, { "pequena", 0.6 },
    { "klein", 0.6 }, { "kleine", 0.6 }, { "kleiner", 0.6 }, { "piccolo", 0.6 }, { "piccola", 0.6 },
    { "tiny", 0.35 }, { "mini", 0.35 }, { "miniature", 0.35 }, { "minuscule", 0.35 }, { "diminuto", 0.35 }, { "winzig", 0.35 },
    { "diminuta", 0.35 }, { "minusculo", 0.35 }, { "minuscula", 0.35 },
    /* rooms as people describe them (issue 26): a room's size, and an object's height as a whole-size hint */
    { "spacious", 1.5 }, { "roomy", 1.5 }, { "generous", 1.5 }, { "oversized", 1.5 },
    { "compact", 0.75 }, { "cramped", 0.7 }, { "low", 0.75 }, { "short", 0.75 },
};

/* A table word, else the word without a plural ending ("rouges", "azules"). */
static bool s_lookup_forms (const char *word, bool (*find) (const char *, void *), void *out)
{
    char w[32];
    size_t n = strnlen (word, sizeof w);
    if (n == 0 || n >= sizeof w) return false;
    memcpy (w, word, n + 1);
    if (find (w, out)) return true;
    if (n > 3 && w[n - 1] == 's') {
        w[n - 1] = 0;
        if (find (w, out)) return true;
        if (n > 4 && w[n - 2] == 'e') { w[n - 2] = 0; return find (w, out); }
    }
    return false;
}

typedef struct { double *rgb; const char **canonical; } s_color_out_t;

static bool s_find_color (const char *w, void *arg)
{
    s_color_out_t *out = arg;
    for (size_t c = 0; c < sizeof s_colors / sizeof *s_colors; c++)
        if (!strcmp (w, s_colors[c].word)) {
            out->rgb[0] = s_colors[c].r;
            out->rgb[1] = s_colors[c].g;
            out->rgb[2] = s_colors[c].b;
            if (out->canonical) *out->canonical = s_colors[c].word;
            return true;
        }
    return false;
}

static bool s_find_size (const char *w, void *arg)
{
    for (size_t s = 0; s < sizeof s_sizes / sizeof *s_sizes; s++)
        if (!strcmp (w, s_sizes[s].word)) { *(double *) arg = s_sizes[s].factor; return true; }
    return false;
}

bool bmq_recipe_color_word (const char *word, double rgb[3], const char **canonical)
{
    s_color_out_t out = { rgb, canonical };
    return word && s_lookup_forms (word, s_find_color, &out);
}

bool bmq_recipe_size_word (const char *word, double *factor)
{
    return word && s_lookup_forms (word, s_find_size, factor);
}

static void s_tokenize (const char *prompt, s_tokens_t *out)
{
    char folded[BMQ_RECIPE_MAX_PROMPT * 2 + 1];
    bmq_recipe_fold (prompt, folded, sizeof folded);
    out->n = 0;
    for (const char *c = folded; *c && out->n < S_MAX_TOKENS; ) {
        unsigned char u = (unsigned char) *c;
        bool sign = (*c == '-' || *c == '+') && c[1] >= '0' && c[1] <= '9';
        if ((u >= '0' && u <= '9') || sign || (*c == '.' && c[1] >= '0' && c[1] <= '9')) {
            char *end;
            double v = strtod (c, &end);
            if (end == c) { c++; continue; }
            s_token_t *t = &out->t[out->n++];
            memset (t, 0, sizeof *t);
            t->number = true;
            t->value = v;
            snprintf (t->text, sizeof t->text, "%.*s", (int) (end - c), c);
            c = end;
        }
        else if ((u >= 'a' && u <= 'z') || u >= 0x80) {
            const char *start = c;
            while (*c && (((unsigned char) *c >= 'a' && (unsigned char) *c <= 'z') || (unsigned char) *c >= 0x80)) c++;
            s_token_t *t = &out->t[out->n++];
            memset (t, 0, sizeof *t);
            snprintf (t->text, sizeof t->text, "%.*s", (int) (c - start), start);
        }
        else c++;
    }
}

static bool s_is (const s_token_t *t, const char *word)
{
    return !t->number && !t->used && !strcmp (t->text, word);
}

static bool s_num (const s_tokens_t *k, size_t i)
{
    return i < k->n && k->t[i].number && !k->t[i].used;
}

static double s_clamp (double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* "at 3 0 0", "at (3, 0, -2)", "at x=3 y=2", "à 3 2 0", "en 1 2 3". */
static void s_position (s_tokens_t *k, bmq_recipe_mods_t *m)
{
    static const char *lead[] = { "at", "a", "en", "position", "located", "positioned", "placed", "bei", "auf", "in" };
    for (size_t i = 0; i + 1 < k->n && !m->has_offset; i++) {
        bool is_lead = false;
        for (size_t w = 0; w < sizeof lead / sizeof *lead; w++) is_lead = is_lead || s_is (&k->t[i], lead[w]);
        if (!is_lead) continue;
        double v[3] = { 0, 0, 0 };
        int got = 0, labelled = 0;
        size_t j = i + 1;
        for (int axis = 0; j < k->n && got < 3; axis++) {
            int slot = got;
            if (!k->t[j].number && strlen (k->t[j].text) == 1 && k->t[j].text[0] >= 'x' && k->t[j].text[0] <= 'z' && s_num (k, j + 1)) {
                slot = k->t[j].text[0] - 'x';
                j++;
                labelled++;
            }
            if (!s_num (k, j)) break;
            v[slot] = k->t[j].value;
            got++;
            j++;
        }
        if (got >= 2 || labelled >= 1) {
            for (size_t u = i; u < j; u++) k->t[u].used = true;
            for (int a = 0; a < 3; a++) m->offset[a] = s_clamp (v[a], -S_MAX_OFFSET, S_MAX_OFFSET);
            m->has_offset = true;
        }
    }
}

static bool s_numeric_scale (s_tokens_t *k, bmq_recipe_mods_t *m)
{
    static const char *times[] = { "x", "times", "fois", "veces", "mal", "volte" };
    static const char *lead[] = { "scale", "scaled", "size", "echelle", "escala", "scala", "x" };
    for (size_t i = 0; i < k->n; i++) {
        if (s_num (k, i) && i + 1 < k->n) {
            for (size_t w = 0; w < sizeof times / sizeof *times; w++)
                if (s_is (&k->t[i + 1], times[w]) && k->t[i].value > 0) {
                    m->scale = k->t[i].value;
                    snprintf (m->scale_word, sizeof m->scale_word, "%sx", k->t[i].text);
                    return true;
                }
        }
        for (size_t w = 0; w < sizeof lead / sizeof *lead; w++) {
            if (!s_is (&k->t[i], lead[w])) continue;
            size_t j = i + 1;
            while (j < k->n && (s_is (&k->t[j], "of") || s_is (&k->t[j], "by") || s_is (&k->t[j], "to") || s_is (&k->t[j], "de"))) j++;
            if (s_num (k, j) && k->t[j].value > 0) {
                m->scale = k->t[j].value;
                snprintf (m->scale_word, sizeof m->scale_word, "%s %s", lead[w], k->t[j].text);
                return true;
            }
        }
        const char *word = k->t[i].number ? "" : k->t[i].text;
        double f = !strcmp (word, "twice") || !strcmp (word, "double") || !strcmp (word, "doble") ? 2
                 : !strcmp (word, "triple") ? 3 : !strcmp (word, "half") || !strcmp (word, "moitie") ? 0.5 : 0;
        if (f > 0 && !k->t[i].used) {
            m->scale = f;
            snprintf (m->scale_word, sizeof m->scale_word, "%s", word);
            return true;
        }
    }
    return false;
}

void bmq_recipe_mods_parse (const char *prompt, bmq_recipe_mods_t *m)
{
    memset (m, 0, sizeof *m);
    m->scale = 1.0;
    s_tokens_t *k = malloc (sizeof *k);
    if (!k) return;
    s_tokenize (prompt, k);
    s_position (k, m);
    bool numeric = s_numeric_scale (k, m);
    for (size_t i = 0; i < k->n; i++) {
        if (k->t[i].number || k->t[i].used) continue;
        for (size_t c = 0; !m->has_color && c < sizeof s_colors / sizeof *s_colors; c++)
            if (!strcmp (k->t[i].text, s_colors[c].word)) {
                m->has_color = true;
                m->color[0] = s_colors[c].r;
                m->color[1] = s_colors[c].g;
                m->color[2] = s_colors[c].b;
                snprintf (m->color_word, sizeof m->color_word, "%s", s_colors[c].word);
            }
        for (size_t s = 0; !numeric && s < sizeof s_sizes / sizeof *s_sizes; s++)      /* the last size word wins */
            if (!strcmp (k->t[i].text, s_sizes[s].word)) {
                m->scale = s_sizes[s].factor;
                snprintf (m->scale_word, sizeof m->scale_word, "%s", s_sizes[s].word);
            }
    }
    m->scale = s_clamp (m->scale, S_MIN_SCALE, S_MAX_SCALE);
    free (k);
}

bool bmq_recipe_mods_any (const bmq_recipe_mods_t *m)
{
    return m->scale != 1.0 || m->has_color || m->has_offset;
}

/* ---- applying ------------------------------------------------------------------ */

static double s_round (double v)
{
    return round (v * 10000.0) / 10000.0;
}

/* A vec3 (params[key], else the palette default, else zeros) scaled and moved. */
static void s_place (json_t *params, const char *key, const json_t *param_desc, double s, const double *off)
{
    json_t *v = json_object_get (params, key);
    if (!json_is_array (v) || json_array_size (v) != 3) v = json_object_get (param_desc, "default");
    double out[3];
    for (size_t a = 0; a < 3; a++) {
        json_t *x = json_array_get (v, a);
        out[a] = s_round ((json_is_number (x) ? json_number_value (x) : 0.0) * s + (off ? off[a] : 0.0));
    }
    json_object_set_new (params, key, json_pack ("[f, f, f]", out[0], out[1], out[2]));
}

static bool s_in (const json_t *list, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach (list, i, v)
        if (name && json_is_string (v) && !strcmp (json_string_value (v), name)) return true;
    return false;
}

json_t *bmq_recipe_mods_apply (const json_t *steps, const json_t *color_parts, const json_t *described,
                               const bmq_recipe_mods_t *m)
{
    static const char *sizes[] = { "size", "radius", "radius1", "radius2", "depth", "major_radius", "minor_radius" };
    json_t *out = json_deep_copy (steps);
    json_t *ops = json_object_get (described, "operations");
    size_t i;
    json_t *step;
    json_array_foreach (out, i, step) {
        const char *op = json_string_value (json_object_get (step, "operation"));
        json_t *entry = json_object_get (ops, op ? op : "");
        json_t *pdesc = json_object_get (entry, "params");
        json_t *params = json_object_get (step, "params");
        if (!json_is_object (params)) {
            params = json_object ();
            json_object_set_new (step, "params", params);
        }
        if (json_is_true (json_object_get (entry, "creates"))) {
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes && m->scale != 1.0; k++) {
                json_t *d = json_object_get (pdesc, sizes[k]);
                if (!d) continue;
                json_t *v = json_object_get (params, sizes[k]);
                if (!json_is_number (v)) v = json_object_get (d, "default");
                if (!json_is_number (v)) continue;
                double x = s_round (json_number_value (v) * m->scale);
                json_t *lo = json_object_get (d, "min"), *hi = json_object_get (d, "max");
                if (json_is_number (lo) && x < json_number_value (lo) && json_number_value (v) > 0) x = json_number_value (lo);
                if (json_is_number (hi) && x > json_number_value (hi)) x = json_number_value (hi);
                json_object_set_new (params, sizes[k], json_real (x));   /* a part too thin to scale keeps the palette's least */
            }
            if (json_object_get (pdesc, "location") && (m->scale != 1.0 || m->has_offset))
                s_place (params, "location", json_object_get (pdesc, "location"), m->scale, m->has_offset ? m->offset : NULL);
        }
        else if (op && !strcmp (op, "object.location"))
            s_place (params, "value", NULL, m->scale, m->has_offset ? m->offset : NULL);
        else if (op && !strcmp (op, "bpy.ops.transform.translate"))
            s_place (params, "value", NULL, m->scale, NULL);
        else if (op && !strcmp (op, "object.material") && m->has_color
                 && s_in (color_parts, json_string_value (json_object_get (step, "target")))) {
            json_t *old = json_object_get (params, "color");
            json_t *c = json_pack ("[f, f, f]", m->color[0], m->color[1], m->color[2]);
            if (json_array_size (old) == 4) json_array_append (c, json_array_get (old, 3));
            json_object_set_new (params, "color", c);
        }
        if (json_object_size (params) == 0) json_object_del (step, "params");
    }
    return out;
}

void bmq_recipe_mods_describe (const bmq_recipe_mods_t *m, char *out, size_t outlen)
{
    size_t o = 0;
    out[0] = 0;
    if (m->has_color) o += (size_t) snprintf (out + o, outlen - o, "%s", m->color_word);
    if (m->scale != 1.0 && o < outlen)
        o += (size_t) snprintf (out + o, outlen - o, "%s%g× (%s)", o ? ", " : "", m->scale, m->scale_word);
    if (m->has_offset && o < outlen)
        snprintf (out + o, outlen - o, "%sat (%g, %g, %g)", o ? ", " : "", m->offset[0], m->offset[1], m->offset[2]);
}

json_t *bmq_recipe_mods_json (const bmq_recipe_mods_t *m)
{
    json_t *j = json_pack ("{s:f}", "scale", m->scale);
    if (m->has_color) json_object_set_new (j, "color", json_pack ("{s:s, s:[f, f, f]}", "word", m->color_word, "rgb",
                                                                   m->color[0], m->color[1], m->color[2]));
    if (m->has_offset) json_object_set_new (j, "position", json_pack ("[f, f, f]", m->offset[0], m->offset[1], m->offset[2]));
    return j;
}
