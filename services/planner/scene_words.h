/* scene_words — the words of a scene prompt, before any grammar: tokens with
 * their place in the text, the small vocabulary that is not an object
 * (articles, counts, relations, arrangements, connectors, polite and
 * imperative words) in English, French, Spanish and Portuguese, and number
 * words ("twenty thousand", "quatre-vingt-dix", "doscientos", "vinte e dois").
 *
 * The prompt is folded first (lower case, accents off: "à côté de" → "a cote
 * de"); apostrophes and hyphens split words ("l'arbre" → "l arbre"). A
 * number is a token of its own ("-2.5"); ',' ';' '.' '!' '?' ':' are breaks.
 * Everything is bounded: BMQ_RECIPE_MAX_PROMPT bytes, BMQ_TOKENS_MAX tokens,
 * BMQ_TOKEN_LEN bytes a word (longer words are cut, never overflow). */
#ifndef BMQ_SCENE_WORDS_H
#define BMQ_SCENE_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#define BMQ_TOKENS_MAX  256
#define BMQ_TOKEN_LEN   48
#define BMQ_COUNT_MAX   1e9         /* counts saturate here: "a billion trees" is still a clear "too many" */

/* Where one object goes relative to another. WITH and ON_IT exist only
 * while parsing ("a table with two chairs": the chairs next to the table;
 * "with a lamp on it": on the object named before). */
typedef enum {
    BMQ_REL_NONE, BMQ_REL_ON, BMQ_REL_NEXT_TO, BMQ_REL_IN_FRONT, BMQ_REL_BEHIND, BMQ_REL_LEFT_OF, BMQ_REL_RIGHT_OF,
    BMQ_REL_BETWEEN, BMQ_REL_AROUND, BMQ_REL_WITH, BMQ_REL_ON_IT,
    BMQ_REL_UNDER, BMQ_REL_ABOVE, BMQ_REL_INSIDE, BMQ_REL_FACING, BMQ_REL_LONG_SIDE, BMQ_REL_SHORT_SIDE,
    BMQ_REL_EACH_SIDE,              /* parse only: "two chairs on each side of": next to, the count per side */
    BMQ_REL_ON_EACH,                /* parse only: "with a lamp on each": on, one per copy */
    BMQ_REL_OF,                     /* parse only: "a bowl of apples": the apples inside (or on) the bowl */
    BMQ_REL_WEARING,                /* parse only: "a snowman wearing a hat": the hat on the snowman */
    BMQ_REL_FLANKED                 /* parse only: "a sofa flanked by two lamps": the lamps next to the sofa, one a side */
} bmq_rel_t;

/* Where in a room something goes when the prompt says so ("against the wall",
 * "in the corner", "on the wall", "in the middle"); a vocabulary value is
 * spot + 8 × wall (0 any, 1 back, 2 left, 3 right, 4 front). */
typedef enum { BMQ_SPOT_NONE, BMQ_SPOT_WALL, BMQ_SPOT_CORNER, BMQ_SPOT_ONWALL, BMQ_SPOT_CENTER } bmq_spot_t;

/* The rooms a prompt may name ("a cosy bedroom", "a 4 by 5 m office"). */
typedef enum {
    BMQ_ROOM_NONE, BMQ_ROOM_GENERIC, BMQ_ROOM_BEDROOM, BMQ_ROOM_LIVING, BMQ_ROOM_KITCHEN, BMQ_ROOM_OFFICE, BMQ_ROOM_DINING,
    BMQ_ROOM_BATHROOM, BMQ_ROOM_KIDS, BMQ_ROOM_LAUNDRY, BMQ_ROOM_HALL, BMQ_ROOM_GYM, BMQ_ROOM_STUDIO, BMQ_ROOM_COUNT
} bmq_room_kind_t;
const char *bmq_room_name (bmq_room_kind_t kind);

/* How the copies of one object stand: as the layout likes, in a row, in a circle. */
typedef enum { BMQ_ARRANGE_NONE, BMQ_ARRANGE_ROW, BMQ_ARRANGE_CIRCLE } bmq_arrange_t;

