/* http_reply — a request's headers, query and bus, and the replies every route sends (http_req.h). */
#include "http_req.h"
#include "http_bus.h"
#include "mcp_tools.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bmq_http_bus_t *bmq_http_req_bus (bmq_http_req_t *req)
{
    if (req->bus_slot && !*req->bus_slot) *req->bus_slot = bmq_http_bus_new (req->gateway);
    return req->bus_slot ? *req->bus_slot : NULL;
}

const char *bmq_http_req_header (bmq_http_req_t *req, const char *name)
{
    return MHD_lookup_connection_value (req->conn, MHD_HEADER_KIND, name);
}

const char *bmq_http_req_query (bmq_http_req_t *req, const char *name)
{
    return MHD_lookup_connection_value (req->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* ---- responses ----------------------------------------------------------------- */

enum MHD_Result bmq_http_reply (bmq_http_req_t *req, int status, struct MHD_Response *resp)
{
    if (!MHD_get_response_header (resp, "Cache-Control")) MHD_add_response_header (resp, "Cache-Control", "no-store");
    if (req->origin) {
        MHD_add_response_header (resp, "Access-Control-Allow-Origin", req->origin);
        MHD_add_response_header (resp, "Access-Control-Expose-Headers", "Mcp-Session-Id, MCP-Protocol-Version");
        MHD_add_response_header (resp, "Vary", "Origin");
    }
    req->status = status;
    enum MHD_Result rc = MHD_queue_response (req->conn, (unsigned) status, resp);
    MHD_destroy_response (resp);
    return rc;
}

struct MHD_Response *bmq_http_json_response (json_t *body)
{
    char *text = json_dumps (body, BMQ_MCP_JSON_FLAGS);
    json_decref (body);
    if (!text) text = strdup ("{}");
    struct MHD_Response *resp = MHD_create_response_from_buffer (strlen (text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header (resp, "Content-Type", "application/json");
    return resp;
}

enum MHD_Result bmq_http_reply_json (bmq_http_req_t *req, int status, json_t *body)
{
    return bmq_http_reply (req, status, bmq_http_json_response (body));
}

enum MHD_Result bmq_http_reply_error (bmq_http_req_t *req, int status, const char *code, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    return bmq_http_reply_json (req, status, json_pack ("{s:{s:s, s:s}}", "error", "code", code, "message", message));
}


bool bmq_http_pending_done (bmq_http_pending_t *self)
{
    if (self->off < self->len) return false;
    bmq_http_pending_free (self);
    return true;
}

bool bmq_http_pending_set (bmq_http_pending_t *self, char *text)
{
    bmq_http_pending_free (self);
    self->text = text;
    self->len = text ? strlen (text) : 0;
    return text != NULL;
}

ssize_t bmq_http_pending_read (bmq_http_pending_t *self, char *buf, size_t max)
{
    size_t n = self->len - self->off < max ? self->len - self->off : max;
    memcpy (buf, self->text + self->off, n);
    self->off += n;
    return (ssize_t) n;
}

void bmq_http_pending_free (bmq_http_pending_t *self)
{
    free (self->text);
    *self = (bmq_http_pending_t) { 0 };
}
