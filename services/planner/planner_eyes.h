/* planner_eyes — the dialogue's tools that reach the executor through the
 * gateway (issue 16): search_assets and look.
 *
 *   search_assets (source, query?, type?)  asset.search → asset.result; the
 *       model gets at most BMQ_EYES_MAX_RESULTS results, each compact
 *       {id, name, type, categories (≤ 4), tags (≤ 6)}, every string cut and
 *       cleaned, plus how many there were. An executor error (a source it
 *       does not serve, a source that failed) becomes {error} with its words.
 *   look (angles?)                          scene.request {command: look}
 *       → the contact sheet (PNG in the blob) and per-object topology. The
 *       model gets {views, sheet, objects: [{name, type, vertices, faces,
 *       non_manifold_edges, loose_parts, bounds}] (≤ BMQ_EYES_MAX_OBJECTS),
 *       totals} and the picture itself under the key "_image"
 *       ({mime_type: "image/png", data: base64}), which each backend turns
 *       into its own image part (llm_client.h). angles 1..4; a picture
 *       larger than BMQ_EYES_MAX_PNG is left out, and the answer says so.
 *
 * Every field of the executor's answer is type-checked: it comes from
 * Blender or from an asset library. */
#ifndef BMQ_PLANNER_EYES_H
#define BMQ_PLANNER_EYES_H

#include <jansson.h>
#include <stdbool.h>

#define BMQ_EYES_MAX_RESULTS 12
#define BMQ_EYES_MAX_OBJECTS 60
#define BMQ_EYES_MAX_ANGLES  4
#define BMQ_EYES_MAX_PNG     (4u << 20)

typedef struct {
    const char *gateway;        /* gateway.endpoint; NULL or "": the tools answer {error} */
    const char *story;          /* the request's cid */
    int         timeout_ms;     /* per question */
    bool      (*cancelled) (void *ctx);
    void       *ctx;
} bmq_eyes_t;

/* New references, never NULL (an {error} object when it failed). */
json_t *bmq_eyes_search_assets (const bmq_eyes_t *eyes, const json_t *args);
json_t *bmq_eyes_look (const bmq_eyes_t *eyes, const json_t *args);

/* The declarations of both tools (neutral shape, llm_client.h); appended to decls. */
void bmq_eyes_declare (json_t *decls);

#endif
