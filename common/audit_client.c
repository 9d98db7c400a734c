/* audit_client — at-least-once sending with acknowledgements and a spool;
 * the store dedups on (origin, seq). */
#include "audit_client.h"
#include "bus.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESEND_AFTER_MS  2000           /* first resend; doubles while nothing is acknowledged */
#define RESEND_MAX_MS    8000
#define SPOOL_SLOTS      64
#define SPOOL_FRAME_MAX  (BMQ_MAX_BODY + 4096)
#define DEFAULT_MAX_MB   64
#define SPOOL_RETRY_MS   5000

/* One record, kept encoded: what is resent and spooled is byte for byte what
 * was sent first. Pending records form a list, oldest first. */
typedef struct s_pending_t {
    struct s_pending_t *prev, *next;
    char           *key;          /* "origin#seq", the index key */
    int64_t         sent_at;      /* 0: not sent in the current round */
    unsigned char  *buf;          /* [u32 big-endian len][encoded envelope]: spooled as is */
    size_t          len;          /* of the envelope */
} s_pending_t;

struct bmq_audit_t {
    bmq_peer_t  *peer;
    char         name[BMQ_MAX_ID + 1];      /* the sender's name: names the spool */
    char         origin[BMQ_MAX_ID + 1];
    int64_t      next_seq;
    s_pending_t *head, *tail;
    s_pending_t *cursor;          /* next to send in this round; NULL: all sent */
    zhashx_t    *index;           /* key → s_pending_t* (acks name origin and seq) */
    size_t       count, bytes, inflight, max_bytes, dropped;
    size_t       unreported;      /* dropped since the last audit.dropped record */
    int64_t      first_drop_ms;   /* wall clock of the first of those */
    bool         reporting;       /* queueing that record now */
    zhashx_t    *counts;          /* bmq_audit_count: "kind|key|second" -> s_count_t (NULL until the first) */
    int64_t      resend_after;    /* ms without an ack for the oldest record before going back */
    bool         acked;           /* something was acknowledged since the last go-back */
    bool         alive;           /* the audit service answered heartbeats at the last tick */
    int64_t      revived_at;      /* when it came back (monotonic ms) */
    /* spool */
    char        *spool_path;
    int          spool_fd, lock_fd;
    size_t       spool_bytes;     /* bytes in the spool file */
    bool         spool_stale;     /* an append failed: the file lacks records */
    int64_t      spool_retry_at;  /* after a failed rewrite, not before (monotonic ms) */
};

/* ---- the queue -------------------------------------------------------------- */

static void s_pending_free (s_pending_t **p_p)
{
    if (!*p_p) return;
    free ((*p_p)->key);
    free ((*p_p)->buf);
    free (*p_p);
    *p_p = NULL;
}

/* Queue an encoded record (a copy of `frame`). The (origin, seq) of spooled
 * records is read back from the frame, so it is passed in. NULL when already
 * queued or out of memory. */
static s_pending_t *s_queue (bmq_audit_t *self, const char *origin, int64_t seq, const unsigned char *frame, size_t len)
{
    char key[BMQ_MAX_ID + 32];
    snprintf (key, sizeof key, "%s#%lld", origin, (long long) seq);
    if (zhashx_lookup (self->index, key)) return NULL;
    s_pending_t *p = calloc (1, sizeof *p);
    unsigned char *buf = malloc (len + 4);
    if (!p || !buf) { free (p); free (buf); return NULL; }
    buf[0] = (unsigned char) (len >> 24);
    buf[1] = (unsigned char) (len >> 16);
    buf[2] = (unsigned char) (len >> 8);
    buf[3] = (unsigned char) len;
    memcpy (buf + 4, frame, len);
    p->key = strdup (key);
    p->buf = buf;
    p->len = len;
    p->prev = self->tail;
    if (self->tail) self->tail->next = p;
    else self->head = p;
    self->tail = p;
    if (!self->cursor) self->cursor = p;
    zhashx_insert (self->index, p->key, p);
    self->count++;
    self->bytes += len;
    return p;
}

