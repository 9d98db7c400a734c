/* faults_check — the checks after each fault. */
#include "faults_check.h"
#include "faults_stack.h"
#include "slow_llm.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *s_kind_name (fl_kind_t kind)
{
    return kind == FL_PLAN ? "plan run" : kind == FL_CHAT ? "chat" : "scene info";
}

static bool s_success (const fl_run_t *run)
{
    return !strcmp (run->outcome, "done") || !strcmp (run->outcome, "ok");
}

fc_row_t *fc_row_new (const char *how, const char *target)
{
    fc_row_t *row = calloc (1, sizeof *row);
    snprintf (row->how, sizeof row->how, "%s", how);
    snprintf (row->target, sizeof row->target, "%s", target);
    snprintf (row->name, sizeof row->name, "%s %s", !strcmp (how, "kill") ? "kill -9" : !strcmp (how, "stop") ? "SIGSTOP 10 s" : "full disk:",
              target);
    row->answer_ms = row->heal_ms = -1;
    row->answers = json_object ();
    row->failures = json_array ();
    row->notes = json_array ();
    return row;
}

void fc_row_destroy (fc_row_t **self_p)
{
    if (!self_p || !*self_p) return;
    json_decref ((*self_p)->answers);
    json_decref ((*self_p)->failures);
    json_decref ((*self_p)->notes);
    free (*self_p);
    *self_p = NULL;
}

static void s_add (json_t *list, const char *prefix, const char *fmt, va_list ap)
{
    char text[1200];
    vsnprintf (text, sizeof text, fmt, ap);
    json_array_append_new (list, json_string (text));
    fprintf (stderr, "    %s%s\n", prefix, text);
}

void fc_fail (fc_row_t *row, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    s_add (row->failures, "FAIL ", fmt, ap);
    va_end (ap);
}

void fc_note (fc_row_t *row, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    s_add (row->notes, "note ", fmt, ap);
    va_end (ap);
}

json_t *fc_row_json (const fc_row_t *row)
{
    return json_pack ("{s:s, s:s, s:s, s:s, s:I, s:I, s:{s:I, s:I, s:I}, s:i, s:I, s:s, s:O, s:O, s:O, s:b}", "fault", row->name,
                      "how", row->how, "target", row->target, "client_saw", row->saw, "answer_ms", (json_int_t) row->answer_ms,
                      "bound_ms", (json_int_t) row->bound_ms, "usual_ms", "plan_run", (json_int_t) row->usual_ms[FL_PLAN],
                      "chat", (json_int_t) row->usual_ms[FL_CHAT], "scene_info", (json_int_t) row->usual_ms[FL_SCENE],
                      "clients_in_flight", row->in_flight,
                      "heal_ms", (json_int_t) row->heal_ms, "scene", row->scene, "answers", row->answers,
                      "failures", row->failures, "notes", row->notes, "passed", json_array_size (row->failures) == 0);
}

/* ---- answers ------------------------------------------------------------------------ */

/* Does a client of `kind` need `target` to get its work done? */
static bool s_on_path (const char *target, fl_kind_t kind)
{
    if (!strcmp (target, "gateway") || !strcmp (target, "executor") || !strcmp (target, "blender")) return true;
    if (!strcmp (target, "planner")) return kind == FL_CHAT;
    return false;       /* audit; one validator of two */
}

/* The error code a client waiting on `target` should be given, if one is promised. */
static const char *s_expected_code (const char *target)
{
    if (!strcmp (target, "planner")) return "planner_unavailable";
    if (!strcmp (target, "executor")) return "executor_unavailable";
    return NULL;
}

static int s_cmp_ms (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y ? -1 : x > y;
}

/* The usual time a successful client of `kind` takes (the median of those
 * that ran wholly before the fault or after the heal); 0 when none did. */
