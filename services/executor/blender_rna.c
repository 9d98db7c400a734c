/* blender_rna — the Blender versions the script checks have a record of (see blender_rna.h). */
#include "blender_rna.h"
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RNA_MAX_BYTES (16 << 20)        /* a recorded table is ~0.4 MB; a bigger file is not one */
#define MISSING_SHOWN 5                 /* operators named in a refusal */

/* The last table loaded (the executor's main thread is its only user): one version at a time. */
static struct {
    char    version[24];
    json_t *rna;
} s_cache;

bool bmq_blender_version_valid (const char *text)
{
    if (!text) return false;
    int parts = 0, digits = 0;
    for (const char *p = text;; p++) {
        if (isdigit ((unsigned char) *p)) {
            if (++digits > 4) return false;
            continue;
        }
        if (digits == 0 || (*p != '.' && *p != 0)) return false;
        parts++;
        digits = 0;
        if (!*p) break;
    }
    return parts >= 2 && parts <= 4;
}

int bmq_blender_rna_path (const char *version, char *path, size_t len)
{
    if (!bmq_blender_version_valid (version)) return -1;
    const char *dir = getenv ("BLENDMQ_SCRIPT_RNA_DIR");
    int n = dir && *dir ? snprintf (path, len, "%s/script_rna_blender_%s.json", dir, version)
                        : snprintf (path, len, "%s/proto/script_rna_blender_%s.json", bmq_data_dir (), version);
    return n > 0 && (size_t) n < len ? 0 : -1;
}

/* The recorded table of `version` (borrowed), or NULL with why filled. */
static const json_t *s_table (const char *version, char *why, size_t whylen)
{
    if (s_cache.rna && !strcmp (s_cache.version, version)) return s_cache.rna;
    char path[1024];
    struct stat st;
    if (bmq_blender_rna_path (version, path, sizeof path) < 0) {
        snprintf (why, whylen, "Blender %.24s: not a version this executor can look up", version);
        return NULL;
    }
    if (stat (path, &st) < 0 || !S_ISREG (st.st_mode)) {
        snprintf (why, whylen, "no recorded RNA for Blender %s, so scripts cannot be checked for it: record it with "
                  "`BLENDER -b --factory-startup --python tests/script/fixtures/record_script_rna.py -- %s` "
                  "(BLENDER: this Blender; the next script uses it)", version, path);
        return NULL;
    }
    json_error_t e;
    json_t *rna = st.st_size <= RNA_MAX_BYTES ? json_load_file (path, JSON_REJECT_DUPLICATES, &e) : NULL;
    if (!json_is_object (rna) || json_object_size (rna) == 0) {
        snprintf (why, whylen, "the recorded RNA for Blender %s (%s) cannot be read: %s", version, path,
                  st.st_size > RNA_MAX_BYTES ? "over 16 MB" : rna ? "not an object of operators" : e.text);
        json_decref (rna);
        return NULL;
    }
    json_decref (s_cache.rna);
    s_cache.rna = rna;
    snprintf (s_cache.version, sizeof s_cache.version, "%s", version);
    return rna;
}

int bmq_blender_rna_check (const char *version, const json_t *operators, char *why, size_t whylen)
{
    if (!bmq_blender_version_valid (version)) {
        snprintf (why, whylen, "the live Blender's version is not known yet (it has not connected): scripts are "
                  "checked against the RNA recorded for that version");
        return -1;
    }
    const json_t *rna = s_table (version, why, whylen);
    if (!rna) return -1;
    size_t i, missing = 0;
    json_t *op;
    char names[300] = "";
    json_array_foreach (operators, i, op) {
        const char *name = json_string_value (op);
        if (!name || json_object_get (rna, name)) continue;
        if (missing++ < MISSING_SHOWN) {
            size_t used = strlen (names);
            snprintf (names + used, sizeof names - used, "%s%.80s", used ? ", " : "", name);
        }
    }
    if (missing) {
        snprintf (why, whylen, "Blender %s has no %s%s (its recorded RNA: %zu operator%s this script calls %s missing)",
                  version, names, missing > MISSING_SHOWN ? ", ..." : "", missing, missing == 1 ? "" : "s",
                  missing == 1 ? "is" : "are");
        return -1;
    }
    return 0;
}
