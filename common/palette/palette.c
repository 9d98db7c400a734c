/* palette — the palette's lookups: the string → index tables built at load
 * and the accessors the plan validator calls per step. Loading and checking
 * a palette file is palette_load.c, vertex costs palette_cost.c, parameter
 * values palette_check.c, the JSON views palette_describe.c. */
#include "palette_internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *palette_type_names[PALETTE_TYPES] = { "float", "int", "bool", "string", "enum", "vec3", "color" };

int palette_fail (char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (err, errlen, fmt, ap);
        va_end (ap);
    }
    return -1;
}

/* ---- hash table ---------------------------------------------------------- */

static uint64_t s_hash (const char *key, size_t len)
{
    uint64_t h = 14695981039346656037ull;          /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char) key[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

int palette_table_init (palette_table_t *t, size_t expected)
{
    size_t cap = 8;
    while (cap < expected * 2) cap <<= 1;
    t->slots = calloc (cap, sizeof *t->slots);
    t->mask = cap - 1;
    return t->slots ? 0 : -1;
}

/* 0 on insert, -1 if the key is already there. The table never fills: it is
 * sized for twice the keys its owner will insert. */
int palette_table_put (palette_table_t *t, const char *key, size_t len, size_t value)
{
    size_t i = s_hash (key, len) & t->mask;
    while (t->slots[i].key) {
        if (t->slots[i].len == len && !memcmp (t->slots[i].key, key, len)) return -1;
        i = (i + 1) & t->mask;
    }
    t->slots[i] = (palette_slot_t) { key, len, value };
    return 0;
}

const palette_slot_t *palette_table_get (const palette_table_t *t, const char *key, size_t len)
{
    if (!t->slots) return NULL;
    size_t i = s_hash (key, len) & t->mask;
    while (t->slots[i].key) {
        if (t->slots[i].len == len && !memcmp (t->slots[i].key, key, len)) return &t->slots[i];
        i = (i + 1) & t->mask;
    }
    return NULL;
}

/* ---- accessors ------------------------------------------------------------ */

size_t bmq_palette_count (const bmq_palette_t *self) { return self ? self->op_count : 0; }
int bmq_palette_max_steps (const bmq_palette_t *self) { return self ? self->max_steps : 0; }
int bmq_palette_max_name_len (const bmq_palette_t *self) { return self ? self->max_name_len : 0; }
double bmq_palette_max_vertices (const bmq_palette_t *self) { return self ? self->max_vertices : 0; }

bool bmq_palette_has (const bmq_palette_t *self, const char *operation)
{
    return operation && bmq_palette_op (self, operation, strlen (operation)) != NULL;
}

const bmq_palette_op_t *bmq_palette_op (const bmq_palette_t *self, const char *name, size_t len)
{
    const palette_slot_t *slot = self && name ? palette_table_get (&self->index, name, len) : NULL;
    return slot ? &self->ops[slot->value] : NULL;
}

const char *bmq_palette_op_name (const bmq_palette_op_t *op) { return op ? op->name : NULL; }
bool bmq_palette_op_creates (const bmq_palette_op_t *op) { return op && op->creates; }
bool bmq_palette_op_acts_on (const bmq_palette_op_t *op) { return op && op->acts_on; }
bool bmq_palette_op_deletes (const bmq_palette_op_t *op) { return op && op->deletes; }
bool bmq_palette_op_needs_target (const bmq_palette_op_t *op)
{
    return op && (op->deletes || op->mult_len || (op->creates && op->acts_on));
}
size_t bmq_palette_op_param_count (const bmq_palette_op_t *op) { return op ? op->param_count : 0; }
const char *bmq_palette_op_param_list (const bmq_palette_op_t *op) { return op ? op->param_list : ""; }

const bmq_palette_param_t *bmq_palette_op_param_at (const bmq_palette_op_t *op, size_t index)
{
    return op && index < op->param_count ? &op->params[index] : NULL;
}

const bmq_palette_param_t *bmq_palette_op_param (const bmq_palette_op_t *op, const char *name, size_t len)
{
    const palette_slot_t *slot = op && name ? palette_table_get (&op->index, name, len) : NULL;
    return slot ? &op->params[slot->value] : NULL;
}

const char *bmq_palette_param_name (const bmq_palette_param_t *param) { return param ? param->name : NULL; }
bool bmq_palette_param_required (const bmq_palette_param_t *param) { return param && param->required; }
