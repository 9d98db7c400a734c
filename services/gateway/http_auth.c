/* http_auth — tokens from the keys dir, browser sessions; see http_auth.h. */
#include "http_auth.h"
#include "log.h"

#include <czmq.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TOKENS      256
#define MAX_TOKEN_LEN   256
#define SESSION_MS      (12LL * 3600 * 1000)
#define RECHECK_MS      200
#define RELOAD_MS       5000
#define MAX_CODES       64
#define CODE_BYTES      24

typedef struct {
    char    code[CODE_BYTES * 2 + 1];       /* hex; "" when free or used */
    char    name[64];
    int64_t expires;                        /* monotonic ms */
} s_code_t;

typedef struct {
    char       token[MAX_TOKEN_LEN + 1];
    size_t     len;
    char       name[64];
    bmq_role_t role;
} s_token_t;

struct bmq_http_auth_t {
    pthread_mutex_t  lock;
    char            *dir;
    char             static_token[MAX_TOKEN_LEN + 1];
    s_token_t       *tokens;
    size_t           ntokens;
    struct timespec  dir_mtime;
    int64_t          checked, loaded;
    s_code_t         codes[MAX_CODES];      /* one-time sign-in codes */
    bool             warned_web_admin;
};

static void s_trim (char *s, size_t *len)
{
    size_t n = strlen (s), i = 0;
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
    while (s[i] == ' ' || s[i] == '\t') i++;
    if (i) memmove (s, s + i, n - i + 1);
    *len = n - i;
}

/* The role in NAME.cert's metadata; BMQ_ROLE_NONE when there is none. */
static bmq_role_t s_cert_role (const char *dir, const char *name)
{
    char path[1400];
    snprintf (path, sizeof path, "%s/%s.cert", dir, name);
    zcert_t *cert = zcert_load (path);
    if (!cert) return BMQ_ROLE_NONE;
    bmq_role_t role = bmq_role_parse (zcert_meta (cert, "role"));
    zcert_destroy (&cert);
    return role;
}

/* Read the keys dir into a new table (called with the lock held). */
static void s_load (bmq_http_auth_t *self)
{
    for (size_t i = 0; i < self->ntokens; i++) sodium_memzero (&self->tokens[i], sizeof self->tokens[i]);
    self->ntokens = 0;
    if (self->static_token[0]) {
        s_token_t *t = &self->tokens[self->ntokens++];
        snprintf (t->token, sizeof t->token, "%s", self->static_token);
        t->len = strlen (t->token);
        snprintf (t->name, sizeof t->name, "http_token");
        t->role = BMQ_ROLE_ADMIN;
    }
    self->loaded = bmq_mono_ms ();
    if (!self->dir) return;
    DIR *d = opendir (self->dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir (d)) && self->ntokens < MAX_TOKENS; ) {
        size_t n = strlen (e->d_name);
        if (n <= 6 || n - 6 >= sizeof self->tokens[0].name || strcmp (e->d_name + n - 6, ".token")) continue;
        s_token_t *t = &self->tokens[self->ntokens];
        snprintf (t->name, sizeof t->name, "%.*s", (int) (n - 6), e->d_name);
        int fd = openat (dirfd (d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat (fd, &st) || !S_ISREG (st.st_mode)) { if (fd >= 0) close (fd); continue; }
        if (st.st_mode & 077) {
            bmq_warn ("http: ignoring the token of %s: %s/%s is readable by others (chmod 600 it)", t->name, self->dir, e->d_name);
            close (fd);
            continue;
        }
        ssize_t got = read (fd, t->token, MAX_TOKEN_LEN);
        close (fd);
        if (got <= 0) continue;
        t->token[got] = 0;
        s_trim (t->token, &t->len);
        if (t->len < 16) { sodium_memzero (t->token, sizeof t->token); continue; }
        t->role = s_cert_role (self->dir, t->name);
        if (!strcmp (t->name, "web") && t->role == BMQ_ROLE_ADMIN) {
            /* a keys dir made before issue 24: the page's key is a person's (build, confirm), never admin */
            if (!self->warned_web_admin)
                bmq_warn ("http: the `web` key has role admin (made by an older `keys init`); the page uses it as operator+reviewer "
                          "(`blendmq keys revoke web` then `blendmq keys init` re-issues it so)");
            self->warned_web_admin = true;
            t->role = BMQ_ROLE_OPERATOR_REVIEWER;
        }
        if (t->role == BMQ_ROLE_NONE) {
            bmq_warn ("http: ignoring the token of %s: %s/%s.cert is missing or has no role (viewer, operator, reviewer, admin)",
                      t->name, self->dir, t->name);
            sodium_memzero (t->token, sizeof t->token);
            continue;
        }
        self->ntokens++;
    }
    closedir (d);
}

