/* cli_overrides — BLENDMQ_SECTION_KEY variables (common/config.c) and the
 * processes `blendmq up` starts (issue 24).
 *
 * `up` reads the configuration with the environment applied and writes the
 * effective result to RUN/blendmq.yaml (and executor-K.yaml); every process it
 * starts reads those files. A variable left in their environment would be
 * applied once more, on top of what `up` decided: BLENDMQ_BLENDER_PORT made
 * the executor look for Blender on that port while the supervisor had started
 * Blender elsewhere. So:
 *   - `up` refuses the variables of the keys it sets itself (the Blender it
 *     starts: its socket, host, port, token; the verdict key; with --ipc the
 *     endpoints), naming the variable and why;
 *   - the supervisor removes every override variable from its environment
 *     before it starts anything: each process sees exactly the files. */
#include "cli.h"
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Does BLENDMQ_<rest> name a configuration key? Its "section.key" in key. */
static bool s_config_key (const bmq_config_t *defaults, const char *var, char *key, size_t len)
{
    if (strncmp (var, "BLENDMQ_", 8)) return false;
    const char *rest = var + 8, *eq = strchr (rest, '=');
    size_t n = eq ? (size_t) (eq - rest) : strlen (rest);
    if (n == 0 || n >= len) return false;
    for (size_t cut = 1; cut < n; cut++) {           /* every '_' may end the section */
        if (rest[cut] != '_') continue;
        for (size_t i = 0; i < n; i++) key[i] = (char) tolower ((unsigned char) rest[i]);
        key[n] = 0;
        key[cut] = '.';
        if (bmq_config_json (defaults, key) && !json_is_object (bmq_config_json (defaults, key))) return true;
    }
    return false;
}

static bmq_config_t *s_defaults (void)
{
    /* the built-in defaults name every key; the variables themselves must not
     * change what we look up, so they are applied to a copy only after */
    return bmq_config_load (NULL, NULL, 0);
}

int bmq_cli_overrides_refused (const bmq_cli_opts_t *opts, char *err, size_t errlen)
{
    static const struct { const char *key, *why; int when; } managed[] = {       /* when: 0 always, 1 Blender, 2 --ipc */
        { "blender.host", "`up` starts Blender itself and connects to it on its own socket (blender.socket)", 1 },
        { "blender.port", "`up` starts Blender itself on a unix socket of its own (blender.socket), not on a port", 1 },
        { "blender.socket", "`up` puts Blender's socket in its state folder (RUN/blender-state/NAME/link.sock)", 1 },
        { "blender.token_file", "`up` makes a new Blender token for each start (RUN/blender.token)", 1 },
        { "blender.busy_file", "`up` sets where the executor tells the supervisor that Blender is busy", 1 },
        { "security.verdict_key_file", "`up` makes a new verdict key for each start (RUN/verdict.key)", 0 },
        { "gateway.endpoint", "--ipc puts every endpoint in the run dir", 2 },
        { "gateway.events", "--ipc puts every endpoint in the run dir", 2 },
        { "gateway.validator_broker", "--ipc puts every endpoint in the run dir", 2 },
        { "planner.endpoint", "--ipc puts every endpoint in the run dir", 2 },
        { "executor.endpoint", "--ipc puts every endpoint in the run dir", 2 },
        { "executor.events", "--ipc puts every endpoint in the run dir", 2 },
        { "audit.endpoint", "--ipc puts every endpoint in the run dir", 2 },
    };
    bmq_config_t *defaults = s_defaults ();
    if (!defaults) return 0;
    int rc = 0;
    for (char **e = environ; e && *e && !rc; e++) {
        char key[256];
        if (!s_config_key (defaults, *e, key, sizeof key)) continue;
        for (size_t i = 0; i < sizeof managed / sizeof *managed; i++) {
            bool applies = managed[i].when == 0 || (managed[i].when == 1 && !opts->no_blender) || (managed[i].when == 2 && opts->ipc);
            if (!applies || strcmp (managed[i].key, key)) continue;
            snprintf (err, errlen, "%.*s is set, but %s: it would mean one thing to `up` and another to the services it starts "
                      "(unset it%s)", (int) strcspn (*e, "="), *e, managed[i].why,
                      managed[i].when == 1 ? ", or use --no-blender to connect to a Blender you started" : "");
            rc = -1;
            break;
        }
    }
    bmq_config_destroy (&defaults);
    return rc;
}

int bmq_cli_overrides_clear (void)
{
    bmq_config_t *defaults = s_defaults ();
    if (!defaults) return 0;
    int cleared = 0;
    for (bool again = true; again;) {       /* unsetenv changes environ: start over after each */
        again = false;
        for (char **e = environ; e && *e; e++) {
            char key[256], name[256];
            if (!s_config_key (defaults, *e, key, sizeof key)) continue;
            snprintf (name, sizeof name, "%.*s", (int) strcspn (*e, "="), *e);
            unsetenv (name);
            cleared++;
            again = true;
            break;
        }
    }
    bmq_config_destroy (&defaults);
    return cleared;
}
