/* audit_tally — refusals folded into per-peer, per-second aggregates. */
#include "audit_tally.h"

#include <stdbool.h>
#include <string.h>

/* Only the most recent aggregates are looked at: a second's refusals from one
 * peer sit together at the end of the list. */
#define LOOK_BACK 64

static bool s_same_str (const json_t *a, const json_t *b, const char *key)
{
    const char *x = json_string_value (json_object_get (a, key)), *y = json_string_value (json_object_get (b, key));
    return (!x && !y) || (x && y && !strcmp (x, y));
}

static bool s_same (const json_t *agg, const json_t *rec, int64_t second)
{
    return json_integer_value (json_object_get (agg, "second")) == second
        && json_integer_value (json_object_get (agg, "status")) == json_integer_value (json_object_get (rec, "status"))
        && s_same_str (agg, rec, "peer") && s_same_str (agg, rec, "code") && s_same_str (agg, rec, "method")
        && s_same_str (agg, rec, "path") && s_same_str (json_object_get (agg, "who"), json_object_get (rec, "who"), "name");
}

void bmq_audit_tally_add (json_t *list, const json_t *rec, size_t cap, size_t *dropped)
{
    int64_t ts = json_integer_value (json_object_get (rec, "ts")), second = ts / 1000;
    size_t n = json_array_size (list);
    for (size_t i = n, seen = 0; i-- > 0 && seen < LOOK_BACK; seen++) {
        json_t *agg = json_array_get (list, i);
        if (!s_same (agg, rec, second)) continue;
        json_object_set_new (agg, "count", json_integer (json_integer_value (json_object_get (agg, "count")) + 1));
        json_object_set_new (agg, "last_ts", json_integer (ts));
        return;
    }
    if (n >= cap) { (*dropped)++; return; }
    json_t *agg = json_deep_copy (rec);
    json_object_set_new (agg, "second", json_integer (second));
    json_object_set_new (agg, "count", json_integer (1));
    json_object_set_new (agg, "last_ts", json_integer (ts));
    json_array_append_new (list, agg);
}

json_t *bmq_audit_tally_take_complete (json_t *list, int64_t now_ms)
{
    json_t *done = json_array ();
    int64_t now_s = now_ms / 1000;
    for (size_t i = 0; i < json_array_size (list); ) {
        json_t *agg = json_array_get (list, i);
        if (json_integer_value (json_object_get (agg, "second")) < now_s) {
            json_array_append (done, agg);
            json_array_remove (list, i);
        }
        else i++;
    }
    return done;
}
