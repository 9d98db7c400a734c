/* executor_set — named executors behind one gateway. */
#include "executor_set.h"
#include "bus.h"

struct bmq_executor_set_t {
    size_t      count;
    char       *names[BMQ_MAX_EXECUTORS];
    bmq_peer_t *peers[BMQ_MAX_EXECUTORS];
    json_t     *scene[BMQ_MAX_EXECUTORS];  /* the latest scene.names of each, or NULL */
    json_t     *boxes[BMQ_MAX_EXECUTORS];  /* and the boxes that came with them, or NULL */
};

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

static int s_add (bmq_executor_set_t *self, const char *name, const char *endpoint, const char *events, zsock_t *sub,
                  int interval, int liveness, char *err, size_t errlen)
{
    if (self->count == BMQ_MAX_EXECUTORS) { ERR ("more than %d executors", BMQ_MAX_EXECUTORS); return -1; }
    if (!name || !*name || strlen (name) > 64) { ERR ("an executor needs a name of 1..64 characters"); return -1; }
    if (bmq_executor_set_find (self, name) >= 0 && self->count) { ERR ("two executors are called '%s'", name); return -1; }
    if (!endpoint || !*endpoint || !events || !*events) { ERR ("executor '%s' needs an endpoint and an events endpoint", name); return -1; }
    /* the default keeps the plain name "executor" in status, as before */
    char label[80];
    snprintf (label, sizeof label, self->count ? "executor:%s" : "executor", name);
    bmq_peer_t *peer = bmq_peer_new (label, endpoint, interval, liveness);
    if (!peer || zsock_connect (sub, "%s", events) == -1) {
        bmq_peer_destroy (&peer);
        ERR ("cannot connect to executor '%s' (%s, events %s)", name, endpoint, events);
        return -1;
    }
    self->names[self->count] = strdup (name);
    self->peers[self->count++] = peer;
    return 0;
}

bmq_executor_set_t *bmq_executor_set_new (const bmq_config_t *cfg, zsock_t *sub, char *err, size_t errlen)
{
    bmq_executor_set_t *self = calloc (1, sizeof *self);
    int interval = (int) bmq_config_int (cfg, "heartbeat.interval_ms"), liveness = (int) bmq_config_int (cfg, "heartbeat.liveness");
    int rc = s_add (self, bmq_config_str (cfg, "executor.name"), bmq_config_str (cfg, "executor.endpoint"),
                    bmq_config_str (cfg, "executor.events"), sub, interval, liveness, err, errlen);
    const char *name;
    json_t *entry;
    json_object_foreach (bmq_config_json (cfg, "gateway.executors"), name, entry) {
        if (rc) break;
        rc = s_add (self, name, json_string_value (json_object_get (entry, "endpoint")),
                    json_string_value (json_object_get (entry, "events")), sub, interval, liveness, err, errlen);
    }
    if (rc) bmq_executor_set_destroy (&self);
    return self;
}

void bmq_executor_set_destroy (bmq_executor_set_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_executor_set_t *self = *self_p;
    for (size_t i = 0; i < self->count; i++) {
        free (self->names[i]);
        bmq_peer_destroy (&self->peers[i]);
        json_decref (self->scene[i]);
        json_decref (self->boxes[i]);
    }
    free (self);
    *self_p = NULL;
}

size_t bmq_executor_set_size (const bmq_executor_set_t *self) { return self->count; }
bmq_peer_t *bmq_executor_set_peer (bmq_executor_set_t *self, size_t index) { return index < self->count ? self->peers[index] : NULL; }
const char *bmq_executor_set_name (const bmq_executor_set_t *self, size_t index) { return index < self->count ? self->names[index] : ""; }

int bmq_executor_set_find (const bmq_executor_set_t *self, const char *target)
{
    if (!target || !*target) return 0;
    for (size_t i = 0; i < self->count; i++)
        if (!strcmp (self->names[i], target)) return (int) i;
    return -1;
}

int bmq_executor_set_by_sock (bmq_executor_set_t *self, void *sock)
{
    for (size_t i = 0; i < self->count; i++)
        if ((void *) bmq_peer_sock (self->peers[i]) == sock) return (int) i;
    return -1;
}

void bmq_executor_set_names (const bmq_executor_set_t *self, char *out, size_t len)
{
    out[0] = 0;
    for (size_t i = 0; i < self->count; i++) {
        strncat (out, i ? ", " : "", len - strlen (out) - 1);
        strncat (out, self->names[i], len - strlen (out) - 1);
    }
}

int bmq_executor_set_keep_names (bmq_executor_set_t *self, const char *name, json_t *names, json_t *boxes)
{
    int i = name && *name ? bmq_executor_set_find (self, name) : -1;
    if (i < 0 || !json_is_array (names)) { json_decref (names); json_decref (boxes); return -1; }
    json_decref (self->scene[i]);
    self->scene[i] = names;
    json_decref (self->boxes[i]);
    self->boxes[i] = json_is_array (boxes) ? boxes : NULL;
    if (!self->boxes[i]) json_decref (boxes);
    return 0;
}

const json_t *bmq_executor_set_scene_boxes (const bmq_executor_set_t *self, size_t index)
{
    return index < self->count ? self->boxes[index] : NULL;
}

const json_t *bmq_executor_set_scene_names (const bmq_executor_set_t *self, size_t index)
{
    return index < self->count ? self->scene[index] : NULL;
}
