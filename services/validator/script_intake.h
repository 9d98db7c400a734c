/* script_intake — one script out of a request (a reply with fences or prose,
 * or an attachment), decoded and checked exactly once (issue 11):
 *   - a leading UTF-8 byte-order mark is removed, with a warning: the text
 *     that is validated, sealed, sandboxed and run never carries one (any
 *     other BOM, an encoding declaration other than UTF-8, invalid UTF-8 or a
 *     NUL byte is refused by bmq_script_validate);
 *   - a reply that parses as Python as a whole IS the script, untouched;
 *     otherwise its fenced blocks, otherwise the plain-text heuristic
 *     (script_extract.h), and every line left out is listed in the verdict's
 *     warnings (rule "extract") with its line number in the reply;
 *   - the verdict carries "source" ("whole" | "fenced" | "plain" |
 *     "attachment") and "text": exactly what was validated, so the CLI, HTTP
 *     and MCP show the person the program that will run. */
#ifndef BMQ_SCRIPT_INTAKE_H
#define BMQ_SCRIPT_INTAKE_H

#include "script_extract.h"
#include "script_validator.h"

/* The verdict (new reference; NULL only when out of memory). ex receives the
 * extracted script (ex->script NULL when extraction failed); clear it with
 * bmq_script_extracted_clear. */
json_t *bmq_script_intake (bmq_script_validator_t *validator, const char *mode, const char *reply, size_t reply_len,
                           const char *att_text, size_t att_len, const char *att_name, bmq_script_extracted_t *ex);

#endif
