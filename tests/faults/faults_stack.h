/* faults_stack — what the fault suite reads from a running stack: its
 * status and health, the supervisor's counters, the live scene's object
 * names, the audit database; and the audit's disk, filled and freed. */
#ifndef BMQ_FAULTS_STACK_H
#define BMQ_FAULTS_STACK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* `blendmq --json status` (its JSON line), or NULL when nothing answered. */
json_t *fs_status (const char *blendmq, const char *run_dir);
/* Healthy: the gateway answers, every service alive, Blender connected,
 * `validators` validator workers, and no supervised process down. When not,
 * why says what is missing. */
bool    fs_healthy (const json_t *status, int validators, char *why, size_t len);
/* The supervisor's entry for `name` in status (a "supervisor" object keyed
 * by name, or an array of objects with "name"); NULL when there is none. */
json_t *fs_supervised (const json_t *status, const char *name);
/* Its restart count, -1 when status does not say. */
int     fs_restarts (const json_t *status, const char *name);

/* Every object name in the live scene (a JSON object used as a set), paging
 * scene_info through the gateway (the bus security must be initialised);
 * NULL when no complete answer came within timeout_ms. */
json_t *fs_scene_names (const char *gateway_endpoint, int timeout_ms);

/* The audit database: the highest record id (-1 when unreadable), and the
 * records after `after_id` but steps, as [{id, cid, kind, plan_id, data}]
 * with data as text. */
int64_t fs_audit_max_id (const char *db);
json_t *fs_audit_since (const char *db, int64_t after_id);

/* A full disk for the audit. With a filesystem of its own (`dir` a small
 * tmpfs): checkpoint the WAL to empty (so the next commit needs new space),
 * then fill `dir` with a file until ENOSPC. Without one (cap_mb > 0, the
 * audit started with audit.max_size_mb = cap_mb): fill the database up to
 * its cap with a table of blobs. 0, or -1 with err. fs_disk_free undoes it. */
int     fs_disk_fill (const char *dir, const char *db, int cap_mb, char *err, size_t len);
int     fs_disk_free (const char *dir, const char *db, int cap_mb, char *err, size_t len);

#endif
