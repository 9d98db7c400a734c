/* audit_kinds — the kinds each origin may write (audit_kinds.def). */
#include "audit_kinds.h"

#include <fnmatch.h>
#include <string.h>

static const struct { const char *origin, *kind; } s_kinds[] = {
#define BMQ_AUDIT_KIND(origin, kind) { origin, kind },
#include "audit_kinds.def"
#undef BMQ_AUDIT_KIND
};
#define N_KINDS (sizeof s_kinds / sizeof *s_kinds)

bool bmq_audit_kind_own (const char *origin, const char *kind)
{
    bool listed = false;
    for (size_t i = 0; i < N_KINDS; i++) {
        bool everyone = !strcmp (s_kinds[i].origin, "*");
        if (!everyone && strcmp (s_kinds[i].origin, origin)) continue;
        listed = listed || !everyone;
        if (fnmatch (s_kinds[i].kind, kind, 0) == 0) return true;
    }
    return !listed;
}
