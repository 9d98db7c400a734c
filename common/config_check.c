/* config_check — every configuration key declared once (config_keys.def),
 * and a loaded configuration checked against the declaration: type, choices,
 * range; each problem at the line and column of the file that set it. */
#include "config.h"
#include "service_registry.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static const bmq_config_key_t s_declared[] = {
#define BMQ_CONFIG_KEY(NAME, TYPE, DEFAULT, CHOICES, MIN, MAX, DOC) \
    { NAME, BMQ_CONFIG_##TYPE, DEFAULT, CHOICES, (int64_t) (MIN), (int64_t) (MAX), DOC },
#define BMQ_CONFIG_NOTE(SECTION, TEXT)           /* for the docs only (config_docs.c) */
#include "config_keys.def"
#undef BMQ_CONFIG_KEY
#undef BMQ_CONFIG_NOTE
};
#define N_DECLARED (sizeof s_declared / sizeof s_declared[0])
#define MAX_DERIVED 64

/* Every key: config_keys.def's, then the endpoint keys of service_registry.def
 * it does not declare (a new service's NAME.endpoint needs no line here). */
static bmq_config_key_t s_keys[N_DECLARED + MAX_DERIVED];
static size_t s_nkeys;
static char s_derived_text[MAX_DERIVED][3][160];        /* name, default, doc */
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

static void s_build (void)
{
    memcpy (s_keys, s_declared, sizeof s_declared);
    s_nkeys = N_DECLARED;
    size_t n;
    const bmq_service_t *svc = bmq_services (&n);
    for (size_t i = 0; i < n; i++) {
        char key[160], sock[64], def[64];
        for (size_t e = 0; bmq_service_endpoint (&svc[i], e, key, sizeof key, sock, sizeof sock, def, sizeof def); e++) {
            bool declared = false;
            for (size_t k = 0; k < s_nkeys && !declared; k++) declared = !strcmp (s_keys[k].name, key);
            if (declared || s_nkeys - N_DECLARED >= MAX_DERIVED) continue;
            char (*text)[160] = s_derived_text[s_nkeys - N_DECLARED];
            snprintf (text[0], sizeof text[0], "%s", key);
            snprintf (text[1], sizeof text[1], "%s", def);
            snprintf (text[2], sizeof text[2], "%s binds it (service_registry.def; `blendmq up`: ipc://RUN/%s.sock)", svc[i].name, sock);
            s_keys[s_nkeys++] = (bmq_config_key_t) { text[0], BMQ_CONFIG_STR, text[1], "", 0, 0, text[2] };
        }
    }
}

const bmq_config_key_t *bmq_config_keys (size_t *count)
{
    pthread_once (&s_once, s_build);
    if (count) *count = s_nkeys;
    return s_keys;
}

const bmq_config_key_t *bmq_config_key (const char *name)
{
    size_t n;
    const bmq_config_key_t *keys = bmq_config_keys (&n);
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp (keys[i].name, name)) return &keys[i];
    return NULL;
}

const char *bmq_config_type_name (bmq_config_type_t type)
{
    switch (type) {
    case BMQ_CONFIG_STR:  return "a string";
    case BMQ_CONFIG_INT:  return "an integer";
    case BMQ_CONFIG_BOOL: return "true or false";
    case BMQ_CONFIG_ENUM: return "one of its choices";
    case BMQ_CONFIG_MAP:  return "a mapping";
    }
    return "?";
}

/* ---- where a key is set in a YAML file ------------------------------------------- */

/* The line and column (1-based) of "section.key"'s value in the file at
 * `path` (of the key itself when want_key), or of the section when the key
 * is not there; 0 when neither is found (or the file does not parse). */
int bmq_config_mark (const char *path, const char *dotted, bool want_key, size_t *line, size_t *col)
{
    *line = *col = 0;
    FILE *f = path ? fopen (path, "rb") : NULL;
    if (!f) return -1;
    char section[128] = "", key[128] = "";
    const char *dot = strchr (dotted, '.');
    snprintf (section, sizeof section, "%.*s", dot ? (int) (dot - dotted) : (int) strlen (dotted), dotted);
    if (dot) snprintf (key, sizeof key, "%s", dot + 1);
    yaml_parser_t parser;
    if (!yaml_parser_initialize (&parser)) { fclose (f); return -1; }
    yaml_parser_set_input_file (&parser, f);
    int depth = 0, found = -1;
    bool expect_key[4] = { false }, in_section = false, next_is_value = false, section_next = false;
    for (int guard = 0; guard < 1000000 && found != 0; guard++) {
        yaml_event_t ev;
        if (!yaml_parser_parse (&parser, &ev)) break;
        yaml_event_type_t type = ev.type;
        size_t l = ev.start_mark.line + 1, c = ev.start_mark.column + 1;
        bool is_node = type == YAML_SCALAR_EVENT || type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT
                    || type == YAML_ALIAS_EVENT;
        if (is_node && next_is_value) { *line = l; *col = c; found = 0; }
        else if (is_node && section_next) { section_next = false; in_section = type == YAML_MAPPING_START_EVENT; }
        if (type == YAML_SCALAR_EVENT && depth >= 1 && depth <= 3 && expect_key[depth]) {
            const char *s = (const char *) ev.data.scalar.value;
            if (depth == 1 && !strcmp (s, section)) {
                *line = l; *col = c; found = 1;
                if (!*key) { if (want_key) found = 0; else next_is_value = true; }
                else section_next = true;
            }
            else if (depth == 2 && in_section && *key && !strcmp (s, key)) {
                *line = l; *col = c;
                if (want_key) found = 0; else next_is_value = true;
            }
            expect_key[depth] = false;
        }
        else if (depth >= 1 && depth <= 3 && is_node) expect_key[depth] = true;    /* a value: a key comes next */
        if (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) {
            depth++;
            if (depth <= 3) expect_key[depth] = type == YAML_MAPPING_START_EVENT;
        }
        else if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT) {
            if (depth == 2) in_section = false;
            depth--;
            if (depth >= 1 && depth <= 3) expect_key[depth] = true;
        }
        if (type == YAML_STREAM_END_EVENT) { yaml_event_delete (&ev); break; }
        yaml_event_delete (&ev);
    }
    yaml_parser_delete (&parser);
    fclose (f);
    return *line ? 0 : -1;
}