static int64_t s_usual_ms (const fl_run_t *runs, size_t n, fl_kind_t kind, int64_t t0, int64_t heal, int64_t baseline)
{
    int64_t *ms = malloc ((n ? n : 1) * sizeof *ms);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (runs[i].kind == kind && runs[i].end_ms && s_success (&runs[i]) && (runs[i].end_ms < t0 || runs[i].start_ms > heal))
            ms[k++] = runs[i].end_ms - runs[i].start_ms;
    qsort (ms, k, sizeof *ms, s_cmp_ms);
    /* fewer than 3 clients away from the fault say little (a chat takes
     * seconds, so often none ends before the fault or starts after the
     * heal): the same load's median without any fault stands in, and never
     * less than it */
    int64_t median = k >= 3 ? ms[k / 2] : 0;
    free (ms);
    return median > baseline ? median : baseline;
}

/* An answer with its numbers and story ids taken out, so that alike answers count together. */
static void s_normalize (char *out, size_t len, const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p && n + 4 < len;) {
        size_t hex = strspn (p, "0123456789ABCDEF");
        if (hex >= 16) { memcpy (out + n, "CID", 3); n += 3; p += hex; }
        else if (isdigit ((unsigned char) *p)) { out[n++] = 'N'; p += strspn (p, "0123456789."); }
        else out[n++] = *p++;
    }
    out[n] = 0;
}

void fc_usual_baseline (int64_t usual[3], const fl_run_t *runs, size_t n)
{
    for (int k = 0; k < 3; k++) usual[k] = s_usual_ms (runs, n, (fl_kind_t) k, INT64_MAX, INT64_MAX, 0);
}

void fc_check_answers (fc_row_t *row, const fl_run_t *runs, size_t n, const int64_t baseline[3])
{
    int64_t heal = row->t_heal ? row->t_heal : row->t_end + FC_HEAL_MS;
    const fl_run_t *first_bad = NULL;
    int64_t usual[3];
    for (int k = 0; k < 3; k++) {
        usual[k] = s_usual_ms (runs, n, (fl_kind_t) k, row->t0, heal, baseline[k]);
        row->usual_ms[k] = usual[k];
    }
    for (size_t i = 0; i < n; i++) {
        const fl_run_t *r = &runs[i];
        if (!r->end_ms) { fc_fail (row, "%s %s never ended", s_kind_name (r->kind), r->prefix); continue; }
        if (!strcmp (r->outcome, "hung")) fc_fail (row, "%s %s hung: %s", s_kind_name (r->kind), r->prefix, r->message);
        int64_t from = r->start_ms > row->t0 ? r->start_ms : row->t0;
        int64_t took = r->end_ms - from;
        bool in_flight = r->start_ms < row->t0 && r->end_ms > row->t0;
        bool during = r->end_ms >= row->t0 && r->start_ms <= heal;
        if (in_flight) {
            row->in_flight++;
            if (took > row->answer_ms) row->answer_ms = took;
            if (!s_success (r) && (!first_bad || r->end_ms < first_bad->end_ms)) first_bad = r;
        }
        /* an error comes within the bound; work that succeeds may take its usual time on top */
        int64_t allowed = row->bound_ms + (s_success (r) ? usual[r->kind] : 0);
        if (r->end_ms >= row->t0 && took > allowed)
            fc_fail (row, "%s %s answered %lld ms after %s (allowed %lld ms): %s", s_kind_name (r->kind), r->prefix, (long long) took,
                     r->start_ms > row->t0 ? "it started" : "the fault", (long long) allowed, s_success (r) ? r->outcome : r->message);
        if (!during) continue;
        char said[600];
        s_normalize (said, sizeof said, s_success (r) ? r->outcome : r->message);
        json_object_set_new (row->answers, said, json_integer (json_integer_value (json_object_get (row->answers, said)) + 1));
        if (s_success (r)) continue;
        if (!s_on_path (row->target, r->kind))
            fc_fail (row, "%s %s failed although %s is not on its path: %s", s_kind_name (r->kind), r->prefix, row->target, r->message);
        const char *want = s_expected_code (row->target);
        /* a chat waits on the planner until its plan comes; everyone waits on the executor */
        bool waited_on_it = strcmp (row->target, "planner") || (r->kind == FL_CHAT && r->steps_seen == 0);
        if (want && waited_on_it && strcmp (r->code, want))
            fc_fail (row, "%s %s was told \"%s\", not %s", s_kind_name (r->kind), r->prefix, r->message, want);
        /* "S unavailable" blames S: only the faulted process may be blamed (Blender's
         * executor says blender_unavailable), except that a gateway that has just
         * restarted has no validator worker until they connect to it again */
        char blamed[64];
        snprintf (blamed, sizeof blamed, "%s", r->code);
        char *suffix = strstr (blamed, "_unavailable");
        if (suffix && !suffix[12]) {
            *suffix = 0;
            bool fresh_gateway = !strcmp (row->target, "gateway") && !strcmp (row->how, "kill") && !strcmp (blamed, "validator");
            if (strncmp (row->target, blamed, strlen (blamed)) && !fresh_gateway)
                fc_fail (row, "%s %s was told that the %s is unavailable, yet only the %s was faulted: %s", s_kind_name (r->kind),
                         r->prefix, blamed, row->target, r->message);
        }
        /* a request the killed gateway held: the CLI gives up at once, naming the story */
        if (in_flight && !strcmp (row->target, "gateway") && !strcmp (row->how, "kill")
            && (r->exit_code != 2 || !strstr (r->message, "audit show")))
            fc_fail (row, "%s %s: exit %d, \"%s\" (a restarted gateway: exit 2 and a message naming the audit story)",
                     s_kind_name (r->kind), r->prefix, r->exit_code, r->message);
    }
    if (first_bad) snprintf (row->saw, sizeof row->saw, "%s (%s)", first_bad->message, s_kind_name (first_bad->kind));
    else snprintf (row->saw, sizeof row->saw, row->in_flight ? "no error: every client in flight finished" : "no client was in flight");
}

