/* yaml_json — YAML document → jansson tree, event driven and bounded. */
#include "yaml_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct {
    json_t *stack[BMQ_YAML_MAX_DEPTH + 1];
    char   *pending_key[BMQ_YAML_MAX_DEPTH + 1];
    int     depth;
    size_t  nodes;
    json_t *root;
} s_builder_t;

static void s_seterr (char *err, size_t errlen, const char *fmt, size_t line, size_t col, const char *what)
{
    if (err && errlen)
        snprintf (err, errlen, fmt, line, col, what ? what : "");
}

static int s_is_int (const char *s, long long *out)
{
    const char *p = s;
    if (*p == '-' || *p == '+') p++;
    if (!*p) return 0;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return 0;
    errno = 0;
    char *end;
    long long v = strtoll (s, &end, 10);
    if (errno || *end) return 0;
    *out = v;
    return 1;
}

static int s_is_real (const char *s, double *out)
{
    /* digits with a dot or exponent; no hex, no inf/nan words except .inf/.nan */
    int seen_digit = 0, seen_mark = 0;
    for (const char *q = s; *q; q++) {
        if (*q >= '0' && *q <= '9') seen_digit = 1;
        else if (*q == '.' || *q == 'e' || *q == 'E') seen_mark = 1;
        else if (*q == '-' || *q == '+') ;
        else return 0;
    }
    if (!seen_digit || !seen_mark) return 0;
    char *end;
    errno = 0;
    double v = strtod (s, &end);
    if (errno || *end || !isfinite (v)) return 0;
    *out = v;
    return 1;
}

static json_t *s_scalar (const yaml_event_t *ev)
{
    const char *s = (const char *) ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag) {
        long long i;
        double d;
        if (len == 0 || !strcmp (s, "~") || !strcmp (s, "null") || !strcmp (s, "Null") || !strcmp (s, "NULL"))
            return json_null ();
        if (!strcmp (s, "true") || !strcmp (s, "True") || !strcmp (s, "TRUE")) return json_true ();
        if (!strcmp (s, "false") || !strcmp (s, "False") || !strcmp (s, "FALSE")) return json_false ();
        if (s_is_int (s, &i)) return json_integer (i);
        if (s_is_real (s, &d)) return json_real (d);
    }
    return json_stringn (s, len);
}

/* Attach `v` to the container on top of the stack (or make it the root). Steals v. */
static int s_attach (s_builder_t *b, json_t *v, int can_be_key)
{
    if (b->depth == 0) {
        if (b->root) { json_decref (v); return -1; }
        b->root = v;
        return 0;
    }
    json_t *top = b->stack[b->depth - 1];
    if (json_is_array (top))
        return json_array_append_new (top, v);
    /* mapping: either this scalar is a key, or it is the value of the pending key */
    char **pk = &b->pending_key[b->depth - 1];
    if (!*pk) {
        if (!can_be_key || !json_is_string (v)) {
            json_decref (v);
            return -2;               /* non-scalar key */
        }
        *pk = strdup (json_string_value (v));
        json_decref (v);
        return *pk ? 0 : -1;
    }
    int rc = json_object_set_new (top, *pk, v);
    free (*pk);
    *pk = NULL;
    return rc;
}

