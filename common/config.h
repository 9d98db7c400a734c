/* config — YAML configuration with embedded defaults and environment overrides.
 *
 * Precedence, lowest first: the defaults built in from deploy/blendmq.yaml,
 * the file given with --config, then BLENDMQ_<SECTION>_<KEY> environment
 * variables (only for keys the defaults define, so a typo cannot pass silently).
 * Keys are dotted paths: "executor.endpoint". */
#ifndef BMQ_CONFIG_H
#define BMQ_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct bmq_config_t bmq_config_t;

/* path NULL: defaults + environment only. NULL with err on a bad file, an
 * unknown key in the file, or a value of the wrong type. */
bmq_config_t *bmq_config_load (const char *path, char *err, size_t errlen);
void bmq_config_destroy (bmq_config_t **self_p);

const char *bmq_config_str (const bmq_config_t *self, const char *key);   /* "" when absent */
int64_t     bmq_config_int (const bmq_config_t *self, const char *key);   /* 0 when absent */
/* The value at `key` as JSON (borrowed; NULL when absent): for maps such as gateway.executors. */
json_t     *bmq_config_json (const bmq_config_t *self, const char *key);
bool        bmq_config_bool (const bmq_config_t *self, const char *key);

/* Set a value (a string is typed like a YAML scalar: "7" is an integer). */
int  bmq_config_set (bmq_config_t *self, const char *key, const char *value);
/* Set a key to a JSON value (taken), e.g. a map for gateway.executors. 0 / -1. */
int  bmq_config_set_json (bmq_config_t *self, const char *key, json_t *value);
/* A deep copy, to derive another process's configuration. */
bmq_config_t *bmq_config_dup (const bmq_config_t *self);
/* Write the effective configuration as YAML. 0 / -1. */
int  bmq_config_save (const bmq_config_t *self, const char *path, char *err, size_t errlen);
/* The project's data directory (palette, recipes, add-on): BLENDMQ_DATA_DIR or the source tree. */
const char *bmq_data_dir (void);

#endif
