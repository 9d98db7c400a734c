/* yaml_json — read a YAML document into a jansson tree.
 *
 * Plain scalars become integers, reals, booleans or null when they look like
 * one (YAML 1.2 core schema); quoted scalars always stay strings. Anchors and
 * aliases are refused (they allow exponential "billion laughs" documents), as
 * are documents deeper than BMQ_YAML_MAX_DEPTH or with more than
 * BMQ_YAML_MAX_NODES nodes. On error NULL is returned and `err` (if not NULL)
 * holds a message with the line and column. */
#ifndef BMQ_YAML_JSON_H
#define BMQ_YAML_JSON_H

#include <jansson.h>
#include <stddef.h>

#define BMQ_YAML_MAX_DEPTH 32
#define BMQ_YAML_MAX_NODES 200000
#define BMQ_YAML_MAX_BYTES (8u << 20)

json_t *bmq_yaml_parse (const char *text, size_t len, char *err, size_t errlen);
json_t *bmq_yaml_load_file (const char *path, char *err, size_t errlen);

/* Write `value` as YAML to `path` (block style). 0 on success, -1 on error. */
int bmq_yaml_write_file (const char *path, const json_t *value, char *err, size_t errlen);

#endif
