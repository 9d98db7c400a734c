/* mcp_surface_internal — the catalog shared by mcp_resources.c, mcp_prompts.c
 * and mcp_complete.c (see mcp_surface.h). */
#ifndef BMQ_MCP_SURFACE_INTERNAL_H
#define BMQ_MCP_SURFACE_INTERNAL_H

#include "mcp_surface.h"

struct bmq_mcp_surface_t {
    json_t *resources, *templates, *prompts;         /* the entries, private keys included */
    json_t *resources_list, *templates_list, *prompts_list;   /* as clients see them */
};

/* The template whose uriTemplate ("prefix{var}suffix") matches uri, with
 * the variable's name and its (percent-decoded) value; NULL when none does. */
const json_t *bmq_mcp_template_match (const bmq_mcp_surface_t *self, const char *uri, char *var, size_t varlen,
                                      char *value, size_t valuelen);
/* The entry as clients see it: keys starting with '_' removed, also inside "arguments". */
json_t *bmq_mcp_surface_public (const json_t *def);

#endif