/* Reload when the dir changed (lock held). */
static void s_refresh (bmq_http_auth_t *self)
{
    int64_t now = bmq_mono_ms ();
    if (now - self->checked < RECHECK_MS && self->loaded) return;
    self->checked = now;
    struct stat st;
    struct timespec m = { 0, 0 };
    if (self->dir && stat (self->dir, &st) == 0) m = st.st_mtim;
    if (self->loaded && m.tv_sec == self->dir_mtime.tv_sec && m.tv_nsec == self->dir_mtime.tv_nsec && now - self->loaded < RELOAD_MS)
        return;
    size_t before = self->ntokens;
    self->dir_mtime = m;
    s_load (self);
    if (before != self->ntokens) bmq_info ("http: %zu token(s) from %s", self->ntokens, self->dir ? self->dir : "(no keys dir)");
}

bmq_http_auth_t *bmq_http_auth_new (const char *keys_dir, const char *static_token)
{
    bmq_http_auth_t *self = calloc (1, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    self->dir = keys_dir && *keys_dir ? strdup (keys_dir) : NULL;
    snprintf (self->static_token, sizeof self->static_token, "%s", static_token ? static_token : "");
    self->tokens = calloc (MAX_TOKENS, sizeof *self->tokens);
    pthread_mutex_lock (&self->lock);
    s_refresh (self);
    pthread_mutex_unlock (&self->lock);
    return self;
}

void bmq_http_auth_destroy (bmq_http_auth_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_http_auth_t *self = *self_p;
    sodium_memzero (self->tokens, MAX_TOKENS * sizeof *self->tokens);
    sodium_memzero (self->static_token, sizeof self->static_token);
    free (self->tokens);
    free (self->dir);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

/* lock held */
static const s_token_t *s_find (bmq_http_auth_t *self, const char *given)
{
    if (!given) return NULL;
    while (*given == ' ') given++;
    size_t n = strlen (given);
    while (n && given[n - 1] == ' ') n--;
    const s_token_t *found = NULL;
    for (size_t i = 0; i < self->ntokens; i++)       /* constant time for equal lengths; every entry is compared */
        if (n == self->tokens[i].len && sodium_memcmp (given, self->tokens[i].token, n) == 0) found = &self->tokens[i];
    return found;
}

bool bmq_http_auth_token (bmq_http_auth_t *self, const char *token, bmq_http_who_t *who)
{
    pthread_mutex_lock (&self->lock);
    s_refresh (self);
    const s_token_t *t = s_find (self, token);
    if (t && who) { snprintf (who->name, sizeof who->name, "%s", t->name); who->role = t->role; }
    pthread_mutex_unlock (&self->lock);
    return t != NULL;
}

size_t bmq_http_auth_tokens (bmq_http_auth_t *self)
{
    pthread_mutex_lock (&self->lock);
    s_refresh (self);
    size_t n = self->ntokens;
    pthread_mutex_unlock (&self->lock);
    return n;
}

/* ---- sessions: signed, not stored -------------------------------------------
 * A session is "NAME.EXPIRES.MAC": the token's name, its expiry (Unix ms) and
 * HMAC-SHA256 over both, keyed with SHA-256 of that name's token. Nothing is
 * kept in memory, so a restarted gateway honours the sessions of the one
 * before it; a revoked or replaced token ends its sessions at once (there is
 * no key left to check the MAC with); the expiry cannot be changed without
 * the token. */

/* lock held */
static const s_token_t *s_by_name (bmq_http_auth_t *self, const char *name, size_t len)
{
    for (size_t i = 0; i < self->ntokens; i++)
        if (strlen (self->tokens[i].name) == len && !memcmp (self->tokens[i].name, name, len)) return &self->tokens[i];
    return NULL;
}

static void s_session_mac (const s_token_t *t, const char *name, size_t name_len, long long expires,
                           char hex[crypto_auth_hmacsha256_BYTES * 2 + 1])
{
    unsigned char key[crypto_hash_sha256_BYTES], mac[crypto_auth_hmacsha256_BYTES];
    crypto_hash_sha256 (key, (const unsigned char *) t->token, t->len);
    char msg[160];
    int n = snprintf (msg, sizeof msg, "blendmq-session\n%.*s\n%lld", (int) name_len, name, expires);
    crypto_auth_hmacsha256 (mac, (const unsigned char *) msg, (unsigned long long) n, key);
    sodium_bin2hex (hex, crypto_auth_hmacsha256_BYTES * 2 + 1, mac, sizeof mac);
    sodium_memzero (key, sizeof key);
    sodium_memzero (mac, sizeof mac);
}

/* lock held */
static bool s_session_for (const s_token_t *t, char *sid, size_t sidlen)
{
    long long expires = (long long) bmq_now_ms () + SESSION_MS;
    char mac[crypto_auth_hmacsha256_BYTES * 2 + 1];
    s_session_mac (t, t->name, strlen (t->name), expires, mac);
    int n = snprintf (sid, sidlen, "%s.%lld.%s", t->name, expires, mac);
    sodium_memzero (mac, sizeof mac);
    return n > 0 && (size_t) n < sidlen;
}

bool bmq_http_auth_session_new (bmq_http_auth_t *self, const char *token, char *sid, size_t sidlen)
{
    pthread_mutex_lock (&self->lock);
    s_refresh (self);
    const s_token_t *t = s_find (self, token);
    bool ok = t && s_session_for (t, sid, sidlen);
    pthread_mutex_unlock (&self->lock);
    return ok;
}

bool bmq_http_auth_session (bmq_http_auth_t *self, const char *sid, bmq_http_who_t *who)
{
    size_t len = sid ? strlen (sid) : 0;
    if (len < 3 || len > BMQ_HTTP_SESSION_MAX) return false;
    const char *dot1 = strchr (sid, '.'), *dot2 = dot1 ? strchr (dot1 + 1, '.') : NULL;
    if (!dot1 || !dot2 || dot1 == sid || dot2 - dot1 < 2 || dot2 - dot1 > 16) return false;
    long long expires = 0;
    for (const char *p = dot1 + 1; p < dot2; p++) {
        if (*p < '0' || *p > '9') return false;
        expires = expires * 10 + (*p - '0');
    }
    if (strlen (dot2 + 1) != crypto_auth_hmacsha256_BYTES * 2 || expires <= (long long) bmq_now_ms ()) return false;
    pthread_mutex_lock (&self->lock);
    s_refresh (self);
    const s_token_t *t = s_by_name (self, sid, (size_t) (dot1 - sid));
    bool ok = false;
    if (t) {
        char mac[crypto_auth_hmacsha256_BYTES * 2 + 1];
        s_session_mac (t, sid, (size_t) (dot1 - sid), expires, mac);
        ok = sodium_memcmp (mac, dot2 + 1, sizeof mac - 1) == 0;
        sodium_memzero (mac, sizeof mac);
    }
    if (ok && who) { snprintf (who->name, sizeof who->name, "%s", t->name); who->role = t->role; }
    pthread_mutex_unlock (&self->lock);
    return ok;
}

/* ---- the anti-CSRF nonce of a session ----------------------------------------
 * HMAC-SHA256 over "blendmq-csrf" and the session value, keyed like the
 * session: the page reads it with a same-origin GET (/api/whoami) and sends it
 * back in a header; a page of another origin can send the cookie but cannot
 * read the nonce (no CORS grant), so it cannot send it. */
bool bmq_http_auth_csrf (bmq_http_auth_t *self, const char *sid, char *nonce, size_t len)
{
    bmq_http_who_t who;
    if (len < BMQ_HTTP_CSRF_LEN + 1 || !bmq_http_auth_session (self, sid, &who)) return false;
    pthread_mutex_lock (&self->lock);
    const s_token_t *t = s_by_name (self, who.name, strlen (who.name));
    bool ok = false;
    if (t) {
        unsigned char key[crypto_hash_sha256_BYTES], mac[crypto_auth_hmacsha256_BYTES];
        crypto_hash_sha256 (key, (const unsigned char *) t->token, t->len);
        crypto_auth_hmacsha256_state st;
        crypto_auth_hmacsha256_init (&st, key, sizeof key);
        crypto_auth_hmacsha256_update (&st, (const unsigned char *) "blendmq-csrf\n", 13);
        crypto_auth_hmacsha256_update (&st, (const unsigned char *) sid, strlen (sid));
        crypto_auth_hmacsha256_final (&st, mac);
        sodium_bin2hex (nonce, len, mac, sizeof mac);
        sodium_memzero (key, sizeof key);
        sodium_memzero (mac, sizeof mac);
        ok = true;
    }
    pthread_mutex_unlock (&self->lock);
    return ok;
}

bool bmq_http_auth_csrf_ok (bmq_http_auth_t *self, const char *sid, const char *given)
{
    char want[BMQ_HTTP_CSRF_LEN + 1];
    if (!given || strlen (given) != BMQ_HTTP_CSRF_LEN || !bmq_http_auth_csrf (self, sid, want, sizeof want)) return false;
    bool ok = sodium_memcmp (want, given, BMQ_HTTP_CSRF_LEN) == 0;
    sodium_memzero (want, sizeof want);
    return ok;
}

/* ---- one-time sign-in codes ----------------------------------------------------
 * `blendmq web --open` must not put a token in a browser's arguments (every
 * local user reads them with ps): it asks for a code with its token, and the
 * browser opens ?code=…, good once, for ttl_ms at most. */
bool bmq_http_auth_code_new (bmq_http_auth_t *self, const char *name, int ttl_ms, char *code, size_t len)
{
    if (len < CODE_BYTES * 2 + 1 || ttl_ms <= 0) return false;
    unsigned char bytes[CODE_BYTES];
    randombytes_buf (bytes, sizeof bytes);
    int64_t now = bmq_mono_ms ();
    pthread_mutex_lock (&self->lock);
    s_code_t *slot = NULL;
    for (size_t i = 0; i < MAX_CODES; i++) {
        s_code_t *c = &self->codes[i];
        if (!c->code[0] || c->expires <= now) { slot = c; break; }
        if (!slot || c->expires < slot->expires) slot = c;        /* full: the one closest to expiring goes */
    }
    sodium_bin2hex (slot->code, sizeof slot->code, bytes, sizeof bytes);
    snprintf (slot->name, sizeof slot->name, "%s", name);
    slot->expires = now + ttl_ms;
    snprintf (code, len, "%s", slot->code);
    pthread_mutex_unlock (&self->lock);
    sodium_memzero (bytes, sizeof bytes);
    return true;
}

bool bmq_http_auth_code_take (bmq_http_auth_t *self, const char *code, char *sid, size_t sidlen)
{
    if (!code || strlen (code) != CODE_BYTES * 2) return false;
    int64_t now = bmq_mono_ms ();
    bool ok = false;
    pthread_mutex_lock (&self->lock);
    s_refresh (self);
    s_code_t *found = NULL;
    for (size_t i = 0; i < MAX_CODES; i++)             /* every slot compared: constant time */
        if (self->codes[i].code[0] && sodium_memcmp (self->codes[i].code, code, CODE_BYTES * 2) == 0) found = &self->codes[i];
    if (found) {
        const s_token_t *t = found->expires > now ? s_by_name (self, found->name, strlen (found->name)) : NULL;
        ok = t && s_session_for (t, sid, sidlen);
        sodium_memzero (found, sizeof *found);          /* used, or expired: gone either way */
    }
    pthread_mutex_unlock (&self->lock);
    return ok;
}