static void s_unqueue (bmq_audit_t *self, s_pending_t *p)
{
    /* items before the cursor were sent in this round and are in flight */
    if (p == self->cursor) self->cursor = p->next;
    else if (p->sent_at) self->inflight--;
    if (p->prev) p->prev->next = p->next;
    else self->head = p->next;
    if (p->next) p->next->prev = p->prev;
    else self->tail = p->prev;
    zhashx_delete (self->index, p->key);
    self->count--;
    self->bytes -= p->len;
    s_pending_free (&p);
}

/* Send what the window allows. Never blocks: a full pipe waits for the next tick. */
static void s_pump (bmq_audit_t *self)
{
    void *sock = zsock_resolve (bmq_peer_sock (self->peer));
    while (self->cursor && self->inflight < BMQ_AUDIT_WINDOW) {
        s_pending_t *p = self->cursor;
        if (zmq_send (sock, p->buf + 4, p->len, ZMQ_DONTWAIT) < 0) break;
        p->sent_at = bmq_mono_ms ();
        self->inflight++;
        self->cursor = p->next;
    }
}

/* Go back: everything unacknowledged is sent again, oldest first. Back off
 * while the audit service acknowledges nothing (busy, or failing to write). */
static void s_rewind (bmq_audit_t *self)
{
    bmq_debug ("audit: %zu records unacknowledged after %lld ms: sending them again", self->count,
               (long long) self->resend_after);
    for (s_pending_t *p = self->head; p && p != self->cursor; p = p->next) p->sent_at = 0;
    self->cursor = self->head;
    self->inflight = 0;
    if (!self->acked && self->resend_after < RESEND_MAX_MS) self->resend_after *= 2;
    self->acked = false;
}

/* ---- the spool file: [u32 big-endian length][encoded envelope] ... ---------- */

