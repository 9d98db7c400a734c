/* bus — envelopes over czmq sockets. */
#include "bus.h"
#include "auth.h"
#include "keys.h"
#include "log.h"

#include <dirent.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#define BMQ_ZAP_DOMAIN "blendmq"

/* The process's security settings; sockets are made from several threads. */
static struct {
    pthread_mutex_t lock;
    bool      init;
    bool      curve;
    int64_t   max_msg;
    char      keys_dir[1024];
    char      self[64];
    zhashx_t *certs;          /* name -> zcert_t (own keys with secret; servers public) */
    zactor_t *auth;           /* zauth: the ZAP handler */
    zactor_t *monitor;        /* logs refused handshakes */
    int       monitors;       /* inproc endpoints handed out */
} s_sec = { .lock = PTHREAD_MUTEX_INITIALIZER, .max_msg = BMQ_MAX_FRAME };

/* The keys trusted NOW: zauth checks a key once, at the handshake; a
 * connection lives on after `keys revoke`. So every message's key (the
 * User-Id libzmq carries per frame: the client's public key, z85) is looked up
 * here, in <keys_dir>/trusted as it is on disk, reloaded when the folder
 * changes (revoke removes a file; add creates one) and at least once a second. */
#define TRUST_RELOAD_MS 1000
typedef struct { char name[64]; char role[24]; } s_trusted_t;
static struct {
    pthread_mutex_t  lock;
    char             dir[1100];
    struct timespec  mtime;
    int64_t          loaded_ms;
    zhashx_t        *keys;        /* public key (z85) -> s_trusted_t */
} s_trust = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void s_trust_reload (void)
{
    zhashx_t *keys = zhashx_new ();
    zhashx_set_destructor (keys, (zhashx_destructor_fn *) zstr_free);
    DIR *d = opendir (s_trust.dir);
    for (struct dirent *e; d && (e = readdir (d)); ) {
        size_t n = strlen (e->d_name);
        if (n < 6 || strcmp (e->d_name + n - 5, ".cert")) continue;
        char path[1400];
        snprintf (path, sizeof path, "%s/%s", s_trust.dir, e->d_name);
        zcert_t *cert = zcert_load (path);
        if (!cert) continue;
        s_trusted_t *t = calloc (1, sizeof *t);
        const char *name = zcert_meta (cert, "name"), *role = zcert_meta (cert, "role");
        /* a cert without a valid name and role stays unnamed: its peer is refused */
        if (name && role && bmq_keys_name_valid (name) && strlen (role) < sizeof t->role) {
            snprintf (t->name, sizeof t->name, "%s", name);
            snprintf (t->role, sizeof t->role, "%s", role);
        }
        zhashx_update (keys, zcert_public_txt (cert), t);
        zcert_destroy (&cert);
    }
    if (d) closedir (d);
    zhashx_destroy (&s_trust.keys);
    s_trust.keys = keys;
}

/* Is the key `user_id` trusted now? 0 yes (name, role filled), 1 trusted but
 * its cert names no one, -1 not trusted (revoked, or never was). */
static int s_trusted_now (const char *user_id, char *name, size_t nlen, char *role, size_t rlen)
{
    pthread_mutex_lock (&s_trust.lock);
    struct stat st;
    int64_t now = zclock_mono ();
    bool changed = stat (s_trust.dir, &st) != 0 || st.st_mtim.tv_sec != s_trust.mtime.tv_sec
                || st.st_mtim.tv_nsec != s_trust.mtime.tv_nsec;
    if (!s_trust.keys || changed || now - s_trust.loaded_ms >= TRUST_RELOAD_MS) {
        s_trust_reload ();
        s_trust.mtime = stat (s_trust.dir, &st) == 0 ? st.st_mtim : (struct timespec) { 0 };
        s_trust.loaded_ms = now;
    }
    s_trusted_t *t = zhashx_lookup (s_trust.keys, user_id);
    int rc = !t ? -1 : t->name[0] ? 0 : 1;
    if (rc == 0) {
        snprintf (name, nlen, "%s", t->name);
        snprintf (role, rlen, "%s", t->role);
    }
    pthread_mutex_unlock (&s_trust.lock);
    return rc;
}

