/* bench_asset_stage — a large asset staged in chunks (issue 16).
 *
 * A fake Poly Haven (tests/assets/fake_polyhaven.c, on 127.0.0.1) serves a
 * glTF model whose .bin include is large: one triangle whose accessor reads
 * the buffer's first 36 bytes, the buffer's byteLength the whole file, the
 * rest a byte pattern. Default 192 MiB; argv[1] or BENCH_ASSET_STAGE_MB
 * (1..1000) change it.
 *
 * For each chunk size in {4, 16, 64} MiB (assets.stage_chunk_bytes, read by
 * the executor at start) one stack with a headless Blender runs, its
 * executor's assets client on the fake and every stack on one shared cache
 * dir (environment overrides, as tests/assets/test_assets_stack.c does). The
 * first stack imports once with the download (`blendmq assets import
 * polyhaven ID --type model --name big`); then every stack imports again from
 * the cache (stage + import only; the fake must see no download).
 *
 * Timed: cached_import_ms and first_import_ms are a whole `blendmq assets
 * import` process, timed here (CLOCK_MONOTONIC) from its start to its exit
 * (start, handshake, validation, fetch, staging, the import in Blender).
 * stage_ms and mb_per_s are staging itself: the executor's own figure (its log
 * line "asset polyhaven:big_model staged in Blender: B bytes in T ms", timed
 * with CLOCK_MONOTONIC from the first chunk handed to the link to Blender's
 * reply to the last: every chunk read from the cache, sent over the link and
 * checked in Blender); mb_per_s = the asset's MiB / that time.
 *
 * Peak RSS is VmHWM from /proc/PID/status of the pids the supervisor writes
 * (RUN/pids/executor.pid, RUN/pids/blender.pid); it is reset (clear_refs 5)
 * just before the timed cached import, so each figure is that import's peak
 * (idle_rss_mb: the RSS then; Blender on the first stack still holds the
 * first import's bundle and objects). The executor's log must say each
 * import went to Blender in chunks (when the asset is larger than one).
 *
 * JSON lines (bench_emit): asset_stage.asset_mb, .first_import_ms,
 * .first_import_executor_peak_rss_mb, and per chunk size (field chunk_mib)
 * .cached_import_ms, .stage_ms, .mb_per_s, .executor_peak_rss_mb,
 * .executor_peak_rss_over_asset (ratio), .blender_peak_rss_mb.
 * Exit 0 when every import succeeded, 1 otherwise.
 *
 *   bench_asset_stage [MIB]     (1..1000, default 192; or BENCH_ASSET_STAGE_MB) */
#include "bench_util.h"
#include "fake_polyhaven.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BENCH "asset_stage"
#define MIB   (1024.0 * 1024.0)

static const int s_chunks_mib[] = { 4, 16, 64 };

/* The glTF: one triangle in the first 36 bytes of big.bin (byteLength: the whole file). */
static char *s_gltf (size_t bin_len)
{
    static const char fmt[] =
        "{\"asset\": {\"version\": \"2.0\"}, \"scene\": 0, \"scenes\": [{\"nodes\": [0]}],"
        " \"nodes\": [{\"mesh\": 0, \"name\": \"big_part\"}],"
        " \"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0}}]}],"
        " \"buffers\": [{\"uri\": \"big.bin\", \"byteLength\": %zu}],"
        " \"bufferViews\": [{\"buffer\": 0, \"byteOffset\": 0, \"byteLength\": 36}],"
        " \"accessors\": [{\"bufferView\": 0, \"componentType\": 5126, \"count\": 3, \"type\": \"VEC3\","
        " \"max\": [1, 1, 0], \"min\": [0, 0, 0]}]}";
    size_t cap = sizeof fmt + 32;
    char *text = malloc (cap);
    if (text) snprintf (text, cap, fmt, bin_len);
    return text;
}

