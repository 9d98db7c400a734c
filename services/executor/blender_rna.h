/* blender_rna — the Blender versions the script checks have a record of (issue 30).
 *
 * The script validator checks a script's operators against Blender's RNA recorded per
 * version, proto/script_rna_blender_<version>.json (made by `BLENDER -b --factory-startup
 * --python tests/script/fixtures/record_script_rna.py -- proto/script_rna_blender_X.Y.Z.json`).
 * An executor learns its Blender's version at the link's hello and, before a script goes to
 * the sandbox or live, checks it against that version's record: a Blender with no record
 * refuses every script (saying which file to record), and an operator the validator let
 * through that this Blender does not have refuses the script by name. The sandbox then runs
 * the script on that same Blender and its Python (its own grammar), so no script is checked
 * by one parser or table and run by another.
 *
 *   char why[400];
 *   if (bmq_blender_rna_check ("4.3.2", verdict_operator_list, why, sizeof why) < 0) refuse (why);
 */
#ifndef BMQ_BLENDER_RNA_H
#define BMQ_BLENDER_RNA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* True when text is a version as Blender reports it: 2 to 4 dot-separated numbers of 1 to 4
 * digits ("4.3.2"); nothing else is ever put in a path. */
bool bmq_blender_version_valid (const char *text);

/* The recorded RNA's path for a valid version: <data dir>/proto/script_rna_blender_<version>.json
 * (BLENDMQ_SCRIPT_RNA_DIR, when set, replaces <data dir>/proto). 0, or -1 for an invalid version. */
int bmq_blender_rna_path (const char *version, char *path, size_t len);

/* 0 when a script whose validator verdict listed `operators` (an array of "bpy.ops.CAT.NAME"
 * strings, or NULL) may run on Blender `version`: that version's RNA is recorded and has every
 * operator. -1 otherwise, the reason in why (the version, and the command that records it when
 * there is no record; or the operators this Blender lacks). A version that is not valid (the
 * Blender is not connected yet, or said something else) is refused too. */
int bmq_blender_rna_check (const char *version, const json_t *operators, char *why, size_t whylen);

#endif
