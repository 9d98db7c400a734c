/* verdict_text — quoting hostile input inside a verdict or a palette error. */
#ifndef BMQ_VERDICT_TEXT_H
#define BMQ_VERDICT_TEXT_H

#include <stddef.h>

/* Copy at most size-4 bytes of s[0..len) into buf, printable ASCII only (the
 * message must stay valid UTF-8 whatever the input held), "..." when cut. */
const char *bmq_verdict_clip (char *buf, size_t size, const char *s, size_t len);

#endif
