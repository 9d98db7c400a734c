/* sandbox_files — the host-side file check of a sandbox run (internal to
 * sandbox_pool: not a public API).
 *
 * Every writable place inside the sandbox is one of the instance's host
 * folders (tmp, shm, home, out). They are listed from the host before the job
 * is sent and again after the kill; every new, changed or removed entry other
 * than the declared outputs (out/preview.png when a preview was asked for) is
 * a violation {"check": "files", "detail": "wrote <relative paths>"}. */
#ifndef BMQ_SANDBOX_FILES_H
#define BMQ_SANDBOX_FILES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

typedef struct {
    char path[512];             /* relative to the instance dir */
    off_t size;
    mode_t mode;
    ino_t ino;
    struct timespec mtime, ctime;
} sandbox_file_t;

/* What the writable folders held; `files` is malloc'd (the caller frees it). */
typedef struct { sandbox_file_t *files; size_t count, cap; bool incomplete; } sandbox_listing_t;

/* Everything in the writable folders of the instance folder `dir`, from the host. */
void sandbox_files_snapshot (const char *dir, sandbox_listing_t *l);
/* Compare with `before` and append the violations found to `violations`. */
void sandbox_files_check (const char *dir, const sandbox_listing_t *before, bool preview, json_t *violations);

#endif
