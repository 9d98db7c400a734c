/* config_docs — deploy/blendmq.yaml and docs/config.md, made from the
 * declaration (config_keys.def, issue 31). The generator is C, built from the
 * .def by X-macros, so the files say what the compiled table says: there is
 * no second parser of the .def that could read it differently. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define YAML_WIDTH     80       /* a block comment is wrapped to this */
#define INLINE_COLUMN  42       /* an inline comment starts here (or two spaces after the value) */
#define INLINE_WIDTH   130      /* a key whose line with its doc is longer has its doc above it */

typedef struct {
    const char *section;        /* a note's section; NULL for a key */
    const char *text;           /* a note's text, or a key's name */
} s_item_t;

static const s_item_t s_items[] = {
#define BMQ_CONFIG_KEY(NAME, TYPE, DEFAULT, CHOICES, MIN, MAX, DOC) { NULL, NAME },
#define BMQ_CONFIG_NOTE(SECTION, TEXT) { SECTION, TEXT },
#include "config_keys.def"
#undef BMQ_CONFIG_KEY
#undef BMQ_CONFIG_NOTE
};
#define ITEMS (sizeof s_items / sizeof s_items[0])
#define MAX_ORDER (ITEMS + 64)

static const char s_yaml_head[] =
    "# blendmq configuration: the defaults built into every binary.\n"
    "#\n"
    "# Generated from common/config_keys.def (common/config_docs.c): edit that file, build,\n"
    "# then `build/bin/test_config_docs --write .`; ctest config.docs_fresh checks it.\n"
    "# Every key, its type, default and range: docs/config.md.\n"
    "#\n"
    "# Copy this file, change what you need, and pass it with --config FILE.\n"
    "# Every key can also be set from the environment: BLENDMQ_<SECTION>_<KEY>,\n"
    "# e.g. BLENDMQ_BLENDER_PORT=9876 or BLENDMQ_EXECUTOR_ENDPOINT=tcp://10.0.0.5:7704.\n"
    "# Endpoints are ZeroMQ endpoints (tcp://host:port, or ipc:///path on one host),\n"
    "# so any service can run on another machine.\n";

static const char s_md_head[] =
    "# Configuration keys\n"
    "\n"
    "<!-- Generated from common/config_keys.def (common/config_docs.c): edit that file, build, then\n"
    "     `build/bin/test_config_docs --write .`; ctest config.docs_fresh fails when this file is stale. -->\n"
    "\n"
    "Every key blendmq reads, as `common/config_keys.def` declares it. The defaults are\n"
    "`deploy/blendmq.yaml`'s, built into every binary; a file given with `--config FILE`\n"
    "overrides them, and `BLENDMQ_<SECTION>_<KEY>` in the environment overrides both.\n"
    "`blendmq config check FILE` checks a file against this table (each problem at its line\n"
    "and column); an unknown key, a value of the wrong type, a choice not listed or a number\n"
    "out of its range stops `blendmq up` and every service before it starts.\n";

/* The section of "section.key" (into buf). */
static const char *s_section (const char *name, char *buf, size_t len)
{
    const char *dot = strchr (name, '.');
    size_t n = dot ? (size_t) (dot - name) : strlen (name);
    if (n >= len) n = len - 1;
    memcpy (buf, name, n);
    buf[n] = 0;
    return buf;
}

/* A YAML scalar needs quotes when a plain one would read as something else. */
static bool s_needs_quotes (const char *v)
{
    if (!*v || strchr ("-?:,[]{}#&*!|>'\"%@` ", v[0]) || v[strlen (v) - 1] == ' ' || v[strlen (v) - 1] == ':') return true;
    if (strstr (v, ": ") || strstr (v, " #") || strpbrk (v, "\n\t\\")) return true;
    static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "null", "~", "y", "n" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcasecmp (v, words[i])) return true;
    char *end;
    (void) strtod (v, &end);
    return *end == 0;                       /* a number */
}

static void s_yaml_value (FILE *out, const bmq_config_key_t *k)
{
    if (k->type == BMQ_CONFIG_INT || k->type == BMQ_CONFIG_BOOL || k->type == BMQ_CONFIG_MAP || !s_needs_quotes (k->def)) {
        fputs (k->def, out);
        return;
    }
    fputc ('"', out);
    for (const char *p = k->def; *p; p++) {
        if (*p == '"' || *p == '\\') fputc ('\\', out);
        fputc (*p, out);
    }
    fputc ('"', out);
}

