/* script_report — findings of a script check and the ValidationResult JSON. */
#include "script_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int line, col;
    size_t seq;
    char rule[24];
    char message[300];
} s_finding_t;

typedef struct {
    s_finding_t *items;
    size_t count, cap;
} s_list_t;

struct bmq_script_report_t {
    s_list_t errors, warnings;
    size_t max_errors, omitted, seq;
    json_t *operators;          /* array, in order of first call */
};

bmq_script_report_t *bmq_script_report_new (size_t max_errors)
{
    bmq_script_report_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->max_errors = max_errors ? max_errors : 1;
    self->operators = json_array ();
    if (!self->operators) {
        free (self);
        return NULL;
    }
    return self;
}

void bmq_script_report_destroy (bmq_script_report_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bmq_script_report_t *self = *self_p;
    free (self->errors.items);
    free (self->warnings.items);
    json_decref (self->operators);
    free (self);
    *self_p = NULL;
}

static void s_add (bmq_script_report_t *self, s_list_t *list, size_t max, int line, int col,
                   const char *rule, const char *fmt, va_list ap)
{
    if (list->count >= max) {
        if (list == &self->errors)
            self->omitted++;
        return;
    }
    if (list->count == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 8;
        s_finding_t *bigger = realloc (list->items, cap * sizeof *bigger);
        if (!bigger) {
            if (list == &self->errors)
                self->omitted++;
            return;
        }
        list->items = bigger;
        list->cap = cap;
    }
    s_finding_t *f = &list->items[list->count++];
    f->line = line > 0 ? line : 0;
    f->col = col > 0 ? col : 0;
    f->seq = self->seq++;
    snprintf (f->rule, sizeof f->rule, "%s", rule);
    vsnprintf (f->message, sizeof f->message, fmt, ap);
}

void bmq_script_report_error (bmq_script_report_t *self, int line, int col, const char *rule, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    s_add (self, &self->errors, self->max_errors, line, col, rule, fmt, ap);
    va_end (ap);
}

void bmq_script_report_warning (bmq_script_report_t *self, int line, int col, const char *rule, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    s_add (self, &self->warnings, self->max_errors, line, col, rule, fmt, ap);
    va_end (ap);
}

void bmq_script_report_operator (bmq_script_report_t *self, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach (self->operators, i, v)
        if (strcmp (json_string_value (v), name) == 0)
            return;
    if (json_array_size (self->operators) < 1000)
        json_array_append_new (self->operators, json_string (name));
}

static size_t s_error_count (const bmq_script_report_t *self)
{
    return self->errors.count + self->omitted;
}

static int s_cmp (const void *a, const void *b)
{
    const s_finding_t *x = a, *y = b;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static json_t *s_list_json (const s_list_t *list)
{
    s_finding_t *sorted = list->count ? malloc (list->count * sizeof *sorted) : NULL;
    json_t *out = json_array ();
    if (list->count && !sorted)
        return out;
    if (list->count) {
        memcpy (sorted, list->items, list->count * sizeof *sorted);
        qsort (sorted, list->count, sizeof *sorted, s_cmp);
    }
    for (size_t i = 0; i < list->count; i++)
        json_array_append_new (out, json_pack ("{s:i, s:i, s:s, s:s}", "line", sorted[i].line,
                                               "col", sorted[i].col, "rule", sorted[i].rule,
                                               "message", sorted[i].message));
    free (sorted);
    return out;
}

json_t *bmq_script_report_json (const bmq_script_report_t *self)
{
    json_t *out = json_pack ("{s:b, s:o, s:o, s:O}", "is_valid", s_error_count (self) == 0,
                             "errors", s_list_json (&self->errors),
                             "warnings", s_list_json (&self->warnings),
                             "operator_list", self->operators);
    if (out && self->omitted)
        json_object_set_new (out, "errors_omitted", json_integer ((json_int_t) self->omitted));
    return out;
}

char *bmq_script_clip (char *out, size_t outlen, const char *text, size_t max)
{
    size_t n = 0, i = 0;
    if (!outlen)
        return out;
    for (; text && text[i] && i < max && n + 4 < outlen; i++)
        out[n++] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
    if (text && text[i] && n + 4 <= outlen) {
        memcpy (out + n, "...", 3);
        n += 3;
    }
    out[n] = 0;
    return out;
}
