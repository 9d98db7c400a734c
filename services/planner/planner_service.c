/* planner_service — ROUTER loop answering plan.request. */
#include "planner_service.h"
#include "audit_client.h"
#include "bus.h"
#include "log.h"
#include "peer.h"
#include "recipe_book.h"
#include "service.h"

#define MAX_PROMPT 4096

static bmq_envelope_t *s_plan (bmq_recipe_book_t *book, bmq_audit_t *audit, const bmq_envelope_t *req)
{
    const char *prompt = bmq_body_str (req, "prompt");
    if (strlen (prompt) > MAX_PROMPT)
        return bmq_envelope_error (req, "bad_request", "prompt longer than %d bytes", MAX_PROMPT);
    bmq_audit_record (audit, req->cid, "prompt", json_pack ("{s:s, s:s}", "prompt", prompt, "backend", "offline"));
    double score = 0;
    const json_t *recipe = bmq_recipe_book_match (book, prompt, &score);
    if (!recipe) {
        json_t *near = bmq_recipe_book_suggest (book, prompt, 3);
        char names[256] = "";
        size_t i;
        json_t *n;
        json_array_foreach (near, i, n) {
            if (i) strncat (names, ", ", sizeof names - strlen (names) - 1);
            strncat (names, json_string_value (n), sizeof names - strlen (names) - 1);
        }
        bmq_audit_record (audit, req->cid, "plan.none", json_pack ("{s:s, s:o}", "prompt", prompt, "closest", near));
        return bmq_envelope_error (req, "no_match",
            "the offline planner has no recipe for \"%s\" (closest: %s). "
            "Try one of those, or enable an LLM backend (planner.backend).", prompt, names);
    }
    json_t *body = json_pack ("{s:O, s:s, s:O, s:O, s:f}", "plan", json_object_get (recipe, "steps"),
                              "source", "offline", "recipe", json_object_get (recipe, "name"),
                              "description", json_object_get (recipe, "description"), "score", score);
    bmq_audit_record (audit, req->cid, "plan.proposed",
                      json_pack ("{s:O, s:O, s:s}", "recipe", json_object_get (recipe, "name"),
                                 "plan", json_object_get (recipe, "steps"), "source", "offline"));
    return bmq_envelope_reply (req, BMQ_MSG_PLAN_REPLY, body);
}

int bmq_planner_service_run (bmq_config_t *cfg)
{
    char err[512], dir[1024];
    if (strcmp (bmq_config_str (cfg, "planner.backend"), "offline")) {
        bmq_error ("planner.backend '%s' is not available in this build (use 'offline')",
                   bmq_config_str (cfg, "planner.backend"));
        return 1;
    }
    bmq_recipe_book_t *book = bmq_recipe_book_load (
        bmq_service_path (bmq_config_str (cfg, "planner.recipes_dir"), "services/planner/recipes", dir, sizeof dir),
        err, sizeof err);
    if (!book) { bmq_error ("cannot load recipes: %s", err); return 1; }
    zsock_t *router = bmq_bus_bind (ZMQ_ROUTER, bmq_config_str (cfg, "planner.endpoint"));
    bmq_audit_t *audit = bmq_audit_new (bmq_config_str (cfg, "audit.endpoint"),
        (int) bmq_config_int (cfg, "heartbeat.interval_ms"), (int) bmq_config_int (cfg, "heartbeat.liveness"));
    if (!router || !audit) { zsock_destroy (&router); bmq_audit_destroy (&audit); bmq_recipe_book_destroy (&book); return 1; }
    bmq_info ("planner ready on %s: offline backend, %zu recipes from %s",
              bmq_config_str (cfg, "planner.endpoint"), bmq_recipe_book_count (book), dir);

    zpoller_t *poller = zpoller_new (router, bmq_audit_sock (audit), NULL);
    while (!zsys_interrupted) {
        zsock_t *which = zpoller_wait (poller, 500);
        if (which == router) {
            zframe_t *rid = NULL;
            bmq_envelope_t *env = bmq_bus_recv (router, &rid);
            if (env && !bmq_answer_heartbeat (router, rid, env, "planner", "offline")) {
                bmq_envelope_t *reply = env->type == BMQ_MSG_PLAN_REQUEST ? s_plan (book, audit, env)
                    : bmq_envelope_error (env, "unsupported", "planner does not handle %s", bmq_msg_type_name (env->type));
                bmq_bus_send_and_destroy (router, rid, &reply);
            }
            zframe_destroy (&rid);
            bmq_envelope_destroy (&env);
        }
        else if (which) {
            bmq_envelope_t *env = bmq_bus_recv (which, NULL);
            if (env) bmq_audit_handle (audit, env);
            bmq_envelope_destroy (&env);
        }
        bmq_audit_tick (audit);
    }
    bmq_info ("planner stopping");
    zpoller_destroy (&poller);
    bmq_audit_flush (audit, 1000);
    bmq_audit_destroy (&audit);
    zsock_destroy (&router);
    bmq_recipe_book_destroy (&book);
    return 0;
}
