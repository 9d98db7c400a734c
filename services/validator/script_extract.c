/* script_extract — fenced block, attachment or plain text → one script. */
#include "script_extract.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *s; size_t len; } s_line_t;

static bool s_blank (s_line_t l);

static void s_drop (bmq_script_extracted_t *out, int line)
{
    if (out->ndropped < BMQ_SCRIPT_DROPPED_MAX)
        out->dropped[out->ndropped] = line;
    out->ndropped++;
}


static bool s_next_line (const char *text, size_t len, size_t *pos, s_line_t *line)
{
    if (*pos >= len)
        return false;
    const char *start = text + *pos;
    const char *nl = memchr (start, '\n', len - *pos);
    size_t n = nl ? (size_t) (nl - start) : len - *pos;
    line->s = start;
    line->len = n;
    *pos += n + (nl ? 1 : 0);
    return true;
}

/* A fence line: returns the fence length (>= 3) and its char, else 0. */
static size_t s_fence (s_line_t l, char *ch, const char **info, size_t *info_len)
{
    size_t i = 0;
    while (i < l.len && i < 3 && l.s[i] == ' ')
        i++;
    if (i >= l.len || (l.s[i] != '`' && l.s[i] != '~'))
        return 0;
    char c = l.s[i];
    size_t n = 0;
    while (i + n < l.len && l.s[i + n] == c)
        n++;
    if (n < 3)
        return 0;
    *ch = c;
    const char *p = l.s + i + n, *end = l.s + l.len;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    const char *q = p;
    while (q < end && !isspace ((unsigned char) *q) && *q != '{')
        q++;
    *info = p;
    *info_len = (size_t) (q - p);
    return n;
}

static bool s_is_python_tag (const char *info, size_t n)
{
    static const char *tags[] = { "python", "py", "python3", "bpy", "blender", NULL };
    for (const char **t = tags; *t; t++)
        if (strlen (*t) == n && strncasecmp (info, *t, n) == 0)
            return true;
    return false;
}