/* Serve big_model (its glTF and bin) from the fake. 0 / -1. */
static int s_serve (fake_ph_t *ph, size_t bin_len)
{
    unsigned char *bin = malloc (bin_len);
    char *gltf = s_gltf (bin_len);
    if (!bin || !gltf) { free (bin); free (gltf); return -1; }
    static const float tri[9] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
    memcpy (bin, tri, sizeof tri);
    for (size_t i = sizeof tri; i < bin_len; i++) bin[i] = (unsigned char) ((i * 2654435761u) >> 24);
    fake_ph_file (ph, "/dl/big.gltf", gltf, strlen (gltf));
    fake_ph_file (ph, "/dl/big.bin", bin, bin_len);       /* the fake keeps its copy */
    free (bin);
    const char *base = fake_ph_url (ph);
    char json[1024];
    snprintf (json, sizeof json, "{\"gltf\": {\"1k\": {\"gltf\": {\"url\": \"%s/dl/big.gltf\", \"size\": %zu,"
              " \"include\": {\"big.bin\": {\"url\": \"%s/dl/big.bin\", \"size\": %zu}}}}}}",
              base, strlen (gltf), base, bin_len);
    free (gltf);
    fake_ph_json (ph, "/files/big_model", json);
    return 0;
}

/* The pid in RUN/pids/NAME.pid, 0 when there is none. */
static int s_pid (const char *run_dir, const char *name)
{
    char path[512];
    snprintf (path, sizeof path, "%s/pids/%s.pid", run_dir, name);
    FILE *f = fopen (path, "r");
    int pid = 0;
    if (f) { if (fscanf (f, "%d", &pid) != 1) pid = 0; fclose (f); }
    return pid > 1 ? pid : 0;
}

/* A field (VmHWM, VmRSS) of /proc/PID/status in MiB; -1 when unreadable. */
static double s_vm_mb (int pid, const char *field)
{
    char path[64], line[256];
    snprintf (path, sizeof path, "/proc/%d/status", pid);
    FILE *f = pid ? fopen (path, "r") : NULL;
    if (!f) return -1;
    double mb = -1;
    size_t n = strlen (field);
    while (fgets (line, sizeof line, f))
        if (!strncmp (line, field, n) && line[n] == ':') { mb = atof (line + n + 1) / 1024.0; break; }
    fclose (f);
    return mb;
}

/* Reset the process's peak RSS to its current RSS (Linux: clear_refs 5). true when done. */
static bool s_reset_hwm (int pid)
{
    char path[64];
    snprintf (path, sizeof path, "/proc/%d/clear_refs", pid);
    FILE *f = pid ? fopen (path, "w") : NULL;
    if (!f) return false;
    bool ok = fputs ("5", f) >= 0;
    return fclose (f) == 0 && ok;
}

/* `blendmq assets import polyhaven big_model --type model --name NAME` on the stack;
 * its wall time in ms in *ms. 0 / -1 (the CLI's output on stderr then). */
static int s_import (const bench_stack_t *st, const char *name, double *ms)
{
    char cmd[1400];
    snprintf (cmd, sizeof cmd, "'%s/blendmq' --run-dir '%s' assets import polyhaven big_model --type model --name %s"
              " >'%s/import-%s.log' 2>&1", BMQ_BIN_DIR, st->dir, name, st->dir, name);
    double t0 = bench_now_us ();
    int rc = system (cmd);
    *ms = (bench_now_us () - t0) / 1000.0;
    if (rc == 0) return 0;
    fprintf (stderr, "bench: import %s failed (exit %d):\n", name, WIFEXITED (rc) ? WEXITSTATUS (rc) : -1);
    snprintf (cmd, sizeof cmd, "cat '%s/import-%s.log' >&2; grep -h asset '%s'/logs/executor.log | tail -5 >&2",
              st->dir, name, st->dir);
    (void) !system (cmd);
    return -1;
}

/* The executor logged that big_model went to Blender (how: "downloaded", "from the
 * cache"), in chunks when it is larger than one (`chunked`). */
