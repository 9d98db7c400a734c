/* assets_cache — content-addressed files under one directory, no symlinks followed. */
#include "assets_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define S_MANIFEST_MAX  (1u << 20)
#define S_MANIFEST_DIR  "m"
#define S_STALE_TMP_S   3600     /* a temp file this old was left by a process that died */

struct bmq_assets_cache_t {
    char *dir;
    int   fd;                   /* the cache dir, O_DIRECTORY|O_NOFOLLOW */
};

struct bmq_assets_cache_writer_t {
    bmq_assets_cache_t *cache;
    int      fd;
    char     tmp[40];           /* name in the cache dir */
    uint64_t written;
    crypto_hash_sha256_state sha;
};

bool bmq_assets_sha256_hex_valid (const char *text)
{
    if (!text) return false;
    size_t i = 0;
    for (; text[i]; i++)
        if (i >= 64 || !((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f'))) return false;
    return i == 64;
}

static void s_hex (const unsigned char *bytes, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf (out + i * 2, "%02x", bytes[i]);
    out[n * 2] = 0;
}

/* Refuse a directory that is not ours alone. */
static int s_check_dir (int fd, const char *name, char *err, size_t errlen)
{
    struct stat st;
    if (fstat (fd, &st)) { snprintf (err, errlen, "cannot stat %s: %s", name, strerror (errno)); return -1; }
    if (!S_ISDIR (st.st_mode)) { snprintf (err, errlen, "%s is not a directory: refused", name); return -1; }
    if (st.st_uid != geteuid ()) {
        snprintf (err, errlen, "%s is owned by uid %u, not by this user (uid %u): refused", name, (unsigned) st.st_uid, (unsigned) geteuid ());
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf (err, errlen, "%s is writable by others (mode %04o): refused", name, (unsigned) (st.st_mode & 07777));
        return -1;
    }
    return 0;
}

/* Remove temp files a dead process left (regular files named .tmp-*, older than S_STALE_TMP_S). */
static void s_sweep_stale (int dirfd)
{
    int fd = dup (dirfd);
    DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
    if (!d) { if (fd >= 0) close (fd); return; }
    time_t now = time (NULL);
    struct dirent *e;
    while ((e = readdir (d))) {
        struct stat st;
        if (strncmp (e->d_name, ".tmp-", 5) || fstatat (dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW)) continue;
        if ((S_ISREG (st.st_mode) || S_ISLNK (st.st_mode)) && now - st.st_mtime > S_STALE_TMP_S) unlinkat (dirfd, e->d_name, 0);
    }
    closedir (d);
}

bmq_assets_cache_t *bmq_assets_cache_open (const char *dir, char *err, size_t errlen)
{
    if (sodium_init () < 0) { snprintf (err, errlen, "libsodium would not start"); return NULL; }
    if (!dir || !*dir) { snprintf (err, errlen, "no cache dir configured (assets.cache_dir)"); return NULL; }
    char *path = strdup (dir);
    if (!path) { snprintf (err, errlen, "out of memory"); return NULL; }
    for (size_t n = strlen (path); n > 1 && path[n - 1] == '/'; n--) path[n - 1] = 0;   /* "x/" would follow a link */
    struct stat st;
    if (lstat (path, &st)) {
        if (errno != ENOENT || mkdir (path, 0700)) {
            snprintf (err, errlen, "cannot create the cache dir %s: %s", path, strerror (errno));
            free (path);
            return NULL;
        }
    }
    else if (S_ISLNK (st.st_mode)) {
        snprintf (err, errlen, "the cache dir %s is a symlink: refused", path);
        free (path);
        return NULL;
    }
    int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf (err, errlen, "cannot open the cache dir %s: %s%s", path, strerror (errno),
                  errno == ELOOP ? " (a symlink: refused)" : "");
        free (path);
        return NULL;
    }
    char label[600];
    snprintf (label, sizeof label, "the cache dir %s", path);
    if (s_check_dir (fd, label, err, errlen)) { close (fd); free (path); return NULL; }
    bmq_assets_cache_t *self = calloc (1, sizeof *self);
    if (!self) { close (fd); free (path); snprintf (err, errlen, "out of memory"); return NULL; }
    self->dir = path;
    self->fd = fd;
    s_sweep_stale (fd);
    return self;
}

void bmq_assets_cache_close (bmq_assets_cache_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_assets_cache_t *self = *self_p;
    close (self->fd);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

const char *bmq_assets_cache_dir (const bmq_assets_cache_t *self)
{
    return self->dir;
}

/* Open (creating when asked) the sub-directory `name` of the cache; -1 with err. */
static int s_subdir (bmq_assets_cache_t *self, const char *name, bool create, char *err, size_t errlen)
{
    if (create && mkdirat (self->fd, name, 0700) && errno != EEXIST) {
        snprintf (err, errlen, "cannot create %s/%s: %s", self->dir, name, strerror (errno));
        return -1;
    }
    int fd = openat (self->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT && !create) { snprintf (err, errlen, "%s", ""); return -1; }
        snprintf (err, errlen, "cannot open %s/%s: %s", self->dir, name,
                  e == ELOOP || e == ENOTDIR ? "a symlink or not a directory: refused" : strerror (e));
        return -1;
    }
    char label[600];
    snprintf (label, sizeof label, "%s/%s", self->dir, name);
    if (s_check_dir (fd, label, err, errlen)) { close (fd); return -1; }
    return fd;
}

/* ---- writing -------------------------------------------------------------- */

bmq_assets_cache_writer_t *bmq_assets_cache_begin (bmq_assets_cache_t *self, char *err, size_t errlen)
{
    bmq_assets_cache_writer_t *w = calloc (1, sizeof *w);
    if (!w) { snprintf (err, errlen, "out of memory"); return NULL; }
    w->cache = self;
    for (int tries = 0; tries < 8; tries++) {
        unsigned char rnd[12];
        randombytes_buf (rnd, sizeof rnd);
        char hex[25];
        s_hex (rnd, sizeof rnd, hex);
        snprintf (w->tmp, sizeof w->tmp, ".tmp-%s", hex);
        w->fd = openat (self->fd, w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (w->fd >= 0) break;
        if (errno != EEXIST) break;
    }
    if (w->fd < 0) {
        snprintf (err, errlen, "cannot create a temp file in the cache dir %s: %s", self->dir, strerror (errno));
        free (w);
        return NULL;
    }
    crypto_hash_sha256_init (&w->sha);
    return w;
}

int bmq_assets_cache_write (bmq_assets_cache_writer_t *w, const void *data, size_t len, char *err, size_t errlen)
{
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t n = write (w->fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            snprintf (err, errlen, "cannot write to the cache dir %s: %s", w->cache->dir, n < 0 ? strerror (errno) : "no progress");
            return -1;
        }
        p += n;
        left -= (size_t) n;
    }
    crypto_hash_sha256_update (&w->sha, data, len);
    w->written += len;
    return 0;
}

int bmq_assets_cache_rewind (bmq_assets_cache_writer_t *w, char *err, size_t errlen)
{
    if (ftruncate (w->fd, 0) || lseek (w->fd, 0, SEEK_SET) < 0) {
        snprintf (err, errlen, "cannot rewind a temp file in %s: %s", w->cache->dir, strerror (errno));
        return -1;
    }
    crypto_hash_sha256_init (&w->sha);
    w->written = 0;
    return 0;
}

uint64_t bmq_assets_cache_written (const bmq_assets_cache_writer_t *w)
{
    return w->written;
}

void bmq_assets_cache_abort (bmq_assets_cache_writer_t **w_p)
{
    if (!w_p || !*w_p) return;
    bmq_assets_cache_writer_t *w = *w_p;
    close (w->fd);
    unlinkat (w->cache->fd, w->tmp, 0);
    free (w);
    *w_p = NULL;
}

/* Rename the temp file to dir/name (dir created). 0 / -1. */
static int s_place (bmq_assets_cache_writer_t *w, const char *dir, const char *name, char *err, size_t errlen)
{
    int dfd = s_subdir (w->cache, dir, true, err, errlen);
    if (dfd < 0) return -1;
    int rc = renameat (w->cache->fd, w->tmp, dfd, name);
    if (rc) snprintf (err, errlen, "cannot move a file into %s/%s: %s", w->cache->dir, dir, strerror (errno));
    close (dfd);
    return rc ? -1 : 0;
}

int bmq_assets_cache_commit (bmq_assets_cache_writer_t **w_p, char sha256[65], char *err, size_t errlen)
{
    bmq_assets_cache_writer_t *w = *w_p;
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final (&w->sha, digest);
    s_hex (digest, sizeof digest, sha256);
    if (fsync (w->fd)) {
        snprintf (err, errlen, "cannot write to the cache dir %s: %s", w->cache->dir, strerror (errno));
        bmq_assets_cache_abort (w_p);
        return -1;
    }
    char dir[3] = { sha256[0], sha256[1], 0 };
    if (s_place (w, dir, sha256, err, errlen)) { bmq_assets_cache_abort (w_p); return -1; }
    close (w->fd);
    free (w);
    *w_p = NULL;
    return 0;
}

/* ---- reading -------------------------------------------------------------- */

/* Open dir/name for reading: a regular file, no symlink. -1 with err ("" when absent). */
static int s_open_file (bmq_assets_cache_t *self, const char *dir, const char *name, struct stat *st, char *err, size_t errlen)
{
    int dfd = s_subdir (self, dir, false, err, errlen);
    if (dfd < 0) return -1;
    int fd = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    int e = errno;
    close (dfd);
    if (fd < 0) {
        if (e == ENOENT) snprintf (err, errlen, "%s", "");
        else snprintf (err, errlen, "cannot open %s/%s/%s: %s", self->dir, dir, name,
                       e == ELOOP ? "a symlink: refused" : strerror (e));
        return -1;
    }
    if (fstat (fd, st) || !S_ISREG (st->st_mode)) {
        snprintf (err, errlen, "%s/%s/%s is not a regular file: refused", self->dir, dir, name);
        close (fd);
        return -1;
    }
    return fd;
}

static int s_read_all (int fd, void *dst, size_t size)
{
    char *p = dst;
    size_t got = 0;
    while (got < size) {
        ssize_t n = read (fd, p + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t) n;
    }
    return 0;
}

bool bmq_assets_cache_has (bmq_assets_cache_t *self, const char *sha256, uint64_t size)
{
    if (!bmq_assets_sha256_hex_valid (sha256)) return false;
    char dir[3] = { sha256[0], sha256[1], 0 }, err[8];
    struct stat st;
    int fd = s_open_file (self, dir, sha256, &st, err, sizeof err);
    if (fd < 0) return false;
    close (fd);
    return (uint64_t) st.st_size == size;
}

struct bmq_assets_cache_reader_t {
    int      fd;
    uint64_t size, done;
    char     sha256[65], label[1100];
    crypto_hash_sha256_state state;
};

bmq_assets_cache_reader_t *bmq_assets_cache_reader (bmq_assets_cache_t *self, const char *sha256, uint64_t size,
                                                    char *err, size_t errlen)
{
    if (!bmq_assets_sha256_hex_valid (sha256)) { snprintf (err, errlen, "\"%.80s\" is not a sha256", sha256 ? sha256 : ""); return NULL; }
    char dir[3] = { sha256[0], sha256[1], 0 };
    struct stat st;
    int fd = s_open_file (self, dir, sha256, &st, err, errlen);
    if (fd < 0) {
        if (!*err) snprintf (err, errlen, "%s/%s/%s is missing from the cache", self->dir, dir, sha256);
        return NULL;
    }
    if ((uint64_t) st.st_size != size) {
        snprintf (err, errlen, "%s/%s/%s has %lld bytes, expected %llu: the cache was changed", self->dir, dir, sha256,
                  (long long) st.st_size, (unsigned long long) size);
        close (fd);
        return NULL;
    }
    bmq_assets_cache_reader_t *r = calloc (1, sizeof *r);
    if (!r) { snprintf (err, errlen, "out of memory"); close (fd); return NULL; }
    r->fd = fd;
    r->size = size;
    snprintf (r->sha256, sizeof r->sha256, "%s", sha256);
    snprintf (r->label, sizeof r->label, "%s/%s/%s", self->dir, dir, sha256);
    crypto_hash_sha256_init (&r->state);
    return r;
}

uint64_t bmq_assets_cache_reader_left (const bmq_assets_cache_reader_t *r)
{
    return r->size - r->done;
}

int bmq_assets_cache_reader_read (bmq_assets_cache_reader_t *r, void *dst, size_t len, char *err, size_t errlen)
{
    if (len > r->size - r->done) { snprintf (err, errlen, "%s: read past its end", r->label); return -1; }
    if (s_read_all (r->fd, dst, len)) { snprintf (err, errlen, "cannot read %s: %s", r->label, strerror (errno)); return -1; }
    crypto_hash_sha256_update (&r->state, dst, len);
    r->done += len;
    if (r->done < r->size) return 0;
    unsigned char digest[crypto_hash_sha256_BYTES];
    char hex[65];
    crypto_hash_sha256_final (&r->state, digest);
    s_hex (digest, sizeof digest, hex);
    if (strcmp (hex, r->sha256)) { snprintf (err, errlen, "%s holds bytes with sha256 %s: the cache was changed", r->label, hex); return -1; }
    return 0;
}

void bmq_assets_cache_reader_close (bmq_assets_cache_reader_t **r_p)
{
    bmq_assets_cache_reader_t *r = *r_p;
    if (!r) return;
    close (r->fd);
    free (r);
    *r_p = NULL;
}

int bmq_assets_cache_read (bmq_assets_cache_t *self, const char *sha256, uint64_t size, void *dst, char *err, size_t errlen)
{
    bmq_assets_cache_reader_t *r = bmq_assets_cache_reader (self, sha256, size, err, errlen);
    if (!r) return -1;
    int rc = size > SIZE_MAX ? -1 : bmq_assets_cache_reader_read (r, dst, (size_t) size, err, errlen);
    bmq_assets_cache_reader_close (&r);
    return rc;
}

/* ---- manifests ------------------------------------------------------------ */

static void s_key_name (const char *key, char out[65])
{
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256 (digest, (const unsigned char *) key, strlen (key));
    s_hex (digest, sizeof digest, out);
}

int bmq_assets_cache_put_manifest (bmq_assets_cache_t *self, const char *key, const json_t *doc, char *err, size_t errlen)
{
    char *text = json_dumps (doc, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) { snprintf (err, errlen, "cannot encode the manifest for %s", key); return -1; }
    size_t len = strlen (text);
    if (len > S_MANIFEST_MAX) { snprintf (err, errlen, "the manifest for %s is over %u bytes", key, S_MANIFEST_MAX); free (text); return -1; }
    bmq_assets_cache_writer_t *w = bmq_assets_cache_begin (self, err, errlen);
    int rc = -1;
    if (w && bmq_assets_cache_write (w, text, len, err, errlen) == 0 && fsync (w->fd) == 0) {
        char name[65];
        s_key_name (key, name);
        rc = s_place (w, S_MANIFEST_DIR, name, err, errlen);
    }
    if (rc == 0) { close (w->fd); free (w); }
    else bmq_assets_cache_abort (&w);
    free (text);
    return rc;
}

json_t *bmq_assets_cache_get_manifest (bmq_assets_cache_t *self, const char *key, char *err, size_t errlen)
{
    char name[65];
    s_key_name (key, name);
    struct stat st;
    int fd = s_open_file (self, S_MANIFEST_DIR, name, &st, err, errlen);
    if (fd < 0) return NULL;
    json_t *doc = NULL;
    char *text = NULL;
    if (st.st_size <= 0 || (uint64_t) st.st_size > S_MANIFEST_MAX)
        snprintf (err, errlen, "the cached manifest for %s has %lld bytes (1..%u expected)", key, (long long) st.st_size, S_MANIFEST_MAX);
    else if (!(text = malloc ((size_t) st.st_size)) || s_read_all (fd, text, (size_t) st.st_size))
        snprintf (err, errlen, "cannot read the cached manifest for %s", key);
    else {
        json_error_t jerr;
        doc = json_loadb (text, (size_t) st.st_size, JSON_REJECT_DUPLICATES, &jerr);
        if (!json_is_object (doc)) {
            snprintf (err, errlen, "the cached manifest for %s is not a JSON object: %s", key, doc ? "wrong type" : jerr.text);
            json_decref (doc);
            doc = NULL;
        }
    }
    free (text);
    close (fd);
    return doc;
}
