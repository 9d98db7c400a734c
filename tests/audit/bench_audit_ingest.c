/* bench_audit_ingest — sustained ingest rate and memory of blendmq-audit.
 *
 *   bench_audit_ingest [--senders N] [--records N]     (defaults 2, 100000 each)
 *
 * Starts a real blendmq-audit (ipc endpoint, database in a temp dir) and N
 * audit_test_sender processes that each queue N records (10 per story) at
 * once, so the audit service always has work: what is measured is the audit
 * path end to end — decode, check, insert, commit with fsync, acknowledge.
 * The rate is taken from the audit's own stored count between 10 % and 90 %
 * of the run (sustained: start-up and the tail excluded). Timed here with
 * CLOCK_MONOTONIC (bmq_mono_ms): the count is sampled from the senders' start
 * on, and the rate is (count at 90 % - count at 10 %) / the time between. The durability is
 * the production one: WAL, synchronous=FULL, one fsync per committed batch.
 *
 * Prints JSON lines:
 *   {"bench":"audit_ingest","metric":"records_per_s",...,"fsync":"…"}
 *   {"bench":"audit_ingest","metric":"rss_mb",...}   peak RSS (VmHWM) of blendmq-audit */
#include "audit_harness.h"
#include "codec.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#define SAMPLES_MAX 100000

static const char *s_fs_name (const char *path)
{
    struct statfs fs;
    if (statfs (path, &fs)) return "unknown";
    switch ((unsigned long) fs.f_type) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794c7630: return "overlayfs";
    default: return "other";
    }
}

static double s_peak_rss_mb (pid_t pid)
{
    char path[64], line[256];
    snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
    FILE *f = fopen (path, "r");
    double mb = -1;
    while (f && fgets (line, sizeof line, f))
        if (!strncmp (line, "VmHWM:", 6)) mb = atof (line + 6) / 1024.0;
    if (f) fclose (f);
    return mb;
}

int main (int argc, char **argv)
{
    int senders = 2, records = 100000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp (argv[i], "--senders")) senders = atoi (argv[i + 1]);
        else if (!strcmp (argv[i], "--records")) records = atoi (argv[i + 1]);
    }
    if (senders < 1 || senders > 16 || records < 1000 || records > 100000) {
        fprintf (stderr, "usage: bench_audit_ingest [--senders 1..16] [--records 1000..100000]\n");
        return 2;
    }
    setenv ("BLENDMQ_LOG_LEVEL", "warn", 1);
    ah_env_t env;
    ah_setup (&env);
    pid_t audit = ah_start_audit (&env, NULL);
    if (audit <= 0) { fprintf (stderr, "bench_audit_ingest: blendmq-audit did not start (%s)\n", env.dir); return 1; }

    char plans[32], name[32];
    snprintf (plans, sizeof plans, "%d", records / 10);
    pid_t pids[16];
    for (int i = 0; i < senders; i++) {
        snprintf (name, sizeof name, "sender%d", i);
        const char *a[] = { "audit_test_sender", "--name", name, "--plans", plans, "--per-plan", "10",
                            "--wait-ms", "600000", NULL };
        pids[i] = ah_spawn (&env, name, a, NULL);
    }
    int64_t total = (int64_t) senders * (records / 10) * 10;
    static double t[SAMPLES_MAX];
    static int64_t n[SAMPLES_MAX];
    int samples = 0;
    int64_t t0 = bmq_mono_ms (), count = 0, commits = 0;
    while (count < total && samples < SAMPLES_MAX && bmq_mono_ms () - t0 < 600000) {
        json_t *st = ah_status (&env, 5000);
        count = st ? json_integer_value (json_object_get (st, "records")) : count;
        commits = st ? json_integer_value (json_object_get (st, "commits")) : commits;
        json_decref (st);
        t[samples] = (bmq_mono_ms () - t0) / 1000.0;
        n[samples++] = count;
        ah_sleep_ms (100);
    }
    double rss = s_peak_rss_mb (audit);
    int failed = 0;
    for (int i = 0; i < senders; i++) failed |= ah_wait (pids[i], 60000) != 0;
    ah_stop (audit, SIGTERM, 10000);
    if (failed || count < total) {
        fprintf (stderr, "bench_audit_ingest: only %lld of %lld records stored (see %s)\n", (long long) count,
                 (long long) total, env.dir);
        return 1;
    }
    /* sustained: between the samples nearest 10 % and 90 % of the records */
    int lo = 0, hi = samples - 1;
    while (lo < samples - 1 && n[lo] < total / 10) lo++;
    while (hi > lo && n[hi - 1] >= total * 9 / 10) hi--;
    double rate = hi > lo && t[hi] > t[lo] ? (n[hi] - n[lo]) / (t[hi] - t[lo]) : total / t[samples - 1];
    printf ("{\"bench\":\"audit_ingest\",\"metric\":\"records_per_s\",\"value\":%.0f,\"unit\":\"records/s\","
            "\"fsync\":\"WAL, synchronous=FULL: one fsync per committed batch, acknowledged after commit\","
            "\"avg_batch\":%.0f,\"senders\":%d,\"records\":%lld,\"seconds\":%.1f,\"db_fs\":\"%s\"}\n",
            rate, commits ? (double) total / commits : 0.0, senders, (long long) total, t[samples - 1],
            s_fs_name (env.dir));
    printf ("{\"bench\":\"audit_ingest\",\"metric\":\"rss_mb\",\"value\":%.1f,\"unit\":\"MB\","
            "\"what\":\"peak RSS (VmHWM) of blendmq-audit during the run\"}\n", rss);
    ah_teardown (&env);
    return 0;
}