/* text as "# " comment lines at indent, wrapped to YAML_WIDTH; a line of text
 * that starts with a space is kept as it is. */
static void s_yaml_comment (FILE *out, const char *indent, const char *text)
{
    size_t room = YAML_WIDTH - strlen (indent) - 2;
    const char *line = text;
    while (*line) {
        const char *eol = strchr (line, '\n');
        size_t len = eol ? (size_t) (eol - line) : strlen (line);
        if (line[0] == ' ' || len <= room) fprintf (out, "%s# %.*s\n", indent, (int) len, line);
        else {
            const char *p = line, *end = line + len;
            while (p < end) {
                while (p < end && *p == ' ') p++;
                size_t take = (size_t) (end - p);
                if (take > room) {
                    take = room;
                    while (take && p[take] != ' ') take--;
                    if (!take) { take = room; while (p + take < end && p[take] != ' ') take++; }     /* one long word */
                }
                if (take) fprintf (out, "%s# %.*s\n", indent, (int) take, p);
                p += take;
            }
        }
        line += len + (eol ? 1 : 0);
    }
}

static bool s_in_def (const char *name)
{
    for (size_t i = 0; i < ITEMS; i++)
        if (!s_items[i].section && !strcmp (s_items[i].text, name)) return true;
    return false;
}

static bool s_in_section (const char *name, const char *section)
{
    size_t n = strlen (section);
    return !strncmp (name, section, n) && name[n] == '.';
}

/* The .def's items in order, each key the registry adds (an endpoint the .def
 * does not declare: config_check.c) first in its section, or in a section of
 * its own at the end. *count items. */
static size_t s_order (s_item_t *order)
{
    size_t count, n = 0, nkeys;
    const bmq_config_key_t *keys = bmq_config_keys (&nkeys);
    char section[64] = "", now[64];
    for (size_t i = 0; i < ITEMS; i++) {
        const char *sec = s_items[i].section ? s_items[i].section : s_section (s_items[i].text, now, sizeof now);
        if (strcmp (sec, section)) {
            snprintf (section, sizeof section, "%s", sec);
            for (size_t k = 0; k < nkeys && n < MAX_ORDER; k++)
                if (!s_in_def (keys[k].name) && s_in_section (keys[k].name, section)) order[n++] = (s_item_t) { NULL, keys[k].name };
        }
        if (n < MAX_ORDER) order[n++] = s_items[i];
    }
    count = n;
    for (size_t k = 0; k < nkeys && n < MAX_ORDER; k++) {
        if (s_in_def (keys[k].name)) continue;
        bool placed = false;
        for (size_t j = 0; j < count && !placed; j++) placed = !order[j].section && !strcmp (order[j].text, keys[k].name);
        if (!placed) order[n++] = (s_item_t) { NULL, keys[k].name };
    }
    return n;
}

/* One file's form: what starts a section, a note, a key. */
typedef struct {
    const char *head;
    void (*section) (FILE *out, const char *name, bool *table);
    void (*note) (FILE *out, const char *text, bool *table);
    void (*key) (FILE *out, const bmq_config_key_t *key, bool *table);
} s_form_t;

/* The file in form, every item in order (s_order); malloc'd, NULL: out of memory. */
static char *s_render (const s_form_t *form)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    if (!out) return NULL;
    fputs (form->head, out);
    s_item_t order[MAX_ORDER];
    size_t items = s_order (order);
    char section[64] = "", now[64];
    bool table = false;                     /* Markdown: a table's head is out */
    for (size_t i = 0; i < items; i++) {
        const char *sec = order[i].section ? order[i].section : s_section (order[i].text, now, sizeof now);
        if (strcmp (sec, section)) {
            snprintf (section, sizeof section, "%s", sec);
            form->section (out, section, &table);
        }
        if (order[i].section) form->note (out, order[i].text, &table);
        else form->key (out, bmq_config_key (order[i].text), &table);
    }
    return fclose (out) ? (free (text), NULL) : text;
}