static int s_write_all (int fd, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    while (len) {
        ssize_t n = write (fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

static int s_write_frame (int fd, const s_pending_t *p)
{
    return s_write_all (fd, p->buf, p->len + 4);
}

static void s_spool_append (bmq_audit_t *self, const s_pending_t *p)
{
    if (self->spool_fd < 0 || self->spool_stale) return;
    if (s_write_frame (self->spool_fd, p)) {
        bmq_error ("audit spool %s: cannot append (%s); unacknowledged records are only in memory until it can "
                   "be rewritten", self->spool_path, strerror (errno));
        self->spool_stale = true;
        return;
    }
    self->spool_bytes += p->len + 4;
}

/* Replace the spool file by exactly the pending records, atomically
 * (temporary file, fsync, rename). 0 / -1 (logged). */
static int s_spool_rewrite (bmq_audit_t *self)
{
    char tmp[PATH_MAX];
    snprintf (tmp, sizeof tmp, "%s.tmp", self->spool_path);
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -1 : 0;
    for (s_pending_t *p = self->head; p && !rc; p = p->next) rc = s_write_frame (fd, p);
    if (!rc) rc = fsync (fd);
    if (fd >= 0 && close (fd)) rc = -1;
    if (!rc) rc = rename (tmp, self->spool_path);
    if (rc) {
        bmq_error ("audit spool %s: cannot rewrite (%s); retrying in %d s", self->spool_path, strerror (errno),
                   SPOOL_RETRY_MS / 1000);
        unlink (tmp);
        self->spool_retry_at = bmq_mono_ms () + SPOOL_RETRY_MS;
        return -1;
    }
    if (self->spool_fd >= 0) close (self->spool_fd);
    self->spool_fd = open (self->spool_path, O_WRONLY | O_APPEND | O_CLOEXEC);
    self->spool_bytes = 0;
    for (s_pending_t *p = self->head; p; p = p->next) self->spool_bytes += p->len + 4;
    self->spool_stale = self->spool_fd < 0;
    return self->spool_fd < 0 ? -1 : 0;
}

/* Everything acknowledged: the spool holds nothing worth keeping. */
static void s_spool_empty (bmq_audit_t *self)
{
    if (self->spool_fd < 0 || (self->spool_bytes == 0 && !self->spool_stale) || self->count) return;
    if (ftruncate (self->spool_fd, 0) == 0) { self->spool_bytes = 0; self->spool_stale = false; }
}

/* Keep the file near the size of what is pending, and whole again after a failed append. */
static void s_spool_maintain (bmq_audit_t *self)
{
    if (!self->spool_path || bmq_mono_ms () < self->spool_retry_at) return;
    if (self->spool_stale || self->spool_bytes > 4 * (self->bytes + 4 * self->count) + (1u << 20))
        s_spool_rewrite (self);
}

/* Read one frame; 1 read, 0 clean end of file, -1 damaged (*why says how). */
static int s_read_frame (FILE *f, unsigned char **frame, size_t *len, const char **why)
{
    unsigned char hdr[4];
    size_t n = fread (hdr, 1, 4, f);
    if (n == 0) return 0;
    if (n < 4) { *why = "truncated length"; return -1; }
    *len = (size_t) hdr[0] << 24 | (size_t) hdr[1] << 16 | (size_t) hdr[2] << 8 | hdr[3];
    if (*len == 0 || *len > SPOOL_FRAME_MAX) { *why = "impossible record length"; return -1; }
    *frame = malloc (*len);
    if (!*frame || fread (*frame, 1, *len, f) != *len) { free (*frame); *why = "truncated record"; return -1; }
    return 1;
}

/* Queue the records an earlier process left in `path`. Returns how many
 * were loaded; *damaged tells whether part of the file could not be used
 * (it is then renamed aside). */
static size_t s_spool_load (bmq_audit_t *self, const char *path, bool *damaged)
{
    *damaged = false;
    FILE *f = fopen (path, "rb");
    if (!f) return 0;
    size_t loaded = 0;
    unsigned char *frame = NULL;
    size_t len = 0;
    const char *why = NULL;
    int rc;
    while ((rc = s_read_frame (f, &frame, &len, &why)) == 1) {
        char err[256];
        /* the file is input like any other: decode with every bound checked */
        bmq_envelope_t *env = bmq_envelope_decode (frame, len, err, sizeof err);
        const char *origin = env ? bmq_body_str (env, "origin") : NULL;
        int64_t seq = env ? bmq_body_int (env, "seq", 0) : 0;
        if (!env || env->type != BMQ_MSG_AUDIT_RECORD || !origin || seq < 1 || strlen (origin) > BMQ_MAX_ID)
            why = env ? "not an audit record" : "undecodable record";
        else if (self->count >= BMQ_AUDIT_QUEUE_MAX || self->bytes + len > self->max_bytes)
            why = "more than the spool limit";
        else if (s_queue (self, origin, seq, frame, len))
            loaded++;
        bmq_envelope_destroy (&env);
        free (frame);
        frame = NULL;
        if (why) { rc = -1; break; }
    }
    fclose (f);
    if (rc < 0) {
        /* keep the evidence; the spool itself is rewritten with what loaded */
        char kept[PATH_MAX];
        snprintf (kept, sizeof kept, "%s.damaged-%lld", path, (long long) bmq_now_ms ());
        rename (path, kept);
        bmq_error ("audit spool %s: %s after %zu records; the file is kept as %s", path, why, loaded, kept);
        *damaged = true;
    }
    return loaded;
}

static int s_mkdirs (const char *dir)
{
    char path[PATH_MAX];
    snprintf (path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') { *p = 0; mkdir (path, 0700); *p = '/'; }
    return mkdir (path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

/* Adopt the spools of other slots of `name` that no running process holds
 * (say two validators ran and one comes back): their records join ours, our
 * spool is rewritten with them, then their files go. A crash in between
 * leaves a record in two files, which the store's dedup absorbs. */
static size_t s_spool_adopt (bmq_audit_t *self, const char *dir, const char *name, int own_slot)
{
    int locks[SPOOL_SLOTS];
    char paths[SPOOL_SLOTS][PATH_MAX];
    int n = 0;
    size_t adopted = 0;
    for (int slot = 0; slot < SPOOL_SLOTS; slot++) {
        char lock[PATH_MAX];
        snprintf (lock, sizeof lock, "%s/%s.%d.lock", dir, name, slot);
        snprintf (paths[n], sizeof paths[n], "%s/%s.%d.spool", dir, name, slot);
        if (slot == own_slot || !zsys_file_exists (paths[n])) continue;
        int fd = open (lock, O_RDWR | O_CLOEXEC);
        if (fd < 0) continue;
        if (flock (fd, LOCK_EX | LOCK_NB)) { close (fd); continue; }
        bool damaged;
        adopted += s_spool_load (self, paths[n], &damaged);
        locks[n++] = fd;
    }
    if (n && s_spool_rewrite (self) == 0)
        for (int i = 0; i < n; i++) unlink (paths[i]);
    for (int i = 0; i < n; i++) close (locks[i]);
    return adopted;
}

/* Take the first spool slot of `name` no running process holds. Returns
 * the slot, or -1. */
static int s_spool_lock (bmq_audit_t *self, const char *dir, const char *name)
{
    for (int slot = 0; slot < SPOOL_SLOTS; slot++) {
        char path[PATH_MAX];
        snprintf (path, sizeof path, "%s/%s.%d.lock", dir, name, slot);
        int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) return -1;
        if (flock (fd, LOCK_EX | LOCK_NB) == 0) {
            snprintf (path, sizeof path, "%s/%s.%d.spool", dir, name, slot);
            self->spool_path = strdup (path);
            self->lock_fd = fd;
            return slot;
        }
        close (fd);
    }
    errno = EBUSY;
    return -1;
}

int bmq_audit_set_spool (bmq_audit_t *self, const char *dir, size_t max_bytes)
{
    if (self->spool_path) return 0;
    self->max_bytes = max_bytes ? max_bytes : (size_t) DEFAULT_MAX_MB << 20;
    int slot = s_mkdirs (dir) ? -1 : s_spool_lock (self, dir, self->name);
    if (slot < 0) {
        bmq_error ("audit spool disabled: cannot use %s (%s); unacknowledged records will not survive a restart",
                   dir, strerror (errno));
        return -1;
    }
    bool damaged;
    size_t loaded = s_spool_load (self, self->spool_path, &damaged);
    if (damaged || !zsys_file_exists (self->spool_path)) s_spool_rewrite (self);
    else {
        self->spool_fd = open (self->spool_path, O_WRONLY | O_APPEND | O_CLOEXEC);
        self->spool_bytes = self->bytes + 4 * self->count;
    }
    loaded += s_spool_adopt (self, dir, self->name, slot);
    if (loaded)
        bmq_warn ("audit spool %s: %zu records from an earlier run will be sent again", self->spool_path, loaded);
    return self->spool_fd < 0 ? -1 : 0;
}

/* ---- the client --------------------------------------------------------------- */

bmq_audit_t *bmq_audit_new (const char *endpoint, int interval_ms, int liveness)
{
    bmq_peer_t *peer = bmq_peer_new ("audit", endpoint, interval_ms, liveness);
    if (!peer) return NULL;
    bmq_audit_t *self = calloc (1, sizeof *self);
    if (!self) { bmq_peer_destroy (&peer); return NULL; }
    self->peer = peer;
    self->next_seq = 1;
    self->index = zhashx_new ();
    self->max_bytes = (size_t) DEFAULT_MAX_MB << 20;
    self->spool_fd = self->lock_fd = -1;
    self->resend_after = RESEND_AFTER_MS;
    /* sender + pid + start time names this instance: seq restarts from 1 with it */
    bmq_envelope_t *probe = bmq_envelope_new (BMQ_MSG_HEARTBEAT, NULL, NULL);
    snprintf (self->name, sizeof self->name, "%s", probe->sender);
    snprintf (self->origin, sizeof self->origin, "%.40s-%d-%lld", probe->sender, (int) getpid (),
              (long long) bmq_now_ms ());
    bmq_envelope_destroy (&probe);
    return self;
}

bmq_audit_t *bmq_audit_new_from_config (const bmq_config_t *cfg)
{
    bmq_audit_t *self = bmq_audit_new (bmq_config_str (cfg, "audit.endpoint"),
                                       (int) bmq_config_int (cfg, "heartbeat.interval_ms"),
                                       (int) bmq_config_int (cfg, "heartbeat.liveness"));
    if (!self) return NULL;
    char dir[PATH_MAX];
    const char *configured = bmq_config_str (cfg, "audit.spool_dir");
    if (*configured) snprintf (dir, sizeof dir, "%s", configured);
    else {
        /* next to the database: each stack (run dir) gets its own spool */
        char db[PATH_MAX];
        snprintf (db, sizeof db, "%s", bmq_config_str (cfg, "audit.database"));
        snprintf (dir, sizeof dir, "%s/spool", dirname (db));
    }
    bmq_audit_set_spool (self, dir, (size_t) bmq_config_int (cfg, "audit.spool_max_mb") << 20);
    return self;
}

/* ---- counted records (bmq_audit_count) --------------------------------------- */

typedef struct {
    char    *cid, *kind;
    json_t  *data;            /* the first one's */
    int64_t  second, count, first_ms, last_ms;
} s_count_t;

static void s_count_free (void **item)
{
    s_count_t *c = *item;
    if (!c) return;
    free (c->cid);
    free (c->kind);
    json_decref (c->data);
    free (c);
    *item = NULL;
}

/* The seconds that are over (all of them with INT64_MAX) go out as records. */
static void s_counts_flush (bmq_audit_t *self, int64_t now_ms)
{
    if (!self->counts || !zhashx_size (self->counts)) return;
    zlistx_t *done = zlistx_new ();
    for (s_count_t *c = zhashx_first (self->counts); c; c = zhashx_next (self->counts))
        if (now_ms == INT64_MAX || c->second < now_ms / 1000) zlistx_add_end (done, (void *) zhashx_cursor (self->counts));
    for (const char *key = zlistx_first (done); key; key = zlistx_next (done)) {
        s_count_t *c = zhashx_lookup (self->counts, key);
        json_t *data = json_incref (c->data);
        json_object_set_new (data, "count", json_integer (c->count));
        json_object_set_new (data, "first_ms", json_integer (c->first_ms));
        json_object_set_new (data, "last_ms", json_integer (c->last_ms));
        bmq_audit_record (self, c->cid, c->kind, data);
        zhashx_delete (self->counts, key);
    }
    zlistx_destroy (&done);
}

bool bmq_audit_count (bmq_audit_t *self, const char *cid, const char *kind, const char *key, json_t *data)
{
    if (!self) { json_decref (data); return true; }
    if (!self->counts) {
        self->counts = zhashx_new ();
        zhashx_set_destructor (self->counts, s_count_free);
    }
    int64_t now = bmq_now_ms ();
    char hkey[400];
    snprintf (hkey, sizeof hkey, "%.64s|%.300s|%lld", kind ? kind : "?", key ? key : "", (long long) (now / 1000));
    s_count_t *c = zhashx_lookup (self->counts, hkey);
    if (c) {
        c->count++;
        c->last_ms = now;
        json_decref (data);
        return false;
    }
    if (zhashx_size (self->counts) >= BMQ_AUDIT_COUNT_KEYS) {
        /* more distinct keys in one second than are kept: counted as dropped, and recorded as such */
        if (!self->unreported++) self->first_drop_ms = now;
        self->dropped++;
        json_decref (data);
        return false;
    }
    c = calloc (1, sizeof *c);
    c->cid = strdup (cid && *cid ? cid : "-");
    c->kind = strdup (kind ? kind : "?");
    c->data = data ? data : json_object ();
    c->second = now / 1000;
    c->count = 1;
    c->first_ms = c->last_ms = now;
    zhashx_insert (self->counts, hkey, c);
    return true;
}

void bmq_audit_destroy (bmq_audit_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_audit_t *self = *self_p;
    s_counts_flush (self, INT64_MAX);           /* what was being counted is queued (and spooled) too */
    zhashx_destroy (&self->counts);
    if (self->count && self->spool_path && s_spool_rewrite (self) == 0)
        bmq_warn ("%zu audit records not yet acknowledged: kept in %s for the next start", self->count, self->spool_path);
    else if (self->count)
        bmq_error ("%zu audit records were never acknowledged and are lost (%s)", self->count,
                   self->spool_path ? "the spool could not be written" : "no spool");
    else if (self->spool_path)
        unlink (self->spool_path);
    if (self->spool_fd >= 0) close (self->spool_fd);
    if (self->lock_fd >= 0) close (self->lock_fd);
    while (self->head) s_unqueue (self, self->head);
    zhashx_destroy (&self->index);
    bmq_peer_destroy (&self->peer);
    free (self->spool_path);
    free (self);
    *self_p = NULL;
}

zsock_t *bmq_audit_sock (bmq_audit_t *self) { return bmq_peer_sock (self->peer); }
bmq_peer_t *bmq_audit_peer (bmq_audit_t *self) { return self->peer; }
size_t bmq_audit_pending (const bmq_audit_t *self) { return self->count; }
size_t bmq_audit_dropped (const bmq_audit_t *self) { return self->dropped; }
const char *bmq_audit_origin (const bmq_audit_t *self) { return self->origin; }
const char *bmq_audit_spool_path (const bmq_audit_t *self) { return self->spool_path; }

static void s_shape (const json_t *v, int level, size_t *items, int *depth)
{
    if (!json_is_object (v) && !json_is_array (v)) return;
    if (level > *depth) *depth = level;
    if (level > 64) return;
    if (json_is_array (v)) {
        *items += json_array_size (v);
        for (size_t i = 0; i < json_array_size (v); i++) s_shape (json_array_get (v, i), level + 1, items, depth);
        return;
    }
    *items += 2 * json_object_size (v);
    const char *key;
    json_t *child;
    json_object_foreach ((json_t *) v, key, child) s_shape (child, level + 1, items, depth);
}

void bmq_audit_data_shape (const json_t *data, size_t *items, int *depth)
{
    *items = 0;
    *depth = 0;
    s_shape (data, 1, items, depth);
}

/* Nothing is dropped silently: once the queue has room again, a record of
 * kind audit.dropped says how many went and when (it may pass the bound by
 * one record: the count must get through). */
static void s_report_drops (bmq_audit_t *self)
{
    if (!self->unreported || self->reporting) return;
    if (self->count >= BMQ_AUDIT_QUEUE_MAX || self->bytes >= self->max_bytes) return;
    self->reporting = true;
    size_t n = self->unreported;
    int64_t first = self->first_drop_ms;
    self->unreported = 0;
    bmq_audit_record (self, NULL, "audit.dropped", json_pack ("{s:I, s:I, s:I, s:s}", "count", (json_int_t) n,
                      "first_ms", (json_int_t) first, "last_ms", (json_int_t) bmq_now_ms (),
                      "reason", "the sender's audit queue was full (audit service unreachable)"));
    self->reporting = false;
}

void bmq_audit_record (bmq_audit_t *self, const char *cid, const char *kind, json_t *data)
{
    if (!self) { json_decref (data); return; }
    s_report_drops (self);
    if (!data) data = json_object ();
    size_t size = json_dumpb (data, NULL, 0, JSON_COMPACT), items;
    int depth;
    bmq_audit_data_shape (data, &items, &depth);
    if (size > BMQ_AUDIT_DATA_MAX || items > BMQ_AUDIT_DATA_ITEMS || depth > BMQ_AUDIT_DATA_DEPTH) {
        bmq_error ("audit record '%s' holds %zu bytes, %zu items, %d levels of data, more than %u, %d, %d: "
                   "recorded as oversized", kind ? kind : "?", size, items, depth, BMQ_AUDIT_DATA_MAX,
                   BMQ_AUDIT_DATA_ITEMS, BMQ_AUDIT_DATA_DEPTH);
        json_decref (data);
        data = json_pack ("{s:s, s:I, s:I, s:i}", "error", "oversized", "bytes", (json_int_t) size,
                          "items", (json_int_t) items, "depth", depth);
    }
    int64_t seq = self->next_seq;
    json_t *body = json_pack ("{s:s?, s:o, s:I, s:s}", "kind", kind, "data", data, "seq", (json_int_t) seq,
                              "origin", self->origin);
    bmq_envelope_t *env = bmq_envelope_new (BMQ_MSG_AUDIT_RECORD, cid, body);
    unsigned char *frame = NULL;
    size_t len = 0;
    char err[256];
    if (!env || bmq_envelope_encode (env, &frame, &len, err, sizeof err)) {
        bmq_error ("cannot encode audit record '%s': %s", kind ? kind : "?", env ? err : "out of memory");
        bmq_envelope_destroy (&env);
        return;
    }
    bmq_envelope_destroy (&env);
    if (!self->reporting && (self->count >= BMQ_AUDIT_QUEUE_MAX || self->bytes + len > self->max_bytes)) {
        /* never grow without bound; say so loudly (and in the trail, once
         * there is room: s_report_drops): audit has been away for long */
        if (!self->unreported++) self->first_drop_ms = bmq_now_ms ();
        if (self->dropped++ % 1000 == 0)
            bmq_error ("audit queue full (%zu records, %zu bytes): audit service unreachable, dropping records "
                       "(%zu so far)", self->count, self->bytes, self->dropped);
        free (frame);
        return;
    }
    self->next_seq++;
    s_pending_t *p = s_queue (self, self->origin, seq, frame, len);
    free (frame);
    if (!p) { bmq_error ("out of memory: audit record '%s' lost", kind ? kind : "?"); return; }
    s_spool_append (self, p);
    s_pump (self);
}

static void s_settled (bmq_audit_t *self, const char *origin, int64_t seq, const bmq_envelope_t *error)
{
    char key[BMQ_MAX_ID + 32];
    snprintf (key, sizeof key, "%s#%lld", origin, (long long) seq);
    s_pending_t *p = zhashx_lookup (self->index, key);
    if (!p) return;
    if (error)
        bmq_error ("audit refused record %s: %s — dropped, it can never be stored", key,
                   bmq_body_str (error, "message") ? bmq_body_str (error, "message") : "?");
    s_unqueue (self, p);
    self->acked = true;
    self->resend_after = RESEND_AFTER_MS;
    s_spool_empty (self);
}

void bmq_audit_handle (bmq_audit_t *self, const bmq_envelope_t *env)
{
    if (bmq_peer_heard (self->peer, env)) return;
    const char *origin = bmq_body_str (env, "origin");
    int64_t seq = bmq_body_int (env, "seq", -1);
    if (env->type == BMQ_MSG_AUDIT_ACK)
        s_settled (self, origin ? origin : self->origin, seq, NULL);
    else if (env->type == BMQ_MSG_ERROR && origin && seq > 0)
        s_settled (self, origin, seq, env);
    else if (env->type == BMQ_MSG_ERROR)
        bmq_warn ("audit: %s: %s", bmq_body_str (env, "code"), bmq_body_str (env, "message"));
    s_pump (self);
}

void bmq_audit_tick (bmq_audit_t *self)
{
    bmq_peer_tick (self->peer);
    int64_t now = bmq_mono_ms ();
    bool alive = bmq_peer_alive (self->peer);
    /* what queued up while it was away is delivered on reconnect: give it
     * time to be acknowledged before sending it all again */
    if (alive && !self->alive) self->revived_at = now;
    self->alive = alive;
    s_counts_flush (self, bmq_now_ms ());
    s_report_drops (self);
    /* the oldest record went unacknowledged too long: it (and maybe what
     * followed) was lost with an audit restart. Resend only to a live audit
     * service: to a dead one it would only pile up. */
    int64_t since = self->head && self->head->sent_at > self->revived_at ? self->head->sent_at : self->revived_at;
    if (self->head && self->head->sent_at && alive && now - since >= self->resend_after)
        s_rewind (self);
    s_pump (self);
    s_spool_maintain (self);
}

void bmq_audit_flush (bmq_audit_t *self, int timeout_ms)
{
    s_counts_flush (self, INT64_MAX);
    int64_t end = bmq_mono_ms () + timeout_ms;
    zsock_t *sock = bmq_audit_sock (self);
    zpoller_t *poller = zpoller_new (sock, NULL);
    while (self->count && bmq_mono_ms () < end) {
        if (zsock_events (sock) & ZMQ_POLLIN) {
            bmq_envelope_t *env = bmq_bus_recv (sock, NULL);
            if (env) bmq_audit_handle (self, env);
            bmq_envelope_destroy (&env);
            continue;
        }
        zpoller_wait (poller, 50);
        bmq_audit_tick (self);
    }
    zpoller_destroy (&poller);
}