static void s_append (char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (!*buf)
        return;
    if (*len + n + 2 > *cap) {
        size_t c = (*len + n + 2) * 2;
        char *bigger = realloc (*buf, c);
        if (!bigger) {
            free (*buf);
            *buf = NULL;
            return;
        }
        *buf = bigger;
        *cap = c;
    }
    memcpy (*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = 0;
}

/* Collect the fenced blocks; want_python: tagged ones, else untagged ones.
 * Returns the number of fences seen (0: no fence at all). */
static int s_fenced (const char *text, size_t len, bool want_python, char **out, size_t *out_len, int *blocks,
                     bmq_script_extracted_t *ex)
{
    size_t pos = 0, cap = 256, olen = 0;
    char *buf = malloc (cap);
    int fences = 0, line = 0;
    s_line_t l;
    if (!buf)
        return -1;
    buf[0] = 0;
    *blocks = 0;
    ex->ndropped = 0;
    while (s_next_line (text, len, &pos, &l)) {
        char ch;
        const char *info;
        size_t info_len, n = s_fence (l, &ch, &info, &info_len);
        line++;
        if (!n) {
            if (!s_blank (l))
                s_drop (ex, line);          /* prose between blocks */
            continue;
        }
        fences++;
        bool take = want_python ? s_is_python_tag (info, info_len) : info_len == 0;
        if (take)
            (*blocks)++;
        /* the block's body, up to a closing fence of the same char, at least as long */
        while (s_next_line (text, len, &pos, &l)) {
            char ch2;
            const char *info2;
            size_t info2_len, n2 = s_fence (l, &ch2, &info2, &info2_len);
            line++;
            if (n2 >= n && ch2 == ch && info2_len == 0)
                break;
            if (take) {
                s_append (&buf, &olen, &cap, l.s, l.len);
                s_append (&buf, &olen, &cap, "\n", 1);
            }
            else if (!s_blank (l))
                s_drop (ex, line);          /* a block in another language */
        }
    }
    *out = buf;
    *out_len = olen;
    return buf ? fences : -1;
}

static bool s_starts (s_line_t l, const char *word)
{
    size_t n = strlen (word);
    return l.len >= n && strncmp (l.s, word, n) == 0;
}

/* Does a line of unfenced text look like Python rather than prose? */
static bool s_looks_like_code (s_line_t l)
{
    static const char *starts[] = { "#", "import ", "from ", "def ", "for ", "while ", "if ", "elif ",
                                    "else:", "try:", "except", "finally:", "with ", "return", "class ",
                                    "@", "pass", "break", "continue", "raise ", "assert ", "del ",
                                    "global ", "nonlocal ", ")", "]", "}", NULL };
    if (l.len && (l.s[0] == ' ' || l.s[0] == '\t'))
        return true;
    for (const char **s = starts; *s; s++)
        if (s_starts (l, *s))
            return true;
    /* name(.name)* followed by = += ( [ or , */
    size_t i = 0;
    if (i < l.len && (isalpha ((unsigned char) l.s[i]) || l.s[i] == '_')) {
        while (i < l.len && (isalnum ((unsigned char) l.s[i]) || l.s[i] == '_' || l.s[i] == '.'))
            i++;
        while (i < l.len && l.s[i] == ' ')
            i++;
        if (i < l.len && (l.s[i] == '(' || l.s[i] == '[' || l.s[i] == '=' || l.s[i] == ','))
            return true;
        if (i + 1 < l.len && strchr ("+-*/%|&^", l.s[i]) && l.s[i + 1] == '=')
            return true;
    }
    return false;
}

static bool s_blank (s_line_t l)
{
    for (size_t i = 0; i < l.len; i++)
        if (!isspace ((unsigned char) l.s[i]))
            return false;
    return true;
}

static int s_plain (const char *text, size_t len, bmq_script_extracted_t *out)
{
    size_t pos = 0, first = (size_t) -1, last_end = 0, prose_inside = 0, prose_pending = 0;
    int line = 0, first_line = 0, last_line = 0;
    s_line_t l;
    while (s_next_line (text, len, &pos, &l)) {
        line++;
        if (s_blank (l))
            continue;
        if (s_looks_like_code (l)) {
            if (first == (size_t) -1) {
                first = (size_t) (l.s - text);
                first_line = line;
            }
            prose_inside += prose_pending;
            prose_pending = 0;
            last_end = (size_t) (l.s - text) + l.len;
            last_line = line;
        }
        else if (first != (size_t) -1)
            prose_pending++;
    }
    /* the non-blank lines before the first and after the last code line */
    out->ndropped = 0;
    pos = 0;
    line = 0;
    while (s_next_line (text, len, &pos, &l)) {
        line++;
        if ((line < first_line || line > last_line) && !s_blank (l))
            s_drop (out, line);
    }
    if (first == (size_t) -1) {
        snprintf (out->error, sizeof out->error, "the reply holds no Python code: %s", BMQ_SCRIPT_REFORMAT_HINT);
        out->reformat = true;
        return -1;
    }
    /* A line inside a bracket or a string can look like prose; only judge
     * lines that cannot be continuations: a prose line right after a line
     * ending in ':' is tolerated as Python's own syntax error to report. */
    if (prose_inside > 2) {
        snprintf (out->error, sizeof out->error, "the reply mixes prose into the code: %s", BMQ_SCRIPT_REFORMAT_HINT);
        out->reformat = true;
        return -1;
    }
    out->len = last_end - first;
    out->script = malloc (out->len + 2);
    if (!out->script)
        return -1;
    memcpy (out->script, text + first, out->len);
    out->script[out->len++] = '\n';
    out->script[out->len] = 0;
    out->source = "plain";
    return 0;
}

int bmq_script_extract (const char *mode, const char *text, size_t len, const char *attachment, size_t att_len,
                        const char *att_name, bmq_script_extracted_t *out)
{
    memset (out, 0, sizeof *out);
    if (!mode || (strcmp (mode, "format-to-bpy") != 0 && strcmp (mode, "contextual") != 0)) {
        snprintf (out->error, sizeof out->error, "mode must be \"format-to-bpy\" or \"contextual\"");
        return -1;
    }
    if (attachment) {
        size_t nl = att_name ? strlen (att_name) : 0;
        if (nl < 4 || strcmp (att_name + nl - 3, ".py") != 0) {
            snprintf (out->error, sizeof out->error, "the attachment must be a .py file");
            out->reformat = true;
            return -1;
        }
        if (att_len == 0 || att_len > BMQ_SCRIPT_EXTRACT_MAX) {
            snprintf (out->error, sizeof out->error, "the attachment is empty or larger than %u bytes", BMQ_SCRIPT_EXTRACT_MAX);
            return -1;
        }
        out->script = malloc (att_len + 1);
        if (!out->script)
            return -1;
        memcpy (out->script, attachment, att_len);
        out->script[att_len] = 0;
        out->len = att_len;
        out->source = "attachment";
        return 0;
    }
    if (!text || len == 0) {
        snprintf (out->error, sizeof out->error, "the reply is empty: %s", BMQ_SCRIPT_REFORMAT_HINT);
        out->reformat = true;
        return -1;
    }
    if (len > BMQ_SCRIPT_EXTRACT_MAX) {
        snprintf (out->error, sizeof out->error, "the reply is larger than %u bytes", BMQ_SCRIPT_EXTRACT_MAX);
        return -1;
    }
    if (memchr (text, 0, len)) {
        snprintf (out->error, sizeof out->error, "the reply contains a NUL byte");
        return -1;
    }
    char *buf = NULL;
    size_t blen = 0;
    int blocks = 0;
    int fences = s_fenced (text, len, true, &buf, &blen, &blocks, out);
    if (fences < 0)
        return -1;
    if (fences > 0 && blocks == 0) {
        free (buf);
        buf = NULL;
        if (s_fenced (text, len, false, &buf, &blen, &blocks, out) < 0)
            return -1;
    }
    if (fences > 0) {
        if (blocks == 0 || blen == 0) {
            free (buf);
            snprintf (out->error, sizeof out->error, "the reply's code blocks hold no Python: %s", BMQ_SCRIPT_REFORMAT_HINT);
            out->reformat = true;
            return -1;
        }
        out->script = buf;
        out->len = blen;
        out->source = "fenced";
        out->blocks = blocks;
        return 0;
    }
    free (buf);
    return s_plain (text, len, out);
}

void bmq_script_extracted_clear (bmq_script_extracted_t *out)
{
    free (out->script);
    out->script = NULL;
    out->len = 0;
}
