/* cli_mcp — `blendmq mcp`: an MCP server on stdin/stdout, for AI assistants
 * that start their servers as processes (Claude Desktop, Claude Code, Gemini
 * CLI, Cursor: {"command": "blendmq", "args": ["mcp"]}).
 *
 * One JSON-RPC message per line each way; stdout carries nothing else (logs
 * go to stderr). One loop polls stdin and one heartbeated DEALER to the
 * gateway, so several tool calls run at once, ping answers while a plan runs,
 * and notifications/cancelled stops the call it names. Tool calls are the
 * gateway requests every other client sends (mcp_server, mcp_call). */
#include "bus.h"
#include "cli.h"
#include "log.h"
#include "mcp_server.h"
#include "peer.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINE   (16u << 20)      /* one message; longer lines are refused */
#define MAX_CALLS  64               /* tool calls in flight */

typedef struct {
    bmq_mcp_call_t *call;
    int64_t         started;
} s_inflight_t;

typedef struct {
    bmq_mcp_t        *mcp;
    bmq_mcp_session_t session;
    bmq_peer_t       *gateway;
    const char       *endpoint;
    int               interval;
    zhashx_t         *calls;         /* cid → s_inflight_t* */
    char             *line;          /* bytes read, not yet a whole line */
    size_t            len;
    bool              skipping;      /* inside an oversized line */
    bool              out_broken;
} s_stdio_t;

static void s_inflight_free (void **item)
{
    s_inflight_t *f = *item;
    if (!f) return;
    bmq_mcp_call_destroy (&f->call);
    free (f);
    *item = NULL;
}

static void s_write (s_stdio_t *st, const json_t *msg)
{
    char *text = json_dumps (msg, BMQ_MCP_JSON_FLAGS);
    if (!text) return;
    if (!st->out_broken && (fputs (text, stdout) == EOF || fputc ('\n', stdout) == EOF || fflush (stdout) == EOF)) {
        bmq_warn ("stdout closed: %s", strerror (errno));
        st->out_broken = true;
    }
    free (text);
}

/* Send what a call produced; forget the call when it is over. */
static void s_flush (s_stdio_t *st, json_t *out, const char *cid, bool over)
{
    size_t i;
    json_t *m;
    json_array_foreach (out, i, m) s_write (st, m);
    json_array_clear (out);
    if (over && cid) zhashx_delete (st->calls, cid);
}

static void s_cancel (s_stdio_t *st, const json_t *id)
{
    for (s_inflight_t *f = zhashx_first (st->calls); f; f = zhashx_next (st->calls)) {
        if (!json_equal ((json_t *) bmq_mcp_call_id (f->call), (json_t *) id)) continue;
        bmq_envelope_t *cancel = bmq_mcp_call_cancel (f->call);
        if (cancel) bmq_peer_send (st->gateway, cancel);
        bmq_envelope_destroy (&cancel);
        bmq_info ("tool call %s cancelled by the client", bmq_mcp_call_tool (f->call));
        zhashx_delete (st->calls, bmq_mcp_call_cid (f->call));
        return;                      /* the cursor is invalid now */
    }
}

static void s_on_message (s_stdio_t *st, const char *text, size_t len)
{
    json_error_t jerr;
    json_t *msg = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!msg) {
        char why[300];
        snprintf (why, sizeof why, "Parse error: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
        json_t *err = bmq_mcp_error (NULL, -32700, why);
        s_write (st, err);
        json_decref (err);
        return;
    }
    bmq_mcp_outcome_t out;
    if (json_is_object (msg) && bmq_mcp_is_request (msg) && zhashx_size (st->calls) >= MAX_CALLS
        && !strcmp (json_string_value (json_object_get (msg, "method")), "tools/call"))
        out = (bmq_mcp_outcome_t) { .response = bmq_mcp_error (json_object_get (msg, "id"), -32000, "too many tool calls in flight") };
    else bmq_mcp_handle (st->mcp, &st->session, msg, &out);
    if (out.response) s_write (st, out.response);
    json_decref (out.response);
    if (out.cancel_id) s_cancel (st, out.cancel_id);
    json_decref (out.cancel_id);
    if (out.call) {
        s_inflight_t *f = calloc (1, sizeof *f);
        f->call = out.call;
        f->started = bmq_mono_ms ();
        if (out.request) {
            bmq_peer_send (st->gateway, out.request);
            bmq_envelope_destroy (&out.request);
        }
        zhashx_insert (st->calls, bmq_mcp_call_cid (f->call), f);
    }
    json_decref (msg);
}

/* Read what stdin has; handle each complete line. Returns -1 at end of input. */
static int s_read_stdin (s_stdio_t *st)
{
    char buf[65536];
    ssize_t n = read (STDIN_FILENO, buf, sizeof buf);
    if (n == 0) return -1;
    if (n < 0) return errno == EINTR || errno == EAGAIN ? 0 : -1;
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            if (st->skipping) {
                json_t *err = bmq_mcp_error (NULL, -32600, "message too large");
                s_write (st, err);
                json_decref (err);
            }
            else if (st->len) s_on_message (st, st->line, st->len);
            st->len = 0;
            st->skipping = false;
        }
        else if (!st->skipping) {
            if (st->len == MAX_LINE) { st->skipping = true; st->len = 0; continue; }
            if (st->len % 65536 == 0) st->line = realloc (st->line, st->len + 65536);
            st->line[st->len++] = buf[i];
        }
    }
    return 0;
}

