/* script_walk — the allowlist walk of a script's syntax tree (issue 8, FR-004;
 * issue 11: sound name tracking and the rule of last resort).
 *
 * Done in C over the ast objects CPython builds (PyObject_GetAttr on node
 * fields), not by a Python walker: no Python code runs in the validator at
 * all, so nothing in the script or in a crafted tree can reach an
 * interpreter, and a 500-line script walks in about a millisecond.
 *
 * Why it is sound (what a program that differs from what was checked could do):
 *   1. The walker's judgements depend on the syntax at the point of use and on
 *      what a name is bound to only for PINNED names: names bound by an import
 *      or a def. Every other check (attribute and method names, underscores,
 *      keywords, caps) is the same whatever a value is, so no rebinding,
 *      aliasing or flow of values can change its outcome.
 *   2. A pinned name must have exactly one binding site in the whole script,
 *      all scopes and all binding forms counted (assignment, augmented
 *      assignment, import, for/with/except targets, walrus, comprehension
 *      variables, parameters and lambda parameters, del, global/nonlocal,
 *      def; class and match are refused outright). So wherever it is used it
 *      denotes that one binding, or nothing (NameError), or — outside the
 *      scope of a function-local binding — a builtin of the same name, which
 *      is itself allowlisted; never something else.
 *   3. Module names (import X [as Y]) and bpy aliases may only head an
 *      attribute chain: they never flow into variables, containers, returns,
 *      defaults or attributes, so there is no other path to a module.
 *   4. Rule of last resort: a call must resolve to a checked bpy operator
 *      (RNA-checked where it is named), an allowlisted builtin the script
 *      never binds, a pinned def / from-import / `f = lambda` bound once, a
 *      public attribute chain of an allowed module, or a method whose NAME is
 *      in rules.methods. A callable handed to map/filter/iter/key= must be a
 *      lambda or such a name. Anything the walker cannot resolve is rejected.
 *      Method names are trusted as names, so none is ever assigned or deleted
 *      (an object with an instance dict — a function, an exception, a
 *      random.Random — could otherwise carry any callable under one), and
 *      attributes of import- and def-bound names are read-only (math.sin = …).
 *   5. `except:` and `except BaseException` are refused, so the live
 *      watchdog's timeout (a BaseException) cannot be swallowed.
 * The same text is what runs: decoded once as UTF-8, parsed with
 * PyCF_IGNORE_COOKIE exactly as compile() of a str does in the sandbox and
 * the add-on (tests/script/test_script_differential.c checks it).
 *
 * Two passes. The first counts nodes (cap), counts every binding site per
 * name, notes which names are pinned and the bpy aliases imports make. The
 * second applies the rules:
 *   - imports: only rules.modules; `from bpy import` only ops/data/context;
 *     no relative or star imports;
 *   - names and attributes: nothing beginning with "_"; no attribute in
 *     rules.denied_attributes (on any object: types are unknown statically);
 *     a string subscript key beginning with "_" is refused too;
 *   - builtins: a name the script does not bind must be an allowed builtin;
 *     binding a forbidden builtin's name anywhere is refused;
 *   - "rebind": a pinned name bound more than once; "module": a module name
 *     used as a value; "call": an unresolvable call (point 4), print(file=);
 *     "except": a bare except;
 *   - no decorators, classes, async, await, match; global/nonlocal only of the
 *     script's own, unpinned names;
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
