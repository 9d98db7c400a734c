/* Assets through the whole stack (issue 16): a real stack with a real
 * headless Blender, its executor's assets client pointed at a fake Poly Haven
 * (fake_polyhaven.c) by the environment, as a deployment would be
 * (BLENDMQ_ASSETS_POLYHAVEN_BASE_URL, …_DOWNLOAD_HOSTS, …_CACHE_DIR):
 *
 *   - `assets search polyhaven tri --type model` finds the model;
 *   - `assets import polyhaven tri_model --name tri` downloads it (a glTF and
 *     its .bin include), stages it in Blender and imports it: a root "tri"
 *     is in the scene; a second import is served from the cache (no HTTP);
 *   - an HDRI import runs (the world light);
 *   - an asset whose md5 lies fails with the reason and nothing runs;
 *   - a plan that imports a model and then fails is rolled back: the import
 *     is gone too;
 *   - a Sketchfab search, and a model from its gltf archive (the token goes
 *     to the API only);
 * Assets are staged in 100-byte chunks here (assets.stage_chunk_bytes), so
 * every asset of a few hundred bytes goes to Blender the way an 8k texture set of hundreds of
 * MiB does: piece by piece. */
#include "e2e_util.h"
#include "fake_polyhaven.h"
#include "fake_sketchfab.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_dir[256];
static fake_ph_t *s_ph;
static fake_sf_t *s_sf;
#define S_UID "0123456789abcdef0123456789abcdef"

/* A triangle: positions (0,0,0) (1,0,0) (0,1,0) in tri.bin. */
static const char s_gltf[] =
    "{\"asset\": {\"version\": \"2.0\"}, \"scene\": 0, \"scenes\": [{\"nodes\": [0]}],"
    " \"nodes\": [{\"mesh\": 0, \"name\": \"tri_part\"}],"
    " \"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0}}]}],"
    " \"buffers\": [{\"uri\": \"tri.bin\", \"byteLength\": 36}],"
    " \"bufferViews\": [{\"buffer\": 0, \"byteOffset\": 0, \"byteLength\": 36}],"
    " \"accessors\": [{\"bufferView\": 0, \"componentType\": 5126, \"count\": 3, \"type\": \"VEC3\","
    " \"max\": [1, 1, 0], \"min\": [0, 0, 0]}]}";
static const float s_bin[9] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
/* A 2x2 Radiance HDR, flat (no run-length: rows shorter than 8). */
static const char s_hdr_head[] = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 2\n";

static void s_serve (void)
{
    char url[300], json[2048];
    const char *base = fake_ph_url (s_ph);
    fake_ph_file (s_ph, "/dl/tri.gltf", s_gltf, strlen (s_gltf));
    fake_ph_file (s_ph, "/dl/tri.bin", s_bin, sizeof s_bin);
    unsigned char hdr[sizeof s_hdr_head - 1 + 16];
    memcpy (hdr, s_hdr_head, sizeof s_hdr_head - 1);
    for (int i = 0; i < 4; i++) { unsigned char *p = hdr + sizeof s_hdr_head - 1 + 4 * i; p[0] = 200; p[1] = 180; p[2] = 160; p[3] = 128; }
    fake_ph_file (s_ph, "/dl/sky.hdr", hdr, sizeof hdr);
    snprintf (json, sizeof json, "{\"gltf\": {\"1k\": {\"gltf\": {\"url\": \"%s/dl/tri.gltf\", \"size\": %zu,"
              " \"include\": {\"tri.bin\": {\"url\": \"%s/dl/tri.bin\", \"size\": %zu}}}}}}", base, strlen (s_gltf), base, sizeof s_bin);
    fake_ph_json (s_ph, "/files/tri_model", json);
    snprintf (json, sizeof json, "{\"hdri\": {\"1k\": {\"hdr\": {\"url\": \"%s/dl/sky.hdr\", \"size\": %zu}}}}", base, sizeof hdr);
    fake_ph_json (s_ph, "/files/sky_1", json);
    snprintf (json, sizeof json, "{\"hdri\": {\"1k\": {\"hdr\": {\"url\": \"%s/dl/sky.hdr\", \"size\": %zu,"
              " \"md5\": \"0123456789abcdef0123456789abcdef\"}}}}", base, sizeof hdr);
    fake_ph_json (s_ph, "/files/lying_sky", json);
    fake_ph_json (s_ph, "/assets?t=models", "{\"tri_model\": {\"name\": \"Triangle\", \"type\": 2, \"download_count\": 3,"
                  " \"categories\": [\"test\"], \"tags\": [\"triangle\"]}, \"chair_01\": {\"name\": \"Chair\", \"type\": 2,"
                  " \"download_count\": 9, \"categories\": [\"furniture\"], \"tags\": [\"seat\"]}}");
    /* Sketchfab: a search hit, and its model as the gltf archive Sketchfab serves (scene.gltf, scene.bin) */
    fake_sf_json (s_sf, "/v3/search", "{\"results\": [{\"uid\": \"" S_UID "\", \"name\": \"Red car\","
                  " \"user\": {\"username\": \"maker\"}, \"license\": {\"label\": \"CC Attribution\"}, \"faceCount\": 1}],"
                  " \"next\": null, \"previous\": null}");
    char scene[sizeof s_gltf + 64];
    snprintf (scene, sizeof scene, "%s", s_gltf);
    char *uri = strstr (scene, "tri.bin");
    if (uri) memcpy (uri, "scn", 3);            /* the archive's buffer is scn.bin */
    fake_sf_zent_t ents[] = { { "scene.gltf", scene, strlen (scene), FAKE_ZFILE },
                              { "scn.bin", s_bin, sizeof s_bin, FAKE_ZFILE } };
    size_t zlen = 0;
    unsigned char *zip = fake_sf_zip (ents, 2, &zlen);
    if (zip) fake_sf_file (s_sf, "/dl/car.zip", zip, zlen);
    free (zip);
    snprintf (url, sizeof url, "%s/dl/car.zip", fake_sf_url (s_sf));
    snprintf (json, sizeof json, "{\"gltf\": {\"url\": \"%s\", \"size\": %zu, \"expires\": 300}}", url, zlen);
    fake_sf_json (s_sf, "/v3/models/" S_UID "/download", json);
}

