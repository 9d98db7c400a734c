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

/* A process that cannot start because of its configuration exits with this
 * (sysexits' EX_CONFIG): a supervisor does not start it again in a loop, and
 * `blendmq up` stops and prints its message (issue 29). */
#define BMQ_EXIT_CONFIG 78

/* path NULL: defaults + environment only. NULL with err on a bad file (a
 * YAML syntax error at its line and column), or with every problem, one a
 * line, "FILE:LINE:COL: section.key: why": an unknown key, a value of the
 * wrong type, not one of its choices or out of its range (config_keys.def). */
bmq_config_t *bmq_config_load (const char *path, char *err, size_t errlen);
void bmq_config_destroy (bmq_config_t **self_p);

/* Typed reads. A key common/config_keys.def does not declare aborts in test
 * builds (BMQ_STRICT_FIELDS); otherwise it reads "" / 0 / false. */
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

/* ---- the declaration of every key (config_keys.def, config_check.c) ---- */
typedef enum { BMQ_CONFIG_STR, BMQ_CONFIG_INT, BMQ_CONFIG_BOOL, BMQ_CONFIG_ENUM, BMQ_CONFIG_MAP } bmq_config_type_t;
typedef struct {
    const char       *name;          /* "section.key" */
    bmq_config_type_t type;
    const char       *def;           /* the default, as YAML writes it */
    const char       *choices;       /* ENUM: "a|b|c" */
    int64_t           min, max;      /* INT: inclusive */
    const char       *doc;
} bmq_config_key_t;

/* Every declared key (count of them in *count); one by name (NULL: not declared). */
const bmq_config_key_t *bmq_config_keys (size_t *count);
const bmq_config_key_t *bmq_config_key (const char *name);
const char *bmq_config_type_name (bmq_config_type_t type);
/* Check a configuration tree against the declaration: the number of
 * problems, each a line in err ("PATH:LINE:COL: key: why" when path, the
 * YAML file that set it, shows where). */
int bmq_config_check_tree (const json_t *root, const char *path, char *err, size_t errlen);
/* Where "section.key" is in the YAML file at path (its value, or the key
 * itself when want_key): 0 with 1-based line and col, or -1. */
int bmq_config_mark (const char *path, const char *dotted, bool want_key, size_t *line, size_t *col);
/* The files made from the declaration (config_docs.c), malloc'd (NULL: out
 * of memory): deploy/blendmq.yaml's text (every key with its default and its
 * doc as a comment) and docs/config.md's (a table of every key). */
char *bmq_config_docs_yaml (void);
char *bmq_config_docs_markdown (void);

#endif
