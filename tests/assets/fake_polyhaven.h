/* fake_polyhaven — a local stand-in for Poly Haven's API and download host
 * (libmicrohttpd, 127.0.0.1 on a port the OS picks, a thread per
 * connection). Tests give each path (with "?t=…" for /assets) one or more
 * responses: they are served in order and the last one repeats. A response
 * is a status, a content type, bytes and a mode: whole, endless (chunked,
 * never ends) or drip (one byte a second). Unknown paths answer 404. Every
 * request is counted per path, and the last User-Agent kept. */
#ifndef BMQ_FAKE_POLYHAVEN_H
#define BMQ_FAKE_POLYHAVEN_H

#include <stddef.h>

typedef enum { FAKE_WHOLE = 0, FAKE_ENDLESS, FAKE_DRIP } fake_mode_t;

typedef struct {
    int         status;             /* default 200 */
    const char *content_type;       /* default application/json */
    const void *body;
    size_t      len;                /* 0 with a body: strlen */
    fake_mode_t mode;
    const char *header_name;        /* one extra header (Retry-After, Location) */
    const char *header_value;
} fake_resp_t;

typedef struct fake_ph_t fake_ph_t;

fake_ph_t  *fake_ph_new (void);
void        fake_ph_destroy (fake_ph_t **self_p);
const char *fake_ph_url (const fake_ph_t *self);        /* http://127.0.0.1:PORT */
const char *fake_ph_hostport (const fake_ph_t *self);   /* 127.0.0.1:PORT */
void        fake_ph_route (fake_ph_t *self, const char *path, const fake_resp_t *resp);
void        fake_ph_json (fake_ph_t *self, const char *path, const char *json);
void        fake_ph_file (fake_ph_t *self, const char *path, const void *bytes, size_t len);
/* Forget every route and count. */
void        fake_ph_reset (fake_ph_t *self);
size_t      fake_ph_hits (fake_ph_t *self, const char *path);
size_t      fake_ph_hits_prefix (fake_ph_t *self, const char *prefix);
size_t      fake_ph_total (fake_ph_t *self);
/* The last request's User-Agent (a copy in a static buffer). */
const char *fake_ph_user_agent (fake_ph_t *self);

#endif