static void s_on_gateway (s_stdio_t *st, json_t *out)
{
    bmq_envelope_t *env = bmq_bus_recv (bmq_peer_sock (st->gateway), NULL);
    if (!env) return;
    if (!bmq_peer_heard (st->gateway, env)) {
        s_inflight_t *f = zhashx_lookup (st->calls, env->cid);
        if (f) s_flush (st, out, env->cid, bmq_mcp_call_feed (f->call, env, out));
    }
    bmq_envelope_destroy (&env);
}

/* Deadlines, scripted notifications, and calls waiting on a silent gateway. */
static void s_tick (s_stdio_t *st, json_t *out)
{
    int64_t now = bmq_mono_ms ();
    zlistx_t *done = zlistx_new ();
    bool gone = !bmq_peer_alive (st->gateway);
    for (s_inflight_t *f = zhashx_first (st->calls); f; f = zhashx_next (st->calls)) {
        bool over = bmq_mcp_call_tick (f->call, now, out);
        if (!over && gone && bmq_mcp_call_on_bus (f->call) && now - f->started > (int64_t) st->interval * 4) {
            char why[400];
            snprintf (why, sizeof why, "the blendmq gateway at %s does not answer (start the stack with `blendmq up`)", st->endpoint);
            bmq_mcp_call_fail (f->call, why, out);
            over = true;
        }
        size_t i;
        json_t *m;
        json_array_foreach (out, i, m) s_write (st, m);
        json_array_clear (out);
        if (over) zlistx_add_end (done, (void *) zhashx_cursor (st->calls));
    }
    for (const char *key = zlistx_first (done); key; key = zlistx_next (done)) zhashx_delete (st->calls, key);
    zlistx_destroy (&done);
}

static int64_t s_next_wakeup (s_stdio_t *st)
{
    int64_t next = bmq_mono_ms () + st->interval / 2;
    for (s_inflight_t *f = zhashx_first (st->calls); f; f = zhashx_next (st->calls))
        if (bmq_mcp_call_wakeup (f->call) < next) next = bmq_mcp_call_wakeup (f->call);
    return next;
}

int bmq_cli_mcp (const bmq_cli_opts_t *opts)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    signal (SIGPIPE, SIG_IGN);
    char err[512];
    bmq_mcp_options_t mo = { .test_tools = bmq_config_bool (cfg, "gateway.mcp_test_tools"),
                             .request_timeout_ms = (int) bmq_config_int (cfg, "gateway.request_timeout_ms") + 5000 };
    s_stdio_t st = { .interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms") };
    if (st.interval <= 0) st.interval = 1000;
    st.mcp = bmq_mcp_new (&mo, err, sizeof err);
    st.endpoint = bmq_config_str (cfg, "gateway.endpoint");
    st.gateway = bmq_peer_new ("gateway", st.endpoint, st.interval, (int) bmq_config_int (cfg, "heartbeat.liveness") + 1);
    if (!st.mcp || !st.gateway) {
        fprintf (stderr, "blendmq mcp: %s\n", st.mcp ? "cannot reach the gateway endpoint" : err);
        bmq_mcp_destroy (&st.mcp);
        bmq_peer_destroy (&st.gateway);
        bmq_config_destroy (&cfg);
        return 2;
    }
    bmq_mcp_session_init (&st.session);
    st.calls = zhashx_new ();
    zhashx_set_destructor (st.calls, s_inflight_free);
    bmq_info ("MCP on stdio; gateway %s; %zu tools (%zu bytes)", st.endpoint,
              json_array_size (json_object_get (bmq_mcp_tools_list (bmq_mcp_tools (st.mcp)), "tools")),
              bmq_mcp_tools_list_bytes (bmq_mcp_tools (st.mcp)));
    json_t *out = json_array ();
    bool input_open = true;
    while (!zsys_interrupted && !st.out_broken && (input_open || zhashx_size (st.calls))) {
        bmq_peer_tick (st.gateway);
        zmq_pollitem_t items[] = {
            { zsock_resolve (bmq_peer_sock (st.gateway)), 0, ZMQ_POLLIN, 0 },
            { NULL, STDIN_FILENO, ZMQ_POLLIN, 0 },
        };
        int64_t wait = s_next_wakeup (&st) - bmq_mono_ms ();
        int rc = zmq_poll (items, input_open ? 2 : 1, wait < 0 ? 0 : (long) wait);
        if (rc < 0 && zmq_errno () != EINTR) break;
        if (rc > 0 && (items[0].revents & ZMQ_POLLIN)) s_on_gateway (&st, out);
        if (rc > 0 && input_open && (items[1].revents & (ZMQ_POLLIN | ZMQ_POLLERR))) {
            if (s_read_stdin (&st) < 0) {
                /* The client went away. As over HTTP, a disconnection is not a
                 * cancellation: plans already started run to their end. */
                input_open = false;
                zhashx_purge (st.calls);
            }
        }
        s_tick (&st, out);
    }
    json_decref (out);
    zhashx_destroy (&st.calls);
    free (st.line);
    bmq_peer_destroy (&st.gateway);
    bmq_mcp_destroy (&st.mcp);
    bmq_config_destroy (&cfg);
    return 0;
}
