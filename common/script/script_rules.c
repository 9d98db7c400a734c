/* script_rules — the default allowlists and caps for BPY scripts. */
#include "script_rules.h"

#include <stdio.h>
#include <string.h>

/* Lists are NULL-terminated; the order is what the verdicts and docs show. */
static const char *s_modules[] = { "bpy", "bmesh", "mathutils", "math", "random", NULL };

/* Not hash() and id(): salted hashes and addresses differ between two processes, a free
 * coin for a script that wants to behave one way in the sandbox and another live. */
static const char *s_builtins[] = {
    "abs", "all", "any", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "divmod",
    "enumerate", "filter", "float", "frozenset", "hex", "int", "isinstance", "issubclass",
    "iter", "len", "list", "map", "max", "min", "next", "oct", "ord", "pow", "print", "range",
    "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "zip",
    "Exception", "ArithmeticError", "AssertionError", "AttributeError", "IndexError", "KeyError",
    "LookupError", "NotImplementedError", "OverflowError", "RuntimeError", "StopIteration",
    "TypeError", "ValueError", "ZeroDivisionError", NULL };

static const char *s_forbidden_builtins[] = {
    "exec", "eval", "compile", "open", "getattr", "setattr", "delattr", "hasattr", "globals", "locals",
    "vars", "dir", "type", "__import__", "breakpoint", "input", "help", "exit", "quit",
    "memoryview", "object", "super", "classmethod", "staticmethod", "property", "format",
    "__build_class__", "__builtins__", "__loader__", "__spec__", "copyright", "credits", "license",
    "BaseException", "SystemExit", "KeyboardInterrupt", "GeneratorExit", NULL };

static const char *s_denied_attributes[] = {
    /* code from strings, persistence and hooks (DESIGN.md §4) */
    "handlers", "timers", "driver_namespace", "drivers", "driver", "driver_add", "driver_remove",
    "as_module", "texts", "text", "execfile", "exec", "eval", "compile", "script", "scripts",
    "register_class", "unregister_class", "register_module", "unregister_module", "msgbus",
    "addons", "addon_utils", "keyconfigs", "preferences", "user_preferences", "use_autopack",
    "use_scripts_auto_execute", "temp_override", "path_resolve", "copy_context",
    /* files and processes */
    "filepath", "filepath_raw", "filepath_from_user", "filename", "directory", "files", "base_path",
    "file_slots", "file_format", "save", "save_render", "save_as_mainfile", "save_mainfile", "save_userpref",
    "pack", "unpack", "reload", "load", "write", "open", "libraries", "library", "system", "popen",
    "spawn", "fork", "new_movie", "new_sound", "new_image", "cache_directory", "sound", "image_user",
    "use_disk_cache", "use_external", "image_output_path", "output_path", "cache_file", "bake_directory",
    /* simulation caches and bakes (issue 23) */
    "point_cache", "point_caches", "domain_settings", "flow_settings", "effector_settings",
    "canvas_settings", "brush_settings", "collision_settings", "bake", "bake_all", "free_bake",
    /* the UI and window manager */
    "window_manager", "windows", "window", "screen", "screens", "area", "region", "workspace",
    /* frames, code objects, generators: the classic sandbox escapes */
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "cr_frame", "cr_code", "cr_await",
    "ag_frame", "ag_code", "ag_await", "f_globals", "f_locals", "f_builtins", "f_back", "f_code",
    "f_trace", "f_lasti", "tb_frame", "tb_next", "co_code", "co_consts", "co_names",
    "func_globals", "func_code", "im_func", "im_self", "mro", "modules", "globals", "locals",
    "builtins", "format", "format_map", "exec_module", "import_module", "load_module", NULL };

static const char *s_bpy_roots[] = { "ops", "data", "context", NULL };

static const char *s_data_collections[] = {
    "objects", "meshes", "materials", "collections", "lights", "cameras", "curves", "textures",
    "node_groups", "worlds", "armatures", "lattices", "metaballs", "actions", "grease_pencils",
    "particles", "shape_keys", NULL };

static const char *s_context_attributes[] = {
    "scene", "collection", "object", "active_object", "selected_objects",
    "selected_editable_objects", "visible_objects", "view_layer", "mode", "edit_object",
    "evaluated_depsgraph_get", NULL };

static const char *s_op_categories[] = {
    "mesh", "object", "transform", "curve", "material", "collection", "uv", "texture", "world", NULL };

static const char *s_denied_ops[] = {
    "object.bake", "object.bake_image", "object.ocean_bake", "object.multires_external_save",
    "object.multires_external_pack", "object.load_background_image", "object.load_reference_image",
    "object.volume_import", "object.drop_named_image", "object.collection_external_asset_drop",
    "object.lineart_bake_strokes", "object.lineart_bake_strokes_all", "uv.export_layout",
    /* simulations whose caches Blender writes on the host (issue 23) */
    "object.quick_smoke", "object.quick_fluid", "object.quick_liquid", "object.quick_explode", NULL };

