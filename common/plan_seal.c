/* plan_seal — SHA-256 plan hashes and HMAC seals (libsodium). */
#include "plan_seal.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
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
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
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