/* ---- audit ------------------------------------------------------------------------------ */

typedef struct {
    json_t *requests, *ended, *plans, *plan_ends, *restarts_text, *kinds_by_cid;
} s_story_t;

static void s_story_load (s_story_t *s, const json_t *rows)
{
    s->requests = json_object (); s->ended = json_object (); s->plans = json_object ();
    s->plan_ends = json_object (); s->restarts_text = json_array (); s->kinds_by_cid = json_object ();
    size_t i;
    json_t *r;
    json_array_foreach (rows, i, r) {
        const char *cid = json_string_value (json_object_get (r, "cid"));
        const char *kind = json_string_value (json_object_get (r, "kind"));
        json_t *kinds = json_object_get (s->kinds_by_cid, cid);
        if (!kinds) json_object_set_new (s->kinds_by_cid, cid, kinds = json_array ());
        json_array_append_new (kinds, json_string (kind));
        if (!strcmp (kind, "request")) json_object_set_new (s->requests, cid, json_true ());
        else if (!strcmp (kind, "request.end")) json_object_set_new (s->ended, cid, json_true ());
        else if (!strcmp (kind, "plan.start")) json_object_set_new (s->plans, cid, json_true ());
        else if (!strcmp (kind, "plan.end") || !strcmp (kind, "plan.interrupted")) json_object_set (s->plan_ends, cid, r);
        else if (!strcmp (kind, "service.restart")) json_array_append (s->restarts_text, json_object_get (r, "data"));
    }
}

static void s_story_free (s_story_t *s)
{
    json_decref (s->requests); json_decref (s->ended); json_decref (s->plans);
    json_decref (s->plan_ends); json_decref (s->restarts_text); json_decref (s->kinds_by_cid);
}

/* service.restart records that name `name` */
static int s_restart_records (const s_story_t *s, const char *name)
{
    char quoted[80];
    snprintf (quoted, sizeof quoted, "\"%s\"", name);
    int n = 0;
    size_t i;
    json_t *t;
    json_array_foreach (s->restarts_text, i, t)
        if (strstr (json_string_value (t), quoted)) n++;
    return n;
}

