/* assets_sources — one table of asset sources, opened from the configuration. */
#include "assets_sources.h"
#include "assets_polyhaven.h"
#include "assets_hyper3d.h"
#include "assets_sketchfab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Poly Haven's four verbs ---------------------------------------------- */

static void *s_ph_open (const bmq_config_t *cfg, char *err, size_t errlen)
{
    bmq_polyhaven_options_t opts;
    if (bmq_polyhaven_options_from_config (&opts, cfg, err, errlen)) return NULL;
    return bmq_polyhaven_new (&opts, err, errlen);
}

static void s_ph_close (void **client_p) { bmq_polyhaven_destroy ((bmq_polyhaven_t **) client_p); }
static bmq_assets_cache_t *s_ph_cache (void *client) { return bmq_polyhaven_cache (client); }

static json_t *s_ph_search (void *client, const char *type, const char *query, char *err, size_t errlen)
{
    return bmq_polyhaven_search (client, type, query, err, errlen);
}

static bmq_asset_bundle_t *s_ph_fetch (void *client, const char *id, const char *type, const char *resolution,
                                       const char *format, char *err, size_t errlen)
{
    return bmq_polyhaven_fetch (client, id, type, resolution, format, err, errlen);
}

static const bmq_asset_source_kind_t s_polyhaven = {
    "polyhaven", s_ph_open, s_ph_close, s_ph_cache, s_ph_search, s_ph_fetch
};

/* ---- Sketchfab's ------------------------------------------------------------- */

static void *s_sf_open (const bmq_config_t *cfg, char *err, size_t errlen)
{
    bmq_sketchfab_options_t opts;
    if (bmq_sketchfab_options_from_config (&opts, cfg, err, errlen)) return NULL;
    return bmq_sketchfab_new (&opts, err, errlen);
}

static void s_sf_close (void **client_p) { bmq_sketchfab_destroy ((bmq_sketchfab_t **) client_p); }
static bmq_assets_cache_t *s_sf_cache (void *client) { return bmq_sketchfab_cache (client); }

static json_t *s_sf_search (void *client, const char *type, const char *query, char *err, size_t errlen)
{
    if (type && *type && strcmp (type, "model")) {
        snprintf (err, errlen, "Sketchfab serves models, not %.16ss", type);
        return NULL;
    }
    return bmq_sketchfab_search (client, query, err, errlen);
}

static bmq_asset_bundle_t *s_sf_fetch (void *client, const char *id, const char *type, const char *resolution,
                                       const char *format, char *err, size_t errlen)
{
    (void) resolution;              /* Sketchfab has one */
    if (type && strcmp (type, "model")) {
        snprintf (err, errlen, "Sketchfab serves models, not %.16ss", type);
        return NULL;
    }
    return bmq_sketchfab_fetch (client, id, format, err, errlen);
}

static const bmq_asset_source_kind_t s_sketchfab = {
    "sketchfab", s_sf_open, s_sf_close, s_sf_cache, s_sf_search, s_sf_fetch
};

/* ---- the table -------------------------------------------------------------- */

/* Every source this build knows, in the order they are listed to users. */
static const bmq_asset_source_kind_t *const s_kinds[] = {
    &s_polyhaven,
    &s_sketchfab,
    &bmq_asset_source_hyper3d,
};
#define S_KINDS (sizeof s_kinds / sizeof s_kinds[0])

struct bmq_assets_sources_t {
    void *client[S_KINDS];
    char  error[S_KINDS][512];
    char  served[256];
};

bmq_assets_sources_t *bmq_assets_sources_new (const bmq_config_t *cfg)
{
    bmq_assets_sources_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    for (size_t i = 0; i < S_KINDS; i++) {
        self->client[i] = s_kinds[i]->open (cfg, self->error[i], sizeof self->error[i]);
        if (!self->client[i]) {
            if (!*self->error[i]) snprintf (self->error[i], sizeof self->error[i], "it could not be opened");
            continue;
        }
        size_t n = strlen (self->served);
        snprintf (self->served + n, sizeof self->served - n, "%s%s", n ? ", " : "", s_kinds[i]->name);
    }
    return self;
}

void bmq_assets_sources_destroy (bmq_assets_sources_t **self_p)
{
    bmq_assets_sources_t *self = *self_p;
    if (!self) return;
    for (size_t i = 0; i < S_KINDS; i++)
        if (self->client[i]) s_kinds[i]->close (&self->client[i]);
    free (self);
    *self_p = NULL;
}

const char *bmq_assets_sources_served (const bmq_assets_sources_t *self)
{
    return self && *self->served ? self->served : "none";
}

/* The index of a served source, or -1 with err saying why not. */
static int s_find (bmq_assets_sources_t *self, const char *source, char *err, size_t errlen)
{
    for (size_t i = 0; self && i < S_KINDS; i++) {
        if (strcmp (s_kinds[i]->name, source ? source : "")) continue;
        if (self->client[i]) return (int) i;
        snprintf (err, errlen, "asset source '%s' is not available in this executor: %s", source, self->error[i]);
        return -1;
    }
    snprintf (err, errlen, "asset source '%.40s' is not known (this executor serves %s)", source ? source : "",
              bmq_assets_sources_served (self));
    return -1;
}

json_t *bmq_assets_sources_search (bmq_assets_sources_t *self, const char *source, const char *type, const char *query,
                                   char *err, size_t errlen)
{
    int i = s_find (self, source, err, errlen);
    if (i < 0) return NULL;
    if (!s_kinds[i]->search) { snprintf (err, errlen, "asset source '%s' has no search", source); return NULL; }
    return s_kinds[i]->search (self->client[i], type, query, err, errlen);
}

bmq_asset_bundle_t *bmq_assets_sources_fetch (bmq_assets_sources_t *self, const char *source, const char *id,
                                              const char *type, const char *resolution, const char *format,
                                              char *err, size_t errlen)
{
    int i = s_find (self, source, err, errlen);
    if (i < 0) return NULL;
    return s_kinds[i]->fetch (self->client[i], id, type, resolution, format, err, errlen);
}

bmq_assets_cache_t *bmq_assets_sources_cache (bmq_assets_sources_t *self, const char *source)
{
    char err[8];
    int i = s_find (self, source, err, sizeof err);
    return i < 0 ? NULL : s_kinds[i]->cache (self->client[i]);
}

void *bmq_assets_sources_client (bmq_assets_sources_t *self, const char *source)
{
    char err[8];
    int i = s_find (self, source, err, sizeof err);
    return i < 0 ? NULL : self->client[i];
}
