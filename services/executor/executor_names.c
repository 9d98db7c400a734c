/* executor_names — the live scene's object names, published for the gateway
 * (issue 14: the scene lookup off the validation path).
 *
 * The Blender actor fetches scene_names whenever a reply's rev says the names
 * may have changed (a plan, a script, a reset, a person's edit in a GUI
 * Blender) and hands them here; they go out on the events PUB as scene.names,
 * again to every new subscriber (a gateway that restarted), and the gateway
 * keeps the latest per executor, so a plan that targets existing objects is
 * validated without waiting behind this executor's queue. */
#include "executor_internal.h"
#include "log.h"

static void s_publish (executor_t *ex)
{
    if (!ex->scene_names) return;
    json_t *body = json_pack ("{s:s, s:O, s:O, s:O}", "executor", ex->name,
                              "names", json_object_get (ex->scene_names, "names"),
                              "count", json_object_get (ex->scene_names, "count") ?: json_integer (0),
                              "truncated", json_object_get (ex->scene_names, "truncated") ?: json_false ());
    /* what the scene's things occupy: a chat's new work is placed clear of them (issue 29) */
    json_t *boxes = json_object_get (ex->scene_names, "boxes");
    if (body && json_is_array (boxes) && json_array_size (boxes) <= 4096)       /* messages.def's cap */
        json_object_set (body, "boxes", boxes);
    bmq_envelope_t *env = body ? bmq_envelope_new (BMQ_MSG_SCENE_NAMES, "", body) : NULL;
    if (env) bmq_bus_send (ex->pub, NULL, env);
    bmq_envelope_destroy (&env);
}

void executor_on_names (executor_t *ex, const char *result_text)
{
    json_t *result = result_text ? json_loads (result_text, 0, NULL) : NULL;
    json_t *names = json_object_get (result, "names");
    if (!json_is_array (names) || json_array_size (names) > 100000) {
        bmq_warn ("Blender's scene_names answer is not a list of names: ignored");
        json_decref (result);
        return;
    }
    json_decref (ex->scene_names);
    ex->scene_names = result;
    s_publish (ex);
}

void executor_republish_names (executor_t *ex)
{
    s_publish (ex);
}
