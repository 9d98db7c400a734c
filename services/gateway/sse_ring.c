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
    char     plan_id2[MAX_PLAN_ID + 1];     /* a second plan it concerns ("" for none) */
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
    char            instance[BMQ_SSE_INSTANCE_LEN + 1];
};

static bool s_is_instance (const char *text, size_t len)
{
    if (len != BMQ_SSE_INSTANCE_LEN) return false;
    for (size_t i = 0; i < len; i++)
        if (!((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f'))) return false;
    return true;
}

bmq_sse_ring_t *bmq_sse_ring_new (size_t capacity, const char *instance)
{
    bmq_sse_ring_t *self = calloc (1, sizeof *self);
    self->capacity = capacity ? capacity : 1;
    self->slots = calloc (self->capacity, sizeof *self->slots);
    /* numbers restart with each process: the instance in the id tells processes apart */
    self->next = self->first = 1;
    if (instance && s_is_instance (instance, strlen (instance))) memcpy (self->instance, instance, BMQ_SSE_INSTANCE_LEN + 1);
    else memset (self->instance, '0', BMQ_SSE_INSTANCE_LEN);
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

const char *bmq_sse_ring_instance (const bmq_sse_ring_t *self) { return self->instance; }

void bmq_sse_ring_id (const bmq_sse_ring_t *self, uint64_t n, char *buf, size_t len)
{
    snprintf (buf, len, "%s-%llu", self->instance, (unsigned long long) n);
}

uint64_t bmq_sse_ring_push (bmq_sse_ring_t *self, const char *event, const char *plan_id, const char *data)
{
    return bmq_sse_ring_push2 (self, event, plan_id, NULL, data);
}

uint64_t bmq_sse_ring_push2 (bmq_sse_ring_t *self, const char *event, const char *plan_id, const char *plan_id2,
                             const char *data)
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
    snprintf (e->plan_id2, sizeof e->plan_id2, "%s", plan_id2 && (!plan_id || strcmp (plan_id, plan_id2)) ? plan_id2 : "");
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

static bool s_concerns (const s_event_t *e, const char *plan_id)
{
    return !plan_id || !strcmp (plan_id, e->plan_id) || (e->plan_id2[0] && !strcmp (plan_id, e->plan_id2));
}

/* Under the lock: render what is readable; NULL when nothing matched. */
static char *s_render (bmq_sse_ring_t *self, uint64_t *after, const char *plan_id, size_t max_bytes, uint64_t *dropped)
{
    if (!self->count || *after >= self->next - 1) return NULL;
    if (*after + 1 < self->first) {
        *dropped += self->first - (*after + 1);
        *after = self->first - 1;
    }
    char *buf = NULL, head[160];
    size_t len = 0, cap = 0;
    for (uint64_t id = *after + 1; id < self->next; id++) {
        s_event_t *e = &self->slots[(self->head + (size_t) (id - self->first)) % self->capacity];
        *after = id;
        if (!s_concerns (e, plan_id)) continue;
        snprintf (head, sizeof head, "id: %s-%llu\nevent: %s\ndata: ", self->instance, (unsigned long long) e->id, e->event);
        s_append (&buf, &len, &cap, head);
        s_append (&buf, &len, &cap, e->data);
        s_append (&buf, &len, &cap, "\n\n");
        if (len >= max_bytes) break;
    }
    return buf;
}

char *bmq_sse_ring_next (bmq_sse_ring_t *self, uint64_t *after, const char *plan_id, size_t max_bytes,
                         int timeout_ms, uint64_t *dropped)
{
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
    *dropped = 0;
    pthread_mutex_lock (&self->lock);
    char *out = NULL;
    while (!self->closed && !(out = s_render (self, after, plan_id, max_bytes, dropped)))
        if (*dropped || pthread_cond_timedwait (&self->grew, &self->lock, &until)) break;    /* a drop is news too */
    pthread_mutex_unlock (&self->lock);
    return out;
}


/* n: 1 to 20 decimal digits without a leading zero (or "0"), fitting 64 bits. */
static bool s_number (const char *text, size_t len, uint64_t *n)
{
    if (!len || len > 20 || (len > 1 && text[0] == '0')) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') return false;
        unsigned d = (unsigned) (text[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *n = v;
    return true;
}

bmq_sse_resume_t bmq_sse_ring_resume (bmq_sse_ring_t *self, const char *text, uint64_t *after)
{
    *after = 0;
    size_t len = text ? strnlen (text, BMQ_SSE_ID_MAX + 1) : 0;
    if (!len || len > BMQ_SSE_ID_MAX) return BMQ_SSE_RESUME_BAD;
    uint64_t n;
    if (s_number (text, len, &n)) {
        if (n) return BMQ_SSE_RESUME_OTHER;           /* an id of a gateway from before instance ids */
        pthread_mutex_lock (&self->lock);
        *after = self->first - 1;                      /* "0": saw nothing yet, so missed nothing */
        pthread_mutex_unlock (&self->lock);
        return BMQ_SSE_RESUME_SAME;
    }
    if (len < BMQ_SSE_INSTANCE_LEN + 2 || !s_is_instance (text, BMQ_SSE_INSTANCE_LEN) || text[BMQ_SSE_INSTANCE_LEN] != '-'
        || !s_number (text + BMQ_SSE_INSTANCE_LEN + 1, len - BMQ_SSE_INSTANCE_LEN - 1, &n))
        return BMQ_SSE_RESUME_BAD;
    if (memcmp (text, self->instance, BMQ_SSE_INSTANCE_LEN)) return BMQ_SSE_RESUME_OTHER;
    pthread_mutex_lock (&self->lock);
    bool sent = n < self->next;
    pthread_mutex_unlock (&self->lock);
    if (!sent) return BMQ_SSE_RESUME_BAD;
    *after = n;
    return BMQ_SSE_RESUME_SAME;
}

uint64_t bmq_sse_ring_first (bmq_sse_ring_t *self)
{
    pthread_mutex_lock (&self->lock);
    uint64_t first = self->count ? self->first : self->next;
    pthread_mutex_unlock (&self->lock);
    return first;
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
