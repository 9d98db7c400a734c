/* script_validator — size, encoding, parse, walk: one verdict per script. */
#include "script_validator.h"

#include "script_cache.h"
#include "script_policy.h"
#include "script_report.h"
#include "script_walk.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bmq_script_validator_t {
    bmq_script_policy_t policy;
    bmq_script_cache_t *cache;      /* verdicts by sha256 of the text (script_cache.h) */
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
    if (self && !(self->cache = bmq_script_cache_new (BMQ_SCRIPT_CACHE_DEFAULT))) {
        free (self);
        self = NULL;
    }
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
        bmq_script_cache_destroy (&self->cache);
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
    bmq_script_cache_destroy (&(*self_p)->cache);
    free (*self_p);
    *self_p = NULL;
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

/* Encoding declarations (PEP 263), found by CPython's own rule: a line that
 * matches ^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+) on line 1 or 2. Checked more
 * widely than CPython reads it, so that no reader of the text can find a
 * declaration this misses: every line start in the first two lines (after
 * '\n', and after a lone '\r' too), every "coding" hit on the line (not only
 * the first), no length cap. Any hit naming anything but UTF-8 is refused.
 * Returns the line (1 or 2) of the first foreign declaration, or 0. */
static bool s_word_char (unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'
           || c == '.' || c >= 0x80;
}

static bool s_utf8_name (const char *p, size_t n)
{
    char enc[16];
    if (n == 0 || n >= sizeof enc)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        enc[i] = (char) (c >= 'A' && c <= 'Z' ? c + 32 : c == '_' ? '-' : c);
    }
    enc[n] = 0;
    return !strcmp (enc, "utf-8") || !strcmp (enc, "utf8");
}

/* One line from `p` to `end` (no '\n' inside): the first foreign declaration? */
static bool s_foreign_on_line (const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\f'))
        p++;
    if (p >= end || *p != '#')
        return false;
    for (const char *c = p + 1; c + 7 <= end; c++) {
        if (memcmp (c, "coding", 6) != 0 || (c[6] != ':' && c[6] != '='))
            continue;
        const char *v = c + 7;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        const char *e = v;
        while (e < end && s_word_char ((unsigned char) *e))
            e++;
        if (e > v && !s_utf8_name (v, (size_t) (e - v)))
            return true;
    }
    return false;
}

static int s_foreign_coding (const char *s, size_t len)
{
    const char *end = s + len;
    const char *nl1 = memchr (s, '\n', len);
    const char *line2 = nl1 ? nl1 + 1 : end;
    const char *nl2 = line2 < end ? memchr (line2, '\n', (size_t) (end - line2)) : NULL;
    const char *region_end = nl2 ? nl2 : end;
    for (const char *p = s; p < region_end; p++) {
        bool start = p == s || p[-1] == '\n' || p[-1] == '\r';
        if (!start)
            continue;
        const char *eol = memchr (p, '\n', (size_t) (region_end - p));
        if (s_foreign_on_line (p, eol ? eol : region_end))
            return p < line2 ? 1 : 2;
    }
    return 0;
}

static double s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A verdict found in the cache, with this call's stats: no parse, its own time. */
static json_t *s_cached (json_t *verdict, double t0)
{
    json_t *stats = json_object_get (verdict, "stats");
    if (json_is_object (stats)) {
        json_object_set_new (stats, "parse_ms", json_real (0));
        json_object_set_new (stats, "cached", json_true ());
        json_object_set_new (stats, "ms", json_real (s_now_ms () - t0));
    }
    return verdict;
}

/* Whether a verdict may be kept: not one that failed for want of memory
 * (rule "internal"): that says nothing about the script. */
static bool s_cacheable (const json_t *verdict)
{
    json_t *errors = json_object_get (verdict, "errors"), *e;
    size_t i;
    json_array_foreach (errors, i, e)
        if (!strcmp (json_string_value (json_object_get (e, "rule")) ?: "", "internal"))
            return false;
    return true;
}