json_t *bmq_yaml_parse (const char *text, size_t len, char *err, size_t errlen)
{
    if (len > BMQ_YAML_MAX_BYTES) {
        s_seterr (err, errlen, "YAML document too large (line %zu col %zu)%s", 0, 0, "");
        return NULL;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize (&parser)) {
        s_seterr (err, errlen, "cannot initialise YAML parser (%zu:%zu)%s", 0, 0, "");
        return NULL;
    }
    yaml_parser_set_input_string (&parser, (const unsigned char *) text, len);
    s_builder_t b;
    memset (&b, 0, sizeof b);
    int done = 0, ok = 1, documents = 0;
    while (!done && ok) {
        yaml_event_t ev;
        if (!yaml_parser_parse (&parser, &ev)) {
            if (err && errlen && parser.context)       /* an unclosed quote is where it opened, not where the file ends */
                snprintf (err, errlen, "YAML syntax error at line %zu column %zu: %s %s (at line %zu column %zu)",
                          parser.context_mark.line + 1, parser.context_mark.column + 1, parser.problem ? parser.problem : "?",
                          parser.context, parser.problem_mark.line + 1, parser.problem_mark.column + 1);
            else
                s_seterr (err, errlen, "YAML syntax error at line %zu column %zu: %s",
                          parser.problem_mark.line + 1, parser.problem_mark.column + 1, parser.problem);
            ok = 0;
            break;
        }
        size_t line = ev.start_mark.line + 1, col = ev.start_mark.column + 1;
        if (++b.nodes > BMQ_YAML_MAX_NODES) {
            s_seterr (err, errlen, "YAML document has too many nodes (line %zu column %zu)%s", line, col, "");
            ok = 0;
        }
        else
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++documents > 1) {
                s_seterr (err, errlen, "only one YAML document is allowed (line %zu column %zu)%s", line, col, "");
                ok = 0;
            }
            break;
        case YAML_ALIAS_EVENT:
            s_seterr (err, errlen, "YAML aliases are not allowed (line %zu column %zu)%s", line, col, "");
            ok = 0;
            break;
        case YAML_SCALAR_EVENT:
            if (ev.data.scalar.anchor) {
                s_seterr (err, errlen, "YAML anchors are not allowed (line %zu column %zu)%s", line, col, "");
                ok = 0;
            }
            else if (s_attach (&b, s_scalar (&ev), 1) != 0) {
                s_seterr (err, errlen, "invalid YAML structure at line %zu column %zu%s", line, col, "");
                ok = 0;
            }
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
            const unsigned char *anchor = ev.type == YAML_SEQUENCE_START_EVENT
                ? ev.data.sequence_start.anchor : ev.data.mapping_start.anchor;
            if (anchor) {
                s_seterr (err, errlen, "YAML anchors are not allowed (line %zu column %zu)%s", line, col, "");
                ok = 0;
                break;
            }
            if (b.depth >= BMQ_YAML_MAX_DEPTH) {
                s_seterr (err, errlen, "YAML nested too deeply (line %zu column %zu)%s", line, col, "");
                ok = 0;
                break;
            }
            json_t *c = ev.type == YAML_SEQUENCE_START_EVENT ? json_array () : json_object ();
            json_incref (c);         /* one ref for the stack, one for the parent */
            if (s_attach (&b, c, 0) != 0) {
                json_decref (c);
                s_seterr (err, errlen, "a YAML mapping key must be a scalar (line %zu column %zu)%s", line, col, "");
                ok = 0;
                break;
            }
            b.stack[b.depth] = c;
            b.pending_key[b.depth] = NULL;
            b.depth++;
            break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (b.depth > 0) {
                b.depth--;
                json_decref (b.stack[b.depth]);
                free (b.pending_key[b.depth]);
                b.pending_key[b.depth] = NULL;
            }
            break;
        default: break;
        }
        yaml_event_delete (&ev);
    }
    while (b.depth > 0) {
        b.depth--;
        json_decref (b.stack[b.depth]);
        free (b.pending_key[b.depth]);
    }
    yaml_parser_delete (&parser);
    if (!ok) {
        json_decref (b.root);
        return NULL;
    }
    return b.root ? b.root : json_null ();
}

json_t *bmq_yaml_load_file (const char *path, char *err, size_t errlen)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        if (err) snprintf (err, errlen, "cannot open %s: %s", path, strerror (errno));
        return NULL;
    }
    char *buf = malloc (BMQ_YAML_MAX_BYTES + 1);
    size_t n = buf ? fread (buf, 1, BMQ_YAML_MAX_BYTES + 1, f) : 0;
    fclose (f);
    if (!buf) {
        if (err) snprintf (err, errlen, "out of memory reading %s", path);
        return NULL;
    }
    json_t *v = NULL;
    if (n > BMQ_YAML_MAX_BYTES) {
        if (err) snprintf (err, errlen, "%s is larger than %u bytes", path, BMQ_YAML_MAX_BYTES);
    }
    else {
        char inner[256];
        v = bmq_yaml_parse (buf, n, inner, sizeof inner);
        if (!v && err) snprintf (err, errlen, "%s: %s", path, inner);
    }
    free (buf);
    return v;
}

