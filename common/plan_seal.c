/* plan_seal — SHA-256 plan hashes and HMAC seals (libsodium). */
#include "plan_seal.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

static void s_init (void)
{
    static int done;
    if (!done) { if (sodium_init () < 0) abort (); done = 1; }
}

int bmq_plan_hash (const json_t *plan, char out[BMQ_HEX_DIGEST])
{
    s_init ();
    char *canon = json_dumps (plan, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION (17));
    if (!canon) return -1;
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256 (digest, (const unsigned char *) canon, strlen (canon));
    free (canon);
    sodium_bin2hex (out, BMQ_HEX_DIGEST, digest, sizeof digest);
    return 0;
}

int bmq_seal_key_load (const char *path, bmq_seal_key_t *key, char *err, size_t errlen)
{
    s_init ();
    FILE *f = fopen (path, "r");
    if (!f) { ERR ("cannot read verdict key %s: %s", path, strerror (errno)); return -1; }
    char text[200] = "";
    size_t n = fread (text, 1, sizeof text - 1, f);
    fclose (f);
    text[n] = 0;
    size_t bin_len = 0;
    if (sodium_hex2bin (key->bytes, sizeof key->bytes, text, n, " \t\r\n", &bin_len, NULL) != 0
        || bin_len != sizeof key->bytes) {
        ERR ("verdict key %s must hold %d hex characters", path, 2 * BMQ_SEAL_KEY_BYTES);
        return -1;
    }
    return 0;
}

int bmq_seal_key_create (const char *path, char *err, size_t errlen)
{
    s_init ();
    unsigned char bytes[BMQ_SEAL_KEY_BYTES];
    char hex[2 * BMQ_SEAL_KEY_BYTES + 2];
    randombytes_buf (bytes, sizeof bytes);
    sodium_bin2hex (hex, sizeof hex, bytes, sizeof bytes);
    strcat (hex, "\n");
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);     /* a new file, never through a link */
    if (fd < 0) { ERR ("cannot create %s: %s", path, strerror (errno)); return -1; }
    ssize_t w = write (fd, hex, strlen (hex));
    close (fd);
    sodium_memzero (bytes, sizeof bytes);
    if (w != (ssize_t) strlen (hex)) { ERR ("cannot write %s", path); return -1; }
    return 0;
}

void bmq_seal_sign (const bmq_seal_key_t *key, const char *plan_hash, char out[BMQ_HEX_DIGEST])
{
    s_init ();
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init (&st, key->bytes, sizeof key->bytes);
    crypto_auth_hmacsha256_update (&st, (const unsigned char *) "accepted:", 9);
    crypto_auth_hmacsha256_update (&st, (const unsigned char *) plan_hash, strlen (plan_hash));
    crypto_auth_hmacsha256_final (&st, mac);
    sodium_bin2hex (out, BMQ_HEX_DIGEST, mac, sizeof mac);
}

bool bmq_seal_verify (const bmq_seal_key_t *key, const char *plan_hash, const char *seal)
{
    if (!plan_hash || !seal || strlen (seal) != BMQ_HEX_DIGEST - 1) return false;
    char expect[BMQ_HEX_DIGEST];
    bmq_seal_sign (key, plan_hash, expect);
    return sodium_memcmp (expect, seal, BMQ_HEX_DIGEST - 1) == 0;
}

/* ---- version 2: target, expiry, nonce ------------------------------------ */

#define SEAL_LABEL "blendmq-seal-v2"
#define NONCE_HEX  32

int64_t bmq_seal_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool s_target_ok (const char *target)
{
    size_t n = target ? strlen (target) : 0;
    if (!n || n > BMQ_SEAL_TARGET_MAX) return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char) target[i] <= ' ' || target[i] == ':' || (unsigned char) target[i] == 0x7f) return false;
    return true;
}

static void s_mac2 (const bmq_seal_key_t *key, const char *subject, const char *target, const char *expires,
                    const char *nonce, unsigned char mac[crypto_auth_hmacsha256_BYTES])
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init (&st, key->bytes, sizeof key->bytes);
    const char *parts[] = { SEAL_LABEL, subject, target, expires, nonce };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        crypto_auth_hmacsha256_update (&st, (const unsigned char *) parts[i], strlen (parts[i]) + 1);   /* with its NUL */
    crypto_auth_hmacsha256_final (&st, mac);
    sodium_memzero (&st, sizeof st);
}

