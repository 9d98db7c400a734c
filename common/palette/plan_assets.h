/* plan_assets — the checks an asset.import step gets beyond its palette
 * bounds (issue 16): which source serves which asset types, formats and
 * resolutions, the strict charset and length of each source's ids, and what
 * the step may name or target by the kind of asset:
 *
 *   source     types                 id                      resolution        formats
 *   polyhaven  model, hdri, texture  [A-Za-z0-9_-]{1,64}     1k 2k 4k 8k       model gltf|fbx, hdri hdr|exr,
 *                                                                              texture jpg|png
 *   sketchfab  model                 [0-9a-f]{32} (a uid)    none (as published)  gltf|glb
 *   hyper3d    model                 [A-Za-z0-9-]{1,64}      none              glb
 *
 *   a model makes one object (the imported root): it may be named, takes no
 *   target; a texture becomes a material on its target (required); an HDRI
 *   lights the world: neither name nor target. */
#ifndef BMQ_PLAN_ASSETS_H
#define BMQ_PLAN_ASSETS_H

#include <jansson.h>
#include <stdbool.h>

#define BMQ_ASSET_OPERATION "asset.import"

/* The step's problems, appended to `errors` as {field, reason}; none when it
 * is a well-formed asset.import. */
void bmq_plan_check_asset (const json_t *step, json_t *errors);
/* Is `id` a well-formed id of `source` (one of the table's)? */
bool bmq_asset_id_ok (const char *source, const char *id);

#endif
