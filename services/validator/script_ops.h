/* script_ops — one bpy.ops call checked against the operator's RNA, the way
 * inspect_tool reports it (the add-on's rna_info shape: params with
 * identifier, type INT/FLOAT/BOOLEAN/ENUM/STRING/POINTER/COLLECTION, subtype,
 * array_length, min/max (hard limits), enum_items, enum_flag, max_len).
 *
 * The operator must be in the RNA table (seed acceptance test C), take its
 * parameters by keyword only (no execution context, no **kwargs), name only
 * parameters it has, and every literal value must fit the parameter's type,
 * array length, enum items, length and hard bounds. STRING parameters with a
 * path subtype (FILE_PATH, DIR_PATH, …) and POINTER/COLLECTION parameters are
 * refused whatever their value. Values computed at run time are left to the
 * sandbox run. GIL held. */
#ifndef BMQ_SCRIPT_OPS_H
#define BMQ_SCRIPT_OPS_H

#include "script_policy.h"
#include "script_report.h"

/* Check `call` (an ast.Call of bpy.ops.<category>.<name>) at line/col. */
void bmq_script_ops_check (const bmq_script_policy_t *policy, const char *category, const char *name,
                           PyObject *call, int line, int col, bmq_script_report_t *report);

#endif