static void s_trust_reset (const char *keys_dir)
{
    pthread_mutex_lock (&s_trust.lock);
    zhashx_destroy (&s_trust.keys);
    snprintf (s_trust.dir, sizeof s_trust.dir, "%s/trusted", keys_dir ? keys_dir : "");
    s_trust.loaded_ms = 0;
    pthread_mutex_unlock (&s_trust.lock);
}

/* The identity of a frame that came over a connection. With CURVE, the key
 * (User-Id) must be trusted now and its cert must name a name and a role:
 * otherwise auth_name says why (BMQ_AUTH_UNTRUSTED…) and auth_role stays
 * empty, and every role check refuses the envelope. */
static void s_identity (bmq_envelope_t *env, zframe_t *f)
{
    const char *user_id = zframe_meta (f, "User-Id");
    if (user_id && *user_id && bmq_bus_curve ()) {
        char name[64], role[24];
        int trusted = s_trusted_now (user_id, name, sizeof name, role, sizeof role);
        if (trusted == 0 && strlen (name) < sizeof env->auth_name && strlen (role) < sizeof env->auth_role) {
            strcpy (env->auth_name, name);
            strcpy (env->auth_role, role);
        }
        else {
            const char *meta = zframe_meta (f, "name");
            snprintf (env->auth_name, sizeof env->auth_name, "%s%s:%.40s", BMQ_AUTH_UNTRUSTED,
                      trusted < 0 ? "revoked" : "unnamed", trusted < 0 && meta && bmq_keys_name_valid (meta) ? meta : user_id);
            env->auth_role[0] = 0;
        }
        return;
    }
    /* no key checked on this side (a client socket, CURVE off): what ZAP said, if anything */
    const char *name = zframe_meta (f, "name"), *role = zframe_meta (f, "role");
    if (name && role && strlen (name) < sizeof env->auth_name && strlen (role) < sizeof env->auth_role
        && bmq_keys_name_valid (name)) {
        strcpy (env->auth_name, name);
        strcpy (env->auth_role, role);
    }
}

static int s_send_bytes (zsock_t *sock, zframe_t *routing_id, unsigned char *buf, size_t len)
{
    zmsg_t *msg = zmsg_new ();
    if (zsock_type (sock) == ZMQ_ROUTER) {
        if (!routing_id) { zmsg_destroy (&msg); free (buf); return -1; }
        zmsg_append (msg, &(zframe_t *) { zframe_dup (routing_id) });
    }
    zmsg_addmem (msg, buf, len);
    free (buf);
    return zmsg_send (&msg, sock);
}

int bmq_bus_send (zsock_t *sock, zframe_t *routing_id, const bmq_envelope_t *env)
{
    unsigned char *buf;
    size_t len;
    char err[256];
    if (bmq_envelope_encode (env, &buf, &len, err, sizeof err)) {
        bmq_error ("cannot encode %s: %s", bmq_msg_type_name (env->type), err);
        /* whoever waits on this story is told, not left to time out: the same story, an error */
        if (env->type != BMQ_MSG_ERROR && env->type != BMQ_MSG_HEARTBEAT) {
            bmq_envelope_t *instead = bmq_envelope_error (env, "internal", "the %s could not be sent: %s",
                                                          bmq_msg_type_name (env->type), err);
            if (instead && bmq_envelope_encode (instead, &buf, &len, err, sizeof err) == 0)
                s_send_bytes (sock, routing_id, buf, len);
            bmq_envelope_destroy (&instead);
        }
        return -1;
    }
    return s_send_bytes (sock, routing_id, buf, len);
}

int bmq_bus_send_and_destroy (zsock_t *sock, zframe_t *routing_id, bmq_envelope_t **env_p)
{
    int rc = bmq_bus_send (sock, routing_id, *env_p);
    bmq_envelope_destroy (env_p);
    return rc;
}

bmq_envelope_t *bmq_bus_recv (zsock_t *sock, zframe_t **routing_id_out)
{
    zmsg_t *msg = zmsg_recv (sock);
    if (!msg) return NULL;
    zframe_t *rid = NULL;
    int type = zsock_type (sock);
    if (type == ZMQ_ROUTER) rid = zmsg_pop (msg);
    bmq_envelope_t *env = NULL;
    char err[512] = "";
    if (zmsg_size (msg) != 1)
        snprintf (err, sizeof err, "expected one frame, got %zu", zmsg_size (msg));
    else {
        zframe_t *f = zmsg_first (msg);
        env = bmq_envelope_decode (zframe_data (f), zframe_size (f), err, sizeof err);
        /* the identity is the key of this connection, as trusted now, never the body */
        if (env) s_identity (env, f);
    }
    zmsg_destroy (&msg);
    if (!env) {
        bmq_warn ("rejected a malformed message: %s", err);
        if (type == ZMQ_ROUTER || type == ZMQ_DEALER) {
            bmq_envelope_t *reply = bmq_envelope_error (NULL, "bad_message", "%s", err);
            bmq_bus_send_and_destroy (sock, rid, &reply);
        }
        zframe_destroy (&rid);
        return NULL;
    }
    if (routing_id_out) *routing_id_out = rid;
    else zframe_destroy (&rid);
    return env;
}

