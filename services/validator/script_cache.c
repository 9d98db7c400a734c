/* script_cache — a small LRU of verdicts by sha256, on czmq's containers: a
 * zhashx from the digest (hex) to its entry for the lookup, a zlistx of the
 * entries in order of use (the most recent first). One mutex guards both
 * (zhashx is not safe for concurrent readers: a lookup moves its cursor). */
#include "script_cache.h"

#include <czmq.h>
#include <pthread.h>

typedef struct {
    char    key[2 * BMQ_SCRIPT_CACHE_KEY_BYTES + 1];
    json_t *verdict;
    void   *handle;             /* its place in the use order */
} s_entry_t;

struct bmq_script_cache_t {
    pthread_mutex_t mutex;
    size_t    capacity;
    zhashx_t *by_key;           /* key → s_entry_t* (owns them) */
    zlistx_t *order;            /* s_entry_t*, most recently used first */
};

static void s_entry_free (void **item)
{
    s_entry_t *e = *item;
    if (!e) return;
    json_decref (e->verdict);
    free (e);
    *item = NULL;
}

static void s_hex (const unsigned char *key, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < BMQ_SCRIPT_CACHE_KEY_BYTES; i++) {
        out[2 * i] = digits[key[i] >> 4];
        out[2 * i + 1] = digits[key[i] & 15];
    }
    out[2 * BMQ_SCRIPT_CACHE_KEY_BYTES] = '\0';
}

bmq_script_cache_t *bmq_script_cache_new (size_t capacity)
{
    bmq_script_cache_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    self->capacity = capacity;
    self->by_key = zhashx_new ();
    self->order = zlistx_new ();
    if (!self->by_key || !self->order) {
        zhashx_destroy (&self->by_key);
        zlistx_destroy (&self->order);
        free (self);
        return NULL;
    }
    zhashx_set_destructor (self->by_key, s_entry_free);
    pthread_mutex_init (&self->mutex, NULL);
    return self;
}

void bmq_script_cache_destroy (bmq_script_cache_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_script_cache_t *self = *self_p;
    zlistx_destroy (&self->order);          /* holds no destructor: the hash owns the entries */
    zhashx_destroy (&self->by_key);
    pthread_mutex_destroy (&self->mutex);
    free (self);
    *self_p = NULL;
}

json_t *bmq_script_cache_get (bmq_script_cache_t *self, const unsigned char key[BMQ_SCRIPT_CACHE_KEY_BYTES])
{
    if (!self || self->capacity == 0) return NULL;
    char hex[sizeof ((s_entry_t *) 0)->key];
    s_hex (key, hex);
    json_t *copy = NULL;
    pthread_mutex_lock (&self->mutex);
    s_entry_t *e = zhashx_lookup (self->by_key, hex);
    if (e) {
        zlistx_move_start (self->order, e->handle);
        copy = json_deep_copy (e->verdict);
    }
    pthread_mutex_unlock (&self->mutex);
    return copy;
}

void bmq_script_cache_put (bmq_script_cache_t *self, const unsigned char key[BMQ_SCRIPT_CACHE_KEY_BYTES],
                           const json_t *verdict)
{
    if (!self || self->capacity == 0 || !verdict) return;
    s_entry_t *e = calloc (1, sizeof *e);
    if (!e) return;
    s_hex (key, e->key);
    e->verdict = json_deep_copy (verdict);          /* outside the lock: verdicts can be a few KB */
    if (!e->verdict) { free (e); return; }
    pthread_mutex_lock (&self->mutex);
    s_entry_t *had = zhashx_lookup (self->by_key, e->key);
    if (had) {                                      /* another thread stored it first: the same verdict */
        zlistx_move_start (self->order, had->handle);
        pthread_mutex_unlock (&self->mutex);
        void *item = e;
        s_entry_free (&item);
        return;
    }
    if (zhashx_size (self->by_key) >= self->capacity) {     /* evict the least recently used */
        s_entry_t *old = zlistx_last (self->order);
        zlistx_delete (self->order, old->handle);
        zhashx_delete (self->by_key, old->key);
    }
    e->handle = zlistx_add_start (self->order, e);
    zhashx_insert (self->by_key, e->key, e);
    pthread_mutex_unlock (&self->mutex);
}

size_t bmq_script_cache_size (bmq_script_cache_t *self)
{
    if (!self) return 0;
    pthread_mutex_lock (&self->mutex);
    size_t n = zhashx_size (self->by_key);
    pthread_mutex_unlock (&self->mutex);
    return n;
}
