/* plan_assets — see plan_assets.h. */
#include "plan_assets.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *source;
    const char *types[4];
    const char *resolutions[5];             /* empty: the step must give none */
    const char *formats[3][3];              /* per type, in types' order */
} s_source_t;

static const s_source_t s_sources[] = {
    { "polyhaven", { "model", "hdri", "texture" }, { "1k", "2k", "4k", "8k" },
      { { "gltf", "fbx" }, { "hdr", "exr" }, { "jpg", "png" } } },
    { "sketchfab", { "model" }, { NULL }, { { "gltf", "glb" } } },
    { "hyper3d",   { "model" }, { NULL }, { { "glb" } } },
};

static int s_index (const char *const *list, size_t n, const char *value)
{
    for (size_t i = 0; value && i < n && list[i]; i++)
        if (!strcmp (list[i], value)) return (int) i;
    return -1;
}

static void s_join (char *out, size_t len, const char *const *list, size_t n)
{
    *out = 0;
    for (size_t i = 0; i < n && list[i]; i++)
        snprintf (out + strlen (out), len - strlen (out), "%s%s", i ? ", " : "", list[i]);
}

static void s_err (json_t *errors, const char *field, const char *reason)
{
    json_array_append_new (errors, json_pack ("{s:s, s:s}", "field", field, "reason", reason));
}

static bool s_chars (const char *id, size_t min, size_t max, const char *extra, bool upper, bool hex_only)
{
    size_t n = strlen (id);
    if (n < min || n > max) return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        bool ok = hex_only ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))
                           : ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (upper && c >= 'A' && c <= 'Z')
                              || (c && strchr (extra, c)));
        if (!ok) return false;
    }
    return true;
}

bool bmq_asset_id_ok (const char *source, const char *id)
{
    if (!source || !id) return false;
    if (!strcmp (source, "polyhaven")) return s_chars (id, 1, 64, "_-", true, false);     /* "ArmChair_01" */
    if (!strcmp (source, "sketchfab")) return s_chars (id, 32, 32, "", false, true);
    if (!strcmp (source, "hyper3d")) return s_chars (id, 1, 64, "-", true, false);
    return false;
}

void bmq_plan_check_asset (const json_t *step, json_t *errors)
{
    const json_t *params = json_object_get (step, "params");
    const char *source = json_string_value (json_object_get (params, "source"));
    const char *id = json_string_value (json_object_get (params, "id"));
    const char *type = json_string_value (json_object_get (params, "type"));
    const char *res = json_string_value (json_object_get (params, "resolution"));
    const char *format = json_string_value (json_object_get (params, "format"));
    char reason[300], list[120];
    const s_source_t *src = NULL;
    for (size_t i = 0; source && i < sizeof s_sources / sizeof *s_sources; i++)
        if (!strcmp (s_sources[i].source, source)) src = &s_sources[i];
    if (!src) return;               /* the palette's enum already said what sources there are */
    if (id && !bmq_asset_id_ok (source, id)) {
        snprintf (reason, sizeof reason, "'%.70s' is not a %s id (%s)", id, source,
                  !strcmp (source, "polyhaven") ? "1 to 64 of A-Z, a-z, 0-9, _ and -"
                  : !strcmp (source, "sketchfab") ? "a model uid: 32 hex digits" : "1 to 64 of A-Z, a-z, 0-9 and -");
        s_err (errors, "params.id", reason);
    }
    static const char *const all_types[] = { "model", "hdri", "texture" };
    if (type && s_index (all_types, 3, type) < 0) type = NULL;
    int t = s_index (src->types, 4, type);
    if (type && t < 0) {
        s_join (list, sizeof list, src->types, 4);
        snprintf (reason, sizeof reason, "%s serves %s, not %.20s", source, list, type);
        s_err (errors, "params.type", reason);
    }
    /* values outside the palette's own enums are the palette's errors, told once */
    static const char *const all_res[] = { "1k", "2k", "4k", "8k" };
    static const char *const all_formats[] = { "gltf", "glb", "fbx", "obj", "hdr", "exr", "jpg", "png" };
    if (res && s_index (all_res, 4, res) < 0) res = NULL;
    if (format && s_index (all_formats, 8, format) < 0) format = NULL;
    if (res && !src->resolutions[0]) {
        snprintf (reason, sizeof reason, "%s assets come as published: give no resolution", source);
        s_err (errors, "params.resolution", reason);
    }
    else if (res && s_index (src->resolutions, 5, res) < 0) {
        s_join (list, sizeof list, src->resolutions, 5);
        snprintf (reason, sizeof reason, "%s resolutions are %s, not %.20s", source, list, res);
        s_err (errors, "params.resolution", reason);
    }
    if (format && t >= 0 && s_index (src->formats[t], 3, format) < 0) {
        s_join (list, sizeof list, src->formats[t], 3);
        snprintf (reason, sizeof reason, "a %s %s comes as %s, not %.20s", source, type, list, format);
        s_err (errors, "params.format", reason);
    }
    bool targeted = json_object_get (step, "target") != NULL, named = json_object_get (step, "name") != NULL;
    if (type && !strcmp (type, "texture") && !targeted)
        s_err (errors, "target", "a texture import builds a material on its target: give the object's name as target");
    if (type && strcmp (type, "texture") && targeted) {
        snprintf (reason, sizeof reason, "a%s %s import takes no target (%s)", !strcmp (type, "hdri") ? "n" : "", type,
                  !strcmp (type, "hdri") ? "it lights the world" : "it makes a new object; name it instead");
        s_err (errors, "target", reason);
    }
    if (type && strcmp (type, "model") && named)
        s_err (errors, "name", "only a model import makes an object to name");
}