static bool s_logged_chunks (const bench_stack_t *st, const char *how, bool chunked)
{
    char cmd[800];
    snprintf (cmd, sizeof cmd, "grep -q 'asset polyhaven:big_model %s .*staging it in Blender%s' '%s'/logs/executor.log",
              how, chunked ? " in chunks" : "", st->dir);
    if (system (cmd) == 0) return true;
    fprintf (stderr, "bench: the executor did not log big_model %s, staged%s\n", how, chunked ? " in chunks" : "");
    return false;
}

/* The executor's last "staged in Blender: B bytes in T ms" line for big_model: T, or -1. */
static double s_stage_ms (const bench_stack_t *st, uint64_t *bytes)
{
    char path[512], line[1024];
    snprintf (path, sizeof path, "%s/logs/executor.log", st->dir);
    FILE *f = fopen (path, "r");
    if (!f) return -1;
    double ms = -1;
    const char *tag = "asset polyhaven:big_model staged in Blender: ";
    while (fgets (line, sizeof line, f)) {
        const char *at = strstr (line, tag);
        unsigned long long b;
        double t;
        if (at && sscanf (at + strlen (tag), "%llu bytes in %lf ms", &b, &t) == 2 && t > 0) { ms = t; *bytes = b; }
    }
    fclose (f);
    return ms;
}

static json_t *s_chunk_extra (int chunk_mib)
{
    return json_pack ("{s:i}", "chunk_mib", chunk_mib);
}

/* One stack staging with chunks of chunk_mib; with_download: the first import
 * (download) runs on it first. 0 / -1. */
static int s_run_stack (fake_ph_t *ph, int chunk_mib, bool with_download, double asset_mb)
{
    bool chunked = asset_mb > chunk_mib;
    char value[32];
    snprintf (value, sizeof value, "%d", chunk_mib << 20);
    setenv ("BLENDMQ_ASSETS_STAGE_CHUNK_BYTES", value, 1);
    bench_stack_t st = { 0 };
    if (bench_stack_up_args (&st, 1, "")) { fprintf (stderr, "bench: the stack did not start\n"); return -1; }
    int exec_pid = s_pid (st.dir, "executor"), blender_pid = s_pid (st.dir, "blender");
    int rc = 0;
    double ms;
    if (with_download) {
        if (s_import (&st, "big", &ms)) rc = -1;
        else {
            bench_emit (BENCH, "asset_stage.first_import_ms", ms, "ms", s_chunk_extra (chunk_mib));
            bench_emit (BENCH, "asset_stage.first_import_executor_peak_rss_mb", s_vm_mb (exec_pid, "VmHWM"), "MiB",
                        s_chunk_extra (chunk_mib));
        }
        if (!rc && !s_logged_chunks (&st, "downloaded", chunked)) rc = -1;
        if (!rc && fake_ph_hits (ph, "/dl/big.bin") != 1) {
            fprintf (stderr, "bench: the first import did not download big.bin once\n");
            rc = -1;
        }
    }
    size_t downloads = fake_ph_hits_prefix (ph, "/dl/");
    double exec_idle = s_vm_mb (exec_pid, "VmRSS"), blender_idle = s_vm_mb (blender_pid, "VmRSS");
    bool reset = s_reset_hwm (exec_pid) & s_reset_hwm (blender_pid);
    if (!rc && s_import (&st, "big_cached", &ms)) rc = -1;
    if (!rc && fake_ph_hits_prefix (ph, "/dl/") != downloads) {
        fprintf (stderr, "bench: the cached import downloaded again\n");
        rc = -1;
    }
    if (!rc && !s_logged_chunks (&st, "from the cache", chunked)) rc = -1;
    if (!rc) {
        uint64_t bytes = 0;
        double stage_ms = s_stage_ms (&st, &bytes);
        bench_emit (BENCH, "asset_stage.cached_import_ms", ms, "ms",
                    json_pack ("{s:i, s:s}", "chunk_mib", chunk_mib, "timed", "the whole `blendmq assets import` process"));
        if (stage_ms <= 0) {
            fprintf (stderr, "bench: the executor logged no staging time for big_model\n");
            rc = -1;
        }
        else {
            bench_emit (BENCH, "asset_stage.stage_ms", stage_ms, "ms",
                        json_pack ("{s:i, s:I, s:s}", "chunk_mib", chunk_mib, "bytes", (json_int_t) bytes,
                                   "timed", "executor: first chunk handed to the link -> Blender's reply to the last"));
            bench_emit (BENCH, "asset_stage.mb_per_s", asset_mb / (stage_ms / 1000.0), "MiB/s",
                        json_pack ("{s:i, s:s}", "chunk_mib", chunk_mib, "timed", "the asset's MiB / stage_ms"));
        }
    }
    if (!rc) {
        double exec_hwm = s_vm_mb (exec_pid, "VmHWM"), blender_hwm = s_vm_mb (blender_pid, "VmHWM");
        bench_emit (BENCH, "asset_stage.executor_peak_rss_mb", exec_hwm, "MiB",
                    json_pack ("{s:i, s:f, s:b}", "chunk_mib", chunk_mib, "idle_rss_mb", exec_idle, "hwm_reset", reset));
        bench_emit (BENCH, "asset_stage.executor_peak_rss_over_asset", exec_hwm / asset_mb, "ratio",
                    s_chunk_extra (chunk_mib));
        bench_emit (BENCH, "asset_stage.blender_peak_rss_mb", blender_hwm, "MiB",
                    json_pack ("{s:i, s:f, s:b}", "chunk_mib", chunk_mib, "idle_rss_mb", blender_idle, "hwm_reset", reset));
    }
    bench_stack_down (&st);
    return rc;
}

