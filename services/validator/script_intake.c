/* script_intake — one script out of a request, decoded and checked once (see script_intake.h). */
#include "script_intake.h"

#include "script_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_BOM "\xef\xbb\xbf"

static bool s_has_rule (const json_t *verdict, const char *rule)
{
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get (verdict, "errors"), i, e)
        if (!strcmp (json_string_value (json_object_get (e, "rule")) ?: "", rule))
            return true;
    return false;
}

static void s_warn (json_t *verdict, int line, const char *rule, const char *message)
{
    json_t *w = json_object_get (verdict, "warnings");
    if (!json_is_array (w)) {
        w = json_array ();
        json_object_set_new (verdict, "warnings", w);
    }
    json_array_append_new (w, json_pack ("{s:i, s:i, s:s, s:s}", "line", line, "col", 0, "rule", rule, "message", message));
}

/* The reply's line `line` (1-based), clipped for a message. */
static void s_quote_line (const char *text, size_t len, int line, char *out, size_t outlen)
{
    const char *p = text, *end = text + len;
    for (int n = 1; n < line && p < end; n++) {
        const char *nl = memchr (p, '\n', (size_t) (end - p));
        p = nl ? nl + 1 : end;
    }
    const char *nl = memchr (p, '\n', (size_t) (end - p));
    char raw[96];
    size_t n = (size_t) ((nl ? nl : end) - p);
    snprintf (raw, sizeof raw, "%.*s", (int) (n < sizeof raw - 1 ? n : sizeof raw - 1), p);
    bmq_script_clip (out, outlen, raw, 60);
}

json_t *bmq_script_intake (bmq_script_validator_t *validator, const char *mode, const char *reply, size_t reply_len,
                        const char *att_text, size_t att_len, const char *att_name, bmq_script_extracted_t *ex)
{
    bool bom = false;
    memset (ex, 0, sizeof *ex);
    if (att_text && att_len >= 3 && !memcmp (att_text, S_BOM, 3)) { att_text += 3; att_len -= 3; bom = true; }
    if (!att_text && reply && reply_len >= 3 && !memcmp (reply, S_BOM, 3)) { reply += 3; reply_len -= 3; bom = true; }
    json_t *verdict = NULL;
    if (!att_text && reply && reply_len > 0 && reply_len <= BMQ_SCRIPT_EXTRACT_MAX) {
        verdict = bmq_script_validate (validator, reply, reply_len);
        if (!verdict)
            return NULL;
        if (!s_has_rule (verdict, "syntax")) {          /* the whole reply is the script */
            ex->script = malloc (reply_len + 1);
            if (!ex->script) { json_decref (verdict); return NULL; }
            memcpy (ex->script, reply, reply_len);
            ex->script[reply_len] = 0;
            ex->len = reply_len;
            ex->source = "whole";
        }
        else {
            json_decref (verdict);
            verdict = NULL;
        }
    }
    if (!verdict) {
        if (bmq_script_extract (mode, reply, reply_len, att_text, att_len, att_name, ex))
            return json_pack ("{s:b, s:[{s:i, s:i, s:s, s:s}], s:[], s:[], s:b, s:s}", "is_valid", 0, "errors", "line", 0,
                              "col", 0, "rule", "extract", "message", ex->error, "warnings", "operator_list",
                              "reformat", ex->reformat, "hint", BMQ_SCRIPT_REFORMAT_HINT);
        verdict = bmq_script_validate (validator, ex->script, ex->len);
        if (!verdict)
            return NULL;
        char msg[200], quote[80];
        for (size_t i = 0; i < ex->ndropped && i < BMQ_SCRIPT_DROPPED_MAX; i++) {
            s_quote_line (reply, reply_len, ex->dropped[i], quote, sizeof quote);
            snprintf (msg, sizeof msg, "line %d of the reply is not part of the script: \"%s\"", ex->dropped[i], quote);
            s_warn (verdict, ex->dropped[i], "extract", msg);
        }
        if (ex->ndropped > BMQ_SCRIPT_DROPPED_MAX) {
            snprintf (msg, sizeof msg, "%zu more lines of the reply are not part of the script",
                      ex->ndropped - BMQ_SCRIPT_DROPPED_MAX);
            s_warn (verdict, 0, "extract", msg);
        }
    }
    if (bom)
        s_warn (verdict, 1, "encoding", "a UTF-8 byte-order mark was removed: the script is the text after it");
    json_object_set_new (verdict, "source", json_string (ex->source));
    json_object_set_new (verdict, "text", json_stringn (ex->script, ex->len));
    return verdict;
}