/* A str constant holding one of these is refused (issue 23): node types that write files
 * (CompositorNodeOutputFile and every *OutputFile*), and the modifier and physics types whose
 * caches Blender writes to disk when frames change (fluid, smoke, cloth, dynamic paint). */
static const char *s_denied_string_words[] = {
    "OutputFile", "FLUID", "SMOKE", "CLOTH", "DYNAMIC_PAINT", NULL };

static const char *s_denied_op_words[] = {
    "export", "import", "save", "load", "bake", "external", "script", "driver", "reload", "file",
    "url", "addon", "pref", "open", "exec", "run", NULL };

/* Names that are also RNA properties a script assigns (count, seed, angle, weight,
 * random…) are left out: a method name can never be assigned (script_walk). */
static const char *s_methods[] = {
    /* bpy collections and IDs (RNA functions a modelling script calls) */
    "new", "remove", "link", "unlink", "get", "find", "foreach_get", "foreach_set", "move",
    "update", "update_tag", "validate", "from_pydata", "calc_normals", "calc_normals_split",
    "calc_loop_triangles", "calc_tangents", "select_set", "select_get", "hide_set", "hide_get",
    "visible_get", "keyframe_insert", "keyframe_delete", "shape_key_add", "shape_key_remove",
    "to_mesh", "to_mesh_clear", "to_curve", "evaluated_get", "evaluated_depsgraph_get",
    "transform", "ray_cast", "closest_point_on_mesh", "frame_set", "new_from_object",
    "animation_data_create", "animation_data_clear", "copy", "insert", "add",
    "clear", "keys", "values", "items", "append", "pop", "flip_normals",
    "normals_split_custom_set", "normals_split_custom_set_from_vertices", "create_normals_split",
    "free_normals_split",
    /* bmesh */
    "free", "from_mesh", "from_object", "normal_update", "ensure_lookup_table", "index_update",
    "sort", "select_flush", "select_flush_mode", "calc_center_median", "calc_center_bounds",
    "calc_center_median_weighted", "calc_area", "calc_perimeter", "calc_length", "calc_volume",
    "calc_face_angle", "calc_edge_angle", "calc_shell_factor", "calc_tangent_edge", "other_vert",
    "other_edge", "copy_from", "copy_from_face_interp", "copy_from_vert_interp", "verify",
    "clear_select", "is_valid",
    /* mathutils */
    "normalized", "normalize", "cross", "dot", "lerp", "slerp", "angle_signed", "rotate",
    "rotate_axis", "rotation_difference", "to_track_quat", "to_euler", "to_matrix", "to_quaternion",
    "to_3x3", "to_4x4", "to_translation", "to_scale", "to_2d", "to_3d", "to_4d", "to_tuple",
    "decompose", "inverted", "inverted_safe", "invert", "invert_safe", "transposed", "transpose",
    "freeze", "resized", "resize", "resize_2d", "resize_3d", "resize_4d", "project", "reflect",
    "orthogonal", "negate", "zero", "identity", "conjugate", "conjugated", "make_compatible",
    "to_axis_angle", "to_exponential_map", "cross_product", "dot_product", "lerp_matrix",
    "Rotation", "Translation", "Scale", "Identity", "Diagonal", "OrthoProjection", "Shear",
    "Fill", "Range", "Linspace", "Repeat", "LocRotScale",
    /* str, list, dict, set, numbers */
    "join", "split", "rsplit", "strip", "lstrip", "rstrip", "lower", "upper", "title",
    "capitalize", "startswith", "endswith", "replace", "rfind", "index", "rindex",
    "zfill", "ljust", "rjust", "center", "splitlines", "isdigit", "isalpha", "isalnum", "isspace",
    "isupper", "islower", "isidentifier", "isnumeric", "partition", "rpartition", "casefold",
    "swapcase", "removeprefix", "removesuffix", "extend", "reverse", "setdefault", "popitem",
    "fromkeys", "discard", "union", "intersection", "difference", "symmetric_difference",
    "issubset", "issuperset", "isdisjoint", "intersection_update", "difference_update",
    "is_integer", "bit_length", "as_integer_ratio", "hex",
    /* random.Random instances (random() and seed() are module functions: random.random();
     * as method names they would collide with RNA properties a script assigns) */
    "uniform", "randint", "randrange", "choice", "choices", "shuffle", "sample", "gauss", "triangular", "normalvariate", "lognormvariate", "expovariate", "betavariate",
    "vonmisesvariate", "gammavariate", "paretovariate", "weibullvariate", NULL };

static const char *s_denied_path_subtypes[] = { "FILE_PATH", "DIR_PATH", "FILE_NAME", "BYTE_STRING", NULL };

static const char *s_subdivision_names[] = {
    "levels", "render_levels", "sculpt_levels", "level", "subdivisions", "render_subdivisions", NULL };