int bmq_seal_make (const bmq_seal_key_t *key, const char *subject, const char *target, int64_t ttl_ms,
                   char out[BMQ_SEAL_MAX])
{
    s_init ();
    out[0] = 0;
    if (!subject || !s_target_ok (target) || ttl_ms <= 0) return -1;
    unsigned char nonce_bin[NONCE_HEX / 2], mac[crypto_auth_hmacsha256_BYTES];
    char nonce[NONCE_HEX + 1], expires[24], mac_hex[2 * sizeof mac + 1];
    randombytes_buf (nonce_bin, sizeof nonce_bin);
    sodium_bin2hex (nonce, sizeof nonce, nonce_bin, sizeof nonce_bin);
    snprintf (expires, sizeof expires, "%" PRId64, bmq_seal_now_ms () + ttl_ms);
    s_mac2 (key, subject, target, expires, nonce, mac);
    sodium_bin2hex (mac_hex, sizeof mac_hex, mac, sizeof mac);
    snprintf (out, BMQ_SEAL_MAX, "v2:%s:%s:%s:%s", expires, nonce, target, mac_hex);
    return 0;
}

struct bmq_seal_guard_t {
    zhashx_t *seen;         /* nonce hex -> (int64_t *) expiry */
    size_t    max;
    int64_t   max_ttl_ms;
    int       fd;           /* the nonces file (persist), appended to; -1: memory only */
    char     *path;
    size_t    appended;     /* lines appended since the file was last compacted */
};

bmq_seal_guard_t *bmq_seal_guard_new (size_t max_nonces, int64_t max_ttl_ms)
{
    bmq_seal_guard_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    self->seen = zhashx_new ();
    zhashx_set_destructor (self->seen, (zhashx_destructor_fn *) zstr_free);
    self->max = max_nonces ? max_nonces : 1;
    self->max_ttl_ms = max_ttl_ms > 0 ? max_ttl_ms : BMQ_SEAL_TTL_DEFAULT_MS;
    self->fd = -1;
    return self;
}

void bmq_seal_guard_destroy (bmq_seal_guard_t **self_p)
{
    if (!self_p || !*self_p) return;
    if ((*self_p)->fd >= 0) close ((*self_p)->fd);
    free ((*self_p)->path);
    zhashx_destroy (&(*self_p)->seen);
    free (*self_p);
    *self_p = NULL;
}

static void s_guard_prune (bmq_seal_guard_t *self, int64_t now_ms)
{
    zlistx_t *keys = zhashx_keys (self->seen);
    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        const char *v = zhashx_lookup (self->seen, k);
        if (v && strtoll (v, NULL, 10) < now_ms) zhashx_delete (self->seen, k);
    }
    zlistx_destroy (&keys);
}

/* Rewrite the nonces file with the live nonces (write a temporary, fsync,
 * rename) and reopen it for appending. 0 / -1 with err. */
static int s_guard_compact (bmq_seal_guard_t *self, char *err, size_t errlen)
{
    char tmp[1100];
    snprintf (tmp, sizeof tmp, "%s.tmp", self->path);
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) { ERR ("cannot write %s: %s", tmp, strerror (errno)); return -1; }
    FILE *f = fdopen (fd, "w");
    for (const char *v = zhashx_first (self->seen); f && v; v = zhashx_next (self->seen))
        fprintf (f, "%s %s\n", (const char *) zhashx_cursor (self->seen), v);
    bool ok = f && fflush (f) == 0 && fsync (fd) == 0;
    if (f) fclose (f); else close (fd);
    if (!ok || rename (tmp, self->path)) {
        ERR ("cannot write %s: %s", self->path, strerror (errno));
        unlink (tmp);
        return -1;
    }
    if (self->fd >= 0) close (self->fd);
    self->fd = open (self->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    self->appended = 0;
    if (self->fd < 0) { ERR ("cannot open %s: %s", self->path, strerror (errno)); return -1; }
    return 0;
}

int bmq_seal_guard_persist (bmq_seal_guard_t *self, const char *path, int64_t now_ms, char *err, size_t errlen)
{
    free (self->path);
    self->path = strdup (path);
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT) { ERR ("cannot read %s: %s", path, strerror (errno)); return -1; }
    size_t loaded = 0;
    if (fd >= 0) {
        FILE *f = fdopen (fd, "r");
        char line[128];
        /* hostile input as any file: one "nonce expires" a line, anything else skipped */
        while (f && fgets (line, sizeof line, f)) {
            char nonce[NONCE_HEX + 2];
            long long exp;
            if (sscanf (line, "%33s %lld", nonce, &exp) != 2 || strlen (nonce) != NONCE_HEX
                || strspn (nonce, "0123456789abcdef") != NONCE_HEX || exp < now_ms) continue;
            if (zhashx_size (self->seen) >= self->max) break;
            char expires[24];
            snprintf (expires, sizeof expires, "%lld", exp);
            if (zhashx_insert (self->seen, nonce, strdup (expires)) == 0) loaded++;
        }
        if (f) fclose (f); else close (fd);
    }
    return s_guard_compact (self, err, errlen);
}

size_t bmq_seal_guard_size (bmq_seal_guard_t *self)
{
    if (!self) return 0;
    s_guard_prune (self, bmq_seal_now_ms ());
    return zhashx_size (self->seen);
}

#define WHY(...) do { if (why) snprintf (why, whylen, __VA_ARGS__); } while (0)