/* The problems left: one line each, with examples; 0 when none. */
static int s_audit_problems (const s_story_t *s, const fl_run_t *runs, size_t n, const json_t *restarts, json_t *out)
{
    const char *cid;
    json_t *v;
    char line[1500];
    int count = 0, shown = 0;
    line[0] = 0;
    json_object_foreach (s->requests, cid, v) {
        if (json_object_get (s->ended, cid)) continue;
        if (count++ < 3) {
            char *kinds = json_dumps (json_object_get (s->kinds_by_cid, cid), JSON_COMPACT);
            snprintf (line + strlen (line), sizeof line - strlen (line), "%s%s %s", shown++ ? "; " : "", cid, kinds);
            free (kinds);
        }
    }
    if (count) json_array_append_new (out, json_sprintf ("%d request(s) without request.end, e.g. %s", count, line));
    count = shown = 0;
    line[0] = 0;
    json_object_foreach (s->plans, cid, v) {
        if (json_object_get (s->plan_ends, cid)) continue;
        if (count++ < 3) {
            char *kinds = json_dumps (json_object_get (s->kinds_by_cid, cid), JSON_COMPACT);
            snprintf (line + strlen (line), sizeof line - strlen (line), "%s%s %s", shown++ ? "; " : "", cid, kinds);
            free (kinds);
        }
    }
    if (count) json_array_append_new (out, json_sprintf ("%d plan.start without plan.end or plan.interrupted, e.g. %s", count, line));
    count = 0;
    for (size_t i = 0; i < n; i++)
        if (runs[i].replied && *runs[i].cid && !json_object_get (s->requests, runs[i].cid) && count++ < 3)
            json_array_append_new (out, json_sprintf ("the gateway answered %s %s (story %s) but the audit has no request record",
                                                      s_kind_name (runs[i].kind), runs[i].prefix, runs[i].cid));
    json_object_foreach (s->plan_ends, cid, v) {
        const char *kind = json_string_value (json_object_get (v, "kind"));
        json_t *data = json_loads (json_string_value (json_object_get (v, "data")), 0, NULL);
        if (!strcmp (kind, "plan.interrupted") && !json_object_get (data, "rollback"))
            json_array_append_new (out, json_sprintf ("plan.interrupted in %s does not say what was rolled back: %s", cid,
                                                      json_string_value (json_object_get (v, "data"))));
        json_decref (data);
    }
    const char *name;
    json_object_foreach ((json_t *) restarts, name, v) {
        int want = (int) json_integer_value (v), have = s_restart_records (s, name);
        if (have < want)
            json_array_append_new (out, json_sprintf ("%s restarted %d time(s), %d service.restart record(s) name it", name, want, have));
    }
    return (int) json_array_size (out);
}

void fc_check_audit (fc_row_t *row, const char *db, int64_t mark, const fl_run_t *runs, size_t n,
                     const json_t *restarts, int wait_ms)
{
    int64_t deadline = fl_now_ms () + wait_ms;
    json_t *problems = NULL;
    int requests = 0, plans = 0, interrupted = 0, restart_records = 0;
    for (;;) {
        json_decref (problems);
        problems = json_array ();
        json_t *rows = fs_audit_since (db, mark);
        if (!rows) json_array_append_new (problems, json_sprintf ("cannot read the audit database %s", db));
        else {
            s_story_t s;
            s_story_load (&s, rows);
            s_audit_problems (&s, runs, n, restarts, problems);
            requests = (int) json_object_size (s.requests);
            restart_records = (int) json_array_size (s.restarts_text);
            plans = (int) json_object_size (s.plans);
            interrupted = 0;
            const char *cid;
            json_t *v;
            json_object_foreach (s.plan_ends, cid, v)
                if (!strcmp (json_string_value (json_object_get (v, "kind")), "plan.interrupted")) interrupted++;
            s_story_free (&s);
        }
        json_decref (rows);
        if (!json_array_size (problems) || fl_now_ms () > deadline) break;
        usleep (500000);
    }
    size_t i;
    json_t *p;
    json_array_foreach (problems, i, p) fc_fail (row, "audit: %s", json_string_value (p));
    fc_note (row, "audit: %d requests, %d plans started (%d interrupted), %d service.restart records since the fault's load began",
             requests, plans, interrupted, restart_records);
    json_decref (problems);
}

