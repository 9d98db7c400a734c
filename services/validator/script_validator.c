/* script_validator — size, encoding, parse, walk: one verdict per script. */
#include "script_validator.h"

#include "script_policy.h"
#include "script_report.h"
#include "script_walk.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bmq_script_validator_t {
    bmq_script_policy_t policy;
};

bmq_script_validator_t *bmq_script_validator_new (const json_t *rules, const json_t *rna, char *err, size_t errlen)
{
    json_t *effective = bmq_script_rules_effective (rules, err, errlen);
    if (!effective)
        return NULL;
    if (bmq_script_python_init (err, errlen) < 0 || sodium_init () < 0) {
        json_decref (effective);
        return NULL;
    }
    bmq_script_validator_t *self = calloc (1, sizeof *self);
    if (!self) {
        json_decref (effective);
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    bmq_script_gil_t gil = bmq_script_python_lock ();
    int rc = bmq_script_policy_init (&self->policy, effective, (json_t *) rna);
    bmq_script_python_unlock (gil);
    json_decref (effective);
    if (rc < 0) {
        snprintf (err, errlen, "script rules: cannot build the name sets");
        free (self);
        return NULL;
    }
    return self;
}

void bmq_script_validator_destroy (bmq_script_validator_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bmq_script_gil_t gil = bmq_script_python_lock ();
    bmq_script_policy_clear (&(*self_p)->policy);
    bmq_script_python_unlock (gil);
    free (*self_p);
    *self_p = NULL;
}

const json_t *bmq_script_validator_rules (const bmq_script_validator_t *self)
{
    return self->policy.rules;
}

/* Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF). */
static size_t s_bad_utf8 (const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (n == 0 || i + n > len || (n == 2 && c < 0xc2))
            return i + 1;
        for (size_t k = 1; k < n; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return i + 1;
        if (n == 3 && ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0)))
            return i + 1;
        if (n == 4 && ((c == 0xf0 && s[i + 1] < 0x90) || c > 0xf4 || (c == 0xf4 && s[i + 1] >= 0x90)))
            return i + 1;
        i += n;
    }
    return 0;
}

/* A PEP 263 declaration on line 1 or 2 naming anything but UTF-8: its line, or 0. */
static int s_foreign_coding (const char *s, size_t len)
{
    size_t start = 0;
    for (int line = 1; line <= 2 && start < len; line++) {
        const char *nl = memchr (s + start, '\n', len - start);
        size_t end = nl ? (size_t) (nl - s) : len;
        char buf[256];
        size_t n = end - start < sizeof buf - 1 ? end - start : sizeof buf - 1;
        memcpy (buf, s + start, n);
        buf[n] = 0;
        char *p = buf + strspn (buf, " \t\f");
        if (*p == '#') {
            char *c = strstr (p, "coding");
            if (c && (c[6] == ':' || c[6] == '=')) {
                c += 7;
                c += strspn (c, " \t");
                char enc[32];
                size_t el = strspn (c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");
                snprintf (enc, sizeof enc, "%.*s", (int) (el < 31 ? el : 31), c);
                for (char *e = enc; *e; e++)
                    *e = (char) (*e >= 'A' && *e <= 'Z' ? *e + 32 : *e == '_' ? '-' : *e);
                if (strcmp (enc, "utf-8") != 0 && strcmp (enc, "utf8") != 0 && strncmp (enc, "utf-8-", 6) != 0)
                    return line;
            }
        }
        else if (*p && *p != '\r')
            return 0;               /* a declaration must come before any code */
        start = end + 1;
    }
    return 0;
}

static double s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

json_t *bmq_script_validate (bmq_script_validator_t *self, const char *script, size_t len)
{
    double t0 = s_now_ms ();
    const bmq_script_limits_t *l = &self->policy.limits;
    bmq_script_report_t *report = bmq_script_report_new (l->max_errors);
    if (!report)
        return NULL;
    unsigned char digest[crypto_hash_sha256_BYTES];
    char hex[2 * sizeof digest + 1];
    crypto_hash_sha256 (digest, (const unsigned char *) script, len);
    sodium_bin2hex (hex, sizeof hex, digest, sizeof digest);
    size_t nodes = 0, lines = 0;
    double parse_ms = 0;
    for (size_t i = 0; i < len; i++)
        lines += script[i] == '\n';
    if (len && script[len - 1] != '\n')
        lines++;

    size_t bad;
    int coding_line;
    if (len == 0)
        bmq_script_report_error (report, 0, 0, "empty", "the script is empty");
    else if (len > l->max_bytes)
        bmq_script_report_error (report, 0, 0, "size", "the script is %zu bytes, over the cap of %zu", len, l->max_bytes);
    else if (memchr (script, 0, len))
        bmq_script_report_error (report, 0, 0, "encoding", "the script contains a NUL byte");
    else if ((bad = s_bad_utf8 ((const unsigned char *) script, len)))
        bmq_script_report_error (report, 0, 0, "encoding", "the script is not valid UTF-8 (byte %zu)", bad);
    else if ((coding_line = s_foreign_coding (script, len)))
        bmq_script_report_error (report, coding_line, 1, "encoding", "only UTF-8 scripts are accepted: remove the coding declaration");
    else {
        char *src = malloc (len + 1);
        if (!src) {
            bmq_script_report_destroy (&report);
            return NULL;
        }
        memcpy (src, script, len);
        src[len] = 0;
        bmq_script_gil_t gil = bmq_script_python_lock ();
        int line, col;
        char msg[256];
        double tp = s_now_ms ();
        PyObject *tree = bmq_script_python_parse (src, &line, &col, msg, sizeof msg);
        parse_ms = s_now_ms () - tp;
        if (!tree)
            bmq_script_report_error (report, line, col, "syntax", "%s", msg);
        else {
            bmq_script_walk (&self->policy, tree, report, &nodes);
            Py_DECREF (tree);
        }
        bmq_script_python_unlock (gil);
        free (src);
    }
    json_t *verdict = bmq_script_report_json (report);
    bmq_script_report_destroy (&report);
    if (!verdict)
        return NULL;
    json_object_set_new (verdict, "sha256", json_string (hex));
    json_object_set_new (verdict, "stats", json_pack ("{s:I, s:I, s:I, s:f, s:f}", "bytes", (json_int_t) len,
                                                      "lines", (json_int_t) lines, "nodes", (json_int_t) nodes,
                                                      "parse_ms", parse_ms, "ms", s_now_ms () - t0));
    return verdict;
}

json_t *bmq_script_rna_load (const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *rna = json_load_file (path, 0, &je);
    if (!rna) {
        snprintf (err, errlen, "%s: %s (line %d)", path, je.text, je.line);
        return NULL;
    }
    if (!json_is_object (rna)) {
        snprintf (err, errlen, "%s: expected an object of operator name → rna_info", path);
        json_decref (rna);
        return NULL;
    }
    return rna;
}
