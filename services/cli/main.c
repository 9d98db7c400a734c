/* blendmq — command-line client and stack manager. */
#include "cli.h"
#include "log.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


const char *bmq_cli_usage_text (void)
{
    return
        "usage: blendmq [--run-dir DIR] [--config FILE] [--json] COMMAND ...\n\n"
        "  up [--ipc] [--no-blender] [--validators N] [--blenders N]\n"
        "                          start the five services and a headless Blender; returns when all are healthy;\n"
        "                          a supervisor starts again any that exits (status shows restarts)\n"
        "  down                    stop everything `up` started\n"
        "  supervise               (run by `up`) restart the stack's processes when they exit, until SIGTERM\n"
        "  blender-run --token-file T --state-dir D [--blender B] -- ADD-ON ARGS\n"
        "                          the headless Blender confined (bwrap, seccomp, rlimits), as `up` runs it\n"
        "  status                  health of every service and of the Blender connection\n"
        "  demo \"PROMPT\" [--out DIR]  private stack: run the prompt, write DIR/NAME.blend and DIR/NAME.png, stop\n"
        "  chat \"PROMPT\"           plan, validate and run; one line per step; exit 0 only if the plan ran to the end\n"
        "                          (--target NAME: the Blender to build in, with up --blenders N: local, blender-2, ...)\n"
        "                          (a failed plan is rolled back; --keep-partial keeps what it did)\n"
        "  plan validate FILE.json print the verdict; exit 0 accepted, 1 rejected, 2 error\n"
        "  plan run FILE.json      validate and run an action plan\n"
        "  script validate FILE.py the static verdict on a bpy script as JSON; exit 0 valid, 1 rejected, 2 error\n"
        "  script sandbox FILE.py  validate, then run it in an isolated Blender on a copy of the live scene; prints\n"
        "                          the result with a new script_id and its sha256; exit 0 when it may be applied,\n"
        "                          1 rejected, 2 error\n"
        "  script apply ID         show that sandboxed script's sha256, status and line count; applies nothing\n"
        "  script apply ID --confirm --sha256 HEX\n"
        "                          apply that sandboxed script to the live scene, only if its sha256 is HEX (the\n"
        "                          script you reviewed) and the scene did not change since the sandbox run\n"
        "  script list             the sandboxed scripts, newest first: ID, state, lines, sha256 (pending ones can be applied)\n"
        "  capabilities [--compact]  the capability palette as JSON (operation -> parameters); --compact: one line each\n"
        "  inspect NAME            one Blender operator's description from its RNA (e.g. bpy.ops.mesh.primitive_cube_add)\n"
        "  watch                   print every progress event as it is published (Ctrl-C stops watching)\n"
        "  watch PLAN_ID           follow one plan (or a live script, by its id) until it ends; exit 0 done,\n"
        "                          1 failed, 130 cancelled; Ctrl-C cancels it and waits, twice leaves without waiting\n"
        "  web [--open]            print the web page's address with a token (the `web` client's); --open opens it\n"
        "  mcp                     an MCP server on stdin/stdout for AI assistants ({\"command\": \"blendmq\", \"args\": [\"mcp\"]});\n"
        "                          Streamable HTTP is served by the gateway (`status` prints its URL)\n"
        "  scene [info|save FILE.blend|render FILE.png|reset|fingerprint]\n"
        "                          the live scene: objects as JSON, a saved copy, a Workbench preview, emptied\n"
        "                          (everything: data, orphans, compositor, world, custom properties), or its\n"
        "                          fingerprint (a deep digest of the whole state; --json: with each data block's)\n"
        "  scene look [FILE.png] [--out FILE.png] [--angles N]\n"
        "                          N views (1..8, default 4: front, right, top, perspective) as one contact sheet\n"
        "                          (default look.png) and each object's vertices, faces, non-manifold edges, loose parts\n"
        "  assets search SOURCE [QUERY] [--type model|hdri|texture] [--json]\n"
        "                          search an asset library (polyhaven): id, type, name\n"
        "  assets import SOURCE ID [--type model|hdri|texture] [--resolution 1k|2k|4k|8k] [--format F]\n"
        "                          [--name NAME] [--on OBJECT]\n"
        "                          a one-step plan (asset.import): a model named NAME, a texture as OBJECT's\n"
        "                          material, an HDRI as the world light; downloaded once, then cached\n"
        "  assets generate [\"PROMPT\"] [--image F.png|F.jpg]... [--name NAME] [--tier Sketch|Regular|...] [--deadline S]\n"
        "                          make a model from text and/or images with Hyper3D Rodin (assets.hyper3d_api_key or\n"
        "                          HYPER3D_API_KEY), printing its progress, then import it like assets import;\n"
        "                          Ctrl-C cancels the job; exit 0 made and imported, 1 failed or past its deadline\n"
        "                          (default assets.hyper3d_deadline_s), 130 cancelled\n"
        "  audit list [--all] [--since T] [--plan ID] [--kind K] [--limit N] | audit show CID | audit export [--format jsonl] | audit verify\n"
        "                          the audit trail: recent records (people's requests; --all: the look-ups services\n"
        "                          make among themselves too), one story in order, or everything as JSON lines\n"
        "  cancel PLAN_ID | SCRIPT_ID | --all-mine\n"
        "                          stop a plan in progress (after its current step; what it did is rolled back), or\n"
        "                          a script running live (interrupted in Blender, rolled back); --all-mine: every plan\n"
        "                          and script of this client key (Ctrl-C on chat, plan run, script apply and watch\n"
        "                          PLAN_ID does the same for their own; Ctrl-C twice leaves without waiting)\n"
        "  config check [FILE]     check a configuration (default: the run dir's, else the built-in one): every key,\n"
        "                          type, choice and range, YAML syntax at its line and column; exit 0 valid, 1 not\n"
        "  config keys             every configuration key: type, default, allowed values, what it is (--json)\n"
        "  keys init               make the deployment's keys in the keys dir (one per service; clients cli, web,\n"
        "                          panel: admin, mcp: operator, each with an HTTP token); keeps existing ones\n"
        "  keys add-client NAME --role viewer|operator|reviewer|admin\n"
        "                          a new client key and HTTP token, trusted by every server\n"
        "  keys revoke NAME        stop trusting a client (its cert and token are removed)\n"
        "  keys list               every key: name, role, public key, trusted, token\n"
        "                          (--keys-dir DIR, default security.keys_dir, else RUN_DIR/keys;\n"
        "                          --key NAME: talk to the stack with another client key than cli)\n\n"
        "The run directory (default $BLENDMQ_RUN_DIR, else $XDG_RUNTIME_DIR/blendmq or /tmp/blendmq-UID)\n"
        "holds the running stack's configuration, logs, keys and pids.\n";
}

