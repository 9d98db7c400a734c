/* faults_stack — status, scene and audit readers; the audit's disk filled and freed. */
#include "faults_stack.h"
#include "bus.h"
#include "e2e_util.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILLER "disk-filler"

json_t *fs_status (const char *blendmq, const char *run_dir)
{
    char cmd[3000];
    int code;
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' --json status 2>/dev/null", blendmq, run_dir);
    char *out = e2e_run (cmd, &code);
    json_t *lines = e2e_json_lines (out);
    free (out);
    json_t *st = json_incref (json_array_get (lines, 0));
    json_decref (lines);
    return st;
}

/* The supervisor's list of processes: status.supervisor.children (or a
 * "processes" list or map, or the supervisor object itself keyed by name). */
static json_t *s_supervised_list (const json_t *status)
{
    json_t *sup = json_object_get (status, "supervisor");
    if (json_object_get (sup, "children")) return json_object_get (sup, "children");
    if (json_object_get (sup, "processes")) return json_object_get (sup, "processes");
    return sup;
}

json_t *fs_supervised (const json_t *status, const char *name)
{
    json_t *sup = s_supervised_list (status);
    if (json_is_object (sup)) return json_object_get (sup, name);
    size_t i;
    json_t *p;
    json_array_foreach (sup, i, p) {
        const char *n = json_string_value (json_object_get (p, "name"));
        if (n && !strcmp (n, name)) return p;
    }
    return NULL;
}

int fs_restarts (const json_t *status, const char *name)
{
    json_t *r = json_object_get (fs_supervised (status, name), "restarts");
    return json_is_integer (r) ? (int) json_integer_value (r) : -1;
}

bool fs_healthy (const json_t *status, int validators, char *why, size_t len)
{
    if (!status) { snprintf (why, len, "the gateway does not answer"); return false; }
    size_t i;
    json_t *s;
    json_array_foreach (json_object_get (status, "services"), i, s) {
        const char *name = json_string_value (json_object_get (s, "name"));
        const char *state = json_string_value (json_object_get (s, "state"));
        if (!json_is_true (json_object_get (s, "alive"))) { snprintf (why, len, "%s down", name ? name : "?"); return false; }
        if (name && !strncmp (name, "executor", 8) && (!state || strcmp (state, "blender connected"))) {
            snprintf (why, len, "executor: %s", state ? state : "?");
            return false;
        }
        if (name && !strcmp (name, "validator") && json_integer_value (json_object_get (s, "workers")) < validators) {
            snprintf (why, len, "%lld of %d validator workers", (long long) json_integer_value (json_object_get (s, "workers")), validators);
            return false;
        }
    }
    /* the supervisor's view: it runs, and runs everything (nothing waits to be restarted) */
    json_t *sup = json_object_get (status, "supervisor");
    if (json_is_false (json_object_get (sup, "alive"))) { snprintf (why, len, "the supervisor is not running"); return false; }
    json_t *list = s_supervised_list (status);
    json_t *p;
    json_array_foreach (json_is_array (list) ? list : NULL, i, p) {
        const char *state = json_string_value (json_object_get (p, "state"));
        if (state && strcmp (state, "running")) {
            snprintf (why, len, "supervisor: %s %s", json_string_value (json_object_get (p, "name")) ?: "?", state);
            return false;
        }
    }
    return true;
}

/* One page of scene_info: the reply's result, or NULL. */
static json_t *s_scene_page (zsock_t *sock, int offset, int64_t deadline)
{
    bmq_envelope_t *req = bmq_envelope_new (BMQ_MSG_SCENE_REQUEST, NULL, json_pack ("{s:s, s:{s:i, s:i}}", "command", "scene_info",
                                                                                    "args", "limit", 1000, "offset", offset));
    char cid[BMQ_MAX_ID + 1];
    snprintf (cid, sizeof cid, "%s", req->cid);
    if (bmq_bus_send_and_destroy (sock, NULL, &req)) return NULL;
    while (bmq_mono_ms () < deadline) {
        zsock_set_rcvtimeo (sock, (int) (deadline - bmq_mono_ms ()) > 0 ? (int) (deadline - bmq_mono_ms ()) : 1);
        bmq_envelope_t *env = bmq_bus_recv (sock, NULL);
        if (!env) continue;
        json_t *result = NULL;
        bool mine = !strcmp (env->cid, cid);
        if (mine && env->type == BMQ_MSG_SCENE_REPLY) result = json_incref (json_object_get (env->body, "result"));
        bool failed = mine && env->type == BMQ_MSG_ERROR;
        if (failed) fprintf (stderr, "faults: scene_info: %s: %s\n", bmq_body_str (env, "code"), bmq_body_str (env, "message"));
        bmq_envelope_destroy (&env);
        if (result || failed) return result;
    }
    return NULL;
}

json_t *fs_scene_names (const char *gateway_endpoint, int timeout_ms)
{
    zsock_t *sock = bmq_bus_connect (ZMQ_DEALER, gateway_endpoint, "gateway");
    if (!sock) return NULL;
    int64_t deadline = bmq_mono_ms () + timeout_ms;
    json_t *names = json_object ();
    for (int offset = 0;;) {
        json_t *page = s_scene_page (sock, offset, deadline);
        if (!page) { json_decref (names); names = NULL; break; }
        json_t *objects = json_object_get (page, "objects");
        size_t i;
        json_t *o;
        json_array_foreach (objects, i, o)
            if (json_is_string (json_object_get (o, "name"))) json_object_set_new (names, json_string_value (json_object_get (o, "name")), json_true ());
        int count = (int) json_integer_value (json_object_get (page, "count"));
        offset += (int) json_array_size (objects);
        json_decref (page);
        if (!json_array_size (objects) || offset >= count) break;
    }
    zsock_destroy (&sock);
    return names;
}

