/* assets_check — include paths, download URLs, ids. */
#include "assets_check.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int bmq_assets_check_path (const char *path, size_t len, char *err, size_t errlen)
{
    if (!path || len == 0) { snprintf (err, errlen, "an empty include path"); return -1; }
    if (len > BMQ_ASSETS_PATH_MAX) { snprintf (err, errlen, "include path \"%.60s...\" is longer than %d bytes", path, BMQ_ASSETS_PATH_MAX); return -1; }
    if (memchr (path, 0, len)) { snprintf (err, errlen, "include path \"%s\" holds a NUL byte", path); return -1; }
    if (path[0] == '/') { snprintf (err, errlen, "include path \"%s\" is absolute", path); return -1; }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) path[i];
        if (c == '\\') { snprintf (err, errlen, "include path \"%s\" holds a backslash", path); return -1; }
        if (c < 0x20 || c == 0x7f) { snprintf (err, errlen, "include path holds a control character (byte %zu)", i); return -1; }
    }
    int depth = 0;
    for (size_t start = 0; start <= len; ) {
        const char *slash = memchr (path + start, '/', len - start);
        size_t end = slash ? (size_t) (slash - path) : len;
        size_t n = end - start;
        if (n == 0) { snprintf (err, errlen, "include path \"%s\" has an empty component", path); return -1; }
        if (n == 1 && path[start] == '.') { snprintf (err, errlen, "include path \"%s\" has a \".\" component", path); return -1; }
        if (n == 2 && path[start] == '.' && path[start + 1] == '.') { snprintf (err, errlen, "include path \"%s\" climbs out with \"..\"", path); return -1; }
        if (++depth > BMQ_ASSETS_PATH_DEPTH) { snprintf (err, errlen, "include path \"%s\" is deeper than %d components", path, BMQ_ASSETS_PATH_DEPTH); return -1; }
        start = end + 1;
        if (!slash) break;
    }
    return 0;
}

bool bmq_assets_id_valid (const char *id)
{
    if (!id) return false;
    size_t n = 0;
    for (; id[n]; n++) {
        char c = id[n];
        /* Poly Haven's own rule for ids ([a-zA-Z0-9_-], e.g. "ArmChair_01"): no '.', '/' or '%' ever */
        if (n >= BMQ_ASSETS_ID_MAX || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                                        || c == '_' || c == '-')) return false;
    }
    return n > 0;
}

/* Whether host[:port] matches one comma-separated entry. port is "" for the default. */
static bool s_host_allowed (const char *host, const char *port, const char *hosts)
{
    const char *p = hosts ? hosts : "";
    while (*p) {
        while (*p == ',' || *p == ' ' || *p == '\t') p++;
        const char *end = p;
        while (*end && *end != ',') end++;
        const char *last = end;
        while (last > p && (last[-1] == ' ' || last[-1] == '\t')) last--;
        size_t n = (size_t) (last - p);
        if (n > 0 && n < 256) {
            char entry[256];
            memcpy (entry, p, n);
            entry[n] = 0;
            char *colon = strrchr (entry, ':');
            const char *eport = "";
            if (colon) { *colon = 0; eport = colon + 1; }
            if (!strcasecmp (entry, host) && !strcmp (eport, port)) return true;
        }
        p = end;
    }
    return false;
}

int bmq_assets_check_url (const char *url, const char *hosts, const char *hosts_key, char *err, size_t errlen)
{
    CURLU *u = curl_url ();
    if (!u) { snprintf (err, errlen, "out of memory"); return -1; }
    char *scheme = NULL, *host = NULL, *port = NULL, *user = NULL;
    int rc = -1;
    if (!url || strlen (url) > 2048 || curl_url_set (u, CURLUPART_URL, url, 0) != CURLUE_OK)
        snprintf (err, errlen, "download URL \"%.200s\" is not a URL", url ? url : "");
    else if (curl_url_get (u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK)
        snprintf (err, errlen, "download URL \"%.200s\" names no scheme", url);
    else if (strcasecmp (scheme, "https") && strcasecmp (scheme, "http"))
        snprintf (err, errlen, "download URL \"%.200s\" is %s, not https: refused", url, scheme);
    else if (curl_url_get (u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        snprintf (err, errlen, "download URL \"%.200s\" names no host", url);
    else if (curl_url_get (u, CURLUPART_USER, &user, 0) == CURLUE_OK && user)
        snprintf (err, errlen, "download URL \"%.200s\" carries user info: refused", url);
    else {
        curl_url_get (u, CURLUPART_PORT, &port, 0);
        bool local = !strcasecmp (host, "127.0.0.1") || !strcasecmp (host, "localhost");
        bool https = !strcasecmp (scheme, "https");
        if (!https && !(local && !strcasecmp (scheme, "http")))
            snprintf (err, errlen, "download URL \"%.200s\" is %s, not https: refused", url, scheme);
        else if (!s_host_allowed (host, port ? port : "", hosts))
            snprintf (err, errlen, "download host %s%s%s is not in %s (%s): refused (%.200s)",
                      host, port ? ":" : "", port ? port : "", hosts_key ? hosts_key : "the allowed download hosts", hosts && *hosts ? hosts : "empty", url);
        else rc = 0;
    }
    curl_free (scheme);
    curl_free (host);
    curl_free (port);
    curl_free (user);
    curl_url_cleanup (u);
    return rc;
}
