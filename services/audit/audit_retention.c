/* audit_retention — scheduled, batched pruning. */
#include "audit_retention.h"
#include "log.h"

#include <stdlib.h>

struct bmq_audit_retention_t {
    int64_t retention_ms;
    int64_t interval_ms;
    int     batch;
    bool    busy;           /* a pass is under way */
    int64_t cutoff_ms;      /* of the pass under way: fixed at its start */
    int64_t next_ms;        /* when the next pass is due */
    int64_t pass_deleted;
    int64_t pruned;
};

bmq_audit_retention_t *bmq_audit_retention_new (int64_t retention_ms, int64_t interval_ms, int batch)
{
    bmq_audit_retention_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    self->retention_ms = retention_ms > 0 ? retention_ms : 0;
    self->interval_ms = interval_ms > 0 ? interval_ms : 3600 * 1000;
    self->batch = batch > 0 ? batch : 500;
    return self;
}

void bmq_audit_retention_destroy (bmq_audit_retention_t **self_p)
{
    if (!self_p || !*self_p) return;
    free (*self_p);
    *self_p = NULL;
}

int bmq_audit_retention_step (bmq_audit_retention_t *self, bmq_audit_store_t *store, int64_t now_ms,
                              char *err, size_t errlen)
{
    if (!self->retention_ms) return 0;
    if (!self->busy) {
        if (now_ms < self->next_ms) return 0;
        /* a fixed cutoff per pass: records that age during a pass wait for the next */
        self->busy = true;
        self->cutoff_ms = now_ms - self->retention_ms;
        self->pass_deleted = 0;
    }
    int n = bmq_audit_store_prune (store, self->cutoff_ms, self->batch, err, errlen);
    if (n < 0 || n < self->batch) {
        self->busy = false;
        self->next_ms = now_ms + self->interval_ms;
    }
    if (n < 0) return -1;
    self->pass_deleted += n;
    self->pruned += n;
    if (!self->busy && self->pass_deleted)
        bmq_info ("retention: pruned %lld records stored before %lld (older than %lld days)",
                  (long long) self->pass_deleted, (long long) self->cutoff_ms,
                  (long long) (self->retention_ms / 86400000));
    return n;
}

bool bmq_audit_retention_busy (const bmq_audit_retention_t *self) { return self->busy; }
int64_t bmq_audit_retention_pruned (const bmq_audit_retention_t *self) { return self->pruned; }

int64_t bmq_audit_retention_wait_ms (const bmq_audit_retention_t *self, int64_t now_ms)
{
    if (!self->retention_ms) return INT64_MAX;
    if (self->busy || now_ms >= self->next_ms) return 0;
    return self->next_ms - now_ms;
}
