/* assets_sources — the asset sources an executor serves, by name.
 *
 * Each source (Poly Haven, Sketchfab, Hyper3D) is a client with the same
 * four verbs, declared by a bmq_asset_source_kind_t in the source's own file
 * and listed once in assets_sources.c. The set opens every source from the
 * configuration; a source that cannot open (no token, a bad URL, a cache it
 * refuses) stays listed with the reason, and every search or fetch naming it
 * fails with that reason, so users read why, not "unknown source".
 * A set is used by one thread at a time (the executor's assets actor). */
#ifndef BMQ_ASSETS_SOURCES_H
#define BMQ_ASSETS_SOURCES_H

#include "assets_bundle.h"
#include "assets_cache.h"
#include "config.h"

#include <jansson.h>
#include <stddef.h>

typedef struct {
    const char *name;                                   /* "polyhaven" */
    void      *(*open) (const bmq_config_t *cfg, char *err, size_t errlen);
    void       (*close) (void **client_p);
    bmq_assets_cache_t *(*cache) (void *client);
    /* type NULL/"" for all; query NULL/"" for all. A JSON array of hits; NULL with err. */
    json_t    *(*search) (void *client, const char *type, const char *query, char *err, size_t errlen);
    /* NULL with err. */
    bmq_asset_bundle_t *(*fetch) (void *client, const char *id, const char *type, const char *resolution,
                                  const char *format, char *err, size_t errlen);
} bmq_asset_source_kind_t;

typedef struct bmq_assets_sources_t bmq_assets_sources_t;

bmq_assets_sources_t *bmq_assets_sources_new (const bmq_config_t *cfg);
void bmq_assets_sources_destroy (bmq_assets_sources_t **self_p);

/* "polyhaven, sketchfab": the sources that opened (for messages and status). */
const char *bmq_assets_sources_served (const bmq_assets_sources_t *self);

json_t *bmq_assets_sources_search (bmq_assets_sources_t *self, const char *source, const char *type, const char *query,
                                   char *err, size_t errlen);
bmq_asset_bundle_t *bmq_assets_sources_fetch (bmq_assets_sources_t *self, const char *source, const char *id,
                                              const char *type, const char *resolution, const char *format,
                                              char *err, size_t errlen);
/* The cache a source's bundles live in; NULL when the source is not served. */
bmq_assets_cache_t *bmq_assets_sources_cache (bmq_assets_sources_t *self, const char *source);
/* The client of a served source (for verbs beyond the four, e.g. Hyper3D's jobs); NULL otherwise. */
void *bmq_assets_sources_client (bmq_assets_sources_t *self, const char *source);

#endif
