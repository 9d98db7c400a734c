/* verdict_text — see verdict_text.h. */
#include "verdict_text.h"

#include <string.h>

const char *bmq_verdict_clip (char *buf, size_t size, const char *s, size_t len)
{
    size_t keep = len < size - 4 ? len : size - 4, i;
    for (i = 0; i < keep; i++)
        buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    strcpy (buf + i, keep < len ? "..." : "");
    return buf;
}