static sqlite3 *s_open (const char *db, bool write)
{
    sqlite3 *h = NULL;
    if (sqlite3_open_v2 (db, &h, write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close (h);
        return NULL;
    }
    sqlite3_busy_timeout (h, 5000);
    return h;
}

int64_t fs_audit_max_id (const char *db)
{
    sqlite3 *h = s_open (db, false);
    sqlite3_stmt *st;
    int64_t id = -1;
    if (h && sqlite3_prepare_v2 (h, "SELECT coalesce (max (id), 0) FROM records", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step (st) == SQLITE_ROW) id = sqlite3_column_int64 (st, 0);
        sqlite3_finalize (st);
    }
    sqlite3_close (h);
    return id;
}

json_t *fs_audit_since (const char *db, int64_t after_id)
{
    sqlite3 *h = s_open (db, false);
    sqlite3_stmt *st;
    json_t *rows = NULL;
    if (h && sqlite3_prepare_v2 (h, "SELECT id, cid, kind, coalesce (plan_id, ''), data FROM records"
                                    " WHERE id > ? AND kind NOT IN ('step', 'steps') ORDER BY id", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64 (st, 1, after_id);
        rows = json_array ();
        int rc;
        while ((rc = sqlite3_step (st)) == SQLITE_ROW)
            json_array_append_new (rows, json_pack ("{s:I, s:s, s:s, s:s, s:s}", "id", (json_int_t) sqlite3_column_int64 (st, 0),
                                                    "cid", (const char *) sqlite3_column_text (st, 1),
                                                    "kind", (const char *) sqlite3_column_text (st, 2),
                                                    "plan_id", (const char *) sqlite3_column_text (st, 3),
                                                    "data", (const char *) sqlite3_column_text (st, 4)));
        if (rc != SQLITE_DONE) { json_decref (rows); rows = NULL; }
        sqlite3_finalize (st);
    }
    sqlite3_close (h);
    return rows;
}

/* ---- a full disk ---------------------------------------------------------------- */

static int s_fill_fs (const char *dir, const char *db, char *err, size_t len)
{
    /* an empty WAL: the audit's next commit needs space the disk no longer has */
    sqlite3 *h = s_open (db, true);
    if (h) sqlite3_exec (h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    sqlite3_close (h);
    char path[1200];
    snprintf (path, sizeof path, "%s/" FILLER, dir);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { snprintf (err, len, "cannot create %s: %s", path, strerror (errno)); return -1; }
    static char block[1 << 20];
    memset (block, 0xa5, sizeof block);
    for (size_t chunk = sizeof block; chunk >= 512; chunk /= 2)
        while (write (fd, block, chunk) == (ssize_t) chunk) { }
    int full = errno == ENOSPC;
    close (fd);
    if (!full) { snprintf (err, len, "filling %s stopped short of ENOSPC: %s", dir, strerror (errno)); return -1; }
    return 0;
}

static int s_fill_cap (const char *db, int cap_mb, char *err, size_t len)
{
    sqlite3 *h = s_open (db, true);
    if (!h) { snprintf (err, len, "cannot open %s", db); return -1; }
    int rc = sqlite3_exec (h, "CREATE TABLE IF NOT EXISTS fault_filler (b BLOB)", NULL, NULL, NULL);
    sqlite3_stmt *st = NULL;
    int64_t pages = 0, page_size = 4096;
    for (int guard = 0; rc == SQLITE_OK && guard < 4 * cap_mb; guard++) {
        if (sqlite3_prepare_v2 (h, "SELECT page_count * page_size, page_size FROM pragma_page_count, pragma_page_size", -1, &st, NULL) == SQLITE_OK
            && sqlite3_step (st) == SQLITE_ROW) { pages = sqlite3_column_int64 (st, 0); page_size = sqlite3_column_int64 (st, 1); }
        sqlite3_finalize (st);
        if (pages + page_size >= (int64_t) cap_mb << 20) break;
        rc = sqlite3_exec (h, "INSERT INTO fault_filler VALUES (zeroblob (262144))", NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) snprintf (err, len, "filling %s: %s", db, sqlite3_errmsg (h));
    sqlite3_close (h);
    return rc == SQLITE_OK ? 0 : -1;
}

int fs_disk_fill (const char *dir, const char *db, int cap_mb, char *err, size_t len)
{
    return cap_mb > 0 ? s_fill_cap (db, cap_mb, err, len) : s_fill_fs (dir, db, err, len);
}

int fs_disk_free (const char *dir, const char *db, int cap_mb, char *err, size_t len)
{
    if (cap_mb > 0) {
        sqlite3 *h = s_open (db, true);
        int rc = h ? sqlite3_exec (h, "DROP TABLE IF EXISTS fault_filler", NULL, NULL, NULL) : SQLITE_CANTOPEN;
        if (rc != SQLITE_OK) snprintf (err, len, "freeing %s: %s", db, h ? sqlite3_errmsg (h) : "cannot open");
        sqlite3_close (h);
        return rc == SQLITE_OK ? 0 : -1;
    }
    char path[1200];
    snprintf (path, sizeof path, "%s/" FILLER, dir);
    if (unlink (path) && errno != ENOENT) { snprintf (err, len, "cannot remove %s: %s", path, strerror (errno)); return -1; }
    return 0;
}