static const char *s_count_names[] = { "count", "use_count", NULL };
static const char *s_resolution_names[] = {
    "segments", "ring_count", "vertices", "major_segments", "minor_segments", "x_subdivisions",
    "y_subdivisions", "u_segments", "v_segments", "resolution_u", "resolution_v",
    "render_resolution_u", "render_resolution_v", "number_cuts", "cuts", "steps", "render_steps",
    "iterations", "resolution", NULL };

static const struct { const char *key; const char **list; } s_lists[] = {
    { "modules", s_modules }, { "builtins", s_builtins },
    { "forbidden_builtins", s_forbidden_builtins }, { "denied_attributes", s_denied_attributes },
    { "bpy_roots", s_bpy_roots }, { "data_collections", s_data_collections },
    { "context_attributes", s_context_attributes }, { "op_categories", s_op_categories },
    { "denied_ops", s_denied_ops }, { "denied_op_words", s_denied_op_words },
    { "denied_path_subtypes", s_denied_path_subtypes }, { "denied_string_words", s_denied_string_words },
    { "subdivision_names", s_subdivision_names }, { "count_names", s_count_names },
    { "resolution_names", s_resolution_names }, { "methods", s_methods },
};

static const struct { const char *key; double value; } s_limits[] = {
    { "max_bytes", 262144 }, { "max_nodes", 60000 }, { "max_loop_depth", 4 },
    { "max_range", 100000 }, { "max_loop_iterations", 1e6 }, { "max_subdivision", 6 },
    { "max_array_count", 1000 }, { "max_resolution", 4096 }, { "max_repeat", 1e6 },
    { "max_pow_bits", 65536 }, { "max_errors", 50 },
};

#define S_COUNT(a) (sizeof (a) / sizeof (a)[0])

json_t *bmq_script_rules_default (void)
{
    json_t *rules = json_object ();
    for (size_t i = 0; i < S_COUNT (s_lists); i++) {
        json_t *list = json_array ();
        for (const char **s = s_lists[i].list; *s; s++)
            json_array_append_new (list, json_string (*s));
        json_object_set_new (rules, s_lists[i].key, list);
    }
    json_t *limits = json_object ();
    for (size_t i = 0; i < S_COUNT (s_limits); i++)
        json_object_set_new (limits, s_limits[i].key, json_real (s_limits[i].value));
    json_object_set_new (rules, "limits", limits);
    return rules;
}

static int s_string_list (const json_t *v)
{
    size_t i;
    json_t *s;
    if (!json_is_array (v))
        return -1;
    json_array_foreach (v, i, s)
        if (!json_is_string (s))
            return -1;
    return 0;
}

json_t *bmq_script_rules_effective (const json_t *config, char *err, size_t errlen)
{
    json_t *rules = bmq_script_rules_default ();
    if (!config)
        return rules;
    if (!json_is_object (config)) {
        snprintf (err, errlen, "script rules: expected an object");
        goto fail;
    }
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) config, key, v) {
        if (strcmp (key, "limits") == 0) {
            if (!json_is_object (v)) {
                snprintf (err, errlen, "script rules: limits must be an object");
                goto fail;
            }
            json_t *limits = json_object_get (rules, "limits");
            const char *lk;
            json_t *lv;
            json_object_foreach (v, lk, lv) {
                if (!json_object_get (limits, lk) || !json_is_number (lv) || json_number_value (lv) <= 0) {
                    snprintf (err, errlen, "script rules: limits.%s must be a known positive number", lk);
                    goto fail;
                }
                json_object_set_new (limits, lk, json_real (json_number_value (lv)));
            }
            continue;
        }
        if (!json_object_get (rules, key) || s_string_list (v) < 0) {
            snprintf (err, errlen, "script rules: %s is not a known list of strings", key);
            goto fail;
        }
        json_object_set (rules, key, v);
    }
    return rules;
fail:
    json_decref (rules);
    return NULL;
}

static double s_limit (const json_t *rules, const char *key)
{
    return json_number_value (json_object_get (json_object_get (rules, "limits"), key));
}

void bmq_script_rules_limits (const json_t *rules, bmq_script_limits_t *l)
{
    l->max_bytes = (size_t) s_limit (rules, "max_bytes");
    l->max_nodes = (size_t) s_limit (rules, "max_nodes");
    l->max_loop_depth = (int) s_limit (rules, "max_loop_depth");
    l->max_range = s_limit (rules, "max_range");
    l->max_loop_iterations = s_limit (rules, "max_loop_iterations");
    l->max_subdivision = s_limit (rules, "max_subdivision");
    l->max_array_count = s_limit (rules, "max_array_count");
    l->max_resolution = s_limit (rules, "max_resolution");
    l->max_repeat = s_limit (rules, "max_repeat");
    l->max_pow_bits = s_limit (rules, "max_pow_bits");
    l->max_errors = (size_t) s_limit (rules, "max_errors");
}
