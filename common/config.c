/* config — embedded defaults, YAML file, environment overrides. */
#include "config.h"
#include "yaml_json.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char bmq_config_defaults[];
extern const size_t bmq_config_defaults_len;

struct bmq_config_t {
    json_t *root;
};

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

/* Merge `over` into `base` for keys that exist in `base`, section by section. */
static int s_merge (json_t *base, json_t *over, const char *where, char *err, size_t errlen)
{
    if (json_is_null (over)) return 0;      /* an empty file */
    if (!json_is_object (over)) { ERR ("%s: expected a mapping", where); return -1; }
    const char *key;
    json_t *value;
    json_object_foreach (over, key, value) {
        json_t *cur = json_object_get (base, key);
        if (!cur) { ERR ("%s: unknown key '%s'", where, key); return -1; }
        if (json_is_object (cur) && json_object_size (cur) == 0) {
            /* an empty mapping in the defaults is a free-form map (e.g. gateway.executors) */
            if (!json_is_object (value)) { ERR ("%s.%s: expected a mapping", where, key); return -1; }
            json_object_set (base, key, value);
            continue;
        }
        if (json_is_object (cur)) {
            char sub[256];
            snprintf (sub, sizeof sub, "%s.%s", where, key);
            if (s_merge (cur, value, sub, err, errlen)) return -1;
            continue;
        }
        bool same = json_typeof (cur) == json_typeof (value)
                 || (json_is_number (cur) && json_is_integer (value))
                 || (json_is_boolean (cur) && json_is_boolean (value));
        if (!same && json_is_string (cur) && json_is_number (value)) same = true;
        if (!same) { ERR ("%s.%s: wrong type", where, key); return -1; }
        if (json_is_string (cur) && json_is_number (value)) {
            char num[64];
            if (json_is_integer (value)) snprintf (num, sizeof num, "%lld", (long long) json_integer_value (value));
            else snprintf (num, sizeof num, "%g", json_real_value (value));
            json_object_set_new (base, key, json_string (num));
        }
        else
            json_object_set (base, key, value);
    }
    return 0;
}

static json_t *s_lookup (const json_t *root, const char *key)
{
    char path[256];
    snprintf (path, sizeof path, "%s", key);
    char *dot = strchr (path, '.');
    if (!dot) return json_object_get (root, path);
    *dot = 0;
    return json_object_get (json_object_get (root, path), dot + 1);
}

static void s_apply_env (json_t *root)
{
    const char *section;
    json_t *table;
    json_object_foreach (root, section, table) {
        const char *key;
        json_t *value;
        json_object_foreach (table, key, value) {
            char name[256];
            int n = snprintf (name, sizeof name, "BLENDMQ_%s_%s", section, key);
            for (int i = 0; i < n; i++) name[i] = (char) toupper ((unsigned char) name[i]);
            const char *env = getenv (name);
            if (!env) continue;
            json_t *typed = json_is_string (value) ? json_string (env) : bmq_yaml_parse (env, strlen (env), NULL, 0);
            if (typed && (json_typeof (typed) == json_typeof (value) || (json_is_number (typed) && json_is_number (value))
                          || (json_is_boolean (typed) && json_is_boolean (value))))
                json_object_set_new (table, key, typed);
            else {
                fprintf (stderr, "blendmq: ignoring %s=%s: wrong type\n", name, env);
                json_decref (typed);
            }
        }
    }
}

bmq_config_t *bmq_config_load (const char *path, char *err, size_t errlen)
{
    char inner[512];
    json_t *root = bmq_yaml_parse (bmq_config_defaults, bmq_config_defaults_len, inner, sizeof inner);
    if (!root) { ERR ("built-in defaults: %s", inner); return NULL; }
    if (path && *path) {
        json_t *file = bmq_yaml_load_file (path, inner, sizeof inner);
        if (!file) { ERR ("%s", inner); json_decref (root); return NULL; }
        int rc = s_merge (root, file, path, err, errlen);
        json_decref (file);
        if (rc) { json_decref (root); return NULL; }
    }
    s_apply_env (root);
    bmq_config_t *self = calloc (1, sizeof *self);
    if (!self) { json_decref (root); return NULL; }
    self->root = root;
    return self;
}

void bmq_config_destroy (bmq_config_t **self_p)
{
    if (!self_p || !*self_p) return;
    json_decref ((*self_p)->root);
    free (*self_p);
    *self_p = NULL;
}

const char *bmq_config_str (const bmq_config_t *self, const char *key)
{
    const char *s = json_string_value (s_lookup (self->root, key));
    return s ? s : "";
}

int64_t bmq_config_int (const bmq_config_t *self, const char *key)
{
    json_t *v = s_lookup (self->root, key);
    return json_is_number (v) ? (int64_t) json_number_value (v) : 0;
}

json_t *bmq_config_json (const bmq_config_t *self, const char *key)
{
    return s_lookup (self->root, key);
}

bool bmq_config_bool (const bmq_config_t *self, const char *key)
{
    return json_is_true (s_lookup (self->root, key));
}

int bmq_config_set (bmq_config_t *self, const char *key, const char *value)
{
    json_t *cur = s_lookup (self->root, key);
    if (!cur) return -1;
    char path[256];
    snprintf (path, sizeof path, "%s", key);
    char *dot = strchr (path, '.');
    if (!dot) return -1;
    *dot = 0;
    json_t *typed = json_is_string (cur) ? json_string (value) : bmq_yaml_parse (value, strlen (value), NULL, 0);
    if (!typed) return -1;
    return json_object_set_new (json_object_get (self->root, path), dot + 1, typed);
}

int bmq_config_set_json (bmq_config_t *self, const char *key, json_t *value)
{
    char path[256];
    snprintf (path, sizeof path, "%s", key);
    char *dot = strchr (path, '.');
    json_t *section = dot ? (*dot = 0, json_object_get (self->root, path)) : NULL;
    if (!section || !json_object_get (section, dot + 1)) { json_decref (value); return -1; }
    return json_object_set_new (section, dot + 1, value);
}

bmq_config_t *bmq_config_dup (const bmq_config_t *self)
{
    bmq_config_t *copy = calloc (1, sizeof *copy);
    if (copy) copy->root = json_deep_copy (self->root);
    return copy;
}

int bmq_config_save (const bmq_config_t *self, const char *path, char *err, size_t errlen)
{
    return bmq_yaml_write_file (path, self->root, err, errlen);
}

const char *bmq_data_dir (void)
{
    const char *env = getenv ("BLENDMQ_DATA_DIR");
    return env && *env ? env : BMQ_SOURCE_DIR;
}