typedef enum { BMQ_TOK_WORD, BMQ_TOK_NUMBER, BMQ_TOK_BREAK } bmq_tok_kind_t;

typedef struct {
    bmq_tok_kind_t kind;
    char   text[BMQ_TOKEN_LEN];     /* folded */
    char   single[BMQ_TOKEN_LEN];   /* folded and made singular (words) */
    double value;                   /* numbers */
    size_t start, end;              /* its bytes in the folded prompt */
} bmq_token_t;

typedef struct {
    bmq_token_t *t;
    size_t       n;
    char        *folded;            /* the folded prompt the spans point into */
    bool         cut;               /* more text than is read (BMQ_RECIPE_MAX_PROMPT bytes, BMQ_TOKENS_MAX tokens) */
    size_t       read_to;           /* where reading stopped in `folded` */
} bmq_tokens_t;

/* Read a prompt. 0, or -1 when out of memory (then nothing to free). */
int bmq_tokens_read (const char *prompt, bmq_tokens_t *out);
void bmq_tokens_free (bmq_tokens_t *tokens);

typedef enum {
    BMQ_W_NONE,
    BMQ_W_FILLER,       /* build, please, je veux, por favor: never an object, never reported */
    BMQ_W_INDEF,        /* a, une, unos: an article asking for a new object (count 1 unless plural) */
    BMQ_W_DEF,          /* the, la, esses: an article that may point back at an object named before */
    BMQ_W_WEAK,         /* of, de, to: only meaningful inside a phrase */
    BMQ_W_CONNECT,      /* and, et, y, e, plus */
    BMQ_W_REL,          /* value: a bmq_rel_t (scene_parse.h) */
    BMQ_W_ARRANGE,      /* value: a bmq_arrange_t */
    BMQ_W_QUANT,        /* a pair of, several, beaucoup de: value is the count */
    BMQ_W_AT,           /* at, à, en, em: a position follows when numbers do */
    BMQ_W_SCALE,        /* scale, scaled by: a factor follows */
    BMQ_W_TIMES,        /* x, times, fois, veces, vezes: after a number, a factor */
    BMQ_W_FACTOR,       /* twice, half, twice as big: value is the factor */
    BMQ_W_PRONOUN,      /* it, them: the object named before */
    BMQ_W_SPOT,         /* against the wall, in the corner: value spot + 8 × wall (bmq_spot_t) */
    BMQ_W_ROOM,         /* bedroom, living room: value a bmq_room_kind_t */
    BMQ_W_NEG,          /* no, without, not: the object that follows is not wanted */
    BMQ_W_MATERIAL,     /* wooden, metal, leather: value an index for bmq_material */
} bmq_word_kind_t;

/* The longest vocabulary phrase starting at token i: its length in tokens
 * (0: none), kind and value. */
size_t bmq_vocab_match (const bmq_tokens_t *tokens, size_t i, bmq_word_kind_t *kind, double *value);
/* Number words starting at token i ("twenty thousand", "a hundred", "a
 * dozen", "vingt et un"): tokens used (0: none) and the value, saturated at
 * BMQ_COUNT_MAX. A bare article ("a", "un") is not a number here. */
size_t bmq_number_words (const bmq_tokens_t *tokens, size_t i, double *value);
/* A material word's look (index from BMQ_W_MATERIAL): its name, a colour, roughness and metallic. */
typedef struct { const char *word; double rgb[3]; double roughness, metallic; } bmq_material_t;
const bmq_material_t *bmq_material (size_t index);
/* A style word's look ("rustic", "industrial", "scandinavian"): it only applies to an object named right
 * after it; anywhere else the word is accepted and changes nothing. */
bool bmq_material_style (size_t index);

/* Make text valid UTF-8 in place: every byte that does not belong to a
 * well-formed sequence (a stray 0xff, a sequence cut short by a length
 * limit) becomes '?'. JSON strings must be UTF-8; a prompt need not be. */
void bmq_utf8_fix (char *text);
/* A word the grammar gives a meaning to (vocabulary, number, colour or size
 * word): an object's name may only match it exactly, never by forgiving a
 * typo ("beside" is not "bedside"). */
bool bmq_vocab_reserved (const char *word);

#endif
