/*
 * bench_ckpt_restore.c — restore time against table size, through the
 * public API only.  For each size N: one embedded runtime fills a dense
 * table of N random doubles (random, so that zstd cannot shrink them much,
 * like PageRank's ranks) and checkpoints it with a CpBarrier; then R fresh
 * runtimes with the same table each time tess_checkpoint_restore() alone and
 * check 1024 sampled values bit for bit.  The checkpoint files are in the
 * page cache by then: the figure is decompression, checksums and rebuilding
 * the partitions, not the disk.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ckpt.h"
#include "common.h"
#include "bench_util.h"
#include "csr_pagerank.h"
#include "tessera/rng.h"

#define BC_FILL_CHUNK 4096
#define BC_SAMPLES 1024
#define BC_VALUE_SEED 20100504 /* any constant: the values only need to be known */

typedef struct bc_restore_run {
    uint64_t n;
    long workers;
    const char *dir;
    tess_table *table;
    int mismatches;
    double seconds; /* the phase this run measures */
    uint64_t epoch;
    tess_checkpoint_stats stats;
} bc_restore_run;

static double value_of(uint64_t key) { return tess_rng_unit(BC_VALUE_SEED, 0, key); }

/* Instance p adds value_of(key) to every key of partition p (absent keys
 * start at 0, so the sum is the value), in batches. */
static int bc_fill(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    bc_restore_run *run = tess_task_app(task);
    uint64_t first, count, keys[BC_FILL_CHUNK];
    double vals[BC_FILL_CHUNK];
    int rc = tess_table_dense_range(run->table, tess_task_instance(task), &first, &count);
    for (uint64_t k = first; rc == TESS_OK && k < first + count; k += BC_FILL_CHUNK) {
        size_t m = first + count - k < BC_FILL_CHUNK ? first + count - k : BC_FILL_CHUNK;
        for (size_t j = 0; j < m; j++) {
            keys[j] = k + j;
            vals[j] = value_of(k + j);
        }
        rc = tess_table_update_batch(run->table, keys, vals, m);
    }
    return rc;
}

static int write_control(tess_ctx *ctx, void *arg)
{
    bc_restore_run *run = arg;
    int rc = tess_run(ctx, "bc_fill", tess_table_partitions(run->table), run->table, NULL, 0);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    double t0 = tess_now();
    if (rc == TESS_OK) rc = tess_checkpoint_barrier(ctx, &run->n, sizeof run->n);
    if (rc == TESS_OK) rc = tess_checkpoint_wait(ctx, &run->epoch);
    run->seconds = tess_now() - t0;
    return rc;
}

/* Sampled keys must hold exactly what bc_fill wrote. */
static int count_mismatches(bc_restore_run *run)
{
    int bad = 0;
    for (uint64_t s = 0; s < BC_SAMPLES; s++) {
        uint64_t key = s * (run->n / BC_SAMPLES + 1) % run->n;
        double v = NAN;
        size_t len = 0;
        if (tess_table_get(run->table, &key, &v, sizeof v, &len) != TESS_OK ||
            memcmp(&v, &(double){value_of(key)}, sizeof v) != 0)
            bad++;
    }
    return bad;
}

static int restore_control(tess_ctx *ctx, void *arg)
{
    bc_restore_run *run = arg;
    void *user = NULL;
    size_t len = 0;
    double t0 = tess_now();
    int rc = tess_checkpoint_restore(ctx, &user, &len, &run->epoch);
    run->seconds = tess_now() - t0;
    if (rc == TESS_OK && (len != sizeof run->n || memcmp(user, &run->n, len) != 0))
        rc = TESS_ERR_FORMAT;
    free(user);
    if (rc == TESS_OK) run->mismatches = count_mismatches(run);
    return rc;
}

/* One runtime with the table, checkpoints into run->dir, running control. */
static int with_runtime(bc_restore_run *run, tess_control_fn control)
{
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = (int)run->workers;
    cfg.mode = TESS_MODE_EMBEDDED;
    tess_ctx *ctx = NULL;
    if (tess_init(&cfg, &ctx) != TESS_OK) return TESS_ERR_INVAL;
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.name = "values";
    s.key_size = sizeof(uint64_t);
    s.value_size = sizeof(double);
    s.dense = 1;
    s.key_count = run->n;
    s.partitions = (int)(2 * run->workers);
    s.accum = TESS_ACC_SUM;
    s.elem = TESS_F64;
    char job[64];
    snprintf(job, sizeof job, "bench-ckpt-restore n=%llu", (unsigned long long)run->n);
    int rc = tess_table_create(ctx, &s, &run->table);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "bc_fill", bc_fill);
    if (rc == TESS_OK) rc = tess_checkpoint_enable(ctx, run->dir, job, 1);
    if (rc == TESS_OK) rc = tess_main(ctx, control, run);
    if (rc != TESS_OK)
        app_error(BC_NAME, "restore benchmark, %llu doubles: %s (%s)", (unsigned long long)run->n,
                  tess_strerror(rc), tess_last_error(ctx));
    tess_checkpoint_get_stats(ctx, &run->stats);
    tess_finalize(ctx);
    return rc;
}

static int restore_size(const bc_options *o, const char *tmpdir, uint64_t n)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/restore-%llu", tmpdir, (unsigned long long)n);
    bc_restore_run w = {.n = n, .workers = o->workers, .dir = dir};
    int rc = with_runtime(&w, write_control);
    double mb = (double)n * sizeof(double) / 1e6, disk = (double)bc_dir_bytes(dir) / 1e6;
    double t[1000], inner[1000];
    int reps = (int)(o->restore_reps < 1000 ? o->restore_reps : 1000), bad = 0;
    for (int k = 0; rc == TESS_OK && k < reps && !bench_interrupted; k++) {
        bc_restore_run r = {.n = n, .workers = o->workers, .dir = dir};
        rc = with_runtime(&r, restore_control);
        t[k] = r.seconds;
        inner[k] = r.stats.restore_seconds;
        bad += r.mismatches;
    }
    bc_remove_tree(dir);
    if (rc != TESS_OK || bench_interrupted) return -1;
    double med = bench_median(t, reps), min = t[0];
    for (int k = 1; k < reps; k++) min = t[k] < min ? t[k] : min;
    printf("restore %llu doubles (%.1f MB; %.1f MB on disk): checkpoint %.3f s; restore median "
           "%.3f s (min %.3f, runtime's restore_seconds %.3f) over %d = %.0f MB/s\n",
           (unsigned long long)n, mb, disk, w.seconds, med, min, bench_median(inner, reps), reps,
           mb / med);
    fflush(stdout);
    if (bad > 0)
        app_error(BC_NAME, "restore of %llu doubles: %d sampled values differ",
                  (unsigned long long)n, bad);
    return bad > 0 ? -1 : 0;
}

int bc_restore_bench(const bc_options *o, const char *tmpdir)
{
    printf("\n== restore: a dense table of N random doubles, %ld worker(s), %ld partitions, "
           "embedded\n",
           o->workers, 2 * o->workers);
    int rc = 0;
    for (int i = 0; rc == 0 && i < o->nsizes; i++) rc = restore_size(o, tmpdir, o->sizes[i]);
    return rc;
}