/* --- refused handshakes: one monitor actor for all bound sockets --- */

typedef struct { zsock_t *pair; char endpoint[256]; int64_t last_ms; int suppressed; } s_mon_t;

static void s_mon_event (s_mon_t *m)
{
    zmsg_t *msg = zmsg_recv (m->pair);
    if (!msg) return;
    zframe_t *ev = zmsg_first (msg);
    zframe_t *addr = zmsg_next (msg);
    if (ev && zframe_size (ev) == 6) {
        uint16_t event;
        uint32_t value;
        memcpy (&event, zframe_data (ev), 2);
        memcpy (&value, zframe_data (ev) + 2, 4);
        char where[256] = "";
        if (addr) snprintf (where, sizeof where, "%.*s", (int) zframe_size (addr), (char *) zframe_data (addr));
        const char *why = event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ? "its key is not trusted (unknown or revoked)"
                        : event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ? "a protocol error (a peer without CURVE, or the wrong server key?)"
                        : event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ? "the handshake failed (wrong keys or a non-CURVE peer)"
                        : NULL;
        if (event == ZMQ_EVENT_MONITOR_STOPPED) m->endpoint[0] = 0;
        else if (why) {
            int64_t now = zclock_mono ();
            /* a refused peer reconnects every 100 ms: one line a second at most */
            if (now - m->last_ms >= 1000) {
                char detail[64];
                if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) snprintf (detail, sizeof detail, "ZAP status %u", (unsigned) value);
                else snprintf (detail, sizeof detail, "%s", event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                               ? zmq_strerror ((int) value) : "ZMTP error");
                if (m->suppressed)
                    bmq_warn ("refused a connection on %s: %s (%s; %d more refusals not logged)",
                              where, why, detail, m->suppressed);
                else
                    bmq_warn ("refused a connection on %s: %s (%s)", where, why, detail);
                m->last_ms = now;
                m->suppressed = 0;
            }
            else m->suppressed++;
        }
    }
    zmsg_destroy (&msg);
}

static void s_monitor_actor (zsock_t *pipe, void *args)
{
    (void) args;
    zsock_signal (pipe, 0);
    zlistx_t *mons = zlistx_new ();
    zpoller_t *poller = zpoller_new (pipe, NULL);
    bool done = false;
    while (!done) {
        void *which = zpoller_wait (poller, -1);
        if (which == pipe) {
            zmsg_t *cmd = zmsg_recv (pipe);
            char *verb = cmd ? zmsg_popstr (cmd) : NULL;
            if (!verb || !strcmp (verb, "$TERM")) done = true;
            else if (!strcmp (verb, "WATCH")) {
                char *ep = zmsg_popstr (cmd), *label = zmsg_popstr (cmd);
                s_mon_t *m = calloc (1, sizeof *m);
                m->pair = zsock_new (ZMQ_PAIR);
                if (ep && label && m->pair && zsock_connect (m->pair, "%s", ep) == 0) {
                    snprintf (m->endpoint, sizeof m->endpoint, "%s", label);
                    zpoller_add (poller, m->pair);
                    zlistx_add_end (mons, m);
                }
                else { zsock_destroy (&m->pair); free (m); }
                zsock_signal (pipe, 0);
                free (ep);
                free (label);
            }
            free (verb);
            zmsg_destroy (&cmd);
        }
        else if (which) {
            for (s_mon_t *m = zlistx_first (mons); m; m = zlistx_next (mons))
                if ((void *) m->pair == which) {
                    s_mon_event (m);
                    if (!m->endpoint[0]) {           /* the socket was closed */
                        zpoller_remove (poller, m->pair);
                        zsock_destroy (&m->pair);
                        zlistx_delete (mons, zlistx_cursor (mons));
                        free (m);
                    }
                    break;
                }
        }
        else if (zpoller_terminated (poller)) done = true;
    }
    for (s_mon_t *m = zlistx_first (mons); m; m = zlistx_next (mons)) { zsock_destroy (&m->pair); free (m); }
    zlistx_destroy (&mons);
    zpoller_destroy (&poller);
}

