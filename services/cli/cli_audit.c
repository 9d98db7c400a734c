/* cli_audit — `blendmq audit list | show CID | export | verify`.
 *
 * The trail is asked of the audit service over the bus (audit.query, one page
 * per request, keyset paging), never read from its database file, so this
 * works from any machine that reaches audit.endpoint. */
#include "bus.h"
#include "cli.h"
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIST_DEFAULT     100
#define PAGE             500
#define QUERY_TIMEOUT_MS 30000
#define PEOPLE_SCAN_MAX  20000     /* records looked at to find the latest people's ones */     /* a page is one indexed read: far less, even on a busy service */

typedef struct {
    bmq_peer_t *peer;
    zpoller_t  *poller;
    int         interval;
    const char *endpoint;
} s_conn_t;

/* Print one record; `state` is the action's. */
typedef void (s_print_fn) (const json_t *rec, void *state);

/* ---- time ------------------------------------------------------------------- */

/* T: an age (90s, 15m, 2h, 7d), a date or time in UTC (2026-01-31,
 * 2026-01-31T10:00[:00][Z]), or Unix time in ms. 0 / -1. */
static int s_parse_time (const char *text, int64_t now_ms, int64_t *out)
{
    char *end;
    long long n = strtoll (text, &end, 10);
    if (end != text && n >= 0) {
        static const struct { char unit; int64_t ms; } units[] = { { 's', 1000 }, { 'm', 60000 }, { 'h', 3600000 }, { 'd', 86400000 } };
        if (!*end) { *out = n; return 0; }
        for (size_t i = 0; i < 4; i++)
            if (end[0] == units[i].unit && !end[1]) { *out = now_ms - n * units[i].ms; return 0; }
    }
    struct tm tm = { 0 };
    int used = 0, y, mo, d, h = 0, mi = 0, s = 0;
    if (sscanf (text, "%4d-%2d-%2d%n", &y, &mo, &d, &used) != 3) return -1;
    const char *rest = text + used;
    if (*rest == 'T' || *rest == ' ') {
        if (sscanf (rest + 1, "%2d:%2d%n", &h, &mi, &used) != 2) return -1;
        rest += 1 + used;
        if (*rest == ':') { if (sscanf (rest + 1, "%2d%n", &s, &used) != 1) return -1; rest += 1 + used; }
    }
    if (*rest == 'Z') rest++;
    if (*rest || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return -1;
    tm.tm_year = y - 1900; tm.tm_mon = mo - 1; tm.tm_mday = d;
    tm.tm_hour = h; tm.tm_min = mi; tm.tm_sec = s;
    *out = (int64_t) timegm (&tm) * 1000;
    return 0;
}

static void s_format_time (int64_t ms, char *buf, size_t len)
{
    time_t t = (time_t) (ms / 1000);
    struct tm tm;
    gmtime_r (&t, &tm);
    char base[32];
    strftime (base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf (buf, len, "%s.%03dZ", base, (int) (ms % 1000));
}

/* ---- the conversation with the audit service ---------------------------------- */

/* Send one audit.query and wait for its answer. Returns the audit.result
 * body (owned), or NULL with the exit code in *code. */
static json_t *s_ask (s_conn_t *c, json_t *query, int *code)
{
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_AUDIT_QUERY, NULL, query);
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", req->cid);
    bmq_peer_send (c->peer, req);
    bmq_envelope_destroy (&req);
    int64_t started = bmq_mono_ms ();
    json_t *result = NULL;
    *code = -1;
    while (*code < 0) {
        bmq_peer_tick (c->peer);
        zsock_t *which = zpoller_wait (c->poller, c->interval / 2);
        if (zpoller_terminated (c->poller)) { fprintf (stderr, "blendmq: interrupted\n"); *code = 130; break; }
        if (which) {
            bmq_envelope_t *env = bmq_bus_recv (which, NULL);
            if (env && !bmq_peer_heard (c->peer, env) && !strcmp (env->cid, cid)) {
                if (env->type == BMQ_MSG_AUDIT_RESULT) { result = json_incref (env->body); *code = 0; }
                else if (env->type == BMQ_MSG_ERROR) {
                    bmq_cli_say_error (env, "audit: ");
                    *code = 1;
                }
            }
            bmq_envelope_destroy (&env);
        }
        if (*code >= 0) break;
        int64_t waited = bmq_mono_ms () - started;
        if ((!bmq_peer_alive (c->peer) && waited > (int64_t) c->interval * 4) || waited > QUERY_TIMEOUT_MS) {
            if (bmq_peer_alive (c->peer) || !bmq_peer_instance (c->peer)[0])
                fprintf (stderr, "blendmq: no answer from the audit service at %s (is the stack up? try `blendmq status`)\n",
                         c->endpoint);
            else
                fprintf (stderr, "blendmq: audit_unavailable: audit unavailable (no heartbeat for %lld ms at %s); nothing"
                         " was read: try again once `blendmq status` shows the audit service\n", (long long) waited, c->endpoint);
            *code = 2;
        }
    }
    return result;
}

static json_t *s_filter (const bmq_cli_opts_t *opts, const char *cid, int *code)
{
    json_t *filter = json_object ();
    if (opts->since) {
        int64_t since;
        if (s_parse_time (opts->since, bmq_now_ms (), &since)) {
            fprintf (stderr, "blendmq: --since %s: expected an age (90s, 15m, 2h, 7d), a UTC date or time "
                             "(2026-01-31, 2026-01-31T10:00:00Z) or Unix time in ms\n", opts->since);
            json_decref (filter);
            *code = 2;
            return NULL;
        }
        json_object_set_new (filter, "since", json_integer (since));
    }
    if (opts->plan) json_object_set_new (filter, "plan", json_string (opts->plan));
    if (opts->kind) json_object_set_new (filter, "kind", json_string (opts->kind));
    if (cid) json_object_set_new (filter, "cid", json_string (cid));
    return filter;
}

/* Page through every record matching `filter` in `order`, up to `max`
 * (0: all), handing each to `print`. Sets *more when records were left. */
static int s_walk (s_conn_t *c, const json_t *filter, const char *order, int max, s_print_fn *print, void *state,
                   bool *more)
{
    json_t *after = NULL;
    int seen = 0, code = 0;
    *more = false;
    while (true) {
        int want = max && max - seen < PAGE ? max - seen : PAGE;
        json_t *query = json_pack ("{s:O, s:s, s:i}", "filter", filter, "order", order, "limit", want);
        if (after) json_object_set_new (query, "after", after);
        after = NULL;
        json_t *page = s_ask (c, query, &code);
        if (!page) break;
        size_t i;
        json_t *rec;
        json_array_foreach (json_object_get (page, "records"), i, rec) { print (rec, state); seen++; }
        json_t *next = json_object_get (page, "next");
        if (next && max && seen >= max) *more = true;
        if (next && (!max || seen < max)) after = json_incref (next);
        json_decref (page);
        if (!after) break;
    }
    return code;
}

/* ---- printing --------------------------------------------------------------------- */

/* JSON as jansson writes it compactly, but each real in its shortest form that
 * reads back the same (0.8, not 0.80000000000000004) (issue 29). */
static void s_dump (const json_t *v, FILE *out)
{
    if (json_is_real (v)) {
        double d = json_real_value (v);
        char num[40];
        for (int p = 1; p <= 17; p++) {
            snprintf (num, sizeof num, "%.*g", p, d);
            if (strtod (num, NULL) == d) break;
        }
        if (!strpbrk (num, ".eEn")) strcat (num, ".0");       /* still a real when read back */
        fputs (num, out);
    }
    else if (json_is_object (v)) {
        const char *key;
        json_t *item;
        bool first = true;
        fputc ('{', out);
        json_object_foreach ((json_t *) v, key, item) {
            json_t *k = json_string (key);
            char *text = json_dumps (k, JSON_ENCODE_ANY);
            fprintf (out, "%s%s:", first ? "" : ",", text ? text : "\"?\"");
            free (text);
            json_decref (k);
            s_dump (item, out);
            first = false;
        }
        fputc ('}', out);
    }
    else if (json_is_array (v)) {
        size_t i;
        json_t *item;
        fputc ('[', out);
        json_array_foreach (v, i, item) { if (i) fputc (',', out); s_dump (item, out); }
        fputc (']', out);
    }
    else {
        char *text = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
        fputs (text ? text : "null", out);
        free (text);
    }
}

/* s_dump into a string (caller frees), NULL on failure. */
static char *s_dumps (const json_t *v)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&text, &len);
    if (!out) return NULL;
    s_dump (v, out);
    fclose (out);
    return text;
}

