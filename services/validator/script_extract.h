/* script_extract — the Python script inside a planner's (LLM's) reply
 * (seed 003 FR-003), before static validation.
 *
 * Sources, in order of precedence (the caller tries the whole reply as a
 * script first: a reply that parses as Python is the script, untouched):
 *   attachment  a file attached to the request (name ending in .py): taken as is;
 *   fenced      Markdown code blocks (``` or ~~~, up to 3 spaces of indent).
 *               Blocks tagged python / py / python3 / bpy win; otherwise the
 *               untagged ones. Several chosen blocks are joined in order
 *               (an LLM sometimes splits one script); an unclosed block runs
 *               to the end of the reply (a reply cut short);
 *   plain       no fence: the text is the script, minus prose lines before the
 *               first and after the last line that looks like Python.
 * Every non-blank line left out (prose, fence markers' surroundings, blocks in
 * other languages) is counted in ndropped and its number kept in dropped[].
 * Prose with no code, code blocks in other languages only, or prose mixed
 * into the middle of unfenced code is an error whose message tells the
 * planner how to reformat (FR-005: the planner retries at most twice).
 * Mode is "format-to-bpy" or "contextual" (FR-002); both extract, since a
 * contextual reply with a fence is still one script.
 * Input is capped (BMQ_SCRIPT_EXTRACT_MAX) before anything is scanned. */
#ifndef BMQ_SCRIPT_EXTRACT_H
#define BMQ_SCRIPT_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>

#define BMQ_SCRIPT_EXTRACT_MAX (1u << 20)

/* Lines of the reply that are not part of the extracted script (1-based line
 * numbers in the reply): listed back to the sender, never dropped silently. */
#define BMQ_SCRIPT_DROPPED_MAX 64

typedef struct {
    char *script;           /* malloc'd, NUL-terminated; NULL on error */
    int dropped[BMQ_SCRIPT_DROPPED_MAX];    /* non-blank lines left out (first ones) */
    size_t ndropped;        /* how many in all (may exceed BMQ_SCRIPT_DROPPED_MAX) */
    size_t len;
    const char *source;     /* "attachment" | "fenced" | "plain" */
    int blocks;             /* fenced blocks joined (0 otherwise) */
    bool reformat;          /* on error: the planner should be asked to reformat */
    char error[320];        /* on error: why, written for the planner */
} bmq_script_extracted_t;

/* Extract from `text` (len bytes; may be NULL when an attachment is given).
 * attachment/att_len/att_name: an attached file, or NULL. Returns 0 with
 * out->script set, or -1 with out->error (and out->reformat). Free with
 * bmq_script_extracted_clear. */
int bmq_script_extract (const char *mode, const char *text, size_t len, const char *attachment, size_t att_len,
                        const char *att_name, bmq_script_extracted_t *out);
void bmq_script_extracted_clear (bmq_script_extracted_t *out);

/* What the planner is told when a reply holds no usable script. */
#define BMQ_SCRIPT_REFORMAT_HINT \
    "answer with exactly one ```python fenced code block holding the whole Blender script, and no prose"

#endif
