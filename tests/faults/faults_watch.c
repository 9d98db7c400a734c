/* faults_watch — SUB connections, `blendmq watch` processes and an SSE client, counted. */
#include "faults_watch.h"
#include "bus.h"

#include <ctype.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define SSE_RETRY_MAX_MS 2000

typedef struct {
    pid_t pid;
    bool  alive;
    char  path[1200];
    long  scanned;              /* bytes of output already looked at for gap markers */
    int   gaps;
} s_watch_t;

struct fw_watchers_t {
    pthread_mutex_t lock;
    atomic_bool     stopping;
    /* SUB connections */
    char            events[1024];
    int             subs;
    size_t          sub_events[FW_MAX_SUBS];
    pthread_t       sub_thread;
    /* watch processes */
    s_watch_t       watches[FW_MAX_WATCHES];
    int             nwatches;
    /* SSE */
    char            sse_url[1024], auth[400];
    pthread_t       sse_thread;
    char           *sse_buf;    /* a partial line */
    size_t          sse_len;
    char            sse_event[64], sse_last_id[128];
    bool            sse_data_gap;
    bool            sse_counted;    /* this connection already counted */
    int             sse_retry_ms;
    size_t          sse_events;
    int             sse_connects, sse_gaps;
    char            gap_sample[300];
};

static void *s_sub_main (void *arg)
{
    fw_watchers_t *self = arg;
    zsock_t *socks[FW_MAX_SUBS];
    zmq_pollitem_t items[FW_MAX_SUBS];
    int n = 0;
    for (int i = 0; i < self->subs; i++) {
        socks[n] = bmq_bus_connect (ZMQ_SUB, self->events, "gateway");
        if (!socks[n]) continue;
        items[n] = (zmq_pollitem_t) { .socket = zsock_resolve (socks[n]), .events = ZMQ_POLLIN };
        n++;
    }
    while (!atomic_load (&self->stopping)) {
        if (zmq_poll (items, n, 100) <= 0) continue;
        for (int i = 0; i < n; i++) {
            if (!(items[i].revents & ZMQ_POLLIN)) continue;
            size_t got = 0;
            zmq_msg_t msg;
            zmq_msg_init (&msg);
            while (zmq_msg_recv (&msg, items[i].socket, ZMQ_DONTWAIT) >= 0)
                if (!zmq_msg_more (&msg)) got++;
            zmq_msg_close (&msg);
            pthread_mutex_lock (&self->lock);
            self->sub_events[i] += got;
            pthread_mutex_unlock (&self->lock);
        }
    }
    for (int i = 0; i < n; i++) zsock_destroy (&socks[i]);
    return NULL;
}

/* ---- SSE, as an EventSource: reconnect with Last-Event-ID ------------------ */

static bool s_mentions_gap (const char *text)
{
    for (const char *p = text; p && *p; p++)
        if (!strncasecmp (p, "gap", 3)) return true;
    return false;
}

static void s_sse_line (fw_watchers_t *self, const char *line)
{
    if (!*line) {                               /* end of an event */
        if (*self->sse_event || self->sse_data_gap) {
            pthread_mutex_lock (&self->lock);
            self->sse_events++;
            if (s_mentions_gap (self->sse_event) || self->sse_data_gap) {
                self->sse_gaps++;
                snprintf (self->gap_sample, sizeof self->gap_sample, "SSE event: %s", self->sse_event);
            }
            pthread_mutex_unlock (&self->lock);
        }
        self->sse_event[0] = 0;
        self->sse_data_gap = false;
        return;
    }
    if (!strncmp (line, "id:", 3)) snprintf (self->sse_last_id, sizeof self->sse_last_id, "%s", line + 3 + (line[3] == ' '));
    else if (!strncmp (line, "event:", 6)) snprintf (self->sse_event, sizeof self->sse_event, "%s", line + 6 + (line[6] == ' '));
    else if (!strncmp (line, "retry:", 6)) {
        int ms = atoi (line + 6);
        self->sse_retry_ms = ms > 0 && ms < SSE_RETRY_MAX_MS ? ms : SSE_RETRY_MAX_MS;
    }
    else if (!strncmp (line, "data:", 5)) {
        if (!*self->sse_event) snprintf (self->sse_event, sizeof self->sse_event, "message");
        if (s_mentions_gap (line + 5) && strstr (line, "\"gap")) self->sse_data_gap = true;
    }
}

static size_t s_sse_write (char *data, size_t size, size_t n, void *arg)
{
    fw_watchers_t *self = arg;
    size_t len = size * n;
    if (!self->sse_counted) {               /* FAILONERROR: only a 2xx answer writes */
        self->sse_counted = true;
        pthread_mutex_lock (&self->lock);
        self->sse_connects++;
        pthread_mutex_unlock (&self->lock);
    }
    self->sse_buf = realloc (self->sse_buf, self->sse_len + len + 1);
    memcpy (self->sse_buf + self->sse_len, data, len);
    self->sse_len += len;
    self->sse_buf[self->sse_len] = 0;
    char *start = self->sse_buf, *nl;
    while ((nl = strchr (start, '\n'))) {
        *nl = 0;
        if (nl > start && nl[-1] == '\r') nl[-1] = 0;
        s_sse_line (self, start);
        start = nl + 1;
    }
    self->sse_len -= (size_t) (start - self->sse_buf);
    memmove (self->sse_buf, start, self->sse_len + 1);
    return len;
}

static int s_sse_progress (void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    fw_watchers_t *self = arg;
    return atomic_load (&self->stopping) ? 1 : 0;
}