static void s_print_json (const json_t *rec, void *state)
{
    (void) state;
    char *text = s_dumps (rec);
    printf ("%s\n", text ? text : "{}");
    free (text);
}

/* The data as one line, cut at `width` characters. */
static void s_data_line (const json_t *rec, int width, char *buf, size_t len)
{
    char *text = s_dumps (json_object_get (rec, "data"));
    if (!text) { snprintf (buf, len, "?"); return; }
    if ((int) strlen (text) > width) snprintf (buf, len, "%.*s…", width, text);
    else snprintf (buf, len, "%s", text);
    free (text);
}

/* Every flag the audit put on a record, never hidden: "  FLAGGED: …". */
static void s_flags (const json_t *rec, char *buf, size_t len)
{
    const char *flag = json_string_value (json_object_get (rec, "flag"));
    if (flag) snprintf (buf, len, "  FLAGGED: %.400s", flag);
    else buf[0] = 0;
}

static void s_print_line (const json_t *rec, void *state)
{
    char when[40], data[512], flags[440];
    s_format_time (json_integer_value (json_object_get (rec, "ts")), when, sizeof when);
    s_data_line (rec, 100, data, sizeof data);
    s_flags (rec, flags, sizeof flags);
    printf ("%s  %s  %-10s %-16s %s%s\n", when, json_string_value (json_object_get (rec, "cid")),
            json_string_value (json_object_get (rec, "sender")), json_string_value (json_object_get (rec, "kind")), data, flags);
}