/* ---- scene -------------------------------------------------------------------------------- */

void fc_check_scene (fc_row_t *row, const json_t *names, const fl_run_t *runs, size_t n, int64_t scene_lost_before)
{
    if (!names) { fc_fail (row, "scene: the live scene could not be read"); snprintf (row->scene, sizeof row->scene, "unreadable"); return; }
    int whole = 0, rolled_back = 0, not_run = 0, partial = 0, lost = 0;
    for (size_t i = 0; i < n; i++) {
        const fl_run_t *r = &runs[i];
        if (r->objects <= 0) continue;
        int present = 0;
        for (int k = 0; k < r->objects; k++) {
            char name[96];
            snprintf (name, sizeof name, "%s_o%d", r->prefix, k);
            if (json_object_get (names, name)) present++;
        }
        bool done = !strcmp (r->outcome, "done");
        if (present > 0 && present < r->objects) {
            partial++;
            fc_fail (row, "scene: %s %s is half-built: %d of %d objects (client: %s)", s_kind_name (r->kind), r->prefix, present,
                     r->objects, done ? "done" : r->message);
        }
        else if (present == r->objects) {
            whole++;
            if (r->claims_rollback)
                fc_fail (row, "scene: %s %s is whole, yet its client was told it was rolled back: %s", s_kind_name (r->kind), r->prefix, r->message);
        }
        else if (done && r->end_ms < scene_lost_before) lost++;
        else if (done) fc_fail (row, "scene: %s %s was done, yet none of its %d objects is in the scene", s_kind_name (r->kind), r->prefix, r->objects);
        else if (r->steps_seen > 0 || r->claims_rollback) rolled_back++;
        else not_run++;
    }
    snprintf (row->scene, sizeof row->scene, "%d whole, %d rolled back, %d not run", whole, rolled_back, not_run);
    if (lost) snprintf (row->scene + strlen (row->scene), sizeof row->scene - strlen (row->scene), ", %d lost with Blender", lost);
    if (partial) snprintf (row->scene + strlen (row->scene), sizeof row->scene - strlen (row->scene), ", %d HALF-BUILT", partial);
}

/* ---- watchers --------------------------------------------------------------------------------- */

void fc_check_watchers (fc_row_t *row, const fw_snapshot_t *before, const fw_snapshot_t *heal, const fw_snapshot_t *end)
{
    int silent = fw_silent_subs (heal, end);
    if (silent) fc_fail (row, "watchers: %d of %d SUB connections received nothing after the heal", silent, end->subs);
    bool gateway_restarted = !strcmp (row->target, "gateway") && !strcmp (row->how, "kill");
    for (int i = 0; i < end->watches; i++) {
        if (!end->watch_alive[i]) fc_fail (row, "watchers: `blendmq watch` #%d exited", i + 1);
        else if (end->watch_bytes[i] <= heal->watch_bytes[i]) fc_fail (row, "watchers: `blendmq watch` #%d printed nothing after the heal", i + 1);
        if (gateway_restarted && end->watch_gaps[i] <= before->watch_gaps[i])
            fc_fail (row, "watchers: `blendmq watch` #%d printed no gap marker across the gateway's restart", i + 1);
    }
    if (end->sse_events <= heal->sse_events) fc_fail (row, "watchers: the SSE client received no event after the heal");
    if (gateway_restarted && end->sse_gaps <= before->sse_gaps)
        fc_fail (row, "watchers: the SSE stream gave no gap marker across the gateway's restart (Last-Event-ID sent)");
    fc_note (row, "watchers: SSE %zu events, %d (re)connections; gap markers: watch %d, SSE %d%s%s", end->sse_events - before->sse_events,
             end->sse_connects - before->sse_connects, end->watches ? end->watch_gaps[0] - before->watch_gaps[0] : 0,
             end->sse_gaps - before->sse_gaps, *end->gap_sample ? "; e.g. " : "", end->gap_sample);
}
