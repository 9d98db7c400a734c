/* scene_words — tokens, vocabulary and number words; see scene_words.h. */
#include "scene_words.h"
#include "recipe_book.h"
#include "recipe_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *phrase; bmq_word_kind_t kind; double value; } s_vocab_t;

/* Folded, words split as the tokenizer splits them ("à côté de" → "a cote de"). */
static const s_vocab_t s_vocab[] = {
    /* relations (en, fr, es, pt) */
    { "on top of", BMQ_W_REL, BMQ_REL_ON }, { "on", BMQ_W_REL, BMQ_REL_ON }, { "onto", BMQ_W_REL, BMQ_REL_ON },
    /* a textile over a seat or a bed lies on it (issue 26): "a blanket draped over the recliner" */
    { "draped over", BMQ_W_REL, BMQ_REL_ON }, { "draped across", BMQ_W_REL, BMQ_REL_ON }, { "draped on", BMQ_W_REL, BMQ_REL_ON },
    { "draped onto", BMQ_W_REL, BMQ_REL_ON }, { "draped over the back of", BMQ_W_REL, BMQ_REL_ON },
    { "draped across the back of", BMQ_W_REL, BMQ_REL_ON }, { "thrown over", BMQ_W_REL, BMQ_REL_ON },
    { "thrown across", BMQ_W_REL, BMQ_REL_ON }, { "thrown on", BMQ_W_REL, BMQ_REL_ON }, { "thrown onto", BMQ_W_REL, BMQ_REL_ON },
    { "thrown over the back of", BMQ_W_REL, BMQ_REL_ON }, { "thrown across the back of", BMQ_W_REL, BMQ_REL_ON },
    { "laid over", BMQ_W_REL, BMQ_REL_ON }, { "laid across", BMQ_W_REL, BMQ_REL_ON }, { "laid on", BMQ_W_REL, BMQ_REL_ON },
    { "laid onto", BMQ_W_REL, BMQ_REL_ON }, { "laid over the back of", BMQ_W_REL, BMQ_REL_ON },
    { "laid across the back of", BMQ_W_REL, BMQ_REL_ON }, { "spread over", BMQ_W_REL, BMQ_REL_ON },
    { "spread across", BMQ_W_REL, BMQ_REL_ON }, { "spread on", BMQ_W_REL, BMQ_REL_ON }, { "spread onto", BMQ_W_REL, BMQ_REL_ON },
    { "spread over the back of", BMQ_W_REL, BMQ_REL_ON }, { "spread across the back of", BMQ_W_REL, BMQ_REL_ON },
    { "tossed over", BMQ_W_REL, BMQ_REL_ON }, { "tossed across", BMQ_W_REL, BMQ_REL_ON }, { "tossed on", BMQ_W_REL, BMQ_REL_ON },
    { "tossed onto", BMQ_W_REL, BMQ_REL_ON }, { "tossed over the back of", BMQ_W_REL, BMQ_REL_ON },
    { "tossed across the back of", BMQ_W_REL, BMQ_REL_ON }, { "folded over", BMQ_W_REL, BMQ_REL_ON },
    { "folded across", BMQ_W_REL, BMQ_REL_ON }, { "folded on", BMQ_W_REL, BMQ_REL_ON }, { "folded onto", BMQ_W_REL, BMQ_REL_ON },
    { "folded over the back of", BMQ_W_REL, BMQ_REL_ON }, { "folded across the back of", BMQ_W_REL, BMQ_REL_ON },
    { "slung over", BMQ_W_REL, BMQ_REL_ON }, { "slung across", BMQ_W_REL, BMQ_REL_ON }, { "slung on", BMQ_W_REL, BMQ_REL_ON },
    { "slung onto", BMQ_W_REL, BMQ_REL_ON }, { "slung over the back of", BMQ_W_REL, BMQ_REL_ON },
    { "slung across the back of", BMQ_W_REL, BMQ_REL_ON }, { "flung over", BMQ_W_REL, BMQ_REL_ON },
    { "flung across", BMQ_W_REL, BMQ_REL_ON }, { "flung on", BMQ_W_REL, BMQ_REL_ON }, { "flung onto", BMQ_W_REL, BMQ_REL_ON },
    { "flung over the back of", BMQ_W_REL, BMQ_REL_ON }, { "flung across the back of", BMQ_W_REL, BMQ_REL_ON },
    { "on to", BMQ_W_REL, BMQ_REL_ON }, { "upon", BMQ_W_REL, BMQ_REL_ON }, { "atop", BMQ_W_REL, BMQ_REL_ON },
    { "sur", BMQ_W_REL, BMQ_REL_ON }, { "au dessus de", BMQ_W_REL, BMQ_REL_ON }, { "au dessus du", BMQ_W_REL, BMQ_REL_ON },
    { "au dessus des", BMQ_W_REL, BMQ_REL_ON }, { "sobre", BMQ_W_REL, BMQ_REL_ON }, { "encima de", BMQ_W_REL, BMQ_REL_ON },
    { "encima del", BMQ_W_REL, BMQ_REL_ON }, { "arriba de", BMQ_W_REL, BMQ_REL_ON }, { "en", BMQ_W_REL, BMQ_REL_ON },
    { "em cima de", BMQ_W_REL, BMQ_REL_ON }, { "em cima do", BMQ_W_REL, BMQ_REL_ON }, { "em cima da", BMQ_W_REL, BMQ_REL_ON },
    { "em cima dos", BMQ_W_REL, BMQ_REL_ON }, { "em cima das", BMQ_W_REL, BMQ_REL_ON }, { "na", BMQ_W_REL, BMQ_REL_ON },
    { "on it", BMQ_W_REL, BMQ_REL_ON_IT }, { "on top of it", BMQ_W_REL, BMQ_REL_ON_IT }, { "on top", BMQ_W_REL, BMQ_REL_ON_IT },
    { "on them", BMQ_W_REL, BMQ_REL_ON_IT }, { "dessus", BMQ_W_REL, BMQ_REL_ON_IT }, { "par dessus", BMQ_W_REL, BMQ_REL_ON_IT },
    { "encima", BMQ_W_REL, BMQ_REL_ON_IT }, { "em cima", BMQ_W_REL, BMQ_REL_ON_IT }, { "por cima", BMQ_W_REL, BMQ_REL_ON_IT },
    { "next to", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "beside", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "besides", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "by", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "near", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "near to", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "close to", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "alongside", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "by the side of", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "a cote de", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "a cote du", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "a cote des", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "a cote d", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "pres de", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "pres du", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "pres d", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "aupres de", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "aupres du", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "al lado de", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "al lado del", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "junto a", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "junto al", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "cerca de", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "cerca del", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "ao lado de", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "ao lado do", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "ao lado da", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "ao lado dos", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "ao lado das", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "perto de", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "perto do", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "perto da", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "junto ao", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "junto do", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "junto da", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "with", BMQ_W_REL, BMQ_REL_WITH }, { "along with", BMQ_W_REL, BMQ_REL_WITH }, { "together with", BMQ_W_REL, BMQ_REL_WITH },
    { "avec", BMQ_W_REL, BMQ_REL_WITH }, { "con", BMQ_W_REL, BMQ_REL_WITH }, { "com", BMQ_W_REL, BMQ_REL_WITH },
    { "in front of", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "devant", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "en face de", BMQ_W_REL, BMQ_REL_IN_FRONT },
    { "en face du", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "en face d", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "delante de", BMQ_W_REL, BMQ_REL_IN_FRONT },
    { "delante del", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "enfrente de", BMQ_W_REL, BMQ_REL_IN_FRONT },
    { "enfrente del", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "frente a", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "frente al", BMQ_W_REL, BMQ_REL_IN_FRONT },
    { "em frente a", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "em frente ao", BMQ_W_REL, BMQ_REL_IN_FRONT },
    { "em frente de", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "em frente do", BMQ_W_REL, BMQ_REL_IN_FRONT },
    { "em frente da", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "a frente de", BMQ_W_REL, BMQ_REL_IN_FRONT },
    { "a frente do", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "a frente da", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "diante de", BMQ_W_REL, BMQ_REL_IN_FRONT },
    { "diante do", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "diante da", BMQ_W_REL, BMQ_REL_IN_FRONT },
    { "behind", BMQ_W_REL, BMQ_REL_BEHIND }, { "in back of", BMQ_W_REL, BMQ_REL_BEHIND }, { "at the back of", BMQ_W_REL, BMQ_REL_BEHIND },
    { "derriere", BMQ_W_REL, BMQ_REL_BEHIND }, { "detras de", BMQ_W_REL, BMQ_REL_BEHIND }, { "detras del", BMQ_W_REL, BMQ_REL_BEHIND },
    { "tras", BMQ_W_REL, BMQ_REL_BEHIND }, { "atras de", BMQ_W_REL, BMQ_REL_BEHIND }, { "atras do", BMQ_W_REL, BMQ_REL_BEHIND },
    { "atras da", BMQ_W_REL, BMQ_REL_BEHIND }, { "por tras de", BMQ_W_REL, BMQ_REL_BEHIND }, { "por tras do", BMQ_W_REL, BMQ_REL_BEHIND },
    { "por tras da", BMQ_W_REL, BMQ_REL_BEHIND },
    { "left of", BMQ_W_REL, BMQ_REL_LEFT_OF }, { "to the left of", BMQ_W_REL, BMQ_REL_LEFT_OF },
    { "on the left of", BMQ_W_REL, BMQ_REL_LEFT_OF }, { "at the left of", BMQ_W_REL, BMQ_REL_LEFT_OF },
    { "a gauche de", BMQ_W_REL, BMQ_REL_LEFT_OF }, { "a gauche du", BMQ_W_REL, BMQ_REL_LEFT_OF }, { "a gauche d", BMQ_W_REL, BMQ_REL_LEFT_OF },
    { "a la izquierda de", BMQ_W_REL, BMQ_REL_LEFT_OF }, { "a la izquierda del", BMQ_W_REL, BMQ_REL_LEFT_OF },
    { "a esquerda de", BMQ_W_REL, BMQ_REL_LEFT_OF }, { "a esquerda do", BMQ_W_REL, BMQ_REL_LEFT_OF },
    { "a esquerda da", BMQ_W_REL, BMQ_REL_LEFT_OF },
    { "right of", BMQ_W_REL, BMQ_REL_RIGHT_OF }, { "to the right of", BMQ_W_REL, BMQ_REL_RIGHT_OF },
    { "on the right of", BMQ_W_REL, BMQ_REL_RIGHT_OF }, { "at the right of", BMQ_W_REL, BMQ_REL_RIGHT_OF },
    { "on the right side of", BMQ_W_REL, BMQ_REL_RIGHT_OF }, { "on the left side of", BMQ_W_REL, BMQ_REL_LEFT_OF },
    { "to the right side of", BMQ_W_REL, BMQ_REL_RIGHT_OF }, { "to the left side of", BMQ_W_REL, BMQ_REL_LEFT_OF },
    { "a droite de", BMQ_W_REL, BMQ_REL_RIGHT_OF }, { "a droite du", BMQ_W_REL, BMQ_REL_RIGHT_OF }, { "a droite d", BMQ_W_REL, BMQ_REL_RIGHT_OF },
    { "a la derecha de", BMQ_W_REL, BMQ_REL_RIGHT_OF }, { "a la derecha del", BMQ_W_REL, BMQ_REL_RIGHT_OF },
    { "a direita de", BMQ_W_REL, BMQ_REL_RIGHT_OF }, { "a direita do", BMQ_W_REL, BMQ_REL_RIGHT_OF },
    { "a direita da", BMQ_W_REL, BMQ_REL_RIGHT_OF },
    { "between", BMQ_W_REL, BMQ_REL_BETWEEN }, { "in between", BMQ_W_REL, BMQ_REL_BETWEEN }, { "entre", BMQ_W_REL, BMQ_REL_BETWEEN },
    { "around", BMQ_W_REL, BMQ_REL_AROUND }, { "all around", BMQ_W_REL, BMQ_REL_AROUND }, { "round", BMQ_W_REL, BMQ_REL_AROUND },
    { "surrounding", BMQ_W_REL, BMQ_REL_AROUND }, { "autour de", BMQ_W_REL, BMQ_REL_AROUND }, { "autour du", BMQ_W_REL, BMQ_REL_AROUND },
    { "autour des", BMQ_W_REL, BMQ_REL_AROUND }, { "autour d", BMQ_W_REL, BMQ_REL_AROUND }, { "alrededor de", BMQ_W_REL, BMQ_REL_AROUND },
    { "alrededor del", BMQ_W_REL, BMQ_REL_AROUND }, { "en torno a", BMQ_W_REL, BMQ_REL_AROUND }, { "en torno al", BMQ_W_REL, BMQ_REL_AROUND },
    { "em volta de", BMQ_W_REL, BMQ_REL_AROUND }, { "em volta do", BMQ_W_REL, BMQ_REL_AROUND }, { "em volta da", BMQ_W_REL, BMQ_REL_AROUND },
    { "ao redor de", BMQ_W_REL, BMQ_REL_AROUND }, { "ao redor do", BMQ_W_REL, BMQ_REL_AROUND }, { "ao redor da", BMQ_W_REL, BMQ_REL_AROUND },
    { "em torno de", BMQ_W_REL, BMQ_REL_AROUND }, { "em torno do", BMQ_W_REL, BMQ_REL_AROUND }, { "em torno da", BMQ_W_REL, BMQ_REL_AROUND },
    { "a volta de", BMQ_W_REL, BMQ_REL_AROUND }, { "a volta do", BMQ_W_REL, BMQ_REL_AROUND }, { "a volta da", BMQ_W_REL, BMQ_REL_AROUND },
    /* rooms (issue 26): relations people use in rooms */
    { "under", BMQ_W_REL, BMQ_REL_UNDER }, { "underneath", BMQ_W_REL, BMQ_REL_UNDER }, { "beneath", BMQ_W_REL, BMQ_REL_UNDER },
    { "below", BMQ_W_REL, BMQ_REL_UNDER }, { "sous", BMQ_W_REL, BMQ_REL_UNDER }, { "debajo de", BMQ_W_REL, BMQ_REL_UNDER },
    { "debajo del", BMQ_W_REL, BMQ_REL_UNDER }, { "embaixo de", BMQ_W_REL, BMQ_REL_UNDER }, { "embaixo do", BMQ_W_REL, BMQ_REL_UNDER },
    { "above", BMQ_W_REL, BMQ_REL_ABOVE }, { "over", BMQ_W_REL, BMQ_REL_ABOVE }, { "hanging above", BMQ_W_REL, BMQ_REL_ABOVE },
    { "hanging over", BMQ_W_REL, BMQ_REL_ABOVE }, { "hung above", BMQ_W_REL, BMQ_REL_ABOVE }, { "hung over", BMQ_W_REL, BMQ_REL_ABOVE },
    { "mounted above", BMQ_W_REL, BMQ_REL_ABOVE }, { "on the wall above", BMQ_W_REL, BMQ_REL_ABOVE },
    { "on the wall over", BMQ_W_REL, BMQ_REL_ABOVE }, { "encima de la", BMQ_W_REL, BMQ_REL_ABOVE },
    { "in", BMQ_W_REL, BMQ_REL_INSIDE }, { "inside", BMQ_W_REL, BMQ_REL_INSIDE }, { "inside of", BMQ_W_REL, BMQ_REL_INSIDE },
    { "within", BMQ_W_REL, BMQ_REL_INSIDE }, { "into", BMQ_W_REL, BMQ_REL_INSIDE }, { "dans", BMQ_W_REL, BMQ_REL_INSIDE },
    { "dentro de", BMQ_W_REL, BMQ_REL_INSIDE }, { "dentro del", BMQ_W_REL, BMQ_REL_INSIDE }, { "stored in", BMQ_W_REL, BMQ_REL_INSIDE },
    { "facing", BMQ_W_REL, BMQ_REL_FACING }, { "opposite", BMQ_W_REL, BMQ_REL_FACING }, { "opposite to", BMQ_W_REL, BMQ_REL_FACING },
    { "opposite of", BMQ_W_REL, BMQ_REL_FACING }, { "across from", BMQ_W_REL, BMQ_REL_FACING }, { "facing towards", BMQ_W_REL, BMQ_REL_FACING },
    { "facing toward", BMQ_W_REL, BMQ_REL_FACING }, { "turned towards", BMQ_W_REL, BMQ_REL_FACING }, { "looking at", BMQ_W_REL, BMQ_REL_FACING },
    { "pointed at", BMQ_W_REL, BMQ_REL_FACING }, { "face a", BMQ_W_REL, BMQ_REL_FACING },
    { "faces", BMQ_W_REL, BMQ_REL_FACING }, { "face", BMQ_W_REL, BMQ_REL_FACING },
    { "is facing", BMQ_W_REL, BMQ_REL_FACING }, { "sits opposite", BMQ_W_REL, BMQ_REL_FACING },
    { "on both sides of", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "on either side of", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "either side of", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "both sides of", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "flanking", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "at both sides of", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "on the sides of", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "at the side of", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "on the side of", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "to the side of", BMQ_W_REL, BMQ_REL_NEXT_TO }, { "nearby", BMQ_W_REL, BMQ_REL_NEXT_TO },
    { "on each side of", BMQ_W_REL, BMQ_REL_EACH_SIDE }, { "on each", BMQ_W_REL, BMQ_REL_ON_EACH },
    { "on each side", BMQ_W_REL, BMQ_REL_EACH_SIDE }, { "at each side", BMQ_W_REL, BMQ_REL_EACH_SIDE },
    { "on either side", BMQ_W_REL, BMQ_REL_EACH_SIDE }, { "on both sides", BMQ_W_REL, BMQ_REL_EACH_SIDE },
    { "on each one", BMQ_W_REL, BMQ_REL_ON_EACH }, { "on each of them", BMQ_W_REL, BMQ_REL_ON_EACH },
    { "on top of each", BMQ_W_REL, BMQ_REL_ON_EACH }, { "on both", BMQ_W_REL, BMQ_REL_ON_EACH }, { "on each of", BMQ_W_REL, BMQ_REL_ON_EACH }, { "at each side of", BMQ_W_REL, BMQ_REL_EACH_SIDE },
    { "on each side of the", BMQ_W_REL, BMQ_REL_EACH_SIDE },
    { "on the long side of", BMQ_W_REL, BMQ_REL_LONG_SIDE }, { "on the long sides of", BMQ_W_REL, BMQ_REL_LONG_SIDE },
    { "along the long side of", BMQ_W_REL, BMQ_REL_LONG_SIDE }, { "along the long sides of", BMQ_W_REL, BMQ_REL_LONG_SIDE },
    { "at the long side of", BMQ_W_REL, BMQ_REL_LONG_SIDE }, { "at the long sides of", BMQ_W_REL, BMQ_REL_LONG_SIDE },
    { "along the sides of", BMQ_W_REL, BMQ_REL_LONG_SIDE }, { "on the long edge of", BMQ_W_REL, BMQ_REL_LONG_SIDE },
    { "on the short side of", BMQ_W_REL, BMQ_REL_SHORT_SIDE }, { "on the short sides of", BMQ_W_REL, BMQ_REL_SHORT_SIDE },
    { "at the short side of", BMQ_W_REL, BMQ_REL_SHORT_SIDE }, { "at the short sides of", BMQ_W_REL, BMQ_REL_SHORT_SIDE },
    { "at the end of", BMQ_W_REL, BMQ_REL_SHORT_SIDE }, { "at the ends of", BMQ_W_REL, BMQ_REL_SHORT_SIDE },
    { "at each end of", BMQ_W_REL, BMQ_REL_SHORT_SIDE }, { "at both ends of", BMQ_W_REL, BMQ_REL_SHORT_SIDE },
    { "at either end of", BMQ_W_REL, BMQ_REL_SHORT_SIDE }, { "at the head of", BMQ_W_REL, BMQ_REL_SHORT_SIDE },
    { "at the foot of", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "at the end of the", BMQ_W_REL, BMQ_REL_SHORT_SIDE },
    { "on each long side", BMQ_W_REL, BMQ_REL_LONG_SIDE }, { "on each long side of", BMQ_W_REL, BMQ_REL_LONG_SIDE },
    { "on both long sides", BMQ_W_REL, BMQ_REL_LONG_SIDE }, { "along each long side", BMQ_W_REL, BMQ_REL_LONG_SIDE },
    { "along both long sides", BMQ_W_REL, BMQ_REL_LONG_SIDE },
    { "at each end", BMQ_W_REL, BMQ_REL_SHORT_SIDE }, { "at both ends", BMQ_W_REL, BMQ_REL_SHORT_SIDE },
    { "at either end", BMQ_W_REL, BMQ_REL_SHORT_SIDE }, { "on each short side", BMQ_W_REL, BMQ_REL_SHORT_SIDE },
    /* where in the room */
    { "against the wall", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "against a wall", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "against the walls", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "along the wall", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "along a wall", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "along the walls", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "by the wall", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "pushed against the wall", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "against one wall", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "along one wall", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "centered against the wall", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "centred against the wall", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "in the centre of the wall", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "in the center of the wall", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "in the middle of the wall", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "along two walls", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "lined up against the wall", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "lined up along the wall", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "against the back wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 8 }, { "along the back wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 8 },
    { "against the far wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 8 }, { "along the far wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 8 },
    { "against the left wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 16 }, { "along the left wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 16 },
    { "against the right wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 24 }, { "along the right wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 24 },
    { "against the front wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 32 }, { "along the front wall", BMQ_W_SPOT, BMQ_SPOT_WALL + 32 },
    { "contre le mur", BMQ_W_SPOT, BMQ_SPOT_WALL }, { "contra la pared", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "contra a parede", BMQ_W_SPOT, BMQ_SPOT_WALL },
    { "in the corner", BMQ_W_SPOT, BMQ_SPOT_CORNER }, { "in a corner", BMQ_W_SPOT, BMQ_SPOT_CORNER },
    { "in the corners", BMQ_W_SPOT, BMQ_SPOT_CORNER }, { "in each corner", BMQ_W_SPOT, BMQ_SPOT_CORNER },
    { "in one corner", BMQ_W_SPOT, BMQ_SPOT_CORNER }, { "in the far corner", BMQ_W_SPOT, BMQ_SPOT_CORNER },
    { "in the corner of the room", BMQ_W_SPOT, BMQ_SPOT_CORNER }, { "in a corner of the room", BMQ_W_SPOT, BMQ_SPOT_CORNER },
    { "tucked in the corner", BMQ_W_SPOT, BMQ_SPOT_CORNER }, { "into the corner", BMQ_W_SPOT, BMQ_SPOT_CORNER },
    { "dans le coin", BMQ_W_SPOT, BMQ_SPOT_CORNER }, { "en la esquina", BMQ_W_SPOT, BMQ_SPOT_CORNER }, { "no canto", BMQ_W_SPOT, BMQ_SPOT_CORNER },
    { "on the same wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL }, { "on that wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL },
    { "on the wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL }, { "on a wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL }, { "on the walls", BMQ_W_SPOT, BMQ_SPOT_ONWALL },
    { "on one wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL }, { "hanging on the wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL },
    { "hung on the wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL }, { "mounted on the wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL },
    { "wall mounted", BMQ_W_SPOT, BMQ_SPOT_ONWALL }, { "on the back wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL + 8 },
    { "on the far wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL + 8 }, { "on the left wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL + 16 },
    { "on the right wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL + 24 }, { "on the front wall", BMQ_W_SPOT, BMQ_SPOT_ONWALL + 32 },
    { "sur le mur", BMQ_W_SPOT, BMQ_SPOT_ONWALL }, { "en la pared", BMQ_W_SPOT, BMQ_SPOT_ONWALL }, { "na parede", BMQ_W_SPOT, BMQ_SPOT_ONWALL },
    { "in the middle", BMQ_W_SPOT, BMQ_SPOT_CENTER }, { "in the center", BMQ_W_SPOT, BMQ_SPOT_CENTER },
    { "in the centre", BMQ_W_SPOT, BMQ_SPOT_CENTER }, { "in the middle of the room", BMQ_W_SPOT, BMQ_SPOT_CENTER },
    { "in the center of the room", BMQ_W_SPOT, BMQ_SPOT_CENTER }, { "in the centre of the room", BMQ_W_SPOT, BMQ_SPOT_CENTER },
    { "centered", BMQ_W_SPOT, BMQ_SPOT_CENTER }, { "centred", BMQ_W_SPOT, BMQ_SPOT_CENTER },
    { "centered in the room", BMQ_W_SPOT, BMQ_SPOT_CENTER }, { "centred in the room", BMQ_W_SPOT, BMQ_SPOT_CENTER },
    { "in the middle of the floor", BMQ_W_SPOT, BMQ_SPOT_CENTER }, { "the centre of the room", BMQ_W_SPOT, BMQ_SPOT_CENTER },
    { "the center of the room", BMQ_W_SPOT, BMQ_SPOT_CENTER }, { "the centerpiece of the room", BMQ_W_SPOT, BMQ_SPOT_CENTER },
    { "the middle of the room", BMQ_W_SPOT, BMQ_SPOT_CENTER }, { "au milieu", BMQ_W_SPOT, BMQ_SPOT_CENTER },
    { "en el centro", BMQ_W_SPOT, BMQ_SPOT_CENTER }, { "no centro", BMQ_W_SPOT, BMQ_SPOT_CENTER },
    /* rooms */
    { "room", BMQ_W_ROOM, BMQ_ROOM_GENERIC }, { "rooms", BMQ_W_ROOM, BMQ_ROOM_GENERIC }, { "space", BMQ_W_ROOM, BMQ_ROOM_GENERIC },
    { "interior", BMQ_W_ROOM, BMQ_ROOM_GENERIC }, { "apartment", BMQ_W_ROOM, BMQ_ROOM_STUDIO },
    { "studio", BMQ_W_ROOM, BMQ_ROOM_STUDIO }, { "studio apartment", BMQ_W_ROOM, BMQ_ROOM_STUDIO }, { "loft", BMQ_W_ROOM, BMQ_ROOM_STUDIO },
    { "bedroom", BMQ_W_ROOM, BMQ_ROOM_BEDROOM }, { "master bedroom", BMQ_W_ROOM, BMQ_ROOM_BEDROOM }, { "guest bedroom", BMQ_W_ROOM, BMQ_ROOM_BEDROOM },
    { "guest room", BMQ_W_ROOM, BMQ_ROOM_BEDROOM }, { "bed room", BMQ_W_ROOM, BMQ_ROOM_BEDROOM }, { "dorm room", BMQ_W_ROOM, BMQ_ROOM_BEDROOM },
    { "dorm", BMQ_W_ROOM, BMQ_ROOM_BEDROOM }, { "hotel room", BMQ_W_ROOM, BMQ_ROOM_BEDROOM }, { "chambre", BMQ_W_ROOM, BMQ_ROOM_BEDROOM },
    { "dormitorio", BMQ_W_ROOM, BMQ_ROOM_BEDROOM }, { "quarto", BMQ_W_ROOM, BMQ_ROOM_BEDROOM }, { "schlafzimmer", BMQ_W_ROOM, BMQ_ROOM_BEDROOM },
    { "living room", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "lounge", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "family room", BMQ_W_ROOM, BMQ_ROOM_LIVING },
    { "flat", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "apartment", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "bedsit", BMQ_W_ROOM, BMQ_ROOM_BEDROOM },
    { "sitting room", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "den", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "tv room", BMQ_W_ROOM, BMQ_ROOM_LIVING },
    { "salon", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "sala", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "sala de estar", BMQ_W_ROOM, BMQ_ROOM_LIVING },
    { "wohnzimmer", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "media room", BMQ_W_ROOM, BMQ_ROOM_LIVING }, { "reading room", BMQ_W_ROOM, BMQ_ROOM_LIVING },
    { "kitchen", BMQ_W_ROOM, BMQ_ROOM_KITCHEN }, { "kitchenette", BMQ_W_ROOM, BMQ_ROOM_KITCHEN }, { "cuisine", BMQ_W_ROOM, BMQ_ROOM_KITCHEN },
    { "cocina", BMQ_W_ROOM, BMQ_ROOM_KITCHEN }, { "cozinha", BMQ_W_ROOM, BMQ_ROOM_KITCHEN }, { "kuche", BMQ_W_ROOM, BMQ_ROOM_KITCHEN },
    { "office", BMQ_W_ROOM, BMQ_ROOM_OFFICE }, { "home office", BMQ_W_ROOM, BMQ_ROOM_OFFICE }, { "study", BMQ_W_ROOM, BMQ_ROOM_OFFICE },
    { "workspace", BMQ_W_ROOM, BMQ_ROOM_OFFICE }, { "study room", BMQ_W_ROOM, BMQ_ROOM_OFFICE }, { "library", BMQ_W_ROOM, BMQ_ROOM_OFFICE },
    { "workshop", BMQ_W_ROOM, BMQ_ROOM_OFFICE }, { "oficina", BMQ_W_ROOM, BMQ_ROOM_OFFICE }, { "escritorio casero", BMQ_W_ROOM, BMQ_ROOM_OFFICE },
    { "dining room", BMQ_W_ROOM, BMQ_ROOM_DINING }, { "dining area", BMQ_W_ROOM, BMQ_ROOM_DINING }, { "comedor", BMQ_W_ROOM, BMQ_ROOM_DINING },
    { "salle a manger", BMQ_W_ROOM, BMQ_ROOM_DINING }, { "breakfast nook", BMQ_W_ROOM, BMQ_ROOM_DINING },
    { "bathroom", BMQ_W_ROOM, BMQ_ROOM_BATHROOM }, { "washroom", BMQ_W_ROOM, BMQ_ROOM_BATHROOM }, { "restroom", BMQ_W_ROOM, BMQ_ROOM_BATHROOM },
    { "powder room", BMQ_W_ROOM, BMQ_ROOM_BATHROOM }, { "salle de bain", BMQ_W_ROOM, BMQ_ROOM_BATHROOM },
    { "salle de bains", BMQ_W_ROOM, BMQ_ROOM_BATHROOM }, { "bano", BMQ_W_ROOM, BMQ_ROOM_BATHROOM }, { "banheiro", BMQ_W_ROOM, BMQ_ROOM_BATHROOM },
    { "kids room", BMQ_W_ROOM, BMQ_ROOM_KIDS }, { "kid s room", BMQ_W_ROOM, BMQ_ROOM_KIDS }, { "children s room", BMQ_W_ROOM, BMQ_ROOM_KIDS },
    { "child s room", BMQ_W_ROOM, BMQ_ROOM_KIDS }, { "nursery", BMQ_W_ROOM, BMQ_ROOM_KIDS }, { "playroom", BMQ_W_ROOM, BMQ_ROOM_KIDS },
    { "play room", BMQ_W_ROOM, BMQ_ROOM_KIDS }, { "baby room", BMQ_W_ROOM, BMQ_ROOM_KIDS }, { "kids bedroom", BMQ_W_ROOM, BMQ_ROOM_KIDS },
    { "laundry room", BMQ_W_ROOM, BMQ_ROOM_LAUNDRY }, { "utility room", BMQ_W_ROOM, BMQ_ROOM_LAUNDRY }, { "laundry", BMQ_W_ROOM, BMQ_ROOM_LAUNDRY },
    { "hallway", BMQ_W_ROOM, BMQ_ROOM_HALL }, { "hall", BMQ_W_ROOM, BMQ_ROOM_HALL }, { "entryway", BMQ_W_ROOM, BMQ_ROOM_HALL },
    { "entrance", BMQ_W_ROOM, BMQ_ROOM_HALL }, { "foyer", BMQ_W_ROOM, BMQ_ROOM_HALL }, { "corridor", BMQ_W_ROOM, BMQ_ROOM_HALL },
    { "classroom", BMQ_W_ROOM, BMQ_ROOM_OFFICE }, { "class room", BMQ_W_ROOM, BMQ_ROOM_OFFICE },
    { "gym", BMQ_W_ROOM, BMQ_ROOM_GYM }, { "home gym", BMQ_W_ROOM, BMQ_ROOM_GYM }, { "music room", BMQ_W_ROOM, BMQ_ROOM_GYM },
    /* not wanted */
    { "no", BMQ_W_NEG, 0 }, { "without", BMQ_W_NEG, 0 }, { "not", BMQ_W_NEG, 0 }, { "never", BMQ_W_NEG, 0 },
    { "with no", BMQ_W_NEG, 0 }, { "but no", BMQ_W_NEG, 0 }, { "don t want", BMQ_W_NEG, 0 }, { "do not want", BMQ_W_NEG, 0 },
    { "no need for", BMQ_W_NEG, 0 }, { "nor", BMQ_W_NEG, 0 }, { "sans", BMQ_W_NEG, 0 }, { "sin", BMQ_W_NEG, 0 },
    { "sem", BMQ_W_NEG, 0 }, { "there is no", BMQ_W_NEG, 0 }, { "there are no", BMQ_W_NEG, 0 }, { "leave out", BMQ_W_NEG, 0 },
    { "skip the", BMQ_W_NEG, 0 }, { "instead of", BMQ_W_NEG, 0 },
    /* words of a room description that carry nothing to build */
    { "furnished", BMQ_W_FILLER, 0 },
    { "contains", BMQ_W_FILLER, 0 }, { "contain", BMQ_W_FILLER, 0 }, { "has", BMQ_W_FILLER, 0 }, { "have", BMQ_W_FILLER, 0 },
    { "is", BMQ_W_FILLER, 0 }, { "are", BMQ_W_FILLER, 0 }, { "stands", BMQ_W_FILLER, 0 }, { "stand", BMQ_W_FILLER, 0 },
    { "sits", BMQ_W_FILLER, 0 }, { "sit", BMQ_W_FILLER, 0 }, { "hangs", BMQ_W_FILLER, 0 }, { "hang", BMQ_W_FILLER, 0 },
    { "placed", BMQ_W_FILLER, 0 }, { "positioned", BMQ_W_FILLER, 0 }, { "located", BMQ_W_FILLER, 0 }, { "set", BMQ_W_FILLER, 0 },
    { "rests", BMQ_W_FILLER, 0 }, { "lies", BMQ_W_FILLER, 0 }, { "hanging", BMQ_W_FILLER, 0 }, { "standing", BMQ_W_FILLER, 0 },
    { "sitting", BMQ_W_FILLER, 0 }, { "resting", BMQ_W_FILLER, 0 }, { "lying", BMQ_W_FILLER, 0 }, { "furnish", BMQ_W_FILLER, 0 },
    { "design", BMQ_W_FILLER, 0 }, { "layout", BMQ_W_FILLER, 0 }, { "features", BMQ_W_FILLER, 0 }, { "includes", BMQ_W_FILLER, 0 },
    { "include", BMQ_W_FILLER, 0 }, { "goes", BMQ_W_FILLER, 0 }, { "go", BMQ_W_FILLER, 0 }, { "lies", BMQ_W_FILLER, 0 },
    { "lie", BMQ_W_FILLER, 0 }, { "measures", BMQ_W_FILLER, 0 }, { "measure", BMQ_W_FILLER, 0 }, { "measuring", BMQ_W_FILLER, 0 },
    { "is located", BMQ_W_FILLER, 0 }, { "can be found", BMQ_W_FILLER, 0 }, { "stood", BMQ_W_FILLER, 0 }, { "should", BMQ_W_FILLER, 0 }, { "be", BMQ_W_FILLER, 0 }, { "which", BMQ_W_FILLER, 0 },
    { "where", BMQ_W_FILLER, 0 }, { "while", BMQ_W_FILLER, 0 },
    { "and there is", BMQ_W_CONNECT, 0 }, { "or", BMQ_W_CONNECT, 0 },
    { "my", BMQ_W_DEF, 0 }, { "our", BMQ_W_DEF, 0 }, { "your", BMQ_W_DEF, 0 },
    /* rooms as people describe them (issue 26): words that change nothing the offline planner can show
     * (a mood, or light: a composed room has no lamp light of its own) are accepted quietly */
    { "cozy", BMQ_W_FILLER, 0 }, { "cosy", BMQ_W_FILLER, 0 }, { "comfy", BMQ_W_FILLER, 0 }, { "snug", BMQ_W_FILLER, 0 },
    { "warm", BMQ_W_FILLER, 0 }, { "bright", BMQ_W_FILLER, 0 }, { "airy", BMQ_W_FILLER, 0 }, { "sunny", BMQ_W_FILLER, 0 },
    { "sunlit", BMQ_W_FILLER, 0 }, { "well lit", BMQ_W_FILLER, 0 }, { "light filled", BMQ_W_FILLER, 0 },
    { "inviting", BMQ_W_FILLER, 0 }, { "serene", BMQ_W_FILLER, 0 }, { "cheerful", BMQ_W_FILLER, 0 },
    { "peaceful", BMQ_W_FILLER, 0 }, { "calm", BMQ_W_FILLER, 0 }, { "relaxing", BMQ_W_FILLER, 0 },
    { "welcoming", BMQ_W_FILLER, 0 }, { "comfortable", BMQ_W_FILLER, 0 }, { "homey", BMQ_W_FILLER, 0 },
    { "homely", BMQ_W_FILLER, 0 }, { "lovely", BMQ_W_FILLER, 0 }, { "nice", BMQ_W_FILLER, 0 }, { "beautiful", BMQ_W_FILLER, 0 },
    { "pleasant", BMQ_W_FILLER, 0 }, { "charming", BMQ_W_FILLER, 0 }, { "elegant", BMQ_W_FILLER, 0 },
    { "stylish", BMQ_W_FILLER, 0 }, { "tidy", BMQ_W_FILLER, 0 }, { "neat", BMQ_W_FILLER, 0 }, { "clean", BMQ_W_FILLER, 0 },
    { "simple", BMQ_W_FILLER, 0 }, { "functional", BMQ_W_FILLER, 0 }, { "practical", BMQ_W_FILLER, 0 },
    { "quiet", BMQ_W_FILLER, 0 }, { "classic", BMQ_W_FILLER, 0 }, { "formal", BMQ_W_FILLER, 0 }, { "casual", BMQ_W_FILLER, 0 }, { "open", BMQ_W_FILLER, 0 },
    { "open plan", BMQ_W_FILLER, 0 }, { "contemporary", BMQ_W_FILLER, 0 }, { "eclectic", BMQ_W_FILLER, 0 },
    { "matching", BMQ_W_FILLER, 0 }, { "twin", BMQ_W_FILLER, 0 }, { "identical", BMQ_W_FILLER, 0 }, { "built in", BMQ_W_FILLER, 0 }, { "freestanding", BMQ_W_FILLER, 0 },
    { "free standing", BMQ_W_FILLER, 0 }, { "rectangular", BMQ_W_FILLER, 0 }, { "square", BMQ_W_FILLER, 0 },
    { "long", BMQ_W_FILLER, 0 }, { "circular", BMQ_W_FILLER, 0 }, { "oval", BMQ_W_FILLER, 0 },
    { "in an l shape", BMQ_W_FILLER, 0 }, { "in a u shape", BMQ_W_FILLER, 0 }, { "style", BMQ_W_FILLER, 0 },
    { "styled", BMQ_W_FILLER, 0 }, { "themed", BMQ_W_FILLER, 0 }, { "inspired", BMQ_W_FILLER, 0 }, { "decor", BMQ_W_FILLER, 0 },
    { "feel", BMQ_W_FILLER, 0 }, { "feels", BMQ_W_FILLER, 0 }, { "it feels", BMQ_W_FILLER, 0 },
    { "it looks", BMQ_W_FILLER, 0 }, { "looks", BMQ_W_FILLER, 0 }, { "vibe", BMQ_W_FILLER, 0 }, { "atmosphere", BMQ_W_FILLER, 0 },
    { "hi", BMQ_W_FILLER, 0 }, { "hello", BMQ_W_FILLER, 0 }, { "hey", BMQ_W_FILLER, 0 }, { "thanks", BMQ_W_FILLER, 0 },
    { "thank you", BMQ_W_FILLER, 0 }, { "nothing else", BMQ_W_FILLER, 0 },
    { "infront of", BMQ_W_REL, BMQ_REL_IN_FRONT }, { "livingroom", BMQ_W_ROOM, BMQ_ROOM_LIVING },
    { "diningroom", BMQ_W_ROOM, BMQ_ROOM_DINING },
    /* the layout keeps walkways and the middle of a room free already */
    { "keep the floor in the middle free", BMQ_W_FILLER, 0 }, { "keep the middle free", BMQ_W_FILLER, 0 },
    { "keep the middle of the room free", BMQ_W_FILLER, 0 }, { "keep the center free", BMQ_W_FILLER, 0 },
    { "keep the centre free", BMQ_W_FILLER, 0 }, { "leave the middle free", BMQ_W_FILLER, 0 },
    /* style words: a look (bmq_material) on the object they stand right before ("a rustic table": weathered wood);
     * elsewhere ("a rustic bedroom", "the style is rustic") accepted quietly (bmq_material_style) */
    { "rustic", BMQ_W_MATERIAL, 20 }, { "farmhouse", BMQ_W_MATERIAL, 20 }, { "industrial", BMQ_W_MATERIAL, 21 },
    { "scandinavian", BMQ_W_MATERIAL, 22 }, { "scandi", BMQ_W_MATERIAL, 22 }, { "nordic", BMQ_W_MATERIAL, 22 },
    { "mid century", BMQ_W_MATERIAL, 23 }, { "mid century modern", BMQ_W_MATERIAL, 23 }, { "midcentury", BMQ_W_MATERIAL, 23 },
    { "retro", BMQ_W_MATERIAL, 23 }, { "vintage", BMQ_W_MATERIAL, 24 }, { "antique", BMQ_W_MATERIAL, 24 },
    { "traditional", BMQ_W_MATERIAL, 24 }, { "bohemian", BMQ_W_MATERIAL, 25 },
    { "boho", BMQ_W_MATERIAL, 25 }, { "japanese", BMQ_W_MATERIAL, 26 }, { "japanese inspired", BMQ_W_MATERIAL, 26 },
    { "zen", BMQ_W_MATERIAL, 26 }, { "japandi", BMQ_W_MATERIAL, 26 }, { "modern", BMQ_W_MATERIAL, 27 },
    { "sleek", BMQ_W_MATERIAL, 27 }, { "minimalist", BMQ_W_MATERIAL, 28 }, { "minimal", BMQ_W_MATERIAL, 28 },
    { "minimalistic", BMQ_W_MATERIAL, 28 },
    /* materials */
    { "wooden", BMQ_W_MATERIAL, 0 },
    { "wood", BMQ_W_MATERIAL, 0 },
    { "timber", BMQ_W_MATERIAL, 0 },
    { "oak", BMQ_W_MATERIAL, 1 },
    { "walnut", BMQ_W_MATERIAL, 2 },
    { "pine", BMQ_W_MATERIAL, 3 },
    { "birch", BMQ_W_MATERIAL, 3 },
    { "mahogany", BMQ_W_MATERIAL, 4 },
    { "teak", BMQ_W_MATERIAL, 2 },
    { "cherry wood", BMQ_W_MATERIAL, 4 },
    { "bamboo", BMQ_W_MATERIAL, 3 },
    { "metal", BMQ_W_MATERIAL, 5 },
    { "metallic", BMQ_W_MATERIAL, 5 },
    { "steel", BMQ_W_MATERIAL, 5 },
    { "stainless steel", BMQ_W_MATERIAL, 5 },
    { "iron", BMQ_W_MATERIAL, 6 },
    { "wrought iron", BMQ_W_MATERIAL, 6 },
    { "chrome", BMQ_W_MATERIAL, 7 },
    { "aluminium", BMQ_W_MATERIAL, 5 },
    { "aluminum", BMQ_W_MATERIAL, 5 },
    { "brass", BMQ_W_MATERIAL, 8 },
    { "copper", BMQ_W_MATERIAL, 9 },
    { "glass", BMQ_W_MATERIAL, 10 },
    { "leather", BMQ_W_MATERIAL, 11 },
    { "fabric", BMQ_W_MATERIAL, 12 },
    { "upholstered", BMQ_W_MATERIAL, 12 },
    { "velvet", BMQ_W_MATERIAL, 13 },
    { "linen", BMQ_W_MATERIAL, 14 },
    { "cotton", BMQ_W_MATERIAL, 14 },
    { "wool", BMQ_W_MATERIAL, 14 },
    { "marble", BMQ_W_MATERIAL, 15 },
    { "stone", BMQ_W_MATERIAL, 16 },
    { "concrete", BMQ_W_MATERIAL, 16 },
    { "plastic", BMQ_W_MATERIAL, 17 },
    { "ceramic", BMQ_W_MATERIAL, 18 },
    { "porcelain", BMQ_W_MATERIAL, 18 },
    { "wicker", BMQ_W_MATERIAL, 19 },
    { "rattan", BMQ_W_MATERIAL, 19 },
    /* arrangements */
    { "in a row", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "in a line", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "in line", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "in rows", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "in a straight line", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "lined up", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "side by side", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "a row of", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "a line of", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "en ligne", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "en rang", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "en rangee", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "alignes", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "alignees", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "une rangee de", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "une rangee d", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "une ligne de", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "en fila", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "en linea", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "en hilera", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "alineados", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "alineadas", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "una fila de", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "una hilera de", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "em fila", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "em linha", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "enfileirados", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "enfileiradas", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "alinhados", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "alinhadas", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "uma fila de", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW }, { "uma fileira de", BMQ_W_ARRANGE, BMQ_ARRANGE_ROW },
    { "in a circle", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE }, { "in a ring", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE },
    { "in circle", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE }, { "a circle of", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE },
    { "a ring of", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE }, { "en cercle", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE },
    { "en rond", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE }, { "un cercle de", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE },
    { "un cercle d", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE }, { "en circulo", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE },
    { "en un circulo", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE }, { "en corro", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE },
    { "un circulo de", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE }, { "em circulo", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE },
    { "em um circulo", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE }, { "num circulo", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE },
    { "em roda", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE }, { "um circulo de", BMQ_W_ARRANGE, BMQ_ARRANGE_CIRCLE },
    /* counts that are not numbers */
    { "a pair of", BMQ_W_QUANT, 2 }, { "pair of", BMQ_W_QUANT, 2 }, { "a couple of", BMQ_W_QUANT, 2 }, { "couple of", BMQ_W_QUANT, 2 },
    { "une paire de", BMQ_W_QUANT, 2 }, { "une paire d", BMQ_W_QUANT, 2 }, { "un par de", BMQ_W_QUANT, 2 }, { "um par de", BMQ_W_QUANT, 2 },
    { "a few", BMQ_W_QUANT, 3 }, { "few", BMQ_W_QUANT, 3 }, { "some", BMQ_W_QUANT, 3 }, { "several", BMQ_W_QUANT, 3 },
    { "quelques", BMQ_W_QUANT, 3 }, { "plusieurs", BMQ_W_QUANT, 3 }, { "algunos", BMQ_W_QUANT, 3 }, { "algunas", BMQ_W_QUANT, 3 },
    { "varios", BMQ_W_QUANT, 3 }, { "varias", BMQ_W_QUANT, 3 }, { "unos cuantos", BMQ_W_QUANT, 3 }, { "alguns", BMQ_W_QUANT, 3 },
    { "algumas", BMQ_W_QUANT, 3 }, { "many", BMQ_W_QUANT, 6 }, { "lots of", BMQ_W_QUANT, 6 }, { "a lot of", BMQ_W_QUANT, 6 },
    { "plenty of", BMQ_W_QUANT, 6 }, { "beaucoup de", BMQ_W_QUANT, 6 }, { "beaucoup d", BMQ_W_QUANT, 6 }, { "muchos", BMQ_W_QUANT, 6 },
    { "muchas", BMQ_W_QUANT, 6 }, { "muitos", BMQ_W_QUANT, 6 }, { "muitas", BMQ_W_QUANT, 6 },
    /* articles */
    { "a", BMQ_W_INDEF, 1 }, { "an", BMQ_W_INDEF, 1 }, { "another", BMQ_W_INDEF, 1 }, { "un", BMQ_W_INDEF, 1 },
    { "une", BMQ_W_INDEF, 1 }, { "des", BMQ_W_INDEF, 0 }, { "uno", BMQ_W_INDEF, 1 }, { "una", BMQ_W_INDEF, 1 },
    { "unos", BMQ_W_INDEF, 0 }, { "unas", BMQ_W_INDEF, 0 }, { "um", BMQ_W_INDEF, 1 }, { "uma", BMQ_W_INDEF, 1 },
    { "uns", BMQ_W_INDEF, 0 }, { "umas", BMQ_W_INDEF, 0 }, { "un autre", BMQ_W_INDEF, 1 }, { "une autre", BMQ_W_INDEF, 1 },
    { "otro", BMQ_W_INDEF, 1 }, { "otra", BMQ_W_INDEF, 1 }, { "outro", BMQ_W_INDEF, 1 }, { "outra", BMQ_W_INDEF, 1 },
    { "the", BMQ_W_DEF, 0 }, { "le", BMQ_W_DEF, 0 }, { "la", BMQ_W_DEF, 0 }, { "les", BMQ_W_DEF, 0 }, { "l", BMQ_W_DEF, 0 },
    { "el", BMQ_W_DEF, 0 }, { "los", BMQ_W_DEF, 0 }, { "las", BMQ_W_DEF, 0 }, { "o", BMQ_W_DEF, 0 }, { "os", BMQ_W_DEF, 0 },
    { "as", BMQ_W_DEF, 0 }, { "this", BMQ_W_DEF, 0 }, { "that", BMQ_W_DEF, 0 }, { "these", BMQ_W_DEF, 0 },
    { "those", BMQ_W_DEF, 0 }, { "its", BMQ_W_DEF, 0 }, { "their", BMQ_W_DEF, 0 }, { "ce", BMQ_W_DEF, 0 }, { "cet", BMQ_W_DEF, 0 },
    { "cette", BMQ_W_DEF, 0 }, { "ces", BMQ_W_DEF, 0 }, { "du", BMQ_W_DEF, 0 }, { "au", BMQ_W_DEF, 0 }, { "aux", BMQ_W_DEF, 0 },
    { "este", BMQ_W_DEF, 0 }, { "esta", BMQ_W_DEF, 0 }, { "estos", BMQ_W_DEF, 0 }, { "estas", BMQ_W_DEF, 0 },
    { "ese", BMQ_W_DEF, 0 }, { "esa", BMQ_W_DEF, 0 }, { "esse", BMQ_W_DEF, 0 }, { "essa", BMQ_W_DEF, 0 }, { "al", BMQ_W_DEF, 0 },
    { "del", BMQ_W_DEF, 0 }, { "do", BMQ_W_DEF, 0 }, { "da", BMQ_W_DEF, 0 }, { "das", BMQ_W_DEF, 0 }, { "ao", BMQ_W_DEF, 0 },
    { "each", BMQ_W_DEF, 0 },
    /* German and Italian articles: the recipes know those words too */
    { "ein", BMQ_W_INDEF, 1 }, { "eine", BMQ_W_INDEF, 1 }, { "einen", BMQ_W_INDEF, 1 }, { "einem", BMQ_W_INDEF, 1 },
    { "einer", BMQ_W_INDEF, 1 }, { "der", BMQ_W_DEF, 0 }, { "die", BMQ_W_DEF, 0 }, { "das", BMQ_W_DEF, 0 },
    { "den", BMQ_W_DEF, 0 }, { "dem", BMQ_W_DEF, 0 }, { "il", BMQ_W_DEF, 0 }, { "lo", BMQ_W_DEF, 0 },
    { "gli", BMQ_W_DEF, 0 }, { "und", BMQ_W_CONNECT, 0 }, { "mit", BMQ_W_REL, BMQ_REL_WITH }, { "bitte", BMQ_W_FILLER, 0 },
    { "of", BMQ_W_REL, BMQ_REL_OF }, { "full of", BMQ_W_REL, BMQ_REL_OF }, { "filled with", BMQ_W_REL, BMQ_REL_OF },
    { "flanked by", BMQ_W_REL, BMQ_REL_FLANKED }, { "flanked on both sides by", BMQ_W_REL, BMQ_REL_FLANKED },
    { "flanked on either side by", BMQ_W_REL, BMQ_REL_FLANKED }, { "framed by", BMQ_W_REL, BMQ_REL_FLANKED },
    { "wearing", BMQ_W_REL, BMQ_REL_WEARING }, { "wears", BMQ_W_REL, BMQ_REL_WEARING },  { "de", BMQ_W_WEAK, 0 }, { "d", BMQ_W_WEAK, 0 }, { "to", BMQ_W_WEAK, 0 }, { "for", BMQ_W_WEAK, 0 },
    { "from", BMQ_W_WEAK, 0 }, { "para", BMQ_W_WEAK, 0 }, { "pour", BMQ_W_WEAK, 0 },
    { "dentro", BMQ_W_WEAK, 0 },
    /* connectors */
    { "and", BMQ_W_CONNECT, 0 }, { "et", BMQ_W_CONNECT, 0 }, { "y", BMQ_W_CONNECT, 0 }, { "e", BMQ_W_CONNECT, 0 },
    { "plus", BMQ_W_CONNECT, 0 }, { "also", BMQ_W_CONNECT, 0 }, { "as well as", BMQ_W_CONNECT, 0 }, { "and also", BMQ_W_CONNECT, 0 },
    { "then", BMQ_W_CONNECT, 0 }, { "et aussi", BMQ_W_CONNECT, 0 }, { "y tambien", BMQ_W_CONNECT, 0 }, { "e tambem", BMQ_W_CONNECT, 0 },
    { "ainsi que", BMQ_W_CONNECT, 0 }, { "aussi", BMQ_W_CONNECT, 0 }, { "tambien", BMQ_W_CONNECT, 0 }, { "tambem", BMQ_W_CONNECT, 0 },
    /* positions and sizes */
    { "at", BMQ_W_AT, 0 }, { "a", BMQ_W_AT, 0 }, { "en", BMQ_W_AT, 0 }, { "em", BMQ_W_AT, 0 }, { "located at", BMQ_W_AT, 0 },
    { "placed at", BMQ_W_AT, 0 }, { "positioned at", BMQ_W_AT, 0 }, { "position", BMQ_W_AT, 0 },
    { "scale", BMQ_W_SCALE, 0 }, { "scaled", BMQ_W_SCALE, 0 }, { "scaled by", BMQ_W_SCALE, 0 }, { "scale of", BMQ_W_SCALE, 0 },
    { "scale by", BMQ_W_SCALE, 0 }, { "echelle", BMQ_W_SCALE, 0 }, { "escala", BMQ_W_SCALE, 0 },
    { "x", BMQ_W_TIMES, 0 }, { "times", BMQ_W_TIMES, 0 }, { "fois", BMQ_W_TIMES, 0 }, { "veces", BMQ_W_TIMES, 0 },
    { "vezes", BMQ_W_TIMES, 0 },
    { "twice", BMQ_W_FACTOR, 2 }, { "twice as big", BMQ_W_FACTOR, 2 }, { "twice as large", BMQ_W_FACTOR, 2 },
    { "twice as tall", BMQ_W_FACTOR, 2 }, { "twice the size", BMQ_W_FACTOR, 2 }, { "double", BMQ_W_FACTOR, 2 },
    { "doble", BMQ_W_FACTOR, 2 }, { "dobro", BMQ_W_FACTOR, 2 }, { "triple", BMQ_W_FACTOR, 3 }, { "half", BMQ_W_FACTOR, 0.5 },
    { "half size", BMQ_W_FACTOR, 0.5 }, { "bigger", BMQ_W_FACTOR, 1.5 }, { "larger", BMQ_W_FACTOR, 1.5 },
    { "taller", BMQ_W_FACTOR, 1.5 }, { "smaller", BMQ_W_FACTOR, 0.6 }, { "plus grand", BMQ_W_FACTOR, 1.5 },
    { "plus grande", BMQ_W_FACTOR, 1.5 }, { "plus petit", BMQ_W_FACTOR, 0.6 }, { "plus petite", BMQ_W_FACTOR, 0.6 },
    { "mas grande", BMQ_W_FACTOR, 1.5 }, { "mas pequeno", BMQ_W_FACTOR, 0.6 }, { "mas pequena", BMQ_W_FACTOR, 0.6 },
    { "maior", BMQ_W_FACTOR, 1.5 }, { "menor", BMQ_W_FACTOR, 0.6 }, { "moitie", BMQ_W_FACTOR, 0.5 }, { "metade", BMQ_W_FACTOR, 0.5 },
    { "it", BMQ_W_PRONOUN, 0 }, { "them", BMQ_W_PRONOUN, 0 },
    /* asking politely, imperatives, "there is" */
    { "please", BMQ_W_FILLER, 0 }, { "pls", BMQ_W_FILLER, 0 }, { "build", BMQ_W_FILLER, 0 }, { "make", BMQ_W_FILLER, 0 },
    { "create", BMQ_W_FILLER, 0 }, { "draw", BMQ_W_FILLER, 0 }, { "model", BMQ_W_FILLER, 0 }, { "add", BMQ_W_FILLER, 0 },
    { "put", BMQ_W_FILLER, 0 }, { "place", BMQ_W_FILLER, 0 }, { "show", BMQ_W_FILLER, 0 }, { "give", BMQ_W_FILLER, 0 },
    { "generate", BMQ_W_FILLER, 0 }, { "render", BMQ_W_FILLER, 0 }, { "i", BMQ_W_FILLER, 0 }, { "want", BMQ_W_FILLER, 0 },
    { "would like", BMQ_W_FILLER, 0 }, { "need", BMQ_W_FILLER, 0 }, { "me", BMQ_W_FILLER, 0 }, { "us", BMQ_W_FILLER, 0 },
    { "we", BMQ_W_FILLER, 0 }, { "you", BMQ_W_FILLER, 0 }, { "can", BMQ_W_FILLER, 0 }, { "could", BMQ_W_FILLER, 0 },
    { "let", BMQ_W_FILLER, 0 }, { "lets", BMQ_W_FILLER, 0 }, { "there is", BMQ_W_FILLER, 0 }, { "there are", BMQ_W_FILLER, 0 },
    { "on the floor", BMQ_W_FILLER, 0 }, { "on the ground", BMQ_W_FILLER, 0 }, { "on the carpet", BMQ_W_FILLER, 0 },
    { "there s", BMQ_W_FILLER, 0 }, { "theres", BMQ_W_FILLER, 0 }, { "here s", BMQ_W_FILLER, 0 }, { "here is", BMQ_W_FILLER, 0 },
    { "here are", BMQ_W_FILLER, 0 }, { "d like", BMQ_W_FILLER, 0 }, { "d love", BMQ_W_FILLER, 0 }, { "would love", BMQ_W_FILLER, 0 },
    { "there should be", BMQ_W_FILLER, 0 }, { "there will be", BMQ_W_FILLER, 0 }, { "m looking for", BMQ_W_FILLER, 0 },
    { "scene", BMQ_W_FILLER, 0 }, { "just", BMQ_W_FILLER, 0 }, { "now", BMQ_W_FILLER, 0 }, { "here", BMQ_W_FILLER, 0 },
    { "s il te plait", BMQ_W_FILLER, 0 }, { "s il vous plait", BMQ_W_FILLER, 0 }, { "stp", BMQ_W_FILLER, 0 },
    { "svp", BMQ_W_FILLER, 0 }, { "fais", BMQ_W_FILLER, 0 }, { "faites", BMQ_W_FILLER, 0 }, { "faire", BMQ_W_FILLER, 0 },
    { "fabrique", BMQ_W_FILLER, 0 }, { "construis", BMQ_W_FILLER, 0 }, { "construire", BMQ_W_FILLER, 0 },
    { "cree", BMQ_W_FILLER, 0 }, { "creer", BMQ_W_FILLER, 0 }, { "dessine", BMQ_W_FILLER, 0 }, { "mets", BMQ_W_FILLER, 0 },
    { "ajoute", BMQ_W_FILLER, 0 }, { "genere", BMQ_W_FILLER, 0 }, { "je", BMQ_W_FILLER, 0 }, { "j", BMQ_W_FILLER, 0 },
    { "veux", BMQ_W_FILLER, 0 }, { "voudrais", BMQ_W_FILLER, 0 }, { "aimerais", BMQ_W_FILLER, 0 }, { "moi", BMQ_W_FILLER, 0 },
    { "il y a", BMQ_W_FILLER, 0 }, { "voici", BMQ_W_FILLER, 0 }, { "scene", BMQ_W_FILLER, 0 }, { "por favor", BMQ_W_FILLER, 0 },
    { "haz", BMQ_W_FILLER, 0 }, { "hazme", BMQ_W_FILLER, 0 }, { "crea", BMQ_W_FILLER, 0 }, { "creame", BMQ_W_FILLER, 0 },
    { "construye", BMQ_W_FILLER, 0 }, { "dibuja", BMQ_W_FILLER, 0 }, { "pon", BMQ_W_FILLER, 0 }, { "ponme", BMQ_W_FILLER, 0 },
    { "quiero", BMQ_W_FILLER, 0 }, { "hay", BMQ_W_FILLER, 0 }, { "agrega", BMQ_W_FILLER, 0 }, { "anade", BMQ_W_FILLER, 0 },
    { "escena", BMQ_W_FILLER, 0 }, { "faz", BMQ_W_FILLER, 0 }, { "faca", BMQ_W_FILLER, 0 }, { "cria", BMQ_W_FILLER, 0 },
    { "crie", BMQ_W_FILLER, 0 }, { "constroi", BMQ_W_FILLER, 0 }, { "construa", BMQ_W_FILLER, 0 }, { "desenha", BMQ_W_FILLER, 0 },
    { "desenhe", BMQ_W_FILLER, 0 }, { "coloca", BMQ_W_FILLER, 0 }, { "coloque", BMQ_W_FILLER, 0 }, { "poe", BMQ_W_FILLER, 0 },
    { "ponha", BMQ_W_FILLER, 0 }, { "quero", BMQ_W_FILLER, 0 }, { "gostaria", BMQ_W_FILLER, 0 }, { "eu", BMQ_W_FILLER, 0 },
    { "adicione", BMQ_W_FILLER, 0 }, { "adiciona", BMQ_W_FILLER, 0 }, { "cena", BMQ_W_FILLER, 0 }, { "ha", BMQ_W_FILLER, 0 },
};

typedef enum { S_UNIT, S_HUNDREDS, S_X100, S_X12, S_X1000, S_X1E6, S_X1E9 } s_num_kind_t;
typedef struct { const char *word; s_num_kind_t kind; double value; } s_number_t;

static const s_number_t s_numbers[] = {
    { "zero", S_UNIT, 0 }, { "one", S_UNIT, 1 }, { "un", S_UNIT, 1 }, { "une", S_UNIT, 1 }, { "uno", S_UNIT, 1 },
    { "um", S_UNIT, 1 }, { "uma", S_UNIT, 1 }, { "two", S_UNIT, 2 }, { "three", S_UNIT, 3 }, { "four", S_UNIT, 4 },
    { "five", S_UNIT, 5 }, { "six", S_UNIT, 6 }, { "seven", S_UNIT, 7 }, { "eight", S_UNIT, 8 }, { "nine", S_UNIT, 9 },
    { "ten", S_UNIT, 10 }, { "eleven", S_UNIT, 11 }, { "twelve", S_UNIT, 12 }, { "thirteen", S_UNIT, 13 },
    { "fourteen", S_UNIT, 14 }, { "fifteen", S_UNIT, 15 }, { "sixteen", S_UNIT, 16 }, { "seventeen", S_UNIT, 17 },
    { "eighteen", S_UNIT, 18 }, { "nineteen", S_UNIT, 19 }, { "twenty", S_UNIT, 20 }, { "thirty", S_UNIT, 30 },
    { "forty", S_UNIT, 40 }, { "fifty", S_UNIT, 50 }, { "sixty", S_UNIT, 60 }, { "seventy", S_UNIT, 70 }, { "eighty", S_UNIT, 80 },
    { "ninety", S_UNIT, 90 }, { "hundred", S_X100, 100 }, { "hundreds", S_X100, 100 }, { "dozen", S_X12, 12 },
    { "dozens", S_X12, 12 }, { "thousand", S_X1000, 1000 }, { "thousands", S_X1000, 1000 }, { "million", S_X1E6, 1e6 },
    { "millions", S_X1E6, 1e6 }, { "billion", S_X1E9, 1e9 },
    /* French */
    { "deux", S_UNIT, 2 }, { "trois", S_UNIT, 3 }, { "quatre", S_UNIT, 4 }, { "cinq", S_UNIT, 5 }, { "sept", S_UNIT, 7 },
    { "huit", S_UNIT, 8 }, { "neuf", S_UNIT, 9 }, { "dix", S_UNIT, 10 }, { "onze", S_UNIT, 11 }, { "douze", S_UNIT, 12 },
    { "treize", S_UNIT, 13 }, { "quatorze", S_UNIT, 14 }, { "quinze", S_UNIT, 15 }, { "seize", S_UNIT, 16 },
    { "vingt", S_UNIT, 20 }, { "vingts", S_UNIT, 20 }, { "trente", S_UNIT, 30 }, { "quarante", S_UNIT, 40 },
    { "cinquante", S_UNIT, 50 }, { "soixante", S_UNIT, 60 }, { "cent", S_X100, 100 }, { "cents", S_X100, 100 },
    { "mille", S_X1000, 1000 }, { "milliers", S_X1000, 1000 }, { "douzaine", S_X12, 12 }, { "douzaines", S_X12, 12 },
    /* Spanish */
    { "cero", S_UNIT, 0 }, { "dos", S_UNIT, 2 }, { "tres", S_UNIT, 3 }, { "cuatro", S_UNIT, 4 }, { "cinco", S_UNIT, 5 },
    { "seis", S_UNIT, 6 }, { "siete", S_UNIT, 7 }, { "ocho", S_UNIT, 8 }, { "nueve", S_UNIT, 9 }, { "diez", S_UNIT, 10 },
    { "once", S_UNIT, 11 }, { "doce", S_UNIT, 12 }, { "trece", S_UNIT, 13 }, { "catorce", S_UNIT, 14 }, { "quince", S_UNIT, 15 },
    { "dieciseis", S_UNIT, 16 }, { "diecisiete", S_UNIT, 17 }, { "dieciocho", S_UNIT, 18 }, { "diecinueve", S_UNIT, 19 },
    { "veinte", S_UNIT, 20 }, { "veintiuno", S_UNIT, 21 }, { "veintidos", S_UNIT, 22 }, { "veintitres", S_UNIT, 23 },
    { "veinticuatro", S_UNIT, 24 }, { "veinticinco", S_UNIT, 25 }, { "treinta", S_UNIT, 30 }, { "cuarenta", S_UNIT, 40 },
    { "cincuenta", S_UNIT, 50 }, { "sesenta", S_UNIT, 60 }, { "setenta", S_UNIT, 70 }, { "ochenta", S_UNIT, 80 },
    { "noventa", S_UNIT, 90 }, { "cien", S_X100, 100 }, { "ciento", S_X100, 100 }, { "cientos", S_X100, 100 },
    { "doscientos", S_HUNDREDS, 200 }, { "trescientos", S_HUNDREDS, 300 }, { "cuatrocientos", S_HUNDREDS, 400 },
    { "quinientos", S_HUNDREDS, 500 }, { "seiscientos", S_HUNDREDS, 600 }, { "setecientos", S_HUNDREDS, 700 },
    { "ochocientos", S_HUNDREDS, 800 }, { "novecientos", S_HUNDREDS, 900 }, { "mil", S_X1000, 1000 }, { "miles", S_X1000, 1000 },
    { "millon", S_X1E6, 1e6 }, { "millones", S_X1E6, 1e6 }, { "docena", S_X12, 12 }, { "docenas", S_X12, 12 },
    /* Portuguese */
    { "dois", S_UNIT, 2 }, { "duas", S_UNIT, 2 }, { "quatro", S_UNIT, 4 }, { "sete", S_UNIT, 7 }, { "oito", S_UNIT, 8 },
    { "nove", S_UNIT, 9 }, { "dez", S_UNIT, 10 }, { "quatorze", S_UNIT, 14 }, { "dezesseis", S_UNIT, 16 },
    { "dezasseis", S_UNIT, 16 }, { "dezessete", S_UNIT, 17 }, { "dezassete", S_UNIT, 17 }, { "dezoito", S_UNIT, 18 },
    { "dezenove", S_UNIT, 19 }, { "dezanove", S_UNIT, 19 }, { "vinte", S_UNIT, 20 }, { "trinta", S_UNIT, 30 },
    { "quarenta", S_UNIT, 40 }, { "cinquenta", S_UNIT, 50 }, { "sessenta", S_UNIT, 60 }, { "oitenta", S_UNIT, 80 },
    { "cem", S_X100, 100 }, { "cento", S_X100, 100 }, { "duzentos", S_HUNDREDS, 200 }, { "duzentas", S_HUNDREDS, 200 },
    { "trezentos", S_HUNDREDS, 300 }, { "quatrocentos", S_HUNDREDS, 400 }, { "quinhentos", S_HUNDREDS, 500 },
    { "seiscentos", S_HUNDREDS, 600 }, { "setecentos", S_HUNDREDS, 700 }, { "oitocentos", S_HUNDREDS, 800 },
    { "novecentos", S_HUNDREDS, 900 }, { "milhao", S_X1E6, 1e6 }, { "milhoes", S_X1E6, 1e6 }, { "duzia", S_X12, 12 },
    { "duzias", S_X12, 12 },
};

/* ---- tokens ------------------------------------------------------------------------ */

static bool s_letter (unsigned char c)
{
    return (c >= 'a' && c <= 'z') || c >= 0x80;
}

static bool s_digit (char c)
{
    return c >= '0' && c <= '9';
}

/* A number: [sign] digits [. digits]; no exponent, no hex. Returns its length. */
static size_t s_number (const char *s, double *value)
{
    size_t i = (*s == '-' || *s == '+') ? 1 : 0, digits = 0;
    char buf[40];
    size_t b = 0;
    if (*s == '-') buf[b++] = '-';
    bool dot = false;
    for (; s_digit (s[i]) || (s[i] == '.' && !dot && s_digit (s[i + 1])); i++) {
        if (s[i] == '.') dot = true;
        else digits++;
        if (b < sizeof buf - 1 && (s[i] == '.' || digits <= 15)) buf[b++] = s[i];
    }
    buf[b] = 0;
    *value = strtod (buf, NULL);
    return i;
}

int bmq_tokens_read (const char *prompt, bmq_tokens_t *out)
{
    memset (out, 0, sizeof *out);
    out->folded = malloc (BMQ_RECIPE_MAX_PROMPT * 2 + 1);
    out->t = calloc (BMQ_TOKENS_MAX, sizeof *out->t);
    if (!out->folded || !out->t) { bmq_tokens_free (out); return -1; }
    bmq_recipe_fold (prompt ? prompt : "", out->folded, BMQ_RECIPE_MAX_PROMPT * 2 + 1);
    const char *f = out->folded;
    for (size_t i = 0; f[i] && out->n < BMQ_TOKENS_MAX; ) {
        bmq_token_t *t = &out->t[out->n];
        memset (t, 0, sizeof *t);
        t->start = i;
        bool sign = (f[i] == '-' || f[i] == '+') && s_digit (f[i + 1]) && (i == 0 || !s_letter ((unsigned char) f[i - 1]));
        if (s_digit (f[i]) || sign || (f[i] == '.' && s_digit (f[i + 1]))) {
            t->kind = BMQ_TOK_NUMBER;
            i += s_number (f + i, &t->value);
        }
        else if (s_letter ((unsigned char) f[i])) {
            t->kind = BMQ_TOK_WORD;
            size_t len = 0;
            for (; s_letter ((unsigned char) f[i]); i++)
                if (len < BMQ_TOKEN_LEN - 1) t->text[len++] = f[i];
            memcpy (t->single, t->text, len + 1);
            bmq_recipe_singular (t->single);
        }
        else if (strchr (",;.!?:", f[i])) { t->kind = BMQ_TOK_BREAK; t->text[0] = f[i++]; }
        else { i++; continue; }
        t->end = i;
        if (t->kind != BMQ_TOK_NUMBER) { out->n++; continue; }
        snprintf (t->text, sizeof t->text, "%.*s", (int) (t->end - t->start), f + t->start);
        out->n++;
    }
    /* nothing is dropped silently (issue 29): a prompt longer than what is read says so */
    out->read_to = out->n ? out->t[out->n - 1].end : 0;
    bool more_words = false;
    for (const char *r = f + out->read_to; *r && !more_words; r++) more_words = s_letter ((unsigned char) *r) || s_digit (*r);
    out->cut = (out->n == BMQ_TOKENS_MAX && more_words) || strnlen (prompt ? prompt : "", BMQ_RECIPE_MAX_PROMPT + 1) > BMQ_RECIPE_MAX_PROMPT;
    return 0;
}

void bmq_tokens_free (bmq_tokens_t *tokens)
{
    free (tokens->t);
    free (tokens->folded);
    memset (tokens, 0, sizeof *tokens);
}

/* ---- vocabulary --------------------------------------------------------------------- */

/* How many tokens from i spell phrase (0 when they do not). */
static size_t s_spells (const bmq_tokens_t *k, size_t i, const char *phrase)
{
    size_t used = 0;
    while (*phrase) {
        const char *sp = strchr (phrase, ' ');
        size_t len = sp ? (size_t) (sp - phrase) : strlen (phrase);
        if (i + used >= k->n || k->t[i + used].kind != BMQ_TOK_WORD || strlen (k->t[i + used].text) != len
            || memcmp (k->t[i + used].text, phrase, len))
            return 0;
        used++;
        phrase += len + (sp ? 1 : 0);
    }
    return used;
}

static size_t s_match (const bmq_tokens_t *k, size_t i, bmq_word_kind_t *kind, double *value);

/* An unknown owner and 's before a room word are part of the room's name. "round" is "around" before an article or a count ("chairs round the table"); before anything else it
 * describes a shape ("a round oak table": scene_mentions looks for the round recipe) and is accepted. */
size_t bmq_vocab_match (const bmq_tokens_t *k, size_t i, bmq_word_kind_t *kind, double *value)
{
    size_t n = s_match (k, i, kind, value);
    if (n == 0 && i + 2 < k->n && k->t[i].kind == BMQ_TOK_WORD && !strcmp (k->t[i + 1].text, "s") && k->t[i + 1].start > 0
        && k->folded && k->folded[k->t[i + 1].start - 1] == '\'') {
        size_t room = s_match (k, i + 2, kind, value);      /* "a teenager's bedroom", "an artist's loft" */
        if (room && *kind == BMQ_W_ROOM) return room + 2;
        *kind = BMQ_W_NONE;
        *value = 0;
    }
    if (n == 1 && *kind == BMQ_W_REL && !strcmp (k->t[i].text, "round") && i + 1 < k->n && k->t[i + 1].kind == BMQ_TOK_WORD) {
        bmq_word_kind_t next;
        double unused;
        double count;
        bool object = s_match (k, i + 1, &next, &unused)
                      && (next == BMQ_W_INDEF || next == BMQ_W_DEF || next == BMQ_W_PRONOUN || next == BMQ_W_QUANT);
        if (!object && !bmq_number_words (k, i + 1, &count)) { *kind = BMQ_W_FILLER; *value = 0; }
    }
    return n;
}

static size_t s_match (const bmq_tokens_t *k, size_t i, bmq_word_kind_t *kind, double *value)
{
    size_t best = 0;
    *kind = BMQ_W_NONE;
    *value = 0;
    for (size_t v = 0; v < sizeof s_vocab / sizeof *s_vocab; v++) {
        size_t used = s_spells (k, i, s_vocab[v].phrase);
        if (used > best) {
            best = used;
            *kind = s_vocab[v].kind;
            *value = s_vocab[v].value;
        }
    }
    return best;
}

static const s_number_t *s_number_word (const bmq_tokens_t *k, size_t i)
{
    if (i >= k->n || k->t[i].kind != BMQ_TOK_WORD) return NULL;
    for (size_t w = 0; w < sizeof s_numbers / sizeof *s_numbers; w++)
        if (!strcmp (k->t[i].text, s_numbers[w].word)) return &s_numbers[w];
    return NULL;
}

static bool s_is (const bmq_tokens_t *k, size_t i, const char *const *words)
{
    for (; i < k->n && *words; words++)
        if (k->t[i].kind == BMQ_TOK_WORD && !strcmp (k->t[i].text, *words)) return true;
    return false;
}

size_t bmq_number_words (const bmq_tokens_t *k, size_t i, double *value)
{
    static const char *articles[] = { "a", "an", "un", "une", "uno", "una", "um", "uma", NULL };
    static const char *joins[] = { "and", "et", "y", "e", NULL };
    double total = 0, cur = 0, last = -1;
    size_t j = i;
    if (s_is (k, j, articles)) {                 /* "a hundred", "une douzaine": the article is the 1 */
        const s_number_t *n = s_number_word (k, j + 1);
        if (!n || n->kind == S_UNIT || n->kind == S_HUNDREDS) return 0;
        cur = 1;
        j++;
    }
    for (;;) {
        if (j > i && s_is (k, j, joins) && s_number_word (k, j + 1)) { j++; continue; }
        const s_number_t *n = s_number_word (k, j);
        if (!n) break;
        double v = n->value;
        if (n->kind == S_UNIT) {
            bool vingt = !strncmp (n->word, "vingt", 5) && last == 4;                  /* quatre-vingt(s) = 80 */
            bool teen_after_tens = last >= 20 && last < 100 && (long) last % 10 == 0 && v < 20;
            bool unit_after = v < 10 && ((last >= 20 && last < 100) || last == 10);   /* twenty one, dix-sept */
            if (last >= 0 && !vingt && !teen_after_tens && !unit_after) break;
            if (vingt) cur += 80 - 4;
            else cur += v;
            last = vingt ? 80 : v;
        }
        else {
            if (n->kind == S_HUNDREDS) cur += v;
            else if (n->kind == S_X100 || n->kind == S_X12) cur = (cur > 0 ? cur : 1) * v;
            else { total += (cur > 0 ? cur : 1) * v; cur = 0; }
            last = -1;
        }
        if (total + cur > BMQ_COUNT_MAX) { total = BMQ_COUNT_MAX; cur = 0; }
        j++;
    }
    if (j == i) return 0;
    *value = total + cur > BMQ_COUNT_MAX ? BMQ_COUNT_MAX : total + cur;
    return j - i;
}

void bmq_utf8_fix (char *text)
{
    unsigned char *s = (unsigned char *) text;
    while (s && *s) {
        size_t n = *s < 0x80 ? 1 : (*s >> 5) == 6 ? 2 : (*s >> 4) == 14 ? 3 : (*s >> 3) == 30 ? 4 : 0;
        size_t ok = n;
        for (size_t i = 1; i < n && ok; i++)
            if ((s[i] & 0xC0) != 0x80) ok = 0;
        if (n == 2 && ok && *s < 0xC2) ok = 0;                              /* overlong */
        if (n == 3 && ok && ((*s == 0xE0 && s[1] < 0xA0) || (*s == 0xED && s[1] >= 0xA0))) ok = 0;   /* overlong, surrogates */
        if (n == 4 && ok && ((*s == 0xF0 && s[1] < 0x90) || *s > 0xF4 || (*s == 0xF4 && s[1] >= 0x90))) ok = 0;
        if (!ok) { *s++ = '?'; continue; }
        s += n;
    }
}

bool bmq_vocab_reserved (const char *word)
{
    double rgb[3], f;
    if (bmq_recipe_color_word (word, rgb, NULL) || bmq_recipe_size_word (word, &f)) return true;
    size_t len = strlen (word);
    for (size_t w = 0; w < sizeof s_numbers / sizeof *s_numbers; w++)
        if (!strcmp (word, s_numbers[w].word)) return true;
    for (size_t v = 0; v < sizeof s_vocab / sizeof *s_vocab; v++)
        for (const char *p = s_vocab[v].phrase; p; p = strchr (p, ' ') ? strchr (p, ' ') + 1 : NULL) {
            const char *sp = strchr (p, ' ');
            size_t n = sp ? (size_t) (sp - p) : strlen (p);
            if (n == len && !memcmp (p, word, n)) return true;
        }
    return false;
}

static const bmq_material_t s_materials[] = {
    { "wooden", { 0.55, 0.36, 0.2 }, 0.6, 0 },       { "oak", { 0.68, 0.5, 0.3 }, 0.6, 0 },
    { "walnut", { 0.36, 0.22, 0.13 }, 0.55, 0 },     { "pine", { 0.82, 0.66, 0.44 }, 0.65, 0 },
    { "mahogany", { 0.42, 0.16, 0.1 }, 0.5, 0 },     { "metal", { 0.72, 0.73, 0.75 }, 0.3, 1 },
    { "iron", { 0.2, 0.2, 0.22 }, 0.5, 1 },          { "chrome", { 0.9, 0.9, 0.92 }, 0.1, 1 },
    { "brass", { 0.78, 0.65, 0.3 }, 0.3, 1 },        { "copper", { 0.72, 0.42, 0.25 }, 0.3, 1 },
    { "glass", { 0.75, 0.88, 0.92 }, 0.05, 0 },      { "leather", { 0.35, 0.2, 0.12 }, 0.45, 0 },
    { "fabric", { 0.5, 0.52, 0.58 }, 0.9, 0 },       { "velvet", { 0.35, 0.15, 0.35 }, 0.95, 0 },
    { "linen", { 0.85, 0.8, 0.7 }, 0.9, 0 },         { "marble", { 0.92, 0.91, 0.9 }, 0.15, 0 },
    { "stone", { 0.55, 0.55, 0.53 }, 0.8, 0 },       { "plastic", { 0.9, 0.9, 0.9 }, 0.4, 0 },
    { "ceramic", { 0.95, 0.95, 0.93 }, 0.2, 0 },     { "wicker", { 0.72, 0.58, 0.38 }, 0.85, 0 },
    /* styles (from S_FIRST_STYLE): a plausible look for the object named right after the word */
    { "rustic", { 0.42, 0.28, 0.16 }, 0.85, 0 },      /* weathered, rough wood */
    { "industrial", { 0.16, 0.16, 0.17 }, 0.45, 1 },  /* dark metal */
    { "scandinavian", { 0.86, 0.76, 0.6 }, 0.6, 0 },  /* light birch */
    { "mid century", { 0.5, 0.3, 0.16 }, 0.5, 0 },    /* teak */
    { "vintage", { 0.36, 0.22, 0.13 }, 0.55, 0 },     /* dark, old wood */
    { "bohemian", { 0.72, 0.58, 0.38 }, 0.85, 0 },    /* rattan */
    { "japanese", { 0.8, 0.68, 0.5 }, 0.7, 0 },       /* pale natural wood */
    { "modern", { 0.3, 0.3, 0.32 }, 0.35, 0 },        /* smooth graphite */
    { "minimalist", { 0.93, 0.93, 0.91 }, 0.5, 0 },   /* plain matte white */
};
#define S_FIRST_STYLE 20

bool bmq_material_style (size_t index)
{
    return index >= S_FIRST_STYLE && index < sizeof s_materials / sizeof *s_materials;
}

const bmq_material_t *bmq_material (size_t index)
{
    return index < sizeof s_materials / sizeof *s_materials ? &s_materials[index] : NULL;
}

const char *bmq_room_name (bmq_room_kind_t kind)
{
    static const char *name[] = { "none", "room", "bedroom", "living room", "kitchen", "office", "dining room", "bathroom",
                                  "kids room", "laundry room", "hallway", "gym", "studio" };
    return (size_t) kind < sizeof name / sizeof *name ? name[kind] : "room";
}
