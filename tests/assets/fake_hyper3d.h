/* fake_hyper3d — a local stand-in for Hyper3D Rodin's API and its download
 * host (libmicrohttpd, 127.0.0.1 on a port the OS picks, a thread per
 * connection), in the documented shapes: POST /api/v2/rodin (multipart),
 * /api/v2/status and /api/v2/download (JSON), GET /dl/NAME for files.
 * Tests give each path one or more responses (fake_resp_t from
 * fake_polyhaven.h: status, content type, bytes, whole/endless/drip), served
 * in order, the last one repeating; unknown paths answer 404. Per path the
 * fake counts requests and keeps the last request's Authorization header
 * (or "(none)") and the last request body (the first 64 KiB), so tests can
 * tell what each host was sent. A path holds up to 16 responses (more are
 * dropped: the last one kept repeats). */
#ifndef BMQ_FAKE_HYPER3D_H
#define BMQ_FAKE_HYPER3D_H

#include "fake_polyhaven.h"

#include <stddef.h>

typedef struct fake_h3_t fake_h3_t;

fake_h3_t  *fake_h3_new (void);
void        fake_h3_destroy (fake_h3_t **self_p);
const char *fake_h3_url (const fake_h3_t *self);        /* http://127.0.0.1:PORT */
const char *fake_h3_hostport (const fake_h3_t *self);   /* 127.0.0.1:PORT */
void        fake_h3_route (fake_h3_t *self, const char *path, const fake_resp_t *resp);
void        fake_h3_json (fake_h3_t *self, const char *path, const char *json);
void        fake_h3_reset (fake_h3_t *self);
size_t      fake_h3_hits (fake_h3_t *self, const char *path);
size_t      fake_h3_total (fake_h3_t *self);
/* Copies (static buffers) of what the last request to path carried: its
 * Authorization header ("(none)" without one; "" when path was never asked),
 * and its body. */
const char *fake_h3_auth (fake_h3_t *self, const char *path);
const char *fake_h3_body (fake_h3_t *self, const char *path);
/* The same body as bytes (binary multipart parts included): *len of them. */
const char *fake_h3_body_bytes (fake_h3_t *self, const char *path, size_t *len);

#endif
