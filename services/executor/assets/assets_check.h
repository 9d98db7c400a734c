/* assets_check — the rules every name and URL from an asset source passes
 * before the client acts on it.
 *
 *  - Include paths (relative names a model's files use for each other): 1 to
 *    BMQ_ASSETS_PATH_MAX bytes, no NUL, no control character, no backslash,
 *    not absolute, no empty, "." or ".." component, at most
 *    BMQ_ASSETS_PATH_DEPTH components. They are labels only: nothing is ever
 *    written under such a name.
 *  - Download URLs: https, or http only when the host is 127.0.0.1 or
 *    localhost (tests); no user info; the host (and port) must be one of the
 *    allowlist's entries, compared exactly (case-insensitively). An entry
 *    without a port allows the scheme's default port only; "127.0.0.1:8080"
 *    allows that port.
 *  - Poly Haven ids: [A-Za-z0-9_-]{1,64} (its own rule, e.g. ArmChair_01). */
#ifndef BMQ_ASSETS_CHECK_H
#define BMQ_ASSETS_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#define BMQ_ASSETS_PATH_MAX    255
#define BMQ_ASSETS_PATH_DEPTH  16
#define BMQ_ASSETS_ID_MAX      64

/* 0 when path (len bytes, may hold a NUL the check refuses) is a safe relative label; -1 with err. */
int bmq_assets_check_path (const char *path, size_t len, char *err, size_t errlen);

/* 0 when url may be downloaded under the comma-separated allowlist `hosts`; -1 with err. */
/* hosts_key names the setting the allowlist came from, for the message
 * ("assets.sketchfab_download_hosts"). */
int bmq_assets_check_url (const char *url, const char *hosts, const char *hosts_key, char *err, size_t errlen);

bool bmq_assets_id_valid (const char *id);

#endif
