/* mcp_param_headers — SEP-2243 (2026-07-28): a tool's parameter marked
 * "x-mcp-header": "Name" travels twice, in the body and in an
 * Mcp-Param-Name header (for routing intermediaries). The header must say
 * what the body says: as is, or "=?base64?…?=" holding it (strict Base64:
 * the alphabet, padding to a multiple of 4). Missing or different: the
 * request is refused (-32020, HTTP 400). */
#include "mcp_server.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HEADER 4096

/* The header's value without the whitespace around it, decoded when it is
 * "=?base64?…?=": NULL when that Base64 is malformed. Caller frees. */
static char *s_header_value (const char *raw)
{
    while (*raw == ' ' || *raw == '\t') raw++;
    size_t n = strnlen (raw, MAX_HEADER + 1);
    if (n > MAX_HEADER) return NULL;
    while (n && (raw[n - 1] == ' ' || raw[n - 1] == '\t')) n--;
    if (n < 12 || strncmp (raw, "=?base64?", 9) || strncmp (raw + n - 2, "?=", 2)) return strndup (raw, n);
    const char *b64 = raw + 9;
    size_t len = n - 11;
    if (len % 4) return NULL;                                 /* padding is required */
    for (size_t i = 0; i < len; i++) {
        char c = b64[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'
                  || (c == '=' && i >= len - 2);
        if (!ok) return NULL;
    }
    char *out = malloc (len + 1);
    size_t got = 0;
    if (sodium_base642bin ((unsigned char *) out, len, b64, len, NULL, &got, NULL, sodium_base64_VARIANT_ORIGINAL)) {
        free (out);
        return NULL;
    }
    out[got] = 0;
    if (strlen (out) != got) { free (out); return NULL; }    /* a NUL inside */
    return out;
}

/* A body value as the header carries it. */
static char *s_body_text (const json_t *v)
{
    if (json_is_string (v)) return strdup (json_string_value (v));
    if (json_is_boolean (v)) return strdup (json_is_true (v) ? "true" : "false");
    if (json_is_integer (v) || json_is_real (v)) return json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
    return NULL;                                              /* objects, arrays, null: not mirrored */
}

int bmq_mcp_param_headers_check (const bmq_mcp_t *mcp, const json_t *msg, const char *(*header) (void *ctx, const char *name),
                                 void *ctx, char *err, size_t errlen)
{
    const char *method = json_string_value (json_object_get (msg, "method"));
    if (!method || strcmp (method, "tools/call")) return 0;
    json_t *params = json_object_get (msg, "params");
    const bmq_mcp_tool_t *tool = bmq_mcp_tools_find (bmq_mcp_tools (mcp), json_string_value (json_object_get (params, "name")));
    if (!tool) return 0;
    json_t *args = json_object_get (params, "arguments");
    const char *key;
    json_t *prop;
    json_object_foreach (json_object_get (json_object_get (tool->def, "inputSchema"), "properties"), key, prop) {
        const char *name = json_string_value (json_object_get (prop, "x-mcp-header"));
        if (!name) continue;
        char *body = s_body_text (json_object_get (args, key));
        if (!body) continue;
        char hname[160];
        snprintf (hname, sizeof hname, "Mcp-Param-%.100s", name);
        const char *raw = header (ctx, hname);
        char *value = raw ? s_header_value (raw) : NULL;
        bool same = value && !strcmp (value, body);
        if (!same) {
            bool numeric = json_is_number (json_object_get (args, key));
            if (value && numeric) same = strtod (value, NULL) == json_number_value (json_object_get (args, key));
        }
        if (!same) snprintf (err, errlen, "Header mismatch: %s %s the body's %s", hname,
                             !raw ? "is missing, and must repeat" : !value ? "is not valid Base64 (=?base64?…?=), and must repeat"
                                                                           : "does not say", key);
        free (value);
        free (body);
        if (!same) return -1;
    }
    return 0;
}
