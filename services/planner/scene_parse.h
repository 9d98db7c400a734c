/* scene_parse — what a prompt asks for, as parts: which recipes, how many
 * of each, their colour, size and position words, and how they stand
 * relative to one another; plus every word or phrase it could not place.
 *
 * How a prompt is read (scene_words.h has the vocabulary):
 *  1. Objects: at each word, the longest run of 1 to 4 words that names a
 *     recipe (recipe_book's typo rule; a run holding a vocabulary word must
 *     match exactly, so "beside" never reads as "bedside"). Plurals count:
 *     "chairs", "sillas", "árboles".
 *  2. A noun phrase: [article | count] [colour/size words] OBJECT [colour /
 *     size words] [at X Y Z] [scale N | Nx | twice]. Counts are numerals,
 *     number words ("twenty thousand", "quatre-vingts", "doscientos", "vinte
 *     e dois") or "a pair of", "a few" (3), "several" (3), "many" (6); a
 *     plural without a number is 3. Words after the object ("une chaise
 *     rouge") belong to it; words before belong to the object that follows.
 *  3. "the table" (a definite article) means a table named before, if any.
 *  4. X REL Y: X on / next to / in front of / behind / left of / right of /
 *     around Y, X between Y and Z (or between two Ys). X is the phrase just
 *     before the relation ("a lamp on a table next to a bed": the table is
 *     next to the bed); "REL Y, X" works too. "X with Y and Z" puts Y and Z
 *     next to X, unless they say otherwise ("with a lamp on it"); "it",
 *     "dessus", "encima" point at the object named before.
 *  5. "in a row" / "in a circle" (and "a row of") arrange the copies of the
 *     phrase they follow (or precede).
 *  6. Rooms (issue 26): a room word ("bedroom", "a 4 by 5 m office", "a
 *     small kitchen") sets the request's room, with "in the" before it;
 *     "against the wall", "in the corner", "on the wall", "in the middle"
 *     give the phrase they follow (or precede) its spot; "no X", "without
 *     X" remove X (and keep the room from adding one); material words
 *     ("wooden", "leather") give a look. under, above, inside/in, facing,
 *     on both sides of, on each side of (the count per side), on the long
 *     / short side of are relations too.
 *  6b. Free-form joints (issue 26): "with A and B on it" puts every thing
 *     that "with" listed on it; "the desk" after "an L-shaped desk" is that
 *     desk (a definite noun names an earlier part whose recipe is a kind of
 *     it: l_shaped_desk, coffee_table); "a lamp on each nightstand" is one
 *     lamp per nightstand named before; "next to it, X" / "between them"
 *     (the last thing named in numbers); "X at the desk" is in front of it;
 *     ", with X" after a comma hangs on the last thing named; "in between"
 *     alone is between the two named before; "a fridge, a stove and a sink,
 *     all against the wall" gives each of that sentence's parts the spot; a
 *     spot before a comma waits for the phrase after it; "on the floor",
 *     "there's", "I'd like" are fillers; "a 3 seater sofa" is not three
 *     sofas; a seat or a piece of furniture listed with a small thing
 *     ("two chairs and a printer on a cabinet") does not go up with it, nor
 *     does a thing that does not hang go "on the wall" with one that does;
 *     in a bathroom, "a sink" is a basin; "two chairs on each long side and
 *     one at each end" is two a long side and one an end ("one": another
 *     copy of the thing before, at the same anchor; no "of": the thing named
 *     before); "centred against the wall" is against the wall, centred on it;
 *     "a bookshelf on either side of the desk" is two, and so are "lamps on
 *     either side of the sofa", "plants flanking the door" and "a bed
 *     flanked by nightstands" ("it" after that is the bed); "draped /
 *     thrown / laid / spread over / across" is on; "a basket of blankets
 *     next to the sofa": the basket is next to it; "the shelf" after "a wall
 *     shelf" is that shelf; a count before a word with no recipe ("a pair
 *     of slippers under the bed") is not the next thing's.
 *  7. A relation that finds no object, a second relation for one object, a
 *     cycle ("A on B, B on A"), a position on an object that is placed by a
 *     relation, and any word that none of this used are not understood:
 *     they are reported, as the phrases they form ("with towers"). */
#ifndef BMQ_SCENE_PARSE_H
#define BMQ_SCENE_PARSE_H

#include "recipe_book.h"
#include "scene_words.h"

#include <jansson.h>
#include <stdbool.h>

#define BMQ_SCENE_MAX_PARTS 32

typedef struct {
    const json_t *recipe;           /* borrowed from the book */
    double score;                   /* how well its name matched, in [0.75, 1] */
    char   name[72];
    double count;                   /* >= 1, saturated at BMQ_COUNT_MAX */
    bool   count_given;             /* a number or a quantity word said so */
    bool   has_color;
    double color[3];
    char   color_word[24];
    double scale;                   /* 1 when nothing asked */
    char   scale_word[24];
    bool   has_position;
    double position[3];
    bmq_rel_t relation;             /* NONE, or ON .. AROUND (WITH is NEXT_TO by then) */
    int    ref[2];                  /* the parts it relates to; -1 when none */
    bmq_arrange_t arrange;
    bmq_spot_t spot;                /* where in a room ("against the wall"); NONE: the recipe's usual place */
    int    wall;                    /* 0 any, 1 back, 2 left, 3 right, 4 front */
    int    material;                /* -1, or a bmq_material index ("a leather sofa") */
    double clamped;                 /* a coordinate asked past ±1000 m (then moved to the bound, with a note); 0: none */
    bool   with_given;              /* its NEXT_TO came from "X with Y": compose puts it ON X when X has a top it fits on */
    bool   each_other;              /* "two desks facing each other": its copies face one another */
} bmq_scene_part_t;

#define BMQ_SCENE_MAX_NEGATED 16

typedef struct {
    bmq_room_kind_t kind;           /* NONE: no room was named */
    bool   sized;                   /* "4 by 5 m": width and depth given */
    double width, depth;            /* metres when sized */
    double scale;                   /* "a small bedroom": 0.8, "a large living room": 1.3; 1 otherwise */
} bmq_scene_room_t;

typedef struct {
    bmq_scene_part_t part[BMQ_SCENE_MAX_PARTS];
    size_t count;
    json_t *not_understood;         /* [phrase, ...] in prompt order (owned) */
    bmq_scene_room_t room;
    const json_t *negated[BMQ_SCENE_MAX_NEGATED];  /* recipes the prompt says it does not want ("no wardrobe") */
    size_t nnegated;
} bmq_scene_request_t;

/* Read a prompt. 0 (request filled; free it with bmq_scene_request_clear) or
 * -1 when out of memory. A request with no part means nothing was named. */
int bmq_scene_parse (const bmq_recipe_book_t *book, const char *prompt, bmq_scene_request_t *req);
void bmq_scene_request_clear (bmq_scene_request_t *req);

/* "next_to", ... (JSON names). */
const char *bmq_scene_rel_name (bmq_rel_t rel);

#endif
