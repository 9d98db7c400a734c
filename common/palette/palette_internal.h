/* palette_internal — the palette's representation, shared by its files
 * (palette.c, palette_load.c, palette_check.c, palette_cost.c,
 * palette_describe.c); not part of its API (palette.h). */
#ifndef BMQ_PALETTE_INTERNAL_H
#define BMQ_PALETTE_INTERNAL_H

#include "palette.h"

#include <stdint.h>

typedef enum { PALETTE_FLOAT, PALETTE_INT, PALETTE_BOOL, PALETTE_STRING, PALETTE_ENUM, PALETTE_VEC3, PALETTE_COLOR, PALETTE_TYPES } palette_type_t;
extern const char *palette_type_names[PALETTE_TYPES];

#define PALETTE_COST_TOKENS   32
/* A property path's forms beyond plain set: component set, add, add to a
 * component, mul, mul of a component (palette_path.c). */
#define PALETTE_PATH_FORMS    5

/* String → index, open addressing. Keys are borrowed from the owner. */
typedef struct { const char *key; size_t len; size_t value; } palette_slot_t;
typedef struct { palette_slot_t *slots; size_t mask; } palette_table_t;

/* A vertex-cost expression compiled to postfix: numbers, parameter indexes, + * ^ */
typedef struct { char kind; double num; size_t param; } palette_token_t;

struct bmq_palette_param_t {
    char *name;
    char *description;
    palette_type_t type;
    bool required;
    double min, max;            /* float, vec3, color (int keeps exact bounds below) */
    long long imin, imax;
    size_t max_len;             /* string */
    json_t *items;              /* enum: array of strings */
    json_t *def;                /* normalised default, or NULL */
};

struct bmq_palette_op_t {
    char *name;
    char *description;
    bool creates, acts_on, deletes;
    bmq_palette_param_t *params;
    size_t param_count;
    palette_table_t index;
    char *param_list;
    json_t *cost_src;           /* as written, for describe; NULL when no cost */
    palette_token_t cost[PALETTE_COST_TOKENS];          /* vertices of the object the step creates */
    size_t cost_len;
    palette_token_t mult[PALETTE_COST_TOKENS];          /* factor on the vertices of the object it acts on */
    size_t mult_len;
    /* A property path (path: true, palette_path.c): its one parameter `value`
     * and what the other forms of the path take (palette_path_derive). */
    bool path;
    bool path_array;            /* vec3 or color: components may be named */
    bmq_palette_param_t derived[PALETTE_PATH_FORMS];
};

struct bmq_palette_t {
    int version, max_steps, max_name_len;
    double max_vertices;
    bmq_palette_op_t *ops;
    size_t op_count;
    palette_table_t index;
};

/* Write a message to err (when given); always -1. */
int palette_fail (char *err, size_t errlen, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

/* The tables are hand-written, not zhashx: a zhashx lookup writes to the table
 * (its cursor, and a rehash when a chain is long), and the palette is read by
 * many threads at once after load. Sized at init for twice `expected` keys. */
int palette_table_init (palette_table_t *t, size_t expected);
/* 0 on insert, -1 if the key is already there. */
int palette_table_put (palette_table_t *t, const char *key, size_t len, size_t value);
const palette_slot_t *palette_table_get (const palette_table_t *t, const char *key, size_t len);

/* Check a path op's name and parameter (deny rules) and fill op->derived. */
int palette_path_load (bmq_palette_op_t *op, char *err, size_t errlen);
/* Whether an operation name may hold "[]" (a path template's subscript). */
bool palette_path_name_ok (const char *name);

/* Compile op's cost spec ({vertices, multiplies}) after its parameters are loaded. */
int palette_cost_load (bmq_palette_op_t *op, const json_t *cost, char *err, size_t errlen);

#endif