/* Watch a bound socket's handshakes (call with s_sec.lock held). */
static void s_watch (zsock_t *sock, const char *endpoint)
{
    if (!s_sec.monitor) return;
    char ep[64];
    snprintf (ep, sizeof ep, "inproc://bmq-monitor-%d-%d", (int) getpid (), ++s_sec.monitors);
    int events = ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
               | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_MONITOR_STOPPED;
    if (zmq_socket_monitor (zsock_resolve (sock), ep, events) == 0) {
        zstr_sendx (s_sec.monitor, "WATCH", ep, endpoint, NULL);
        zsock_wait (s_sec.monitor);
    }
}

/* A cert of the keys dir, cached (call with s_sec.lock held). */
static zcert_t *s_cert (const char *name, bool secret)
{
    char key[80];
    snprintf (key, sizeof key, "%s%s", secret ? "+" : "", name);
    zcert_t *cert = zhashx_lookup (s_sec.certs, key);
    if (cert) return cert;
    char err[512];
    cert = secret ? bmq_keys_load (s_sec.keys_dir, name, err, sizeof err)
                  : bmq_keys_load_public (s_sec.keys_dir, name, err, sizeof err);
    if (!cert) { bmq_error ("%s", err); return NULL; }
    zhashx_insert (s_sec.certs, key, cert);
    return cert;
}

static void s_cert_free (void **item) { zcert_destroy ((zcert_t **) item); }

void bmq_bus_security_shutdown (void)
{
    pthread_mutex_lock (&s_sec.lock);
    zactor_destroy (&s_sec.auth);
    zactor_destroy (&s_sec.monitor);
    zhashx_destroy (&s_sec.certs);
    s_sec.init = false;
    s_sec.curve = false;
    s_sec.keys_dir[0] = 0;
    pthread_mutex_unlock (&s_sec.lock);
}

int bmq_bus_security_init (const bmq_config_t *cfg, const char *self_key, char *err, size_t errlen)
{
    static bool at_exit;
    bmq_bus_security_shutdown ();
    zsys_init ();
    if (!at_exit) { atexit (bmq_bus_security_shutdown); at_exit = true; }   /* runs before czmq's own */
    pthread_mutex_lock (&s_sec.lock);
    int rc = -1;
    int64_t max = bmq_config_int (cfg, "security.max_message_bytes");
    s_sec.max_msg = max > 0 ? max : BMQ_MAX_FRAME;
    s_sec.curve = bmq_config_bool (cfg, "security.curve");
    snprintf (s_sec.keys_dir, sizeof s_sec.keys_dir, "%s", bmq_config_str (cfg, "security.keys_dir"));
    snprintf (s_sec.self, sizeof s_sec.self, "%s", self_key ? self_key : "");
    s_sec.certs = zhashx_new ();
    zhashx_set_destructor (s_sec.certs, s_cert_free);
    s_trust_reset (s_sec.keys_dir);
    s_sec.init = true;
    if (!s_sec.curve) {
        bmq_warn ("security.curve is false: the bus is NOT authenticated nor encrypted (benchmarks only)");
        rc = 0;
        goto done;
    }
    if (!zsys_has_curve ()) { snprintf (err, errlen, "libzmq was built without CURVE"); goto done; }
    if (!*s_sec.keys_dir) {
        snprintf (err, errlen, "security.keys_dir is not set (blendmq keys init --keys-dir DIR, then set it)");
        goto done;
    }
    if (bmq_keys_check_dir (s_sec.keys_dir, err, errlen)) goto done;
    if (!s_cert (s_sec.self, true)) {
        snprintf (err, errlen, "no key '%s' in %s (blendmq keys init --keys-dir %s)", s_sec.self, s_sec.keys_dir, s_sec.keys_dir);
        goto done;
    }
    char trusted[1100];
    snprintf (trusted, sizeof trusted, "%s/trusted", s_sec.keys_dir);
    s_sec.auth = zactor_new (zauth, NULL);
    if (!s_sec.auth) { snprintf (err, errlen, "cannot start the zauth actor"); goto done; }
    zstr_sendx (s_sec.auth, "CURVE", trusted, NULL);
    zsock_wait (s_sec.auth);
    s_sec.monitor = zactor_new (s_monitor_actor, NULL);
    rc = 0;
done:
    pthread_mutex_unlock (&s_sec.lock);
    if (rc) bmq_bus_security_shutdown ();
    return rc;
}