static int s_setup (void **state)
{
    (void) state;
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    snprintf (s_dir, sizeof s_dir, "/tmp/bmq-assets-XXXXXX");
    if (!mkdtemp (s_dir)) return -1;
    s_ph = fake_ph_new ();
    s_sf = fake_sf_new ();
    if (!s_ph || !s_sf) return -1;
    s_serve ();
    char cmd[3072];
    snprintf (cmd, sizeof cmd, "BLENDMQ_ASSETS_POLYHAVEN_BASE_URL='%s' BLENDMQ_ASSETS_POLYHAVEN_DOWNLOAD_HOSTS='%s' "
              "BLENDMQ_ASSETS_SKETCHFAB_BASE_URL='%s/v3' BLENDMQ_ASSETS_SKETCHFAB_DOWNLOAD_HOSTS='%s' "
              "SKETCHFAB_API_TOKEN=stack-token "
              "BLENDMQ_ASSETS_CACHE_DIR='%s/assets-cache' BLENDMQ_ASSETS_STAGE_CHUNK_BYTES=100 "
              "'%s' --run-dir '%s' up --ipc --validators 1 >&2",
              fake_ph_url (s_ph), fake_ph_hostport (s_ph), fake_sf_url (s_sf), fake_sf_hostport (s_sf), s_dir,
              e2e_bin ("blendmq"), s_dir);
    return system (cmd) == 0 ? 0 : -1;
}

static int s_teardown (void **state)
{
    (void) state;
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' down >&2 && rm -rf '%s'", e2e_bin ("blendmq"), s_dir, s_dir);
    int rc = system (cmd);
    while (waitpid (-1, NULL, WNOHANG) > 0) { }
    fake_ph_destroy (&s_ph);
    fake_sf_destroy (&s_sf);
    return rc == 0 ? 0 : -1;
}

/* `blendmq ARGS` (2>&1): its output (caller frees); the exit code in *code. */
static char *s_cli (const char *args, int *code)
{
    char cmd[1024];
    snprintf (cmd, sizeof cmd, "'%s' --run-dir '%s' %s 2>&1", e2e_bin ("blendmq"), s_dir, args);
    return e2e_run (cmd, code);
}

static bool s_in_scene (const char *name)
{
    int code;
    json_t *lines = e2e_blendmq_json (s_dir, "scene info", &code);
    size_t i;
    json_t *o;
    bool found = false;
    json_array_foreach (json_object_get (json_array_get (lines, 0), "objects"), i, o)
        found |= !strcmp (json_string_value (json_object_get (o, "name")) ?: "", name);
    json_decref (lines);
    return found;
}

static void test_search (void **state)
{
    (void) state;
    int code;
    char *out = s_cli ("assets search polyhaven tri --type model", &code);
    fprintf (stderr, "%s", out);
    assert_int_equal (code, 0);
    assert_non_null (strstr (out, "tri_model"));
    assert_null (strstr (out, "chair_01"));            /* the query matched id, name and tags */
    free (out);
    out = s_cli ("assets search sketchfab car", &code);
    fprintf (stderr, "%s", out);
    assert_int_equal (code, 0);
    assert_non_null (strstr (out, S_UID));
    free (out);
    out = s_cli ("assets search sketchfab car --type hdri", &code);
    assert_int_not_equal (code, 0);
    assert_non_null (strstr (out, "Sketchfab serves models"));
    free (out);
}