static void s_collect (const json_t *rec, void *state)
{
    json_array_append ((json_t *) state, (json_t *) rec);
}

/* ---- the actions --------------------------------------------------------------------- */

/* A story a service started (a look-up: inspect, capabilities, the palette's
 * RNA...), not a person: its "request" record names a service identity. */
static bool s_service_request (const json_t *rec)
{
    const char *kind = json_string_value (json_object_get (rec, "kind"));
    const json_t *identity = json_object_get (json_object_get (rec, "data"), "identity");
    const char *role = json_string_value (json_object_get (identity, "role"));
    return kind && !strcmp (kind, "request") && role && !strcmp (role, "service");
}

/* list without --all (and without --kind or --plan, which ask for exactly
 * those): people's requests and what happened to them, the latest N; the
 * stories services started among themselves are left out, and counted. */
static int s_list_people (s_conn_t *c, const bmq_cli_opts_t *opts, const json_t *filter, int max)
{
    s_print_fn *print = opts->json ? s_print_json : s_print_line;
    bool more;
    json_t *window = json_array ();
    int scan = max ? (max * 20 < PEOPLE_SCAN_MAX ? max * 20 : PEOPLE_SCAN_MAX) : 0;
    int code = s_walk (c, filter, "desc", scan, s_collect, window, &more);
    json_t *internal = json_object ();         /* cids of service-started stories in the window */
    size_t i;
    json_t *rec;
    json_array_foreach (window, i, rec)
        if (s_service_request (rec)) json_object_set_new (internal, json_string_value (json_object_get (rec, "cid")) ?: "", json_true ());
    json_t *shown = json_array ();
    size_t hidden = 0;
    json_array_foreach (window, i, rec) {
        const char *cid = json_string_value (json_object_get (rec, "cid"));
        if (cid && json_object_get (internal, cid)) { hidden++; continue; }
        if (!max || (int) json_array_size (shown) < max) json_array_append (shown, rec);
    }
    for (i = json_array_size (shown); i-- > 0;) print (json_array_get (shown, i), NULL);
    if (!code && !opts->json) {
        if (hidden) fprintf (stderr, "(%zu record(s) of look-ups services made among themselves left out: --all shows them)\n", hidden);
        if (more || (max && json_array_size (shown) == (size_t) max))
            fprintf (stderr, "(the latest %d records; --limit N or --since T for others, --limit 0 for all)\n", max);
    }
    json_decref (shown);
    json_decref (internal);
    json_decref (window);
    return code;
}

/* list: the latest N matching records (default 100), printed oldest first;
 * --limit 0 prints them all, streaming. */
static int s_list (s_conn_t *c, const bmq_cli_opts_t *opts, const json_t *filter)
{
    int max = opts->limit < 0 ? LIST_DEFAULT : opts->limit;
    s_print_fn *print = opts->json ? s_print_json : s_print_line;
    bool more;
    if (!opts->all && !opts->kind && !opts->plan) return s_list_people (c, opts, filter, max);
    if (max == 0) return s_walk (c, filter, "asc", 0, print, NULL, &more);
    json_t *latest = json_array ();
    int code = s_walk (c, filter, "desc", max, s_collect, latest, &more);
    for (size_t i = json_array_size (latest); i-- > 0;) print (json_array_get (latest, i), NULL);
    if (!code && more && !opts->json)
        fprintf (stderr, "(the latest %d records; --limit N or --since T for others, --limit 0 for all)\n", max);
    json_decref (latest);
    return code;
}

