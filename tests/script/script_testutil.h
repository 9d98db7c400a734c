/* script_testutil — what the script tests and benchmarks share: reading
 * files, listing a corpus folder, a generated modelling script of N lines,
 * percentiles and the bench JSON line. */
#ifndef BMQ_SCRIPT_TESTUTIL_H
#define BMQ_SCRIPT_TESTUTIL_H

#include <jansson.h>
#include <stddef.h>

/* The whole file (malloc'd, NUL-terminated), or NULL. */
char *stu_read (const char *path, size_t *len);
/* Sorted *.py paths under BMQ_SOURCE_DIR/tests/script/corpus/<which>, subfolders included
 * (malloc'd array of malloc'd strings). */
char **stu_corpus (const char *which, size_t *count);
/* The class of a corpus file: its folder under corpus/<which>/ ("binding", …), or "-" at the top. */
const char *stu_corpus_class (const char *path, char *buf, size_t len);
void stu_free_list (char **list, size_t count);
/* The "# expect: ..." words of a corpus file: "static RULE" (the validator refuses it with
 * that rule), "sandbox VERDICT" (valid; the sandbox stops it) or "pass harmless" (valid, runs
 * clean in the sandbox, and is harmless live: e.g. it branches on something that differs
 * between the sandbox and the live Blender, but every branch stays inside the rules). */
void stu_expect (const char *text, char *kind, size_t kl, char *what, size_t wl);
/* The same for a file of `len` bytes that may hold NULs (UTF-16/32). */
void stu_expect_len (const char *text, size_t len, char *kind, size_t kl, char *what, size_t wl);
/* A plausible modelling script of about `lines` lines (malloc'd). */
char *stu_script_of_lines (int lines, size_t *len);
double stu_now_ms (void);
double stu_percentile (double *v, size_t n, double p);
void stu_emit (const char *bench, const char *metric, double value, const char *unit);

#endif