/* A Sketchfab model: its gltf archive is downloaded with the token, unpacked
 * into the cache (libzip), staged and imported; the token never reaches the
 * download host. */
static void test_import_sketchfab (void **state)
{
    (void) state;
    int code;
    char *out = s_cli ("assets import sketchfab " S_UID " --type model --name car", &code);
    fprintf (stderr, "%s", out);
    assert_int_equal (code, 0);
    free (out);
    assert_true (s_in_scene ("car"));
    assert_int_equal (fake_sf_hits (s_sf, "/dl/car.zip"), 1);
    for (size_t i = 0; i < fake_sf_total (s_sf); i++) {
        fake_sf_req_t r;
        assert_true (fake_sf_request (s_sf, i, &r));
        bool api = !strncmp (r.route, "/v3/models/", 11);
        assert_true (api ? !strcmp (r.auth, "Token stack-token") : !r.has_auth);
    }
}

static void test_import_model_then_cache (void **state)
{
    (void) state;
    int code;
    char *out = s_cli ("assets import polyhaven tri_model --type model --name tri", &code);
    fprintf (stderr, "%s", out);
    assert_int_equal (code, 0);
    free (out);
    assert_true (s_in_scene ("tri"));
    assert_true (s_in_scene ("tri_part"));
    /* it went in chunks (100 bytes each here): the executor says so */
    char cmd[600];
    snprintf (cmd, sizeof cmd, "grep -q 'asset polyhaven:tri_model downloaded .*staging it in Blender in chunks' '%s'/logs/executor*.log", s_dir);
    if (system (cmd) != 0) {
        snprintf (cmd, sizeof cmd, "ls '%s'/logs; grep -h 'asset' '%s'/logs/executor.log >&2", s_dir, s_dir);
        (void) !system (cmd);
        fail_msg ("the executor did not stage tri_model in chunks");
    }
    size_t hits = fake_ph_hits_prefix (s_ph, "/dl/");
    assert_int_equal (hits, 2);                         /* the glTF and its .bin */
    /* again: from the executor's cache, no download */
    out = s_cli ("assets import polyhaven tri_model --type model --name tri2", &code);
    assert_int_equal (code, 0);
    free (out);
    assert_int_equal (fake_ph_hits_prefix (s_ph, "/dl/"), hits);
    assert_true (s_in_scene ("tri2"));
}

static void test_import_hdri (void **state)
{
    (void) state;
    int code;
    char *out = s_cli ("assets import polyhaven sky_1 --type hdri", &code);
    fprintf (stderr, "%s", out);
    assert_int_equal (code, 0);
    free (out);
}

static void test_lying_md5 (void **state)
{
    (void) state;
    int code;
    char *out = s_cli ("assets import polyhaven lying_sky --type hdri", &code);
    fprintf (stderr, "%s", out);
    assert_int_not_equal (code, 0);
    assert_non_null (strstr (out, "md5"));
    assert_non_null (strstr (out, "nothing was run"));
    free (out);
}

static void test_rollback_removes_import (void **state)
{
    (void) state;
    char path[512];
    snprintf (path, sizeof path, "%s/rb.json", s_dir);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs ("[{\"operation\": \"asset.import\", \"name\": \"rb_tri\", \"params\": {\"source\": \"polyhaven\", \"id\": \"tri_model\","
           " \"type\": \"model\"}},"
           " {\"operation\": \"bpy.ops.object.empty_add\", \"name\": \"rb_empty\"},"
           " {\"operation\": \"object.modifier\", \"target\": \"rb_empty\", \"params\": {\"type\": \"BEVEL\"}}]", f);
    fclose (f);
    char args[600];
    snprintf (args, sizeof args, "plan run '%s'", path);
    int code;
    char *out = s_cli (args, &code);
    fprintf (stderr, "%s", out);
    assert_int_not_equal (code, 0);
    assert_non_null (strstr (out, "rolled back"));
    free (out);
    assert_false (s_in_scene ("rb_tri"));
    assert_false (s_in_scene ("rb_empty"));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_search),
        cmocka_unit_test (test_import_model_then_cache),
        cmocka_unit_test (test_import_hdri),
        cmocka_unit_test (test_import_sketchfab),
        cmocka_unit_test (test_lying_md5),
        cmocka_unit_test (test_rollback_removes_import),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
