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
#define MAX_SESSIONS    1000
#define SESSION_MS      (12LL * 3600 * 1000)
#define RECHECK_MS      200
#define RELOAD_MS       5000

typedef struct {
    char       token[MAX_TOKEN_LEN + 1];
    size_t     len;
    char       name[64];
    bmq_role_t role;
} s_token_t;

typedef struct {
    char    token[MAX_TOKEN_LEN + 1];      /* the token it was made from: revoked token, dead session */
    int64_t expires;
} s_session_t;

struct bmq_http_auth_t {
    pthread_mutex_t  lock;
    char            *dir;
    char             static_token[MAX_TOKEN_LEN + 1];
    s_token_t       *tokens;
    size_t           ntokens;
    struct timespec  dir_mtime;
    int64_t          checked, loaded;
    zhashx_t        *sessions;              /* sid → s_session_t* */
};

static void s_session_free (void **item)
{
    if (*item) { sodium_memzero (*item, sizeof (s_session_t)); free (*item); }
    *item = NULL;
}

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
    self->sessions = zhashx_new ();
    zhashx_set_destructor (self->sessions, s_session_free);
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
    zhashx_destroy (&self->sessions);
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

bool bmq_http_auth_session_new (bmq_http_auth_t *self, const char *token, char *sid, size_t sidlen)
{
    if (sidlen < 65) return false;
    pthread_mutex_lock (&self->lock);
    s_refresh (self);
    const s_token_t *t = s_find (self, token);
    if (t) {
        int64_t now = bmq_mono_ms ();
        zlistx_t *dead = zlistx_new ();
        const char *oldest = NULL;
        int64_t oldest_exp = INT64_MAX;
        for (s_session_t *s = zhashx_first (self->sessions); s; s = zhashx_next (self->sessions)) {
            if (s->expires <= now) zlistx_add_end (dead, (void *) zhashx_cursor (self->sessions));
            else if (s->expires < oldest_exp) { oldest_exp = s->expires; oldest = zhashx_cursor (self->sessions); }
        }
        if (!zlistx_size (dead) && zhashx_size (self->sessions) >= MAX_SESSIONS && oldest) zlistx_add_end (dead, (void *) oldest);
        for (const char *k = zlistx_first (dead); k; k = zlistx_next (dead)) zhashx_delete (self->sessions, k);
        zlistx_destroy (&dead);
        unsigned char bytes[32];
        randombytes_buf (bytes, sizeof bytes);
        sodium_bin2hex (sid, sidlen, bytes, sizeof bytes);
        s_session_t *s = calloc (1, sizeof *s);
        snprintf (s->token, sizeof s->token, "%s", t->token);
        s->expires = now + SESSION_MS;
        zhashx_update (self->sessions, sid, s);
    }
    pthread_mutex_unlock (&self->lock);
    return t != NULL;
}

bool bmq_http_auth_session (bmq_http_auth_t *self, const char *sid, bmq_http_who_t *who)
{
    if (!sid || strlen (sid) != 64) return false;
    pthread_mutex_lock (&self->lock);
    s_refresh (self);
    s_session_t *s = zhashx_lookup (self->sessions, sid);
    const s_token_t *t = NULL;
    if (s && s->expires > bmq_mono_ms ()) t = s_find (self, s->token);
    if (s && !t) zhashx_delete (self->sessions, sid);           /* expired, or its token was revoked */
    if (t && who) { snprintf (who->name, sizeof who->name, "%s", t->name); who->role = t->role; }
    pthread_mutex_unlock (&self->lock);
    return t != NULL;
}