/* ---- deploy/blendmq.yaml ---------------------------------------------------------------- */

static void s_yaml_section (FILE *out, const char *name, bool *table) { (void) table; fprintf (out, "\n%s:\n", name); }
static void s_yaml_note (FILE *out, const char *text, bool *table) { (void) table; s_yaml_comment (out, "  ", text); }

/* "  key: value", the doc after it when both fit a line, else above it. */
static void s_yaml_key (FILE *out, const bmq_config_key_t *k, bool *table)
{
    (void) table;
    char line[512];
    int len = snprintf (line, sizeof line, "  %s: ", strchr (k->name, '.') + 1);
    FILE *one = fmemopen (line + len, sizeof line - (size_t) len, "w");
    if (one) { s_yaml_value (one, k); fclose (one); }
    len = (int) strlen (line);
    int pad = len + 2 > INLINE_COLUMN ? len + 2 : INLINE_COLUMN;
    if (!strchr (k->doc, '\n') && (size_t) pad + 2 + strlen (k->doc) <= INLINE_WIDTH)
        fprintf (out, "%-*s# %s\n", pad, line, k->doc);
    else {
        s_yaml_comment (out, "  ", k->doc);
        fprintf (out, "%s\n", line);
    }
}

char *bmq_config_docs_yaml (void)
{
    static const s_form_t form = { s_yaml_head, s_yaml_section, s_yaml_note, s_yaml_key };
    return s_render (&form);
}

/* ---- docs/config.md ------------------------------------------------------------------- */

/* A Markdown table cell: lines joined (a list item, a line that starts with
 * two spaces, on a line of its own: <br>), runs of spaces one, '|' escaped,
 * '<' and '>' outside `code` written as entities. */
static void s_cell (FILE *out, const char *text)
{
    bool space = false, code = false;
    for (const char *p = text; *p; p++) {
        if (*p == '\n' && p[1] == ' ' && p[2] == ' ' && p[3] && p[3] != ' ') { fputs ("<br>", out); space = false; p += 2; continue; }
        if (*p == ' ' || *p == '\n') { space = true; continue; }
        if (space) fputc (' ', out);
        space = false;
        if (*p == '`') code = !code;
        if (*p == '|') fputc ('\\', out);
        if (!code && *p == '<') fputs ("&lt;", out);
        else if (!code && *p == '>') fputs ("&gt;", out);
        else fputc (*p, out);
    }
}

static void s_md_section (FILE *out, const char *name, bool *table)
{
    fprintf (out, "\n## `%s`\n", name);
    *table = false;
}

static void s_md_note (FILE *out, const char *text, bool *table)
{
    fputc ('\n', out);
    s_cell (out, text);
    fputc ('\n', out);
    *table = false;
}

static void s_md_key (FILE *out, const bmq_config_key_t *k, bool *table)
{
    static const char *const types[] = { "string", "integer", "bool", "choice", "mapping" };   /* bmq_config_type_t */
    if (!*table) {
        fputs ("\n| key | type | default | range or choices | what it is |\n|---|---|---|---|---|\n", out);
        *table = true;
    }
    fprintf (out, "| `%s` | %s | ", k->name, types[k->type]);
    if (*k->def) { fputc ('`', out); s_cell (out, k->def); fputc ('`', out); }
    else fputs ("`\"\"`", out);
    fputs (" | ", out);
    if (k->type == BMQ_CONFIG_INT) fprintf (out, "%lld..%lld", (long long) k->min, (long long) k->max);
    else if (k->type == BMQ_CONFIG_ENUM) {
        for (const char *c = k->choices; ; ) {
            const char *bar = strchr (c, '|');
            size_t n = bar ? (size_t) (bar - c) : strlen (c);
            if (n) fprintf (out, "%s`%.*s`", c == k->choices ? "" : ", ", (int) n, c);
            else fprintf (out, "%s`\"\"`", c == k->choices ? "" : ", ");
            if (!bar) break;
            c = bar + 1;
        }
    }
    fputs (" | ", out);
    s_cell (out, k->doc);
    fputs (" |\n", out);
}

char *bmq_config_docs_markdown (void)
{
    static const s_form_t form = { s_md_head, s_md_section, s_md_note, s_md_key };
    return s_render (&form);
}
