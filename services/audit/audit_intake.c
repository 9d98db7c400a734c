/* audit_intake — validation of incoming audit records. */
#include "audit_intake.h"
#include "audit_client.h"
#include "audit_kinds.h"

#include <stdarg.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

/* Names end up in listings and in file names of exports: printable ASCII only. */
static bool s_name_ok (const char *s)
{
    if (!s || !*s || strlen (s) > BMQ_AUDIT_NAME_MAX) return false;
    for (const unsigned char *p = (const unsigned char *) s; *p; p++)
        if (*p < 0x21 || *p > 0x7e) return false;
    return true;
}

static int64_t s_max_skew_ms = BMQ_AUDIT_MAX_SKEW_MS;

void bmq_audit_intake_set_max_skew_ms (int64_t ms) { s_max_skew_ms = ms > 0 ? ms : BMQ_AUDIT_MAX_SKEW_MS; }

static void s_flag (char *flags, size_t len, const char *fmt, ...)
{
    size_t used = strlen (flags);
    if (used && used + 2 < len) { strcat (flags, "; "); used += 2; }
    va_list ap;
    va_start (ap, fmt);
    if (used < len) vsnprintf (flags + used, len - used, fmt, ap);
    va_end (ap);
}

const char *bmq_audit_intake_origin (const bmq_envelope_t *env)
{
    return env->auth_name[0] ? env->auth_name : env->sender;
}

int bmq_audit_intake (const bmq_envelope_t *env, bmq_audit_row_t *row, char **data_out, char **flag_out,
                      char *err, size_t errlen)
{
    *data_out = NULL;
    *flag_out = NULL;
    memset (row, 0, sizeof *row);
    const char *kind = bmq_body_str (env, "kind");
    const char *origin = bmq_body_str (env, "origin");
    int64_t seq = bmq_body_int (env, "seq", 0);
    const json_t *data = json_object_get (env->body, "data");
    /* without an origin, (sender, seq) would collide across sender restarts
     * and a new record would be dropped as a duplicate of an old one */
    if (!s_name_ok (origin)) { ERR ("record has no valid origin (1..%d printable characters)", BMQ_AUDIT_NAME_MAX); return -1; }
    if (seq < 1) { ERR ("record seq must be an integer >= 1"); return -1; }
    if (!s_name_ok (kind)) { ERR ("record kind must be 1..%d printable characters", BMQ_AUDIT_NAME_MAX); return -1; }
    if (!json_is_object (data)) { ERR ("record data must be a map"); return -1; }
    size_t size = json_dumpb (data, NULL, 0, JSON_COMPACT), items;
    int depth;
    if (size == 0 || size > BMQ_AUDIT_DATA_MAX) {
        ERR ("record data of %zu bytes exceeds the %u byte limit", size, BMQ_AUDIT_DATA_MAX);
        return -1;
    }
    bmq_audit_data_shape (data, &items, &depth);
    if (items > BMQ_AUDIT_DATA_ITEMS) { ERR ("record data of %zu items exceeds the %d item limit", items, BMQ_AUDIT_DATA_ITEMS); return -1; }
    if (depth > BMQ_AUDIT_DATA_DEPTH) { ERR ("record data nested %d deep exceeds the %d level limit", depth, BMQ_AUDIT_DATA_DEPTH); return -1; }
    char *text = json_dumps (data, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) { ERR ("cannot serialise record data"); return -1; }
    const char *plan_id = json_string_value (json_object_get (data, "plan_id"));
    /* who sent it is what the key says; the body only names the process */
    const char *real = bmq_audit_intake_origin (env);
    if (!s_name_ok (real)) { free (text); ERR ("the sender has no usable identity"); return -1; }
    /* every reason to doubt the record, kept with it (audit show shows them) */
    char flags[600] = "";
    size_t n = strlen (real);
    if (strncmp (origin, real, n) || (origin[n] != 0 && origin[n] != '-'))
        s_flag (flags, sizeof flags, "forged_origin: the body claimed %s", origin);
    int64_t now = bmq_now_ms (), skew = env->ts_ms - now;
    if (skew > s_max_skew_ms || -skew > s_max_skew_ms)
        s_flag (flags, sizeof flags, "clock_skew: the sender's time is %+.0f s off the audit's", skew / 1000.0);
    if (!bmq_audit_kind_own (real, kind))
        s_flag (flags, sizeof flags, "kind_not_own: %s does not write %s records (audit_kinds.def)", real, kind);
    if (flags[0]) *flag_out = strdup (flags);
    /* the time is the audit's own: a sender cannot date a record a year back or ten ahead */
    *row = (bmq_audit_row_t) {
        .ts_ms = now, .sender_ts = env->ts_ms, .cid = env->cid, .kind = kind, .sender = real, .origin = real,
        .instance = origin, .seq = seq, .plan_id = s_name_ok (plan_id) ? plan_id : NULL, .data = text, .flag = *flag_out,
    };
    *data_out = text;
    return 0;
}
