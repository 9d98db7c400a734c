/* script_validator — static validation of a BPY script (seed 003 FR-004,
 * issue 8): the public entry point of the bmq_script library.
 *
 *   json_t *rna = bmq_script_rna_load (path, err, sizeof err);      // or fetched (inspect)
 *   bmq_script_validator_t *v = bmq_script_validator_new (NULL, rna, err, sizeof err);
 *   json_t *verdict = bmq_script_validate (v, text, len);
 *
 * The verdict is the ValidationResult (script_report.h) plus
 *   "sha256": hex of the exact bytes checked (bind a sandbox run and a live
 *             confirmation to it),
 *   "stats": {"bytes", "lines", "nodes", "parse_ms", "cached", "ms"}.
 * A validator keeps its last verdicts (script_cache.h, by sha256 of the
 * exact bytes; its rules and RNA never change): the same bytes again get a
 * copy of the same verdict, with "cached": true, "parse_ms": 0 and this
 * call's "ms".
 * Stages, in order: size cap, encoding (UTF-8, no NUL byte, no coding
 * declaration other than UTF-8: Blender must decode exactly what was
 * checked), Python 3.11's parser (syntax errors with line and column), then
 * the allowlist walk (script_walk.h) and the operator RNA checks
 * (script_ops.h).
 *
 * The embedded interpreter (script_python.h) starts on the first
 * bmq_script_validator_new and lives as long as the process. A validator is
 * read-only once built: bmq_script_validate may be called from any number of
 * threads at once (each call takes the GIL). The script is input from an AI
 * or a network peer: nothing here asserts on it. */
#ifndef BMQ_SCRIPT_VALIDATOR_H
#define BMQ_SCRIPT_VALIDATOR_H

#include <jansson.h>
#include <stddef.h>

typedef struct bmq_script_validator_t bmq_script_validator_t;

/* rules: configuration laid over the default rules (script_rules.h), may be
 * NULL. rna: "bpy.ops.X.Y" → the add-on's rna_info result (or null when
 * Blender lacks the operator), borrowed; NULL refuses every operator call
 * (nothing can be checked). NULL with a reason in err when the rules are
 * malformed or Python cannot start. */
bmq_script_validator_t *bmq_script_validator_new (const json_t *rules, const json_t *rna, char *err, size_t errlen);
void bmq_script_validator_destroy (bmq_script_validator_t **self_p);

/* Validate `len` bytes. Returns a new verdict; NULL only when out of memory. */
json_t *bmq_script_validate (bmq_script_validator_t *self, const char *script, size_t len);

/* The canonical ast.dump (script_exec.canonical_dump: no None or [] fields, the same
 * text on Python 3.11 to 3.14) of the tree the validator walks for `len` bytes of UTF-8 (the
 * same parse as bmq_script_validate: PyCF_ONLY_AST | PyCF_IGNORE_COOKIE), for
 * the differential test against the sandbox's and the add-on's compile.
 * malloc'd, or NULL when the text does not parse (msg says why). Needs a
 * validator to exist (the interpreter is up). Runs the stdlib's ast module. */
char *bmq_script_ast_dump (const char *text, size_t len, char *msg, size_t msglen);

/* Read an RNA table file (a JSON object). New reference, or NULL with err. */
json_t *bmq_script_rna_load (const char *path, char *err, size_t errlen);

/* The RNA table shipped in proto/ (data, like the palette), recorded from Blender 3.4.1:
 * <data dir>/proto/script_rna_blender_3.4.1.json. */
#define BMQ_SCRIPT_RNA_FIXTURE "proto/script_rna_blender_3.4.1.json"

#endif
