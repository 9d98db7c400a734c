/* keys — a deployment's CURVE keys and HTTP tokens; see keys.h. */
#include "keys.h"
#include "auth.h"
#include "bus.h"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ERR(...) do { if (err && errlen) snprintf (err, errlen, __VA_ARGS__); } while (0)

/* every row of the service registry has a key, `up`'s supervisor's included (its
 * key sends the service.restart audit records: roles.def) */
const char *const bmq_keys_services[] = {
#define BMQ_SERVICE(NAME, ...) NAME,
#include "service_registry.def"
#undef BMQ_SERVICE
    NULL
};

static const struct { const char *name, *role; } s_clients[] = {
    /* the page's key builds and confirms, as a person does, but does not administer (issue 24) */
    { "cli", "admin" }, { "web", "operator+reviewer" }, { "panel", "admin" },
    { "mcp", "operator" },
};

bool bmq_keys_name_valid (const char *name)
{
    size_t n = name ? strlen (name) : 0;
    if (n < 1 || n > 32 || name[0] == '-' || name[0] == '_') return false;
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9')
              || name[i] == '-' || name[i] == '_'))
            return false;
    return true;
}

static bool s_exists (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static bool s_exists (const char *fmt, ...)
{
    char path[1400];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (path, sizeof path, fmt, ap);
    va_end (ap);
    struct stat st;
    return lstat (path, &st) == 0;
}

/* A new file, never through a symlink, never over an existing one, 0600. */
static int s_write_new (const char *path, const char *text, char *err, size_t errlen)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) { ERR ("cannot create %s: %s", path, strerror (errno)); return -1; }
    size_t len = strlen (text);
    ssize_t w = write (fd, text, len);
    int rc = close (fd);
    if (w != (ssize_t) len || rc) { ERR ("cannot write %s", path); unlink (path); return -1; }
    return 0;
}

