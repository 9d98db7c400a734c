/* config.docs_fresh (issue 31): deploy/blendmq.yaml and docs/config.md are
 * what common/config_docs.c makes from common/config_keys.def, byte for byte;
 * the YAML made reads back as every declared default; every key has a doc;
 * the README links docs/config.md.
 * Usage: test_config_docs SOURCE_DIR           check (exit 1 on any problem)
 *        test_config_docs --write SOURCE_DIR   write both files */
#include "config.h"
#include "service_registry.h"
#include "yaml_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int s_problems;

static void s_problem (const char *fmt, const char *a, const char *b)
{
    s_problems++;
    fprintf (stderr, fmt, a, b);
    fputc ('\n', stderr);
}

static char *s_read (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    size_t size = 0, used = 0;
    for (;;) {
        if (used + 4096 + 1 > size) {
            char *grown = realloc (text, size = (size + 4096) * 2);
            if (!grown) { free (text); fclose (f); return NULL; }
            text = grown;
        }
        size_t n = fread (text + used, 1, size - used - 1, f);
        used += n;
        if (n == 0) break;
    }
    fclose (f);
    text[used] = 0;
    return text;
}

/* want (made) against the file at path: the first line that differs, both ways. */
static void s_same (const char *path, const char *rel, const char *want)
{
    char *have = s_read (path);
    if (!have) { s_problem ("%s: cannot read it (%s)", rel, path); return; }
    if (strcmp (have, want)) {
        const char *a = have, *b = want, *la = have, *lb = want;
        size_t line = 1;
        while (*a && *a == *b) { if (*a == '\n') { line++; la = a + 1; lb = b + 1; } a++; b++; }
        fprintf (stderr, "%s:%zu: the file has   \"%.*s\"\n%s:%zu: the .def makes \"%.*s\"\n", rel, line,
                 (int) strcspn (la, "\n"), la, rel, line, (int) strcspn (lb, "\n"), lb);
        s_problem ("%s: differs from what common/config_keys.def makes; after editing the .def, build and run "
                   "`build/bin/test_config_docs --write .` in the source tree (never edit %s by hand)", rel, rel);
    }
    free (have);
}

/* The YAML made reads back as each key's declared default. */
static void s_reads_back (const char *yaml)
{
    char err[256];
    json_t *root = bmq_yaml_parse (yaml, strlen (yaml), err, sizeof err);
    if (!root) { s_problem ("the YAML made does not parse: %s%s", err, ""); return; }
    size_t count;
    const bmq_config_key_t *keys = bmq_config_keys (&count);
    for (size_t i = 0; i < count; i++) {
        const bmq_config_key_t *k = &keys[i];
        char section[64];
        snprintf (section, sizeof section, "%.*s", (int) (strchr (k->name, '.') - k->name), k->name);
        json_t *v = json_object_get (json_object_get (root, section), strchr (k->name, '.') + 1);
        bool ok;
        switch (k->type) {
        case BMQ_CONFIG_INT:  ok = json_is_integer (v) && json_integer_value (v) == strtoll (k->def, NULL, 10); break;
        case BMQ_CONFIG_BOOL: ok = json_is_boolean (v) && json_is_true (v) == !strcmp (k->def, "true"); break;
        case BMQ_CONFIG_MAP:  ok = json_is_object (v) && json_object_size (v) == 0; break;
        default:              ok = json_is_string (v) && !strcmp (json_string_value (v), k->def); break;
        }
        if (!ok) s_problem ("%s: the YAML made does not read back as its default '%s'", k->name, k->def);
        if (!*k->doc || strstr (k->doc, "(see deploy/blendmq.yaml)"))
            s_problem ("%s: no doc of its own in common/config_keys.def%s", k->name, "");
    }
    json_decref (root);
}

/* Each endpoint of the registry is a key, with the registry's default, and is
 * in the YAML made (config_keys.def may declare it too, for its doc). */
static void s_registry_keys (const char *yaml)
{
    size_t n;
    const bmq_service_t *svc = bmq_services (&n);
    for (size_t i = 0; i < n; i++) {
        char key[160], sock[64], def[64], line[256];
        for (size_t e = 0; bmq_service_endpoint (&svc[i], e, key, sizeof key, sock, sizeof sock, def, sizeof def); e++) {
            const bmq_config_key_t *k = bmq_config_key (key);
            if (!k) { s_problem ("%s: service %s binds it, and it is no configuration key", key, svc[i].name); continue; }
            if (k->type != BMQ_CONFIG_STR || strcmp (k->def, def))
                s_problem ("%s: config_keys.def's default is not the registry's (%s)", key, def);
            snprintf (line, sizeof line, "\n  %s: %s", strchr (key, '.') + 1, def);
            if (!strstr (yaml, line)) s_problem ("%s: not in the YAML made with its default %s", key, def);
        }
    }
}

int main (int argc, char **argv)
{
    bool write = argc == 3 && !strcmp (argv[1], "--write");
    if (argc != 2 && !write) { fprintf (stderr, "usage: test_config_docs [--write] SOURCE_DIR\n"); return 2; }
    const char *src = argv[argc - 1];
    char *yaml = bmq_config_docs_yaml (), *md = bmq_config_docs_markdown ();
    if (!yaml || !md) { fprintf (stderr, "out of memory\n"); return 1; }
    char yaml_path[1024], md_path[1024], readme[1024];
    snprintf (yaml_path, sizeof yaml_path, "%s/deploy/blendmq.yaml", src);
    snprintf (md_path, sizeof md_path, "%s/docs/config.md", src);
    snprintf (readme, sizeof readme, "%s/README.md", src);
    s_reads_back (yaml);
    s_registry_keys (yaml);
    if (write) {
        if (s_problems) { fprintf (stderr, "not written: %d problem(s)\n", s_problems); return 1; }
        const char *paths[] = { yaml_path, md_path }, *texts[] = { yaml, md };
        for (int i = 0; i < 2; i++) {
            FILE *f = fopen (paths[i], "w");
            if (!f || fputs (texts[i], f) < 0 || fclose (f)) { fprintf (stderr, "cannot write %s\n", paths[i]); return 1; }
            printf ("wrote %s\n", paths[i]);
        }
    }
    else {
        s_same (yaml_path, "deploy/blendmq.yaml", yaml);
        s_same (md_path, "docs/config.md", md);
        char *text = s_read (readme);
        if (!text || !strstr (text, "(docs/config.md)")) s_problem ("README.md: no link to docs/config.md%s%s", "", "");
        free (text);
    }
    size_t count;
    bmq_config_keys (&count);
    free (yaml);
    free (md);
    if (s_problems) { fprintf (stderr, "%d problem(s)\n", s_problems); return 1; }
    printf ("ok: %zu keys; deploy/blendmq.yaml and docs/config.md are the declaration's\n", count);
    return 0;
}
