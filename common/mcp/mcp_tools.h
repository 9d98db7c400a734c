/* mcp_tools — the tools blendmq offers over MCP, as data.
 *
 * common/mcp/mcp_tools.json (and mcp_test_tools.json) are built into the
 * binaries; this class parses them once, resolves their shared schema
 * fragments ("@step"), and decides which tools this build can serve: a tool
 * needs the bus message it turns into (its "_request") to be declared in
 * proto/messages.def. Tools that cannot be served are left out of tools/list
 * (a model never spends tokens on them) and answer isError when called.
 *
 * Immutable after construction: may be shared by threads. */
#ifndef BMQ_MCP_TOOLS_H
#define BMQ_MCP_TOOLS_H

#include "codec.h"
#include "roles.h"
#include <jansson.h>
#include <stdbool.h>

/* How blendmq writes JSON to MCP and HTTP clients: compact, numbers to 10
 * significant digits (2.2429, not 2.2429000000000001: fewer tokens, same meaning). */
#define BMQ_MCP_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION (10))

typedef enum {
    BMQ_TOOL_CAPABILITIES, BMQ_TOOL_INSPECT, BMQ_TOOL_VALIDATE, BMQ_TOOL_EXECUTE, BMQ_TOOL_CHAT,
    BMQ_TOOL_SCENE_INFO, BMQ_TOOL_OBJECT_INFO, BMQ_TOOL_SCREENSHOT, BMQ_TOOL_FORWARD, BMQ_TOOL_TEST,
    BMQ_TOOL_CONFIRM,                   /* confirm_script: a person confirms through MCP elicitation */
    BMQ_TOOL_LOOK,                      /* look: the add-on's contact sheet and topology (mcp_look.c) */
    BMQ_TOOL_IMPORT,                    /* import_asset: a one-step asset.import plan, run as execute_plan */
    BMQ_TOOL_GENERATE                   /* generate_3d: asset.generate, then its import as import_asset (mcp_generate.c) */
} bmq_mcp_tool_kind_t;

/* Who may do what over HTTP and MCP: the one role model, roles.h (bmq_role_t). */

typedef struct {
    const char          *name;
    bmq_mcp_tool_kind_t  kind;
    bool                 available;      /* this build can serve it */
    bmq_msg_type_t       request;        /* bus request it becomes (UNKNOWN for test tools) */
    bmq_msg_type_t       reply;          /* FORWARD: the reply that ends it */
    const char          *request_name;   /* as written in the tool file */
    bool                 structured;     /* has an outputSchema: results carry structuredContent */
    bool                 listed;         /* in tools/list and callable ("_listed": false: only behind a resource) */
    bmq_role_t           role;           /* "_role": the least role that may call it (default operator) */
    const json_t        *def;            /* the whole entry, private keys included */
} bmq_mcp_tool_t;

typedef struct bmq_mcp_tools_t bmq_mcp_tools_t;

/* Parse the built-in tool files; with `test_tools`, add the conformance test
 * tools. NULL with err when a file is malformed (a build bug). */
bmq_mcp_tools_t *bmq_mcp_tools_new (bool test_tools, char *err, size_t errlen);
void bmq_mcp_tools_destroy (bmq_mcp_tools_t **self_p);

/* The tools/list result, {"tools": [...]}: available tools only, private
 * keys removed. Borrowed. */
const json_t *bmq_mcp_tools_list (const bmq_mcp_tools_t *self);
/* Size in bytes of the compact tools/list result (for the token budget). */
size_t bmq_mcp_tools_list_bytes (const bmq_mcp_tools_t *self);
/* A tool by name, available or not; NULL when no such tool exists. */
const bmq_mcp_tool_t *bmq_mcp_tools_find (const bmq_mcp_tools_t *self, const char *name);

#endif
