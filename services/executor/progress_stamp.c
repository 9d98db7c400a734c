/* progress_stamp — sequence and instance on every progress event; see progress_stamp.h. */
#include "progress_stamp.h"
#include "peer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static atomic_int_fast64_t s_seq;
static char s_name[64];

void bmq_progress_stamp_name (const char *name) { snprintf (s_name, sizeof s_name, "%s", name ? name : ""); }

int64_t bmq_progress_stamp (json_t *body)
{
    int64_t seq = (int64_t) atomic_fetch_add (&s_seq, 1) + 1;
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    json_object_set_new (body, "seq", json_integer ((json_int_t) seq));
    json_object_set_new (body, "instance", json_string (bmq_instance_id ()));
    if (*s_name) json_object_set_new (body, "executor", json_string (s_name));
    json_object_set_new (body, "ts_us", json_integer ((json_int_t) now.tv_sec * 1000000 + now.tv_nsec / 1000));
    return seq;
}