bool bmq_bus_curve (void) { return s_sec.init && s_sec.curve; }

/* Options for every socket; CURVE as server (server NULL) or as client of `server`. */
static int s_secure (zsock_t *sock, const char *self_key, const char *server, const char *endpoint)
{
    int rc = 0;
    pthread_mutex_lock (&s_sec.lock);
    zsock_set_maxmsgsize (sock, (int) (s_sec.max_msg > INT32_MAX ? INT32_MAX : s_sec.max_msg));
    if (s_sec.init && s_sec.curve) {
        zcert_t *own = s_cert (self_key && *self_key ? self_key : s_sec.self, true);
        zcert_t *peer = server ? s_cert (server, false) : NULL;
        if (!own || (server && !peer)) rc = -1;
        else {
            zcert_apply (own, sock);
            if (server) zsock_set_curve_serverkey (sock, zcert_public_txt (peer));
            else {
                zsock_set_zap_domain (sock, BMQ_ZAP_DOMAIN);
                zsock_set_curve_server (sock, 1);
                s_watch (sock, endpoint);
            }
        }
    }
    pthread_mutex_unlock (&s_sec.lock);
    return rc;
}

static zsock_t *s_socket (int type, const char *endpoint, bool bind, const char *self_key, const char *server)
{
    if (!endpoint || !*endpoint) {
        bmq_error ("empty endpoint for a %s socket", zsys_sockname (type));
        return NULL;
    }
    zsock_t *sock = zsock_new (type);
    if (!sock) return NULL;
    zsock_set_linger (sock, 500);
    zsock_set_sndhwm (sock, 10000);
    zsock_set_rcvhwm (sock, 10000);
    if (type == ZMQ_ROUTER) zsock_set_router_mandatory (sock, 0);
    if (type == ZMQ_SUB) zsock_set_subscribe (sock, "");
    if (!bind && (!server || !*server) && bmq_bus_curve ()) {
        bmq_error ("connecting a %s socket to %s: no server key named (a bug)", zsys_sockname (type), endpoint);
        zsock_destroy (&sock);
        return NULL;
    }
    if (s_secure (sock, self_key, bind ? NULL : server, endpoint)) {
        bmq_error ("cannot set up CURVE for a %s socket on %s", zsys_sockname (type), endpoint);
        zsock_destroy (&sock);
        return NULL;
    }
    int rc = bind ? zsock_bind (sock, "%s", endpoint) : zsock_connect (sock, "%s", endpoint);
    if (rc == -1) {
        bmq_error ("cannot %s %s socket to %s: %s", bind ? "bind" : "connect",
                   zsys_sockname (type), endpoint, zmq_strerror (zmq_errno ()));
        zsock_destroy (&sock);
    }
    return sock;
}

zsock_t *bmq_bus_bind (int type, const char *endpoint) { return s_socket (type, endpoint, true, NULL, NULL); }
zsock_t *bmq_bus_connect (int type, const char *endpoint, const char *server)
{
    return s_socket (type, endpoint, false, NULL, server);
}
zsock_t *bmq_bus_bind_as (int type, const char *endpoint, const char *self_key)
{
    return s_socket (type, endpoint, true, self_key, NULL);
}
zsock_t *bmq_bus_connect_as (int type, const char *endpoint, const char *server, const char *self_key)
{
    return s_socket (type, endpoint, false, self_key, server);
}

zsock_t *bmq_bus_client_socket (int type, const char *server)
{
    zsock_t *sock = zsock_new (type);
    if (!sock) return NULL;
    zsock_set_linger (sock, 500);
    zsock_set_sndhwm (sock, 10000);
    zsock_set_rcvhwm (sock, 10000);
    if (type == ZMQ_SUB) zsock_set_subscribe (sock, "");
    if (s_secure (sock, NULL, server, "")) {
        bmq_error ("cannot set up CURVE for a %s socket to %s", zsys_sockname (type), server);
        zsock_destroy (&sock);
    }
    return sock;
}
