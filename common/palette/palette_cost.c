/* palette_cost — vertex-cost expressions: compiled at load, evaluated per step. */
#include "palette_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- vertex cost: "10*4^subdivisions+2" -------------------------------- */
/* Grammar (no parentheses, kept deliberately tiny):
 *   sum := prod ('+' prod)* ; prod := pow ('*' pow)* ; pow := atom ('^' atom)?
 *   atom := number | parameter (int or float, with a default or required) */

typedef struct {
    const char *s;
    bmq_palette_op_t *op;
    int failed;
    palette_token_t *out;             /* op->cost or op->mult */
    size_t *len;
} s_lexer_t;

static void s_emit (s_lexer_t *lx, char kind, double num, size_t param)
{
    if (*lx->len >= PALETTE_COST_TOKENS) { lx->failed = 1; return; }
    lx->out[(*lx->len)++] = (palette_token_t) { kind, num, param };
}

static void s_atom (s_lexer_t *lx)
{
    while (*lx->s == ' ') lx->s++;
    const char *start = lx->s;
    if ((*lx->s >= '0' && *lx->s <= '9') || *lx->s == '.') {
        char *end;
        double d = strtod (lx->s, &end);
        lx->s = end;
        if (!isfinite (d) || d < 0) lx->failed = 1;
        else s_emit (lx, 'n', d, 0);
    }
    else {
        while ((*lx->s >= 'a' && *lx->s <= 'z') || (*lx->s >= 'A' && *lx->s <= 'Z') || *lx->s == '_'
               || (lx->s > start && *lx->s >= '0' && *lx->s <= '9'))
            lx->s++;
        const palette_slot_t *slot = palette_table_get (&lx->op->index, start, (size_t) (lx->s - start));
        const bmq_palette_param_t *p = slot ? &lx->op->params[slot->value] : NULL;
        if (!p || (p->type != PALETTE_INT && p->type != PALETTE_FLOAT) || (!p->def && !p->required)) lx->failed = 1;
        else s_emit (lx, 'p', 0, slot->value);
    }
    while (*lx->s == ' ') lx->s++;
}

static void s_pow (s_lexer_t *lx)
{
    s_atom (lx);
    if (*lx->s == '^') { lx->s++; s_atom (lx); s_emit (lx, '^', 0, 0); }
}

static void s_prod (s_lexer_t *lx)
{
    s_pow (lx);
    while (!lx->failed && *lx->s == '*') { lx->s++; s_pow (lx); s_emit (lx, '*', 0, 0); }
}

/* Compile cost.<key> (a number or an expression) into out / *len. */
static int s_cost_expr (bmq_palette_op_t *op, const char *key, const json_t *v, palette_token_t *out, size_t *len,
                        char *err, size_t errlen)
{
    s_lexer_t lx = { json_string_value (v) ? json_string_value (v) : "", op, 0, out, len };
    if (json_is_number (v) && json_number_value (v) >= 0 && isfinite (json_number_value (v)))
        s_emit (&lx, 'n', json_number_value (v), 0);
    else if (json_is_string (v) && json_string_length (v) < 128) {
        s_prod (&lx);
        while (!lx.failed && *lx.s == '+') { lx.s++; s_prod (&lx); s_emit (&lx, '+', 0, 0); }
        if (lx.failed || *lx.s)
            return palette_fail (err, errlen, "operation '%s': bad cost expression '%s' (numbers, int/float parameters"
                           " with a default, + * ^)", op->name, json_string_value (v));
    }
    else
        return palette_fail (err, errlen, "operation '%s': cost.%s must be a number or an expression", op->name, key);
    return 0;
}

/* cost.vertices: the vertices of the object a creating step adds;
 * cost.multiplies: the factor an acts_on step applies to its object's. */
int palette_cost_load (bmq_palette_op_t *op, const json_t *cost, char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) cost, key, v)
        if (strcmp (key, "vertices") && strcmp (key, "multiplies"))
            return palette_fail (err, errlen, "operation '%s': unknown cost key '%.32s' (known: vertices, multiplies)",
                                 op->name, key);
    if ((v = json_object_get (cost, "vertices")) && s_cost_expr (op, "vertices", v, op->cost, &op->cost_len, err, errlen))
        return -1;
    if ((v = json_object_get (cost, "multiplies"))) {
        if (!op->acts_on) return palette_fail (err, errlen, "operation '%s': cost.multiplies needs acts_on", op->name);
        if (s_cost_expr (op, "multiplies", v, op->mult, &op->mult_len, err, errlen)) return -1;
    }
    op->cost_src = json_deep_copy (cost);
    return 0;
}

/* A parameter's value for costing: the step's value when it is a number in
 * bounds (an invalid one is reported elsewhere), else the default, else min. */
static double s_cost_value (const bmq_palette_param_t *p, const json_t *params)
{
    const json_t *v = json_is_object (params) ? json_object_get (params, p->name) : NULL;
    if (json_is_number (v) && json_number_value (v) >= p->min && json_number_value (v) <= p->max)
        return json_number_value (v);
    return p->def ? json_number_value (p->def) : p->min;
}

static double s_eval (const bmq_palette_op_t *op, const palette_token_t *tokens, size_t len, const json_t *params)
{
    double stack[PALETTE_COST_TOKENS];
    size_t sp = 0;
    for (size_t i = 0; i < len; i++) {
        const palette_token_t *t = &tokens[i];
        if (t->kind == 'n') stack[sp++] = t->num;
        else if (t->kind == 'p') stack[sp++] = s_cost_value (&op->params[t->param], params);
        else {          /* compiled at load: every operator has two operands */
            double b = stack[--sp], a = stack[--sp];
            stack[sp++] = t->kind == '+' ? a + b : t->kind == '*' ? a * b : pow (a, b);
        }
    }
    double v = sp ? stack[0] : 0;
    return isfinite (v) && v >= 0 ? v : HUGE_VAL;
}

double bmq_palette_op_vertices (const bmq_palette_op_t *op, const json_t *params)
{
    return op && op->cost_len ? s_eval (op, op->cost, op->cost_len, params) : 0;
}

double bmq_palette_op_multiplier (const bmq_palette_op_t *op, const json_t *params)
{
    double f = op && op->mult_len ? s_eval (op, op->mult, op->mult_len, params) : 1;
    return f < 1 ? 1 : f;          /* a factor never shrinks the estimate */
}
