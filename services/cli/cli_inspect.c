/* cli_inspect — `blendmq capabilities [--compact]` and `blendmq inspect NAME`.
 *
 * capabilities: the palette a validator works with (curated, narrowed by the
 * connected Blender's RNA once it has been checked), in seed 001's shape:
 * operation → {description, params}; --compact prints one signature line per
 * operation instead (for an LLM prompt). inspect: one Blender operator's full
 * description from its RNA, as the add-on reads it (through the executor). */
#include "bus.h"
#include "cli.h"
#include "peer.h"

#include <stdio.h>
#include <string.h>

/* One question to the gateway, one answer (cli_client.c). */
static bmq_envelope_t *s_ask (bmq_config_t *cfg, bmq_envelope_t *req)
{
    return bmq_cli_ask (cfg, req, BMQ_MSG_UNKNOWN);
}

static int s_print (const json_t *value, bool json)
{
    char *text = json_dumps (value, (json ? JSON_COMPACT : JSON_INDENT (2)) | JSON_REAL_PRECISION (10));
    if (!text) return 2;
    printf ("%s\n", text);
    free (text);
    return 0;
}

/* Common ending: print `key` of the expected reply's body, or the error. */
static int s_finish (bmq_envelope_t *answer, bmq_msg_type_t expected, const char *key, bool json)
{
    if (!answer) return 2;
    int code;
    if (answer->type == expected && json_object_get (answer->body, key))
        code = s_print (json_object_get (answer->body, key), json);
    else if (answer->type == BMQ_MSG_ERROR) {
        if (json) s_print (answer->body, true);
        else bmq_cli_say_error (answer, "");
        code = 1;
    }
    else {
        fprintf (stderr, "blendmq: unexpected answer %s\n", bmq_msg_type_name (answer->type));
        code = 2;
    }
    bmq_envelope_destroy (&answer);
    return code;
}

int bmq_cli_capabilities (const bmq_cli_opts_t *opts)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    bmq_envelope_t *answer = s_ask (cfg, bmq_envelope_new (BMQ_MSG_CAPABILITIES_REQUEST, NULL,
        json_pack ("{s:s}", "form", opts->compact ? "compact" : "full")));
    bmq_config_destroy (&cfg);
    if (answer && answer->type == BMQ_MSG_CAPABILITIES_REPLY && !opts->json) {
        json_t *palette = json_object_get (answer->body, "palette");
        size_t bytes = json_dumpb (palette, NULL, 0, JSON_COMPACT | JSON_REAL_PRECISION (10));
        const char *rna = json_string_value (json_object_get (json_object_get (answer->body, "rna"), "state"));
        fprintf (stderr, "# %zu operations; %zu bytes as compact JSON (about %zu tokens); checked against Blender: %s\n",
                 json_object_size (palette), bytes, bytes / 4, rna ? rna : "?");
    }
    return s_finish (answer, BMQ_MSG_CAPABILITIES_REPLY, "palette", opts->json);
}

int bmq_cli_inspect (const bmq_cli_opts_t *opts, const char *name)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    bmq_envelope_t *answer = s_ask (cfg, bmq_envelope_new (BMQ_MSG_INSPECT_REQUEST, NULL, json_pack ("{s:s}", "tool_name", name)));
    bmq_config_destroy (&cfg);
    return s_finish (answer, BMQ_MSG_INSPECT_REPLY, "tool", opts->json);
}