static void s_usage (FILE *out)
{
    fputs (bmq_cli_usage_text (), out);
}

static void s_default_run_dir (char *buf, size_t len)
{
    const char *env = getenv ("BLENDMQ_RUN_DIR");
    const char *xdg = getenv ("XDG_RUNTIME_DIR");
    if (env && *env) snprintf (buf, len, "%s", env);
    else if (xdg && *xdg) snprintf (buf, len, "%s/blendmq", xdg);
    else snprintf (buf, len, "/tmp/blendmq-%d", (int) getuid ());
}

int main (int argc, char **argv)
{
    if (argc >= 2 && !strcmp (argv[1], "blender-run")) return bmq_cli_blender_run (argc - 2, argv + 2);    /* cli_blender_run.c */
    bmq_cli_opts_t opts = { .validators = 2, .blenders = 1, .limit = -1 };
    s_default_run_dir (opts.run_dir, sizeof opts.run_dir);
    const char *words[4] = { NULL };
    int nwords = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp (a, "--help") || !strcmp (a, "-h")) { s_usage (stdout); return 0; }
        else if (!strcmp (a, "--run-dir") && i + 1 < argc) snprintf (opts.run_dir, sizeof opts.run_dir, "%s", argv[++i]);
        else if (!strcmp (a, "--config") && i + 1 < argc) opts.config_path = argv[++i];
        else if (!strcmp (a, "--out") && i + 1 < argc) opts.out_dir = argv[++i];
        else if (!strcmp (a, "--validators") && i + 1 < argc) opts.validators = atoi (argv[++i]);
        else if (!strcmp (a, "--blenders") && i + 1 < argc) opts.blenders = atoi (argv[++i]);
        else if (!strcmp (a, "--target") && i + 1 < argc) opts.target = argv[++i];
        else if (!strcmp (a, "--since") && i + 1 < argc) opts.since = argv[++i];
        else if (!strcmp (a, "--plan") && i + 1 < argc) opts.plan = argv[++i];
        else if (!strcmp (a, "--kind") && i + 1 < argc) opts.kind = argv[++i];
        else if (!strcmp (a, "--format") && i + 1 < argc) opts.format = argv[++i];
        else if (!strcmp (a, "--limit") && i + 1 < argc) opts.limit = atoi (argv[++i]);
        else if (!strcmp (a, "--angles") && i + 1 < argc) opts.angles = argv[++i];
        else if (!strcmp (a, "--type") && i + 1 < argc) opts.asset_type = argv[++i];
        else if (!strcmp (a, "--resolution") && i + 1 < argc) opts.resolution = argv[++i];
        else if (!strcmp (a, "--name") && i + 1 < argc) opts.asset_name = argv[++i];
        else if (!strcmp (a, "--on") && i + 1 < argc) opts.asset_on = argv[++i];
        else if (!strcmp (a, "--tier") && i + 1 < argc) opts.tier = argv[++i];
        else if (!strcmp (a, "--image") && i + 1 < argc) {
            if (opts.nimages < 6) opts.images[opts.nimages] = argv[i + 1];
            if (opts.nimages < 6) opts.nimages++;
            i++;
        }
        else if (!strcmp (a, "--deadline") && i + 1 < argc) {
            char *end;
            long v = strtol (argv[++i], &end, 10);
            opts.deadline_s = *end || v < 1 || v > 1000000 ? -1 : (int) v;     /* checked by the command */
        }
        else if (!strcmp (a, "--sha256") && i + 1 < argc) opts.sha256 = argv[++i];
        else if (!strcmp (a, "--key") && i + 1 < argc) opts.key_name = argv[++i];
        else if (!strcmp (a, "--keys-dir") && i + 1 < argc) opts.keys_dir = argv[++i];
        else if (!strcmp (a, "--role") && i + 1 < argc) opts.role = argv[++i];
        else if (!strcmp (a, "--json")) opts.json = true;
        else if (!strcmp (a, "--compact")) opts.compact = true;
        else if (!strcmp (a, "--ipc")) opts.ipc = true;
        else if (!strcmp (a, "--no-blender")) opts.no_blender = true;
        else if (!strcmp (a, "--keep-partial")) opts.keep_partial = true;
        else if (!strcmp (a, "--no-start")) opts.no_start = true;
        else if (!strcmp (a, "--confirm")) opts.confirm = true;
        else if (!strcmp (a, "--open")) opts.open_browser = true;
        else if (!strcmp (a, "--all-mine")) opts.all_mine = true;
        else if (!strcmp (a, "--all")) opts.all = true;
        else if (a[0] == '-' && a[1] == '-') { fprintf (stderr, "blendmq: unknown option %s (try --help)\n", a); return 2; }
        else if (nwords < 4) words[nwords++] = a;
        else { fprintf (stderr, "blendmq: too many arguments\n"); return 2; }
    }
    if (opts.validators < 1 || opts.validators > 64) { fprintf (stderr, "blendmq: --validators must be 1..64\n"); return 2; }
    if (opts.blenders < 1 || opts.blenders > 8) { fprintf (stderr, "blendmq: --blenders must be 1..8\n"); return 2; }
    if (!nwords) { s_usage (stderr); return 2; }
    const char *cmd = words[0];
    if (!bmq_cli_command_known (cmd)) return bmq_cli_unknown_command (NULL, cmd);
    bmq_log_init ("blendmq", false, getenv ("BLENDMQ_DEBUG") ? BMQ_LOG_DEBUG : BMQ_LOG_WARN);
    bmq_envelope_set_sender ("cli");
    zsys_init ();
    zsys_set_logstream (NULL);
    if (!strcmp (cmd, "mcp") && !opts.key_name) opts.key_name = "mcp";
    if (!strcmp (cmd, "keys")) return bmq_cli_keys (&opts, nwords - 1, words + 1);
    if (!strcmp (cmd, "up") && nwords == 1) return bmq_cli_up (&opts);
    if (!strcmp (cmd, "down") && nwords == 1) return bmq_cli_down (&opts);
    if (!strcmp (cmd, "supervise") && nwords == 1) return bmq_cli_supervise (&opts);
    if (!strcmp (cmd, "status") && nwords == 1) return bmq_cli_status (&opts);
    if (!strcmp (cmd, "watch") && nwords == 1) return bmq_cli_watch (&opts);
    if (!strcmp (cmd, "watch") && nwords == 2) return bmq_cli_watch_plan (&opts, words[1]);
    if (!strcmp (cmd, "mcp") && nwords == 1) return bmq_cli_mcp (&opts);
    if (!strcmp (cmd, "web") && nwords == 1) return bmq_cli_web (&opts);
    if (!strcmp (cmd, "capabilities") && nwords == 1) return bmq_cli_capabilities (&opts);
    if (!strcmp (cmd, "inspect") && nwords == 2) return bmq_cli_inspect (&opts, words[1]);
    if (!strcmp (cmd, "chat") && nwords <= 2) {
        int bad = bmq_cli_prompt_refused (nwords == 2 ? words[1] : NULL, "chat");
        return bad ? bad : bmq_cli_chat (&opts, words[1], NULL, 0);
    }
    if (!strcmp (cmd, "cancel") && nwords <= 2) return bmq_cli_cancel (&opts, nwords == 2 ? words[1] : NULL);
    if (!strcmp (cmd, "config")) return bmq_cli_config_command (&opts, nwords - 1, words + 1);
    if (!strcmp (cmd, "demo") && nwords <= 2) {
        int bad = bmq_cli_prompt_refused (nwords == 2 ? words[1] : NULL, "demo");
        return bad ? bad : bmq_cli_demo (&opts, words[1]);
    }
    if (!strcmp (cmd, "plan") && nwords == 3 && (!strcmp (words[1], "validate") || !strcmp (words[1], "run")))
        return bmq_cli_plan (&opts, words[1], words[2]);
    if (!strcmp (cmd, "audit") && nwords >= 2) return bmq_cli_audit (&opts, nwords - 1, words + 1);
    if (!strcmp (cmd, "assets") && (nwords >= 3 || (nwords == 2 && opts.nimages))) return bmq_cli_assets (&opts, nwords - 1, words + 1);
    if (!strcmp (cmd, "script") && nwords == 2 && !strcmp (words[1], "list")) return bmq_cli_script_list (&opts);
    if (!strcmp (cmd, "script") && nwords == 3
        && (!strcmp (words[1], "validate") || !strcmp (words[1], "sandbox") || !strcmp (words[1], "apply")))
        return bmq_cli_script (&opts, words[1], words[2]);
    if (!strcmp (cmd, "scene")) {
        const char *what = nwords > 1 ? words[1] : "info";
        if (!strcmp (what, "info") && nwords <= 2) return bmq_cli_scene (&opts, "scene_info", json_pack ("{s:i}", "limit", 1000), NULL);
        if (!strcmp (what, "reset") && nwords == 2) return bmq_cli_scene (&opts, "reset_scene", NULL, NULL);
        if (!strcmp (what, "fingerprint") && nwords == 2)
            return bmq_cli_scene (&opts, "fingerprint", opts.json ? json_pack ("{s:b}", "full", 1) : NULL, NULL);
        if (!strcmp (what, "save") && nwords == 3) return bmq_cli_scene (&opts, "save_blend", NULL, words[2]);
        if (!strcmp (what, "look") && nwords <= 3) return bmq_cli_scene_look (&opts, nwords == 3 ? words[2] : NULL);
        if (!strcmp (what, "render") && nwords == 3)
            return bmq_cli_scene (&opts, "render_preview", json_pack ("{s:i, s:i}", "width", 640, "height", 480), words[2]);
    }
    return bmq_cli_unknown_command (cmd, nwords > 1 ? words[1] : NULL);
}