json_t *bmq_script_validate (bmq_script_validator_t *self, const char *script, size_t len)
{
    double t0 = s_now_ms ();
    const bmq_script_limits_t *l = &self->policy.limits;
    unsigned char digest[crypto_hash_sha256_BYTES];
    char hex[2 * sizeof digest + 1];
    crypto_hash_sha256 (digest, (const unsigned char *) script, len);
    json_t *hit = bmq_script_cache_get (self->cache, digest);
    if (hit)
        return s_cached (hit, t0);
    sodium_bin2hex (hex, sizeof hex, digest, sizeof digest);
    bmq_script_report_t *report = bmq_script_report_new (l->max_errors);
    if (!report)
        return NULL;
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
    else if (len >= 2 && (((unsigned char) script[0] == 0xff && (unsigned char) script[1] == 0xfe)
                          || ((unsigned char) script[0] == 0xfe && (unsigned char) script[1] == 0xff)
                          || (len >= 4 && !memcmp (script, "\0\0\xfe\xff", 4))))
        bmq_script_report_error (report, 1, 1, "encoding", "the script starts with a UTF-16 or UTF-32 byte-order mark: send UTF-8 text");
    else if (len >= 3 && !memcmp (script, "\xef\xbb\xbf", 3))
        bmq_script_report_error (report, 1, 1, "encoding", "the script starts with a byte-order mark: the text checked and run never carries one (send it without)");
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
    json_object_set_new (verdict, "stats", json_pack ("{s:I, s:I, s:I, s:f, s:b, s:f}", "bytes", (json_int_t) len,
                                                      "lines", (json_int_t) lines, "nodes", (json_int_t) nodes,
                                                      "parse_ms", parse_ms, "cached", 0, "ms", s_now_ms () - t0));
    if (s_cacheable (verdict))
        bmq_script_cache_put (self->cache, digest, verdict);
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

/* script_exec.canonical_dump, the same text (issue 30): ast.dump's shape without the fields
 * that are None or [], identical for one program on Python 3.11 to 3.14. */
static const char S_CANONICAL_DUMP[] =
    "import ast\n"
    "def canonical_dump(node):\n"
    "    if isinstance(node, ast.AST):\n"
    "        parts = []\n"
    "        for name in node._fields:\n"
    "            value = getattr(node, name, None)\n"
    "            if value is None or (isinstance(value, list) and not value):\n"
    "                continue\n"
    "            parts.append('%s=%s' % (name, canonical_dump(value)))\n"
    "        return '%s(%s)' % (type(node).__name__, ', '.join(parts))\n"
    "    if isinstance(node, list):\n"
    "        return '[%s]' % ', '.join(canonical_dump(x) for x in node)\n"
    "    return repr(node)\n";

/* The canonical_dump function (made once, under the GIL), or NULL. */
static PyObject *s_canonical_dump_fn (void)
{
    static PyObject *fn;
    if (fn)
        return fn;
    PyObject *globals = PyDict_New ();
    if (!globals)
        return NULL;
    PyDict_SetItemString (globals, "__builtins__", PyEval_GetBuiltins ());
    PyObject *r = PyRun_String (S_CANONICAL_DUMP, Py_file_input, globals, globals);
    Py_XDECREF (r);
    fn = r ? PyDict_GetItemString (globals, "canonical_dump") : NULL;
    Py_XINCREF (fn);
    Py_DECREF (globals);
    return fn;
}

char *bmq_script_ast_dump (const char *text, size_t len, char *msg, size_t msglen)
{
    char *src = malloc (len + 1), *out = NULL;
    if (!src)
        return NULL;
    memcpy (src, text, len);
    src[len] = 0;
    bmq_script_gil_t gil = bmq_script_python_lock ();
    int line, col;
    PyObject *tree = bmq_script_python_parse (src, &line, &col, msg, msglen);
    PyObject *fn = tree ? s_canonical_dump_fn () : NULL;
    PyObject *dump = fn ? PyObject_CallFunctionObjArgs (fn, tree, NULL) : NULL;
    const char *utf8 = dump && PyUnicode_Check (dump) ? PyUnicode_AsUTF8 (dump) : NULL;
    if (utf8)
        out = strdup (utf8);
    else if (tree)
        snprintf (msg, msglen, "ast.dump failed");
    Py_XDECREF (dump);
    Py_XDECREF (tree);
    PyErr_Clear ();
    bmq_script_python_unlock (gil);
    free (src);
    return out;
}