static void *s_sse_main (void *arg)
{
    fw_watchers_t *self = arg;
    self->sse_retry_ms = 500;
    while (!atomic_load (&self->stopping)) {
        CURL *c = curl_easy_init ();
        struct curl_slist *headers = curl_slist_append (NULL, self->auth);
        headers = curl_slist_append (headers, "Accept: text/event-stream");
        char last[200];
        if (*self->sse_last_id) {
            snprintf (last, sizeof last, "Last-Event-ID: %s", self->sse_last_id);
            headers = curl_slist_append (headers, last);
        }
        self->sse_counted = false;
        self->sse_len = 0;
        curl_easy_setopt (c, CURLOPT_URL, self->sse_url);
        curl_easy_setopt (c, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, s_sse_write);
        curl_easy_setopt (c, CURLOPT_WRITEDATA, self);
        curl_easy_setopt (c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt (c, CURLOPT_XFERINFOFUNCTION, s_sse_progress);
        curl_easy_setopt (c, CURLOPT_XFERINFODATA, self);
        curl_easy_setopt (c, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
        curl_easy_setopt (c, CURLOPT_FAILONERROR, 1L);
        curl_easy_setopt (c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_perform (c);
        curl_easy_cleanup (c);
        curl_slist_free_all (headers);
        for (int slept = 0; slept < self->sse_retry_ms && !atomic_load (&self->stopping); slept += 50) usleep (50000);
    }
    return NULL;
}

/* ---- the whole set ------------------------------------------------------------ */

fw_watchers_t *fw_new (const char *blendmq, const char *run_dir, const char *work_dir, const char *events_endpoint,
                       int subs, int watches, const char *http_base, const char *token)
{
    fw_watchers_t *self = calloc (1, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    snprintf (self->events, sizeof self->events, "%s", events_endpoint);
    self->subs = subs < FW_MAX_SUBS ? subs : FW_MAX_SUBS;
    pthread_create (&self->sub_thread, NULL, s_sub_main, self);
    for (int i = 0; i < watches && i < FW_MAX_WATCHES; i++) {
        s_watch_t *w = &self->watches[self->nwatches++];
        snprintf (w->path, sizeof w->path, "%s/watch-%d.out", work_dir, i + 1);
        char err[1200];
        snprintf (err, sizeof err, "%s/watch-%d.err", work_dir, i + 1);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init (&fa);
        posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen (&fa, 1, w->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_addopen (&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char *argv[] = { (char *) blendmq, "--run-dir", (char *) run_dir, "--json", "watch", NULL };
        w->alive = posix_spawn (&w->pid, blendmq, &fa, NULL, argv, environ) == 0;
        posix_spawn_file_actions_destroy (&fa);
    }
    snprintf (self->sse_url, sizeof self->sse_url, "%s/api/events", http_base);
    snprintf (self->auth, sizeof self->auth, "Authorization: Bearer %s", token);
    pthread_create (&self->sse_thread, NULL, s_sse_main, self);
    return self;
}

void fw_destroy (fw_watchers_t **self_p)
{
    if (!self_p || !*self_p) return;
    fw_watchers_t *self = *self_p;
    atomic_store (&self->stopping, true);
    pthread_join (self->sub_thread, NULL);
    pthread_join (self->sse_thread, NULL);
    for (int i = 0; i < self->nwatches; i++) {
        s_watch_t *w = &self->watches[i];
        if (w->alive && waitpid (w->pid, NULL, WNOHANG) == 0) { kill (w->pid, SIGTERM); waitpid (w->pid, NULL, 0); }
    }
    free (self->sse_buf);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

/* New output of a watch process: count the lines that mention a gap. */
static void s_scan_watch (fw_watchers_t *self, s_watch_t *w)
{
    FILE *f = fopen (w->path, "r");
    if (!f) return;
    fseek (f, w->scanned, SEEK_SET);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline (&line, &cap, f)) > 0 && line[n - 1] == '\n') {
        w->scanned += n;
        /* progress bodies never say "gap"; a marker does (as a key, an event or text) */
        if (s_mentions_gap (line)) {
            w->gaps++;
            snprintf (self->gap_sample, sizeof self->gap_sample, "watch: %.*s", (int) strcspn (line, "\n"), line);
        }
    }
    free (line);
    fclose (f);
}

void fw_snapshot (fw_watchers_t *self, fw_snapshot_t *snap)
{
    memset (snap, 0, sizeof *snap);
    for (int i = 0; i < self->nwatches; i++) {
        s_watch_t *w = &self->watches[i];
        if (w->alive && waitpid (w->pid, NULL, WNOHANG) == w->pid) w->alive = false;
        s_scan_watch (self, w);
        struct stat st;
        snap->watch_alive[i] = w->alive;
        snap->watch_bytes[i] = stat (w->path, &st) == 0 ? (long) st.st_size : 0;
        snap->watch_gaps[i] = w->gaps;
    }
    snap->watches = self->nwatches;
    pthread_mutex_lock (&self->lock);
    snap->subs = self->subs;
    memcpy (snap->sub_events, self->sub_events, sizeof snap->sub_events);
    snap->sse_events = self->sse_events;
    snap->sse_connects = self->sse_connects;
    snap->sse_gaps = self->sse_gaps;
    snprintf (snap->gap_sample, sizeof snap->gap_sample, "%s", self->gap_sample);
    pthread_mutex_unlock (&self->lock);
}

int fw_silent_subs (const fw_snapshot_t *before, const fw_snapshot_t *after)
{
    int silent = 0;
    for (int i = 0; i < after->subs; i++)
        if (after->sub_events[i] <= before->sub_events[i]) silent++;
    return silent;
}
