/* service — common start-up of a blendmq process. */
#include "service.h"
#include "bus.h"
#include "codec.h"
#include "log.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERR(...) do { if (err) snprintf (err, errlen, __VA_ARGS__); } while (0)

int bmq_run_dir_check (const char *dir, char *err, size_t errlen)
{
    if (!dir || !*dir) { ERR ("no run dir given"); return -1; }
    struct stat st;
    if (lstat (dir, &st) != 0) {
        if (errno != ENOENT) { ERR ("run dir %s: %s", dir, strerror (errno)); return -1; }
        char path[4096];
        snprintf (path, sizeof path, "%s", dir);
        for (char *p = path + 1; *p; p++)       /* parents as needed (0700 for the ones we make) */
            if (*p == '/') { *p = 0; if (mkdir (path, 0700) && errno != EEXIST) break; *p = '/'; }
        if (mkdir (dir, 0700) != 0 && errno != EEXIST) { ERR ("cannot create run dir %s: %s", dir, strerror (errno)); return -1; }
        if (lstat (dir, &st) != 0) { ERR ("run dir %s: %s", dir, strerror (errno)); return -1; }
    }
    if (S_ISLNK (st.st_mode)) {
        ERR ("run dir %s is a symlink: refused (use the real directory, owned by you, mode 0700)", dir);
        return -1;
    }
    if (!S_ISDIR (st.st_mode)) { ERR ("run dir %s is not a directory: refused", dir); return -1; }
    if (st.st_uid != geteuid ()) {
        ERR ("run dir %s is owned by uid %d, not by you (uid %d): refused", dir, (int) st.st_uid, (int) geteuid ());
        return -1;
    }
    if (st.st_mode & 077) {
        ERR ("run dir %s has mode %04o; it must be 0700 (chmod 700 '%s'): refused", dir, (unsigned) (st.st_mode & 07777), dir);
        return -1;
    }
    return 0;
}

int bmq_secret_file_write (const char *path, const void *data, size_t len, bool replace, char *err, size_t errlen)
{
    if (replace && unlink (path) != 0 && errno != ENOENT) { ERR ("cannot replace %s: %s", path, strerror (errno)); return -1; }
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) { ERR ("cannot create %s: %s", path, strerror (errno)); return -1; }
    const unsigned char *p = data;
    while (len) {
        ssize_t w = write (fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { ERR ("cannot write %s: %s", path, strerror (errno)); close (fd); unlink (path); return -1; }
        p += w;
        len -= (size_t) w;
    }
    if (close (fd) != 0) { ERR ("cannot write %s: %s", path, strerror (errno)); return -1; }
    return 0;
}

bmq_config_t *bmq_service_start (int argc, char **argv, const char *name, const char *summary,
                                 int *exit_code)
{
    const char *config_path = NULL, *level = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "--help") || !strcmp (argv[i], "-h")) {
            printf ("usage: blendmq-%s [--config FILE] [--log-json] [--log-level LEVEL]\n\n%s\n\n"
                    "  --config FILE      YAML configuration (defaults: deploy/blendmq.yaml, built in)\n"
                    "  --log-json         log JSON lines instead of text\n"
                    "  --log-level LEVEL  debug, info, warn or error\n\n"
                    "Environment: BLENDMQ_<SECTION>_<KEY> overrides any configuration key.\n",
                    name, summary);
            *exit_code = 0;
            return NULL;
        }
        else if (!strcmp (argv[i], "--config") && i + 1 < argc) config_path = argv[++i];
        else if (!strcmp (argv[i], "--log-level") && i + 1 < argc) level = argv[++i];
        else if (!strcmp (argv[i], "--log-json")) json = true;
        else {
            fprintf (stderr, "blendmq-%s: unknown argument '%s' (try --help)\n", name, argv[i]);
            *exit_code = 2;
            return NULL;
        }
    }
    char err[4096];
    bmq_config_t *cfg = bmq_config_load (config_path, err, sizeof err);
    if (!cfg) {
        fprintf (stderr, "blendmq-%s: configuration problem (not started):\n%s\n", name, err);
        *exit_code = BMQ_EXIT_CONFIG;       /* a supervisor does not start it again: the same file fails the same way */
        return NULL;
    }
    if (!json) json = !strcmp (bmq_config_str (cfg, "log.format"), "json");
    bmq_log_init (name, json, bmq_log_level_parse (level ? level : bmq_config_str (cfg, "log.level")));
    bmq_envelope_set_sender (name);
    zsys_init ();
    zsys_set_logstream (NULL);
    /* CURVE: this service's own key, and zauth for whoever connects to it */
    if (bmq_bus_security_init (cfg, name, err, sizeof err)) {
        bmq_error ("security: %s", err);
        fprintf (stderr, "blendmq-%s: %s\n", name, err);
        bmq_config_destroy (&cfg);
        *exit_code = 2;
        return NULL;
    }
    return cfg;
}

const char *bmq_service_path (const char *configured, const char *fallback, char *buf, size_t len)
{
    if (configured && *configured) snprintf (buf, len, "%s", configured);
    else snprintf (buf, len, "%s/%s", bmq_data_dir (), fallback);
    return buf;
}
