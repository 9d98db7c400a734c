/* gui_scene_call — send one scene command through a running stack's gateway
 * (the path `blendmq scene` takes) and write what comes back: the result JSON
 * on stdout, the blob (a PNG, a .blend) to OUT if given. For the GUI test,
 * which asks for commands the CLI has no word for (viewport_screenshot).
 *
 *   gui_scene_call RUN_DIR/blendmq.yaml COMMAND ARGS_JSON [OUT]
 *
 * Exit 0 with a scene.reply, 1 with an error answer, 2 on bad use or no answer. */
#include "bus.h"
#include "config.h"
#include "peer.h"

#include <stdio.h>
#include <string.h>

#define ANSWER_TIMEOUT_MS 120000

static int s_write (const char *path, const unsigned char *data, size_t len)
{
    FILE *f = fopen (path, "wb");
    if (!f) return -1;
    size_t w = fwrite (data, 1, len, f);
    return fclose (f) == 0 && w == len ? 0 : -1;
}

int main (int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf (stderr, "usage: gui_scene_call CONFIG COMMAND ARGS_JSON [OUT]\n");
        return 2;
    }
    char err[256];
    bmq_config_t *cfg = bmq_config_load (argv[1], err, sizeof err);
    json_t *args = json_loads (argv[3], 0, NULL);
    if (!cfg || !json_is_object (args)) {
        fprintf (stderr, "gui_scene_call: %s\n", cfg ? "ARGS_JSON must be a JSON object" : err);
        json_decref (args);
        bmq_config_destroy (&cfg);
        return 2;
    }
    bmq_envelope_set_sender ("gui-test");
    if (bmq_bus_security_init (cfg, "cli", err, sizeof err)) {      /* CURVE: the run dir's cli key */
        fprintf (stderr, "gui_scene_call: %s\n", err);
        json_decref (args);
        bmq_config_destroy (&cfg);
        return 2;
    }
    int interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms");
    bmq_peer_t *gw = bmq_peer_new ("gateway", bmq_config_str (cfg, "gateway.endpoint"), interval, 4);
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL, json_pack ("{s:s, s:o}", "command", argv[2], "args", args));
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", req->cid);
    bmq_peer_send (gw, req);
    bmq_envelope_destroy (&req);
    int code = 2;
    int64_t until = bmq_mono_ms () + ANSWER_TIMEOUT_MS;
    zpoller_t *poller = zpoller_new (bmq_peer_sock (gw), NULL);
    while (code == 2 && bmq_mono_ms () < until) {
        bmq_peer_tick (gw);
        if (!zpoller_wait (poller, interval / 2)) {
            if (zpoller_terminated (poller)) break;
            continue;
        }
        bmq_envelope_t *env = bmq_bus_recv (bmq_peer_sock (gw), NULL);
        if (env && !bmq_peer_heard (gw, env) && !strcmp (env->cid, cid)) {
            if (env->type == BMQ_MSG_SCENE_REPLY) {
                char *text = json_dumps (json_object_get (env->body, "result"), JSON_COMPACT);
                printf ("%s\n", text);
                free (text);
                code = argc == 5 && s_write (argv[4], env->blob, env->blob_len) ? 2 : 0;
                if (code) fprintf (stderr, "gui_scene_call: cannot write %s\n", argv[4]);
            }
            else if (env->type == BMQ_MSG_ERROR) {
                fprintf (stderr, "gui_scene_call: %s: %s\n", bmq_body_str (env, "code"), bmq_body_str (env, "message"));
                code = 1;
            }
        }
        bmq_envelope_destroy (&env);
    }
    if (code == 2 && bmq_mono_ms () >= until) fprintf (stderr, "gui_scene_call: no answer from the gateway\n");
    zpoller_destroy (&poller);
    bmq_peer_destroy (&gw);
    bmq_config_destroy (&cfg);
    return code;
}
