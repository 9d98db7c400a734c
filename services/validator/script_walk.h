/* script_walk — the allowlist walk of a script's syntax tree (issue 8, FR-004).
 *
 * Done in C over the ast objects CPython builds (PyObject_GetAttr on node
 * fields), not by a Python walker: no Python code runs in the validator at
 * all, so nothing in the script or in a crafted tree can reach an
 * interpreter, and a 500-line script walks in well under a millisecond.
 *
 * Two passes. The first counts nodes (cap) and collects every name the
 * script binds anywhere (assignments, defs, arguments, imports, except-as,
 * loop and comprehension targets) and the bpy aliases its imports make. The
 * second applies the rules:
 *   - imports: only rules.modules; `from bpy import` only ops/data/context;
 *     no relative or star imports;
 *   - names and attributes: nothing beginning with "_"; no attribute in
 *     rules.denied_attributes (on any object: types are unknown statically);
 *     a string subscript key beginning with "_" is refused too;
 *   - builtins: a name the script does not bind must be an allowed builtin;
 *     binding a forbidden builtin's name anywhere is refused (a binding in one
 *     scope must not make the real builtin look bound in another);
 *   - no decorators, classes, async, await, match; global/nonlocal only of the
 *     script's own names;
 *   - bpy only through chains: bpy.ops.<category>.<operator>(...) called where
 *     it is named; bpy.data.<allowed collection>…; bpy.context.<allowed
 *     attribute>…; bpy (or an alias) never used as a value or rebound;
 *   - each operator call checked against its RNA (script_ops);
 *   - caps: nodes, loop nesting, literal range bounds and the product of
 *     nested literal ranges, literal subdivision levels / array counts /
 *     resolutions (keywords and attribute assignments), literal repetition
 *     and powers.
 * GIL held. */
#ifndef BMQ_SCRIPT_WALK_H
#define BMQ_SCRIPT_WALK_H

#include "script_policy.h"
#include "script_report.h"

/* Walk `tree` (an ast.Module). Findings go to report; *nodes gets the node
 * count (up to the cap). */
void bmq_script_walk (const bmq_script_policy_t *policy, PyObject *tree, bmq_script_report_t *report, size_t *nodes);

#endif
