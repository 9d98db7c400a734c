/* cli — the `blendmq` command: shared options and the subcommands' entry points.
 * Exit codes: 0 success, 1 the request was refused or failed, 2 usage or
 * connection error. */
#ifndef BMQ_CLI_H
#define BMQ_CLI_H

#include "codec.h"
#include "config.h"
#include "peer.h"
#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    char        run_dir[1024];       /* where `up` keeps pids, logs, keys, config */
    const char *config_path;         /* --config */
    bool        json;                /* --json: machine-readable output */
    bool        ipc;                 /* up --ipc: endpoints as ipc:// sockets in run_dir */
    bool        no_start;            /* mcp --no-start: do not start a stack when none runs */
    bool        keep_partial;        /* chat, plan run: keep a failed plan's work instead of rolling back */
    bool        no_blender;          /* up --no-blender: connect to a Blender you run */
    const char *out_dir;             /* demo --out */
    int         validators;          /* up --validators N */
    int         blenders;            /* up --blenders N: N headless Blenders, each with its executor */
    const char *target;              /* chat, plan run, scene: --target NAME, the Blender to use */
    const char *sha256;              /* script apply --sha256 HEX: the script the person reviewed */
    bool        compact;             /* capabilities --compact */
    const char *since;               /* audit --since T */
    const char *plan;                /* audit --plan ID */
    const char *kind;                /* audit --kind K */
    const char *format;              /* audit export --format jsonl */
    int         limit;               /* audit list --limit N (-1: not given) */
    bool        confirm;             /* script apply --confirm: yes, change the live scene */
    const char *key_name;            /* --key NAME: the bus key to use (default cli; `mcp` uses mcp) */
    const char *keys_dir;            /* --keys-dir DIR (default security.keys_dir, else run_dir/keys) */
    const char *role;                /* keys add-client --role ROLE */
    bool        open_browser;        /* web --open: xdg-open the page */
    bool        all_mine;            /* cancel --all-mine: every plan of this key in progress */
    bool        all;                 /* audit list --all: internal records too (look-ups, heartbeats of services) */
    const char *angles;              /* scene look --angles N (checked by cli_look.c) */
    const char *asset_type;          /* assets --type model|hdri|texture */
    const char *resolution;          /* assets import --resolution 1k|2k|4k|8k */
    const char *asset_name;          /* assets import --name NAME (a model's root) */
    const char *asset_on;            /* assets import --on OBJECT (a texture's target) */
    const char *tier;                /* assets generate --tier T (Hyper3D Rodin's quality tier) */
    int         deadline_s;          /* assets generate --deadline S (0: the executor's default) */
    const char *images[6];           /* assets generate --image FILE (repeatable; a 6th is kept to be refused) */
    int         nimages;
} bmq_cli_opts_t;

/* Config for talking to a stack: --config, else run_dir/blendmq.yaml, else
 * defaults. Also starts the bus security with the key opts->key_name (cli)
 * from the keys dir (bmq_cli_keys_dir); NULL with a message when it cannot. */
bmq_config_t *bmq_cli_config (const bmq_cli_opts_t *opts);
/* The keys dir: --keys-dir, else security.keys_dir of `cfg` (may be NULL),
 * else run_dir/keys. */
const char *bmq_cli_keys_dir (const bmq_cli_opts_t *opts, const bmq_config_t *cfg, char *buf, size_t len);
/* `keys init | add-client NAME --role ROLE | revoke NAME | list` (cli_keys.c). */
int bmq_cli_keys (const bmq_cli_opts_t *opts, int nwords, const char **words);

int bmq_cli_up (bmq_cli_opts_t *opts);
int bmq_cli_down (const bmq_cli_opts_t *opts);
/* The supervisor of a stack (cli_supervise.c). `up`, once the run dir holds
 * its config and keys, starts it as a daemon (`blendmq supervise`, its own
 * session) and waits until it started every Blender and service: its pid, or
 * -1 with err (cli_supervisor_launch.c). bmq_cli_supervise is that daemon: it
 * restarts what exits until SIGTERM, then stops everything;
 * RUN/supervisor.json is its state (cli_supervisor_status.c). */
