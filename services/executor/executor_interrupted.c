/* executor_interrupted — plans Blender rolled back on its own (issue 17).
 *
 * When the link drops with a plan open, the add-on rolls it back and reports
 * it at the next hello; the actor passes that on ("HELLO") and the executor
 * writes plan.interrupted into the plan's story, publishes it, and
 * acknowledges the reports (ACK → interrupted_ack) once they are recorded:
 * the audit client spools a record before it returns, so a report is never
 * forgotten by Blender before it is safe here. A report seen again (an ack
 * lost with the link) is acknowledged, not recorded twice. */
#include "executor_internal.h"
#include "log.h"
#include "progress_stamp.h"

/* A progress event with no requester (watchers only). `body` is stolen. */
static void s_publish (executor_t *ex, const char *cid, json_t *body)
{
    bmq_progress_stamp (body);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_PROGRESS, cid, body);
    bmq_bus_send (ex->pub, NULL, env);
    bmq_envelope_destroy (&env);
}

/* Reports of interrupted plans arrive right after the executor (re)starts,
 * before the gateway's SUB has (re)connected, and a PUB drops what nobody
 * subscribes to yet. The events socket is an XPUB so the executor knows when
 * a subscriber is there: until then these events are held (bounded). */
static void s_publish_late (executor_t *ex, const char *cid, json_t *body)
{
    if (ex->subscribed) { s_publish (ex, cid, body); return; }
    if (json_array_size (ex->held) >= HELD_MAX) {
        bmq_warn ("no watcher yet: an interrupted-plan event is dropped (its audit record stays)");
        json_decref (body);
        return;
    }
    json_array_append_new (ex->held, json_pack ("{s:s?, s:o}", "cid", cid, "body", body));
}

/* A (un)subscription on the XPUB: the first subscriber gets what was held. */
void executor_on_subscription (executor_t *ex)
{
    zframe_t *frame = zframe_recv (ex->pub);
    bool joined = frame && zframe_size (frame) >= 1 && zframe_data (frame)[0] == 1;
    if (frame && zframe_size (frame) >= 1) ex->subscribed = joined;
    zframe_destroy (&frame);
    if (joined) executor_republish_names (ex);      /* a gateway that (re)started needs the names */
    if (!ex->subscribed || !json_array_size (ex->held)) return;
    size_t i;
    json_t *item;
    json_array_foreach (ex->held, i, item)
        s_publish (ex, json_string_value (json_object_get (item, "cid")), json_incref (json_object_get (item, "body")));
    json_array_clear (ex->held);
}

static bool s_recorded (const executor_t *ex, const char *id)
{
    for (size_t i = 0; i < RECORDED_MAX; i++)
        if (!strcmp (ex->recorded[i], id)) return true;
    return false;
}

/* One plan Blender rolled back (by "blender": on a dropped link; by
 * "executor": held open, rolled back at reconnect): a plan.interrupted record
 * in its story and a progress event for watchers. */
static void s_plan_interrupted (executor_t *ex, const json_t *report, const char *by)
{
    const char *cid = json_string_value (json_object_get (report, "cid"));
    const char *plan_id = json_string_value (json_object_get (report, "plan_id"));
    json_t *rollback = json_object_get (report, "rollback");
    json_int_t steps_run = json_integer_value (json_object_get (report, "steps_run"));
    json_int_t steps_total = json_integer_value (json_object_get (report, "steps_total"));
    json_t *rec = json_pack ("{s:s, s:I, s:I, s:O, s:s, s:s}", "plan_id", plan_id ? plan_id : "?", "steps_run", steps_run,
                             "steps_total", steps_total, "rollback", rollback ? rollback : json_null (), "by", by,
                             "reason", json_string_value (json_object_get (report, "reason")) ?
                                       json_string_value (json_object_get (report, "reason")) : "?");
    const char *extra[] = { "id", "at", "error", NULL };
    const char *as[] = { "report_id", "at", "error", NULL };
    for (int i = 0; extra[i]; i++)
        if (json_object_get (report, extra[i])) json_object_set (rec, as[i], json_object_get (report, extra[i]));
    bmq_warn ("plan %s (story %s) was interrupted after %lld step(s); rolled back by Blender: %s", plan_id ? plan_id : "?",
              cid ? cid : "?", (long long) steps_run, json_string_value (json_object_get (report, "reason")) ?
              json_string_value (json_object_get (report, "reason")) : "?");
    json_t *ev = json_pack ("{s:s, s:s, s:s, s:I, s:I, s:O, s:s}", "event", "plan", "status", "interrupted",
                            "plan_id", plan_id ? plan_id : "?", "step", steps_run, "total", steps_total,
                            "rollback", rollback ? rollback : json_null (), "by", by);
    bmq_audit_record (ex->audit, cid, "plan.interrupted", rec);
    s_publish_late (ex, cid, ev);
}

/* "HELLO": what Blender said about plans interrupted before this connection.
 * Each new report is recorded, then all are acknowledged so Blender forgets them. */
void executor_on_hello (executor_t *ex, const char *text)
{
    json_t *hello = text ? json_loads (text, 0, NULL) : NULL;
    json_t *ids = json_array ();
    size_t i;
    json_t *report;
    json_array_foreach (json_object_get (hello, "interrupted"), i, report) {
        const char *id = json_string_value (json_object_get (report, "id"));
        if (!id || strlen (id) != REPORT_ID_LEN) continue;      /* the link checked it; belt and braces */
        if (!s_recorded (ex, id)) {
            s_plan_interrupted (ex, report, "blender");
            snprintf (ex->recorded[ex->recorded_next++ % RECORDED_MAX], REPORT_ID_LEN + 1, "%s", id);
        }
        json_array_append_new (ids, json_string (id));
    }
    json_t *open = json_object_get (hello, "open_plan");
    if (json_is_object (open)) {
        if (!json_object_get (open, "reason"))
            json_object_set_new (open, "reason", json_string ("held open by Blender; rolled back at reconnect"));
        s_plan_interrupted (ex, open, "executor");
    }
    if (json_array_size (ids)) {
        char *list = json_dumps (ids, JSON_COMPACT);
        if (list) zstr_sendx (ex->blender, "ACK", list, NULL);
        free (list);
    }
    json_decref (ids);
    json_decref (hello);
}
