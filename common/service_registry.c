/* service_registry — the table of service_registry.def; see service_registry.h. */
#include "service_registry.h"

#include <stdio.h>
#include <string.h>

static const bmq_service_t s_services[] = {
#define WAITS(X) true
#define NOWAIT   false
#define BINDS(ENDPOINTS, PORT) ENDPOINTS, PORT
#define BMQ_SERVICE(NAME, ORDER, INSTANCES, ENDPOINTS, WAIT, HEALTH, DOC) \
    { NAME, ORDER, BMQ_SVC_##INSTANCES, ENDPOINTS, WAIT, HEALTH, DOC },
#include "service_registry.def"
#undef BMQ_SERVICE
#undef WAITS
#undef NOWAIT
#undef BINDS
};
#define N_SERVICES (sizeof s_services / sizeof s_services[0])

const bmq_service_t *bmq_services (size_t *count)
{
    *count = N_SERVICES;
    return s_services;
}

const bmq_service_t *bmq_service_find (const char *name)
{
    for (size_t i = 0; name && i < N_SERVICES; i++)
        if (!strcmp (s_services[i].name, name)) return &s_services[i];
    return NULL;
}

/* Each word of `list` in turn ("*" spelled out). false from fn stops. */
static void s_each (const char *list, bool (*fn) (const char *word, size_t len, void *arg), void *arg)
{
    for (const char *p = list; p && *p; ) {
        while (*p == ' ') p++;
        size_t len = strcspn (p, " ");
        if (len == 1 && *p == '*') {
            for (size_t i = 0; i < N_SERVICES; i++)
                if (s_services[i].instances != BMQ_SVC_KEY_ONLY && !fn (s_services[i].name, strlen (s_services[i].name), arg)) return;
        }
        else if (len && !fn (p, len, arg)) return;
        p += len;
    }
}

typedef struct { const char *name; bool found; } s_find_t;

static bool s_is (const char *word, size_t len, void *arg)
{
    s_find_t *f = arg;
    if (len == strlen (f->name) && !strncmp (word, f->name, len)) f->found = true;
    return !f->found;
}

bool bmq_service_listed (const char *list, const char *name)
{
    s_find_t f = { name, false };
    if (name && *name) s_each (list, s_is, &f);
    return f.found;
}

typedef struct { char *buf; size_t len, used; } s_text_t;

static bool s_append (const char *word, size_t len, void *arg)
{
    s_text_t *t = arg;
    if (t->used < t->len)
        t->used += (size_t) snprintf (t->buf + t->used, t->len - t->used, "%s%.*s", t->used ? " " : "", (int) len, word);
    return true;
}

void bmq_service_list_text (const char *list, char *buf, size_t len)
{
    if (!len) return;
    buf[0] = 0;
    s_text_t t = { buf, len, 0 };
    s_each (list, s_append, &t);
}

bool bmq_service_endpoint (const bmq_service_t *svc, size_t i, char *key, size_t key_len, char *sock, size_t sock_len,
                           char *def, size_t def_len)
{
    const char *p = svc->endpoints;
    for (size_t k = 0; *p; k++) {
        p += strspn (p, " ");
        size_t len = strcspn (p, " ");
        const char *eq = memchr (p, '=', len);
        if (!len) break;
        if (k == i) {
            if (!eq) return false;
            snprintf (key, key_len, "%.*s", (int) (eq - p), p);
            snprintf (sock, sock_len, "%.*s", (int) (p + len - eq - 1), eq + 1);
            if (svc->port > 0) snprintf (def, def_len, "tcp://127.0.0.1:%d", svc->port + (int) i);
            else snprintf (def, def_len, "%s", "");
            return true;
        }
        p += len;
    }
    return false;
}