static int s_mkdir_private (const char *dir, char *err, size_t errlen)
{
    char path[1200];
    snprintf (path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') { *p = 0; mkdir (path, 0700); *p = '/'; }
    if (mkdir (path, 0700) && errno != EEXIST) { ERR ("cannot create %s: %s", dir, strerror (errno)); return -1; }
    return bmq_keys_check_dir (dir, err, errlen);
}

int bmq_keys_check_dir (const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (!dir || !*dir) { ERR ("no keys dir (security.keys_dir)"); return -1; }
    if (lstat (dir, &st)) { ERR ("keys dir %s: %s (blendmq keys init --keys-dir %s)", dir, strerror (errno), dir); return -1; }
    if (S_ISLNK (st.st_mode)) { ERR ("keys dir %s is a symlink; refusing it", dir); return -1; }
    if (!S_ISDIR (st.st_mode)) { ERR ("keys dir %s is not a directory", dir); return -1; }
    if (st.st_uid != getuid ()) { ERR ("keys dir %s is not owned by this user (uid %d)", dir, (int) getuid ()); return -1; }
    if (st.st_mode & 077) { ERR ("keys dir %s has mode %03o; it must be 0700 (chmod 700 %s)", dir, (unsigned) (st.st_mode & 0777), dir); return -1; }
    return 0;
}

static void s_header (char *buf, size_t len, const char *what)
{
    char when[64];
    time_t now = time (NULL);
    strftime (when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime (&now));
    snprintf (buf, len, "#   ****  Generated on %s by blendmq (czmq zcert format)  ****\n#   %s\n\n", when, what);
}

/* Make NAME's keypair, its trusted copy and (clients) its token. */
static int s_make (const char *dir, const char *name, const char *role, bool token, char *err, size_t errlen)
{
    if (!bmq_keys_name_valid (name)) { ERR ("bad key name '%s' (1..32 of a-z 0-9 - _)", name); return -1; }
    char path[1300], head[256], text[2048];
    zcert_t *cert = zcert_new ();
    if (!cert) { ERR ("cannot make a CURVE keypair (libzmq without CURVE?)"); return -1; }
    char meta[256];
    snprintf (meta, sizeof meta, "metadata\n    name = \"%s\"\n    role = \"%s\"\n", name, role);
    int rc = -1;
    s_header (head, sizeof head, "ZeroMQ CURVE Public Certificate");
    snprintf (text, sizeof text, "%s%scurve\n    public-key = \"%s\"\n", head, meta, zcert_public_txt (cert));
    snprintf (path, sizeof path, "%s/%s.cert", dir, name);
    if (s_write_new (path, text, err, errlen)) goto done;
    snprintf (path, sizeof path, "%s/trusted/%s.cert", dir, name);
    if (s_write_new (path, text, err, errlen)) goto done;
    s_header (head, sizeof head, "ZeroMQ CURVE **Secret** Certificate\n#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.");
    snprintf (text, sizeof text, "%s%scurve\n    public-key = \"%s\"\n    secret-key = \"%s\"\n",
              head, meta, zcert_public_txt (cert), zcert_secret_txt (cert));
    snprintf (path, sizeof path, "%s/%s.cert_secret", dir, name);
    if (s_write_new (path, text, err, errlen)) goto done;
    sodium_memzero (text, sizeof text);
    if (token) {
        unsigned char bytes[32];
        char hex[2 * sizeof bytes + 2];
        if (sodium_init () < 0) { ERR ("libsodium does not start"); goto done; }
        randombytes_buf (bytes, sizeof bytes);
        sodium_bin2hex (hex, sizeof hex, bytes, sizeof bytes);
        strcat (hex, "\n");
        snprintf (path, sizeof path, "%s/%s.token", dir, name);
        rc = s_write_new (path, hex, err, errlen);
        sodium_memzero (hex, sizeof hex);
        sodium_memzero (bytes, sizeof bytes);
        if (rc) goto done;
    }
    rc = 0;
done:
    zcert_destroy (&cert);
    return rc;
}

int bmq_keys_init (const char *dir, int *created_out, char *err, size_t errlen)
{
    char sub[1300];
    int created = 0;
    if (created_out) *created_out = 0;
    if (s_mkdir_private (dir, err, errlen)) return -1;
    snprintf (sub, sizeof sub, "%s/trusted", dir);
    if (s_mkdir_private (sub, err, errlen)) return -1;
    for (int i = 0; bmq_keys_services[i]; i++) {
        if (s_exists ("%s/%s.cert", dir, bmq_keys_services[i])) continue;
        if (s_make (dir, bmq_keys_services[i], BMQ_ROLE_SERVICE, false, err, errlen)) return -1;
        created++;
    }
    for (size_t i = 0; i < sizeof s_clients / sizeof s_clients[0]; i++) {
        if (s_exists ("%s/%s.cert", dir, s_clients[i].name)) continue;
        if (s_exists ("%s/revoked/%s.cert", dir, s_clients[i].name)) continue;   /* revoked stays revoked */
        if (s_make (dir, s_clients[i].name, s_clients[i].role, true, err, errlen)) return -1;
        created++;
    }
    if (created_out) *created_out = created;
    return 0;
}

int bmq_keys_add_client (const char *dir, const char *name, const char *role, char *err, size_t errlen)
{
    if (!bmq_auth_role_valid (role) || !strcmp (role, BMQ_ROLE_SERVICE)) {
        ERR ("role must be viewer, operator, reviewer or admin");
        return -1;
    }
    if (!bmq_keys_name_valid (name)) { ERR ("bad client name '%s' (1..32 of a-z 0-9 - _)", name ? name : ""); return -1; }
    for (int i = 0; bmq_keys_services[i]; i++)
        if (!strcmp (name, bmq_keys_services[i])) { ERR ("'%s' is a service's name", name); return -1; }
    if (bmq_keys_check_dir (dir, err, errlen)) return -1;
    if (s_exists ("%s/%s.cert", dir, name)) { ERR ("a key named '%s' exists (revoke it first)", name); return -1; }
    /* a revoked client's name may be given to a new key: remove the old trust leftovers */
    char path[1300];
    snprintf (path, sizeof path, "%s/revoked/%s.cert", dir, name);
    unlink (path);
    snprintf (path, sizeof path, "%s/revoked/%s.cert_secret", dir, name);
    unlink (path);
    return s_make (dir, name, role, true, err, errlen);
}

int bmq_keys_revoke (const char *dir, const char *name, char *err, size_t errlen)
{
    if (!bmq_keys_name_valid (name)) { ERR ("bad key name '%s'", name ? name : ""); return -1; }
    if (bmq_keys_check_dir (dir, err, errlen)) return -1;
    char path[1300], to[1300];
    zcert_t *cert = bmq_keys_load_public (dir, name, NULL, 0);
    if (!cert) {
        snprintf (path, sizeof path, "%s/%s.cert", dir, name);
        cert = zcert_load (path);
    }
    if (!cert) { ERR ("no key named '%s' in %s", name, dir); return -1; }
    const char *role = zcert_meta (cert, "role");
    bool service = role && !strcmp (role, BMQ_ROLE_SERVICE);
    zcert_destroy (&cert);
    if (service) { ERR ("'%s' is a service key; service keys are not revoked (make a new keys dir)", name); return -1; }
    snprintf (path, sizeof path, "%s/revoked", dir);
    if (s_mkdir_private (path, err, errlen)) return -1;
    snprintf (path, sizeof path, "%s/trusted/%s.cert", dir, name);
    if (unlink (path) && errno != ENOENT) { ERR ("cannot remove %s: %s", path, strerror (errno)); return -1; }
    snprintf (path, sizeof path, "%s/%s.token", dir, name);
    if (unlink (path) && errno != ENOENT) { ERR ("cannot remove %s: %s", path, strerror (errno)); return -1; }
    static const char *ext[] = { "cert", "cert_secret" };
    for (int i = 0; i < 2; i++) {
        snprintf (path, sizeof path, "%s/%s.%s", dir, name, ext[i]);
        snprintf (to, sizeof to, "%s/revoked/%s.%s", dir, name, ext[i]);
        if (rename (path, to) && errno != ENOENT) { ERR ("cannot move %s: %s", path, strerror (errno)); return -1; }
    }
    /* zcertstore notices a change by the directory's file count, size and
     * newest mtime; a removal changes the count, so the next handshake sees it */
    return 0;
}

static int s_cmp (const void *a, const void *b)
{
    return strcmp (json_string_value (json_object_get (*(json_t *const *) a, "name")),
                   json_string_value (json_object_get (*(json_t *const *) b, "name")));
}

json_t *bmq_keys_list (const char *dir, char *err, size_t errlen)
{
    if (bmq_keys_check_dir (dir, err, errlen)) return NULL;
    DIR *d = opendir (dir);
    if (!d) { ERR ("cannot read %s: %s", dir, strerror (errno)); return NULL; }
    json_t *items[512];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir (d)) && n < 512) {
        size_t len = strlen (e->d_name);
        if (len < 6 || strcmp (e->d_name + len - 5, ".cert")) continue;
        char name[256], path[1300];
        snprintf (name, sizeof name, "%.*s", (int) (len - 5), e->d_name);
        snprintf (path, sizeof path, "%s/trusted/%s.cert", dir, name);
        zcert_t *cert = zcert_load (path);
        bool trusted = cert != NULL;
        if (!cert) {
            snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
            cert = zcert_load (path);
        }
        if (!cert) continue;
        items[n++] = json_pack ("{s:s, s:s, s:s, s:b, s:b}", "name", name,
                                "role", zcert_meta (cert, "role") ? zcert_meta (cert, "role") : "",
                                "public_key", zcert_public_txt (cert), "trusted", trusted,
                                "token", s_exists ("%s/%s.token", dir, name));
        zcert_destroy (&cert);
    }
    closedir (d);
    qsort (items, n, sizeof items[0], s_cmp);
    json_t *out = json_array ();
    for (size_t i = 0; i < n; i++) json_array_append_new (out, items[i]);
    return out;
}

