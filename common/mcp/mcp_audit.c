/* mcp_audit — the audit trail as MCP resources (see mcp_surface.h): who may
 * read which story, and the stories as a list. The records come from the
 * audit service (audit.query through the gateway, as `blendmq audit` asks);
 * they are hostile input like any answer: every field is type-checked. */
#include "mcp_surface_internal.h"
#include "roles.h"

#include <stdio.h>
#include <string.h>

#define STORY_RECORDS 500

/* The identity that started a story: its "request" record's (gateway-stamped). */
static const json_t *s_identity (const json_t *rec)
{
    const char *kind = json_string_value (json_object_get (rec, "kind"));
    return kind && !strcmp (kind, "request") ? json_object_get (json_object_get (rec, "data"), "identity") : NULL;
}

/* A person reads every story; anyone else those their key started. */
static bool s_may_read (const json_t *who, const json_t *identity)
{
    if (!who) return true;
    if (bmq_role_allows (bmq_role_parse (json_string_value (json_object_get (who, "role"))), BMQ_ROLE_REVIEWER)) return true;
    const char *mine = json_string_value (json_object_get (who, "name"));
    const char *theirs = json_string_value (json_object_get (identity, "name"));
    return mine && theirs && !strcmp (mine, theirs);
}

static json_t *s_structured (json_t *data)
{
    return json_pack ("{s:[{s:s, s:s}], s:o}", "content", "type", "text", "text", "audit", "structuredContent", data);
}

/* "stories": the records of kinds request* (newest first), one entry per story. */
static json_t *s_stories (const json_t *records, const json_t *who)
{
    json_t *by_cid = json_object (), *order = json_array ();
    size_t i;
    json_t *rec;
    json_array_foreach (records, i, rec) {
        const char *cid = json_string_value (json_object_get (rec, "cid"));
        const char *kind = json_string_value (json_object_get (rec, "kind"));
        json_t *data = json_object_get (rec, "data");
        if (!cid || !*cid || !kind || !json_is_object (data)) continue;
        json_t *story = json_object_get (by_cid, cid);
        if (!story) {
            if (json_object_size (by_cid) >= 4 * BMQ_MCP_AUDIT_STORIES) continue;
            story = json_pack ("{s:s}", "story", cid);
            json_object_set_new (by_cid, cid, story);
            json_array_append_new (order, json_string (cid));
        }
        const json_t *identity = s_identity (rec);
        if (identity) {
            json_object_set (story, "_identity", (json_t *) identity);
            json_t *ts = json_object_get (rec, "ts");
            if (json_is_integer (ts)) json_object_set (story, "ts", ts);
            const char *request = json_string_value (json_object_get (data, "request"));
            const char *command = json_string_value (json_object_get (data, "command"));
            const char *name = json_string_value (json_object_get (identity, "name"));
            const char *role = json_string_value (json_object_get (identity, "role"));
            if (request) json_object_set_new (story, "request", json_string (request));
            if (command) json_object_set_new (story, "command", json_string (command));
            if (name) json_object_set_new (story, "started_by", json_string (name));
            if (role) json_object_set_new (story, "role", json_string (role));
        }
        else if (!strcmp (kind, "request.end")) {
            const char *outcome = json_string_value (json_object_get (data, "outcome"));
            json_t *ms = json_object_get (data, "duration_ms");
            if (outcome) json_object_set_new (story, "outcome", json_string (outcome));
            if (json_is_number (ms)) json_object_set (story, "duration_ms", ms);
        }
        const char *plan_id = json_string_value (json_object_get (data, "plan_id"));
        if (!plan_id) plan_id = json_string_value (json_object_get (rec, "plan_id"));
        if (plan_id && *plan_id && !json_object_get (story, "plan_id")) json_object_set_new (story, "plan_id", json_string (plan_id));
    }
    json_t *list = json_array ();
    json_t *cid;
    json_array_foreach (order, i, cid) {
        json_t *story = json_object_get (by_cid, json_string_value (cid));
        const json_t *identity = json_object_get (story, "_identity");
        const char *role = json_string_value (json_object_get (identity, "role"));
        if (!identity || (role && !strcmp (role, "service")) || !s_may_read (who, identity)) continue;   /* unknown start: nobody's */
        if (json_array_size (list) == BMQ_MCP_AUDIT_STORIES) break;
        json_object_del (story, "_identity");
        json_array_append (list, story);
    }
    json_decref (order);
    json_decref (by_cid);
    return s_structured (json_pack ("{s:o, s:i}", "stories", list, "limit", BMQ_MCP_AUDIT_STORIES));
}

/* "story": every record of the plan's story (or stories: a plan retried), when `who` started it. */
static json_t *s_story (const char *uri, const json_t *records, const json_t *who)
{
    const char *slash = strrchr (uri, '/');
    json_t *readable = json_object (), *out = json_array (), *stories = json_array ();
    size_t i;
    json_t *rec;
    json_array_foreach (records, i, rec) {
        const json_t *identity = s_identity (rec);
        const char *cid = json_string_value (json_object_get (rec, "cid"));
        if (identity && cid && s_may_read (who, identity)) {
            json_object_set_new (readable, cid, json_incref ((json_t *) identity));
            json_array_append_new (stories, json_string (cid));
        }
    }
    const char *started_by = NULL;
    json_array_foreach (records, i, rec) {
        const char *cid = json_string_value (json_object_get (rec, "cid"));
        json_t *identity = cid ? json_object_get (readable, cid) : NULL;
        if (!identity || json_array_size (out) >= STORY_RECORDS) continue;
        if (!started_by) started_by = json_string_value (json_object_get (identity, "name"));
        json_t *entry = json_object ();
        static const char *const keys[] = { "ts", "cid", "kind", "sender", "data", "flag" };
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            if (json_object_get (rec, keys[k])) json_object_set (entry, keys[k], json_object_get (rec, keys[k]));
        json_array_append_new (out, entry);
    }
    json_t *result = NULL;
    if (json_array_size (out))
        result = s_structured (json_pack ("{s:s, s:O, s:s?, s:O}", "plan_id", slash ? slash + 1 : "", "stories", stories,
                                          "started_by", started_by, "records", out));
    json_decref (out);
    json_decref (stories);
    json_decref (readable);
    return result;
}

json_t *bmq_mcp_audit_view (const char *view, const char *uri, const json_t *records, const json_t *who)
{
    if (!json_is_array (records) || !view || !uri) return NULL;
    if (!strcmp (view, "stories")) return s_stories (records, who);
    if (!strcmp (view, "story")) return s_story (uri, records, who);
    return NULL;
}
