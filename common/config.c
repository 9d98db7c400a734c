/* config — embedded defaults, YAML file, environment overrides. */
#include "config.h"
#include "yaml_json.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char bmq_config_defaults[];
extern const size_t bmq_config_defaults_len;

struct bmq_config_t {
    json_t *root;
};

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

/* One more problem line in err (problems are counted even when err is full). */
static void s_problem (char *err, size_t errlen, int *problems, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
static void s_problem (char *err, size_t errlen, int *problems, const char *fmt, ...)
{
    (*problems)++;
    if (!err || !errlen) return;
    size_t used = strlen (err);
    if (used + 2 >= errlen) return;
    if (used) err[used++] = '\n';
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (err + used, errlen - used, fmt, ap);
    va_end (ap);
}

/* Merge `over` into `base` for keys that exist in `base`, section by section;
 * every key `base` lacks is a problem, said at its line and column in `path`.
 * The values' types, choices and ranges are checked afterwards, against the
 * declaration (config_check.c). */
static void s_merge (json_t *base, json_t *over, const char *where, const char *path, char *err, size_t errlen, int *problems)
{
    if (json_is_null (over)) return;        /* an empty file, or an empty section */
    size_t line = 0, col = 0;
    if (!json_is_object (over)) {
        if (strcmp (where, path)) bmq_config_mark (path, where, false, &line, &col);
        if (line) s_problem (err, errlen, problems, "%s:%zu:%zu: %s: expected a mapping", path, line, col, where);
        else s_problem (err, errlen, problems, "%s: expected a mapping", where);
        return;
    }
    const char *key;
    json_t *value;
    json_object_foreach (over, key, value) {
        char name[300];
        if (!strcmp (where, path)) snprintf (name, sizeof name, "%s", key);
        else snprintf (name, sizeof name, "%s.%s", where, key);
        json_t *cur = json_object_get (base, key);
        if (!cur) {
            bmq_config_mark (path, name, true, &line, &col);
            if (line) s_problem (err, errlen, problems, "%s:%zu:%zu: unknown key '%s'", path, line, col, name);
            else s_problem (err, errlen, problems, "%s: unknown key '%s'", path, name);
            continue;
        }
        if (json_is_object (cur) && json_object_size (cur) == 0 && strchr (name, '.')) {
            json_object_set (base, key, value);     /* a free-form map (e.g. gateway.executors): checked as declared */
            continue;
        }
        if (json_is_object (cur)) {
            s_merge (cur, value, name, path, err, errlen, problems);
            continue;
        }
        if (json_is_string (cur) && json_is_number (value)) {      /* port: 7700 for a string key is "7700" */
            char num[64];
            if (json_is_integer (value)) snprintf (num, sizeof num, "%lld", (long long) json_integer_value (value));
            else snprintf (num, sizeof num, "%g", json_real_value (value));
            json_object_set_new (base, key, json_string (num));
        }
        else
            json_object_set (base, key, value);
    }
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
    int problems = 0;
    if (err && errlen) err[0] = 0;
    if (path && *path) {
        json_t *file = bmq_yaml_load_file (path, inner, sizeof inner);
        if (!file) { ERR ("%s", inner); json_decref (root); return NULL; }
        s_merge (root, file, path, path, err, errlen, &problems);
        json_decref (file);
    }
    s_apply_env (root);
    size_t used = err ? strlen (err) : 0;
    problems += bmq_config_check_tree (root, path && *path ? path : NULL, err ? err + used + (used ? 1 : 0) : NULL,
                                       err && errlen > used + 1 ? errlen - used - 1 : 0);
    if (err && used && errlen > used + 1 && err[used + 1]) err[used] = '\n';        /* the two lists joined */
    if (problems) { json_decref (root); return NULL; }
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

/* A typed read of a key common/config_keys.def does not declare is a bug in
 * the code (a typo reads "" or 0 silently): fatal in test builds. */
static void s_declared (const char *key)
{
#ifdef BMQ_STRICT_FIELDS
    if (!bmq_config_key (key)) {
        fprintf (stderr, "blendmq: configuration key '%s' is read but not declared in common/config_keys.def\n", key);
        abort ();
    }
#else
    (void) key;
#endif
}

const char *bmq_config_str (const bmq_config_t *self, const char *key)
{
    s_declared (key);
    const char *s = json_string_value (s_lookup (self->root, key));
    return s ? s : "";
}

int64_t bmq_config_int (const bmq_config_t *self, const char *key)
{
    s_declared (key);
    json_t *v = s_lookup (self->root, key);
    return json_is_number (v) ? (int64_t) json_number_value (v) : 0;
}

json_t *bmq_config_json (const bmq_config_t *self, const char *key)
{
    return s_lookup (self->root, key);
}

bool bmq_config_bool (const bmq_config_t *self, const char *key)
{
    s_declared (key);
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
