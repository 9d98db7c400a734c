/* mcp_prompts — prompts/list and prompts/get: the starting prompts and the recipe book. */
#include "mcp_surface_internal.h"

#include <stdio.h>
#include <string.h>

#define MAX_ARG 4000

json_t *bmq_mcp_prompts_list (const bmq_mcp_surface_t *self) { return json_deep_copy (self->prompts_list); }

void bmq_mcp_prompts_get (const bmq_mcp_surface_t *self, const char *name, const json_t *params, bmq_mcp_client_caps_t caps,
                          bmq_mcp_answer_t *a)
{
    const json_t *args = json_object_get (params, "arguments");
    memset (a, 0, sizeof *a);
    a->error = -32602;
    if (args && !json_is_null (args) && !json_is_object (args)) { snprintf (a->message, sizeof a->message, "arguments must be an object"); return; }
    const json_t *prompt = NULL;
    size_t i;
    json_t *d;
    json_array_foreach (self->prompts, i, d)
        if (name && !strcmp (json_string_value (json_object_get (d, "name")), name)) prompt = d;
    if (!prompt) { snprintf (a->message, sizeof a->message, "Unknown prompt: %.100s", name ? name : "(no params.name)"); return; }
    json_t *fallback = json_object ();
    json_array_foreach (json_object_get (prompt, "arguments"), i, d) {
        const char *arg = json_string_value (json_object_get (d, "name"));
        json_t *v = json_object_get (args, arg);
        if (v && (!json_is_string (v) || strlen (json_string_value (v)) > MAX_ARG)) {
            snprintf (a->message, sizeof a->message, "argument %s must be a string of at most %d bytes", arg, MAX_ARG);
            json_decref (fallback);
            return;
        }
        if (!v && json_is_true (json_object_get (d, "required"))) {
            snprintf (a->message, sizeof a->message, "prompt %s needs argument %s", name, arg);
            json_decref (fallback);
            return;
        }
        json_t *def = json_object_get (d, "_default");
        json_object_set_new (fallback, arg, def ? json_incref (def) : json_string (""));
    }
    a->error = 0;
    /* only declared arguments are filled in: a client's extra keys do not reach the text */
    json_t *known = json_object ();
    const char *key;
    json_t *v;
    json_object_foreach (fallback, key, v)
        if (json_object_get (args, key)) json_object_set (known, key, json_object_get (args, key));
    json_t *rounds = json_object_get (prompt, "_rounds");
    if (rounds) {                                   /* asks the client first (2026-07-28) */
        json_t *step = NULL;
        int rc = bmq_mcp_mrtr (name, rounds, NULL, params, caps, &step, a->message, sizeof a->message);
        if (rc != 0) {
            if (rc < 0) a->error = -32602;
            else a->result = step, step = NULL;
            json_decref (known);
            json_decref (fallback);
            return;
        }
        json_t *vars = bmq_mcp_mrtr_vars (json_object_get (step, "answers"));
        json_object_update (known, vars);
        json_decref (vars);
        json_decref (step);
    }
    a->result = json_pack ("{s:o}", "messages", bmq_mcp_fill (json_object_get (prompt, "_messages"), known, fallback));
    const char *description = json_string_value (json_object_get (prompt, "description"));
    if (description) json_object_set_new (a->result, "description", json_string (description));
    json_decref (known);
    json_decref (fallback);
}
