/* cli_assets — `blendmq assets search|import` (issue 16).
 *
 *   assets search SOURCE [QUERY] [--type T] [--json]   asset.search through the
 *       gateway to the executor's assets client: one line per hit (id, type,
 *       name), or the hits as JSON
 *   assets import SOURCE ID [--type T] [--resolution R] [--format F]
 *                 [--name NAME] [--on OBJECT]
 *       a one-step plan, asset.import, validated and run like any plan (the
 *       executor fetches the asset, from its cache when it can, first)
 *   assets generate [PROMPT] [--image FILE]... [--name NAME] [--tier T] [--deadline S] [--json]
 *       a model made from text and/or images by Hyper3D, then imported (cli_generate.c) */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static int s_search (const bmq_cli_opts_t *opts, const char *source, const char *query)
{
    bmq_config_t *cfg = bmq_cli_config (opts);
    if (!cfg) return 2;
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_ASSET_SEARCH, NULL,
                                            json_pack ("{s:s, s:s?, s:s?, s:s?}", "source", source, "query", query,
                                                       "type", opts->asset_type, "target", opts->target));
    bmq_envelope_t *reply = bmq_cli_ask (cfg, req, BMQ_MSG_UNKNOWN);
    bmq_config_destroy (&cfg);
    if (!reply) return 2;
    int code = 0;
    if (reply->type == BMQ_MSG_ASSET_RESULT) {
        json_t *results = json_object_get (reply->body, "results");
        if (opts->json) {
            char *text = json_dumps (results, JSON_COMPACT);
            printf ("%s\n", text ? text : "[]");
            free (text);
        }
        else {
            size_t i;
            json_t *r;
            json_array_foreach (results, i, r)
                printf ("%-32s %-8s %s\n", json_string_value (json_object_get (r, "id")) ?: "?",
                        json_string_value (json_object_get (r, "type")) ?: "?", json_string_value (json_object_get (r, "name")) ?: "");
            if (!json_array_size (results)) fprintf (stderr, "no %s assets match\n", source);
        }
    }
    else {
        fprintf (stderr, "blendmq: %s: %s\n", bmq_body_str (reply, "code") ?: "error", bmq_body_str (reply, "message") ?: "?");
        code = reply->type == BMQ_MSG_ERROR && !strcmp (bmq_body_str (reply, "code") ?: "", "asset_source") ? 1 : 2;
    }
    bmq_envelope_destroy (&reply);
    return code;
}

static int s_import (const bmq_cli_opts_t *opts, const char *source, const char *id)
{
    const char *type = opts->asset_type ? opts->asset_type : "model";
    json_t *params = json_pack ("{s:s, s:s, s:s}", "source", source, "id", id, "type", type);
    if (opts->resolution) json_object_set_new (params, "resolution", json_string (opts->resolution));
    if (opts->format) json_object_set_new (params, "format", json_string (opts->format));
    json_t *step = json_pack ("{s:s, s:o}", "operation", "asset.import", "params", params);
    if (opts->asset_name) json_object_set_new (step, "name", json_string (opts->asset_name));
    if (opts->asset_on) json_object_set_new (step, "target", json_string (opts->asset_on));
    return bmq_cli_run (opts, json_pack ("[o]", step), false);
}

int bmq_cli_assets (const bmq_cli_opts_t *opts, int nwords, const char **words)
{
    if (!strcmp (words[0], "search") && (nwords == 2 || nwords == 3))
        return s_search (opts, words[1], nwords == 3 ? words[2] : NULL);
    if (!strcmp (words[0], "import") && nwords == 3) return s_import (opts, words[1], words[2]);
    if (!strcmp (words[0], "generate") && (nwords == 2 || (nwords == 1 && opts->nimages)))
        return bmq_cli_assets_generate (opts, nwords == 2 ? words[1] : NULL);
    fprintf (stderr, "usage: blendmq assets search SOURCE [QUERY] [--type T] | assets import SOURCE ID [--type T] "
             "[--resolution R] [--format F] [--name NAME] [--on OBJECT] | assets generate [PROMPT] [--image FILE]... [--name NAME] [--tier T] "
             "[--deadline S]\n");
    return 2;
}