pid_t bmq_cli_supervisor_start (const bmq_cli_opts_t *opts, char *err, size_t errlen);
int bmq_cli_supervise (const bmq_cli_opts_t *opts);
/* cli_overrides.c (issue 24): a BLENDMQ_SECTION_KEY variable of a key `up`
 * sets itself is refused (-1, err names it); the supervisor clears every
 * override variable before it starts anything (returns how many), so each
 * process reads exactly the files `up` wrote. */
int bmq_cli_overrides_refused (const bmq_cli_opts_t *opts, char *err, size_t errlen);
int bmq_cli_overrides_clear (void);
/* cli_blender_run.c: `blendmq blender-run` (argv after the word). */
int bmq_cli_blender_run (int argc, char **argv);
int bmq_cli_status (const bmq_cli_opts_t *opts);
int bmq_cli_chat (const bmq_cli_opts_t *opts, const char *prompt, char *recipe_out, size_t recipe_len);
int bmq_cli_plan (const bmq_cli_opts_t *opts, const char *action, const char *file);
/* Validate (validate_only) or validate and run `plan` (taken), printing as `plan run` does. */
int bmq_cli_run (const bmq_cli_opts_t *opts, json_t *plan, bool validate_only);
/* `assets search SOURCE [QUERY]` and `assets import SOURCE ID` (cli_assets.c, issue 16). */
int bmq_cli_assets (const bmq_cli_opts_t *opts, int nwords, const char **words);
/* `assets generate [PROMPT] [--image FILE]…`: a Hyper3D model made from text and/or images (prompt may be
 * NULL when images are given), then imported; Ctrl-C cancels it (cli_generate.c). */
int bmq_cli_assets_generate (const bmq_cli_opts_t *opts, const char *prompt);
int bmq_cli_watch (const bmq_cli_opts_t *opts);
/* `watch PLAN_ID`: that plan's events until it ends; Ctrl-C cancels it (cli_watch.c, issue 29). */
int bmq_cli_watch_plan (const bmq_cli_opts_t *opts, const char *plan_id);
int bmq_cli_demo (bmq_cli_opts_t *opts, const char *prompt);
/* Ask the executor (through the gateway) for a scene command; write its blob to `path` if given. */
int bmq_cli_scene (const bmq_cli_opts_t *opts, const char *command, json_t *args, const char *path);
/* `scene look`: the add-on's look (views as one PNG at `path`, else --out, else
 * look.png; topology table or --json) (cli_look.c). */
int bmq_cli_scene_look (const bmq_cli_opts_t *opts, const char *path);
/* `audit list|show CID|export`: read the audit trail from the audit service.
 * words[0] is the action, then its arguments. */
int bmq_cli_audit (const bmq_cli_opts_t *opts, int nwords, const char **words);
/* `capabilities [--compact]`: the palette (seed 001 shape, or one line per operation). */
int bmq_cli_capabilities (const bmq_cli_opts_t *opts);
/* `inspect NAME`: one Blender operator's description from its RNA. */
int bmq_cli_inspect (const bmq_cli_opts_t *opts, const char *name);
/* `web [--open]`: print the page's URL with the `web` token (cli_web.c). */
int bmq_cli_web (const bmq_cli_opts_t *opts);
/* NAME.token from the keys dir into token: 0, or -1 with a message on stderr. */
int bmq_cli_read_token (const bmq_cli_opts_t *opts, const bmq_config_t *cfg, const char *name, char *token, size_t len);
/* The running stack's HTTP base URL (from `status`): 0, or -1 with a message. */
int bmq_cli_http_base (bmq_config_t *cfg, char *url, size_t len);
/* `mcp`: an MCP server on stdin/stdout (one JSON-RPC message per line; logs on stderr). */
int bmq_cli_mcp (const bmq_cli_opts_t *opts);
/* `script validate FILE | sandbox FILE | apply ID --confirm` (BPY scripts, issue 8). */
int bmq_cli_script (const bmq_cli_opts_t *opts, const char *action, const char *arg);
/* Send `req` (taken) to the gateway and return the first answer of its story
 * of type `want` (or any type but heartbeats for BMQ_MSG_UNKNOWN), or an
 * error; caller owns it. NULL when the gateway does not answer. */
