/* cli_supervisor_status — RUN/supervisor.json, the supervisor's state for
 * `blendmq status`: its settings, and per process its pid, state, restarts,
 * back-off and last exit. */
#include "cli_supervisor.h"
#include "log.h"
#include "service.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const s_state_names[] = { "running", "restarting", "stopped" };   /* supervisor_state_t */

static json_t *s_child_json (const supervisor_child_t *c, int64_t now_mono, int64_t now_wall)
{
    json_t *o = json_pack ("{s:s, s:i, s:s, s:i, s:I, s:I}", "name", c->name, "pid", (int) c->pid,
                           "state", s_state_names[c->state], "restarts", c->restarts,
                           "started_at", (json_int_t) c->started_at, "backoff_ms", (json_int_t) c->backoff_ms);
    json_object_set_new (o, "last_exit", *c->last_exit ? json_string (c->last_exit) : json_null ());
    json_object_set_new (o, "last_exit_at", c->last_exit_at ? json_integer (c->last_exit_at) : json_null ());
    if (c->old_pid) json_object_set_new (o, "old_pid", json_integer (c->old_pid));
    if (c->port) json_object_set_new (o, "port", json_integer (c->port));
    if (*c->socket) {
        json_object_set_new (o, "socket", json_string (c->socket));
        json_object_set_new (o, "confined", json_boolean (c->confined));
        json_object_set_new (o, "hang_kills", json_integer (c->hang_kills));
    }
    if (c->state == SUPERVISOR_RESTARTING)
        json_object_set_new (o, "restart_at", json_integer (now_wall + (c->restart_at - now_mono)));
    return o;
}

void supervisor_write_status (supervisor_t *sup)
{
    int64_t mono = bmq_mono_ms (), wall = bmq_now_ms ();
    json_t *children = json_array ();
    for (size_t i = 0; i < sup->count; i++) json_array_append_new (children, s_child_json (&sup->children[i], mono, wall));
    json_t *doc = json_pack ("{s:i, s:I, s:s, s:I, s:{s:I, s:I, s:I}, s:o}", "pid", (int) getpid (),
                             "started_at", (json_int_t) sup->started_at, "state", sup->state, "updated_at", (json_int_t) wall,
                             "settings", "restart_base_ms", (json_int_t) sup->base_ms, "restart_max_ms", (json_int_t) sup->max_ms,
                             "stable_after_ms", (json_int_t) sup->stable_ms, "children", children);
    char *text = json_dumps (doc, JSON_INDENT (1));
    json_decref (doc);
    char path[1200], tmp[1300], err[1400];
    snprintf (path, sizeof path, "%s/supervisor.json", sup->opts->run_dir);
    snprintf (tmp, sizeof tmp, "%s.tmp", path);
    if (!text || bmq_secret_file_write (tmp, text, strlen (text), true, err, sizeof err) || rename (tmp, path))
        bmq_error ("cannot write %s (`blendmq status` shows an old state): %s", path, text ? strerror (errno) : "out of memory");
    free (text);
}
