/* audit_tally — refusals counted, not listed: one aggregate per peer per
 * second (and status, code, method, route, token name), with a count.
 *
 * A flood of refused requests (56,000 in 6 s) must neither flood the audit
 * nor be dropped from it: each refusal is folded into its aggregate; only a
 * list already holding `cap` aggregates drops one, and that is counted too,
 * for a record of its own (http.refused.dropped). Not thread-safe: the
 * caller holds its lock around both calls. */
#ifndef BMQ_AUDIT_TALLY_H
#define BMQ_AUDIT_TALLY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Fold `rec` ({peer, status, code, method, path, who?: {name}, ts (ms), …},
 * borrowed) into `list` (a JSON array of aggregates): the same peer, second
 * and request kind gets count + 1 and last_ts; else a copy of rec with
 * second and count 1 is appended, or *dropped + 1 when `list` holds `cap`. */
void bmq_audit_tally_add (json_t *list, const json_t *rec, size_t cap, size_t *dropped);
/* Take out of `list` the aggregates of seconds that are over at now_ms (each
 * is then final: one record per peer per second). A new array. */
json_t *bmq_audit_tally_take_complete (json_t *list, int64_t now_ms);

#endif
