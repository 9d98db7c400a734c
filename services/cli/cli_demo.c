/* cli_demo — `blendmq demo "PROMPT"`: a private stack (ipc endpoints in a
 * temporary run dir, so it never collides with a running one), the prompt run
 * end to end, the scene saved as OUT/NAME.blend and previewed as OUT/NAME.png,
 * and everything stopped again. */
#include "cli.h"

#include <czmq.h>
#include <errno.h>
#include <sys/stat.h>

static void s_slug (const char *name, char *out, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; name && name[i] && j + 1 < len; i++) {
        char c = name[i];
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') out[j++] = c;
        else if (c >= 'A' && c <= 'Z') out[j++] = (char) (c - 'A' + 'a');
        else if (j && out[j - 1] != '_') out[j++] = '_';
    }
    out[j] = 0;
    if (!j) snprintf (out, len, "scene");
}

int bmq_cli_demo (bmq_cli_opts_t *opts, const char *prompt)
{
    int64_t t0 = zclock_mono ();
    const char *out_dir = opts->out_dir ? opts->out_dir : "out";
    if (mkdir (out_dir, 0755) && errno != EEXIST) {
        fprintf (stderr, "blendmq: cannot create %s: %s\n", out_dir, strerror (errno));
        return 2;
    }
    char tmpl[] = "/tmp/blendmq-demo-XXXXXX";
    if (!mkdtemp (tmpl)) { fprintf (stderr, "blendmq: cannot create a run dir: %s\n", strerror (errno)); return 2; }
    snprintf (opts->run_dir, sizeof opts->run_dir, "%s", tmpl);
    opts->ipc = true;
    opts->config_path = NULL;

    printf ("starting blendmq: gateway, planner, %d validators, executor, audit, headless Blender\n", opts->validators);
    int code = bmq_cli_up (opts);
    if (code) return code;
    printf ("stack up in %.1f s\n\n> %s\n", (zclock_mono () - t0) / 1000.0, prompt);
    fflush (stdout);
    /* `up` wrote the config; from here on the client commands read it */
    char recipe[128] = "";
    int64_t t_chat = zclock_mono ();
    code = bmq_cli_chat (opts, prompt, recipe, sizeof recipe);
    int64_t chat_ms = zclock_mono () - t_chat;
    if (code == 0) {
        char name[128], blend[1200], png[1200];
        s_slug (recipe, name, sizeof name);
        snprintf (blend, sizeof blend, "%s/%s.blend", out_dir, name);
        snprintf (png, sizeof png, "%s/%s.png", out_dir, name);
        code = bmq_cli_scene (opts, "save_blend", NULL, blend);
        if (code == 0) code = bmq_cli_scene (opts, "render_preview", json_pack ("{s:i, s:i}", "width", 640, "height", 480), png);
        if (code == 0) printf ("\nwrote %s and %s\n", blend, png);
    }
    printf ("stopping the stack\n");
    bmq_cli_down (opts);
    if (code == 0) {
        char cmd[1300];
        snprintf (cmd, sizeof cmd, "rm -rf '%s'", opts->run_dir);
        if (system (cmd) != 0) fprintf (stderr, "blendmq: could not remove %s\n", opts->run_dir);
        printf ("demo finished in %.1f s (the prompt itself: %lld ms)\n", (zclock_mono () - t0) / 1000.0, (long long) chat_ms);
    }
    else
        fprintf (stderr, "blendmq: demo failed; logs kept in %s/logs\n", opts->run_dir);
    return code;
}