zcert_t *bmq_keys_load (const char *dir, const char *name, char *err, size_t errlen)
{
    char path[1300];
    snprintf (path, sizeof path, "%s/%s.cert_secret", dir, name);
    if (!s_exists ("%s", path)) { ERR ("no secret key for '%s' in %s (blendmq keys init)", name, dir); return NULL; }
    snprintf (path, sizeof path, "%s/%s.cert", dir, name);
    zcert_t *cert = zcert_load (path);       /* reads NAME.cert_secret when it is there */
    if (!cert) { ERR ("cannot load the key %s", path); return NULL; }
    static const char zeros[41] = "0000000000000000000000000000000000000000";
    if (!strcmp (zcert_secret_txt (cert), zeros)) {
        ERR ("cannot read the secret key of '%s' in %s", name, dir);
        zcert_destroy (&cert);
        return NULL;
    }
    return cert;
}

zcert_t *bmq_keys_load_public (const char *dir, const char *name, char *err, size_t errlen)
{
    char path[1300];
    snprintf (path, sizeof path, "%s/trusted/%s.cert", dir, name);
    zcert_t *cert = zcert_load (path);
    if (!cert) ERR ("no trusted public cert for '%s' in %s/trusted", name, dir);
    return cert;
}

int bmq_keys_setup_process (const char *dir, const char *self_key, char *err, size_t errlen)
{
    if (bmq_keys_init (dir, NULL, err, errlen)) return -1;
    setenv ("BLENDMQ_SECURITY_KEYS_DIR", dir, 1);
    bmq_config_t *cfg = bmq_config_load (NULL, err, errlen);
    if (!cfg) return -1;
    int rc = bmq_bus_security_init (cfg, self_key, err, errlen);
    bmq_config_destroy (&cfg);
    return rc;
}
