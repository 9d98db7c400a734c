/* script_report — the findings of one script check: errors and warnings with
 * their line, column and rule, the operators the script calls, and the
 * ValidationResult JSON built from them (seed 003's key entity):
 *   {"is_valid": bool,
 *    "errors":   [{"line": n, "col": n, "rule": "...", "message": "..."}],
 *    "warnings": [same shape],
 *    "operator_list": ["bpy.ops.mesh.primitive_cube_add", ...]}
 * Lines and columns are 1-based (the column counts UTF-8 bytes, as Python's
 * col_offset does, plus one); 0 means "the whole script". Findings come out
 * sorted by position. At most `max_errors` errors are kept; the rest are
 * counted in "errors_omitted", so a hostile script cannot make the verdict
 * huge. Messages quote at most a few dozen bytes of the script, clipped to
 * printable ASCII. */
#ifndef BMQ_SCRIPT_REPORT_H
#define BMQ_SCRIPT_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct bmq_script_report_t bmq_script_report_t;

bmq_script_report_t *bmq_script_report_new (size_t max_errors);
void bmq_script_report_destroy (bmq_script_report_t **self_p);

void bmq_script_report_error (bmq_script_report_t *self, int line, int col, const char *rule, const char *fmt, ...)
    __attribute__ ((format (printf, 5, 6)));
void bmq_script_report_warning (bmq_script_report_t *self, int line, int col, const char *rule, const char *fmt, ...)
    __attribute__ ((format (printf, 5, 6)));
/* Record an operator the script calls (kept once, in order of first call). */
void bmq_script_report_operator (bmq_script_report_t *self, const char *name);

/* The ValidationResult (new reference). */
json_t *bmq_script_report_json (const bmq_script_report_t *self);

/* Copy at most `max` bytes of `text` into out, as printable ASCII ("?" for
 * anything else, "..." when cut). Returns out. */
char *bmq_script_clip (char *out, size_t outlen, const char *text, size_t max);

#endif