/* ---- one key's value --------------------------------------------------------------- */

static void s_choices (const char *choices, char *out, size_t len)
{
    size_t n = 0;
    out[0] = 0;
    for (const char *p = choices; ; ) {
        const char *bar = strchr (p, '|');
        size_t w = bar ? (size_t) (bar - p) : strlen (p);
        n += (size_t) snprintf (out + n, n < len ? len - n : 0, "%s%s%.*s", n ? ", " : "", w ? "" : "\"\"", (int) w, p);
        if (n >= len || !bar) break;
        p = bar + 1;
    }
}

static bool s_choice_ok (const char *choices, const char *value)
{
    size_t vlen = strlen (value);
    for (const char *p = choices; ; ) {
        const char *bar = strchr (p, '|');
        size_t w = bar ? (size_t) (bar - p) : strlen (p);
        if (w == vlen && !strncmp (p, value, w)) return true;
        if (!bar) return false;
        p = bar + 1;
    }
}

/* The problem with `v` as key k's value, in why; false when it is fine. */
static bool s_bad (const bmq_config_key_t *k, const json_t *v, char *why, size_t len)
{
    switch (k->type) {
    case BMQ_CONFIG_STR:
        if (!json_is_string (v)) { snprintf (why, len, "wrong type: expected a string"); return true; }
        return false;
    case BMQ_CONFIG_BOOL:
        if (!json_is_boolean (v)) { snprintf (why, len, "wrong type: expected true or false"); return true; }
        return false;
    case BMQ_CONFIG_MAP:
        if (!json_is_object (v)) { snprintf (why, len, "wrong type: expected a mapping"); return true; }
        return false;
    case BMQ_CONFIG_INT:
        if (!json_is_integer (v)) {
            char *text = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
            snprintf (why, len, "wrong type: expected an integer, not %.60s", text ? text : "?");
            free (text);
            return true;
        }
        if (json_integer_value (v) < k->min || json_integer_value (v) > k->max) {
            snprintf (why, len, "%lld is out of range %lld..%lld", (long long) json_integer_value (v), (long long) k->min,
                      (long long) k->max);
            return true;
        }
        return false;
    case BMQ_CONFIG_ENUM: {
        char list[256];
        s_choices (k->choices, list, sizeof list);
        if (!json_is_string (v)) { snprintf (why, len, "wrong type: expected one of %s", list); return true; }
        if (!s_choice_ok (k->choices, json_string_value (v))) {
            snprintf (why, len, "'%.80s' is not one of %s", json_string_value (v), list);
            return true;
        }
        return false;
    }
    }
    return false;
}

/* Append one problem line to err. */
static void s_say (char *err, size_t errlen, size_t *used, int *problems, const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
static void s_say (char *err, size_t errlen, size_t *used, int *problems, const char *fmt, ...)
{
    (*problems)++;
    if (!err || *used + 2 >= errlen) return;
    if (*used) err[(*used)++] = '\n';
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (err + *used, errlen - *used, fmt, ap);
    va_end (ap);
    if (n > 0) *used += (size_t) n < errlen - *used ? (size_t) n : errlen - *used - 1;
}

int bmq_config_check_tree (const json_t *root, const char *path, char *err, size_t errlen)
{
    int problems = 0;
    size_t used = 0;
    if (err && errlen) err[0] = 0;
    const char *section;
    json_t *table;
    json_object_foreach ((json_t *) root, section, table) {
        const char *key;
        json_t *value;
        json_object_foreach (table, key, value) {
            char name[300], why[400];
            snprintf (name, sizeof name, "%s.%s", section, key);
            const bmq_config_key_t *k = bmq_config_key (name);
            size_t line = 0, col = 0;
            if (!k) {
                if (path) bmq_config_mark (path, name, true, &line, &col);
                if (line) s_say (err, errlen, &used, &problems, "%s:%zu:%zu: unknown key '%s'", path, line, col, name);
                else s_say (err, errlen, &used, &problems, "unknown key '%s' (not declared in common/config_keys.def)", name);
                continue;
            }
            if (!s_bad (k, value, why, sizeof why)) continue;
            if (path) bmq_config_mark (path, name, false, &line, &col);
            char var[320];          /* an environment override is where the value came from when it is set */
            int n = snprintf (var, sizeof var, "BLENDMQ_%s_%s", section, key);
            for (int i = 0; i < n && i < (int) sizeof var; i++) var[i] = var[i] == '.' ? '_' : (char) toupper ((unsigned char) var[i]);
            if (getenv (var)) s_say (err, errlen, &used, &problems, "%s (from %s): %s", name, var, why);
            else if (line) s_say (err, errlen, &used, &problems, "%s:%zu:%zu: %s: %s", path, line, col, name, why);
            else s_say (err, errlen, &used, &problems, "%s: %s", name, why);
        }
    }
    return problems;
}
