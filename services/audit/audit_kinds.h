/* audit_kinds — may this origin write this kind of record? The table is
 * audit_kinds.def. */
#ifndef BMQ_AUDIT_KINDS_H
#define BMQ_AUDIT_KINDS_H

#include <stdbool.h>

/* true when `kind` is one of `origin`'s own, or `origin` has no row at all. */
bool bmq_audit_kind_own (const char *origin, const char *kind);

#endif
