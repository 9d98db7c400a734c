/* inspect_once — one operator, blocking, for the planner's dialogue: the
 * non-blocking client of inspect.c driven for one round; see inspect.h. */
#include "inspect.h"
#include "bus.h"

#define S_SLICE_MS 50

int bmq_inspect_once (const char *gateway, const char *tool_name, const bmq_inspect_opts_t *opts, int timeout_ms,
                      bool (*cancelled) (void *ctx), void *ctx, json_t **tool, char *why, size_t whylen)
{
    *tool = NULL;
    if (!gateway || !*gateway) { snprintf (why, whylen, "no gateway endpoint is configured"); return -1; }
    if (!tool_name || !*tool_name) { snprintf (why, whylen, "no operator named"); return -1; }
    bmq_inspect_opts_t o = opts ? *opts : (bmq_inspect_opts_t) { 0 };
    o.round_ms = timeout_ms > 0 ? timeout_ms : 3000;
    o.max_rounds = 1;
    json_t *ops = json_pack ("[s]", tool_name);
    bmq_inspect_t *in = bmq_inspect_new (gateway, ops, &o);
    json_decref (ops);
    if (!in) { snprintf (why, whylen, "out of memory"); return -1; }
    int rc = -1;
    bool stopped = false;
    while (bmq_inspect_state (in) == BMQ_INSPECT_FETCHING) {
        if (cancelled && cancelled (ctx)) { snprintf (why, whylen, "cancelled"); stopped = true; break; }
        bmq_inspect_tick (in);
        zsock_t *sock = bmq_inspect_sock (in);
        if (!sock) continue;        /* the round ended (tick) */
        int64_t wait = bmq_inspect_due (in) - bmq_mono_ms ();
        zmq_pollitem_t item = { zsock_resolve (sock), 0, ZMQ_POLLIN, 0 };
        int n = zmq_poll (&item, 1, wait < 0 ? 0 : wait > S_SLICE_MS ? S_SLICE_MS : (long) wait);
        if (n < 0 && zsys_interrupted) { snprintf (why, whylen, "interrupted"); stopped = true; break; }
        if (n > 0) bmq_inspect_on_message (in);
    }
    if (!stopped) {
        const json_t *answer = json_object_get (bmq_inspect_result (in), tool_name);
        if (json_is_object (answer)) { *tool = json_incref ((json_t *) answer); rc = 0; }
        else if (answer) snprintf (why, whylen, "Blender has no operator %.120s (unknown_tool)", tool_name);
        else if (*bmq_inspect_code (in)) snprintf (why, whylen, "the gateway answered %s", bmq_inspect_detail (in));
        else snprintf (why, whylen, "%s (is the gateway running, with an executor and Blender?)", bmq_inspect_detail (in));
    }
    bmq_inspect_destroy (&in);
    return rc;
}