int main (int argc, char **argv)
{
    const char *arg = argc > 1 ? argv[1] : getenv ("BENCH_ASSET_STAGE_MB");
    long mb = arg && *arg ? strtol (arg, NULL, 10) : 192;
    if (mb < 1 || mb > 1000) {      /* the add-on keeps at most 1 GiB of staged bundles */
        fprintf (stderr, "usage: bench_asset_stage [MIB]  (1..1000, default 192; or BENCH_ASSET_STAGE_MB)\n");
        return 2;
    }
    size_t bin_len = (size_t) mb << 20;
    fake_ph_t *ph = fake_ph_new ();
    char cache[] = "/tmp/bmq-bench-cache-XXXXXX";
    if (!ph || !mkdtemp (cache) || s_serve (ph, bin_len)) { fprintf (stderr, "bench: cannot set up the fake\n"); return 1; }
    char max_mb[32];
    snprintf (max_mb, sizeof max_mb, "%ld", mb + 16);
    setenv ("BLENDMQ_ASSETS_POLYHAVEN_BASE_URL", fake_ph_url (ph), 1);
    setenv ("BLENDMQ_ASSETS_POLYHAVEN_DOWNLOAD_HOSTS", fake_ph_hostport (ph), 1);
    setenv ("BLENDMQ_ASSETS_CACHE_DIR", cache, 1);
    if (mb + 16 > 512) setenv ("BLENDMQ_ASSETS_MAX_DOWNLOAD_MB", max_mb, 1);
    char *gltf = s_gltf (bin_len);           /* the asset: the glTF and its bin */
    double asset_mb = (double) (bin_len + (gltf ? strlen (gltf) : 0)) / MIB;
    free (gltf);
    bench_emit (BENCH, "asset_stage.asset_mb", asset_mb, "MiB", NULL);
    int rc = 0;
    for (size_t i = 0; i < sizeof s_chunks_mib / sizeof *s_chunks_mib; i++)
        if (s_run_stack (ph, s_chunks_mib[i], i == 0, asset_mb)) { rc = 1; break; }
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", cache);
    (void) !system (cmd);
    fake_ph_destroy (&ph);
    return rc;
}
