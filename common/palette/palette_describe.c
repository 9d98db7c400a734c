/* palette_describe — the palette as JSON: seed 001's shape (bmq_palette_to_json)
 * and the full description an AI plans from (bmq_palette_describe). */
#include "palette_internal.h"

/* ---- publishing ----------------------------------------------------------- */

static json_t *s_param_json (const bmq_palette_param_t *p)
{
    json_t *o = json_pack ("{s:s, s:b}", "type", palette_type_names[p->type], "required", p->required);
    if (!o) return NULL;
    if (p->def) json_object_set (o, "default", p->def);
    if (p->type == PALETTE_INT) {
        json_object_set_new (o, "min", json_integer (p->imin));
        json_object_set_new (o, "max", json_integer (p->imax));
    }
    else if (p->type == PALETTE_FLOAT || p->type == PALETTE_VEC3 || p->type == PALETTE_COLOR) {
        json_object_set_new (o, "min", json_real (p->min));
        json_object_set_new (o, "max", json_real (p->max));
    }
    if (p->type == PALETTE_STRING) json_object_set_new (o, "max_len", json_integer ((json_int_t) p->max_len));
    if (p->items) json_object_set (o, "items", p->items);
    if (p->description) json_object_set_new (o, "description", json_string (p->description));
    return o;
}

static json_t *s_params_json (const bmq_palette_op_t *op)
{
    json_t *params = json_object ();
    for (size_t j = 0; params && j < op->param_count; j++)
        json_object_set_new (params, op->params[j].name, s_param_json (&op->params[j]));
    return params;
}

json_t *bmq_palette_to_json (const bmq_palette_t *self)
{
    json_t *out = json_object ();
    for (size_t i = 0; self && out && i < self->op_count; i++)
        json_object_set_new (out, self->ops[i].name, s_params_json (&self->ops[i]));
    return out;
}

json_t *bmq_palette_describe (const bmq_palette_t *self)
{
    if (!self) return NULL;
    json_t *ops = json_object ();
    for (size_t i = 0; ops && i < self->op_count; i++) {
        const bmq_palette_op_t *op = &self->ops[i];
        json_t *o = json_pack ("{s:b, s:b, s:b, s:b, s:o}", "creates", op->creates, "acts_on", op->acts_on,
                               "deletes", op->deletes, "needs_target", bmq_palette_op_needs_target (op),
                               "params", s_params_json (op));
        if (o && op->description) json_object_set_new (o, "description", json_string (op->description));
        if (o && op->path) json_object_set_new (o, "path", json_true ());
        if (o && op->cost_src) json_object_set (o, "cost", op->cost_src);
        json_object_set_new (ops, op->name, o);
    }
    return json_pack ("{s:i, s:{s:i, s:i, s:f}, s:o}", "version", self->version,
                      "limits", "max_steps", self->max_steps, "max_name_len", self->max_name_len,
                      "max_vertices", self->max_vertices, "operations", ops);
}