bmq_seal_status_t bmq_seal_check (const bmq_seal_key_t *key, const char *subject, const char *seal,
                                  const char *self_name, int64_t now_ms, bmq_seal_guard_t *guard,
                                  char *why, size_t whylen)
{
    s_init ();
    /* v2:<expires>:<nonce>:<target>:<mac> — the target is everything between the
     * nonce and the last ':' (targets hold no ':', but parse strictly anyway) */
    char buf[BMQ_SEAL_MAX];
    if (!subject || !seal || strlen (seal) >= sizeof buf || strncmp (seal, "v2:", 3)) {
        WHY ("the seal is missing or not a version 2 seal (target, expiry, nonce)");
        return BMQ_SEAL_INVALID;
    }
    snprintf (buf, sizeof buf, "%s", seal + 3);
    char *expires = buf, *nonce = strchr (expires, ':');
    if (!nonce) goto malformed;
    *nonce++ = 0;
    char *target = strchr (nonce, ':');
    if (!target) goto malformed;
    *target++ = 0;
    char *mac_hex = strrchr (target, ':');
    if (!mac_hex) goto malformed;
    *mac_hex++ = 0;
    size_t el = strlen (expires);
    if (!el || el > 19 || strspn (expires, "0123456789") != el || strlen (nonce) != NONCE_HEX
        || strspn (nonce, "0123456789abcdef") != NONCE_HEX || !s_target_ok (target) || strlen (mac_hex) != 64)
        goto malformed;
    unsigned char got[crypto_auth_hmacsha256_BYTES], expect[crypto_auth_hmacsha256_BYTES];
    size_t n = 0;
    if (sodium_hex2bin (got, sizeof got, mac_hex, 64, NULL, &n, NULL) || n != sizeof got) goto malformed;
    s_mac2 (key, subject, target, expires, nonce, expect);
    if (sodium_memcmp (got, expect, sizeof got)) {
        WHY ("the seal does not match this %s and key", strncmp (subject, "script:", 7) ? "plan" : "script");
        return BMQ_SEAL_INVALID;
    }
    if (!self_name || strcmp (target, self_name)) {
        WHY ("the seal was made for executor '%.128s', not for this one ('%.128s')", target, self_name ? self_name : "");
        return BMQ_SEAL_WRONG_TARGET;
    }
    int64_t exp_ms = strtoll (expires, NULL, 10);
    if (exp_ms < now_ms) {
        WHY ("the seal expired %.1f s ago", (double) (now_ms - exp_ms) / 1000.0);
        return BMQ_SEAL_EXPIRED;
    }
    if (!guard) return BMQ_SEAL_OK;
    if (exp_ms > now_ms + guard->max_ttl_ms + BMQ_SEAL_SKEW_MS) {
        WHY ("the seal expires %.0f s ahead, more than this executor's limit (%.0f s)",
             (double) (exp_ms - now_ms) / 1000.0, (double) guard->max_ttl_ms / 1000.0);
        return BMQ_SEAL_TOO_LONG;
    }
    if (zhashx_lookup (guard->seen, nonce)) {
        WHY ("the seal was already used (nonce %.12s…): a replay", nonce);
        return BMQ_SEAL_REPLAYED;
    }
    if (zhashx_size (guard->seen) >= guard->max) s_guard_prune (guard, now_ms);
    if (zhashx_size (guard->seen) >= guard->max) {
        WHY ("too many live seals remembered (%zu); try again when some expire", guard->max);
        return BMQ_SEAL_BUSY;
    }
    zhashx_insert (guard->seen, nonce, strdup (expires));
    if (guard->path) {
        /* on disk before the seal counts: a restart must not forget it was used */
        char line[96];
        int len = snprintf (line, sizeof line, "%s %s\n", nonce, expires);
        if (guard->fd < 0 || write (guard->fd, line, (size_t) len) != len || fdatasync (guard->fd) != 0) {
            zhashx_delete (guard->seen, nonce);
            WHY ("the executor cannot record the seal's nonce in %s (%s): refused rather than replayable after a restart",
                 guard->path, strerror (errno));
            return BMQ_SEAL_BUSY;
        }
        if (++guard->appended > 10000 + zhashx_size (guard->seen)) {
            s_guard_prune (guard, now_ms);
            s_guard_compact (guard, NULL, 0);
        }
    }
    return BMQ_SEAL_OK;
malformed:
    WHY ("the seal is malformed (expected v2:expires:nonce:target:mac)");
    return BMQ_SEAL_INVALID;
}

const char *bmq_seal_status_name (bmq_seal_status_t status)
{
    switch (status) {
    case BMQ_SEAL_OK: return "ok";
    case BMQ_SEAL_INVALID: return "invalid";
    case BMQ_SEAL_WRONG_TARGET: return "wrong_target";
    case BMQ_SEAL_EXPIRED: return "expired";
    case BMQ_SEAL_TOO_LONG: return "too_long";
    case BMQ_SEAL_REPLAYED: return "replayed";
    case BMQ_SEAL_BUSY: return "busy";
    }
    return "?";
}