static int s_emit (yaml_emitter_t *em, const json_t *v, int depth)
{
    yaml_event_t ev;
    char num[64];
    if (depth > BMQ_YAML_MAX_DEPTH) return -1;
    if (json_is_object (v)) {
        yaml_mapping_start_event_initialize (&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        if (!yaml_emitter_emit (em, &ev)) return -1;
        const char *k;
        json_t *item;
        json_object_foreach ((json_t *) v, k, item) {
            yaml_scalar_event_initialize (&ev, NULL, NULL, (yaml_char_t *) k, (int) strlen (k), 1, 1, YAML_ANY_SCALAR_STYLE);
            if (!yaml_emitter_emit (em, &ev) || s_emit (em, item, depth + 1)) return -1;
        }
        yaml_mapping_end_event_initialize (&ev);
        return yaml_emitter_emit (em, &ev) ? 0 : -1;
    }
    if (json_is_array (v)) {
        /* short arrays of numbers read best inline: [0, 0, 1] */
        int flow = json_array_size (v) <= 4;
        size_t i;
        json_t *item;
        json_array_foreach (v, i, item) if (!json_is_number (item)) flow = 0;
        yaml_sequence_start_event_initialize (&ev, NULL, NULL, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
        if (!yaml_emitter_emit (em, &ev)) return -1;
        json_array_foreach (v, i, item) if (s_emit (em, item, depth + 1)) return -1;
        yaml_sequence_end_event_initialize (&ev);
        return yaml_emitter_emit (em, &ev) ? 0 : -1;
    }
    const char *text;
    yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
    if (json_is_string (v)) {
        text = json_string_value (v);
        /* quote strings that would read back as another type */
        json_t *probe = bmq_yaml_parse (text, strlen (text), NULL, 0);
        if (!probe || !json_is_string (probe) || strcmp (json_string_value (probe), text))
            style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        json_decref (probe);
    }
    else if (json_is_integer (v)) { snprintf (num, sizeof num, "%lld", (long long) json_integer_value (v)); text = num; }
    else if (json_is_real (v)) {
        snprintf (num, sizeof num, "%.17g", json_real_value (v));
        if (!strpbrk (num, ".eE")) strcat (num, ".0");
        text = num;
    }
    else if (json_is_true (v)) text = "true";
    else if (json_is_false (v)) text = "false";
    else text = "null";
    yaml_scalar_event_initialize (&ev, NULL, NULL, (yaml_char_t *) text, (int) strlen (text), 1, 1, style);
    return yaml_emitter_emit (em, &ev) ? 0 : -1;
}

static int s_write_handler (void *data, unsigned char *buffer, size_t size)
{
    return fwrite (buffer, 1, size, (FILE *) data) == size;
}

int bmq_yaml_write_file (const char *path, const json_t *value, char *err, size_t errlen)
{
    FILE *f = fopen (path, "wb");
    if (!f) {
        if (err) snprintf (err, errlen, "cannot write %s: %s", path, strerror (errno));
        return -1;
    }
    yaml_emitter_t em;
    yaml_event_t ev;
    int rc = -1;
    if (yaml_emitter_initialize (&em)) {
        yaml_emitter_set_output (&em, s_write_handler, f);
        yaml_emitter_set_unicode (&em, 1);
        yaml_stream_start_event_initialize (&ev, YAML_UTF8_ENCODING);
        if (yaml_emitter_emit (&em, &ev)) {
            yaml_document_start_event_initialize (&ev, NULL, NULL, NULL, 1);
            if (yaml_emitter_emit (&em, &ev) && s_emit (&em, value, 0) == 0) {
                yaml_document_end_event_initialize (&ev, 1);
                if (yaml_emitter_emit (&em, &ev)) {
                    yaml_stream_end_event_initialize (&ev);
                    if (yaml_emitter_emit (&em, &ev) && yaml_emitter_flush (&em)) rc = 0;
                }
            }
        }
        yaml_emitter_delete (&em);
    }
    if (fclose (f) != 0) rc = -1;
    if (rc && err) snprintf (err, errlen, "cannot emit YAML to %s", path);
    return rc;
}
