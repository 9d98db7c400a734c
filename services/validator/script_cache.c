/* script_cache — a small LRU of verdicts by sha256: open addressing over the
 * digest (already uniform) for the lookup, a doubly linked list for the
 * order of use. */
#include "script_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char key[BMQ_SCRIPT_CACHE_KEY_BYTES];
    json_t *verdict;            /* NULL: a free entry */
    size_t prev, next;          /* LRU list: head is the most recently used */
} s_entry_t;

#define S_NONE SIZE_MAX

struct bmq_script_cache_t {
    pthread_mutex_t mutex;
    size_t capacity, count, head, tail;
    s_entry_t *entries;         /* capacity of them */
    size_t *slots;              /* nslots (a power of two, >= 2 × capacity): entry index or S_NONE */
    size_t nslots;
};

bmq_script_cache_t *bmq_script_cache_new (size_t capacity)
{
    bmq_script_cache_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->capacity = capacity;
    self->head = self->tail = S_NONE;
    self->nslots = 4;
    while (self->nslots < 2 * capacity)
        self->nslots *= 2;
    self->entries = calloc (capacity ? capacity : 1, sizeof *self->entries);
    self->slots = malloc (self->nslots * sizeof *self->slots);
    if (!self->entries || !self->slots) {
        free (self->entries);
        free (self->slots);
        free (self);
        return NULL;
    }
    for (size_t i = 0; i < self->nslots; i++)
        self->slots[i] = S_NONE;
    pthread_mutex_init (&self->mutex, NULL);
    return self;
}

void bmq_script_cache_destroy (bmq_script_cache_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bmq_script_cache_t *self = *self_p;
    for (size_t i = 0; i < self->capacity; i++)
        json_decref (self->entries[i].verdict);
    free (self->entries);
    free (self->slots);
    pthread_mutex_destroy (&self->mutex);
    free (self);
    *self_p = NULL;
}

static size_t s_home (const bmq_script_cache_t *self, const unsigned char *key)
{
    uint64_t h;
    memcpy (&h, key, sizeof h);
    return (size_t) h & (self->nslots - 1);
}

/* The slot holding key, or the free slot where it would go. */
static size_t s_slot (const bmq_script_cache_t *self, const unsigned char *key)
{
    size_t i = s_home (self, key);
    while (self->slots[i] != S_NONE && memcmp (self->entries[self->slots[i]].key, key, BMQ_SCRIPT_CACHE_KEY_BYTES))
        i = (i + 1) & (self->nslots - 1);
    return i;
}

/* Remove slot i, re-placing the entries after it in its cluster (linear probing deletion). */
static void s_slot_remove (bmq_script_cache_t *self, size_t i)
{
    self->slots[i] = S_NONE;
    for (size_t j = (i + 1) & (self->nslots - 1); self->slots[j] != S_NONE; j = (j + 1) & (self->nslots - 1)) {
        size_t e = self->slots[j];
        self->slots[j] = S_NONE;
        self->slots[s_slot (self, self->entries[e].key)] = e;
    }
}

static void s_unlink (bmq_script_cache_t *self, size_t e)
{
    s_entry_t *x = &self->entries[e];
    if (x->prev != S_NONE) self->entries[x->prev].next = x->next; else self->head = x->next;
    if (x->next != S_NONE) self->entries[x->next].prev = x->prev; else self->tail = x->prev;
    x->prev = x->next = S_NONE;
}

static void s_push_front (bmq_script_cache_t *self, size_t e)
{
    s_entry_t *x = &self->entries[e];
    x->prev = S_NONE;
    x->next = self->head;
    if (self->head != S_NONE) self->entries[self->head].prev = e;
    self->head = e;
    if (self->tail == S_NONE) self->tail = e;
}

json_t *bmq_script_cache_get (bmq_script_cache_t *self, const unsigned char key[BMQ_SCRIPT_CACHE_KEY_BYTES])
{
    json_t *copy = NULL;
    if (!self || self->capacity == 0)
        return NULL;
    pthread_mutex_lock (&self->mutex);
    size_t i = s_slot (self, key);
    if (self->slots[i] != S_NONE) {
        size_t e = self->slots[i];
        s_unlink (self, e);
        s_push_front (self, e);
        copy = json_deep_copy (self->entries[e].verdict);
    }
    pthread_mutex_unlock (&self->mutex);
    return copy;
}

void bmq_script_cache_put (bmq_script_cache_t *self, const unsigned char key[BMQ_SCRIPT_CACHE_KEY_BYTES],
                           const json_t *verdict)
{
    if (!self || self->capacity == 0 || !verdict)
        return;
    json_t *copy = json_deep_copy (verdict);        /* outside the lock: verdicts can be a few KB */
    if (!copy)
        return;
    pthread_mutex_lock (&self->mutex);
    size_t i = s_slot (self, key), e;
    if (self->slots[i] != S_NONE) {                 /* another thread stored it first: same verdict */
        e = self->slots[i];
        s_unlink (self, e);
        s_push_front (self, e);
        pthread_mutex_unlock (&self->mutex);
        json_decref (copy);
        return;
    }
    if (self->count < self->capacity)
        e = self->count++;
    else {                                          /* evict the least recently used */
        e = self->tail;
        s_unlink (self, e);
        s_slot_remove (self, s_slot (self, self->entries[e].key));
        json_decref (self->entries[e].verdict);
        i = s_slot (self, key);                     /* the removal may have moved the free slot */
    }
    memcpy (self->entries[e].key, key, BMQ_SCRIPT_CACHE_KEY_BYTES);
    self->entries[e].verdict = copy;
    self->slots[i] = e;
    s_push_front (self, e);
    pthread_mutex_unlock (&self->mutex);
}

size_t bmq_script_cache_size (bmq_script_cache_t *self)
{
    if (!self)
        return 0;
    pthread_mutex_lock (&self->mutex);
    size_t n = self->count;
    pthread_mutex_unlock (&self->mutex);
    return n;
}