static int s_show (s_conn_t *c, const bmq_cli_opts_t *opts, const char *cid, const json_t *filter)
{
    json_t *story = json_array ();
    bool more;
    int code = s_walk (c, filter, "asc", 0, s_collect, story, &more);
    size_t n = json_array_size (story);
    if (!code && !n) { fprintf (stderr, "blendmq: no audit records for story %s\n", cid); code = 1; }
    if (!code && opts->json) {
        size_t i;
        json_t *rec;
        json_array_foreach (story, i, rec) s_print_json (rec, NULL);
    }
    else if (!code) {
        int64_t first = json_integer_value (json_object_get (json_array_get (story, 0), "ts"));
        int64_t last = json_integer_value (json_object_get (json_array_get (story, n - 1), "ts"));
        char when[40];
        s_format_time (first, when, sizeof when);
        printf ("story %s: %zu records from %s over %.1f s\n", cid, n, when, (last - first) / 1000.0);
        size_t i;
        json_t *rec;
        json_array_foreach (story, i, rec) {
            char data[512], offset[32], flags[440];
            s_data_line (rec, 160, data, sizeof data);
            s_flags (rec, flags, sizeof flags);
            snprintf (offset, sizeof offset, "+%.3f s", (json_integer_value (json_object_get (rec, "ts")) - first) / 1000.0);
            printf ("  %10s  %-10s %-16s %s%s\n", offset, json_string_value (json_object_get (rec, "sender")),
                    json_string_value (json_object_get (rec, "kind")), data, flags);
        }
    }
    json_decref (story);
    return code;
}

/* verify: the audit service walks its chain (it alone holds the key). 0
 * intact, 1 tampered (the first bad record named), 2 no answer. */
static int s_verify (s_conn_t *c, const bmq_cli_opts_t *opts)
{
    int code = 0;
    json_t *res = s_ask (c, json_pack ("{s:{}}", "verify"), &code);
    if (!res) return code ? code : 2;
    json_t *v = json_object_get (res, "verify");
    if (!json_is_object (v)) { fprintf (stderr, "blendmq: audit verify: the audit service sent no verification\n"); json_decref (res); return 2; }
    const json_t *bad = json_object_get (v, "first_bad");
    if (opts->json) {
        char *text = json_dumps (v, JSON_COMPACT);
        printf ("%s\n", text);
        free (text);
    }
    else if (!bad)
        printf ("audit ok: %lld records checked (ids %lld..%lld): every record chained and sealed, none missing at the start or"
                " the end\n", (long long) json_integer_value (json_object_get (v, "checked")),
                (long long) json_integer_value (json_object_get (v, "base_id")),
                (long long) json_integer_value (json_object_get (v, "head_id")));
    else
        printf ("audit TAMPERED: first bad record %lld: %s\n", (long long) json_integer_value (json_object_get (bad, "id")),
                json_string_value (json_object_get (bad, "reason")));
    code = bad ? 1 : 0;
    json_decref (res);
    return code;
}

int bmq_cli_audit (const bmq_cli_opts_t *opts, int nwords, const char **words)
{
    const char *action = words[0];
    bool list = !strcmp (action, "list") && nwords == 1;
    bool show = !strcmp (action, "show") && nwords == 2;
    bool export = !strcmp (action, "export") && nwords == 1;
    bool verify = !strcmp (action, "verify") && nwords == 1;
    if (!list && !show && !export && !verify) {
        fprintf (stderr, "usage: blendmq audit list [--all] [--since T] [--plan ID] [--kind K] [--limit N]\n"
                         "       blendmq audit show CORRELATION_ID\n"
                         "       blendmq audit export [--format jsonl] [--since T] [--plan ID] [--kind K]\n"
                         "       blendmq audit verify   (exit 1 naming the first record edited, deleted or cut off)\n");
        return 2;
    }
    if (export && opts->format && strcmp (opts->format, "jsonl")) {
        fprintf (stderr, "blendmq: audit export: unknown format '%s' (jsonl)\n", opts->format);
        return 2;
    }
    if (opts->limit < -1) { fprintf (stderr, "blendmq: --limit must be 0 (all) or more\n"); return 2; }
    int code = 0;
    json_t *filter = s_filter (opts, show ? words[1] : NULL, &code);
    if (!filter) return code;
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) { json_decref (filter); return 2; }
    s_conn_t c = { .endpoint = bmq_config_str (cfg, "audit.endpoint"),
                   .interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms") };
    if (c.interval <= 0) c.interval = 1000;
    c.peer = bmq_peer_new ("audit", c.endpoint, c.interval, (int) bmq_config_int (cfg, "heartbeat.liveness") + 1);
    if (c.peer) {
        c.poller = zpoller_new (bmq_peer_sock (c.peer), NULL);
        bool more;
        if (verify) code = s_verify (&c, opts);
        else if (list) code = s_list (&c, opts, filter);
        else if (show) code = s_show (&c, opts, words[1], filter);
        else code = s_walk (&c, filter, "asc", 0, s_print_json, NULL, &more);
        zpoller_destroy (&c.poller);
        bmq_peer_destroy (&c.peer);
    }
    else code = 2;
    fflush (stdout);
    bmq_config_destroy (&cfg);
    json_decref (filter);
    return code;
}
