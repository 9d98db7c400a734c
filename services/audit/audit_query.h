/* audit_query — answer an audit.query with one page of records.
 *
 * Request body (every field optional):
 *   filter: {since, until (ms since epoch, on the sender's ts), cid,
 *            plan (every story that mentions this plan_id), kind (a glob: "plan.*")}
 *   order:  "asc" (oldest first, the default) or "desc"
 *   limit:  records per page, 1..BMQ_AUDIT_PAGE_MAX (default 100)
 *   after:  the `next` of the previous page
 * Reply body: {records: [{id, ts, stored_at, cid, kind, sender, origin, seq,
 *   plan_id?, data}], next?: [ts, id]} — `next` is there when more may follow.
 *
 * Paging is keyset paging on (ts, id), never OFFSET: every page costs the same
 * wherever it is, and records stored meanwhile do not shift the pages. A page
 * also stops before BMQ_AUDIT_PAGE_BYTES of data (JSON text) unless one record
 * alone is bigger: data is at most 1 MiB as JSON, and msgpack is at most ~2.3×
 * JSON (short floats), so a page always fits the 4 MiB body limit. Likewise
 * it stops before BMQ_AUDIT_PAGE_ITEMS items (the decoder allows 100,000). */
#ifndef BMQ_AUDIT_QUERY_H
#define BMQ_AUDIT_QUERY_H

#include "audit_store.h"
#include <jansson.h>
#include <stdbool.h>

#define BMQ_AUDIT_PAGE_MAX   500
#define BMQ_AUDIT_PAGE_BYTES (1u << 20)
#define BMQ_AUDIT_PAGE_ITEMS 90000

/* The audit.result body, or NULL with err; *bad_request tells a malformed
 * query (the asker's fault) from a database failure. */
json_t *bmq_audit_query (bmq_audit_store_t *store, const json_t *body, bool *bad_request, char *err, size_t errlen);

#endif
