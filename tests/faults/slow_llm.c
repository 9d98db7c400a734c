/* slow_llm — a slow OpenAI-compatible server for the fault-injection suite. */
#include "slow_llm.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_UPLOAD (8u << 20)

struct slow_llm_t {
    struct MHD_Daemon *daemon;
    char               url[64];
    int                delay_ms;
    pthread_mutex_t    lock;
    int                busy;
    size_t             served;
    volatile bool      stopping;
};

typedef struct {
    char  *data;
    size_t len;
} s_upload_t;

/* The plan for prefix: SLOW_LLM_OBJECTS cubes in a row, as a tool call. */
static char *s_answer (const char *prefix)
{
    json_t *plan = json_array ();
    for (int i = 0; i < SLOW_LLM_OBJECTS; i++) {
        char name[96];
        snprintf (name, sizeof name, "%s_o%d", prefix, i);
        json_array_append_new (plan, json_pack ("{s:s, s:s, s:{s:f, s:[f,f,f]}}", "operation", "bpy.ops.mesh.primitive_cube_add",
                                                "name", name, "params", "size", 0.5, "location", (double) i, 5.0, 0.0));
    }
    json_t *args = json_pack ("{s:s, s:o}", "title", "fault chat", "plan", plan);
    char *args_text = json_dumps (args, JSON_COMPACT);
    json_decref (args);
    json_t *resp = json_pack ("{s:s, s:s, s:[{s:i, s:{s:s, s:n, s:[{s:s, s:s, s:{s:s, s:s}}]}, s:s}], s:{s:i, s:i}}",
                              "id", "chatcmpl-fault", "object", "chat.completion", "choices", "index", 0,
                              "message", "role", "assistant", "content", "tool_calls", "id", "call-1", "type", "function",
                              "function", "name", "submit_plan", "arguments", args_text, "finish_reason", "tool_calls",
                              "usage", "prompt_tokens", 10, "completion_tokens", 10);
    free (args_text);
    char *out = json_dumps (resp, JSON_COMPACT);
    json_decref (resp);
    return out;
}

/* The word after FAULTPREFIX= in the request text ("chat" when there is none). */
static void s_prefix (const char *text, char *out, size_t len)
{
    const char *p = text ? strstr (text, "FAULTPREFIX=") : NULL;
    size_t n = 0;
    if (p)
        for (p += 12; n + 1 < len && ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'); p++) out[n++] = *p;
    out[n] = 0;
    if (!n) snprintf (out, len, "chat");
}

static enum MHD_Result s_handle (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    slow_llm_t *self = cls;
    s_upload_t *up = *con_cls;
    if (!up) {
        *con_cls = calloc (1, sizeof (s_upload_t));
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*upload_size) {
        if (up->len + *upload_size > MAX_UPLOAD) return MHD_NO;
        char *grown = realloc (up->data, up->len + *upload_size + 1);
        if (!grown) return MHD_NO;
        up->data = grown;
        memcpy (up->data + up->len, upload, *upload_size);
        up->len += *upload_size;
        up->data[up->len] = 0;
        *upload_size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock (&self->lock);
    self->busy++;
    pthread_mutex_unlock (&self->lock);
    for (int slept = 0; slept < self->delay_ms && !self->stopping; slept += 20) usleep (20000);
    char prefix[64];
    s_prefix (up->data, prefix, sizeof prefix);
    char *body = s_answer (prefix);
    struct MHD_Response *resp = MHD_create_response_from_buffer (strlen (body), body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header (resp, "Content-Type", "application/json");
    enum MHD_Result rc = MHD_queue_response (conn, MHD_HTTP_OK, resp);
    MHD_destroy_response (resp);
    pthread_mutex_lock (&self->lock);
    self->busy--;
    self->served++;
    pthread_mutex_unlock (&self->lock);
    return rc;
}

static void s_completed (void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    s_upload_t *up = *con_cls;
    if (up) { free (up->data); free (up); }
    *con_cls = NULL;
}

slow_llm_t *slow_llm_new (int delay_ms)
{
    slow_llm_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    self->delay_ms = delay_ms;
    pthread_mutex_init (&self->lock, NULL);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = 0 };
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    self->daemon = MHD_start_daemon (MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                                     s_handle, self, MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
                                     MHD_OPTION_NOTIFY_COMPLETED, s_completed, NULL, MHD_OPTION_END);
    if (!self->daemon) { pthread_mutex_destroy (&self->lock); free (self); return NULL; }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_BIND_PORT);
    snprintf (self->url, sizeof self->url, "http://127.0.0.1:%u", info ? info->port : 0);
    return self;
}

void slow_llm_destroy (slow_llm_t **self_p)
{
    if (!self_p || !*self_p) return;
    slow_llm_t *self = *self_p;
    self->stopping = true;
    MHD_stop_daemon (self->daemon);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

const char *slow_llm_url (const slow_llm_t *self)
{
    return self->url;
}

int slow_llm_busy (slow_llm_t *self)
{
    pthread_mutex_lock (&self->lock);
    int n = self->busy;
    pthread_mutex_unlock (&self->lock);
    return n;
}

size_t slow_llm_served (slow_llm_t *self)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->served;
    pthread_mutex_unlock (&self->lock);
    return n;
}
