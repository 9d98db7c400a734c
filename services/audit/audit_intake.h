/* audit_intake — check an incoming audit.record and turn it into a row.
 *
 * A record that fails a check is never stored. The service answers it with an
 * `error` (code bad_record) naming its (origin, seq), so the sender drops it
 * instead of resending it forever. Limits: data within the BMQ_AUDIT_DATA_*
 * bounds (1 MiB as JSON, 50,000 items, 24 levels: audit_client.h), kind and
 * origin 1..64 printable characters, seq ≥ 1. */
#ifndef BMQ_AUDIT_INTAKE_H
#define BMQ_AUDIT_INTAKE_H

#include "audit_store.h"
#include "codec.h"

#define BMQ_AUDIT_NAME_MAX 64
#define BMQ_AUDIT_MAX_SKEW_MS (5 * 60 * 1000)    /* audit.max_skew_s by default */

/* Fill `row` from `env`. Its strings point into `env`, except row->data and
 * row->flag, which are allocated and handed to *data_out / *flag_out (free
 * them). 0, or -1 with err.
 *
 * Origins (issue 12): row->origin and row->sender are the authenticated key
 * name (env->auth_name), never the body's; with CURVE off (no identity) the
 * envelope's sender stands in. The body's `origin` names the sending process
 * (row->instance): it must be the key name or start with "<key name>-" (what
 * bmq_audit_t makes); anything else is a claim to be someone else, and the
 * record is kept under the real origin with row->flag "forged_origin: …".
 *
 * Time (issue 24): row->ts_ms is the audit's own clock at intake; the
 * sender's (env->ts_ms) is kept as row->sender_ts, and flagged "clock_skew: …"
 * when it is further than the max skew from the audit's. A kind that is not
 * the origin's own (audit_kinds.def) is flagged "kind_not_own: …". Flags
 * join with "; ". */
int bmq_audit_intake (const bmq_envelope_t *env, bmq_audit_row_t *row, char **data_out, char **flag_out,
                      char *err, size_t errlen);
/* How far a sender's clock may be off before its records are flagged (ms; <= 0: the default). */
void bmq_audit_intake_set_max_skew_ms (int64_t ms);
/* The authenticated origin of `env` (auth_name, else sender). */
const char *bmq_audit_intake_origin (const bmq_envelope_t *env);

#endif
