/* sse_ring — numbered recent events with blocking readers. */
#include "sse_ring.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PLAN_ID 64

typedef struct {
    uint64_t id;
    char     event[24];
    char     plan_id[MAX_PLAN_ID + 1];
    char    *data;
} s_event_t;

struct bmq_sse_ring_t {
    pthread_mutex_t lock;
    pthread_cond_t  grew;
    s_event_t      *slots;
    size_t          capacity, count, head;     /* head: slot of the oldest */
    uint64_t        first;                     /* id of the oldest held (when count > 0) */
    uint64_t        next;                      /* id the next push gets */
    bool            closed;
};

bmq_sse_ring_t *bmq_sse_ring_new (size_t capacity)
{
    bmq_sse_ring_t *self = calloc (1, sizeof *self);
    self->capacity = capacity ? capacity : 1;
    self->slots = calloc (self->capacity, sizeof *self->slots);
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    self->next = self->first = (uint64_t) now.tv_sec * 1000000u + (uint64_t) now.tv_nsec / 1000u;
    pthread_mutex_init (&self->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->grew, &attr);
    pthread_condattr_destroy (&attr);
    return self;
}

void bmq_sse_ring_destroy (bmq_sse_ring_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_sse_ring_t *self = *self_p;
    for (size_t i = 0; i < self->capacity; i++) free (self->slots[i].data);
    free (self->slots);
    pthread_cond_destroy (&self->grew);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

uint64_t bmq_sse_ring_push (bmq_sse_ring_t *self, const char *event, const char *plan_id, const char *data)
{
    pthread_mutex_lock (&self->lock);
    s_event_t *e;
    if (self->count == self->capacity) {           /* drop the oldest */
        e = &self->slots[self->head];
        self->head = (self->head + 1) % self->capacity;
        self->first++;
        self->count--;
    }
    e = &self->slots[(self->head + self->count) % self->capacity];
    free (e->data);
    e->id = self->next++;
    snprintf (e->event, sizeof e->event, "%s", event ? event : "message");
    snprintf (e->plan_id, sizeof e->plan_id, "%s", plan_id ? plan_id : "");
    e->data = strdup (data ? data : "{}");
    if (!self->count) self->first = e->id;
    self->count++;
    uint64_t id = e->id;
    pthread_cond_broadcast (&self->grew);
    pthread_mutex_unlock (&self->lock);
    return id;
}

static void s_append (char **buf, size_t *len, size_t *cap, const char *text)
{
    size_t n = strlen (text);
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = realloc (*buf, *cap);
    }
    memcpy (*buf + *len, text, n + 1);
    *len += n;
}

/* Under the lock: render what is readable; NULL when nothing matched. */
static char *s_render (bmq_sse_ring_t *self, uint64_t *after, const char *plan_id, size_t max_bytes, bool *gap)
{
    if (!self->count || *after >= self->next - 1) return NULL;
    if (*after + 1 < self->first) {
        *gap = true;
        *after = self->first - 1;
    }
    char *buf = NULL, head[160];
    size_t len = 0, cap = 0;
    for (uint64_t id = *after + 1; id < self->next; id++) {
        s_event_t *e = &self->slots[(self->head + (size_t) (id - self->first)) % self->capacity];
        *after = id;
        if (plan_id && strcmp (plan_id, e->plan_id)) continue;
        snprintf (head, sizeof head, "id: %llu\nevent: %s\ndata: ", (unsigned long long) e->id, e->event);
        s_append (&buf, &len, &cap, head);
        s_append (&buf, &len, &cap, e->data);
        s_append (&buf, &len, &cap, "\n\n");
        if (len >= max_bytes) break;
    }
    return buf;
}

char *bmq_sse_ring_read (bmq_sse_ring_t *self, uint64_t *after, const char *plan_id, size_t max_bytes,
                         int timeout_ms, bool *gap)
{
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
    pthread_mutex_lock (&self->lock);
    char *out = NULL;
    while (!self->closed && !(out = s_render (self, after, plan_id, max_bytes, gap)))
        if (pthread_cond_timedwait (&self->grew, &self->lock, &until)) break;
    pthread_mutex_unlock (&self->lock);
    return out;
}

uint64_t bmq_sse_ring_last (bmq_sse_ring_t *self)
{
    pthread_mutex_lock (&self->lock);
    uint64_t last = self->next - 1;
    pthread_mutex_unlock (&self->lock);
    return last;
}

void bmq_sse_ring_close (bmq_sse_ring_t *self)
{
    pthread_mutex_lock (&self->lock);
    self->closed = true;
    pthread_cond_broadcast (&self->grew);
    pthread_mutex_unlock (&self->lock);
}

bool bmq_sse_ring_closed (bmq_sse_ring_t *self)
{
    pthread_mutex_lock (&self->lock);
    bool closed = self->closed;
    pthread_mutex_unlock (&self->lock);
    return closed;
}