bmq_envelope_t *bmq_cli_ask (bmq_config_t *cfg, bmq_envelope_t *req, bmq_msg_type_t want);
/* Send `req` (taken) to the gateway and feed every answer of its story to
 * `handler` until it returns an exit code (BMQ_CLI_CONTINUE: keep going). The
 * gateway is pinged meanwhile: silent, or restarted (the request is lost with
 * it), it ends the conversation with exit code 2 and a message (cli_client.c). */
#define BMQ_CLI_CONTINUE (-1)
typedef int (bmq_cli_handler_fn) (const bmq_envelope_t *env, void *state);
int bmq_cli_converse (bmq_config_t *cfg, bmq_envelope_t *req, bmq_cli_handler_fn *handler, void *state);
/* The same, with `tick` called before each wait (a few times a second): it
 * may send on the request's behalf (e.g. a cancel with the same cid) and
 * returns BMQ_CLI_CONTINUE or an exit code that ends the conversation. */
typedef int (bmq_cli_tick_fn) (bmq_peer_t *gw, const char *cid, void *state);
int bmq_cli_converse_ticking (bmq_config_t *cfg, bmq_envelope_t *req, bmq_cli_handler_fn *handler,
                              bmq_cli_tick_fn *tick, void *state);
/* The same, where Ctrl-C means stop (cli_cancel.c): the first SIGINT sends
 * cancel.request on the story and waits for its end (exit 130 once it ended
 * cancelled), a second one leaves at once saying how to cancel it later.
 * `what` names the thing in messages ("plan", "script"). */
int bmq_cli_converse_cancellable (bmq_config_t *cfg, bmq_envelope_t *req, bmq_cli_handler_fn *handler, void *state,
                                  const char *what);
/* bmq_cli_ask where Ctrl-C means stop; *code is the conversation's exit code (130: left after a second Ctrl-C). */
bmq_envelope_t *bmq_cli_ask_cancellable (bmq_config_t *cfg, bmq_envelope_t *req, bmq_msg_type_t want, const char *what, int *code);
/* cli_usage.c: the full help text; is `cmd` a command; an unknown command
 * (cmd NULL, sub the word) or subcommand said in one line with the closest
 * one, then the short usage (returns 2); an empty or oversized prompt (2 with
 * a message, else 0). */
const char *bmq_cli_usage_text (void);
bool bmq_cli_command_known (const char *cmd);
int  bmq_cli_unknown_command (const char *cmd, const char *sub);
int  bmq_cli_prompt_refused (const char *prompt, const char *cmd);
/* `config check [FILE]` (cli_config.c); a configuration's problems (err of
 * bmq_config_load, one a line) on stderr, counted, `after` saying what it meant. */
int  bmq_cli_config_command (const bmq_cli_opts_t *opts, int nwords, const char **words);
void bmq_cli_say_config_problems (const char *err, const char *after);
/* Processes the supervisor of run_dir stopped for a configuration reason
 * (exit BMQ_EXIT_CONFIG), each said with its log's report: how many. */
int  bmq_cli_config_refusal (const char *run_dir);
/* `cancel PLAN_ID | --all-mine` (cli_cancel.c). */
int bmq_cli_cancel (const bmq_cli_opts_t *opts, const char *plan_id);
/* An error answer on stderr: "blendmq: PREFIXcode: message", the code said once
 * even when the message starts with it. */
void bmq_cli_say_error (const bmq_envelope_t *env, const char *prefix);
/* One status.request to the gateway; NULL when it does not answer. */
json_t *bmq_cli_fetch_status (bmq_config_t *cfg);
/* `script list`: the scripts the sandbox has seen (pending ones can be applied). */
int bmq_cli_script_list (const bmq_cli_opts_t *opts);

#endif
