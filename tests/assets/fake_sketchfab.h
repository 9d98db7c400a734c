/* fake_sketchfab — a local stand-in for Sketchfab's Data API v3 and its
 * download host (libmicrohttpd, 127.0.0.1 on a port the OS picks, a thread
 * per connection), answering the documented shapes the tests script:
 *   GET /v3/search?type=models&q=…&downloadable=true&count=N[&cursor=C]
 *       → {results: [{uid, name, user: {username}, license: {label},
 *          faceCount, viewerUrl}], next, previous}
 *   GET /v3/models/UID/download (Authorization: Token …)
 *       → {gltf: {url, size, expires}, usdz: {…}, glb?: {url, size, expires}}
 *   GET /dl/… → the archive or glb bytes.
 * Tests give each route one or more responses, served in order (the last
 * repeats). A route is the URL path, plus "?cursor=C" when the request has a
 * cursor argument. Unknown routes answer 404. It also builds the archives
 * it serves (fake_sf_zip), and headers that lie (fake_sf_zip_patch). Every request is logged: its
 * route, its query arguments (q, count, type, downloadable) and its
 * Authorization header, so tests assert where the token went. */
#ifndef BMQ_FAKE_SKETCHFAB_H
#define BMQ_FAKE_SKETCHFAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int         status;             /* default 200 */
    const char *content_type;       /* default application/json */
    const void *body;
    size_t      len;                /* 0 with a body: strlen */
    const char *header_name;        /* one extra header (Retry-After, Location) */
    const char *header_value;
} fake_sf_resp_t;

typedef struct {
    char route[512];
    char q[256], count[16], type[32], downloadable[16];
    char auth[320];                 /* the Authorization header, "" when none */
    bool has_auth;
} fake_sf_req_t;

typedef struct fake_sf_t fake_sf_t;

fake_sf_t  *fake_sf_new (void);
void        fake_sf_destroy (fake_sf_t **self_p);
const char *fake_sf_url (const fake_sf_t *self);        /* http://127.0.0.1:PORT */
const char *fake_sf_hostport (const fake_sf_t *self);   /* 127.0.0.1:PORT */
void        fake_sf_route (fake_sf_t *self, const char *route, const fake_sf_resp_t *resp);
void        fake_sf_json (fake_sf_t *self, const char *route, const char *json);
void        fake_sf_file (fake_sf_t *self, const char *route, const void *bytes, size_t len);
/* Forget every route and the log. */
void        fake_sf_reset (fake_sf_t *self);
size_t      fake_sf_total (fake_sf_t *self);
size_t      fake_sf_hits (fake_sf_t *self, const char *route);
/* The i-th request logged (0 first); false past the end. */
bool        fake_sf_request (fake_sf_t *self, size_t i, fake_sf_req_t *out);

/* Archives to serve, built with libzip in memory: entries are files,
 * directories or symlinks (Unix external attributes S_IFLNK). */
typedef enum { FAKE_ZFILE = 0, FAKE_ZDIR, FAKE_ZLINK } fake_sf_zkind_t;
typedef struct { const char *name; const void *data; size_t len; fake_sf_zkind_t kind; } fake_sf_zent_t;
/* malloc'd, *len bytes; NULL when libzip refused (printed). */
unsigned char *fake_sf_zip (const fake_sf_zent_t *e, size_t n, size_t *len);
/* A header that lies: rewrite entry name's uncompressed size (to value), CRC
 * (xor value) or encryption flag in both its local and central headers.
 * Returns how many headers were patched (2 when the entry was found). */
typedef enum { FAKE_ZUSIZE, FAKE_ZCRC, FAKE_ZENCRYPTED } fake_sf_zpatch_t;
int fake_sf_zip_patch (unsigned char *zip, size_t len, const char *name, fake_sf_zpatch_t what, uint32_t value);

#endif
